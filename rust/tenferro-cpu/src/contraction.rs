//! `dot_general`, `dot_general_with_conj`, `matmul`, `scale_real`, `scale_complex`.
//!
//! Each batch of a `dot_general` is one GEMM `[M×K]·[K×N]` where `M`/`N` merge the free axes and
//! `K` the contracting axes of each operand. When an operand's axes chain (column-major merge),
//! faer reads it in place through its strides — transposed, F- or C-ordered, negative steps —
//! without a copy; the contracting axis pairs are listed in the order that lets the most
//! operands merge (`contracting_order`: the GEMM's summation order is free); only operands whose
//! axes cannot merge, or whose matrices have no unit-stride direction (batch-innermost layouts),
//! are copied once into a compact layout (counted in `CpuEngine::operand_copies`). The output is compact with batch axes last, so each
//! batch is a contiguous `M×N` column-major block. Layout decisions are cached in the engine's
//! plan cache. Floats go through faer's GEMM (explicit `Par` inside the engine's pool); integer
//! and bool contractions use a plain strided loop.

use crate::elementwise::cast;
use crate::map::{mac_weight, map1, PAR_MIN_MACS};
use crate::small_gemm;
use crate::CpuEngine;
use faer::{Accum, MatMut, MatRef, Par};
use num_complex::Complex;
use rayon::prelude::*;
use std::sync::atomic::Ordering;
use tenferro_ops::DotGeneralConfig;
use tenferro_tensor::{Complex32, Complex64, DType, Element, Error, Result, Tensor};

/// Merge axes (in the given order) into one column-major dimension: `(size, stride)`, or `None`
/// when the strides do not chain.
fn merge(shape: &[usize], strides: &[isize], axes: &[usize]) -> Option<(usize, isize)> {
    let mut size = 1usize;
    let mut stride: Option<isize> = None;
    let mut next: isize = 0;
    for &a in axes {
        let (d, s) = (shape[a], strides[a]);
        if d == 1 {
            continue;
        }
        match stride {
            None => {
                stride = Some(s);
                next = s * d as isize;
            }
            Some(_) => {
                if s != next {
                    return None;
                }
                next = s * d as isize;
            }
        }
        size *= d;
    }
    Some((size, stride.unwrap_or(1)))
}

/// Whether `t`, read as a matrix with `rows` and `cols` axes, is row-major (its column axes
/// have the smaller stride).
fn row_major(t: &Tensor, rows: &[usize], cols: &[usize]) -> bool {
    match (
        merge(t.shape(), t.strides(), rows),
        merge(t.shape(), t.strides(), cols),
    ) {
        (Some((_, rs)), Some((_, cs))) => cs.unsigned_abs() < rs.unsigned_abs(),
        _ => false,
    }
}

/// How one operand is read: either in place, or after a compact copy with axes permuted.
#[derive(Clone, Debug)]
struct Layout {
    /// Permutation to apply before copying (`None`: read in place).
    copy_perm: Option<Vec<usize>>,
    /// Axes (after the optional copy) forming rows, columns and batch.
    rows: Vec<usize>,
    cols: Vec<usize>,
    batch: Vec<usize>,
}

fn plan_layout(
    t_shape: &[usize],
    t_strides: &[isize],
    rows: &[usize],
    cols: &[usize],
    batch: &[usize],
) -> Layout {
    // In place when both axis groups merge and one of them is unit-stride (faer's kernels need
    // a unit-stride direction; without one — e.g. batch-innermost layouts, the column-major copy
    // of a C-ordered `(B, n, n)` array — its GEMM runs ~3× slower than after a compact copy).
    let unit = |axes: &[usize]| {
        merge(t_shape, t_strides, axes)
            .map(|(size, stride)| size <= 1 || stride.unsigned_abs() == 1)
    };
    if let (Some(r), Some(c)) = (unit(rows), unit(cols)) {
        if r || c {
            return Layout {
                copy_perm: None,
                rows: rows.to_vec(),
                cols: cols.to_vec(),
                batch: batch.to_vec(),
            };
        }
    }
    let perm: Vec<usize> = rows.iter().chain(cols).chain(batch).copied().collect();
    let (r, c) = (rows.len(), cols.len());
    Layout {
        copy_perm: Some(perm),
        rows: (0..r).collect(),
        cols: (r..r + c).collect(),
        batch: (r + c..r + c + batch.len()).collect(),
    }
}

/// The cached plan of one `dot_general` call site.
#[derive(Debug)]
struct GemmPlan {
    lhs: Layout,
    rhs: Layout,
}

/// The cached decision of one `dot_general` call site (its operands' shapes, strides, dtype,
/// dimension numbers and conjugation flags): which of the routes of [`dot_general`] it takes.
/// Deciding costs a few `plan_layout`s and views; a compiled program's contractions meet the
/// same layouts on every run, so it is taken once.
#[derive(Debug)]
enum Route {
    /// Computed on the axis-reversed views ([`reversed_axes`]).
    Reversed,
    /// Both operands row-major: computed as the swapped product.
    Swapped,
    /// One GEMM per batch on the operands as planned (or the batch-innermost kernel).
    Gemm(GemmPlan),
}

/// An operand ready for GEMM: `(tensor, rows (M or K), cols (K or N), row stride, col stride,
/// per-batch offsets)`.
struct Operand {
    t: Tensor,
    rs: isize,
    cs: isize,
    batch_offsets: Vec<isize>,
}

fn prepare(e: &CpuEngine, name: &str, t: &Tensor, l: &Layout) -> Result<Operand> {
    let t = match &l.copy_perm {
        Some(perm) => {
            e.operand_copies.fetch_add(1, Ordering::Relaxed);
            cast(e, name, &t.transpose_view(perm)?, t.dtype())?
        }
        None => t.clone(),
    };
    let (shape, strides) = (t.shape(), t.strides());
    let rs = merge(shape, strides, &l.rows).map(|x| x.1).unwrap_or(1);
    let cs = merge(shape, strides, &l.cols).map(|x| x.1).unwrap_or(1);
    // Batch offsets in column-major order of the batch axes (= output batch order).
    let nb: usize = l.batch.iter().map(|&a| shape[a]).product();
    let base = t.offset() as isize;
    if let [a] = l.batch[..] {
        // One batch axis (the common case): a plain progression, no odometer per element.
        let s = strides[a];
        let offs = (0..nb as isize).map(|i| base + i * s).collect();
        return Ok(Operand {
            t,
            rs,
            cs,
            batch_offsets: offs,
        });
    }
    let mut offs = Vec::with_capacity(nb);
    let mut idx = vec![0usize; l.batch.len()];
    for _ in 0..nb {
        offs.push(
            base + idx
                .iter()
                .zip(&l.batch)
                .map(|(&i, &a)| i as isize * strides[a])
                .sum::<isize>(),
        );
        for (k, &a) in l.batch.iter().enumerate() {
            idx[k] += 1;
            if idx[k] < shape[a] {
                break;
            }
            idx[k] = 0;
        }
    }
    Ok(Operand {
        t,
        rs,
        cs,
        batch_offsets: offs,
    })
}

fn plan_key(tag: i64, cfg: &DotGeneralConfig, lhs: &Tensor, rhs: &Tensor, extra: i64) -> Vec<i64> {
    let mut k = vec![
        tag,
        extra,
        lhs.dtype() as i64,
        lhs.ndim() as i64,
        rhs.ndim() as i64,
    ];
    for v in [
        &cfg.lhs_contracting_dims,
        &cfg.rhs_contracting_dims,
        &cfg.lhs_batch_dims,
        &cfg.rhs_batch_dims,
    ] {
        k.push(-1);
        k.extend(v.iter().map(|&x| x as i64));
    }
    for t in [lhs, rhs] {
        k.push(-2);
        k.extend(t.shape().iter().map(|&x| x as i64));
        k.extend(t.strides().iter().map(|&x| x as i64));
    }
    k
}

/// Send-able raw pointers for the batched loop.
#[derive(Clone, Copy)]
struct Ptrs<T> {
    lhs: *const T,
    rhs: *const T,
    out: *mut T,
}
// SAFETY: inputs are read-only; each batch writes a disjoint output block.
unsafe impl<T> Send for Ptrs<T> {}
unsafe impl<T> Sync for Ptrs<T> {}
impl<T> Ptrs<T> {
    // Accessors, so closures capture the `Send` wrapper rather than its raw-pointer fields.
    fn lhs(&self) -> *const T {
        self.lhs
    }
    fn rhs(&self) -> *const T {
        self.rhs
    }
    fn out(&self) -> *mut T {
        self.out
    }
}

#[allow(clippy::too_many_arguments)]
fn gemm_batches<T>(
    e: &CpuEngine,
    l: &Operand,
    r: &Operand,
    out: &Tensor,
    m: usize,
    n: usize,
    k: usize,
    conj: (bool, bool),
) where
    T: Element + faer::traits::ComplexField + small_gemm::Small,
{
    let nb = l.batch_offsets.len();
    let big = m.max(n).max(k);
    let isa = small_gemm::selected();
    if big <= small_gemm::SCALAR_MAX
        || (big <= small_gemm::SMALL_MAX && isa != small_gemm::Isa::Scalar)
        || (big <= small_gemm::MEDIUM_MAX
            && !<T as small_gemm::Small>::COMPLEX
            && nb >= 2 * e.threads
            && isa == small_gemm::Isa::Avx512)
    {
        return small_batches::<T>(e, l, r, out, (m, n, k), conj);
    }
    let p = Ptrs {
        lhs: l.t.storage().as_ptr() as *const T,
        rhs: r.t.storage().as_ptr() as *const T,
        out: out.storage().as_mut_ptr() as *mut T,
    };
    // faer's GEMM is fast when the right operand has the destination's orientation (both
    // column-major or both row-major), ~2.5× slower otherwise (measured on the 2-core machine).
    // Our destination is column-major, so a row-major right operand with a column-major left
    // one is computed as Cᵀ = Bᵀ·Aᵀ. (Both row-major: see `dot_general`.)
    let rhs_row_major = r.cs.unsigned_abs() < r.rs.unsigned_abs();
    let lhs_row_major = l.cs.unsigned_abs() < l.rs.unsigned_abs();
    // Under a cancellation flag (`cancel.rs`), a look before each batch and, for one large
    // product, before each block of `cols` output columns (C[:, j..] = A·B[:, j..], about 2²⁸
    // multiply-adds a block, at least 256 columns so faer's packing stays amortised).
    let macs = m.saturating_mul(n).saturating_mul(k.max(1));
    let cancel = if macs.saturating_mul(l.batch_offsets.len()) > crate::cancel::CHECK_WORK {
        crate::cancel::Cancel::current()
    } else {
        crate::cancel::Cancel::none()
    };
    let cols = if cancel.armed() {
        ((1usize << 28) / (m * k).max(1)).max(256)
    } else {
        n.max(1)
    };
    // One block of batch `b`: rows `i0..i0 + h` and columns `j0..j0 + w` of its output,
    // C[i0.., j0..] = A[i0.., :]·B[:, j0..].
    let run_block = |b: usize, (i0, h): (usize, usize), (j0, w): (usize, usize), par: Par| {
        // SAFETY: offsets and strides describe in-bounds views of live storages; the output
        // block is written by this call only.
        unsafe {
            let a = MatRef::from_raw_parts(
                p.lhs().offset(l.batch_offsets[b] + i0 as isize * l.rs),
                h,
                k,
                l.rs,
                l.cs,
            );
            let bm = MatRef::from_raw_parts(
                p.rhs().offset(r.batch_offsets[b] + j0 as isize * r.cs),
                k,
                w,
                r.rs,
                r.cs,
            );
            let c = MatMut::from_raw_parts_mut(
                p.out().add(b * m * n + j0 * m + i0),
                h,
                w,
                1,
                m.max(1) as isize,
            );
            if !rhs_row_major {
                mm(c, a, bm, conj, par);
            } else if !lhs_row_major {
                mm(
                    c.transpose_mut(),
                    bm.transpose(),
                    a.transpose(),
                    (conj.1, conj.0),
                    par,
                );
            } else {
                mm(c, a, bm, conj, par);
            }
        }
    };
    // Rows `rows` of batch `b`, `cols` output columns at a time (a cancellation look between).
    let run_rows = |b: usize, rows: (usize, usize), cols_lo: usize, cols_hi: usize, par: Par| {
        let mut j0 = cols_lo;
        while j0 < cols_hi {
            if cancel.requested() {
                return;
            }
            let w = cols.min(cols_hi - j0);
            run_block(b, rows, (j0, w), par);
            j0 += w;
        }
    };
    let run = |b: usize, par: Par| run_rows(b, (0, m), 0, n, par);
    let work = m * n * k.max(1) * mac_weight(T::DTYPE);
    match e.parallel_pool() {
        // Many batches: one GEMM per task, each sequential.
        Some(pool) if nb >= 2 * e.threads && work * nb >= PAR_MIN_MACS => {
            pool.install(|| (0..nb).into_par_iter().for_each(|b| run(b, Par::Seq)));
        }
        // Few large GEMMs: each split into one block per worker along its longer side, each
        // block a sequential GEMM with its own packing — no synchronisation inside a product.
        // Measured against faer's own `Par::rayon` split (2-core Zen 4, f64, 15 interleaved
        // rounds, median): 2048² C 1.85× the serial engine against 1.42×, F 2.01× against
        // 1.81×, 1024² 2.04× against 1.67×.
        Some(pool) if work >= PAR_MIN_MACS && m.max(n) / e.threads >= MIN_SPLIT_SIDE => {
            let t = e.threads;
            let along_n = n >= m;
            let len = m.max(n);
            pool.install(|| {
                (0..nb * t).into_par_iter().for_each(|task| {
                    let (b, part) = (task / t, task % t);
                    let (lo, hi) = (part * len / t, (part + 1) * len / t);
                    if hi > lo {
                        if along_n {
                            run_rows(b, (0, m), lo, hi, Par::Seq);
                        } else {
                            run_rows(b, (lo, hi - lo), 0, n, Par::Seq);
                        }
                    }
                })
            });
        }
        // Few large GEMMs: faer parallelises inside each, within the engine's pool.
        Some(pool) if work >= PAR_MIN_MACS => {
            let par = Par::rayon(e.threads);
            pool.install(|| (0..nb).for_each(|b| run(b, par)));
        }
        _ => (0..nb).for_each(|b| run(b, Par::Seq)),
    }
}

/// The narrowest block side of a GEMM split over the engine's workers ([`gemm_batches`]);
/// narrower splits go through faer's own parallel GEMM, which splits both sides.
const MIN_SPLIT_SIDE: usize = 96;

/// Products whose `M`, `N` and `K` are all at most [`small_gemm::SMALL_MAX`]
/// ([`small_gemm::SCALAR_MAX`] at the baseline level; the levels taking a shape give the same
/// bits), and real batches of at least two products per worker up to
/// [`small_gemm::MEDIUM_MAX`] on AVX-512 hosts: the whole batch through the small kernel of
/// [`small_gemm::selected`] (AVX-512, AVX2 or the baseline build, chosen at run time) instead of
/// one faer call per matrix — faer's per-call dispatch costs more than a 16×16 product, and its
/// kernels are slower on 128² real products there (see `MEDIUM_MAX`). Many batch elements are
/// split into contiguous ranges over the engine's pool (only when the work passes
/// [`PAR_MIN_MACS`]); a cancellation flag is looked at between ranges.
fn small_batches<T: Element + small_gemm::Small>(
    e: &CpuEngine,
    l: &Operand,
    r: &Operand,
    out: &Tensor,
    (m, n, k): (usize, usize, usize),
    conj: (bool, bool),
) {
    let nb = l.batch_offsets.len();
    let g = small_gemm::Geometry {
        m,
        n,
        k,
        lhs: l.t.storage().as_ptr() as *const T,
        lhs_rs: l.rs,
        lhs_cs: l.cs,
        lhs_offsets: &l.batch_offsets,
        rhs: r.t.storage().as_ptr() as *const T,
        rhs_rs: r.rs,
        rhs_cs: r.cs,
        rhs_offsets: &r.batch_offsets,
        out: out.storage().as_mut_ptr() as *mut T,
        conj,
    };
    let isa = small_gemm::selected();
    let work = (m * n * k)
        .saturating_mul(nb)
        .saturating_mul(mac_weight(T::DTYPE));
    let cancel = if work > crate::cancel::CHECK_WORK {
        crate::cancel::Cancel::current()
    } else {
        crate::cancel::Cancel::none()
    };
    let range = |c: usize, chunks: usize| {
        if !cancel.requested() {
            // SAFETY: offsets and strides describe in-bounds views of live storages; `m`, `n`,
            // `k` are at least 1 (`dot_general` returned early for empty products); the
            // ranges of different chunks are disjoint, so each output block has one writer;
            // `isa` comes from `selected` (available on this CPU).
            unsafe { small_gemm::run(&g, c * nb / chunks..(c + 1) * nb / chunks, isa) }
        }
    };
    match e.parallel_pool() {
        Some(pool) if nb >= 2 * e.threads && work >= PAR_MIN_MACS => {
            // A few ranges per worker: rayon balances them; each is long enough (≥ 1 MiB of
            // multiply-adds at the threshold) that the split costs nothing measurable.
            let chunks = (4 * e.threads).min(nb);
            pool.install(|| (0..chunks).into_par_iter().for_each(|c| range(c, chunks)));
        }
        _ => {
            let chunks = if cancel.armed() { nb.div_ceil(4096) } else { 1 };
            (0..chunks).for_each(|c| range(c, chunks));
        }
    }
}

/// `c = op(a)·op(b)` with the conjugation flags.
fn mm<T: faer::traits::ComplexField>(
    c: MatMut<'_, T>,
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    conj: (bool, bool),
    par: Par,
) {
    let one = T::one_impl();
    use faer::linalg::matmul::matmul;
    match conj {
        (false, false) => matmul(c, Accum::Replace, a, b, one, par),
        (true, false) => matmul(c, Accum::Replace, a.conjugate(), b, one, par),
        (false, true) => matmul(c, Accum::Replace, a, b.conjugate(), one, par),
        (true, true) => matmul(c, Accum::Replace, a.conjugate(), b.conjugate(), one, par),
    }
}

trait IntLike: Element {
    fn zero() -> Self;
    fn mac(acc: Self, a: Self, b: Self) -> Self;
}
impl IntLike for i32 {
    fn zero() -> Self {
        0
    }
    fn mac(acc: Self, a: Self, b: Self) -> Self {
        acc.wrapping_add(a.wrapping_mul(b))
    }
}
impl IntLike for i64 {
    fn zero() -> Self {
        0
    }
    fn mac(acc: Self, a: Self, b: Self) -> Self {
        acc.wrapping_add(a.wrapping_mul(b))
    }
}
impl IntLike for bool {
    fn zero() -> Self {
        false
    }
    fn mac(acc: Self, a: Self, b: Self) -> Self {
        acc | (a & b)
    }
}

fn naive_batches<T: IntLike>(l: &Operand, r: &Operand, out: &Tensor, m: usize, n: usize, k: usize) {
    let lp = l.t.storage().as_ptr() as *const T;
    let rp = r.t.storage().as_ptr() as *const T;
    let op = out.storage().as_mut_ptr() as *mut T;
    for b in 0..l.batch_offsets.len() {
        for j in 0..n {
            for i in 0..m {
                let mut acc = T::zero();
                for q in 0..k {
                    // SAFETY: in-bounds strided reads of the operand views.
                    unsafe {
                        let a =
                            *lp.offset(l.batch_offsets[b] + i as isize * l.rs + q as isize * l.cs);
                        let bb =
                            *rp.offset(r.batch_offsets[b] + q as isize * r.rs + j as isize * r.cs);
                        acc = T::mac(acc, a, bb);
                    }
                }
                // SAFETY: fresh output, in bounds.
                unsafe { *op.add(b * m * n + j * m + i) = acc };
            }
        }
    }
}

/// `dot_general` (optionally conjugating operands); output `[lhs free…, rhs free…, batch…]`.
pub(crate) fn dot_general(
    e: &CpuEngine,
    name: &str,
    cfg: &DotGeneralConfig,
    lhs: &Tensor,
    rhs: &Tensor,
    conj: (bool, bool),
    out_shape: &[usize],
) -> Result<Tensor> {
    let lfree = cfg.lhs_free(lhs.ndim());
    let rfree = cfg.rhs_free(rhs.ndim());
    let m: usize = lfree.iter().map(|&a| lhs.shape()[a]).product();
    let n: usize = rfree.iter().map(|&a| rhs.shape()[a]).product();
    let k: usize = cfg
        .lhs_contracting_dims
        .iter()
        .map(|&a| lhs.shape()[a])
        .product();
    let out = Tensor::empty(name, lhs.dtype(), out_shape, Some(&e.buffer_pool), k == 0)?;
    if out.numel() == 0 || k == 0 {
        return Ok(out);
    }
    let extra = i64::from(conj.0) + 2 * i64::from(conj.1);
    let route = e.plan_cache.get_or_build(
        plan_key(1, cfg, lhs, rhs, extra),
        |r: &Route| {
            std::mem::size_of::<Route>()
                + match r {
                    Route::Gemm(p) => {
                        8 * (p.lhs.rows.len()
                            + p.rhs.rows.len()
                            + p.lhs.cols.len()
                            + p.rhs.cols.len())
                    }
                    Route::Reversed | Route::Swapped => 0,
                }
        },
        || {
            // C-ordered operands whose multi-axis groups do not merge in axis order (NumPy
            // arrays read in place): computed on the axis-reversed views, which are
            // column-major, and the result permuted back — no operand copy where the reversed
            // views read in place.
            if reversed_applies(cfg, lhs, rhs, (&lfree, &rfree)) {
                return Route::Reversed;
            }
            // Both operands row-major (C-ordered NumPy memory, transposed views): the swapped
            // product Bᵀ·Aᵀ per batch, whose operands are column-major, into a compact buffer
            // returned with its axes permuted back — row-major result blocks, as NumPy gives
            // for C-ordered operands.
            if row_major(lhs, &lfree, &cfg.lhs_contracting_dims)
                && row_major(rhs, &cfg.rhs_contracting_dims, &rfree)
            {
                return Route::Swapped;
            }
            let (lk, rk) = contracting_order(cfg, lhs, rhs, &lfree, &rfree);
            Route::Gemm(GemmPlan {
                lhs: plan_layout(lhs.shape(), lhs.strides(), &lfree, &lk, &cfg.lhs_batch_dims),
                rhs: plan_layout(rhs.shape(), rhs.strides(), &rk, &rfree, &cfg.rhs_batch_dims),
            })
        },
    );
    let plan = match &*route {
        Route::Reversed => {
            return reversed_axes(e, name, cfg, lhs, rhs, conj, out_shape, (&lfree, &rfree))
        }
        Route::Swapped => {
            let swapped = DotGeneralConfig {
                lhs_contracting_dims: cfg.rhs_contracting_dims.clone(),
                rhs_contracting_dims: cfg.lhs_contracting_dims.clone(),
                lhs_batch_dims: cfg.rhs_batch_dims.clone(),
                rhs_batch_dims: cfg.lhs_batch_dims.clone(),
            };
            let (nl, nr) = (lfree.len(), rfree.len());
            let mut t_shape: Vec<usize> = out_shape[nl..nl + nr].to_vec();
            t_shape.extend_from_slice(&out_shape[..nl]);
            t_shape.extend_from_slice(&out_shape[nl + nr..]);
            let t = dot_general(e, name, &swapped, rhs, lhs, (conj.1, conj.0), &t_shape)?;
            let perm: Vec<usize> = (nr..nr + nl)
                .chain(0..nr)
                .chain(nl + nr..out_shape.len())
                .collect();
            return t.transpose_view(&perm);
        }
        Route::Gemm(plan) => plan,
    };
    if let Some(t) = batch_inner(
        e,
        name,
        cfg,
        lhs,
        rhs,
        conj,
        out_shape,
        (&lfree, &rfree),
        (m, n, k),
    )? {
        return Ok(t);
    }
    let l = prepare(e, name, lhs, &plan.lhs)?;
    let r = prepare(e, name, rhs, &plan.rhs)?;
    match lhs.dtype() {
        DType::F32 => gemm_batches::<f32>(e, &l, &r, &out, m, n, k, conj),
        DType::F64 => gemm_batches::<f64>(e, &l, &r, &out, m, n, k, conj),
        DType::C32 => gemm_batches::<Complex32>(e, &l, &r, &out, m, n, k, conj),
        DType::C64 => gemm_batches::<Complex64>(e, &l, &r, &out, m, n, k, conj),
        DType::I32 => naive_batches::<i32>(&l, &r, &out, m, n, k),
        DType::I64 => naive_batches::<i64>(&l, &r, &out, m, n, k),
        DType::Bool => naive_batches::<bool>(&l, &r, &out, m, n, k),
    }
    Ok(out)
}

/// The contracting axis pairs `(lhs, rhs)` in the order that leaves the fewest operands to copy:
/// the pairs may be listed in any order (the same for both operands; only the summation order
/// of the GEMM changes), and an operand whose contracting axes do not chain in the given order
/// may chain in the order of its strides — e.g. a C-ordered site tensor `A[b, t, d]` contracted
/// over `(b, t)` reads in place as `(t, b)`. The given order wins ties; an operand copied anyway
/// is copied in the chosen order.
fn contracting_order(
    cfg: &DotGeneralConfig,
    lhs: &Tensor,
    rhs: &Tensor,
    lfree: &[usize],
    rfree: &[usize],
) -> (Vec<usize>, Vec<usize>) {
    let (lk, rk) = (&cfg.lhs_contracting_dims, &cfg.rhs_contracting_dims);
    let copies = |order: &[usize]| {
        let l: Vec<usize> = order.iter().map(|&i| lk[i]).collect();
        let r: Vec<usize> = order.iter().map(|&i| rk[i]).collect();
        let lc = plan_layout(lhs.shape(), lhs.strides(), lfree, &l, &cfg.lhs_batch_dims);
        let rc = plan_layout(rhs.shape(), rhs.strides(), &r, rfree, &cfg.rhs_batch_dims);
        (
            usize::from(lc.copy_perm.is_some()) + usize::from(rc.copy_perm.is_some()),
            l,
            r,
        )
    };
    let given: Vec<usize> = (0..lk.len()).collect();
    let mut best = copies(&given);
    if lk.len() < 2 || best.0 == 0 {
        return (best.1, best.2);
    }
    for (t, axes) in [(lhs, lk), (rhs, rk)] {
        let mut order = given.clone();
        order.sort_by_key(|&i| t.strides()[axes[i]].unsigned_abs());
        let c = copies(&order);
        if c.0 < best.0 {
            best = c;
        }
    }
    (best.1, best.2)
}

/// Whether reading `t` as a `rows × cols` matrix (batch axes apart) needs a compacting copy.
fn needs_copy(t: &Tensor, rows: &[usize], cols: &[usize]) -> bool {
    plan_layout(t.shape(), t.strides(), rows, cols, &[])
        .copy_perm
        .is_some()
}

/// The dimension numbers of `dot_general` on both operands with their axes reversed (ranks
/// `lr`, `rr`): contracting pairs listed in reverse, so that groups contiguous in C order chain.
fn reversed_cfg(cfg: &DotGeneralConfig, lr: usize, rr: usize) -> DotGeneralConfig {
    let flip =
        |r: usize, dims: &[usize]| -> Vec<usize> { dims.iter().map(|&d| r - 1 - d).collect() };
    DotGeneralConfig {
        lhs_contracting_dims: flip(lr, &cfg.lhs_contracting_dims)
            .into_iter()
            .rev()
            .collect(),
        rhs_contracting_dims: flip(rr, &cfg.rhs_contracting_dims)
            .into_iter()
            .rev()
            .collect(),
        lhs_batch_dims: flip(lr, &cfg.lhs_batch_dims),
        rhs_batch_dims: flip(rr, &cfg.rhs_batch_dims),
    }
}

/// `t` with its axes reversed (a view).
fn reversed(t: &Tensor) -> Result<Tensor> {
    t.transpose_view(&(0..t.ndim()).rev().collect::<Vec<_>>())
}

/// Whether [`dot_general`] takes the axis-reversal route ([`reversed_axes`]): some operand would
/// be copied as given but neither is after reversing both operands' axes (C-ordered →
/// column-major views).
fn reversed_applies(
    cfg: &DotGeneralConfig,
    lhs: &Tensor,
    rhs: &Tensor,
    (lfree, rfree): (&[usize], &[usize]),
) -> bool {
    let (lc, rc) = (&cfg.lhs_contracting_dims, &cfg.rhs_contracting_dims);
    if !needs_copy(lhs, lfree, lc) && !needs_copy(rhs, rc, rfree) {
        return false;
    }
    let (lr, rr) = (lhs.ndim(), rhs.ndim());
    let rev_cfg = reversed_cfg(cfg, lr, rr);
    let (Ok(l2), Ok(r2)) = (reversed(lhs), reversed(rhs)) else {
        return false;
    };
    let (lf2, rf2) = (rev_cfg.lhs_free(lr), rev_cfg.rhs_free(rr));
    !needs_copy(&l2, &lf2, &rev_cfg.lhs_contracting_dims)
        && !needs_copy(&r2, &rev_cfg.rhs_contracting_dims, &rf2)
}

/// The axis-reversal route of [`dot_general`] (taken where [`reversed_applies`]): the product
/// of the reversed views, whose operands read in place, with its result's axes permuted back.
#[allow(clippy::too_many_arguments)]
fn reversed_axes(
    e: &CpuEngine,
    name: &str,
    cfg: &DotGeneralConfig,
    lhs: &Tensor,
    rhs: &Tensor,
    conj: (bool, bool),
    out_shape: &[usize],
    (lfree, rfree): (&[usize], &[usize]),
) -> Result<Tensor> {
    let rev_cfg = reversed_cfg(cfg, lhs.ndim(), rhs.ndim());
    let (l2, r2) = (reversed(lhs)?, reversed(rhs)?);
    let (nl, nr) = (lfree.len(), rfree.len());
    let mut shape2: Vec<usize> = out_shape[..nl].iter().rev().copied().collect();
    shape2.extend(out_shape[nl..nl + nr].iter().rev());
    shape2.extend_from_slice(&out_shape[nl + nr..]);
    let t = dot_general(e, name, &rev_cfg, &l2, &r2, conj, &shape2)?;
    let perm: Vec<usize> = (0..nl)
        .rev()
        .chain((nl..nl + nr).rev())
        .chain(nl + nr..out_shape.len())
        .collect();
    t.transpose_view(&perm)
}

/// `scale_real(x, r)`: floats and complex multiply; integers round the product; bool keeps
/// `x` unless `r == 0`.
pub(crate) fn scale_real(e: &CpuEngine, name: &str, x: &Tensor, r: f64) -> Result<Tensor> {
    let s = x.shape();
    macro_rules! lift {
        ($T:ty, $f:expr) => {
            map1::<$T, $T>(e, name, s, x, 1, |xs, os| {
                for (o, &v) in os.iter_mut().zip(xs) {
                    *o = $f(v);
                }
            })
        };
    }
    match x.dtype() {
        DType::F32 => lift!(f32, |v: f32| v * r as f32),
        DType::F64 => lift!(f64, |v: f64| v * r),
        DType::C32 => lift!(Complex32, |v: Complex32| v * r as f32),
        DType::C64 => lift!(Complex64, |v: Complex64| v * r),
        DType::I32 => lift!(i32, |v: i32| (v as f64 * r).round() as i32),
        DType::I64 => lift!(i64, |v: i64| (v as f64 * r).round() as i64),
        DType::Bool => lift!(bool, |v: bool| v && r != 0.0),
    }
}

/// `scale_complex(x, c)` for complex `x`.
pub(crate) fn scale_complex(e: &CpuEngine, name: &str, x: &Tensor, c: Complex64) -> Result<Tensor> {
    let s = x.shape();
    match x.dtype() {
        DType::C32 => {
            let c = Complex::new(c.re as f32, c.im as f32);
            map1::<Complex32, Complex32>(e, name, s, x, 4, |xs, os| {
                for (o, &v) in os.iter_mut().zip(xs) {
                    *o = crate::math::cscale(v, c);
                }
            })
        }
        DType::C64 => map1::<Complex64, Complex64>(e, name, s, x, 4, |xs, os| {
            for (o, &v) in os.iter_mut().zip(xs) {
                *o = crate::math::cscale(v, c);
            }
        }),
        d @ (DType::Bool | DType::I32 | DType::I64 | DType::F32 | DType::F64) => Err(Error::dtype(
            name,
            format!("scale_complex needs a complex tensor, got {d}"),
        )),
    }
}

/// Largest `M`, `N`, `K` handled by [`batch_inner`]: below this, per-matrix GEMM calls and the
/// compacting copies of batch-innermost operands cost more than vectorising across the batch.
const BATCH_INNER_MAX_DIM: usize = 16;
/// Batch elements per [`batch_inner`] block: the accumulator (32 lanes) stays in registers.
const BATCH_INNER_BLOCK: usize = 32;

/// `out[b, i, j] = Σ_q a[b, i, q] · b[b, q, j]` when every operand's batch axes merge into one
/// unit-stride (innermost) dimension — NumPy's `(B, n, n)` C-ordered arrays copied into
/// tenferro's column-major layout, or views of them — and the matrices are small: the kernel
/// vectorises across the batch instead of calling a GEMM per batch element, reads the operands
/// in place and writes a batch-innermost output (returned as a view with the batch axes last).
/// `None` when the layout or sizes do not qualify.
#[allow(clippy::too_many_arguments)]
fn batch_inner(
    e: &CpuEngine,
    name: &str,
    cfg: &DotGeneralConfig,
    lhs: &Tensor,
    rhs: &Tensor,
    conj: (bool, bool),
    out_shape: &[usize],
    (lfree, rfree): (&[usize], &[usize]),
    (m, n, k): (usize, usize, usize),
) -> Result<Option<Tensor>> {
    let nbatch = cfg.lhs_batch_dims.len();
    if nbatch == 0
        || conj != (false, false)
        || m.max(n).max(k) > BATCH_INNER_MAX_DIM
        || !matches!(
            lhs.dtype(),
            DType::F32 | DType::F64 | DType::C32 | DType::C64
        )
    {
        return Ok(None);
    }
    let unit_batch = |t: &Tensor, axes: &[usize]| {
        merge(t.shape(), t.strides(), axes).is_some_and(|(size, s)| size > 1 && s == 1)
    };
    if !unit_batch(lhs, &cfg.lhs_batch_dims) || !unit_batch(rhs, &cfg.rhs_batch_dims) {
        return Ok(None);
    }
    let (Some((_, lrs)), Some((_, lcs))) = (
        merge(lhs.shape(), lhs.strides(), lfree),
        merge(lhs.shape(), lhs.strides(), &cfg.lhs_contracting_dims),
    ) else {
        return Ok(None);
    };
    let (Some((_, rrs)), Some((_, rcs))) = (
        merge(rhs.shape(), rhs.strides(), &cfg.rhs_contracting_dims),
        merge(rhs.shape(), rhs.strides(), rfree),
    ) else {
        return Ok(None);
    };
    let nb: usize = cfg.lhs_batch_dims.iter().map(|&a| lhs.shape()[a]).product();
    // Compact output with the batch axes first, viewed back as [lhs free…, rhs free…, batch…].
    let nfree = out_shape.len() - nbatch;
    let mut t_shape: Vec<usize> = out_shape[nfree..].to_vec();
    t_shape.extend_from_slice(&out_shape[..nfree]);
    let out = Tensor::empty(name, lhs.dtype(), &t_shape, Some(&e.buffer_pool), false)?;
    let geo = Geometry {
        nb,
        m,
        n,
        k,
        l: (lhs.offset() as isize, lrs, lcs),
        r: (rhs.offset() as isize, rrs, rcs),
    };
    match lhs.dtype() {
        DType::F32 => batch_inner_run::<f32>(e, &geo, lhs, rhs, &out),
        DType::F64 => batch_inner_run::<f64>(e, &geo, lhs, rhs, &out),
        DType::C32 => batch_inner_run::<Complex32>(e, &geo, lhs, rhs, &out),
        DType::C64 => batch_inner_run::<Complex64>(e, &geo, lhs, rhs, &out),
        d @ (DType::Bool | DType::I32 | DType::I64) => {
            return Err(Error::internal(
                name,
                format!("the batched float kernel was reached with {d} operands"),
            ))
        }
    }
    let perm: Vec<usize> = (nbatch..out_shape.len()).chain(0..nbatch).collect();
    Ok(Some(out.transpose_view(&perm)?))
}

/// Sizes and `(offset, row stride, column stride)` of the operands of [`batch_inner`].
struct Geometry {
    nb: usize,
    m: usize,
    n: usize,
    k: usize,
    l: (isize, isize, isize),
    r: (isize, isize, isize),
}

fn batch_inner_run<T>(e: &CpuEngine, g: &Geometry, lhs: &Tensor, rhs: &Tensor, out: &Tensor)
where
    T: Element + std::ops::Mul<Output = T> + std::ops::Add<Output = T>,
{
    let p = Ptrs {
        lhs: lhs.storage().as_ptr() as *const T,
        rhs: rhs.storage().as_ptr() as *const T,
        out: out.storage().as_mut_ptr() as *mut T,
    };
    let blocks = g.nb.div_ceil(BATCH_INNER_BLOCK);
    let scratch = || vec![T::default(); (g.m * g.k + g.k * g.n) * BATCH_INNER_BLOCK];
    let block = |buf: &mut Vec<T>, blk: usize| {
        // SAFETY: the geometry describes in-bounds views of live storages (batch stride 1);
        // block `blk` writes only its own batch range of the fresh output.
        unsafe { batch_inner_block::<T>(g, p, blk, buf) }
    };
    let work = g.nb * g.m * g.n * g.k * mac_weight(T::DTYPE);
    match e.parallel_pool() {
        Some(pool) if blocks >= 2 && work >= PAR_MIN_MACS => {
            pool.install(|| (0..blocks).into_par_iter().for_each_init(scratch, block));
        }
        _ => {
            let mut buf = scratch();
            (0..blocks).for_each(|b| block(&mut buf, b));
        }
    }
}

/// One block of batch elements; dispatches to an AVX-512 or AVX2/FMA build of the same loop by
/// [`small_gemm::selected`] (the loops are written for the compiler's auto-vectoriser; separate
/// multiplies and adds, so every build gives the same bits).
unsafe fn batch_inner_block<T>(g: &Geometry, p: Ptrs<T>, blk: usize, buf: &mut [T])
where
    T: Element + std::ops::Mul<Output = T> + std::ops::Add<Output = T>,
{
    match small_gemm::selected() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `selected` only returns kernels the CPU supports; the caller's contract holds.
        small_gemm::Isa::Avx512 => unsafe { batch_inner_block_avx512(g, p, blk, buf) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        small_gemm::Isa::Avx2 => unsafe { batch_inner_block_avx2(g, p, blk, buf) },
        #[cfg(not(target_arch = "x86_64"))]
        // SAFETY: the caller's contract.
        small_gemm::Isa::Avx512 | small_gemm::Isa::Avx2 => unsafe {
            batch_inner_block_generic(g, p, blk, buf)
        },
        // SAFETY: the caller's contract.
        small_gemm::Isa::Scalar => unsafe { batch_inner_block_generic(g, p, blk, buf) },
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
unsafe fn batch_inner_block_avx512<T>(g: &Geometry, p: Ptrs<T>, blk: usize, buf: &mut [T])
where
    T: Element + std::ops::Mul<Output = T> + std::ops::Add<Output = T>,
{
    // SAFETY: the caller's contract.
    unsafe { batch_inner_block_generic(g, p, blk, buf) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn batch_inner_block_avx2<T>(g: &Geometry, p: Ptrs<T>, blk: usize, buf: &mut [T])
where
    T: Element + std::ops::Mul<Output = T> + std::ops::Add<Output = T>,
{
    // SAFETY: the caller's contract.
    unsafe { batch_inner_block_generic(g, p, blk, buf) }
}

/// Pack the block's `A[·, i, q]` and `B[·, q, j]` lanes into `buf` (contiguous, zero-padded to
/// the block width — operand strides that are multiples of 4 KiB would otherwise alias in the
/// L1 cache), then accumulate each output lane vector in registers.
#[inline(always)]
unsafe fn batch_inner_block_generic<T>(g: &Geometry, p: Ptrs<T>, blk: usize, buf: &mut [T])
where
    T: Element + std::ops::Mul<Output = T> + std::ops::Add<Output = T>,
{
    const W: usize = BATCH_INNER_BLOCK;
    let b0 = blk * W;
    let bc = W.min(g.nb - b0);
    let (lo, lrs, lcs) = g.l;
    let (ro, rrs, rcs) = g.r;
    let (pa, pb) = buf.split_at_mut(g.m * g.k * W);
    // Lane vectors of the `rows × cols` view at `off` into `dst[(r * cols + c) * W..]`.
    let pack = |dst: &mut [T],
                src: *const T,
                off: isize,
                (rows, cols): (usize, usize),
                (rs, cs): (isize, isize)| {
        for r in 0..rows {
            for c in 0..cols {
                let at = (r * cols + c) * W;
                let pos = off + r as isize * rs + c as isize * cs + b0 as isize;
                // SAFETY: `bc` lanes (stride 1) from an in-bounds position of the operand view.
                let lanes = unsafe { std::slice::from_raw_parts(src.offset(pos), bc) };
                dst[at..at + bc].copy_from_slice(lanes);
                dst[at + bc..at + W].fill(T::default());
            }
        }
    };
    pack(pa, p.lhs(), lo, (g.m, g.k), (lrs, lcs));
    pack(pb, p.rhs(), ro, (g.k, g.n), (rrs, rcs));
    for j in 0..g.n {
        for i in 0..g.m {
            let mut acc = [T::default(); W];
            for q in 0..g.k {
                let (x, y) = ((i * g.k + q) * W, (q * g.n + j) * W);
                let (a, b) = (&pa[x..x + W], &pb[y..y + W]);
                for ((c, &u), &v) in acc.iter_mut().zip(a).zip(b) {
                    *c = *c + u * v;
                }
            }
            // Output lanes (b0.., i, j) of the compact [batch, M, N] buffer; only this block
            // writes them.
            let o = unsafe {
                std::slice::from_raw_parts_mut(p.out().add(b0 + g.nb * (i + g.m * j)), bc)
            };
            o.copy_from_slice(&acc[..bc]);
        }
    }
}

//! Reductions: `reduce_sum`, `reduce_prod`, `reduce_max`, `reduce_min`, `reduce_sum_squares`.
//!
//! Each output element folds its reduced sub-space, walked in runs along the reduced axis of
//! smallest stride. Unit-stride runs are summed pairwise with eight accumulators below 128
//! elements (NumPy's `pairwise_sum`, numpy/_core/src/umath/loops_utils.h.src), and runs are
//! merged pairwise by a binary-counter stack, so float sums keep NumPy's O(ε log n) error.
//! Few outputs over many elements split the reduced range across the pool instead.

use crate::cancel::{Cancel, CHECK_WORK};
use crate::map::PAR_MIN_WORK;
use crate::math::{fmax_nan, fmin_nan};
use crate::strided::{MultiIndex, SendConstPtr, SendPtr};
use crate::CpuEngine;
use num_traits::Float;
use rayon::prelude::*;
use tenferro_ops::ReduceOp;
use tenferro_tensor::{Complex32, Complex64, DType, Element, Error, Result, Tensor};

trait Reducer<T>: Copy + Send + Sync {
    fn identity(&self) -> T;
    fn map(&self, x: T) -> T;
    fn combine(&self, a: T, b: T) -> T;
}

/// A reducer from non-capturing closures: every (op, dtype) pair is its own type, so `run`
/// is monomorphised and the per-element `map`/`combine` inline (and vectorise) instead of going
/// through function pointers (6–10× slower on float sums).
#[derive(Clone, Copy)]
struct Fold<T, M, C> {
    identity: T,
    map: M,
    combine: C,
}

impl<T, M, C> Reducer<T> for Fold<T, M, C>
where
    T: Element,
    M: Fn(T) -> T + Copy + Send + Sync,
    C: Fn(T, T) -> T + Copy + Send + Sync,
{
    #[inline(always)]
    fn identity(&self) -> T {
        self.identity
    }
    #[inline(always)]
    fn map(&self, x: T) -> T {
        (self.map)(x)
    }
    #[inline(always)]
    fn combine(&self, a: T, b: T) -> T {
        (self.combine)(a, b)
    }
}

/// `Fold` with the identity map.
fn fold<T: Element, C: Fn(T, T) -> T + Copy + Send + Sync>(
    identity: T,
    combine: C,
) -> Fold<T, impl Fn(T) -> T + Copy + Send + Sync, C> {
    Fold {
        identity,
        map: |v: T| v,
        combine,
    }
}

fn pairwise<T: Copy, R: Reducer<T>>(r: &R, xs: &[T]) -> T {
    let n = xs.len();
    if n < 8 {
        let mut acc = r.identity();
        for &x in xs {
            acc = r.combine(acc, r.map(x));
        }
        acc
    } else if n <= 128 {
        let mut acc = [r.identity(); 8];
        let mut chunks = xs.chunks_exact(8);
        for c in &mut chunks {
            for k in 0..8 {
                acc[k] = r.combine(acc[k], r.map(c[k]));
            }
        }
        let mut res = r.combine(
            r.combine(r.combine(acc[0], acc[1]), r.combine(acc[2], acc[3])),
            r.combine(r.combine(acc[4], acc[5]), r.combine(acc[6], acc[7])),
        );
        for &x in chunks.remainder() {
            res = r.combine(res, r.map(x));
        }
        res
    } else {
        let half = (n / 2).next_multiple_of(8).min(n);
        r.combine(pairwise(r, &xs[..half]), pairwise(r, &xs[half..]))
    }
}

/// Merge partial results pairwise: a binary counter of levels.
struct PairStack<T> {
    levels: Vec<(usize, T)>,
}

impl<T: Copy> PairStack<T> {
    fn new() -> Self {
        PairStack { levels: Vec::new() }
    }
    fn push<R: Reducer<T>>(&mut self, r: &R, mut v: T) {
        let mut size = 1usize;
        while let Some(&(s, top)) = self.levels.last() {
            if s != size {
                break;
            }
            self.levels.pop();
            v = r.combine(top, v);
            size *= 2;
        }
        self.levels.push((size, v));
    }
    fn finish<R: Reducer<T>>(self, r: &R) -> T {
        let mut acc: Option<T> = None;
        for &(_, v) in self.levels.iter().rev() {
            acc = Some(match acc {
                None => v,
                Some(a) => r.combine(v, a),
            });
        }
        acc.unwrap_or_else(|| r.identity())
    }
}

/// Drop size-1 axes, sort by |stride|, merge axes that chain.
fn coalesce(shape: &[usize], strides: &[isize]) -> (Vec<usize>, Vec<isize>) {
    let mut axes: Vec<(usize, isize)> = shape
        .iter()
        .zip(strides)
        .filter(|(&d, _)| d != 1)
        .map(|(&d, &s)| (d, s))
        .collect();
    axes.sort_by_key(|&(_, s)| s.unsigned_abs());
    let mut out: Vec<(usize, isize)> = Vec::new();
    for (d, s) in axes {
        match out.last_mut() {
            Some(last) if s == last.1 * last.0 as isize => last.0 *= d,
            _ => out.push((d, s)),
        }
    }
    if out.is_empty() {
        out.push((1, 0));
    }
    out.into_iter().unzip()
}

struct Space {
    shape: Vec<usize>,
    strides: Vec<isize>,
    numel: usize,
}

impl Space {
    /// Fold elements `[r0, r1)` (column-major order of the space) starting at `base + off`.
    /// Under a cancellation flag, looks at it every [`CHECK_WORK`] elements (also inside one
    /// long run, such as a broadcast axis of 2⁴⁰ elements) and returns a partial fold once set.
    #[allow(clippy::too_many_arguments)]
    fn fold<T: Element, R: Reducer<T>>(
        &self,
        r: &R,
        base: *const T,
        off: isize,
        r0: usize,
        r1: usize,
        cancel: &Cancel,
    ) -> T {
        let nd = self.shape.len();
        let s0 = self.strides[0];
        // One contiguous run of at most one pairwise block (many outputs, each a short
        // reduction): no index or stack bookkeeping.
        if nd == 1 && s0 == 1 && r1 - r0 <= 1024 {
            // SAFETY: the run lies inside the input view.
            let xs = unsafe { std::slice::from_raw_parts(base.offset(off + r0 as isize), r1 - r0) };
            return pairwise(r, xs);
        }
        let mut index = MultiIndex::new(nd);
        let idx = index.as_mut_slice();
        let mut rem = r0;
        let mut o = off;
        for ax in 0..nd {
            idx[ax] = rem % self.shape[ax];
            rem /= self.shape[ax];
            o += idx[ax] as isize * self.strides[ax];
        }
        let mut stack = PairStack::new();
        let mut pos = r0;
        let mut buf = [T::default(); 128];
        // Elements folded since the flag was last read (never read without a flag).
        let armed = cancel.armed();
        let mut unchecked = 0usize;
        'runs: while pos < r1 {
            let run = (self.shape[0] - idx[0]).min(r1 - pos);
            // SAFETY: the run lies inside the input view.
            unsafe {
                if s0 == 1 || run == 1 {
                    let xs = std::slice::from_raw_parts(base.offset(o), run);
                    for c in xs.chunks(1024) {
                        stack.push(r, pairwise(r, c));
                        unchecked += c.len();
                        if armed && unchecked >= CHECK_WORK {
                            unchecked = 0;
                            if cancel.requested() {
                                break 'runs;
                            }
                        }
                    }
                } else {
                    let mut done = 0;
                    while done < run {
                        let len = (run - done).min(128);
                        for (k, b) in buf.iter_mut().take(len).enumerate() {
                            *b = *base.offset(o + (done + k) as isize * s0);
                        }
                        stack.push(r, pairwise(r, &buf[..len]));
                        done += len;
                        unchecked += len;
                        if armed && unchecked >= CHECK_WORK {
                            unchecked = 0;
                            if cancel.requested() {
                                break 'runs;
                            }
                        }
                    }
                }
            }
            pos += run;
            o += run as isize * s0;
            idx[0] += run;
            let mut ax = 0;
            while ax < nd && idx[ax] == self.shape[ax] {
                o -= self.shape[ax] as isize * self.strides[ax];
                idx[ax] = 0;
                ax += 1;
                if ax < nd {
                    idx[ax] += 1;
                    o += self.strides[ax];
                }
            }
        }
        stack.finish(r)
    }
}

/// Rows of [`rows`]'s tiles: one tile of the unit-stride output axis stays in L1.
const ROW_TILE: usize = 256;
/// Reduced positions accumulated in order before a partial result joins the pairwise stack
/// (NumPy's block of 128 in `pairwise_sum`): error O((128 + log n)·ε) for float sums.
const ROW_BLOCK: usize = 128;

/// Reduction whose output's first axis (length `row`) is unit-stride in the input: for each tile
/// of that axis, the rows at every reduced position are combined elementwise (vectorised), in
/// blocks of [`ROW_BLOCK`] positions merged pairwise.
#[allow(clippy::too_many_arguments)]
fn rows<T: Element, R: Reducer<T>>(
    e: &CpuEngine,
    r: &R,
    space: &Space,
    base: SendConstPtr<T>,
    optr: SendPtr<T>,
    (row, ostride): (usize, usize),
    k_total: usize,
    place: impl Fn(usize) -> (isize, usize) + Sync,
    cancel: &Cancel,
) {
    // Offsets of the reduced positions, in the space's (stride-sorted) order.
    let mut roffs = Vec::with_capacity(space.numel);
    let nd = space.shape.len();
    let mut idx = vec![0usize; nd];
    let mut o = 0isize;
    for _ in 0..space.numel {
        roffs.push(o);
        for ax in 0..nd {
            idx[ax] += 1;
            o += space.strides[ax];
            if idx[ax] < space.shape[ax] {
                break;
            }
            o -= space.shape[ax] as isize * space.strides[ax];
            idx[ax] = 0;
        }
    }
    let tiles = row.div_ceil(ROW_TILE);
    let units = (k_total / row) * tiles;
    let do_range = |u0: usize, u1: usize| {
        let mut acc = [r.identity(); ROW_TILE];
        let mut stack: Vec<(usize, [T; ROW_TILE])> = Vec::new();
        for u in u0..u1 {
            let (outer, tile) = (u / tiles, u % tiles);
            let t0 = tile * ROW_TILE;
            let len = ROW_TILE.min(row - t0);
            let (xoff, ooff) = place(outer);
            let off = xoff + t0 as isize;
            let k0 = ooff + t0 * ostride;
            stack.clear();
            for block in roffs.chunks(ROW_BLOCK) {
                // At most ROW_BLOCK × ROW_TILE = 32 Ki elements per look.
                if cancel.requested() {
                    return;
                }
                acc[..len].fill(r.identity());
                for &ro in block {
                    // SAFETY: `off + ro + i` (i < len) addresses elements of the input view.
                    let xs =
                        unsafe { std::slice::from_raw_parts(base.get().offset(off + ro), len) };
                    for (a, &x) in acc[..len].iter_mut().zip(xs) {
                        *a = r.combine(*a, r.map(x));
                    }
                }
                // Binary counter of partial rows: merge equal sizes pairwise.
                let mut size = 1usize;
                let mut cur = acc;
                while let Some((s, top)) = stack.last() {
                    if *s != size {
                        break;
                    }
                    for (c, &t) in cur[..len].iter_mut().zip(&top[..len]) {
                        *c = r.combine(t, *c);
                    }
                    stack.pop();
                    size *= 2;
                }
                stack.push((size, cur));
            }
            let mut res = stack
                .pop()
                .map(|(_, v)| v)
                .unwrap_or([r.identity(); ROW_TILE]);
            while let Some((_, top)) = stack.pop() {
                for (c, &t) in res[..len].iter_mut().zip(&top[..len]) {
                    *c = r.combine(t, *c);
                }
            }
            // SAFETY: outputs `k0 + i·ostride` (i < len) belong to unit `u` only.
            unsafe {
                if ostride == 1 {
                    std::ptr::copy_nonoverlapping(res.as_ptr(), optr.get().add(k0), len);
                } else {
                    for (i, &v) in res[..len].iter().enumerate() {
                        *optr.get().add(k0 + i * ostride) = v;
                    }
                }
            }
        }
    };
    let work = space.numel * k_total;
    match e.parallel_pool() {
        Some(pool) if units >= 2 && work >= PAR_MIN_WORK => {
            let chunks = units.min(4 * e.threads);
            pool.install(|| {
                (0..chunks)
                    .into_par_iter()
                    .for_each(|c| do_range(c * units / chunks, (c + 1) * units / chunks))
            });
        }
        _ => do_range(0, units),
    }
}

fn run<T: Element, R: Reducer<T>>(
    e: &CpuEngine,
    name: &str,
    r: R,
    x: &Tensor,
    axes: &[usize],
    out_shape: &[usize],
) -> Result<Tensor> {
    let out = e.alloc(name, T::DTYPE, out_shape)?;
    let k_total = out.numel();
    if k_total == 0 {
        return Ok(out);
    }
    let (mut rs, mut rst) = (Vec::new(), Vec::new());
    let (mut ks, mut kst) = (Vec::new(), Vec::new());
    for ax in 0..x.ndim() {
        if axes.contains(&ax) {
            rs.push(x.shape()[ax]);
            rst.push(x.strides()[ax]);
        } else {
            ks.push(x.shape()[ax]);
            kst.push(x.strides()[ax]);
        }
    }
    let numel: usize = rs.iter().product();
    let (shape, strides) = coalesce(&rs, &rst);
    let space = Space {
        shape,
        strides,
        numel,
    };
    let base = SendConstPtr(x.storage().as_ptr() as *const T);
    let optr = SendPtr(out.storage().as_mut_ptr() as *mut T);
    let x_off = x.offset() as isize;
    let offset_of = |mut k: usize| -> isize {
        let mut o = x_off;
        for (d, s) in ks.iter().zip(&kst) {
            o += (k % d) as isize * s;
            k /= d;
        }
        o
    };
    // Tiny reductions never read the flag.
    let cancel = if numel.saturating_mul(k_total) > CHECK_WORK {
        Cancel::current()
    } else {
        Cancel::none()
    };
    let fold_all = |k: usize| -> T {
        if space.numel == 0 {
            r.identity()
        } else {
            space.fold(&r, base.get(), offset_of(k), 0, space.numel, &cancel)
        }
    };
    // A kept axis is unit-stride in `x` (a C-ordered array summed over a leading axis, a
    // column-major one over a trailing axis): combine whole rows along it instead of folding
    // each output over a strided gather.
    let unit_axis = (0..ks.len()).find(|&q| kst[q] == 1 && ks[q] >= 8);
    if let Some(q) = unit_axis.filter(|_| space.numel >= 2 && space.numel <= 1 << 22) {
        // The other kept axes: (extent, input stride, output stride).
        let mut others = Vec::with_capacity(ks.len());
        let mut ostride = 1usize;
        let mut row_ostride = 1usize;
        for j in 0..ks.len() {
            if j == q {
                row_ostride = ostride;
            } else {
                others.push((ks[j], kst[j], ostride));
            }
            ostride *= ks[j];
        }
        let place = |mut o: usize| -> (isize, usize) {
            let (mut xo, mut oo) = (x_off, 0usize);
            for &(d, xs, os) in &others {
                xo += (o % d) as isize * xs;
                oo += (o % d) * os;
                o /= d;
            }
            (xo, oo)
        };
        rows(
            e,
            &r,
            &space,
            base,
            optr,
            (ks[q], row_ostride),
            k_total,
            place,
            &cancel,
        );
        return Ok(out);
    }
    let threads = e.threads;
    if k_total >= 2 * threads || e.parallel_pool().is_none() || space.numel < PAR_MIN_WORK {
        e.drive(k_total, space.numel.max(1), |k0, k1| {
            for k in k0..k1 {
                // SAFETY: disjoint output positions.
                unsafe { *optr.get().add(k) = fold_all(k) };
            }
        });
    } else if let Some(pool) = e.parallel_pool() {
        let chunks = threads * 4;
        let per = space.numel.div_ceil(chunks).max(1);
        for k in 0..k_total {
            if cancel.requested() {
                break;
            }
            let off = offset_of(k);
            let partials: Vec<T> = pool.install(|| {
                (0..chunks)
                    .into_par_iter()
                    .map(|c| {
                        let r0 = (c * per).min(space.numel);
                        let r1 = ((c + 1) * per).min(space.numel);
                        if r0 == r1 {
                            r.identity()
                        } else {
                            space.fold(&r, base.get(), off, r0, r1, &cancel)
                        }
                    })
                    .collect()
            });
            let mut stack = PairStack::new();
            for p in partials {
                stack.push(&r, p);
            }
            // SAFETY: `k` is in the output.
            unsafe { *optr.get().add(k) = stack.finish(&r) };
        }
    }
    Ok(out)
}

fn float_reduce<T: Element + Float>(
    e: &CpuEngine,
    name: &str,
    op: ReduceOp,
    x: &Tensor,
    axes: &[usize],
    out_shape: &[usize],
) -> Result<Tensor> {
    match op {
        ReduceOp::Sum => run(
            e,
            name,
            fold(T::zero(), |a: T, b: T| a + b),
            x,
            axes,
            out_shape,
        ),
        ReduceOp::Prod => run(
            e,
            name,
            fold(T::one(), |a: T, b: T| a * b),
            x,
            axes,
            out_shape,
        ),
        ReduceOp::Max => run(
            e,
            name,
            fold(T::neg_infinity(), fmax_nan::<T>),
            x,
            axes,
            out_shape,
        ),
        ReduceOp::Min => run(
            e,
            name,
            fold(T::infinity(), fmin_nan::<T>),
            x,
            axes,
            out_shape,
        ),
        ReduceOp::SumSquares => {
            let f = Fold {
                identity: T::zero(),
                map: |v: T| v * v,
                combine: |a: T, b: T| a + b,
            };
            run(e, name, f, x, axes, out_shape)
        }
    }
}

macro_rules! int_reduce {
    ($T:ty, $e:expr, $name:expr, $op:expr, $x:expr, $axes:expr, $shape:expr) => {{
        type T = $T;
        match $op {
            ReduceOp::Sum => run(
                $e,
                $name,
                fold(0, |a: T, b: T| a.wrapping_add(b)),
                $x,
                $axes,
                $shape,
            ),
            ReduceOp::Prod => run(
                $e,
                $name,
                fold(1, |a: T, b: T| a.wrapping_mul(b)),
                $x,
                $axes,
                $shape,
            ),
            ReduceOp::Max => run(
                $e,
                $name,
                fold(T::MIN, |a: T, b: T| a.max(b)),
                $x,
                $axes,
                $shape,
            ),
            ReduceOp::Min => run(
                $e,
                $name,
                fold(T::MAX, |a: T, b: T| a.min(b)),
                $x,
                $axes,
                $shape,
            ),
            ReduceOp::SumSquares => {
                Err(Error::dtype($name, "reduce_sum_squares is real-float only"))
            }
        }
    }};
}

macro_rules! complex_reduce {
    ($C:ty, $e:expr, $name:expr, $op:expr, $x:expr, $axes:expr, $shape:expr) => {{
        type C = $C;
        match $op {
            ReduceOp::Sum => run(
                $e,
                $name,
                fold(C::new(0.0, 0.0), |a: C, b: C| a + b),
                $x,
                $axes,
                $shape,
            ),
            ReduceOp::Prod => run(
                $e,
                $name,
                fold(C::new(1.0, 0.0), |a: C, b: C| a * b),
                $x,
                $axes,
                $shape,
            ),
            _ => Err(Error::dtype($name, "complex values are not ordered")),
        }
    }};
}

/// Reduce `x` over `axes` (validated by the catalog) into `out_shape`.
pub(crate) fn reduce(
    e: &CpuEngine,
    name: &str,
    op: ReduceOp,
    x: &Tensor,
    axes: &[usize],
    out_shape: &[usize],
) -> Result<Tensor> {
    match x.dtype() {
        DType::F32 => float_reduce::<f32>(e, name, op, x, axes, out_shape),
        DType::F64 => float_reduce::<f64>(e, name, op, x, axes, out_shape),
        DType::I32 => int_reduce!(i32, e, name, op, x, axes, out_shape),
        DType::I64 => int_reduce!(i64, e, name, op, x, axes, out_shape),
        DType::C32 => complex_reduce!(Complex32, e, name, op, x, axes, out_shape),
        DType::C64 => complex_reduce!(Complex64, e, name, op, x, axes, out_shape),
        DType::Bool => match op {
            ReduceOp::Max => run(
                e,
                name,
                fold(false, |a: bool, b: bool| a | b),
                x,
                axes,
                out_shape,
            ),
            ReduceOp::Min => run(
                e,
                name,
                fold(true, |a: bool, b: bool| a & b),
                x,
                axes,
                out_shape,
            ),
            ReduceOp::Sum | ReduceOp::Prod | ReduceOp::SumSquares => {
                Err(Error::dtype(name, "dtype bool is not supported"))
            }
        },
    }
}

//! Elementwise drivers: apply a slice kernel over strided, broadcast operands into a fresh
//! compact output, in parallel chunks on the engine's pool above a work threshold.

use crate::cancel::{self, Cancel, CHECK_WORK};
use crate::strided::{load, Plan, SendConstPtr, SendPtr, BLOCK};
use crate::CpuEngine;
use tenferro_tensor::{DType, Element, Result, Tensor};

/// Work units (elements × per-element cost) below which an op stays on the caller's thread.
/// Handing work to the pool is a cross-thread round trip: about 20 µs with busy workers and
/// 60–100 µs with parked ones on the 2-core machine (rayon `install` from the caller, measured
/// in a loop). Measured there with back-to-back calls: splitting `add` (0.36 ns/element) breaks
/// even at about 256 Ki elements, `exp` (about 4× an add) pays off from 64 Ki.
pub(crate) const PAR_MIN_WORK: usize = 1 << 18;

/// Multiply-adds (a complex one counts 4) below which a contraction stays on the caller's
/// thread, for the same round-trip cost: a 128³ GEMM (2 M) takes 91 µs on one core and 60 µs
/// on two plus the round trip (faer, measured on the 2-core machine).
pub(crate) const PAR_MIN_MACS: usize = 1 << 21;

/// `PAR_MIN_MACS`'s weight of one multiply-add of `dtype`.
pub(crate) fn mac_weight(dtype: DType) -> usize {
    if dtype.is_complex() {
        4
    } else {
        1
    }
}

impl CpuEngine {
    /// Run `body(start, end)` over `[0, numel)`, split across the pool when the work is large.
    /// Under a cancellation flag (`cancel.rs`) each chunk runs in pieces of about
    /// [`CHECK_WORK`] work units, stopping once the flag is set.
    pub(crate) fn drive(&self, numel: usize, cost: usize, body: impl Fn(usize, usize) + Sync) {
        let work = numel.saturating_mul(cost);
        // Size first: the tiny-op path never looks at the pool or the flag.
        if work <= CHECK_WORK {
            body(0, numel);
            return;
        }
        let cancel = Cancel::current();
        let grain = cancel::grain(&cancel, cost);
        let body = |start: usize, end: usize| cancel::in_pieces(&cancel, start, end, grain, &body);
        if work >= PAR_MIN_WORK && numel >= 2 * BLOCK {
            if let Some(pool) = self.parallel_pool() {
                let chunks = (self.threads * 4).min(numel / BLOCK).max(1);
                let per = numel.div_ceil(chunks).next_multiple_of(64);
                pool.install(|| {
                    rayon::scope(|s| {
                        let body = &body;
                        let mut start = 0;
                        while start < numel {
                            let end = (start + per).min(numel);
                            s.spawn(move |_| body(start, end));
                            start = end;
                        }
                    })
                });
                return;
            }
        }
        body(0, numel);
    }

    /// A fresh compact output tensor from the engine's buffer pool.
    pub(crate) fn alloc(&self, op: &str, dtype: DType, shape: &[usize]) -> Result<Tensor> {
        Tensor::empty(op, dtype, shape, Some(&self.buffer_pool), false)
    }
}

macro_rules! map_fn {
    ($name:ident, $n:literal, [$($A:ident $x:ident $i:tt),+]) => {
        /// Apply `f` to runs of the operands (each broadcast to `shape`), writing a compact
        /// output of dtype `O`. `cost` is the relative per-element cost (1 = an add).
        #[allow(clippy::too_many_arguments)]
        pub(crate) fn $name<$($A: Element,)+ O: Element>(
            engine: &CpuEngine,
            op: &str,
            shape: &[usize],
            $($x: &Tensor,)+
            cost: usize,
            f: impl Fn($(&[$A],)+ &mut [O]) + Sync,
        ) -> Result<Tensor> {
            let out = engine.alloc(op, O::DTYPE, shape)?;
            let numel = out.numel();
            if numel == 0 {
                return Ok(out);
            }
            // Every operand compact with the output's shape (the common case, and the one of
            // tiny ops): element `i` of each sits at its offset plus `i`, so the chunks are
            // slices, and no iteration plan is built.
            if true $(&& $x.shape() == shape && $x.is_contiguous())+ {
                let optr = SendPtr(out.storage().as_mut_ptr() as *mut O);
                let bases = ($(SendConstPtr(
                    // SAFETY: the offset lies within the operand's storage.
                    unsafe { ($x.storage().as_ptr() as *const $A).add($x.offset()) }
                ),)+);
                engine.drive(numel, cost, |start, end| {
                    let bases = &bases;
                    // SAFETY: `start..end` lies in the output and in each compact operand of
                    // `numel` elements; chunks are disjoint.
                    unsafe {
                        let o = std::slice::from_raw_parts_mut(optr.get().add(start), end - start);
                        f($(std::slice::from_raw_parts(bases.$i.get().add(start), end - start),)+ o);
                    }
                });
                return Ok(out);
            }
            // Broadcast views only where an operand's shape differs from the output's.
            let owned: [Option<Tensor>; $n] = [$(
                if $x.shape() == shape { None } else { Some($x.broadcast_to_view(shape)?) },
            )+];
            let views: [&Tensor; $n] = [$(owned[$i].as_ref().unwrap_or($x),)+];
            let plan = Plan::<$n>::new(shape, views);
            let optr = SendPtr(out.storage().as_mut_ptr() as *mut O);
            let bases = ($(SendConstPtr(views[$i].storage().as_ptr() as *const $A),)+);
            // Runs shorter than this along the (coalesced) fastest axis are packed into full
            // BLOCK-sized buffers first, so `f` runs on whole blocks instead of once per run
            // (broadcast operands with stride-0 inner axes: a tensor-network product of 3^16
            // elements in runs of 9 ran 9× below memory speed).
            const SHORT_RUN: usize = 64;
            if plan.shape[0] < SHORT_RUN && numel >= 2 * BLOCK {
                engine.drive(numel, cost, |start, end| {
                    let bases = &bases;
                    let mut bufs = ($([<$A>::default(); BLOCK],)+);
                    let mut fill = 0usize;
                    let mut block_start = start;
                    plan.for_runs(start, end, |_, offs, run, inner| {
                        let mut done = 0;
                        while done < run {
                            let take = (run - done).min(BLOCK - fill);
                            // SAFETY: the plan's offsets stay within each input's storage.
                            unsafe {
                                $(
                                    for j in 0..take {
                                        bufs.$i[fill + j] = *bases.$i.get().offset(
                                            offs[$i] + (done + j) as isize * inner[$i],
                                        );
                                    }
                                )+
                            }
                            fill += take;
                            done += take;
                            if fill == BLOCK {
                                // SAFETY: positions `block_start..+BLOCK` are this chunk's
                                // (runs visit a chunk's output positions in order).
                                let o = unsafe {
                                    std::slice::from_raw_parts_mut(optr.get().add(block_start), BLOCK)
                                };
                                f($(&bufs.$i[..],)+ o);
                                block_start += BLOCK;
                                fill = 0;
                            }
                        }
                    });
                    if fill > 0 {
                        // SAFETY: as above, the chunk's last partial block.
                        let o = unsafe { std::slice::from_raw_parts_mut(optr.get().add(block_start), fill) };
                        f($(&bufs.$i[..fill],)+ o);
                    }
                });
                return Ok(out);
            }
            // Strides along the fastest axis are the plan's: unit for every operand means every
            // run is read in place (the common case, and the only one for tiny ops).
            // (Runs of one element, a scalar output, read in place whatever the stride.)
            let unit = plan.shape[0] == 1 || (true $(&& plan.strides[$i][0] == 1)+);
            engine.drive(numel, cost, |start, end| {
                let bases = &bases;
                if unit {
                    plan.for_runs(start, end, |pos, offs, run, _| {
                        // SAFETY: `pos..pos+run` lies in the output; the plan's offsets stay
                        // within each input's storage; runs of different chunks are disjoint.
                        unsafe {
                            let o = std::slice::from_raw_parts_mut(optr.get().add(pos), run);
                            f($(std::slice::from_raw_parts(bases.$i.get().offset(offs[$i]), run),)+ o);
                        }
                    });
                    return;
                }
                // Gather buffers for strided or broadcast operands, set up once per chunk and
                // left uninitialised (`load` writes what it returns: zeroing BLOCK elements
                // cost more than a tiny op).
                let mut bufs = ($([std::mem::MaybeUninit::<$A>::uninit(); BLOCK],)+);
                plan.for_runs(start, end, |pos, offs, run, inner| {
                    // SAFETY: `pos..pos+run` lies in the output; the plan's offsets stay within
                    // each input's storage; runs of different chunks are disjoint.
                    unsafe {
                        let o = std::slice::from_raw_parts_mut(optr.get().add(pos), run);
                        let mut done = 0;
                        while done < run {
                            let len = (run - done).min(BLOCK);
                            $(
                                let $x = load(
                                    bases.$i.get(),
                                    offs[$i] + done as isize * inner[$i],
                                    inner[$i],
                                    len,
                                    &mut bufs.$i,
                                );
                            )+
                            f($($x,)+ &mut o[done..done + len]);
                            done += len;
                        }
                    }
                });
            });
            Ok(out)
        }
    };
}

map_fn!(map1, 1, [A x 0]);
map_fn!(map2, 2, [A x 0, B y 1]);
map_fn!(map3, 3, [A x 0, B y 1, C z 2]);

/// Write `src` into the positions of `dst`, a view (same shape and dtype) of freshly allocated
/// storage that nothing else references yet.
pub(crate) fn assign(e: &CpuEngine, dst: &Tensor, src: &Tensor) -> Result<()> {
    let shape = dst.shape().to_vec();
    if dst.numel() == 0 {
        return Ok(());
    }
    let src = if src.shape() == shape.as_slice() {
        src.clone()
    } else {
        src.broadcast_to_view(&shape)?
    };
    tenferro_tensor::dispatch_dtype!(dst.dtype(), T => {
        let plan = Plan::<2>::new(&shape, [dst, &src]);
        let d = SendPtr(dst.storage().as_mut_ptr() as *mut T);
        let s = SendConstPtr(src.storage().as_ptr() as *const T);
        e.drive(dst.numel(), 1, |start, end| {
            plan.for_runs(start, end, |_, offs, run, inner| {
                // SAFETY: both views are in bounds; `dst` is unshared fresh storage and the
                // chunks of different workers write disjoint positions.
                unsafe {
                    let (dp, sp) = (d.get().offset(offs[0]), s.get().offset(offs[1]));
                    for i in 0..run as isize {
                        *dp.offset(i * inner[0]) = *sp.offset(i * inner[1]);
                    }
                }
            });
        });
    });
    Ok(())
}

/// Tile edge of [`transpose_copy`]: a 16×16 tile of `f64`/`c128` stays in L1.
const TILE: usize = 16;

/// A compact copy of `x` when its unit-stride axis `p` is not axis 0 (a transposed view, or the
/// column-major copy of a C-ordered array read back in C order), or `None` when the plain
/// strided copy is as good. Tiles of axes `0 × p` are copied so that both the reads (along `p`)
/// and the writes (along 0) walk memory contiguously within a tile; the generic run-wise copy
/// would read axis 0 with a large stride and miss the cache on every element.
pub(crate) fn transpose_copy(e: &CpuEngine, op: &str, x: &Tensor) -> Result<Option<Tensor>> {
    let (shape, strides) = (x.shape(), x.strides());
    if (1..=SMALL_COPY).contains(&x.numel()) {
        return tenferro_tensor::dispatch_dtype!(x.dtype(), T => small_copy::<T>(e, op, x).map(Some));
    }
    if shape.len() < 2 || shape[0] < 2 || strides[0].unsigned_abs() == 1 {
        return Ok(None);
    }
    let Some(p) = (1..shape.len()).find(|&k| strides[k] == 1 && shape[k] >= TILE) else {
        return Ok(None);
    };
    tenferro_tensor::dispatch_dtype!(x.dtype(), T => transpose_copy_as::<T>(e, op, x, p).map(Some))
}

/// Elements up to which [`transpose_copy`] copies any view with [`small_copy`]: the bound of
/// `drive`'s tiny-op path (one thread, no cancellation look), so nothing changes there.
const SMALL_COPY: usize = CHECK_WORK;

/// A compact (column-major) copy of a small view of any strides. The axes, size-1 axes dropped
/// and neighbours merged where the view's strides chain as the output's do, are walked with
/// the two longest innermost (a plain loop each) and the rest by an odometer: a permuted
/// `(D, 3, D, 2)` operand of a contraction copies in a few instructions per element, where the
/// run-wise copy pays its run set-up for every short run along axis 0 and the tiled copy
/// divides for every tile (measured with callgrind on the TFIM energy+gradient, whose
/// contractions copy ~10 such operands per site).
fn small_copy<T: Element>(e: &CpuEngine, op: &str, x: &Tensor) -> Result<Tensor> {
    let out = e.alloc(op, T::DTYPE, x.shape())?;
    // (size, view stride, output stride) in output order.
    let mut dims: Vec<(usize, isize, isize)> = Vec::with_capacity(x.ndim());
    let mut ostride = 1isize;
    for (&n, &s) in x.shape().iter().zip(x.strides()) {
        if n == 1 {
            continue;
        }
        match dims.last_mut() {
            Some(last) if last.1 * last.0 as isize == s => last.0 *= n,
            _ => dims.push((n, s, ostride)),
        }
        ostride *= n as isize;
    }
    let src = x.storage().as_ptr() as *const T;
    let dst = out.storage().as_mut_ptr() as *mut T;
    let off = x.offset() as isize;
    // The longest axis innermost, the next longest around it.
    let pick = |dims: &mut Vec<(usize, isize, isize)>| -> (usize, isize, isize) {
        match (0..dims.len()).max_by_key(|&k| (dims[k].0, usize::MAX - k)) {
            Some(k) => dims.remove(k),
            None => (1, 0, 0),
        }
    };
    let (na, ia, oa) = pick(&mut dims);
    let (nb, ib, ob) = pick(&mut dims);
    let outer: usize = dims.iter().map(|d| d.0).product();
    let mut idx = vec![0usize; dims.len()];
    let (mut xo, mut oo) = (off, 0isize);
    for _ in 0..outer {
        for j in 0..nb as isize {
            let (xs, os) = (xo + j * ib, oo + j * ob);
            // SAFETY: `(i, j, idx)` indexes an element of `x`'s in-bounds view and of the fresh
            // compact output (its column-major offset); each output element is written once.
            unsafe {
                if ia == 1 && oa == 1 {
                    std::ptr::copy_nonoverlapping(src.offset(xs), dst.offset(os), na);
                } else {
                    for i in 0..na as isize {
                        *dst.offset(os + i * oa) = *src.offset(xs + i * ia);
                    }
                }
            }
        }
        for (k, d) in dims.iter().enumerate() {
            idx[k] += 1;
            xo += d.1;
            oo += d.2;
            if idx[k] < d.0 {
                break;
            }
            idx[k] = 0;
            xo -= d.1 * d.0 as isize;
            oo -= d.2 * d.0 as isize;
        }
    }
    Ok(out)
}

fn transpose_copy_as<T: Element>(e: &CpuEngine, op: &str, x: &Tensor, p: usize) -> Result<Tensor> {
    let (shape, strides) = (x.shape(), x.strides());
    let out = e.alloc(op, T::DTYPE, shape)?;
    // Column-major strides of the compact output.
    let mut ostr = vec![1isize; shape.len()];
    for k in 1..shape.len() {
        ostr[k] = ostr[k - 1] * shape[k - 1] as isize;
    }
    let rest_axes: Vec<usize> = (1..shape.len()).filter(|&k| k != p).collect();
    let rest: usize = rest_axes.iter().map(|&k| shape[k]).product();
    let (n0, np) = (shape[0], shape[p]);
    let ptiles = np.div_ceil(TILE);
    let units = rest * ptiles;
    let src = SendConstPtr(x.storage().as_ptr() as *const T);
    let dst = SendPtr(out.storage().as_mut_ptr() as *mut T);
    let (s0, off) = (strides[0], x.offset() as isize);
    // Under a cancellation flag: a look every `every` units (about `CHECK_WORK` elements).
    let cancel = if x.numel() > CHECK_WORK {
        Cancel::current()
    } else {
        Cancel::none()
    };
    let every = (CHECK_WORK / (n0 * TILE).max(1)).max(1);
    let unit = |u: usize| {
        if u.is_multiple_of(every) && cancel.requested() {
            return;
        }
        let (mut r, tile) = (u / ptiles, u % ptiles);
        let (mut ib, mut ob) = (off, 0isize);
        for &k in &rest_axes {
            let i = (r % shape[k]) as isize;
            r /= shape[k];
            ib += i * strides[k];
            ob += i * ostr[k];
        }
        let (j0, j1) = (tile * TILE, ((tile + 1) * TILE).min(np));
        let mut i0 = 0;
        while i0 < n0 {
            let i1 = (i0 + TILE).min(n0);
            for j in j0..j1 {
                let (ij, oj) = (ib + j as isize, ob + j as isize * ostr[p]);
                for i in i0..i1 {
                    // SAFETY: `(i, j, rest)` indexes an element of `x`'s view and of the fresh
                    // compact output; units write disjoint output positions.
                    unsafe {
                        *dst.get().offset(oj + i as isize) =
                            *src.get().offset(ij + i as isize * s0);
                    }
                }
            }
            i0 = i1;
        }
    };
    match e.parallel_pool() {
        Some(pool) if out.numel() >= PAR_MIN_WORK && units >= 2 => {
            use rayon::prelude::*;
            pool.install(|| (0..units).into_par_iter().for_each(unit));
        }
        _ => (0..units).for_each(unit),
    }
    Ok(out)
}

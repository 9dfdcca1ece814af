//! Reductions: `reduce_sum`, `reduce_prod`, `reduce_max`, `reduce_min`, `reduce_sum_squares`.
//!
//! Each output element folds its reduced sub-space, walked in runs along the reduced axis of
//! smallest stride. Unit-stride runs are summed pairwise with eight accumulators below 128
//! elements (NumPy's `pairwise_sum`, numpy/_core/src/umath/loops_utils.h.src), and runs are
//! merged pairwise by a binary-counter stack, so float sums keep NumPy's O(ε log n) error.
//! Few outputs over many elements split the reduced range across the pool instead.

use crate::map::PAR_MIN_WORK;
use crate::math::{fmax_nan, fmin_nan};
use crate::strided::{SendConstPtr, SendPtr};
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
    fn fold<T: Element, R: Reducer<T>>(
        &self,
        r: &R,
        base: *const T,
        off: isize,
        r0: usize,
        r1: usize,
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
        let mut idx_small = [0usize; 8];
        let mut idx_large = Vec::new();
        let idx: &mut [usize] = if nd <= 8 {
            &mut idx_small[..nd]
        } else {
            idx_large.resize(nd, 0);
            &mut idx_large
        };
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
        while pos < r1 {
            let run = (self.shape[0] - idx[0]).min(r1 - pos);
            // SAFETY: the run lies inside the input view.
            unsafe {
                if s0 == 1 || run == 1 {
                    let xs = std::slice::from_raw_parts(base.offset(o), run);
                    for c in xs.chunks(1024) {
                        stack.push(r, pairwise(r, c));
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
    let fold_all = |k: usize| -> T {
        if space.numel == 0 {
            r.identity()
        } else {
            space.fold(&r, base.get(), offset_of(k), 0, space.numel)
        }
    };
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
                            space.fold(&r, base.get(), off, r0, r1)
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
            _ => Err(Error::dtype(name, "dtype bool is not supported")),
        },
    }
}

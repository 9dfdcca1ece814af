//! Dense linear algebra through faer: `svd`, `qr`, `eigh`, `eig`, `cholesky`, `lu`, `solve`,
//! `triangular_solve`, `slogdet`.
//!
//! Matrices are axes 0 (rows) and 1 (columns) of the operands; every further axis is a batch
//! axis. Inputs are read in place through their strides (faer takes any row and column
//! stride); outputs are compact column-major with batch axes last, so batch `b` of an `r×c`
//! output is the contiguous block at `b·r·c`. One decomposition is written here, the unblocked
//! Householder QR of real matrices up to [`SMALL_QR_MAX`] (faer's blocked QR costs 1.5× LAPACK's
//! on 16×16 matrices); every other one is faer's. faer's
//! factorizations run with an explicit [`Par`] inside the engine's own pool — many small
//! matrices are split across the workers (one sequential factorization per matrix, one [`Work`]
//! buffer from the engine's pool per worker chunk, no per-matrix allocation on the hot paths), a
//! single large matrix is factorized with `Par::rayon(threads)`.
//!
//! Extreme scales: for the spectral decompositions (`svd`, `svdvals`, `eigh`, `eigvalsh`,
//! `eig`), whose reductions square entries, a matrix whose largest entry lies outside LAPACK's
//! safe range `[sqrt(safmin)/eps, eps/sqrt(safmin)]` is factorised as `2^e · a` (largest entry
//! in `[1, 2)`) and its singular values / eigenvalues are unscaled, exact in binary, as LAPACK's
//! drivers (`dgesvd`, `dsyevd`, `dgeev`) do; see [`scale_exponent`]. The elimination and
//! orthogonal factorisations (`lu`, `solve`, `slogdet`, `cholesky`, `qr`) square nothing and are
//! not scaled, as LAPACK's `getrf`/`potrf`/`geqrf`: a global `2^e` would flush entries more than
//! 2^1074 below the largest (`det(diag(1e300, 1e-300))` came out 0).
//!
//! Failures are typed [`Error::LinAlg`] naming the op and the batch index: non-finite input
//! (checked before faer runs), exactly zero pivots of `solve` (faer's LU does not report them),
//! non-positive pivots of `cholesky`, non-convergence of the iterative decompositions.

use crate::CpuEngine;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::svd::ComputeSvdVectors;
use faer::linalg::{temp_mat_scratch, temp_mat_zeroed};
use faer::mat::AsMatMut;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Conj, MatMut, MatRef, Par};
use num_complex::Complex;
use rayon::prelude::*;
use std::mem::MaybeUninit;
use std::sync::Arc;
use tenferro_ops::{LinalgOp, OutMeta};
use tenferro_tensor::{Complex32, Complex64, DType, Element, Error, Result, Storage, Tensor};

/// Element types of the linear-algebra kernels (`f32`, `f64`, `c64`, `c128`).
pub(crate) trait Scalar: Element + faer::traits::ComplexField<Real: Element> {
    /// `(re, im)` in double precision.
    fn parts(self) -> (f64, f64);
    /// From double-precision parts (the imaginary part is dropped for real types).
    fn make(re: f64, im: f64) -> Self;
    /// A real value of the matching real type.
    fn real(x: f64) -> Self::Real;
    /// `(safmin, eps)` of the real type: its smallest normal number and machine epsilon.
    fn limits() -> (f64, f64);
    /// The largest `|re|` or `|im|` of `xs` (0 when empty), or `None` when some part is not
    /// finite ([`check_finite`]'s fast path for contiguous columns).
    fn amax_finite(xs: &[Self]) -> Option<f64>;
}

/// The largest `|x|` of `xs` (0 when empty), or `None` when some `x` is not finite: eight
/// independent lanes (a loop the compiler vectorises), no early exit. A NaN never wins a `>`
/// comparison, and `x · 0` is 0 for every finite `x` and NaN for an infinity or NaN, so the sum
/// of those products flags any non-finite entry.
macro_rules! amax_finite_impl {
    ($name:ident, $r:ty) => {
        fn $name(xs: &[$r]) -> Option<f64> {
            let mut max = [0.0 as $r; 8];
            let mut bad = [0.0 as $r; 8];
            let chunks = xs.chunks_exact(8);
            let tail = chunks.remainder();
            for c in chunks {
                for l in 0..8 {
                    let a = c[l].abs();
                    max[l] = if a > max[l] { a } else { max[l] };
                    bad[l] += c[l] * 0.0;
                }
            }
            for (l, &x) in tail.iter().enumerate() {
                let a = x.abs();
                max[l] = if a > max[l] { a } else { max[l] };
                bad[l] += x * 0.0;
            }
            let mut m: $r = 0.0;
            for l in 0..8 {
                if bad[l] != 0.0 {
                    return None;
                }
                m = if max[l] > m { max[l] } else { m };
            }
            Some(m as f64)
        }
    };
}
amax_finite_impl!(amax_finite_f32, f32);
amax_finite_impl!(amax_finite_f64, f64);

macro_rules! real_scalar {
    ($t:ty, $amax:ident) => {
        impl Scalar for $t {
            fn parts(self) -> (f64, f64) {
                (self as f64, 0.0)
            }
            fn make(re: f64, _im: f64) -> Self {
                re as $t
            }
            fn real(x: f64) -> $t {
                x as $t
            }
            fn limits() -> (f64, f64) {
                (<$t>::MIN_POSITIVE as f64, <$t>::EPSILON as f64)
            }
            fn amax_finite(xs: &[$t]) -> Option<f64> {
                $amax(xs)
            }
        }
    };
}
real_scalar!(f32, amax_finite_f32);
real_scalar!(f64, amax_finite_f64);

macro_rules! complex_scalar {
    ($t:ty, $r:ty, $amax:ident) => {
        impl Scalar for $t {
            fn parts(self) -> (f64, f64) {
                (self.re as f64, self.im as f64)
            }
            fn make(re: f64, im: f64) -> Self {
                Complex::new(re as $r, im as $r)
            }
            fn real(x: f64) -> $r {
                x as $r
            }
            fn limits() -> (f64, f64) {
                (<$r>::MIN_POSITIVE as f64, <$r>::EPSILON as f64)
            }
            fn amax_finite(xs: &[$t]) -> Option<f64> {
                // SAFETY: `Complex<$r>` is `#[repr(C)]` `{re, im}`: `2·len` contiguous `$r`.
                let parts =
                    unsafe { std::slice::from_raw_parts(xs.as_ptr().cast::<$r>(), 2 * xs.len()) };
                $amax(parts)
            }
        }
    };
}
complex_scalar!(Complex32, f32, amax_finite_f32);
complex_scalar!(Complex64, f64, amax_finite_f64);

/// Trailing-matrix size (rows × columns) below which faer's bidiagonalization (SVD) and
/// tridiagonalization (`eigh`) steps run on one worker; faer's default is 192·256.
///
/// Measured on the 2-core machine with the workers polling (`Pool::install_polled`), alternating
/// settings in one process: a 256² complex SVD took 18.2 ms against 19.5 ms with the default, a
/// 256² complex `eigh` 9.0 against 10.8 ms, with no loss at 128² or 512². With parked workers
/// (`TENFERRO_LINGER_US=0`) the extra parallel steps do not pay, each one's wake-up costing more
/// than its share of work (bidiagonalization alone: 12.3 against 11.5 ms), so faer's default
/// applies there.
fn reduction_par_threshold() -> usize {
    if crate::threads::linger().is_zero() {
        192 * 256
    } else {
        8192
    }
}

/// Size below which faer's bidiagonal SVD and tridiagonal eigensolver use the QR algorithm instead
/// of divide and conquer; faer's default is 128. Measured as above: a 96² complex SVD took
/// 1.75 against 2.1 ms, a 96² complex `eigh` 1.05 against 1.23 ms; 40² and smaller are unchanged.
const DIVIDE_AND_CONQUER_THRESHOLD: usize = 64;

/// faer's SVD parameters for the engine (the thresholds above).
fn svd_params<T: Scalar>() -> faer::linalg::svd::SvdParams {
    let mut p: faer::linalg::svd::SvdParams = faer::Auto::<T>::auto();
    p.bidiag.par_threshold = reduction_par_threshold();
    p.recursion_threshold = DIVIDE_AND_CONQUER_THRESHOLD;
    p
}

/// faer's Hermitian eigensolver parameters for the engine (the thresholds above).
fn evd_params<T: Scalar>() -> faer::linalg::evd::SelfAdjointEvdParams {
    let mut p: faer::linalg::evd::SelfAdjointEvdParams = faer::Auto::<T>::auto();
    p.tridiag.par_threshold = reduction_par_threshold();
    p.recursion_threshold = DIVIDE_AND_CONQUER_THRESHOLD;
    p
}

/// A batch of strided matrices inside one tensor.
struct Batch<T> {
    base: *const T,
    rows: usize,
    cols: usize,
    rs: isize,
    cs: isize,
    offsets: Vec<isize>,
}

// SAFETY: read-only views of a live storage kept alive by the caller for the kernel's duration.
unsafe impl<T: Sync> Sync for Batch<T> {}
unsafe impl<T: Sync> Send for Batch<T> {}

impl<T: Element> Batch<T> {
    fn of(t: &Tensor) -> Batch<T> {
        let shape = t.shape();
        let strides = t.strides();
        let nb: usize = shape[2..].iter().product();
        let mut offsets = Vec::with_capacity(nb);
        let mut idx = vec![0usize; shape.len().saturating_sub(2)];
        for _ in 0..nb {
            offsets.push(
                idx.iter()
                    .zip(&strides[2..])
                    .map(|(&i, &s)| i as isize * s)
                    .sum(),
            );
            for (a, i) in idx.iter_mut().enumerate() {
                *i += 1;
                if *i < shape[2 + a] {
                    break;
                }
                *i = 0;
            }
        }
        Batch {
            base: t.data_ptr::<T>(),
            rows: shape[0],
            cols: shape[1],
            rs: strides[0],
            cs: strides[1],
            offsets,
        }
    }

    fn mat(&self, b: usize) -> MatRef<'_, T> {
        // SAFETY: the tensor's shape and strides describe in-bounds elements of its storage.
        unsafe {
            MatRef::from_raw_parts(
                self.base.offset(self.offsets[b]),
                self.rows,
                self.cols,
                self.rs,
                self.cs,
            )
        }
    }
}

/// A compact column-major output: batch `b` is the `rows×cols` block at `b·rows·cols`.
struct Out<T> {
    base: *mut T,
    rows: usize,
    cols: usize,
}

// SAFETY: each batch block is written by exactly one task.
unsafe impl<T: Send> Sync for Out<T> {}
unsafe impl<T: Send> Send for Out<T> {}

impl<T: Element> Out<T> {
    /// A fresh output whose leading `core` axes (2: matrix, 1: vector, 0: scalar) form one
    /// batch item.
    fn new(e: &CpuEngine, name: &str, meta: &OutMeta, core: usize) -> Result<(Tensor, Out<T>)> {
        let t = Tensor::empty(name, meta.dtype, &meta.shape, Some(&e.buffer_pool), false)?;
        let s = &meta.shape;
        let (rows, cols) = match core {
            0 => (1, 1),
            1 => (s[0], 1),
            _ => (s[0], s[1]),
        };
        let o = Out {
            base: t.storage().as_mut_ptr() as *mut T,
            rows,
            cols,
        };
        Ok((t, o))
    }

    /// The matrix block of batch `b`.
    ///
    /// # Safety
    /// Only one caller may hold block `b` at a time.
    #[allow(clippy::mut_from_ref)]
    unsafe fn mat(&self, b: usize) -> MatMut<'_, T> {
        unsafe {
            MatMut::from_raw_parts_mut(
                self.base.add(b * self.rows * self.cols),
                self.rows,
                self.cols,
                1,
                self.rows.max(1) as isize,
            )
        }
    }
}

/// Check that matrix `b` holds only finite values; returns the largest `|re|` or `|im|` of its
/// entries (0 for an empty matrix), for [`scale_exponent`].
fn check_finite<T: Scalar>(name: &str, a: MatRef<'_, T>, b: usize) -> Result<f64> {
    if let Some(amax) = amax_finite(a) {
        return Ok(amax);
    }
    let mut amax = 0.0f64;
    for j in 0..a.ncols() {
        for (i, x) in a.col(j).iter().enumerate() {
            let (re, im) = x.parts();
            if !(re.is_finite() && im.is_finite()) {
                return Err(Error::linalg(
                    name,
                    format!("non-finite value {re}{im:+}i at [{i}, {j}] of matrix {b}"),
                ));
            }
            amax = amax.max(re.abs()).max(im.abs());
        }
    }
    Ok(amax)
}

/// [`check_finite`]'s fast path: the largest part of a matrix whose columns are contiguous, or
/// `None` (a non-finite entry, or strided columns) to take the element-by-element scan.
fn amax_finite<T: Scalar>(a: MatRef<'_, T>) -> Option<f64> {
    if a.nrows() > 1 && a.row_stride() != 1 {
        return None;
    }
    let mut amax = 0.0f64;
    for j in 0..a.ncols() {
        let col = a.col(j);
        // SAFETY: row stride 1 (or at most one row): `nrows` contiguous elements of the live
        // matrix from the column's first element.
        let xs = unsafe { std::slice::from_raw_parts(col.as_ptr(), a.nrows()) };
        amax = amax.max(T::amax_finite(xs)?);
    }
    Some(amax)
}

/// LAPACK's safe range of matrix entries for the factorisations, `[SMLNUM, BIGNUM]` with
/// `SMLNUM = sqrt(safmin)/eps` and `BIGNUM = 1/SMLNUM` (`dgesvd`, `dsyevd`, `dgeev`: about
/// `[6.7e-139, 1.5e138]` in double, `[9.1e-13, 1.1e12]` in single precision).
fn safe_range<T: Scalar>() -> (f64, f64) {
    let (safmin, eps) = T::limits();
    let small = safmin.sqrt() / eps;
    (small, 1.0 / small)
}

/// The exponent `e` such that `2^e · a` has its largest component (`amax`) in `[1, 2)`, when
/// `amax` lies outside [`safe_range`]; `None` inside it and for a zero matrix.
///
/// faer's factorisations square entries without scaling (they fail or lose all accuracy beyond
/// about `1e±154` in double precision: an SVD "did not converge" above, singular values off by
/// 30 % below), so, as LAPACK's drivers do, a matrix outside the safe range is factorised as
/// `2^e · a` and the results are unscaled: exact in binary, one pass over the input (fused
/// with [`check_finite`]) on the default path.
fn scale_exponent<T: Scalar>(amax: f64) -> Option<i32> {
    let (small, big) = safe_range::<T>();
    if amax == 0.0 || (small..=big).contains(&amax) {
        None
    } else {
        Some(-(amax.log2().floor() as i32))
    }
}

/// `x · 2^e`, exact unless the result over- or underflows (steps of `2^±1000` in the direction
/// of the result, so no intermediate leaves the range of the ends).
fn ldexp(mut x: f64, mut e: i32) -> f64 {
    fn pow2(e: i32) -> f64 {
        // |e| <= 1000: a normal number, built from its exponent bits.
        f64::from_bits(((e + 1023) as u64) << 52)
    }
    while e > 1000 {
        x *= pow2(1000);
        e -= 1000;
    }
    while e < -1000 {
        x *= pow2(-1000);
        e += 1000;
    }
    x * pow2(e)
}

/// `x · 2^e` for an element of a matrix.
fn ldexp_t<T: Scalar>(x: T, e: i32) -> T {
    let (re, im) = x.parts();
    T::make(ldexp(re, e), ldexp(im, e))
}

/// `2^e · a` as a new matrix (the rare path of [`scale_exponent`]).
fn scaled_copy<T: Scalar>(a: MatRef<'_, T>, e: i32) -> faer::Mat<T> {
    faer::Mat::from_fn(a.nrows(), a.ncols(), |i, j| ldexp_t(a[(i, j)], e))
}

/// Multiply every element of `m` by `2^e`.
fn ldexp_mat<T: Scalar>(mut m: MatMut<'_, T>, e: i32) {
    for j in 0..m.ncols() {
        for x in m.rb_mut().col_mut(j).iter_mut() {
            *x = ldexp_t(*x, e);
        }
    }
}

/// Run `f(range, par)` over the batch: chunks on the engine's workers when there are many
/// matrices, one call with `Par::rayon` inside the pool for one large matrix, inline otherwise.
/// The first error (lowest chunk) wins.
///
/// Under a cancellation flag (`cancel.rs`) each range runs in pieces of about 2²⁴ flops, one
/// matrix at least, and stops with [`Error::Interrupted`](tenferro_tensor::Error) between
/// them once the flag is set; one matrix runs to completion (faer has no hook inside).
fn for_batches(
    e: &CpuEngine,
    nb: usize,
    work: usize,
    f: impl Fn(std::ops::Range<usize>, Par) -> Result<()> + Sync,
) -> Result<()> {
    let cancel = crate::cancel::Cancel::current();
    let per = if cancel.armed() {
        ((1usize << 24) / work.max(1)).max(1)
    } else {
        usize::MAX
    };
    let f = |range: std::ops::Range<usize>, par: Par| -> Result<()> {
        let mut b = range.start;
        while b < range.end {
            cancel.check("linalg")?;
            let end = range.end.min(b.saturating_add(per));
            f(b..end, par)?;
            b = end;
        }
        Ok(())
    };
    match e.parallel_pool() {
        Some(pool) if nb >= 2 && nb * work >= 1 << 16 => {
            let chunks = (e.threads * 8).min(nb);
            let results: Vec<Result<()>> = pool.install_polled(|| {
                (0..chunks)
                    .into_par_iter()
                    .map(|c| f(c * nb / chunks..(c + 1) * nb / chunks, Par::Seq))
                    .collect()
            });
            results.into_iter().collect()
        }
        Some(pool) if work >= 1 << 18 => {
            let par = Par::rayon(e.threads);
            pool.install_polled(|| f(0..nb, par))
        }
        _ => f(0..nb, Par::Seq),
    }
}

/// Working memory of one task of a decomposition (faer's scratch and the temporary matrices),
/// taken from the engine's buffer pool and given back to it on drop.
///
/// A fresh `malloc` per call is memory glibc hands back to the OS whenever other frees trim the
/// heap, and faulting it in again costs more than small decompositions' arithmetic: a 256²
/// complex SVD forward + gradient took 25.9 ms per call when JAX ran between calls, 21.3 ms with
/// heap trimming disabled (`MALLOC_TRIM_THRESHOLD_`), same script.
struct Work {
    storage: Arc<Storage>,
    align: usize,
}

impl Work {
    /// Room for `req` (plus its alignment padding).
    ///
    /// # Errors
    /// [`Error::Alloc`] when the allocation fails or its size overflows.
    fn new(e: &CpuEngine, name: &str, req: StackReq) -> Result<Work> {
        let bytes = req.unaligned_bytes_required();
        Ok(Work {
            storage: Storage::allocate(name, bytes, Some(&e.buffer_pool), false)?,
            align: req.align_bytes().max(1),
        })
    }

    /// The memory as faer's stack, aligned as requested.
    fn stack(&mut self) -> &mut MemStack {
        let base = self.storage.as_mut_ptr();
        let skip = base.align_offset(self.align);
        // SAFETY: the storage is this task's alone (taken from the pool, never shared) and holds
        // `skip + req.size_bytes()` bytes at least; `MaybeUninit<u8>` needs no initialisation.
        let buf = unsafe {
            std::slice::from_raw_parts_mut(
                base.add(skip).cast::<MaybeUninit<u8>>(),
                self.storage.bytes() - skip,
            )
        };
        MemStack::new(buf)
    }
}

fn set_identity<T: Scalar>(mut m: MatMut<'_, T>) {
    m.fill(T::make(0.0, 0.0));
    m.diagonal_mut().column_vector_mut().fill(T::make(1.0, 0.0));
}

/// Execute a linear-algebra op (single or multi-output).
pub(crate) fn execute(
    e: &CpuEngine,
    op: LinalgOp,
    name: &str,
    inputs: &[&Tensor],
    metas: &[OutMeta],
) -> Result<Vec<Tensor>> {
    let d = inputs[0].dtype();
    macro_rules! go {
        ($T:ty) => {
            kernel::<$T>(e, op, name, inputs, metas)
        };
    }
    match d {
        DType::F32 => go!(f32),
        DType::F64 => go!(f64),
        DType::C32 => go!(Complex32),
        DType::C64 => go!(Complex64),
        DType::Bool | DType::I32 | DType::I64 => {
            Err(Error::dtype(name, format!("dtype {d} is not supported")))
        }
    }
}

fn kernel<T: Scalar>(
    e: &CpuEngine,
    op: LinalgOp,
    name: &str,
    inputs: &[&Tensor],
    metas: &[OutMeta],
) -> Result<Vec<Tensor>> {
    match op {
        LinalgOp::Svd { full_matrices, .. } => {
            svd::<T>(e, name, inputs[0], metas, Some(full_matrices))
        }
        LinalgOp::Svdvals => svd::<T>(e, name, inputs[0], metas, None),
        LinalgOp::Qr { complete } => qr::<T>(e, name, inputs[0], metas, complete),
        LinalgOp::Eigh { .. } => eigh::<T>(e, name, inputs[0], metas, true),
        LinalgOp::Eigvalsh => eigh::<T>(e, name, inputs[0], metas, false),
        LinalgOp::Eig => {
            if inputs[0].dtype().is_complex() {
                eig::<T>(e, name, inputs[0], metas)
            } else {
                let c = crate::elementwise::cast(e, name, inputs[0], metas[0].dtype)?;
                match c.dtype() {
                    DType::C32 => eig::<Complex32>(e, name, &c, metas),
                    DType::C64 => eig::<Complex64>(e, name, &c, metas),
                    d @ (DType::Bool | DType::I32 | DType::I64 | DType::F32 | DType::F64) => Err(
                        Error::internal(name, format!("eig's complex cast produced {d}")),
                    ),
                }
            }
        }
        LinalgOp::Cholesky => cholesky::<T>(e, name, inputs[0], metas),
        LinalgOp::Lu => lu::<T>(e, name, inputs[0], metas),
        LinalgOp::Solve => solve::<T>(e, name, inputs[0], inputs[1], metas),
        LinalgOp::TriangularSolve { lower } => {
            triangular_solve::<T>(e, name, inputs[0], inputs[1], metas, lower)
        }
        LinalgOp::Slogdet => slogdet::<T>(e, name, inputs[0], metas),
    }
}

/// `svd` (`vectors = Some(full_matrices)`: `[U, S, Vh]`) or `svdvals` (`None`: `[S]`, faer
/// computes no singular vectors).
fn svd<T: Scalar>(
    e: &CpuEngine,
    name: &str,
    a: &Tensor,
    metas: &[OutMeta],
    vectors: Option<bool>,
) -> Result<Vec<Tensor>> {
    let ab = Batch::<T>::of(a);
    let (m, n) = (ab.rows, ab.cols);
    let k = m.min(n);
    let (st, so) = Out::<T::Real>::new(e, name, &metas[vectors.map_or(0, |_| 1)], 1)?;
    let uv = match vectors {
        Some(_) => Some((
            Out::<T>::new(e, name, &metas[0], 2)?,
            Out::<T>::new(e, name, &metas[2], 2)?,
        )),
        None => None,
    };
    let nb = ab.offsets.len();
    let full = vectors == Some(true);
    let vcols = if full { n } else { k };
    let which = match vectors {
        Some(true) => ComputeSvdVectors::Full,
        Some(false) => ComputeSvdVectors::Thin,
        None => ComputeSvdVectors::No,
    };
    for_batches(e, nb, m * n * k.max(1), |range, par| {
        let vc = if uv.is_some() { vcols } else { 0 };
        let mut work = Work::new(
            e,
            name,
            StackReq::all_of(&[
                temp_mat_scratch::<T>(k, 1),
                temp_mat_scratch::<T>(n, vc),
                faer::linalg::svd::svd_scratch::<T>(
                    m,
                    n,
                    which,
                    which,
                    par,
                    svd_params::<T>().into(),
                ),
            ]),
        )?;
        let (mut s, stack) = temp_mat_zeroed::<T, _, _>(k, 1, work.stack());
        let mut s = s.as_mat_mut();
        // V in column-major scratch: faer applies its Householder reflections to V much faster
        // there than through `vh`'s transpose (row-major; measured 44 vs 38 µs per 16×16 SVD).
        let (mut v, stack) = temp_mat_zeroed::<T, _, _>(n, vc, stack);
        let mut v = v.as_mat_mut();
        for b in range {
            let a = ab.mat(b);
            let exp = scale_exponent::<T>(check_finite(name, a, b)?);
            let scaled;
            let a = match exp {
                Some(e) => {
                    scaled = scaled_copy(a, e);
                    scaled.as_ref()
                }
                None => a,
            };
            // SAFETY: block `b` belongs to this task.
            let mut so_b = unsafe { so.mat(b) };
            // SAFETY: as above.
            let mut uvh = uv
                .as_ref()
                .map(|((_, uo), (_, vo))| unsafe { (uo.mat(b), vo.mat(b)) });
            if k == 0 {
                if let Some((u, vh)) = uvh.as_mut() {
                    set_identity(u.rb_mut());
                    set_identity(vh.rb_mut());
                }
                continue;
            }
            // faer's QR-first path (non-square) applies Householder reflections to the
            // completing columns: they must start at zero.
            if let Some((u, _)) = uvh.as_mut() {
                if m != n {
                    u.fill(T::make(0.0, 0.0));
                    v.fill(T::make(0.0, 0.0));
                }
            }
            let (u_out, v_out) = match uvh.as_mut() {
                Some((u, _)) => (Some(u.rb_mut()), Some(v.rb_mut())),
                None => (None, None),
            };
            faer::linalg::svd::svd(
                a,
                s.rb_mut().col_mut(0).as_diagonal_mut(),
                u_out,
                v_out,
                par,
                &mut *stack,
                svd_params::<T>().into(),
            )
            .map_err(|_| Error::linalg(name, format!("SVD did not converge for matrix {b}")))?;
            for i in 0..k {
                so_b[(i, 0)] = match exp {
                    Some(e) => T::real(ldexp(s[(i, 0)].parts().0, -e)),
                    None => faer::traits::ComplexField::real_part_impl(&s[(i, 0)]),
                };
            }
            // Vh = Vᴴ, one pass (contiguous writes down each column of `vh`).
            if let Some((_, vh)) = uvh.as_mut() {
                for j in 0..n {
                    let row = v.rb().row(j);
                    let mut col = vh.rb_mut().col_mut(j);
                    for i in 0..vcols {
                        col[i] = if T::IS_REAL {
                            row[i]
                        } else {
                            faer::traits::ComplexField::conj_impl(&row[i])
                        };
                    }
                }
            }
        }
        Ok(())
    })?;
    Ok(match uv {
        Some(((ut, _), (vt, _))) => vec![ut, st, vt],
        None => vec![st],
    })
}

/// Largest `max(m, n)` of a real matrix factored by [`small_qr`] instead of faer's blocked QR.
///
/// For a 16×16 f64 matrix faer's QR with the explicit Q took 8.1 µs per matrix on the Sapphire
/// Rapids host (one thread), LAPACK's `geqrf` + `orgqr` (NumPy) 5.4 µs: faer's blocked
/// factorisation computes two overflow-safe (scaled) norms per column and builds a block
/// reflector even for one block, which small matrices do not amortise.
const SMALL_QR_MAX: usize = 32;

/// [`small_qr`]'s kernel for one real type.
macro_rules! small_qr_impl {
    ($name:ident, $r:ty) => {
        /// Householder QR of the `m×n` column-major matrix at `f` (column stride `fs`), LAPACK's
        /// `geqr2` + `org2r`: on return the upper triangle of `f` is R, and the `m×qc` matrix at
        /// `q` (column stride `m`, holding the identity on entry) is Q. `false` (outputs
        /// unusable) when a reflector's scale leaves the normal range: the caller then takes
        /// faer's path.
        ///
        /// # Safety
        /// `f` and `q` point at live, distinct matrices of those shapes; `min(m, n) <= 32`.
        unsafe fn $name(f: *mut $r, fs: usize, m: usize, n: usize, q: *mut $r, qc: usize) -> bool {
            /// `a · b`: four lanes, a fixed summation order (the bits depend only on the input).
            fn dot(a: &[$r], b: &[$r]) -> $r {
                let mut acc = [0.0 as $r; 4];
                let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
                let (ta, tb) = (ca.remainder(), cb.remainder());
                for (x, y) in ca.zip(cb) {
                    for l in 0..4 {
                        acc[l] += x[l] * y[l];
                    }
                }
                let mut t = 0.0 as $r;
                for (x, y) in ta.iter().zip(tb) {
                    t += x * y;
                }
                (acc[0] + acc[1]) + (acc[2] + acc[3]) + t
            }
            /// The 2-norm, rescaled when the plain sum of squares over- or underflows.
            fn norm(x: &[$r]) -> $r {
                let ss = dot(x, x);
                if ss.is_finite() && ss >= <$r>::MIN_POSITIVE / <$r>::EPSILON {
                    return ss.sqrt();
                }
                let mx = x.iter().fold(0.0 as $r, |m, v| m.max(v.abs()));
                if mx == 0.0 {
                    return 0.0;
                }
                let ss = x.iter().map(|v| (v / mx) * (v / mx)).sum::<$r>();
                mx * ss.sqrt()
            }
            // SAFETY (both helpers): column `j` of a live matrix of `m` rows at stride `ld`.
            unsafe fn col<'a>(p: *mut $r, ld: usize, j: usize, m: usize) -> &'a mut [$r] {
                unsafe { std::slice::from_raw_parts_mut(p.add(j * ld), m) }
            }
            let k = m.min(n);
            let mut tau = [0.0 as $r; SMALL_QR_MAX];
            for j in 0..k {
                // SAFETY: column j of f.
                let x = unsafe { col(f, fs, j, m) };
                let alpha = x[j];
                let xn = norm(&x[j + 1..]);
                if xn == 0.0 {
                    tau[j] = 0.0;
                    continue;
                }
                let mut beta = alpha.hypot(xn);
                if alpha >= 0.0 {
                    beta = -beta;
                }
                if !beta.is_normal() || !(alpha - beta).is_normal() {
                    return false;
                }
                tau[j] = (beta - alpha) / beta;
                let sc = 1.0 / (alpha - beta);
                if !sc.is_finite() {
                    return false;
                }
                for v in x[j + 1..].iter_mut() {
                    *v *= sc;
                }
                x[j] = beta;
                let v: &[$r] = &x[j + 1..];
                for c in j + 1..n {
                    // SAFETY: column c > j of f, disjoint from column j.
                    let y = unsafe { col(f, fs, c, m) };
                    let w = tau[j] * (y[j] + dot(v, &y[j + 1..]));
                    y[j] -= w;
                    for (yi, vi) in y[j + 1..].iter_mut().zip(v) {
                        *yi -= w * vi;
                    }
                }
            }
            // Q = H_0 ⋯ H_{k-1} · I[:, :qc], accumulated backwards: when H_j is applied the
            // columns left of j are still unit vectors with zeros in rows j and below.
            for j in (0..k).rev() {
                if tau[j] == 0.0 {
                    continue;
                }
                // SAFETY: column j of f.
                let v: &[$r] = unsafe { &col(f, fs, j, m)[j + 1..] };
                for c in j..qc {
                    // SAFETY: column c of q (distinct storage from f).
                    let y = unsafe { col(q, m, c, m) };
                    let w = tau[j] * (y[j] + dot(v, &y[j + 1..]));
                    y[j] -= w;
                    for (yi, vi) in y[j + 1..].iter_mut().zip(v) {
                        *yi -= w * vi;
                    }
                }
            }
            true
        }
    };
}
small_qr_impl!(small_qr_f32, f32);
small_qr_impl!(small_qr_f64, f64);

/// [`SMALL_QR_MAX`]'s route for a real matrix already copied into `f` (`q` the identity):
/// `true` when it produced Q and R (see `small_qr_impl`), `false` to take faer's path.
fn small_qr<T: Scalar>(f: MatMut<'_, T>, q: MatMut<'_, T>) -> bool {
    let (m, n) = (f.nrows(), f.ncols());
    if m.max(n) > SMALL_QR_MAX || f.row_stride() != 1 || q.row_stride() != 1 {
        return false;
    }
    if q.ncols() > 1 && q.col_stride() != m as isize {
        return false;
    }
    let (fs, qc) = (f.col_stride() as usize, q.ncols());
    // SAFETY: `T` is exactly the element type named by its dtype; the pointers describe the live
    // `m×n` and `m×qc` column-major matrices of the caller.
    unsafe {
        match T::DTYPE {
            DType::F64 => small_qr_f64(f.as_ptr_mut().cast(), fs, m, n, q.as_ptr_mut().cast(), qc),
            DType::F32 => small_qr_f32(f.as_ptr_mut().cast(), fs, m, n, q.as_ptr_mut().cast(), qc),
            DType::C32 | DType::C64 | DType::Bool | DType::I32 | DType::I64 => false,
        }
    }
}

fn qr<T: Scalar>(
    e: &CpuEngine,
    name: &str,
    a: &Tensor,
    metas: &[OutMeta],
    complete: bool,
) -> Result<Vec<Tensor>> {
    let ab = Batch::<T>::of(a);
    let (m, n) = (ab.rows, ab.cols);
    let k = m.min(n);
    let qc = if complete { m } else { k };
    let (qt, qo) = Out::<T>::new(e, name, &metas[0], 2)?;
    let (rt, ro) = Out::<T>::new(e, name, &metas[1], 2)?;
    let nb = ab.offsets.len();
    use faer::linalg::householder as hh;
    use faer::linalg::qr::no_pivoting::factor as qrf;
    let bs = qrf::recommended_block_size::<T>(m, n).max(k.min(16)).max(1);
    for_batches(e, nb, m * n * k.max(1), |range, par| {
        let req = qrf::qr_in_place_scratch::<T>(m, n, bs, par, Default::default())
            .or(hh::apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(m, bs, qc));
        let mut work = Work::new(
            e,
            name,
            StackReq::all_of(&[
                temp_mat_scratch::<T>(m, n),
                temp_mat_scratch::<T>(bs, k),
                req,
            ]),
        )?;
        let (mut f, stack) = temp_mat_zeroed::<T, _, _>(m, n, work.stack());
        let mut f = f.as_mat_mut();
        let (mut coeff, stack) = temp_mat_zeroed::<T, _, _>(bs, k, stack);
        let mut coeff = coeff.as_mat_mut();
        for b in range {
            let a = ab.mat(b);
            // No scaling (LAPACK's geqrf does not scale either: its Householder norms are
            // computed without overflow), so entries far below the largest are kept.
            check_finite(name, a, b)?;
            // SAFETY: blocks `b` belong to this task.
            let (mut q, mut r) = unsafe { (qo.mat(b), ro.mat(b)) };
            set_identity(q.rb_mut());
            let zero = T::make(0.0, 0.0);
            if k == 0 {
                r.fill(zero);
                continue;
            }
            f.copy_from(a);
            if !small_qr(f.rb_mut(), q.rb_mut()) {
                // Restart from the input (the small route may have stopped half-way).
                f.copy_from(a);
                set_identity(q.rb_mut());
                qrf::qr_in_place(
                    f.rb_mut(),
                    coeff.rb_mut(),
                    par,
                    &mut *stack,
                    Default::default(),
                );
                // The Householder basis is the strict lower part of `f` (unit diagonal implied).
                hh::apply_block_householder_sequence_on_the_left_in_place_with_conj(
                    f.rb().get(.., ..k),
                    coeff.rb(),
                    Conj::No,
                    q.rb_mut(),
                    par,
                    &mut *stack,
                );
            }
            // R: the upper triangle of the factored matrix, zero below (whole columns at once).
            for j in 0..n {
                let top = (j + 1).min(k);
                let mut col = r.rb_mut().col_mut(j);
                col.rb_mut()
                    .subrows_mut(0, top)
                    .copy_from(f.rb().col(j).subrows(0, top));
                col.subrows_mut(top, qc - top).fill(zero);
            }
            // Positive diagonal: R ← conj(D)·R, Q ← Q·D with D = diag(phase(R_ii)).
            for i in 0..k {
                let (re, im) = r[(i, i)].parts();
                let mag = re.hypot(im);
                if mag == 0.0 || (im == 0.0 && re > 0.0) {
                    continue;
                }
                let (pr, pi) = (re / mag, im / mag);
                for x in r.rb_mut().row_mut(i).iter_mut() {
                    let (a, b) = x.parts();
                    *x = T::make(pr * a + pi * b, pr * b - pi * a);
                }
                // Exactly real (the rotation above leaves a rounding residue in the imaginary part).
                r[(i, i)] = T::make(mag, 0.0);
                for x in q.rb_mut().col_mut(i).iter_mut() {
                    let (a, b) = x.parts();
                    *x = T::make(a * pr - b * pi, a * pi + b * pr);
                }
            }
        }
        Ok(())
    })?;
    Ok(vec![qt, rt])
}

/// `eigh` (`vectors`: `[w, V]`) or `eigvalsh` (`[w]`, faer computes no eigenvectors).
fn eigh<T: Scalar>(
    e: &CpuEngine,
    name: &str,
    a: &Tensor,
    metas: &[OutMeta],
    vectors: bool,
) -> Result<Vec<Tensor>> {
    let ab = Batch::<T>::of(a);
    let n = ab.rows;
    let (wt, wo) = Out::<T::Real>::new(e, name, &metas[0], 1)?;
    let vout = if vectors {
        Some(Out::<T>::new(e, name, &metas[1], 2)?)
    } else {
        None
    };
    let nb = ab.offsets.len();
    use faer::linalg::evd;
    let which = if vectors {
        evd::ComputeEigenvectors::Yes
    } else {
        evd::ComputeEigenvectors::No
    };
    for_batches(e, nb, n * n * n.max(1), |range, par| {
        let mut work = Work::new(
            e,
            name,
            StackReq::all_of(&[
                temp_mat_scratch::<T>(n, 1),
                temp_mat_scratch::<T>(n, n),
                evd::self_adjoint_evd_scratch::<T>(n, which, par, evd_params::<T>().into()),
            ]),
        )?;
        let (mut s, stack) = temp_mat_zeroed::<T, _, _>(n, 1, work.stack());
        let mut s = s.as_mat_mut();
        let (mut h, stack) = temp_mat_zeroed::<T, _, _>(n, n, stack);
        let mut h = h.as_mat_mut();
        for b in range {
            let a = ab.mat(b);
            let exp = scale_exponent::<T>(check_finite(name, a, b)?);
            // SAFETY: blocks `b` belong to this task.
            let mut w = unsafe { wo.mat(b) };
            // SAFETY: as above.
            let v = vout.as_ref().map(|(_, vo)| unsafe { vo.mat(b) });
            if n == 0 {
                continue;
            }
            // The Hermitian matrix of the lower triangle (LAPACK's UPLO="L"): faer reads the
            // lower triangle but not only the real part of the diagonal.
            for j in 0..n {
                let (re, _) = a[(j, j)].parts();
                h[(j, j)] = T::make(re, 0.0);
                for i in j + 1..n {
                    h[(i, j)] = a[(i, j)];
                }
            }
            if let Some(e) = exp {
                ldexp_mat(h.rb_mut(), e);
            }
            evd::self_adjoint_evd(
                h.rb(),
                s.rb_mut().col_mut(0).as_diagonal_mut(),
                v,
                par,
                &mut *stack,
                evd_params::<T>().into(),
            )
            .map_err(|_| {
                Error::linalg(
                    name,
                    format!("eigendecomposition did not converge for matrix {b}"),
                )
            })?;
            for i in 0..n {
                w[(i, 0)] = match exp {
                    Some(e) => T::real(ldexp(s[(i, 0)].parts().0, -e)),
                    None => faer::traits::ComplexField::real_part_impl(&s[(i, 0)]),
                };
            }
        }
        Ok(())
    })?;
    Ok(match vout {
        Some((vt, _)) => vec![wt, vt],
        None => vec![wt],
    })
}

fn eig<C: Scalar>(e: &CpuEngine, name: &str, a: &Tensor, metas: &[OutMeta]) -> Result<Vec<Tensor>> {
    let ab = Batch::<C>::of(a);
    let n = ab.rows;
    let (wt, wo) = Out::<C>::new(e, name, &metas[0], 1)?;
    let (vt, vo) = Out::<C>::new(e, name, &metas[1], 2)?;
    let nb = ab.offsets.len();
    for_batches(e, nb, n * n * n.max(1), |range, par| {
        let mut work = Work::new(e, name, eig_scratch::<C>(n, par))?;
        let mut s = faer::Col::<C>::zeros(n);
        for b in range {
            let a = ab.mat(b);
            let exp = scale_exponent::<C>(check_finite(name, a, b)?);
            let scaled;
            let a = match exp {
                Some(e) => {
                    scaled = scaled_copy(a, e);
                    scaled.as_ref()
                }
                None => a,
            };
            // SAFETY: blocks `b` belong to this task.
            let (mut w, mut v) = unsafe { (wo.mat(b), vo.mat(b)) };
            if n == 0 {
                continue;
            }
            eig_one::<C>(a, &mut s, v.rb_mut(), par, work.stack()).map_err(|_| {
                Error::linalg(
                    name,
                    format!("eigendecomposition did not converge for matrix {b}"),
                )
            })?;
            for i in 0..n {
                w[(i, 0)] = match exp {
                    Some(e) => ldexp_t(s[i], -e),
                    None => s[i],
                };
            }
            // Unit 2-norm columns (LAPACK's normalisation).
            for j in 0..n {
                let norm = (0..n)
                    .map(|i| {
                        let (x, y) = v[(i, j)].parts();
                        x * x + y * y
                    })
                    .sum::<f64>()
                    .sqrt();
                if norm > 0.0 {
                    for i in 0..n {
                        let (x, y) = v[(i, j)].parts();
                        v[(i, j)] = C::make(x / norm, y / norm);
                    }
                }
            }
        }
        Ok(())
    })?;
    Ok(vec![wt, vt])
}

fn eig_scratch<C: Scalar>(n: usize, par: Par) -> StackReq {
    use faer::linalg::evd;
    evd::evd_scratch::<C>(
        n,
        evd::ComputeEigenvectors::No,
        evd::ComputeEigenvectors::Yes,
        par,
        Default::default(),
    )
}

/// One complex eigendecomposition (`C` is `Complex<f32>` or `Complex<f64>`).
fn eig_one<C: Scalar>(
    a: MatRef<'_, C>,
    s: &mut faer::Col<C>,
    v: MatMut<'_, C>,
    par: Par,
    stack: &mut MemStack,
) -> std::result::Result<(), faer::linalg::evd::EvdError> {
    use faer::linalg::evd;
    macro_rules! cplx {
        ($r:ty) => {{
            // SAFETY: `C` is exactly `Complex<$r>` in this branch (checked by `DTYPE`).
            let a: MatRef<'_, Complex<$r>> = unsafe { std::mem::transmute(a) };
            let v: MatMut<'_, Complex<$r>> = unsafe { std::mem::transmute(v) };
            let s: &mut faer::Col<Complex<$r>> = unsafe { std::mem::transmute(s) };
            evd::evd_cplx::<$r>(
                a,
                s.as_diagonal_mut(),
                None,
                Some(v),
                par,
                stack,
                Default::default(),
            )
        }};
    }
    match C::DTYPE {
        DType::C32 => cplx!(f32),
        // Only complex element types reach this; the f64 requirement bounds every other one
        // (scratch is a size, never a value).
        DType::C64 | DType::Bool | DType::I32 | DType::I64 | DType::F32 | DType::F64 => {
            cplx!(f64)
        }
    }
}

fn cholesky<T: Scalar>(
    e: &CpuEngine,
    name: &str,
    a: &Tensor,
    metas: &[OutMeta],
) -> Result<Vec<Tensor>> {
    let ab = Batch::<T>::of(a);
    let n = ab.rows;
    let (lt, lo) = Out::<T>::new(e, name, &metas[0], 2)?;
    let nb = ab.offsets.len();
    use faer::linalg::cholesky::llt::factor as llt;
    for_batches(e, nb, n * n * n.max(1), |range, par| {
        let mut work = Work::new(
            e,
            name,
            llt::cholesky_in_place_scratch::<T>(n, par, Default::default()),
        )?;
        for b in range {
            let a = ab.mat(b);
            // No scaling: the factorisation squares nothing (pivots are square roots of the
            // diagonal), and a global 2^e would flush entries 2^1074 below the largest.
            check_finite(name, a, b)?;
            // SAFETY: block `b` belongs to this task.
            let mut l = unsafe { lo.mat(b) };
            for j in 0..n {
                for i in 0..n {
                    l[(i, j)] = match i.cmp(&j) {
                        std::cmp::Ordering::Greater => a[(i, j)],
                        std::cmp::Ordering::Equal => T::make(a[(i, j)].parts().0, 0.0),
                        std::cmp::Ordering::Less => T::make(0.0, 0.0),
                    };
                }
            }
            llt::cholesky_in_place(
                l.rb_mut(),
                Default::default(),
                par,
                work.stack(),
                Default::default(),
            )
            .map_err(|err| {
                let faer::linalg::cholesky::llt::factor::LltError::NonPositivePivot { index } = err;
                Error::linalg(
                    name,
                    format!(
                        "matrix {b} is not positive definite (non-positive pivot at index {index})"
                    ),
                )
            })?;
            for j in 0..n {
                for i in 0..j {
                    l[(i, j)] = T::make(0.0, 0.0);
                }
            }
        }
        Ok(())
    })?;
    Ok(vec![lt])
}

/// Partial-pivoting LU of `a` into `f` (`perm[i]`: the row of `a` that became row `i`). Returns
/// the number of transpositions.
fn lu_into<T: Scalar>(
    a: MatRef<'_, T>,
    mut f: MatMut<'_, T>,
    perm: &mut [usize],
    perm_inv: &mut [usize],
    par: Par,
    stack: &mut MemStack,
) -> usize {
    f.copy_from(a);
    let (info, _) = faer::linalg::lu::partial_pivoting::factor::lu_in_place(
        f,
        perm,
        perm_inv,
        par,
        stack,
        Default::default(),
    );
    info.transposition_count
}

/// The working memory of [`lu_into`] for `m×n` matrices: the factor `f` and faer's scratch.
fn lu_work<T: Scalar>(e: &CpuEngine, name: &str, m: usize, n: usize, par: Par) -> Result<Work> {
    Work::new(
        e,
        name,
        StackReq::all_of(&[
            temp_mat_scratch::<T>(m, n),
            faer::linalg::lu::partial_pivoting::factor::lu_in_place_scratch::<usize, T>(
                m,
                n,
                par,
                Default::default(),
            ),
        ]),
    )
}

fn lu<T: Scalar>(e: &CpuEngine, name: &str, a: &Tensor, metas: &[OutMeta]) -> Result<Vec<Tensor>> {
    let ab = Batch::<T>::of(a);
    let (m, n) = (ab.rows, ab.cols);
    let k = m.min(n);
    let (pt, po) = Out::<T>::new(e, name, &metas[0], 2)?;
    let (lt, lo) = Out::<T>::new(e, name, &metas[1], 2)?;
    let (ut, uo) = Out::<T>::new(e, name, &metas[2], 2)?;
    let nb = ab.offsets.len();
    for_batches(e, nb, m * n * k.max(1), |range, par| {
        let mut work = lu_work::<T>(e, name, m, n, par)?;
        let (mut f, stack) = temp_mat_zeroed::<T, _, _>(m, n, work.stack());
        let mut f = f.as_mat_mut();
        let (mut perm, mut perm_inv) = (vec![0usize; m], vec![0usize; m]);
        let zero = T::make(0.0, 0.0);
        for b in range {
            let a = ab.mat(b);
            // No scaling (LAPACK's getrf does not scale either): elimination squares nothing, and a
            // global 2^e would flush entries 2^1074 below the largest (det of diag(1e300, 1e-300)).
            check_finite(name, a, b)?;
            // SAFETY: blocks `b` belong to this task.
            let (mut p, mut l, mut u) = unsafe { (po.mat(b), lo.mat(b), uo.mat(b)) };
            lu_into(a, f.rb_mut(), &mut perm, &mut perm_inv, par, &mut *stack);
            // faer divides by the pivot even when the whole pivot column is zero (LAPACK skips
            // that step), which fills the factors with NaN: report it instead of returning NaN.
            check_finite(name, f.rb(), b).map_err(|_| {
                Error::linalg(
                    name,
                    format!(
                        "matrix {b} has an exactly zero pivot column: it is rank-deficient, and \
                         the partial-pivoting LU cannot factor it"
                    ),
                )
            })?;
            // A = P·L·U with P[perm[i], i] = 1.
            for j in 0..m {
                for i in 0..m {
                    p[(i, j)] = zero;
                }
                p[(perm[j], j)] = T::make(1.0, 0.0);
            }
            for j in 0..k {
                for i in 0..m {
                    l[(i, j)] = match i.cmp(&j) {
                        std::cmp::Ordering::Less => zero,
                        std::cmp::Ordering::Equal => T::make(1.0, 0.0),
                        std::cmp::Ordering::Greater => f[(i, j)],
                    };
                }
            }
            for j in 0..n {
                for i in 0..k {
                    u[(i, j)] = if i <= j { f[(i, j)] } else { zero };
                }
            }
        }
        Ok(())
    })?;
    Ok(vec![pt, lt, ut])
}

fn check_solution<T: Scalar>(name: &str, x: MatRef<'_, T>, b: usize) -> Result<()> {
    check_finite(name, x, b).map_err(|_| {
        Error::linalg(
            name,
            format!("matrix {b} is numerically singular: the solution is not finite"),
        )
    })?;
    Ok(())
}

fn solve<T: Scalar>(
    e: &CpuEngine,
    name: &str,
    a: &Tensor,
    rhs: &Tensor,
    metas: &[OutMeta],
) -> Result<Vec<Tensor>> {
    let ab = Batch::<T>::of(a);
    let bb = Batch::<T>::of(rhs);
    let n = ab.rows;
    let k = bb.cols;
    let (xt, xo) = Out::<T>::new(e, name, &metas[0], 2)?;
    let nb = ab.offsets.len();
    use faer::linalg::triangular_solve as ts;
    for_batches(e, nb, n * n * (n + k).max(1), |range, par| {
        let mut work = lu_work::<T>(e, name, n, n, par)?;
        let (mut f, stack) = temp_mat_zeroed::<T, _, _>(n, n, work.stack());
        let mut f = f.as_mat_mut();
        let (mut perm, mut perm_inv) = (vec![0usize; n], vec![0usize; n]);
        for b in range {
            let a = ab.mat(b);
            let rhs = bb.mat(b);
            // No scaling (as LAPACK's gesv): see lu.
            check_finite(name, a, b)?;
            check_finite(name, rhs, b)?;
            // SAFETY: block `b` belongs to this task.
            let mut x = unsafe { xo.mat(b) };
            lu_into(a, f.rb_mut(), &mut perm, &mut perm_inv, par, &mut *stack);
            for i in 0..n {
                let (re, im) = f[(i, i)].parts();
                if re == 0.0 && im == 0.0 {
                    return Err(Error::linalg(
                        name,
                        format!("matrix {b} is singular (zero pivot U[{i}, {i}] in its LU factorization)"),
                    ));
                }
            }
            for j in 0..k {
                for i in 0..n {
                    x[(i, j)] = rhs[(perm[i], j)];
                }
            }
            ts::solve_unit_lower_triangular_in_place(f.rb(), x.rb_mut(), par);
            ts::solve_upper_triangular_in_place(f.rb(), x.rb_mut(), par);
            check_solution(name, x.rb(), b)?;
        }
        Ok(())
    })?;
    Ok(vec![xt])
}

fn triangular_solve<T: Scalar>(
    e: &CpuEngine,
    name: &str,
    a: &Tensor,
    rhs: &Tensor,
    metas: &[OutMeta],
    lower: bool,
) -> Result<Vec<Tensor>> {
    let ab = Batch::<T>::of(a);
    let bb = Batch::<T>::of(rhs);
    let n = ab.rows;
    let k = bb.cols;
    let (xt, xo) = Out::<T>::new(e, name, &metas[0], 2)?;
    let nb = ab.offsets.len();
    use faer::linalg::triangular_solve as ts;
    for_batches(e, nb, n * n * k.max(1), |range, par| {
        for b in range {
            let a = ab.mat(b);
            let rhs = bb.mat(b);
            check_finite(name, rhs, b)?;
            for j in 0..n {
                let rows = if lower { j..n } else { 0..j + 1 };
                for i in rows {
                    let (re, im) = a[(i, j)].parts();
                    if !(re.is_finite() && im.is_finite()) {
                        return Err(Error::linalg(
                            name,
                            format!("non-finite value at [{i}, {j}] of matrix {b}"),
                        ));
                    }
                }
                let (re, im) = a[(j, j)].parts();
                if re == 0.0 && im == 0.0 {
                    return Err(Error::linalg(
                        name,
                        format!("matrix {b} is singular (zero diagonal entry at [{j}, {j}])"),
                    ));
                }
            }
            // SAFETY: block `b` belongs to this task.
            let mut x = unsafe { xo.mat(b) };
            x.copy_from(rhs);
            if lower {
                ts::solve_lower_triangular_in_place(a, x.rb_mut(), par);
            } else {
                ts::solve_upper_triangular_in_place(a, x.rb_mut(), par);
            }
            check_solution(name, x.rb(), b)?;
        }
        Ok(())
    })?;
    Ok(vec![xt])
}

fn slogdet<T: Scalar>(
    e: &CpuEngine,
    name: &str,
    a: &Tensor,
    metas: &[OutMeta],
) -> Result<Vec<Tensor>> {
    let ab = Batch::<T>::of(a);
    let n = ab.rows;
    let (st, so) = Out::<T>::new(e, name, &metas[0], 0)?;
    let (lt, lo) = Out::<T::Real>::new(e, name, &metas[1], 0)?;
    let nb = ab.offsets.len();
    for_batches(e, nb, n * n * n.max(1), |range, par| {
        let mut work = lu_work::<T>(e, name, n, n, par)?;
        let (mut f, stack) = temp_mat_zeroed::<T, _, _>(n, n, work.stack());
        let mut f = f.as_mat_mut();
        let (mut perm, mut perm_inv) = (vec![0usize; n], vec![0usize; n]);
        for b in range {
            let a = ab.mat(b);
            // No scaling (LAPACK's getrf does not scale either): elimination squares nothing, and a
            // global 2^e would flush entries 2^1074 below the largest (det of diag(1e300, 1e-300)).
            check_finite(name, a, b)?;
            let swaps = lu_into(a, f.rb_mut(), &mut perm, &mut perm_inv, par, &mut *stack);
            let mut sign = Complex64::new(if swaps % 2 == 0 { 1.0 } else { -1.0 }, 0.0);
            let mut logabs = 0.0f64;
            for i in 0..n {
                let (re, im) = f[(i, i)].parts();
                let mag = re.hypot(im);
                if mag == 0.0 {
                    sign = Complex64::new(0.0, 0.0);
                    logabs = f64::NEG_INFINITY;
                    break;
                }
                sign *= Complex64::new(re / mag, im / mag);
                logabs += mag.ln();
            }
            // SAFETY: element `b` belongs to this task.
            unsafe {
                so.mat(b)[(0, 0)] = T::make(sign.re, sign.im);
                lo.mat(b)[(0, 0)] = T::real(logabs);
            }
        }
        Ok(())
    })?;
    Ok(vec![st, lt])
}

#[cfg(test)]
mod tests {
    use crate::CpuEngine;
    use tenferro_ops::{LinalgOp, Op};
    use tenferro_runtime::{apply, apply_multi};
    use tenferro_tensor::{Error, Tensor};

    fn t(shape: &[usize], v: Vec<f64>) -> Tensor {
        Tensor::from_vec(shape, v).unwrap()
    }

    #[test]
    fn decompositions_take_their_working_memory_from_the_pool() {
        for threads in [1, 2] {
            let e = CpuEngine::new(Some(threads)).unwrap();
            let n = 64;
            let a = t(
                &[n, n],
                (0..n * n).map(|i| ((i * 37 % 101) as f64).sin()).collect(),
            );
            let svd = Op::Linalg(LinalgOp::Svd {
                full_matrices: true,
                eps: 1e-12,
            });
            drop(apply_multi(&e, &svd, &[&a]).unwrap());
            let before = e.buffer_pool.stats();
            drop(apply_multi(&e, &svd, &[&a]).unwrap());
            let after = e.buffer_pool.stats();
            // U, S, Vh and the one working buffer (faer's scratch, V and the singular values),
            // all reused: nothing new is allocated by a repeated call.
            assert_eq!(after.misses, before.misses, "threads={threads}");
            assert_eq!(after.hits - before.hits, 4, "threads={threads}");
        }
    }

    #[test]
    fn solve_reads_strided_batches_and_detects_zero_pivots() {
        for threads in [1, 2] {
            let e = CpuEngine::new(Some(threads)).unwrap();
            // Two 2×2 matrices, batch last, read transposed (a strided view).
            let a = t(&[2, 2, 2], vec![2., 0., 1., 4., 1., 0., 0., 1.]);
            let at = a.transpose_view(&[1, 0, 2]).unwrap();
            let b = t(&[2, 1, 2], vec![4., 8., 3., 5.]);
            let x = apply(&e, &Op::Linalg(LinalgOp::Solve), &[&at, &b]).unwrap();
            // batch 0: a = [[2, 1], [0, 4]] (column-major data), aᵀ·x = [4, 8] → x = [2, 1.5];
            // batch 1: the identity.
            assert_eq!(x.to_vec::<f64>(), vec![2., 1.5, 3., 5.]);
            let singular = t(&[2, 2], vec![1., 2., 2., 4.]);
            let err = apply(
                &e,
                &Op::Linalg(LinalgOp::Solve),
                &[&singular, &t(&[2, 1], vec![1., 1.])],
            );
            assert!(matches!(err, Err(Error::LinAlg { .. })), "{err:?}");
        }
    }

    #[test]
    fn extreme_scales_factorise_a_power_of_two_multiple() {
        let e = CpuEngine::new(Some(1)).unwrap();
        // Singular values of [[1, 2], [3, 1]]: sqrt((15 ± 5·sqrt(5))/2).
        let r5 = 5f64.sqrt();
        let exact = [
            ((15.0 + 5.0 * r5) / 2.0).sqrt(),
            ((15.0 - 5.0 * r5) / 2.0).sqrt(),
        ];
        for c in [1e-300, 1e-200, 1e-140, 1.0, 1e140, 1e200, 1e300] {
            // Column-major [[1, 2], [3, 1]]·c.
            let a = t(&[2, 2], vec![c, 3.0 * c, 2.0 * c, c]);
            let s = apply(&e, &Op::Linalg(LinalgOp::Svdvals), &[&a]).unwrap();
            for (got, want) in s.to_vec::<f64>().iter().zip(exact) {
                assert!((got / c - want).abs() < 1e-14 * want, "c={c}: {got}");
            }
            // det = 1 − 6 = −5: logabsdet = ln 5 + 2·ln c, sign −1.
            let outs = apply_multi(&e, &Op::Linalg(LinalgOp::Slogdet), &[&a]).unwrap();
            let want = 5f64.ln() + 2.0 * c.ln();
            assert_eq!(outs[0].to_vec::<f64>(), vec![-1.0]);
            assert!((outs[1].to_vec::<f64>()[0] - want).abs() < 1e-14 * want.abs().max(1.0));
        }
        assert_eq!(super::ldexp(1.0, -1076), 0.0);
        assert_eq!(super::ldexp(3.0, -1075), 2.0 * 5e-324);
        assert_eq!(super::ldexp(f64::MIN_POSITIVE, 2045), 2f64.powi(1023));
        assert_eq!(super::ldexp(1.5, 1024), f64::INFINITY);
        assert_eq!(super::ldexp(5e-324, 2097), 2f64.powi(1023));
        assert_eq!(super::scale_exponent::<f64>(1.0), None);
        assert_eq!(super::scale_exponent::<f64>(0.0), None);
        assert_eq!(super::scale_exponent::<f64>(1e300), Some(-996));
        assert_eq!(super::scale_exponent::<f32>(1e30), Some(-99));
    }

    #[test]
    fn svd_of_a_batch_reconstructs_and_rejects_nan() {
        let e = CpuEngine::new(Some(2)).unwrap();
        let n = 40;
        let vals: Vec<f64> = (0..3 * 2 * n)
            .map(|i| ((i * 7919) % 13) as f64 - 6.0)
            .collect();
        let a = t(&[3, 2, n], vals.clone());
        let op = Op::Linalg(LinalgOp::Svd {
            full_matrices: false,
            eps: 1e-12,
        });
        let outs = apply_multi(&e, &op, &[&a]).unwrap();
        let (u, s, vh) = (
            outs[0].to_vec::<f64>(),
            outs[1].to_vec::<f64>(),
            outs[2].to_vec::<f64>(),
        );
        for b in 0..n {
            for j in 0..2 {
                for i in 0..3 {
                    let rec: f64 = (0..2)
                        .map(|k| u[b * 6 + k * 3 + i] * s[b * 2 + k] * vh[b * 4 + j * 2 + k])
                        .sum();
                    assert!((rec - vals[b * 6 + j * 3 + i]).abs() < 1e-10);
                }
            }
        }
        let bad = t(&[1, 1], vec![f64::NAN]);
        assert!(matches!(
            apply_multi(&e, &op, &[&bad]),
            Err(Error::LinAlg { .. })
        ));
    }
}

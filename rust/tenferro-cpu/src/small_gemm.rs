//! Small-matrix GEMM kernels for batched products of many small matrices — `bij,bjk->bik` with
//! `n = 8` (every dimension ≤ [`SMALL_MAX`]), or real ones up to [`MEDIUM_MAX`] on AVX-512
//! hosts — in one call over the whole batch, instead of one faer dispatch (its size checks,
//! nano-gemm plan lookup) per matrix, and the CPU-feature selection shared by the engine's own
//! vector kernels.
//!
//! Kernel selection: [`selected`] is the widest instruction set the CPU reports at run time
//! (`is_x86_feature_detected!`): [`Isa::Avx512`] (AVX-512F/VL), [`Isa::Avx2`] (AVX2 + FMA), or
//! [`Isa::Scalar`] (the baseline build, any CPU). One binary runs on every host; nothing depends
//! on `-C target-cpu`. A test hook ([`force`], `tf._testing.set_cpu_kernel`) pins one of the
//! available kernels so each is checked against a reference on the machine that runs the tests.
//!
//! Every variant compiles the same generic loop ([`body`]) over its own vector registers
//! ([`Lanes`]: `__m512d`/`__m512`, `__m256d`/`__m256`, or one scalar lane): columns of a row
//! block of `A` in registers (read in place, or packed once per block), `B[q, j]`
//! broadcast, one fused multiply-add per element and `q`, several output columns accumulated at
//! once, masked loads and stores for the rows past a whole register. Each output element is the
//! same FMA chain in the same order at every level (the baseline build calls `mul_add`), so the
//! three give identical bits for the same input: results never depend on the CPU's vector width.
//! The x86 intrinsics need Rust 1.89 (AVX-512 stabilised), the workspace's `rust-version`.

use std::ops::{Add, Mul, Neg, Sub};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

use num_complex::Complex;

/// Largest `M`, `N` and `K` the engine routes to the vector levels of this kernel (AVX2 and
/// AVX-512 give the same bits): at or below it faer's per-call dispatch costs more than the
/// arithmetic. Measured against faer with the AVX2 level forced (one thread, 256 products in
/// cache, Sapphire Rapids class): 16² f64 level, f32 1.25×, c128 1.36×, c64 1.46×; 12² f64 1.27×.
pub(crate) const SMALL_MAX: usize = 16;

/// Largest `M`, `N` and `K` the engine routes to the baseline level (no x86 vector unit; other
/// architectures): its one-lane accumulators for 16 rows would outnumber the registers, and on
/// x86 without FMA each `mul_add` is a library call.
pub(crate) const SCALAR_MAX: usize = 8;

/// Largest `M`, `N` and `K` the engine routes to the AVX-512 level for batches of real products
/// (`contraction.rs`): there each matrix fits the L2 cache and the kernel's one level of packing
/// (a row block of `A`) is enough. Measured against faer (one thread, 8 products of 128², in
/// cache, Sapphire Rapids class): f64 33–35 against 30.5 GMAC/s, f32 68–77 against 57; complex
/// stays with faer (c128 36.5 against 39, c64 level).
pub(crate) const MEDIUM_MAX: usize = 128;

/// An instruction-set level of the engine's own vector kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Isa {
    /// The baseline build (SSE2 on x86-64; whatever the target guarantees elsewhere).
    Scalar = 0,
    /// AVX2 with FMA (x86-64-v3).
    Avx2 = 1,
    /// AVX-512 F and VL (x86-64-v4 subset).
    Avx512 = 2,
}

impl Isa {
    /// The kernel's name as the test hook spells it: `"scalar"`, `"avx2"`, `"avx512"`.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

    /// The inverse of [`Isa::name`].
    pub fn parse(name: &str) -> Option<Isa> {
        [Isa::Scalar, Isa::Avx2, Isa::Avx512]
            .into_iter()
            .find(|i| i.name() == name)
    }

    fn from_u8(v: u8) -> Option<Isa> {
        match v {
            0 => Some(Isa::Scalar),
            1 => Some(Isa::Avx2),
            2 => Some(Isa::Avx512),
            _ => None,
        }
    }
}

/// The kernels this CPU can run, narrowest first (always starts with [`Isa::Scalar`]).
pub fn available() -> &'static [Isa] {
    static AVAILABLE: OnceLock<Vec<Isa>> = OnceLock::new();
    AVAILABLE.get_or_init(|| {
        #[allow(unused_mut)]
        let mut v = vec![Isa::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                v.push(Isa::Avx2);
                if std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512vl")
                {
                    v.push(Isa::Avx512);
                }
            }
        }
        v
    })
}

const NOT_FORCED: u8 = u8::MAX;
static FORCED: AtomicU8 = AtomicU8::new(NOT_FORCED);

/// The kernel the engine's vector loops use now: the one [`force`]d, else the widest available.
pub fn selected() -> Isa {
    Isa::from_u8(FORCED.load(Ordering::Relaxed))
        .unwrap_or_else(|| *available().last().unwrap_or(&Isa::Scalar))
}

/// Test hook: use `isa` for every later call (`None`: back to the widest available).
///
/// # Errors
/// The name of the kernel when this CPU cannot run it (the selection is left unchanged).
pub fn force(isa: Option<Isa>) -> Result<(), &'static str> {
    match isa {
        Some(i) if !available().contains(&i) => Err(i.name()),
        Some(i) => {
            FORCED.store(i as u8, Ordering::Relaxed);
            Ok(())
        }
        None => {
            FORCED.store(NOT_FORCED, Ordering::Relaxed);
            Ok(())
        }
    }
}

/// A real scalar of the small kernel.
pub(crate) trait Real:
    Copy + Default + Send + Sync + Add<Output = Self> + Mul<Output = Self> + Sub<Output = Self>
{
    /// `a·b + c` with one rounding (the scalar lanes' FMA; a library call where the baseline
    /// build has no FMA instruction).
    fn fma(a: Self, b: Self, c: Self) -> Self;

    /// Runs the batch elements `range` of `g` with the kernel `isa`, the vector width and
    /// register blocking chosen from `g.m` (see [`run`]).
    ///
    /// # Safety
    /// As [`run`].
    unsafe fn dispatch<T: Small<R = Self>>(
        g: &Geometry<'_, T>,
        range: std::ops::Range<usize>,
        isa: Isa,
    );
}

/// An element type of the small kernel: real, or complex split into real and imaginary parts.
pub(crate) trait Small: Copy + Send + Sync + 'static {
    type R: Real + Neg<Output = Self::R>;
    const COMPLEX: bool;
    fn re(self) -> Self::R;
    fn im(self) -> Self::R;
}

macro_rules! small_real {
    ($t:ty) => {
        impl Small for $t {
            type R = $t;
            const COMPLEX: bool = false;
            #[inline(always)]
            fn re(self) -> $t {
                self
            }
            #[inline(always)]
            fn im(self) -> $t {
                0.0
            }
        }
        impl Small for Complex<$t> {
            type R = $t;
            const COMPLEX: bool = true;
            #[inline(always)]
            fn re(self) -> $t {
                self.re
            }
            #[inline(always)]
            fn im(self) -> $t {
                self.im
            }
        }
    };
}
small_real!(f32);
small_real!(f64);

/// One batched small product: `C_b = op(A_b)·op(B_b)` for every `b` of a range, `A_b` at
/// `lhs + lhs_offsets[b]` read through `(lhs_rs, lhs_cs)`, likewise `B_b`, and `C_b` the
/// column-major `m×n` block at `out + b·m·n`.
pub(crate) struct Geometry<'a, T> {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub lhs: *const T,
    pub lhs_rs: isize,
    pub lhs_cs: isize,
    pub lhs_offsets: &'a [isize],
    pub rhs: *const T,
    pub rhs_rs: isize,
    pub rhs_cs: isize,
    pub rhs_offsets: &'a [isize],
    pub out: *mut T,
    /// Conjugate `A` / `B` (complex types only; ignored for real ones).
    pub conj: (bool, bool),
}

// SAFETY: the inputs are read only; each batch element writes its own output block, and callers
// split the batch range between threads.
unsafe impl<T> Send for Geometry<'_, T> {}
unsafe impl<T> Sync for Geometry<'_, T> {}

/// Computes the batch elements `range` with the kernel `isa`.
///
/// Every level computes each output element as the same chain of fused multiply-adds,
/// `c = fma(a_iq, b_qj, c)` for `q` ascending from `c = 0` (complex: the real part
/// `fma(-a_im, b_im, fma(a_re, b_re, c_re))`, the imaginary part
/// `fma(a_im, b_re, fma(a_re, b_im, c_im))`), so AVX-512, AVX2 and the baseline build give the
/// same bits; only how many rows share one vector register differs.
///
/// # Safety
/// The geometry describes in-bounds views of live storages for every `b` of `range`; `m`, `n`
/// and `k` are at least 1; no other thread writes the output blocks of `range`; `isa` is one of
/// [`available`].
pub(crate) unsafe fn run<T: Small>(g: &Geometry<'_, T>, range: std::ops::Range<usize>, isa: Isa) {
    debug_assert!(g.m.min(g.n).min(g.k) >= 1);
    // SAFETY: the caller's contract.
    unsafe { T::R::dispatch(g, range, isa) }
}

/// The vector registers of one kernel level: `W` lanes of a real type. Every method is exact
/// except [`Lanes::fma`], which rounds once per lane like [`Real::fma`].
trait Lanes<R: Real>: Copy {
    /// Lanes per register.
    const W: usize;
    /// All lanes zero.
    unsafe fn zero() -> Self;
    /// Every lane `x`.
    unsafe fn splat(x: R) -> Self;
    /// The `len` (`0..=W`) values at `p`, zeros in the lanes after them.
    unsafe fn load(p: *const R, len: usize) -> Self;
    /// Stores the first `len` (`0..=W`) lanes at `p`.
    unsafe fn store(self, p: *mut R, len: usize);
    /// `a·b + c` lane by lane, one rounding.
    unsafe fn fma(a: Self, b: Self, c: Self) -> Self;
    /// `c - a·b` lane by lane, one rounding (the same bits as `fma(a, -b, c)`).
    unsafe fn fnma(a: Self, b: Self, c: Self) -> Self;
    /// Every lane with its sign flipped.
    unsafe fn neg(self) -> Self;
    /// The real and imaginary parts of the `len` (`0..=W`) complex values (re, im pairs) at
    /// `p`, zeros in the lanes after them.
    unsafe fn load_cplx(p: *const R, len: usize) -> (Self, Self);
    /// Stores the first `len` lanes of `re` and `im` as `len` complex values (pairs) at `p`.
    unsafe fn store_cplx(re: Self, im: Self, p: *mut R, len: usize);
}

/// One lane (the baseline build).
#[derive(Clone, Copy)]
struct Scalar<R>(R);

impl<R: Real + Neg<Output = R>> Lanes<R> for Scalar<R> {
    const W: usize = 1;
    #[inline(always)]
    unsafe fn zero() -> Self {
        Scalar(R::default())
    }
    #[inline(always)]
    unsafe fn splat(x: R) -> Self {
        Scalar(x)
    }
    #[inline(always)]
    unsafe fn load(p: *const R, len: usize) -> Self {
        // SAFETY: `len` values at `p` are readable (the caller's contract).
        Scalar(if len > 0 { unsafe { *p } } else { R::default() })
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut R, len: usize) {
        if len > 0 {
            // SAFETY: as above, writable.
            unsafe { *p = self.0 }
        }
    }
    #[inline(always)]
    unsafe fn fma(a: Self, b: Self, c: Self) -> Self {
        Scalar(R::fma(a.0, b.0, c.0))
    }
    #[inline(always)]
    unsafe fn fnma(a: Self, b: Self, c: Self) -> Self {
        Scalar(R::fma(a.0, -b.0, c.0))
    }
    #[inline(always)]
    unsafe fn neg(self) -> Self {
        Scalar(-self.0)
    }
    #[inline(always)]
    unsafe fn load_cplx(p: *const R, len: usize) -> (Self, Self) {
        if len > 0 {
            // SAFETY: one complex value at `p`.
            unsafe { (Scalar(*p), Scalar(*p.add(1))) }
        } else {
            (Scalar(R::default()), Scalar(R::default()))
        }
    }
    #[inline(always)]
    unsafe fn store_cplx(re: Self, im: Self, p: *mut R, len: usize) {
        if len > 0 {
            // SAFETY: one complex value at `p`.
            unsafe {
                *p = re.0;
                *p.add(1) = im.0;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The AVX2 (`__m256d`, `__m256`) and AVX-512 (`__m512d`, `__m512`) lanes. Each method
    //! carries its instruction set, so it inlines into the kernels compiled for that set.
    use super::Lanes;
    use std::arch::x86_64::*;

    #[derive(Clone, Copy)]
    pub(super) struct F64x4(__m256d);
    #[derive(Clone, Copy)]
    pub(super) struct F32x8(__m256);
    #[derive(Clone, Copy)]
    pub(super) struct F64x8(__m512d);
    #[derive(Clone, Copy)]
    pub(super) struct F32x16(__m512);

    /// AVX2 mask: the first `len` 64-bit lanes set.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn mask64(len: usize) -> __m256i {
        _mm256_cmpgt_epi64(
            _mm256_set1_epi64x(len as i64),
            _mm256_setr_epi64x(0, 1, 2, 3),
        )
    }

    /// AVX2 mask: the first `len` 32-bit lanes set.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn mask32(len: usize) -> __m256i {
        _mm256_cmpgt_epi32(
            _mm256_set1_epi32(len as i32),
            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
        )
    }

    impl Lanes<f64> for F64x4 {
        const W: usize = 4;
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn zero() -> Self {
            F64x4(_mm256_setzero_pd())
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn splat(x: f64) -> Self {
            F64x4(_mm256_set1_pd(x))
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn load(p: *const f64, len: usize) -> Self {
            // SAFETY: `len` values at `p` are readable; masked lanes are not touched.
            unsafe {
                if len >= 4 {
                    F64x4(_mm256_loadu_pd(p))
                } else {
                    F64x4(_mm256_maskload_pd(p, mask64(len)))
                }
            }
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn store(self, p: *mut f64, len: usize) {
            // SAFETY: as above, writable.
            unsafe {
                if len >= 4 {
                    _mm256_storeu_pd(p, self.0)
                } else {
                    _mm256_maskstore_pd(p, mask64(len), self.0)
                }
            }
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn fma(a: Self, b: Self, c: Self) -> Self {
            F64x4(_mm256_fmadd_pd(a.0, b.0, c.0))
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn fnma(a: Self, b: Self, c: Self) -> Self {
            F64x4(_mm256_fnmadd_pd(a.0, b.0, c.0))
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn neg(self) -> Self {
            F64x4(_mm256_xor_pd(self.0, _mm256_set1_pd(-0.0)))
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn load_cplx(p: *const f64, len: usize) -> (Self, Self) {
            // SAFETY: `2·len` values at `p`.
            let (lo, hi) = unsafe {
                (
                    Self::load(p, 2 * len),
                    Self::load(p.add(4), 2 * len.saturating_sub(2)),
                )
            };
            // lo = [r0 i0 r1 i1], hi = [r2 i2 r3 i3]; unpack gives [r0 r2 r1 r3] / [i0 i2 i1 i3].
            let re = _mm256_permute4x64_pd::<0b11_01_10_00>(_mm256_unpacklo_pd(lo.0, hi.0));
            let im = _mm256_permute4x64_pd::<0b11_01_10_00>(_mm256_unpackhi_pd(lo.0, hi.0));
            (F64x4(re), F64x4(im))
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn store_cplx(re: Self, im: Self, p: *mut f64, len: usize) {
            let a = _mm256_unpacklo_pd(re.0, im.0); // [r0 i0 r2 i2]
            let b = _mm256_unpackhi_pd(re.0, im.0); // [r1 i1 r3 i3]
            let lo = F64x4(_mm256_permute2f128_pd::<0x20>(a, b));
            let hi = F64x4(_mm256_permute2f128_pd::<0x31>(a, b));
            // SAFETY: `2·len` values at `p` are writable.
            unsafe {
                lo.store(p, 2 * len);
                if len > 2 {
                    hi.store(p.add(4), 2 * (len - 2));
                }
            }
        }
    }

    impl Lanes<f32> for F32x8 {
        const W: usize = 8;
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn zero() -> Self {
            F32x8(_mm256_setzero_ps())
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn splat(x: f32) -> Self {
            F32x8(_mm256_set1_ps(x))
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn load(p: *const f32, len: usize) -> Self {
            // SAFETY: `len` values at `p` are readable; masked lanes are not touched.
            unsafe {
                if len >= 8 {
                    F32x8(_mm256_loadu_ps(p))
                } else {
                    F32x8(_mm256_maskload_ps(p, mask32(len)))
                }
            }
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn store(self, p: *mut f32, len: usize) {
            // SAFETY: as above, writable.
            unsafe {
                if len >= 8 {
                    _mm256_storeu_ps(p, self.0)
                } else {
                    _mm256_maskstore_ps(p, mask32(len), self.0)
                }
            }
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn fma(a: Self, b: Self, c: Self) -> Self {
            F32x8(_mm256_fmadd_ps(a.0, b.0, c.0))
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn fnma(a: Self, b: Self, c: Self) -> Self {
            F32x8(_mm256_fnmadd_ps(a.0, b.0, c.0))
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn neg(self) -> Self {
            F32x8(_mm256_xor_ps(self.0, _mm256_set1_ps(-0.0)))
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn load_cplx(p: *const f32, len: usize) -> (Self, Self) {
            // SAFETY: `2·len` values at `p`.
            let (lo, hi) = unsafe {
                (
                    Self::load(p, 2 * len),
                    Self::load(p.add(8), 2 * len.saturating_sub(4)),
                )
            };
            // Per 128-bit half: [r0 r1 r4 r5 | r2 r3 r6 r7], then the 64-bit pairs reordered.
            let re = _mm256_shuffle_ps::<0b10_00_10_00>(lo.0, hi.0);
            let im = _mm256_shuffle_ps::<0b11_01_11_01>(lo.0, hi.0);
            let re = _mm256_permute4x64_pd::<0b11_01_10_00>(_mm256_castps_pd(re));
            let im = _mm256_permute4x64_pd::<0b11_01_10_00>(_mm256_castps_pd(im));
            (F32x8(_mm256_castpd_ps(re)), F32x8(_mm256_castpd_ps(im)))
        }
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn store_cplx(re: Self, im: Self, p: *mut f32, len: usize) {
            let a = _mm256_unpacklo_ps(re.0, im.0); // [r0 i0 r1 i1 | r4 i4 r5 i5]
            let b = _mm256_unpackhi_ps(re.0, im.0); // [r2 i2 r3 i3 | r6 i6 r7 i7]
            let lo = F32x8(_mm256_permute2f128_ps::<0x20>(a, b));
            let hi = F32x8(_mm256_permute2f128_ps::<0x31>(a, b));
            // SAFETY: `2·len` values at `p` are writable.
            unsafe {
                lo.store(p, 2 * len);
                if len > 4 {
                    hi.store(p.add(8), 2 * (len - 4));
                }
            }
        }
    }

    /// AVX-512 mask: the first `len` lanes (of at most 16) set.
    #[inline(always)]
    fn kmask(len: usize) -> u16 {
        ((1u32 << len.min(16)) - 1) as u16
    }

    impl Lanes<f64> for F64x8 {
        const W: usize = 8;
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn zero() -> Self {
            F64x8(_mm512_setzero_pd())
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn splat(x: f64) -> Self {
            F64x8(_mm512_set1_pd(x))
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn load(p: *const f64, len: usize) -> Self {
            // SAFETY: `len` values at `p` are readable; masked lanes are not touched.
            unsafe {
                if len >= 8 {
                    F64x8(_mm512_loadu_pd(p))
                } else {
                    F64x8(_mm512_maskz_loadu_pd(kmask(len) as u8, p))
                }
            }
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn store(self, p: *mut f64, len: usize) {
            // SAFETY: as above, writable.
            unsafe {
                if len >= 8 {
                    _mm512_storeu_pd(p, self.0)
                } else {
                    _mm512_mask_storeu_pd(p, kmask(len) as u8, self.0)
                }
            }
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn fma(a: Self, b: Self, c: Self) -> Self {
            F64x8(_mm512_fmadd_pd(a.0, b.0, c.0))
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn fnma(a: Self, b: Self, c: Self) -> Self {
            F64x8(_mm512_fnmadd_pd(a.0, b.0, c.0))
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn neg(self) -> Self {
            F64x8(_mm512_castsi512_pd(_mm512_xor_si512(
                _mm512_castpd_si512(self.0),
                _mm512_set1_epi64(i64::MIN),
            )))
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn load_cplx(p: *const f64, len: usize) -> (Self, Self) {
            // SAFETY: `2·len` values at `p`.
            let (lo, hi) = unsafe {
                (
                    Self::load(p, 2 * len),
                    Self::load(p.add(8), 2 * len.saturating_sub(4)),
                )
            };
            let even = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
            let odd = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
            (
                F64x8(_mm512_permutex2var_pd(lo.0, even, hi.0)),
                F64x8(_mm512_permutex2var_pd(lo.0, odd, hi.0)),
            )
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn store_cplx(re: Self, im: Self, p: *mut f64, len: usize) {
            let first = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
            let second = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
            let lo = F64x8(_mm512_permutex2var_pd(re.0, first, im.0));
            let hi = F64x8(_mm512_permutex2var_pd(re.0, second, im.0));
            // SAFETY: `2·len` values at `p` are writable.
            unsafe {
                lo.store(p, 2 * len);
                if len > 4 {
                    hi.store(p.add(8), 2 * (len - 4));
                }
            }
        }
    }

    impl Lanes<f32> for F32x16 {
        const W: usize = 16;
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn zero() -> Self {
            F32x16(_mm512_setzero_ps())
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn splat(x: f32) -> Self {
            F32x16(_mm512_set1_ps(x))
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn load(p: *const f32, len: usize) -> Self {
            // SAFETY: `len` values at `p` are readable; masked lanes are not touched.
            unsafe {
                if len >= 16 {
                    F32x16(_mm512_loadu_ps(p))
                } else {
                    F32x16(_mm512_maskz_loadu_ps(kmask(len), p))
                }
            }
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn store(self, p: *mut f32, len: usize) {
            // SAFETY: as above, writable.
            unsafe {
                if len >= 16 {
                    _mm512_storeu_ps(p, self.0)
                } else {
                    _mm512_mask_storeu_ps(p, kmask(len), self.0)
                }
            }
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn fma(a: Self, b: Self, c: Self) -> Self {
            F32x16(_mm512_fmadd_ps(a.0, b.0, c.0))
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn fnma(a: Self, b: Self, c: Self) -> Self {
            F32x16(_mm512_fnmadd_ps(a.0, b.0, c.0))
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn neg(self) -> Self {
            F32x16(_mm512_castsi512_ps(_mm512_xor_si512(
                _mm512_castps_si512(self.0),
                _mm512_set1_epi32(i32::MIN),
            )))
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn load_cplx(p: *const f32, len: usize) -> (Self, Self) {
            // SAFETY: `2·len` values at `p`.
            let (lo, hi) = unsafe {
                (
                    Self::load(p, 2 * len),
                    Self::load(p.add(16), 2 * len.saturating_sub(8)),
                )
            };
            let even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
            let odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
            (
                F32x16(_mm512_permutex2var_ps(lo.0, even, hi.0)),
                F32x16(_mm512_permutex2var_ps(lo.0, odd, hi.0)),
            )
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        unsafe fn store_cplx(re: Self, im: Self, p: *mut f32, len: usize) {
            let first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
            let second =
                _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
            let lo = F32x16(_mm512_permutex2var_ps(re.0, first, im.0));
            let hi = F32x16(_mm512_permutex2var_ps(re.0, second, im.0));
            // SAFETY: `2·len` values at `p` are writable.
            unsafe {
                lo.store(p, 2 * len);
                if len > 8 {
                    hi.store(p.add(16), 2 * (len - 8));
                }
            }
        }
    }
}

/// The loop every level compiles, with `NV` registers of `V` per column of an `NV·W`-row block
/// of `A`/`C` and `JB` output columns accumulated together (a tail of fewer columns in tiles of
/// 4, 2 and 1). Per batch element and row block: when `A` is real, its rows contiguous and the
/// whole of `m` one block, its columns are read in place (masked loads past `m`); otherwise the
/// block is packed column by column into `NV·W` rows (vector loads when its rows are contiguous
/// — for complex types split into real and imaginary parts, `A` conjugated here). Then for each
/// tile of columns of `C` the accumulators take `A[:, q]·B[q, j]` for `q` ascending (`B[q, j]`
/// broadcast, any strides) and are stored with masked stores of the block's rows.
#[inline(always)]
unsafe fn body<T: Small, V: Lanes<T::R>, const NV: usize, const JB: usize>(
    g: &Geometry<'_, T>,
    range: std::ops::Range<usize>,
) {
    let (m, n, k) = (g.m, g.n, g.k);
    let w = V::W;
    let mr = NV * w;
    let zero = T::R::default();
    let direct = !T::COMPLEX && g.lhs_rs == 1 && m <= mr;
    let mut pre = vec![zero; if direct { 0 } else { mr * k }];
    let mut pim = vec![zero; if T::COMPLEX { mr * k } else { 0 }];
    let ca = T::COMPLEX && g.conj.0;
    // Small operands from a batch larger than the caches: the lines of the matrices `ahead`
    // elements on are requested before this one's arithmetic (about 4 KiB ahead), when each
    // operand is compact (spans at most 2 KiB).
    let span = |rs: isize, cs: isize, rows: usize, cols: usize| {
        let far = (rows as isize - 1) * rs.abs() + (cols as isize - 1) * cs.abs() + 1;
        far as usize * std::mem::size_of::<T>()
    };
    let (a_span, b_span) = (
        span(g.lhs_rs, g.lhs_cs, m, k),
        span(g.rhs_rs, g.rhs_cs, k, n),
    );
    let ahead = (g.lhs_rs > 0 && g.lhs_cs > 0 && g.rhs_rs > 0 && g.rhs_cs > 0)
        .then_some(a_span.max(b_span))
        .filter(|&s| s <= 2048)
        .map(|s| (4096 / (2 * s)).clamp(1, 8));
    // SAFETY (whole body): in-bounds offsets of live storages (the caller's contract); the
    // packed buffers hold `k` columns of `mr` rows.
    unsafe {
        let end = range.end;
        for b in range {
            let a = g.lhs.offset(g.lhs_offsets[b]);
            let bp = g.rhs.offset(g.rhs_offsets[b]);
            let c = g.out.add(b * m * n);
            if let Some(d) = ahead {
                if b + d < end {
                    prefetch_span(g.lhs.offset(g.lhs_offsets[b + d]), a_span);
                    prefetch_span(g.rhs.offset(g.rhs_offsets[b + d]), b_span);
                }
            }
            let mut i0 = 0;
            while i0 < m {
                let rows = (m - i0).min(mr);
                let mut len = [0usize; NV];
                for (v, l) in len.iter_mut().enumerate() {
                    *l = rows.saturating_sub(v * w).min(w);
                }
                let ai = a.offset(i0 as isize * g.lhs_rs);
                let panel = if direct {
                    Panel {
                        re: ai as *const T::R,
                        im: ai as *const T::R,
                        step: g.lhs_cs,
                        len,
                    }
                } else {
                    pack::<T, V, NV>(g, ai, rows, ca, &mut pre, &mut pim);
                    Panel {
                        re: pre.as_ptr(),
                        im: pim.as_ptr(),
                        step: mr as isize,
                        len: [w; NV],
                    }
                };
                let ci = c.add(i0);
                let mut j0 = 0;
                while j0 + JB <= n {
                    tile::<T, V, NV, JB>(g, &panel, bp, ci, &len, j0);
                    j0 += JB;
                }
                while j0 < n {
                    let r = n - j0;
                    if r >= 4 {
                        tile::<T, V, NV, 4>(g, &panel, bp, ci, &len, j0);
                        j0 += 4;
                    } else if r >= 2 {
                        tile::<T, V, NV, 2>(g, &panel, bp, ci, &len, j0);
                        j0 += 2;
                    } else {
                        tile::<T, V, NV, 1>(g, &panel, bp, ci, &len, j0);
                        j0 += 1;
                    }
                }
                i0 += mr;
            }
        }
    }
}

/// Asks for the cache lines of the `bytes` bytes at `p` (a hint: no fault, no effect on
/// results).
#[inline(always)]
fn prefetch_span<T>(p: *const T, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = p as *const i8;
        let mut o = 0;
        while o < bytes {
            // SAFETY: a prefetch never faults, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(o)) };
            o += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, bytes);
}

/// The rows of `A` one tile reads: column `q`'s `NV` vectors at `re + q·step + v·W` (and `im`
/// for complex types), `len[v]` lanes each (the rest zeros).
struct Panel<R, const NV: usize> {
    re: *const R,
    im: *const R,
    step: isize,
    len: [usize; NV],
}

/// Packs `rows` rows of `A` from `a` (all `k` columns) into `pre`/`pim`: column `q` at `q·NV·W`,
/// zeros past `rows`; complex types split into real and imaginary parts (`conj`: negated).
#[inline(always)]
unsafe fn pack<T: Small, V: Lanes<T::R>, const NV: usize>(
    g: &Geometry<'_, T>,
    a: *const T,
    rows: usize,
    conj: bool,
    pre: &mut [T::R],
    pim: &mut [T::R],
) {
    let w = V::W;
    let mr = NV * w;
    // SAFETY: `a` reads `rows × k` in-bounds elements (the caller's contract); the buffers hold
    // `k` columns of `mr` rows.
    unsafe {
        if g.lhs_rs == 1 {
            for q in 0..g.k {
                let col = a.offset(q as isize * g.lhs_cs);
                for v in 0..NV {
                    let l = rows.saturating_sub(v * w).min(w);
                    let dst = q * mr + v * w;
                    if T::COMPLEX {
                        let (re, im) = V::load_cplx(col.add(v * w) as *const T::R, l);
                        re.store(pre.as_mut_ptr().add(dst), w);
                        let im = if conj { im.neg() } else { im };
                        im.store(pim.as_mut_ptr().add(dst), w);
                    } else {
                        V::load(col.add(v * w) as *const T::R, l)
                            .store(pre.as_mut_ptr().add(dst), w);
                    }
                }
            }
        } else {
            for q in 0..g.k {
                let dst = q * mr;
                for i in 0..mr {
                    let (re, im) = if i < rows {
                        let x = *a.offset(i as isize * g.lhs_rs + q as isize * g.lhs_cs);
                        (x.re(), if conj { -x.im() } else { x.im() })
                    } else {
                        (T::R::default(), T::R::default())
                    };
                    pre[dst + i] = re;
                    if T::COMPLEX {
                        pim[dst + i] = im;
                    }
                }
            }
        }
    }
}

/// One tile: columns `j0..j0 + J` of the row block whose output starts at `c` (leading
/// dimension `m`), `C[:, j] = Σ_q A[:, q]·B[q, j]` with `q` ascending from zero.
#[inline(always)]
unsafe fn tile<T: Small, V: Lanes<T::R>, const NV: usize, const J: usize>(
    g: &Geometry<'_, T>,
    a: &Panel<T::R, NV>,
    bp: *const T,
    c: *mut T,
    len: &[usize; NV],
    j0: usize,
) {
    let w = V::W;
    let cb = T::COMPLEX && g.conj.1;
    let mut cols = [0isize; J];
    for (t, col) in cols.iter_mut().enumerate() {
        *col = (j0 + t) as isize * g.rhs_cs;
    }
    // SAFETY: the panel and `B` are read in bounds, the tile's output written in bounds (the
    // caller's contract).
    unsafe {
        let mut accr = [[V::zero(); NV]; J];
        let mut acci = [[V::zero(); NV]; J];
        for q in 0..g.k {
            let brow = bp.offset(q as isize * g.rhs_rs);
            let at = q as isize * a.step;
            let mut xr = [V::zero(); NV];
            let mut xi = [V::zero(); NV];
            for v in 0..NV {
                xr[v] = V::load(a.re.offset(at).add(v * w), a.len[v]);
                if T::COMPLEX {
                    xi[v] = V::load(a.im.offset(at).add(v * w), a.len[v]);
                }
            }
            for t in 0..J {
                let e = *brow.offset(cols[t]);
                let br = V::splat(e.re());
                if T::COMPLEX {
                    let bi = V::splat(if cb { -e.im() } else { e.im() });
                    for v in 0..NV {
                        accr[t][v] = V::fma(xr[v], br, accr[t][v]);
                        accr[t][v] = V::fnma(xi[v], bi, accr[t][v]);
                        acci[t][v] = V::fma(xr[v], bi, acci[t][v]);
                        acci[t][v] = V::fma(xi[v], br, acci[t][v]);
                    }
                } else {
                    for v in 0..NV {
                        accr[t][v] = V::fma(xr[v], br, accr[t][v]);
                    }
                }
            }
        }
        for t in 0..J {
            let dst = c.add((j0 + t) * g.m);
            for v in 0..NV {
                if T::COMPLEX {
                    let p = (dst.add(v * w)) as *mut T::R;
                    V::store_cplx(accr[t][v], acci[t][v], p, len[v]);
                } else {
                    accr[t][v].store(dst.add(v * w) as *mut T::R, len[v]);
                }
            }
        }
    }
}

/// The baseline build's kernel (any CPU).
unsafe fn kernel_scalar<T: Small, const NV: usize, const JB: usize>(
    g: &Geometry<'_, T>,
    range: std::ops::Range<usize>,
) {
    // SAFETY: the caller's contract.
    unsafe { body::<T, Scalar<T::R>, NV, JB>(g, range) }
}

/// The AVX2 + FMA kernel with lanes `V`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn kernel_avx2<T: Small, V: Lanes<T::R>, const NV: usize, const JB: usize>(
    g: &Geometry<'_, T>,
    range: std::ops::Range<usize>,
) {
    // SAFETY: the caller's contract (the CPU has the features: `available`).
    unsafe { body::<T, V, NV, JB>(g, range) }
}

/// The AVX-512 kernel with lanes `V` (256-bit lanes for the narrow `m` where a 512-bit register
/// would be mostly padding).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
unsafe fn kernel_avx512<T: Small, V: Lanes<T::R>, const NV: usize, const JB: usize>(
    g: &Geometry<'_, T>,
    range: std::ops::Range<usize>,
) {
    // SAFETY: the caller's contract (the CPU has the features: `available`).
    unsafe { body::<T, V, NV, JB>(g, range) }
}

/// The scalar kernel for rows `m`: `m` lanes rounded up to 4, 8 or 16 (blocks of 16 rows above).
macro_rules! scalar_by_m {
    ($g:expr, $range:expr) => {
        match $g.m {
            0..=4 => kernel_scalar::<T, 4, 4>($g, $range),
            5..=8 => kernel_scalar::<T, 8, 4>($g, $range),
            _ => kernel_scalar::<T, 16, 4>($g, $range),
        }
    };
}

// Register blocking (rows `NV·W` × columns `JB` per tile): AVX-512 has 32 vector registers, AVX2
// 16; the accumulators (`JB·NV`, twice for complex) stay at or below 24 and 12 with the column of
// `A` and the broadcasts of `B` beside them. Above `SMALL_MAX` rows, blocks of 16 (f64) or 32
// (f32) rows: 128 splits into whole blocks.

impl Real for f64 {
    #[inline(always)]
    fn fma(a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }

    unsafe fn dispatch<T: Small<R = f64>>(
        g: &Geometry<'_, T>,
        range: std::ops::Range<usize>,
        isa: Isa,
    ) {
        // SAFETY (every arm): the caller's contract; `isa` is available on this CPU.
        unsafe {
            match isa {
                #[cfg(target_arch = "x86_64")]
                Isa::Avx512 => {
                    use x86::{F64x4, F64x8};
                    match (g.m, T::COMPLEX) {
                        (0..=4, _) => kernel_avx512::<T, F64x4, 1, 8>(g, range),
                        (5..=8, _) => kernel_avx512::<T, F64x8, 1, 8>(g, range),
                        (_, false) => kernel_avx512::<T, F64x8, 2, 12>(g, range),
                        (_, true) => kernel_avx512::<T, F64x8, 2, 6>(g, range),
                    }
                }
                #[cfg(target_arch = "x86_64")]
                Isa::Avx2 => {
                    use x86::F64x4;
                    match (g.m, T::COMPLEX) {
                        (0..=4, false) => kernel_avx2::<T, F64x4, 1, 8>(g, range),
                        (0..=4, true) => kernel_avx2::<T, F64x4, 1, 4>(g, range),
                        (5..=8, false) => kernel_avx2::<T, F64x4, 2, 4>(g, range),
                        (5..=8, true) => kernel_avx2::<T, F64x4, 2, 2>(g, range),
                        (9..=12, false) => kernel_avx2::<T, F64x4, 3, 2>(g, range),
                        (9..=12, true) => kernel_avx2::<T, F64x4, 3, 1>(g, range),
                        (13..=16, false) => kernel_avx2::<T, F64x4, 4, 2>(g, range),
                        (13..=16, true) => kernel_avx2::<T, F64x4, 4, 1>(g, range),
                        (_, false) => kernel_avx2::<T, F64x4, 2, 6>(g, range),
                        (_, true) => kernel_avx2::<T, F64x4, 2, 2>(g, range),
                    }
                }
                _ => scalar_by_m!(g, range),
            }
        }
    }
}

impl Real for f32 {
    #[inline(always)]
    fn fma(a: f32, b: f32, c: f32) -> f32 {
        a.mul_add(b, c)
    }

    unsafe fn dispatch<T: Small<R = f32>>(
        g: &Geometry<'_, T>,
        range: std::ops::Range<usize>,
        isa: Isa,
    ) {
        // SAFETY (every arm): the caller's contract; `isa` is available on this CPU.
        unsafe {
            match isa {
                #[cfg(target_arch = "x86_64")]
                Isa::Avx512 => {
                    use x86::{F32x16, F32x8};
                    // 16×16 real: one tile of 16 columns (10 % over two of 8, measured).
                    match (g.m, T::COMPLEX) {
                        (0..=8, _) => kernel_avx512::<T, F32x8, 1, 8>(g, range),
                        (9..=16, false) => kernel_avx512::<T, F32x16, 1, 16>(g, range),
                        (9..=16, true) => kernel_avx512::<T, F32x16, 1, 8>(g, range),
                        (_, false) => kernel_avx512::<T, F32x16, 2, 12>(g, range),
                        (_, true) => kernel_avx512::<T, F32x16, 2, 6>(g, range),
                    }
                }
                #[cfg(target_arch = "x86_64")]
                Isa::Avx2 => {
                    use x86::F32x8;
                    match (g.m, T::COMPLEX) {
                        (0..=8, false) => kernel_avx2::<T, F32x8, 1, 8>(g, range),
                        (0..=8, true) => kernel_avx2::<T, F32x8, 1, 4>(g, range),
                        (9..=16, false) => kernel_avx2::<T, F32x8, 2, 4>(g, range),
                        (_, false) => kernel_avx2::<T, F32x8, 2, 6>(g, range),
                        (_, true) => kernel_avx2::<T, F32x8, 2, 2>(g, range),
                    }
                }
                _ => scalar_by_m!(g, range),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random values in [-1, 1) (an LCG; no dependency).
    fn values(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
            })
            .collect()
    }

    /// Reference product in f64 (complex as pairs), any strides.
    #[allow(clippy::too_many_arguments)]
    fn reference(
        (m, n, k): (usize, usize, usize),
        a: &[Complex<f64>],
        (ars, acs): (isize, isize),
        b: &[Complex<f64>],
        (brs, bcs): (isize, isize),
        conj: (bool, bool),
    ) -> Vec<Complex<f64>> {
        let mut c = vec![Complex::new(0.0, 0.0); m * n];
        for j in 0..n {
            for i in 0..m {
                let mut s = Complex::new(0.0, 0.0);
                for q in 0..k {
                    let mut x = a[(i as isize * ars + q as isize * acs) as usize];
                    let mut y = b[(q as isize * brs + j as isize * bcs) as usize];
                    if conj.0 {
                        x = x.conj();
                    }
                    if conj.1 {
                        y = y.conj();
                    }
                    s += x * y;
                }
                c[i + j * m] = s;
            }
        }
        c
    }

    fn check<T: Small + PartialEq + std::fmt::Debug>(
        from: impl Fn(Complex<f64>) -> T,
        to: impl Fn(T) -> Complex<f64>,
        tol: f64,
    ) {
        let nb = 3;
        for &(m, n, k) in &[
            (1, 1, 1),
            (3, 5, 2),
            (4, 4, 4),
            (8, 8, 8),
            (16, 16, 16),
            (9, 4, 13),
            (12, 7, 16),
            (5, 9, 3),
            (16, 1, 7),
            // Past `SMALL_MAX`: several row blocks (partial last ones), column tiles of every
            // tail width, long `k`.
            (17, 13, 5),
            (40, 37, 29),
            (33, 3, 70),
            (64, 64, 64),
        ] {
            for &row_major in &[false, true] {
                for &conj in &[(false, false), (true, false), (false, true), (true, true)] {
                    let (ars, acs) = if row_major {
                        (k as isize, 1)
                    } else {
                        (1, m as isize)
                    };
                    let (brs, bcs) = if row_major {
                        (n as isize, 1)
                    } else {
                        (1, k as isize)
                    };
                    let va = values(2 * nb * m * k, (m * 100 + n * 10 + k) as u64);
                    let vb = values(2 * nb * k * n, (m + n * 7 + k * 31) as u64);
                    let ca: Vec<Complex<f64>> =
                        va.chunks(2).map(|p| Complex::new(p[0], p[1])).collect();
                    let cb: Vec<Complex<f64>> =
                        vb.chunks(2).map(|p| Complex::new(p[0], p[1])).collect();
                    // Round the inputs to T first, so the reference sees the same values.
                    let ta: Vec<T> = ca.iter().map(|&z| from(z)).collect();
                    let tb: Vec<T> = cb.iter().map(|&z| from(z)).collect();
                    let ra: Vec<Complex<f64>> = ta.iter().map(|&z| to(z)).collect();
                    let rb: Vec<Complex<f64>> = tb.iter().map(|&z| to(z)).collect();
                    let lo: Vec<isize> = (0..nb).map(|b| (b * m * k) as isize).collect();
                    let ro: Vec<isize> = (0..nb).map(|b| (b * k * n) as isize).collect();
                    let mut outs = Vec::new();
                    for &isa in available() {
                        let mut out = vec![from(Complex::new(f64::NAN, 0.0)); nb * m * n];
                        let g = Geometry {
                            m,
                            n,
                            k,
                            lhs: ta.as_ptr(),
                            lhs_rs: ars,
                            lhs_cs: acs,
                            lhs_offsets: &lo,
                            rhs: tb.as_ptr(),
                            rhs_rs: brs,
                            rhs_cs: bcs,
                            rhs_offsets: &ro,
                            out: out.as_mut_ptr(),
                            conj,
                        };
                        // SAFETY: the offsets and strides index inside the vectors above.
                        unsafe { run(&g, 0..nb, isa) };
                        for b in 0..nb {
                            let want = reference(
                                (m, n, k),
                                &ra[b * m * k..],
                                (ars, acs),
                                &rb[b * k * n..],
                                (brs, bcs),
                                if T::COMPLEX { conj } else { (false, false) },
                            );
                            for (x, w) in out[b * m * n..(b + 1) * m * n].iter().zip(&want) {
                                let x = to(*x);
                                assert!(
                                    (x - w).norm() <= tol * (k as f64),
                                    "{isa:?} {m}x{n}x{k} row_major={row_major} {conj:?}: {x} vs {w}"
                                );
                            }
                        }
                        outs.push(out);
                    }
                    // Every kernel gives the same bits.
                    for o in &outs[1..] {
                        assert_eq!(o, &outs[0]);
                    }
                }
            }
        }
    }

    #[test]
    fn every_available_kernel_matches_the_reference_bit_for_bit_across_kernels() {
        check::<f64>(|z| z.re, |x| Complex::new(x, 0.0), 1e-14);
        check::<f32>(|z| z.re as f32, |x| Complex::new(x as f64, 0.0), 1e-6);
        check::<Complex<f64>>(|z| z, |x| x, 1e-14);
        check::<Complex<f32>>(
            |z| Complex::new(z.re as f32, z.im as f32),
            |x| Complex::new(x.re as f64, x.im as f64),
            1e-6,
        );
    }

    #[test]
    fn forcing_an_unavailable_kernel_is_refused() {
        assert_eq!(available()[0], Isa::Scalar);
        for &isa in &[Isa::Scalar, Isa::Avx2, Isa::Avx512] {
            assert_eq!(Isa::parse(isa.name()), Some(isa));
        }
        assert_eq!(Isa::parse("sse"), None);
    }
}

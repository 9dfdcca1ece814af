//! Small-matrix GEMM kernels (every dimension ≤ [`SMALL_MAX`]) for batched products of many tiny
//! matrices — `bij,bjk->bik` with `n = 8` — in one call over the whole batch, instead of one
//! faer dispatch (its size checks, nano-gemm plan lookup) per matrix, and the CPU-feature
//! selection shared by the engine's own vector kernels.
//!
//! Kernel selection: [`selected`] is the widest instruction set the CPU reports at run time
//! (`is_x86_feature_detected!`): [`Isa::Avx512`] (AVX-512F/VL), [`Isa::Avx2`] (AVX2 + FMA), or
//! [`Isa::Scalar`] (the baseline build, any CPU). One binary runs on every host; nothing depends
//! on `-C target-cpu`. A test hook ([`force`], `tf._testing.set_cpu_kernel`) pins one of the
//! available kernels so each is checked against a reference on the machine that runs the tests.
//!
//! Every variant compiles the same generic loop (separate multiplies and adds — Rust never fuses
//! them into FMAs — in the same summation order), so the three give identical bits for the same
//! input: results never depend on the CPU's vector width.

use std::ops::{Add, Mul, Neg, Sub};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

use num_complex::Complex;

/// Largest `M`, `N` and `K` of the small kernel. Above it faer's blocked GEMM is faster; at or
/// below it faer's per-call dispatch costs more than the arithmetic (measured: `benches/`).
pub(crate) const SMALL_MAX: usize = 16;

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
}
impl Real for f32 {}
impl Real for f64 {}

/// An element type of the small kernel: real, or complex split into real and imaginary parts.
pub(crate) trait Small: Copy + Send + Sync + 'static {
    type R: Real + Neg<Output = Self::R>;
    const COMPLEX: bool;
    fn re(self) -> Self::R;
    fn im(self) -> Self::R;
    fn make(re: Self::R, im: Self::R) -> Self;
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
            #[inline(always)]
            fn make(re: $t, _im: $t) -> $t {
                re
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
            #[inline(always)]
            fn make(re: $t, im: $t) -> Self {
                Complex::new(re, im)
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
/// # Safety
/// The geometry describes in-bounds views of live storages for every `b` of `range`; `m`, `n`
/// and `k` are in `1..=SMALL_MAX`; no other thread writes the output blocks of `range`; `isa`
/// is one of [`available`].
pub(crate) unsafe fn run<T: Small>(g: &Geometry<'_, T>, range: std::ops::Range<usize>, isa: Isa) {
    debug_assert!(g.m.max(g.n).max(g.k) <= SMALL_MAX && g.m.min(g.n).min(g.k) >= 1);
    // Rows padded to a whole number of vectors (the padding rows stay zero and are not stored).
    match g.m {
        0..=4 => unsafe { run_isa::<T, 4>(g, range, isa) },
        5..=8 => unsafe { run_isa::<T, 8>(g, range, isa) },
        _ => unsafe { run_isa::<T, SMALL_MAX>(g, range, isa) },
    }
}

unsafe fn run_isa<T: Small, const MP: usize>(
    g: &Geometry<'_, T>,
    range: std::ops::Range<usize>,
    isa: Isa,
) {
    match isa {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the caller checked that the CPU has the features (`available`).
        Isa::Avx512 => unsafe { kernel_avx512::<T, MP>(g, range) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        Isa::Avx2 => unsafe { kernel_avx2::<T, MP>(g, range) },
        #[cfg(not(target_arch = "x86_64"))]
        // SAFETY: the caller's contract; on other architectures every level runs the baseline.
        Isa::Avx512 | Isa::Avx2 => unsafe { kernel::<T, MP>(g, range) },
        // SAFETY: the caller's contract.
        Isa::Scalar => unsafe { kernel::<T, MP>(g, range) },
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
unsafe fn kernel_avx512<T: Small, const MP: usize>(
    g: &Geometry<'_, T>,
    range: std::ops::Range<usize>,
) {
    // SAFETY: the caller's contract.
    unsafe { kernel::<T, MP>(g, range) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn kernel_avx2<T: Small, const MP: usize>(
    g: &Geometry<'_, T>,
    range: std::ops::Range<usize>,
) {
    // SAFETY: the caller's contract.
    unsafe { kernel::<T, MP>(g, range) }
}

/// The loop every variant compiles: `A_b` is packed column by column into `MP`-row vectors
/// (split into real and imaginary parts), then each output column `C[:, j]` is accumulated in
/// registers as `Σ_q A[:, q]·B[q, j]` (q ascending) and stored.
#[inline(always)]
unsafe fn kernel<T: Small, const MP: usize>(g: &Geometry<'_, T>, range: std::ops::Range<usize>) {
    let (m, n, k) = (g.m, g.n, g.k);
    let zero = T::R::default();
    // Packed A: column q at [q]; rows m..MP stay zero for every batch element.
    let mut ar = [[zero; MP]; SMALL_MAX];
    let mut ai = [[zero; MP]; SMALL_MAX];
    let (ca, cb) = (T::COMPLEX && g.conj.0, T::COMPLEX && g.conj.1);
    for b in range {
        // SAFETY (whole body): in-bounds offsets of live storages (the caller's contract).
        let a = unsafe { g.lhs.offset(g.lhs_offsets[b]) };
        for q in 0..k {
            for i in 0..m {
                let v = unsafe { *a.offset(i as isize * g.lhs_rs + q as isize * g.lhs_cs) };
                ar[q][i] = v.re();
                if T::COMPLEX {
                    ai[q][i] = if ca { -v.im() } else { v.im() };
                }
            }
        }
        let bp = unsafe { g.rhs.offset(g.rhs_offsets[b]) };
        let c = unsafe { g.out.add(b * m * n) };
        for j in 0..n {
            let mut accr = [zero; MP];
            let mut acci = [zero; MP];
            for q in 0..k {
                let v = unsafe { *bp.offset(q as isize * g.rhs_rs + j as isize * g.rhs_cs) };
                let br = v.re();
                if T::COMPLEX {
                    let bi = if cb { -v.im() } else { v.im() };
                    for i in 0..MP {
                        accr[i] = accr[i] + ar[q][i] * br - ai[q][i] * bi;
                        acci[i] = acci[i] + ar[q][i] * bi + ai[q][i] * br;
                    }
                } else {
                    for i in 0..MP {
                        accr[i] = accr[i] + ar[q][i] * br;
                    }
                }
            }
            for i in 0..m {
                unsafe { *c.add(i + j * m) = T::make(accr[i], acci[i]) };
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
            (8, 8, 8),
            (16, 16, 16),
            (9, 4, 13),
            (16, 1, 7),
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

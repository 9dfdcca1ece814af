//! Vectorised real transcendental functions on `f64` slices (and `f32` through them).
//!
//! Each function is one branch-free scalar *core* (`#[inline(always)]`, only IEEE operations
//! that round correctly: `+ - * /`, [`f64::mul_add`], comparisons, selects and bit operations)
//! that the compiler vectorises inside copies of the same slice loop: on x86-64 one compiled
//! for AVX-512F (512-bit lanes) and one for AVX2+FMA, chosen once per process at run time
//! (x86-64 CPUs without FMA take libm's function per element instead: `mul_add` would be a
//! libm call there); elsewhere the plain loop (aarch64 has FMA in its base ISA). Every copy,
//! its vector body and its scalar remainder evaluate the very same operations in the same
//! order (`mul_add` is one fused multiply-add everywhere), so an element's result depends only
//! on its value: never on the slice's layout, the chunking or the thread count (and the two
//! x86-64 copies agree bit for bit, tested).
//! Elements outside a core's reduction range (NaN, infinities, overflow, subnormal results,
//! huge `sin`/`cos` arguments, ...) are recomputed one by one with the platform's libm, again a
//! function of the value alone.
//!
//! Sources of the algorithms:
//! * `exp`, `expm1`: Cody–Waite reduction `x = n ln2 + r`, |r| ≤ ln2/2, with fdlibm's
//!   `e_exp.c` split of ln2; `expm1(r)` by its degree-13 Taylor polynomial (truncation
//!   < 2^-57 relative); `exp = 2^n (1 + r + tail)`, `expm1 = (2^n - 1) + 2^n r + 2^n tail`
//!   with the leading terms summed exactly (Fast2Sum / 2Sum, Knuth TAOCP 4.2.2) so that only
//!   the small tail and the final sum round.
//! * `log`, `log1p`: fdlibm `e_log.c` / `s_log1p.c` (Sun Microsystems, 1993): `x = 2^k (1+f)`
//!   with `1+f` in [√2/2, √2), `s = f/(2+f)`, the Remez polynomial `Lg1..Lg7` in `s²`; the
//!   `log1p` correction term `c/u` of `s_log1p.c` for the rounding of `u = 1 + x`.
//! * `sin`, `cos`: fdlibm `e_rem_pio2.c`'s medium-size reduction (three 33-bit pieces of π/2
//!   and their tails, all three rounds always done) for |x| < 2^19·π/2, then fdlibm's
//!   `k_sin.c`/`k_cos.c` polynomials on the double-double remainder; larger |x| falls back.
//! * `erf`: fdlibm `s_erf.c`'s four rational approximations (coefficients chosen per lane),
//!   with `exp` as above.
//! * `pow`: the design of ARM optimized-routines' `pow` (Szabolcs Nagy, 2018; glibc's since
//!   2.28): `log x` in extra precision from a 128-interval table (`x = 2^k z`, `r = z/c - 1`
//!   exact), `y log x` as an exact product pair, `exp` of it from a 128-entry table of
//!   `2^(i/128)` and a degree-6 polynomial; tables and Taylor polynomials computed by
//!   `tools/gen_pow_tables.py`. Vector lanes gather the table entries. `pow`'s AVX-512 loop is
//!   the one core written out in intrinsics (`pow_core512`: the same operations on the same
//!   values, its fallback test a lane mask), because the compiler's vectorisation of the scalar
//!   core kept its AVX2-shaped integer steps (15 % of the time on an Intel Xeon).
//! * `tanh`: `±(1 - 2/(e^{2|x|} + 1))` on every |x| with `e^{2|x|}` from `exp`'s reduction kept
//!   unrounded and the division corrected by its exact residual (fused multiply-add), so that
//!   small |x| do not cancel (no second formula, no branch), `±1` beyond 22.

#![allow(clippy::excessive_precision)]
// the published constants, verbatim
// `!(a < b)` is also true for NaN: the range tests send NaN to the libm fallback that way.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

const LOG2E: f64 = std::f64::consts::LOG2_E;
const LN2_HI: f64 = 6.931_471_803_691_238_164_90e-1;
const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10;
const MAGIC: f64 = 6_755_399_441_055_744.0; // 1.5 * 2^52: round-to-nearest by addition

/// `1/k!` for k = 2..=13: the Taylor coefficients of `(expm1(r) - r) / r²`.
const INV_FACT: [f64; 12] = [
    1.0 / 2.0,
    1.0 / 6.0,
    1.0 / 24.0,
    1.0 / 120.0,
    1.0 / 720.0,
    1.0 / 5040.0,
    1.0 / 40320.0,
    1.0 / 362_880.0,
    1.0 / 3_628_800.0,
    1.0 / 39_916_800.0,
    1.0 / 479_001_600.0,
    1.0 / 6_227_020_800.0,
];

#[inline(always)]
fn fma(a: f64, b: f64, c: f64) -> f64 {
    a.mul_add(b, c)
}

#[inline(always)]
fn sel(c: bool, a: f64, b: f64) -> f64 {
    if c {
        a
    } else {
        b
    }
}

/// Cody–Waite reduction for `exp`/`expm1`: `(r, r_lo, 2^n)` with `x = n ln2 + r + r_lo`
/// (`r_lo` the rounding error of `r`), valid for |x| < 708 (so that `2^n` is normal).
#[inline(always)]
fn exp_reduce(x: f64) -> (f64, f64, f64) {
    let t = fma(x, LOG2E, MAGIC);
    let n = t - MAGIC;
    // x - n LN2_HI is exact (LN2_HI has 32 significant bits, |n| < 2^11).
    let r_hi = fma(-n, LN2_HI, x);
    let r = fma(-n, LN2_LO, r_hi);
    let r_lo = fma(-n, LN2_LO, r_hi - r);
    let scale = f64::from_bits((t.to_bits().wrapping_add(1023)) << 52);
    (r, r_lo, scale)
}

/// `expm1(r) - r = r² Q(r)` for |r| ≤ ln2/2, as `(r², Q(r))`, Q by Estrin's scheme
/// (dependency depth 5); the callers add `r` and their other terms exactly first (Fast2Sum /
/// 2Sum) and the tail in one fused multiply-add, so that only it and the final sum round.
#[inline(always)]
fn expm1_tail(r: f64) -> (f64, f64) {
    let c = &INV_FACT;
    let r2 = r * r;
    let r4 = r2 * r2;
    let r8 = r4 * r4;
    let p01 = fma(c[1], r, c[0]);
    let p23 = fma(c[3], r, c[2]);
    let p45 = fma(c[5], r, c[4]);
    let p67 = fma(c[7], r, c[6]);
    let p89 = fma(c[9], r, c[8]);
    let p1011 = fma(c[11], r, c[10]);
    let q0 = fma(p23, r2, p01);
    let q1 = fma(p67, r2, p45);
    let q2 = fma(p1011, r2, p89);
    let s0 = fma(q1, r4, q0);
    (r2, fma(q2, r8, s0))
}

/// `exp(x)` for |x| < 708.
#[inline(always)]
fn exp_core(x: f64) -> f64 {
    let (r, r_lo, scale) = exp_reduce(x);
    // 1 + r exactly as hi + lo (Fast2Sum, |r| < 1), then one rounding of the sum.
    let hi = 1.0 + r;
    let lo = ((1.0 - hi) + r) + r_lo;
    let (r2, q) = expm1_tail(r);
    (hi + fma(r2, q, lo)) * scale
}

#[inline(always)]
fn exp_fallback(x: f64) -> bool {
    !(x.abs() < 708.0)
}

/// `expm1(x)` for |x| < 708 (`±0` kept).
#[inline(always)]
fn expm1_core(x: f64) -> f64 {
    let (r, r_lo, scale) = exp_reduce(x);
    // (2^n - 1) + 2^n r exactly as hi + lo (2Sum; both terms exact), then the tail.
    let a = scale - 1.0;
    let b = scale * r;
    let hi = a + b;
    let bb = hi - a;
    let lo = fma(scale, r_lo, (a - (hi - bb)) + (b - bb));
    let (r2, q) = expm1_tail(r);
    sel(x == 0.0, x, hi + fma(scale * r2, q, lo))
}

// fdlibm e_log.c: Lg1..Lg7.
const LG1: f64 = 6.666_666_666_666_735_130e-01;
const LG2: f64 = 3.999_999_999_940_941_908e-01;
const LG3: f64 = 2.857_142_874_366_239_149e-01;
const LG4: f64 = 2.222_219_843_214_978_396e-01;
const LG5: f64 = 1.818_357_216_161_805_012e-01;
const LG6: f64 = 1.531_383_769_920_937_332e-01;
const LG7: f64 = 1.479_819_860_511_658_591e-01;
/// Bits of √2/2 (rounded down): `1 + f` is taken in [√2/2, √2).
const SQRT_HALF_BITS: u64 = 0x3fe6_a09e_667f_3bcd;

/// `log(u) + c/u` for a positive normal finite `u` and a small correction `c` (fdlibm's
/// `log1p` shape; `c = 0` gives `log`).
#[inline(always)]
fn log_core<const C: bool>(u: f64, c: f64) -> f64 {
    let iu = u.to_bits();
    let tmp = iu.wrapping_sub(SQRT_HALF_BITS);
    // k = the exponent of u relative to [√2/2, √2); |k| ≤ 1024, converted exactly.
    let k = ((tmp as i64) >> 52) as i32;
    let m = f64::from_bits(iu.wrapping_sub(tmp & (0xfffu64 << 52)));
    let kf = k as f64;
    let f = m - 1.0;
    // c/u rescaled to m's binade: log(2^k m + c) = k ln2 + log(m) + c/u (to first order).
    let c = if C { c / u } else { 0.0 };
    let hfsq = 0.5 * f * f;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * fma(w, fma(w, LG6, LG4), LG2);
    let t2 = z * fma(w, fma(w, fma(w, LG7, LG5), LG3), LG1);
    let r = t2 + t1;
    kf * LN2_HI - ((hfsq - (s * (hfsq + r) + (kf * LN2_LO + c))) - f)
}

#[inline(always)]
fn log_fallback(x: f64) -> bool {
    // Zero, negative, subnormal, infinite, NaN.
    !(x >= f64::MIN_POSITIVE) | (x == f64::INFINITY)
}

#[inline(always)]
fn log_fast(x: f64) -> f64 {
    log_core::<false>(x, 0.0)
}

/// `log1p(x)` for x > -1 finite with `1 + x` normal (`±0` kept).
#[inline(always)]
fn log1p_core(x: f64) -> f64 {
    let u = 1.0 + x;
    // The rounding error of `u` (exact: Fast2Sum with the larger operand first).
    let c = sel(x >= 1.0, 1.0 - (u - x), x - (u - 1.0));
    sel(x == 0.0, x, log_core::<true>(u, c))
}

#[inline(always)]
fn log1p_fallback(x: f64) -> bool {
    !(x > -1.0) | (x == f64::INFINITY) | ((1.0 + x) < f64::MIN_POSITIVE)
}

// fdlibm e_rem_pio2.c: π/2 in 33-bit pieces and their tails; 2/π.
const INVPIO2: f64 = std::f64::consts::FRAC_2_PI;
const PIO2_1: f64 = 1.570_796_326_734_125_614_17e+00;
const PIO2_2: f64 = 6.077_100_506_303_965_976_60e-11;
const PIO2_3: f64 = 2.022_266_248_711_166_455_80e-21;
const PIO2_3T: f64 = 8.478_427_660_368_899_569_97e-32;
/// |x| below which the reduction is exact enough (fdlibm's medium case, 2^19 π/2 here).
const TRIG_MAX: f64 = 823_549.664_582_643_1;
// fdlibm k_sin.c / k_cos.c.
const S1: f64 = -1.666_666_666_666_663_243_48e-01;
const S2: f64 = 8.333_333_333_322_489_461_90e-03;
const S3: f64 = -1.984_126_982_985_794_911_59e-04;
const S4: f64 = 2.755_731_370_707_006_767_87e-06;
const S5: f64 = -2.505_076_025_340_686_341_25e-08;
const S6: f64 = 1.589_690_995_211_550_070_42e-10;
const C1: f64 = 4.166_666_666_666_660_190_37e-02;
const C2: f64 = -1.388_888_888_887_410_957_49e-03;
const C3: f64 = 2.480_158_728_947_672_941_18e-05;
const C4: f64 = -2.755_731_435_139_066_330_35e-07;
const C5: f64 = 2.087_572_321_298_174_827_98e-09;
const C6: f64 = -1.135_964_755_778_819_479_99e-11;

/// `(n mod 4, y0, y1)` with `x = n π/2 + y0 + y1` (fdlibm `e_rem_pio2.c`, medium case with
/// all three rounds), for |x| < [`TRIG_MAX`].
#[inline(always)]
fn rem_pio2(x: f64) -> (u64, f64, f64) {
    let t = fma(x, INVPIO2, MAGIC);
    let n = t - MAGIC;
    let q = t.to_bits() & 3;
    // n PIO2_1 is exact (|n| < 2^20, 33-bit piece) and so is the subtraction; then the
    // next two pieces, each with its exact rounding error `d` carried into the tail `w`.
    let r = x - n * PIO2_1;
    let w2 = n * PIO2_2;
    let r2 = r - w2;
    let d2 = (r - r2) - w2;
    let w3 = n * PIO2_3;
    let r3 = r2 - w3;
    let d3 = (r2 - r3) - w3;
    let w = (n * PIO2_3T - d3) - d2;
    let y0 = r3 - w;
    let y1 = (r3 - y0) - w;
    (q, y0, y1)
}

/// fdlibm `__kernel_sin(x, y, 1)` for |x| ≤ π/4.
#[inline(always)]
fn k_sin(x: f64, y: f64) -> f64 {
    let z = x * x;
    let v = z * x;
    let r = fma(z, fma(z, fma(z, fma(z, S6, S5), S4), S3), S2);
    x - ((z * (0.5 * y - v * r) - y) - v * S1)
}

/// fdlibm `__kernel_cos(x, y)` for |x| ≤ π/4 (the |x| < 0.78125 branch, which the newer
/// fdlibm/musl `k_cos.c` uses on the whole interval).
#[inline(always)]
fn k_cos(x: f64, y: f64) -> f64 {
    let z = x * x;
    let r = z * fma(z, fma(z, fma(z, fma(z, fma(z, C6, C5), C4), C3), C2), C1);
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    w + (((1.0 - w) - hz) + (z * r - x * y))
}

#[inline(always)]
fn sin_core(x: f64) -> f64 {
    let (q, y0, y1) = rem_pio2(x);
    let s = k_sin(y0, y1);
    let c = k_cos(y0, y1);
    let v = sel(q & 1 == 0, s, c);
    sel(q & 2 == 0, v, -v)
}

#[inline(always)]
fn cos_core(x: f64) -> f64 {
    let (q, y0, y1) = rem_pio2(x);
    let s = k_sin(y0, y1);
    let c = k_cos(y0, y1);
    let v = sel(q & 1 == 0, c, s);
    sel((q + 1) & 2 == 0, v, -v)
}

#[inline(always)]
fn trig_fallback(x: f64) -> bool {
    // Zero keeps its sign through libm; huge, infinite and NaN arguments.
    !(x.abs() < TRIG_MAX) | (x == 0.0)
}

/// `tanh(x) = ±(1 - 2/(e^{2|x|} + 1))` for every |x| (clamped to 22, where tanh is ±1 in f64),
/// without the cancellation of the naive formula for small |x|: `e^{2|x|}` is kept as the
/// unrounded `2^n (hi + lo)` of [`exp_core`]'s reduction, `e + 1` as a Fast2Sum pair `d_h + d_l`,
/// `q = 2/d` as `q_h + q_l` (one division; the residual `2 - q_h d_h` is exact by a fused
/// multiply-add, Markstein's correction), and `1 - q_h` with its exact error (Fast2Sum), so that
/// only the last addition rounds noticeably: about 0.5 ulp plus the exp tail's ~2^-57 relative
/// error times `2/(e^{2|x|} - 1)` (a factor below 1/|x|), at most 1.2 ulp (1.19 measured near
/// |x| = 0.17, where the reduction's |r| is largest); for |x| < 2^-27 it returns `x` itself.
#[inline(always)]
fn tanh_core(x: f64) -> f64 {
    let ax = x.abs();
    let ax = sel(ax < 22.0, ax, 22.0);
    // e^{2|x|} = scale (hi + lo): hi = 1 + r rounded, lo its error plus r_lo and the tail.
    let (r, r_lo, scale) = exp_reduce(2.0 * ax);
    let hi = 1.0 + r;
    let lo = ((1.0 - hi) + r) + r_lo;
    let (r2, q) = expm1_tail(r);
    let lo = fma(r2, q, lo);
    // Renormalised (Fast2Sum): |e_l| <= ulp(e_h)/2, so that the division's correction below
    // may divide by d_h alone.
    let e = hi + lo;
    let (e_h, e_l) = (e * scale, ((hi - e) + lo) * scale);
    // d = e + 1 (Fast2Sum, e_h >= 1).
    let d_h = e_h + 1.0;
    let d_l = (1.0 - (d_h - e_h)) + e_l;
    // q = 2/d = q_h + q_l.
    let q_h = 2.0 / d_h;
    let res = fma(-q_h, d_h, 2.0) - q_h * d_l;
    let q_l = res * (0.5 * q_h);
    // 1 - q_h exactly as s + s_err (Fast2Sum, q_h <= 1), then one rounding.
    let s = 1.0 - q_h;
    let s_err = (1.0 - s) - q_h;
    let z = s + (s_err - q_l);
    // Below 2^-27 tanh x rounds to x (x^3/3 is under half an ulp of x); the pair arithmetic
    // above carries only ~2^-106 absolute and returned x + 1 ulp for ~4 % of such inputs.
    let z = sel(ax < TANH_TINY, ax, z);
    // z >= 0: or in the sign of x.
    f64::from_bits(z.to_bits() | (x.to_bits() & (1u64 << 63)))
}

/// 2^-27: below it `tanh x` is `x` correctly rounded.
const TANH_TINY: f64 = 7.450_580_596_923_828e-9;

#[inline(always)]
fn tanh_fallback(x: f64) -> bool {
    x.is_nan()
}

// fdlibm s_erf.c (FreeBSD msun; Sun Microsystems 1993), through the `libm` crate's port.
const ERX: f64 = 8.450_629_115_104_675_292_97e-01;
/// Numerator and denominator coefficients (low degree first; the denominators' constant 1 is
/// implied) of fdlibm's rational approximations on [0, 0.84375) in x² and on
/// [0.84375, 1.25) in |x| - 1, padded with zeros to one shape so a lane selects its set.
const ERF_PQ: [[f64; 7]; 2] = [
    [
        1.283_791_670_955_125_585_61e-01,
        -3.250_421_072_470_014_993_70e-01,
        -2.848_174_957_559_851_047_66e-02,
        -5.770_270_296_489_441_591_57e-03,
        -2.376_301_665_665_016_260_84e-05,
        0.0,
        0.0,
    ],
    [
        -2.362_118_560_752_659_440_77e-03,
        4.148_561_186_837_483_316_66e-01,
        -3.722_078_760_357_013_238_47e-01,
        3.183_466_199_011_617_536_74e-01,
        -1.108_946_942_823_966_774_76e-01,
        3.547_830_432_561_823_593_71e-02,
        -2.166_375_594_868_790_843_00e-03,
    ],
];
const ERF_Q: [[f64; 6]; 2] = [
    [
        3.979_172_239_591_553_528_19e-01,
        6.502_224_998_876_729_444_85e-02,
        5.081_306_281_875_765_627_76e-03,
        1.324_947_380_043_216_445_26e-04,
        -3.960_228_278_775_368_123_20e-06,
        0.0,
    ],
    [
        1.064_208_804_008_442_282_86e-01,
        5.403_979_177_021_710_489_37e-01,
        7.182_865_441_419_626_628_68e-02,
        1.261_712_198_087_616_421_12e-01,
        1.363_708_391_202_905_073_62e-02,
        1.198_449_984_679_910_741_70e-02,
    ],
];
/// fdlibm's erfc rational approximations in 1/x² on [1.25, 1/0.35) and [1/0.35, 28).
const ERFC_R: [[f64; 8]; 2] = [
    [
        -9.864_944_034_847_148_227_05e-03,
        -6.938_585_727_071_817_643_72e-01,
        -1.055_862_622_532_329_098_14e+01,
        -6.237_533_245_032_600_603_96e+01,
        -1.623_966_694_625_734_703_55e+02,
        -1.846_050_929_067_110_359_94e+02,
        -8.128_743_550_630_659_342_46e+01,
        -9.814_329_344_169_145_485_92e+00,
    ],
    [
        -9.864_942_924_700_099_285_97e-03,
        -7.992_832_376_805_230_065_74e-01,
        -1.775_795_491_775_475_198_89e+01,
        -1.606_363_848_558_219_160_62e+02,
        -6.375_664_433_683_896_277_22e+02,
        -1.025_095_131_611_077_249_54e+03,
        -4.835_191_916_086_513_970_19e+02,
        0.0,
    ],
];
const ERFC_S: [[f64; 8]; 2] = [
    [
        1.965_127_166_743_925_712_92e+01,
        1.376_577_541_435_190_426_00e+02,
        4.345_658_774_752_292_288_21e+02,
        6.453_872_717_332_678_803_36e+02,
        4.290_081_400_275_678_333_86e+02,
        1.086_350_055_417_794_351_34e+02,
        6.570_249_770_319_281_701_35e+00,
        -6.042_441_521_485_809_874_38e-02,
    ],
    [
        3.033_806_074_348_245_829_24e+01,
        3.257_925_129_965_739_188_26e+02,
        1.536_729_586_084_436_959_94e+03,
        3.199_858_219_508_595_539_08e+03,
        2.553_050_406_433_164_425_83e+03,
        4.745_285_412_069_553_672_15e+02,
        -2.244_095_244_658_581_833_62e+01,
        0.0,
    ],
];

/// Horner's scheme over `c` (low degree first) with the coefficient of each lane chosen by
/// `hi` from two sets.
#[inline(always)]
fn horner2<const N: usize>(t: f64, hi: bool, c: &[[f64; N]; 2]) -> f64 {
    let mut acc = sel(hi, c[1][N - 1], c[0][N - 1]);
    for k in (0..N - 1).rev() {
        acc = fma(acc, t, sel(hi, c[1][k], c[0][k]));
    }
    acc
}

/// fdlibm `s_erf.c`, every branch evaluated and selected per lane (|x| ≥ 6 clamped: erf is
/// ±1 in f64 there); for 2^-28 ≤ |x| (smaller and NaN arguments fall back).
#[inline(always)]
fn erf_core(x: f64) -> f64 {
    let ax = x.abs();
    let ax = sel(ax < 6.0, ax, 6.0);
    // |x| < 1.25: x + x P/Q in x² below 0.84375, sign (erx + P/Q) in |x|-1 above.
    let mid = ax >= 0.843_75;
    let t = sel(mid, ax - 1.0, x * x);
    let p = horner2(t, mid, &ERF_PQ);
    let q = fma(horner2(t, mid, &ERF_Q), t, 1.0);
    let y = p / q;
    let small = sel(mid, ERX + y, fma(ax, y, ax));
    // 1.25 ≤ |x| < 6: 1 - exp(-z² - 0.5625) exp((z-x)(z+x) + R/S) / x, z = x with its low
    // 32 bits cleared (z² exact).
    let far = ax >= 1.0 / 0.35;
    let s = 1.0 / (ax * ax);
    let r = horner2(s, far, &ERFC_R);
    let big_s = fma(horner2(s, far, &ERFC_S), s, 1.0);
    let z = f64::from_bits(ax.to_bits() & 0xffff_ffff_0000_0000);
    let e1 = exp_core(-z * z - 0.5625);
    let e2 = exp_core((z - ax) * (z + ax) + r / big_s);
    let large = 1.0 - e1 * e2 / ax;
    let v = sel(ax < 1.25, small, large);
    // v ≥ 0: or in the sign of x.
    f64::from_bits(v.to_bits() | (x.to_bits() & (1u64 << 63)))
}

#[inline(always)]
fn erf_fallback(x: f64) -> bool {
    !(x.abs() >= 3.725_290_298_461_914e-9)
}

/// The loop every path runs: the core on each element of a block, then the libm fallback on
/// the elements outside the core's range (a macro: the core is expanded in place, never
/// called through a closure the inliner might keep).
macro_rules! apply {
    ($x:expr, $out:expr, $core:path, $needs:path, $fallback:expr) => {{
        const B: usize = 512;
        for (xc, oc) in $x.chunks(B).zip($out.chunks_mut(B)) {
            let mut any = false;
            for (o, &v) in oc.iter_mut().zip(xc) {
                any |= $needs(v);
                *o = $core(v);
            }
            if any {
                for (o, &v) in oc.iter_mut().zip(xc) {
                    if $needs(v) {
                        *o = $fallback(v);
                    }
                }
            }
        }
    }};
}

// pow: ARM optimized-routines' `pow` (Szabolcs Nagy 2018, MIT; glibc's `pow` since 2.28): `log x`
// as `hi + lo` (~2^-68 relative) from a 128-interval table, `y log x` as an exact product pair,
// `e^(hi + lo)` from a 128-entry table of `2^(i/128)`. The tables and the splits of ln2 are this
// module's own, computed by `tools/gen_pow_tables.py` (Python `decimal`); the polynomials are
// the Taylor series of `log1p` (to r^10: truncation < 2^-74 relative for |r| < 0x1.78p-8) and of
// `expm1` (to r^6: < 2^-71 for |r| < ln2/256) instead of ARM's minimax ones.
const POW_TAB_OFF: u64 = 0x3fe6_9555_0000_0000;
/// Entries of each table, and the shift that puts a table index below the exponent field.
const POW_N: usize = 128;
const POW_SHIFT: u32 = 45;
const POW_LN2_HI: f64 = 0.6931471805598903; // 42 significant bits: k ln2_hi + logc is exact
const POW_LN2_LO: f64 = 5.497923018708371e-14;
const POW_N_LN2: f64 = 184.6649652337873; // 128/ln2
const POW_LN2N_HI: f64 = 0.005415212348111709; // ln2/128, 36 significant bits
const POW_LN2N_LO: f64 = 1.2864023111638346e-14;
#[rustfmt::skip]
const POW_INVC: [f64; 128] = [
    1.4140625, 1.40625, 1.3984375, 1.390625,
    1.3828125, 1.375, 1.3671875, 1.359375,
    1.3515625, 1.34375, 1.3359375, 1.3359375,
    1.328125, 1.3203125, 1.3125, 1.3046875,
    1.296875, 1.2890625, 1.2890625, 1.28125,
    1.2734375, 1.265625, 1.2578125, 1.25,
    1.25, 1.2421875, 1.234375, 1.2265625,
    1.2265625, 1.21875, 1.2109375, 1.203125,
    1.203125, 1.1953125, 1.1875, 1.1875,
    1.1796875, 1.171875, 1.171875, 1.1640625,
    1.15625, 1.1484375, 1.1484375, 1.140625,
    1.140625, 1.1328125, 1.125, 1.125,
    1.1171875, 1.109375, 1.109375, 1.1015625,
    1.1015625, 1.09375, 1.0859375, 1.0859375,
    1.078125, 1.078125, 1.0703125, 1.0625,
    1.0625, 1.0546875, 1.0546875, 1.046875,
    1.046875, 1.0390625, 1.0390625, 1.03125,
    1.03125, 1.0234375, 1.015625, 1.015625,
    1.0078125, 1.0078125, 1.0, 1.0,
    0.9921875, 0.984375, 0.9765625, 0.96875,
    0.9609375, 0.953125, 0.9453125, 0.94140625,
    0.93359375, 0.92578125, 0.91796875, 0.9140625,
    0.90625, 0.8984375, 0.89453125, 0.88671875,
    0.8828125, 0.875, 0.87109375, 0.86328125,
    0.859375, 0.8515625, 0.84765625, 0.83984375,
    0.8359375, 0.83203125, 0.82421875, 0.8203125,
    0.8125, 0.80859375, 0.8046875, 0.80078125,
    0.79296875, 0.7890625, 0.78515625, 0.78125,
    0.7734375, 0.76953125, 0.765625, 0.76171875,
    0.7578125, 0.75390625, 0.74609375, 0.7421875,
    0.73828125, 0.734375, 0.73046875, 0.7265625,
    0.72265625, 0.71875, 0.71484375, 0.7109375,
];
#[rustfmt::skip]
const POW_LOGC: [f64; 128] = [
    -0.3464667673462145, -0.34092658697056777, -0.3353555419211034, -0.3297532863724655,
    -0.32411946865420305, -0.31845373111855224, -0.31275571000389846, -0.3070250352949415,
    -0.3012613305781997, -0.2954642128938758, -0.28963329258306203, -0.28963329258306203,
    -0.28376817313062475, -0.27786845100342816, -0.2719337154836694, -0.2659635484970977,
    -0.25995752443691345, -0.25391520998095984, -0.25391520998095984, -0.2478361639045943,
    -0.2417199368871934, -0.23556607131274632, -0.22937410106487732, -0.22314355131425145,
    -0.22314355131425145, -0.21687393830063684, -0.21056476910735, -0.2042155414286526,
    -0.2042155414286526, -0.19782574332987224, -0.19139485299967873, -0.18492233849406148,
    -0.18492233849406148, -0.1784076574728033, -0.17185025692663203, -0.17185025692663203,
    -0.1652495728952772, -0.15860503017665906, -0.15860503017665906, -0.15191604202584585,
    -0.1451820098444614, -0.13840232285906495, -0.13840232285906495, -0.131576357788731,
    -0.131576357788731, -0.12470347850091912, -0.11778303565643, -0.11778303565643,
    -0.11081436634026431, -0.10379679368168127, -0.10379679368168127, -0.09672962645856842,
    -0.09672962645856842, -0.089612158689647, -0.08244366921110213, -0.08244366921110213,
    -0.07522342123763792, -0.07522342123763792, -0.06795066190852594, -0.06062462181648698,
    -0.06062462181648698, -0.053244514518837605, -0.053244514518837605, -0.045809536031242715,
    -0.045809536031242715, -0.038318864302141264, -0.038318864302141264, -0.03077165866670839,
    -0.03077165866670839, -0.023167059281490765, -0.015504186535963527, -0.015504186535963527,
    -0.0077821404420319595, -0.0077821404420319595, 0.0, 0.0,
    0.007843177461040796, 0.01574835696817445, 0.023716526617363343, 0.03174869831457272,
    0.039845908547249564, 0.048009219186383234, 0.056239718322899535, 0.06038051098892083,
    0.06871389254808946, 0.07711730334438016, 0.08559193033545398, 0.08985632912185793,
    0.09844007281321865, 0.10709813555638448, 0.11145544092528326, 0.12022742699821265,
    0.12464244520731427, 0.13353139262449076, 0.13800567301939282, 0.14701474296180095,
    0.15154989812720032, 0.16068238169043525, 0.16528009093906348, 0.17453941635187675,
    0.17920142945774842, 0.18388527877016259, 0.1933193110035063, 0.19806991376208316,
    0.20763936477828793, 0.21245865121420593, 0.21730127569003344, 0.22216746534115828,
    0.2319714654378231, 0.2369097470783572, 0.24187253642048745, 0.2468600779315011,
    0.2569104137850218, 0.26197371574153294, 0.2670627852490952, 0.27217788591576664,
    0.27731928541618345, 0.28248725557466514, 0.29290401643288533, 0.29815337231912054,
    0.3034304294199046, 0.30873548164959175, 0.3140688276249648, 0.31943077076641657,
    0.3248216194012912, 0.33024168687052224, 0.3356912916381134, 0.3411707574027787,
];
#[rustfmt::skip]
const POW_LOGC_TAIL: [f64; 128] = [
    5.929407345889625e-15, -2.544157440035963e-14, -3.443525940775045e-14, -2.500123826022799e-15,
    -8.929337133850617e-15, 1.7625431312172662e-14, 1.5688303180062087e-15, 2.9655274673691784e-14,
    3.7923164802093147e-14, 3.993416384387844e-14, 1.9352855826489123e-14, 1.9352855826489123e-14,
    -1.9852665484979036e-14, -2.814323765595281e-14, 2.7643769993528702e-14, -4.025092402293806e-14,
    -1.2621729398885316e-14, -3.600176732637335e-15, -3.600176732637335e-15, 1.3029797173308663e-14,
    4.8230289429940886e-14, -2.0592242769647135e-14, 3.149265065191484e-14, 4.169796584527195e-14,
    4.169796584527195e-14, 2.2477465222466186e-14, 3.6507188831790577e-16, -3.827767260205414e-14,
    -3.827767260205414e-14, -4.7641388950792196e-14, 4.9278276214647115e-14, 4.9485167661250996e-14,
    4.9485167661250996e-14, -1.5003333854266542e-14, -2.7194441649495324e-14, -2.7194441649495324e-14,
    -2.99659267292569e-14, 2.0472357800461955e-14, 2.0472357800461955e-14, 3.879296723063646e-15,
    -3.6506824353335045e-14, -5.4183331379008994e-14, -5.4183331379008994e-14, 1.1729485484531301e-14,
    1.1729485484531301e-14, -3.811763084710266e-14, 4.654729747598445e-14, 4.654729747598445e-14,
    -2.5799991283069902e-14, 3.7700471749674615e-14, 3.7700471749674615e-14, 1.7306161136093256e-14,
    1.7306161136093256e-14, -4.012913552726574e-14, 2.7541708360737882e-14, 2.7541708360737882e-14,
    5.0396178134370583e-14, 5.0396178134370583e-14, 1.8195060030168815e-14, 5.213620639136504e-14,
    5.213620639136504e-14, 2.532168943117445e-14, 2.532168943117445e-14, -5.148849572685811e-14,
    -5.148849572685811e-14, 4.6652946995830086e-15, 4.6652946995830086e-15, -4.529814257790929e-14,
    -4.529814257790929e-14, -4.361324067851568e-14, -1.7274567499706107e-15, -1.7274567499706107e-15,
    -2.298941004620351e-14, -2.298941004620351e-14, 0.0, 0.0,
    -1.4902732911301337e-14, -3.527980389655325e-14, -4.730054772033249e-14, 7.580310369375161e-15,
    -4.9893776716773285e-14, -2.262629393030674e-14, -2.345674491018699e-14, -1.3352588834854848e-14,
    -3.765296820388875e-14, 5.1128335719851986e-14, -5.046674438470119e-14, 3.1218748807418837e-15,
    3.3871241029241416e-14, -1.7376727386423858e-14, 3.957125899799804e-14, -5.2849453521890294e-14,
    -3.767012502308738e-14, 3.1859736349078334e-14, 5.0900642926060466e-14, 8.710783796122478e-15,
    6.157896229122976e-16, 3.821577743916796e-14, 3.9440046718453496e-14, 2.2924522154618074e-14,
    -3.742530094732263e-14, -2.5223102140407338e-14, -1.0320443688698849e-14, 1.0634128304268335e-14,
    -4.3425422595242564e-14, -1.2527395755711364e-14, -5.204008743405884e-14, -3.979844515951702e-15,
    -4.7955860343296286e-14, 5.015686013791602e-16, -7.252318953240293e-16, 2.4688324156011588e-14,
    5.465121253624792e-15, 4.102651071698446e-14, -4.996736502345936e-14, 4.903580708156347e-14,
    5.089628039500759e-14, 1.1782016386565151e-14, 4.727452940514406e-14, -4.4204083338755686e-14,
    1.548345993498083e-14, 2.1522127491642888e-14, 1.1054030169005386e-14, -5.534326352070679e-14,
    -5.351646604259541e-14, 5.4612144489920215e-14, 2.8136969901227338e-14, -1.156568624616423e-14,
];
#[rustfmt::skip]
const POW_EXP_TAIL: [f64; 128] = [
    0.0, 9.447885451727066e-17, -1.507066976926039e-17, -5.679155082825012e-17,
    4.9997448722726326e-17, -4.823683599994895e-17, 7.357846871247418e-18, 5.773230223741951e-17,
    8.189317638195515e-17, 5.326891139980878e-17, 1.6665881442326747e-18, -1.128113245461828e-17,
    -7.402825309426177e-17, -3.578659767309563e-18, -6.170654745608695e-17, 2.919139999949279e-17,
    -2.7939114859515733e-17, -5.399285355184285e-17, 4.776959425256223e-17, -7.927701432338473e-17,
    9.341710609905046e-17, -5.534520675707472e-17, 4.585670326662351e-17, 2.8582430411116143e-17,
    7.826573258636076e-17, 4.053626906769216e-17, 2.823784425951061e-17, -7.882802262487991e-17,
    3.2904726646008416e-17, -1.5792094703347882e-18, 4.721368121170128e-17, 1.3045277096919659e-17,
    3.3484623336251524e-17, 3.8611199774925664e-17, 5.527550048505249e-17, -3.927184172445234e-17,
    -6.346552106729483e-17, -8.684417614865944e-17, -1.5456342819397733e-17, -8.70763476495455e-17,
    3.750854201303127e-17, -6.616854503526488e-17, -5.346099009198751e-18, -2.443726321015018e-17,
    2.1023049675215714e-18, 7.771067937501065e-17, 1.3357510088834541e-17, 6.938291696959204e-17,
    1.9572585293112036e-17, 6.632256961675804e-17, -5.478069123926778e-17, -4.140839310392624e-17,
    -2.1571477251208752e-17, -3.8287766552120535e-17, 6.663804589232195e-17, 2.3936187400285282e-17,
    5.68648095791174e-17, 1.1264523354521684e-18, 7.007875046906994e-17, -5.0119214278381254e-17,
    -4.8923067513522756e-17, -3.5260089953269434e-17, -6.872303720902018e-17, 5.001446664133532e-18,
    -6.835808657661922e-17, -1.1307344092910212e-17, -8.416011634717156e-18, -2.9247977035436566e-17,
    -2.092304381843353e-17, -3.9778645875427124e-17, -3.833464968654295e-17, 5.763611164480894e-17,
    -2.3591094770850053e-17, 7.260074661098575e-17, 9.50689710108796e-18, -4.272956133839906e-17,
    -6.735219232374683e-17, -2.8396044410430936e-17, -7.226635472101257e-17, 5.786121003395918e-17,
    5.1548301170786783e-17, -9.416257568878152e-18, 2.4253985766689806e-17, -6.604314051707707e-17,
    -6.432131775424189e-18, -1.2204007601863921e-17, -6.336161863401293e-17, -3.7800879246373815e-17,
    1.5341410053603723e-17, 1.2932855580427452e-17, -4.123367330661149e-17, 4.703083974463456e-17,
    -6.152602891550265e-17, 5.827849326195279e-17, 3.540948262646183e-17, -3.2741571320938764e-17,
    4.875160526227062e-17, -5.718569790077838e-17, -4.719539664590972e-18, -5.773451958805706e-17,
    -1.0772487078934056e-17, -6.221808618533911e-17, 1.821405440362259e-17, -6.155536546227639e-17,
    1.685487290628973e-17, 5.3581249177694816e-17, 3.621615935336894e-17, 8.588379527574144e-18,
    1.01562190116415e-17, -2.869134889187244e-17, -5.495118966122005e-17, -5.56965572431627e-17,
    1.790126907604513e-17, -3.2211766346200164e-17, 5.265370768556274e-17, 3.5089866402403033e-17,
    -3.266924100901318e-17, -4.3657593008079375e-17, 1.7963932659833022e-17, 3.4300925275214166e-17,
    -5.545065618639427e-17, -5.149009745457733e-17, 5.336805878514151e-17, 3.498978661192973e-17,
    4.5784915277060095e-17, -5.241934575393899e-17, 2.0414278897578303e-17, 4.124842848606488e-18,
];
#[rustfmt::skip]
const POW_EXP_BITS: [u64; 128] = [
    0x3ff0000000000000, 0x3feff63da9fb3335, 0x3fefec9a3e778061, 0x3fefe315e86e7f85,
    0x3fefd9b0d3158574, 0x3fefd06b29ddf6de, 0x3fefc74518759bc8, 0x3fefbe3ecac6f383,
    0x3fefb5586cf9890f, 0x3fefac922b7247f7, 0x3fefa3ec32d3d1a2, 0x3fef9b66affed31b,
    0x3fef9301d0125b51, 0x3fef8abdc06c31cc, 0x3fef829aaea92de0, 0x3fef7a98c8a58e51,
    0x3fef72b83c7d517b, 0x3fef6af9388c8dea, 0x3fef635beb6fcb75, 0x3fef5be084045cd4,
    0x3fef54873168b9aa, 0x3fef4d5022fcd91d, 0x3fef463b88628cd6, 0x3fef3f49917ddc96,
    0x3fef387a6e756238, 0x3fef31ce4fb2a63f, 0x3fef2b4565e27cdd, 0x3fef24dfe1f56381,
    0x3fef1e9df51fdee1, 0x3fef187fd0dad990, 0x3fef1285a6e4030b, 0x3fef0cafa93e2f56,
    0x3fef06fe0a31b715, 0x3fef0170fc4cd831, 0x3feefc08b26416ff, 0x3feef6c55f929ff1,
    0x3feef1a7373aa9cb, 0x3feeecae6d05d866, 0x3feee7db34e59ff7, 0x3feee32dc313a8e5,
    0x3feedea64c123422, 0x3feeda4504ac801c, 0x3feed60a21f72e2a, 0x3feed1f5d950a897,
    0x3feece086061892d, 0x3feeca41ed1d0057, 0x3feec6a2b5c13cd0, 0x3feec32af0d7d3de,
    0x3feebfdad5362a27, 0x3feebcb299fddd0d, 0x3feeb9b2769d2ca7, 0x3feeb6daa2cf6642,
    0x3feeb42b569d4f82, 0x3feeb1a4ca5d920f, 0x3feeaf4736b527da, 0x3feead12d497c7fd,
    0x3feeab07dd485429, 0x3feea9268a5946b7, 0x3feea76f15ad2148, 0x3feea5e1b976dc09,
    0x3feea47eb03a5585, 0x3feea34634ccc320, 0x3feea23882552225, 0x3feea155d44ca973,
    0x3feea09e667f3bcd, 0x3feea012750bdabf, 0x3fee9fb23c651a2f, 0x3fee9f7df9519484,
    0x3fee9f75e8ec5f74, 0x3fee9f9a48a58174, 0x3fee9feb564267c9, 0x3feea0694fde5d3f,
    0x3feea11473eb0187, 0x3feea1ed0130c132, 0x3feea2f336cf4e62, 0x3feea427543e1a12,
    0x3feea589994cce13, 0x3feea71a4623c7ad, 0x3feea8d99b4492ed, 0x3feeaac7d98a6699,
    0x3feeace5422aa0db, 0x3feeaf3216b5448c, 0x3feeb1ae99157736, 0x3feeb45b0b91ffc6,
    0x3feeb737b0cdc5e5, 0x3feeba44cbc8520f, 0x3feebd829fde4e50, 0x3feec0f170ca07ba,
    0x3feec49182a3f090, 0x3feec86319e32323, 0x3feecc667b5de565, 0x3feed09bec4a2d33,
    0x3feed503b23e255d, 0x3feed99e1330b358, 0x3feede6b5579fdbf, 0x3feee36bbfd3f37a,
    0x3feee89f995ad3ad, 0x3feeee07298db666, 0x3feef3a2b84f15fb, 0x3feef9728de5593a,
    0x3feeff76f2fb5e47, 0x3fef05b030a1064a, 0x3fef0c1e904bc1d2, 0x3fef12c25bd71e09,
    0x3fef199bdd85529c, 0x3fef20ab5fffd07a, 0x3fef27f12e57d14b, 0x3fef2f6d9406e7b5,
    0x3fef3720dcef9069, 0x3fef3f0b555dc3fa, 0x3fef472d4a07897c, 0x3fef4f87080d89f2,
    0x3fef5818dcfba487, 0x3fef60e316c98398, 0x3fef69e603db3285, 0x3fef7321f301b460,
    0x3fef7c97337b9b5f, 0x3fef864614f5a129, 0x3fef902ee78b3ff6, 0x3fef9a51fbc74c83,
    0x3fefa4afa2a490da, 0x3fefaf482d8e67f1, 0x3fefba1bee615a27, 0x3fefc52b376bba97,
    0x3fefd0765b6e4540, 0x3fefdbfdad9cbe14, 0x3fefe7c1819e90d8, 0x3feff3c22b8f71f1,
];

/// The interval of `x` in `pow`'s log table.
#[inline(always)]
fn pow_idx(x: f64) -> usize {
    (x.to_bits().wrapping_sub(POW_TAB_OFF) >> POW_SHIFT) as usize & (POW_N - 1)
}

/// `log(x) = hi + lo` for a positive normal finite `x` (ARM's `log_inline` of `pow.c`), given
/// the table entries `(invc, logc, logctail)` of [`pow_idx`]`(x)`.
#[inline(always)]
fn pow_log(x: f64, invc: f64, logc: f64, logctail: f64) -> (f64, f64) {
    let ix = x.to_bits();
    // x = 2^k z, z in [0x1.69555p-1, 0x1.69555p0).
    let tmp = ix.wrapping_sub(POW_TAB_OFF);
    // k = tmp >> 52 (arithmetic) as f64, without 64-bit shifts or conversions AVX2 lacks: the
    // top 12 bits `u` as a double exactly (2^52 + u - 2^52), then minus 4096 if negative.
    let u = f64::from_bits((tmp >> 52) | 0x4330_0000_0000_0000) - 4_503_599_627_370_496.0;
    let k = u - sel(u >= 2048.0, 4096.0, 0.0);
    let z = f64::from_bits(ix.wrapping_sub(tmp & (0xfffu64 << 52)));
    // log(x) = k ln2 + log(c) + log1p(r), r = z/c - 1 exact.
    let r = fma(z, invc, -1.0);
    let t1 = fma(k, POW_LN2_HI, logc); // exact
    let t2 = t1 + r;
    let lo1 = fma(k, POW_LN2_LO, logctail);
    let lo2 = (t1 - t2) + r; // Fast2Sum: |t1| >= |r| or t1 = 0 (checked by the generator)
                             // -r^2/2 as ar2 + lo3 exactly.
    let ar = -0.5 * r;
    let ar2 = r * ar;
    let lo3 = fma(ar, r, -ar2);
    let hi = t2 + ar2;
    let lo4 = (t2 - hi) + ar2;
    // r^3 (1/3 - r/4 + r^2/5 - ... - r^7/10), Estrin.
    let r2 = r * r;
    let r4 = r2 * r2;
    let c0 = fma(r, -1.0 / 4.0, 1.0 / 3.0);
    let c1 = fma(r, -1.0 / 6.0, 1.0 / 5.0);
    let c2 = fma(r, -1.0 / 8.0, 1.0 / 7.0);
    let c3 = fma(r, -1.0 / 10.0, 1.0 / 9.0);
    let p = fma(fma(c3, r2, c2), r4, fma(c1, r2, c0));
    let p = (r2 * r) * p;
    let lo = lo1 + lo2 + lo3 + lo4 + p;
    let y = hi + lo;
    (y, (hi - y) + lo)
}

/// `y (hi + lo) = ehi + elo` and its reduction `2^(k/128) e^r`, |r| <= ln2/256: `(r, bits, ehi)`
/// with `k` the low bits of `bits` (the exp table's index is `k mod 128`).
#[inline(always)]
fn pow_mid(hi: f64, lo: f64, y: f64) -> (f64, u64, f64) {
    let ehi = y * hi;
    let elo = fma(y, lo, fma(y, hi, -ehi));
    let kd = fma(ehi, POW_N_LN2, MAGIC);
    let ki = kd.to_bits();
    let kd = kd - MAGIC;
    let r = fma(kd, -POW_LN2N_LO, fma(kd, -POW_LN2N_HI, ehi)) + elo;
    (r, ki, ehi)
}

/// `2^(k/128) e^r` from the exp table's entries `(tail, sbits)` at `ki mod 128`, and the
/// exponents whose power is one correctly rounded operation: the same bits as that (0.5 and
/// -1, a square root and a division, run in the fallback only where present).
#[inline(always)]
fn pow_end(x: f64, y: f64, r: f64, ki: u64, tail: f64, sbits: u64) -> f64 {
    let scale = f64::from_bits(sbits.wrapping_add(ki << POW_SHIFT));
    let r2 = r * r;
    let p = fma(
        fma(
            fma(r, 1.0 / 720.0, 1.0 / 120.0),
            r2,
            fma(r, 1.0 / 24.0, 1.0 / 6.0),
        ),
        r,
        0.5,
    );
    let tmp = fma(r2, p, tail + r);
    let v = fma(scale, tmp, scale);
    // y = 0 needs no case: ehi = elo = r = 0 and table entry 0 give exactly 1.
    let v = sel(y == 2.0, x * x, v);
    sel(y == 1.0, x, v)
}

/// `x^y` for positive normal finite `x` and finite `y` with |y log2 x| < 1000 (see
/// [`pow_fallback`], which it returns); about 0.52 ulp (ARM's bound for the same design), 0.51
/// measured.
#[inline(always)]
fn pow_core(x: f64, y: f64) -> (f64, bool) {
    let i = pow_idx(x);
    let (hi, lo) = pow_log(x, POW_INVC[i], POW_LOGC[i], POW_LOGC_TAIL[i]);
    let (r, ki, ehi) = pow_mid(hi, lo, y);
    let j = ki as usize & (POW_N - 1);
    (
        pow_end(x, y, r, ki, POW_EXP_TAIL[j], POW_EXP_BITS[j]),
        pow_fallback(x, y, ehi),
    )
}

/// [`pow_core`] over blocks in four passes, the two table look-ups in passes of their own, with
/// the very same operations per element: for AVX2, where the compiler does not vectorise a
/// loop with table look-ups (it scalarised the fused one: 12 ns/element against 6 so).
// Index loops: each pass walks five arrays in step.
#[allow(clippy::needless_range_loop)]
fn pow_phased(x: &[f64], y: &[f64], out: &mut [f64]) {
    const B: usize = 256;
    let (mut t0, mut t1, mut t2, mut kk) = ([0f64; B], [0f64; B], [0f64; B], [0u64; B]);
    for ((xc, yc), oc) in x.chunks(B).zip(y.chunks(B)).zip(out.chunks_mut(B)) {
        let n = xc.len();
        pow_log_entries(xc, &mut t0[..n], &mut t1[..n], &mut t2[..n]);
        let mut any = false;
        for j in 0..n {
            let (a, b) = (xc[j], yc[j]);
            let (hi, lo) = pow_log(a, t0[j], t1[j], t2[j]);
            let ehi;
            (t0[j], kk[j], ehi) = pow_mid(hi, lo, b);
            any |= pow_fallback(a, b, ehi);
        }
        pow_exp_entries(&kk[..n], &mut t1[..n], &mut t2[..n]);
        for j in 0..n {
            oc[j] = pow_end(xc[j], yc[j], t0[j], kk[j], t1[j], t2[j].to_bits());
        }
        if any {
            pow_fix(xc, yc, oc);
        }
    }
}

/// The log table's entries `(invc, logc, logctail)` of each `x` (at [`pow_idx`]).
#[inline(always)]
fn pow_log_entries(x: &[f64], invc: &mut [f64], logc: &mut [f64], tail: &mut [f64]) {
    for (j, &v) in x.iter().enumerate() {
        let i = pow_idx(v);
        (invc[j], logc[j], tail[j]) = (POW_INVC[i], POW_LOGC[i], POW_LOGC_TAIL[i]);
    }
}

/// The exp table's entries `(tail, sbits as f64 bits)` at each `k mod 128`.
#[inline(always)]
fn pow_exp_entries(k: &[u64], tail: &mut [f64], sbits: &mut [f64]) {
    for (j, &v) in k.iter().enumerate() {
        let i = v as usize & (POW_N - 1);
        (tail[j], sbits[j]) = (POW_EXP_TAIL[i], f64::from_bits(POW_EXP_BITS[i]));
    }
}

/// [`pow_core`] on eight lanes in AVX-512 registers, and the lanes' [`pow_fallback`] as a mask:
/// the same operations on the same values (`fmsub(a, b, c)` is `fma(a, b, -c)`, a blend is
/// `sel`, `k` the same integer from an arithmetic shift and a conversion AVX2 lacks, the
/// fallback's unsigned comparison as one instruction).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
fn pow_core512(
    x: std::arch::x86_64::__m512d,
    y: std::arch::x86_64::__m512d,
) -> (std::arch::x86_64::__m512d, std::arch::x86_64::__mmask8) {
    use std::arch::x86_64::*;
    let c = _mm512_set1_pd;
    let ci = |v: u64| _mm512_set1_epi64(v as i64);
    let sel = |m: __mmask8, a: __m512d, b: __m512d| _mm512_mask_blend_pd(m, b, a);
    let abs = |v: __m512d| {
        _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(v), ci(!(1u64 << 63))))
    };
    // SAFETY (the gathers): every index is masked to the 128 entries of its table.
    let gather = |t: &[f64; POW_N], i: __m512i| unsafe { _mm512_i64gather_pd::<8>(i, t.as_ptr()) };
    let ix = _mm512_castpd_si512(x);
    // pow_idx, pow_log (k = tmp >> 52 arithmetic, converted: the same integer as the scalar
    // form's, which avoids the 64-bit shift and conversion AVX2 lacks).
    let tmp = _mm512_sub_epi64(ix, ci(POW_TAB_OFF));
    let idx = _mm512_and_si512(_mm512_srli_epi64::<POW_SHIFT>(tmp), ci(POW_N as u64 - 1));
    let (invc, logc, logctail) = (
        gather(&POW_INVC, idx),
        gather(&POW_LOGC, idx),
        gather(&POW_LOGC_TAIL, idx),
    );
    let k = _mm512_cvtepi64_pd(_mm512_srai_epi64::<52>(tmp));
    let z = _mm512_castsi512_pd(_mm512_sub_epi64(
        ix,
        _mm512_and_si512(tmp, ci(0xfffu64 << 52)),
    ));
    let r = _mm512_fmadd_pd(z, invc, c(-1.0));
    let t1 = _mm512_fmadd_pd(k, c(POW_LN2_HI), logc);
    let t2 = _mm512_add_pd(t1, r);
    let lo1 = _mm512_fmadd_pd(k, c(POW_LN2_LO), logctail);
    let lo2 = _mm512_add_pd(_mm512_sub_pd(t1, t2), r);
    let ar = _mm512_mul_pd(c(-0.5), r);
    let ar2 = _mm512_mul_pd(r, ar);
    let lo3 = _mm512_fmsub_pd(ar, r, ar2);
    let hi = _mm512_add_pd(t2, ar2);
    let lo4 = _mm512_add_pd(_mm512_sub_pd(t2, hi), ar2);
    let r2 = _mm512_mul_pd(r, r);
    let r4 = _mm512_mul_pd(r2, r2);
    let c0 = _mm512_fmadd_pd(r, c(-1.0 / 4.0), c(1.0 / 3.0));
    let c1 = _mm512_fmadd_pd(r, c(-1.0 / 6.0), c(1.0 / 5.0));
    let c2 = _mm512_fmadd_pd(r, c(-1.0 / 8.0), c(1.0 / 7.0));
    let c3 = _mm512_fmadd_pd(r, c(-1.0 / 10.0), c(1.0 / 9.0));
    let p = _mm512_fmadd_pd(_mm512_fmadd_pd(c3, r2, c2), r4, _mm512_fmadd_pd(c1, r2, c0));
    let p = _mm512_mul_pd(_mm512_mul_pd(r2, r), p);
    let lo = _mm512_add_pd(
        _mm512_add_pd(_mm512_add_pd(_mm512_add_pd(lo1, lo2), lo3), lo4),
        p,
    );
    let lg = _mm512_add_pd(hi, lo);
    let (hi, lo) = (lg, _mm512_add_pd(_mm512_sub_pd(hi, lg), lo));
    // pow_mid
    let ehi = _mm512_mul_pd(y, hi);
    let elo = _mm512_fmadd_pd(y, lo, _mm512_fmsub_pd(y, hi, ehi));
    // pow_fallback
    let fallback = _mm512_cmpge_epu64_mask(
        _mm512_sub_epi64(ix, ci(0x0010_0000_0000_0000)),
        ci(0x7ff0_0000_0000_0000 - 0x0010_0000_0000_0000),
    ) | _mm512_cmp_pd_mask::<_CMP_NLT_UQ>(abs(ehi), c(690.0))
        | _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(y, c(0.5))
        | _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(y, c(-1.0));
    let kd = _mm512_fmadd_pd(ehi, c(POW_N_LN2), c(MAGIC));
    let ki = _mm512_castpd_si512(kd);
    let kd = _mm512_sub_pd(kd, c(MAGIC));
    let r = _mm512_add_pd(
        _mm512_fmadd_pd(
            kd,
            c(-POW_LN2N_LO),
            _mm512_fmadd_pd(kd, c(-POW_LN2N_HI), ehi),
        ),
        elo,
    );
    // pow_end
    let j = _mm512_and_si512(ki, ci(POW_N as u64 - 1));
    let tail = gather(&POW_EXP_TAIL, j);
    // SAFETY: as the gathers above.
    let sbits = unsafe { _mm512_i64gather_epi64::<8>(j, POW_EXP_BITS.as_ptr().cast()) };
    let scale = _mm512_castsi512_pd(_mm512_add_epi64(sbits, _mm512_slli_epi64::<POW_SHIFT>(ki)));
    let r2 = _mm512_mul_pd(r, r);
    let p = _mm512_fmadd_pd(
        _mm512_fmadd_pd(
            _mm512_fmadd_pd(r, c(1.0 / 720.0), c(1.0 / 120.0)),
            r2,
            _mm512_fmadd_pd(r, c(1.0 / 24.0), c(1.0 / 6.0)),
        ),
        r,
        c(0.5),
    );
    let tmp = _mm512_fmadd_pd(r2, p, _mm512_add_pd(tail, r));
    let v = _mm512_fmadd_pd(scale, tmp, scale);
    let v = sel(
        _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(y, c(2.0)),
        _mm512_mul_pd(x, x),
        v,
    );
    (
        sel(_mm512_cmp_pd_mask::<_CMP_EQ_OQ>(y, c(1.0)), x, v),
        fallback,
    )
}

/// [`pow_core`] over the slices: [`pow_core512`] eight lanes at a time (with their
/// [`pow_fallback`] mask), the scalar core on the remainder, then (per block) libm's `pow` where
/// [`pow_fallback`] says so ([`pow_fix`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")]
fn pow_avx512(x: &[f64], y: &[f64], out: &mut [f64]) {
    use std::arch::x86_64::*;
    const B: usize = 512;
    for ((xc, yc), oc) in x.chunks(B).zip(y.chunks(B)).zip(out.chunks_mut(B)) {
        let n = xc.len().min(yc.len()).min(oc.len());
        let mut j = 0;
        let mut any = 0;
        while j + 8 <= n {
            // SAFETY: j + 8 <= n, the length of every slice.
            unsafe {
                let (v, fallback) = pow_core512(
                    _mm512_loadu_pd(xc.as_ptr().add(j)),
                    _mm512_loadu_pd(yc.as_ptr().add(j)),
                );
                _mm512_storeu_pd(oc.as_mut_ptr().add(j), v);
                any |= fallback;
            }
            j += 8;
        }
        let mut any = any != 0;
        for ((o, &a), &b) in oc[j..n].iter_mut().zip(&xc[j..n]).zip(&yc[j..n]) {
            let (v, f) = pow_core(a, b);
            any |= f;
            *o = v;
        }
        if any {
            pow_fix(xc, yc, oc);
        }
    }
}

/// Whether `x^y` is libm's ([`pow_slow`]) rather than [`pow_core`]'s, given `ehi = y log x`
/// (rounded) of [`pow_mid`]: `x` not positive, normal and finite (as unsigned bits,
/// `x - MIN_POSITIVE` is then at least `inf - MIN_POSITIVE`: NaN, zero, subnormals and the sign
/// bit included); |y log x| >= 690, where results come near overflow or underflow (NaN and
/// infinite `y` fail the test too; below it `2^(k/128)` is normal); `y` = 0.5 or -1, whose
/// powers are one correctly rounded operation.
#[inline(always)]
fn pow_fallback(x: f64, y: f64, ehi: f64) -> bool {
    const MIN: u64 = 0x0010_0000_0000_0000; // f64::MIN_POSITIVE
    (x.to_bits().wrapping_sub(MIN) >= 0x7ff0_0000_0000_0000 - MIN)
        | !(ehi.abs() < 690.0)
        | (y == 0.5)
        | (y == -1.0)
}

/// libm's `pow` ([`pow_slow`]) on the elements of a block that [`pow_fallback`] sends there.
#[cold]
fn pow_fix(x: &[f64], y: &[f64], out: &mut [f64]) {
    for ((o, &a), &b) in out.iter_mut().zip(x).zip(y) {
        if pow_core(a, b).1 {
            *o = pow_slow(a, b);
        }
    }
}

/// libm's `pow`, with `x^0.5 = sqrt(x)` and `x^-1 = 1/x` for positive normal finite `x`.
fn pow_slow(x: f64, y: f64) -> f64 {
    if x.is_normal() && x > 0.0 {
        if y == 0.5 {
            return x.sqrt();
        }
        if y == -1.0 {
            return 1.0 / x;
        }
    }
    x.powf(y)
}

/// `out[i] = x[i]^y[i]` (ARM optimized-routines' algorithm; libm's `pow` for non-positive,
/// subnormal or non-finite `x`, non-finite `y` and |y ln x| ≥ 690, and `sqrt(x)` / `1/x` for
/// `y` = 0.5 / -1).
pub fn pow_f64(x: &[f64], y: &[f64], out: &mut [f64]) {
    pow_f64_at(level(), x, y, out)
}

fn pow_f64_at(level: u8, x: &[f64], y: &[f64], out: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")]
        unsafe fn avx512(x: &[f64], y: &[f64], out: &mut [f64]) {
            pow_avx512(x, y, out)
        }
        #[target_feature(enable = "avx2,fma")]
        unsafe fn avx2(x: &[f64], y: &[f64], out: &mut [f64]) {
            pow_phased(x, y, out)
        }
        match level.min(detect_cpu()) {
            // SAFETY: the CPU supports the enabled features (`detect_cpu`).
            2 => unsafe { avx512(x, y, out) },
            // SAFETY: as above.
            1 => unsafe { avx2(x, y, out) },
            _ => {
                for ((o, &a), &b) in out.iter_mut().zip(x).zip(y) {
                    *o = pow_slow(a, b);
                }
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = level;
        for ((xc, yc), oc) in x.chunks(512).zip(y.chunks(512)).zip(out.chunks_mut(512)) {
            let mut any = false;
            for ((o, &a), &b) in oc.iter_mut().zip(xc).zip(yc) {
                let (v, f) = pow_core(a, b);
                any |= f;
                *o = v;
            }
            if any {
                pow_fix(xc, yc, oc);
            }
        }
    }
}

/// The `f32` version of [`pow_f64`]: through it, rounded once to `f32` at the end.
pub fn pow_f32(x: &[f32], y: &[f32], out: &mut [f32]) {
    let mut bx = [0f64; 256];
    let mut by = [0f64; 256];
    let mut bo = [0f64; 256];
    for ((xc, yc), oc) in x.chunks(256).zip(y.chunks(256)).zip(out.chunks_mut(256)) {
        for ((a, b), (&u, &v)) in bx.iter_mut().zip(by.iter_mut()).zip(xc.iter().zip(yc)) {
            *a = u as f64;
            *b = v as f64;
        }
        let n = xc.len();
        pow_f64(&bx[..n], &by[..n], &mut bo[..n]);
        for (o, &v) in oc.iter_mut().zip(&bo) {
            *o = v as f32;
        }
    }
}

/// CPU level chosen once: 2 = AVX-512F/DQ/VL, 1 = AVX2+FMA, 0 = baseline.
fn level() -> u8 {
    use std::sync::atomic::{AtomicU8, Ordering};
    static LEVEL: AtomicU8 = AtomicU8::new(u8::MAX);
    let l = LEVEL.load(Ordering::Relaxed);
    if l != u8::MAX {
        return l;
    }
    let l = detect();
    LEVEL.store(l, Ordering::Relaxed);
    l
}

fn detect() -> u8 {
    if let Ok(v) = std::env::var("TENFERRO_SIMD") {
        // A ceiling for tests and benchmarks: "baseline", "avx2", anything else = best.
        let cap = match v.as_str() {
            "baseline" => 0,
            "avx2" => 1,
            _ => 2,
        };
        return detect_cpu().min(cap);
    }
    detect_cpu()
}

fn detect_cpu() -> u8 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
        {
            return 2;
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            return 1;
        }
    }
    0
}

/// The vector ISA the kernels run on in this process (`"avx512f"`, `"avx2+fma"` or
/// `"baseline"`).
pub fn simd_level() -> &'static str {
    match level() {
        2 => "avx512f",
        1 => "avx2+fma",
        _ => "baseline",
    }
}

macro_rules! kernel {
    ($(#[$doc:meta])* $name:ident, $name_at:ident, $name32:ident, $core:path, $needs:path, $fallback:expr) => {
        $(#[$doc])*
        pub fn $name(x: &[f64], out: &mut [f64]) {
            $name_at(level(), x, out)
        }

        /// The kernel at a given CPU level (at most the detected one: tests).
        fn $name_at(level: u8, x: &[f64], out: &mut [f64]) {
            #[inline(always)]
            fn body(x: &[f64], out: &mut [f64]) {
                apply!(x, out, $core, $needs, $fallback)
            }
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")]
                unsafe fn avx512(x: &[f64], out: &mut [f64]) {
                    body(x, out)
                }
                #[target_feature(enable = "avx2,fma")]
                unsafe fn avx2(x: &[f64], out: &mut [f64]) {
                    body(x, out)
                }
                match level.min(detect_cpu()) {
                    // SAFETY: the CPU supports the enabled features (`detect_cpu`).
                    2 => unsafe { avx512(x, out) },
                    // SAFETY: as above.
                    1 => unsafe { avx2(x, out) },
                    // No FMA instruction: `mul_add` would be a (slow) libm call per use, so
                    // libm's function per element instead (a function of the value alone too).
                    _ => {
                        for (o, &v) in out.iter_mut().zip(x) {
                            *o = $fallback(v);
                        }
                    }
                }
            }
            #[cfg(not(target_arch = "x86_64"))]
            {
                let _ = level;
                body(x, out)
            }
        }

        /// The `f32` version: through the `f64` kernel, rounded once to `f32` at the end.
        pub fn $name32(x: &[f32], out: &mut [f32]) {
            via_f64(x, out, $name)
        }
    };
}

fn via_f64(x: &[f32], out: &mut [f32], f: fn(&[f64], &mut [f64])) {
    let mut buf_in = [0f64; 256];
    let mut buf_out = [0f64; 256];
    for (xc, oc) in x.chunks(256).zip(out.chunks_mut(256)) {
        for (b, &v) in buf_in.iter_mut().zip(xc) {
            *b = v as f64;
        }
        f(&buf_in[..xc.len()], &mut buf_out[..xc.len()]);
        for (o, &v) in oc.iter_mut().zip(&buf_out) {
            *o = v as f32;
        }
    }
}

kernel!(
    /// `out[i] = exp(x[i])` (< 1 ulp).
    exp_f64,
    exp_f64_at,
    exp_f32,
    exp_core,
    exp_fallback,
    f64::exp
);
kernel!(
    /// `out[i] = expm1(x[i])`.
    expm1_f64,
    expm1_f64_at,
    expm1_f32,
    expm1_core,
    exp_fallback,
    f64::exp_m1
);
kernel!(
    /// `out[i] = ln(x[i])` (< 1 ulp).
    log_f64,
    log_f64_at,
    log_f32,
    log_fast,
    log_fallback,
    f64::ln
);
kernel!(
    /// `out[i] = ln(1 + x[i])`.
    log1p_f64,
    log1p_f64_at,
    log1p_f32,
    log1p_core,
    log1p_fallback,
    f64::ln_1p
);
kernel!(
    /// `out[i] = sin(x[i])`.
    sin_f64,
    sin_f64_at,
    sin_f32,
    sin_core,
    trig_fallback,
    f64::sin
);
kernel!(
    /// `out[i] = cos(x[i])`.
    cos_f64,
    cos_f64_at,
    cos_f32,
    cos_core,
    trig_fallback,
    f64::cos
);
kernel!(
    /// `out[i] = erf(x[i])` (fdlibm's algorithm; libm's for |x| < 2^-28).
    erf_f64,
    erf_f64_at,
    erf_f32,
    erf_core,
    erf_fallback,
    libm::erf
);
kernel!(
    /// `out[i] = tanh(x[i])`.
    tanh_f64,
    tanh_f64_at,
    tanh_f32,
    tanh_core,
    tanh_fallback,
    f64::tanh
);

/// Names and `f64` kernels at a given level, for the tests.
#[cfg(test)]
type AtLevel = fn(u8, &[f64], &mut [f64]);
#[cfg(test)]
const KERNELS: [(&str, AtLevel); 8] = [
    ("exp", exp_f64_at),
    ("expm1", expm1_f64_at),
    ("log", log_f64_at),
    ("log1p", log1p_f64_at),
    ("sin", sin_f64_at),
    ("cos", cos_f64_at),
    ("tanh", tanh_f64_at),
    ("erf", erf_f64_at),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn ulps(a: f64, b: f64) -> u64 {
        if a.is_nan() && b.is_nan() || a == b {
            return 0;
        }
        let key = |v: f64| {
            let b = v.to_bits() as i64;
            if b < 0 {
                i64::MIN - b
            } else {
                b
            }
        };
        key(a).abs_diff(key(b))
    }

    fn samples() -> Vec<f64> {
        // Deterministic log-uniform magnitudes of both signs plus edge values.
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut v = Vec::new();
        for _ in 0..20_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let u = (s >> 11) as f64 / (1u64 << 53) as f64;
            let m = (u * 90.0 - 45.0).exp2();
            v.push(if s & 1 == 0 { m } else { -m });
        }
        v.extend([
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
            5e-324,
            -5e-324,
            708.0,
            709.7,
            709.8,
            -708.0,
            -745.0,
            -746.0,
            -1.0,
            1.0,
            1e300,
            TRIG_MAX,
            -TRIG_MAX,
        ]);
        v
    }

    #[test]
    fn kernels_close_to_libm_and_special_values_exact() {
        let xs = samples();
        let mut out = vec![0.0; xs.len()];
        let reference: [fn(f64) -> f64; 8] = [
            f64::exp,
            f64::exp_m1,
            f64::ln,
            f64::ln_1p,
            f64::sin,
            f64::cos,
            f64::tanh,
            libm::erf,
        ];
        for ((name, k), r) in KERNELS.iter().zip(reference) {
            // tanh is within 1.2 ulp (the ulp tool measures each), glibc's within 1.
            let bound = if *name == "tanh" { 3 } else { 2 };
            k(2, &xs, &mut out);
            for (&x, &y) in xs.iter().zip(&out) {
                let want = r(x);
                // libm itself is within 1 ulp; ours too, so 2 between them.
                assert!(
                    ulps(y, want) <= bound,
                    "{name}({x:e}) = {y:e}, libm {want:e}"
                );
                if want.is_nan() || want.is_infinite() || want == 0.0 {
                    assert_eq!(y.to_bits(), want.to_bits(), "{name}({x:e})");
                }
            }
        }
    }

    #[test]
    fn pow_close_to_libm_and_same_bits() {
        let xs = samples();
        let n = xs.len();
        // Pair every sample with a shifted one (and small exponents) as the exponent.
        let ys: Vec<f64> = (0..n)
            .map(|i| {
                if i % 3 == 0 {
                    xs[(i * 7 + 3) % n]
                } else {
                    (xs[(i * 5 + 1) % n]).clamp(-40.0, 40.0)
                }
            })
            .chain([2.0, 0.5, -1.0, 1.0, 0.0, f64::NAN, f64::INFINITY])
            .collect();
        let xs: Vec<f64> = xs
            .iter()
            .copied()
            .chain([3.0, 3.0, 3.0, 3.0, f64::NAN, 1.0, 0.5])
            .collect();
        let xs = &xs[..ys.len()];
        let mut out = vec![0.0; ys.len()];
        pow_f64_at(2, xs, &ys, &mut out);
        for ((&x, &y), &v) in xs.iter().zip(&ys).zip(&out) {
            let want = x.powf(y);
            assert!(
                ulps(v, want) <= 2,
                "pow({x:e}, {y:e}) = {v:e}, libm {want:e}"
            );
            if want.is_nan() || want.is_infinite() || want == 0.0 {
                assert_eq!(v.to_bits(), want.to_bits(), "pow({x:e}, {y:e})");
            }
        }
        for level in [1].into_iter().filter(|&l| l <= detect_cpu()) {
            let mut other = vec![0.0; ys.len()];
            pow_f64_at(level, xs, &ys, &mut other);
            for off in 0..4 {
                for len in 0..70 {
                    let mut part = vec![0.0; len];
                    pow_f64_at(2, &xs[off..off + len], &ys[off..off + len], &mut part);
                    for (a, b) in part.iter().zip(&out[off..off + len]) {
                        assert_eq!(a.to_bits(), b.to_bits());
                    }
                }
            }
            for (a, b) in other.iter().zip(&out) {
                assert_eq!(a.to_bits(), b.to_bits());
            }
        }
    }

    #[test]
    fn pow_edges_same_bits_on_every_path() {
        // Around the fallback's |y ln x| = 690 threshold, every bad-x class, the exponents with
        // cases of their own, and x = 1: the AVX-512 lanes, the scalar remainder (one element
        // at a time) and the AVX2 passes agree bit for bit, and y = 0 gives exactly 1.
        let bases = [
            0.0,
            -0.0,
            5e-324,
            2.2250738585072014e-308,
            2.225073858507201e-308,
            1.0,
            1.0 + f64::EPSILON,
            1.0 - f64::EPSILON / 2.0,
            0.3,
            3.7,
            1e300,
            f64::MAX,
            f64::INFINITY,
            -2.0,
            f64::NAN,
        ];
        let mut xs = Vec::new();
        let mut ys = Vec::new();
        for &x in &bases {
            let l = x.ln();
            let mut es = vec![
                0.0,
                -0.0,
                1.0,
                2.0,
                0.5,
                -1.0,
                3.0,
                f64::INFINITY,
                -f64::INFINITY,
            ];
            es.extend([f64::NAN, 1e300, -1e300]);
            if l.is_finite() && l != 0.0 {
                for t in [689.9, 690.0, 700.0, 1000.0] {
                    for u in [1.0 - 1e-15, 1.0, 1.0 + 1e-15] {
                        es.extend([t * u / l, -t * u / l]);
                    }
                }
            }
            for e in es {
                xs.push(x);
                ys.push(e);
            }
        }
        let mut whole = vec![0.0; xs.len()];
        pow_f64_at(2, &xs, &ys, &mut whole);
        for (i, (&x, &y)) in xs.iter().zip(&ys).enumerate() {
            let mut one = [0.0];
            pow_f64_at(2, &[x], &[y], &mut one);
            assert_eq!(one[0].to_bits(), whole[i].to_bits(), "pow({x:e}, {y:e})");
            let want = pow_slow(x, y);
            assert!(
                ulps(whole[i], want) <= 1,
                "pow({x:e}, {y:e}) = {:e}, libm {want:e}",
                whole[i]
            );
            if y == 0.0 {
                assert_eq!(whole[i], 1.0, "pow({x:e}, {y:e})");
            }
        }
        for level in [1].into_iter().filter(|&l| l <= detect_cpu()) {
            let mut other = vec![0.0; xs.len()];
            pow_f64_at(level, &xs, &ys, &mut other);
            for ((a, b), (x, y)) in other.iter().zip(&whole).zip(xs.iter().zip(&ys)) {
                assert_eq!(
                    a.to_bits(),
                    b.to_bits(),
                    "pow({x:e}, {y:e}) at level {level}"
                );
            }
        }
    }

    #[test]
    fn every_path_same_bits() {
        let xs = samples();
        for (name, k) in KERNELS {
            let mut whole = vec![0.0; xs.len()];
            k(2, &xs, &mut whole);
            // Every offset and length 0..70, and element by element.
            for off in 0..8 {
                for len in 0..70.min(xs.len() - off) {
                    let mut part = vec![0.0; len];
                    k(2, &xs[off..off + len], &mut part);
                    for (a, b) in part.iter().zip(&whole[off..off + len]) {
                        assert_eq!(a.to_bits(), b.to_bits(), "{name}");
                    }
                }
            }
            // The AVX2 copy of the loop, whole and element by element.
            for level in [1].into_iter().filter(|&l| l <= detect_cpu()) {
                let mut other = vec![0.0; xs.len()];
                k(level, &xs, &mut other);
                for (i, &x) in xs.iter().enumerate().step_by(7) {
                    let mut one = [0.0];
                    k(level, &[x], &mut one);
                    assert_eq!(one[0].to_bits(), whole[i].to_bits(), "{name}({x:e})");
                }
                for (a, b) in other.iter().zip(&whole) {
                    assert_eq!(a.to_bits(), b.to_bits(), "{name} at level {level}");
                }
            }
        }
    }
}

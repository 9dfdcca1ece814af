//! Complex `sinh` and `cosh` with the special values of C99 Annex G (G.6.2.4, G.6.2.5), which
//! the Array API's special cases repeat: `sinh(x + iy) = sinh x cos y + i cosh x sin y`,
//! `cosh(x + iy) = cosh x cos y + i sinh x sin y`, except where a zero or an infinity would
//! turn the product into NaN (`0·∞`): a zero imaginary part keeps the real function's value,
//! a zero or infinite real part with a non-finite imaginary part gives `x`-derived values and
//! NaN. Where `cosh x` overflows but the products need not (`|x|` up to ~1455 with a small
//! `cos y` or `sin y`), `e^|x|` is applied scaled ([`exp_times`], FreeBSD's `__ldexp_cexp`).
//! `sin` and `cos` are defined through them, as C99 does (G.6: `csin(z) = -i csinh(iz)`,
//! `ccos(z) = ccosh(iz)`), so they get the same special values and the same range.

use num_complex::Complex;
use num_traits::Float;

/// `+0` or `-0`: the sign of the product of `a` and `b`.
fn signed_zero<T: Float>(a: T, b: T) -> T {
    if a.is_sign_negative() != b.is_sign_negative() {
        -T::zero()
    } else {
        T::zero()
    }
}

/// `(e^x·c, e^x·s)` without overflowing in `e^x` where the products are finite: for `x` above
/// `exp`'s overflow threshold, `e^x = e^(x − k ln2)·2^k` with FreeBSD's `k = 1799` and
/// `k ln2` rounded so that `|e^(k ln2) − 2^k|` is small (msun `k_exp.c`, `__ldexp_cexp`); the
/// mantissa of `e^(x − k ln2)` is moved to the top of the range and the rest of the power of two
/// is applied in two halves, so a subnormal `c` or `s` is not flushed. With `halve`,
/// `(e^x/2·c, e^x/2·s)` (the halving in the power of two: halving a subnormal `c` would lose
/// it). Computed in `f64` (for `f32` that is one rounding more, at the end). `c` and `s` are
/// finite.
pub(crate) fn exp_times<T: Float>(x: T, c: T, s: T, halve: bool) -> (T, T) {
    let back = |v: f64| T::from(v).unwrap_or_else(T::nan);
    let (xf, cf, sf) = (
        x.to_f64().unwrap_or(f64::NAN),
        c.to_f64().unwrap_or(f64::NAN),
        s.to_f64().unwrap_or(f64::NAN),
    );
    let e = if halve { xf.exp() * 0.5 } else { xf.exp() };
    if e.is_finite() || xf.is_nan() {
        return (back(cf * e), back(sf * e));
    }
    // Beyond (1024 + 1074) ln2 every non-zero product overflows.
    if xf > 1454.9 {
        return (back(cf * e), back(sf * e));
    }
    const K: i64 = 1799;
    #[allow(clippy::excessive_precision)] // msun's constant, verbatim
    const K_LN2: f64 = 1_246.971_777_827_341_611_56;
    let m = (xf - K_LN2).exp(); // normal: x − k ln2 lies in [−537.2, 208.0]
    let bits = m.to_bits();
    let m_exp = i64::try_from((bits >> 52) & 0x7ff).unwrap_or(0) - 1023;
    let top = f64::from_bits((bits & !(0x7ff_u64 << 52)) | (2046_u64 << 52)); // m·2^(1023 − m_exp)
    let rest = m_exp + K - 1023 - i64::from(halve); // ≥ -1 here
    let half = rest / 2;
    let pow2 = |n: i64| f64::from_bits(u64::try_from(1023 + n).unwrap_or(0) << 52);
    let (s1, s2) = (pow2(half), pow2(rest - half));
    (back(cf * top * s1 * s2), back(sf * top * s1 * s2))
}

/// `(sinh x · c, cosh x · s)` (`(cosh x · c, sinh x · s)` with `swap`) for finite `x`, `c`, `s`,
/// past `cosh`'s overflow through [`exp_times`] (there `sinh x = ±cosh x = ±e^|x|/2`).
fn hyperbolic_times<T: Float>(x: T, c: T, s: T, swap: bool) -> Complex<T> {
    let (sh, ch) = (x.sinh(), x.cosh());
    if ch.is_finite() {
        return if swap {
            Complex::new(ch * c, sh * s)
        } else {
            Complex::new(sh * c, ch * s)
        };
    }
    let sign = if x < T::zero() { -T::one() } else { T::one() };
    let (ec, es) = exp_times(x.abs(), c, s, true);
    if swap {
        Complex::new(ec, sign * es)
    } else {
        Complex::new(sign * ec, es)
    }
}

/// Complex sine, C99 `csin(z) = -i csinh(iz)` (Annex G.6): `sin(iy) = i sinh y` exactly, and
/// no `0·∞` NaN where `sinh` overflows.
pub fn csin<T: Float>(z: Complex<T>) -> Complex<T> {
    let w = csinh(Complex::new(-z.im, z.re));
    Complex::new(w.im, -w.re)
}

/// Complex cosine, C99 `ccos(z) = ccosh(iz)` (Annex G.6).
pub fn ccos<T: Float>(z: Complex<T>) -> Complex<T> {
    ccosh(Complex::new(-z.im, z.re))
}

/// Complex hyperbolic sine (C99 `csinh`).
pub fn csinh<T: Float>(z: Complex<T>) -> Complex<T> {
    let (x, y) = (z.re, z.im);
    if y == T::zero() {
        // sinh(x ± i0) = sinh(x) ± i0, NaN and infinite x included.
        return Complex::new(x.sinh(), y);
    }
    if !y.is_finite() && (x == T::zero() || x.is_infinite()) {
        // ±0 + iNaN, ±∞ + iNaN.
        return Complex::new(x, T::nan());
    }
    if x.is_finite() && y.is_finite() {
        return hyperbolic_times(x, y.cos(), y.sin(), false);
    }
    Complex::new(x.sinh() * y.cos(), x.cosh() * y.sin())
}

/// Complex hyperbolic cosine (C99 `ccosh`).
pub fn ccosh<T: Float>(z: Complex<T>) -> Complex<T> {
    let (x, y) = (z.re, z.im);
    if y == T::zero() {
        // cosh(x ± i0) = cosh(x) + i0 with the sign of sinh(x)·(±0) (NaN x: the zero as given).
        let im = if x.is_nan() { y } else { signed_zero(x, y) };
        return Complex::new(x.cosh(), im);
    }
    if !y.is_finite() && x == T::zero() {
        return Complex::new(T::nan(), signed_zero(x, y));
    }
    if !y.is_finite() && x.is_infinite() {
        return Complex::new(x.abs(), T::nan());
    }
    if x.is_finite() && y.is_finite() {
        return hyperbolic_times(x, y.cos(), y.sin(), true);
    }
    Complex::new(x.cosh() * y.cos(), x.sinh() * y.sin())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annex_g_special_values() {
        let (inf, nan) = (f64::INFINITY, f64::NAN);
        let s = csinh(Complex::new(0.0, inf));
        assert!(s.re == 0.0 && s.im.is_nan());
        let s = csinh(Complex::new(inf, 0.0));
        assert_eq!((s.re, s.im), (inf, 0.0));
        let s = csinh(Complex::new(nan, -0.0));
        assert!(s.re.is_nan() && s.im == 0.0 && s.im.is_sign_negative());
        let c = ccosh(Complex::new(0.0, 0.0));
        assert_eq!((c.re, c.im), (1.0, 0.0));
        let c = ccosh(Complex::new(inf, 0.0));
        assert_eq!((c.re, c.im), (inf, 0.0));
        let c = ccosh(Complex::new(inf, nan));
        assert!(c.re == inf && c.im.is_nan());
        let c = ccosh(Complex::new(0.0, inf));
        assert!(c.re.is_nan() && c.im == 0.0);
        let c = ccosh(Complex::new(1.0, 2.0));
        let want = Complex::new(1.0f64, 2.0).cosh();
        assert!((c - want).norm() < 1e-15);
    }
}

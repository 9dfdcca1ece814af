//! Complex `sinh` and `cosh` with the special values of C99 Annex G (G.6.2.4, G.6.2.5), which
//! the Array API's special cases repeat: `sinh(x + iy) = sinh x cos y + i cosh x sin y`,
//! `cosh(x + iy) = cosh x cos y + i sinh x sin y`, except where a zero or an infinity would
//! turn the product into NaN (`0·∞`): a zero imaginary part keeps the real function's value,
//! a zero or infinite real part with a non-finite imaginary part gives `x`-derived values and
//! NaN.

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

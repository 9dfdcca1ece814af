//! Scalar and vectorised math used by the kernels.
//!
//! * the real transcendental slice kernels (`exp`, `log`, `sin`, ...) are in `vmath`.
//! * complex functions follow C99 Annex G / NumPy's branch cuts (principal `log` with the cut
//!   on the negative real axis, `sqrt` continuous from above with the sign of a zero imaginary
//!   part honoured); complex division uses Smith's algorithm (Smith 1962, CACM 5(8) 435).
//! * `erf` is `libm`'s port of musl/fdlibm (< 1 ulp).

use num_complex::Complex;
use num_traits::Float;

/// Real `erf` (musl/fdlibm through `libm`).
pub trait Erf {
    /// The error function.
    fn erf(self) -> Self;
}
impl Erf for f64 {
    fn erf(self) -> f64 {
        libm::erf(self)
    }
}
impl Erf for f32 {
    fn erf(self) -> f32 {
        libm::erff(self)
    }
}

/// NaN-propagating maximum.
#[inline(always)]
pub fn fmax_nan<T: Float>(a: T, b: T) -> T {
    if a.is_nan() || b.is_nan() {
        T::nan()
    } else if a >= b {
        a
    } else {
        b
    }
}

/// NaN-propagating minimum.
#[inline(always)]
pub fn fmin_nan<T: Float>(a: T, b: T) -> T {
    if a.is_nan() || b.is_nan() {
        T::nan()
    } else if a <= b {
        a
    } else {
        b
    }
}

/// Complex exponential with exact results on the real axis (`exp(x + 0i) = e^x + 0i`) and C99's
/// special values (Annex G, `cexp`) for infinite and NaN parts.
pub fn cexp<T: Float>(z: Complex<T>) -> Complex<T> {
    if z.im == T::zero() {
        return Complex::new(z.re.exp(), z.im);
    }
    if !z.im.is_finite() {
        if z.re == T::infinity() {
            return Complex::new(z.re, T::nan()); // exp(+inf + i·inf|NaN) = ±inf + NaN i
        }
        if z.re == T::neg_infinity() {
            return Complex::new(T::zero(), T::zero()); // exp(-inf + i·inf|NaN) = ±0 ± 0i
        }
        return Complex::new(T::nan(), T::nan());
    }
    if z.re.is_infinite() {
        // ±inf times the unit vector, with 0·inf avoided (exp(-inf + iy) = +0·cis y).
        let m = z.re.exp();
        return Complex::new(m * z.im.cos(), m * z.im.sin());
    }
    // e^x·cis y, scaled where e^x alone overflows (`exp(800 + 1e-300i)` has a finite imaginary
    // part).
    let (re, im) = crate::hyperbolic::exp_times(z.re, z.im.cos(), z.im.sin(), false);
    Complex::new(re, im)
}

/// Complex square root, C99 `csqrt` (branch cut on the negative real axis, signed zeros).
pub fn csqrt<T: Float>(z: Complex<T>) -> Complex<T> {
    // C99 Annex G special values, in its order: an infinite imaginary part wins over NaN.
    if z.im.is_infinite() {
        return Complex::new(T::infinity(), z.im);
    }
    if z.re.is_nan() {
        return Complex::new(z.re, T::nan());
    }
    if z.re == T::infinity() {
        return Complex::new(
            z.re,
            if z.im.is_nan() {
                z.im
            } else {
                T::zero().copysign(z.im)
            },
        );
    }
    if z.re == T::neg_infinity() {
        return if z.im.is_nan() {
            Complex::new(T::nan(), T::infinity())
        } else {
            Complex::new(T::zero(), T::infinity().copysign(z.im))
        };
    }
    if z.im.is_nan() {
        return Complex::new(T::nan(), T::nan());
    }
    if z.re == T::zero() && z.im == T::zero() {
        return Complex::new(T::zero(), z.im);
    }
    let two = T::one() + T::one();
    let four = two * two;
    // Rescale near overflow (sqrt(z) = 2 sqrt(z/4)) and in the subnormal range
    // (sqrt(z) = sqrt(z s²)/s with s = 1/ε) so that |z| is computed without loss.
    if z.re.abs() > T::max_value() / four || z.im.abs() > T::max_value() / four {
        let r = csqrt(Complex::new(z.re / four, z.im / four));
        return Complex::new(r.re * two, r.im * two);
    }
    if z.re.abs() < T::min_positive_value() && z.im.abs() < T::min_positive_value() {
        let s = T::epsilon().recip();
        let r = csqrt(Complex::new(z.re * s * s, z.im * s * s));
        return Complex::new(r.re / s, r.im / s);
    }
    // Numerically stable formula (Kahan): t = sqrt((|x| + |z|)/2).
    let t = ((z.re.abs() + z.norm()) / two).sqrt();
    if z.re >= T::zero() {
        Complex::new(t, z.im / (two * t))
    } else {
        Complex::new(z.im.abs() / (two * t), t.copysign(z.im))
    }
}

/// Complex logarithm (principal branch; `atan2` keeps the sign of a zero imaginary part).
pub fn clog<T: Float>(z: Complex<T>) -> Complex<T> {
    let arg = z.im.atan2(z.re);
    if z.re.abs() < T::min_positive_value()
        && z.im.abs() < T::min_positive_value()
        && (z.re != T::zero() || z.im != T::zero())
    {
        // Subnormal: ln|z| = ln|z s| - ln s with s = 1/ε keeps full precision.
        let s = T::epsilon().recip();
        let scaled = Complex::new(z.re * s, z.im * s);
        return Complex::new(scaled.norm().ln() - s.ln(), arg);
    }
    let h = z.norm();
    let near_one = |v: f64| T::from(v).unwrap_or_else(T::one);
    if h >= near_one(0.71) && h <= near_one(1.73) {
        // |z| near 1: ln|z| = log1p(x² + y² - 1)/2 with x² + y² - 1 summed exactly
        // ([`x2y2m1`]): ln(hypot) would round |z| to 1 first, e.g. log(1 + 1e-10i) is
        // 5e-21 + 1e-10i, not 0 + 1e-10i (glibc's clog; NumPy calls it).
        let two = T::one() + T::one();
        return Complex::new(x2y2m1(z.re, z.im).ln_1p() / two, arg);
    }
    Complex::new(h.ln(), arg)
}

/// `x² + y² - 1` to within a few ulps even where the terms cancel (glibc's `__x2y2m1`): the
/// squares split exactly into `hi + lo` by FMA, then the five terms summed by error-free
/// two-sums, smallest first, re-sorting after each step.
fn x2y2m1<T: Float>(x: T, y: T) -> T {
    let split = |a: T| {
        let hi = a * a;
        (hi, a.mul_add(a, -hi))
    };
    let (xh, xl) = split(x);
    let (yh, yl) = split(y);
    let mut v = [xl, xh, yl, yh, -T::one()];
    let by_magnitude = |a: &T, b: &T| {
        a.abs()
            .partial_cmp(&b.abs())
            .unwrap_or(std::cmp::Ordering::Equal)
    };
    v.sort_by(by_magnitude);
    for i in 0..4 {
        // Fast two-sum: |v[i+1]| >= |v[i]|.
        let hi = v[i + 1] + v[i];
        let lo = v[i] - (hi - v[i + 1]);
        v[i + 1] = hi;
        v[i] = lo;
        v[i + 1..].sort_by(by_magnitude);
    }
    v[4] + v[3] + v[2] + v[1] + v[0]
}

/// Complex `tanh`, stable for large real parts, with C99's special values (Annex G, `ctanh`).
pub fn ctanh<T: Float>(z: Complex<T>) -> Complex<T> {
    if z.re.is_infinite() && !z.im.is_finite() {
        // tanh(±inf + i·inf|NaN) = ±1 ± 0i.
        return Complex::new(T::one().copysign(z.re), T::zero());
    }
    if z.re.is_nan() {
        // tanh(NaN + 0i) = NaN + 0i; NaN otherwise.
        return Complex::new(z.re, if z.im == T::zero() { z.im } else { T::nan() });
    }
    if !z.im.is_finite() {
        // Finite real part: tanh(±0 + i·inf|NaN) = ±0 + NaN i, else NaN + NaN i.
        return Complex::new(if z.re == T::zero() { z.re } else { T::nan() }, T::nan());
    }
    // Kahan's formulas as FreeBSD's `ctanh` (s_ctanh.c): no cancellation near the poles
    // (`cosh 2x + cos 2y` of the textbook quotient is ~0 there) and no overflow of `2y`.
    let big = T::from(22.0).unwrap_or_else(T::max_value);
    let four = T::from(4.0).unwrap_or_else(T::one);
    if z.re.abs() >= big {
        // tanh(x + iy) = ±1 + i·4·sin y·cos y·e^(-2|x|) (the tiny part, signed as sin 2y).
        let e = (-z.re.abs()).exp();
        return Complex::new(
            T::one().copysign(z.re),
            four * z.im.sin() * z.im.cos() * e * e,
        );
    }
    let t = z.im.tan();
    let beta = T::one() + t * t; // 1 / cos²y
    let s = z.re.sinh();
    let rho = (T::one() + s * s).sqrt(); // cosh x
    let denom = T::one() + beta * s * s;
    Complex::new((beta * rho * s) / denom, t / denom)
}

/// Complex `expm1`, accurate near zero; `exp(z) - 1` with C99's special values of `cexp` for
/// infinite and NaN parts, and `expm1(x + 0i) = expm1(x) + 0i`.
pub fn cexpm1<T: Float>(z: Complex<T>) -> Complex<T> {
    if z.im == T::zero() {
        return Complex::new(z.re.exp_m1(), z.im);
    }
    if !z.re.is_finite() || !z.im.is_finite() {
        let e = cexp(z);
        return Complex::new(e.re - T::one(), e.im);
    }
    let two = T::one() + T::one();
    let s = (z.im / two).sin();
    Complex::new(
        z.re.exp_m1() * z.im.cos() - two * s * s,
        z.re.exp() * z.im.sin(),
    )
}

/// Complex `log1p`, accurate near zero.
pub fn clog1p<T: Float>(z: Complex<T>) -> Complex<T> {
    let two = T::one() + T::one();
    let x = z.re;
    let y = z.im;
    if x.abs() < T::from(0.5).unwrap_or_else(T::one)
        && y.abs() < T::from(0.5).unwrap_or_else(T::one)
    {
        let re = (x * (two + x) + y * y).ln_1p() / two;
        return Complex::new(re, y.atan2(T::one() + x));
    }
    clog(Complex::new(T::one() + x, y))
}

/// Complex division by Smith's algorithm (avoids spurious overflow/underflow).
pub fn cdiv<T: Float>(a: Complex<T>, b: Complex<T>) -> Complex<T> {
    if b.re.abs() >= b.im.abs() {
        if b.re == T::zero() && b.im == T::zero() {
            return Complex::new(a.re / b.re.abs(), a.im / b.re.abs());
        }
        let r = b.im / b.re;
        let d = b.re + b.im * r;
        Complex::new((a.re + a.im * r) / d, (a.im - a.re * r) / d)
    } else {
        let r = b.re / b.im;
        let d = b.re * r + b.im;
        Complex::new((a.re * r + a.im) / d, (a.im * r - a.re) / d)
    }
}

/// Complex power with NumPy's special cases (`z**0 = 1`, `0**w = 0` for `Re w > 0, Im w = 0`).
pub fn cpow<T: Float>(a: Complex<T>, b: Complex<T>) -> Complex<T> {
    if b.re == T::zero() && b.im == T::zero() {
        return Complex::new(T::one(), T::zero());
    }
    if a.re == T::zero() && a.im == T::zero() {
        // NumPy 2: |0^w| = 0^(Re w), so 0 for Re w > 0 whatever Im w; else undefined (NaN).
        return if b.re > T::zero() {
            Complex::new(T::zero(), T::zero())
        } else {
            Complex::new(T::nan(), T::nan())
        };
    }
    // Small integer exponents by repeated multiplication, as NumPy does.
    if b.im == T::zero()
        && b.re.abs() <= T::from(100.0).unwrap_or_else(T::one)
        && b.re.fract() == T::zero()
    {
        let mut n = b.re.abs().to_i64().unwrap_or(0);
        let mut base = a;
        let mut acc = Complex::new(T::one(), T::zero());
        while n > 0 {
            if n & 1 == 1 {
                acc = acc * base;
            }
            base = base * base;
            n >>= 1;
        }
        return if b.re < T::zero() {
            cdiv(Complex::new(T::one(), T::zero()), acc)
        } else {
            acc
        };
    }
    cexp(b * clog(a))
}

/// `z * c` exact for a real or imaginary `c` (each part of `z` scaled alone: `(inf + 1i)·(-i)` is
/// `1 - inf·i`, where the general product gives `NaN` from `inf·0`).
pub fn cscale<T: Float>(z: Complex<T>, c: Complex<T>) -> Complex<T> {
    if c.re == T::zero() {
        Complex::new(-(z.im * c.im), z.re * c.im)
    } else if c.im == T::zero() {
        Complex::new(z.re * c.re, z.im * c.re)
    } else {
        z * c
    }
}

/// `z / |z|` (0 at 0).
pub fn csign<T: Float>(z: Complex<T>) -> Complex<T> {
    let n = z.norm();
    if n == T::zero() {
        Complex::new(T::zero(), T::zero())
    } else {
        Complex::new(z.re / n, z.im / n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complex_special_values() {
        let (inf, nan) = (f64::INFINITY, f64::NAN);
        let same = |a: Complex<f64>, b: Complex<f64>| {
            let eq =
                |x: f64, y: f64| (x.is_nan() && y.is_nan()) || (x == y && x.signum() == y.signum());
            eq(a.re, b.re) && eq(a.im, b.im)
        };
        assert!(same(csqrt(Complex::new(inf, 1.0)), Complex::new(inf, 0.0)));
        assert!(same(csqrt(Complex::new(-inf, nan)), Complex::new(nan, inf)));
        assert!(same(
            csqrt(Complex::new(nan, -inf)),
            Complex::new(inf, -inf)
        ));
        assert!(same(ctanh(Complex::new(0.0, inf)), Complex::new(0.0, nan)));
        assert!(same(ctanh(Complex::new(inf, nan)), Complex::new(1.0, 0.0)));
        assert!(same(ctanh(Complex::new(nan, 0.0)), Complex::new(nan, 0.0)));
        assert!(same(cexpm1(Complex::new(inf, 0.0)), Complex::new(inf, 0.0)));
        assert!(same(
            cexpm1(Complex::new(-inf, inf)),
            Complex::new(-1.0, 0.0)
        ));
        assert!(same(cexp(Complex::new(-inf, 2.0)), Complex::new(-0.0, 0.0)));
    }

    #[test]
    fn complex_branch_cuts() {
        let z = Complex::new(-4.0f64, -0.0);
        assert_eq!(csqrt(z), Complex::new(0.0, -2.0));
        assert_eq!(csqrt(Complex::new(-4.0f64, 0.0)), Complex::new(0.0, 2.0));
        assert!(clog(Complex::new(-1.0f64, -0.0)).im < 0.0);
        // |z| near 1: the real part log|z| is not rounded away (log1p form).
        let l = clog(Complex::new(1.0f64, 1e-10));
        assert!((l.re - 5e-21).abs() <= 1e-36 && l.im == 1e-10, "{l}");
        // 1 - 2^-30 + 2^-20 i: ln|z| = -9.308678276974260946e-10 (mpmath, 200 bits); ln(hypot)
        // keeps only ~7 digits.
        let l = clog(Complex::new(1.0f64 - 2f64.powi(-30), 2f64.powi(-20)));
        assert!(
            (l.re / -9.308_678_276_974_261e-10 - 1.0).abs() < 4e-16,
            "{l}"
        );
        assert_eq!(clog(Complex::new(1.0f64, 0.0)), Complex::new(0.0, 0.0));
        let q = cdiv(Complex::new(1e300f64, 1e300), Complex::new(1e300, 1e300));
        assert!((q.re - 1.0).abs() < 1e-15 && q.im.abs() < 1e-15);
        assert_eq!(
            cpow(Complex::new(0.0f64, 0.0), Complex::new(0.0, 0.0)),
            Complex::new(1.0, 0.0)
        );
    }
}

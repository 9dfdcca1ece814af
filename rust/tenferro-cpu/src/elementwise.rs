//! Kernels of the unary, binary, ternary and conversion families.

use crate::hyperbolic::{ccos, ccosh, csin, csinh};
use crate::map::{map1, map2, map3};
use crate::math::{
    cdiv, cexp, cexpm1, clog, clog1p, cpow, csign, csqrt, ctanh, fmax_nan, fmin_nan, Erf,
};
use crate::vmath;
use crate::CpuEngine;
use num_complex::Complex;
use num_traits::Float;
use tenferro_ops::{BinaryOp, CompareDir, UnaryOp};
use tenferro_tensor::{
    dispatch_dtype, Complex32, Complex64, DType, Element, Error, Result, Tensor,
};

/// Relative per-element cost of transcendental functions (an add is 1; `exp` measured about 4×).
const TRANSCENDENTAL: usize = 4;

macro_rules! lift {
    ($f:expr) => {
        |xs: &[_], os: &mut [_]| {
            for (o, &v) in os.iter_mut().zip(xs) {
                *o = $f(v);
            }
        }
    };
}

macro_rules! lift2 {
    ($f:expr) => {
        |xs: &[_], ys: &[_], os: &mut [_]| {
            for ((o, &a), &b) in os.iter_mut().zip(xs).zip(ys) {
                *o = $f(a, b);
            }
        }
    };
}

/// Rounding half to even (NumPy's `rint`) and C's `nextafter`, for the kernels generic over
/// `f32`/`f64`.
trait RoundTiesEven {
    fn round_ties_even(self) -> Self;
    fn next_after(self, toward: Self) -> Self;
}

/// C99 `nextafter` on the bit pattern: NaN if either is NaN, `toward` if equal (so
/// `nextafter(0.0, -0.0)` is `-0.0`), the smallest subnormal of `toward`'s side from zero,
/// else one ulp step of the magnitude (past the largest finite value gives infinity).
macro_rules! next_after_impl {
    ($x:expr, $y:expr, $F:ty, $U:ty) => {{
        let (x, y): ($F, $F) = ($x, $y);
        if x.is_nan() || y.is_nan() {
            x + y
        } else if x == y {
            y
        } else if x == 0.0 {
            <$F>::from_bits(1).copysign(y)
        } else {
            let b = x.to_bits();
            // Away from zero when moving outward, toward zero otherwise.
            let b = if (y > x) == (x > 0.0) { b + 1 } else { b - 1 };
            <$F>::from_bits(b as $U)
        }
    }};
}

impl RoundTiesEven for f32 {
    fn round_ties_even(self) -> f32 {
        f32::round_ties_even(self)
    }
    fn next_after(self, toward: f32) -> f32 {
        next_after_impl!(self, toward, f32, u32)
    }
}
impl RoundTiesEven for f64 {
    fn round_ties_even(self) -> f64 {
        f64::round_ties_even(self)
    }
    fn next_after(self, toward: f64) -> f64 {
        next_after_impl!(self, toward, f64, u64)
    }
}

/// The vectorised slice kernels of `vmath` for one real dtype.
struct Slices<T> {
    exp: fn(&[T], &mut [T]),
    expm1: fn(&[T], &mut [T]),
    log: fn(&[T], &mut [T]),
    log1p: fn(&[T], &mut [T]),
    sin: fn(&[T], &mut [T]),
    cos: fn(&[T], &mut [T]),
    tanh: fn(&[T], &mut [T]),
    erf: fn(&[T], &mut [T]),
}

const F64_SLICES: Slices<f64> = Slices {
    exp: vmath::exp_f64,
    expm1: vmath::expm1_f64,
    log: vmath::log_f64,
    log1p: vmath::log1p_f64,
    sin: vmath::sin_f64,
    cos: vmath::cos_f64,
    tanh: vmath::tanh_f64,
    erf: vmath::erf_f64,
};

const F32_SLICES: Slices<f32> = Slices {
    exp: vmath::exp_f32,
    expm1: vmath::expm1_f32,
    log: vmath::log_f32,
    log1p: vmath::log1p_f32,
    sin: vmath::sin_f32,
    cos: vmath::cos_f32,
    tanh: vmath::tanh_f32,
    erf: vmath::erf_f32,
};

fn real_unary<T: Element + Float + Erf + RoundTiesEven>(
    e: &CpuEngine,
    name: &str,
    op: UnaryOp,
    x: &Tensor,
    k: &Slices<T>,
) -> Result<Tensor> {
    let s = x.shape();
    let t = TRANSCENDENTAL;
    match op {
        UnaryOp::Neg => map1::<T, T>(e, name, s, x, 1, lift!(|v: T| -v)),
        UnaryOp::Conj => map1::<T, T>(e, name, s, x, 1, lift!(|v: T| v)),
        UnaryOp::Abs => map1::<T, T>(e, name, s, x, 1, lift!(|v: T| v.abs())),
        UnaryOp::Sign => map1::<T, T>(
            e,
            name,
            s,
            x,
            1,
            lift!(|v: T| if v > T::zero() {
                T::one()
            } else if v < T::zero() {
                -T::one()
            } else {
                v
            }),
        ),
        UnaryOp::Exp => map1::<T, T>(e, name, s, x, t, k.exp),
        UnaryOp::Log => map1::<T, T>(e, name, s, x, t, k.log),
        UnaryOp::Sin => map1::<T, T>(e, name, s, x, t, k.sin),
        UnaryOp::Cos => map1::<T, T>(e, name, s, x, t, k.cos),
        UnaryOp::Tanh => map1::<T, T>(e, name, s, x, t, k.tanh),
        UnaryOp::Sqrt => map1::<T, T>(e, name, s, x, 4, lift!(|v: T| v.sqrt())),
        UnaryOp::Rsqrt => map1::<T, T>(e, name, s, x, 4, lift!(|v: T| v.sqrt().recip())),
        UnaryOp::Expm1 => map1::<T, T>(e, name, s, x, t, k.expm1),
        UnaryOp::Log1p => map1::<T, T>(e, name, s, x, t, k.log1p),
        UnaryOp::Erf => map1::<T, T>(e, name, s, x, t, k.erf),
        UnaryOp::Round => map1::<T, T>(e, name, s, x, 1, lift!(RoundTiesEven::round_ties_even)),
        UnaryOp::Floor => map1::<T, T>(e, name, s, x, 1, lift!(|v: T| v.floor())),
        UnaryOp::Ceil => map1::<T, T>(e, name, s, x, 1, lift!(|v: T| v.ceil())),
        UnaryOp::Trunc => map1::<T, T>(e, name, s, x, 1, lift!(|v: T| v.trunc())),
        UnaryOp::Sinh => map1::<T, T>(e, name, s, x, t, lift!(|v: T| v.sinh())),
        UnaryOp::Cosh => map1::<T, T>(e, name, s, x, t, lift!(|v: T| v.cosh())),
        UnaryOp::BitwiseNot => Err(Error::dtype(
            name,
            format!(
                "dtype {} is not supported (integer and bool only)",
                T::DTYPE
            ),
        )),
    }
}

fn complex_unary<T>(e: &CpuEngine, name: &str, op: UnaryOp, x: &Tensor) -> Result<Tensor>
where
    Complex<T>: Element,
    T: Element + Float + RoundTiesEven,
{
    type C<T> = Complex<T>;
    let s = x.shape();
    let t = TRANSCENDENTAL;
    match op {
        UnaryOp::Neg => map1::<C<T>, C<T>>(e, name, s, x, 1, lift!(|v: C<T>| -v)),
        UnaryOp::Conj => map1::<C<T>, C<T>>(e, name, s, x, 1, lift!(|v: C<T>| v.conj())),
        UnaryOp::Abs => map1::<C<T>, T>(e, name, s, x, 4, lift!(|v: C<T>| v.norm())),
        UnaryOp::Sign => map1::<C<T>, C<T>>(e, name, s, x, 4, lift!(csign)),
        UnaryOp::Exp => map1::<C<T>, C<T>>(e, name, s, x, t, lift!(cexp)),
        UnaryOp::Log => map1::<C<T>, C<T>>(e, name, s, x, t, lift!(clog)),
        UnaryOp::Sin => map1::<C<T>, C<T>>(e, name, s, x, t, lift!(csin)),
        UnaryOp::Cos => map1::<C<T>, C<T>>(e, name, s, x, t, lift!(ccos)),
        UnaryOp::Tanh => map1::<C<T>, C<T>>(e, name, s, x, t, lift!(ctanh)),
        UnaryOp::Sqrt => map1::<C<T>, C<T>>(e, name, s, x, t, lift!(csqrt)),
        UnaryOp::Rsqrt => map1::<C<T>, C<T>>(
            e,
            name,
            s,
            x,
            t,
            lift!(|v: C<T>| cdiv(C::new(T::one(), T::zero()), csqrt(v))),
        ),
        UnaryOp::Expm1 => map1::<C<T>, C<T>>(e, name, s, x, t, lift!(cexpm1)),
        UnaryOp::Log1p => map1::<C<T>, C<T>>(e, name, s, x, t, lift!(clog1p)),
        UnaryOp::Erf => Err(Error::dtype(name, "erf is defined for real dtypes only")),
        UnaryOp::Round => map1::<C<T>, C<T>>(
            e,
            name,
            s,
            x,
            1,
            lift!(|v: C<T>| C::new(v.re.round_ties_even(), v.im.round_ties_even())),
        ),
        UnaryOp::Sinh => map1::<C<T>, C<T>>(e, name, s, x, t, lift!(csinh)),
        UnaryOp::Cosh => map1::<C<T>, C<T>>(e, name, s, x, t, lift!(ccosh)),
        UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Trunc | UnaryOp::BitwiseNot => Err(Error::dtype(
            name,
            format!("dtype {} is not supported", <C<T>>::DTYPE),
        )),
    }
}

macro_rules! int_unary {
    ($T:ty, $e:expr, $name:expr, $op:expr, $x:expr) => {{
        let s = $x.shape();
        match $op {
            UnaryOp::Neg => map1::<$T, $T>($e, $name, s, $x, 1, lift!(|v: $T| v.wrapping_neg())),
            UnaryOp::Conj => map1::<$T, $T>($e, $name, s, $x, 1, lift!(|v: $T| v)),
            UnaryOp::Abs => map1::<$T, $T>($e, $name, s, $x, 1, lift!(|v: $T| v.wrapping_abs())),
            UnaryOp::Sign => map1::<$T, $T>($e, $name, s, $x, 1, lift!(|v: $T| v.signum())),
            UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Trunc => {
                map1::<$T, $T>($e, $name, s, $x, 1, lift!(|v: $T| v))
            }
            UnaryOp::BitwiseNot => map1::<$T, $T>($e, $name, s, $x, 1, lift!(|v: $T| !v)),
            _ => Err(Error::dtype(
                $name,
                format!("dtype {} is not supported", <$T>::DTYPE),
            )),
        }
    }};
}

/// Elementwise unary op.
// One call site (`CpuEngine::execute`): inlined there, as the tiny-op path measured.
#[inline]
pub(crate) fn unary(e: &CpuEngine, op: UnaryOp, name: &str, x: &Tensor) -> Result<Tensor> {
    match x.dtype() {
        DType::F32 => real_unary::<f32>(e, name, op, x, &F32_SLICES),
        DType::F64 => real_unary::<f64>(e, name, op, x, &F64_SLICES),
        DType::C32 => complex_unary::<f32>(e, name, op, x),
        DType::C64 => complex_unary::<f64>(e, name, op, x),
        DType::I32 => int_unary!(i32, e, name, op, x),
        DType::I64 => int_unary!(i64, e, name, op, x),
        DType::Bool => match op {
            UnaryOp::Conj | UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Trunc => {
                map1::<bool, bool>(e, name, x.shape(), x, 1, lift!(|v: bool| v))
            }
            UnaryOp::BitwiseNot => {
                map1::<bool, bool>(e, name, x.shape(), x, 1, lift!(|v: bool| !v))
            }
            UnaryOp::Neg
            | UnaryOp::Abs
            | UnaryOp::Sign
            | UnaryOp::Exp
            | UnaryOp::Log
            | UnaryOp::Sin
            | UnaryOp::Cos
            | UnaryOp::Tanh
            | UnaryOp::Sqrt
            | UnaryOp::Rsqrt
            | UnaryOp::Expm1
            | UnaryOp::Log1p
            | UnaryOp::Erf
            | UnaryOp::Round
            | UnaryOp::Sinh
            | UnaryOp::Cosh => Err(Error::dtype(name, "dtype bool is not supported")),
        },
    }
}

/// The first element of `t` satisfying `pred`, if any.
fn find_elem<T: Element>(t: &Tensor, pred: impl Fn(T) -> bool) -> Option<T> {
    let mut hit = None;
    let base = t.storage().as_ptr() as *const T;
    t.for_each_offset(|off| {
        if hit.is_none() {
            // SAFETY: offsets of the view are in bounds.
            let v = unsafe { *base.offset(off) };
            if pred(v) {
                hit = Some(v);
            }
        }
    });
    hit
}

/// `pow` on real slices (`vmath`'s vectorised kernels).
trait VPow: Sized {
    fn pow_slice(x: &[Self], y: &[Self], out: &mut [Self]);
}
impl VPow for f32 {
    fn pow_slice(x: &[f32], y: &[f32], out: &mut [f32]) {
        vmath::pow_f32(x, y, out)
    }
}
impl VPow for f64 {
    fn pow_slice(x: &[f64], y: &[f64], out: &mut [f64]) {
        vmath::pow_f64(x, y, out)
    }
}

#[inline]
fn real_binary<T: Element + Float + RoundTiesEven + VPow>(
    e: &CpuEngine,
    name: &str,
    op: BinaryOp,
    shape: &[usize],
    x: &Tensor,
    y: &Tensor,
) -> Result<Tensor> {
    match op {
        BinaryOp::Add => map2::<T, T, T>(e, name, shape, x, y, 1, lift2!(|a: T, b: T| a + b)),
        BinaryOp::Sub => map2::<T, T, T>(e, name, shape, x, y, 1, lift2!(|a: T, b: T| a - b)),
        BinaryOp::Mul => map2::<T, T, T>(e, name, shape, x, y, 1, lift2!(|a: T, b: T| a * b)),
        BinaryOp::Div => map2::<T, T, T>(e, name, shape, x, y, 2, lift2!(|a: T, b: T| a / b)),
        BinaryOp::Rem => map2::<T, T, T>(e, name, shape, x, y, 8, lift2!(|a: T, b: T| a % b)),
        BinaryOp::Pow => map2::<T, T, T>(e, name, shape, x, y, TRANSCENDENTAL, T::pow_slice),
        BinaryOp::Maximum => map2::<T, T, T>(e, name, shape, x, y, 1, lift2!(fmax_nan)),
        BinaryOp::Minimum => map2::<T, T, T>(e, name, shape, x, y, 1, lift2!(fmin_nan)),
        BinaryOp::Copysign => {
            map2::<T, T, T>(e, name, shape, x, y, 1, lift2!(|a: T, b: T| a.copysign(b)))
        }
        BinaryOp::Nextafter => {
            map2::<T, T, T>(e, name, shape, x, y, 1, lift2!(RoundTiesEven::next_after))
        }
        BinaryOp::BitwiseAnd
        | BinaryOp::BitwiseOr
        | BinaryOp::BitwiseXor
        | BinaryOp::ShiftLeft
        | BinaryOp::ShiftRightArithmetic => Err(Error::dtype(
            name,
            format!("dtype {} is not supported (integer dtypes only)", T::DTYPE),
        )),
    }
}

fn complex_binary<T: Float + Element>(
    e: &CpuEngine,
    name: &str,
    op: BinaryOp,
    shape: &[usize],
    x: &Tensor,
    y: &Tensor,
) -> Result<Tensor>
where
    Complex<T>: Element,
{
    type C<T> = Complex<T>;
    let t = TRANSCENDENTAL;
    match op {
        BinaryOp::Add => map2::<C<T>, C<T>, C<T>>(e, name, shape, x, y, 2, lift2!(|a, b| a + b)),
        BinaryOp::Sub => map2::<C<T>, C<T>, C<T>>(e, name, shape, x, y, 2, lift2!(|a, b| a - b)),
        BinaryOp::Mul => map2::<C<T>, C<T>, C<T>>(e, name, shape, x, y, 4, lift2!(|a, b| a * b)),
        BinaryOp::Div => map2::<C<T>, C<T>, C<T>>(e, name, shape, x, y, 8, lift2!(cdiv)),
        BinaryOp::Pow => map2::<C<T>, C<T>, C<T>>(e, name, shape, x, y, t, lift2!(cpow)),
        BinaryOp::Rem
        | BinaryOp::Maximum
        | BinaryOp::Minimum
        | BinaryOp::BitwiseAnd
        | BinaryOp::BitwiseOr
        | BinaryOp::BitwiseXor
        | BinaryOp::ShiftLeft
        | BinaryOp::ShiftRightArithmetic
        | BinaryOp::Copysign
        | BinaryOp::Nextafter => Err(Error::dtype(
            name,
            format!("dtype {} is not supported", <C<T>>::DTYPE),
        )),
    }
}

macro_rules! int_binary {
    ($T:ty, $e:expr, $name:expr, $op:expr, $shape:expr, $x:expr, $y:expr) => {{
        let (e, name, shape, x, y) = ($e, $name, $shape, $x, $y);
        let nonempty = shape.iter().all(|&d| d > 0);
        match $op {
            BinaryOp::Add => map2::<$T, $T, $T>(e, name, shape, x, y, 1, lift2!(|a: $T, b: $T| a.wrapping_add(b))),
            BinaryOp::Sub => map2::<$T, $T, $T>(e, name, shape, x, y, 1, lift2!(|a: $T, b: $T| a.wrapping_sub(b))),
            BinaryOp::Mul => map2::<$T, $T, $T>(e, name, shape, x, y, 1, lift2!(|a: $T, b: $T| a.wrapping_mul(b))),
            BinaryOp::Div | BinaryOp::Rem => {
                if nonempty && find_elem::<$T>(y, |b| b == 0).is_some() {
                    return Err(Error::zero_division(name));
                }
                if $op == BinaryOp::Div {
                    map2::<$T, $T, $T>(e, name, shape, x, y, 4, lift2!(|a: $T, b: $T| a.wrapping_div(if b == 0 { 1 } else { b })))
                } else {
                    map2::<$T, $T, $T>(e, name, shape, x, y, 4, lift2!(|a: $T, b: $T| a.wrapping_rem(if b == 0 { 1 } else { b })))
                }
            }
            BinaryOp::Pow => {
                if let Some(b) = find_elem::<$T>(y, |b| b < 0).filter(|_| nonempty) {
                    return Err(Error::value(name, format!("integers to negative integer powers are not allowed (exponent {b})")));
                }
                map2::<$T, $T, $T>(e, name, shape, x, y, 8, lift2!(|a: $T, b: $T| {
                    let mut base = a;
                    let mut n = b;
                    let mut acc: $T = 1;
                    while n > 0 {
                        if n & 1 == 1 {
                            acc = acc.wrapping_mul(base);
                        }
                        base = base.wrapping_mul(base);
                        n >>= 1;
                    }
                    acc
                }))
            }
            BinaryOp::Maximum => map2::<$T, $T, $T>(e, name, shape, x, y, 1, lift2!(|a: $T, b: $T| a.max(b))),
            BinaryOp::Minimum => map2::<$T, $T, $T>(e, name, shape, x, y, 1, lift2!(|a: $T, b: $T| a.min(b))),
            BinaryOp::BitwiseAnd => map2::<$T, $T, $T>(e, name, shape, x, y, 1, lift2!(|a: $T, b: $T| a & b)),
            BinaryOp::BitwiseOr => map2::<$T, $T, $T>(e, name, shape, x, y, 1, lift2!(|a: $T, b: $T| a | b)),
            BinaryOp::BitwiseXor => map2::<$T, $T, $T>(e, name, shape, x, y, 1, lift2!(|a: $T, b: $T| a ^ b)),
            // NumPy's results for counts outside [0, bits): the count read as unsigned is
            // past the width, so every bit is shifted out (0, or the sign for `>>`).
            BinaryOp::ShiftLeft => map2::<$T, $T, $T>(e, name, shape, x, y, 1, lift2!(|a: $T, b: $T| {
                if b < 0 || b >= <$T>::BITS as $T { 0 } else { a << b }
            })),
            BinaryOp::ShiftRightArithmetic => map2::<$T, $T, $T>(e, name, shape, x, y, 1, lift2!(|a: $T, b: $T| {
                if b < 0 || b >= <$T>::BITS as $T { if a < 0 { -1 } else { 0 } } else { a >> b }
            })),
            BinaryOp::Copysign | BinaryOp::Nextafter => Err(Error::dtype(
                name,
                format!("dtype {} is not supported (real float dtypes only)", <$T>::DTYPE),
            )),
        }
    }};
}

/// Elementwise binary op; operands already share `dtype`.
// One call site (`CpuEngine::execute`): inlined there, as the tiny-op path measured.
#[inline]
pub(crate) fn binary(
    e: &CpuEngine,
    op: BinaryOp,
    name: &str,
    shape: &[usize],
    x: &Tensor,
    y: &Tensor,
) -> Result<Tensor> {
    match x.dtype() {
        DType::F32 => real_binary::<f32>(e, name, op, shape, x, y),
        DType::F64 => real_binary::<f64>(e, name, op, shape, x, y),
        DType::C32 => complex_binary::<f32>(e, name, op, shape, x, y),
        DType::C64 => complex_binary::<f64>(e, name, op, shape, x, y),
        DType::I32 => int_binary!(i32, e, name, op, shape, x, y),
        DType::I64 => int_binary!(i64, e, name, op, shape, x, y),
        DType::Bool => match op {
            BinaryOp::Add | BinaryOp::Maximum | BinaryOp::BitwiseOr => {
                map2::<bool, bool, bool>(e, name, shape, x, y, 1, lift2!(|a: bool, b: bool| a | b))
            }
            BinaryOp::Mul | BinaryOp::Minimum | BinaryOp::BitwiseAnd => {
                map2::<bool, bool, bool>(e, name, shape, x, y, 1, lift2!(|a: bool, b: bool| a & b))
            }
            BinaryOp::BitwiseXor => {
                map2::<bool, bool, bool>(e, name, shape, x, y, 1, lift2!(|a: bool, b: bool| a ^ b))
            }
            BinaryOp::Sub
            | BinaryOp::Div
            | BinaryOp::Rem
            | BinaryOp::Pow
            | BinaryOp::ShiftLeft
            | BinaryOp::ShiftRightArithmetic
            | BinaryOp::Copysign
            | BinaryOp::Nextafter => Err(Error::dtype(name, "dtype bool is not supported")),
        },
    }
}

fn ordered_compare<T: Element + PartialOrd>(
    e: &CpuEngine,
    name: &str,
    dir: CompareDir,
    shape: &[usize],
    x: &Tensor,
    y: &Tensor,
) -> Result<Tensor> {
    match dir {
        CompareDir::Eq => map2::<T, T, bool>(e, name, shape, x, y, 1, lift2!(|a: T, b: T| a == b)),
        CompareDir::Ne => map2::<T, T, bool>(e, name, shape, x, y, 1, lift2!(|a: T, b: T| a != b)),
        CompareDir::Lt => map2::<T, T, bool>(e, name, shape, x, y, 1, lift2!(|a: T, b: T| a < b)),
        CompareDir::Le => map2::<T, T, bool>(e, name, shape, x, y, 1, lift2!(|a: T, b: T| a <= b)),
        CompareDir::Gt => map2::<T, T, bool>(e, name, shape, x, y, 1, lift2!(|a: T, b: T| a > b)),
        CompareDir::Ge => map2::<T, T, bool>(e, name, shape, x, y, 1, lift2!(|a: T, b: T| a >= b)),
    }
}

fn eq_compare<T: Element>(
    e: &CpuEngine,
    name: &str,
    dir: CompareDir,
    shape: &[usize],
    x: &Tensor,
    y: &Tensor,
) -> Result<Tensor> {
    match dir {
        CompareDir::Eq => map2::<T, T, bool>(e, name, shape, x, y, 1, lift2!(|a: T, b: T| a == b)),
        CompareDir::Ne => map2::<T, T, bool>(e, name, shape, x, y, 1, lift2!(|a: T, b: T| a != b)),
        CompareDir::Lt | CompareDir::Le | CompareDir::Gt | CompareDir::Ge => Err(Error::dtype(
            name,
            format!("direction {} needs ordered operands", dir.name()),
        )),
    }
}

/// `compare(x, y, dir)`; operands already share a dtype.
// One call site (`CpuEngine::execute`): inlined there, as the tiny-op path measured.
#[inline]
pub(crate) fn compare(
    e: &CpuEngine,
    dir: CompareDir,
    name: &str,
    shape: &[usize],
    x: &Tensor,
    y: &Tensor,
) -> Result<Tensor> {
    match x.dtype() {
        DType::Bool => ordered_compare::<bool>(e, name, dir, shape, x, y),
        DType::I32 => ordered_compare::<i32>(e, name, dir, shape, x, y),
        DType::I64 => ordered_compare::<i64>(e, name, dir, shape, x, y),
        DType::F32 => ordered_compare::<f32>(e, name, dir, shape, x, y),
        DType::F64 => ordered_compare::<f64>(e, name, dir, shape, x, y),
        DType::C32 => eq_compare::<Complex32>(e, name, dir, shape, x, y),
        DType::C64 => eq_compare::<Complex64>(e, name, dir, shape, x, y),
    }
}

/// `select(pred, on_true, on_false)`.
// One call site (`CpuEngine::execute`): inlined there, as the tiny-op path measured.
#[inline]
pub(crate) fn select(
    e: &CpuEngine,
    name: &str,
    shape: &[usize],
    p: &Tensor,
    a: &Tensor,
    b: &Tensor,
) -> Result<Tensor> {
    dispatch_dtype!(a.dtype(), T => map3::<bool, T, T, T>(e, name, shape, p, a, b, 1, |ps, xs, ys, os| {
        for (((o, &c), &t), &f) in os.iter_mut().zip(ps).zip(xs).zip(ys) {
            *o = if c { t } else { f };
        }
    }))
}

/// `clamp(x, lo, hi)` = `min(max(x, lo), hi)`, NaN-propagating.
// One call site (`CpuEngine::execute`): inlined there, as the tiny-op path measured.
#[inline]
pub(crate) fn clamp(
    e: &CpuEngine,
    name: &str,
    shape: &[usize],
    x: &Tensor,
    lo: &Tensor,
    hi: &Tensor,
) -> Result<Tensor> {
    macro_rules! ordered {
        ($T:ty, $max:expr, $min:expr) => {
            map3::<$T, $T, $T, $T>(e, name, shape, x, lo, hi, 1, |xs, ls, hs, os| {
                for (((o, &v), &l), &h) in os.iter_mut().zip(xs).zip(ls).zip(hs) {
                    *o = $min($max(v, l), h);
                }
            })
        };
    }
    match x.dtype() {
        DType::F32 => ordered!(f32, fmax_nan, fmin_nan),
        DType::F64 => ordered!(f64, fmax_nan, fmin_nan),
        DType::I32 => ordered!(i32, Ord::max, Ord::min),
        DType::I64 => ordered!(i64, Ord::max, Ord::min),
        DType::Bool => ordered!(bool, Ord::max, Ord::min),
        d @ (DType::C32 | DType::C64) => {
            Err(Error::dtype(name, format!("dtype {d} is not ordered")))
        }
    }
}

/// Lossy element conversion (`cast`): float→int truncates toward zero (saturating), complex→real
/// drops the imaginary part, nonzero→`true`.
pub(crate) trait CastFrom<A> {
    fn cast_from(a: A) -> Self;
}

macro_rules! cast_real {
    ($($A:ty),*) => {$(
        impl CastFrom<$A> for bool { #[inline(always)] fn cast_from(a: $A) -> bool { a != (0 as $A) } }
        impl CastFrom<$A> for i32 { #[inline(always)] fn cast_from(a: $A) -> i32 { a as i32 } }
        impl CastFrom<$A> for i64 { #[inline(always)] fn cast_from(a: $A) -> i64 { a as i64 } }
        impl CastFrom<$A> for f32 { #[inline(always)] fn cast_from(a: $A) -> f32 { a as f32 } }
        impl CastFrom<$A> for f64 { #[inline(always)] fn cast_from(a: $A) -> f64 { a as f64 } }
        impl CastFrom<$A> for Complex32 { #[inline(always)] fn cast_from(a: $A) -> Complex32 { Complex32::new(a as f32, 0.0) } }
        impl CastFrom<$A> for Complex64 { #[inline(always)] fn cast_from(a: $A) -> Complex64 { Complex64::new(a as f64, 0.0) } }
    )*};
}
cast_real!(i32, i64, f32, f64);

macro_rules! cast_bool_complex {
    ($($T:ty => $e:expr),*) => {$(
        impl CastFrom<bool> for $T { #[inline(always)] fn cast_from(a: bool) -> $T { let f: fn(bool) -> $T = $e; f(a) } }
    )*};
}
cast_bool_complex!(
    bool => |a| a,
    i32 => |a| a as i32,
    i64 => |a| a as i64,
    f32 => |a| u8::from(a) as f32,
    f64 => |a| u8::from(a) as f64,
    Complex32 => |a| Complex32::new(u8::from(a) as f32, 0.0),
    Complex64 => |a| Complex64::new(u8::from(a) as f64, 0.0)
);

macro_rules! cast_complex {
    ($($C:ty),*) => {$(
        impl CastFrom<$C> for bool { #[inline(always)] fn cast_from(a: $C) -> bool { a.re != 0.0 || a.im != 0.0 } }
        impl CastFrom<$C> for i32 { #[inline(always)] fn cast_from(a: $C) -> i32 { a.re as i32 } }
        impl CastFrom<$C> for i64 { #[inline(always)] fn cast_from(a: $C) -> i64 { a.re as i64 } }
        impl CastFrom<$C> for f32 { #[inline(always)] fn cast_from(a: $C) -> f32 { a.re as f32 } }
        impl CastFrom<$C> for f64 { #[inline(always)] fn cast_from(a: $C) -> f64 { a.re as f64 } }
        impl CastFrom<$C> for Complex32 { #[inline(always)] fn cast_from(a: $C) -> Complex32 { Complex32::new(a.re as f32, a.im as f32) } }
        impl CastFrom<$C> for Complex64 { #[inline(always)] fn cast_from(a: $C) -> Complex64 { Complex64::new(a.re as f64, a.im as f64) } }
    )*};
}
cast_complex!(Complex32, Complex64);

fn cast_to<A: Element, O: Element + CastFrom<A>>(
    e: &CpuEngine,
    name: &str,
    x: &Tensor,
) -> Result<Tensor> {
    map1::<A, O>(e, name, x.shape(), x, 1, lift!(|v: A| O::cast_from(v)))
}

/// Convert (or cast) `x` to `to`; also used to materialise a strided view (`to == dtype`).
pub(crate) fn cast(e: &CpuEngine, name: &str, x: &Tensor, to: DType) -> Result<Tensor> {
    if to == x.dtype() {
        if let Some(t) = crate::map::transpose_copy(e, name, x)? {
            return Ok(t);
        }
    }
    dispatch_dtype!(x.dtype(), A => dispatch_dtype!(to, O => cast_to::<A, O>(e, name, x)))
}

//! Rules of the unary, binary, ternary and conversion families (JAX `lax` rules; complex
//! VJPs are `ȳ·conj(f'(z))` under tenferro's Hermitian convention).

use super::ops::{
    add, add_opt, cast, compare, conj, div, fit, full, mul, neg, pow, scalar, select, sub, un,
    zeros_like,
};
use super::{Deriv, Partials};
use crate::{Ctx, Var};
use tenferro_ops::{BinaryOp, CompareDir, Op, UnaryOp};
use tenferro_tensor::Result;

// ---------------------------------------------------------------------------------------------
// Unary: each holomorphic op's row names its derivative `f'(x)` given `y = f(x)` ([`Deriv`]).
// ---------------------------------------------------------------------------------------------

/// `neg' = -1`.
pub fn neg_deriv(_ctx: &Ctx<'_>, x: &Var, _y: &Var) -> Result<Var> {
    scalar(-1.0, 0.0, x.value.dtype())
}

/// `exp' = exp = y`.
pub fn exp_deriv(_ctx: &Ctx<'_>, _x: &Var, y: &Var) -> Result<Var> {
    Ok(y.clone())
}

/// `log' = 1/x`.
pub fn log_deriv(ctx: &Ctx<'_>, x: &Var, _y: &Var) -> Result<Var> {
    div(ctx, &scalar(1.0, 0.0, x.value.dtype())?, x)
}

/// `sin' = cos`.
pub fn sin_deriv(ctx: &Ctx<'_>, x: &Var, _y: &Var) -> Result<Var> {
    un(ctx, UnaryOp::Cos, x)
}

/// `cos' = -sin`.
pub fn cos_deriv(ctx: &Ctx<'_>, x: &Var, _y: &Var) -> Result<Var> {
    neg(ctx, &un(ctx, UnaryOp::Sin, x)?)
}

/// `tanh' = sech² x = 1/cosh² x`, from `x`: `1 - y²` cancels for large `|x|` (4 % off at
/// `x = 18`, exactly 0 from `19.5` in float64, where `sech² x` is still ~1e-17).
pub fn tanh_deriv(ctx: &Ctx<'_>, x: &Var, _y: &Var) -> Result<Var> {
    let one = scalar(1.0, 0.0, x.value.dtype())?;
    let c = un(ctx, UnaryOp::Cosh, x)?;
    div(ctx, &one, &mul(ctx, &c, &c)?)
}

/// `sqrt' = 1/(2y)`, as `0.5/y`.
pub fn sqrt_deriv(ctx: &Ctx<'_>, x: &Var, y: &Var) -> Result<Var> {
    div(ctx, &scalar(0.5, 0.0, x.value.dtype())?, y)
}

/// `d x^(-1/2) = -y / (2x)`.
pub fn rsqrt_deriv(ctx: &Ctx<'_>, x: &Var, y: &Var) -> Result<Var> {
    let two = scalar(2.0, 0.0, x.value.dtype())?;
    neg(ctx, &div(ctx, y, &mul(ctx, &two, x)?)?)
}

/// `expm1' = exp x` (not `y + 1`, which cancels for `x` below about -1: 0 from `x ≈ -37` in
/// float64).
pub fn expm1_deriv(ctx: &Ctx<'_>, x: &Var, _y: &Var) -> Result<Var> {
    un(ctx, UnaryOp::Exp, x)
}

/// `log1p' = 1/(1 + x)`.
pub fn log1p_deriv(ctx: &Ctx<'_>, x: &Var, _y: &Var) -> Result<Var> {
    let one = scalar(1.0, 0.0, x.value.dtype())?;
    div(ctx, &one, &add(ctx, &one, x)?)
}

/// `erf' = 2/√π · exp(-x²)`.
pub fn erf_deriv(ctx: &Ctx<'_>, x: &Var, _y: &Var) -> Result<Var> {
    mul(
        ctx,
        &scalar(std::f64::consts::FRAC_2_SQRT_PI, 0.0, x.value.dtype())?,
        &un(ctx, UnaryOp::Exp, &neg(ctx, &mul(ctx, x, x)?)?)?,
    )
}

/// `sinh' = cosh`.
pub fn sinh_deriv(ctx: &Ctx<'_>, x: &Var, _y: &Var) -> Result<Var> {
    un(ctx, UnaryOp::Cosh, x)
}

/// `cosh' = sinh`.
pub fn cosh_deriv(ctx: &Ctx<'_>, x: &Var, _y: &Var) -> Result<Var> {
    un(ctx, UnaryOp::Sinh, x)
}

/// JVP of a holomorphic unary op: `ẋ·f'(x)`.
pub(super) fn holomorphic_jvp(
    ctx: &Ctx<'_>,
    deriv: Deriv,
    inputs: &[Var],
    out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    let Some(t) = &ts[0] else { return Ok(None) };
    Ok(Some(mul(ctx, t, &deriv(ctx, &inputs[0], out)?)?))
}

/// VJP of a holomorphic unary op: `ȳ·conj(f'(x))`.
pub(super) fn holomorphic_vjp(
    ctx: &Ctx<'_>,
    deriv: Deriv,
    inputs: &[Var],
    out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let x = &inputs[0];
    let g = mul(ctx, ct, &conj(ctx, &deriv(ctx, x, out)?)?)?;
    Ok(vec![Some(fit(ctx, &g, x)?)])
}

/// JVP of `conj`: the conjugated tangent.
pub fn conj_jvp(
    ctx: &Ctx<'_>,
    _op: &Op,
    _inputs: &[Var],
    _out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    let Some(t) = &ts[0] else { return Ok(None) };
    Ok(Some(conj(ctx, t)?))
}

/// VJP of `conj`: the conjugated cotangent.
pub fn conj_vjp(
    ctx: &Ctx<'_>,
    _op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let g = conj(ctx, ct)?;
    Ok(vec![Some(fit(ctx, &g, &inputs[0])?)])
}

/// `z / |z|` (0 at 0) from differentiable primitives; `r = |z|`.
fn complex_sign(ctx: &Ctx<'_>, z: &Var, r: &Var) -> Result<Var> {
    let d = r.value.dtype();
    let zero = scalar(0.0, 0.0, d)?;
    let is_zero = compare(ctx, CompareDir::Eq, r, &zero)?;
    let one = full(ctx, 1.0, d, r.value.shape())?;
    let safe = select(ctx, &is_zero, &one, r)?;
    div(ctx, z, &safe)
}

/// JVP of `abs`: `ẋ·sign(x)` (real), `Re(conj(sign z)·ż)` (complex; `abs'(0) = 0`).
pub fn abs_jvp(
    ctx: &Ctx<'_>,
    _op: &Op,
    inputs: &[Var],
    out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    let Some(t) = &ts[0] else { return Ok(None) };
    let x = &inputs[0];
    Ok(Some(if x.value.dtype().is_complex() {
        // d|z| = Re(conj(sign z)·dz)
        let s = complex_sign(ctx, x, out)?;
        cast(ctx, &mul(ctx, &conj(ctx, &s)?, t)?, out.value.dtype())?
    } else {
        mul(ctx, t, &un(ctx, UnaryOp::Sign, x)?)?
    }))
}

/// VJP of `abs`: `ȳ·sign(z)` (real and complex alike; `abs'(0) = 0`).
pub fn abs_vjp(
    ctx: &Ctx<'_>,
    _op: &Op,
    inputs: &[Var],
    out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let x = &inputs[0];
    let g = if x.value.dtype().is_complex() {
        // For complex z, sign(z) = z/|z| is built from differentiable ops so that second
        // derivatives see its dependence on z.
        mul(ctx, ct, &complex_sign(ctx, x, out)?)?
    } else {
        mul(ctx, ct, &un(ctx, UnaryOp::Sign, x)?)?
    };
    Ok(vec![Some(fit(ctx, &g, x)?)])
}

// ---------------------------------------------------------------------------------------------
// Binary: each op's row names its partials `(∂out/∂x, ∂out/∂y)` at the broadcast shape, `None`
// marking a constant 1 ([`Partials`]).
// ---------------------------------------------------------------------------------------------

/// `add`: `(1, 1)`.
pub fn add_partials(
    _ctx: &Ctx<'_>,
    _x: &Var,
    _y: &Var,
    _out: &Var,
) -> Result<(Option<Var>, Option<Var>)> {
    Ok((None, None))
}

/// `sub`: `(1, -1)`.
pub fn sub_partials(
    _ctx: &Ctx<'_>,
    _x: &Var,
    _y: &Var,
    out: &Var,
) -> Result<(Option<Var>, Option<Var>)> {
    Ok((None, Some(scalar(-1.0, 0.0, out.value.dtype())?)))
}

/// `mul`: `(y, x)`.
pub fn mul_partials(
    _ctx: &Ctx<'_>,
    x: &Var,
    y: &Var,
    _out: &Var,
) -> Result<(Option<Var>, Option<Var>)> {
    Ok((Some(y.clone()), Some(x.clone())))
}

/// `div`: `(1/y, -out/y)`.
pub fn div_partials(
    ctx: &Ctx<'_>,
    _x: &Var,
    y: &Var,
    out: &Var,
) -> Result<(Option<Var>, Option<Var>)> {
    Ok((
        Some(div(ctx, &scalar(1.0, 0.0, out.value.dtype())?, y)?),
        Some(neg(ctx, &div(ctx, out, y)?)?),
    ))
}

/// `rem = x - y·trunc(x/y)`: `∂x = 1`, `∂y = -trunc(x/y) = (out - x)/y`.
pub fn rem_partials(
    ctx: &Ctx<'_>,
    x: &Var,
    y: &Var,
    out: &Var,
) -> Result<(Option<Var>, Option<Var>)> {
    Ok((None, Some(div(ctx, &sub(ctx, out, x)?, y)?)))
}

/// `pow`: `∂x = y·x^(y-1)`, 0 where `y == 0` (so `0^0` has derivative 0); `∂y = log(x)·out`
/// where `x > 0` (real) or `x != 0` (complex), else 0.
pub fn pow_partials(
    ctx: &Ctx<'_>,
    x: &Var,
    y: &Var,
    out: &Var,
) -> Result<(Option<Var>, Option<Var>)> {
    let d = out.value.dtype();
    let shape = out.value.shape();
    let zero = scalar(0.0, 0.0, d)?;
    let ym1 = sub(ctx, y, &scalar(1.0, 0.0, d)?)?;
    let dx = mul(ctx, y, &pow(ctx, x, &ym1)?)?;
    let y_zero = compare(ctx, CompareDir::Eq, y, &zero)?;
    let dx = select(ctx, &y_zero, &full(ctx, 0.0, d, shape)?, &dx)?;
    let safe = if d.is_complex() {
        compare(ctx, CompareDir::Ne, x, &zero)?
    } else {
        compare(ctx, CompareDir::Gt, x, &zero)?
    };
    let one = full(ctx, 1.0, d, shape)?;
    let xs = select(ctx, &safe, &add(ctx, x, &full(ctx, 0.0, d, shape)?)?, &one)?;
    let dy = mul(ctx, &un(ctx, UnaryOp::Log, &xs)?, out)?;
    let dy = select(ctx, &safe, &dy, &full(ctx, 0.0, d, shape)?)?;
    Ok((Some(dx), Some(dy)))
}

/// Partials of `maximum` (`win = Gt`) and `minimum` (`win = Lt`): 1 to the winner, ties split
/// ½/½ (JAX).
fn extremum_partials(
    ctx: &Ctx<'_>,
    win: CompareDir,
    x: &Var,
    y: &Var,
    out: &Var,
) -> Result<(Option<Var>, Option<Var>)> {
    let d = out.value.dtype();
    let shape = out.value.shape();
    let win = compare(ctx, win, x, y)?;
    let tie = compare(ctx, CompareDir::Eq, x, y)?;
    let (one, half, zero) = (
        full(ctx, 1.0, d, shape)?,
        full(ctx, 0.5, d, shape)?,
        full(ctx, 0.0, d, shape)?,
    );
    let dx = select(ctx, &win, &one, &select(ctx, &tie, &half, &zero)?)?;
    let dy = sub(ctx, &one, &dx)?;
    Ok((Some(dx), Some(dy)))
}

/// `maximum`: 1 to the larger operand, ½/½ at ties.
pub fn maximum_partials(
    ctx: &Ctx<'_>,
    x: &Var,
    y: &Var,
    out: &Var,
) -> Result<(Option<Var>, Option<Var>)> {
    extremum_partials(ctx, CompareDir::Gt, x, y, out)
}

/// `minimum`: 1 to the smaller operand, ½/½ at ties.
pub fn minimum_partials(
    ctx: &Ctx<'_>,
    x: &Var,
    y: &Var,
    out: &Var,
) -> Result<(Option<Var>, Option<Var>)> {
    extremum_partials(ctx, CompareDir::Lt, x, y, out)
}

/// `copysign(x, y) = |x|·s(y)`: `∂x = s(x)·s(y)` with `s(v) = copysign(1, v)` (the sign
/// bits, so `±0` count as `±1`), `∂y = 0` (piecewise constant in `y`).
pub fn copysign_partials(
    ctx: &Ctx<'_>,
    x: &Var,
    y: &Var,
    out: &Var,
) -> Result<(Option<Var>, Option<Var>)> {
    let d = out.value.dtype();
    let shape = out.value.shape();
    let one = full(ctx, 1.0, d, shape)?;
    let sx = ctx.apply(Op::Binary(BinaryOp::Copysign), &[&one, x])?;
    let sy = ctx.apply(Op::Binary(BinaryOp::Copysign), &[&one, y])?;
    Ok((Some(mul(ctx, &sx, &sy)?), Some(full(ctx, 0.0, d, shape)?)))
}

/// `nextafter(x, y) = x ± ulp`: `∂x = 1`, `∂y = 0` (a step function of `y`), as the
/// derivative of `x` plus a piecewise constant.
pub fn nextafter_partials(
    ctx: &Ctx<'_>,
    _x: &Var,
    _y: &Var,
    out: &Var,
) -> Result<(Option<Var>, Option<Var>)> {
    let zero = full(ctx, 0.0, out.value.dtype(), out.value.shape())?;
    Ok((None, Some(zero)))
}

/// JVP of an elementwise binary op from its partials: `ẋ·∂x + ẏ·∂y`, broadcast to the output.
pub(super) fn partials_jvp(
    ctx: &Ctx<'_>,
    partials: Partials,
    inputs: &[Var],
    out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    let (x, y) = (&inputs[0], &inputs[1]);
    let (dx, dy) = partials(ctx, x, y, out)?;
    let term = |t: &Option<Var>, d: Option<Var>| -> Result<Option<Var>> {
        match (t, d) {
            (None, _) => Ok(None),
            (Some(t), None) => Ok(Some(t.clone())),
            (Some(t), Some(d)) => Ok(Some(mul(ctx, t, &d)?)),
        }
    };
    let r = add_opt(ctx, term(&ts[0], dx)?, term(&ts[1], dy)?)?;
    match r {
        // Broadcast to the output and match its dtype.
        Some(v) => Ok(Some(add(ctx, &v, &zeros_like(ctx, out)?)?)),
        None => Ok(None),
    }
}

/// VJP of an elementwise binary op from its partials: `(ȳ·conj(∂x), ȳ·conj(∂y))`, each
/// fitted to its operand.
pub(super) fn partials_vjp(
    ctx: &Ctx<'_>,
    partials: Partials,
    inputs: &[Var],
    out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let (x, y) = (&inputs[0], &inputs[1]);
    let (dx, dy) = partials(ctx, x, y, out)?;
    let grad = |input: &Var, d: Option<Var>| -> Result<Option<Var>> {
        if input.node.is_none() {
            return Ok(None);
        }
        let g = match d {
            None => ct.clone(),
            Some(d) => mul(ctx, ct, &conj(ctx, &d)?)?,
        };
        Ok(Some(fit(ctx, &g, input)?))
    };
    Ok(vec![grad(x, dx)?, grad(y, dy)?])
}

/// VJP of `select(pred, a, b)`; the predicate is not differentiated.
pub fn select_vjp(
    ctx: &Ctx<'_>,
    _op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let z = zeros_like(ctx, ct)?;
    let a = fit(ctx, &select(ctx, &inputs[0], ct, &z)?, &inputs[1])?;
    let b = fit(ctx, &select(ctx, &inputs[0], &z, ct)?, &inputs[2])?;
    Ok(vec![None, Some(a), Some(b)])
}

/// Masks of `clamp(x, lo, hi)`: `x` strictly inside, below `lo`, above `hi`.
fn clamp_masks(ctx: &Ctx<'_>, inputs: &[Var]) -> Result<[Var; 3]> {
    let (x, lo, hi) = (&inputs[0], &inputs[1], &inputs[2]);
    let above_lo = compare(ctx, CompareDir::Gt, x, lo)?;
    let below_hi = compare(ctx, CompareDir::Lt, x, hi)?;
    let inside = ctx.apply(Op::Binary(BinaryOp::Minimum), &[&above_lo, &below_hi])?;
    Ok([
        inside,
        compare(ctx, CompareDir::Lt, x, lo)?,
        compare(ctx, CompareDir::Gt, x, hi)?,
    ])
}

/// JVP of `clamp`: `x`'s tangent strictly inside `(lo, hi)`, the bound's tangent outside.
pub fn clamp_jvp(
    ctx: &Ctx<'_>,
    _op: &Op,
    inputs: &[Var],
    out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    let masks = clamp_masks(ctx, inputs)?;
    let z = zeros_like(ctx, out)?;
    let mut acc: Option<Var> = None;
    for (m, t) in masks.iter().zip(ts) {
        if let Some(t) = t {
            let term = select(ctx, m, &add(ctx, t, &z)?, &z)?;
            acc = add_opt(ctx, acc, Some(term))?;
        }
    }
    Ok(acc)
}

/// VJP of `clamp`.
pub fn clamp_vjp(
    ctx: &Ctx<'_>,
    _op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let masks = clamp_masks(ctx, inputs)?;
    let z = zeros_like(ctx, ct)?;
    masks
        .iter()
        .zip(inputs)
        .map(|(m, input)| {
            if input.node.is_none() {
                return Ok(None);
            }
            Ok(Some(fit(ctx, &select(ctx, m, ct, &z)?, input)?))
        })
        .collect()
}

/// JVP of `convert`/`cast` between inexact dtypes (complex → real keeps the real part).
pub fn convert_jvp(
    ctx: &Ctx<'_>,
    _op: &Op,
    _inputs: &[Var],
    out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    match &ts[0] {
        Some(t) => Ok(Some(cast(ctx, t, out.value.dtype())?)),
        None => Ok(None),
    }
}

/// VJP of `convert`/`cast`: the cotangent cast back (real part for complex → real).
pub fn convert_vjp(
    ctx: &Ctx<'_>,
    _op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    if !inputs[0].value.dtype().is_inexact() {
        return Ok(vec![None]);
    }
    Ok(vec![Some(cast(ctx, ct, inputs[0].value.dtype())?)])
}

//! Rules of the unary, binary, ternary and conversion families (JAX `lax` rules; complex
//! VJPs are `ȳ·conj(f'(z))` under tenferro's Hermitian convention).

use super::misrouted;
use super::ops::{
    add, add_opt, cast, compare, conj, div, fit, full, mul, neg, pow, scalar, select, sub, un,
    zeros_like,
};
use crate::{Ctx, Var};
use tenferro_ops::{BinaryOp, CompareDir, Op, UnaryOp};
use tenferro_tensor::{Error, Result};

/// `f'(x)` of a holomorphic (or real) unary op, given `y = f(x)`.
fn unary_deriv(ctx: &Ctx<'_>, u: UnaryOp, x: &Var, y: &Var) -> Result<Var> {
    let d = x.value.dtype();
    let one = scalar(1.0, 0.0, d)?;
    Ok(match u {
        UnaryOp::Neg => scalar(-1.0, 0.0, d)?,
        UnaryOp::Exp => y.clone(),
        UnaryOp::Log => div(ctx, &one, x)?,
        UnaryOp::Sin => un(ctx, UnaryOp::Cos, x)?,
        UnaryOp::Cos => neg(ctx, &un(ctx, UnaryOp::Sin, x)?)?,
        UnaryOp::Tanh => sub(ctx, &one, &mul(ctx, y, y)?)?,
        UnaryOp::Sqrt => div(ctx, &scalar(0.5, 0.0, d)?, y)?,
        // d x^(-1/2) = -y / (2x)
        UnaryOp::Rsqrt => neg(ctx, &div(ctx, y, &mul(ctx, &scalar(2.0, 0.0, d)?, x)?)?)?,
        UnaryOp::Expm1 => add(ctx, y, &one)?,
        UnaryOp::Log1p => div(ctx, &one, &add(ctx, &one, x)?)?,
        // erf' = 2/√π · exp(-x²)
        UnaryOp::Erf => mul(
            ctx,
            &scalar(std::f64::consts::FRAC_2_SQRT_PI, 0.0, d)?,
            &un(ctx, UnaryOp::Exp, &neg(ctx, &mul(ctx, x, x)?)?)?,
        )?,
        UnaryOp::Conj | UnaryOp::Abs | UnaryOp::Sign => {
            return Err(Error::internal(
                "unary_deriv",
                format!("{u:?} is not holomorphic; its rule is written out by the caller"),
            ))
        }
    })
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

fn unary_op(op: &Op) -> Result<UnaryOp> {
    let Op::Unary(u) = op else {
        return Err(misrouted("unary", op));
    };
    Ok(*u)
}

/// JVP of the unary family.
pub fn unary_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    let Some(t) = &ts[0] else { return Ok(None) };
    let x = &inputs[0];
    let u = unary_op(op)?;
    // `conj` and `abs` are written out here; every other op's derivative comes from
    // `unary_deriv`, whose match over the kinds is exhaustive.
    Ok(Some(if u == UnaryOp::Conj {
        conj(ctx, t)?
    } else if u == UnaryOp::Abs && x.value.dtype().is_complex() {
        // d|z| = Re(conj(sign z)·dz)
        let s = complex_sign(ctx, x, out)?;
        cast(ctx, &mul(ctx, &conj(ctx, &s)?, t)?, out.value.dtype())?
    } else if u == UnaryOp::Abs {
        mul(ctx, t, &un(ctx, UnaryOp::Sign, x)?)?
    } else {
        mul(ctx, t, &unary_deriv(ctx, u, x, out)?)?
    }))
}

/// VJP of the unary family.
pub fn unary_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let x = &inputs[0];
    let u = unary_op(op)?;
    let g = if u == UnaryOp::Conj {
        conj(ctx, ct)?
    } else if u == UnaryOp::Abs && x.value.dtype().is_complex() {
        // abs: ā·sign(z) (real and complex alike; abs'(0) = 0). For complex z, sign(z) = z/|z| is
        // built from differentiable ops so that second derivatives see its dependence on z.
        mul(ctx, ct, &complex_sign(ctx, x, out)?)?
    } else if u == UnaryOp::Abs {
        mul(ctx, ct, &un(ctx, UnaryOp::Sign, x)?)?
    } else {
        mul(ctx, ct, &conj(ctx, &unary_deriv(ctx, u, x, out)?)?)?
    };
    Ok(vec![Some(fit(ctx, &g, x)?)])
}

fn binary_op(op: &Op) -> Result<BinaryOp> {
    let Op::Binary(b) = op else {
        return Err(misrouted("binary", op));
    };
    Ok(*b)
}

/// Partial derivatives `(∂out/∂x, ∂out/∂y)` at the broadcast shape; `None` marks a constant 1
/// (`Some` for everything else). Maximum/minimum split ties ½/½ (JAX).
fn binary_partials(
    ctx: &Ctx<'_>,
    b: BinaryOp,
    x: &Var,
    y: &Var,
    out: &Var,
) -> Result<(Option<Var>, Option<Var>)> {
    let d = out.value.dtype();
    let shape = out.value.shape();
    Ok(match b {
        BinaryOp::Add => (None, None),
        BinaryOp::Sub => (None, Some(scalar(-1.0, 0.0, d)?)),
        BinaryOp::Mul => (Some(y.clone()), Some(x.clone())),
        BinaryOp::Div => (
            Some(div(ctx, &scalar(1.0, 0.0, d)?, y)?),
            Some(neg(ctx, &div(ctx, out, y)?)?),
        ),
        // rem = x - y·trunc(x/y): ∂x = 1, ∂y = -trunc(x/y) = (out - x)/y
        BinaryOp::Rem => (None, Some(div(ctx, &sub(ctx, out, x)?, y)?)),
        BinaryOp::Pow => {
            let zero = scalar(0.0, 0.0, d)?;
            // ∂x = y·x^(y-1), 0 where y == 0 (so 0^0 has derivative 0).
            let ym1 = sub(ctx, y, &scalar(1.0, 0.0, d)?)?;
            let dx = mul(ctx, y, &pow(ctx, x, &ym1)?)?;
            let y_zero = compare(ctx, CompareDir::Eq, y, &zero)?;
            let dx = select(ctx, &y_zero, &full(ctx, 0.0, d, shape)?, &dx)?;
            // ∂y = log(x)·out where x > 0 (real) or x != 0 (complex), else 0.
            let safe = if d.is_complex() {
                compare(ctx, CompareDir::Ne, x, &zero)?
            } else {
                compare(ctx, CompareDir::Gt, x, &zero)?
            };
            let one = full(ctx, 1.0, d, shape)?;
            let xs = select(ctx, &safe, &add(ctx, x, &full(ctx, 0.0, d, shape)?)?, &one)?;
            let dy = mul(ctx, &un(ctx, UnaryOp::Log, &xs)?, out)?;
            let dy = select(ctx, &safe, &dy, &full(ctx, 0.0, d, shape)?)?;
            (Some(dx), Some(dy))
        }
        BinaryOp::Maximum | BinaryOp::Minimum => {
            let dir = if b == BinaryOp::Maximum {
                CompareDir::Gt
            } else {
                CompareDir::Lt
            };
            let win = compare(ctx, dir, x, y)?;
            let tie = compare(ctx, CompareDir::Eq, x, y)?;
            let (one, half, zero) = (
                full(ctx, 1.0, d, shape)?,
                full(ctx, 0.5, d, shape)?,
                full(ctx, 0.0, d, shape)?,
            );
            let dx = select(ctx, &win, &one, &select(ctx, &tie, &half, &zero)?)?;
            let dy = sub(ctx, &one, &dx)?;
            (Some(dx), Some(dy))
        }
    })
}

/// JVP of the binary family.
pub fn binary_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    let (x, y) = (&inputs[0], &inputs[1]);
    let (dx, dy) = binary_partials(ctx, binary_op(op)?, x, y, out)?;
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

/// VJP of the binary family.
pub fn binary_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let (x, y) = (&inputs[0], &inputs[1]);
    let (dx, dy) = binary_partials(ctx, binary_op(op)?, x, y, out)?;
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

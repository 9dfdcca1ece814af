//! Rules of the reductions (`reduce_prod` awaits a scan primitive for derivatives exact at
//! zeros; see `autodiff.md`).

use super::ops::{broadcast_in_dim, cast, compare, div, mul, reduce_sum, scalar};
use crate::{Ctx, Var};
use tenferro_ops::{CompareDir, Op, ReduceOp};
use tenferro_tensor::Result;

fn parts(op: &Op) -> (ReduceOp, &[usize]) {
    match op {
        Op::Reduce { op, axes } => (*op, axes),
        _ => (ReduceOp::Sum, &[]),
    }
}

fn kept(ndim: usize, axes: &[usize]) -> Vec<usize> {
    (0..ndim).filter(|a| !axes.contains(a)).collect()
}

/// `y` broadcast back over the reduced axes of `x`.
fn expand(ctx: &Ctx<'_>, y: &Var, x: &Var, axes: &[usize]) -> Result<Var> {
    broadcast_in_dim(ctx, y, x.value.shape(), &kept(x.value.ndim(), axes))
}

/// Tie mask of max/min (as `x`'s dtype) and the tie count per output.
fn ties(ctx: &Ctx<'_>, x: &Var, out: &Var, axes: &[usize]) -> Result<(Var, Var)> {
    let hit = compare(ctx, CompareDir::Eq, x, &expand(ctx, out, x, axes)?)?;
    let mask = cast(ctx, &hit, x.value.dtype())?;
    let count = reduce_sum(ctx, &mask, axes)?;
    Ok((mask, count))
}

/// JVP of the reductions.
pub fn reduce_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    let Some(t) = &ts[0] else { return Ok(None) };
    let x = &inputs[0];
    let (r, axes) = parts(op);
    Ok(Some(match r {
        ReduceOp::Sum => reduce_sum(ctx, t, axes)?,
        ReduceOp::SumSquares => {
            let two = scalar(2.0, 0.0, x.value.dtype())?;
            reduce_sum(ctx, &mul(ctx, &two, &mul(ctx, x, t)?)?, axes)?
        }
        ReduceOp::Max | ReduceOp::Min => {
            let (mask, count) = ties(ctx, x, out, axes)?;
            div(ctx, &reduce_sum(ctx, &mul(ctx, t, &mask)?, axes)?, &count)?
        }
        ReduceOp::Prod => return Ok(None),
    }))
}

/// VJP of the reductions (max/min share the cotangent equally among ties).
pub fn reduce_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let x = &inputs[0];
    let (r, axes) = parts(op);
    let g = match r {
        ReduceOp::Sum => expand(ctx, ct, x, axes)?,
        ReduceOp::SumSquares => {
            let two = scalar(2.0, 0.0, x.value.dtype())?;
            mul(ctx, &mul(ctx, &two, x)?, &expand(ctx, ct, x, axes)?)?
        }
        ReduceOp::Max | ReduceOp::Min => {
            let (mask, count) = ties(ctx, x, out, axes)?;
            mul(ctx, &expand(ctx, &div(ctx, ct, &count)?, x, axes)?, &mask)?
        }
        ReduceOp::Prod => return Ok(vec![None]),
    };
    Ok(vec![Some(g)])
}

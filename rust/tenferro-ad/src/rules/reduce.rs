//! Rules of the reductions. `reduce_prod` is exact at zeros to every order: without zeros its
//! partials are `out / x`; with zeros they are the products of the *other* elements, formed by
//! broadcasting the reduced elements to an `R × R` block with ones on the diagonal and reducing
//! again (differentiable, so higher orders recurse; O(R²) memory only when zeros are present).

use super::misrouted;
use super::ops::{
    broadcast_in_dim, cast, compare, conj, div, full, mul, reduce_sum, reshape, scalar, select,
    transpose,
};
use crate::{Ctx, Var};
use tenferro_ops::{CompareDir, Op, ReduceOp};
use tenferro_tensor::{DType, Result, Tensor};

fn parts(op: &Op) -> Result<(ReduceOp, &[usize])> {
    let Op::Reduce { op: r, axes } = op else {
        return Err(misrouted("reduce", op));
    };
    Ok((*r, axes))
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

fn has_zero(t: &Tensor) -> bool {
    match t.dtype() {
        DType::F32 => t.to_vec::<f32>().contains(&0.0),
        DType::F64 => t.to_vec::<f64>().contains(&0.0),
        DType::C32 => t
            .to_vec::<tenferro_tensor::Complex32>()
            .iter()
            .any(|z| z.re == 0.0 && z.im == 0.0),
        DType::C64 => t
            .to_vec::<tenferro_tensor::Complex64>()
            .iter()
            .any(|z| z.re == 0.0 && z.im == 0.0),
        DType::Bool | DType::I32 | DType::I64 => false,
    }
}

/// `∂ prod / ∂ x_i` = product of the other reduced elements, shaped like `x`.
fn prod_partials(ctx: &Ctx<'_>, x: &Var, out: &Var, axes: &[usize]) -> Result<Var> {
    if !has_zero(&x.value) {
        return div(ctx, &expand(ctx, out, x, axes)?, x);
    }
    let shape = x.value.shape().to_vec();
    let keep = kept(shape.len(), axes);
    let perm: Vec<usize> = keep.iter().chain(axes).copied().collect();
    let k: usize = keep.iter().map(|&a| shape[a]).product();
    let r: usize = axes.iter().map(|&a| shape[a]).product();
    let xt = reshape(ctx, &transpose(ctx, x, &perm)?, &[k, r])?;
    let block = broadcast_in_dim(ctx, &xt, &[k, r, r], &[0, 2])?;
    let eye: Vec<bool> = (0..r * r).map(|i| i % r == i / r).collect();
    let eye = Var::constant(Tensor::from_vec(&[r, r], eye)?);
    let mask = broadcast_in_dim(ctx, &eye, &[k, r, r], &[1, 2])?;
    let ones = full(ctx, 1.0, x.value.dtype(), &[k, r, r])?;
    let others = ctx.apply(
        Op::Reduce {
            op: ReduceOp::Prod,
            axes: vec![2],
        },
        &[&select(ctx, &mask, &ones, &block)?],
    )?;
    let tshape: Vec<usize> = perm.iter().map(|&a| shape[a]).collect();
    let back = reshape(ctx, &others, &tshape)?;
    let mut inv = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i;
    }
    transpose(ctx, &back, &inv)
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
    let (r, axes) = parts(op)?;
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
        ReduceOp::Prod => reduce_sum(ctx, &mul(ctx, &prod_partials(ctx, x, out, axes)?, t)?, axes)?,
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
    let (r, axes) = parts(op)?;
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
        ReduceOp::Prod => mul(
            ctx,
            &expand(ctx, ct, x, axes)?,
            &conj(ctx, &prod_partials(ctx, x, out, axes)?)?,
        )?,
    };
    Ok(vec![Some(g)])
}

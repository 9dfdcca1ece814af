//! Differentiable building blocks for rule bodies (each goes through [`Ctx::apply`]).

use crate::{Ctx, Var};
use tenferro_ops::{BinaryOp, CompareDir, Op, ReduceOp, UnaryOp};
use tenferro_tensor::{Complex32, Complex64, DType, Result, Tensor};

/// A rank-0 constant `re + i·im` of `dtype`.
pub fn scalar(re: f64, im: f64, dtype: DType) -> Result<Var> {
    let t = match dtype {
        DType::F32 => Tensor::from_vec(&[], vec![re as f32]),
        DType::C32 => Tensor::from_vec(&[], vec![Complex32::new(re as f32, im as f32)]),
        DType::C64 => Tensor::from_vec(&[], vec![Complex64::new(re, im)]),
        DType::Bool => Tensor::from_vec(&[], vec![re != 0.0]),
        DType::I32 => Tensor::from_vec(&[], vec![re as i32]),
        DType::I64 => Tensor::from_vec(&[], vec![re as i64]),
        DType::F64 => Tensor::from_vec(&[], vec![re]),
    }?;
    Ok(Var::constant(t))
}

/// `value` broadcast (a view) to `shape`, as a constant of `dtype`.
pub fn full(ctx: &Ctx<'_>, value: f64, dtype: DType, shape: &[usize]) -> Result<Var> {
    let s = scalar(value, 0.0, dtype)?;
    broadcast_in_dim(ctx, &s, shape, &[])
}

/// Zeros shaped and typed like `x`.
pub fn zeros_like(ctx: &Ctx<'_>, x: &Var) -> Result<Var> {
    full(ctx, 0.0, x.value.dtype(), x.value.shape())
}

macro_rules! binop {
    ($name:ident, $op:ident) => {
        #[doc = concat!("Differentiable `", stringify!($name), "`.")]
        pub fn $name(ctx: &Ctx<'_>, a: &Var, b: &Var) -> Result<Var> {
            ctx.apply(Op::Binary(BinaryOp::$op), &[a, b])
        }
    };
}
binop!(add, Add);
binop!(sub, Sub);
binop!(mul, Mul);
binop!(div, Div);
binop!(pow, Pow);

/// Differentiable unary op.
pub fn un(ctx: &Ctx<'_>, u: UnaryOp, x: &Var) -> Result<Var> {
    ctx.apply(Op::Unary(u), &[x])
}

/// `-x`.
pub fn neg(ctx: &Ctx<'_>, x: &Var) -> Result<Var> {
    un(ctx, UnaryOp::Neg, x)
}

/// `conj(x)` (identity for real dtypes: no op is recorded).
pub fn conj(ctx: &Ctx<'_>, x: &Var) -> Result<Var> {
    if x.value.dtype().is_complex() {
        un(ctx, UnaryOp::Conj, x)
    } else {
        Ok(x.clone())
    }
}

/// `compare(a, b, dir)` → bool constant.
pub fn compare(ctx: &Ctx<'_>, dir: CompareDir, a: &Var, b: &Var) -> Result<Var> {
    ctx.apply(Op::Compare(dir), &[a, b])
}

/// `select(pred, a, b)`.
pub fn select(ctx: &Ctx<'_>, pred: &Var, a: &Var, b: &Var) -> Result<Var> {
    ctx.apply(Op::Select, &[pred, a, b])
}

/// `cast(x, dtype)` (identity when equal).
pub fn cast(ctx: &Ctx<'_>, x: &Var, dtype: DType) -> Result<Var> {
    if x.value.dtype() == dtype {
        Ok(x.clone())
    } else {
        ctx.apply(Op::Cast(dtype), &[x])
    }
}

/// `reduce_sum(x, axes)`.
pub fn reduce_sum(ctx: &Ctx<'_>, x: &Var, axes: &[usize]) -> Result<Var> {
    if axes.is_empty() {
        return Ok(x.clone());
    }
    ctx.apply(
        Op::Reduce {
            op: ReduceOp::Sum,
            axes: axes.to_vec(),
        },
        &[x],
    )
}

/// `broadcast_in_dim(x, shape, dims)`.
pub fn broadcast_in_dim(ctx: &Ctx<'_>, x: &Var, shape: &[usize], dims: &[usize]) -> Result<Var> {
    ctx.apply(
        Op::BroadcastInDim {
            shape: shape.to_vec(),
            dims: dims.to_vec(),
        },
        &[x],
    )
}

/// Column-major `reshape`.
pub fn reshape(ctx: &Ctx<'_>, x: &Var, shape: &[usize]) -> Result<Var> {
    if x.value.shape() == shape {
        return Ok(x.clone());
    }
    ctx.apply(Op::Reshape(shape.to_vec()), &[x])
}

/// `transpose(x, perm)`.
pub fn transpose(ctx: &Ctx<'_>, x: &Var, perm: &[usize]) -> Result<Var> {
    ctx.apply(Op::Transpose(perm.to_vec()), &[x])
}

/// Sum a broadcast cotangent back to `shape` (NumPy broadcasting: trailing alignment).
pub fn unbroadcast(ctx: &Ctx<'_>, g: &Var, shape: &[usize]) -> Result<Var> {
    let gs = g.value.shape().to_vec();
    if gs == shape {
        return Ok(g.clone());
    }
    let lead = gs.len() - shape.len();
    let axes: Vec<usize> = (0..gs.len())
        .filter(|&i| i < lead || (shape[i - lead] == 1 && gs[i] != 1))
        .collect();
    let s = reduce_sum(ctx, g, &axes)?;
    reshape(ctx, &s, shape)
}

/// `g` fitted to the dtype and shape of `like` (complex → real keeps the real part: the
/// adjoint of the real embedding).
pub fn fit(ctx: &Ctx<'_>, g: &Var, like: &Var) -> Result<Var> {
    let g = unbroadcast(ctx, g, like.value.shape())?;
    cast(ctx, &g, like.value.dtype())
}

/// `Some(a + b)` of optional terms.
pub fn add_opt(ctx: &Ctx<'_>, a: Option<Var>, b: Option<Var>) -> Result<Option<Var>> {
    Ok(match (a, b) {
        (Some(a), Some(b)) => Some(add(ctx, &a, &b)?),
        (a, None) => a,
        (None, b) => b,
    })
}

/// JVP of an op that is linear in its data operands (layout, slicing, indexing, scaling,
/// `select`): the op itself applied to the tangents, zeros standing in for absent tangents and
/// non-data operands (predicates, indices) passed through. `None` when no data operand has a
/// tangent.
pub fn linear_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    if !ts
        .iter()
        .enumerate()
        .any(|(i, t)| op.is_data_operand(i) && t.is_some())
    {
        return Ok(None);
    }
    let args: Vec<Var> = inputs
        .iter()
        .zip(ts)
        .enumerate()
        .map(|(i, (x, t))| match t {
            Some(t) if op.is_data_operand(i) => Ok(t.clone()),
            _ if op.is_data_operand(i) => zeros_like(ctx, x),
            _ => Ok(x.clone()),
        })
        .collect::<Result<_>>()?;
    let refs: Vec<&Var> = args.iter().collect();
    Ok(Some(ctx.apply(op.clone(), &refs)?))
}

//! Rules of `sort` and of the scans `cumsum`, `cumprod`. No rule reads tensor values: each is
//! the same sequence of primitives for every input of a shape and dtype.
//!
//! `sort` permutes its input along an axis, so its JVP gathers the tangent through the stable
//! permutation (`argsort`, recomputed) and its VJP scatters the cotangent back (JAX
//! `_sort_jvp`). `cumsum` is linear: its VJP is the reversed cumulative sum. `cumprod` is exact
//! at zeros without dividing by a zero (PyTorch `cumprod_backward`, FunctionsManual.cpp): with
//! `z` the first zero of a line, the partial `∂y_k/∂x_j = Π_{i≤k, i≠j} x_i` is
//! `y_k / x_j` before `z` (no zero yet), `E_z · Q_k` at `j = z` (`E_z` the product before `z`,
//! `Q_k = Π_{z<i≤k} x_i`, itself zero past a second zero) and 0 past `z`. The three regions
//! are selected by the running count of zeros, so the rules are differentiable primitives and
//! the Hessian comes from differentiating them.

use super::ops::{cast, compare, conj, div, mul, reshape, scalar, select, zeros_like};
use crate::{Ctx, Var};
use tenferro_ops::{CompareDir, GatherConfig, Op, ScatterConfig};
use tenferro_tensor::{DType, Result, Tensor};

/// Flat column-major positions (int64, `x`'s shape) of `idx`, indices along `axis`.
fn flat_positions(ctx: &Ctx<'_>, idx: &Var, axis: usize) -> Result<Var> {
    let shape = idx.value.shape().to_vec();
    let mut strides = Vec::with_capacity(shape.len());
    let mut acc = 1usize;
    for &d in &shape {
        strides.push(acc);
        acc *= d;
    }
    // base = Σ_{d≠axis} i_d·stride_d, on the shape with axis `axis` of length 1.
    let mut bshape = shape.clone();
    bshape[axis] = 1;
    let mut base = vec![0i64];
    for (d, &n) in bshape.iter().enumerate() {
        let prev = std::mem::take(&mut base);
        for j in 0..n {
            base.extend(prev.iter().map(|&b| b + (j * strides[d]) as i64));
        }
    }
    let base = Var::constant(Tensor::from_vec(&bshape, base)?);
    let dims: Vec<usize> = (0..shape.len()).collect();
    let base = super::ops::broadcast_in_dim(ctx, &base, &shape, &dims)?;
    let step = scalar(strides[axis] as f64, 0.0, DType::I64)?;
    super::ops::add(ctx, &mul(ctx, idx, &step)?, &base)
}

/// `take_along_axis(v, idx, axis)`: a gather of the flattened `v` at [`flat_positions`].
fn take_along(ctx: &Ctx<'_>, v: &Var, idx: &Var, axis: usize) -> Result<Var> {
    let pos = flat_positions(ctx, idx, axis)?;
    let flat = reshape(ctx, v, &[v.value.numel()])?;
    ctx.apply(
        Op::Gather(GatherConfig {
            offset_dims: vec![],
            collapsed_slice_dims: vec![0],
            start_index_map: vec![0],
            index_vector_dim: pos.value.ndim(),
            slice_sizes: vec![1],
        }),
        &[&flat, &pos],
    )
}

/// Transpose of [`take_along`]: `ct` scatter-added into zeros shaped like `like`.
fn put_along(ctx: &Ctx<'_>, ct: &Var, idx: &Var, axis: usize, like: &Var) -> Result<Var> {
    let pos = flat_positions(ctx, idx, axis)?;
    let z = zeros_like(ctx, like)?;
    let zf = reshape(ctx, &z, &[like.value.numel()])?;
    let g = ctx.apply(
        Op::Scatter(ScatterConfig {
            update_window_dims: vec![],
            inserted_window_dims: vec![0],
            scatter_dims_to_operand_dims: vec![0],
            index_vector_dim: pos.value.ndim(),
        }),
        &[&zf, &pos, ct],
    )?;
    reshape(ctx, &g, like.value.shape())
}

fn sort_perm(ctx: &Ctx<'_>, op: &Op, x: &Var) -> Result<(Var, usize)> {
    unpack!(op, Op::Sort { axis, descending });
    let idx = ctx.apply(
        Op::Argsort {
            axis: *axis,
            descending: *descending,
        },
        &[x],
    )?;
    Ok((idx, *axis))
}

/// JVP of `sort`: the tangent gathered through the sorting permutation.
pub fn sort_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    let Some(t) = &ts[0] else { return Ok(None) };
    let (idx, axis) = sort_perm(ctx, op, &inputs[0])?;
    Ok(Some(take_along(ctx, t, &idx, axis)?))
}

/// VJP of `sort`: the cotangent scattered back through the sorting permutation.
pub fn sort_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let (idx, axis) = sort_perm(ctx, op, &inputs[0])?;
    Ok(vec![Some(put_along(ctx, ct, &idx, axis, &inputs[0])?)])
}

fn cumsum(ctx: &Ctx<'_>, x: &Var, axis: usize) -> Result<Var> {
    ctx.apply(Op::Cumsum(axis), &[x])
}

fn cumprod(ctx: &Ctx<'_>, x: &Var, axis: usize) -> Result<Var> {
    ctx.apply(Op::Cumprod(axis), &[x])
}

/// `Σ_{k≥j} v_k` along `axis`.
fn rev_cumsum(ctx: &Ctx<'_>, v: &Var, axis: usize) -> Result<Var> {
    let r = ctx.apply(Op::Reverse(vec![axis]), &[v])?;
    let c = cumsum(ctx, &r, axis)?;
    ctx.apply(Op::Reverse(vec![axis]), &[&c])
}

/// VJP of `cumsum`: the reversed cumulative sum of the cotangent.
pub fn cumsum_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    _inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    unpack!(op, Op::Cumsum(axis));
    Ok(vec![Some(rev_cumsum(ctx, ct, *axis)?)])
}

/// The pieces of `cumprod`'s partials (module docs): `(before, first, x_safe, e, q)` with
/// `before` = no zero up to here, `first` = the first zero, `x_safe` = `x` with zeros → 1,
/// `e` = product before the first zero (at `first`), `q_k = Π_{z<i≤k} x_i`.
struct ProdParts {
    before: Var,
    first: Var,
    x_safe: Var,
    e: Var,
    q: Var,
}

fn prod_parts(ctx: &Ctx<'_>, x: &Var, axis: usize) -> Result<ProdParts> {
    let dt = x.value.dtype();
    let zero = scalar(0.0, 0.0, dt)?;
    let one = super::ops::full(ctx, 1.0, dt, x.value.shape())?;
    let is0 = compare(ctx, CompareDir::Eq, x, &zero)?;
    let count = cumsum(ctx, &cast(ctx, &is0, DType::I64)?, axis)?;
    let c0 = scalar(0.0, 0.0, DType::I64)?;
    let c1 = scalar(1.0, 0.0, DType::I64)?;
    let before = compare(ctx, CompareDir::Eq, &count, &c0)?;
    let at1 = compare(ctx, CompareDir::Eq, &count, &c1)?;
    // first zero: a zero with count 1 (select(is0, at1, false)).
    let ff = super::ops::full(ctx, 0.0, DType::Bool, x.value.shape())?;
    let first = select(ctx, &is0, &at1, &ff)?;
    let x_safe = select(ctx, &is0, &one, x)?;
    let e = cumprod(ctx, &select(ctx, &before, x, &one)?, axis)?;
    // positions up to and including the first zero → 1 (no zero before: all of them).
    let upto = select(ctx, &before, &before, &first)?;
    let q = cumprod(ctx, &select(ctx, &upto, &one, x)?, axis)?;
    Ok(ProdParts {
        before,
        first,
        x_safe,
        e,
        q,
    })
}

/// JVP of `cumprod`, exact at zeros: `y·cumsum(ẋ/x)` before the first zero, `Q·cumsum(E·ẋ at
/// the first zero)` from it on.
pub fn cumprod_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    let Some(t) = &ts[0] else { return Ok(None) };
    unpack!(op, Op::Cumprod(axis));
    let x = &inputs[0];
    let p = prod_parts(ctx, x, *axis)?;
    let zeros = zeros_like(ctx, x)?;
    let a = mul(ctx, out, &cumsum(ctx, &div(ctx, t, &p.x_safe)?, *axis)?)?;
    let at_z = select(ctx, &p.first, &mul(ctx, &p.e, t)?, &zeros)?;
    let b = mul(ctx, &p.q, &cumsum(ctx, &at_z, *axis)?)?;
    Ok(Some(select(ctx, &p.before, &a, &b)?))
}

/// VJP of `cumprod`, exact at zeros (Hermitian convention: conjugated partials).
pub fn cumprod_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    unpack!(op, Op::Cumprod(axis));
    let x = &inputs[0];
    let p = prod_parts(ctx, x, *axis)?;
    let zeros = zeros_like(ctx, x)?;
    let a = div(
        ctx,
        &rev_cumsum(ctx, &mul(ctx, ct, &conj(ctx, out)?)?, *axis)?,
        &conj(ctx, &p.x_safe)?,
    )?;
    let b = mul(
        ctx,
        &conj(ctx, &p.e)?,
        &rev_cumsum(ctx, &mul(ctx, ct, &conj(ctx, &p.q)?)?, *axis)?,
    )?;
    let b = select(ctx, &p.first, &b, &zeros)?;
    Ok(vec![Some(select(ctx, &p.before, &a, &b)?)])
}

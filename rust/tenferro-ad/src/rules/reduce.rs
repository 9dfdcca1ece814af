//! Rules of the reductions. No rule reads tensor values: every rule is the same sequence of
//! primitives for every input of a shape and dtype, so it can be traced into a program.
//!
//! `reduce_prod` is exact at zeros to every order. Its partials `∂ prod / ∂ x_i` are the
//! products of the *other* reduced elements, `prefix_i · suffix_i` (exclusive prefix and suffix
//! products), computed on the reduced axes flattened to one axis of length `R` by an
//! associative scan built from `slice`, `concatenate`, `reshape` and `mul` (the pairwise
//! product tree of Blelloch 1990 / JAX `lax.associative_scan`, used by JAX's
//! `_reduce_prod_jvp_rule`): O(R) extra memory and O(R) work per output, log-depth, and
//! differentiable, so the Hessian comes from differentiating the rule.

use super::ops::{
    broadcast_in_dim, cast, compare, conj, div, full, mul, reduce_sum, reshape, scalar, transpose,
};
use crate::{Ctx, Var};
use tenferro_ops::{CompareDir, Op, SliceConfig};
use tenferro_tensor::Result;

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

/// `x[:, start:limit:stride]` of a `[k, n]` matrix.
fn cols(ctx: &Ctx<'_>, x: &Var, start: usize, limit: usize, stride: usize) -> Result<Var> {
    let k = x.value.shape()[0];
    ctx.apply(
        Op::Slice(SliceConfig {
            starts: vec![0, start],
            limits: vec![k, limit],
            strides: vec![1, stride],
        }),
        &[x],
    )
}

/// `[a, b]` joined along `axis`.
fn concat(ctx: &Ctx<'_>, a: &Var, b: &Var, axis: usize) -> Result<Var> {
    ctx.apply(Op::Concatenate { axis }, &[a, b])
}

/// Inclusive prefix products along axis 1 of a `[k, n]` matrix: the pairwise product tree
/// (Blelloch 1990; JAX `lax.associative_scan`). Multiply adjacent pairs, scan the half-length
/// result `r` (`r_j = x_0 ⋯ x_{2j+1}`), then the odd outputs are `r` and the even outputs
/// `x_0, r_{j-1} · x_{2j}`; the two are interleaved by stacking on a middle axis and a
/// column-major reshape. Work and memory are `n + n/2 + n/4 + … = O(n)` per row.
fn prefix_products(ctx: &Ctx<'_>, x: &Var) -> Result<Var> {
    let (k, n) = (x.value.shape()[0], x.value.shape()[1]);
    if n < 2 {
        return Ok(x.clone());
    }
    let h = n / 2;
    let pairs = mul(
        ctx,
        &cols(ctx, x, 0, 2 * h, 2)?,
        &cols(ctx, x, 1, 2 * h, 2)?,
    )?;
    let odd = prefix_products(ctx, &pairs)?;
    drop(pairs); // not read past the recursion: freed before the weave (level peak 2n, not 2.5n)
    let ne = n - h; // even positions: ⌈n/2⌉ ≥ 1
    let first = cols(ctx, x, 0, 1, 1)?;
    let even = if ne > 1 {
        let rest = mul(
            ctx,
            &cols(ctx, &odd, 0, ne - 1, 1)?,
            &cols(ctx, x, 2, n, 2)?,
        )?;
        concat(ctx, &first, &rest, 1)?
    } else {
        first
    };
    // n odd: one more even than odd output; a placeholder odd column is sliced off below.
    let odd = if ne > h {
        let short = odd; // freed once padded
        concat(ctx, &short, &full(ctx, 1.0, x.value.dtype(), &[k, 1])?, 1)?
    } else {
        odd
    };
    let stacked = concat(
        ctx,
        &reshape(ctx, &even, &[k, 1, ne])?,
        &reshape(ctx, &odd, &[k, 1, ne])?,
        1,
    )?;
    let woven = reshape(ctx, &stacked, &[k, 2 * ne])?;
    if 2 * ne > n {
        cols(ctx, &woven, 0, n, 1)
    } else {
        Ok(woven)
    }
}

/// Exclusive prefix products along axis 1 of a `[k, n]` matrix (`n ≥ 1`): the inclusive scan
/// of `[1, x_0, …, x_{n-2}]`.
fn exclusive_prefix_products(ctx: &Ctx<'_>, x: &Var) -> Result<Var> {
    let (k, n) = (x.value.shape()[0], x.value.shape()[1]);
    let ones = full(ctx, 1.0, x.value.dtype(), &[k, 1])?;
    if n == 1 {
        return Ok(ones);
    }
    prefix_products(ctx, &concat(ctx, &ones, &cols(ctx, x, 0, n - 1, 1)?, 1)?)
}

/// The reduced axes of `x` moved last and flattened (column-major): `(x as [k, r], perm)`
/// with `k` the product of the kept extents, `r` of the reduced ones.
fn flatten_reduced(ctx: &Ctx<'_>, x: &Var, axes: &[usize]) -> Result<(Var, Vec<usize>)> {
    let shape = x.value.shape();
    let keep = kept(shape.len(), axes);
    let perm: Vec<usize> = keep.iter().chain(axes).copied().collect();
    let k: usize = keep.iter().map(|&a| shape[a]).product();
    let r: usize = axes.iter().map(|&a| shape[a]).product();
    let xt = reshape(ctx, &transpose(ctx, x, &perm)?, &[k, r])?;
    Ok((xt, perm))
}

/// `g` (`[k, r]`, laid out as [`flatten_reduced`] left `x`) back in `x`'s shape.
fn unflatten(ctx: &Ctx<'_>, g: &Var, x: &Var, perm: &[usize]) -> Result<Var> {
    let shape = x.value.shape();
    let tshape: Vec<usize> = perm.iter().map(|&a| shape[a]).collect();
    let back = reshape(ctx, g, &tshape)?;
    let mut inv = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i;
    }
    transpose(ctx, &back, &inv)
}

/// `∂ prod / ∂ x_i` = product of the other reduced elements = `prefix_i · suffix_i`, on the
/// `[k, r]` layout of [`flatten_reduced`]. The suffix products are the prefix products of the
/// reversed rows, reversed back.
fn prod_partials(ctx: &Ctx<'_>, xt: &Var) -> Result<Var> {
    let (k, r) = (xt.value.shape()[0], xt.value.shape()[1]);
    if r == 0 {
        return full(ctx, 0.0, xt.value.dtype(), &[k, 0]);
    }
    let prefix = exclusive_prefix_products(ctx, xt)?;
    let rev = ctx.apply(Op::Reverse(vec![1]), &[xt])?;
    let suffix = ctx.apply(
        Op::Reverse(vec![1]),
        &[&exclusive_prefix_products(ctx, &rev)?],
    )?;
    mul(ctx, &prefix, &suffix)
}

/// JVP of `reduce_sum`: the tangent summed.
pub fn sum_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    _inputs: &[Var],
    _out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    let Some(t) = &ts[0] else { return Ok(None) };
    unpack!(op, Op::Reduce { axes, .. });
    Ok(Some(reduce_sum(ctx, t, axes)?))
}

/// VJP of `reduce_sum`: the cotangent broadcast back over the reduced axes.
pub fn sum_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    unpack!(op, Op::Reduce { axes, .. });
    Ok(vec![Some(expand(ctx, ct, &inputs[0], axes)?)])
}

/// JVP of `reduce_sum_squares`: `Σ 2·x·ẋ`.
pub fn sum_squares_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    let Some(t) = &ts[0] else { return Ok(None) };
    let x = &inputs[0];
    unpack!(op, Op::Reduce { axes, .. });
    let two = scalar(2.0, 0.0, x.value.dtype())?;
    Ok(Some(reduce_sum(
        ctx,
        &mul(ctx, &two, &mul(ctx, x, t)?)?,
        axes,
    )?))
}

/// VJP of `reduce_sum_squares`: `2·x·ȳ` (`x` real).
pub fn sum_squares_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let x = &inputs[0];
    unpack!(op, Op::Reduce { axes, .. });
    let two = scalar(2.0, 0.0, x.value.dtype())?;
    Ok(vec![Some(mul(
        ctx,
        &mul(ctx, &two, x)?,
        &expand(ctx, ct, x, axes)?,
    )?)])
}

/// JVP of `reduce_max` / `reduce_min`: the mean of the tangent over the ties.
pub fn extremum_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    let Some(t) = &ts[0] else { return Ok(None) };
    let x = &inputs[0];
    unpack!(op, Op::Reduce { axes, .. });
    let (mask, count) = ties(ctx, x, out, axes)?;
    Ok(Some(div(
        ctx,
        &reduce_sum(ctx, &mul(ctx, t, &mask)?, axes)?,
        &count,
    )?))
}

/// VJP of `reduce_max` / `reduce_min`: the cotangent shared equally among the ties.
pub fn extremum_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let x = &inputs[0];
    unpack!(op, Op::Reduce { axes, .. });
    let (mask, count) = ties(ctx, x, out, axes)?;
    Ok(vec![Some(mul(
        ctx,
        &expand(ctx, &div(ctx, ct, &count)?, x, axes)?,
        &mask,
    )?)])
}

/// JVP of `reduce_prod`: `Σ_i ẋ_i · prefix_i · suffix_i` over the flattened reduced axis; the
/// `[k]` result is the output in column-major order (the kept axes keep their order).
pub fn prod_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    let Some(t) = &ts[0] else { return Ok(None) };
    let x = &inputs[0];
    unpack!(op, Op::Reduce { axes, .. });
    let (xt, _) = flatten_reduced(ctx, x, axes)?;
    let (tt, _) = flatten_reduced(ctx, t, axes)?;
    let dot = reduce_sum(ctx, &mul(ctx, &prod_partials(ctx, &xt)?, &tt)?, &[1])?;
    Ok(Some(reshape(ctx, &dot, out.value.shape())?))
}

/// VJP of `reduce_prod`: the cotangent broadcast back times `conj(prefix · suffix)` (the
/// adjoint under `⟨a, b⟩ = Re Σ ā b`).
pub fn prod_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let x = &inputs[0];
    unpack!(op, Op::Reduce { axes, .. });
    let (xt, perm) = flatten_reduced(ctx, x, axes)?;
    let k = xt.value.shape()[0];
    let ctk = reshape(ctx, ct, &[k])?;
    let ctx_b = broadcast_in_dim(ctx, &ctk, xt.value.shape(), &[0])?;
    let g = mul(ctx, &ctx_b, &conj(ctx, &prod_partials(ctx, &xt)?)?)?;
    Ok(vec![Some(unflatten(ctx, &g, x, &perm)?)])
}

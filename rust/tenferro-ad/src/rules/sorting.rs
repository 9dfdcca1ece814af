//! Rules of `sort` and of the scans `cumsum`, `cumprod`. No rule reads tensor values: each is
//! the same sequence of primitives for every input of a shape and dtype.
//!
//! `sort` permutes its input along an axis, so its JVP gathers the tangent through the stable
//! permutation (`argsort`, recomputed) and its VJP scatters the cotangent back (JAX
//! `_sort_jvp`). `cumsum` is linear: its VJP is the reversed cumulative sum. `cumprod`'s partial
//! `∂y_k/∂x_j = Π_{i≤k, i≠j} x_i = E_j·Π_{j<i≤k} x_i` (`E_j = Π_{i<j} x_i`, the exclusive
//! prefix product) is written without dividing and without branching on zeros: the JVP is the
//! linear recurrence `ẏ_k = x_k·ẏ_{k-1} + E_k·ẋ_k` and the VJP its transpose, both evaluated by
//! a Hillis–Steele scan of `mul`/`add`/`slice`/`concatenate` (JAX differentiates `cumprod`
//! through an associative scan the same way). The rules are thus polynomials in `x` and the
//! tangent, exact at any number of zeros and without the overflow of `y_k / x_j`, and their own
//! derivatives (Hessians, forward-over-reverse) are exact too. PyTorch's `cumprod_backward`
//! split at the first zero (which the rule here replaced) has the right first derivative but
//! takes the partials past the first zero as constant zeros: a wrong second derivative there.
//! The cost is `⌈log₂ n⌉` rounds over a line of length `n`.

use super::ops::{conj, mul, reshape, scalar, zeros_like};
use crate::{Ctx, Var};
use tenferro_ops::{GatherConfig, Op, ScatterConfig, SliceConfig};
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

/// `v[lo..hi]` along `axis`.
fn slice_axis(ctx: &Ctx<'_>, v: &Var, axis: usize, lo: usize, hi: usize) -> Result<Var> {
    let shape = v.value.shape();
    let mut starts = vec![0; shape.len()];
    let mut limits = shape.to_vec();
    starts[axis] = lo;
    limits[axis] = hi;
    let strides = vec![1; shape.len()];
    ctx.apply(
        Op::Slice(SliceConfig {
            starts,
            limits,
            strides,
        }),
        &[v],
    )
}

fn concat(ctx: &Ctx<'_>, a: &Var, b: &Var, axis: usize) -> Result<Var> {
    ctx.apply(Op::Concatenate { axis }, &[a, b])
}

fn reverse(ctx: &Ctx<'_>, v: &Var, axis: usize) -> Result<Var> {
    ctx.apply(Op::Reverse(vec![axis]), &[v])
}

/// `v` shifted one place forward along `axis`: `[first, v_0, …, v_{n-2}]` (`n ≥ 1`).
fn shift_in(ctx: &Ctx<'_>, v: &Var, first: &Var, axis: usize) -> Result<Var> {
    let n = v.value.shape()[axis];
    concat(ctx, first, &slice_axis(ctx, v, axis, 0, n - 1)?, axis)
}

/// The linear recurrence `s_k = b_k + a_k·s_{k-1}` (`s_{-1} = 0`) along `axis`, i.e.
/// `s_k = Σ_{j≤k} b_j·Π_{j<i≤k} a_i` (`a_0` is not read), by a Hillis–Steele scan of the
/// affine maps: ⌈log₂ n⌉ rounds of `B_k += A_k·B_{k-d}`, `A_k *= A_{k-d}` (`k ≥ d`). Only
/// `mul`, `add`, `slice` and `concatenate`: a polynomial in `a` and `b`, so its derivatives of
/// every order are exact (no division, no value-dependent branch).
fn linear_recurrence(ctx: &Ctx<'_>, a: &Var, b: &Var, axis: usize) -> Result<Var> {
    let n = b.value.shape()[axis];
    let (mut a, mut b) = (a.clone(), b.clone());
    let mut d = 1;
    while d < n {
        let a_hi = slice_axis(ctx, &a, axis, d, n)?;
        let b_lo = slice_axis(ctx, &b, axis, 0, n - d)?;
        let b_hi = slice_axis(ctx, &b, axis, d, n)?;
        let b_new = super::ops::add(ctx, &b_hi, &mul(ctx, &a_hi, &b_lo)?)?;
        let b_keep = slice_axis(ctx, &b, axis, 0, d)?;
        b = concat(ctx, &b_keep, &b_new, axis)?;
        if 2 * d < n {
            let a_lo = slice_axis(ctx, &a, axis, 0, n - d)?;
            let a_keep = slice_axis(ctx, &a, axis, 0, d)?;
            a = concat(ctx, &a_keep, &mul(ctx, &a_hi, &a_lo)?, axis)?;
        }
        d *= 2;
    }
    Ok(b)
}

/// The exclusive prefix products `E_k = Π_{i<k} x_i` along `axis` (`n ≥ 1`): `cumprod` of `x`
/// shifted in behind a one.
fn exclusive_cumprod(ctx: &Ctx<'_>, x: &Var, axis: usize) -> Result<Var> {
    let mut shape = x.value.shape().to_vec();
    shape[axis] = 1;
    let one = super::ops::full(ctx, 1.0, x.value.dtype(), &shape)?;
    cumprod(ctx, &shift_in(ctx, x, &one, axis)?, axis)
}

/// JVP of `cumprod`: `ẏ_k = Σ_{j≤k} ẋ_j·E_j·Π_{j<i≤k} x_i`, the recurrence
/// `ẏ_k = x_k·ẏ_{k-1} + E_k·ẋ_k` (module docs).
pub fn cumprod_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    let Some(t) = &ts[0] else { return Ok(None) };
    unpack!(op, Op::Cumprod(axis));
    let (x, axis) = (&inputs[0], *axis);
    if x.value.shape()[axis] <= 1 {
        return Ok(Some(t.clone()));
    }
    let e = exclusive_cumprod(ctx, x, axis)?;
    Ok(Some(linear_recurrence(ctx, x, &mul(ctx, &e, t)?, axis)?))
}

/// VJP of `cumprod` (Hermitian convention: conjugated partials): `x̄_j = conj(E_j)·S_j` with
/// `S_j = Σ_{k≥j} ȳ_k·conj(Π_{j<i≤k} x_i)`, the reversed recurrence
/// `S_j = ȳ_j + conj(x_{j+1})·S_{j+1}`.
pub fn cumprod_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    unpack!(op, Op::Cumprod(axis));
    let (x, axis) = (&inputs[0], *axis);
    if x.value.shape()[axis] <= 1 {
        return Ok(vec![Some(ct.clone())]);
    }
    let e = exclusive_cumprod(ctx, x, axis)?;
    // Reversed, position m = n-1-j: a_m = conj(x_{j+1}) = conj(xr_{m-1}) (a_0 is not read).
    let xr = conj(ctx, &reverse(ctx, x, axis)?)?;
    let first = slice_axis(ctx, &xr, axis, 0, 1)?;
    let a = shift_in(ctx, &xr, &first, axis)?;
    let s = linear_recurrence(ctx, &a, &reverse(ctx, ct, axis)?, axis)?;
    let s = reverse(ctx, &s, axis)?;
    Ok(vec![Some(mul(ctx, &conj(ctx, &e)?, &s)?)])
}

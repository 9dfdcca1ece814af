//! Rules of the layout, slicing and matrix-structure families: all linear, so each JVP applies
//! the op to the tangent and each VJP applies its transpose (JAX `lax` transposes).

use super::ops::{broadcast_in_dim, reduce_sum, reshape, transpose, zeros_like};
use crate::{Ctx, Var};
use tenferro_ops::{CompareDir, GatherConfig, Op, PadConfig, ScatterConfig, SliceConfig};
use tenferro_tensor::{Result, Tensor};

/// VJP of `transpose`: the inverse permutation.
pub fn transpose_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    _inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    unpack!(op, Op::Transpose(perm));
    let mut inv = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i;
    }
    Ok(vec![Some(transpose(ctx, ct, &inv)?)])
}

/// VJP of `reshape`: reshape back.
pub fn reshape_vjp(
    ctx: &Ctx<'_>,
    _op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    Ok(vec![Some(reshape(ctx, ct, inputs[0].value.shape())?)])
}

/// VJP of `reverse`: reverse the same axes.
pub fn reverse_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    _inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    unpack!(op, Op::Reverse(axes));
    Ok(vec![Some(ctx.apply(Op::Reverse(axes.clone()), &[ct])?)])
}

/// VJP of `broadcast_in_dim`.
pub fn broadcast_in_dim_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    unpack!(op, Op::BroadcastInDim { shape, dims });
    let x = &inputs[0];
    // Sum the cotangent over the output axes the input does not map to and over the
    // axes it expands from size 1; the kept axes stay in output order, which differs
    // from the input's order when `dims` is not increasing, so transpose them back
    // (JAX `_broadcast_in_dim_transpose_rule`) before restoring the size-1 axes.
    let xs = x.value.shape();
    let expanded = |i: usize| xs[i] == 1 && shape[dims[i]] != 1;
    let axes: Vec<usize> = (0..shape.len())
        .filter(|a| match dims.iter().position(|d| d == a) {
            None => true,
            Some(i) => expanded(i),
        })
        .collect();
    let summed = reduce_sum(ctx, ct, &axes)?;
    // Input axes that survive the sum, in input order, and the output axis of each.
    let kept: Vec<usize> = (0..xs.len())
        .filter(|&i| !expanded(i))
        .map(|i| dims[i])
        .collect();
    let mut by_output: Vec<usize> = (0..kept.len()).collect();
    by_output.sort_unstable_by_key(|&j| kept[j]);
    let mut perm = vec![0; kept.len()];
    for (rank, &j) in by_output.iter().enumerate() {
        perm[j] = rank;
    }
    let in_order = if perm.iter().enumerate().all(|(i, &p)| i == p) {
        summed
    } else {
        transpose(ctx, &summed, &perm)?
    };
    Ok(vec![Some(reshape(ctx, &in_order, xs)?)])
}

/// VJP of `slice`: pad the cotangent back (interior padding undoes the strides).
pub fn slice_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    unpack!(op, Op::Slice(c));
    let x = &inputs[0];
    let xs = x.value.shape();
    let ys = ct.value.shape();
    let mut low = Vec::new();
    let mut high = Vec::new();
    let mut interior = Vec::new();
    for i in 0..xs.len() {
        let (st, len) = (c.starts[i], ys[i]);
        let end = if len == 0 {
            st
        } else {
            st + (len - 1) * c.strides[i] + 1
        };
        low.push(st as i64);
        high.push(xs[i] as i64 - end as i64);
        interior.push(if len == 0 { 0 } else { c.strides[i] - 1 });
    }
    Ok(vec![Some(ctx.apply(
        Op::Pad(PadConfig {
            low,
            high,
            interior,
        }),
        &[ct],
    )?)])
}

/// VJP of `pad`: crop the edges, then take every (interior+1)-th element.
pub fn pad_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    unpack!(op, Op::Pad(c));
    let x = &inputs[0];
    let xs = x.value.shape();
    // Undo the edges (pad with negated edges), then take every (interior+1)-th element.
    let unpad = PadConfig {
        low: c.low.iter().map(|&l| -l).collect(),
        high: c.high.iter().map(|&h| -h).collect(),
        interior: vec![0; xs.len()],
    };
    let body = ctx.apply(Op::Pad(unpad), &[ct])?;
    let limits = body.value.shape().to_vec();
    let cfg = SliceConfig {
        starts: vec![0; xs.len()],
        limits,
        strides: c.interior.iter().map(|&i| i + 1).collect(),
    };
    Ok(vec![Some(ctx.apply(Op::Slice(cfg), &[&body])?)])
}

/// VJP of `concatenate`: the slice of the cotangent of each operand.
pub fn concatenate_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    unpack!(op, Op::Concatenate { axis });
    let mut at = 0;
    let mut out = Vec::new();
    for input in inputs {
        let s = input.value.shape();
        let mut starts = vec![0; s.len()];
        let mut limits = ct.value.shape().to_vec();
        starts[*axis] = at;
        limits[*axis] = at + s[*axis];
        at += s[*axis];
        let cfg = SliceConfig {
            starts,
            limits,
            strides: vec![1; s.len()],
        };
        out.push(if input.node.is_some() {
            Some(super::ops::fit(
                ctx,
                &ctx.apply(Op::Slice(cfg), &[ct])?,
                input,
            )?)
        } else {
            None
        });
    }
    Ok(out)
}

/// VJP of `extract_diag`: embed the cotangent, padded back to the input shape.
pub fn extract_diag_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    unpack!(op, Op::ExtractDiag { a, b });
    let x = &inputs[0];
    let xs = x.value.shape();
    // The embedded diagonal is square; pad the longer of the two axes back to x's shape.
    let g = ctx.apply(Op::EmbedDiag { a: *a, b: *b }, &[ct])?;
    let gs = g.value.shape().to_vec();
    let g = if gs.as_slice() == xs {
        g
    } else {
        let pad = PadConfig {
            low: vec![0; xs.len()],
            high: xs
                .iter()
                .zip(&gs)
                .map(|(&x, &y)| x as i64 - y as i64)
                .collect(),
            interior: vec![0; xs.len()],
        };
        ctx.apply(Op::Pad(pad), &[&g])?
    };
    Ok(vec![Some(g)])
}

/// VJP of `embed_diag`: extract the same diagonal.
pub fn embed_diag_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    _inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    unpack!(op, Op::EmbedDiag { a, b });
    Ok(vec![Some(
        ctx.apply(Op::ExtractDiag { a: *a, b: *b }, &[ct])?,
    )])
}

/// VJP of `tril` / `triu`: self-adjoint masks.
pub fn triangle_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    _inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    Ok(vec![Some(ctx.apply(op.clone(), &[ct])?)])
}

/// VJP of `dynamic_slice`: update zeros at the same clamped starts.
pub fn dynamic_slice_vjp(
    ctx: &Ctx<'_>,
    _op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let z = zeros_like(ctx, &inputs[0])?;
    Ok(vec![
        Some(ctx.apply(Op::DynamicUpdateSlice, &[&z, ct, &inputs[1]])?),
        None,
    ])
}

/// VJP of `dynamic_update_slice`: the cotangent with the window zeroed, and the window.
pub fn dynamic_update_slice_vjp(
    ctx: &Ctx<'_>,
    _op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let (u, starts) = (&inputs[1], &inputs[2]);
    let zu = zeros_like(ctx, u)?;
    let gx = ctx.apply(Op::DynamicUpdateSlice, &[ct, &zu, starts])?;
    let gu = ctx.apply(
        Op::DynamicSlice {
            sizes: u.value.shape().to_vec(),
        },
        &[ct, starts],
    )?;
    Ok(vec![
        Some(super::ops::fit(ctx, &gx, &inputs[0])?),
        Some(super::ops::fit(ctx, &gu, u)?),
        None,
    ])
}

/// Per-component upper bounds of start indices (`dim - window`) broadcast like `indices`.
fn index_bounds(ctx: &Ctx<'_>, indices: &Var, ivd: usize, his: Vec<i64>) -> Result<Var> {
    let is = indices.value.shape().to_vec();
    let n = his.len();
    let hi = Var::constant(Tensor::from_vec(&[n], his)?);
    let hi = if ivd < is.len() {
        broadcast_in_dim(ctx, &hi, &is, &[ivd])?
    } else {
        reshape(ctx, &hi, &[])?
    };
    super::ops::cast(ctx, &hi, indices.value.dtype())
}

fn gather_to_scatter(c: &GatherConfig) -> ScatterConfig {
    ScatterConfig {
        update_window_dims: c.offset_dims.clone(),
        inserted_window_dims: c.collapsed_slice_dims.clone(),
        scatter_dims_to_operand_dims: c.start_index_map.clone(),
        index_vector_dim: c.index_vector_dim,
    }
}

/// VJP of `gather`: a scatter-add of the cotangent at the clamped starts.
pub fn gather_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    unpack!(op, Op::Gather(c));
    let (x, idx) = (&inputs[0], &inputs[1]);
    let xs = x.value.shape().to_vec();
    // Clamp like the forward gather, so the scatter never drops a window.
    let his: Vec<i64> = c
        .start_index_map
        .iter()
        .map(|&d| (xs[d] - c.slice_sizes[d]) as i64)
        .collect();
    let hi = index_bounds(ctx, idx, c.index_vector_dim, his)?;
    let zero = super::ops::scalar(0.0, 0.0, idx.value.dtype())?;
    let clamped = ctx.apply(Op::Clamp, &[idx, &zero, &hi])?;
    let z = zeros_like(ctx, x)?;
    let g = ctx.apply(Op::Scatter(gather_to_scatter(c)), &[&z, &clamped, ct])?;
    Ok(vec![Some(g), None])
}

/// VJP of `scatter`: the cotangent itself, and a gather of it for the updates, zero where the
/// forward pass dropped an out-of-bounds window.
pub fn scatter_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    unpack!(op, Op::Scatter(c));
    let (x, idx) = (&inputs[0], &inputs[1]);
    let xs = x.value.shape().to_vec();
    let u = &inputs[2];
    let us = u.value.shape().to_vec();
    let window_operand: Vec<usize> = (0..xs.len())
        .filter(|d| !c.inserted_window_dims.contains(d))
        .collect();
    let slice_sizes: Vec<usize> = (0..xs.len())
        .map(|d| match window_operand.iter().position(|&w| w == d) {
            Some(k) => us[c.update_window_dims[k]],
            None => 1,
        })
        .collect();
    let gcfg = GatherConfig {
        offset_dims: c.update_window_dims.clone(),
        collapsed_slice_dims: c.inserted_window_dims.clone(),
        start_index_map: c.scatter_dims_to_operand_dims.clone(),
        index_vector_dim: c.index_vector_dim,
        slice_sizes: slice_sizes.clone(),
    };
    let gu = ctx.apply(Op::Gather(gcfg), &[ct, idx])?;
    // Windows the forward scatter dropped (start outside [0, dim - window]) get zero.
    let his: Vec<i64> = c
        .scatter_dims_to_operand_dims
        .iter()
        .map(|&d| xs[d] as i64 - slice_sizes[d] as i64)
        .collect();
    let hi = index_bounds(ctx, idx, c.index_vector_dim, his)?;
    let zero = super::ops::scalar(0.0, 0.0, idx.value.dtype())?;
    let ge = super::ops::compare(ctx, CompareDir::Ge, idx, &zero)?;
    let le = super::ops::compare(ctx, CompareDir::Le, idx, &hi)?;
    let ok = ctx.apply(
        tenferro_ops::Op::Binary(tenferro_ops::BinaryOp::Minimum),
        &[&ge, &le],
    )?;
    let is = idx.value.shape().to_vec();
    let ok = if c.index_vector_dim < is.len() {
        ctx.apply(
            Op::Reduce {
                op: tenferro_ops::ReduceOp::Min,
                axes: vec![c.index_vector_dim],
            },
            &[&ok],
        )?
    } else {
        ok
    };
    let scatter_pos: Vec<usize> = (0..us.len())
        .filter(|p| !c.update_window_dims.contains(p))
        .collect();
    let ok = broadcast_in_dim(ctx, &ok, &us, &scatter_pos)?;
    let z = zeros_like(ctx, &gu)?;
    let gu = super::ops::select(ctx, &ok, &gu, &z)?;
    Ok(vec![
        Some(ct.clone()),
        None,
        Some(super::ops::fit(ctx, &gu, u)?),
    ])
}

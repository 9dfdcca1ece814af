//! Rules of the layout, slicing and matrix-structure families: all linear, so each JVP applies
//! the op to the tangent and each VJP applies its transpose (JAX `lax` transposes).

use super::ops::{reduce_sum, reshape, transpose, zeros_like};
use crate::{Ctx, Var};
use tenferro_ops::{Op, PadConfig, SliceConfig};
use tenferro_tensor::Result;

/// JVP of a single-input linear op: the op applied to the tangent.
fn same_op(ctx: &Ctx<'_>, op: &Op, t: &Option<Var>) -> Result<Option<Var>> {
    match t {
        Some(t) => Ok(Some(ctx.apply(op.clone(), &[t])?)),
        None => Ok(None),
    }
}

/// JVP of transpose/reshape/broadcast_in_dim/reverse.
pub fn layout_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    _inputs: &[Var],
    _out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    same_op(ctx, op, &ts[0])
}

/// VJP of transpose/reshape/broadcast_in_dim/reverse.
pub fn layout_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let x = &inputs[0];
    let g = match op {
        Op::Transpose(perm) => {
            let mut inv = vec![0; perm.len()];
            for (i, &p) in perm.iter().enumerate() {
                inv[p] = i;
            }
            transpose(ctx, ct, &inv)?
        }
        Op::Reshape(_) => reshape(ctx, ct, x.value.shape())?,
        Op::Reverse(axes) => ctx.apply(Op::Reverse(axes.clone()), &[ct])?,
        Op::BroadcastInDim { shape, dims } => {
            let xs = x.value.shape();
            let axes: Vec<usize> = (0..shape.len())
                .filter(|a| match dims.iter().position(|d| d == a) {
                    None => true,
                    Some(i) => xs[i] == 1 && shape[*a] != 1,
                })
                .collect();
            reshape(ctx, &reduce_sum(ctx, ct, &axes)?, xs)?
        }
        _ => ct.clone(),
    };
    Ok(vec![Some(g)])
}

/// JVP of slice/pad/concatenate/extract_diag/embed_diag/tril/triu.
pub fn structural_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    if let Op::Concatenate { .. } = op {
        if ts.iter().all(Option::is_none) {
            return Ok(None);
        }
        let parts: Vec<Var> = inputs
            .iter()
            .zip(ts)
            .map(|(x, t)| match t {
                Some(t) => Ok(t.clone()),
                None => zeros_like(ctx, x),
            })
            .collect::<Result<_>>()?;
        let refs: Vec<&Var> = parts.iter().collect();
        return Ok(Some(ctx.apply(op.clone(), &refs)?));
    }
    same_op(ctx, op, &ts[0])
}

/// VJP of slice/pad/concatenate/extract_diag/embed_diag/tril/triu.
pub fn structural_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let x = &inputs[0];
    let xs = x.value.shape();
    Ok(match op {
        Op::Slice(c) => {
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
            vec![Some(ctx.apply(
                Op::Pad(PadConfig {
                    low,
                    high,
                    interior,
                }),
                &[ct],
            )?)]
        }
        Op::Pad(c) => {
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
            vec![Some(ctx.apply(Op::Slice(cfg), &[&body])?)]
        }
        Op::Concatenate { axis } => {
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
            out
        }
        Op::ExtractDiag { a, b } => {
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
            vec![Some(g)]
        }
        Op::EmbedDiag { a, b } => vec![Some(ctx.apply(Op::ExtractDiag { a: *a, b: *b }, &[ct])?)],
        Op::Tril(_) | Op::Triu(_) => vec![Some(ctx.apply(op.clone(), &[ct])?)],
        _ => vec![None; inputs.len()],
    })
}

/// JVP of dynamic_slice / dynamic_update_slice (linear in the data operands).
pub fn dynamic_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    match op {
        Op::DynamicSlice { .. } => match &ts[0] {
            Some(t) => Ok(Some(ctx.apply(op.clone(), &[t, &inputs[1]])?)),
            None => Ok(None),
        },
        _ => {
            if ts[0].is_none() && ts[1].is_none() {
                return Ok(None);
            }
            let tx = match &ts[0] {
                Some(t) => t.clone(),
                None => zeros_like(ctx, &inputs[0])?,
            };
            let tu = match &ts[1] {
                Some(t) => t.clone(),
                None => zeros_like(ctx, &inputs[1])?,
            };
            Ok(Some(ctx.apply(op.clone(), &[&tx, &tu, &inputs[2]])?))
        }
    }
}

/// VJP of dynamic_slice / dynamic_update_slice (the same clamped starts).
pub fn dynamic_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    match op {
        Op::DynamicSlice { .. } => {
            let z = zeros_like(ctx, &inputs[0])?;
            Ok(vec![
                Some(ctx.apply(Op::DynamicUpdateSlice, &[&z, ct, &inputs[1]])?),
                None,
            ])
        }
        _ => {
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
    }
}

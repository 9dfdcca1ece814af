//! Rules of the contraction family. `dot_general` is bilinear: its JVP is the sum of the op
//! applied with one tangent each; its VJP contracts the cotangent with the other operand
//! (JAX `_dot_general_transpose_lhs/rhs`), conjugated per the Hermitian convention, then
//! permutes the axes back to the operand's order.

use super::ops::{add_opt, transpose};
use crate::{Ctx, Var};
use tenferro_ops::{DotGeneralConfig, Op};
use tenferro_tensor::Result;

fn matmul_config() -> DotGeneralConfig {
    DotGeneralConfig {
        lhs_contracting_dims: vec![1],
        rhs_contracting_dims: vec![0],
        lhs_batch_dims: vec![],
        rhs_batch_dims: vec![],
    }
}

/// `(config, lhs_conj, rhs_conj)` of any dot-general-like op.
fn dot_parts(op: &Op) -> Option<(DotGeneralConfig, bool, bool)> {
    match op {
        Op::DotGeneral(c) => Some((c.clone(), false, false)),
        Op::DotGeneralWithConj {
            config,
            lhs_conj,
            rhs_conj,
        } => Some((config.clone(), *lhs_conj, *rhs_conj)),
        Op::Matmul => Some((matmul_config(), false, false)),
        _ => None,
    }
}

fn dg(ctx: &Ctx<'_>, cfg: DotGeneralConfig, a: &Var, b: &Var, ca: bool, cb: bool) -> Result<Var> {
    if !ca && !cb {
        ctx.apply(Op::DotGeneral(cfg), &[a, b])
    } else {
        ctx.apply(
            Op::DotGeneralWithConj {
                config: cfg,
                lhs_conj: ca,
                rhs_conj: cb,
            },
            &[a, b],
        )
    }
}

fn position(sorted: &[usize], x: usize) -> usize {
    sorted.iter().position(|&s| s == x).unwrap_or(0)
}

/// JVP of dot_general / dot_general_with_conj / matmul / scale_real / scale_complex.
pub fn contraction_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    let Some((cfg, ca, cb)) = dot_parts(op) else {
        // scale_real / scale_complex: linear.
        return super::ops::linear_jvp(ctx, op, inputs, _out, ts);
    };
    let (a, b) = (&inputs[0], &inputs[1]);
    let ta = match &ts[0] {
        Some(t) => Some(dg(ctx, cfg.clone(), t, b, ca, cb)?),
        None => None,
    };
    let tb = match &ts[1] {
        Some(t) => Some(dg(ctx, cfg.clone(), a, t, ca, cb)?),
        None => None,
    };
    add_opt(ctx, ta, tb)
}

/// VJP of dot_general / dot_general_with_conj / matmul / scale_real / scale_complex.
pub fn contraction_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let Some((cfg, ca, cb)) = dot_parts(op) else {
        let g = match op {
            Op::ScaleReal(r) => ctx.apply(Op::ScaleReal(*r), &[ct])?,
            Op::ScaleComplex(c) => ctx.apply(Op::ScaleComplex(c.conj()), &[ct])?,
            _ => ct.clone(),
        };
        return Ok(vec![Some(g)]);
    };
    let (a, b) = (&inputs[0], &inputs[1]);
    let (an, bn) = (a.value.ndim(), b.value.ndim());
    let lfree = cfg.lhs_free(an);
    let rfree = cfg.rhs_free(bn);
    let (nl, nr, nb) = (lfree.len(), rfree.len(), cfg.lhs_batch_dims.len());
    let ct_batch: Vec<usize> = (nl + nr..nl + nr + nb).collect();
    let mut grads = vec![None, None];
    if a.node.is_some() {
        // ḡ_A = ct ·(contract rhs-free, batch) op(B)…, output [lhs free, rhs contracting (sorted), batch].
        let c = DotGeneralConfig {
            lhs_contracting_dims: (nl..nl + nr).collect(),
            rhs_contracting_dims: rfree.clone(),
            lhs_batch_dims: ct_batch.clone(),
            rhs_batch_dims: cfg.rhs_batch_dims.clone(),
        };
        let g = dg(ctx, c, ct, b, ca, cb ^ !ca)?;
        let mut rc_sorted = cfg.rhs_contracting_dims.clone();
        rc_sorted.sort_unstable();
        let nc = rc_sorted.len();
        let perm: Vec<usize> = (0..an)
            .map(|ax| {
                if let Some(k) = lfree.iter().position(|&f| f == ax) {
                    k
                } else if let Some(j) = cfg.lhs_contracting_dims.iter().position(|&f| f == ax) {
                    nl + position(&rc_sorted, cfg.rhs_contracting_dims[j])
                } else {
                    nl + nc
                        + cfg
                            .lhs_batch_dims
                            .iter()
                            .position(|&f| f == ax)
                            .unwrap_or(0)
                }
            })
            .collect();
        grads[0] = Some(super::ops::fit(ctx, &transpose(ctx, &g, &perm)?, a)?);
    }
    if b.node.is_some() {
        // ḡ_B = op(A)… ·(contract lhs-free, batch) ct, output [lhs contracting (sorted), rhs free, batch].
        let c = DotGeneralConfig {
            lhs_contracting_dims: lfree.clone(),
            rhs_contracting_dims: (0..nl).collect(),
            lhs_batch_dims: cfg.lhs_batch_dims.clone(),
            rhs_batch_dims: ct_batch,
        };
        let g = dg(ctx, c, a, ct, ca ^ !cb, cb)?;
        let mut lc_sorted = cfg.lhs_contracting_dims.clone();
        lc_sorted.sort_unstable();
        let nc = lc_sorted.len();
        let perm: Vec<usize> = (0..bn)
            .map(|ax| {
                if let Some(k) = rfree.iter().position(|&f| f == ax) {
                    nc + k
                } else if let Some(j) = cfg.rhs_contracting_dims.iter().position(|&f| f == ax) {
                    position(&lc_sorted, cfg.lhs_contracting_dims[j])
                } else {
                    nc + nr
                        + cfg
                            .rhs_batch_dims
                            .iter()
                            .position(|&f| f == ax)
                            .unwrap_or(0)
                }
            })
            .collect();
        grads[1] = Some(super::ops::fit(ctx, &transpose(ctx, &g, &perm)?, b)?);
    }
    Ok(grads)
}

//! Rules of the contraction family. `dot_general` is bilinear: its JVP is the sum of the op
//! applied with one tangent each; its VJP contracts the cotangent with the other operand
//! (JAX `_dot_general_transpose_lhs/rhs`), conjugated per the Hermitian convention, then
//! permutes the axes back to the operand's order.

use super::ops::{add_opt, transpose};
use crate::{Ctx, Var};
use tenferro_ops::{DotGeneralConfig, Op};
use tenferro_tensor::{Error, Result};

fn matmul_config() -> DotGeneralConfig {
    DotGeneralConfig {
        lhs_contracting_dims: vec![1],
        rhs_contracting_dims: vec![0],
        lhs_batch_dims: vec![],
        rhs_batch_dims: vec![],
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

/// Rank of `x` among `dims` (its position once `dims` is sorted).
fn rank_in(dims: &[usize], x: usize) -> usize {
    dims.iter().filter(|&&d| d < x).count()
}

/// Axes of an operand and where the `k`-th of them lands among the emitted axes.
type AxisGroup<'a> = (&'a [usize], &'a dyn Fn(usize) -> usize);

/// The permutation that puts an operand's axes back in place: `groups` lists, in the order the
/// VJP's contraction emits them, each group of the operand's axes with the position (within the
/// emitted axes) of each. A valid config places every axis exactly once.
fn place(op: &Op, n: usize, groups: &[AxisGroup<'_>]) -> Result<Vec<usize>> {
    let mut perm = vec![usize::MAX; n];
    for (axes, at) in groups {
        for (k, &ax) in axes.iter().enumerate() {
            if let Some(p) = perm.get_mut(ax) {
                *p = at(k);
            }
        }
    }
    if perm.contains(&usize::MAX) {
        return Err(Error::internal(
            op.name(),
            "contraction VJP: an operand axis is not placed by the config",
        ));
    }
    Ok(perm)
}

/// JVP of a bilinear contraction `dg(a, b)`: `dg(ȧ, b) + dg(a, ḃ)`.
fn dot_jvp(
    ctx: &Ctx<'_>,
    (cfg, ca, cb): (DotGeneralConfig, bool, bool),
    inputs: &[Var],
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
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

/// VJP of a bilinear contraction `dg(a, b)` (`op` names it in errors).
fn dot_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    (cfg, ca, cb): (DotGeneralConfig, bool, bool),
    inputs: &[Var],
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
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
        let rc = &cfg.rhs_contracting_dims;
        let nc = rc.len();
        let perm = place(
            op,
            an,
            &[
                (&lfree, &|k| k),
                (&cfg.lhs_contracting_dims, &|j| nl + rank_in(rc, rc[j])),
                (&cfg.lhs_batch_dims, &|k| nl + nc + k),
            ],
        )?;
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
        let lc = &cfg.lhs_contracting_dims;
        let nc = lc.len();
        let perm = place(
            op,
            bn,
            &[
                (&rfree, &|k| nc + k),
                (&cfg.rhs_contracting_dims, &|j| rank_in(lc, lc[j])),
                (&cfg.rhs_batch_dims, &|k| nc + nr + k),
            ],
        )?;
        grads[1] = Some(super::ops::fit(ctx, &transpose(ctx, &g, &perm)?, b)?);
    }
    Ok(grads)
}

/// JVP of `dot_general`.
pub fn dot_general_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    unpack!(op, Op::DotGeneral(cfg));
    dot_jvp(ctx, (cfg.clone(), false, false), inputs, ts)
}

/// VJP of `dot_general`.
pub fn dot_general_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    unpack!(op, Op::DotGeneral(cfg));
    dot_vjp(ctx, op, (cfg.clone(), false, false), inputs, ct)
}

/// JVP of `dot_general_with_conj`.
pub fn dot_general_with_conj_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    unpack!(
        op,
        Op::DotGeneralWithConj {
            config,
            lhs_conj,
            rhs_conj,
        }
    );
    dot_jvp(ctx, (config.clone(), *lhs_conj, *rhs_conj), inputs, ts)
}

/// VJP of `dot_general_with_conj`.
pub fn dot_general_with_conj_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    unpack!(
        op,
        Op::DotGeneralWithConj {
            config,
            lhs_conj,
            rhs_conj,
        }
    );
    dot_vjp(ctx, op, (config.clone(), *lhs_conj, *rhs_conj), inputs, ct)
}

/// JVP of `matmul` (`dot_general` contracting axis 1 of `a` with axis 0 of `b`).
pub fn matmul_jvp(
    ctx: &Ctx<'_>,
    _op: &Op,
    inputs: &[Var],
    _out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    dot_jvp(ctx, (matmul_config(), false, false), inputs, ts)
}

/// VJP of `matmul`.
pub fn matmul_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    dot_vjp(ctx, op, (matmul_config(), false, false), inputs, ct)
}

/// VJP of `scale_real`: self-adjoint (the same real factor).
pub fn scale_real_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    _inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    unpack!(op, Op::ScaleReal(c));
    Ok(vec![Some(ctx.apply(Op::ScaleReal(*c), &[ct])?)])
}

/// VJP of `scale_complex`: the conjugate factor.
pub fn scale_complex_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    _inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    unpack!(op, Op::ScaleComplex(c));
    Ok(vec![Some(ctx.apply(Op::ScaleComplex(c.conj()), &[ct])?)])
}

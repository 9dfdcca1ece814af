//! The derivative-rule table: for every primitive one JVP and one VJP side by side, or a mark
//! that the op has a zero derivative, cuts the graph, or has no rule yet. Rule bodies live in
//! family files and are written with differentiable primitives ([`Ctx::apply`]); every op linear
//! in its data operands shares one JVP, [`ops::linear_jvp`].

pub mod ops;

mod contraction;
mod elementwise;
mod linalg;
mod reduce;
mod structural;

use crate::{Ctx, Var};
use tenferro_ops::{Op, OpKind};
use tenferro_tensor::{Error, Result};

/// Tangent rule: `(ctx, op, inputs, output, input tangents) → output tangent`.
pub type Jvp = fn(&Ctx<'_>, &Op, &[Var], &Var, &[Option<Var>]) -> Result<Option<Var>>;
/// Cotangent rule: `(ctx, op, inputs, output, output cotangent) → input cotangents`
/// (`None`: symbolically zero).
pub type Vjp = fn(&Ctx<'_>, &Op, &[Var], &Var, &Var) -> Result<Vec<Option<Var>>>;

/// Tangent rule of an op with several outputs: `(ctx, op, inputs, outputs, input tangents,
/// wanted outputs) → output tangents` (`None`: symbolically zero or not wanted).
pub type JvpMulti =
    fn(&Ctx<'_>, &Op, &[Var], &[Var], &[Option<Var>], &[bool]) -> Result<Vec<Option<Var>>>;
/// Cotangent rule of an op with several outputs: `(ctx, op, inputs, outputs, output cotangents
/// (`None`: zero)) → input cotangents`.
pub type VjpMulti = fn(&Ctx<'_>, &Op, &[Var], &[Var], &[Option<Var>]) -> Result<Vec<Option<Var>>>;

/// How an op differentiates.
#[derive(Clone, Copy)]
pub enum Rule {
    /// A JVP and a VJP.
    Linearize(Jvp, Vjp),
    /// A JVP and a VJP of an op with several outputs (decompositions).
    LinearizeMulti(JvpMulti, VjpMulti),
    /// Records a node whose derivative is symbolically zero (`sign`).
    Zero,
    /// Records no edge at all (`compare`: boolean output).
    Cut,
    /// No rule yet: differentiating raises `UnsupportedAdRuleError`.
    Missing,
}

use contraction as c;
use elementwise as e;
use linalg as la;
use reduce as r;
use structural as s;

/// The table, keyed by op kind.
pub fn rule(kind: OpKind) -> Rule {
    use OpKind as K;
    use Rule::{Cut, Linearize as L, LinearizeMulti as LM, Zero};
    match kind {
        K::Neg
        | K::Conj
        | K::Abs
        | K::Exp
        | K::Log
        | K::Sin
        | K::Cos
        | K::Tanh
        | K::Sqrt
        | K::Rsqrt
        | K::Expm1
        | K::Log1p
        | K::Erf => L(e::unary_jvp, e::unary_vjp),
        K::Sign => Zero,
        K::Add | K::Sub | K::Mul | K::Div | K::Rem | K::Pow | K::Maximum | K::Minimum => {
            L(e::binary_jvp, e::binary_vjp)
        }
        K::Compare => Cut,
        K::Select => L(ops::linear_jvp, e::select_vjp),
        K::Clamp => L(e::clamp_jvp, e::clamp_vjp),
        K::Convert | K::Cast => L(e::convert_jvp, e::convert_vjp),
        K::Transpose => L(ops::linear_jvp, s::transpose_vjp),
        K::Reshape => L(ops::linear_jvp, s::reshape_vjp),
        K::BroadcastInDim => L(ops::linear_jvp, s::broadcast_in_dim_vjp),
        K::Reverse => L(ops::linear_jvp, s::reverse_vjp),
        K::Slice => L(ops::linear_jvp, s::slice_vjp),
        K::Pad => L(ops::linear_jvp, s::pad_vjp),
        K::Concatenate => L(ops::linear_jvp, s::concatenate_vjp),
        K::ExtractDiag => L(ops::linear_jvp, s::extract_diag_vjp),
        K::EmbedDiag => L(ops::linear_jvp, s::embed_diag_vjp),
        K::Tril | K::Triu => L(ops::linear_jvp, s::triangle_vjp),
        K::DynamicSlice => L(ops::linear_jvp, s::dynamic_slice_vjp),
        K::DynamicUpdateSlice => L(ops::linear_jvp, s::dynamic_update_slice_vjp),
        K::Gather => L(ops::linear_jvp, s::gather_vjp),
        K::Scatter => L(ops::linear_jvp, s::scatter_vjp),
        K::ReduceSum | K::ReduceProd | K::ReduceMax | K::ReduceMin | K::ReduceSumSquares => {
            L(r::reduce_jvp, r::reduce_vjp)
        }
        K::DotGeneral | K::DotGeneralWithConj | K::Matmul | K::ScaleReal | K::ScaleComplex => {
            L(c::contraction_jvp, c::contraction_vjp)
        }
        K::Svd => LM(la::svd_jvp, la::svd_vjp),
        K::Svdvals => L(la::svdvals_jvp, la::svdvals_vjp),
        K::Eigvalsh => L(la::eigvalsh_jvp, la::eigvalsh_vjp),
        K::Qr => LM(la::qr_jvp, la::qr_vjp),
        K::Eigh => LM(la::eigh_jvp, la::eigh_vjp),
        K::Eig => LM(la::eig_jvp, la::eig_vjp),
        K::Lu => LM(la::lu_jvp, la::lu_vjp),
        K::Slogdet => LM(la::slogdet_jvp, la::slogdet_vjp),
        K::Cholesky => L(la::cholesky_jvp, la::cholesky_vjp),
        K::Solve => L(la::solve_jvp, la::solve_vjp),
        K::TriangularSolve => L(la::triangular_solve_jvp, la::triangular_solve_vjp),
    }
}

/// Ops that record no edge (their outputs never carry derivatives).
pub fn cuts_graph(op: &Op) -> bool {
    matches!(rule(op.kind()), Rule::Cut)
}

fn missing(op: &Op) -> Error {
    Error::unsupported_ad_rule(
        op.name(),
        format!("no derivative rule for {} yet", op.name()),
    )
}

/// Apply the VJP of `op`.
///
/// # Errors
/// `Unsupported` for ops without a rule; errors of the rule body.
pub fn vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    match rule(op.kind()) {
        Rule::Linearize(_, v) => v(ctx, op, inputs, out, ct),
        Rule::LinearizeMulti(..) => Err(multi(op)),
        Rule::Zero | Rule::Cut => Ok(vec![None; inputs.len()]),
        Rule::Missing => Err(missing(op)),
    }
}

/// Apply the JVP of `op`.
///
/// # Errors
/// `Unsupported` for ops without a rule; errors of the rule body.
pub fn jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    match rule(op.kind()) {
        Rule::Linearize(j, _) => j(ctx, op, inputs, out, ts),
        Rule::LinearizeMulti(..) => Err(multi(op)),
        Rule::Zero | Rule::Cut => Ok(None),
        Rule::Missing => Err(missing(op)),
    }
}

fn multi(op: &Op) -> Error {
    Error::internal(
        op.name(),
        "has several outputs; its rules take all of them (called through the single-output path)",
    )
}

fn single(op: &Op) -> Error {
    Error::internal(
        op.name(),
        "has one output; its rules take one (called through the several-output path)",
    )
}

/// Apply the VJP of an op with several outputs.
///
/// # Errors
/// `Unsupported` for ops without a rule; errors of the rule body.
pub fn vjp_multi(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    outs: &[Var],
    cts: &[Option<Var>],
) -> Result<Vec<Option<Var>>> {
    match rule(op.kind()) {
        Rule::LinearizeMulti(_, v) => {
            if cts.iter().all(Option::is_none) {
                return Ok(vec![None; inputs.len()]);
            }
            v(ctx, op, inputs, outs, cts)
        }
        Rule::Zero | Rule::Cut => Ok(vec![None; inputs.len()]),
        Rule::Linearize(..) => Err(single(op)),
        Rule::Missing => Err(missing(op)),
    }
}

/// Apply the JVP of an op with several outputs, for the `wanted` outputs.
///
/// # Errors
/// `Unsupported` for ops without a rule; errors of the rule body.
pub fn jvp_multi(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    outs: &[Var],
    ts: &[Option<Var>],
    wanted: &[bool],
) -> Result<Vec<Option<Var>>> {
    match rule(op.kind()) {
        Rule::LinearizeMulti(j, _) => j(ctx, op, inputs, outs, ts, wanted),
        Rule::Zero | Rule::Cut => Ok(vec![None; outs.len()]),
        Rule::Linearize(..) => Err(single(op)),
        Rule::Missing => Err(missing(op)),
    }
}

/// The typed error of a rule body reached with an op its row does not route to it (a broken
/// table, never user input).
pub(crate) fn misrouted(rule: &str, op: &Op) -> Error {
    Error::internal(
        op.name(),
        format!("the rule `{rule}` has no case for `{}`", op.name()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tenferro_ops::{row, CATALOG};
    use tenferro_tensor::Tensor;

    #[test]
    fn every_kind_has_its_catalog_row_and_a_rule() {
        assert_eq!(CATALOG.len(), OpKind::COUNT);
        for kind in OpKind::ALL {
            assert_eq!(row(kind).kind, kind, "catalog row of {kind:?}");
            assert!(
                !matches!(rule(kind), Rule::Missing),
                "{} has no derivative rule",
                row(kind).name
            );
        }
    }

    /// A rule context that runs nothing: the misrouted rule must fail before it applies an op.
    struct NoExecution;

    impl crate::Apply for NoExecution {
        fn apply_vars(&self, op: &Op, _: &[&Var], _: bool) -> Result<Vec<Var>> {
            Err(Error::internal(
                op.name(),
                "this test context executes nothing",
            ))
        }
    }

    #[test]
    fn a_misrouted_rule_is_a_typed_internal_error() {
        // The transpose VJP reached with a reshape: the table never does this, and if it ever
        // did the result is an internal error, not a plausible gradient.
        let x = Var::constant(Tensor::from_vec(&[2, 3], vec![0.0f64; 6]).unwrap());
        let ct = x.clone();
        let ctx = Ctx {
            exec: &NoExecution,
            record: false,
        };
        let err = structural::transpose_vjp(
            &ctx,
            &Op::Reshape(vec![6]),
            std::slice::from_ref(&x),
            &x,
            &ct,
        );
        assert!(
            matches!(err, Err(Error::Internal { .. })),
            "{:?}",
            err.err()
        );
    }
}

//! The derivative-rule table: for every primitive one JVP and one VJP side by side, or a mark
//! that the op has a zero derivative, cuts the graph, or has no rule yet. Rule bodies live in
//! family files and are written with differentiable primitives ([`Ctx::apply`]); every op linear
//! in its data operands shares one JVP, [`ops::linear_jvp`].

pub mod ops;

mod contraction;
mod elementwise;
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

/// How an op differentiates.
#[derive(Clone, Copy)]
pub enum Rule {
    /// A JVP and a VJP.
    Linearize(Jvp, Vjp),
    /// Records a node whose derivative is symbolically zero (`sign`).
    Zero,
    /// Records no edge at all (`compare`: boolean output).
    Cut,
    /// No rule yet: differentiating raises `UnsupportedAdRuleError`.
    Missing,
}

use contraction as c;
use elementwise as e;
use reduce as r;
use structural as s;

/// The table, keyed by op kind.
pub fn rule(kind: OpKind) -> Rule {
    use OpKind as K;
    use Rule::{Cut, Linearize as L, Zero};
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
        K::Transpose | K::Reshape | K::BroadcastInDim | K::Reverse => {
            L(ops::linear_jvp, s::layout_vjp)
        }
        K::Slice | K::Pad | K::Concatenate | K::ExtractDiag | K::EmbedDiag | K::Tril | K::Triu => {
            L(ops::linear_jvp, s::structural_vjp)
        }
        K::DynamicSlice | K::DynamicUpdateSlice => L(ops::linear_jvp, s::dynamic_vjp),
        K::Gather | K::Scatter => L(ops::linear_jvp, s::indexing_vjp),
        K::ReduceSum | K::ReduceProd | K::ReduceMax | K::ReduceMin | K::ReduceSumSquares => {
            L(r::reduce_jvp, r::reduce_vjp)
        }
        K::DotGeneral | K::DotGeneralWithConj | K::Matmul | K::ScaleReal | K::ScaleComplex => {
            L(c::contraction_jvp, c::contraction_vjp)
        }
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
        Rule::Zero | Rule::Cut => Ok(None),
        Rule::Missing => Err(missing(op)),
    }
}

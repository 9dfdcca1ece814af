//! The derivative-rule table: one row per primitive ([`RULES`], indexed by [`OpKind`]) naming
//! that op's own JVP and VJP side by side, or marking that it has a zero derivative or cuts the
//! graph, plus a slot for a batching rule (reserved for vmap). A row reaches the rule bodies of
//! its op directly: no rule asks again which op it was called for. Rule bodies live in family
//! files and are written with differentiable primitives ([`Ctx::apply`]); the shapes of rule
//! that many ops share are row kinds ([`Single`]): a holomorphic unary op names only its
//! derivative `f'`, an elementwise binary op its two partials, an op linear in its data
//! operands only its VJP (its JVP is [`ops::linear_jvp`]).

/// Binds the parameters of the op variant a per-kind rule is written for, e.g.
/// `unpack!(op, Op::Transpose(perm))`; any other op means a broken table row, and the rule
/// returns the typed internal error of [`misrouted`] (never a plausible derivative).
macro_rules! unpack {
    ($op:expr, $pat:pat) => {
        let $pat = $op else {
            return Err($crate::rules::misrouted(stringify!($pat), $op));
        };
    };
}

pub mod ops;

mod contraction;
mod elementwise;
mod fft;
mod linalg;
mod reduce;
mod sorting;
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

/// Derivative of a holomorphic (or real-analytic) elementwise unary op `y = f(x)`:
/// `(ctx, x, y) → f'(x)` (broadcastable to `x`, `x`'s dtype). The JVP is `ẋ·f'`, the VJP
/// `ȳ·conj(f')` (Hermitian convention), both written once in `elementwise.rs`.
pub type Deriv = fn(&Ctx<'_>, &Var, &Var) -> Result<Var>;

/// Partial derivatives of an elementwise binary op `out = f(x, y)`: `(ctx, x, y, out) →
/// (∂out/∂x, ∂out/∂y)` at the broadcast shape, `None` marking a constant 1. The JVP is
/// `ẋ·∂x + ẏ·∂y`, the VJP `(ȳ·conj(∂x), ȳ·conj(∂y))` fitted to each operand.
pub type Partials = fn(&Ctx<'_>, &Var, &Var, &Var) -> Result<(Option<Var>, Option<Var>)>;

/// Batching rule, reserved for vmap (no row fills it yet): `(ctx, op, inputs, batch axis of
/// each input (`None`: not batched)) → (outputs, batch axis of each output)`, as JAX's
/// `primitive_batchers`.
///
/// # Errors
/// A batching rule returns the errors of the primitives it applies.
pub type BatchRule =
    fn(&Ctx<'_>, &Op, &[Var], &[Option<usize>]) -> Result<(Vec<Var>, Vec<Option<usize>>)>;

/// How an op with one output differentiates: the shape of its rule.
#[derive(Clone, Copy)]
pub enum Single {
    /// A holomorphic (or real-analytic) unary op, named by its derivative.
    Holomorphic(Deriv),
    /// An elementwise binary op, named by its partials.
    Partials(Partials),
    /// An op linear in its data operands: the JVP is the op applied to the tangents
    /// ([`ops::linear_jvp`]), the VJP its transpose.
    Linear(Vjp),
    /// A written-out JVP and VJP.
    Rules(Jvp, Vjp),
}

/// How an op differentiates.
#[derive(Clone, Copy)]
pub enum Rule {
    /// A JVP and a VJP of an op with one output.
    Linearize(Single),
    /// A JVP and a VJP of an op with several outputs (decompositions).
    LinearizeMulti(JvpMulti, VjpMulti),
    /// Records a node whose derivative is symbolically zero (`sign`).
    Zero,
    /// Records no edge at all (`compare`: boolean output).
    Cut,
    /// No rule yet: differentiating raises `UnsupportedAdRuleError`.
    Missing,
}

/// One row of the rule table: everything the differentiation of one op kind needs.
#[derive(Clone, Copy)]
pub struct RuleRow {
    /// The op kind (row `i` is the kind with discriminant `i`).
    pub kind: OpKind,
    /// Its JVP and VJP.
    pub rule: Rule,
    /// Its batching rule (reserved for vmap; `None` in every row so far).
    pub batch: Option<BatchRule>,
}

const fn row(kind: OpKind, rule: Rule) -> RuleRow {
    RuleRow {
        kind,
        rule,
        batch: None,
    }
}

const fn holomorphic(d: Deriv) -> Rule {
    Rule::Linearize(Single::Holomorphic(d))
}

const fn partials(p: Partials) -> Rule {
    Rule::Linearize(Single::Partials(p))
}

const fn linear(v: Vjp) -> Rule {
    Rule::Linearize(Single::Linear(v))
}

const fn rules(j: Jvp, v: Vjp) -> Rule {
    Rule::Linearize(Single::Rules(j, v))
}

const fn multi(j: JvpMulti, v: VjpMulti) -> Rule {
    Rule::LinearizeMulti(j, v)
}

use contraction as c;
use elementwise as e;
use fft as f;
use linalg as la;
use reduce as r;
use sorting as so;
use structural as s;
use OpKind as K;
use Rule::{Cut, Zero};

/// Every primitive's rules, one row each, in `OpKind` order (row `i` is the kind with
/// discriminant `i`, checked at compile time below).
pub static RULES: &[RuleRow] = &TABLE;

const TABLE: [RuleRow; OpKind::COUNT] = [
    row(K::Neg, holomorphic(e::neg_deriv)),
    row(K::Conj, rules(e::conj_jvp, e::conj_vjp)),
    row(K::Abs, rules(e::abs_jvp, e::abs_vjp)),
    row(K::Sign, Zero),
    row(K::Exp, holomorphic(e::exp_deriv)),
    row(K::Log, holomorphic(e::log_deriv)),
    row(K::Sin, holomorphic(e::sin_deriv)),
    row(K::Cos, holomorphic(e::cos_deriv)),
    row(K::Tanh, holomorphic(e::tanh_deriv)),
    row(K::Sqrt, holomorphic(e::sqrt_deriv)),
    row(K::Rsqrt, holomorphic(e::rsqrt_deriv)),
    row(K::Expm1, holomorphic(e::expm1_deriv)),
    row(K::Log1p, holomorphic(e::log1p_deriv)),
    row(K::Erf, holomorphic(e::erf_deriv)),
    row(K::Round, Zero),
    row(K::Floor, Zero),
    row(K::Ceil, Zero),
    row(K::Trunc, Zero),
    row(K::Sinh, holomorphic(e::sinh_deriv)),
    row(K::Cosh, holomorphic(e::cosh_deriv)),
    row(K::BitwiseNot, Cut),
    row(K::Add, partials(e::add_partials)),
    row(K::Sub, partials(e::sub_partials)),
    row(K::Mul, partials(e::mul_partials)),
    row(K::Div, partials(e::div_partials)),
    row(K::Rem, partials(e::rem_partials)),
    row(K::Pow, partials(e::pow_partials)),
    row(K::Maximum, partials(e::maximum_partials)),
    row(K::Minimum, partials(e::minimum_partials)),
    row(K::BitwiseAnd, Cut),
    row(K::BitwiseOr, Cut),
    row(K::BitwiseXor, Cut),
    row(K::ShiftLeft, Cut),
    row(K::ShiftRightArithmetic, Cut),
    row(K::Copysign, partials(e::copysign_partials)),
    row(K::Nextafter, partials(e::nextafter_partials)),
    row(K::Compare, Cut),
    row(K::Select, linear(e::select_vjp)),
    row(K::Clamp, rules(e::clamp_jvp, e::clamp_vjp)),
    row(K::Convert, rules(e::convert_jvp, e::convert_vjp)),
    row(K::Cast, rules(e::convert_jvp, e::convert_vjp)),
    row(K::Transpose, linear(s::transpose_vjp)),
    row(K::Reshape, linear(s::reshape_vjp)),
    row(K::BroadcastInDim, linear(s::broadcast_in_dim_vjp)),
    row(K::Reverse, linear(s::reverse_vjp)),
    row(K::Slice, linear(s::slice_vjp)),
    row(K::DynamicSlice, linear(s::dynamic_slice_vjp)),
    row(K::DynamicUpdateSlice, linear(s::dynamic_update_slice_vjp)),
    row(K::Pad, linear(s::pad_vjp)),
    row(K::Concatenate, linear(s::concatenate_vjp)),
    row(K::Gather, linear(s::gather_vjp)),
    row(K::Scatter, linear(s::scatter_vjp)),
    row(K::ExtractDiag, linear(s::extract_diag_vjp)),
    row(K::EmbedDiag, linear(s::embed_diag_vjp)),
    row(K::Tril, linear(s::triangle_vjp)),
    row(K::Triu, linear(s::triangle_vjp)),
    row(K::ReduceSum, rules(r::sum_jvp, r::sum_vjp)),
    row(K::ReduceProd, rules(r::prod_jvp, r::prod_vjp)),
    row(K::ReduceMax, rules(r::extremum_jvp, r::extremum_vjp)),
    row(K::ReduceMin, rules(r::extremum_jvp, r::extremum_vjp)),
    row(
        K::ReduceSumSquares,
        rules(r::sum_squares_jvp, r::sum_squares_vjp),
    ),
    row(K::DotGeneral, rules(c::dot_general_jvp, c::dot_general_vjp)),
    row(
        K::DotGeneralWithConj,
        rules(c::dot_general_with_conj_jvp, c::dot_general_with_conj_vjp),
    ),
    row(K::Matmul, rules(c::matmul_jvp, c::matmul_vjp)),
    row(K::ScaleReal, linear(c::scale_real_vjp)),
    row(K::ScaleComplex, linear(c::scale_complex_vjp)),
    row(K::Svd, multi(la::svd_jvp, la::svd_vjp)),
    row(K::Svdvals, rules(la::svdvals_jvp, la::svdvals_vjp)),
    row(K::Qr, multi(la::qr_jvp, la::qr_vjp)),
    row(K::Eigh, multi(la::eigh_jvp, la::eigh_vjp)),
    row(K::Eigvalsh, rules(la::eigvalsh_jvp, la::eigvalsh_vjp)),
    row(K::Eig, multi(la::eig_jvp, la::eig_vjp)),
    row(K::Cholesky, rules(la::cholesky_jvp, la::cholesky_vjp)),
    row(K::Lu, multi(la::lu_jvp, la::lu_vjp)),
    row(K::Solve, rules(la::solve_jvp, la::solve_vjp)),
    row(
        K::TriangularSolve,
        rules(la::triangular_solve_jvp, la::triangular_solve_vjp),
    ),
    row(K::Slogdet, multi(la::slogdet_jvp, la::slogdet_vjp)),
    row(K::Fft, linear(f::fft_vjp)),
    row(K::Sort, rules(so::sort_jvp, so::sort_vjp)),
    row(K::Argsort, Cut),
    row(K::Argmax, Cut),
    row(K::Argmin, Cut),
    row(K::SearchSorted, Cut),
    row(K::Cumsum, linear(so::cumsum_vjp)),
    row(K::Cumprod, rules(so::cumprod_jvp, so::cumprod_vjp)),
];

// Row `i` holds the rules of the kind whose discriminant is `i`: with `TABLE` sized
// `OpKind::COUNT`, every kind has exactly one row (a new kind fails to compile until it has
// one), and `rule` indexes instead of searching.
const _: () = {
    let mut i = 0;
    while i < TABLE.len() {
        assert!(
            TABLE[i].kind as usize == i,
            "RULES rows must follow OpKind order"
        );
        i += 1;
    }
};

/// The rule-table row of `kind`.
pub fn rule_row(kind: OpKind) -> &'static RuleRow {
    &TABLE[kind as usize]
}

/// How `kind` differentiates (its row's [`Rule`]).
pub fn rule(kind: OpKind) -> Rule {
    rule_row(kind).rule
}

impl Single {
    fn jvp(
        self,
        ctx: &Ctx<'_>,
        op: &Op,
        inputs: &[Var],
        out: &Var,
        ts: &[Option<Var>],
    ) -> Result<Option<Var>> {
        match self {
            Single::Holomorphic(d) => e::holomorphic_jvp(ctx, d, inputs, out, ts),
            Single::Partials(p) => e::partials_jvp(ctx, p, inputs, out, ts),
            Single::Linear(_) => ops::linear_jvp(ctx, op, inputs, out, ts),
            Single::Rules(j, _) => j(ctx, op, inputs, out, ts),
        }
    }

    fn vjp(
        self,
        ctx: &Ctx<'_>,
        op: &Op,
        inputs: &[Var],
        out: &Var,
        ct: &Var,
    ) -> Result<Vec<Option<Var>>> {
        match self {
            Single::Holomorphic(d) => e::holomorphic_vjp(ctx, d, inputs, out, ct),
            Single::Partials(p) => e::partials_vjp(ctx, p, inputs, out, ct),
            Single::Linear(v) | Single::Rules(_, v) => v(ctx, op, inputs, out, ct),
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
        Rule::Linearize(s) => s.vjp(ctx, op, inputs, out, ct),
        Rule::LinearizeMulti(..) => Err(several_outputs(op)),
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
        Rule::Linearize(s) => s.jvp(ctx, op, inputs, out, ts),
        Rule::LinearizeMulti(..) => Err(several_outputs(op)),
        Rule::Zero | Rule::Cut => Ok(None),
        Rule::Missing => Err(missing(op)),
    }
}

fn several_outputs(op: &Op) -> Error {
    Error::internal(
        op.name(),
        "has several outputs; its rules take all of them (called through the single-output path)",
    )
}

fn one_output(op: &Op) -> Error {
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
        Rule::Linearize(..) => Err(one_output(op)),
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
        Rule::Linearize(..) => Err(one_output(op)),
        Rule::Missing => Err(missing(op)),
    }
}

/// The typed error of a per-kind rule reached with an op that is not the variant `expected` it
/// is written for (a broken table row, never user input); see [`unpack!`].
pub(crate) fn misrouted(expected: &str, op: &Op) -> Error {
    Error::internal(
        op.name(),
        format!(
            "a derivative rule written for `{expected}` was reached with `{}` (broken rule-table row)",
            op.name()
        ),
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
        let Err(Error::Internal { op, message }) = err else {
            panic!("expected an internal error, got {:?}", err.map(|_| ()));
        };
        assert_eq!(op, "reshape");
        assert!(
            message.contains("`Op::Transpose(perm)`") && message.contains("`reshape`"),
            "{message}"
        );
    }

    #[test]
    fn row_i_is_kind_i_and_no_batching_rule_is_filled_yet() {
        assert_eq!(RULES.len(), OpKind::COUNT);
        for (i, kind) in OpKind::ALL.into_iter().enumerate() {
            let r = rule_row(kind);
            assert_eq!(r.kind, kind);
            assert_eq!(RULES[i].kind, kind);
            assert!(r.batch.is_none(), "{kind:?}: vmap is not implemented yet");
        }
    }

    #[test]
    fn zero_and_cut_rows_record_no_derivative() {
        assert!(matches!(rule(OpKind::Sign), Rule::Zero));
        assert!(matches!(rule(OpKind::Compare), Rule::Cut));
        assert!(cuts_graph(&Op::Compare(tenferro_ops::CompareDir::Lt)));
        assert!(!cuts_graph(&Op::Unary(tenferro_ops::UnaryOp::Sign)));
        let x = Var::constant(Tensor::from_vec(&[2], vec![1.0f64, -2.0]).unwrap());
        let ctx = Ctx {
            exec: &NoExecution,
            record: false,
        };
        let sign = Op::Unary(tenferro_ops::UnaryOp::Sign);
        let xs = std::slice::from_ref(&x);
        // Symbolic zeros, without applying any op (the context executes nothing).
        assert!(jvp(&ctx, &sign, xs, &x, &[Some(x.clone())])
            .unwrap()
            .is_none());
        let cts = vjp(&ctx, &sign, xs, &x, &x).unwrap();
        assert!(cts.len() == 1 && cts[0].is_none());
    }
}

//! The dot-product identity between the JVP and the VJP rule of every differentiable primitive
//! (`autodiff.md`, "Complex numbers"): for random `u` (output cotangent) and `v` (input tangents),
//!
//! ```text
//! Σ_inputs <vjp(u)_i, v_i> = <u, jvp(v)>,   <a, b> = Re Σ conj(a)·b
//! ```
//!
//! checked through the public recording / reverse / forward API (`Ctx::apply`, `vjp_graph`,
//! `jvp_graph`), for `float64` and `complex128` wherever the catalog admits them. Ops with several
//! outputs are checked through a function of their outputs flattened into one vector (so `u`
//! covers every output at once); where a decomposition has a gauge freedom the function is
//! gauge-invariant (see each case). The manifest test fails when a differentiable kind of the
//! rule table has no case for a dtype its catalog row admits, so a new primitive cannot be
//! skipped silently; every case also checks that an independent tangent breaks the identity (the
//! check is not vacuous). The unary cases follow from `UnaryOp::ALL` and the rule table, and the
//! kinds whose row is `Zero` or `Cut` are checked for what the row says (a zero derivative, no
//! recorded node), so a new unary or zero-derivative primitive needs no edit here.

use std::collections::HashSet;
use std::sync::Arc;
use tenferro_ad::rules::{rule, Rule};
use tenferro_ad::{jvp_graph, vjp_graph, Apply, Ctx, Node, NodeKind, Var};
use tenferro_cpu::CpuEngine;
use tenferro_eager::{DirectHost, Exec, ModeState, Runtime, IMPLICIT};
use tenferro_ops::{
    row, DotGeneralConfig, GatherConfig, LinalgOp, Op, OpKind, PadConfig, ReduceOp, ScatterConfig,
    SliceConfig, UnaryOp,
};
use tenferro_ops::{BinaryOp, CompareDir};
use tenferro_tensor::{Complex32, Complex64, DType, Result, Tensor};

/// The one place a [`Ctx`] is made (its construction is about to change).
/// A serial CPU engine lent to a fresh runtime, as a backward pass resolves it; rule bodies run
/// through the eager core's `Exec::apply_vars` (the session path).
struct Env {
    host: DirectHost,
    exec: Exec,
}

impl Apply for Env {
    fn apply_vars(&self, op: &Op, inputs: &[&Var], record: bool) -> Result<Vec<Var>> {
        let mode = ModeState {
            grad_enabled: record,
            ..ModeState::default()
        };
        self.exec.apply_vars(op, inputs, &mode, &self.host)
    }
}

fn ctx(e: &Env, record: bool) -> Ctx<'_> {
    Ctx { exec: e, record }
}

fn engine() -> Env {
    let host = DirectHost {
        engine: Arc::new(CpuEngine::new(Some(1)).unwrap()),
    };
    let rt = Runtime::new();
    let exec = IMPLICIT
        .resolve(
            "dot_product_identity",
            Some(&rt),
            &ModeState::default(),
            &host,
        )
        .unwrap();
    Env { host, exec }
}

// ---------------------------------------------------------------------------------------------
// Deterministic random inputs.

/// xorshift64* (no dependency; deterministic across platforms).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `[-1, 1)`.
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }

    /// Uniform in `[lo, hi)`.
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.uniform() + 1.0) / 2.0
    }
}

/// A random tensor of `dtype` (real and imaginary parts uniform in `[-1, 1)`).
fn rand(rng: &mut Rng, dtype: DType, shape: &[usize]) -> Tensor {
    rand_in(rng, dtype, shape, (-1.0, 1.0), (-1.0, 1.0))
}

/// A random tensor with the real part in `re` and the imaginary part (complex) in `im`.
fn rand_in(rng: &mut Rng, dtype: DType, shape: &[usize], re: (f64, f64), im: (f64, f64)) -> Tensor {
    let n: usize = shape.iter().product();
    match dtype {
        DType::F64 => Tensor::from_vec(shape, (0..n).map(|_| rng.range(re.0, re.1)).collect()),
        DType::F32 => Tensor::from_vec(
            shape,
            (0..n).map(|_| rng.range(re.0, re.1) as f32).collect(),
        ),
        DType::C64 => Tensor::from_vec(
            shape,
            (0..n)
                .map(|_| Complex64::new(rng.range(re.0, re.1), rng.range(im.0, im.1)))
                .collect(),
        ),
        DType::C32 => Tensor::from_vec(
            shape,
            (0..n)
                .map(|_| Complex32::new(rng.range(re.0, re.1) as f32, rng.range(im.0, im.1) as f32))
                .collect(),
        ),
        DType::Bool | DType::I32 | DType::I64 => panic!("rand: {dtype:?} is not inexact"),
    }
    .unwrap()
}

/// Values of magnitude in `[0.5, 1.5)` with a random sign (real) or a random phase (complex):
/// safe divisors.
fn rand_away_from_zero(rng: &mut Rng, dtype: DType, shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let mags: Vec<f64> = (0..n).map(|_| rng.range(0.5, 1.5)).collect();
    match dtype {
        DType::F64 => Tensor::from_vec(
            shape,
            mags.iter()
                .map(|m| if rng.uniform() < 0.0 { -m } else { *m })
                .collect(),
        ),
        DType::C64 => Tensor::from_vec(
            shape,
            mags.iter()
                .map(|m| Complex64::from_polar(*m, rng.range(-3.0, 3.0)))
                .collect(),
        ),
        DType::Bool | DType::I32 | DType::I64 | DType::F32 | DType::C32 => {
            panic!("rand_away_from_zero: {dtype:?}")
        }
    }
    .unwrap()
}

/// Positive real part (`[0.5, 1.5)`), any imaginary part: the domain of `log`, `sqrt`, `pow`
/// away from the branch cut.
fn rand_pos(rng: &mut Rng, dtype: DType, shape: &[usize]) -> Tensor {
    rand_in(rng, dtype, shape, (0.5, 1.5), (-1.0, 1.0))
}

/// A well-conditioned square matrix (batch axes after the matrix axes): random plus `n·I`.
fn rand_well_conditioned(rng: &mut Rng, dtype: DType, n: usize, batch: &[usize]) -> Tensor {
    let mut shape = vec![n, n];
    shape.extend_from_slice(batch);
    let t = rand(rng, dtype, &shape);
    add_identity(&t, n as f64)
}

/// A Hermitian positive definite matrix `B·Bᴴ + n·I` (for `cholesky`).
fn rand_hpd(rng: &mut Rng, dtype: DType, n: usize) -> Tensor {
    let b = rand(rng, DType::C64, &[n, n]).to_vec::<Complex64>();
    let complex = dtype == DType::C64;
    let at = |i: usize, j: usize| {
        let z = b[i + n * j];
        if complex {
            z
        } else {
            Complex64::new(z.re, 0.0)
        }
    };
    let mut out = vec![Complex64::new(0.0, 0.0); n * n];
    for i in 0..n {
        for j in 0..n {
            let mut s = Complex64::new(if i == j { n as f64 } else { 0.0 }, 0.0);
            for k in 0..n {
                s += at(i, k) * at(j, k).conj();
            }
            out[i + n * j] = s;
        }
    }
    if complex {
        Tensor::from_vec(&[n, n], out).unwrap()
    } else {
        Tensor::from_vec(&[n, n], out.iter().map(|z| z.re).collect()).unwrap()
    }
}

/// `t + c·I` on the leading two axes (column-major, batch axes after them).
fn add_identity(t: &Tensor, c: f64) -> Tensor {
    let s = t.shape().to_vec();
    let (m, n) = (s[0], s[1]);
    let diag = |k: usize| {
        let (i, j) = (k % m, (k / m) % n);
        i == j
    };
    match t.dtype() {
        DType::F64 => {
            let mut v = t.to_vec::<f64>();
            for (k, x) in v.iter_mut().enumerate() {
                if diag(k) {
                    *x += c;
                }
            }
            Tensor::from_vec(&s, v).unwrap()
        }
        DType::C64 => {
            let mut v = t.to_vec::<Complex64>();
            for (k, x) in v.iter_mut().enumerate() {
                if diag(k) {
                    *x += c;
                }
            }
            Tensor::from_vec(&s, v).unwrap()
        }
        DType::Bool | DType::I32 | DType::I64 | DType::F32 | DType::C32 => {
            panic!("add_identity: {:?}", t.dtype())
        }
    }
}

fn ints(shape: &[usize], v: Vec<i64>) -> Tensor {
    Tensor::from_vec(shape, v).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Inner products.

/// `Re Σ conj(a)·b`, both of the same dtype and shape.
fn inner(a: &Tensor, b: &Tensor) -> f64 {
    assert_eq!(a.dtype(), b.dtype(), "inner: dtypes differ");
    assert_eq!(a.shape(), b.shape(), "inner: shapes differ");
    match a.dtype() {
        DType::F64 => a
            .to_vec::<f64>()
            .iter()
            .zip(b.to_vec::<f64>())
            .map(|(x, y)| x * y)
            .sum(),
        DType::F32 => a
            .to_vec::<f32>()
            .iter()
            .zip(b.to_vec::<f32>())
            .map(|(x, y)| f64::from(*x) * f64::from(y))
            .sum(),
        DType::C64 => a
            .to_vec::<Complex64>()
            .iter()
            .zip(b.to_vec::<Complex64>())
            .map(|(x, y)| (x.conj() * y).re)
            .sum(),
        DType::C32 => a
            .to_vec::<Complex32>()
            .iter()
            .zip(b.to_vec::<Complex32>())
            .map(|(x, y)| f64::from((x.conj() * y).re))
            .sum(),
        DType::Bool | DType::I32 | DType::I64 => panic!("inner: {:?}", a.dtype()),
    }
}

fn norm(a: &Tensor) -> f64 {
    inner(a, a).sqrt()
}

// ---------------------------------------------------------------------------------------------
// Cases.

type Build = Box<dyn Fn(&Ctx<'_>, &[Var]) -> Result<Var>>;

/// One identity check: `build` maps the inputs (leaves where `diff`) to one output.
struct Case {
    label: String,
    /// The primitive under test (must occur in the recorded graph).
    kind: OpKind,
    /// The dtype of its data operands.
    dtype: DType,
    inputs: Vec<Tensor>,
    /// Which inputs are perturbed (index operands and predicates are not).
    diff: Vec<bool>,
    build: Build,
    /// Relative tolerance (of the Cauchy–Schwarz bound of both sides).
    tol: f64,
}

/// How to corrupt a check (sanity tests: the identity must then fail).
#[derive(Clone, Copy, PartialEq)]
enum Corrupt {
    None,
    /// The JVP side uses an independent tangent.
    OtherTangent,
    /// The VJP result is conjugated (the classic convention slip).
    ConjVjp,
}

fn prim(label: &str, op: Op, dtype: DType, inputs: Vec<Tensor>, diff: Vec<bool>) -> Case {
    let kind = op.kind();
    Case {
        label: label.to_string(),
        kind,
        dtype,
        inputs,
        diff,
        build: Box::new(move |c, xs| {
            let refs: Vec<&Var> = xs.iter().collect();
            c.apply(op.clone(), &refs)
        }),
        tol: TOL,
    }
}

fn composite(
    label: &str,
    kind: OpKind,
    dtype: DType,
    inputs: Vec<Tensor>,
    build: impl Fn(&Ctx<'_>, &[Var]) -> Result<Var> + 'static,
) -> Case {
    let n = inputs.len();
    Case {
        label: label.to_string(),
        kind,
        dtype,
        inputs,
        diff: vec![true; n],
        build: Box::new(build),
        tol: TOL,
    }
}

/// Every output flattened and concatenated into one vector (real outputs converted to complex
/// when another output is complex): the identity over this vector sums over the outputs.
fn pack(c: &Ctx<'_>, outs: &[Var]) -> Result<Var> {
    let complex = outs.iter().any(|o| o.value.dtype().is_complex());
    let mut flat = Vec::new();
    for o in outs {
        let mut v = o.clone();
        if complex && !v.value.dtype().is_complex() {
            v = c.apply(Op::Convert(DType::C64), &[&v])?;
        }
        let n = v.value.numel();
        flat.push(c.apply(Op::Reshape(vec![n]), &[&v])?);
    }
    let refs: Vec<&Var> = flat.iter().collect();
    c.apply(Op::Concatenate { axis: 0 }, &refs)
}

/// A multi-output op with every output packed (no gauge freedom, or a discrete one).
fn multi_all(label: &str, op: LinalgOp, dtype: DType, inputs: Vec<Tensor>) -> Case {
    composite(label, Op::Linalg(op).kind(), dtype, inputs, move |c, xs| {
        let refs: Vec<&Var> = xs.iter().collect();
        let outs = c.apply_multi(Op::Linalg(op), &refs)?;
        pack(c, &outs)
    })
}

fn un(c: &Ctx<'_>, u: UnaryOp, x: &Var) -> Result<Var> {
    c.apply(Op::Unary(u), &[x])
}

fn bin(c: &Ctx<'_>, b: BinaryOp, x: &Var, y: &Var) -> Result<Var> {
    c.apply(Op::Binary(b), &[x, y])
}

/// `|x|²` elementwise (real): invariant under phases of `x`.
fn abs2(c: &Ctx<'_>, x: &Var) -> Result<Var> {
    let a = un(c, UnaryOp::Abs, x)?;
    bin(c, BinaryOp::Mul, &a, &a)
}

/// `xᴴ` of a matrix.
fn adj(c: &Ctx<'_>, x: &Var) -> Result<Var> {
    let t = c.apply(Op::Transpose(vec![1, 0]), &[x])?;
    un(c, UnaryOp::Conj, &t)
}

fn matmul(c: &Ctx<'_>, a: &Var, b: &Var) -> Result<Var> {
    c.apply(Op::Matmul, &[a, b])
}

/// Columns `lo..hi` of a matrix.
fn cols(c: &Ctx<'_>, x: &Var, lo: usize, hi: usize) -> Result<Var> {
    let m = x.value.shape()[0];
    c.apply(
        Op::Slice(SliceConfig {
            starts: vec![0, lo],
            limits: vec![m, hi],
            strides: vec![1, 1],
        }),
        &[x],
    )
}

/// `v·diag(d)` for a matrix `v` (`n×k`) and a vector `d` (`k`) of `v`'s dtype.
fn scale_cols(c: &Ctx<'_>, v: &Var, d: &Var) -> Result<Var> {
    let shape = v.value.shape().to_vec();
    let b = c.apply(
        Op::BroadcastInDim {
            shape,
            dims: vec![1],
        },
        &[d],
    )?;
    bin(c, BinaryOp::Mul, v, &b)
}

fn dg(lc: &[usize], rc: &[usize], lb: &[usize], rb: &[usize]) -> DotGeneralConfig {
    DotGeneralConfig {
        lhs_contracting_dims: lc.to_vec(),
        rhs_contracting_dims: rc.to_vec(),
        lhs_batch_dims: lb.to_vec(),
        rhs_batch_dims: rb.to_vec(),
    }
}

/// Default relative tolerance on `|lhs − rhs| / (Σ‖vjp_i‖‖v_i‖ + ‖u‖‖jvp‖)` in double
/// precision (measured residuals stay below 1e-16; `TENFERRO_DOTPROD_PRINT=1` prints them).
const TOL: f64 = 1e-12;

const F: DType = DType::F64;
const C: DType = DType::C64;

/// The input of a unary op's case: a positive real part where its domain needs one (`log`,
/// `sqrt`, `rsqrt`, `log1p`), magnitudes in `[0.5, 1.5)` for `abs` (not differentiable at 0),
/// uniform in `[-1, 1)` for every other op (a new unary op gets these).
fn unary_input(rng: &mut Rng, u: UnaryOp, d: DType, sh: &[usize]) -> Tensor {
    match u {
        UnaryOp::Abs => rand_away_from_zero(rng, d, sh),
        UnaryOp::Log | UnaryOp::Sqrt | UnaryOp::Rsqrt | UnaryOp::Log1p => rand_pos(rng, d, sh),
        _ => rand(rng, d, sh),
    }
}

/// Every unary op the rule table differentiates (not `Zero`/`Cut`: those are checked by the
/// manifest test), in each of `float64` / `complex128` its catalog row admits.
fn unary_cases(rng: &mut Rng) -> Vec<Case> {
    let sh = [3, 4, 2];
    let mut cases = Vec::new();
    for d in [F, C] {
        for u in UnaryOp::ALL {
            let kind = Op::Unary(u).kind();
            if matches!(rule(kind), Rule::Zero | Rule::Cut) || !row(kind).dtypes.contains(d) {
                continue;
            }
            let x = unary_input(rng, u, d, &sh);
            cases.push(prim(
                &format!("{u:?}"),
                Op::Unary(u),
                d,
                vec![x],
                vec![true],
            ));
        }
    }
    cases
}

fn binary_cases(rng: &mut Rng) -> Vec<Case> {
    use BinaryOp as B;
    // NumPy broadcasting: [3, 4, 2] with [4, 1] (the VJP must reduce the broadcast axes).
    let (sx, sy) = ([3usize, 4, 2], [4usize, 1]);
    let mut cases = Vec::new();
    for d in [F, C] {
        for (b, x, y) in [
            (B::Add, rand(rng, d, &sx), rand(rng, d, &sy)),
            (B::Sub, rand(rng, d, &sx), rand(rng, d, &sy)),
            (B::Mul, rand(rng, d, &sx), rand(rng, d, &sy)),
            (B::Div, rand(rng, d, &sx), rand_away_from_zero(rng, d, &sy)),
            (B::Pow, rand_pos(rng, d, &sx), rand(rng, d, &sy)),
        ] {
            cases.push(prim(
                &format!("{b:?} broadcast"),
                Op::Binary(b),
                d,
                vec![x, y],
                vec![true, true],
            ));
        }
        // Same shapes, the second operand transposed in memory is irrelevant here; a plain
        // elementwise case as well.
        cases.push(prim(
            "Mul same shape",
            Op::Binary(B::Mul),
            d,
            vec![rand(rng, d, &sx), rand(rng, d, &sx)],
            vec![true, true],
        ));
    }
    // Real-only (ordered) ops. `rem` away from the jumps: |y| in [0.5, 1.5), x in [-1, 1).
    for (b, x, y) in [
        (B::Rem, rand(rng, F, &sx), rand_away_from_zero(rng, F, &sy)),
        (B::Maximum, rand(rng, F, &sx), rand(rng, F, &sy)),
        (B::Minimum, rand(rng, F, &sx), rand(rng, F, &sy)),
    ] {
        cases.push(prim(
            &format!("{b:?} broadcast"),
            Op::Binary(b),
            F,
            vec![x, y],
            vec![true, true],
        ));
    }
    cases
}

fn ternary_conversion_cases(rng: &mut Rng) -> Vec<Case> {
    let mut cases = Vec::new();
    let preds: Vec<bool> = (0..12).map(|_| rng.uniform() < 0.0).collect();
    for d in [F, C] {
        cases.push(prim(
            "Select broadcast",
            Op::Select,
            d,
            vec![
                Tensor::from_vec(&[3, 4], preds.clone()).unwrap(),
                rand(rng, d, &[3, 4]),
                rand(rng, d, &[1, 4]),
            ],
            vec![false, true, true],
        ));
    }
    // clamp: x in [-1, 1), lo in [-0.6, -0.2), hi in [0.2, 0.6): positions inside and on both
    // sides; lo broadcast along axis 0, hi along axis 1.
    cases.push(prim(
        "Clamp broadcast bounds",
        Op::Clamp,
        F,
        vec![
            rand(rng, F, &[3, 4]),
            rand_in(rng, F, &[1, 4], (-0.6, -0.2), (0.0, 0.0)),
            rand_in(rng, F, &[3, 1], (0.2, 0.6), (0.0, 0.0)),
        ],
        vec![true, true, true],
    ));
    let x = [3, 4];
    cases.push(prim(
        "Convert f64->c128",
        Op::Convert(C),
        F,
        vec![rand(rng, F, &x)],
        vec![true],
    ));
    cases.push(prim(
        "Convert c128->c128",
        Op::Convert(C),
        C,
        vec![rand(rng, C, &x)],
        vec![true],
    ));
    let mut c32 = prim(
        "Convert c64->c128",
        Op::Convert(C),
        DType::C32,
        vec![rand(rng, DType::C32, &x)],
        vec![true],
    );
    c32.tol = 1e-6;
    cases.push(c32);
    cases.push(prim(
        "Cast f64->c128",
        Op::Cast(C),
        F,
        vec![rand(rng, F, &x)],
        vec![true],
    ));
    cases.push(prim(
        "Cast c128->f64 (real part)",
        Op::Cast(F),
        C,
        vec![rand(rng, C, &x)],
        vec![true],
    ));
    cases
}

fn structural_cases(rng: &mut Rng) -> Vec<Case> {
    let mut cases = Vec::new();
    for d in [F, C] {
        let mut p = |label: &str, op: Op, inputs: Vec<Tensor>, diff: Vec<bool>| {
            cases.push(prim(label, op, d, inputs, diff));
        };
        p(
            "Transpose [2,0,1]",
            Op::Transpose(vec![2, 0, 1]),
            vec![rand(rng, d, &[2, 3, 4])],
            vec![true],
        );
        p(
            "Reshape [2,3,4]->[4,6]",
            Op::Reshape(vec![4, 6]),
            vec![rand(rng, d, &[2, 3, 4])],
            vec![true],
        );
        p(
            "BroadcastInDim transposing dims [3,2]->[2,5,3]",
            Op::BroadcastInDim {
                shape: vec![2, 5, 3],
                dims: vec![2, 0],
            },
            vec![rand(rng, d, &[3, 2])],
            vec![true],
        );
        p(
            "BroadcastInDim size-1 axis [1,3]->[4,3,2] dims [2,1]",
            Op::BroadcastInDim {
                shape: vec![4, 3, 2],
                dims: vec![2, 1],
            },
            vec![rand(rng, d, &[1, 3])],
            vec![true],
        );
        p(
            "Reverse axes [0,2]",
            Op::Reverse(vec![0, 2]),
            vec![rand(rng, d, &[3, 4, 2])],
            vec![true],
        );
        p(
            "Slice strided",
            Op::Slice(SliceConfig {
                starts: vec![1, 0, 1],
                limits: vec![5, 6, 3],
                strides: vec![2, 3, 1],
            }),
            vec![rand(rng, d, &[5, 6, 3])],
            vec![true],
        );
        p(
            "Pad negative edges and interior",
            Op::Pad(PadConfig {
                low: vec![-1, 2],
                high: vec![1, -1],
                interior: vec![1, 2],
            }),
            vec![rand(rng, d, &[3, 4])],
            vec![true],
        );
        p(
            "Pad rank 3 cropping both edges",
            Op::Pad(PadConfig {
                low: vec![0, -1, 1],
                high: vec![2, -2, 0],
                interior: vec![0, 1, 0],
            }),
            vec![rand(rng, d, &[2, 5, 2])],
            vec![true],
        );
        p(
            "DynamicSlice (start clamped)",
            Op::DynamicSlice { sizes: vec![2, 3] },
            vec![rand(rng, d, &[4, 5]), ints(&[2], vec![1, 3])],
            vec![true, false],
        );
        p(
            "DynamicUpdateSlice (start clamped)",
            Op::DynamicUpdateSlice,
            vec![
                rand(rng, d, &[4, 5]),
                rand(rng, d, &[2, 3]),
                ints(&[2], vec![3, 1]),
            ],
            vec![true, true, false],
        );
        p(
            "Concatenate axis 0 of three",
            Op::Concatenate { axis: 0 },
            vec![
                rand(rng, d, &[2, 3]),
                rand(rng, d, &[4, 3]),
                rand(rng, d, &[1, 3]),
            ],
            vec![true, true, true],
        );
        p(
            "Concatenate axis 1 rank 3",
            Op::Concatenate { axis: 1 },
            vec![rand(rng, d, &[2, 3, 2]), rand(rng, d, &[2, 1, 2])],
            vec![true, true],
        );
        // gather: operand [4,3,2], five index vectors (repeated and out-of-range starts,
        // clamped) addressing axes 0 and 2; slices [1,2,1] with axis 0 collapsed.
        p(
            "Gather repeated and clamped indices",
            Op::Gather(GatherConfig {
                offset_dims: vec![1, 2],
                collapsed_slice_dims: vec![0],
                start_index_map: vec![0, 2],
                index_vector_dim: 1,
                slice_sizes: vec![1, 2, 1],
            }),
            vec![
                rand(rng, d, &[4, 3, 2]),
                ints(&[5, 2], vec![0, 3, 3, 1, 7, 1, 0, 1, 5, 0]),
            ],
            vec![true, false],
        );
        // scatter-add: operand [4,3], three rows of updates into rows 1, 3, 1 (duplicates add).
        p(
            "Scatter duplicate indices",
            Op::Scatter(ScatterConfig {
                update_window_dims: vec![1],
                inserted_window_dims: vec![0],
                scatter_dims_to_operand_dims: vec![0],
                index_vector_dim: 1,
            }),
            vec![
                rand(rng, d, &[4, 3]),
                ints(&[3, 1], vec![1, 3, 1]),
                rand(rng, d, &[3, 3]),
            ],
            vec![true, false, true],
        );
        p(
            "ExtractDiag non-square axes (0,2)",
            Op::ExtractDiag { a: 0, b: 2 },
            vec![rand(rng, d, &[3, 2, 4])],
            vec![true],
        );
        p(
            "EmbedDiag a=0 b=2",
            Op::EmbedDiag { a: 0, b: 2 },
            vec![rand(rng, d, &[3, 2])],
            vec![true],
        );
        p(
            "Tril k=-1 batched",
            Op::Tril(-1),
            vec![rand(rng, d, &[3, 4, 2])],
            vec![true],
        );
        p(
            "Triu k=1 batched",
            Op::Triu(1),
            vec![rand(rng, d, &[4, 3, 2])],
            vec![true],
        );
    }
    cases
}

fn reduce_cases(rng: &mut Rng) -> Vec<Case> {
    let red = |op, axes: &[usize]| Op::Reduce {
        op,
        axes: axes.to_vec(),
    };
    let sh = [3, 4, 2];
    let mut cases = Vec::new();
    for d in [F, C] {
        cases.push(prim(
            "ReduceSum axes [0,2]",
            red(ReduceOp::Sum, &[0, 2]),
            d,
            vec![rand(rng, d, &sh)],
            vec![true],
        ));
        cases.push(prim(
            "ReduceProd axes [0,2]",
            red(ReduceOp::Prod, &[0, 2]),
            d,
            vec![rand(rng, d, &sh)],
            vec![true],
        ));
    }
    for op in [ReduceOp::Max, ReduceOp::Min, ReduceOp::SumSquares] {
        cases.push(prim(
            &format!("Reduce{op:?} axes [1,2]"),
            red(op, &[1, 2]),
            F,
            vec![rand(rng, F, &sh)],
            vec![true],
        ));
    }
    // Ties (the ½/½ split of `autodiff.md` must be the same in both rules): the operands
    // agree in half of the positions; a reduction with three tied maxima/minima.
    let x = rand(rng, F, &[3, 4]);
    let y: Vec<f64> = x
        .to_vec::<f64>()
        .iter()
        .enumerate()
        .map(|(i, v)| if i % 2 == 0 { *v } else { rng.uniform() })
        .collect();
    let y = Tensor::from_vec(&[3, 4], y).unwrap();
    for b in [BinaryOp::Maximum, BinaryOp::Minimum] {
        cases.push(prim(
            &format!("{b:?} with ties"),
            Op::Binary(b),
            F,
            vec![x.clone(), y.clone()],
            vec![true, true],
        ));
    }
    let tied = Tensor::from_vec(&[3, 2], vec![0.5f64, -0.2, 0.5, -0.2, 0.5, -0.2]).unwrap();
    for op in [ReduceOp::Max, ReduceOp::Min] {
        cases.push(prim(
            &format!("Reduce{op:?} axis 0 with three tied values"),
            red(op, &[0]),
            F,
            vec![tied.clone()],
            vec![true],
        ));
    }
    cases.push(prim(
        "ReduceMax all axes",
        red(ReduceOp::Max, &[0, 1, 2]),
        F,
        vec![rand(rng, F, &sh)],
        vec![true],
    ));
    cases
}

fn contraction_cases(rng: &mut Rng) -> Vec<Case> {
    let mut cases = Vec::new();
    for d in [F, C] {
        cases.push(prim(
            "DotGeneral batch 2",
            Op::DotGeneral(dg(&[1], &[0], &[2], &[2])),
            d,
            vec![rand(rng, d, &[3, 4, 2]), rand(rng, d, &[4, 5, 2])],
            vec![true, true],
        ));
        cases.push(prim(
            "DotGeneral permuted batch/contracting axes",
            Op::DotGeneral(dg(&[1, 3], &[2, 0], &[0], &[1])),
            d,
            vec![rand(rng, d, &[2, 4, 3, 2]), rand(rng, d, &[2, 2, 4, 5])],
            vec![true, true],
        ));
        for (l, r) in [(true, false), (false, true), (true, true)] {
            cases.push(prim(
                &format!("DotGeneralWithConj lhs_conj={l} rhs_conj={r}"),
                Op::DotGeneralWithConj {
                    config: dg(&[0], &[1], &[2], &[0]),
                    lhs_conj: l,
                    rhs_conj: r,
                },
                d,
                vec![rand(rng, d, &[4, 3, 2]), rand(rng, d, &[2, 4, 5])],
                vec![true, true],
            ));
        }
        cases.push(prim(
            "Matmul 3x4 4x2",
            Op::Matmul,
            d,
            vec![rand(rng, d, &[3, 4]), rand(rng, d, &[4, 2])],
            vec![true, true],
        ));
        cases.push(prim(
            "ScaleReal 1.7",
            Op::ScaleReal(1.7),
            d,
            vec![rand(rng, d, &[3, 4])],
            vec![true],
        ));
    }
    cases.push(prim(
        "ScaleComplex 0.3-1.2i",
        Op::ScaleComplex(Complex64::new(0.3, -1.2)),
        C,
        vec![rand(rng, C, &[3, 4, 2])],
        vec![true],
    ));
    cases
}

fn linalg_cases(rng: &mut Rng) -> Vec<Case> {
    let mut cases = Vec::new();
    let svd = |full| LinalgOp::Svd {
        full_matrices: full,
        eps: 1e-12,
    };
    // --- svd, real: the only gauge freedom of the thin factors is a sign per singular pair
    // (discrete), so every output takes an arbitrary cotangent.
    for shape in [[5usize, 3], [3, 5]] {
        cases.push(multi_all(
            &format!("Svd thin {shape:?}, all outputs"),
            svd(false),
            F,
            vec![rand(rng, F, &shape)],
        ));
    }
    cases.push(multi_all(
        "Svd thin batched [4,3,2], all outputs",
        svd(false),
        F,
        vec![rand(rng, F, &[4, 3, 2])],
    ));
    // --- svd, complex (and full_matrices in both dtypes): a phase per singular pair (and a
    // rotation of the completing columns), so a gauge-invariant function:
    // S, U₁·Vh (the polar factor), |U|², |Vh|² (thin), and the projector U⊥·U⊥ᴴ (full).
    for (d, shape) in [(C, [5usize, 3]), (C, [3, 5])] {
        cases.push(composite(
            &format!("Svd thin {shape:?} gauge-invariant (S, U·Vh, |U|², |Vh|²)"),
            OpKind::Svd,
            d,
            vec![rand(rng, d, &shape)],
            move |c, xs| {
                let o = c.apply_multi(Op::Linalg(svd(false)), &[&xs[0]])?;
                let uvh = matmul(c, &o[0], &o[2])?;
                let u2 = abs2(c, &o[0])?;
                let v2 = abs2(c, &o[2])?;
                pack(c, &[o[1].clone(), uvh, u2, v2])
            },
        ));
    }
    for d in [F, C] {
        cases.push(composite(
            "Svd full_matrices [5,3] gauge-invariant (S, U₁·Vh, U⊥·U⊥ᴴ)",
            OpKind::Svd,
            d,
            vec![rand(rng, d, &[5, 3])],
            move |c, xs| {
                let o = c.apply_multi(Op::Linalg(svd(true)), &[&xs[0]])?;
                let u1 = cols(c, &o[0], 0, 3)?;
                let up = cols(c, &o[0], 3, 5)?;
                let polar = matmul(c, &u1, &o[2])?;
                let proj = matmul(c, &up, &adj(c, &up)?)?;
                pack(c, &[o[1].clone(), polar, proj])
            },
        ));
        cases.push(prim(
            "Svdvals [4,3]",
            Op::Linalg(LinalgOp::Svdvals),
            d,
            vec![rand(rng, d, &[4, 3])],
            vec![true],
        ));
        cases.push(prim(
            "Svdvals [3,5]",
            Op::Linalg(LinalgOp::Svdvals),
            d,
            vec![rand(rng, d, &[3, 5])],
            vec![true],
        ));
        // --- qr: unique with a real positive diagonal of R (no gauge): every output.
        for shape in [[5usize, 3], [3, 5], [4, 4]] {
            cases.push(multi_all(
                &format!("Qr reduced {shape:?}, all outputs"),
                LinalgOp::Qr { complete: false },
                d,
                vec![rand(rng, d, &shape)],
            ));
        }
        cases.push(prim(
            "Eigvalsh [4,4] (lower triangle read)",
            Op::Linalg(LinalgOp::Eigvalsh),
            d,
            vec![rand(rng, d, &[4, 4])],
            vec![true],
        ));
        // --- eig: eigenvalues only (eigenvectors have no rule, `autodiff.md`); V gets no
        // cotangent and no tangent is asked of it.
        cases.push(composite(
            "Eig [4,4] eigenvalues",
            OpKind::Eig,
            d,
            vec![rand_well_conditioned(rng, d, 4, &[])],
            |c, xs| Ok(c.apply_multi(Op::Linalg(LinalgOp::Eig), &[&xs[0]])?[0].clone()),
        ));
        cases.push(prim(
            "Cholesky [4,4] HPD (lower triangle read, full perturbation)",
            Op::Linalg(LinalgOp::Cholesky),
            d,
            vec![rand_hpd(rng, d, 4)],
            vec![true],
        ));
        // --- lu: P is piecewise constant (zero tangent), L and U unique: every output.
        cases.push(multi_all(
            "Lu [4,4], all outputs",
            LinalgOp::Lu,
            d,
            vec![rand(rng, d, &[4, 4])],
        ));
        cases.push(multi_all(
            "Slogdet [4,4], sign and logabsdet",
            LinalgOp::Slogdet,
            d,
            vec![rand_well_conditioned(rng, d, 4, &[])],
        ));
        cases.push(multi_all(
            "Slogdet batched [3,3,2]",
            LinalgOp::Slogdet,
            d,
            vec![rand_well_conditioned(rng, d, 3, &[2])],
        ));
        cases.push(prim(
            "Solve [4,4]·x = [4,3]",
            Op::Linalg(LinalgOp::Solve),
            d,
            vec![rand_well_conditioned(rng, d, 4, &[]), rand(rng, d, &[4, 3])],
            vec![true, true],
        ));
        for lower in [true, false] {
            cases.push(prim(
                &format!("TriangularSolve lower={lower} (other triangle perturbed too)"),
                Op::Linalg(LinalgOp::TriangularSolve { lower }),
                d,
                vec![rand_well_conditioned(rng, d, 4, &[]), rand(rng, d, &[4, 2])],
                vec![true, true],
            ));
        }
    }
    // --- svd / eigh, complex, raw outputs with arbitrary (gauge-variant) cotangents: the JVP
    // fixes the phase gauge (`i·Im(diag X)` term of svd, `Re diag(Vᴴ·dV) = 0`-style choice of
    // eigh) and each VJP is documented as the exact adjoint of that JVP, so the identity holds
    // here too. (A gradient of a gauge-variant loss is still meaningless; the invariant cases
    // above are the ones users rely on.)
    for (label, op) in [
        (
            "Svd thin [4,4], all outputs, gauge-variant cotangent",
            svd(false),
        ),
        (
            "Eigh [4,4], all outputs, gauge-variant cotangent",
            LinalgOp::Eigh { eps: 1e-12 },
        ),
    ] {
        cases.push(multi_all(label, op, C, vec![rand(rng, C, &[4, 4])]));
    }
    // --- eigh, real: sign gauge only (discrete): every output.
    cases.push(multi_all(
        "Eigh [4,4] (lower triangle read), all outputs",
        LinalgOp::Eigh { eps: 1e-12 },
        F,
        vec![rand(rng, F, &[4, 4])],
    ));
    // --- eigh, complex: a phase per eigenvector; gauge-invariant w, |V|², V·diag(w²)·Vᴴ.
    cases.push(composite(
        "Eigh [4,4] gauge-invariant (w, |V|², V·diag(w²)·Vᴴ)",
        OpKind::Eigh,
        C,
        vec![rand(rng, C, &[4, 4])],
        |c, xs| {
            let o = c.apply_multi(Op::Linalg(LinalgOp::Eigh { eps: 1e-12 }), &[&xs[0]])?;
            let (w, v) = (&o[0], &o[1]);
            let v2 = abs2(c, v)?;
            let w2 = bin(c, BinaryOp::Mul, w, w)?;
            let w2c = c.apply(Op::Convert(C), &[&w2])?;
            let f = matmul(c, &scale_cols(c, v, &w2c)?, &adj(c, v)?)?;
            pack(c, &[w.clone(), v2, f])
        },
    ));
    cases
}

fn all_cases() -> Vec<Case> {
    let mut rng = Rng::new(20261201);
    let mut cases = Vec::new();
    cases.extend(unary_cases(&mut rng));
    cases.extend(binary_cases(&mut rng));
    cases.extend(ternary_conversion_cases(&mut rng));
    cases.extend(structural_cases(&mut rng));
    cases.extend(reduce_cases(&mut rng));
    cases.extend(contraction_cases(&mut rng));
    cases.extend(linalg_cases(&mut rng));
    cases.extend(fft_cases(&mut rng));
    cases.extend(sorting_scan_cases(&mut rng));
    cases
}

/// `copysign` and `nextafter` (real floats), `sort` (both directions) and the scans on
/// `float64` and `complex128`, along a middle axis of a permuted-looking shape. Random values
/// are distinct almost surely, so `sort`'s permutation is locally constant; `cumprod` also runs
/// on an operand with exact zeros (its rule splits at the first zero of each slice).
fn sorting_scan_cases(rng: &mut Rng) -> Vec<Case> {
    let mut cases = Vec::new();
    for b in [BinaryOp::Copysign, BinaryOp::Nextafter] {
        cases.push(prim(
            &format!("{b:?}"),
            Op::Binary(b),
            F,
            vec![
                rand_in(rng, F, &[3, 4], (0.5, 2.0), (0.0, 0.0)),
                rand(rng, F, &[3, 4]),
            ],
            vec![true, true],
        ));
    }
    for d in [F, C] {
        for descending in [false, true] {
            cases.push(prim(
                &format!("Sort axis 1 descending={descending}"),
                Op::Sort {
                    axis: 1,
                    descending,
                },
                d,
                vec![rand(rng, d, &[2, 5, 3])],
                vec![true],
            ));
        }
        cases.push(prim(
            "Cumsum axis 1",
            Op::Cumsum(1),
            d,
            vec![rand(rng, d, &[2, 5, 3])],
            vec![true],
        ));
        cases.push(prim(
            "Cumprod axis 0",
            Op::Cumprod(0),
            d,
            vec![rand(rng, d, &[4, 3])],
            vec![true],
        ));
        if d == F {
            let mut with_zeros = rand(rng, d, &[5, 2]).to_vec::<f64>();
            with_zeros[1] = 0.0;
            with_zeros[3] = 0.0;
            with_zeros[7] = 0.0;
            cases.push(prim(
                "Cumprod axis 0 with zeros",
                Op::Cumprod(0),
                d,
                vec![Tensor::from_vec(&[5, 2], with_zeros).unwrap()],
                vec![true],
            ));
        }
    }
    cases
}

/// `fft` of every type: complex transforms on `complex128`, `RFFT` on `float64` (odd and even
/// real lengths: the Hermitian weights differ), strided axis orders.
fn fft_cases(rng: &mut Rng) -> Vec<Case> {
    use tenferro_ops::{FftConfig, FftType};
    let cfg = |t, axes: &[usize], lengths: &[usize]| {
        Op::Fft(FftConfig {
            fft_type: t,
            axes: axes.to_vec(),
            lengths: lengths.to_vec(),
        })
    };
    let (c, f) = (DType::C64, DType::F64);
    vec![
        prim(
            "FFT axes (1, 0)",
            cfg(FftType::Fft, &[1, 0], &[4, 3]),
            c,
            vec![rand(rng, c, &[3, 4, 2])],
            vec![true],
        ),
        prim(
            "IFFT axis 2",
            cfg(FftType::Ifft, &[2], &[5]),
            c,
            vec![rand(rng, c, &[2, 3, 5])],
            vec![true],
        ),
        prim(
            "RFFT even, axes (0, 1)",
            cfg(FftType::Rfft, &[0, 1], &[3, 6]),
            f,
            vec![rand(rng, f, &[3, 6])],
            vec![true],
        ),
        prim(
            "RFFT odd, axis 0",
            cfg(FftType::Rfft, &[0], &[5]),
            f,
            vec![rand(rng, f, &[5, 2])],
            vec![true],
        ),
        prim(
            "IRFFT even, axes (1, 0)",
            cfg(FftType::Irfft, &[1, 0], &[2, 6]),
            c,
            vec![rand(rng, c, &[4, 2])],
            vec![true],
        ),
        prim(
            "IRFFT odd, axis 1",
            cfg(FftType::Irfft, &[1], &[7]),
            c,
            vec![rand(rng, c, &[3, 4])],
            vec![true],
        ),
    ]
}

// ---------------------------------------------------------------------------------------------
// The check.

/// Both sides of the identity and their Cauchy–Schwarz scale.
struct Sides {
    lhs: f64,
    rhs: f64,
    /// `Σ ‖vjp_i‖·‖v_i‖ + ‖u‖·‖jvp‖`.
    scale: f64,
}

/// Op kinds recorded in the graph below `out`.
fn recorded_kinds(out: &Var) -> HashSet<OpKind> {
    let mut kinds = HashSet::new();
    let mut seen = HashSet::new();
    let mut stack: Vec<Arc<Node>> = out.node.iter().cloned().collect();
    while let Some(n) = stack.pop() {
        if !seen.insert(n.id) {
            continue;
        }
        let inputs: &[Var] = match &n.kind {
            NodeKind::Leaf { .. } => &[],
            NodeKind::Op { op, inputs, .. } | NodeKind::Multi { op, inputs, .. } => {
                kinds.insert(op.kind());
                inputs
            }
            NodeKind::Custom { inputs, .. } => inputs,
            NodeKind::Output { parent, .. } => parent,
        };
        stack.extend(inputs.iter().filter_map(|v| v.node.clone()));
    }
    kinds
}

fn sides(e: &Env, case: &Case, rng: &mut Rng, corrupt: Corrupt) -> Result<Sides> {
    let vars: Vec<Var> = case
        .inputs
        .iter()
        .zip(&case.diff)
        .map(|(t, &d)| Var {
            value: t.clone().into(),
            node: d.then(|| Node::leaf(&t.clone().into())),
        })
        .collect();
    let out = (case.build)(&ctx(e, true), &vars)?;
    assert!(
        recorded_kinds(&out).contains(&case.kind),
        "{}: {:?} is not in the recorded graph",
        case.label,
        case.kind
    );
    let leaves: Vec<Arc<Node>> = vars.iter().filter_map(|v| v.node.clone()).collect();
    let tangents: Vec<Tensor> = leaves
        .iter()
        .map(|n| {
            let (d, s) = n.leaf_meta().unwrap();
            rand(rng, d, s)
        })
        .collect();
    let u = rand(rng, out.value.dtype(), out.value.shape());
    let plain = ctx(e, false);

    let cts = vjp_graph(&plain, &out, Var::constant(u.clone()), &leaves)?;
    let mut lhs = 0.0;
    let mut scale = 0.0;
    for (ct, v) in cts.iter().zip(&tangents) {
        let ct = ct
            .as_ref()
            .unwrap_or_else(|| panic!("{}: VJP reached no input", case.label));
        let mut g = ct.value.tensor("test")?.clone();
        if corrupt == Corrupt::ConjVjp {
            g = plain
                .apply(Op::Unary(UnaryOp::Conj), &[&Var::constant(g)])?
                .value
                .into_tensor("test")?;
        }
        lhs += inner(&g, v);
        scale += norm(&g) * norm(v);
    }

    let jvp_tangents: Vec<Tensor> = if corrupt == Corrupt::OtherTangent {
        tangents
            .iter()
            .map(|t| rand(rng, t.dtype(), t.shape()))
            .collect()
    } else {
        tangents
    };
    let sources: Vec<(Arc<Node>, Var)> = leaves
        .iter()
        .cloned()
        .zip(jvp_tangents.into_iter().map(Var::constant))
        .collect();
    let t = jvp_graph(&plain, &out, &sources)?
        .unwrap_or_else(|| panic!("{}: JVP produced no tangent", case.label));
    let t = t.value.tensor("test")?;
    let rhs = inner(&u, t);
    scale += norm(&u) * norm(t);
    Ok(Sides { lhs, rhs, scale })
}

/// `Ok` when the identity holds within the case's tolerance; the error names the numbers.
fn check(e: &Env, case: &Case, seed: u64, corrupt: Corrupt) -> std::result::Result<(), String> {
    let mut rng = Rng::new(seed);
    let s = sides(e, case, &mut rng, corrupt)
        .map_err(|err| format!("{} [{:?}]: error {err:?}", case.label, case.dtype))?;
    let diff = (s.lhs - s.rhs).abs();
    if std::env::var("TENFERRO_DOTPROD_PRINT").is_ok() && corrupt == Corrupt::None {
        eprintln!(
            "REL {:.2e} lhs {:.6e} {} [{:?}]",
            diff / s.scale,
            s.lhs,
            case.label,
            case.dtype
        );
    }
    if diff <= case.tol * s.scale && s.scale > 0.0 && s.lhs.is_finite() {
        Ok(())
    } else {
        Err(format!(
            "{} [{:?}]: <vjp(u), v> = {:.17e}, <u, jvp(v)> = {:.17e}, |diff| = {:.3e}, \
             bound {:.3e} (tol {:.0e} x scale {:.3e})",
            case.label,
            case.dtype,
            s.lhs,
            s.rhs,
            diff,
            case.tol * s.scale,
            case.tol,
            s.scale
        ))
    }
}

/// Run every case of `cases`: the identity must hold, and must break with an independent
/// tangent on the JVP side (the check of each case can fail).
fn run(cases: &[Case]) {
    let e = engine();
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let seed = 1000 + i as u64;
        if let Err(m) = check(&e, case, seed, Corrupt::None) {
            failures.push(m);
            continue;
        }
        if check(&e, case, seed, Corrupt::OtherTangent).is_ok() {
            failures.push(format!(
                "{} [{:?}]: an independent tangent still satisfies the identity (vacuous check)",
                case.label, case.dtype
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn unary_identity() {
    run(&unary_cases(&mut Rng::new(1)));
}

#[test]
fn binary_identity() {
    run(&binary_cases(&mut Rng::new(2)));
}

#[test]
fn ternary_and_conversion_identity() {
    run(&ternary_conversion_cases(&mut Rng::new(3)));
}

#[test]
fn structural_identity() {
    run(&structural_cases(&mut Rng::new(4)));
}

#[test]
fn reduction_identity() {
    run(&reduce_cases(&mut Rng::new(5)));
}

#[test]
fn contraction_identity() {
    run(&contraction_cases(&mut Rng::new(6)));
}

#[test]
fn linalg_identity() {
    run(&linalg_cases(&mut Rng::new(7)));
}

#[test]
fn fft_identity() {
    run(&fft_cases(&mut Rng::new(8)));
}

/// Every kind the rule table differentiates has a case for each of `float64` / `complex128` its
/// catalog row admits; zero-derivative and graph-cutting kinds are the table's to exclude (and
/// `zero_and_cut_kinds_do_what_their_rule_rows_say` checks them).
#[test]
fn manifest_every_differentiable_kind_has_identity_cases() {
    let cases = all_cases();
    let covered: HashSet<(OpKind, DType)> = cases.iter().map(|c| (c.kind, c.dtype)).collect();
    let mut missing = Vec::new();
    for kind in OpKind::ALL {
        let r = row(kind);
        match rule(kind) {
            Rule::Zero | Rule::Cut => continue,
            Rule::Missing => {
                missing.push(format!("{}: no rule at all", r.name));
                continue;
            }
            Rule::Linearize(..) | Rule::LinearizeMulti(..) => {}
        }
        for d in [F, C] {
            if r.dtypes.contains(d) && !covered.contains(&(kind, d)) {
                missing.push(format!("{} [{}]", r.name, d.name()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "differentiable kinds without a dot-product identity case: {}",
        missing.join(", ")
    );
}

/// Ops of `kind` that need no shape-specific parameters: the uniform groups (unary, binary,
/// reduction over axis 0) and `compare` in every direction. The zero-derivative and cut
/// kinds are exercised through these (the test fails for a kind that has none).
fn probes(kind: OpKind) -> Vec<Op> {
    let mut ops: Vec<Op> = UnaryOp::ALL.iter().map(|&u| Op::Unary(u)).collect();
    ops.extend(BinaryOp::ALL.iter().map(|&b| Op::Binary(b)));
    ops.extend(
        ReduceOp::ALL
            .iter()
            .map(|&op| Op::Reduce { op, axes: vec![0] }),
    );
    ops.extend(CompareDir::ALL.iter().map(|&d| Op::Compare(d)));
    ops.extend([
        Op::Argsort {
            axis: 1,
            descending: false,
        },
        Op::Argmax(1),
        Op::Argmin(1),
        Op::SearchSorted { right: false },
    ]);
    ops.retain(|op| op.kind() == kind);
    ops
}

/// `op` applied to `inputs` without recording, as `float64` values.
fn values_f64(e: &Env, op: &Op, inputs: &[Tensor]) -> Vec<f64> {
    let vars: Vec<Var> = inputs.iter().cloned().map(Var::constant).collect();
    let refs: Vec<&Var> = vars.iter().collect();
    let plain = ctx(e, false);
    let mut out = plain.apply(op.clone(), &refs).unwrap();
    if out.value.dtype() != F {
        out = plain.apply(Op::Convert(F), &[&out]).unwrap();
    }
    out.value.tensor("test").unwrap().to_vec::<f64>()
}

/// `x + s·v` for `float64` tensors of one shape.
fn axpy(x: &Tensor, s: f64, v: &Tensor) -> Tensor {
    let (a, b) = (x.to_vec::<f64>(), v.to_vec::<f64>());
    Tensor::from_vec(
        x.shape(),
        a.iter().zip(&b).map(|(p, q)| p + s * q).collect(),
    )
    .unwrap()
}

/// The largest central difference `|f(x + h·v) - f(x - h·v)| / 2h` over the output elements,
/// for random `float64` inputs `x` in `[-3, 3)` and a random direction `v`.
fn max_central_difference(e: &Env, op: &Op, arity: usize, rng: &mut Rng) -> f64 {
    let h = 1e-6;
    let sh = [3, 4, 2];
    let xs: Vec<Tensor> = (0..arity)
        .map(|_| rand_in(rng, F, &sh, (-3.0, 3.0), (0.0, 0.0)))
        .collect();
    let vs: Vec<Tensor> = (0..arity).map(|_| rand(rng, F, &sh)).collect();
    let plus: Vec<Tensor> = xs.iter().zip(&vs).map(|(x, v)| axpy(x, h, v)).collect();
    let minus: Vec<Tensor> = xs.iter().zip(&vs).map(|(x, v)| axpy(x, -h, v)).collect();
    let (fp, fm) = (values_f64(e, op, &plus), values_f64(e, op, &minus));
    fp.iter()
        .zip(&fm)
        .map(|(a, b)| ((a - b) / (2.0 * h)).abs())
        .fold(0.0, f64::max)
}

/// The kinds the rule table excludes from the identity are checked for what their row says,
/// so a new `Zero` or `Cut` kind needs no edit here: every `Zero` kind records a node whose
/// VJP reaches its inputs as symbolic zeros and whose JVP is no tangent, and central
/// differences of it at random `float64` points are exactly 0 (piecewise constant: random
/// points and a step of 1e-6 stay clear of its jumps; the seed is fixed); every `Cut` kind
/// records no node. `float64` is where the finite differences run, so a `Zero` kind must admit
/// it (`sign`'s zero derivative on complex input is the convention JAX follows, not a
/// derivative of `z/|z|`).
#[test]
fn zero_and_cut_kinds_do_what_their_rule_rows_say() {
    let e = engine();
    let mut rng = Rng::new(31);
    let mut failures = Vec::new();
    let mut n_zero = 0;
    let mut n_cut = 0;
    for kind in OpKind::ALL {
        let r = row(kind);
        let zero = match rule(kind) {
            Rule::Zero => true,
            Rule::Cut => false,
            _ => continue,
        };
        let arity = usize::try_from(r.arity).unwrap_or(2);
        let mut applied = 0;
        for op in probes(kind) {
            // Bitwise ops and shifts admit integers only: probe them on int64 operands.
            for d in [F, C, DType::I64] {
                if !r.dtypes.contains(d)
                    || (d == DType::I64 && (r.dtypes.contains(F) || r.dtypes.contains(C)))
                {
                    continue;
                }
                // `searchsorted` takes a 1-D sorted operand.
                let shape: &[usize] = if matches!(op, Op::SearchSorted { .. }) {
                    &[6]
                } else {
                    &[3, 4, 2]
                };
                let xs: Vec<Tensor> = (0..arity)
                    .map(|_| {
                        let x = rand_in(&mut rng, F, shape, (-3.0, 3.0), (-3.0, 3.0));
                        if d == DType::I64 {
                            Tensor::from_vec(
                                shape,
                                x.to_vec::<f64>().iter().map(|v| *v as i64).collect(),
                            )
                            .unwrap()
                        } else {
                            rand_in(&mut rng, d, shape, (-3.0, 3.0), (-3.0, 3.0))
                        }
                    })
                    .collect();
                let leaves: Vec<Var> = xs
                    .iter()
                    .map(|x| Var {
                        value: x.clone().into(),
                        node: Some(Node::leaf(&x.clone().into())),
                    })
                    .collect();
                let refs: Vec<&Var> = leaves.iter().collect();
                // Ordering comparisons reject complex operands: nothing to check there.
                let Ok(out) = ctx(&e, true).apply(op.clone(), &refs) else {
                    continue;
                };
                applied += 1;
                let label = format!("{} [{}] {op:?}", r.name, d.name());
                if !zero {
                    n_cut += 1;
                    if out.node.is_some() {
                        failures.push(format!("{label}: cut, but a node was recorded"));
                    }
                    continue;
                }
                n_zero += 1;
                if out.node.is_none() {
                    failures.push(format!("{label}: zero rule, but no node was recorded"));
                    continue;
                }
                let plain = ctx(&e, false);
                let nodes: Vec<Arc<Node>> = leaves.iter().filter_map(|v| v.node.clone()).collect();
                let u = rand(&mut rng, out.value.dtype(), out.value.shape());
                let cts = vjp_graph(&plain, &out, Var::constant(u), &nodes).unwrap();
                if cts.iter().any(Option::is_some) {
                    failures.push(format!("{label}: the VJP reached an input"));
                }
                let sources: Vec<(Arc<Node>, Var)> = nodes
                    .iter()
                    .map(|n| {
                        let (dt, s) = n.leaf_meta().unwrap();
                        (n.clone(), Var::constant(rand(&mut rng, dt, s)))
                    })
                    .collect();
                if jvp_graph(&plain, &out, &sources).unwrap().is_some() {
                    failures.push(format!("{label}: the JVP produced a tangent"));
                }
            }
            if zero {
                if !r.dtypes.contains(F) {
                    failures.push(format!(
                        "{}: zero rule, but float64 is not admitted",
                        r.name
                    ));
                    continue;
                }
                let fd = max_central_difference(&e, &op, arity, &mut rng);
                if fd != 0.0 {
                    failures.push(format!(
                        "{} {op:?}: zero rule, but a central difference is {fd:e}",
                        r.name
                    ));
                }
            }
        }
        if applied == 0 {
            failures.push(format!(
                "{}: no probe exercises it (add one to `probes`)",
                r.name
            ));
        }
    }
    assert!(n_zero > 0 && n_cut > 0, "zero: {n_zero}, cut: {n_cut}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The finite-difference check of the zero-derivative kinds can fail: `neg` (derivative -1)
/// has central differences of 1.
#[test]
fn sanity_central_differences_see_a_nonzero_derivative() {
    let e = engine();
    let fd = max_central_difference(&e, &Op::Unary(UnaryOp::Neg), 1, &mut Rng::new(3));
    assert!(fd > 0.5, "{fd}");
}

/// The check can fail: an independent tangent, or a conjugated VJP (the classic convention
/// slip for complex inputs), breaks the identity of a holomorphic op and of a decomposition.
#[test]
fn sanity_wrong_tangent_or_conjugated_vjp_breaks_the_identity() {
    let e = engine();
    let mut rng = Rng::new(99);
    let exp_c = prim(
        "Exp",
        Op::Unary(UnaryOp::Exp),
        C,
        vec![rand(&mut rng, C, &[3, 4])],
        vec![true],
    );
    let solve_f = prim(
        "Solve",
        Op::Linalg(LinalgOp::Solve),
        F,
        vec![
            rand_well_conditioned(&mut rng, F, 4, &[]),
            rand(&mut rng, F, &[4, 3]),
        ],
        vec![true, true],
    );
    for case in [&exp_c, &solve_f] {
        check(&e, case, 5, Corrupt::None).unwrap();
        let err = check(&e, case, 5, Corrupt::OtherTangent).unwrap_err();
        assert!(err.contains("|diff|"), "{err}");
    }
    let err = check(&e, &exp_c, 5, Corrupt::ConjVjp).unwrap_err();
    assert!(err.contains("|diff|"), "{err}");
    // Real VJPs are their own conjugates: the slip is invisible there (and harmless).
    check(&e, &solve_f, 5, Corrupt::ConjVjp).unwrap();
}

// ---------------------------------------------------------------------------------------------
// Emitted rules (issue 19): every rule body, emitted into a `Program` on symbols (shape and
// dtype, no data) and run on the engine, gives the values the eager rule gives.

/// Complex128 copy of a float or complex tensor, column-major.
fn as_c128(t: &Tensor) -> Vec<Complex64> {
    match t.dtype() {
        DType::F64 => t
            .to_vec::<f64>()
            .into_iter()
            .map(|x| Complex64::new(x, 0.0))
            .collect(),
        DType::F32 => t
            .to_vec::<f32>()
            .into_iter()
            .map(|x| Complex64::new(x.into(), 0.0))
            .collect(),
        DType::C64 => t.to_vec::<Complex64>(),
        DType::C32 => t
            .to_vec::<Complex32>()
            .into_iter()
            .map(|z| Complex64::new(z.re.into(), z.im.into()))
            .collect(),
        DType::Bool | DType::I32 | DType::I64 => panic!("as_c128: {:?}", t.dtype()),
    }
}

/// Largest elementwise difference relative to the largest magnitude (0 when bitwise equal).
fn rel_diff(a: &Tensor, b: &Tensor) -> std::result::Result<f64, String> {
    if a.dtype() != b.dtype() || a.shape() != b.shape() {
        return Err(format!(
            "emitted {:?}{:?} vs eager {:?}{:?}",
            a.dtype(),
            a.shape(),
            b.dtype(),
            b.shape()
        ));
    }
    let (x, y) = (as_c128(a), as_c128(b));
    let scale = y.iter().fold(0.0f64, |m, z| m.max(z.norm()));
    let diff = x
        .iter()
        .zip(&y)
        .filter(|(p, q)| p != q)
        .fold(0.0f64, |m, (p, q)| m.max((p - q).norm()));
    Ok(if diff == 0.0 { 0.0 } else { diff / scale })
}

/// What an emitted rule returned for one output: the same `None`s as the eager rule, and values
/// within `tol` of it once the program runs.
fn compare_results(
    what: &str,
    e: &Env,
    program_inputs: &[Tensor],
    emitter: tenferro_ad::Emitter,
    emitted: &[Option<Var>],
    eager: &[Option<Var>],
    tol: f64,
) -> std::result::Result<f64, String> {
    let pattern = |v: &[Option<Var>]| v.iter().map(Option::is_some).collect::<Vec<_>>();
    if pattern(emitted) != pattern(eager) {
        return Err(format!(
            "{what}: emitted zero pattern {:?}, eager {:?}",
            pattern(emitted),
            pattern(eager)
        ));
    }
    let outs: Vec<&Var> = emitted.iter().flatten().collect();
    let program = emitter
        .finish(&outs)
        .map_err(|err| format!("{what}: {err:?}"))?;
    let inputs_before: Vec<Vec<Complex64>> = program_inputs
        .iter()
        .filter(|t| t.dtype().is_inexact())
        .map(as_c128)
        .collect();
    let got = program
        .run(e.exec.engine().as_ref(), program_inputs)
        .map_err(|err| format!("{what}: running the program: {err:?}"))?;
    let inputs_after: Vec<Vec<Complex64>> = program_inputs
        .iter()
        .filter(|t| t.dtype().is_inexact())
        .map(as_c128)
        .collect();
    if inputs_before != inputs_after {
        return Err(format!("{what}: the program wrote into an input"));
    }
    let mut worst = 0.0f64;
    for (g, want) in got.iter().zip(eager.iter().flatten()) {
        let want = want
            .value
            .tensor("test")
            .map_err(|err| format!("{err:?}"))?;
        let d = rel_diff(g, want).map_err(|m| format!("{what}: {m}"))?;
        if d > tol || d.is_nan() {
            return Err(format!(
                "{what}: emitted differs from eager by {d:.3e} (rel)"
            ));
        }
        worst = worst.max(d);
    }
    Ok(worst)
}

/// A random tangent of `t`'s dtype and shape where `t` is differentiable, else `None`.
fn tangent_of(rng: &mut Rng, t: &Tensor) -> Option<Tensor> {
    t.dtype()
        .is_inexact()
        .then(|| rand(rng, t.dtype(), t.shape()))
}

/// Check the VJP and the JVP of one recorded node: eager on its values against emitted on
/// symbols of their shapes and dtypes. Returns the worst relative difference.
fn check_emitted_node(
    e: &Env,
    op: &Op,
    inputs: &[Tensor],
    outputs: &[Tensor],
    used: &[bool],
    rng: &mut Rng,
) -> std::result::Result<f64, String> {
    let multi = op.num_outputs() > 1;
    let plain = ctx(e, false);
    let emitter_ctx = |em: &tenferro_ad::Emitter| -> Vec<Var> {
        inputs
            .iter()
            .chain(outputs)
            .map(|t| em.input(t.dtype(), t.shape()))
            .collect()
    };
    fn err(what: &'static str) -> impl Fn(tenferro_tensor::Error) -> String {
        move |err| format!("{what}: {err:?}")
    }
    let consts = |ts: &[Tensor]| ts.iter().cloned().map(Var::constant).collect::<Vec<_>>();
    let (xs, ys) = (consts(inputs), consts(outputs));

    // VJP: program inputs are the primal inputs, the outputs, then the cotangents.
    let cts: Vec<Tensor> = outputs
        .iter()
        .map(|t| rand(rng, t.dtype(), t.shape()))
        .collect();
    let eager = if multi {
        let c: Vec<Option<Var>> = consts(&cts)
            .into_iter()
            .zip(used)
            .map(|(c, &u)| u.then_some(c))
            .collect();
        tenferro_ad::rules::vjp_multi(&plain, op, &xs, &ys, &c)
    } else {
        tenferro_ad::rules::vjp(&plain, op, &xs, &ys[0], &Var::constant(cts[0].clone()))
    }
    .map_err(err("eager vjp"))?;
    let em = tenferro_ad::Emitter::new();
    let sym = emitter_ctx(&em);
    let sct: Vec<Var> = cts
        .iter()
        .zip(used)
        .filter(|(_, &u)| u)
        .map(|(t, _)| em.input(t.dtype(), t.shape()))
        .collect();
    let (sx, sy) = sym.split_at(inputs.len());
    let ectx = Ctx {
        exec: &em,
        record: false,
    };
    let emitted = if multi {
        let mut sct = sct.into_iter();
        let c: Vec<Option<Var>> = used
            .iter()
            .map(|&u| u.then(|| sct.next()).flatten())
            .collect();
        tenferro_ad::rules::vjp_multi(&ectx, op, sx, sy, &c)
    } else {
        tenferro_ad::rules::vjp(&ectx, op, sx, &sy[0], &sct[0])
    }
    .map_err(err("emitted vjp"))?;
    let used_cts = cts.iter().zip(used).filter(|(_, &u)| u).map(|(t, _)| t);
    let all: Vec<Tensor> = inputs
        .iter()
        .chain(outputs)
        .chain(used_cts)
        .cloned()
        .collect();
    let w1 = compare_results("vjp", e, &all, em, &emitted, &eager, 1e-14)?;

    // JVP: program inputs are the primal inputs, the outputs, then the input tangents.
    let ts: Vec<Option<Tensor>> = inputs.iter().map(|t| tangent_of(rng, t)).collect();
    let tvars: Vec<Option<Var>> = ts.iter().map(|t| t.clone().map(Var::constant)).collect();
    let eager = if multi {
        tenferro_ad::rules::jvp_multi(&plain, op, &xs, &ys, &tvars, used)
    } else {
        tenferro_ad::rules::jvp(&plain, op, &xs, &ys[0], &tvars).map(|t| vec![t])
    }
    .map_err(err("eager jvp"))?;
    let em = tenferro_ad::Emitter::new();
    let sym = emitter_ctx(&em);
    let st: Vec<Option<Var>> = ts
        .iter()
        .map(|t| t.as_ref().map(|t| em.input(t.dtype(), t.shape())))
        .collect();
    let (sx, sy) = sym.split_at(inputs.len());
    let ectx = Ctx {
        exec: &em,
        record: false,
    };
    let emitted = if multi {
        tenferro_ad::rules::jvp_multi(&ectx, op, sx, sy, &st, used)
    } else {
        tenferro_ad::rules::jvp(&ectx, op, sx, &sy[0], &st).map(|t| vec![t])
    }
    .map_err(err("emitted jvp"))?;
    let all: Vec<Tensor> = inputs
        .iter()
        .chain(outputs)
        .chain(ts.iter().flatten())
        .cloned()
        .collect();
    let w2 = compare_results("jvp", e, &all, em, &emitted, &eager, 1e-14)?;
    Ok(w1.max(w2))
}

/// Every recorded primitive node of every case: emitted VJP and JVP programs equal the eager
/// rules (bit for bit, or within 1e-14 relative), and every differentiable kind is checked in
/// each of `float64` / `complex128` its catalog row admits.
#[test]
fn emitted_rules_equal_eager_rules_for_every_primitive() {
    let e = engine();
    let mut failures = Vec::new();
    let mut checked: HashSet<(OpKind, DType)> = HashSet::new();
    let mut worst = (0.0f64, String::new());
    let mut n_checked = 0usize;
    for (i, case) in all_cases().iter().enumerate() {
        let mut rng = Rng::new(5000 + i as u64);
        let vars: Vec<Var> = case
            .inputs
            .iter()
            .zip(&case.diff)
            .map(|(t, &d)| Var {
                value: t.clone().into(),
                node: d.then(|| Node::leaf(&t.clone().into())),
            })
            .collect();
        let out = (case.build)(&ctx(&e, true), &vars).unwrap();
        // The outputs of each several-output node that the case uses (its projections).
        let mut used: std::collections::HashMap<u64, Vec<bool>> = Default::default();
        let mut seen = HashSet::new();
        let mut stack: Vec<Arc<Node>> = out.node.iter().cloned().collect();
        let mut nodes = Vec::new();
        while let Some(n) = stack.pop() {
            if !seen.insert(n.id) {
                continue;
            }
            let inputs: &[Var] = match &n.kind {
                NodeKind::Leaf { .. } => &[],
                NodeKind::Output { index, parent } => {
                    if let Some(NodeKind::Multi { outputs, .. }) =
                        parent[0].node.as_ref().map(|p| &p.kind)
                    {
                        let p = parent[0].node.as_ref().map_or(0, |p| p.id);
                        used.entry(p).or_insert_with(|| vec![false; outputs.len()])[*index] = true;
                    }
                    parent
                }
                NodeKind::Op { inputs, .. }
                | NodeKind::Multi { inputs, .. }
                | NodeKind::Custom { inputs, .. } => inputs,
            };
            stack.extend(inputs.iter().filter_map(|v| v.node.clone()));
            nodes.push(n.clone());
        }
        for n in nodes {
            let (op, inputs, outputs): (&Op, &[Var], Vec<Tensor>) = match &n.kind {
                // Supplied rules are not the table's (this test checks the table).
                NodeKind::Leaf { .. } | NodeKind::Output { .. } | NodeKind::Custom { .. } => {
                    continue
                }
                NodeKind::Op { op, inputs, output } => {
                    (op, inputs, vec![output.tensor("test").unwrap().clone()])
                }
                NodeKind::Multi {
                    op,
                    inputs,
                    outputs,
                } => (
                    op,
                    inputs,
                    outputs
                        .iter()
                        .map(|o| o.tensor("test").unwrap().clone())
                        .collect(),
                ),
            };
            let ins: Vec<Tensor> = inputs
                .iter()
                .map(|v| v.value.tensor("test").unwrap().clone())
                .collect();
            let all_used = vec![true; outputs.len()];
            let u = used.get(&n.id).unwrap_or(&all_used);
            match check_emitted_node(&e, op, &ins, &outputs, u, &mut rng) {
                Ok(w) => {
                    n_checked += 1;
                    // Keyed by the dtype of the data operands (select's predicate is bool).
                    let d = ins
                        .iter()
                        .map(Tensor::dtype)
                        .find(|d| d.is_inexact())
                        .unwrap_or(outputs[0].dtype());
                    checked.insert((op.kind(), d));
                    if w > worst.0 {
                        worst = (w, format!("{} in {}", op.name(), case.label));
                    }
                }
                Err(m) => failures.push(format!(
                    "{} [{:?}] {}: {m}",
                    case.label,
                    case.dtype,
                    op.name()
                )),
            }
        }
    }
    eprintln!(
        "emitted vs eager: {n_checked} nodes, {} (kind, dtype) pairs; worst relative difference \
         {:.2e} ({})",
        checked.len(),
        worst.0,
        worst.1
    );
    assert!(n_checked > 150, "only {n_checked} nodes checked");
    for kind in OpKind::ALL {
        let r = row(kind);
        if matches!(rule(kind), Rule::Zero | Rule::Cut) {
            continue;
        }
        for d in [F, C] {
            if r.dtypes.contains(d) && !checked.contains(&(kind, d)) {
                failures.push(format!(
                    "{} [{}]: no recorded node checked",
                    r.name,
                    d.name()
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The emitted-rule check can fail: a program emitted from `exp`'s VJP compared with `sin`'s
/// eager VJP on the same values is reported, and so is a different `None` pattern.
#[test]
fn sanity_emitted_check_detects_a_different_rule() {
    let e = engine();
    let mut rng = Rng::new(7);
    let x = rand(&mut rng, F, &[3]);
    let ct = rand(&mut rng, F, &[3]);
    let plain = ctx(&e, false);
    let exp = Op::Unary(UnaryOp::Exp);
    let sin = Op::Unary(UnaryOp::Sin);
    let y_sin = plain
        .apply(sin.clone(), &[&Var::constant(x.clone())])
        .unwrap();
    let y_exp = plain
        .apply(exp.clone(), &[&Var::constant(x.clone())])
        .unwrap();
    let eager_sin = tenferro_ad::rules::vjp(
        &plain,
        &sin,
        &[Var::constant(x.clone())],
        &y_sin,
        &Var::constant(ct.clone()),
    )
    .unwrap();
    let emit = |op: &Op| {
        let em = tenferro_ad::Emitter::new();
        let (sx, sy, sc) = (em.input(F, &[3]), em.input(F, &[3]), em.input(F, &[3]));
        let c = Ctx {
            exec: &em,
            record: false,
        };
        let g = tenferro_ad::rules::vjp(&c, op, &[sx], &sy, &sc).unwrap();
        (em, g)
    };
    let y = y_exp.value.tensor("test").unwrap().clone();
    let (em, g) = emit(&exp);
    let inputs = [x.clone(), y, ct.clone()];
    assert!(compare_results("vjp", &e, &inputs, em, &g, &eager_sin, 1e-14).is_err());
    let (em, g) = emit(&sin);
    let y = y_sin.value.tensor("test").unwrap().clone();
    let inputs = [x, y, ct];
    assert!(compare_results("vjp", &e, &inputs, em, &g, &eager_sin, 1e-14).is_ok());
    let (em, g) = emit(&sin);
    assert!(compare_results("vjp", &e, &inputs, em, &g, &[None], 1e-14).is_err());
}

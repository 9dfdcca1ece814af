//! Rules of the `linalg` family. Matrices are axes 0 and 1, batch axes follow (batch-last, as
//! the kernels). Every rule body is written with differentiable primitives (`dot_general`,
//! `mul`, `tril`, `extract_diag`, …) and the linalg ops themselves (`solve`,
//! `triangular_solve`), so derivatives of any order come from the same rules.
//!
//! Complex convention: a VJP is the adjoint of the JVP under `<a, b> = Re Σ conj(a)·b`;
//! each VJP below is derived from its JVP step by step (the adjoint of `X ↦ A·X·B` is
//! `Y ↦ Aᴴ·Y·Bᴴ`, of a real mask `M∘X` is `M∘Y`, of `X ↦ Xᴴ` is `Y ↦ Yᴴ`).
//!
//! Degenerate spectra: `svd` and `eigh` use the Lorentzian-broadened reciprocal
//! `g/(g² + ε²)`: of `λ_j − λ_i` for eigh; for svd of `s_j − s_i` and of `s_j + s_i` separately
//! (their product is `1/(s_j² − s_i²)`; broadening the squared gap would drop the coupling of
//! every pair below `√ε·s_max`), and `s/(s² + ε²)` for `1/s`, with the op's `eps` relative to
//! the scale of the spectrum (`autodiff.md`): the rules measure the values in the unit
//! `σ = 2^⌊log₂ max|v|⌋` of [`Unit`], so the broadening is `eps·σ` on every gap, sum and `1/s`;
//! gradients are
//! scale-covariant (`∇L(c·A) = c^(k−1)·∇L(A)` for a loss homogeneous of degree `k`) and no
//! intermediate `s²` or `1/g` over- or underflows where the result does not. Gradients stay
//! finite at exact degeneracy, where the terms that couple two equal values become zero. Their true value is a limit a rule cannot see (for
//! `V·f(Λ)·Vᴴ` it is `f'(λ)` times the coupling component), so the result is exact when the
//! cotangent has no coupling component between equal values (losses of the values alone,
//! `‖U·S·Vᴴ‖²` at `I`) and biased otherwise; gaps well above `ε` are exact.

use super::ops::{
    add, add_opt, broadcast_in_dim, cast, compare, conj, div, fit, full, mul, neg, scalar, select,
    sub, un,
};
use crate::{Ctx, Var};
use tenferro_ops::{CompareDir, DotGeneralConfig, LinalgOp, Op, ReduceOp, SliceConfig, UnaryOp};
use tenferro_tensor::{Complex64, DType, Error, Result};

// ---------------------------------------------------------------------------------------------
// Batched matrix helpers (axes 0, 1 = rows, columns; the rest batch).
// ---------------------------------------------------------------------------------------------

fn batch(x: &Var) -> Vec<usize> {
    x.value.shape()[2..].to_vec()
}

/// `op_a(a)·op_b(b)` over the batch axes, `op` conjugating when flagged.
fn dg(ctx: &Ctx<'_>, a: &Var, b: &Var, ca: bool, cb: bool) -> Result<Var> {
    let nd = a.value.ndim();
    let bd: Vec<usize> = (2..nd).collect();
    let config = DotGeneralConfig {
        lhs_contracting_dims: vec![1],
        rhs_contracting_dims: vec![0],
        lhs_batch_dims: bd.clone(),
        rhs_batch_dims: bd,
    };
    let ca = ca && a.value.dtype().is_complex();
    let cb = cb && b.value.dtype().is_complex();
    if !ca && !cb {
        ctx.apply(Op::DotGeneral(config), &[a, b])
    } else {
        ctx.apply(
            Op::DotGeneralWithConj {
                config,
                lhs_conj: ca,
                rhs_conj: cb,
            },
            &[a, b],
        )
    }
}

/// `a·b`.
fn mm(ctx: &Ctx<'_>, a: &Var, b: &Var) -> Result<Var> {
    dg(ctx, a, b, false, false)
}

/// `aᵀ` (a view).
fn mt(ctx: &Ctx<'_>, x: &Var) -> Result<Var> {
    let nd = x.value.ndim();
    let mut perm: Vec<usize> = (0..nd).collect();
    perm.swap(0, 1);
    ctx.apply(Op::Transpose(perm), &[x])
}

/// `aᴴ`.
fn mh(ctx: &Ctx<'_>, x: &Var) -> Result<Var> {
    let t = mt(ctx, x)?;
    conj(ctx, &t)
}

/// `aᴴ·b` (no materialised transpose: faer reads the conjugate in place).
fn mhm(ctx: &Ctx<'_>, a: &Var, b: &Var) -> Result<Var> {
    let at = mt(ctx, a)?;
    dg(ctx, &at, b, true, false)
}

/// `a·bᴴ`.
fn mmh(ctx: &Ctx<'_>, a: &Var, b: &Var) -> Result<Var> {
    let bt = mt(ctx, b)?;
    dg(ctx, a, &bt, false, true)
}

/// The diagonal `[n, batch…]` of `[n, n, batch…]`.
fn diag(ctx: &Ctx<'_>, x: &Var) -> Result<Var> {
    ctx.apply(Op::ExtractDiag { a: 0, b: 1 }, &[x])
}

/// The diagonal matrix of `[n, batch…]`.
fn diag_embed(ctx: &Ctx<'_>, v: &Var) -> Result<Var> {
    ctx.apply(Op::EmbedDiag { a: 0, b: 1 }, &[v])
}

fn tril(ctx: &Ctx<'_>, x: &Var, k: i64) -> Result<Var> {
    ctx.apply(Op::Tril(k), &[x])
}

fn triu(ctx: &Ctx<'_>, x: &Var, k: i64) -> Result<Var> {
    ctx.apply(Op::Triu(k), &[x])
}

/// `v[k, batch…]` broadcast along rows: element `[i, j]` is `v[j]` (shape `[rows, k, batch…]`).
fn by_col(ctx: &Ctx<'_>, v: &Var, rows: usize) -> Result<Var> {
    let s = v.value.shape();
    let shape: Vec<usize> = [rows].iter().chain(s).copied().collect();
    let dims: Vec<usize> = (1..=s.len()).collect();
    broadcast_in_dim(ctx, v, &shape, &dims)
}

/// `v[k, batch…]` broadcast along columns: element `[i, j]` is `v[i]` (shape `[k, cols, batch…]`).
fn by_row(ctx: &Ctx<'_>, v: &Var, cols: usize) -> Result<Var> {
    let s = v.value.shape();
    let shape: Vec<usize> = [s[0], cols].iter().chain(&s[1..]).copied().collect();
    let dims: Vec<usize> = std::iter::once(0).chain(2..=s.len()).collect();
    broadcast_in_dim(ctx, v, &shape, &dims)
}

/// `x·diag(v)`.
fn scale_cols(ctx: &Ctx<'_>, x: &Var, v: &Var) -> Result<Var> {
    let b = by_col(ctx, v, x.value.shape()[0])?;
    mul(ctx, x, &b)
}

/// `diag(v)·x`.
fn scale_rows(ctx: &Ctx<'_>, x: &Var, v: &Var) -> Result<Var> {
    let b = by_row(ctx, v, x.value.shape()[1])?;
    mul(ctx, x, &b)
}

/// `x + xᴴ`.
fn herm2(ctx: &Ctx<'_>, x: &Var) -> Result<Var> {
    let h = mh(ctx, x)?;
    add(ctx, x, &h)
}

/// Real part (identity for real dtypes).
fn re(ctx: &Ctx<'_>, x: &Var) -> Result<Var> {
    cast(ctx, x, x.value.dtype().to_real())
}

/// Imaginary part of a complex tensor.
fn im(ctx: &Ctx<'_>, x: &Var) -> Result<Var> {
    let r = ctx.apply(Op::ScaleComplex(Complex64::new(0.0, -1.0)), &[x])?;
    re(ctx, &r)
}

/// `i·x` for a real `x`, as `dtype` (complex).
fn times_i(ctx: &Ctx<'_>, x: &Var, dtype: DType) -> Result<Var> {
    let c = to(ctx, x, dtype)?;
    ctx.apply(Op::ScaleComplex(Complex64::new(0.0, 1.0)), &[&c])
}

/// Convert (real → complex) to `dtype` when it differs.
fn to(ctx: &Ctx<'_>, x: &Var, dtype: DType) -> Result<Var> {
    if x.value.dtype() == dtype {
        Ok(x.clone())
    } else {
        ctx.apply(Op::Convert(dtype), &[x])
    }
}

/// `x · c` for a real constant `c`.
fn scale(ctx: &Ctx<'_>, x: &Var, c: f64) -> Result<Var> {
    ctx.apply(Op::ScaleReal(c), &[x])
}

/// The identity `[n, n, batch…]` of `dtype` (a constant).
fn eye(ctx: &Ctx<'_>, n: usize, batch: &[usize], dtype: DType) -> Result<Var> {
    let shape: Vec<usize> = [n].iter().chain(batch).copied().collect();
    let ones = full(ctx, 1.0, dtype, &shape)?;
    diag_embed(ctx, &ones)
}

/// Slice axis `axis` to `lo..hi`.
fn take(ctx: &Ctx<'_>, x: &Var, axis: usize, lo: usize, hi: usize) -> Result<Var> {
    let s = x.value.shape();
    let mut starts = vec![0; s.len()];
    let mut limits = s.to_vec();
    starts[axis] = lo;
    limits[axis] = hi;
    ctx.apply(
        Op::Slice(SliceConfig {
            starts,
            limits,
            strides: vec![1; s.len()],
        }),
        &[x],
    )
}

fn concat(ctx: &Ctx<'_>, a: &Var, b: &Var, axis: usize) -> Result<Var> {
    ctx.apply(Op::Concatenate { axis }, &[a, b])
}

fn solve(ctx: &Ctx<'_>, a: &Var, b: &Var) -> Result<Var> {
    ctx.apply(Op::Linalg(LinalgOp::Solve), &[a, b])
}

/// `tri(a)⁻¹·b`.
fn trisolve(ctx: &Ctx<'_>, a: &Var, b: &Var, lower: bool) -> Result<Var> {
    ctx.apply(Op::Linalg(LinalgOp::TriangularSolve { lower }), &[a, b])
}

/// `b·tri(a)⁻¹` = `(tri(a)ᵀ⁻¹·bᵀ)ᵀ`.
fn trisolve_right(ctx: &Ctx<'_>, a: &Var, b: &Var, lower: bool) -> Result<Var> {
    let at = mt(ctx, a)?;
    let bt = mt(ctx, b)?;
    let x = trisolve(ctx, &at, &bt, !lower)?;
    mt(ctx, &x)
}

/// Lorentzian-broadened reciprocal `g / (g² + ε²)` (zero at `g = 0`).
fn lorentz(ctx: &Ctx<'_>, g: &Var, eps: f64) -> Result<Var> {
    let d = g.value.dtype();
    let tiny = if d == DType::F32 {
        f32::MIN_POSITIVE as f64
    } else {
        f64::MIN_POSITIVE
    };
    let e2 = super::ops::scalar((eps * eps).max(tiny), 0.0, d)?;
    let g2 = mul(ctx, g, g)?;
    let den = add(ctx, &g2, &e2)?;
    super::ops::div(ctx, g, &den)
}

/// `F[i, j] = lorentz(v_j − v_i)` from `v[k, batch…]` (real), zero on the diagonal.
///
/// The diagonal is masked out explicitly (not only through `lorentz(0) = 0`): there the
/// derivative of `lorentz` is `1/ε²`, and reverse mode over this matrix would add `±ū_ii/ε²`
/// to `v̄_i` twice and cancel them in floating point, wiping out every other contribution.
fn gap_matrix(ctx: &Ctx<'_>, v: &Var, eps: f64) -> Result<Var> {
    let k = v.value.shape()[0];
    let vj = by_col(ctx, v, k)?;
    let vi = by_row(ctx, v, k)?;
    let g = sub(ctx, &vj, &vi)?;
    let f = lorentz(ctx, &g, eps)?;
    let d = v.value.dtype();
    let shape = f.value.shape().to_vec();
    let ones = full(ctx, 1.0, d, &shape)?;
    let eye = eye(ctx, k, &shape[2..], d)?;
    let mask = sub(ctx, &ones, &eye)?;
    mul(ctx, &f, &mask)
}

/// `½(tril(x) + tril(x, −1))`: the lower triangle with half the diagonal. `T + Tᴴ` is the
/// Hermitian matrix the kernels read from the lower triangle of `x` (real diagonal), and the
/// map is its own adjoint.
fn half_lower(ctx: &Ctx<'_>, x: &Var) -> Result<Var> {
    let a = tril(ctx, x, 0)?;
    let b = tril(ctx, x, -1)?;
    let s = add(ctx, &a, &b)?;
    scale(ctx, &s, 0.5)
}

/// The Hermitian tangent `T + Tᴴ` (`T = half_lower(dA)`) of an op reading the lower triangle.
fn herm_from_lower(ctx: &Ctx<'_>, da: &Var) -> Result<Var> {
    let t = half_lower(ctx, da)?;
    herm2(ctx, &t)
}

/// Adjoint of [`herm_from_lower`]: `half_lower(G + Gᴴ)`.
fn herm_from_lower_adjoint(ctx: &Ctx<'_>, g: &Var) -> Result<Var> {
    let h = herm2(ctx, g)?;
    half_lower(ctx, &h)
}

fn unsupported(op: &Op, what: &str) -> Error {
    Error::unsupported_ad_rule(op.name(), format!("no derivative rule for {what}"))
}

fn sum_opt(ctx: &Ctx<'_>, terms: Vec<Option<Var>>) -> Result<Option<Var>> {
    let mut acc = None;
    for t in terms {
        acc = add_opt(ctx, acc, t)?;
    }
    Ok(acc)
}

/// The unit `σ` in which the svd and eigh rules measure a spectrum `v` (`[k, batch…]`, real):
/// per batch item `σ = max_i |v_i|`, clamped to the normal range `[2^emin, 2^−emin]` of the dtype
/// (1 for an all-zero or non-finite item), a constant (the broadening is a regularisation, not a
/// function of `A` to differentiate: `σ` is computed from `v` with its graph cut).
///
/// The rules form the inverse gaps from `v/σ` and apply `1/σ` to the tangent or cotangent parts
/// that meet them: `1/(s_j² − s_i²)·s = (1/(ŝ_j² − ŝ_i²)·ŝ)/σ` with `ŝ = s/σ`, so the broadening
/// `eps` is relative (`eps·σ²` on the squared gaps) and nothing overflows or underflows where
/// the derivative itself does not (`s²` underflows at `s ≈ 1e-160`). `σ` is built from
/// primitives (no value is read on the host), so the rule emits into a `Program` unchanged.
struct Unit {
    /// `1/σ`, shaped like the batch axes of `v`.
    inv: Var,
}

impl Unit {
    fn of(ctx: &Ctx<'_>, v: &Var) -> Result<Unit> {
        let d = v.value.dtype();
        let shape = v.value.shape();
        let batch = &shape[1..];
        let one = full(ctx, 1.0, d, batch)?;
        if shape[0] == 0 {
            return Ok(Unit { inv: one });
        }
        // `emin`: the exponent of the smallest normal number, so that `σ` and `1/σ` are normal.
        let emin = if d == DType::F32 {
            f32::MIN_EXP - 1
        } else {
            f64::MIN_EXP - 1
        };
        let (lo, hi) = (2f64.powi(emin), 2f64.powi(-emin));
        let cut = Var {
            value: v.value.clone(),
            node: None,
        };
        let m = ctx.apply(
            Op::Reduce {
                op: ReduceOp::Max,
                axes: vec![0],
            },
            &[&un(ctx, UnaryOp::Abs, &cut)?],
        )?;
        let clamped = ctx.apply(Op::Clamp, &[&m, &scalar(lo, 0.0, d)?, &scalar(hi, 0.0, d)?])?;
        let zero = scalar(0.0, 0.0, d)?;
        // `m − m == 0` is false exactly for inf and NaN.
        let finite = compare(ctx, CompareDir::Eq, &sub(ctx, &m, &m)?, &zero)?;
        let positive = compare(ctx, CompareDir::Gt, &m, &zero)?;
        let sigma = select(ctx, &finite, &select(ctx, &positive, &clamped, &one)?, &one)?;
        Ok(Unit {
            inv: div(ctx, &one, &sigma)?,
        })
    }

    /// `x/σ` per batch item (`x`: any core axes, then the batch axes).
    fn shrink(&self, ctx: &Ctx<'_>, x: &Var) -> Result<Var> {
        let shape = x.value.shape().to_vec();
        let core = shape.len() - self.inv.value.ndim();
        let dims: Vec<usize> = (core..shape.len()).collect();
        let c = broadcast_in_dim(ctx, &self.inv, &shape, &dims)?;
        let c = cast(ctx, &c, x.value.dtype())?;
        mul(ctx, x, &c)
    }
}

// ---------------------------------------------------------------------------------------------
// svd
// ---------------------------------------------------------------------------------------------

/// Shared pieces of the reduced SVD rules, in the unit `σ` of the singular values ([`Unit`]).
struct SvdParts {
    k: usize,
    unit: Unit,
    /// `ŝ = s/σ`.
    s: Var,
    /// `F̂[i, j] = lorentz(ŝ_j − ŝ_i)·lorentz(ŝ_j + ŝ_i) ≈ 1/(ŝ_j² − ŝ_i²)` (`F = F̂/σ²`).
    f: Var,
    /// `ŝ / (ŝ² + ε²)` (`1/s ≈ ŝinv/σ`).
    sinv: Var,
}

fn svd_parts(ctx: &Ctx<'_>, s: &Var, eps: f64) -> Result<SvdParts> {
    let unit = Unit::of(ctx, s)?;
    let sh = unit.shrink(ctx, s)?;
    // 1/(s_j² − s_i²) as 1/(s_j − s_i) · 1/(s_j + s_i), each broadened by eps (relative to σ):
    // broadening the squared gap instead (eps·σ² on s_j² − s_i²) wipes out the coupling of
    // every pair of singular values below √eps·σ, e.g. s = [1e7, 2, 1] (cond > 1e6).
    let k = s.value.shape()[0];
    let sums = add(ctx, &by_col(ctx, &sh, k)?, &by_row(ctx, &sh, k)?)?;
    let f = mul(ctx, &gap_matrix(ctx, &sh, eps)?, &lorentz(ctx, &sums, eps)?)?;
    Ok(SvdParts {
        k,
        f,
        sinv: lorentz(ctx, &sh, eps)?,
        s: sh,
        unit,
    })
}

/// JVP of the SVD `A = U·diag(s)·Vh` (reduced factors `U: m×k`, `Vh: k×n`).
///
/// With `X = Uᴴ·dA·V`: `ds = Re diag X`,
/// `dU = U·(F∘(X·S + S·Xᴴ) + i·Im(diag X)·S⁻¹) + (I − U·Uᴴ)·dA·V·S⁻¹`,
/// `dV = V·(F∘(S·X + Xᴴ·S)) + (I − V·Vᴴ)·dAᴴ·U·S⁻¹`, `F_ij = 1/(s_j² − s_i²)`; the
/// `i·Im(diag X)` term is the gauge term of complex SVD. Sources: Townsend 2016, "Differentiating
/// the Singular Value Decomposition"; Wan & Zhang 2019, "Automatic differentiation for complex
/// valued SVD"; JAX `jax/_src/lax/linalg.py` (`_svd_jvp_rule`). Inverse gaps broadened as in the
/// module docs; `dU` and `dV` are evaluated as the same expressions in `ŝ = s/σ` applied to
/// `X/σ` and `dA/σ` ([`Unit`]).
fn svd_jvp_reduced(
    ctx: &Ctx<'_>,
    da: &Var,
    u: &Var,
    s: &Var,
    vh: &Var,
    eps: f64,
    wanted: [bool; 3],
) -> Result<[Option<Var>; 3]> {
    let (m, n) = (u.value.shape()[0], vh.value.shape()[1]);
    let dt = u.value.dtype();
    let uh_da = mhm(ctx, u, da)?;
    let x = mmh(ctx, &uh_da, vh)?;
    let ds = if wanted[1] {
        let d = diag(ctx, &x)?;
        Some(re(ctx, &d)?)
    } else {
        None
    };
    if !(wanted[0] || wanted[2]) {
        return Ok([None, ds, None]);
    }
    let p = svd_parts(ctx, s, eps)?;
    let x = p.unit.shrink(ctx, &x)?;
    let du = if wanted[0] {
        let xs = scale_cols(ctx, &x, &p.s)?;
        let sym = herm2(ctx, &xs)?;
        let sym = mul(ctx, &p.f, &sym)?;
        let mut y = sym;
        if dt.is_complex() {
            let dx = diag(ctx, &x)?;
            let imd = im(ctx, &dx)?;
            let g = mul(ctx, &imd, &p.sinv)?;
            let g = times_i(ctx, &g, dt)?;
            let g = diag_embed(ctx, &g)?;
            y = add(ctx, &y, &g)?;
        }
        let mut du = mm(ctx, u, &y)?;
        if m > p.k {
            let dav = mmh(ctx, da, vh)?;
            let dav = p.unit.shrink(ctx, &dav)?;
            let ux = mm(ctx, u, &x)?;
            let r = sub(ctx, &dav, &ux)?;
            let r = scale_cols(ctx, &r, &p.sinv)?;
            du = add(ctx, &du, &r)?;
        }
        Some(du)
    } else {
        None
    };
    let dvh = if wanted[2] {
        let sx = scale_rows(ctx, &x, &p.s)?;
        let sym = herm2(ctx, &sx)?;
        let y = mul(ctx, &p.f, &sym)?;
        // dVh = dVᴴ = Yᴴ·Vh (+ the complement term for n > k).
        let yh = mh(ctx, &y)?;
        let mut dvh = mm(ctx, &yh, vh)?;
        if n > p.k {
            // (I − V·Vᴴ)·dAᴴ·U·S⁻¹, conjugate-transposed: S⁻¹·(Uᴴ·dA − X·Vh).
            let uh_da = p.unit.shrink(ctx, &uh_da)?;
            let xv = mm(ctx, &x, vh)?;
            let r = sub(ctx, &uh_da, &xv)?;
            let r = scale_rows(ctx, &r, &p.sinv)?;
            dvh = add(ctx, &dvh, &r)?;
        }
        Some(dvh)
    } else {
        None
    };
    Ok([du, ds, dvh])
}

/// VJP of the reduced SVD: the adjoint of [`svd_jvp_reduced`], step by step:
/// `X̄ = diag(s̄) + (Z + Zᴴ)·S + ½(Ȳ − Ȳᴴ)∘I·S⁻¹ + S·(W + Wᴴ)` with `Ȳ = Uᴴ·Ū`, `Z = F∘Ȳ`,
/// `W = F∘(Vᴴ·V̄)`; `Ā = U·X̄·Vh + (I − U·Uᴴ)·Ū·S⁻¹·Vh + U·S⁻¹·V̄ᴴ·(I − V·Vᴴ)`.
/// Sources as the JVP; PyTorch `svd_backward` (`FunctionsManual.cpp`) for the same terms. All
/// but `diag(s̄)` are evaluated in `ŝ = s/σ` on `Ū/σ`, `V̄h/σ` ([`Unit`]).
fn svd_vjp_reduced(
    ctx: &Ctx<'_>,
    u: &Var,
    s: &Var,
    vh: &Var,
    cts: [Option<&Var>; 3],
    eps: f64,
) -> Result<Var> {
    let (m, n) = (u.value.shape()[0], vh.value.shape()[1]);
    let dt = u.value.dtype();
    if let [None, Some(sb), None] = cts {
        // Only the singular values: Ā = U·diag(s̄)·Vh, one product.
        let sb = to(ctx, sb, dt)?;
        let us = scale_cols(ctx, u, &sb)?;
        return mm(ctx, &us, vh);
    }
    let p = svd_parts(ctx, s, eps)?;
    let mut terms: Vec<Option<Var>> = Vec::new();
    if let Some(sb) = cts[1] {
        let sb = to(ctx, sb, dt)?;
        terms.push(Some(diag_embed(ctx, &sb)?));
    }
    let mut extra: Vec<Option<Var>> = Vec::new();
    if let Some(ub) = cts[0] {
        let ub = p.unit.shrink(ctx, ub)?;
        let yb = mhm(ctx, u, &ub)?;
        let z = mul(ctx, &p.f, &yb)?;
        let z = herm2(ctx, &z)?;
        terms.push(Some(scale_cols(ctx, &z, &p.s)?));
        if dt.is_complex() {
            let d = diag(ctx, &yb)?;
            let imd = im(ctx, &d)?;
            let g = mul(ctx, &imd, &p.sinv)?;
            let g = times_i(ctx, &g, dt)?;
            terms.push(Some(diag_embed(ctx, &g)?));
        }
        if m > p.k {
            let uy = mm(ctx, u, &yb)?;
            let r = sub(ctx, &ub, &uy)?;
            let r = scale_cols(ctx, &r, &p.sinv)?;
            extra.push(Some(mm(ctx, &r, vh)?));
        }
    }
    if let Some(vhb) = cts[2] {
        let vhb = p.unit.shrink(ctx, vhb)?;
        // Vᴴ·V̄ with V = Vhᴴ, V̄ = V̄hᴴ: Vh·V̄hᴴ.
        let yv = mmh(ctx, vh, &vhb)?;
        let w = mul(ctx, &p.f, &yv)?;
        let w = herm2(ctx, &w)?;
        terms.push(Some(scale_rows(ctx, &w, &p.s)?));
        if n > p.k {
            // U·S⁻¹·(V̄h − (V̄h·V)·Vh), V̄h·V = V̄h·Vhᴴ.
            let vbv = mmh(ctx, &vhb, vh)?;
            let t = mm(ctx, &vbv, vh)?;
            let r = sub(ctx, &vhb, &t)?;
            let r = scale_rows(ctx, &r, &p.sinv)?;
            extra.push(Some(mm(ctx, u, &r)?));
        }
    }
    let xb = sum_opt(ctx, terms)?;
    let mut out = match xb {
        Some(xb) => {
            let t = mm(ctx, u, &xb)?;
            Some(mm(ctx, &t, vh)?)
        }
        None => None,
    };
    for e in extra {
        out = add_opt(ctx, out, e)?;
    }
    match out {
        Some(o) => Ok(o),
        None => {
            let shape = [m, n].iter().chain(&batch(u)).copied().collect::<Vec<_>>();
            full(ctx, 0.0, dt, &shape)
        }
    }
}

fn svd_params(op: &Op) -> Result<(bool, f64)> {
    unpack!(op, Op::Linalg(LinalgOp::Svd { full_matrices, eps }));
    Ok((*full_matrices, *eps))
}

/// JVP of `svd`. With `full_matrices` and a non-square input, the completing columns of `U`
/// (rows of `Vh`) get the tangent `dU⊥ = −U·dUᴴ·U⊥` (the gauge `U⊥ᴴ·dU⊥ = 0`), exact for
/// losses invariant under rotations of the complement.
pub fn svd_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    _inputs: &[Var],
    outs: &[Var],
    ts: &[Option<Var>],
    wanted: &[bool],
) -> Result<Vec<Option<Var>>> {
    let Some(da) = &ts[0] else {
        return Ok(vec![None; 3]);
    };
    let (full_m, eps) = svd_params(op)?;
    let (u, s, vh) = (&outs[0], &outs[1], &outs[2]);
    let (m, n) = (u.value.shape()[0], vh.value.shape()[1]);
    let k = s.value.shape()[0];
    let da = to(ctx, da, u.value.dtype())?;
    if !(full_m && m != n) {
        let w = [wanted[0], wanted[1], wanted[2]];
        return Ok(svd_jvp_reduced(ctx, &da, u, s, vh, eps, w)?.into());
    }
    if m > n {
        let u1 = take(ctx, u, 1, 0, k)?;
        let u2 = take(ctx, u, 1, k, m)?;
        let [du1, ds, dvh] =
            svd_jvp_reduced(ctx, &da, &u1, s, vh, eps, [true, wanted[1], wanted[2]])?;
        let du = match du1 {
            Some(du1) if wanted[0] => {
                let t = mhm(ctx, &du1, &u2)?;
                let t = mm(ctx, &u1, &t)?;
                let du2 = neg(ctx, &t)?;
                Some(concat(ctx, &du1, &du2, 1)?)
            }
            _ => None,
        };
        Ok(vec![du, ds, dvh])
    } else {
        let v1 = take(ctx, vh, 0, 0, k)?;
        let v2 = take(ctx, vh, 0, k, n)?;
        let [du, ds, dvh1] =
            svd_jvp_reduced(ctx, &da, u, s, &v1, eps, [wanted[0], wanted[1], true])?;
        let dvh = match dvh1 {
            Some(dvh1) if wanted[2] => {
                // dVh2 = −Vh2·dVh1ᴴ·Vh1.
                let t = mmh(ctx, &v2, &dvh1)?;
                let t = mm(ctx, &t, &v1)?;
                let dvh2 = neg(ctx, &t)?;
                Some(concat(ctx, &dvh1, &dvh2, 0)?)
            }
            _ => None,
        };
        Ok(vec![du, ds, dvh])
    }
}

/// VJP of `svd` (adjoint of [`svd_jvp`]; the complement cotangent folds into `Ū₁` as
/// `Ū₁ − U⊥·Ū⊥ᴴ·U₁`).
pub fn svd_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    outs: &[Var],
    cts: &[Option<Var>],
) -> Result<Vec<Option<Var>>> {
    let (full_m, eps) = svd_params(op)?;
    let (u, s, vh) = (&outs[0], &outs[1], &outs[2]);
    let (m, n) = (u.value.shape()[0], vh.value.shape()[1]);
    let k = s.value.shape()[0];
    let dt = u.value.dtype();
    let cu = cts[0].as_ref().map(|c| to(ctx, c, dt)).transpose()?;
    let cv = cts[2].as_ref().map(|c| to(ctx, c, dt)).transpose()?;
    let g = if !(full_m && m != n) {
        svd_vjp_reduced(
            ctx,
            u,
            s,
            vh,
            [cu.as_ref(), cts[1].as_ref(), cv.as_ref()],
            eps,
        )?
    } else if m > n {
        let u1 = take(ctx, u, 1, 0, k)?;
        let u2 = take(ctx, u, 1, k, m)?;
        let cu1 = match &cu {
            Some(c) => {
                let c1 = take(ctx, c, 1, 0, k)?;
                let c2 = take(ctx, c, 1, k, m)?;
                let t = mhm(ctx, &c2, &u1)?;
                let t = mm(ctx, &u2, &t)?;
                Some(sub(ctx, &c1, &t)?)
            }
            None => None,
        };
        svd_vjp_reduced(
            ctx,
            &u1,
            s,
            vh,
            [cu1.as_ref(), cts[1].as_ref(), cv.as_ref()],
            eps,
        )?
    } else {
        let v1 = take(ctx, vh, 0, 0, k)?;
        let v2 = take(ctx, vh, 0, k, n)?;
        let cv1 = match &cv {
            Some(c) => {
                let c1 = take(ctx, c, 0, 0, k)?;
                let c2 = take(ctx, c, 0, k, n)?;
                // V̄h1 − (Vh1·V̄h2ᴴ)·Vh2.
                let t = mmh(ctx, &v1, &c2)?;
                let t = mm(ctx, &t, &v2)?;
                Some(sub(ctx, &c1, &t)?)
            }
            None => None,
        };
        svd_vjp_reduced(
            ctx,
            u,
            s,
            &v1,
            [cu.as_ref(), cts[1].as_ref(), cv1.as_ref()],
            eps,
        )?
    };
    Ok(vec![Some(fit(ctx, &g, &inputs[0])?)])
}

// ---------------------------------------------------------------------------------------------
// eigh
// ---------------------------------------------------------------------------------------------

fn eigh_eps(op: &Op) -> Result<f64> {
    unpack!(op, Op::Linalg(LinalgOp::Eigh { eps }));
    Ok(*eps)
}

/// JVP of `eigh` (`A = V·diag(w)·Vᴴ`, `A` the Hermitian matrix of the lower triangle):
/// `X = Vᴴ·dA·V`, `dw = Re diag X`, `dV = V·(F∘X)`, `F_ij = 1/(w_j − w_i)` broadened relative
/// to the unit `σ` of `w` ([`Unit`]: `eps·σ`).
/// Sources: Giles 2008, "An extended collection of matrix derivative results"; JAX
/// `_eigh_jvp_rule`.
pub fn eigh_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    _inputs: &[Var],
    outs: &[Var],
    ts: &[Option<Var>],
    wanted: &[bool],
) -> Result<Vec<Option<Var>>> {
    let Some(da) = &ts[0] else {
        return Ok(vec![None; 2]);
    };
    let (w, v) = (&outs[0], &outs[1]);
    let da = to(ctx, da, v.value.dtype())?;
    let dah = herm_from_lower(ctx, &da)?;
    let t = mhm(ctx, v, &dah)?;
    let x = mm(ctx, &t, v)?;
    let dw = if wanted[0] {
        let d = diag(ctx, &x)?;
        Some(re(ctx, &d)?)
    } else {
        None
    };
    let dv = if wanted[1] {
        // F∘X = F̂∘(X/σ), F̂ from ŵ = w/σ ([`Unit`]).
        let unit = Unit::of(ctx, w)?;
        let wh = unit.shrink(ctx, w)?;
        let f = gap_matrix(ctx, &wh, eigh_eps(op)?)?;
        let x = unit.shrink(ctx, &x)?;
        let fx = mul(ctx, &f, &x)?;
        Some(mm(ctx, v, &fx)?)
    } else {
        None
    };
    Ok(vec![dw, dv])
}

/// VJP of `eigh`: `Ā = half_lower(G + Gᴴ)` with `G = V·(diag(w̄) + F∘(Vᴴ·V̄))·Vᴴ` (the
/// adjoint of [`eigh_jvp`], including the read of the lower triangle). Sources as the JVP.
pub fn eigh_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    outs: &[Var],
    cts: &[Option<Var>],
) -> Result<Vec<Option<Var>>> {
    let (w, v) = (&outs[0], &outs[1]);
    let dt = v.value.dtype();
    let mut terms = Vec::new();
    if let Some(wb) = &cts[0] {
        let wb = to(ctx, wb, dt)?;
        terms.push(Some(diag_embed(ctx, &wb)?));
    }
    if let Some(vb) = &cts[1] {
        let vb = to(ctx, vb, dt)?;
        let unit = Unit::of(ctx, w)?;
        let wh = unit.shrink(ctx, w)?;
        let f = gap_matrix(ctx, &wh, eigh_eps(op)?)?;
        let vb = unit.shrink(ctx, &vb)?;
        let y = mhm(ctx, v, &vb)?;
        terms.push(Some(mul(ctx, &f, &y)?));
    }
    let Some(xb) = sum_opt(ctx, terms)? else {
        return Ok(vec![None]);
    };
    let g = mm(ctx, v, &xb)?;
    let g = mmh(ctx, &g, v)?;
    let a = herm_from_lower_adjoint(ctx, &g)?;
    Ok(vec![Some(fit(ctx, &a, &inputs[0])?)])
}

// ---------------------------------------------------------------------------------------------
// svdvals, eigvalsh (values only): the rules recompute the decomposition with vectors through
// `ctx` (so higher orders differentiate `svd`/`eigh` in turn) and take its value component.
// `tf.linalg.svdvals`/`eigvalsh` dispatch `svd`/`eigh` themselves when they record, as PyTorch's
// `linalg_svdvals` computes the vectors only when its input requires grad; these rules serve
// the primitives recorded directly (`tf.prim`).
// ---------------------------------------------------------------------------------------------

const SVD_THIN: Op = Op::Linalg(LinalgOp::Svd {
    full_matrices: false,
    eps: 1e-12,
});
const EIGH: Op = Op::Linalg(LinalgOp::Eigh { eps: 1e-12 });

type MultiJvp =
    fn(&Ctx<'_>, &Op, &[Var], &[Var], &[Option<Var>], &[bool]) -> Result<Vec<Option<Var>>>;
type MultiVjp = fn(&Ctx<'_>, &Op, &[Var], &[Var], &[Option<Var>]) -> Result<Vec<Option<Var>>>;

/// The tangent of output `k` of `full` (recomputed on the input), by `full`'s JVP rule.
fn values_jvp(
    ctx: &Ctx<'_>,
    full: &Op,
    jvp: MultiJvp,
    k: usize,
    inputs: &[Var],
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    if ts[0].is_none() {
        return Ok(None);
    }
    let outs = ctx.apply_multi(full.clone(), &[&inputs[0]])?;
    let wanted: Vec<bool> = (0..outs.len()).map(|i| i == k).collect();
    let mut r = jvp(ctx, full, inputs, &outs, ts, &wanted)?;
    Ok(r.swap_remove(k))
}

/// The input cotangent from a cotangent of output `k` of `full` only, by `full`'s VJP rule.
fn values_vjp(
    ctx: &Ctx<'_>,
    full: &Op,
    vjp: MultiVjp,
    k: usize,
    inputs: &[Var],
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let outs = ctx.apply_multi(full.clone(), &[&inputs[0]])?;
    let cts: Vec<Option<Var>> = (0..outs.len())
        .map(|i| (i == k).then(|| ct.clone()))
        .collect();
    vjp(ctx, full, inputs, &outs, &cts)
}

/// JVP of `svdvals`: the `S` tangent of [`svd_jvp`], `dS = Re diag(Uᴴ·dA·V)`.
pub fn svdvals_jvp(
    ctx: &Ctx<'_>,
    _op: &Op,
    inputs: &[Var],
    _out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    values_jvp(ctx, &SVD_THIN, svd_jvp, 1, inputs, ts)
}

/// VJP of `svdvals`: [`svd_vjp`] with the `S` cotangent only, `Ā = U·diag(s̄)·Vh`.
pub fn svdvals_vjp(
    ctx: &Ctx<'_>,
    _op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    values_vjp(ctx, &SVD_THIN, svd_vjp, 1, inputs, ct)
}

/// JVP of `eigvalsh`: the `w` tangent of [`eigh_jvp`], `dw = Re diag(Vᴴ·dA·V)`.
pub fn eigvalsh_jvp(
    ctx: &Ctx<'_>,
    _op: &Op,
    inputs: &[Var],
    _out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    values_jvp(ctx, &EIGH, eigh_jvp, 0, inputs, ts)
}

/// VJP of `eigvalsh`: [`eigh_vjp`] with the `w` cotangent only, `Ā = V·diag(w̄)·Vᴴ` folded onto
/// the lower triangle.
pub fn eigvalsh_vjp(
    ctx: &Ctx<'_>,
    _op: &Op,
    inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    values_vjp(ctx, &EIGH, eigh_vjp, 0, inputs, ct)
}

// ---------------------------------------------------------------------------------------------
// eig (eigenvalues only)
// ---------------------------------------------------------------------------------------------

/// JVP of `eig` eigenvalues: `dw = diag(V⁻¹·dA·V)` (Giles 2008, section 3.1). Eigenvectors
/// have no rule (as tenferro-rs): asking for their tangent raises `UnsupportedAdRuleError`.
pub fn eig_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    _inputs: &[Var],
    outs: &[Var],
    ts: &[Option<Var>],
    wanted: &[bool],
) -> Result<Vec<Option<Var>>> {
    let Some(da) = &ts[0] else {
        return Ok(vec![None; 2]);
    };
    if wanted[1] {
        return Err(unsupported(
            op,
            "eig eigenvectors (only eigenvalues are differentiable)",
        ));
    }
    let v = &outs[1];
    let da = to(ctx, da, v.value.dtype())?;
    let dav = mm(ctx, &da, v)?;
    let x = solve(ctx, v, &dav)?;
    Ok(vec![Some(diag(ctx, &x)?), None])
}

/// VJP of `eig` eigenvalues: `Ā = V⁻ᴴ·diag(w̄)·Vᴴ` (Giles 2008), real part for real input.
pub fn eig_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    outs: &[Var],
    cts: &[Option<Var>],
) -> Result<Vec<Option<Var>>> {
    if cts[1].is_some() {
        return Err(unsupported(
            op,
            "eig eigenvectors (only eigenvalues are differentiable)",
        ));
    }
    let Some(wb) = &cts[0] else {
        return Ok(vec![None]);
    };
    let v = &outs[1];
    let d = diag_embed(ctx, wb)?;
    let dvh = mmh(ctx, &d, v)?;
    let vh = mh(ctx, v)?;
    let a = solve(ctx, &vh, &dvh)?;
    Ok(vec![Some(fit(ctx, &a, &inputs[0])?)])
}

// ---------------------------------------------------------------------------------------------
// qr
// ---------------------------------------------------------------------------------------------

/// `φ(C) = tril(C, −1) − tril(C, −1)ᴴ + i·Im(diag C)`: the skew-Hermitian `Qᴴ·dQ` of a QR
/// tangent. `φ*` (its adjoint) is `tril(Y, −1) − tril(Yᴴ, −1) + i·Im(diag Y)`.
fn qr_phi(ctx: &Ctx<'_>, c: &Var, adjoint: bool) -> Result<Var> {
    let l = tril(ctx, c, -1)?;
    let lh = if adjoint {
        let ch = mh(ctx, c)?;
        tril(ctx, &ch, -1)?
    } else {
        mh(ctx, &l)?
    };
    let mut o = sub(ctx, &l, &lh)?;
    let dt = c.value.dtype();
    if dt.is_complex() {
        let d = diag(ctx, c)?;
        let i = im(ctx, &d)?;
        let i = times_i(ctx, &i, dt)?;
        let i = diag_embed(ctx, &i)?;
        o = add(ctx, &o, &i)?;
    }
    Ok(o)
}

/// JVP of `qr` for `m ≥ n` (reduced): `B = dA·R⁻¹`, `C = Qᴴ·B`, `Ω = φ(C)`,
/// `dQ = Q·(Ω − C) + B`, `dR = (C − Ω)·R`. Sources: Walter & Lehmann 2018, "Algorithmic
/// differentiation of linear algebra functions with application in optimum experimental
/// design"; JAX `qr_jvp_rule` (including its complex diagonal correction).
fn qr_jvp_tall(ctx: &Ctx<'_>, da: &Var, q: &Var, r: &Var) -> Result<(Var, Var)> {
    let b = trisolve_right(ctx, r, da, false)?;
    let c = mhm(ctx, q, &b)?;
    let om = qr_phi(ctx, &c, false)?;
    let t = sub(ctx, &om, &c)?;
    let t = mm(ctx, q, &t)?;
    let dq = add(ctx, &t, &b)?;
    let t = sub(ctx, &c, &om)?;
    let dr = mm(ctx, &t, r)?;
    Ok((dq, dr))
}

/// VJP of `qr` for `m ≥ n`: the adjoint of [`qr_jvp_tall`]:
/// `C̄ = R̄·Rᴴ − Qᴴ·Q̄`, `C̄' = C̄ − φ*(C̄)`, `Ā = (Q̄ + Q·C̄')·R⁻ᴴ` (cf. PyTorch
/// `linalg_qr_backward`).
fn qr_vjp_tall(ctx: &Ctx<'_>, q: &Var, r: &Var, qb: Option<&Var>, rb: Option<&Var>) -> Result<Var> {
    let t1 = match rb {
        Some(rb) => Some(mmh(ctx, rb, r)?),
        None => None,
    };
    let t2 = match qb {
        Some(qb) => Some(neg(ctx, &mhm(ctx, q, qb)?)?),
        None => None,
    };
    let cb = match sum_opt(ctx, vec![t1, t2])? {
        Some(c) => c,
        None => {
            let n = r.value.shape()[0];
            full(
                ctx,
                0.0,
                q.value.dtype(),
                &[n, n].iter().chain(&batch(q)).copied().collect::<Vec<_>>(),
            )?
        }
    };
    let p = qr_phi(ctx, &cb, true)?;
    let cb = sub(ctx, &cb, &p)?;
    let mut bb = mm(ctx, q, &cb)?;
    if let Some(qb) = qb {
        bb = add(ctx, &bb, qb)?;
    }
    // Ā = B̄·R⁻ᴴ: solve X·Rᴴ = B̄, i.e. R·Xᴴ = B̄ᴴ.
    let bh = mh(ctx, &bb)?;
    let xh = trisolve(ctx, r, &bh, false)?;
    mh(ctx, &xh)
}

fn qr_complete(op: &Op) -> Result<bool> {
    unpack!(op, Op::Linalg(LinalgOp::Qr { complete }));
    Ok(*complete)
}

/// JVP of `qr`; wide inputs (`m < n`) split `A = [X | Y]` with `X` square: `X = Q·R₁` by the
/// rule above and `dR₂ = dQᴴ·Y + Qᴴ·dY` (PyTorch `linalg_qr_jvp`). `mode="complete"` with
/// `m > n` has no rule (the completion of `Q` is not unique), as in JAX.
pub fn qr_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    _inputs: &[Var],
    outs: &[Var],
    ts: &[Option<Var>],
    _wanted: &[bool],
) -> Result<Vec<Option<Var>>> {
    let Some(da) = &ts[0] else {
        return Ok(vec![None; 2]);
    };
    let (q, r) = (&outs[0], &outs[1]);
    let (m, n) = (q.value.shape()[0], r.value.shape()[1]);
    if qr_complete(op)? && m > n {
        return Err(unsupported(
            op,
            "qr with mode=\"complete\" and more rows than columns",
        ));
    }
    let da = to(ctx, da, q.value.dtype())?;
    if m >= n {
        let (dq, dr) = qr_jvp_tall(ctx, &da, q, r)?;
        return Ok(vec![Some(dq), Some(dr)]);
    }
    let dx = take(ctx, &da, 1, 0, m)?;
    let dy = take(ctx, &da, 1, m, n)?;
    let r1 = take(ctx, r, 1, 0, m)?;
    let (dq, dr1) = qr_jvp_tall(ctx, &dx, q, &r1)?;
    // Y = Q·R₂.
    let r2 = take(ctx, r, 1, m, n)?;
    let y = mm(ctx, q, &r2)?;
    let a = mhm(ctx, &dq, &y)?;
    let b = mhm(ctx, q, &dy)?;
    let dr2 = add(ctx, &a, &b)?;
    Ok(vec![Some(dq), Some(concat(ctx, &dr1, &dr2, 1)?)])
}

/// VJP of `qr` (adjoint of [`qr_jvp`]; wide inputs: `Ȳ = Q·R̄₂`, `Q̄ ← Q̄ + Y·R̄₂ᴴ`).
pub fn qr_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    outs: &[Var],
    cts: &[Option<Var>],
) -> Result<Vec<Option<Var>>> {
    let (q, r) = (&outs[0], &outs[1]);
    let (m, n) = (q.value.shape()[0], r.value.shape()[1]);
    if qr_complete(op)? && m > n {
        return Err(unsupported(
            op,
            "qr with mode=\"complete\" and more rows than columns",
        ));
    }
    let dt = q.value.dtype();
    let qb = cts[0].as_ref().map(|c| to(ctx, c, dt)).transpose()?;
    let rb = cts[1].as_ref().map(|c| to(ctx, c, dt)).transpose()?;
    let g = if m >= n {
        qr_vjp_tall(ctx, q, r, qb.as_ref(), rb.as_ref())?
    } else {
        let r1 = take(ctx, r, 1, 0, m)?;
        let r2 = take(ctx, r, 1, m, n)?;
        let (rb1, rb2) = match &rb {
            Some(rb) => (Some(take(ctx, rb, 1, 0, m)?), Some(take(ctx, rb, 1, m, n)?)),
            None => (None, None),
        };
        let (yb, qb) = match &rb2 {
            Some(rb2) => {
                let y = mm(ctx, q, &r2)?;
                let extra = mmh(ctx, &y, rb2)?;
                (Some(mm(ctx, q, rb2)?), add_opt(ctx, qb, Some(extra))?)
            }
            None => (None, qb),
        };
        let xb = qr_vjp_tall(ctx, q, &r1, qb.as_ref(), rb1.as_ref())?;
        let yb = match yb {
            Some(y) => y,
            None => {
                let shape: Vec<usize> = [m, n - m].iter().chain(&batch(q)).copied().collect();
                full(ctx, 0.0, dt, &shape)?
            }
        };
        concat(ctx, &xb, &yb, 1)?
    };
    Ok(vec![Some(fit(ctx, &g, &inputs[0])?)])
}

// ---------------------------------------------------------------------------------------------
// cholesky
// ---------------------------------------------------------------------------------------------

/// JVP of `cholesky` (`A = L·Lᴴ`, `A` from the lower triangle): `dL = L·Φ(L⁻¹·dA·L⁻ᴴ)`,
/// `Φ(X) = tril(X, −1) + ½·diag(X)`. Source: Murray 2016, "Differentiation of the Cholesky
/// decomposition".
pub fn cholesky_jvp(
    ctx: &Ctx<'_>,
    _op: &Op,
    _inputs: &[Var],
    out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    let Some(da) = &ts[0] else {
        return Ok(None);
    };
    let l = out;
    let da = to(ctx, da, l.value.dtype())?;
    let dah = herm_from_lower(ctx, &da)?;
    let y1 = trisolve(ctx, l, &dah, true)?;
    let y1h = mh(ctx, &y1)?;
    let y = trisolve(ctx, l, &y1h, true)?;
    let y = mh(ctx, &y)?;
    let phi = half_lower(ctx, &y)?;
    Ok(Some(mm(ctx, l, &phi)?))
}

/// VJP of `cholesky`: `Ā = half_lower(M + Mᴴ)`, `M = L⁻ᴴ·Φ(Lᴴ·L̄)·L⁻¹` (Murray 2016; the
/// adjoint of [`cholesky_jvp`]).
pub fn cholesky_vjp(
    ctx: &Ctx<'_>,
    _op: &Op,
    inputs: &[Var],
    out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let l = out;
    let ct = to(ctx, ct, l.value.dtype())?;
    let p = mhm(ctx, l, &ct)?;
    let phi = half_lower(ctx, &p)?;
    let lh = mh(ctx, l)?;
    let m1 = trisolve(ctx, &lh, &phi, false)?;
    let m1h = mh(ctx, &m1)?;
    let m = trisolve(ctx, &lh, &m1h, false)?;
    let m = mh(ctx, &m)?;
    let a = herm_from_lower_adjoint(ctx, &m)?;
    Ok(vec![Some(fit(ctx, &a, &inputs[0])?)])
}

// ---------------------------------------------------------------------------------------------
// solve, triangular_solve
// ---------------------------------------------------------------------------------------------

/// JVP of `solve`: `dx = A⁻¹·(db − dA·x)` (Giles 2008).
pub fn solve_jvp(
    ctx: &Ctx<'_>,
    _op: &Op,
    inputs: &[Var],
    out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    let dax = match &ts[0] {
        Some(da) => Some(neg(ctx, &mm(ctx, da, out)?)?),
        None => None,
    };
    let Some(rhs) = add_opt(ctx, ts[1].clone(), dax)? else {
        return Ok(None);
    };
    Ok(Some(solve(ctx, &inputs[0], &rhs)?))
}

/// VJP of `solve`: `b̄ = A⁻ᴴ·x̄`, `Ā = −b̄·xᴴ` (Giles 2008).
pub fn solve_vjp(
    ctx: &Ctx<'_>,
    _op: &Op,
    inputs: &[Var],
    out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let ah = mh(ctx, &inputs[0])?;
    let ct = to(ctx, ct, out.value.dtype())?;
    let bb = solve(ctx, &ah, &ct)?;
    let t = mmh(ctx, &bb, out)?;
    let ab = neg(ctx, &t)?;
    Ok(vec![
        Some(fit(ctx, &ab, &inputs[0])?),
        Some(fit(ctx, &bb, &inputs[1])?),
    ])
}

fn tri_lower(op: &Op) -> Result<bool> {
    unpack!(op, Op::Linalg(LinalgOp::TriangularSolve { lower }));
    Ok(*lower)
}

/// JVP of `triangular_solve`: `dx = tri(A)⁻¹·(db − tri(dA)·x)` (JAX
/// `_triangular_solve_jvp_rule_a`).
pub fn triangular_solve_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    out: &Var,
    ts: &[Option<Var>],
) -> Result<Option<Var>> {
    let lower = tri_lower(op)?;
    let dax = match &ts[0] {
        Some(da) => {
            let t = if lower {
                tril(ctx, da, 0)?
            } else {
                triu(ctx, da, 0)?
            };
            Some(neg(ctx, &mm(ctx, &t, out)?)?)
        }
        None => None,
    };
    let Some(rhs) = add_opt(ctx, ts[1].clone(), dax)? else {
        return Ok(None);
    };
    Ok(Some(trisolve(ctx, &inputs[0], &rhs, lower)?))
}

/// VJP of `triangular_solve`: `b̄ = tri(A)⁻ᴴ·x̄`, `Ā = −tri(b̄·xᴴ)` (JAX
/// `_triangular_solve_transpose_rule`).
pub fn triangular_solve_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    let lower = tri_lower(op)?;
    let ah = mh(ctx, &inputs[0])?;
    let ct = to(ctx, ct, out.value.dtype())?;
    let bb = trisolve(ctx, &ah, &ct, !lower)?;
    let t = mmh(ctx, &bb, out)?;
    let t = if lower {
        tril(ctx, &t, 0)?
    } else {
        triu(ctx, &t, 0)?
    };
    let ab = neg(ctx, &t)?;
    Ok(vec![
        Some(fit(ctx, &ab, &inputs[0])?),
        Some(fit(ctx, &bb, &inputs[1])?),
    ])
}

// ---------------------------------------------------------------------------------------------
// slogdet
// ---------------------------------------------------------------------------------------------

/// `tr(A⁻¹·dA)` per batch item.
fn trace_solve(ctx: &Ctx<'_>, a: &Var, da: &Var) -> Result<Var> {
    let x = solve(ctx, a, da)?;
    let d = diag(ctx, &x)?;
    ctx.apply(
        Op::Reduce {
            op: ReduceOp::Sum,
            axes: vec![0],
        },
        &[&d],
    )
}

/// JVP of `slogdet`: with `c = tr(A⁻¹·dA)`, `d logabsdet = Re c` and `d sign = sign·i·Im c`
/// (complex; zero for real). Source: Giles 2008 (`d det = det·tr(A⁻¹·dA)`).
pub fn slogdet_jvp(
    ctx: &Ctx<'_>,
    _op: &Op,
    inputs: &[Var],
    outs: &[Var],
    ts: &[Option<Var>],
    wanted: &[bool],
) -> Result<Vec<Option<Var>>> {
    let Some(da) = &ts[0] else {
        return Ok(vec![None; 2]);
    };
    let a = &inputs[0];
    let dt = outs[0].value.dtype();
    let da = to(ctx, da, dt)?;
    let c = trace_solve(ctx, a, &da)?;
    let dl = re(ctx, &c)?;
    let ds = if dt.is_complex() && wanted[0] {
        let i = im(ctx, &c)?;
        let i = times_i(ctx, &i, dt)?;
        Some(mul(ctx, &outs[0], &i)?)
    } else {
        None
    };
    Ok(vec![ds, Some(dl)])
}

/// VJP of `slogdet`: `Ā = conj(γ)·A⁻ᴴ` with `γ = l̄ + i·Im(conj(s̄)·sign)` (the adjoint of
/// [`slogdet_jvp`]).
pub fn slogdet_vjp(
    ctx: &Ctx<'_>,
    _op: &Op,
    inputs: &[Var],
    outs: &[Var],
    cts: &[Option<Var>],
) -> Result<Vec<Option<Var>>> {
    let a = &inputs[0];
    let sign = &outs[0];
    let dt = sign.value.dtype();
    let mut g = cts[1].as_ref().map(|l| to(ctx, l, dt)).transpose()?;
    if dt.is_complex() {
        if let Some(sb) = &cts[0] {
            let sb = to(ctx, sb, dt)?;
            let t = mul(ctx, &conj(ctx, &sb)?, sign)?;
            let q = im(ctx, &t)?;
            let q = times_i(ctx, &q, dt)?;
            g = add_opt(ctx, g, Some(q))?;
        }
    }
    let Some(g) = g else {
        return Ok(vec![None]);
    };
    let g = conj(ctx, &g)?;
    let n = a.value.shape()[0];
    let b = batch(a);
    let ah = mh(ctx, a)?;
    let i = eye(ctx, n, &b, dt)?;
    let inv_h = solve(ctx, &ah, &i)?;
    let shape: Vec<usize> = [n, n].iter().chain(&b).copied().collect();
    let dims: Vec<usize> = (2..2 + b.len()).collect();
    let gb = broadcast_in_dim(ctx, &g, &shape, &dims)?;
    let ab = mul(ctx, &gb, &inv_h)?;
    Ok(vec![Some(fit(ctx, &ab, a)?)])
}

// ---------------------------------------------------------------------------------------------
// lu
// ---------------------------------------------------------------------------------------------

/// JVP of `lu` (square): `X = L⁻¹·Pᵀ·dA·U⁻¹`, `dL = L·tril(X, −1)`, `dU = triu(X)·U`, `dP = 0`.
/// Source: PyTorch `linalg_lu_jvp` / `lu_factor_ex_jvp` (`FunctionsManual.cpp`).
pub fn lu_jvp(
    ctx: &Ctx<'_>,
    op: &Op,
    _inputs: &[Var],
    outs: &[Var],
    ts: &[Option<Var>],
    _wanted: &[bool],
) -> Result<Vec<Option<Var>>> {
    let Some(da) = &ts[0] else {
        return Ok(vec![None; 3]);
    };
    let (p, l, u) = (&outs[0], &outs[1], &outs[2]);
    if l.value.shape()[0] != u.value.shape()[1] {
        return Err(unsupported(op, "lu of a non-square matrix"));
    }
    let da = to(ctx, da, l.value.dtype())?;
    let pda = mhm(ctx, p, &da)?;
    let y = trisolve(ctx, l, &pda, true)?;
    let x = trisolve_right(ctx, u, &y, false)?;
    let xl = tril(ctx, &x, -1)?;
    let xu = triu(ctx, &x, 0)?;
    Ok(vec![None, Some(mm(ctx, l, &xl)?), Some(mm(ctx, &xu, u)?)])
}

/// VJP of `lu` (square): `Ā = P·L⁻ᴴ·(tril(Lᴴ·L̄, −1) + triu(Ū·Uᴴ))·U⁻ᴴ` (PyTorch
/// `linalg_lu_backward`).
pub fn lu_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    inputs: &[Var],
    outs: &[Var],
    cts: &[Option<Var>],
) -> Result<Vec<Option<Var>>> {
    let (p, l, u) = (&outs[0], &outs[1], &outs[2]);
    if l.value.shape()[0] != u.value.shape()[1] {
        return Err(unsupported(op, "lu of a non-square matrix"));
    }
    let dt = l.value.dtype();
    let t1 = match &cts[1] {
        Some(lb) => {
            let lb = to(ctx, lb, dt)?;
            Some(tril(ctx, &mhm(ctx, l, &lb)?, -1)?)
        }
        None => None,
    };
    let t2 = match &cts[2] {
        Some(ub) => {
            let ub = to(ctx, ub, dt)?;
            Some(triu(ctx, &mmh(ctx, &ub, u)?, 0)?)
        }
        None => None,
    };
    let Some(xb) = sum_opt(ctx, vec![t1, t2])? else {
        return Ok(vec![None]);
    };
    let lh = mh(ctx, l)?;
    let w = trisolve(ctx, &lh, &xb, false)?;
    // W·U⁻ᴴ = (U⁻¹·Wᴴ)ᴴ.
    let wh = mh(ctx, &w)?;
    let z = trisolve(ctx, u, &wh, false)?;
    let z = mh(ctx, &z)?;
    let a = mm(ctx, p, &z)?;
    Ok(vec![Some(fit(ctx, &a, &inputs[0])?)])
}

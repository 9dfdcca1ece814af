//! Rules of `fft`. Every transform is linear in its operand, so the JVP is the same transform of
//! the tangent ([`super::ops::linear_jvp`]) and the VJP its adjoint under the real inner
//! product `<a, b> = Re Σ conj(a)·b` (`autodiff.md`, the Hermitian convention):
//!
//! - `FFT` (`y = F x`, `F` the unnormalised DFT over the axes): `x̄ = Fᴴ ȳ = N·IFFT(ȳ)`;
//! - `IFFT` (`y = F⁻¹ x = Fᴴ x / N`): `x̄ = F ȳ / N = FFT(ȳ)/N`;
//! - `RFFT` (`y = R x`, `x` real, `R` the first `n/2+1` rows of `F` on the last axis):
//!   `x̄ = Re(Rᴴ ȳ)`. `N·IRFFT(w)` sums each bin of `w` with weight 2 except the zero and Nyquist
//!   ones (the Hermitian-symmetric extension), so `x̄ = N·IRFFT(m ⊙ ȳ)` with `m = 1/2` on those
//!   other bins and 1 on the zero (and, for even `n`, Nyquist) bins of the last axis;
//! - `IRFFT` (`x = Re(Σ_j c_j z_j ω^{jk})/N` with `c_j` those weights 1, 2, …, 2, 1):
//!   `z̄ = (c/N) ⊙ RFFT(x̄)` (its zero and Nyquist bins are real: the imaginary parts the
//!   transform ignores get a zero gradient).
//!
//! JAX's `_rfft_transpose`/`_irfft_transpose` (`jax/_src/lax/fft.py`) are the same maps under
//! its transpose convention (the conjugates of these cotangents).

use super::ops::broadcast_in_dim;
use crate::{Ctx, Var};
use tenferro_ops::{FftConfig, FftType, Op};
use tenferro_tensor::{DType, Result, Tensor};

fn transform(ctx: &Ctx<'_>, c: &FftConfig, t: FftType, x: &Var) -> Result<Var> {
    ctx.apply(
        Op::Fft(FftConfig {
            fft_type: t,
            ..c.clone()
        }),
        &[x],
    )
}

fn scale(ctx: &Ctx<'_>, x: &Var, s: f64) -> Result<Var> {
    if s == 1.0 {
        return Ok(x.clone());
    }
    ctx.apply(Op::ScaleReal(s), &[x])
}

/// `x ⊙ w` with the weights `w` of the last axis's `n/2 + 1` bins: `edge` on the zero bin (and
/// on the Nyquist bin for even `n`), `inner` on the others (`x` complex, the weights real of its
/// precision).
fn weigh_bins(ctx: &Ctx<'_>, c: &FftConfig, x: &Var, edge: f64, inner: f64) -> Result<Var> {
    let k = c.axes.len() - 1;
    let (ax, n) = (c.axes[k], c.lengths[k]);
    let h = n / 2 + 1;
    let w: Vec<f64> = (0..h)
        .map(|j| {
            if j == 0 || (n.is_multiple_of(2) && j == h - 1) {
                edge
            } else {
                inner
            }
        })
        .collect();
    let real = x.value.dtype().to_real();
    let t = match real {
        DType::F32 => Tensor::from_vec(&[h], w.into_iter().map(|v| v as f32).collect()),
        DType::Bool | DType::I32 | DType::I64 | DType::F64 | DType::C32 | DType::C64 => {
            Tensor::from_vec(&[h], w)
        }
    }?;
    let shape = x.value.shape().to_vec();
    let w = broadcast_in_dim(ctx, &Var::constant(t), &shape, &[ax])?;
    ctx.apply(Op::Binary(tenferro_ops::BinaryOp::Mul), &[x, &w])
}

/// VJP of `fft` (the adjoints above).
pub fn fft_vjp(
    ctx: &Ctx<'_>,
    op: &Op,
    _inputs: &[Var],
    _out: &Var,
    ct: &Var,
) -> Result<Vec<Option<Var>>> {
    unpack!(op, Op::Fft(c));
    let n = c.size() as f64;
    let g = match c.fft_type {
        FftType::Fft => scale(ctx, &transform(ctx, c, FftType::Ifft, ct)?, n)?,
        FftType::Ifft => scale(ctx, &transform(ctx, c, FftType::Fft, ct)?, 1.0 / n)?,
        FftType::Rfft => {
            let w = weigh_bins(ctx, c, ct, n, 0.5 * n)?;
            transform(ctx, c, FftType::Irfft, &w)?
        }
        FftType::Irfft => {
            let y = transform(ctx, c, FftType::Rfft, ct)?;
            weigh_bins(ctx, c, &y, 1.0 / n, 2.0 / n)?
        }
    };
    Ok(vec![Some(g)])
}

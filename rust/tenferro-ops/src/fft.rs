//! The `fft` primitive's config and shape/dtype rule (StableHLO `fft`: one op whose
//! `fft_type` is `FFT`, `IFFT`, `RFFT` or `IRFFT`, with `fft_length`), generalised from
//! StableHLO's trailing dimensions to any listed axes.

use crate::config::{check_range, check_unique};
use crate::infer::OutMeta;
use tenferro_tensor::{DType, Error, Result};

/// StableHLO's `FftType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FftType {
    /// Forward complex-to-complex transform, unnormalised: `y_k = Σ_j x_j e^{-2πi jk/n}`.
    Fft,
    /// Inverse complex-to-complex transform, normalised by `1/N` (`N`: the product of the
    /// lengths): `y_k = (1/N) Σ_j x_j e^{+2πi jk/n}`.
    Ifft,
    /// Forward real-to-complex transform: the FFT of a real input, keeping the
    /// `n/2 + 1` non-negative frequencies of the last listed axis.
    Rfft,
    /// Inverse complex-to-real transform, normalised by `1/N`: the input's last listed axis holds
    /// the `n/2 + 1` non-negative frequencies of a Hermitian-symmetric spectrum (the imaginary
    /// parts of the zero frequency, and of the Nyquist frequency for even `n`, are ignored).
    Irfft,
}

impl FftType {
    /// All types.
    pub const ALL: [FftType; 4] = [FftType::Fft, FftType::Ifft, FftType::Rfft, FftType::Irfft];

    /// StableHLO's upper-case name (`"FFT"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            FftType::Fft => "FFT",
            FftType::Ifft => "IFFT",
            FftType::Rfft => "RFFT",
            FftType::Irfft => "IRFFT",
        }
    }

    /// Parse a case-insensitive name.
    pub fn parse(s: &str) -> Option<FftType> {
        FftType::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(s))
    }
}

/// `fft(x, FftConfig)`: a multi-dimensional discrete Fourier transform over `axes`.
///
/// For `RFFT` and `IRFFT` the real-to-complex axis is the **last** entry of `axes`; the other
/// axes get complex transforms (`RFFT`: after the real one; `IRFFT`: before it), as
/// `numpy.fft.rfftn`/`irfftn`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FftConfig {
    /// Which transform.
    pub fft_type: FftType,
    /// The transformed axes (unique, at least one).
    pub axes: Vec<usize>,
    /// The transform length of each axis (`≥ 1`): the input's size there, except for the last
    /// axis of `IRFFT`, whose input holds `lengths[-1]/2 + 1` frequencies and whose output
    /// `lengths[-1]` real values.
    pub lengths: Vec<usize>,
}

impl FftConfig {
    /// `N`, the product of the lengths (the normalisation of the inverse transforms).
    pub fn size(&self) -> usize {
        self.lengths.iter().product()
    }
}

/// Shape and dtype rule of `fft`.
///
/// # Errors
/// [`Error::Axis`] for empty, repeated or out-of-range axes; [`Error::Shape`] for a length
/// count that differs from the axis count, or an input size that does not match a length;
/// [`Error::Value`] for a zero length; [`Error::DType`] for a complex input of `RFFT` or a real
/// one of the others.
pub(crate) fn infer_fft(name: &str, c: &FftConfig, d: DType, s: &[usize]) -> Result<OutMeta> {
    if c.axes.is_empty() {
        return Err(Error::axis(name, "axes must name at least one axis"));
    }
    check_unique(name, "axes", &c.axes)?;
    check_range(name, "axes", &c.axes, s.len())?;
    if c.lengths.len() != c.axes.len() {
        return Err(Error::shape(
            name,
            format!(
                "fft_length {:?} must have one entry per axis of {:?}",
                c.lengths, c.axes
            ),
        ));
    }
    if let Some(i) = c.lengths.iter().position(|&n| n == 0) {
        return Err(Error::value(
            name,
            format!(
                "fft_length {:?} has 0 for axis {}: invalid number of FFT data points",
                c.lengths, c.axes[i]
            ),
        ));
    }
    let want_complex = !matches!(c.fft_type, FftType::Rfft);
    if !d.is_inexact() || d.is_complex() != want_complex {
        return Err(Error::dtype(
            name,
            format!(
                "{} needs a {} operand, got {d}",
                c.fft_type.name(),
                if want_complex {
                    "complex64 or complex128"
                } else {
                    "float32 or float64"
                }
            ),
        ));
    }
    let last = c.axes.len() - 1;
    let mut shape = s.to_vec();
    for (i, (&ax, &n)) in c.axes.iter().zip(&c.lengths).enumerate() {
        let expect = if i == last && c.fft_type == FftType::Irfft {
            n / 2 + 1
        } else {
            n
        };
        if s[ax] != expect {
            return Err(Error::shape(
                name,
                format!(
                    "{} with fft_length {:?} needs size {expect} on axis {ax}, got shape {s:?}",
                    c.fft_type.name(),
                    c.lengths
                ),
            ));
        }
        if i == last {
            shape[ax] = match c.fft_type {
                FftType::Fft | FftType::Ifft => n,
                FftType::Rfft => n / 2 + 1,
                FftType::Irfft => n,
            };
        }
    }
    let dtype = match c.fft_type {
        FftType::Fft | FftType::Ifft => d,
        FftType::Rfft => d.to_complex(),
        FftType::Irfft => d.to_real(),
    };
    Ok(OutMeta {
        dtype,
        shape,
        operand_dtype: d,
    })
}

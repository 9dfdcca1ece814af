"""Differentiable discrete Fourier transforms, as ``numpy.fft`` and the Array API's ``fft``
extension (2024.12) (``tf.fft``).

Every transform lowers to the ``fft`` primitive of the op catalog (StableHLO's ``fft``: type
``FFT``, ``IFFT``, ``RFFT`` or ``IRFFT`` over listed axes with their lengths; kernels on RustFFT
and realfft, the independent 1-D lines split over the engine's workers), after zero padding or
cropping the input to the requested lengths (``pad`` and ``slice`` primitives) and followed by a
``scale_real`` for the ``"ortho"`` and ``"forward"`` normalisations. So everything traces under
``tf.jit`` and differentiates in forward and reverse mode to any order; the derivative rules
(the transforms are linear: the JVP is the same transform, the VJP its adjoint, with the
Hermitian-symmetric weights of the real transforms) are documented in ``tenferro-ad``
(``rules/fft.rs``), following the Hermitian convention of ``docs/autodiff.md``.

Dtypes follow NumPy 2: ``fft``, ``ifft``, ``fftn``, ``ifftn``, ``irfft*``, ``hfft`` take any
numeric input (bool and integers become float64; real input is made complex); ``rfft*`` and
``ihfft`` take real input (a complex one is a :class:`tenferro.errors.DTypeError`). Complex
results are complex64 for float32/complex64 input and complex128 otherwise; ``irfft*`` and
``hfft`` return the matching real dtype.

``n``/``s`` crop or zero-pad the input along each transformed axis (for ``irfft*``/``hfft`` the
input holds ``n//2 + 1`` frequencies of the last axis; ``n`` defaults to ``2·(m − 1)``). A
length below 1 is a ``ValueError`` naming the function and the length, as NumPy's.

``norm``: ``"backward"`` (default; ``None`` is the same) scales the inverse transforms by
``1/n``, ``"ortho"`` both directions by ``1/sqrt(n)``, ``"forward"`` the forward transforms by
``1/n`` (``n``: the product of the transform lengths).

Examples
--------
>>> import tenferro as tf
>>> tf.fft.fft(tf.asarray([1.0, 0.0, 0.0, 0.0])).tolist()
[(1+0j), (1+0j), (1+0j), (1+0j)]
>>> tf.fft.irfft(tf.fft.rfft(tf.asarray([1.0, 2.0, 3.0]))).tolist()  # doctest: +SKIP
[1.0, 2.0, 3.0]
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import prim as _p
from ._numpy_api._common import _as_tensor, _normalize_axes
from ._numpy_api.arranging import roll as _roll
from ._tenferro import Tensor
from ._types import PadConfig, SliceConfig
from .errors import DTypeError

__all__ = [
    "fft",
    "ifft",
    "fftn",
    "ifftn",
    "rfft",
    "irfft",
    "rfftn",
    "irfftn",
    "hfft",
    "ihfft",
    "fft2",
    "ifft2",
    "rfft2",
    "irfft2",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]

ArrayLike = Any

_C64 = np.dtype(np.complex64)
_C128 = np.dtype(np.complex128)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)

# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _norm(op: str, norm: Any) -> str:
    if norm is None:
        return "backward"
    if norm not in ("backward", "ortho", "forward"):
        raise ValueError(
            f'fft.{op}: invalid norm value {norm!r}; should be "backward", "ortho" or "forward"'
        )
    return norm


def _complex_input(op: str, x: ArrayLike) -> Tensor:
    """``x`` as a complex tensor: complex64 for float32/complex64, complex128 otherwise."""
    t = _as_tensor(x)
    k = t.dtype
    if k == _C64 or k == _C128:
        return t
    target = _C64 if k == _F32 else _C128
    return _p.convert(t, target)


def _real_input(op: str, x: ArrayLike) -> Tensor:
    """``x`` as a real float tensor (bool and integers become float64)."""
    t = _as_tensor(x)
    if t.dtype.kind == "c":
        raise DTypeError(f"fft.{op}: expected a real input, got {t.dtype}")
    if t.dtype.kind in "biu":
        t = _p.convert(t, _F64)
    return t


def _length(op: str, what: str, v: Any) -> int:
    try:
        n = operator.index(v)
    except TypeError:
        raise TypeError(f"fft.{op}: {what} must be an integer, got {v!r}") from None
    if n < 1:
        raise ValueError(f"fft.{op}: invalid number of data points ({n}) specified for {what}")
    return n


def _resize(x: Tensor, axis: int, size: int) -> Tensor:
    """Crop or zero-pad ``x`` at the end of ``axis`` to ``size``."""
    cur = x.shape[axis]
    if cur == size:
        return x
    nd = x.ndim
    if cur > size:
        limits = list(x.shape)
        limits[axis] = size
        return _p.slice(x, SliceConfig(starts=(0,) * nd, limits=tuple(limits), strides=(1,) * nd))
    high = [0] * nd
    high[axis] = size - cur
    return _p.pad(
        x,
        PadConfig(
            edge_padding_low=(0,) * nd, edge_padding_high=tuple(high), interior_padding=(0,) * nd
        ),
    )


def _scale(x: Tensor, factor: float) -> Tensor:
    return x if factor == 1.0 else _p.scale_real(x, factor)


def _factor(norm: str, n: int, inverse: bool) -> float:
    """The scale applied after the primitive (whose inverse transforms divide by ``n``)."""
    if norm == "backward":
        return 1.0
    if norm == "ortho":
        return math.sqrt(n) if inverse else 1.0 / math.sqrt(n)
    return float(n) if inverse else 1.0 / n


def _axes_and_lengths(
    op: str, x: Tensor, s: Any, axes: Any, *, inverse_real: bool = False
) -> tuple[list[int], list[int]]:
    """NumPy 2's rules for ``s`` and ``axes`` of the n-dimensional transforms: ``axes=None`` means
    every axis (the last ``len(s)`` ones when ``s`` is given); ``s=None`` the input's sizes (for
    ``irfftn`` the last one is ``2·(m − 1)``); an entry ``-1`` of ``s`` keeps the input's size (also on the real axis of
    ``irfftn``, as NumPy)."""
    nd = x.ndim
    if s is not None:
        s = [operator.index(v) for v in s]
    if axes is None:
        ax = list(range(nd)) if s is None else list(range(nd - len(s), nd))
        if s is not None and len(s) > nd:
            raise ValueError(f"fft.{op}: s {tuple(s)} has more entries than the input's {nd} axes")
    else:
        if isinstance(axes, int):
            axes = (axes,)
        raw = [operator.index(a) for a in axes]
        ax = [a for a in _normalize_axes(f"fft.{op}", tuple(raw), nd, allow_duplicates=True)]
    if s is None:
        lengths = [x.shape[a] for a in ax]
        if inverse_real and ax:
            lengths[-1] = 2 * (x.shape[ax[-1]] - 1)
    else:
        if len(s) != len(ax):
            raise ValueError(
                f"fft.{op}: s {tuple(s)} and axes {tuple(ax)} must have the same length"
            )
        lengths = []
        for v, a in zip(s, ax):
            if v == -1:
                v = x.shape[a]  # NumPy: -1 is the input size, also on the real axis
            lengths.append(v)
    for v in lengths:
        _length(op, "the transform length", v)
    return ax, lengths


def _c2c(op: str, x: Tensor, ax: list[int], lengths: list[int], norm: str, inverse: bool) -> Tensor:
    if not ax:
        return x
    if len(set(ax)) != len(ax):
        # A repeated axis transforms again (NumPy's one-axis-at-a-time loop, last axis first).
        for a, n in reversed(list(zip(ax, lengths))):
            x = _c2c(op, x, [a], [n], norm, inverse)
        return x
    for a, n in zip(ax, lengths):
        x = _resize(x, a, n)
    y = _p.fft(x, "IFFT" if inverse else "FFT", tuple(lengths), tuple(ax))
    return _scale(y, _factor(norm, math.prod(lengths), inverse))


def _r2c(op: str, x: Tensor, ax: list[int], lengths: list[int], norm: str) -> Tensor:
    if len(set(ax)) != len(ax):
        y = _r2c(op, x, ax[-1:], lengths[-1:], norm)
        return _c2c(op, y, ax[:-1], lengths[:-1], norm, False)
    for a, n in zip(ax, lengths):
        x = _resize(x, a, n)
    y = _p.fft(x, "RFFT", tuple(lengths), tuple(ax))
    return _scale(y, _factor(norm, math.prod(lengths), False))


def _c2r(op: str, x: Tensor, ax: list[int], lengths: list[int], norm: str) -> Tensor:
    if len(set(ax)) != len(ax):
        y = _c2c(op, x, ax[:-1], lengths[:-1], norm, True)
        return _c2r(op, y, ax[-1:], lengths[-1:], norm)
    for i, (a, n) in enumerate(zip(ax, lengths)):
        x = _resize(x, a, n // 2 + 1 if i == len(ax) - 1 else n)
    y = _p.fft(x, "IRFFT", tuple(lengths), tuple(ax))
    return _scale(y, _factor(norm, math.prod(lengths), True))


def _one_axis(
    op: str, x: Tensor, n: Any, axis: Any, *, inverse_real: bool = False
) -> tuple[list[int], list[int]]:
    a = _normalize_axes(f"fft.{op}", operator.index(axis), x.ndim)[0]
    if n is None:
        m = x.shape[a]
        n = 2 * (m - 1) if inverse_real else m
    return [a], [_length(op, "n", n)]


# ---------------------------------------------------------------------------------------------
# one-dimensional transforms
# ---------------------------------------------------------------------------------------------


def fft(x: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Tensor:
    """One-dimensional discrete Fourier transform, as ``numpy.fft.fft``:
    ``y_k = Σ_j x_j·exp(-2πi·jk/n)``.

    Parameters
    ----------
    x : Tensor or array_like
        Any numeric dtype (real input is made complex: complex64 for float32, else complex128).
    n : int, optional
        Transform length: the input is cropped or zero-padded along ``axis`` to ``n``.
    axis : int
        The transformed axis (default the last).
    norm : {"backward", "ortho", "forward"} or None

    Returns
    -------
    Tensor
        ``x``'s shape with ``n`` along ``axis``; complex64 or complex128.

    Raises
    ------
    ValueError
        ``n < 1`` (also when ``axis`` has size 0 and ``n`` is not given), or an unknown ``norm``.
    AxisError
        ``axis`` out of range.
    """
    t = _complex_input("fft", x)
    ax, ls = _one_axis("fft", t, n, axis)
    return _c2c("fft", t, ax, ls, _norm("fft", norm), False)


def ifft(x: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Tensor:
    """One-dimensional inverse discrete Fourier transform, as ``numpy.fft.ifft``:
    ``y_k = (1/n)·Σ_j x_j·exp(2πi·jk/n)`` (``norm="backward"``). Shapes, dtypes and errors as
    :func:`fft`."""
    t = _complex_input("ifft", x)
    ax, ls = _one_axis("ifft", t, n, axis)
    return _c2c("ifft", t, ax, ls, _norm("ifft", norm), True)


def rfft(x: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Tensor:
    """Discrete Fourier transform of a real input, as ``numpy.fft.rfft``: the ``n//2 + 1``
    non-negative frequency terms of :func:`fft`.

    Parameters
    ----------
    x : Tensor or array_like
        Real (bool and integers become float64).
    n, axis, norm
        As :func:`fft`.

    Returns
    -------
    Tensor
        ``x``'s shape with ``n//2 + 1`` along ``axis``; complex64 for float32, else complex128.

    Raises
    ------
    DTypeError
        A complex input.
    ValueError, AxisError
        As :func:`fft`.
    """
    t = _real_input("rfft", x)
    ax, ls = _one_axis("rfft", t, n, axis)
    return _r2c("rfft", t, ax, ls, _norm("rfft", norm))


def irfft(x: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Tensor:
    """Inverse of :func:`rfft`, as ``numpy.fft.irfft``: the real signal of length ``n`` whose
    spectrum's non-negative frequencies are ``x`` (Hermitian symmetry; the imaginary parts of the
    zero frequency, and of the Nyquist frequency for even ``n``, are ignored).

    Parameters
    ----------
    x : Tensor or array_like
        Any numeric dtype (made complex).
    n : int, optional
        Output length (default ``2·(m − 1)``, ``m`` the input's size along ``axis``); the input is
        cropped or zero-padded to ``n//2 + 1`` frequencies.
    axis, norm
        As :func:`fft`.

    Returns
    -------
    Tensor
        ``x``'s shape with ``n`` along ``axis``; float32 for complex64 input, else float64.

    Raises
    ------
    ValueError
        ``n < 1`` (also ``m == 1`` without ``n``), or an unknown ``norm``.
    """
    t = _complex_input("irfft", x)
    ax, ls = _one_axis("irfft", t, n, axis, inverse_real=True)
    return _c2r("irfft", t, ax, ls, _norm("irfft", norm))


_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def hfft(x: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Tensor:
    """Transform of a Hermitian-symmetric signal given by its first half, as ``numpy.fft.hfft``:
    ``irfft(conj(x), n)`` with the normalisation of a forward transform (real output).

    Shapes and errors as :func:`irfft`; the output is float32 for complex64/float32 input, else
    float64.
    """
    nm = _norm("hfft", norm)
    t = _complex_input("hfft", x)
    t = _p.conj(t)
    ax, ls = _one_axis("hfft", t, n, axis, inverse_real=True)
    return _c2r("hfft", t, ax, ls, _SWAP[nm])


def ihfft(x: ArrayLike, n: int | None = None, axis: int = -1, norm: str | None = None) -> Tensor:
    """Inverse of :func:`hfft`, as ``numpy.fft.ihfft``: ``conj(rfft(x, n))`` with the
    normalisation of an inverse transform.

    Shapes, dtypes and errors as :func:`rfft`.
    """
    nm = _norm("ihfft", norm)
    t = _real_input("ihfft", x)
    ax, ls = _one_axis("ihfft", t, n, axis)
    return _p.conj(_r2c("ihfft", t, ax, ls, _SWAP[nm]))


# ---------------------------------------------------------------------------------------------
# n-dimensional transforms
# ---------------------------------------------------------------------------------------------


def fftn(
    x: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Tensor:
    """N-dimensional discrete Fourier transform over ``axes``, as ``numpy.fft.fftn``.

    Parameters
    ----------
    x : Tensor or array_like
        Any numeric dtype (made complex).
    s : sequence of int, optional
        Transform length per axis (crop or zero-pad; ``-1`` keeps the input's size).
    axes : sequence of int, optional
        Default: every axis, or the last ``len(s)`` when ``s`` is given. A repeated axis is
        transformed again (NumPy's behaviour).
    norm : {"backward", "ortho", "forward"} or None
        ``n`` is the product of the lengths.

    Returns
    -------
    Tensor
        ``x``'s shape with ``s[i]`` along ``axes[i]``; complex64 or complex128.

    Raises
    ------
    ValueError
        ``s`` and ``axes`` of different lengths, a length below 1, or an unknown ``norm``.
    AxisError
        An axis out of range.
    """
    t = _complex_input("fftn", x)
    ax, ls = _axes_and_lengths("fftn", t, s, axes)
    return _c2c("fftn", t, ax, ls, _norm("fftn", norm), False)


def ifftn(
    x: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Tensor:
    """N-dimensional inverse discrete Fourier transform, as ``numpy.fft.ifftn``; parameters and
    errors as :func:`fftn`."""
    t = _complex_input("ifftn", x)
    ax, ls = _axes_and_lengths("ifftn", t, s, axes)
    return _c2c("ifftn", t, ax, ls, _norm("ifftn", norm), True)


def rfftn(
    x: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Tensor:
    """N-dimensional transform of a real input, as ``numpy.fft.rfftn``: :func:`rfft` over the
    last of ``axes`` (``s[-1]//2 + 1`` frequencies), then :func:`fft` over the others.

    Raises :class:`DTypeError` for complex input; otherwise as :func:`fftn`.
    """
    t = _real_input("rfftn", x)
    ax, ls = _axes_and_lengths("rfftn", t, s, axes)
    if not ax:
        return _complex_input("rfftn", t)
    return _r2c("rfftn", t, ax, ls, _norm("rfftn", norm))


def irfftn(
    x: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Tensor:
    """Inverse of :func:`rfftn`, as ``numpy.fft.irfftn``: :func:`ifft` over all of ``axes`` but
    the last, then :func:`irfft` over the last (output length ``s[-1]``, default
    ``2·(m − 1)``). Real output (float32 for complex64 input, else float64); errors as
    :func:`fftn`."""
    t = _complex_input("irfftn", x)
    ax, ls = _axes_and_lengths("irfftn", t, s, axes, inverse_real=True)
    if not ax:
        return _p.cast(t, _F32 if t.dtype == _C64 else _F64)
    return _c2r("irfftn", t, ax, ls, _norm("irfftn", norm))


def fft2(
    x: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] = (-2, -1),
    norm: str | None = None,
) -> Tensor:
    """Two-dimensional transform, as ``numpy.fft.fft2``: :func:`fftn` over ``axes``."""
    return fftn(x, s, axes, norm)


def ifft2(
    x: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] = (-2, -1),
    norm: str | None = None,
) -> Tensor:
    """Two-dimensional inverse transform, as ``numpy.fft.ifft2``: :func:`ifftn` over ``axes``."""
    return ifftn(x, s, axes, norm)


def rfft2(
    x: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] = (-2, -1),
    norm: str | None = None,
) -> Tensor:
    """Two-dimensional real transform, as ``numpy.fft.rfft2``: :func:`rfftn` over ``axes``."""
    return rfftn(x, s, axes, norm)


def irfft2(
    x: ArrayLike,
    s: Sequence[int] | None = None,
    axes: Sequence[int] = (-2, -1),
    norm: str | None = None,
) -> Tensor:
    """Inverse of :func:`rfft2`, as ``numpy.fft.irfft2``: :func:`irfftn` over ``axes``."""
    return irfftn(x, s, axes, norm)


# ---------------------------------------------------------------------------------------------
# helpers: frequencies and shifts
# ---------------------------------------------------------------------------------------------


def _freq_dtype(op: str, dtype: Any) -> np.dtype:
    if dtype is None:
        return _F64
    d = np.dtype(dtype)
    if d not in (_F32, _F64):
        raise DTypeError(f"fft.{op}: dtype must be a real floating-point dtype, got {d}")
    return d


def _check_device(op: str, device: Any) -> None:
    if device is not None and device != "cpu":
        raise ValueError(f"fft.{op}: unsupported device {device!r} (tenferro's devices: ['cpu'])")


def fftfreq(n: int, /, d: float = 1.0, *, dtype: Any = None, device: Any = None) -> Tensor:
    """Sample frequencies of :func:`fft`, as ``numpy.fft.fftfreq``:
    ``[0, 1, …, ⌈n/2⌉ − 1, −⌊n/2⌋, …, −1] / (d·n)``.

    Parameters
    ----------
    n : int
        Window length (≥ 1).
    d : float
        Sample spacing.
    dtype : float32 or float64, optional
        Default float64.
    device : "cpu" or None

    Returns
    -------
    Tensor
        Shape ``(n,)``, an untracked constant.

    Raises
    ------
    ValueError
        ``n < 1`` or another device.
    DTypeError
        A dtype that is not a real float.
    """
    _check_device("fftfreq", device)
    dt = _freq_dtype("fftfreq", dtype)
    n = _length("fftfreq", "n", n)
    from ._factories import asarray

    return asarray(np.fft.fftfreq(n, d).astype(dt))


def rfftfreq(n: int, /, d: float = 1.0, *, dtype: Any = None, device: Any = None) -> Tensor:
    """Sample frequencies of :func:`rfft`, as ``numpy.fft.rfftfreq``:
    ``[0, 1, …, ⌊n/2⌋] / (d·n)`` (shape ``(n//2 + 1,)``); parameters and errors as
    :func:`fftfreq`."""
    _check_device("rfftfreq", device)
    dt = _freq_dtype("rfftfreq", dtype)
    n = _length("rfftfreq", "n", n)
    from ._factories import asarray

    return asarray(np.fft.rfftfreq(n, d).astype(dt))


def _shift(op: str, x: ArrayLike, axes: Any, sign: int) -> Tensor:
    t = _as_tensor(x)
    if axes is None:
        ax = tuple(range(t.ndim))
    else:
        ax = _normalize_axes(f"fft.{op}", axes, t.ndim, allow_duplicates=True)
    if not ax:
        return t
    shifts = tuple(sign * (t.shape[a] // 2) for a in ax)
    return _roll(t, shifts, ax)


def fftshift(x: ArrayLike, axes: Any = None) -> Tensor:
    """Move the zero frequency to the centre, as ``numpy.fft.fftshift`` (a roll by ``n//2``
    along each of ``axes``; default every axis). Same shape and dtype; ``AxisError`` for an axis
    out of range."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x: ArrayLike, axes: Any = None) -> Tensor:
    """Inverse of :func:`fftshift`, as ``numpy.fft.ifftshift`` (a roll by ``-(n//2)``)."""
    return _shift("ifftshift", x, axes, -1)

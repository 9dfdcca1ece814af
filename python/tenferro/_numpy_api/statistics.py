"""Statistics over axes composed from reductions: ``var``, ``std`` and ``count_nonzero``."""

from __future__ import annotations

import builtins as _b
import math
from typing import Any

import numpy as np

from .. import prim as _p
from .._tenferro import Tensor
from ._common import ArrayLike, _BOOL, _F64, _I64, _REAL_OF, _as_tensor, _normalize_axes, _to_dtype
from .reductions import _reduce

__all__ = [
    "count_nonzero",
    "std",
    "var",
]


def _correction(op: str, ddof: Any, correction: Any) -> float:
    if correction is not None:
        if ddof != 0:
            raise ValueError(f"{op}: ddof and correction can't be provided simultaneously")
        ddof = correction
    if isinstance(ddof, Tensor):
        raise TypeError(f"{op}: ddof/correction must be a Python number, got a tensor")
    return float(ddof)


def var(
    a: ArrayLike,
    axis: Any = None,
    dtype: Any = None,
    ddof: float = 0,
    *,
    keepdims: bool = False,
    correction: float | None = None,
) -> Tensor:
    """Variance over the given axes, as ``numpy.var`` (and the Array API's ``var``):
    ``sum(|x - mean(x)|**2) / max(N - ddof, 0)``.

    Composed from ``prim.reduce_sum`` (pairwise), ``prim.sub``, ``prim.mul`` and, for complex
    inputs, ``prim.conj`` (the squared modulus ``(x - m) * conj(x - m)``, whose real part is
    kept); differentiable. With ``N - ddof <= 0`` the result is ``inf`` or NaN (NumPy also
    warns).

    Parameters
    ----------
    a : Tensor or array_like
    axis : None, int or tuple of int
        Axes to reduce; ``None`` reduces all.
    dtype : dtype, optional
        Computation dtype (booleans and integers default to float64).
    ddof : float
        Delta degrees of freedom: the divisor is ``N - ddof``.
    keepdims : bool
    correction : float, optional
        The Array API's name for ``ddof`` (giving both is a ``ValueError``, as NumPy).

    Returns
    -------
    Tensor
        Real: float64 for bool/int, float32 for float32/complex64, float64 for complex128.

    Raises
    ------
    AxisError
        If an axis is out of range or repeated.
    ValueError
        If both ``ddof`` and ``correction`` are given.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1.0, 2.0], [3.0, 5.0]])
    >>> tf.var(x).item(), tf.var(x, axis=0, ddof=1).tolist()
    (2.1875, [2.0, 4.5])
    """
    dd = _correction("var", ddof, correction)
    x = _as_tensor(a)
    if dtype is not None:
        x = _to_dtype(x, dtype)
    if x.dtype.kind in "biu":
        x = _p.convert(x, _F64)
    axes = _normalize_axes("var", axis, x.ndim)
    n = math.prod(x.shape[i] for i in axes)
    mean = _p.div(
        _reduce("var", _p.reduce_sum, x, axes, True), float(n)
    )  # 0/0 = NaN for no elements
    d = _p.sub(x, mean)
    if x.dtype.kind == "c":
        sq = _p.cast(_p.mul(d, _p.conj(d)), _REAL_OF[x.dtype])
    else:
        sq = _p.mul(d, d)
    total = _reduce("var", _p.reduce_sum, sq, axes, keepdims)
    return _p.div(total, float(_b.max(n - dd, 0)))


def std(
    a: ArrayLike,
    axis: Any = None,
    dtype: Any = None,
    ddof: float = 0,
    *,
    keepdims: bool = False,
    correction: float | None = None,
) -> Tensor:
    """Standard deviation over the given axes, as ``numpy.std``: ``sqrt(var(a, ...))`` (see
    :func:`var` for the parameters, dtypes and errors).

    The derivative is that of ``sqrt``: infinite where the variance is 0.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.std(tf.asarray([1.0, 3.0])).item()
    1.0
    """
    return _p.sqrt(var(a, axis, dtype, ddof, keepdims=keepdims, correction=correction))


def count_nonzero(a: ArrayLike, axis: Any = None, *, keepdims: bool = False) -> Tensor:
    """Number of nonzero (true) elements over the given axes, as ``numpy.count_nonzero``.

    Lowers to ``prim.compare(a, 0, "NE")`` and an int64 ``prim.reduce_sum``. NaN counts as
    nonzero; a complex element is nonzero when either part is.

    Parameters
    ----------
    a : Tensor or array_like
    axis : None, int or tuple of int
    keepdims : bool

    Returns
    -------
    Tensor
        int64 (0-d for ``axis=None``; NumPy returns a Python-int-like scalar there).

    Raises
    ------
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[0, 1, 7], [0, 0, 3]])
    >>> tf.count_nonzero(x).item(), tf.count_nonzero(x, axis=1).tolist()
    (3, [2, 1])
    """
    x = _as_tensor(a)
    nz = x if x.dtype == _BOOL else _p.compare(x, np.zeros((), x.dtype).item(), "NE")
    return _reduce("count_nonzero", _p.reduce_sum, _p.convert(nz, _I64), axis, keepdims)

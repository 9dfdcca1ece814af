"""NumPy reductions over axes: ``sum``, ``prod``, ``max``/``min``, ``mean``, ``any``/``all``
(NumPy 2 accumulator dtypes, ``keepdims``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import prim as _p
from .._tenferro import Tensor
from ._common import ArrayLike, _BOOL, _F64, _I64, _as_tensor, _normalize_axes, _to_dtype

__all__ = [
    "all",
    "amax",
    "amin",
    "any",
    "max",
    "mean",
    "min",
    "prod",
    "sum",
]


def _keepdims(out: Tensor, in_shape: tuple[int, ...], axes: tuple[int, ...]) -> Tensor:
    """Re-insert the reduced ``axes`` with length 1 (only size-1 axes move, so the order of the
    column-major reshape does not matter)."""
    shape = tuple(1 if i in axes else s for i, s in enumerate(in_shape))
    return out if tuple(out.shape) == shape else _p.reshape(out, shape)


def _reduce(op: str, prim_fn: Callable, x: Tensor, axis: Any, keepdims: bool) -> Tensor:
    axes = _normalize_axes(op, axis, x.ndim)
    out = prim_fn(x, axes)
    return _keepdims(out, tuple(x.shape), axes) if keepdims else out


def _sum_like(
    op: str, prim_fn: Callable, a: ArrayLike, axis: Any, dtype: Any, keepdims: bool
) -> Tensor:
    x = _as_tensor(a)
    if dtype is not None:
        x = _to_dtype(x, dtype)
    elif x.dtype.kind == "b" or x.dtype == np.int32:
        x = _p.convert(x, _I64)  # NumPy 2 accumulates small ints and bools in int64
    return _reduce(op, prim_fn, x, axis, keepdims)


def sum(a: ArrayLike, axis: Any = None, dtype: Any = None, *, keepdims: bool = False) -> Tensor:
    """Sum of the elements over the given axes, as ``numpy.sum``.

    Lowers to the primitive ``prim.reduce_sum`` (pairwise summation for floats, NumPy accuracy).
    Booleans and int32 are converted to int64 first, as NumPy 2 accumulates them in the default
    integer; other dtypes are kept.

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape.
    axis : None, int or tuple of int
        Axes to reduce (negative counts from the end); ``None`` reduces all, ``()`` none.
    dtype : dtype, optional
        Accumulator and result dtype; ``a`` is converted to it first (unsafe cast if needed).
    keepdims : bool
        Keep the reduced axes with length 1, so the result broadcasts against ``a``.

    Returns
    -------
    Tensor
        ``a.shape`` without the reduced axes (or with them as 1); dtype as described above. A
        full reduction is a 0-d tensor (``.item()`` gives the Python number).

    Raises
    ------
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1, 2, 3], [4, 5, 6]], dtype="int32")
    >>> tf.sum(x).item(), tf.sum(x).dtype
    (21, dtype('int64'))
    >>> tf.sum(x, axis=0).tolist()
    [5, 7, 9]
    >>> tf.sum(x, axis=1, keepdims=True).tolist()
    [[6], [15]]
    """
    return _sum_like("sum", _p.reduce_sum, a, axis, dtype, keepdims)


def prod(a: ArrayLike, axis: Any = None, dtype: Any = None, *, keepdims: bool = False) -> Tensor:
    """Product of the elements over the given axes, as ``numpy.prod``.

    Lowers to the primitive ``prim.reduce_prod``; booleans and int32 are converted to int64
    first (NumPy 2); integer products wrap on overflow. The product over no elements is 1.

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape.
    axis : None, int or tuple of int
        Axes to reduce; ``None`` reduces all.
    dtype : dtype, optional
        Accumulator and result dtype.
    keepdims : bool
        Keep the reduced axes with length 1.

    Returns
    -------
    Tensor
        ``a.shape`` without (or with length-1) reduced axes.

    Raises
    ------
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1.0, 2.0], [3.0, 4.0]])
    >>> tf.prod(x).item()
    24.0
    >>> tf.prod(x, axis=1).tolist()
    [2.0, 12.0]
    """
    return _sum_like("prod", _p.reduce_prod, a, axis, dtype, keepdims)


def max(a: ArrayLike, axis: Any = None, *, keepdims: bool = False) -> Tensor:
    """Maximum over the given axes, as ``numpy.max`` (NaN propagates).

    Lowers to the primitive ``prim.reduce_max``; the dtype is kept.

    Parameters
    ----------
    a : Tensor or array_like
        Real input of any shape.
    axis : None, int or tuple of int
        Axes to reduce; ``None`` reduces all.
    keepdims : bool
        Keep the reduced axes with length 1.

    Returns
    -------
    Tensor
        ``a.shape`` without (or with length-1) reduced axes; dtype ``a.dtype``.

    Raises
    ------
    ValueError
        If a reduced axis has length 0 (no identity, as NumPy).
    AxisError
        If an axis is out of range or repeated.
    DTypeError
        For complex inputs.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1.0, 5.0], [3.0, 2.0]])
    >>> tf.max(x).item(), tf.max(x, axis=0).tolist()
    (5.0, [3.0, 5.0])
    """
    return _reduce("max", _p.reduce_max, _as_tensor(a), axis, keepdims)


def min(a: ArrayLike, axis: Any = None, *, keepdims: bool = False) -> Tensor:
    """Minimum over the given axes, as ``numpy.min`` (NaN propagates).

    Lowers to the primitive ``prim.reduce_min``; the dtype is kept.

    Parameters
    ----------
    a : Tensor or array_like
        Real input of any shape.
    axis : None, int or tuple of int
        Axes to reduce; ``None`` reduces all.
    keepdims : bool
        Keep the reduced axes with length 1.

    Returns
    -------
    Tensor
        ``a.shape`` without (or with length-1) reduced axes; dtype ``a.dtype``.

    Raises
    ------
    ValueError
        If a reduced axis has length 0.
    AxisError
        If an axis is out of range or repeated.
    DTypeError
        For complex inputs.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1.0, 5.0], [3.0, 2.0]])
    >>> tf.min(x).item(), tf.min(x, axis=1, keepdims=True).tolist()
    (1.0, [[1.0], [2.0]])
    """
    return _reduce("min", _p.reduce_min, _as_tensor(a), axis, keepdims)


amax = max


amin = min


def mean(a: ArrayLike, axis: Any = None, dtype: Any = None, *, keepdims: bool = False) -> Tensor:
    """Arithmetic mean over the given axes, as ``numpy.mean``: ``sum(a, axis) / count``.

    Booleans and integers are averaged in float64; float and complex dtypes are kept. The mean
    over no elements is NaN (``0/0``; NumPy also warns).

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape.
    axis : None, int or tuple of int
        Axes to reduce; ``None`` reduces all.
    dtype : dtype, optional
        Accumulator and result dtype. An integer dtype truncates the mean toward zero, as NumPy.
    keepdims : bool
        Keep the reduced axes with length 1.

    Returns
    -------
    Tensor
        ``a.shape`` without (or with length-1) reduced axes.

    Raises
    ------
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1, 2], [3, 4]])
    >>> tf.mean(x).item()
    2.5
    >>> tf.mean(x, axis=0).tolist()
    [2.0, 3.0]
    """
    x = _as_tensor(a)
    out_dtype = None if dtype is None else np.dtype(dtype)
    if out_dtype is not None:
        x = _to_dtype(x, out_dtype)  # NumPy casts the elements to the accumulator dtype
    if x.dtype.kind in "biu":
        x = _p.convert(x, _F64)
    axes = _normalize_axes("mean", axis, x.ndim)
    count = math.prod(x.shape[i] for i in axes)
    out = _p.div(_reduce("mean", _p.reduce_sum, x, axes, keepdims), count)
    if out_dtype is not None and out_dtype.kind in "biu":
        out = _p.cast(out, out_dtype)  # truncates toward zero, as NumPy's unsafe cast back
    return out


def _count_nonzero_compared(
    op: str, x: Tensor, axis: Any, keepdims: bool, direction: str, value: int
) -> Tensor:
    nonzero = x if x.dtype == _BOOL else _p.compare(x, 0, "NE")
    zeros_or_ones = nonzero if direction == "GT" else ~nonzero
    count = _reduce(op, _p.reduce_sum, _p.convert(zeros_or_ones, _I64), axis, keepdims)
    return _p.compare(count, value, direction)


def any(a: ArrayLike, axis: Any = None, *, keepdims: bool = False) -> Tensor:
    """Whether any element over the given axes is nonzero (true), as ``numpy.any``.

    Lowers to a count of nonzero elements (``prim.compare``, ``prim.reduce_sum`` in int64)
    compared with 0. NaN counts as true. ``any`` over no elements is ``False``.

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape and dtype.
    axis : None, int or tuple of int
        Axes to reduce; ``None`` reduces all.
    keepdims : bool
        Keep the reduced axes with length 1.

    Returns
    -------
    Tensor
        bool, ``a.shape`` without (or with length-1) reduced axes.

    Raises
    ------
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[0, 1], [0, 0]])
    >>> tf.any(x).item(), tf.any(x, axis=1).tolist()
    (True, [True, False])
    """
    return _count_nonzero_compared("any", _as_tensor(a), axis, keepdims, "GT", 0)


def all(a: ArrayLike, axis: Any = None, *, keepdims: bool = False) -> Tensor:
    """Whether all elements over the given axes are nonzero (true), as ``numpy.all``.

    Lowers to a count of zero elements compared with 0. ``all`` over no elements is ``True``.

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape and dtype.
    axis : None, int or tuple of int
        Axes to reduce; ``None`` reduces all.
    keepdims : bool
        Keep the reduced axes with length 1.

    Returns
    -------
    Tensor
        bool, ``a.shape`` without (or with length-1) reduced axes.

    Raises
    ------
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1, 1], [0, 1]])
    >>> tf.all(x).item(), tf.all(x, axis=1).tolist()
    (False, [True, False])
    """
    return _count_nonzero_compared("all", _as_tensor(a), axis, keepdims, "EQ", 0)

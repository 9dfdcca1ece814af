"""Array API names without a NumPy 1 counterpart of their own: ``result_type``, ``can_cast``,
``broadcast_arrays``, ``unstack``, ``matrix_transpose``, ``vecdot``, ``to_device`` (Array API
standard 2024.12, python-api.md "Array API namespace").

``result_type``/``can_cast`` answer from NumPy's rules on tenferro's seven dtypes (bool, int32,
int64, float32, float64, complex64, complex128), which agree with the standard's promotion table
on them; the others are short compositions of the primitives (views where possible), so they are
differentiable and trace under ``tf.jit``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tenferro import Tensor
from ..errors import AxisError, DTypeError, ShapeError
from ._common import (
    _PY_SCALARS,
    ArrayLike,
    _as_tensor,
    _normalize_axes,
    _operands,
    _result_dtype,
    _to_common,
)
from .elementwise import conj, multiply
from .layout import broadcast_to, moveaxis, squeeze, swapaxes
from .reductions import sum as _sum

__all__ = [
    "broadcast_arrays",
    "can_cast",
    "matrix_transpose",
    "result_type",
    "to_device",
    "unstack",
    "vecdot",
]

_DTYPES = tuple(
    np.dtype(n) for n in ("bool", "int32", "int64", "float32", "float64", "complex64", "complex128")
)


def _dtype_arg(op: str, x: Any) -> np.dtype:
    """The dtype a tensor, NumPy array or dtype-like stands for, checked to be tenferro's."""
    if isinstance(x, (Tensor, np.ndarray)):
        dt = x.dtype
    else:
        try:
            dt = np.dtype(x)
        except TypeError:
            raise TypeError(f"{op}: expected a dtype or a tensor, got {x!r}") from None
    if dt not in _DTYPES:
        raise DTypeError(
            f"{op}: unsupported dtype {dt} (tenferro's dtypes: {', '.join(map(str, _DTYPES))})"
        )
    return dt


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """The dtype of an operation on ``arrays_and_dtypes``, as the Array API's and NumPy 2's
    ``result_type`` (type promotion, NEP 50: Python scalars are weak).

    Parameters
    ----------
    *arrays_and_dtypes : Tensor, numpy.ndarray, dtype-like or Python scalar
        At least one tensor, array or dtype. Python ``bool``/``int``/``float``/``complex``
        take the kind they stand for without widening the others (``float32`` with ``1.0`` is
        ``float32``).

    Returns
    -------
    numpy.dtype
        One of tenferro's seven dtypes.

    Raises
    ------
    ValueError
        With no tensor, array or dtype among the arguments.
    DTypeError
        For a dtype tenferro does not implement (``float16``, ``uint8``, ...).

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.result_type(tf.int32, tf.float32), tf.result_type(tf.asarray([1], dtype=tf.int32), 2)
    (dtype('float64'), dtype('int32'))
    """
    args: list[Any] = []
    for a in arrays_and_dtypes:
        if type(a) in _PY_SCALARS:
            args.append(a)
        elif isinstance(a, Tensor):
            args.append(_result_dtype(a))
        else:
            args.append(_dtype_arg("result_type", a))
    if all(type(a) in _PY_SCALARS for a in args):
        raise ValueError("result_type: at least one tensor or dtype is required")
    return _dtype_arg("result_type", np.result_type(*args))


def can_cast(from_: Any, to: Any, /) -> bool:
    """Whether ``from_`` converts to ``to`` without loss by the promotion rules (NumPy's
    ``can_cast`` with ``casting="safe"``), as the Array API's ``can_cast``.

    Parameters
    ----------
    from_ : dtype-like or Tensor
    to : dtype-like

    Returns
    -------
    bool
        True along the promotion lattice (``int32`` to ``int64``, ``float32`` to ``complex64``,
        ``bool`` to anything) and, as NumPy, from integers to ``float64``/``complex128``.

    Raises
    ------
    DTypeError
        For dtypes tenferro does not implement.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.can_cast(tf.int32, tf.int64), tf.can_cast(tf.float64, tf.float32)
    (True, False)
    """
    return bool(
        np.can_cast(_dtype_arg("can_cast", from_), _dtype_arg("can_cast", to), casting="safe")
    )


def broadcast_arrays(*arrays: ArrayLike) -> list[Tensor]:
    """The inputs broadcast against each other (views), as ``numpy.broadcast_arrays``.

    Parameters
    ----------
    *arrays : Tensor or array_like

    Returns
    -------
    list of Tensor
        One per input, each of the broadcast shape and its own dtype (a list, as the Array API;
        NumPy 2 returns a tuple, which unpacks alike).

    Raises
    ------
    ShapeError
        If the shapes do not broadcast.

    Examples
    --------
    >>> import tenferro as tf
    >>> [t.shape for t in tf.broadcast_arrays(tf.zeros((2, 1)), tf.zeros(3))]
    [(2, 3), (2, 3)]
    """
    ts = [_as_tensor(a) for a in arrays]
    try:
        shape = np.broadcast_shapes(*(t.shape for t in ts))
    except ValueError:
        raise ShapeError(
            f"broadcast_arrays: shapes {', '.join(str(tuple(t.shape)) for t in ts)} do not broadcast"
        ) from None
    return [t if t.shape == shape else broadcast_to(t, shape) for t in ts]


def unstack(x: ArrayLike, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    """Split ``x`` along ``axis`` into a tuple of its slices, as the Array API's ``unstack``
    (the inverse of :func:`tenferro.stack`).

    Parameters
    ----------
    x : Tensor or array_like
        Rank at least 1.
    axis : int
        Axis to split along (negative counts from the end).

    Returns
    -------
    tuple of Tensor
        ``x.shape[axis]`` tensors of ``x``'s shape without ``axis``, dtype of ``x``.

    Raises
    ------
    AxisError
        For an axis out of range (also for a 0-d ``x``).

    Examples
    --------
    >>> import tenferro as tf
    >>> [t.tolist() for t in tf.unstack(tf.asarray([[1, 2], [3, 4]]), axis=1)]
    [[1, 3], [2, 4]]
    """
    t = _as_tensor(x)
    (ax,) = _normalize_axes("unstack", axis, t.ndim)
    moved = moveaxis(t, ax, 0) if ax else t
    return tuple(squeeze(moved[i : i + 1], axis=0) for i in range(t.shape[ax]))


def matrix_transpose(x: ArrayLike, /) -> Tensor:
    """The last two axes swapped (a view), as the Array API's ``matrix_transpose`` and
    ``Tensor.mT``.

    Raises
    ------
    ShapeError
        For rank < 2.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.matrix_transpose(tf.zeros((4, 2, 3))).shape
    (4, 3, 2)
    """
    t = _as_tensor(x)
    if t.ndim < 2:
        raise ShapeError(f"matrix_transpose: expected rank >= 2, got shape {tuple(t.shape)}")
    return swapaxes(t, -1, -2)


def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Tensor:
    """Dot product of vectors along ``axis``, ``sum(conj(x1) * x2, axis)``, as the Array API's
    ``vecdot`` and ``numpy.vecdot`` (the first argument is conjugated for complex inputs).

    Parameters
    ----------
    x1, x2 : Tensor or array_like
        Numeric; they broadcast, and ``axis`` of the broadcast shape must have equal lengths in
        both.
    axis : int
        Negative (``[-N, -1]`` for ``N`` the smaller rank) or non-negative, of the broadcast shape.

    Returns
    -------
    Tensor
        The broadcast shape without ``axis``; the promoted dtype.

    Raises
    ------
    ShapeError
        If the lengths along ``axis`` differ or the shapes do not broadcast.
    AxisError
        For an axis out of range.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.vecdot(tf.asarray([1j, 2.0]), tf.asarray([1j, 1.0])).item()
    (3+0j)
    """
    a, b = _operands(x1, x2)
    a, b = _to_common((a, b), _result_dtype(a, b))
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(
            f"vecdot: expected rank >= 1 operands, got shapes {tuple(a.shape)} and {tuple(b.shape)}"
        )
    n = min(a.ndim, b.ndim)
    if axis < -n or (axis >= 0 and axis >= n):
        raise AxisError(
            f"vecdot: axis {axis} is out of bounds for operands of ranks {a.ndim} and {b.ndim}"
        )
    ax = axis if axis < 0 else axis - n
    if a.shape[ax] != b.shape[ax]:
        raise ShapeError(
            f"vecdot: the lengths along axis {axis} differ ({a.shape[ax]} and {b.shape[ax]}; shapes "
            f"{tuple(a.shape)} and {tuple(b.shape)})"
        )
    if a.dtype.kind == "c":
        a = conj(a)
    dtype = a.dtype
    if dtype == np.bool_:
        a, b = a.astype(np.int64), b.astype(np.int64)
    out = _sum(multiply(a, b), axis=ax)
    # Integer sums accumulate in int64 (NumPy's sum); the result has the promoted dtype.
    return out if out.dtype == dtype else out.astype(dtype)


def to_device(x: ArrayLike, device: Any, /, *, stream: Any = None) -> Tensor:
    """``x`` on ``device``, as the Array API's ``Tensor.to_device``: tenferro has one device,
    ``"cpu"``, so ``x`` itself is returned.

    Raises
    ------
    ValueError
        For a device other than ``"cpu"`` or a ``stream`` other than ``None``.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.zeros(2)
    >>> tf.to_device(x, "cpu") is x
    True
    """
    if device != "cpu":
        raise ValueError(f"to_device: unsupported device {device!r} (tenferro's devices: ['cpu'])")
    if stream is not None:
        raise ValueError(f"to_device: stream must be None for the CPU device, got {stream!r}")
    return _as_tensor(x)

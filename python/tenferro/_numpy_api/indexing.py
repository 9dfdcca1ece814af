"""Selection by condition or index: ``where`` and ``take``."""

from __future__ import annotations

import builtins as _b
import math

import numpy as np

from .. import prim as _p
from .._tenferro import Tensor
from .._types import GatherConfig
from ..errors import UnsupportedError
from ._common import (
    ArrayLike,
    _BOOL,
    _adopt,
    _as_tensor,
    _host_indices,
    _normalize_axes,
    _operand,
    _result_dtype,
    _to_common,
)
from .elementwise import remainder
from .layout import ravel

__all__ = [
    "take",
    "where",
]


def where(condition: ArrayLike, x: ArrayLike = None, y: ArrayLike = None, /) -> Tensor:
    """Elements of ``x`` where ``condition`` holds, else of ``y`` (NumPy's three-argument form).

    Lowers to the primitive ``prim.select(condition, x, y)``; a non-boolean ``condition`` is
    first compared with zero (``condition != 0``), and ``x``/``y`` are converted to their common
    dtype (Python scalars weak).

    Parameters
    ----------
    condition : Tensor or array_like
        Where true, take ``x``; any dtype (nonzero is true).
    x, y : Tensor, array_like or scalar
        Values to choose from.

    Returns
    -------
    Tensor
        Shape: the broadcast of the three shapes; dtype: the promoted dtype of ``x`` and ``y``
        (two Python scalars give NumPy's default dtypes: int64, float64, complex128).

    Raises
    ------
    UnsupportedError
        For the one-argument form ``where(condition)`` (NumPy's ``nonzero``), not built yet.
    ValueError
        If only one of ``x`` and ``y`` is given.
    ShapeError
        If the shapes do not broadcast.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([-1.0, 2.0, -3.0])
    >>> tf.where(x > 0, x, 0.0).tolist()
    [0.0, 2.0, 0.0]
    """
    if x is None and y is None:
        raise UnsupportedError("where(condition) (nonzero) is not implemented; pass x and y")
    if x is None or y is None:
        raise ValueError("where: either both or neither of x and y should be given")
    cond = _adopt(condition, (condition, x, y))
    if cond.dtype != _BOOL:
        cond = _p.compare(cond, 0, "NE")
    a, b = _operand(x, (cond, x, y)), _operand(y, (cond, x, y))
    on_true, on_false = _to_common((a, b), _result_dtype(a, b))
    return _p.select(cond, on_true, on_false)


def _empty_like_result(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A zero-size result of ``shape`` derived from ``x`` (a view of none of its elements)."""
    if x.ndim == 0:
        x = _p.reshape(x, (1,))
    empty = x[(slice(0, 0),)]
    return _p.reshape(empty, shape)


def _take_gather(x: Tensor, idx: np.ndarray, axis: int) -> Tensor:
    """``numpy.take(x, idx, axis)`` for in-range non-negative ``idx`` via ``prim.gather``."""
    out_shape = tuple(x.shape[:axis]) + idx.shape + tuple(x.shape[axis + 1 :])
    if math.prod(out_shape) == 0:
        return _empty_like_result(x, out_shape)
    rank = len(out_shape)
    cfg = GatherConfig(
        offset_dims=tuple(range(axis)) + tuple(range(axis + idx.ndim, rank)),
        collapsed_slice_dims=(axis,),
        start_index_map=(axis,),
        index_vector_dim=idx.ndim,
        slice_sizes=tuple(1 if d == axis else n for d, n in enumerate(x.shape)),
    )
    return _p.gather(x, idx[..., None], cfg)


def take(a: ArrayLike, indices: ArrayLike, axis: int | None = None, mode: str = "raise") -> Tensor:
    """Elements at the given indices along an axis, as ``numpy.take``.

    Lowers to the primitive ``prim.gather``; the indices are read on the host (they never carry
    gradients). ``axis=None`` takes from the C-order flattened input. Under ``tf.jit`` indices
    traced by it (no values) take the traced route with ``mode="clip"`` (the clamping
    ``gather`` itself) and ``mode="wrap"`` (indices reduced modulo the axis length in the
    program); ``mode="raise"`` needs their values for its bounds check.

    Parameters
    ----------
    a : Tensor or array_like
        Source.
    indices : Tensor or array_like of int
        Any shape; negative values count from the end (``mode="raise"``).
    axis : int, optional
        Axis to take along (negatives allowed); ``None`` flattens first.
    mode : {"raise", "wrap", "clip"}
        Out-of-range indices raise ``IndexError``, wrap around, or clip to the ends (as NumPy).

    Returns
    -------
    Tensor
        Shape ``a.shape[:axis] + indices.shape + a.shape[axis + 1:]``, dtype of ``a``.

    Raises
    ------
    IndexError
        For an out-of-range index with ``mode="raise"`` (NumPy's message), or a non-empty take
        from an empty axis.
    AxisError
        If ``axis`` is out of range.
    TypeError
        If ``indices`` are not integers.
    ValueError
        For an unknown ``mode``.
    ConcretizationError
        For indices traced by ``tf.jit`` with ``mode="raise"`` (the message suggests
        ``mode="clip"``/``"wrap"``).

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1, 2, 3], [4, 5, 6]])
    >>> tf.take(x, [2, 0], axis=1).tolist()
    [[3, 1], [6, 4]]
    >>> x.take([-1, 0]).tolist()
    [6, 1]
    """
    x = _as_tensor(a)
    if axis is None:
        x = ravel(x)
        ax = 0
    else:
        (ax,) = _normalize_axes("take", axis, x.ndim)
    if isinstance(indices, Tensor) and indices._traced:
        return _take_traced(x, indices, ax, mode)
    idx = _host_indices("take", indices)
    n = x.shape[ax]
    if mode == "raise":
        bad = (idx < -n) | (idx >= n)
        if bad.any():
            raise IndexError(
                f"index {int(idx[bad].flat[0])} is out of bounds for axis {ax} with size {n}"
            )
        idx = np.where(idx < 0, idx + n, idx)
    elif mode in ("wrap", "clip"):
        if n == 0 and idx.size:
            raise IndexError("cannot do a non-empty take from an empty axes.")
        idx = np.mod(idx, n) if mode == "wrap" else np.clip(idx, 0, _b.max(n - 1, 0))
    else:
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    return _take_gather(x, idx, ax)


def _take_traced(x: Tensor, idx: Tensor, ax: int, mode: str) -> Tensor:
    """``take`` with indices traced by ``tf.jit``: ``mode="clip"`` is the clamping ``gather``
    itself and ``mode="wrap"`` reduces the indices modulo the axis length first; ``"raise"``
    needs the values for its bounds check and raises ``ConcretizationError``."""
    if idx.dtype.kind not in "iu":
        raise TypeError(
            f"take: indices must be integers, got dtype {idx.dtype} (cannot cast safely to int64)"
        )
    n = x.shape[ax]
    if mode == "raise":
        raise idx._value_error(
            "take",
            'mode="raise" reads the indices for its bounds check (IndexError), and a traced '
            'tensor has no values. Use take(..., mode="clip") or mode="wrap", which trace (out-of-'
            "range indices are clamped or wrapped instead of raising), pass the indices as a "
            "concrete array, or run the function without tf.jit",
        )
    if mode not in ("wrap", "clip"):
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if n == 0 and idx.size:
        raise IndexError("cannot do a non-empty take from an empty axes.")
    if mode == "wrap" and n:
        idx = remainder(idx, n)  # NumPy's floor modulo: in [0, n) for n > 0
    return _take_gather(x, idx, ax)

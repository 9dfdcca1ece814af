"""Joining and padding: ``concatenate``, ``stack`` and ``pad``."""

from __future__ import annotations

import builtins as _b
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import prim as _p
from .._factories import _tracked_in, asarray
from .._tenferro import Tensor
from .._types import PadConfig
from ..errors import ShapeError, UnsupportedError
from ._common import ArrayLike, _adopt, _as_tensor, _normalize_axes, _to_dtype, _unchanged
from .layout import broadcast_to, expand_dims, ravel

__all__ = [
    "concatenate",
    "pad",
    "stack",
]


def _join_operands(op: str, arrays: Any) -> list[Any]:
    """Tensors kept; other operands as host arrays (adopted by the primitive's runtime)."""
    if isinstance(arrays, (Tensor, np.ndarray)):
        arrays = list(arrays) if arrays.ndim else [arrays]
    items = [
        x if isinstance(x, Tensor) else asarray(x) if _tracked_in(x) is not None else np.asarray(x)
        for x in arrays
    ]
    if not items:
        raise ValueError(
            f"{op}: need at least one array to {'stack' if op == 'stack' else 'concatenate'}"
        )
    return items


def concatenate(arrays: Sequence[ArrayLike], axis: int | None = 0, dtype: Any = None) -> Tensor:
    """Join tensors along an existing axis, as ``numpy.concatenate``.

    Lowers to the primitive ``prim.concatenate``; the dtypes are promoted by the lattice of
    ops.md (NumPy's ``result_type`` on tenferro's dtypes).

    Parameters
    ----------
    arrays : sequence of Tensor or array_like
        Operands of one rank >= 1 whose lengths agree except along ``axis``.
    axis : int or None
        Joining axis (negatives allowed); ``None`` flattens every operand first.
    dtype : dtype-like, optional
        Result dtype (each operand converted as by :func:`astype`).

    Returns
    -------
    Tensor
        The joined tensor.

    Raises
    ------
    ShapeError
        For 0-d operands, ranks that differ or lengths that differ off ``axis`` (``ValueError``).
    AxisError
        If ``axis`` is out of range.
    ValueError
        For an empty sequence.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.concatenate([tf.asarray([[1, 2]]), tf.asarray([[3, 4], [5, 6]])]).tolist()
    [[1, 2], [3, 4], [5, 6]]
    >>> tf.concatenate([[1, 2], [3.5]], axis=None).tolist()
    [1.0, 2.0, 3.5]
    """
    items = _join_operands("concatenate", arrays)
    if axis is None:
        items = [ravel(x) for x in items]
        axis = 0
    if dtype is not None:
        items = [_to_dtype(_as_tensor(_adopt(x, items)), dtype) for x in items]
    ndim = items[0].ndim
    if _b.any(x.ndim == 0 for x in items):
        raise ShapeError("concatenate: zero-dimensional arrays cannot be concatenated")
    (ax,) = _normalize_axes("concatenate", axis, ndim)
    first = tuple(items[0].shape)
    for i, x in enumerate(items[1:], start=1):
        if x.ndim != ndim:
            raise ShapeError(
                "concatenate: all the input arrays must have same number of dimensions, but the "
                f"array at index 0 has {ndim} dimension(s) and the array at index {i} has "
                f"{x.ndim} dimension(s)"
            )
        for d in range(ndim):
            if d != ax and x.shape[d] != first[d]:
                raise ShapeError(
                    "concatenate: all the input array dimensions except for the concatenation axis "
                    f"must match exactly, but along dimension {d}, the array at index 0 has size "
                    f"{first[d]} and the array at index {i} has size {x.shape[d]}"
                )
    if len(items) == 1:
        return _unchanged(_as_tensor(items[0]))
    return _p.concatenate(items, ax)


def stack(arrays: Sequence[ArrayLike], axis: int = 0, dtype: Any = None) -> Tensor:
    """Join tensors of one shape along a new axis, as ``numpy.stack``.

    Each operand gets a length-1 axis at ``axis`` (a view), then ``prim.concatenate`` joins them.

    Parameters
    ----------
    arrays : sequence of Tensor or array_like
        Operands of equal shapes.
    axis : int
        Position of the new axis in the result (``-1`` is last).
    dtype : dtype-like, optional
        Result dtype.

    Returns
    -------
    Tensor
        Rank ``arrays[0].ndim + 1``; promoted dtype.

    Raises
    ------
    ShapeError
        If the shapes differ (``ValueError``).
    AxisError
        If ``axis`` is out of range.
    ValueError
        For an empty sequence.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.stack([tf.asarray([1, 2]), tf.asarray([3, 4])], axis=1).tolist()
    [[1, 3], [2, 4]]
    """
    items = _join_operands("stack", arrays)
    shapes = {tuple(x.shape) for x in items}
    if len(shapes) != 1:
        raise ShapeError(f"stack: all input arrays must have the same shape, got {sorted(shapes)}")
    (ax,) = _normalize_axes("stack", axis, items[0].ndim + 1)
    # An ndarray beside a tensor becomes a constant of that tensor's runtime (python-api.md).
    parts = [expand_dims(_as_tensor(_adopt(x, items)), ax) for x in items]
    return concatenate(parts, axis=ax, dtype=dtype)


def _as_pairs(op: str, name: str, value: Any, ndim: int, *, as_index: bool) -> np.ndarray:
    """NumPy's ``numpy.lib._arraypad_impl._as_pairs``: ``value`` as ``(ndim, 2)`` before/after."""
    arr = np.asarray(value)
    if as_index:
        if arr.dtype.kind not in "iu":
            if arr.dtype.kind == "b" or arr.size:
                raise TypeError(f"{op}: `{name}` must be of integral type, got {value!r}")
            arr = arr.astype(np.int64)
        if (arr < 0).any():
            raise ValueError(f"{op}: index can't contain negative values ({name}={value!r})")
    try:
        return np.broadcast_to(arr, (ndim, 2))
    except ValueError:
        raise ValueError(
            f"{op}: {name} of shape {arr.shape} cannot be broadcast to ({ndim}, 2) for an array "
            f"of dimension {ndim}"
        ) from None


def pad(
    array: ArrayLike, pad_width: Any, mode: str = "constant", *, constant_values: Any = 0
) -> Tensor:
    """Pad with a constant, as ``numpy.pad(..., mode="constant")``.

    Lowers to the primitive ``prim.pad`` (which fills zeros) and, for nonzero constants, to one
    ``prim.select`` per padded axis with host-built masks, applied in axis order so that the
    corners take the value of the later axis, as NumPy does.

    Parameters
    ----------
    array : Tensor or array_like
        Input of any shape.
    pad_width : int or sequence
        ``((before_0, after_0), ..., (before_n, after_n))``, or shorter forms broadcast to it
        (``(before, after)``, ``(n,)``, ``n``); non-negative integers.
    mode : str
        Only ``"constant"``.
    constant_values : scalar or sequence
        The padding values, per axis and side as ``pad_width``; cast to the input's dtype.

    Returns
    -------
    Tensor
        Shape ``shape[i] + before_i + after_i``, dtype of ``array``.

    Raises
    ------
    UnsupportedError
        For any other ``mode``.
    TypeError
        If ``pad_width`` is not integral.
    ValueError
        For negative widths or ones that do not broadcast to ``(ndim, 2)``.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.pad(tf.asarray([1, 2]), (1, 2)).tolist()
    [0, 1, 2, 0, 0]
    >>> tf.pad(tf.asarray([[1]]), 1, constant_values=((7, 8), (5, 6))).tolist()
    [[5, 7, 6], [5, 1, 6], [5, 8, 6]]
    """
    if mode != "constant":
        raise UnsupportedError(f"pad: mode {mode!r} is not supported (only 'constant')")
    x = _as_tensor(array)
    ndim = x.ndim
    widths = _as_pairs("pad", "pad_width", pad_width, ndim, as_index=True).astype(np.int64)
    tracked = _tracked_in(constant_values) is not None
    if not tracked:
        values = _as_pairs("pad", "constant_values", constant_values, ndim, as_index=False)
    if ndim == 0:
        return _unchanged(x)
    low, high = tuple(int(w) for w in widths[:, 0]), tuple(int(w) for w in widths[:, 1])
    if _b.any(low) or _b.any(high):
        cfg = PadConfig(edge_padding_low=low, edge_padding_high=high, interior_padding=(0,) * ndim)
        out = _p.pad(x, cfg)
    else:
        out = x
    if tracked:
        # Differentiable constants: each padded band is a host mask times the tracked value.
        cv = asarray(constant_values)
        try:
            cv = broadcast_to(cv, (ndim, 2))
        except ValueError:
            raise ValueError(
                f"pad: constant_values of shape {cv.shape} does not broadcast to ({ndim}, 2)"
            ) from None
        cv = cv.astype(x.dtype)
        for d in range(ndim):
            if low[d] == 0 and high[d] == 0:
                continue
            n = out.shape[d]
            shape = tuple(n if i == d else 1 for i in range(ndim))
            keep = np.zeros(n, dtype=bool)
            keep[low[d] : n - high[d]] = True
            before = np.zeros(n, dtype=x.dtype)
            before[: low[d]] = 1
            after = np.zeros(n, dtype=x.dtype)
            after[n - high[d] :] = 1
            fill = before.reshape(shape) * cv[d, 0] + after.reshape(shape) * cv[d, 1]
            out = _p.select(keep.reshape(shape), out, fill)
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        consts = values.astype(x.dtype)
    started = False
    for d in range(ndim):
        started = started or _b.bool(consts[d, 0] != 0) or _b.bool(consts[d, 1] != 0)
        if not started or (low[d] == 0 and high[d] == 0):
            continue
        n = out.shape[d]
        keep = np.zeros(n, dtype=bool)
        keep[low[d] : n - high[d]] = True
        fill = np.empty(n, dtype=x.dtype)
        fill[: low[d]] = consts[d, 0]
        fill[n - high[d] :] = consts[d, 1]
        fill[keep] = 0
        shape = tuple(n if i == d else 1 for i in range(ndim))
        out = _p.select(keep.reshape(shape), out, fill.reshape(shape))
    return out

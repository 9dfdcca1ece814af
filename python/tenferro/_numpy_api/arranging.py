"""Rearranging and combining tensors, composed from views, ``concatenate``, ``gather`` and
products: ``meshgrid``, ``repeat``, ``roll``, ``tile``, ``diff``, ``split``,
``take_along_axis``, ``kron`` and ``outer``, plus the Array API spellings ``concat`` and
``permute_dims``.

Counts, shifts and split points are Python integers (host values); every function is then a
fixed program of primitives, differentiable in its tensor operands and traceable by ``tf.jit``.
"""

from __future__ import annotations

import builtins as _b
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._tenferro import Tensor
from ..errors import ShapeError
from ._common import (
    ArrayLike,
    _adopt,
    _as_tensor,
    _host_indices,
    _normalize_axes,
    _unchanged,
)
from .elementwise import multiply, not_equal, remainder, subtract
from .indexing import take
from .joining import concatenate
from .layout import broadcast_to, ravel, reshape, transpose

__all__ = [
    "concat",
    "diff",
    "kron",
    "meshgrid",
    "outer",
    "permute_dims",
    "repeat",
    "roll",
    "split",
    "take_along_axis",
    "tile",
]


def _host_int(op: str, name: str, value: Any) -> int:
    """``value`` as a Python int (a 0-d integer array or tensor too); ``TypeError`` naming the
    function otherwise."""
    if isinstance(value, Tensor) and value._traced:
        raise value._value_error(op, f"`{name}` is a count, read on the host")
    try:
        return operator.index(value)
    except TypeError:
        arr = np.asarray(value)
        if arr.ndim == 0 and arr.dtype.kind in "iu":
            return int(arr)
        raise TypeError(f"{op}: `{name}` must be an integer, got {value!r}") from None


def _axis_slice(ndim: int, axis: int, sl: slice) -> tuple[slice, ...]:
    return (slice(None),) * axis + (sl,)


def concat(arrays: Sequence[ArrayLike], /, *, axis: int | None = 0) -> Tensor:
    """Join tensors along an existing axis: the Array API spelling of :func:`concatenate`.

    Parameters
    ----------
    arrays : sequence of Tensor or array_like
        Operands of one rank >= 1 whose lengths agree except along ``axis``.
    axis : int or None
        Joining axis; ``None`` flattens every operand first.

    Returns
    -------
    Tensor
        The joined tensor (promoted dtype).

    Raises
    ------
    ShapeError, AxisError, ValueError
        As :func:`concatenate`.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.concat([tf.asarray([1, 2]), tf.asarray([3])]).tolist()
    [1, 2, 3]
    """
    return concatenate(arrays, axis=axis)


def permute_dims(x: ArrayLike, /, axes: Sequence[int]) -> Tensor:
    """Permute the axes: the Array API spelling of :func:`transpose` (``axes`` required).

    Parameters
    ----------
    x : Tensor or array_like
    axes : sequence of int
        A permutation of ``range(x.ndim)`` (negatives allowed).

    Returns
    -------
    Tensor
        ``out.shape[i] == x.shape[axes[i]]`` (a view).

    Raises
    ------
    ValueError, AxisError
        As :func:`transpose`.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.permute_dims(tf.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    return transpose(x, tuple(axes))


def meshgrid(
    *xi: ArrayLike, indexing: str = "xy", sparse: bool = False, copy: bool = True
) -> list[Tensor]:
    """Coordinate tensors from coordinate vectors, as ``numpy.meshgrid``.

    Each input is flattened, reshaped to be long along its own axis and broadcast (a view) to the
    common shape. With ``indexing="xy"`` (the default, Cartesian) the first two output axes are
    swapped: inputs of lengths ``M, N`` give shape ``(N, M)``; ``"ij"`` (matrix) gives
    ``(M, N)``.

    Parameters
    ----------
    *xi : Tensor or array_like
        Coordinate vectors (any shape; flattened).
    indexing : {"xy", "ij"}
    sparse : bool
        Return the reshaped, not broadcast, vectors (shape 1 on the other axes).
    copy : bool
        Accepted for NumPy compatibility and ignored (tensors are immutable).

    Returns
    -------
    list of Tensor
        One per input, each of the input's dtype: a list, as the Array API 2024.12 specifies
        (NumPy 2 returns a tuple; both unpack alike).

    Raises
    ------
    ValueError
        For an unknown ``indexing``.

    Examples
    --------
    >>> import tenferro as tf
    >>> X, Y = tf.meshgrid(tf.asarray([1, 2, 3]), tf.asarray([4, 5]))
    >>> X.tolist(), Y.tolist()
    ([[1, 2, 3], [1, 2, 3]], [[4, 4, 4], [5, 5, 5]])
    """
    del copy
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    vecs = [ravel(_as_tensor(x)) for x in xi]
    n = len(vecs)
    if n == 0:
        return []
    lengths = [v.shape[0] for v in vecs]
    order = list(range(n))
    if indexing == "xy" and n > 1:
        order[0], order[1] = 1, 0  # input i lies along output axis order[i]
    full = [0] * n
    for i, ax in enumerate(order):
        full[ax] = lengths[i]
    out = []
    for i, v in enumerate(vecs):
        shape = [1] * n
        shape[order[i]] = lengths[i]
        r = reshape(v, tuple(shape))
        out.append(r if sparse else broadcast_to(r, tuple(full)))
    return out


def repeat(a: ArrayLike, repeats: Any, axis: int | None = None) -> Tensor:
    """Repeat each element, as ``numpy.repeat``.

    Lowers to ``take`` (``prim.gather``) with host-built indices, so gradients sum over the
    copies. ``repeats`` are host integers (the output shape depends on them).

    Parameters
    ----------
    a : Tensor or array_like
    repeats : int or sequence of int
        Non-negative counts, one for all elements or one per element along ``axis``.
    axis : int or None
        Axis to repeat along; ``None`` flattens first.

    Returns
    -------
    Tensor
        ``a``'s shape with ``sum(repeats)`` (or ``n * repeats``) along ``axis``; ``a``'s dtype.

    Raises
    ------
    ValueError
        For negative counts or a count sequence whose length is not 1 or ``a.shape[axis]``.
    TypeError
        For non-integer counts.
    AxisError
        If ``axis`` is out of range.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.repeat(tf.asarray([[1, 2], [3, 4]]), [1, 2], axis=0).tolist()
    [[1, 2], [3, 4], [3, 4]]
    >>> tf.repeat(tf.asarray([1, 2]), 2).tolist()
    [1, 1, 2, 2]
    """
    x = _as_tensor(a)
    if axis is None:
        x, ax = ravel(x), 0
    else:
        (ax,) = _normalize_axes("repeat", axis, x.ndim)
    if isinstance(repeats, Tensor) and repeats._traced:
        raise repeats._value_error("repeat", "the output length depends on the counts")
    reps = _host_indices("repeat", repeats)
    if reps.ndim > 1:
        raise ValueError(
            f"repeat: repeats must be an integer or a 1-d sequence, got shape {reps.shape}"
        )
    if (reps < 0).any():
        raise ValueError(f"repeat: negative repeats are not allowed, got {repeats!r}")
    n = x.shape[ax]
    if reps.size not in (1, n):
        raise ValueError(
            f"repeat: operands could not be broadcast together: {reps.size} counts for an axis of length {n}"
        )
    idx = np.repeat(np.arange(n, dtype=np.int64), np.broadcast_to(reps.reshape(-1), (n,)))
    return take(x, idx, axis=ax)


def roll(a: ArrayLike, shift: Any, axis: Any = None) -> Tensor:
    """Roll elements along axes, as ``numpy.roll``: element ``i`` moves to ``i + shift``
    (cyclically).

    Lowers to two slices (views) and a ``concatenate`` per rolled axis.

    Parameters
    ----------
    a : Tensor or array_like
    shift : int or sequence of int
        Host integers, broadcast against ``axis``; shifts of a repeated axis add up.
    axis : None, int or sequence of int
        ``None`` rolls the flattened tensor and restores the shape.

    Returns
    -------
    Tensor
        Same shape and dtype as ``a``.

    Raises
    ------
    ValueError
        If ``shift`` and ``axis`` do not broadcast.
    AxisError
        If an axis is out of range.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.roll(tf.asarray([1, 2, 3, 4]), 1).tolist()
    [4, 1, 2, 3]
    >>> tf.roll(tf.asarray([[1, 2], [3, 4]]), (1, -1), axis=(0, 1)).tolist()
    [[4, 3], [2, 1]]
    """
    x = _as_tensor(a)
    if axis is None:
        return reshape(roll(ravel(x), shift, 0), tuple(x.shape))
    shifts = _host_indices("roll", shift)
    axes_arr = np.asarray(axis)
    if axes_arr.dtype.kind not in "iu":
        raise TypeError(f"roll: axis must be integers, got {axis!r}")
    try:
        sh_b, ax_b = np.broadcast_arrays(shifts, axes_arr)
    except ValueError:
        raise ValueError(
            f"roll: 'shift' and 'axis' should be scalars or 1D sequences, got {shift!r}, {axis!r}"
        ) from None
    if sh_b.ndim > 1:
        raise ValueError(
            f"roll: 'shift' and 'axis' should be scalars or 1D sequences, got {shift!r}, {axis!r}"
        )
    total = [0] * x.ndim
    for s, ax in zip(sh_b.reshape(-1).tolist(), ax_b.reshape(-1).tolist()):
        (d,) = _normalize_axes("roll", int(ax), x.ndim)
        total[d] += int(s)
    out = x
    for d, s in enumerate(total):
        n = out.shape[d]
        if n == 0 or s % n == 0:
            continue
        k = s % n
        head = out[_axis_slice(out.ndim, d, slice(n - k, n))]
        tail = out[_axis_slice(out.ndim, d, slice(0, n - k))]
        out = concatenate([head, tail], axis=d)
    return out if out is not x else _unchanged(x)


def tile(A: ArrayLike, reps: Any) -> Tensor:
    """Repeat the whole tensor ``reps`` times per axis, as ``numpy.tile``.

    Each axis of length ``s`` with count ``r`` is broadcast to ``(r, s)`` (a view) and merged by
    a C-order reshape. A shorter ``reps`` is padded with 1s in front; a shorter ``A`` gets
    leading length-1 axes.

    Parameters
    ----------
    A : Tensor or array_like
    reps : int or sequence of int
        Non-negative host integers.

    Returns
    -------
    Tensor
        Rank ``max(A.ndim, len(reps))``, lengths ``s_i * r_i``; ``A``'s dtype.

    Raises
    ------
    ValueError
        For negative counts.
    TypeError
        For non-integer counts.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.tile(tf.asarray([1, 2]), (2, 2)).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    x = _as_tensor(A)
    r = _host_indices("tile", reps).reshape(-1)
    if (r < 0).any():
        raise ValueError(f"tile: negative dimensions are not allowed, got reps={reps!r}")
    d = _b.max(x.ndim, r.size)
    counts = (1,) * (d - r.size) + tuple(int(v) for v in r)
    shape = (1,) * (d - x.ndim) + tuple(x.shape)
    if _b.all(c == 1 for c in counts):
        return reshape(x, shape)
    inter = tuple(v for s in shape for v in (1, s))
    wide = tuple(v for c, s in zip(counts, shape) for v in (c, s))
    y = broadcast_to(reshape(x, inter), wide)
    return reshape(y, tuple(c * s for c, s in zip(counts, shape)))


def diff(
    a: ArrayLike, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None
) -> Tensor:
    """The ``n``-th discrete difference along ``axis``, as ``numpy.diff``: ``out[i] = a[i+1] -
    a[i]``, applied ``n`` times (``!=`` for booleans, as NumPy).

    Parameters
    ----------
    a : Tensor or array_like
        Rank >= 1.
    n : int
        Number of differences (``0`` returns ``a``).
    axis : int
    prepend, append : scalar or array_like, optional
        Values joined to ``a`` along ``axis`` first (scalars broadcast to length 1).

    Returns
    -------
    Tensor
        ``a.shape`` with ``max(len - n, 0)`` along ``axis``; ``a``'s dtype.

    Raises
    ------
    ValueError
        For ``n < 0`` or a 0-d input.
    AxisError
        If ``axis`` is out of range.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.diff(tf.asarray([1, 4, 9, 16])).tolist()
    [3, 5, 7]
    >>> tf.diff(tf.asarray([1, 4, 9, 16]), n=2).tolist()
    [2, 2]
    """
    n = _host_int("diff", "n", n)
    if n < 0:
        raise ValueError(f"diff: order must be non-negative but got {n}")
    x = _as_tensor(_adopt(a, (a, prepend, append)))
    if x.ndim == 0:
        raise ValueError("diff: diff requires input that is at least one dimensional")
    (ax,) = _normalize_axes("diff", axis, x.ndim)
    if n == 0:
        return _unchanged(x)

    def joined(extra: Any) -> Tensor:
        e = _as_tensor(_adopt(extra, (x,)))
        if e.ndim == 0:
            e = broadcast_to(e, tuple(1 if i == ax else s for i, s in enumerate(x.shape)))
        return e

    parts = ([joined(prepend)] if prepend is not None else []) + [x]
    parts += [joined(append)] if append is not None else []
    if len(parts) > 1:
        x = concatenate(parts, axis=ax)
    for _ in range(n):
        m = x.shape[ax]
        hi = x[_axis_slice(x.ndim, ax, slice(1, _b.max(m, 1)))]
        lo = x[_axis_slice(x.ndim, ax, slice(0, _b.max(m - 1, 0)))]
        x = not_equal(hi, lo) if x.dtype.kind == "b" else subtract(hi, lo)
    return x


def split(ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Tensor]:
    """Split into sub-tensors (views), as ``numpy.split``.

    Parameters
    ----------
    ary : Tensor or array_like
    indices_or_sections : int or sequence of int
        ``N`` equal parts (the axis length must be divisible by ``N``), or the sorted split
        points (clamped to the axis, as NumPy: points past the end give empty parts).
    axis : int

    Returns
    -------
    list of Tensor
        Views of ``ary`` (differentiable), in order.

    Raises
    ------
    ValueError
        If ``N`` does not divide the axis length, or ``N <= 0``.
    AxisError
        If ``axis`` is out of range.

    Examples
    --------
    >>> import tenferro as tf
    >>> [p.tolist() for p in tf.split(tf.arange(6), 3)]
    [[0, 1], [2, 3], [4, 5]]
    >>> [p.tolist() for p in tf.split(tf.arange(6), [1, 4])]
    [[0], [1, 2, 3], [4, 5]]
    """
    x = _as_tensor(ary)
    (ax,) = _normalize_axes("split", axis, x.ndim)
    length = x.shape[ax]
    if np.ndim(indices_or_sections) == 0:
        sections = _host_int("split", "indices_or_sections", indices_or_sections)
        if sections <= 0:
            raise ValueError(f"split: number sections must be larger than 0, got {sections}")
        if length % sections:
            raise ValueError("split: array split does not result in an equal division")
        step = length // sections
        points = [i * step for i in range(sections + 1)]
    else:
        idx = _host_indices("split", indices_or_sections).reshape(-1).tolist()
        points = [0] + [int(i) for i in idx] + [length]
    out = []
    for lo, hi in zip(points[:-1], points[1:]):
        out.append(x[_axis_slice(x.ndim, ax, slice(lo, hi))])
    return out


def take_along_axis(arr: ArrayLike, indices: ArrayLike, axis: int | None = -1) -> Tensor:
    """Take values at matching 1-d indices along an axis, as ``numpy.take_along_axis``.

    The indices (same rank as ``arr``, broadcasting against it off ``axis``) are turned into flat
    C-order positions ``sum_d idx_d * stride_d`` and taken from the flattened tensor with
    ``prim.gather``, so gradients scatter-add back. Host indices are bounds-checked (negatives
    count from the end); indices traced by ``tf.jit`` are wrapped modulo the axis length (no
    values to check).

    Parameters
    ----------
    arr : Tensor or array_like
    indices : Tensor or array_like of int
        Rank ``arr.ndim`` (1 with ``axis=None``).
    axis : int or None
        ``None`` works on the flattened ``arr``.

    Returns
    -------
    Tensor
        The broadcast shape of ``arr`` (off ``axis``) and ``indices``; ``arr``'s dtype.

    Raises
    ------
    ValueError
        If the ranks differ.
    IndexError
        For an out-of-range host index.
    TypeError
        For non-integer indices.
    AxisError
        If ``axis`` is out of range.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[10, 30, 20], [60, 40, 50]])
    >>> tf.take_along_axis(x, tf.asarray([[0, 2], [1, 1]]), axis=1).tolist()
    [[10, 20], [40, 40]]
    """
    x = _as_tensor(arr)
    if axis is None:
        x, ax = ravel(x), 0
    else:
        (ax,) = _normalize_axes("take_along_axis", axis, x.ndim)
    traced = isinstance(indices, Tensor) and indices._traced
    if traced:
        if indices.dtype.kind not in "iu":
            raise TypeError(f"take_along_axis: indices must be integers, got dtype {indices.dtype}")
        idx_shape = tuple(indices.shape)
    else:
        idx = _host_indices("take_along_axis", indices)
        idx_shape = idx.shape
    if len(idx_shape) != x.ndim:
        raise ValueError(
            f"take_along_axis: `indices` and `arr` must have the same number of dimensions, got "
            f"{len(idx_shape)} and {x.ndim}"
        )
    try:
        out_shape = tuple(
            idx_shape[d] if d == ax else np.broadcast_shapes((x.shape[d],), (idx_shape[d],))[0]
            for d in range(x.ndim)
        )
    except ValueError:
        raise ShapeError(
            f"take_along_axis: shape mismatch: indices {idx_shape} do not broadcast against "
            f"arr {tuple(x.shape)} off axis {ax}"
        ) from None
    n = x.shape[ax]
    strides = [math.prod(x.shape[d + 1 :]) for d in range(x.ndim)]
    base = np.zeros(out_shape, dtype=np.int64)
    for d in range(x.ndim):
        if d != ax:
            shape = [1] * x.ndim
            shape[d] = out_shape[d]
            base = base + np.arange(out_shape[d], dtype=np.int64).reshape(shape) * strides[d]
    if traced:
        pos = remainder(indices, n) if n else indices
        flat = broadcast_to(multiply(pos, strides[ax]), out_shape) + base
        return take(ravel(x), flat, mode="clip")
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise IndexError(
            f"index {int(idx[bad].flat[0])} is out of bounds for axis {ax} with size {n}"
        )
    idx = np.where(idx < 0, idx + n, idx)
    flat = np.broadcast_to(idx * strides[ax], out_shape) + base
    return take(ravel(x), flat)


def kron(a: ArrayLike, b: ArrayLike) -> Tensor:
    """Kronecker product, as ``numpy.kron``: block ``(i, j, ...)`` is ``a[i, j, ...] * b``.

    The operands get leading length-1 axes to one rank; ``a`` reshaped to ``(s0, 1, s1, 1,
    ...)`` times ``b`` reshaped to ``(1, t0, 1, t1, ...)`` (a broadcast ``prim.mul``) is merged
    by a C-order reshape to ``(s0*t0, s1*t1, ...)``.

    Parameters
    ----------
    a, b : Tensor or array_like

    Returns
    -------
    Tensor
        Rank ``max(a.ndim, b.ndim)``; promoted dtype.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.kron(tf.asarray([1, 10]), tf.asarray([1, 2, 3])).tolist()
    [1, 2, 3, 10, 20, 30]
    """
    x, y = _as_tensor(_adopt(a, (a, b))), _as_tensor(_adopt(b, (a, b)))
    d = _b.max(x.ndim, y.ndim)
    xs = (1,) * (d - x.ndim) + tuple(x.shape)
    ys = (1,) * (d - y.ndim) + tuple(y.shape)
    xr = reshape(x, tuple(v for s in xs for v in (s, 1)))
    yr = reshape(y, tuple(v for t in ys for v in (1, t)))
    return reshape(multiply(xr, yr), tuple(s * t for s, t in zip(xs, ys)))


def outer(a: ArrayLike, b: ArrayLike) -> Tensor:
    """Outer product of the flattened operands, as ``numpy.outer``: ``out[i, j] = a[i] * b[j]``
    (no conjugation).

    Parameters
    ----------
    a, b : Tensor or array_like
        Any shapes (flattened).

    Returns
    -------
    Tensor
        Shape ``(a.size, b.size)``; promoted dtype.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.outer(tf.asarray([1, 2]), tf.asarray([1, 10, 100])).tolist()
    [[1, 10, 100], [2, 20, 200]]
    """
    x, y = ravel(_as_tensor(_adopt(a, (a, b)))), ravel(_as_tensor(_adopt(b, (a, b))))
    return multiply(reshape(x, (x.shape[0], 1)), reshape(y, (1, y.shape[0])))

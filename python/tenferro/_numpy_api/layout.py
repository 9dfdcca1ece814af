"""Layout functions (metadata-only where the primitives allow): ``transpose``, ``reshape``
(row-major by default), ``ravel``, ``broadcast_to``, ``flip``, ``moveaxis``, ``swapaxes``,
``squeeze``, ``expand_dims``."""

from __future__ import annotations

import builtins as _b
import math
import sys
from collections.abc import Sequence
from typing import Any

from .. import prim as _p
from .._tenferro import Tensor
from ..errors import ShapeError
from ._common import ArrayLike, _as_tensor, _normalize_axes, _shape_tuple, _unchanged

__all__ = [
    "broadcast_to",
    "expand_dims",
    "flip",
    "moveaxis",
    "ravel",
    "reshape",
    "squeeze",
    "swapaxes",
    "transpose",
]


def transpose(a: ArrayLike, axes: Sequence[int] | None = None) -> Tensor:
    """Permute the axes, as ``numpy.transpose``: ``out.shape[i] == a.shape[axes[i]]``.

    Lowers to the primitive ``prim.transpose`` (a view: no data moves).

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape.
    axes : sequence of int, optional
        A permutation of ``range(a.ndim)`` (negative entries count from the end); ``None``
        reverses the axes.

    Returns
    -------
    Tensor
        Same dtype; shape permuted.

    Raises
    ------
    ValueError
        If ``len(axes) != a.ndim``.
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1, 2, 3], [4, 5, 6]])
    >>> tf.transpose(x).tolist()
    [[1, 4], [2, 5], [3, 6]]
    >>> tf.transpose(tf.zeros((2, 3, 4)), (1, -1, 0)).shape
    (3, 4, 2)
    """
    x = _as_tensor(a)
    ndim = x.ndim
    if axes is None:
        perm = tuple(range(ndim - 1, -1, -1))
    else:
        axes = tuple(axes)
        if len(axes) != ndim:
            raise ValueError(f"transpose: axes {axes} don't match array of dimension {ndim}")
        perm = _normalize_axes("transpose", axes, ndim)
    if perm == tuple(range(ndim)):
        return _unchanged(x)
    return _p.transpose(x, perm)


def _resolve_shape(shape: Any, size: int) -> tuple[int, ...]:
    """``shape`` with a single ``-1`` replaced, validated against ``size`` (NumPy's rules)."""
    shape = _shape_tuple(shape)
    unknown = [i for i, s in enumerate(shape) if s < 0]
    if len(unknown) > 1:
        raise ValueError(f"reshape: can only specify one unknown dimension, got {shape}")
    if unknown and shape[unknown[0]] != -1:
        raise ValueError(f"reshape: negative dimensions not allowed, got {shape}")
    if math.prod(s for s in shape if s > 0) > sys.maxsize:
        # As NumPy: too big even with a zero extent; quoted as given (not as the reversed shape
        # the row-major lowering hands to the column-major primitive).
        raise ShapeError(
            f"reshape: cannot reshape tensor of size {size} into shape {shape}: more than {sys.maxsize} elements"
        )
    known = math.prod(s for s in shape if s != -1)
    if unknown:
        if known == 0 or size % known:
            raise ShapeError(f"reshape: cannot reshape tensor of size {size} into shape {shape}")
        i = unknown[0]
        return shape[:i] + (size // known,) + shape[i + 1 :]
    if known != size:
        raise ShapeError(f"reshape: cannot reshape tensor of size {size} into shape {shape}")
    return shape


def reshape(a: ArrayLike, /, shape: Any, order: str = "C", *, copy: bool | None = None) -> Tensor:
    """Give a new shape to the data, as ``numpy.reshape`` (row-major ``order="C"`` by default).

    The primitive ``prim.reshape`` is column-major (the core's layout, ops.md), so
    ``order="F"`` maps to it directly, while ``order="C"`` is lowered as *reverse the axes,
    column-major reshape to the reversed shape, reverse the axes back*: reversing the axes turns
    row-major element order into column-major order and back. Transposes are views; the reshape
    is a view when the strides allow it. When only length-1 axes are inserted or removed, the
    order does not matter and a single ``prim.reshape`` is used.

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape.
    shape : int or tuple of int
        New shape with the same number of elements; one entry may be -1 (inferred).
    order : {"C", "F"}
        Read and write the elements in row-major ("C", NumPy's default) or column-major ("F")
        order.
    copy : bool or None
        Accepted for NumPy compatibility and ignored: tensors are immutable, so whether the
        result shares memory is not observable.

    Returns
    -------
    Tensor
        Same dtype and elements, shape ``shape``.

    Raises
    ------
    ShapeError
        If the sizes do not match (a ``ValueError``, as NumPy raises).
    ValueError
        For more than one -1, another negative entry, or an unknown ``order``.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([1, 2, 3, 4, 5, 6])
    >>> tf.reshape(x, (2, 3)).tolist()
    [[1, 2, 3], [4, 5, 6]]
    >>> tf.reshape(x, (2, -1), order="F").tolist()
    [[1, 3, 5], [2, 4, 6]]
    """
    del copy
    x = _as_tensor(a)
    if order not in ("C", "F"):
        raise ValueError(f"reshape: order must be 'C' or 'F', got {order!r}")
    old = tuple(x.shape)
    new = _resolve_shape(shape, x.size)
    if new == old:
        return _unchanged(x)
    if order == "F" or [s for s in old if s != 1] == [s for s in new if s != 1]:
        return _p.reshape(x, new)
    xt = x if x.ndim <= 1 else _p.transpose(x, tuple(range(x.ndim - 1, -1, -1)))
    y = _p.reshape(xt, new[::-1])
    return y if len(new) <= 1 else _p.transpose(y, tuple(range(len(new) - 1, -1, -1)))


def ravel(a: ArrayLike, order: str = "C") -> Tensor:
    """The elements as a 1-d tensor, as ``numpy.ravel`` (``reshape(a, -1, order)``).

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape.
    order : {"C", "F"}
        Row-major (default) or column-major reading order.

    Returns
    -------
    Tensor
        Shape ``(a.size,)``, same dtype.

    Raises
    ------
    ValueError
        For an unknown ``order``.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1, 2], [3, 4]])
    >>> tf.ravel(x).tolist(), tf.ravel(x, order="F").tolist()
    ([1, 2, 3, 4], [1, 3, 2, 4])
    """
    return reshape(a, (-1,), order=order)


def broadcast_to(array: ArrayLike, shape: Any) -> Tensor:
    """Broadcast to a new shape, as ``numpy.broadcast_to`` (a view: no data moves).

    Lowers to the primitive ``prim.broadcast_in_dim`` with the input axes aligned to the
    trailing output axes (NumPy's rule: each input length must be 1 or equal the output's).

    Parameters
    ----------
    array : Tensor or array_like
        Input of any shape.
    shape : int or tuple of int
        Target shape, at least ``array.ndim`` long.

    Returns
    -------
    Tensor
        Shape ``shape``, same dtype.

    Raises
    ------
    ShapeError
        If ``array`` cannot be broadcast to ``shape`` (a ``ValueError``, as NumPy raises).
    ValueError
        For a negative entry in ``shape``.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.broadcast_to(tf.asarray([1, 2, 3]), (2, 3)).tolist()
    [[1, 2, 3], [1, 2, 3]]
    """
    x = _as_tensor(array)
    shape = _shape_tuple(shape)
    if _b.any(s < 0 for s in shape):
        raise ValueError(f"broadcast_to: all elements of the shape must be non-negative: {shape}")
    offset = len(shape) - x.ndim
    if offset < 0 or _b.any(s != 1 and s != shape[offset + i] for i, s in enumerate(x.shape)):
        raise ShapeError(
            f"broadcast_to: cannot broadcast a tensor of shape {tuple(x.shape)} to shape {shape}"
        )
    if shape == tuple(x.shape):
        return _unchanged(x)
    return _p.broadcast_in_dim(x, shape, tuple(range(offset, len(shape))))


def flip(m: ArrayLike, axis: Any = None) -> Tensor:
    """Reverse the order of the elements along the given axes, as ``numpy.flip`` (a view).

    Lowers to the primitive ``prim.reverse``.

    Parameters
    ----------
    m : Tensor or array_like
        Input of any shape.
    axis : None, int or tuple of int
        Axes to reverse; ``None`` reverses all.

    Returns
    -------
    Tensor
        Same shape and dtype.

    Raises
    ------
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1, 2], [3, 4]])
    >>> tf.flip(x).tolist(), tf.flip(x, axis=1).tolist()
    ([[4, 3], [2, 1]], [[2, 1], [4, 3]])
    """
    x = _as_tensor(m)
    axes = _normalize_axes("flip", axis, x.ndim)
    return _p.reverse(x, axes) if axes else _unchanged(x)


def moveaxis(a: ArrayLike, source: Any, destination: Any) -> Tensor:
    """Move axes to new positions, the others keeping their order, as ``numpy.moveaxis``.

    Lowers to the primitive ``prim.transpose`` (a view).

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape.
    source, destination : int or sequence of int
        Original and new positions of the moved axes (same count; negatives allowed).

    Returns
    -------
    Tensor
        Same dtype; axes permuted.

    Raises
    ------
    ValueError
        If ``source`` and ``destination`` differ in length.
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.moveaxis(tf.zeros((3, 4, 5)), 0, -1).shape
    (4, 5, 3)
    """
    x = _as_tensor(a)
    src = _normalize_axes("moveaxis", source, x.ndim)
    dst = _normalize_axes("moveaxis", destination, x.ndim)
    if len(src) != len(dst):
        raise ValueError(
            "moveaxis: `source` and `destination` arguments must have the same number of elements"
        )
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(x, order)


def swapaxes(a: ArrayLike, axis1: int, axis2: int) -> Tensor:
    """Interchange two axes, as ``numpy.swapaxes`` (a view via ``prim.transpose``).

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape.
    axis1, axis2 : int
        The axes to swap (negatives allowed; equal axes give ``a``).

    Returns
    -------
    Tensor
        Same dtype; the two axes swapped.

    Raises
    ------
    AxisError
        If an axis is out of range.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.swapaxes(tf.zeros((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    x = _as_tensor(a)
    i, j = _normalize_axes("swapaxes", (axis1, axis2), x.ndim, allow_duplicates=True)
    perm = list(range(x.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(x, perm)


def squeeze(a: ArrayLike, axis: Any = None) -> Tensor:
    """Remove axes of length 1, as ``numpy.squeeze`` (a view via ``prim.reshape``).

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape.
    axis : None, int or tuple of int
        The length-1 axes to remove; ``None`` removes all of them.

    Returns
    -------
    Tensor
        Same dtype and elements; shape without the removed axes.

    Raises
    ------
    ShapeError
        If a selected axis does not have length 1 (a ``ValueError``, as NumPy raises).
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.zeros((1, 3, 1))
    >>> tf.squeeze(x).shape, tf.squeeze(x, axis=0).shape
    ((3,), (3, 1))
    """
    x = _as_tensor(a)
    shape = tuple(x.shape)
    if axis is None:
        axes = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        axes = _normalize_axes("squeeze", axis, x.ndim)
        for i in axes:
            if shape[i] != 1:
                raise ShapeError(
                    f"squeeze: cannot select axis {i} to squeeze out: it has length {shape[i]}, "
                    "not 1"
                )
    if not axes:
        return _unchanged(x)
    return _p.reshape(x, tuple(s for i, s in enumerate(shape) if i not in axes))


def expand_dims(a: ArrayLike, axis: Any) -> Tensor:
    """Insert axes of length 1 at the given positions of the result, as ``numpy.expand_dims``.

    A view via ``prim.reshape``.

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape.
    axis : int or tuple of int
        Positions in the *output* (of rank ``a.ndim + len(axis)``); negatives allowed.

    Returns
    -------
    Tensor
        Same dtype and elements; rank ``a.ndim + len(axis)``.

    Raises
    ------
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([1.0, 2.0])
    >>> tf.expand_dims(x, 0).shape, tf.expand_dims(x, (0, -1)).shape
    ((1, 2), (1, 2, 1))
    """
    x = _as_tensor(a)
    n_new = len(axis) if isinstance(axis, (tuple, list)) else 1
    out_ndim = x.ndim + n_new
    axes = _normalize_axes("expand_dims", axis, out_ndim)
    dims = iter(x.shape)
    return _p.reshape(x, tuple(1 if i in axes else next(dims) for i in range(out_ndim)))

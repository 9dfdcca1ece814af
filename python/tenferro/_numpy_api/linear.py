"""Contraction and matrix structure: ``matmul``, ``tensordot``, ``tril``, ``triu``, ``diagonal``
and ``trace``."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import prim as _p
from .._tenferro import Tensor
from .._types import DotGeneralConfig
from ..errors import ShapeError
from ._common import ArrayLike, _BOOL, _I64, _adopt, _as_tensor, _normalize_axes
from .layout import broadcast_to, moveaxis, transpose
from .reductions import sum

__all__ = [
    "diagonal",
    "matmul",
    "tensordot",
    "trace",
    "tril",
    "triu",
]


def _contract(a: Tensor, b: Tensor, cfg: Any) -> Tensor:
    """``dot_general`` in NumPy's result dtype; two bool operands give the bool ``any(a & b)``
    (the primitive does not admit bool)."""
    if a.dtype == _BOOL and b.dtype == _BOOL:
        out = _p.dot_general(_p.convert(a, _I64), _p.convert(b, _I64), cfg)
        return _p.compare(out, 0, "NE")
    return _p.dot_general(a, b, cfg)


def matmul(x1: ArrayLike, x2: ArrayLike, /) -> Tensor:
    """Matrix product with NumPy's broadcasting rules, as ``numpy.matmul`` (the ``@`` operator).

    Lowers to the primitive ``prim.dot_general``. NumPy semantics: the last two axes hold the
    matrices and the leading axes are batch axes broadcast against each other; a 1-d first
    operand is a row vector and a 1-d second operand a column vector, whose added axis is removed
    from the result. Batch axes present (with length > 1) in both operands become batch axes of
    ``dot_general``; those of only one operand become its free axes (no copy of the broadcast
    operand); the result is transposed from ``dot_general``'s ``[lhs free, rhs free, batch]`` into
    NumPy's batch-leading order (a view).

    Parameters
    ----------
    x1, x2 : Tensor or array_like
        Operands of rank >= 1; shapes ``(..., n, k)`` and ``(..., k, m)``.

    Returns
    -------
    Tensor
        Shape ``broadcast(x1.shape[:-2], x2.shape[:-2]) + (n, m)`` (without ``n`` / ``m`` for 1-d
        operands); dtype ``numpy.result_type(x1, x2)`` (two bool operands give bool).

    Raises
    ------
    ShapeError
        If an operand is 0-d, the inner lengths differ, or the batch axes do not broadcast (all
        ``ValueError``, as NumPy raises).

    See Also
    --------
    numpy.matmul, tenferro.prim.dot_general, tensordot

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> a = tf.asarray([[1, 2], [3, 4]])
    >>> (a @ a).tolist()
    [[7, 10], [15, 22]]
    >>> tf.matmul(a, tf.asarray([1, 1])).tolist()
    [3, 7]
    >>> tf.matmul(np.ones((5, 1, 2, 3)), np.ones((4, 3, 6))).shape
    (5, 4, 2, 6)
    """
    a, b = _adopt(x1, (x1, x2)), _adopt(x2, (x1, x2))
    for i, t in enumerate((a, b)):
        if t.ndim == 0:
            raise ShapeError(
                f"matmul: Input operand {i} does not have enough dimensions (has 0, gufunc core "
                "with signature (n?,k),(k,m?)->(n?,m?) requires 1)"
            )
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        raise ShapeError(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
            f"signature (n?,k),(k,m?)->(n?,m?) (size {k_b} is different from {k_a}); shapes "
            f"{tuple(a.shape)} and {tuple(b.shape)}"
        )
    if a.ndim == 2 and b.ndim == 2 and a.dtype != _BOOL:
        return _p.matmul(a, b)
    a_shape, b_shape, cfg, perm, final = _matmul_plan(tuple(a.shape), tuple(b.shape))
    a_s = a if a.ndim == len(a_shape) else _p.reshape(a, a_shape)  # drops length-1 axes
    b_s = b if b.ndim == len(b_shape) else _p.reshape(b, b_shape)
    out = _contract(a_s, b_s, cfg)
    if perm is not None:
        out = _p.transpose(out, perm)
    return out if out.ndim == len(final) else _p.reshape(out, final)


@functools.lru_cache(maxsize=256)
def _matmul_plan(
    a_full: tuple[int, ...], b_full: tuple[int, ...]
) -> tuple[
    tuple[int, ...], tuple[int, ...], DotGeneralConfig, tuple[int, ...] | None, tuple[int, ...]
]:
    """How :func:`matmul` lowers operands of shapes ``a_full`` and ``b_full`` (rank >= 1, not
    both 2, inner lengths equal): the operands' shapes for ``dot_general`` (length-1 batch axes
    dropped), its dimension numbers, the permutation of its result into NumPy's order (``None``:
    none) and the final shape. Cached per shape pair: deciding costs more than a small batched
    product (a ``DotGeneralConfig`` alone ~7 µs)."""
    a_vec, b_vec = len(a_full) == 1, len(b_full) == 1
    a_batch = a_full[:-2]
    b_batch = b_full[:-2] if not b_vec else ()
    try:
        batch = np.broadcast_shapes(a_batch, b_batch)
    except ValueError:
        raise ShapeError(
            f"matmul: batch axes of shapes {a_full} and {b_full} do not broadcast "
            f"({a_batch} vs {b_batch})"
        ) from None
    nb = len(batch)
    a_off, b_off = nb - len(a_batch), nb - len(b_batch)

    def size(shape: tuple[int, ...], off: int, p: int) -> int:
        return shape[p - off] if p >= off else 1

    # Batch positions: 'common' (dot_general batch), 'a' / 'b' (free axes of one operand), or
    # length 1 in both (restored by the final reshape).
    kinds = {}
    for p in range(nb):
        sa, sb = size(a_batch, a_off, p), size(b_batch, b_off, p)
        if sa != 1 and sb != 1:
            kinds[p] = "common"
        elif sa != 1:
            kinds[p] = "a"
        elif sb != 1:
            kinds[p] = "b"
    a_kept = [p for p in range(nb) if kinds.get(p) in ("common", "a")]
    b_kept = [p for p in range(nb) if kinds.get(p) in ("common", "b")]
    a_core = a_full[-2:] if not a_vec else a_full
    b_core = b_full[-2:] if not b_vec else b_full
    a_shape = tuple(batch[p] for p in a_kept) + a_core
    b_shape = tuple(batch[p] for p in b_kept) + b_core
    common = [p for p in range(nb) if kinds.get(p) == "common"]
    cfg = DotGeneralConfig(
        lhs_contracting_dims=(len(a_shape) - 1,),
        rhs_contracting_dims=(len(b_kept) if b_vec else len(b_shape) - 2,),
        lhs_batch_dims=tuple(a_kept.index(p) for p in common),
        rhs_batch_dims=tuple(b_kept.index(p) for p in common),
    )
    # dot_general's axes: [a free (a-only batch, n), b free (b-only batch, m), common batch].
    labels: list[Any] = [p for p in a_kept if kinds[p] == "a"] + ([] if a_vec else ["n"])
    labels += [p for p in b_kept if kinds[p] == "b"] + ([] if b_vec else ["m"]) + common
    want = (
        [p for p in range(nb) if p in kinds] + ([] if a_vec else ["n"]) + ([] if b_vec else ["m"])
    )
    perm = tuple(labels.index(label) for label in want)
    final = batch + (() if a_vec else (a_full[-2],)) + (() if b_vec else (b_full[-1],))
    return a_shape, b_shape, cfg, (None if perm == tuple(range(len(perm))) else perm), final


def tensordot(a: ArrayLike, b: ArrayLike, axes: Any = 2) -> Tensor:
    """Sum products over the given axes, as ``numpy.tensordot``.

    Lowers to one ``prim.dot_general`` without batch axes, whose output order (free axes of
    ``a``, then free axes of ``b``) is NumPy's.

    Parameters
    ----------
    a, b : Tensor or array_like
        Operands.
    axes : int or (sequence of int, sequence of int)
        An int ``N`` sums the last ``N`` axes of ``a`` against the first ``N`` of ``b``; a pair
        lists the summed axes of each operand (same count, negatives allowed).

    Returns
    -------
    Tensor
        Shape: the free axes of ``a`` then those of ``b``; dtype ``numpy.result_type(a, b)``.

    Raises
    ------
    ShapeError
        If the summed lengths differ or the counts differ (``ValueError``).
    AxisError
        If an axis is out of range or repeated.
    ValueError
        If ``axes`` is a negative int.

    See Also
    --------
    numpy.tensordot, tenferro.prim.dot_general

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> a, b = np.arange(24.0).reshape(2, 3, 4), np.arange(12.0).reshape(4, 3)
    >>> tf.tensordot(a, b, axes=([1, 2], [1, 0])).tolist() == np.tensordot(a, b, ([1, 2], [1, 0])).tolist()
    True
    >>> tf.tensordot(np.ones(3), np.ones(4), axes=0).shape
    (3, 4)
    """
    x, y = _adopt(a, (a, b)), _adopt(b, (a, b))
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        n = operator.index(axes)
        if n < 0:
            raise ValueError(f"tensordot: axes must be a non-negative integer, got {n}")
        if n > x.ndim or n > y.ndim:
            raise ShapeError(
                f"tensordot: cannot sum over {n} axes of operands of shapes {tuple(x.shape)} and "
                f"{tuple(y.shape)}"
            )
        ax_a, ax_b = tuple(range(x.ndim - n, x.ndim)), tuple(range(n))
    else:
        try:
            spec_a, spec_b = axes
        except (TypeError, ValueError):
            raise ValueError(
                f"tensordot: axes must be an int or a pair of sequences, got {axes!r}"
            ) from None
        ax_a = _normalize_axes("tensordot", spec_a, x.ndim)
        ax_b = _normalize_axes("tensordot", spec_b, y.ndim)
        if len(ax_a) != len(ax_b):
            raise ShapeError(
                f"tensordot: shape-mismatch for sum: axes {ax_a} and {ax_b} differ in count"
            )
    for i, j in zip(ax_a, ax_b):
        if x.shape[i] != y.shape[j]:
            raise ShapeError(
                f"tensordot: shape-mismatch for sum: axis {i} of {tuple(x.shape)} has length "
                f"{x.shape[i]} but axis {j} of {tuple(y.shape)} has length {y.shape[j]}"
            )
    return _contract(x, y, DotGeneralConfig(lhs_contracting_dims=ax_a, rhs_contracting_dims=ax_b))


def _triangle(name: str, prim_fn: Callable, m: ArrayLike, k: int) -> Tensor:
    x = _as_tensor(m)
    k = operator.index(k)
    if x.ndim == 0:
        raise ShapeError(f"{name}: input must be at least 1-d, got a 0-d tensor")
    if x.ndim == 1:
        x = broadcast_to(x, (x.shape[0], x.shape[0]))
    nd = x.ndim
    if nd == 2:
        return prim_fn(x, k)
    front = (nd - 2, nd - 1) + tuple(range(nd - 2))
    back = tuple(range(2, nd)) + (0, 1)
    return _p.transpose(prim_fn(_p.transpose(x, front), k), back)


def tril(m: ArrayLike, k: int = 0) -> Tensor:
    """Lower triangle of the matrices in the last two axes, as ``numpy.tril``.

    Element ``[..., i, j]`` is kept where ``j - i <= k`` and zeroed elsewhere. Lowers to the
    primitive ``prim.tril`` (which acts on axes 0 and 1) between two transposes (views).

    Parameters
    ----------
    m : Tensor or array_like
        Rank >= 1 (a 1-d input is broadcast to a square matrix, as NumPy).
    k : int
        Diagonal above which to zero (0: main, > 0 above, < 0 below).

    Returns
    -------
    Tensor
        Same shape (``(n, n)`` for 1-d input) and dtype.

    Raises
    ------
    ShapeError
        For a 0-d input.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.tril(tf.asarray([[1, 2, 3], [4, 5, 6]])).tolist()
    [[1, 0, 0], [4, 5, 0]]
    """
    return _triangle("tril", lambda x, k: _p.tril(x, k), m, k)


def triu(m: ArrayLike, k: int = 0) -> Tensor:
    """Upper triangle of the matrices in the last two axes, as ``numpy.triu``.

    Element ``[..., i, j]`` is kept where ``j - i >= k`` and zeroed elsewhere. Lowers to the
    primitive ``prim.triu`` (which acts on axes 0 and 1) between two transposes (views).

    Parameters
    ----------
    m : Tensor or array_like
        Rank >= 1 (a 1-d input is broadcast to a square matrix, as NumPy).
    k : int
        Diagonal below which to zero.

    Returns
    -------
    Tensor
        Same shape (``(n, n)`` for 1-d input) and dtype.

    Raises
    ------
    ShapeError
        For a 0-d input.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.triu(tf.asarray([[1, 2, 3], [4, 5, 6]]), k=1).tolist()
    [[0, 2, 3], [0, 0, 6]]
    """
    return _triangle("triu", lambda x, k: _p.triu(x, k), m, k)


def diagonal(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """Diagonals of the matrices in ``(axis1, axis2)``, as ``numpy.diagonal``.

    The two axes are removed and the diagonal becomes the **last** axis (NumPy's layout), of
    length ``max(0, min(n1, n2 - offset))`` for ``offset >= 0`` (``min(n1 + offset, n2)``
    otherwise). Lowers to a transpose and a basic slice (views) and the primitive
    ``prim.extract_diag``.

    Parameters
    ----------
    a : Tensor or array_like
        Rank >= 2.
    offset : int
        Diagonal offset: ``a[..., i, i + offset]``.
    axis1, axis2 : int
        The matrix axes (distinct; negatives allowed).

    Returns
    -------
    Tensor
        Rank ``a.ndim - 1``, dtype of ``a``.

    Raises
    ------
    ShapeError
        For rank < 2 (``ValueError``).
    AxisError
        If an axis is out of range.
    ValueError
        If ``axis1`` and ``axis2`` name the same axis.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1, 2, 3], [4, 5, 6]])
    >>> tf.diagonal(x).tolist(), x.diagonal(offset=1).tolist(), x.diagonal(-1).tolist()
    ([1, 5], [2, 6], [4])
    """
    x = _as_tensor(a)
    offset = operator.index(offset)
    if x.ndim < 2:
        raise ShapeError(
            f"diagonal: diag requires an array of at least two dimensions, got shape {tuple(x.shape)}"
        )
    i, j = _normalize_axes("diagonal", (axis1, axis2), x.ndim, allow_duplicates=True)
    if i == j:
        raise ValueError(f"diagonal: axis1 and axis2 cannot be the same (both are axis {i})")
    rest = tuple(d for d in range(x.ndim) if d not in (i, j))
    y = transpose(x, (i, j) + rest)
    if offset > 0:
        y = y[:, offset:]
    elif offset < 0:
        y = y[-offset:]
    return moveaxis(_p.extract_diag(y, 0, 1), 0, -1)


def trace(
    a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None
) -> Tensor:
    """Sum along diagonals, as ``numpy.trace``: ``sum(diagonal(a, offset, axis1, axis2), -1)``.

    The sum follows :func:`sum`'s NumPy dtype rules (bool and int32 accumulate in int64).

    Parameters
    ----------
    a : Tensor or array_like
        Rank >= 2.
    offset, axis1, axis2 : int
        As :func:`diagonal`.
    dtype : dtype-like, optional
        Accumulator and result dtype.

    Returns
    -------
    Tensor
        Rank ``a.ndim - 2``.

    Raises
    ------
    ShapeError, AxisError, ValueError
        As :func:`diagonal`.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.trace(tf.asarray([[1, 2], [3, 4]])).tolist()
    5
    """
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)

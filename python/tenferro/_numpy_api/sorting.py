"""Sorting, searching, set functions and cumulative scans: NumPy names (``sort``, ``argsort``,
``argmax``, ``argmin``, ``searchsorted``, ``nonzero``, ``argwhere``, ``flatnonzero``,
``unique``, ``cumsum``, ``cumprod``) and the Array API's (``unique_all``, ``unique_counts``,
``unique_inverse``, ``unique_values``, ``cumulative_sum``, ``cumulative_prod``, ``descending``/
``stable`` keywords).

``sort``, ``argsort``, ``argmax``, ``argmin``, ``searchsorted``, ``cumsum`` and ``cumprod`` lower
to the primitives of the same names (ops.md, sorting and scan families), which trace under
``tf.jit``; ``sort`` and the scans are differentiable. The functions whose output *shape*
depends on the values (``nonzero``, ``argwhere``, ``flatnonzero``, ``unique*``) run eagerly on
the host with NumPy and raise ``ConcretizationError`` on a tensor traced by ``tf.jit``
(graph-mode.md, "Values Python asks for"); they are not differentiable.
"""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

import numpy as np

from .. import prim as _p
from .._tenferro import Tensor
from ..errors import DTypeError, ShapeError
from ._common import ArrayLike, _BOOL, _I64, _as_tensor, _normalize_axes, _to_dtype
from .indexing import take
from .layout import expand_dims, ravel

__all__ = [
    "argmax",
    "argmin",
    "argsort",
    "argwhere",
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "flatnonzero",
    "nonzero",
    "searchsorted",
    "sort",
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
]

_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _one_axis(op: str, axis: Any, ndim: int) -> int:
    """One axis, normalised: an integer (``operator.index``), as NumPy's sort, argmax and scans
    take it; a tuple or a float raises ``TypeError``, as there."""
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(
            f"{op}: axis must be an integer or None, got {axis!r} ({type(axis).__name__})"
        ) from None
    (ax,) = _normalize_axes(op, a, ndim)
    return ax


def _sort_args(op: str, a: ArrayLike, axis: Any, kind: Any, order: Any) -> tuple[Tensor, int]:
    if order is not None:
        raise ValueError(
            f"{op}: order= needs a structured dtype; tenferro has none (got order={order!r})"
        )
    if kind not in _KINDS:
        raise ValueError(f"{op}: kind must be one of {_KINDS[1:]}, got {kind!r}")
    x = _as_tensor(a)
    if axis is None:
        return ravel(x), 0
    return x, _one_axis(op, axis, x.ndim)


def sort(
    a: ArrayLike,
    axis: int | None = -1,
    kind: str | None = None,
    order: Any = None,
    *,
    descending: bool = False,
    stable: bool | None = None,
) -> Tensor:
    """Sorted copy along an axis, as ``numpy.sort`` and the Array API's ``sort``.

    Lowers to the primitive ``sort``, which is always stable (``kind`` and ``stable`` are
    accepted and change nothing): ties keep their input order, ``-0.0`` and ``0.0`` compare
    equal, NaNs go last (also with ``descending=True``), complex numbers sort by real part, then
    imaginary part (NumPy's order, NaN parts last). CPU kernel: an LSD radix sort on the order
    key of each element. Differentiable: the gradient is the cotangent scattered back through the
    sorting permutation (the JVP gathers the tangent through it).

    Parameters
    ----------
    a : Tensor or array_like
        Rank >= 1 (rank 0 raises ``AxisError`` as NumPy's ``axis=-1``).
    axis : int or None
        Axis to sort along; ``None`` sorts the flattened tensor.
    kind : {None, 'quicksort', 'mergesort', 'heapsort', 'stable'}
    order : None
        Structured dtypes do not exist in tenferro; anything else raises ``ValueError``.
    descending : bool
        Largest first (Array API).
    stable : bool or None
        Accepted (Array API, NumPy 2); the sort is always stable.

    Returns
    -------
    Tensor
        ``a``'s shape (1-D for ``axis=None``) and dtype.

    Raises
    ------
    AxisError
        If ``axis`` is out of range.
    ValueError
        For an unknown ``kind`` or an ``order``.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.sort(tf.asarray([3.0, float("nan"), -1.0, 2.0])).tolist()
    [-1.0, 2.0, 3.0, nan]
    >>> tf.sort(tf.asarray([[3, 1], [0, 2]]), axis=0, descending=True).tolist()
    [[3, 2], [0, 1]]
    """
    x, ax = _sort_args("sort", a, axis, kind, order)
    return _p.sort(x, ax, bool(descending))


def argsort(
    a: ArrayLike,
    axis: int | None = -1,
    kind: str | None = None,
    order: Any = None,
    *,
    descending: bool = False,
    stable: bool | None = None,
) -> Tensor:
    """Indices that sort along an axis, as ``numpy.argsort`` with ``kind='stable'`` and the Array
    API's ``argsort``.

    Lowers to the primitive ``argsort``: always stable (equal elements keep their input order,
    also with ``descending=True``, as the Array API asks), NaN last, ``-0.0 == 0.0``, complex
    lexicographic. Not differentiable (integer output).

    Parameters
    ----------
    a : Tensor or array_like
        Rank >= 1.
    axis : int or None
        ``None`` sorts the flattened tensor.
    kind, order, stable
        As :func:`sort`.
    descending : bool
        Largest first; ties still in input order.

    Returns
    -------
    Tensor
        int64, ``a``'s shape (1-D for ``axis=None``).

    Raises
    ------
    AxisError
        If ``axis`` is out of range.
    ValueError
        For an unknown ``kind`` or an ``order``.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.argsort(tf.asarray([2, 1, 2, 0])).tolist()
    [3, 1, 0, 2]
    >>> tf.argsort(tf.asarray([2, 1, 2, 0]), descending=True).tolist()
    [0, 2, 1, 3]
    """
    x, ax = _sort_args("argsort", a, axis, kind, order)
    return _p.argsort(x, ax, bool(descending))


def _arg_extreme(op: str, prim: Any, a: ArrayLike, axis: Any, out: Any, keepdims: bool) -> Tensor:
    if out is not None:
        raise TypeError(f"{op}: out= is not supported (tensors are immutable)")
    x = _as_tensor(a)
    if axis is not None:
        _one_axis(op, axis, x.ndim)  # a tuple or float axis: TypeError first, as NumPy
    # Empty only when the searched axis is: (0, 3) along axis 1 gives shape (0,), as NumPy.
    if x.size == 0 and (axis is None or x.shape[_one_axis(op, axis, x.ndim)] == 0):
        raise ValueError(f"{op}: attempt to get {op} of an empty sequence (shape {tuple(x.shape)})")
    if axis is None:
        r = prim(ravel(x), 0)
        if keepdims:
            r = _p.reshape(r, (1,) * x.ndim)
        return r
    ax = _one_axis(op, axis, x.ndim)
    r = prim(x, ax)
    return expand_dims(r, ax) if keepdims else r


def argmax(
    a: ArrayLike, axis: int | None = None, out: Any = None, *, keepdims: bool = False
) -> Tensor:
    """Index of the largest element along an axis, as ``numpy.argmax`` (and the Array API's).

    Lowers to the primitive ``argmax``: the first occurrence of the maximum; a NaN wins (the
    first NaN's index, as NumPy); complex numbers compare lexicographically. Not differentiable.

    Parameters
    ----------
    a : Tensor or array_like
    axis : int or None
        ``None``: the index into the flattened tensor.
    out : None
        Not supported (``TypeError``).
    keepdims : bool
        Keep the reduced axis (all axes for ``axis=None``) with length 1.

    Returns
    -------
    Tensor
        int64; ``a``'s shape without ``axis`` (0-d for ``axis=None``).

    Raises
    ------
    ValueError
        For an empty tensor.
    AxisError
        If ``axis`` is out of range.
    TypeError
        If ``axis`` is not an integer (a tuple, as NumPy).

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.argmax(tf.asarray([[1, 9, 9], [4, 2, 0]]), axis=1).tolist()
    [1, 0]
    """
    return _arg_extreme("argmax", _p.argmax, a, axis, out, keepdims)


def argmin(
    a: ArrayLike, axis: int | None = None, out: Any = None, *, keepdims: bool = False
) -> Tensor:
    """Index of the smallest element along an axis, as ``numpy.argmin`` (and the Array API's).

    Lowers to the primitive ``argmin``: the first occurrence of the minimum; a NaN wins (the
    first NaN's index, as NumPy). See :func:`argmax` for the parameters and errors.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.argmin(tf.asarray([3.0, 1.0, 1.0])).item()
    1
    """
    return _arg_extreme("argmin", _p.argmin, a, axis, out, keepdims)


def searchsorted(
    a: ArrayLike, v: ArrayLike, side: str = "left", sorter: ArrayLike | None = None
) -> Tensor:
    """Insertion indices into a sorted 1-D tensor, as ``numpy.searchsorted`` (and the Array API's
    ``searchsorted(x1, x2, side=, sorter=)``).

    Lowers to the primitive ``searchsorted`` (a binary search per value on NumPy's sort order:
    NaN last, ``-0.0 == 0.0``); ``sorter`` first takes ``a`` in that order (``tf.take``). The
    operands are promoted to a common dtype. Not differentiable.

    Parameters
    ----------
    a : Tensor or array_like
        1-D, ascending (or put in order by ``sorter``); not checked.
    v : Tensor, array_like or scalar
        Values to insert, any shape.
    side : {'left', 'right'}
        ``'left'``: the first suitable index (``a[i-1] < v <= a[i]``); ``'right'``: the last
        (``a[i-1] <= v < a[i]``).
    sorter : Tensor or array_like of int, optional
        Indices that sort ``a``: 1-D, integer, ``a``'s length, each in ``[0, len(a))`` (no
        negative indices, as NumPy); checked on its values (a sorter traced by ``tf.jit`` has
        none: ``ConcretizationError``, as :func:`take` with ``mode="raise"``).

    Returns
    -------
    Tensor
        int64 of ``v``'s shape.

    Raises
    ------
    ValueError
        If ``side`` is not ``'left'`` or ``'right'``, or a ``sorter`` index is out of range.
    ShapeError
        If ``a`` is not 1-D, or ``sorter`` is not 1-D of ``a``'s length (a ``ValueError``).
    DTypeError
        If ``sorter`` is not of an integer dtype (a ``TypeError``, as NumPy).

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.searchsorted(tf.asarray([1, 2, 2, 3]), tf.asarray([2, 5])).tolist()
    [1, 4]
    >>> tf.searchsorted(tf.asarray([1, 2, 2, 3]), 2, side="right").item()
    3
    """
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    x = _as_tensor(a)
    if sorter is not None:
        x = take(x, _sorter("searchsorted", sorter, x))
    if not isinstance(v, Tensor) and not isinstance(v, (bool, int, float, complex)):
        v = _as_tensor(v)
    return _p.searchsorted(x, v, side == "right")


def _sorter(op: str, sorter: Any, x: Tensor) -> Any:
    """``sorter`` checked as NumPy checks it (dtype, rank, length, range), as host indices; a
    sorter traced by ``tf.jit`` is checked on its dtype and shape only (``take`` then asks for
    its values)."""
    traced = isinstance(sorter, Tensor) and sorter._traced
    dtype, shape = (sorter.dtype, tuple(sorter.shape)) if traced else (None, None)
    if not traced:
        host = np.asarray(sorter)
        dtype, shape = host.dtype, host.shape
    if dtype.kind not in "iu":
        raise DTypeError(f"{op}: sorter must only contain integers, got dtype {dtype}")
    if x.ndim != 1:
        raise ShapeError(f"{op}: a must be 1-D, got shape {tuple(x.shape)}")
    n = x.shape[0]
    if len(shape) != 1 or shape[0] != n:
        raise ShapeError(f"{op}: sorter must be 1-D of the length of a ({n}), got shape {shape}")
    if traced:
        return sorter
    bad = (host < 0) | (host >= n)
    if bad.any():
        raise ValueError(
            f"{op}: sorter index {int(host[bad][0])} out of range for a of length {n} "
            "(sorter indices are in [0, len(a)))"
        )
    return host


def _accumulate_dtype(x: Tensor, dtype: Any) -> Any:
    if dtype is not None:
        return np.dtype(dtype)
    if x.dtype == _BOOL or x.dtype == np.dtype(np.int32):
        return _I64
    return x.dtype


def _scan(op: str, prim: Any, a: ArrayLike, axis: Any, dtype: Any) -> Tensor:
    x = _as_tensor(a)
    if axis is None:
        x, ax = ravel(x), 0
    else:
        ax = _one_axis(op, axis, x.ndim)
    x = _to_dtype(x, _accumulate_dtype(x, dtype))
    return prim(x, ax)


def cumsum(a: ArrayLike, axis: int | None = None, dtype: Any = None, out: Any = None) -> Tensor:
    """Cumulative sum along an axis, as ``numpy.cumsum``.

    Lowers to the primitive ``cumsum`` (sequential sums, as NumPy's ``add.accumulate``);
    differentiable (the gradient is the reversed cumulative sum of the cotangent).

    Parameters
    ----------
    a : Tensor or array_like
    axis : int or None
        ``None`` scans the flattened tensor.
    dtype : dtype, optional
        Accumulation and result dtype; bool and int32 default to int64 (NumPy on 64-bit Linux).
    out : None
        Not supported (``TypeError``).

    Returns
    -------
    Tensor
        ``a``'s shape (1-D for ``axis=None``).

    Raises
    ------
    AxisError
        If ``axis`` is out of range.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.cumsum(tf.asarray([[1, 2], [3, 4]]), axis=1).tolist()
    [[1, 3], [3, 7]]
    """
    if out is not None:
        raise TypeError("cumsum: out= is not supported (tensors are immutable)")
    return _scan("cumsum", _p.cumsum, a, axis, dtype)


def cumprod(a: ArrayLike, axis: int | None = None, dtype: Any = None, out: Any = None) -> Tensor:
    """Cumulative product along an axis, as ``numpy.cumprod``.

    Lowers to the primitive ``cumprod``; differentiable, with derivatives exact at zeros (also
    two or more zeros in a slice; no division by an element that is zero: PyTorch's
    ``cumprod_backward`` split at the first zero). See :func:`cumsum` for the parameters.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.cumprod(tf.asarray([1.0, 2.0, 0.0, 4.0])).tolist()
    [1.0, 2.0, 0.0, 0.0]
    """
    if out is not None:
        raise TypeError("cumprod: out= is not supported (tensors are immutable)")
    return _scan("cumprod", _p.cumprod, a, axis, dtype)


def _cumulative(
    op: str, prim: Any, x: ArrayLike, axis: Any, dtype: Any, include_initial: bool, init: int
) -> Tensor:
    t = _as_tensor(x)
    if axis is None:
        if t.ndim > 1:
            raise ValueError(f"{op}: axis must be given for a tensor of rank {t.ndim} > 1")
        if t.ndim == 0:
            t = _p.reshape(t, (1,))
        ax = 0
    else:
        ax = _one_axis(op, axis, t.ndim)
    t = _to_dtype(t, _accumulate_dtype(t, dtype))
    r = prim(t, ax)
    if include_initial:
        shape = list(t.shape)
        shape[ax] = 1
        first = _as_tensor(np.full(shape, init, dtype=t.dtype))
        r = _p.concatenate([first, r], ax)
    return r


def cumulative_sum(
    x: ArrayLike, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
) -> Tensor:
    """Cumulative sum, the Array API's ``cumulative_sum`` (2023.12) and NumPy 2.1's.

    As :func:`cumsum`, but ``axis`` may be omitted only for rank <= 1, and ``include_initial``
    prepends the sum of nothing (0): the axis then has ``n + 1`` elements. Differentiable.

    Parameters
    ----------
    x : Tensor or array_like
    axis : int, optional
        Required for rank > 1 (``ValueError`` otherwise).
    dtype : dtype, optional
        Bool and int32 default to int64; other dtypes are kept.
    include_initial : bool

    Returns
    -------
    Tensor

    Raises
    ------
    ValueError
        ``axis=None`` on rank > 1.
    AxisError
        ``axis`` out of range.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.cumulative_sum(tf.asarray([1, 2, 3]), include_initial=True).tolist()
    [0, 1, 3, 6]
    """
    return _cumulative("cumulative_sum", _p.cumsum, x, axis, dtype, include_initial, 0)


def cumulative_prod(
    x: ArrayLike, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
) -> Tensor:
    """Cumulative product, the Array API's ``cumulative_prod`` (2024.12) and NumPy 2.1's.

    As :func:`cumulative_sum` with products (``include_initial`` prepends 1); derivatives exact
    at zeros (:func:`cumprod`).

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.cumulative_prod(tf.asarray([2, 3]), include_initial=True).tolist()
    [1, 2, 6]
    """
    return _cumulative("cumulative_prod", _p.cumprod, x, axis, dtype, include_initial, 1)


# --- data-dependent shapes: eager, on the host -----------------------------------------------


def _host(op: str, a: ArrayLike) -> np.ndarray:
    """The values of ``a`` on the host; ``ConcretizationError`` for a traced tensor."""
    if isinstance(a, Tensor):
        if a._traced:
            raise a._value_error(
                f"tf.{op}",
                f"{op} returns a tensor whose shape depends on the values, which a traced "
                "program cannot have. Use tf.where(cond, x, fill) to keep the shape, or run the "
                "function without tf.jit",
            )
        return np.asarray(a)
    return np.asarray(_as_tensor(a))


def _out(v: np.ndarray) -> Tensor:
    return _as_tensor(np.array(v, copy=True))  # (np.ascontiguousarray would make 0-d 1-d)


def nonzero(a: ArrayLike) -> tuple[Tensor, ...]:
    """Indices of the nonzero (true) elements, one int64 tensor per axis, as ``numpy.nonzero``.

    Eager only: the output length depends on the values (``ConcretizationError`` under
    ``tf.jit``); computed on the host. NaN counts as nonzero; complex when either part is.

    Parameters
    ----------
    a : Tensor or array_like
        Rank >= 1.

    Returns
    -------
    tuple of Tensor
        ``a.ndim`` int64 tensors of equal length, in C (row-major) order.

    Raises
    ------
    ValueError
        For a 0-d input (NumPy 2).
    ConcretizationError
        On a tensor traced by ``tf.jit``.

    Examples
    --------
    >>> import tenferro as tf
    >>> [t.tolist() for t in tf.nonzero(tf.asarray([[0, 3], [4, 0]]))]
    [[0, 1], [1, 0]]
    """
    x = _host("nonzero", a)
    if x.ndim == 0:
        raise ValueError(
            "nonzero: calling nonzero on 0d arrays is not allowed; use atleast_1d(a).nonzero() instead"
        )
    return tuple(_out(i.astype(np.int64)) for i in np.nonzero(x))


def argwhere(a: ArrayLike) -> Tensor:
    """Indices of the nonzero elements as rows, as ``numpy.argwhere``: int64 of shape
    ``(N, a.ndim)``. Eager only (``ConcretizationError`` under ``tf.jit``).

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.argwhere(tf.asarray([[0, 3], [4, 0]])).tolist()
    [[0, 1], [1, 0]]
    """
    return _out(np.argwhere(_host("argwhere", a)).astype(np.int64))


def flatnonzero(a: ArrayLike) -> Tensor:
    """Indices of the nonzero elements of the flattened (C-order) input, as
    ``numpy.flatnonzero``: int64, 1-D. Eager only (``ConcretizationError`` under ``tf.jit``).

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.flatnonzero(tf.asarray([[0, 3], [4, 0]])).tolist()
    [1, 2]
    """
    return _out(np.flatnonzero(_host("flatnonzero", a)).astype(np.int64))


class UniqueAllResult(NamedTuple):
    """``unique_all``'s result (Array API)."""

    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    """``unique_counts``'s result (Array API)."""

    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    """``unique_inverse``'s result (Array API)."""

    values: Tensor
    inverse_indices: Tensor


def _i64(v: np.ndarray) -> Tensor:
    return _out(np.asarray(v).astype(np.int64))


def _values_at(
    x: ArrayLike, values: np.ndarray, index: np.ndarray, axis: int | None = None
) -> Tensor:
    """The unique values as a tensor. For a float or complex tensor ``x`` they are gathered from
    ``x`` at the first-occurrence ``index`` (of the flattened ``x``, or along ``axis``), so they
    stay tracked and differentiable, as ``jax.numpy.unique``'s values; otherwise the host's."""
    if isinstance(x, Tensor) and x.dtype.kind in "fc":
        return take(ravel(x) if axis is None else x, _i64(index), axis=0 if axis is None else axis)
    return _out(values)


def _source_index(v: np.ndarray, values: np.ndarray, inverse: np.ndarray) -> np.ndarray:
    """For each unique value, the first position in the flattened ``v`` holding exactly its bits
    (``-0.0`` and ``0.0`` share a group, so the first member need not be the one NumPy reports),
    so that gathering there gives NumPy's values bit for bit."""
    flat = np.ascontiguousarray(v).reshape(-1)
    values = np.ascontiguousarray(values)
    inverse = inverse.reshape(-1)
    if flat.dtype.kind != "c":
        raw = flat.view(f"u{flat.dtype.itemsize}") if flat.dtype.kind == "f" else flat
        want = values.view(raw.dtype) if values.dtype.kind == "f" else values
    if flat.dtype.kind == "c":  # two parts per element: compare both
        raw = flat.view(f"u{flat.dtype.itemsize // 2}").reshape(-1, 2)
        want = values.view(raw.dtype).reshape(-1, 2)
        match = (raw == want[inverse]).all(axis=1)
    else:
        match = raw == want[inverse]
    index = np.full(values.shape[0], flat.size, np.int64)
    np.minimum.at(index, inverse[match], np.nonzero(match)[0])
    return index


def unique_all(x: ArrayLike, /) -> UniqueAllResult:
    """Sorted unique values with first indices, inverse indices and counts, as the Array API's
    ``unique_all`` (``numpy.unique_all``): NaNs are distinct, ``-0.0 == 0.0``.

    Eager only: the number of unique values depends on the data (``ConcretizationError`` under
    ``tf.jit``); computed on the host; the values of a float or complex tensor are gathered from it
    (tracked, differentiable; the indices, inverse and counts are not).

    Parameters
    ----------
    x : Tensor or array_like
        Any shape (flattened).

    Returns
    -------
    UniqueAllResult
        ``values`` (``x``'s dtype, 1-D, sorted), ``indices`` (int64, first occurrence in the
        flattened ``x``), ``inverse_indices`` (int64, ``x``'s shape), ``counts`` (int64).

    Raises
    ------
    ConcretizationError
        On a tensor traced by ``tf.jit``.

    Examples
    --------
    >>> import tenferro as tf
    >>> r = tf.unique_all(tf.asarray([3, 1, 3]))
    >>> r.values.tolist(), r.indices.tolist(), r.inverse_indices.tolist(), r.counts.tolist()
    ([1, 3], [1, 0], [1, 0, 1], [1, 2])
    """
    v = _host("unique_all", x)
    r = np.unique_all(v)
    values = _values_at(x, r.values, _source_index(v, r.values, r.inverse_indices))
    return UniqueAllResult(
        values, _i64(r.indices), _i64(r.inverse_indices.reshape(v.shape)), _i64(r.counts)
    )


def unique_counts(x: ArrayLike, /) -> UniqueCountsResult:
    """Sorted unique values and their counts, as the Array API's ``unique_counts`` (see
    :func:`unique_all`).

    Examples
    --------
    >>> import tenferro as tf
    >>> r = tf.unique_counts(tf.asarray([3, 1, 3]))
    >>> r.values.tolist(), r.counts.tolist()
    ([1, 3], [1, 2])
    """
    v = _host("unique_counts", x)
    r = np.unique_inverse(v)
    counts = np.bincount(r.inverse_indices.reshape(-1), minlength=r.values.shape[0])
    return UniqueCountsResult(
        _values_at(x, r.values, _source_index(v, r.values, r.inverse_indices)), _i64(counts)
    )


def unique_inverse(x: ArrayLike, /) -> UniqueInverseResult:
    """Sorted unique values and the inverse indices (``x``'s shape) that rebuild ``x``, as the
    Array API's ``unique_inverse`` (see :func:`unique_all`).

    Examples
    --------
    >>> import tenferro as tf
    >>> r = tf.unique_inverse(tf.asarray([[3, 1], [3, 3]]))
    >>> r.values.tolist(), r.inverse_indices.tolist()
    ([1, 3], [[1, 0], [1, 1]])
    """
    v = _host("unique_inverse", x)
    r = np.unique_inverse(v)
    return UniqueInverseResult(
        _values_at(x, r.values, _source_index(v, r.values, r.inverse_indices)),
        _i64(r.inverse_indices.reshape(v.shape)),
    )


def unique_values(x: ArrayLike, /) -> Tensor:
    """Sorted unique values (1-D), as the Array API's ``unique_values`` (see :func:`unique_all`).

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.unique_values(tf.asarray([3.0, 1.0, 3.0])).tolist()
    [1.0, 3.0]
    """
    v = _host("unique_values", x)
    r = np.unique_inverse(v)
    return _values_at(x, r.values, _source_index(v, r.values, r.inverse_indices))


def unique(
    ar: ArrayLike,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
    *,
    equal_nan: bool = True,
) -> Any:
    """Sorted unique elements, as ``numpy.unique`` (NumPy 2 semantics, ``equal_nan=True``
    collapsing NaNs by default).

    Eager only (``ConcretizationError`` under ``tf.jit``); computed on the host with
    ``numpy.unique``; the values of a float or complex tensor are gathered from it (tracked,
    differentiable).

    Parameters
    ----------
    ar : Tensor or array_like
    return_index, return_inverse, return_counts : bool
        Also return the first indices, the inverse indices and the counts (int64).
    axis : int or None
        Unique sub-arrays along this axis; ``None`` flattens.
    equal_nan : bool

    Returns
    -------
    Tensor or tuple of Tensor
        The unique values, followed by the requested extras in NumPy's order.

    Raises
    ------
    AxisError
        If ``axis`` is out of range.
    ConcretizationError
        On a tensor traced by ``tf.jit``.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.unique(tf.asarray([2, 1, 2])).tolist()
    [1, 2]
    >>> [t.tolist() for t in tf.unique(tf.asarray([2, 1, 2]), return_counts=True)]
    [[1, 2], [1, 2]]
    """
    v = _host("unique", ar)
    if axis is not None:
        (axis,) = _normalize_axes("unique", axis, v.ndim)
    r = np.unique(
        v,
        return_index=True,
        return_inverse=True,
        return_counts=return_counts,
        axis=axis,
        equal_nan=equal_nan,
    )
    source = r[1] if axis is not None else _source_index(v, r[0], r[2])
    values = _values_at(ar, r[0], source, axis)
    extras = [r[1]] if return_index else []
    extras += [r[2]] if return_inverse else []
    extras += list(r[3:])
    return (values, *(_i64(e) for e in extras)) if extras else values

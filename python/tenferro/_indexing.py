"""NumPy advanced indexing on tensors (lowered to ``gather``) and functional updates
``t.at[index].set(v)`` / ``.add(v)`` (lowered to ``scatter``).

Basic indexing (ints, slices, ``None``, ``...``) is done by ``Tensor.__getitem__`` in Rust (the
eager core lowers it to the ``reverse``/``slice``/``reshape`` primitives, which are views and are
recorded on tracked tensors). Any other key comes here (:func:`advanced_getitem`), with NumPy 2's semantics:

* integer arrays (NumPy arrays, integer tensors, nested lists) are broadcast together; negative
  entries count from the end; an out-of-range entry raises ``IndexError`` with NumPy's message;
* a boolean mask of ``k`` dimensions is turned into ``k`` integer arrays by ``numpy.nonzero`` on
  the host; a boolean scalar adds an axis of length 1 (``True``) or 0 (``False``);
* integer scalars next to arrays count as advanced indices (0-d arrays);
* under ``tf.jit`` index arrays and masks must be concrete (NumPy arrays, captured tensors): a
  traced mask has a data-dependent output shape and traced indices are bounds-checked on their
  values, so both raise ``ConcretizationError`` naming the indexing (``tf.where`` and
  ``tf.take(..., mode="clip"/"wrap")`` trace);
* the broadcast index axes replace the indexed axes in place when all advanced indices are
  adjacent in the key, else they go first (NumPy's rule, where ``None``, a slice or even an empty
  ``...`` between them separates them).

The lowering: the basic part of the key (slices, ``None``, ints; advanced positions replaced by
``:``) makes a view; one ``gather`` then picks the index points on the advanced axes and takes
whole windows of the other axes, so a large slice does not become a large index array.

Tensors are immutable; ``t.at[key]`` names the selected elements for a functional update that
returns a new tensor (as in JAX). The selection follows the same NumPy rules (it is computed by
NumPy on index grids, so out-of-range indices raise NumPy's ``IndexError``); the updates are
cast to ``t.dtype`` and broadcast to the selection's shape.

Examples
--------
>>> import numpy as np, tenferro as tf
>>> x = tf.asarray(np.arange(12).reshape(3, 4))
>>> x[[2, 0], 1:3].tolist()
[[9, 10], [1, 2]]
>>> x[x > 8].tolist()
[9, 10, 11]
>>> x.at[0, [1, 1, 3]].add(10).tolist()[0]
[0, 21, 2, 13]
>>> x.at[:, 0].set(-1).tolist()
[[-1, 1, 2, 3], [-1, 5, 6, 7], [-1, 9, 10, 11]]
"""

from __future__ import annotations

import math
import operator
import warnings
from typing import Any

import numpy as np

from . import prim as _p
from ._factories import _stack_tracked, _tracked_in
from ._numpy_api._common import _to_dtype
from ._numpy_api.indexing import _empty_like_result, _take_gather
from ._numpy_api.layout import broadcast_to, reshape
from ._tenferro import Tensor, _register_hooks
from ._types import GatherConfig, ScatterConfig
from .errors import ShapeError

__all__ = ["advanced_getitem", "IndexUpdateHelper", "IndexUpdateRef", "at"]

_INVALID = (
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
    "boolean arrays are valid indices"
)


# ---------------------------------------------------------------------------------------------
# Key normalisation
# ---------------------------------------------------------------------------------------------


def _is_int_scalar(item: Any) -> bool:
    if isinstance(item, (bool, np.bool_)):
        return False
    if isinstance(item, (int, np.integer)):
        return True
    return False


def _as_index_array(item: Any) -> np.ndarray:
    """An integer or boolean index array from a tensor, an ndarray or a nested sequence."""
    if isinstance(item, Tensor):
        if item._traced:
            raise _traced_index_error(item)
        arr = np.asarray(item)
    elif isinstance(item, np.ndarray):
        arr = item
    else:
        try:
            arr = np.asarray(item)
        except ValueError:
            raise IndexError(_INVALID) from None
        if arr.dtype.kind == "f" and arr.size == 0:
            arr = arr.astype(np.intp)  # an empty list indexes nothing (NumPy: intp)
    if arr.dtype.kind not in "iub":
        raise IndexError(f"{_INVALID} (got an array of dtype {arr.dtype})")
    return arr


def _traced_index_error(item: Tensor) -> Exception:
    """The ``ConcretizationError`` of a tensor index traced by ``tf.jit`` (``TracerLeakError``
    for a leaked one): a boolean mask selects a data-dependent number of elements; integer
    indices are bounds-checked on their values (``IndexError``), which the clamping ``gather``
    of a traced index would not do."""
    if item.dtype == np.bool_:
        return item._value_error(
            "boolean mask indexing x[mask]",
            "boolean mask indexing has a data-dependent output shape (the number of true "
            "elements), which a traced program cannot have. Use tf.where(mask, x, fill) to keep "
            "the shape (e.g. tf.where(mask, x, 0).sum() for a masked sum), or run the function "
            "without tf.jit",
        )
    return item._value_error(
        "integer-array indexing x[idx]",
        "indexing with a tensor reads the indices for its bounds check (IndexError) and for "
        "negative indices, and a traced tensor has no values. Use tf.take(x, idx, axis=..., "
        'mode="clip") or mode="wrap", which trace (out-of-range indices are clamped or wrapped '
        "instead of raising), pass the indices as a concrete array or a static argument, or run "
        "the function without tf.jit",
    )


def _host_key(key: Any) -> Any:
    """The key with tensors replaced by NumPy arrays (for NumPy's own indexing)."""
    items = key if isinstance(key, tuple) else (key,)
    for k in items:
        if isinstance(k, Tensor) and k._traced:
            raise _traced_index_error(k)
    out = tuple(np.asarray(k) if isinstance(k, Tensor) else k for k in items)
    return out if isinstance(key, tuple) else out[0]


class _Plan:
    """The lowering of an advanced-indexing key for a tensor of a given shape.

    ``basic`` is the basic key (a view); ``arrays`` the normalised (non-negative) index arrays,
    each with the axis of the view it indexes (``axes``); ``batch_first`` tells whether the
    broadcast index axes go first (non-adjacent advanced indices) or at ``insert_at``.
    """

    __slots__ = ("basic", "arrays", "axes", "batch_first", "insert_at")

    def __init__(self, shape: tuple[int, ...], key: Any) -> None:
        ndim = len(shape)
        items = list(key) if isinstance(key, tuple) else [key]
        # 1. classify each entry
        entries: list[tuple[str, Any]] = []
        consumed = 0
        ellipses = 0
        for item in items:
            if item is Ellipsis:
                ellipses += 1
                entries.append(("ellipsis", None))
            elif item is None:
                entries.append(("none", None))
            elif isinstance(item, slice):
                entries.append(("slice", item))
                consumed += 1
            elif isinstance(item, (bool, np.bool_)):
                entries.append(("bool0", bool(item)))
            elif _is_int_scalar(item):
                entries.append(("int", operator.index(item)))
                consumed += 1
            elif isinstance(item, (Tensor, np.ndarray, list, tuple)):
                arr = _as_index_array(item)
                if arr.dtype.kind == "b":
                    if arr.ndim == 0:
                        entries.append(("bool0", bool(arr)))
                    else:
                        entries.append(("mask", arr))
                        consumed += arr.ndim
                elif arr.ndim == 0:
                    entries.append(("int", int(arr)))
                    consumed += 1
                else:
                    entries.append(("array", arr))
                    consumed += 1
            elif hasattr(item, "__index__") and not isinstance(item, float):
                entries.append(("int", operator.index(item)))
                consumed += 1
            else:
                raise IndexError(f"{_INVALID}, got {item!r}")
        if ellipses > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        if consumed > ndim:
            raise IndexError(
                f"too many indices for array: array is {ndim}-dimensional, but {consumed} were indexed"
            )
        # 2. the basic key, the index arrays and their axes in the view
        basic: list[Any] = []
        arrays: list[np.ndarray] = []
        axes: list[int] = []
        markers: list[bool] = []  # per key entry: advanced?
        first_advanced_at: int | None = None
        v_axis = 0  # axis of the basic view
        o_axis = 0  # axis of the original tensor
        for kind, value in entries:
            if kind == "ellipsis":
                n = ndim - consumed
                basic.extend([slice(None)] * n)
                v_axis += n
                o_axis += n
                markers.append(False)
                continue
            if kind == "none":
                basic.append(None)
                v_axis += 1
                markers.append(False)
                continue
            if kind == "slice":
                basic.append(value)
                v_axis += 1
                o_axis += 1
                markers.append(False)
                continue
            markers.append(True)
            if first_advanced_at is None:
                first_advanced_at = v_axis
            if kind == "int":
                basic.append(value)  # Rust checks the range (NumPy's IndexError)
                o_axis += 1
            elif kind == "bool0":
                basic.append(None)
                arrays.append(np.zeros(1 if value else 0, dtype=np.int64))
                axes.append(v_axis)
                v_axis += 1
            elif kind == "array":
                arrays.append(_normalised(value, shape[o_axis], o_axis))
                axes.append(v_axis)
                basic.append(slice(None))
                v_axis += 1
                o_axis += 1
            else:  # mask
                for j in range(value.ndim):
                    if value.shape[j] != shape[o_axis + j]:
                        raise IndexError(
                            f"boolean index did not match indexed array along axis {o_axis + j}; "
                            f"size of axis is {shape[o_axis + j]} but size of corresponding "
                            f"boolean axis is {value.shape[j]}"
                        )
                for nz in np.nonzero(value):
                    arrays.append(nz.astype(np.int64))
                    axes.append(v_axis)
                    basic.append(slice(None))
                    v_axis += 1
                    o_axis += 1
        runs = "".join("A" if m else "B" for m in markers).strip("B")
        self.basic = tuple(basic)
        self.arrays = arrays
        self.axes = axes
        self.batch_first = "B" in runs
        self.insert_at = first_advanced_at or 0


def _normalised(idx: np.ndarray, n: int, axis: int) -> np.ndarray:
    """Non-negative int64 indices; ``IndexError`` with NumPy's message when out of range."""
    idx = idx.astype(np.int64, copy=False)
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise IndexError(
            f"index {int(idx[bad].flat[0])} is out of bounds for axis {axis} with size {n}"
        )
    return np.where(idx < 0, idx + n, idx)


# ---------------------------------------------------------------------------------------------
# Reading: gather
# ---------------------------------------------------------------------------------------------


def advanced_getitem(t: Tensor, key: Any) -> Tensor:
    """``t[key]`` for keys with integer arrays, boolean masks or boolean scalars (NumPy 2
    semantics), called by ``Tensor.__getitem__``.

    Lowers to a basic view and one ``prim.gather`` (see the module docstring).

    Raises
    ------
    IndexError
        For an out-of-range index, a mask of the wrong shape, index arrays that do not broadcast,
        too many indices or an invalid key type (NumPy's messages).
    ConcretizationError
        Under ``tf.jit`` for a traced boolean mask (a data-dependent output shape: use
        ``tf.where``) or traced integer indices (the bounds check reads them: use
        ``tf.take(..., mode="clip")`` or ``"wrap"``). Concrete index arrays and masks (NumPy
        arrays, captured tensors) are constants of the program.
    """
    plan = _Plan(tuple(t.shape), key)
    v = t[plan.basic] if plan.basic else t
    if not plan.arrays:
        return v
    try:
        batch = np.broadcast_shapes(*(a.shape for a in plan.arrays))
    except ValueError:
        shapes = " ".join(str(a.shape) for a in plan.arrays)
        raise IndexError(
            f"shape mismatch: indexing arrays could not be broadcast together with shapes {shapes}"
        ) from None
    nb = len(batch)
    axes = plan.axes
    rest = [d for d in range(v.ndim) if d not in axes]
    out_rank = nb + len(rest)
    if plan.batch_first:
        offset_dims = tuple(range(nb, out_rank))
        before = 0
    else:
        before = sum(1 for d in rest if d < plan.insert_at)
        offset_dims = tuple(range(before)) + tuple(range(before + nb, out_rank))
    rest_sizes = [v.shape[d] for d in rest]
    out_shape = tuple(rest_sizes[:before]) + tuple(batch) + tuple(rest_sizes[before:])
    if math.prod(out_shape) == 0:
        return _empty_like_result(v, out_shape)
    indices = np.stack([np.broadcast_to(a, batch) for a in plan.arrays], axis=-1)
    cfg = GatherConfig(
        offset_dims=offset_dims,
        collapsed_slice_dims=tuple(axes),
        start_index_map=tuple(axes),
        index_vector_dim=nb,
        slice_sizes=tuple(1 if d in axes else n for d, n in enumerate(v.shape)),
    )
    return _p.gather(v, indices, cfg)


# ---------------------------------------------------------------------------------------------
# Functional updates: t.at[key].set(v) / .add(v)
# ---------------------------------------------------------------------------------------------


def _selection(shape: tuple[int, ...], key: Any) -> np.ndarray:
    """Coordinates of the elements ``x[key]`` selects in an array of ``shape``: an int64 array
    of shape ``x[key].shape + (ndim,)``. NumPy indexes one broadcast grid per axis (each a view
    of ``arange``), so its rules and its ``IndexError`` messages apply as they are."""
    host = _host_key(key)
    grids = [
        np.broadcast_to(
            np.arange(n, dtype=np.int64).reshape([-1 if i == d else 1 for i in range(len(shape))]),
            shape,
        )
        for d, n in enumerate(shape)
    ]
    if not grids:  # rank 0: only the selection's shape matters
        sel = np.zeros((), dtype=np.int64)[host]
        return np.zeros(np.shape(sel) + (0,), dtype=np.int64)
    return np.stack([np.asarray(g[host]) for g in grids], axis=-1)


def _zero(dtype: np.dtype) -> np.ndarray:
    """The additive identity that keeps signed zeros: ``-0.0 + v == v`` for every ``v``."""
    if dtype.kind == "f":
        return np.array(-0.0, dtype=dtype)
    if dtype.kind == "c":
        return np.array(complex(-0.0, -0.0), dtype=dtype)
    return np.zeros((), dtype=dtype)


class IndexUpdateRef:
    """The elements ``t[key]`` of an immutable tensor, for a functional update (``t.at[key]``).

    Each method returns a new tensor; ``t`` is unchanged.
    """

    __slots__ = ("_t", "_key")

    def __init__(self, t: Tensor, key: Any) -> None:
        self._t = t
        self._key = key

    def __repr__(self) -> str:
        return f"IndexUpdateRef(shape={tuple(self._t.shape)}, key={self._key!r})"

    def get(self) -> Tensor:
        """``t[key]``."""
        return self._t[self._key]

    def _prepare(self, method: str, values: Any) -> tuple[Tensor, np.ndarray, Any]:
        """The operand (rank >= 1), the ``(n, ndim)`` coordinates of the selected elements and
        the ``n`` update values (a tensor, or a host array adopted by the primitive), or ``None``
        when nothing is selected."""
        t = self._t
        coords = _selection(tuple(t.shape), self._key)
        sel_shape = coords.shape[:-1]
        n = math.prod(sel_shape)
        ref = None if isinstance(values, Tensor) else _tracked_in(values)
        if ref is not None:  # nested tracked tensors: stacked with AD, not copied to the host
            values = _stack_tracked(values, None, ref, f"at[...].{method}")
        if isinstance(values, Tensor):
            v: Any = values
            if values._weak and values.dtype.kind == "c" and t.dtype.kind != "c":
                # A complex Python number traced by tf.jit: its imaginary part is unknown here,
                # and NumPy refuses to drop one (see below).
                raise TypeError(
                    f"at[...]: cannot assign a complex Python number to a {t.dtype} tensor "
                    "(traced by tf.jit as a weakly typed complex scalar; convert the tensor to a "
                    "complex dtype first)"
                )
        else:
            v = np.asarray(values)
            if np.iscomplexobj(v) and t.dtype.kind != "c" and np.any(np.imag(v) != 0):
                # NumPy refuses to drop an imaginary part on assignment.
                raise TypeError(
                    f"at[...]: cannot assign complex values to a {t.dtype} tensor "
                    "(convert the tensor to a complex dtype first)"
                )
            if v.dtype != t.dtype:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
                    v = v.astype(t.dtype)
        # NumPy's assignment rule: leading length-1 axes of the value beyond the target's rank
        # are dropped, the rest broadcasts to the target's shape.
        while v.ndim > len(sel_shape) and v.shape[0] == 1:
            v = v[0]
        vshape = tuple(v.shape)
        try:
            if np.broadcast_shapes(vshape, sel_shape) != sel_shape:
                raise ValueError
        except ValueError:
            raise ShapeError(
                f"at[...].{method}: could not broadcast input array from shape {vshape} into "
                f"shape {sel_shape}"
            ) from None
        base = t if t.ndim else _p.reshape(t, (1,))
        if not t.ndim:
            coords = np.zeros(sel_shape + (1,), dtype=np.int64)
        coords = coords.reshape(n, base.ndim)
        if n == 0:
            return base, coords, None
        if isinstance(v, Tensor):
            v = _to_dtype(v, t.dtype)
            if vshape != sel_shape:
                v = broadcast_to(v, sel_shape)
            flat_v: Any = reshape(v, (n,))
        else:
            flat_v = np.broadcast_to(v, sel_shape).reshape(n)
        return base, coords, flat_v

    def _scatter(self, base: Tensor, coords: np.ndarray, flat_v: Tensor) -> Tensor:
        ndim = base.ndim
        cfg = ScatterConfig(
            update_window_dims=(),
            inserted_window_dims=tuple(range(ndim)),
            scatter_dims_to_operand_dims=tuple(range(ndim)),
            index_vector_dim=1,
        )
        out = _p.scatter(base, coords, flat_v, cfg)
        return out if self._t.ndim else _p.reshape(out, ())

    def add(self, values: Any) -> Tensor:
        """``t`` with ``values`` added at ``t[key]``; repeated indices accumulate (as
        ``numpy.add.at``).

        Lowers to ``prim.scatter`` (add). ``values`` is cast to ``t.dtype`` and broadcast to the
        shape of ``t[key]``; for bool tensors, adding is a logical or.

        Raises
        ------
        IndexError
            For an out-of-range index (NumPy's message) or an invalid key.
        ShapeError
            If ``values`` does not broadcast to the shape of ``t[key]``.
        """
        base, coords, flat_v = self._prepare("add", values)
        if flat_v is None:
            return self._t
        return self._scatter(base, coords, flat_v)

    def set(self, values: Any) -> Tensor:
        """``t`` with ``t[key]`` replaced by ``values``; at repeated indices the **last** value
        wins (deterministically).

        Lowers to ``prim.select`` (clearing the selected elements to ``-0.0``, the additive
        identity that keeps signed zeros) and ``prim.scatter`` (add) of the updates at the
        deduplicated indices, so the written values are exact. ``values`` is cast to ``t.dtype``
        and broadcast to the shape of ``t[key]``.

        Raises
        ------
        IndexError
            For an out-of-range index (NumPy's message) or an invalid key.
        ShapeError
            If ``values`` does not broadcast to the shape of ``t[key]``.
        """
        base, coords, flat_v = self._prepare("set", values)
        if flat_v is None:
            return self._t
        shape = tuple(base.shape)
        flat = (
            np.ravel_multi_index(tuple(coords.T), shape)
            if coords.size
            else np.zeros(len(coords), np.int64)
        )
        n = len(flat)
        _, first_in_reversed = np.unique(flat[::-1], return_index=True)
        if len(first_in_reversed) < n:  # duplicates: keep the last occurrence of each
            keep = np.sort(n - 1 - first_in_reversed)
            coords = coords[keep]
            flat_v = (
                flat_v[keep] if isinstance(flat_v, np.ndarray) else _take_gather(flat_v, keep, 0)
            )
        mask = np.zeros(shape, dtype=bool)
        mask[tuple(coords.T)] = True
        cleared = _p.select(mask, _zero(self._t.dtype), base)
        return self._scatter(cleared, coords, flat_v)


class IndexUpdateHelper:
    """``t.at``: index it to name the elements to update (``t.at[key].set(v)``, ``.add(v)``,
    ``.get()``); tensors are immutable, so each update returns a new tensor."""

    __slots__ = ("_t",)

    def __init__(self, t: Tensor) -> None:
        self._t = t

    def __getitem__(self, key: Any) -> IndexUpdateRef:
        return IndexUpdateRef(self._t, key)

    def __repr__(self) -> str:
        return f"IndexUpdateHelper(shape={tuple(self._t.shape)})"


def at(self: Tensor) -> IndexUpdateHelper:
    """Functional indexed updates: ``t.at[key].set(v)`` / ``.add(v)`` / ``.get()`` (as JAX).

    Examples
    --------
    >>> import tenferro as tf
    >>> t = tf.zeros(4)
    >>> t.at[[0, 0, 2]].add(1.0).tolist()
    [2.0, 0.0, 1.0, 0.0]
    >>> t.at[1:].set([7.0, 8.0, 9.0]).tolist()
    [0.0, 7.0, 8.0, 9.0]
    """
    return IndexUpdateHelper(self)


# The extension calls these back; it never imports this module (which imports it).
_register_hooks(advanced_getitem=advanced_getitem)

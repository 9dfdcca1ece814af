"""Small value types of the public API: statistics records, comparison directions, catalog rows
and the frozen, validated configurations of the structural primitives (``SliceConfig``,
``PadConfig``, ``GatherConfig``, ``ScatterConfig``, ``DotGeneralConfig``)."""

from __future__ import annotations

import enum
import operator
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import AxisError, ConcretizationError, ShapeError

__all__ = [
    "CacheStats",
    "BufferPoolStats",
    "CompareDir",
    "DotGeneralConfig",
    "GatherConfig",
    "OpInfo",
    "PadConfig",
    "ScatterConfig",
    "SliceConfig",
]


@dataclass(frozen=True, kw_only=False)
class BufferPoolStats:
    """Statistics of an engine's buffer pool (``engine.buffer_pool_stats()``).

    Attributes
    ----------
    buffers : int
        Buffers currently retained for reuse.
    retained_bytes : int
        Bytes currently retained (bytes).
    capacity_bytes : int
        Retention limit (bytes); set with ``engine.set_buffer_pool_limit``.
    hits, misses : int
        Allocations served from the pool / from the system allocator.
    live_buffers : int
        Engine buffers alive now: tensor storage this engine allocated (pool hits and misses,
        the decompositions' working memory included) and not yet dropped, whether or not it
        will return to the pool. A buffer exported to NumPy or DLPack stays live while
        exported. Tensors wrapping foreign memory (NumPy arrays read in place) are not counted.
    peak_live_buffers : int
        The most ``live_buffers`` at any time since the engine was built or
        ``engine.reset_peak_memory_stats()`` was called.
    live_bytes : int
        Bytes of the live buffers (bytes: the sizes requested, without the 64-byte alignment
        padding), as ``torch.cuda.memory_allocated()``.
    peak_live_bytes : int
        The most ``live_bytes`` at any time since the engine was built or
        ``engine.reset_peak_memory_stats()`` was called (bytes): as
        ``torch.cuda.max_memory_allocated()``. Memory the kernels use outside tensor storage
        (small per-thread packing buffers of the GEMM, sort scratch) is not counted.
    """

    buffers: int
    retained_bytes: int
    capacity_bytes: int
    hits: int
    misses: int
    live_buffers: int = 0
    peak_live_buffers: int = 0
    live_bytes: int = 0
    peak_live_bytes: int = 0


@dataclass(frozen=True)
class CacheStats:
    """Statistics of an engine's prepared-plan cache (``engine.cache_stats()``).

    Attributes
    ----------
    entries : int
        Plans currently cached.
    retained_bytes : int
        Approximate bytes held by the cached plans (bytes).
    hits, misses : int
        Lookups served from the cache / that built a plan.
    evictions : int
        Plans evicted to respect the capacity (least recently used first).
    clears : int
        Calls to ``engine.clear_caches()``.
    """

    entries: int
    retained_bytes: int
    hits: int
    misses: int
    evictions: int
    clears: int


class CompareDir(enum.Enum):
    """Direction of the ``compare`` primitive (StableHLO ``ComparisonDirection``)."""

    EQ = "EQ"
    NE = "NE"
    LT = "LT"
    LE = "LE"
    GT = "GT"
    GE = "GE"


@dataclass(frozen=True)
class OpInfo:
    """One row of the primitive catalog (``tf.prim.CATALOG``).

    Attributes
    ----------
    name : str
        Primitive name (StableHLO vocabulary).
    arity : int
        Number of tensor operands (``-1``: variadic).
    family : str
        ``unary``, ``binary``, ``ternary``, ``conversion``, ``layout``, ``slicing``,
        ``indexing``, ``matrix_structure``, ``reduction`` or ``contraction``.
    dtypes : tuple of numpy.dtype
        Admitted dtypes of the (promoted) data operands.
    implemented : bool
        Whether the CPU engine has a kernel for it in this release.
    """

    name: str
    arity: int
    family: str
    dtypes: tuple[np.dtype, ...]
    implemented: bool


# ---------------------------------------------------------------------------------------------
# Configurations of the structural primitives (StableHLO dimension numbers)
# ---------------------------------------------------------------------------------------------


def _ints(cls: str, field: str, value: Any) -> tuple[int, ...]:
    """``value`` as a tuple of Python ints (``TypeError`` for anything else)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"{cls}: {field} must be a sequence of ints, got {value!r}")
    out = []
    for v in value:
        if isinstance(v, (bool, np.bool_)):
            raise TypeError(f"{cls}: {field} must hold ints, got {value!r}")
        try:
            out.append(operator.index(v))
        except ConcretizationError:
            raise  # a traced tensor (tf.jit) as a parameter: its value is unknown while tracing
        except TypeError:
            raise TypeError(f"{cls}: {field} must hold ints, got {value!r}") from None
    return tuple(out)


def _int(cls: str, field: str, value: Any) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{cls}: {field} must be an int, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{cls}: {field} must be an int, got {value!r}") from None


def _set_ints(obj: Any, *fields: str) -> None:
    """Normalise the named fields of a frozen dataclass to tuples of ints."""
    cls = type(obj).__name__
    for f in fields:
        object.__setattr__(obj, f, _ints(cls, f, getattr(obj, f)))


def _check_dims(
    cls: str,
    field: str,
    dims: tuple[int, ...],
    *,
    sorted_: bool = False,
    given: tuple[int, ...] | None = None,
) -> None:
    """Dimension numbers: unique and (StableHLO) sometimes sorted. Negative entries count from
    the end of the rank they index (``ops.md``: one rule for every axis parameter of a
    primitive); a config does not know that rank, so fields holding negative entries are
    checked at the call, after normalisation."""
    if any(d < 0 for d in dims):
        return
    shown = dims if given is None else given
    seen: set[int] = set()
    for d in dims:
        if d in seen:
            raise AxisError(f"{cls}: {field} {shown} repeats dimension {d}")
        seen.add(d)
    if sorted_ and list(dims) != sorted(dims):
        raise AxisError(f"{cls}: {field} {shown} must be sorted in increasing order (StableHLO)")


def _check_disjoint(
    cls: str, field_a: str, a: tuple[int, ...], field_b: str, b: tuple[int, ...]
) -> None:
    if any(d < 0 for d in a + b):
        return  # checked at the call, once the operand's rank normalises the negative entries
    common = sorted(set(a) & set(b))
    if common:
        raise AxisError(f"{cls}: dimension {common[0]} is in both {field_a} {a} and {field_b} {b}")


def _check_same_length(cls: str, **fields: tuple[int, ...]) -> None:
    lengths = {name: len(v) for name, v in fields.items()}
    if len(set(lengths.values())) > 1:
        described = " and ".join(f"{name} {v} (length {len(v)})" for name, v in fields.items())
        raise ShapeError(f"{cls}: {described} must have equal lengths")


@dataclass(frozen=True, kw_only=True)
class SliceConfig:
    """Static slice of the ``slice`` primitive (StableHLO ``slice``).

    Output axis ``i`` takes the input elements ``starts[i], starts[i] + strides[i], ...`` below
    ``limits[i]``, so its length is ``ceil((limits[i] - starts[i]) / strides[i])``.

    Parameters
    ----------
    starts, limits : sequence of int
        One entry per input axis, ``0 <= starts[i] <= limits[i]``; ``limits[i] <= shape[i]`` is
        checked by the primitive, which knows the shape.
    strides : sequence of int or None
        Steps, each ``>= 1``; ``None`` means all ones (stored as a tuple of ones).

    Raises
    ------
    ShapeError
        If the lengths differ, a start is negative or above its limit, or a stride is below 1.
    TypeError
        If an entry is not an int.

    Examples
    --------
    >>> import tenferro as tf
    >>> cfg = tf.SliceConfig(starts=[0, 1], limits=[3, 4])
    >>> cfg
    SliceConfig(starts=(0, 1), limits=(3, 4), strides=(1, 1))
    >>> cfg == tf.SliceConfig(starts=(0, 1), limits=(3, 4), strides=(1, 1))
    True
    >>> tf.prim.slice(tf.asarray([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]), cfg).tolist()
    [[2, 3, 4], [6, 7, 8], [10, 11, 12]]
    """

    starts: tuple[int, ...]
    limits: tuple[int, ...]
    strides: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        cls = "SliceConfig (slice)"
        if self.strides is None:
            object.__setattr__(self, "strides", (1,) * len(_ints(cls, "starts", self.starts)))
        _set_ints(self, "starts", "limits", "strides")
        _check_same_length(cls, starts=self.starts, limits=self.limits, strides=self.strides)
        for i, (s, l, k) in enumerate(zip(self.starts, self.limits, self.strides)):
            if s < 0:
                raise ShapeError(
                    f"{cls}: starts {self.starts} holds the negative start {s} (axis {i})"
                )
            if s > l:
                raise ShapeError(
                    f"{cls}: start {s} is above limit {l} on axis {i} "
                    f"(starts {self.starts}, limits {self.limits})"
                )
            if k < 1:
                raise ShapeError(
                    f"{cls}: stride {k} on axis {i} must be >= 1 (strides {self.strides})"
                )


@dataclass(frozen=True, kw_only=True)
class PadConfig:
    """Padding of the ``pad`` primitive (StableHLO ``pad`` with a zero padding value).

    Axis ``i`` of length ``d`` becomes ``low + d + max(d - 1, 0) * interior + high`` long:
    ``interior`` zeros between neighbours, ``low`` zeros before and ``high`` after; a negative
    ``low``/``high`` removes that many elements from the edge instead.

    Parameters
    ----------
    edge_padding_low, edge_padding_high : sequence of int
        One entry per axis; negatives crop.
    interior_padding : sequence of int
        One entry per axis, each ``>= 0``.

    Raises
    ------
    ShapeError
        If the three lengths differ or an interior padding is negative.
    TypeError
        If an entry is not an int.

    Examples
    --------
    >>> import tenferro as tf
    >>> cfg = tf.PadConfig(edge_padding_low=[1], edge_padding_high=[-1], interior_padding=[1])
    >>> tf.prim.pad(tf.asarray([1, 2, 3]), cfg).tolist()
    [0, 1, 0, 2, 0]
    """

    edge_padding_low: tuple[int, ...]
    edge_padding_high: tuple[int, ...]
    interior_padding: tuple[int, ...]

    def __post_init__(self) -> None:
        cls = "PadConfig (pad)"
        _set_ints(self, "edge_padding_low", "edge_padding_high", "interior_padding")
        _check_same_length(
            cls,
            edge_padding_low=self.edge_padding_low,
            edge_padding_high=self.edge_padding_high,
            interior_padding=self.interior_padding,
        )
        for i, p in enumerate(self.interior_padding):
            if p < 0:
                raise ShapeError(
                    f"{cls}: interior_padding {self.interior_padding} holds the negative value {p} "
                    f"(axis {i})"
                )


@dataclass(frozen=True, kw_only=True)
class GatherConfig:
    """Dimension numbers of the ``gather`` primitive (StableHLO ``gather``, without
    ``operand_batching_dims``).

    Each index vector (the axis ``index_vector_dim`` of ``indices``; equal to ``indices.ndim``
    for an implicit trailing axis of length 1) gives the starts, in the operand axes
    ``start_index_map``, of a window of shape ``slice_sizes``; starts are clamped so that the
    window fits. The window axes ``collapsed_slice_dims`` (of size 1) are dropped; the others
    become the output axes ``offset_dims``, and the remaining output axes are the batch axes of
    ``indices``, in order.

    Parameters
    ----------
    offset_dims : sequence of int
        Output axes of the window, sorted, unique; ``len(offset_dims) + len(collapsed_slice_dims)
        == len(slice_sizes)``.
    collapsed_slice_dims : sequence of int
        Operand axes dropped from the window (sorted, unique, ``< len(slice_sizes)``, window size
        at most 1).
    start_index_map : sequence of int
        Operand axis of each entry of an index vector (unique, ``< len(slice_sizes)``).
    index_vector_dim : int
        Axis of ``indices`` holding the index vectors: ``-indices.ndim <= index_vector_dim <=
        indices.ndim`` (negative counts from the end; ``indices.ndim`` is an implicit trailing axis).
    slice_sizes : sequence of int
        Window size on each operand axis (``>= 0``; one entry per operand axis).

    Raises
    ------
    AxisError
        For a repeated or unsorted dimension, or one beyond ``len(slice_sizes)`` (negative operand
        dimensions count from the end: the operand's rank is ``len(slice_sizes)``).
    ShapeError
        For inconsistent counts or a collapsed window size above 1.
    TypeError
        If an entry is not an int.

    Examples
    --------
    Rows 2 and 0 of a matrix (``numpy.take(x, [2, 0], axis=0)``):

    >>> import numpy as np, tenferro as tf
    >>> cfg = tf.GatherConfig(offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0],
    ...                       index_vector_dim=1, slice_sizes=[1, 2])
    >>> x = tf.asarray([[1, 2], [3, 4], [5, 6]])
    >>> tf.prim.gather(x, tf.asarray([[2], [0]]), cfg).tolist()
    [[5, 6], [1, 2]]
    """

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    index_vector_dim: int
    slice_sizes: tuple[int, ...]

    def __post_init__(self) -> None:
        cls = "GatherConfig (gather)"
        _set_ints(self, "offset_dims", "collapsed_slice_dims", "start_index_map", "slice_sizes")
        object.__setattr__(
            self, "index_vector_dim", _int(cls, "index_vector_dim", self.index_vector_dim)
        )
        # The operand's rank is len(slice_sizes): its dimension numbers normalise here.
        for field in ("collapsed_slice_dims", "start_index_map"):
            dims = getattr(self, field)
            rank = len(self.slice_sizes)
            wrong = [d for d in dims if d < -rank]
            if wrong:
                raise AxisError(
                    f"{cls}: {field} {dims} names operand dimension {wrong[0]}, but slice_sizes "
                    f"{self.slice_sizes} has {rank} entries (one per operand dimension)"
                )
            normal = tuple(d + rank if d < 0 else d for d in dims)
            # Checked on the normalised entries, quoted as given.
            _check_dims(cls, field, normal, sorted_=field == "collapsed_slice_dims", given=dims)
            object.__setattr__(self, field, normal)
        _check_dims(cls, "offset_dims", self.offset_dims, sorted_=True)
        negative = [s for s in self.slice_sizes if s < 0]
        if negative:
            raise ShapeError(
                f"{cls}: slice_sizes {self.slice_sizes} holds the negative size {negative[0]}"
            )
        rank = len(self.slice_sizes)
        for field in ("collapsed_slice_dims", "start_index_map"):
            dims = getattr(self, field)
            beyond = [d for d in dims if d >= rank]
            if beyond:
                raise AxisError(
                    f"{cls}: {field} {dims} names operand dimension {beyond[0]}, but slice_sizes "
                    f"{self.slice_sizes} has {rank} entries (one per operand dimension)"
                )
        if len(self.offset_dims) + len(self.collapsed_slice_dims) != rank:
            raise ShapeError(
                f"{cls}: len(offset_dims {self.offset_dims}) + len(collapsed_slice_dims "
                f"{self.collapsed_slice_dims}) must equal len(slice_sizes {self.slice_sizes}) = {rank}"
            )
        for d in self.collapsed_slice_dims:
            if self.slice_sizes[d] > 1:
                raise ShapeError(
                    f"{cls}: collapsed dimension {d} has slice size {self.slice_sizes[d]} "
                    f"(must be 0 or 1; slice_sizes {self.slice_sizes})"
                )


@dataclass(frozen=True, kw_only=True)
class ScatterConfig:
    """Dimension numbers of the ``scatter`` primitive (StableHLO ``scatter`` with an *add*
    combiner, without ``input_batching_dims``).

    Each index vector of ``indices`` (axis ``index_vector_dim``; ``indices.ndim`` for an implicit
    trailing axis of length 1) gives the starts, in the operand axes
    ``scatter_dims_to_operand_dims``, of the window into which the matching update window is
    added. ``update_window_dims`` are the window axes of ``updates``; the operand axes
    ``inserted_window_dims`` have window size 1 and no axis in ``updates``. Duplicate indices
    accumulate; a window that would leave the operand is skipped as a whole.

    Parameters
    ----------
    update_window_dims : sequence of int
        Axes of ``updates`` that are window axes (sorted, unique).
    inserted_window_dims : sequence of int
        Operand axes with an implicit window of size 1 (sorted, unique).
    scatter_dims_to_operand_dims : sequence of int
        Operand axis of each entry of an index vector (unique).
    index_vector_dim : int
        Axis of ``indices`` holding the index vectors: ``-indices.ndim <= index_vector_dim <=
        indices.ndim`` (negative counts from the end; ``indices.ndim`` is an implicit trailing axis).

    Raises
    ------
    AxisError
        For a repeated or unsorted dimension. Negative entries count from the end of the rank
        they index and are checked when ``scatter`` is called.
    TypeError
        If an entry is not an int.

    Examples
    --------
    Add ``[10, 20]`` to rows 0 and 2 of a matrix:

    >>> import tenferro as tf
    >>> cfg = tf.ScatterConfig(update_window_dims=[1], inserted_window_dims=[0],
    ...                        scatter_dims_to_operand_dims=[0], index_vector_dim=1)
    >>> x = tf.zeros((3, 2), dtype="int64")
    >>> tf.prim.scatter(x, tf.asarray([[0], [2], [0]]), tf.asarray([[1, 2], [3, 4], [5, 6]]), cfg).tolist()
    [[6, 8], [0, 0], [3, 4]]
    """

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    index_vector_dim: int

    def __post_init__(self) -> None:
        cls = "ScatterConfig (scatter)"
        _set_ints(
            self, "update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims"
        )
        object.__setattr__(
            self, "index_vector_dim", _int(cls, "index_vector_dim", self.index_vector_dim)
        )
        _check_dims(cls, "update_window_dims", self.update_window_dims, sorted_=True)
        _check_dims(cls, "inserted_window_dims", self.inserted_window_dims, sorted_=True)
        _check_dims(cls, "scatter_dims_to_operand_dims", self.scatter_dims_to_operand_dims)


@dataclass(frozen=True, kw_only=True)
class DotGeneralConfig:
    """Dimension numbers of ``dot_general`` (StableHLO ``dot_general``).

    ``lhs_contracting_dims[i]`` of ``lhs`` is summed against ``rhs_contracting_dims[i]`` of
    ``rhs``; ``lhs_batch_dims[i]`` and ``rhs_batch_dims[i]`` are paired element-wise. The output
    axes are ``[lhs free..., rhs free..., batch...]`` (batch **last**, tenferro-rs), free axes in
    their original order.

    Parameters
    ----------
    lhs_contracting_dims, rhs_contracting_dims : sequence of int
        Equal counts; unique within an operand.
    lhs_batch_dims, rhs_batch_dims : sequence of int
        Equal counts (default none); disjoint from the operand's contracting dimensions.

    Raises
    ------
    AxisError
        For a repeated dimension, or one that is both batch and contracting. Negative entries
        count from the end of the operand's rank and are checked when ``dot_general`` is called.
    ShapeError
        If the lhs and rhs counts differ.
    TypeError
        If an entry is not an int.

    Examples
    --------
    A batched matrix product with the batch axis first in the inputs and last in the output:

    >>> import numpy as np, tenferro as tf
    >>> cfg = tf.DotGeneralConfig(lhs_contracting_dims=[2], rhs_contracting_dims=[1],
    ...                           lhs_batch_dims=[0], rhs_batch_dims=[0])
    >>> a, b = np.ones((5, 2, 3)), np.ones((5, 3, 4))
    >>> tf.prim.dot_general(tf.asarray(a), tf.asarray(b), cfg).shape
    (2, 4, 5)
    """

    lhs_contracting_dims: tuple[int, ...]
    rhs_contracting_dims: tuple[int, ...]
    lhs_batch_dims: tuple[int, ...] = ()
    rhs_batch_dims: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        cls = "DotGeneralConfig (dot_general)"
        _set_ints(
            self, "lhs_contracting_dims", "rhs_contracting_dims", "lhs_batch_dims", "rhs_batch_dims"
        )
        for field in (
            "lhs_contracting_dims",
            "rhs_contracting_dims",
            "lhs_batch_dims",
            "rhs_batch_dims",
        ):
            _check_dims(cls, field, getattr(self, field))
        _check_disjoint(
            cls,
            "lhs_batch_dims",
            self.lhs_batch_dims,
            "lhs_contracting_dims",
            self.lhs_contracting_dims,
        )
        _check_disjoint(
            cls,
            "rhs_batch_dims",
            self.rhs_batch_dims,
            "rhs_contracting_dims",
            self.rhs_contracting_dims,
        )
        _check_same_length(
            cls,
            lhs_contracting_dims=self.lhs_contracting_dims,
            rhs_contracting_dims=self.rhs_contracting_dims,
        )
        _check_same_length(
            cls, lhs_batch_dims=self.lhs_batch_dims, rhs_batch_dims=self.rhs_batch_dims
        )

"""Small value types of the public API: statistics records, comparison directions, catalog rows."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

__all__ = ["BufferPoolStats", "CompareDir", "OpInfo"]


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
    """

    buffers: int
    retained_bytes: int
    capacity_bytes: int
    hits: int
    misses: int


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

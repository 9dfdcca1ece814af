"""NumPy in: normalise any array-like into an ndarray the core can read (supported dtype,
native byte order, element-aligned)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import DTypeError

SUPPORTED = tuple(
    np.dtype(n) for n in ("bool", "int32", "int64", "float32", "float64", "complex64", "complex128")
)
_SUPPORTED_NAMES = ", ".join(d.name for d in SUPPORTED)


def as_supported_ndarray(
    obj: Any, dtype: Any = None, copy: bool | None = None, op: str = "asarray"
) -> np.ndarray:
    """``obj`` as an ndarray of a supported dtype in native byte order.

    ``copy=False`` never copies (``ValueError`` when impossible); ``None``/``True`` may.
    Unsupported dtypes raise :class:`tenferro.errors.DTypeError` naming the supported set.
    """
    if copy is False:
        arr = np.asarray(obj, dtype=dtype, copy=False)
    else:
        arr = np.asarray(obj, dtype=dtype)
    if arr.dtype.newbyteorder("=") not in SUPPORTED:
        raise DTypeError(f"{op}: unsupported dtype {arr.dtype} (supported: {_SUPPORTED_NAMES})")
    if not arr.dtype.isnative:
        if copy is False:
            raise ValueError(f"{op}: copy=False cannot share memory in non-native byte order")
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if not arr.flags.aligned:
        if copy is False:
            raise ValueError(f"{op}: copy=False cannot share unaligned memory")
        arr = arr.copy()
    return arr

"""The Array API namespace information of tenferro (Array API standard, version 2024.12):
``__array_api_version__``, ``__array_namespace_info__()``, ``finfo``, ``iinfo``, ``isdtype`` and
the ``Tensor.__array_namespace__`` method (attached by :mod:`tenferro._tensor_methods`).

tenferro is a *partial adopter*: it implements the standard for its seven dtypes (``bool``,
``int32``, ``int64``, ``float32``, ``float64``, ``complex64``, ``complex128``; tensor4all's dtype
set) and not for ``int8``, ``int16`` or the unsigned integers, which
``__array_namespace_info__().dtypes()`` leaves out. dtypes are NumPy dtype objects
(python-api.md), so ``tf.float64 is np.dtype("float64")``.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from ._tenferro import Tensor
from .errors import DTypeError

__all__ = [
    "__array_api_version__",
    "__array_namespace_info__",
    "finfo",
    "iinfo",
    "isdtype",
]

__array_api_version__ = "2024.12"

#: Versions of the standard ``Tensor.__array_namespace__`` accepts (this namespace follows
#: 2024.12, which is backward compatible with the earlier revisions for what tenferro offers).
SUPPORTED_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")

_DTYPES = {
    "bool": np.dtype(np.bool_),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "float32": np.dtype(np.float32),
    "float64": np.dtype(np.float64),
    "complex64": np.dtype(np.complex64),
    "complex128": np.dtype(np.complex128),
}

# The standard's dtype kinds (``isdtype``), as predicates on NumPy dtype kinds.
_KINDS = {
    "bool": "b",
    "signed integer": "i",
    "unsigned integer": "u",
    "integral": "iu",
    "real floating": "f",
    "complex floating": "c",
    "numeric": "iufc",
}

# The namespace module, bound once by the package's ``__init__`` (the module returned by
# ``Tensor.__array_namespace__``).
_NAMESPACE: list[ModuleType] = []


def _bind_namespace(module: ModuleType) -> None:
    """Record ``module`` (the ``tenferro`` package) as the namespace ``__array_namespace__``
    returns; called once by the package's ``__init__``."""
    _NAMESPACE[:] = [module]


def _array_namespace(self: Tensor, /, *, api_version: str | None = None) -> ModuleType:
    """The Array API namespace of this tensor: the ``tenferro`` module.

    Parameters
    ----------
    api_version : str or None
        A version of the standard (``"2021.12"`` ... ``"2024.12"``); ``None`` is the latest.

    Returns
    -------
    module
        ``tenferro``.

    Raises
    ------
    ValueError
        For a version tenferro does not implement.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.asarray([1.0]).__array_namespace__() is tf
    True
    """
    if api_version is not None and api_version not in SUPPORTED_VERSIONS:
        raise ValueError(
            f"__array_namespace__: unsupported api_version {api_version!r} (tenferro implements "
            f"{', '.join(SUPPORTED_VERSIONS)})"
        )
    return _NAMESPACE[0]


def _check_device(op: str, device: Any) -> None:
    if device is not None and device != "cpu":
        raise ValueError(f"{op}: unsupported device {device!r} (tenferro's devices: ['cpu'])")


def _dtype_of(op: str, x: Any) -> np.dtype:
    """The dtype of a tensor, array or dtype-like, checked to be one of tenferro's seven."""
    if isinstance(x, (Tensor, np.ndarray)):
        dt = x.dtype
    else:
        try:
            dt = np.dtype(x)
        except TypeError:
            raise TypeError(f"{op}: expected a dtype or a tensor, got {x!r}") from None
    if dt not in _DTYPES.values():
        raise DTypeError(f"{op}: unsupported dtype {dt} (tenferro's dtypes: {', '.join(_DTYPES)})")
    return dt


def _kind_matches(op: str, dt: np.dtype, kind: Any) -> bool:
    if isinstance(kind, tuple):
        return any(_kind_matches(op, dt, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(
                f"{op}: unknown dtype kind {kind!r} (one of {', '.join(map(repr, _KINDS))})"
            )
        return dt.kind in _KINDS[kind]
    return dt == _dtype_of(op, kind)


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind``, as the Array API's ``isdtype``.

    Parameters
    ----------
    dtype : dtype-like
        One of tenferro's seven dtypes.
    kind : str, dtype or tuple
        ``"bool"``, ``"signed integer"``, ``"unsigned integer"``, ``"integral"``,
        ``"real floating"``, ``"complex floating"``, ``"numeric"``, a dtype, or a tuple of these
        (true when any matches).

    Returns
    -------
    bool

    Raises
    ------
    DTypeError
        If ``dtype`` is not one of tenferro's dtypes.
    ValueError
        For an unknown kind name.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.isdtype(tf.float64, "real floating"), tf.isdtype(tf.int32, ("bool", "integral"))
    (True, True)
    """
    if isinstance(dtype, Tensor):
        raise TypeError("isdtype: expected a dtype, got a tensor (use x.dtype)")
    return _kind_matches("isdtype", _dtype_of("isdtype", dtype), kind)


@dataclass(frozen=True)
class finfo_object:  # noqa: N801 - the standard's name
    """Machine limits of a floating-point dtype (the result of :func:`finfo`).

    Attributes
    ----------
    bits : int
        Bits of the real type (a complex dtype's real component).
    eps : float
        Difference between 1.0 and the next larger representable number.
    max, min : float
        Largest and smallest (most negative) finite numbers.
    smallest_normal : float
        Smallest positive normal number.
    dtype : numpy.dtype
        The real floating dtype these describe (``float32`` for ``complex64``).
    """

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype


@dataclass(frozen=True)
class iinfo_object:  # noqa: N801 - the standard's name
    """Machine limits of an integer dtype (the result of :func:`iinfo`).

    Attributes
    ----------
    bits : int
    max, min : int
        Largest and smallest representable values.
    dtype : numpy.dtype
    """

    bits: int
    max: int
    min: int
    dtype: np.dtype


def finfo(type: Any, /) -> finfo_object:  # noqa: A002 - the standard's name
    """Machine limits of a floating-point dtype, as the Array API's ``finfo``.

    Parameters
    ----------
    type : dtype-like or Tensor
        ``float32``, ``float64``, ``complex64`` or ``complex128``, or a tensor of one of them.

    Returns
    -------
    finfo_object
        ``bits``, ``eps``, ``max``, ``min``, ``smallest_normal`` (Python floats, NumPy's
        ``finfo`` values) and ``dtype`` (the real dtype; a complex dtype describes its
        components).

    Raises
    ------
    DTypeError
        For bool, integer or unsupported dtypes.

    Examples
    --------
    >>> import tenferro as tf
    >>> fi = tf.finfo(tf.complex64)
    >>> fi.bits, fi.eps, fi.dtype
    (32, 1.1920928955078125e-07, dtype('float32'))
    """
    dt = _dtype_of("finfo", type)
    if dt.kind not in "fc":
        raise DTypeError(
            f"finfo: expected a floating-point dtype, got {dt} (use iinfo for integers)"
        )
    f = np.finfo(dt)
    return finfo_object(
        bits=int(f.bits),
        eps=float(f.eps),
        max=float(f.max),
        min=float(f.min),
        smallest_normal=float(f.smallest_normal),
        dtype=np.dtype(f.dtype),
    )


def iinfo(type: Any, /) -> iinfo_object:  # noqa: A002 - the standard's name
    """Machine limits of an integer dtype, as the Array API's ``iinfo``.

    Parameters
    ----------
    type : dtype-like or Tensor
        ``int32`` or ``int64``, or a tensor of one of them.

    Returns
    -------
    iinfo_object
        ``bits``, ``max``, ``min`` (Python ints) and ``dtype``.

    Raises
    ------
    DTypeError
        For bool, floating, complex or unsupported dtypes.

    Examples
    --------
    >>> import tenferro as tf
    >>> ii = tf.iinfo(tf.int32)
    >>> ii.bits, ii.min, ii.max
    (32, -2147483648, 2147483647)
    """
    dt = _dtype_of("iinfo", type)
    if dt.kind not in "iu":
        raise DTypeError(
            f"iinfo: expected an integer dtype, got {dt} (use finfo for floating point)"
        )
    i = np.iinfo(dt)
    return iinfo_object(bits=int(i.bits), max=int(i.max), min=int(i.min), dtype=dt)


class ArrayNamespaceInfo:
    """Inspection of the tenferro namespace (the standard's ``__array_namespace_info__()``).

    Examples
    --------
    >>> import tenferro as tf
    >>> info = tf.__array_namespace_info__()
    >>> info.default_device(), info.devices()
    ('cpu', ['cpu'])
    >>> sorted(info.dtypes(kind="complex floating"))
    ['complex128', 'complex64']
    >>> info.default_dtypes()["real floating"]
    dtype('float64')
    """

    __module__ = "tenferro"

    def capabilities(self) -> dict[str, Any]:
        """``{"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}``:
        boolean masks and data-dependent shapes work in eager mode (not under ``tf.jit``, where
        they raise ``ConcretizationError``); the rank is not limited."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}

    def default_device(self) -> str:
        """``"cpu"``, the device of every tensor (``Tensor.device``)."""
        return "cpu"

    def devices(self) -> list[str]:
        """``["cpu"]``."""
        return ["cpu"]

    def default_dtypes(self, *, device: Any = None) -> dict[str, np.dtype]:
        """The default dtypes (as NumPy's): float64, complex128, int64, and int64 for indexing.

        Raises ``ValueError`` for a device other than ``"cpu"``."""
        _check_device("default_dtypes", device)
        return {
            "real floating": _DTYPES["float64"],
            "complex floating": _DTYPES["complex128"],
            "integral": _DTYPES["int64"],
            "indexing": _DTYPES["int64"],
        }

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, np.dtype]:
        """tenferro's dtypes of ``kind`` (every one for ``None``; a kind name as in
        :func:`isdtype`, or a tuple of names: their union), by name.

        Only the seven dtypes tenferro implements are listed (no int8/int16/unsigned).
        Raises ``ValueError`` for an unknown kind or a device other than ``"cpu"``."""
        _check_device("dtypes", device)
        if kind is None:
            return dict(_DTYPES)
        if not isinstance(kind, (str, tuple)):
            raise ValueError(
                f"dtypes: kind must be None, a kind name or a tuple of them, got {kind!r}"
            )
        if isinstance(kind, tuple) and not all(isinstance(k, str) for k in kind):
            raise ValueError(f"dtypes: kind tuples hold kind names, got {kind!r}")
        return {n: d for n, d in _DTYPES.items() if _kind_matches("dtypes", d, kind)}

    def __repr__(self) -> str:
        return "tenferro.__array_namespace_info__()"


def __array_namespace_info__() -> ArrayNamespaceInfo:
    """The namespace inspection object of the Array API standard (see
    :class:`ArrayNamespaceInfo`).

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.__array_namespace_info__().capabilities()["boolean indexing"]
    True
    """
    return ArrayNamespaceInfo()

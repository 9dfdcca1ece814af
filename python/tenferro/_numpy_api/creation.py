"""Creation functions shaped like another tensor: ``zeros_like``, ``ones_like``, ``full_like``
and ``empty_like`` (NumPy's and the Array API's)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _tenferro
from .._factories import _current_runtime, asarray
from .._tenferro import Tensor
from ._common import ArrayLike, _PY_SCALARS, _as_tensor, _shape_tuple, _to_dtype
from .layout import broadcast_to

__all__ = [
    "empty_like",
    "full_like",
    "ones_like",
    "zeros_like",
]


def _check_device(op: str, device: Any) -> None:
    if device is not None and device != "cpu":
        raise ValueError(f"{op}: unsupported device {device!r} (tenferro's devices: ['cpu'])")


def _like(
    op: str, a: ArrayLike, dtype: Any, shape: Any, device: Any
) -> tuple[Tensor, tuple[int, ...], np.dtype]:
    _check_device(op, device)
    x = a if isinstance(a, Tensor) else asarray(a)
    out_shape = tuple(x.shape) if shape is None else _shape_tuple(shape)
    out_dtype = x.dtype if dtype is None else np.dtype(dtype)
    return x, out_shape, out_dtype


def full_like(
    a: ArrayLike, fill_value: Any, dtype: Any = None, *, shape: Any = None, device: Any = None
) -> Tensor:
    """A tensor shaped like ``a`` filled with ``fill_value``, as ``numpy.full_like``.

    Only ``a``'s shape and dtype are read (never its values), so this traces under ``tf.jit``.
    The result lives in ``a``'s runtime. A tensor ``fill_value`` (tracked or traced) is
    broadcast, so gradients flow to it.

    Parameters
    ----------
    a : Tensor or array_like
    fill_value : scalar, array_like or Tensor
        Cast to the result dtype (NumPy's unsafe cast).
    dtype : dtype-like, optional
        Default: ``a.dtype``.
    shape : int or tuple of int, optional
        Overrides ``a``'s shape (NumPy's keyword).
    device : "cpu" or None
        The Array API keyword; any other device is a ``ValueError``.

    Returns
    -------
    Tensor

    Raises
    ------
    DTypeError
        For an unsupported dtype.
    ShapeError
        If a tensor ``fill_value`` does not broadcast to the shape.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.full_like(tf.asarray([[1, 2]]), 7).tolist()
    [[7, 7]]
    >>> tf.full_like(tf.asarray([1, 2]), 0.5, dtype="float64").tolist()
    [0.5, 0.5]
    """
    return _full_like("full_like", a, fill_value, dtype, shape, device)


def _full_like(
    op: str, a: ArrayLike, fill_value: Any, dtype: Any, shape: Any, device: Any
) -> Tensor:
    x, out_shape, out_dtype = _like(op, a, dtype, shape, device)
    if isinstance(fill_value, Tensor) or type(fill_value) not in _PY_SCALARS:
        v = _to_dtype(_as_tensor(fill_value), out_dtype)
        return broadcast_to(v, out_shape)
    value = np.asarray(fill_value).astype(out_dtype).item()
    rt = _current_runtime() if x._traced else x.runtime
    return _tenferro._full(list(out_shape), value, out_dtype, rt)


def zeros_like(a: ArrayLike, dtype: Any = None, *, shape: Any = None, device: Any = None) -> Tensor:
    """Zeros shaped like ``a``, as ``numpy.zeros_like`` (see :func:`full_like`).

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.zeros_like(tf.asarray([[1.5, 2.0]])).tolist()
    [[0.0, 0.0]]
    """
    return _full_like("zeros_like", a, 0, dtype, shape, device)


def ones_like(a: ArrayLike, dtype: Any = None, *, shape: Any = None, device: Any = None) -> Tensor:
    """Ones shaped like ``a``, as ``numpy.ones_like`` (see :func:`full_like`).

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.ones_like(tf.asarray([1 + 1j])).tolist()
    [(1+0j)]
    """
    return _full_like("ones_like", a, 1, dtype, shape, device)


def empty_like(a: ArrayLike, dtype: Any = None, *, shape: Any = None, device: Any = None) -> Tensor:
    """A tensor shaped like ``a``, as ``numpy.empty_like``; its values are unspecified by NumPy
    and zeros here (tensors are immutable, so an uninitialized buffer would be useless).

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.empty_like(tf.asarray([1, 2])).shape
    (2,)
    """
    return _full_like("empty_like", a, 0, dtype, shape, device)

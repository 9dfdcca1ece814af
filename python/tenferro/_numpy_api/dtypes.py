"""Dtype conversion: ``astype`` (NumPy's unsafe casting). The promotion helpers shared by every
family live in :mod:`tenferro._numpy_api._common`."""

from __future__ import annotations

from typing import Any

from .._factories import _check_device
from .._tenferro import Tensor
from ._common import ArrayLike, _as_tensor, _to_dtype

__all__ = [
    "astype",
]


def astype(x: ArrayLike, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Tensor:
    """``x`` in ``dtype`` with NumPy's unsafe casting, as ``numpy.astype`` (array API).

    Lowers to the checked primitive ``prim.convert`` when ``dtype`` is up the promotion lattice
    (exact), else to the lossy ``prim.cast`` (float to int truncates toward zero, complex to real
    drops the imaginary part, nonzero to ``True``; ops.md).

    Parameters
    ----------
    x : Tensor or array_like
        Input of any shape.
    dtype : dtype-like
        One of tenferro's seven dtypes (NumPy dtype objects or names).
    copy : bool
        Accepted for NumPy compatibility and ignored (tensors are immutable); the same dtype
        returns ``x`` itself.
    device : "cpu" or None
        The Array API keyword; any other device is a ``ValueError``.

    Returns
    -------
    Tensor
        Same shape, dtype ``dtype``.

    Raises
    ------
    DTypeError
        If ``dtype`` is not supported.
    ValueError
        For a device other than ``"cpu"``.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.astype(tf.asarray([1.7, -1.7]), "int64").tolist()
    [1, -1]
    """
    del copy
    _check_device("astype", device)
    return _to_dtype(_as_tensor(x), dtype)

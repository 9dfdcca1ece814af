"""Tensor factories. They create tensors in the innermost active session's runtime, else in
the default runtime, and always copy their input (``asarray(copy=False)`` shares NumPy memory)."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from . import _tenferro
from ._interop import as_supported_ndarray
from ._tenferro import Runtime, Tensor

__all__ = [
    "tensor",
    "asarray",
    "zeros",
    "ones",
    "full",
    "eye",
    "arange",
    "linspace",
    "from_dlpack",
]


def _current_runtime() -> Runtime:
    sessions = _tenferro._state_var().get().sessions
    if sessions:
        rt = sessions[-1].runtime
        if rt is not None:
            return rt
    return _tenferro.default_runtime()


def _shape(shape: Any) -> list[int]:
    if isinstance(shape, (int, np.integer)):
        return [int(shape)]
    return [int(d) for d in shape]


def tensor(data: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data``.

    Parameters
    ----------
    data : array_like
        Anything ``numpy.asarray`` accepts (nested lists, scalars, arrays, tensors).
    dtype : dtype-like, optional
        One of the seven supported dtypes; default: NumPy's inference.
    requires_grad : bool
        Make a tracked leaf (float/complex only; ``DTypeError`` otherwise), as ``rt.variable``.

    Returns
    -------
    Tensor
        Same shape as ``data``; compact column-major storage.

    Raises
    ------
    tenferro.errors.DTypeError
        If the dtype is not supported (the message lists the supported set).

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.tensor([[1, 2], [3, 4]]).shape
    (2, 2)
    """
    if isinstance(data, Tensor):
        data = np.asarray(data)
    arr = as_supported_ndarray(data, dtype=dtype, op="tensor")
    if requires_grad:
        from .autodiff import _variable

        return _variable(_current_runtime(), arr)
    return _tenferro._from_numpy(arr, True, _current_runtime())


def asarray(obj: Any, dtype: Any = None, copy: bool | None = None) -> Tensor:
    """Convert ``obj`` to a tensor, as ``numpy.asarray``.

    A tensor is returned as it is (cast if ``dtype`` differs). Other inputs are copied unless
    ``copy=False``, which shares the NumPy memory (writing to the array later changes the
    tensor) or raises ``ValueError`` when sharing is impossible. Any strides are accepted;
    non-native byte order is converted.

    Parameters
    ----------
    obj : array_like
    dtype : dtype-like, optional
    copy : bool or None

    Returns
    -------
    Tensor

    Raises
    ------
    tenferro.errors.DTypeError
        Unsupported dtype (e.g. ``float16``, ``uint8``, strings).
    ValueError
        ``copy=False`` and the memory cannot be shared.

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> a = np.arange(3.0)
    >>> t = tf.asarray(a, copy=False)
    >>> a[0] = 7.0
    >>> t.tolist()
    [7.0, 1.0, 2.0]
    """
    if isinstance(obj, Tensor):
        t = obj
        if dtype is not None and np.dtype(dtype) != t.dtype:
            if copy is False:
                raise ValueError(f"asarray: copy=False cannot change dtype {t.dtype} to {np.dtype(dtype)}")
            return _tenferro._implicit_session().cast(t, dtype)
        if copy:
            return t.runtime.constant(t)
        return t
    arr = as_supported_ndarray(obj, dtype=dtype, copy=copy)
    return _tenferro._from_numpy(arr, copy is not False, _current_runtime())


def from_dlpack(x: Any) -> Tensor:
    """Import a CPU DLPack-capable object (NumPy array, another library's tensor) without copy.

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> tf.from_dlpack(np.arange(3.0)).tolist()
    [0.0, 1.0, 2.0]
    """
    if isinstance(x, Tensor):
        return x
    return asarray(np.from_dlpack(x), copy=False)


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value``.

    Parameters
    ----------
    shape : int or sequence of int
    fill_value : bool, int, float or complex
    dtype : dtype-like, optional
        Default: NumPy's dtype of the Python scalar (``float64`` for floats).

    Raises
    ------
    MemoryError
        If the size overflows or cannot be allocated (never an abort).
    ValueError
        Negative dimensions.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.full((2,), 1.5).tolist()
    [1.5, 1.5]
    """
    if isinstance(fill_value, (np.generic, Tensor)):
        fill_value = np.asarray(fill_value).item()
    return _tenferro._full(_shape(shape), fill_value, dtype, _current_runtime())


def zeros(shape: Any, dtype: Any = np.float64) -> Tensor:
    """A tensor of zeros (default ``float64``); see :func:`full` for errors.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.zeros((2, 3)).shape
    (2, 3)
    """
    return _tenferro._full(_shape(shape), False, dtype, _current_runtime())


def ones(shape: Any, dtype: Any = np.float64) -> Tensor:
    """A tensor of ones (default ``float64``); see :func:`full` for errors.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.ones(3, dtype=tf.int32).tolist()
    [1, 1, 1]
    """
    return _tenferro._full(_shape(shape), True, dtype, _current_runtime())


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = np.float64) -> Tensor:
    """The ``N × M`` matrix with ones on the ``k``-th diagonal (``numpy.eye``).

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.eye(2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return tensor(np.eye(N, M, k, dtype=dtype))


def arange(*args: Any, dtype: Any = None) -> Tensor:
    """Evenly spaced values in ``[start, stop)`` (``numpy.arange``; ints → ``int64``).

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.arange(4).tolist()
    [0, 1, 2, 3]
    """
    return tensor(np.arange(*args, dtype=dtype))


def linspace(
    start: float, stop: float, num: int = 50, endpoint: bool = True, dtype: Any = None
) -> Tensor:
    """``num`` evenly spaced samples over ``[start, stop]`` (``numpy.linspace``, ``float64``).

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.linspace(0.0, 1.0, 3).tolist()
    [0.0, 0.5, 1.0]
    """
    return tensor(np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype))


_ = builtins

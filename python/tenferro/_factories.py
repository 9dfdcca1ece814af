"""Tensor factories. They create tensors in the innermost active session's runtime, else in
the default runtime, and always copy their input (``asarray(copy=False)`` shares NumPy memory)."""

from __future__ import annotations

import builtins
import contextlib
import contextvars
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import _tenferro
from ._interop import as_supported_ndarray
from ._tenferro import Runtime, Tensor
from .errors import ConcretizationError


def _check_device(op: str, device: Any) -> None:
    """The Array API's ``device=`` keyword: ``None`` or ``"cpu"`` (tenferro's one device)."""
    if device is not None and device != "cpu":
        raise ValueError(f"{op}: unsupported device {device!r} (tenferro's devices: ['cpu'])")


__all__ = [
    "tensor",
    "array",
    "asarray",
    "zeros",
    "ones",
    "empty",
    "full",
    "eye",
    "arange",
    "linspace",
    "from_dlpack",
]


# The runtime a functional transform (``tf.func``, ``tf.testing.check_grads``) records on, with
# the session depth at its entry: factories called by the transformed function build their
# constants there, unless the function opens a session of its own.
_FRAME_RUNTIME: contextvars.ContextVar[tuple[Runtime, int] | None] = contextvars.ContextVar(
    "tenferro_frame_runtime", default=None
)


@contextlib.contextmanager
def _recording_on(rt: Runtime) -> Iterator[None]:
    """Make ``rt`` the factories' runtime for the block (sessions opened inside still win)."""
    depth = len(_tenferro._state_var().get().sessions)
    token = _FRAME_RUNTIME.set((rt, depth))
    try:
        yield
    finally:
        _FRAME_RUNTIME.reset(token)


def _current_runtime() -> Runtime:
    """The factories' runtime: a transform's frame runtime (unless a session was opened inside
    it), else the one resolution rule of the extension (innermost active session, else the
    default runtime)."""
    frame = _FRAME_RUNTIME.get()
    if frame is not None and len(_tenferro._state_var().get().sessions) <= frame[1]:
        return frame[0]
    return _tenferro._current_runtime()


def _shape(shape: Any) -> list[int]:
    """A shape argument as a list of ints; non-integers (``2.5``, NaN, None) are a TypeError, as
    in NumPy (``int()`` would truncate ``2.5`` to 2 silently)."""
    import operator

    def dim(d: Any) -> int:
        if isinstance(d, (bool, np.bool_)):
            raise TypeError(f"shape entries must be integers, got {d!r}")
        try:
            n = operator.index(d)
        except ConcretizationError:
            raise  # a traced tensor (tf.jit): its values are unknown while tracing
        except TypeError:
            raise TypeError(f"shape entries must be integers, got {d!r} in {shape!r}") from None
        if n > sys.maxsize:
            raise ValueError(f"shape {shape!r}: dimension {n} exceeds the maximum {sys.maxsize}")
        return n

    if isinstance(shape, (int, np.integer)) or (isinstance(shape, Tensor) and shape.ndim == 0):
        return [dim(shape)]
    return [dim(d) for d in shape]


_PY_SCALARS = frozenset((bool, int, float, complex))


def _tracked_in(obj: Any) -> Tensor | None:
    """A tracked tensor in ``obj`` (a tensor or nested lists/tuples), else ``None``; a traced
    tensor (``tf.jit``) counts, so nested lists holding one are stacked by ops, never read
    on the host."""
    if isinstance(obj, Tensor):
        return obj if obj.requires_grad or obj._traced else None
    if not isinstance(obj, (list, tuple)):
        return None
    todo = [obj]
    while todo:
        seq = todo.pop()
        if set(map(type, seq)) <= _PY_SCALARS:  # the common flat row of numbers, at C speed
            continue
        for o in seq:
            if isinstance(o, Tensor):
                if o.requires_grad or o._traced:
                    return o
            elif isinstance(o, (list, tuple)):
                todo.append(o)
    return None


def _has_tensor(obj: Any) -> bool:
    if isinstance(obj, Tensor):
        return True
    return isinstance(obj, (list, tuple)) and builtins.any(_has_tensor(o) for o in obj)


def _host_view(obj: Any) -> Any:
    """``obj`` with every tensor replaced by its NumPy view (zero-copy), for NumPy's inference."""
    if isinstance(obj, Tensor):
        return np.asarray(obj)
    if isinstance(obj, (list, tuple)):
        return [_host_view(o) for o in obj]
    return obj


def _stack_tracked(obj: Any, dtype: Any, ref: Tensor, op: str) -> Tensor:
    """Nested lists/tuples holding tracked tensors, stacked with AD (JAX's ``jnp.asarray`` of
    tracers): the result is tracked and gradients flow to every element. Shape and dtype are
    NumPy 2's for the same values (``numpy.asarray``); ragged nesting raises its ``ValueError``."""
    from ._numpy_api._common import _to_dtype
    from ._numpy_api.joining import stack

    target = as_supported_ndarray(_host_view(obj), dtype=dtype, op=op).dtype

    def build(o: Any) -> Tensor:
        if isinstance(o, Tensor):
            return _to_dtype(o, target)
        if isinstance(o, (list, tuple)) and _has_tensor(o):
            return stack([build(e) for e in o])
        return ref.runtime.constant(np.asarray(_host_view(o), dtype=target))

    return build(obj)


def _identity(t: Tensor) -> Tensor:
    """A recorded copy of a tracked tensor (an identity node): stays tracked."""
    return _tenferro._implicit_session().reshape(t, t.shape)


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
        Same shape as ``data``; compact column-major storage. When ``data`` is, or nests,
        tracked tensors (and ``requires_grad`` is false) the result is their differentiable
        copy/stack (as :func:`asarray`): tracked, gradients flow back to each element.
        ``requires_grad=True`` makes a new leaf from the values instead.

    Raises
    ------
    tenferro.errors.DTypeError
        If the dtype is not supported (the message lists the supported set).
    ValueError
        Ragged nesting (NumPy's error).

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.tensor([[1, 2], [3, 4]]).shape
    (2, 2)
    """
    ref = None if requires_grad else _tracked_in(data)
    if ref is not None:
        if isinstance(data, Tensor):
            return _identity(asarray(data, dtype=dtype))
        return _stack_tracked(data, dtype, ref, "tensor")
    arr = as_supported_ndarray(data, dtype=dtype, op="tensor")
    if requires_grad:
        from .autodiff import _variable

        return _variable(_current_runtime(), arr)
    return _tenferro._from_numpy(arr, True, _current_runtime())


def asarray(obj: Any, dtype: Any = None, copy: bool | None = None, *, device: Any = None) -> Tensor:
    """Convert ``obj`` to a tensor, as ``numpy.asarray``.

    A tensor is returned as it is (cast if ``dtype`` differs). Nested lists/tuples holding
    tracked tensors are stacked with AD, as ``jax.numpy.asarray`` of tracers: the result is
    tracked and gradients flow back to each element (shape and dtype as NumPy 2 infers them for
    the same values). Other inputs are copied unless
    ``copy=False``, which shares the NumPy memory (writing to the array later changes the
    tensor) or raises ``ValueError`` when sharing is impossible. Any strides are accepted;
    non-native byte order is converted.

    Parameters
    ----------
    obj : array_like
    dtype : dtype-like, optional
    copy : bool or None
    device : "cpu" or None
        The Array API keyword; any other device is a ``ValueError``.

    Returns
    -------
    Tensor
        Dtype as NumPy 2 infers it when ``dtype`` is ``None`` (Python ints → ``int64``, floats →
        ``float64``, complex → ``complex128``, mixed nesting promoted).

    Raises
    ------
    tenferro.errors.DTypeError
        Unsupported dtype (e.g. ``float16``, ``uint8``, strings).
    ValueError
        ``copy=False`` and the memory cannot be shared (always the case for a nesting of tracked
        tensors), or ragged nesting.

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> a = np.arange(3.0)
    >>> t = tf.asarray(a, copy=False)
    >>> a[0] = 7.0
    >>> t.tolist()
    [7.0, 1.0, 2.0]
    """
    _check_device("asarray", device)
    if isinstance(obj, Tensor):
        # A weakly typed traced scalar (a float argument under tf.jit) becomes strongly typed,
        # as asarray(0.5) is; like the Python number, a complex one cannot become real.
        t = obj
        if obj._weak:
            t = obj._with_weak(False)
            if dtype is not None and t.dtype.kind == "c" and np.dtype(dtype).kind != "c":
                raise TypeError(
                    f"asarray: cannot convert a complex Python number to {np.dtype(dtype)} "
                    "(it is traced by tf.jit as a weakly typed complex scalar)"
                )
        if dtype is not None and np.dtype(dtype) != t.dtype:
            if copy is False:
                raise ValueError(
                    f"asarray: copy=False cannot change dtype {t.dtype} to {np.dtype(dtype)}"
                )
            return _tenferro._implicit_session().cast(t, dtype)
        if copy:
            return _identity(t) if t.requires_grad else t.runtime.constant(t)
        return t
    ref = _tracked_in(obj)
    if ref is not None:
        if copy is False:
            raise ValueError("asarray: copy=False cannot share memory when stacking tensors")
        return _stack_tracked(obj, dtype, ref, "asarray")
    arr = as_supported_ndarray(obj, dtype=dtype, copy=copy)
    return _tenferro._from_numpy(arr, copy is not False, _current_runtime())


def array(obj: Any, dtype: Any = None, copy: bool = True, *, device: Any = None) -> Tensor:
    """A tensor from ``obj``, as ``numpy.array`` (copies by default); same as
    ``asarray(obj, dtype, copy)``, including the AD stacking of nested tracked tensors.

    Examples
    --------
    >>> import tenferro as tf
    >>> rt = tf.Runtime()
    >>> a, b = rt.variable(1.0), rt.variable(2.0)
    >>> v = tf.array([a * b, a])
    >>> v.requires_grad, rt.grad(v.sum(), [a, b])
    (True, (tensor(3.), tensor(1.)))
    """
    return asarray(obj, dtype=dtype, copy=copy, device=device)


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """Import a CPU DLPack-capable object (NumPy array, another library's tensor), as the Array
    API's ``from_dlpack``: without a copy unless ``copy=True`` (``copy=False`` raises
    ``BufferError`` where the producer cannot share, as NumPy's ``from_dlpack``).

    Raises ``ValueError`` for a device other than ``"cpu"``.

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> tf.from_dlpack(np.arange(3.0)).tolist()
    [0.0, 1.0, 2.0]
    """
    _check_device("from_dlpack", device)
    if isinstance(x, Tensor):
        return asarray(x, copy=True) if copy else x
    arr = np.from_dlpack(x, copy=copy)
    return asarray(arr, copy=False)


def full(shape: Any, fill_value: Any, dtype: Any = None, *, device: Any = None) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value``.

    Parameters
    ----------
    shape : int or sequence of int
    fill_value : scalar, array_like or Tensor
        A Python scalar, a NumPy scalar or array, or a tensor (a tracked one keeps its
        gradient: the result is its broadcast); broadcast to ``shape`` as ``numpy.full``.
    dtype : dtype-like, optional
        Default: NumPy's dtype of the fill (``float64`` for a Python float, the array's dtype
        for NumPy scalars, arrays and tensors).
    device : "cpu" or None
        The Array API keyword (also of :func:`zeros`, :func:`ones`, :func:`empty`, :func:`eye`,
        :func:`linspace`).

    Raises
    ------
    MemoryError
        If the size overflows or cannot be allocated (never an abort).
    ValueError
        Negative dimensions; a device other than ``"cpu"``.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.full((2,), 1.5).tolist()
    [1.5, 1.5]
    """
    _check_device("full", device)
    if type(fill_value) not in _PY_SCALARS:
        # Tensors (tracked ones keep their gradient), NumPy scalars and arrays: NumPy's
        # ``full`` takes the fill's own dtype and broadcasts it to ``shape``.
        from ._numpy_api.layout import broadcast_to

        v = asarray(fill_value)
        if dtype is not None:
            v = v.astype(dtype)
        out = broadcast_to(v, tuple(_shape(shape)))
        return out if v.requires_grad or v._traced else array(out)
    return _tenferro._full(_shape(shape), fill_value, dtype, _current_runtime())


def _float_default(dtype: Any) -> Any:
    return np.float64 if dtype is None else dtype


def zeros(shape: Any, dtype: Any = np.float64, *, device: Any = None) -> Tensor:
    """A tensor of zeros (``dtype=None`` or default: ``float64``); see :func:`full` for errors.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.zeros((2, 3)).shape
    (2, 3)
    """
    _check_device("zeros", device)
    return _tenferro._full(_shape(shape), False, _float_default(dtype), _current_runtime())


def empty(shape: Any, dtype: Any = np.float64, *, device: Any = None) -> Tensor:
    """``numpy.empty``'s counterpart (``dtype=None`` or default: ``float64``). tenferro has no
    uninitialised storage: the tensor holds zeros. See :func:`full` for errors.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.empty((2,)).dtype
    dtype('float64')
    """
    _check_device("empty", device)
    return zeros(shape, dtype)


def ones(shape: Any, dtype: Any = np.float64, *, device: Any = None) -> Tensor:
    """A tensor of ones (``dtype=None`` or default: ``float64``); see :func:`full` for errors.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.ones(3, dtype=tf.int32).tolist()
    [1, 1, 1]
    """
    _check_device("ones", device)
    return _tenferro._full(_shape(shape), True, _float_default(dtype), _current_runtime())


def eye(
    N: int, M: int | None = None, /, k: int = 0, dtype: Any = np.float64, *, device: Any = None
) -> Tensor:
    """The ``N × M`` matrix with ones on the ``k``-th diagonal (``numpy.eye``; ``dtype=None`` or
    default: ``float64``).

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.eye(2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    _check_device("eye", device)
    return tensor(np.eye(N, M, k, dtype=_float_default(dtype)))


def arange(
    start: Any, stop: Any = None, step: Any = None, *, dtype: Any = None, device: Any = None
) -> Tensor:
    """Evenly spaced values in ``[start, stop)``, as ``numpy.arange`` and the Array API's
    ``arange``: ``arange(stop)``, ``arange(start, stop)``, ``arange(start, stop, step)``, with
    ``stop``/``step`` also as keywords (``arange(0, 10, step=2)``); ints give ``int64``.

    Parameters
    ----------
    start, stop, step : int or float
        Host numbers (the length depends on them).
    dtype : dtype-like, optional
    device : "cpu" or None
        The Array API keyword; any other device is a ``ValueError``.

    Raises
    ------
    ZeroDivisionError
        For ``step=0`` (NumPy's error).
    ValueError
        For a device other than ``"cpu"``.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.arange(4).tolist()
    [0, 1, 2, 3]
    >>> tf.arange(0, 10, step=3).tolist()
    [0, 3, 6, 9]
    """
    _check_device("arange", device)
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    if step == 0:
        raise ZeroDivisionError("arange: step must not be zero")
    return tensor(np.arange(start, stop, step, dtype=dtype))


def linspace(
    start: float,
    stop: float,
    num: int = 50,
    endpoint: bool = True,
    dtype: Any = None,
    *,
    device: Any = None,
) -> Tensor:
    """``num`` evenly spaced samples over ``[start, stop]`` (``numpy.linspace``: ``dtype=None``
    gives ``float64``, or ``complex128`` for complex endpoints).

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.linspace(0.0, 1.0, 3).tolist()
    [0.0, 0.5, 1.0]
    """
    _check_device("linspace", device)
    if _tracked_in(start) is not None or _tracked_in(stop) is not None:
        return _linspace_tracked(start, stop, num, endpoint, dtype)
    return tensor(np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype))


def _linspace_tracked(start: Any, stop: Any, num: int, endpoint: bool, dtype: Any) -> Tensor:
    """``linspace`` with tracked endpoints, from differentiable ops: sample ``k`` is
    ``start·(1 - k/div) + stop·(k/div)`` (``div = num - 1`` with the endpoint, else ``num``), so the
    ends are exact and ``∂y_k/∂start = 1 - k/div``, ``∂y_k/∂stop = k/div``."""
    num = int(num)
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative")
    s, e = asarray(start), asarray(stop)
    kind = np.result_type(s.dtype, e.dtype, np.float64)
    out_dtype = np.dtype(dtype) if dtype is not None else kind
    s, e = s.astype(kind), e.astype(kind)
    div = (num - 1) if endpoint else num
    frac = np.arange(num, dtype=np.float64) / div if div > 0 else np.zeros(num)
    nd = builtins.max(s.ndim, e.ndim)
    frac = frac.reshape((num,) + (1,) * nd).astype(kind)
    y = s * (1.0 - frac) + e * frac
    return y.astype(out_dtype) if out_dtype != kind else y


_ = builtins

"""Every Python-defined attribute of ``Tensor``, ``Runtime`` and ``Session``, attached to the Rust
classes at import by :func:`install`, the one place that does so.

``Tensor``: ``repr``, scalar conversions (NumPy 2 rules), ``__array__``, ``__array_ufunc__``,
``__array_function__`` (:mod:`tenferro._nep18`), pickling and copying (:mod:`tenferro._pickle`),
``item``/``tolist``/``numpy``/``astype``/``reshape``, the NumPy-style methods built from the
functions of :mod:`tenferro._numpy_api` (``x.sum(axis=0)``, ``x // y``, ``x.real``), the ``at``
property (:mod:`tenferro._indexing`) and the autodiff methods (``backward``, ``grad``, ...).
``Runtime`` and ``Session``: the autodiff methods of :mod:`tenferro.autodiff` (``variable``,
``grad``, ``vjp``, ...) and ``Session.einsum`` (:mod:`tenferro.einsum`). ``ExecutionContext``:
graph mode's ``compile_graph``, ``run_graph``, ... (:mod:`tenferro._graph_context`).

Each name appears once in the tables below; :func:`install` refuses a name the class already
defines, so no attribute is defined twice (tests/test_structure_python.py checks the source too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import _array_api, _graph_context, _indexing, _nep18, _numpy_api, _pickle, autodiff
from ._numpy_api import elementwise as _ew
from ._numpy_api import indexing as _ix
from ._numpy_api import layout as _lay
from ._numpy_api import linear as _lin
from ._numpy_api import arranging as _arr
from ._numpy_api import reductions as _red
from ._numpy_api import sorting as _sort
from ._numpy_api import statistics as _stat
from ._numpy_api import surface as _surface
from ._numpy_api._common import _PY_SCALARS
from ._tenferro import ExecutionContext, Runtime, Session, Tensor, _implicit_session
from .errors import ConcretizationError, TracerLeakError
from .einsum import _session_einsum

_S = _implicit_session()


def _repr(self: Tensor) -> str:
    if self._traced:
        return f"tensor(<traced by tf.jit>, shape={self.shape}, dtype={self.dtype})"
    body = repr(np.asarray(self))
    assert body.startswith("array(")
    inner = body[len("array(") :].replace("\n", "\n ")
    return "tensor(" + inner


def _str(self: Tensor) -> str:
    if self._traced:
        return _repr(self)  # print() inside a traced function shows shape and dtype
    return str(np.asarray(self))


# What a value request on a traced tensor raises (caught where the check would cost the
# common path something).
_NO_VALUES = (ConcretizationError, TracerLeakError)


def _no_values(self: Tensor, request: str) -> None:
    """Raise ``ConcretizationError`` (``TracerLeakError`` for a leaked tracer) when ``self`` is
    traced: ``request`` asks for its values (``graph-mode.md``, "Values Python asks for")."""
    if self._traced:
        raise self._value_error(request)


def _format(self: Tensor, spec: str) -> str:
    """``format(t, spec)``: an empty spec is ``str(t)``; a 0-d tensor formats its element as
    NumPy does; other specs raise ``TypeError`` (as ``ndarray.__format__``)."""
    if not spec:
        return _str(self)
    if self.ndim != 0:
        return object.__format__(self, spec)  # TypeError, as ndarray's
    _no_values(self, f"format(tensor, {spec!r})")
    return format(np.asarray(self).item(), spec)


def _array(self: Tensor, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
    try:
        a = np.asarray(memoryview(self))
    except _NO_VALUES:
        raise self._value_error("__array__ (np.asarray / np.array)") from None
    if dtype is not None and np.dtype(dtype) != a.dtype:
        if copy is False:
            raise ValueError(f"__array__: copy=False cannot convert {a.dtype} to {np.dtype(dtype)}")
        return a.astype(dtype)
    if copy:
        return a.copy()
    return a


def _scalar(self: Tensor, kind: str, complex_error: str | None = None) -> Any:
    """The element of a 0-d tensor as a Python scalar, for ``kind()``. A traced tensor raises
    ``ConcretizationError`` naming the request (``TracerLeakError`` after its trace) — caught,
    so the common path pays nothing for the check; ``complex_error`` is the eager TypeError a
    complex tensor raises, first."""
    if self.ndim != 0:
        raise TypeError(
            f"only 0-dimensional tensors can be converted to Python scalars (got shape {self.shape}) in {kind}()"
        )
    try:
        v = np.asarray(self).item()
    except _NO_VALUES:
        if complex_error is not None and self.dtype.kind == "c":
            raise TypeError(complex_error) from None
        raise self._value_error(f"{kind}()") from None
    if complex_error is not None and isinstance(v, complex):
        raise TypeError(complex_error)
    return v


def _float(self: Tensor) -> float:
    return float(_scalar(self, "float", "float() of a complex tensor; take .real first"))


def _int(self: Tensor) -> int:
    return int(_scalar(self, "int", "int() of a complex tensor; take .real first"))


def _complex(self: Tensor) -> complex:
    return complex(_scalar(self, "complex"))


def _bool(self: Tensor) -> bool:
    if self.size == 1:
        try:
            return bool(np.asarray(self).item())
        except _NO_VALUES:
            raise self._value_error("bool()") from None
    if self.size == 0:
        raise ValueError(
            "The truth value of an empty tensor is ambiguous. Use t.size > 0 to check that a tensor is not empty."
        )
    raise ValueError(
        "The truth value of a tensor with more than one element is ambiguous. Use a.any() or a.all()"
    )


def _index(self: Tensor) -> int:
    if self.ndim != 0 or self.dtype.kind != "i":
        raise TypeError("only integer scalar tensors can be converted to a scalar index")
    _no_values(self, "__index__ (use as an integer: range(t), seq[t], a shape)")
    return int(np.asarray(self).item())


def _iter(self: Tensor) -> Any:
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    for i in range(self.shape[0]):
        yield self[i]


def item(self: Tensor) -> Any:
    """The single element as a Python scalar.

    Raises
    ------
    ValueError
        Unless ``size == 1``.
    ConcretizationError
        On a tensor traced by ``tf.jit`` (it has no values; ``TracerLeakError`` after its trace
        ended).
    """
    if self.size != 1:
        raise ValueError("can only convert a tensor of size 1 to a Python scalar")
    _no_values(self, "item()")
    return np.asarray(self).item()


def tolist(self: Tensor) -> Any:
    """Nested Python lists of the elements (``numpy.ndarray.tolist``; ``ConcretizationError``
    on a tensor traced by ``tf.jit``)."""
    _no_values(self, "tolist()")
    return np.asarray(self).tolist()


def numpy(self: Tensor) -> np.ndarray:
    """A zero-copy, read-only NumPy view of the tensor (``ConcretizationError`` on a tensor
    traced by ``tf.jit``)."""
    _no_values(self, "numpy()")
    return np.asarray(self)


def astype(self: Tensor, dtype: Any) -> Tensor:
    """A copy converted to ``dtype`` with NumPy's unsafe casting (``cast``); the checked
    conversion up the promotion lattice is ``tf.prim.convert``."""
    return _S.cast(self, dtype)


def reshape(self: Tensor, *shape: Any, order: str = "C") -> Tensor:
    """NumPy ``reshape`` (``order="C"`` default; ``"F"`` is the core's column-major reshape)."""
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = tuple(shape[0])
    return _lay.reshape(self, shape, order=order)


_UFUNC_NAMES = {
    "true_divide": "divide",
    "conjugate": "conj",
}


def _array_ufunc(self: Tensor, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    out = kwargs.get("out")
    outs = out if isinstance(out, tuple) else (out,)
    if any(isinstance(o, Tensor) for o in outs) or (
        method == "at" and inputs and isinstance(inputs[0], Tensor)
    ):
        raise TypeError(
            f"numpy.{ufunc.__name__}.{method}: tenferro tensors are immutable; "
            "compute a new tensor instead (or use t.at[idx].set/add)"
        )
    if method == "__call__" and not kwargs:
        name = _UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__)
        fn = getattr(_numpy_api, name, None)
        if fn is not None and name in _numpy_api.__all__:
            return fn(*inputs)
    # Untracked tensors fall back to NumPy; a tensor this call would record (tracked in grad mode,
    # or any tensor inside a transform) raises instead, so no gradient is dropped silently.
    if any(isinstance(x, Tensor) and _S._records(x) for x in inputs):
        call = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        how = "with keyword arguments " if method == "__call__" and kwargs else ""
        raise TypeError(
            f"numpy.{call}: tenferro has no differentiable equivalent {how}of this ufunc, and its "
            "input is tracked for differentiation; use tenferro functions, or .detach() the "
            "tensor (or work under tf.no_grad()) to compute it in NumPy without a gradient"
        )
    args = [np.asarray(x) if isinstance(x, Tensor) else x for x in inputs]
    return getattr(ufunc, method)(*args, **kwargs)


def _no_out(name: str, out: Any, kwargs: dict[str, Any]) -> None:
    if out is not None:
        raise TypeError(f"{name}: out= is not supported (tenferro tensors are immutable)")
    for key, value in kwargs.items():
        if key == "where" and value is not True:
            raise TypeError(f"{name}: where= is not supported")
        if key == "initial" and value is not np._NoValue:
            raise TypeError(f"{name}: initial= is not supported")
        if key not in ("where", "initial"):
            raise TypeError(f"{name}() got an unexpected keyword argument {key!r}")


def _sum_like(fn: Any) -> Any:
    def method(
        self: Tensor,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        keepdims: bool = False,
        **kwargs: Any,
    ) -> Tensor:
        _no_out(fn.__name__, out, kwargs)
        return fn(self, axis=axis, dtype=dtype, keepdims=keepdims)

    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = f"NumPy-style ``{fn.__name__}`` method (``out=`` unsupported); see ``tenferro.{fn.__name__}``."
    return method


def _max_like(fn: Any) -> Any:
    def method(
        self: Tensor, axis: Any = None, out: Any = None, keepdims: bool = False, **kwargs: Any
    ) -> Tensor:
        _no_out(fn.__name__, out, kwargs)
        return fn(self, axis=axis, keepdims=keepdims)

    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = f"NumPy-style ``{fn.__name__}`` method (``out=`` unsupported); see ``tenferro.{fn.__name__}``."
    return method


def _method_transpose(self: Tensor, *axes: Any) -> Tensor:
    """``x.transpose()``, ``x.transpose((1, 0))`` or ``x.transpose(1, 0)``, as NumPy."""
    if not axes or (len(axes) == 1 and axes[0] is None):
        return _lay.transpose(self)
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        return _lay.transpose(self, axes[0])
    return _lay.transpose(self, axes)


def _method_flatten(self: Tensor, order: str = "C") -> Tensor:
    """``x.flatten(order="C")``: the elements as a 1-d tensor (as :func:`ravel`; no copy is
    needed since tensors are immutable)."""
    return _lay.ravel(self, order=order)


def _method_clip(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """``x.clip(min=None, max=None)``: as :func:`clip`."""
    return _ew.clip(self, min, max)


def _is_operand(other: Any) -> bool:
    return isinstance(other, (Tensor, np.ndarray, np.generic, list, tuple, *_PY_SCALARS))


def _keep_weak(self: Tensor, other: Any, out: Any) -> Any:
    """Python arithmetic keeps weak typing under ``tf.jit``: an operator on a weakly typed
    traced scalar and a Python number (or another weak one) gives a weak result, as it gives a
    Python number eagerly (the Rust operators do the same)."""
    if not self._weak:
        return out
    if type(other) in (bool, int, float, complex) or (isinstance(other, Tensor) and other._weak):
        if isinstance(out, tuple):
            return tuple(o._with_weak(True) for o in out)
        return out._with_weak(True)
    return out


def _weak_as(self: Tensor, out: Tensor) -> Tensor:
    """``out`` weakly typed when ``self`` is (a traced Python number's own attribute)."""
    return out._with_weak(True) if self._weak else out


def _method_conjugate(self: Tensor) -> Tensor:
    """``t.conjugate()``: :func:`tenferro.conj` (weakly typed for a traced Python number, as
    ``complex.conjugate()`` gives a Python number)."""
    return _weak_as(self, _ew.conjugate(self))


def _binary_method(fn: Callable, name: str, reflected: bool, weak: bool = True) -> Callable:
    """``fn`` as the operator ``name``; ``weak``: the result of a traced Python number and a
    Python number stays weakly typed (:func:`_keep_weak`)."""
    if reflected:

        def method(self: Tensor, other: Any) -> Any:
            if not _is_operand(other):
                return NotImplemented
            out = fn(other, self)
            return _keep_weak(self, other, out) if weak and self._weak else out

    else:

        def method(self: Tensor, other: Any) -> Any:
            if not _is_operand(other):
                return NotImplemented
            out = fn(self, other)
            return _keep_weak(self, other, out) if weak and self._weak else out

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``{name}``: :func:`{fn.__name__}` with the operands in {'reflected' if reflected else 'given'} order."
    return method


def _method_round(self: Tensor, ndigits: int | None = None) -> Any:
    """``round(t[, ndigits])`` of a 0-d tensor: as of its NumPy scalar (``round(np.float64(v),
    3)`` is ``np.float64``, ``round(np.float64(v))`` an ``int``; NaN/inf without ``ndigits``
    raise ``ValueError``/``OverflowError``). The element-wise, differentiable rounding is
    :func:`tenferro.round` (``t.round(decimals)``).

    Raises
    ------
    TypeError
        For a tensor of rank > 0 (NumPy arrays have no ``__round__``) and for bool and complex
        tensors (nor have their NumPy scalars).
    tenferro.errors.ConcretizationError
        On a tensor traced by ``tf.jit`` (a value request).
    """
    if self.ndim != 0:
        raise TypeError(
            f"round() of a tensor of shape {self.shape}: only 0-d tensors round to a number "
            "(NumPy arrays define no __round__); use tf.round(t, decimals) element-wise"
        )
    if self.dtype.kind in "bc":
        raise TypeError(
            f"round() of a {self.dtype} tensor: numpy.{self.dtype.name} defines no __round__"
        )
    _no_values(self, "round()")
    v = self.dtype.type(np.asarray(self)[()])  # np.int64, not the buffer format's np.longlong
    return round(v) if ndigits is None else round(v, ndigits)


_TENSOR_METHODS: dict[str, Any] = {
    "__repr__": _repr,
    "__str__": _str,
    "__format__": _format,
    "__array__": _array,
    "__array_namespace__": _array_api._array_namespace,
    "__array_ufunc__": _array_ufunc,
    "__array_function__": _nep18._array_function,
    "__reduce_ex__": _pickle._reduce_ex,
    "__copy__": _pickle._copy,
    "__deepcopy__": _pickle._deepcopy,
    "__array_priority__": 1000.0,
    "__float__": _float,
    "__int__": _int,
    "__complex__": _complex,
    "__bool__": _bool,
    "__index__": _index,
    "__iter__": _iter,
    "item": item,
    "tolist": tolist,
    "numpy": numpy,
    "astype": astype,
    "to_device": _surface.to_device,
    "reshape": reshape,
    # NumPy's np.sum(t) etc. call t.sum(axis=, dtype=, out=): accept and refuse out=.
    "sum": _sum_like(_red.sum),
    "prod": _sum_like(_red.prod),
    "mean": _sum_like(_red.mean),
    "max": _max_like(_red.max),
    "min": _max_like(_red.min),
    "any": _max_like(_red.any),
    "all": _max_like(_red.all),
    # ndarray's non-mutating methods of the sorting, statistics and arranging functions (the
    # in-place ``ndarray.sort``/``fill`` have no tensor counterpart: tensors are immutable).
    "argmax": _sort.argmax,
    "argmin": _sort.argmin,
    "argsort": _sort.argsort,
    "searchsorted": _sort.searchsorted,
    "nonzero": _sort.nonzero,
    "cumsum": _sort.cumsum,
    "cumprod": _sort.cumprod,
    "std": _stat.std,
    "var": _stat.var,
    "repeat": _arr.repeat,
    "exp": _ew.exp,
    "log": _ew.log,
    "sqrt": _ew.sqrt,
    "conj": _ew.conj,
    # Python numbers' own attributes of a traced Python number stay weakly typed, as on the
    # number (``s.real``, ``s.conjugate()``); the functions (tf.real(s)) are strong.
    "conjugate": _method_conjugate,
    # ndarray.round / the builtin round(t[, ndigits]): NumPy's round, half to even.
    "round": _ew.round,
    "__round__": _method_round,
    "transpose": _method_transpose,
    "swapaxes": _lay.swapaxes,
    "flatten": _method_flatten,
    "ravel": _lay.ravel,
    "squeeze": _lay.squeeze,
    "clip": _method_clip,
    "diagonal": _lin.diagonal,
    "trace": _lin.trace,
    "take": _ix.take,
    "__matmul__": _binary_method(_lin.matmul, "__matmul__", False, weak=False),
    "__rmatmul__": _binary_method(_lin.matmul, "__rmatmul__", True, weak=False),
    "__floordiv__": _binary_method(_ew.floor_divide, "__floordiv__", False),
    "__rfloordiv__": _binary_method(_ew.floor_divide, "__rfloordiv__", True),
    "__mod__": _binary_method(_ew.remainder, "__mod__", False),
    "__rmod__": _binary_method(_ew.remainder, "__rmod__", True),
    "__divmod__": _binary_method(_ew.divmod, "__divmod__", False),
    "__rdivmod__": _binary_method(_ew.divmod, "__rdivmod__", True),
    # autodiff (autodiff.md)
    "backward": autodiff.backward,
    "backward_with": autodiff.backward_with,
    "clear_grad": autodiff.clear_grad,
    "detach": autodiff.detach,
    "detach_into": autodiff.detach_into,
    # properties
    "real": property(lambda self: _weak_as(self, _ew.real(self)), doc=_ew.real.__doc__),
    "imag": property(lambda self: _weak_as(self, _ew.imag(self)), doc=_ew.imag.__doc__),
    "at": property(_indexing.at),
    "grad": property(
        autodiff._grad_property, autodiff._set_grad_property, doc=autodiff._grad_property.__doc__
    ),
}
"""Python-defined attributes of ``Tensor`` (methods, properties and ``__array_priority__``)."""

_RUNTIME_METHODS: dict[str, Callable[..., Any]] = {
    "variable": autodiff.variable,
    "grad": autodiff.grad,
    "grad_optional": autodiff.grad_optional,
    "vjp": autodiff.vjp,
    "vjp_optional": autodiff.vjp_optional,
    "jvp": autodiff.jvp,
    "jvp_optional": autodiff.jvp_optional,
    "clear_grads": autodiff.clear_grads,
    "no_grad": autodiff._runtime_no_grad,
    "capture_trace": autodiff._runtime_capture_trace,
}
"""Python-defined methods of ``Runtime`` (the autodiff entry points)."""

_SESSION_METHODS: dict[str, Callable[..., Any]] = {
    "variable": autodiff._session_variable,
    "einsum": _session_einsum,
}
"""Python-defined methods of ``Session`` (``variable`` and ``einsum``)."""


_CONTEXT_METHODS: dict[str, Callable[..., Any]] = {
    "compile_graph": _graph_context.compile_graph,
    "run_graph": _graph_context.run_graph,
    "graph_cache_stats": _graph_context.graph_cache_stats,
    "reset_graph_runtime": _graph_context.reset_graph_runtime,
}
"""Python-defined methods of ``ExecutionContext`` (graph mode, :mod:`tenferro._graph_context`)."""


def install() -> None:
    """Attach the tables above to ``Tensor``, ``Runtime``, ``Session`` and ``ExecutionContext``.

    Raises
    ------
    RuntimeError
        If a name is already defined on the class (by the Rust binding or an earlier attach):
        each attribute is defined in exactly one place.
    """
    tables = (
        (Tensor, _TENSOR_METHODS),
        (Runtime, _RUNTIME_METHODS),
        (Session, _SESSION_METHODS),
        (ExecutionContext, _CONTEXT_METHODS),
    )
    for cls, attrs in tables:
        for name, value in attrs.items():
            if name in cls.__dict__:
                raise RuntimeError(
                    f"{cls.__name__}.{name} is already defined; refusing to define it twice"
                )
            setattr(cls, name, value)

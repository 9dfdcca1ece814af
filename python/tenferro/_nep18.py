"""NEP 18 dispatch: ``Tensor.__array_function__``, so a NumPy function never drops a gradient.

A NumPy function called with a tenferro tensor among its arguments (``np.tensordot(a, t)``,
``np.linalg.svd(t)``, ``np.stack([a, t])``) comes here, and:

1. the *value consumers* (:data:`CONSUMERS`: ``save``, ``savetxt``, printing, ``shape``,
   ``allclose``, ``array_equal``, ``result_type`` ...) read the tensors' host data (also of
   tracked tensors: they return Python values or write files, never an array to compute with);
2. a function with a tenferro namesake (``numpy.X`` → ``tenferro.X``, ``numpy.linalg.X`` →
   ``tenferro.linalg.X``, any ``numpy.SUB.X`` → ``tenferro.SUB.X``; looked up by name in the
   module's ``__all__``, so new tenferro functions are picked up) runs that function, when it
   accepts the arguments given: the call is bound to NumPy's signature and re-bound by parameter
   name to tenferro's (a required leading argument may differ in name only), NumPy's defaults are
   passed where tenferro's differ, and an argument tenferro does not take (other than one equal
   to NumPy's default, like ``out=None``) makes the call *unsupported* — never silently ignored;
3. anything else (no namesake, an unsupported call, or the namesake raising
   ``NotImplementedError``) runs NumPy on the host data of untracked tensors and returns what
   NumPy returns; with a tensor this call would record (tracked in grad mode, or any tensor
   inside a transform) it raises ``TypeError`` naming the function, suggesting ``tf.<name>``
   or ``.detach()``.

Tensors traced by ``tf.jit`` follow the same rules; reading their host data raises
``ConcretizationError`` (``shape``/``ndim``/``size``/``result_type`` need no data).
"""

from __future__ import annotations

import inspect
from types import ModuleType
from typing import Any

import numpy as np

from . import _array_api
from ._tenferro import Tensor, _implicit_session

_S = _implicit_session()

_P = inspect.Parameter
_POSITIONAL = (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)

# Functions answered from the tensors' metadata (no host data: they work on traced tensors too).
_METADATA = frozenset({"numpy.shape", "numpy.ndim", "numpy.size"})

# Functions that only need the dtypes of array arguments (NEP 50: no value-based casting).
_DTYPE_ONLY = frozenset({"numpy.result_type", "numpy.can_cast"})

CONSUMERS = frozenset(
    {
        *_METADATA,
        *_DTYPE_ONLY,
        "numpy.save",
        "numpy.savez",
        "numpy.savez_compressed",
        "numpy.savetxt",
        "numpy.array2string",
        "numpy.array_repr",
        "numpy.array_str",
        "numpy.allclose",
        "numpy.array_equal",
        "numpy.array_equiv",
        "numpy.iscomplexobj",
        "numpy.isrealobj",
        "numpy.min_scalar_type",
        "numpy.shares_memory",
        "numpy.may_share_memory",
    }
)
"""NumPy functions that only consume values (they return Python values or ``None``): they read
the host data of every tensor, tracked or not."""

# Parameters that choose how a result is computed, not what it is: NumPy's default is not forced
# onto tenferro's (``einsum(optimize=False)`` is NumPy's left-to-right order).
_VALUE_NEUTRAL = frozenset({"optimize"})


class _Unsupported(Exception):
    """The tenferro namesake cannot take this call (the message says why)."""


def _qualname(func: Any) -> tuple[str, str]:
    """``("numpy.linalg.svd", "linalg.svd")``: NumPy's full name and the tenferro-relative one."""
    mod = getattr(func, "__module__", None) or "numpy"
    name = getattr(func, "__name__", repr(func))
    sub = mod[len("numpy") :].lstrip(".") if mod == "numpy" or mod.startswith("numpy.") else ""
    return f"{mod}.{name}", (f"{sub}.{name}" if sub else name)


def _namesake(func: Any) -> Any:
    """``tenferro[.SUB].NAME`` for ``numpy[.SUB].NAME`` when it is public (in ``__all__``), else
    ``None``. Submodules are looked up among those already imported (``import tenferro`` imports
    its public ones)."""
    mod = getattr(func, "__module__", None) or ""
    if not (mod == "numpy" or mod.startswith("numpy.")):
        return None
    target: Any = _array_api._NAMESPACE[0] if _array_api._NAMESPACE else None  # the package
    for part in mod.split(".")[1:]:
        target = getattr(target, part, None)
        if not isinstance(target, ModuleType) or not target.__name__.startswith("tenferro"):
            return None
    name = getattr(func, "__name__", None)
    public = getattr(target, "__all__", ())
    if target is None or name is None or name not in public:
        return None
    fn = getattr(target, name, None)
    if isinstance(fn, (ModuleType, type, np.dtype)) or not callable(fn):
        return None
    return fn


class _Plan:
    """What is known about one NumPy function: its tenferro namesake and both signatures, as
    plain tuples (read on every call)."""

    __slots__ = (
        "np_name",
        "tf_name",
        "fn",
        "np_sig",
        "tf_sig",
        "np_params",
        "np_pos",
        "np_posonly",
        "np_required",
        "np_varpos",
        "np_varkw",
        "tf_params",
        "tf_names",
    )

    def __init__(self, func: Any) -> None:
        self.np_name, self.tf_name = _qualname(func)
        self.fn = _namesake(func)
        self.np_sig = _signature(func)
        self.tf_sig = _signature(self.fn) if self.fn is not None else None
        if self.np_sig is None or self.tf_sig is None:
            return
        ps = list(self.np_sig.parameters.values())
        self.np_params = {p.name: (p.kind, p.default) for p in ps}
        self.np_pos = tuple(p.name for p in ps if p.kind in _POSITIONAL)
        self.np_posonly = frozenset(p.name for p in ps if p.kind is _P.POSITIONAL_ONLY)
        self.np_required = tuple(
            p.name
            for p in ps
            if p.default is _P.empty and p.kind not in (_P.VAR_POSITIONAL, _P.VAR_KEYWORD)
        )
        self.np_varpos = next((p.name for p in ps if p.kind is _P.VAR_POSITIONAL), None)
        self.np_varkw = next((p.name for p in ps if p.kind is _P.VAR_KEYWORD), None)
        self.tf_params = tuple((q.name, q.kind, q.default) for q in self.tf_sig.parameters.values())
        self.tf_names = frozenset(self.tf_sig.parameters)


def _signature(fn: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


_PLANS: dict[Any, _Plan] = {}


def _plan(func: Any) -> _Plan:
    plan = _PLANS.get(func)
    if plan is None:
        plan = _PLANS[func] = _Plan(func)
    return plan


def _is_default(value: Any, default: Any) -> bool:
    """Whether a passed ``value`` is the parameter's default (so leaving it out changes nothing)."""
    if value is default:
        return True
    if default is _P.empty or default is np._NoValue:
        return False
    simple = (bool, int, float, str, type(None))
    return type(value) is type(default) and isinstance(value, simple) and value == default


def _bind(
    plan: _Plan, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[dict[str, Any], tuple[Any, ...] | None]:
    """NumPy's signature bound to the call: the arguments passed, by parameter name (names a
    ``**kwargs`` of NumPy's takes included), and the values of its ``*args`` (``None`` when it
    has none or none were passed). ``TypeError`` as NumPy's own for a call that does not fit."""
    passed: dict[str, Any] = {}
    var_pos: tuple[Any, ...] | None = None
    npos = len(plan.np_pos)
    ok = True
    if len(args) > npos:
        if plan.np_varpos is None:
            ok = False
        var_pos = args[npos:]
        args = args[:npos]
    passed.update(zip(plan.np_pos, args))
    for k, v in kwargs.items():
        if k == "like":  # NEP 35: the tensor chose this implementation
            continue
        if (
            k in passed
            or k in plan.np_posonly
            or (k not in plan.np_params and plan.np_varkw is None)
        ):
            ok = False
        passed[k] = v
    if ok and any(r not in passed for r in plan.np_required):
        ok = False
    if not ok:
        try:
            plan.np_sig.bind(
                *args, *(var_pos or ()), **{k: v for k, v in kwargs.items() if k != "like"}
            )
        except TypeError as e:
            raise TypeError(f"{plan.np_name}(): {e}") from None
        raise TypeError(f"{plan.np_name}(): arguments do not fit {plan.np_sig}")
    return passed, var_pos


def _translate(
    plan: _Plan, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[list[Any], dict[str, Any]]:
    """The NumPy call ``(args, kwargs)`` as a call of the tenferro namesake.

    Raises ``_Unsupported`` when the namesake does not take one of the arguments (or a
    parameter NumPy's call fills), and ``TypeError`` when the arguments do not fit NumPy's own
    signature (as NumPy would)."""
    if plan.np_sig is None or plan.tf_sig is None:
        raise _Unsupported(f"the signature of tf.{plan.tf_name} cannot be compared with NumPy's")
    passed, var_pos = _bind(plan, args, kwargs)
    np_params, np_pos, tf_names = plan.np_params, plan.np_pos, plan.tf_names
    pos: list[Any] = []
    kw: dict[str, Any] = {}
    gap = False  # a positional parameter of the namesake was left to its default
    for i, (name, kind, default) in enumerate(plan.tf_params):
        if kind is _P.VAR_POSITIONAL:
            if var_pos is not None:
                if gap:
                    raise _Unsupported(
                        f"tf.{plan.tf_name} cannot take NumPy's positional arguments"
                    )
                pos.extend(var_pos)
                var_pos = None
            continue
        if kind is _P.VAR_KEYWORD:
            continue  # only named parameters count as accepted
        have = False
        if name in passed:
            value, have = passed.pop(name), True
        elif kind in _POSITIONAL and i < len(np_pos) and default is _P.empty:
            # A leading argument named differently (``a`` / ``x``): same position, required in
            # both, and neither name is a parameter of the other function.
            alias = np_pos[i]
            if (
                alias in passed
                and np_params[alias][1] is _P.empty
                and alias not in tf_names
                and name not in np_params
            ):
                value, have = passed.pop(alias), True
        if not have and name in np_params and name not in _VALUE_NEUTRAL:
            d = np_params[name][1]
            if d is not _P.empty and d is not np._NoValue and not _is_default(d, default):
                value, have = d, True  # NumPy's default where tenferro's differs
        if not have:
            if default is _P.empty:
                raise _Unsupported(
                    f"tf.{plan.tf_name} needs its argument {name!r}, which this call does not give"
                )
            gap = gap or kind in _POSITIONAL
            continue
        if kind is _P.POSITIONAL_ONLY or (kind is _P.POSITIONAL_OR_KEYWORD and not gap):
            if gap:
                raise _Unsupported(
                    f"tf.{plan.tf_name} cannot take {name!r} after a defaulted positional argument"
                )
            pos.append(value)
        else:
            kw[name] = value
    if var_pos:
        raise _Unsupported(f"tf.{plan.tf_name} takes no further positional arguments")
    for name, value in passed.items():
        p = np_params.get(name)
        if p is None or not _is_default(value, p[1]):
            raise _Unsupported(
                f"tf.{plan.tf_name} does not take the argument {name}={_short(value)}"
            )
    return pos, kw


def _short(value: Any) -> str:
    r = repr(value) if not isinstance(value, (Tensor, np.ndarray)) else f"<{type(value).__name__}>"
    return r if len(r) <= 40 else r[:37] + "..."


def _tensors(obj: Any) -> Any:
    """The tensors in ``obj`` (a tensor, or lists/tuples/dicts of them), depth first."""
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _tensors(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _tensors(o)


def _to_host(obj: Any) -> Any:
    """``obj`` with every tensor replaced by its zero-copy NumPy view."""
    if isinstance(obj, Tensor):
        return np.asarray(obj)
    if isinstance(obj, list):
        return [_to_host(o) for o in obj]
    if isinstance(obj, tuple):
        items = [_to_host(o) for o in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    if isinstance(obj, dict):
        return {k: _to_host(v) for k, v in obj.items()}
    return obj


def _to_dtypes(obj: Any) -> Any:
    return obj.dtype if isinstance(obj, Tensor) else obj


def _host_call(plan: _Plan, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """NumPy's ``func`` on the host data of every tensor (``ConcretizationError`` naming the
    function for a tensor traced by ``tf.jit``)."""
    for t in (*_tensors(args), *_tensors(kwargs)):
        if t._traced:
            raise t._value_error(plan.np_name)
    return func(*_to_host(args), **_to_host(kwargs))


def _array_function(
    self: Tensor, func: Any, types: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    """NEP 18 (``numpy.X(..., tensor, ...)``): tenferro's implementation when there is one,
    value consumers on host data, else NumPy on host data for untracked tensors and
    ``TypeError`` for tracked ones (module docstring of :mod:`tenferro._nep18`)."""
    if not all(issubclass(t, (Tensor, np.ndarray)) for t in types):
        return NotImplemented
    plan = _plan(func)
    if plan.np_name in CONSUMERS:
        if plan.np_name in _METADATA:
            return func._implementation(*args, **kwargs)
        if plan.np_name in _DTYPE_ONLY:
            return func(
                *[_to_dtypes(a) for a in args], **{k: _to_dtypes(v) for k, v in kwargs.items()}
            )
        return _host_call(plan, func, args, kwargs)
    reason: BaseException
    if plan.fn is not None:
        try:
            pos, kw = _translate(plan, args, kwargs)
        except _Unsupported as e:
            reason = e
        else:
            try:
                return plan.fn(*pos, **kw)
            except NotImplementedError as e:
                reason = e
    else:
        reason = _Unsupported(f"tenferro has no tf.{plan.tf_name}")
    recorded = [t for t in (*_tensors(args), *_tensors(kwargs)) if _S._records(t)]
    if recorded:
        raise TypeError(
            f"{plan.np_name}: {reason}, and an input is tracked for differentiation (NumPy would drop "
            f"its gradient); use tenferro functions (tf.{plan.tf_name} where it exists, with the "
            "arguments it takes), or .detach() the tensor (or work under tf.no_grad()) to compute "
            "it in NumPy without a gradient"
        ) from (reason if not isinstance(reason, _Unsupported) else None)
    out = _host_call(plan, func, args, kwargs)
    if isinstance(out, np.ndarray) and not any(True for _ in (*_tensors(args), *_tensors(kwargs))):
        # Reached through NEP 35's ``like=tensor`` (NumPy strips ``like`` from the arguments):
        # the array NumPy made, as an (untracked) tensor, never an ndarray.
        from ._factories import asarray

        return asarray(out)
    return out

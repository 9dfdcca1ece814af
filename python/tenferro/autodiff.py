"""Eager automatic differentiation (``autodiff.md``): tracked leaves, ``backward``, the
functional transforms ``grad``/``vjp``/``jvp`` and the grad modes ``no_grad``/``capture_trace``.

Complex numbers follow tenferro's Hermitian convention: for a real loss ``L`` of complex ``z``
the gradient is ``∂L/∂x + i ∂L/∂y`` (PyTorch's numbers; ``jax.grad`` returns the conjugate).

Examples
--------
>>> import tenferro as tf
>>> rt = tf.Runtime()
>>> x = rt.variable([1.0, 2.0, 3.0])
>>> loss = (x * x).sum()
>>> grads = loss.backward()
>>> x.grad.tolist()
[2.0, 4.0, 6.0]
>>> z = rt.variable([3 + 4j])
>>> (z * z.conj()).real.sum().backward()
Gradients(1 leaf)
>>> z.grad.tolist()
[(6+8j)]
"""

from __future__ import annotations

import contextvars
import functools
import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from . import _tenferro, _trace_state
from ._tenferro import Runtime, Session, Tensor
from .errors import ContextMismatchError, InactiveError

__all__ = ["no_grad", "capture_trace", "Gradients"]


# The tokens of the grad-mode blocks entered in this context, innermost last, as
# ``(mode instance, token)``: per thread and per asyncio task like the mode state itself, so one
# ``no_grad()`` instance shared by overlapping threads or tasks restores each one's own state.
_MODE_TOKENS: contextvars.ContextVar[tuple[tuple[Any, Any], ...]] = contextvars.ContextVar(
    "tenferro_mode_tokens", default=()
)


class _Mode:
    """A grad-mode switch usable as ``with`` block and as decorator (with or without
    parentheses; generators, coroutines and async generators too). The mode lives in the
    context-local state (one ContextVar), so it is isolated per thread and per asyncio task."""

    _flags: dict[str, bool] = {}

    def __new__(cls, fn: Callable[..., Any] | None = None) -> Any:
        self = super().__new__(cls)
        if fn is not None and callable(fn):
            return self(fn)
        return self

    def __init__(self, fn: Callable[..., Any] | None = None) -> None:
        pass

    def __enter__(self) -> _Mode:
        if self._flags.get("grad_enabled", True) is False:
            _trace_state.note_no_grad()  # a tf.jit trace in progress has a no-grad region
        token = _tenferro._set_modes(**self._flags)
        _MODE_TOKENS.set((*_MODE_TOKENS.get(), (self, token)))
        return self

    def __exit__(self, *exc: Any) -> None:
        stack = _MODE_TOKENS.get()
        for i in range(len(stack) - 1, -1, -1):
            if stack[i][0] is self:
                _MODE_TOKENS.set(stack[:i] + stack[i + 1 :])
                _tenferro._state_var().reset(stack[i][1])
                return
        raise RuntimeError(f"{type(self).__name__}: exited in a context that did not enter it")

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        mode = type(self)
        if inspect.isasyncgenfunction(fn):

            @functools.wraps(fn)
            async def agen_wrapper(*args: Any, **kwargs: Any) -> Any:
                agen = fn(*args, **kwargs)
                value = None
                while True:
                    with mode():
                        try:
                            item = await agen.asend(value)
                        except StopAsyncIteration:
                            return
                    value = yield item

            return agen_wrapper

        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def coro_wrapper(*args: Any, **kwargs: Any) -> Any:
                with mode():
                    return await fn(*args, **kwargs)

            return coro_wrapper

        if inspect.isgeneratorfunction(fn):

            @functools.wraps(fn)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                gen = fn(*args, **kwargs)
                value = None
                while True:
                    with mode():
                        try:
                            item = gen.send(value)
                        except StopIteration as stop:
                            return stop.value
                    value = yield item

            return gen_wrapper

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with mode():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_Mode):
    """Disable recording: inside, no op records a node and every result is untracked.

    Usable as ``with tf.no_grad():``, ``@tf.no_grad`` and ``@tf.no_grad()``; wins over
    :class:`capture_trace`.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.Runtime().variable([1.0])
    >>> with tf.no_grad():
    ...     y = x * 2.0
    >>> y.requires_grad
    False
    """

    _flags = {"grad_enabled": False}


class capture_trace(_Mode):
    """Record nodes even for untracked inputs (outputs stay untracked), so that a later
    functional ``vjp``/``jvp``/``grad`` can differentiate with respect to untracked values.

    Examples
    --------
    >>> import tenferro as tf
    >>> rt = tf.Runtime()
    >>> with tf.capture_trace():
    ...     x = rt.constant([2.0])
    ...     y = (x * x).sum()
    >>> rt.grad(y, x).tolist()
    [4.0]
    """

    _flags = {"capture_trace": True}


class Gradients:
    """The gradients of one ``backward`` call, keyed by leaf identity (``grads[x]``,
    ``x in grads``, ``len``, iteration in the order leaves were reached)."""

    def __init__(self, triples: Sequence[tuple[int, Tensor | None, Tensor]]) -> None:
        self._grads = {nid: g for nid, _, g in triples}
        self._leaves = [leaf for _, leaf, _ in triples if leaf is not None]

    def __getitem__(self, leaf: Tensor) -> Tensor:
        try:
            return self._grads[_tenferro._node_id(leaf)]
        except KeyError:
            raise KeyError("this tensor is not a leaf reached by the backward pass") from None

    def __contains__(self, leaf: object) -> bool:
        return isinstance(leaf, Tensor) and _tenferro._node_id(leaf) in self._grads

    def __len__(self) -> int:
        return len(self._grads)

    def __iter__(self) -> Iterator[Tensor]:
        yield from self._leaves

    def values(self) -> list[Tensor]:
        """The gradients, in reach order."""
        return list(self._grads.values())

    def __repr__(self) -> str:
        n = len(self._grads)
        return f"Gradients({n} {'leaf' if n == 1 else 'leaves'})"


def _variable(rt: Runtime | None, data: Any) -> Tensor:
    return _tenferro._variable(rt, data)


def variable(self: Runtime, data: Any) -> Tensor:
    """A tracked leaf of this runtime holding a copy of ``data`` (float or complex dtype).

    Raises
    ------
    tenferro.errors.DTypeError
        For integer or bool data (they cannot carry derivatives).
    """
    return _variable(self, data)


def _session_variable(self: Session, data: Any) -> Tensor:
    """A tracked leaf of the session's runtime (see ``Runtime.variable``)."""
    return _variable(self.runtime, data)


def backward(self: Tensor, create_graph: bool = False) -> Gradients:
    """Accumulate ``d self / d leaf`` into every reachable tracked leaf's ``grad``.

    ``self`` must be a scalar (shape ``()``; a complex scalar is seeded with ``1+0j``, unlike
    PyTorch). Repeated calls keep adding until ``clear_grad``. With ``create_graph=True`` the
    gradients are themselves tracked (higher order).

    Returns
    -------
    Gradients
        The gradients of *this* call keyed by leaf.

    Raises
    ------
    tenferro.errors.NonScalarGradError
        Non-scalar output (use ``backward_with``).
    tenferro.errors.NoGradientError
        No tracked leaf is reachable.
    tenferro.errors.UnsupportedAdRuleError
        A primitive on the path has no derivative rule yet.
    """
    return Gradients(_tenferro._backward(self, None, create_graph))


def backward_with(self: Tensor, cotangent: Tensor, create_graph: bool = False) -> Gradients:
    """``backward`` seeded with ``cotangent`` (same shape, dtype and runtime as ``self``)."""
    return Gradients(_tenferro._backward(self, cotangent, create_graph))


def _grad_property(self: Tensor) -> Tensor | None:
    """The gradient accumulated by ``backward`` (``None`` for untracked tensors, non-leaves and
    before any backward). Assignable: ``x.grad = None`` resets it (as PyTorch)."""
    return _tenferro._grad_of(self)


def _set_grad_property(self: Tensor, value: Tensor | None) -> None:
    """``x.grad = None`` resets the slot (as PyTorch; same as ``clear_grad``); ``x.grad = g``
    stores ``g`` (a tensor of ``x``'s runtime, shape and dtype) and the next ``backward`` adds
    to it.

    Raises
    ------
    TypeError
        ``value`` is neither ``None`` nor a tensor.
    ValueError
        Assigning a tensor to something that is not a tracked leaf.
    tenferro.errors.ShapeError, tenferro.errors.DTypeError, tenferro.errors.ContextMismatchError
        ``g`` differs from ``x`` in shape, dtype or runtime.
    """
    if value is None:
        _tenferro._clear_grad(self)
    elif isinstance(value, Tensor):
        _tenferro._set_grad(self, value)
    else:
        raise TypeError(
            f"grad: assigned value must be None or a Tensor, got {type(value).__name__}"
        )


def clear_grad(self: Tensor) -> None:
    """Reset this leaf's gradient to ``None``."""
    _tenferro._clear_grad(self)


def clear_grads(self: Runtime) -> None:
    """Reset every live gradient slot of this runtime (the slots stay registered)."""
    _tenferro._clear_grads(self)


def detach(self: Tensor) -> Tensor:
    """An untracked tensor of the same runtime sharing this tensor's storage."""
    if self._traced:
        # The program has no stop-gradient step: a derivative of the compiled function taken
        # from outside would differentiate through this value, so such calls run eagerly.
        _trace_state.note_no_grad()
    return _tenferro._detach(self)


def detach_into(self: Tensor, runtime: Runtime) -> Tensor:
    """The value as an untracked tensor of another runtime (storage shared)."""
    return _tenferro._detach(self, runtime)


def _as_list(wrt: Tensor | Sequence[Tensor]) -> tuple[list[Tensor], bool]:
    if isinstance(wrt, Tensor):
        return [wrt], True
    return list(wrt), False


def _own(rt: Runtime, op: str, **tensors: Any) -> None:
    """Every tensor among ``tensors`` (single or sequences) belongs to ``rt``."""
    for what, value in tensors.items():
        many = isinstance(value, (list, tuple))
        for i, t in enumerate(value if many else [value]):
            if isinstance(t, Tensor) and t.runtime is not rt:
                where = f"{what}[{i}]" if many else what
                raise ContextMismatchError(
                    f"{op}: {where} belongs to runtime {t.runtime.id} but {op} was called on "
                    f"runtime {rt.id}"
                )


def _finish(results: list[Any], single: bool, optional: bool) -> Any:
    if not optional:
        for i, r in enumerate(results):
            if r is None:
                raise InactiveError(
                    f"wrt[{i}]: the output does not depend on it through a differentiable path"
                )
    return results[0] if single else tuple(results)


def grad_optional(self: Runtime, output: Tensor, wrt: Tensor | Sequence[Tensor]) -> Any:
    """``grad`` returning ``None`` for inactive ``wrt`` instead of raising."""
    ws, single = _as_list(wrt)
    _own(self, "grad_optional", output=output, wrt=ws)
    return _finish(_tenferro._vjp(output, ws, None), single, True)


def grad(self: Runtime, output: Tensor, wrt: Tensor | Sequence[Tensor]) -> Any:
    """Gradient of the scalar ``output`` with respect to ``wrt`` (a tensor or a sequence, then a
    tuple). Gradient slots are not touched; results stay tracked when they depend on tracked
    values, so ``grad`` composes to any order.

    Raises
    ------
    tenferro.errors.NonScalarGradError, tenferro.errors.InactiveError
    """
    ws, single = _as_list(wrt)
    _own(self, "grad", output=output, wrt=ws)
    return _finish(_tenferro._vjp(output, ws, None), single, False)


def vjp_optional(self: Runtime, output: Tensor, wrt: Any, cotangent: Tensor) -> Any:
    """``vjp`` returning ``None`` for inactive ``wrt``."""
    ws, single = _as_list(wrt)
    _own(self, "vjp_optional", output=output, wrt=ws, cotangent=cotangent)
    return _finish(_tenferro._vjp(output, ws, cotangent), single, True)


def vjp(self: Runtime, output: Tensor, wrt: Any, cotangent: Tensor) -> Any:
    """Vector-Jacobian product ``cotangent · ∂output/∂wrt`` (Hermitian adjoint for complex)."""
    ws, single = _as_list(wrt)
    _own(self, "vjp", output=output, wrt=ws, cotangent=cotangent)
    return _finish(_tenferro._vjp(output, ws, cotangent), single, False)


def jvp_optional(self: Runtime, output: Tensor, wrt: Any, tangent: Any) -> Any:
    """``jvp`` returning ``None`` when ``output`` does not depend on ``wrt``."""
    ws, _ = _as_list(wrt)
    ts, _ = _as_list(tangent)
    _own(self, "jvp", output=output, wrt=ws, tangent=ts)
    return _tenferro._jvp(output, ws, ts)


def jvp(self: Runtime, output: Tensor, wrt: Any, tangent: Any) -> Tensor:
    """Jacobian-vector product ``∂output/∂wrt · tangent`` along the recorded path."""
    r = jvp_optional(self, output, wrt, tangent)
    if r is None:
        raise InactiveError("wrt: the output does not depend on it through a differentiable path")
    return r


def _runtime_no_grad(self: Runtime, fn: Any = None) -> Any:
    return no_grad(fn)


def _runtime_capture_trace(self: Runtime, fn: Any = None) -> Any:
    return capture_trace(fn)

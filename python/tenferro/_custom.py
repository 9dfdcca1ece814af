"""Custom derivative rules: :class:`custom_vjp` and :class:`custom_jvp` (JAX's signatures).

A call of a decorated function on tensors that are being recorded (a tracked ``rt.variable``, an
argument of a ``tf.func`` transform, also under ``tf.jit``) records **one** node whose
derivative rules are the user's (``graph-mode.md``, "Custom derivative rules"; the same kind of
node as a compiled graph's ``CompiledCall``). Elsewhere the function simply runs.

See ``docs/custom-rules.md`` for a worked fixed-point example and the complex convention.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import _factories, _tenferro, _trace_state
from ._tenferro import Tensor
from .errors import DTypeError, ShapeError
from .func import _flatten, _unflatten

__all__ = ["custom_vjp", "custom_jvp"]

_S = _tenferro._implicit_session()


def _fun_name(fun: Callable[..., Any]) -> str:
    return getattr(fun, "__qualname__", None) or getattr(fun, "__name__", None) or repr(fun)


def _is_inexact(x: Any) -> bool:
    return isinstance(x, Tensor) and np.dtype(x.dtype).kind in "fc"


class _Call:
    """One call of a custom-rule function: its arguments split into the non-differentiated ones
    (``nondiff_argnums``) and the flattened differentiated ones, of which the float/complex
    tensors are the recorded node's inputs."""

    def __init__(
        self,
        name: str,
        fun: Callable[..., Any],
        nondiff: tuple[int, ...],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> None:
        if kwargs:
            try:
                bound = inspect.signature(fun).bind(*args, **kwargs)
            except (TypeError, ValueError) as e:
                raise TypeError(f"{name}: {e}") from None
            if bound.kwargs:
                raise TypeError(f"{name}: keyword-only arguments are not supported by custom rules")
            args = tuple(bound.args)
        for i in nondiff:
            if not -len(args) <= i < len(args):
                raise ValueError(
                    f"{name}: nondiff_argnums entry {i} is out of range for {len(args)} arguments"
                )
        self.name = name
        self.nargs = len(args)
        self.nondiff_pos = tuple(sorted({i % len(args) for i in nondiff})) if args else ()
        self.args = args
        self.nondiff = tuple(args[i] for i in self.nondiff_pos)
        self.diff_pos = tuple(i for i in range(len(args)) if i not in self.nondiff_pos)
        self.leaves, self.tree = _flatten(tuple(args[i] for i in self.diff_pos))
        self.tensor_pos = [k for k, x in enumerate(self.leaves) if _is_inexact(x)]

    @property
    def inputs(self) -> list[Tensor]:
        return [self.leaves[k] for k in self.tensor_pos]

    def records(self) -> bool:
        """Whether an op on the inputs would be recorded here (the active-edge rule)."""
        st = _tenferro._state_var().get()
        if not st.grad_enabled:
            return False
        return st.capture_trace or any(_S._records(x) for x in self.inputs)

    def diff_args(self, tensors: Sequence[Any]) -> tuple[Any, ...]:
        """The differentiated arguments with ``tensors`` in place of the input tensors."""
        leaves = list(self.leaves)
        for k, t in zip(self.tensor_pos, tensors):
            leaves[k] = t
        return tuple(_unflatten(self.tree, leaves))

    def full_args(self, tensors: Sequence[Any]) -> tuple[Any, ...]:
        """All positional arguments with ``tensors`` in place of the input tensors."""
        diff = iter(self.diff_args(tensors))
        return tuple(
            self.args[i] if i in self.nondiff_pos else next(diff) for i in range(self.nargs)
        )


class _Outputs:
    """The output pytree of a call: its structure, which leaves (float/complex tensors) are the
    node's outputs (``pos``, with their shapes and dtypes) and the other leaves (kept as they
    are; the node's outputs are not kept, so the fwd graph behind them is freed)."""

    def __init__(self, out: Any) -> None:
        leaves, self.tree = _flatten(out)
        self.pos = [k for k, x in enumerate(leaves) if _is_inexact(x)]
        self.meta = [(tuple(leaves[k].shape), np.dtype(leaves[k].dtype)) for k in self.pos]
        self.node_outputs: list[Tensor] | None = [leaves[k] for k in self.pos]
        self.others: list[Any] = [None if k in self.pos else x for k, x in enumerate(leaves)]

    @property
    def num_leaves(self) -> int:
        return len(self.others)

    def rebuild(self, node_outputs: Sequence[Tensor]) -> Any:
        leaves = list(self.others)
        for k, t in zip(self.pos, node_outputs):
            leaves[k] = t
        return _unflatten(self.tree, leaves)


def _check_leaf(name: str, what: str, v: Any, shape: tuple[int, ...], dtype: np.dtype) -> Tensor:
    """A value a user's rule returned for a tensor of ``shape``/``dtype``, as a tensor."""
    if not isinstance(v, Tensor):
        v = _factories.asarray(v)
    if tuple(v.shape) != tuple(shape):
        raise ShapeError(f"{name}: {what} has shape {tuple(v.shape)}, expected {tuple(shape)}")
    if np.dtype(v.dtype) != dtype:
        raise DTypeError(f"{name}: {what} has dtype {np.dtype(v.dtype)}, expected {dtype}")
    return v


def _record(call: _Call, bridge: Any, forward: bool, outs: _Outputs) -> Any:
    """Record the call's node (``_tenferro._custom_call``) and return the output pytree with
    the node's outputs in place of the float/complex tensors."""
    values, outs.node_outputs = outs.node_outputs or [], None
    return outs.rebuild(_tenferro._custom_call(bridge, call.name, forward, call.inputs, values))


def _zeros_for(x: Any) -> Any:
    """The zero tangent of an argument leaf that is not a float/complex tensor (ints, bools,
    Python numbers: zeros of their own dtype, as JAX's ``float0`` stands for)."""
    if isinstance(x, Tensor):
        return _factories.zeros(x.shape, dtype=x.dtype)
    a = np.asarray(x)
    return _factories.zeros(a.shape, dtype=a.dtype)


def _zero_leaf(rt: Any, x: Any, shape: tuple[int, ...], dtype: np.dtype) -> Tensor:
    """A fresh tracked zero tangent for the transposition of a JVP rule: traced (a ``select``
    of 0 on ``x``'s shape) when ``x`` is traced by ``tf.jit``, so that the rule's ops stay in
    the program; data otherwise."""
    if isinstance(x, Tensor) and x._traced:
        from ._numpy_api.indexing import where

        return _tenferro._variable(rt, where(True, np.zeros((), dtype=dtype), x.detach()), True)
    return rt.variable(np.zeros(shape, dtype=dtype))


def _runtime_of(ts: Sequence[Tensor]) -> Any:
    return ts[0].runtime if ts else _tenferro._current_runtime()


class _VjpBridge:
    """The rules of one recorded ``custom_vjp`` call (called by the node's Rust rule): ``bwd``
    on the kept residuals. Holds no tensor the call produced (no cycle through the node)."""

    def __init__(
        self, bwd: Callable[..., Any], call: _Call, residuals: Any, outs: _Outputs
    ) -> None:
        self.bwd, self.residuals, self.outs = bwd, residuals, outs
        self.name, self.nondiff, self.tree = call.name, call.nondiff, call.tree
        self.diff_pos, self.tensor_pos = call.diff_pos, call.tensor_pos
        self.in_meta = [(tuple(t.shape), np.dtype(t.dtype)) for t in call.inputs]

    def vjp(self, inputs: list[Tensor], cts: list[Tensor], record: bool) -> list[Tensor | None]:
        leaves: list[Any] = [None] * self.outs.num_leaves
        for k, c in zip(self.outs.pos, cts):
            leaves[k] = c
        ct_tree = _unflatten(self.outs.tree, leaves)
        with _factories._recording_on(_runtime_of(cts)):
            return self._check(self.bwd(*self.nondiff, self.residuals, ct_tree))

    def _check(self, res: Any) -> list[Tensor | None]:
        """``bwd``'s result as one cotangent (or ``None``) per input tensor, checked."""
        name = self.name
        if not isinstance(res, (tuple, list)):
            raise TypeError(
                f"{name}: the custom_vjp bwd rule must return a tuple with one cotangent per "
                f"differentiated argument ({len(self.diff_pos)}), got {type(res).__name__}"
            )
        if len(res) != len(self.diff_pos):
            raise ShapeError(
                f"{name}: the custom_vjp bwd rule returned {len(res)} cotangents, expected "
                f"{len(self.diff_pos)} (one per positional argument not in nondiff_argnums)"
            )
        flat: list[Any] = []
        for j, (ct, arg_tree) in enumerate(zip(res, self.tree.children)):
            if ct is None:
                flat.extend([None] * arg_tree.num_leaves)
                continue
            cl, ctree = _flatten(ct)
            if len(cl) != arg_tree.num_leaves:
                raise ShapeError(
                    f"{name}: the custom_vjp bwd rule returned a cotangent for argument "
                    f"{self.diff_pos[j]} with {len(cl)} leaves ({ctree}), the argument has "
                    f"{arg_tree.num_leaves} ({arg_tree})"
                )
            flat.extend(cl)
        out: list[Tensor | None] = []
        for i, (k, (shape, dtype)) in enumerate(zip(self.tensor_pos, self.in_meta)):
            c = flat[k]
            what = f"the cotangent of input {i} returned by bwd"
            out.append(None if c is None else _check_leaf(name, what, c, shape, dtype))
        return out


class _JvpBridge:
    """The rules of one recorded ``custom_jvp`` call: the user's JVP, and its transpose for
    reverse mode (the JVP is linear in the tangents: it is recorded on fresh tangent leaves
    and reverse mode runs over that record)."""

    def __init__(self, jvp: Callable[..., Any], call: _Call, outs: _Outputs) -> None:
        # The call keeps its arguments: tensors upstream of the node, never its outputs.
        self.jvp_rule, self.call, self.outs = jvp, call, outs
        self.in_meta = [(tuple(t.shape), np.dtype(t.dtype)) for t in call.inputs]

    def _tangent_out(
        self, inputs: Sequence[Tensor], tangents: Sequence[Tensor]
    ) -> list[Tensor | None]:
        call = self.call
        primals = call.diff_args(inputs)
        tan_leaves = [
            None if k in call.tensor_pos else _zeros_for(x) for k, x in enumerate(call.leaves)
        ]
        for k, t in zip(call.tensor_pos, tangents):
            tan_leaves[k] = t
        tan_args = tuple(_unflatten(call.tree, tan_leaves))
        with _factories._recording_on(_runtime_of(list(inputs))):
            return self._check(self.jvp_rule(*call.nondiff, primals, tan_args))

    def _check(self, res: Any) -> list[Tensor | None]:
        """The rule's ``tangent_out`` as one tangent (or ``None``) per output tensor, checked."""
        name = self.call.name
        if not (isinstance(res, (tuple, list)) and len(res) == 2):
            raise TypeError(
                f"{name}: the custom_jvp rule must return a pair (primal_out, tangent_out)"
            )
        tl, ttree = _flatten(res[1])
        if len(tl) != self.outs.num_leaves:
            raise ShapeError(
                f"{name}: the custom_jvp rule returned a tangent with {len(tl)} leaves ({ttree}), "
                f"the output has {self.outs.num_leaves} ({self.outs.tree})"
            )
        what = "the tangent of output {} returned by the jvp rule"
        return [
            None if tl[k] is None else _check_leaf(name, what.format(i), tl[k], shape, dtype)
            for i, (k, (shape, dtype)) in enumerate(zip(self.outs.pos, self.outs.meta))
        ]

    def jvp(
        self, inputs: list[Tensor], tangents: list[Tensor], record: bool
    ) -> list[Tensor | None]:
        return self._tangent_out(inputs, tangents)

    def vjp(self, inputs: list[Tensor], cts: list[Tensor], record: bool) -> list[Tensor | None]:
        rt = _runtime_of(inputs)
        token = _tenferro._set_modes(grad_enabled=True)
        try:
            leaves = [
                _zero_leaf(rt, x, shape, dtype) for x, (shape, dtype) in zip(inputs, self.in_meta)
            ]
            touts = self._tangent_out(inputs, leaves)
            acc: list[Tensor | None] = [None] * len(leaves)
            for ct, tout in zip(cts, touts):
                if tout is None:
                    continue
                gs = _tenferro._vjp(tout, leaves, ct)
                acc = [g if a is None else (a if g is None else a + g) for a, g in zip(acc, gs)]
        finally:
            _tenferro._state_var().reset(token)
        return acc


class custom_vjp:
    """Give ``fun`` a reverse-mode derivative rule of your own (``jax.custom_vjp``'s interface).

    Decorate ``fun``, then attach ``fwd(*args) -> (out, residuals)`` and
    ``bwd(*nondiff_args, residuals, ct) -> tuple`` with :meth:`defvjp`. ``bwd`` returns one
    cotangent per positional argument not in ``nondiff_argnums`` (a pytree like the argument,
    or ``None`` for zero), each leaf with the shape and dtype of the argument's leaf.

    Parameters
    ----------
    fun : callable
        The primal function ``fun(*args) -> out``; ``args`` and ``out`` are pytrees of tensors
        (float and complex tensor leaves are differentiated).
    nondiff_argnums : tuple of int, default ()
        Positional arguments that are not differentiated (Python values, functions, flags):
        passed to ``bwd`` first, in order, and given no cotangent.

    Notes
    -----
    A call on tensors that are recorded (tracked tensors, ``tf.func`` arguments, also under
    ``tf.jit``) runs ``fwd`` with recording on, so the residuals depend differentiably on the
    inputs, and records one node whose reverse rule is ``bwd``. ``bwd`` runs with recording on
    when the backward pass is itself recorded (``tf.func``, ``create_graph=True``), so written
    with tenferro ops it has derivatives of any order (``grad(grad(f))``). Under ``tf.jit``
    its ops are emitted into the program. It may call any tenferro op, also inside a
    ``with rt.session(engine)`` block. Elsewhere (nothing recorded) ``fun`` itself runs.

    **Complex numbers** follow tenferro's Hermitian convention (``autodiff.md``): for a real
    loss ``L`` of complex ``z``, ``bwd`` returns ``∂L/∂Re z + i ∂L/∂Im z``; for holomorphic
    ``y = f(z)`` with cotangent ``ȳ`` that is ``ȳ · conj(f'(z))``. This is the **conjugate** of
    what a JAX ``bwd`` returns for holomorphic pieces (``ȳ · f'(z)``): a rule ported from JAX
    needs a ``conj`` (see the example).

    Raises
    ------
    TypeError
        Forward mode (``tf.func.jvp``, ``jacfwd``, forward-over-reverse ``hessian``) through a
        call, naming the function (as JAX); ``bwd`` not returning a tuple; no rule defined.
    tenferro.errors.ShapeError
        ``bwd`` returned the wrong number of cotangents, or a cotangent of the wrong shape
        (the message names the function and the argument).
    tenferro.errors.DTypeError
        A cotangent of the wrong dtype (e.g. real for a complex argument).

    Examples
    --------
    A clipped gradient:

    >>> import tenferro as tf
    >>> @tf.custom_vjp
    ... def clip_grad(x):
    ...     return x
    >>> def clip_fwd(x):
    ...     return x, None
    >>> def clip_bwd(_, ct):
    ...     return (tf.clip(ct, -1.0, 1.0),)
    >>> clip_grad.defvjp(clip_fwd, clip_bwd)
    >>> tf.func.grad(lambda x: (3.0 * clip_grad(x)).sum())(tf.tensor([1.0, 2.0])).tolist()
    [1.0, 1.0]

    A holomorphic rule ported from JAX (``exp``: JAX's ``bwd`` is ``ct * exp(z)``); tenferro's
    convention conjugates it:

    >>> @tf.custom_vjp
    ... def cexp(z):
    ...     return tf.exp(z)
    >>> def cexp_fwd(z):
    ...     y = tf.exp(z)
    ...     return y, y
    >>> def cexp_bwd(y, ct):
    ...     return (ct * tf.conj(y),)      # JAX: (ct * y,)
    >>> cexp.defvjp(cexp_fwd, cexp_bwd)
    >>> z = tf.tensor(0.3 + 0.4j)
    >>> g = tf.func.grad(lambda z: tf.abs(cexp(z)) ** 2)(z)   # |exp z|^2 = exp(2 Re z)
    >>> g_plain = tf.func.grad(lambda z: tf.abs(tf.exp(z)) ** 2)(z)
    >>> bool(abs(g.item() - g_plain.item()) < 1e-12), round(g.item().real, 6), round(g.item().imag, 6)
    (True, 3.644238, 0.0)
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(int(i) for i in nondiff_argnums)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self._in_fwd = 0

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        """Attach the rules: ``fwd(*args) -> (out, residuals)`` (``out`` as ``fun``'s, residuals
        any pytree) and ``bwd(*nondiff_args, residuals, ct) -> tuple of cotangents``."""
        self.fwd, self.bwd = fwd, bwd

    @property
    def name(self) -> str:
        return _fun_name(self.fun)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fwd is None or self.bwd is None:
            raise AttributeError(
                f"No VJP defined for custom_vjp function {self.name} using defvjp."
            )
        call = _Call(self.name, self.fun, self.nondiff_argnums, args, kwargs)
        _trace_state.note_custom_rule(self.name)
        # A call inside its own fwd (JAX's examples compute ``out`` as ``f(x)`` there) is the
        # primal function; only the outer call is recorded as the node.
        if self._in_fwd or not call.records():
            return self.fun(*call.args)
        self._in_fwd += 1
        try:
            res = self.fwd(*call.args)
        finally:
            self._in_fwd -= 1
        if not (isinstance(res, (tuple, list)) and len(res) == 2):
            raise TypeError(
                f"{self.name}: the custom_vjp fwd rule must return a pair (out, residuals)"
            )
        out, residuals = res
        outs = _Outputs(out)
        if not outs.pos:
            return out
        bridge = _VjpBridge(self.bwd, call, residuals, outs)
        return _record(call, bridge, False, outs)

    def __repr__(self) -> str:
        return f"<tenferro.custom_vjp {self.name}>"


class custom_jvp:
    """Give ``fun`` a forward-mode derivative rule of your own (``jax.custom_jvp``'s interface).

    Decorate ``fun`` and attach ``jvp(*nondiff_args, primals, tangents) -> (out, tangent_out)``
    with :meth:`defjvp` (also usable as a decorator). ``primals`` and ``tangents`` are tuples
    of the positional arguments not in ``nondiff_argnums`` and their tangents (zeros for
    arguments that are not float/complex tensors); ``tangent_out`` is a pytree like ``out``.

    Parameters
    ----------
    fun : callable
        The primal function (pytrees of tensors in and out).
    nondiff_argnums : tuple of int, default ()
        Positional arguments passed to the rule first and not differentiated.

    Notes
    -----
    Forward mode (``tf.func.jvp``, ``jacfwd``) calls the rule. Reverse mode **transposes** it:
    the rule must be linear in the tangents (as every JVP is); it is recorded on fresh tangent
    leaves and reverse mode runs over that record, so the VJP obeys tenferro's Hermitian
    convention without a ``conj`` from you (the JVP convention is JAX's: ``f'(z)·ż``). With the
    rule written in tenferro ops, derivatives of any order follow. The call's outputs are
    ``fun``'s values.

    Raises
    ------
    tenferro.errors.ShapeError, tenferro.errors.DTypeError
        The rule's ``tangent_out`` has the wrong structure, shape or dtype (the message names
        the function).
    TypeError
        The rule does not return a pair; no rule defined.

    Examples
    --------
    ``log(1 + exp(x))`` with a stable derivative ``sigmoid(x)``:

    >>> import tenferro as tf
    >>> @tf.custom_jvp
    ... def softplus(x):
    ...     return tf.log1p(tf.exp(x))
    >>> @softplus.defjvp
    ... def softplus_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return softplus(x), t / (1.0 + tf.exp(-x))
    >>> x = tf.tensor([0.0, 1000.0])
    >>> tf.func.grad(lambda x: softplus(x).sum())(x).tolist()
    [0.5, 1.0]
    >>> tf.func.jvp(softplus, (x,), (tf.tensor([2.0, 2.0]),))[1].tolist()
    [1.0, 2.0]
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(int(i) for i in nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None

    def defjvp(self, jvp: Callable[..., Any]) -> Callable[..., Any]:
        """Attach ``jvp(*nondiff_args, primals, tangents) -> (out, tangent_out)``; returns it
        (so ``@f.defjvp`` works as a decorator)."""
        self.jvp = jvp
        return jvp

    @property
    def name(self) -> str:
        return _fun_name(self.fun)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.jvp is None:
            raise AttributeError(
                f"No JVP defined for custom_jvp function {self.name} using defjvp."
            )
        call = _Call(self.name, self.fun, self.nondiff_argnums, args, kwargs)
        _trace_state.note_custom_rule(self.name)
        if not call.records():
            return self.fun(*call.args)
        token = _tenferro._set_modes(grad_enabled=False)
        try:
            out = self.fun(*call.args)
        finally:
            _tenferro._state_var().reset(token)
        outs = _Outputs(out)
        if not outs.pos:
            return out
        return _record(call, _JvpBridge(self.jvp, call, outs), True, outs)

    def __repr__(self) -> str:
        return f"<tenferro.custom_jvp {self.name}>"

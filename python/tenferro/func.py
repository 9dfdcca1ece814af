"""Function transforms in the style of ``jax`` / ``torch.func``: :func:`grad`,
:func:`value_and_grad`, :func:`vjp`, :func:`jvp`, :func:`jacrev`, :func:`jacfwd` and
:func:`hessian` take a Python callable built from tenferro ops and return a new callable.

How they run
------------
Each call of a transformed function records ``f`` on a **fresh** :class:`tenferro.Runtime`:
the differentiated arguments become tracked leaves of it (``rt.variable``, a copy), the other
tensor arguments are re-registered in it untracked (``detach_into``, no copy), and the
derivatives are taken with the functional ``rt.grad`` / ``rt.vjp`` / ``rt.jvp``. So no gradient
slot of the caller is created or touched, and recording is on inside ``f`` even under
:class:`tenferro.no_grad`. The results are returned as **untracked** tensors of the caller's
runtime (the runtime of the first tensor argument, else the innermost session's runtime, else
the default runtime), so they mix freely with the caller's tensors.

**Composition.** When an argument is already a tracked tensor (for instance the leaf of an
enclosing transform, or a ``rt.variable`` of the caller), the transform differentiates *through*
it on that tensor's runtime instead of copying it, and the results stay tracked: ``grad(grad(f))``,
``jacfwd(jacrev(f))`` and taking ``backward`` of a ``grad`` result all work. Each differentiated
argument is first passed through an identity node, so an inner transform only counts the paths
through its own argument (no perturbation confusion when ``f`` also closes over the outer
variable).

**Closures.** ``f`` runs on the caller's runtime (the runtime of the first tensor argument, else
the innermost session's, else the default runtime), so it may close over the caller's tensors and
build constants with the factories (``tf.ones``…); the private leaves of the call die with it and
no gradient slot is touched. A tensor of *another* runtime raises
:class:`tenferro.errors.ContextMismatchError`.

Complex numbers (tenferro's convention, *not* JAX's)
----------------------------------------------------
tenferro's VJP is the adjoint under ``<a, b> = Re Σ conj(a)·b`` (``autodiff.md``). Hence:

* :func:`grad` of a real loss ``L`` of complex ``z`` returns ``∂L/∂x + i ∂L/∂y`` — the
  steepest-ascent direction, PyTorch's numbers; ``jax.grad`` returns the conjugate
  ``∂L/∂x − i ∂L/∂y``. For a complex scalar output the seed is ``1+0j`` and, for holomorphic
  ``f``, the result is ``conj(f'(z))`` (``jax.grad(..., holomorphic=True)`` gives ``f'(z)``).
* :func:`vjp`'s ``vjp_fn(ȳ)`` returns ``ȳ · conj(f'(z))`` for holomorphic ``f`` (JAX:
  ``ȳ · f'(z)``); :func:`jvp` is the same as JAX's (``f'(z)·ż``).
* :func:`jacfwd`, :func:`jacrev` and :func:`hessian` follow JAX's rules: complex inputs (and, for
  ``jacrev``, complex outputs) need ``holomorphic=True``, and then return the complex Jacobian
  ``f'(z)`` (``jacrev`` conjugates its VJP rows so that both agree).

Pytrees (JAX's)
---------------
Arguments, outputs, gradients, cotangents and tangents are **pytrees**: tuples, lists, dicts
(flattened, and rebuilt, in sorted-key order), namedtuples and ``None`` (an empty node), nested,
are containers; anything else (tensors, NumPy arrays, Python numbers) is a leaf. A differentiated
argument is flattened and each leaf becomes its own variable, so a list argument is a list of
leaves, never stacked into one array; the gradient is returned with the argument's structure. ``argnums``
selects whole arguments (an int: that argument's gradient; a tuple: a tuple of them, in
``argnums`` order). The complex convention above holds leaf by leaf.

Shapes follow JAX: ``jacrev(f)(x)`` and ``jacfwd(f)(x)`` have shape ``out.shape + x.shape``; for
pytrees the output's structure is outside and the argument's inside (``jac[out_key][arg_key]``
has shape ``out_leaf.shape + arg_leaf.shape``), with a tuple over ``argnums`` in between when
``argnums`` is a tuple.

Examples
--------
>>> import tenferro as tf
>>> f = lambda x: (x * x * x).sum()
>>> tf.func.grad(f)(tf.tensor([1.0, 2.0])).tolist()
[3.0, 12.0]
>>> tf.func.grad(lambda x: tf.func.grad(f)(x).sum())(tf.tensor([1.0, 2.0])).tolist()
[6.0, 12.0]
>>> tf.func.hessian(f)(tf.tensor([1.0, 2.0])).tolist()
[[6.0, 0.0], [0.0, 12.0]]
>>> z = tf.tensor(3 + 4j)
>>> tf.func.grad(lambda z: (z * z.conj()).real)(z).tolist()  # jax.grad: (6-8j)
(6+8j)
>>> loss = lambda p: (p["w"] * p["w"]).sum() * p["s"][0] + p["s"][1]
>>> g = tf.func.grad(loss)({"w": tf.tensor([1.0, 2.0]), "s": [3.0, 4.0]})  # a dict of a list
>>> g["w"].tolist(), [v.tolist() for v in g["s"]]
([6.0, 12.0], [5.0, 1.0])
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

import numpy as np

from . import _factories, _tenferro
from ._tenferro import Runtime, Tensor
from .errors import NonScalarGradError, ShapeError

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian"]


# --------------------------------------------------------------------------------------------
# pytrees (JAX's): tuples, lists, dicts (flattened in sorted-key order), namedtuples and None
# (an empty node) are containers; everything else is a leaf.


class _TreeDef:
    """The structure of a pytree: ``kind`` (``leaf``, ``none``, ``tuple``, ``list``, ``dict``,
    ``namedtuple``), ``meta`` (the dict's keys in flattening order, the namedtuple class) and the
    children's structures."""

    __slots__ = ("kind", "meta", "children")

    def __init__(self, kind: str, meta: Any = None, children: tuple[_TreeDef, ...] = ()) -> None:
        self.kind, self.meta, self.children = kind, meta, children

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _TreeDef)
            and self.kind == other.kind
            and self.meta == other.meta
            and self.children == other.children
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.children))

    @property
    def num_leaves(self) -> int:
        return 1 if self.kind == "leaf" else sum(c.num_leaves for c in self.children)

    def __repr__(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(repr(c) for c in self.children)
        if self.kind == "dict":
            return "{" + ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.meta, self.children)) + "}"
        if self.kind == "list":
            return f"[{inner}]"
        name = self.meta.__name__ if self.kind == "namedtuple" else ""
        return f"{name}({inner}{',' if len(self.children) == 1 and not name else ''})"


_LEAF_DEF = _TreeDef("leaf")


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _dict_keys(d: dict[Any, Any]) -> tuple[Any, ...]:
    try:
        return tuple(sorted(d))
    except TypeError:  # keys of mixed types: insertion order
        return tuple(d)


def _flatten(tree: Any) -> tuple[list[Any], _TreeDef]:
    """The leaves of ``tree`` (depth first) and its structure."""
    if type(tree) is Tensor:  # the common case: one tensor argument
        return [tree], _LEAF_DEF
    leaves: list[Any] = []

    def walk(x: Any) -> _TreeDef:
        if type(x) is Tensor:
            leaves.append(x)
            return _LEAF_DEF
        if x is None:
            return _TreeDef("none")
        if _is_namedtuple(x):
            return _TreeDef("namedtuple", type(x), tuple(walk(c) for c in x))  # noqa: F821
        if isinstance(x, (tuple, list)):
            kind = "tuple" if isinstance(x, tuple) else "list"
            return _TreeDef(kind, None, tuple(walk(c) for c in x))  # noqa: F821
        if isinstance(x, dict):
            keys = _dict_keys(x)
            return _TreeDef("dict", keys, tuple(walk(x[k]) for k in keys))  # noqa: F821
        leaves.append(x)
        return _LEAF_DEF

    try:
        return leaves, walk(tree)
    finally:
        del walk  # the recursive closure is a cycle holding the leaves: break it


def _unflatten(tdef: _TreeDef, leaves: Sequence[Any]) -> Any:
    """The pytree of structure ``tdef`` holding ``leaves`` (depth first)."""
    if tdef is _LEAF_DEF and len(leaves) == 1:
        return leaves[0]
    it = iter(leaves)

    def build(d: _TreeDef) -> Any:
        if d.kind == "leaf":
            return next(it)
        if d.kind == "none":
            return None
        kids = [build(c) for c in d.children]  # noqa: F821
        if d.kind == "tuple":
            return tuple(kids)
        if d.kind == "list":
            return kids
        if d.kind == "namedtuple":
            return d.meta(*kids)
        return dict(zip(d.meta, kids))

    try:
        return build(tdef)
    finally:
        del build  # the recursive closure is a cycle holding the leaves: break it


def _tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    if type(tree) is Tensor:
        return fn(tree)
    leaves, tdef = _flatten(tree)
    return _unflatten(tdef, [fn(x) for x in leaves])


# --------------------------------------------------------------------------------------------
# plumbing


def _norm_argnums(
    argnums: int | Sequence[int], nargs: int, name: str
) -> tuple[tuple[int, ...], bool]:
    single = isinstance(argnums, (int, np.integer))
    nums = (int(argnums),) if single else tuple(int(a) for a in argnums)  # type: ignore[union-attr]
    if not nums:
        raise ValueError(f"{name}: argnums must not be empty")
    out = []
    for a in nums:
        if not -nargs <= a < nargs:
            raise ValueError(
                f"{name}: argnums={a} is out of range for {nargs} positional arguments"
            )
        out.append(a % nargs)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: argnums {nums} repeats an argument")
    return tuple(out), single


def _caller_runtime(leaves: Sequence[Any]) -> Runtime:
    """The runtime ops on ``leaves`` run on (the extension's one resolution rule)."""
    first = next((a for a in leaves if isinstance(a, Tensor)), None)
    return _tenferro._current_runtime(first)


# How many transform frames are running their function or derivative on this thread/context
# (nested transforms compose with the enclosing ones).
_ACTIVE: ContextVar[int] = ContextVar("tenferro_func_active_frames", default=0)


class _Frame:
    """One call of a transformed function: the runtime it records on and how results leave it.

    Every positional argument is a pytree; the leaves of the differentiated ones become the
    flat list ``wrt`` (in argument order, depth first), ``groups`` regroups a flat list of
    per-leaf results into one pytree per differentiated argument."""

    def __init__(self, name: str, args: Sequence[Any], argnums: tuple[int, ...]) -> None:
        self.name = name
        all_leaves = [x for a in args for x in _flatten(a)[0]]
        tracked = [a for a in all_leaves if isinstance(a, Tensor) and a.requires_grad]
        # Composed: inside another transform's function (which f may close over: its tracked
        # tensors reach f without being arguments) or on tracked arguments. Its derivative is
        # recorded and its results stay tracked, so the outer transform sees through it.
        self.composed = bool(tracked) or _ACTIVE.get() > 0
        self.home = _caller_runtime(all_leaves)
        state = _tenferro._state_var().get()
        self.grad_was_enabled = state.grad_enabled
        # Record on the caller's runtime, so that f may close over the caller's tensors and use
        # the factories; the private leaves die with the call and no gradient slot is touched.
        self.rt: Runtime = tracked[0].runtime if tracked else self.home
        new_args = [a if i in argnums else self._passive_tree(a) for i, a in enumerate(args)]
        self.wrt: list[Tensor] = []
        self.trees: list[_TreeDef] = []
        self.spans: list[tuple[int, int]] = []
        # The identity nodes of tracked leaves are recorded even under the caller's no_grad
        # (else f would see an untracked copy and every derivative would be zero); the
        # results are detached for such a caller (`_out_leaf`).
        token = _tenferro._set_modes(grad_enabled=True)
        try:
            for i in argnums:  # in argnums order, as the results
                leaves, tdef = _flatten(args[i])
                new = [self._leaf(x) for x in leaves]
                new_args[i] = _unflatten(tdef, new)
                self.trees.append(tdef)
                self.spans.append((len(self.wrt), len(self.wrt) + len(new)))
                self.wrt.extend(new)
        finally:
            _tenferro._state_var().reset(token)
        self.args = new_args

    def _passive_tree(self, a: Any) -> Any:
        """A non-differentiated argument: the caller's object itself, unless it holds untracked
        tensors of another runtime (then rebuilt with those re-registered here)."""
        if any(self._passive(x) is not x for x in _flatten(a)[0]):
            return _tree_map(self._passive, a)
        return a

    def _passive(self, a: Any) -> Any:
        if isinstance(a, Tensor) and not a.requires_grad and a.runtime.id != self.rt.id:
            return a.detach_into(self.rt)
        return a

    def _leaf(self, a: Any) -> Tensor:
        if isinstance(a, Tensor) and a.requires_grad:
            # Identity node: an inner transform counts only the paths through its own argument.
            return _tenferro._implicit_session().reshape(a, a.shape)
        # A tensor is taken as it is, its data shared (a traced tensor under tf.jit has no data
        # to copy out; the private leaf dies with the call and tensors are never written).
        data = a if isinstance(a, Tensor) else np.asarray(a)
        if np.dtype(data.dtype).kind not in "fc":
            raise TypeError(
                f"{self.name}: differentiated arguments need a float or complex dtype, got {data.dtype}"
            )
        return _tenferro._variable(self.rt, data, True)

    def groups(self, flat: Sequence[Any]) -> list[Any]:
        """Per-leaf results (ordered as ``wrt``) as one pytree per differentiated argument."""
        return [_unflatten(t, flat[a:b]) for t, (a, b) in zip(self.trees, self.spans)]

    def call(self, f: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
        """Run ``f`` recording on the frame's runtime; its factories build constants there."""
        return self.run(lambda: f(*self.args, **kwargs))

    def run(self, fn: Callable[[], Any]) -> Any:
        """Run ``f`` or a derivative computation with recording on (needed for higher order),
        as an active frame (transforms nested inside compose with this one)."""
        token = _tenferro._set_modes(grad_enabled=True)
        depth = _ACTIVE.set(_ACTIVE.get() + 1)
        try:
            with _factories._recording_on(self.rt):
                return fn()
        finally:
            _ACTIVE.reset(depth)
            _tenferro._state_var().reset(token)

    def vjp(self, out: Tensor, ct: Tensor | None) -> list[Tensor | None]:
        """Cotangents of ``wrt`` for ``out`` (seed ``ct``; ``None``: a scalar's 1). Recorded only
        in a composed frame: a fresh frame's results are detached, so recording them would only
        cost (a compiled call would recompute its forward instead of using its residuals)."""
        from .autodiff import _own

        _own(self.rt, self.name, output=out, wrt=self.wrt)
        return self.run(lambda: _tenferro._vjp(out, self.wrt, ct, create_graph=self.composed))

    def jvp(self, out: Tensor, wrt: list[Tensor], tangents: list[Tensor]) -> Tensor | None:
        """Tangent of ``out`` along ``tangents`` of ``wrt``; recorded only in a composed frame
        (as :meth:`vjp`)."""
        from .autodiff import _own

        _own(self.rt, self.name, output=out, wrt=wrt, tangent=tangents)
        return self.run(lambda: _tenferro._jvp(out, wrt, tangents, create_graph=self.composed))

    def const(self, data: Any) -> Tensor:
        return self.rt.constant(data)

    def import_(self, t: Any, like: Tensor, what: str) -> Tensor:
        """A cotangent/tangent given by the caller, as a tensor of this frame's runtime."""
        if isinstance(t, Tensor):
            if t.runtime is self.rt:
                return t
            if t.requires_grad:
                raise _tenferro_error_mismatch(self.name, what)
            return t.detach_into(self.rt)
        return self.rt.constant(np.asarray(t, dtype=like.dtype))

    def out(self, value: Any) -> Any:
        """Map results back to the caller: untracked tensors of its runtime (fresh frame), or
        the tracked results themselves (composed frame)."""
        return _tree_map(self._out_leaf, value)

    def _out_leaf(self, value: Any) -> Any:
        if isinstance(value, Tensor):
            if self.composed:
                return value if self.grad_was_enabled else value.detach()
            if value.runtime is self.rt:
                return value.detach_into(self.home)
        return value

    def outputs(self, out: Any, what: str = "f") -> tuple[list[Tensor], _TreeDef]:
        """The leaves of ``f``'s pytree output as tensors of this frame (NumPy/Python numbers
        become constants), with the output's structure."""
        leaves, tdef = _flatten(out)
        res = []
        for x in leaves:
            if not isinstance(x, Tensor):
                arr = np.asarray(x)
                if arr.dtype.kind not in "biufc":
                    raise TypeError(
                        f"{self.name}: {what} must return tensors (or a pytree of them), got a leaf "
                        f"of type {type(x).__name__}"
                    )
                x = self.const(arr)
            res.append(x)
        return res, tdef


def _tenferro_error_mismatch(name: str, what: str) -> Exception:
    from .errors import ContextMismatchError

    return ContextMismatchError(f"{name}: the {what} is a tracked tensor of another runtime")


def _zeros_like(frame: _Frame, t: Tensor) -> Tensor:
    return frame.const(np.zeros(t.shape, dtype=t.dtype))


def _split_aux(out: Any, has_aux: bool, name: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"{name}: with has_aux=True, f must return a pair (output, aux)")
    return out[0], out[1]


def _check_tensor(frame: _Frame, out: Any, name: str) -> Tensor:
    """``f``'s single output as a tensor (a NumPy/Python number: a constant, zero gradients)."""
    if isinstance(out, Tensor):
        return out
    if isinstance(out, (tuple, list, dict)) or out is None:
        raise TypeError(f"{name}: f must return a tenferro Tensor, got {type(out).__name__}")
    (leaf,), _ = frame.outputs(out)
    return leaf


def _grads(frame: _Frame, out: Tensor, name: str) -> list[Tensor]:
    if out.shape != ():
        raise NonScalarGradError(
            f"{name}: f must return a scalar (shape ()), got shape {out.shape}; use jacrev or vjp"
        )
    if not frame.wrt or (not out.requires_grad and not _tenferro._is_leaf(out)):
        # Constant output: every derivative is zero.
        return [_zeros_like(frame, w) for w in frame.wrt]
    gs = frame.vjp(out, None)
    return [g if g is not None else _zeros_like(frame, w) for g, w in zip(gs, frame.wrt)]


# --------------------------------------------------------------------------------------------
# grad / value_and_grad


def value_and_grad(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """Transform ``f`` into a function returning ``(f(*args), ∇f(*args))``.

    Parameters
    ----------
    f : callable
        ``f(*args, **kwargs) -> Tensor`` of shape ``()`` (or ``(Tensor, aux)`` with
        ``has_aux``), built from tenferro ops.
    argnums : int or tuple of int, default 0
        Positional arguments to differentiate: pytrees (module docstring) whose leaves are
        array_like or tensors of float/complex dtype.
    has_aux : bool, default False
        ``f`` returns ``(output, aux)``; ``aux`` is passed through untouched (its tensors
        converted like the results).

    Returns
    -------
    callable
        ``(value, grad)``, or ``((value, aux), grad)`` with ``has_aux``; ``grad`` has the
        structure of the argument and each leaf the shape and dtype of its leaf (a tuple of such
        when ``argnums`` is a tuple). A gradient that does not depend on the argument is zeros (as
        JAX), never ``None``.

    Raises
    ------
    tenferro.errors.NonScalarGradError
        When ``f``'s output is not a scalar.
    TypeError
        When a differentiated leaf has an integer or bool dtype, or ``f`` does not return a
        tensor.

    Notes
    -----
    Complex inputs follow tenferro's convention (module docstring): the gradient of a real loss
    is ``∂L/∂x + i ∂L/∂y``, the conjugate of ``jax.grad``'s.

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> vg = tf.func.value_and_grad(lambda x, y: (x * y).sum(), argnums=(0, 1))
    >>> value, (gx, gy) = vg(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    >>> value.tolist(), gx.tolist(), gy.tolist()
    (11.0, [3.0, 4.0], [1.0, 2.0])
    """

    fast = getattr(f, "_value_and_grad_fast", None) if not has_aux else None

    @functools.wraps(f)
    def value_and_grad_f(*args: Any, **kwargs: Any) -> Any:
        nums, single = _norm_argnums(argnums, len(args), "value_and_grad")
        if fast is not None and not kwargs and _ACTIVE.get() == 0:
            # A jitted f: its compiled program's derivative programs, without this frame.
            r = fast(args, nums)
            if r is not None:
                # The program returns the gradients in argument order; argnums may not be.
                order = sorted(nums)
                gs = [r[1][order.index(n)] for n in nums]
                return r[0], (gs[0] if single else tuple(gs))
        frame = _Frame("value_and_grad", args, nums)
        out, aux = _split_aux(frame.call(f, kwargs), has_aux, "value_and_grad")
        out = _check_tensor(frame, out, "value_and_grad")
        gs = frame.groups(_grads(frame, out, "value_and_grad"))
        g = gs[0] if single else tuple(gs)
        value = (out, aux) if has_aux else out
        return frame.out((value, g))

    return value_and_grad_f


def grad(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """Transform the scalar function ``f`` into its gradient (JAX's ``grad`` semantics).

    Parameters
    ----------
    f : callable
        ``f(*args, **kwargs) -> Tensor`` of shape ``()`` (or ``(Tensor, aux)`` with ``has_aux``).
    argnums : int or tuple of int, default 0
        Which positional arguments to differentiate.
    has_aux : bool, default False
        ``f`` returns ``(output, aux)``; the transformed function returns ``(grad, aux)``.

    Returns
    -------
    callable
        Returns the gradient (the argument's pytree structure, each leaf with its leaf's shape
        and dtype), a tuple of gradients for a tuple ``argnums``, and ``(grad, aux)`` with
        ``has_aux``.

    Raises
    ------
    tenferro.errors.NonScalarGradError, TypeError
        As :func:`value_and_grad`.

    Notes
    -----
    For complex ``z`` and a real loss the result is ``∂L/∂x + i ∂L/∂y`` (``jax.grad`` returns its
    conjugate). Results are untracked tensors of the caller's runtime, unless an argument is a
    tracked tensor (then they stay tracked, for higher order).

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> df = tf.func.grad(lambda x: (tf.sin(x) * x).sum())
    >>> [round(v, 6) for v in df(np.array([0.0, 1.0])).tolist()]
    [0.0, 1.381773]
    >>> g, aux = tf.func.grad(lambda x: ((x * x).sum(), x.shape), has_aux=True)(np.ones(3))
    >>> g.tolist(), aux
    ([2.0, 2.0, 2.0], (3,))
    >>> d2 = tf.func.grad(tf.func.grad(lambda x: x * x * x))
    >>> d2(np.array(2.0)).tolist()
    12.0
    """
    vg = value_and_grad(f, argnums, has_aux)

    @functools.wraps(f)
    def grad_f(*args: Any, **kwargs: Any) -> Any:
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return grad_f


# --------------------------------------------------------------------------------------------
# vjp / jvp


def vjp(f: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """Evaluate ``f(*primals)`` and return it with its vector-Jacobian-product function.

    Parameters
    ----------
    f : callable
        ``f(*primals) -> pytree of Tensors`` (or ``(output, aux)`` with ``has_aux``).
    *primals : pytrees of array_like or Tensor
        The points (float or complex leaves); all are differentiated.
    has_aux : bool, default False
        ``f`` returns ``(output, aux)``; then ``(out, vjp_fn, aux)`` is returned.

    Returns
    -------
    out : pytree of Tensor
        ``f(*primals)``.
    vjp_fn : callable
        ``vjp_fn(cotangent)``, the cotangent a pytree of ``out``'s structure (each leaf the shape
        and dtype of its output leaf; for a single tensor output any array_like), returns a tuple
        with one cotangent pytree per primal, of its structure (zeros where ``out`` does not
        depend on it); it may be called many times.

    Raises
    ------
    TypeError
        The cotangent's structure differs from the output's; an integer primal leaf.
    tenferro.errors.ShapeError
        A cotangent leaf's shape differs from its output leaf's (a ``ValueError``, as from
        ``rt.vjp``).

    Notes
    -----
    tenferro's Hermitian adjoint: for holomorphic ``f``, ``vjp_fn(ȳ) = ȳ · conj(f'(z))`` — the
    conjugate of JAX's ``ȳ · f'(z)``.

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> out, vjp_fn = tf.func.vjp(lambda x: x * x, np.array([1.0, 3.0]))
    >>> out.tolist(), vjp_fn(np.array([1.0, 1.0]))[0].tolist()
    ([1.0, 9.0], [2.0, 6.0])
    >>> _, vjp_fn = tf.func.vjp(tf.exp, np.array(1j * np.pi / 2))
    >>> v = complex(vjp_fn(np.array(2 - 3j))[0])  # (2-3j) * conj(exp(i pi/2)) = -3-2j
    >>> round(v.real, 12), round(v.imag, 12)
    (-3.0, -2.0)
    """
    if not primals:
        raise TypeError("vjp: at least one primal is required")
    frame = _Frame("vjp", primals, tuple(range(len(primals))))
    out, aux = _split_aux(frame.call(f, {}), has_aux, "vjp")
    outs, out_tree = frame.outputs(out)

    def vjp_fn(cotangent: Any) -> tuple[Any, ...]:
        if out_tree.kind == "leaf":
            cts, ct_tree = [cotangent], out_tree  # one array-like, whatever its nesting
        else:
            cts, ct_tree = _flatten(cotangent)
        if ct_tree != out_tree:
            raise TypeError(
                f"vjp: the cotangent's tree structure {ct_tree} differs from the output's {out_tree}"
            )
        acc: list[Any] = [None] * len(frame.wrt)
        for i, (o, c) in enumerate(zip(outs, cts)):
            what = "cotangent" if len(outs) == 1 else f"cotangent leaf {i}"
            ct = frame.import_(c, o, what)
            if ct.shape != o.shape:
                raise ShapeError(f"vjp: {what} has shape {ct.shape}, the output {o.shape}")
            if not frame.wrt or (not o.requires_grad and not _tenferro._is_leaf(o)):
                continue
            gs = frame.vjp(o, ct)
            for j, g in enumerate(gs):
                if g is not None:
                    acc[j] = g if acc[j] is None else frame.run(lambda a=acc[j], g=g: a + g)
        res = [g if g is not None else _zeros_like(frame, w) for g, w in zip(acc, frame.wrt)]
        return frame.out(tuple(frame.groups(res)))

    value = _unflatten(out_tree, outs)
    if has_aux:
        return frame.out(value), vjp_fn, frame.out(aux)
    return frame.out(value), vjp_fn


def jvp(
    f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False
) -> Any:
    """Evaluate ``f(*primals)`` and its Jacobian-vector product along ``tangents``.

    Parameters
    ----------
    f : callable
        ``f(*primals) -> pytree of Tensors`` (or ``(output, aux)`` with ``has_aux``); several
        outputs (a tuple, dict…) are allowed.
    primals, tangents : tuple or list
        One pytree per argument; ``tangents`` has the structure of ``primals`` and each tangent
        leaf its primal leaf's shape (array_like leaves take the primal's dtype).
    has_aux : bool, default False
        Then ``(out, tangent_out, aux)`` is returned.

    Returns
    -------
    (out, tangent_out)
        ``f(*primals)`` and its tangent ``Σ_k ∂f/∂primal_k · tangent_k``, a pytree of ``out``'s
        structure (zeros for output leaves that do not depend on the primals). Identical to JAX's
        ``jvp`` for complex numbers too (``f'(z)·ż``).

    Raises
    ------
    TypeError
        ``primals``/``tangents`` are not tuples or lists or their structures differ; an integer
        primal leaf.
    ValueError
        Different numbers of primals and tangents.
    tenferro.errors.ShapeError
        A tangent leaf of another shape (a ``ValueError``, as from ``rt.jvp``).

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> out, t = tf.func.jvp(tf.sin, (np.array(0.0),), (np.array(2.0),))
    >>> out.tolist(), t.tolist()
    (0.0, 2.0)
    >>> out, t = tf.func.jvp(lambda p: {"sq": p[0] * p[0], "sum": p[0] + p[1]}, ([3.0, 1.0],), ([1.0, 2.0],))
    >>> t["sq"].tolist(), t["sum"].tolist()
    (6.0, 3.0)
    """
    for what, v in (("primals", primals), ("tangents", tangents)):
        if not isinstance(v, (tuple, list)):
            raise TypeError(
                f"jvp: {what} must be a tuple or list (one entry per argument), got {type(v).__name__}"
            )
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    if not primals:
        raise TypeError("jvp: at least one primal is required")
    p_tree, t_tree = _flatten(primals)[1], _flatten(tangents)[1]
    if p_tree != t_tree:
        raise TypeError(
            f"jvp: primals {p_tree} and tangents {t_tree} must have the same tree structure"
        )
    frame = _Frame("jvp", primals, tuple(range(len(primals))))
    t_leaves = _flatten(tangents)[0]
    tans = [
        frame.import_(t, w, f"tangent leaf {i}")
        for i, (t, w) in enumerate(zip(t_leaves, frame.wrt))
    ]
    for i, (t, w) in enumerate(zip(tans, frame.wrt)):
        if t.shape != w.shape:
            raise ShapeError(f"jvp: tangent leaf {i} has shape {t.shape}, its primal {w.shape}")
    out, aux = _split_aux(frame.call(f, {}), has_aux, "jvp")
    outs, out_tree = frame.outputs(out)
    t_outs = []
    for o in outs:
        t_out = None
        if frame.wrt and (o.requires_grad or _tenferro._is_leaf(o)):
            t_out = frame.jvp(o, frame.wrt, tans)
        t_outs.append(t_out if t_out is not None else _zeros_like(frame, o))
    value, tangent = _unflatten(out_tree, outs), _unflatten(out_tree, t_outs)
    res = (value, tangent, aux) if has_aux else (value, tangent)
    return frame.out(res)


# --------------------------------------------------------------------------------------------
# Jacobians


def _check_holomorphic(name: str, ts: Sequence[Tensor], what: str, holomorphic: bool) -> None:
    for t in ts:
        cplx = np.dtype(t.dtype).kind == "c"
        if cplx and not holomorphic:
            raise TypeError(
                f"{name} requires real-valued {what}s, got {t.dtype}; for holomorphic "
                f"differentiation pass holomorphic=True (for non-holomorphic functions of complex "
                f"values use vjp/jvp directly)"
            )
        if holomorphic and not cplx:
            raise TypeError(f"{name} with holomorphic=True requires complex {what}s, got {t.dtype}")


def _basis(frame: _Frame, shape: tuple[int, ...], dtype: Any, k: int) -> Tensor:
    e = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=dtype)
    e[k] = 1
    return frame.const(e.reshape(shape))


def _assemble(
    frame: _Frame, blocks: list[list[Tensor]], out_tree: _TreeDef, single_arg: bool
) -> Any:
    """``blocks[i][j]``, the Jacobian of output leaf ``i`` w.r.t. ``wrt`` leaf ``j``, as JAX nests
    them: the output's structure outside, the arguments' structure (a tuple over ``argnums``
    unless it is an int) inside."""
    rows = []
    for row in blocks:
        per_arg = frame.groups(row)
        rows.append(per_arg[0] if single_arg else tuple(per_arg))
    return _unflatten(out_tree, rows)


def _stack_reshape(
    parts: list[Tensor], lead: bool, out_shape: tuple[int, ...], in_shape: tuple[int, ...]
) -> Tensor:
    """Stack per-element derivatives into a tensor of shape ``out_shape + in_shape``."""
    from ._numpy_api.joining import stack
    from ._numpy_api.layout import reshape

    target = tuple(out_shape) + tuple(in_shape)
    if not parts:  # zero-size output or input
        return None  # type: ignore[return-value]
    stacked = stack(parts, axis=0 if lead else -1)
    return reshape(stacked, target)


def _empty_jac(frame: _Frame, out: Tensor, w: Tensor, dtype: Any) -> Tensor:
    return frame.const(np.zeros(tuple(out.shape) + tuple(w.shape), dtype=dtype))


def jacrev(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, holomorphic: bool = False
) -> Callable[..., Any]:
    """Jacobian of ``f`` by reverse mode (one VJP per output element), JAX semantics.

    Parameters
    ----------
    f : callable
        ``f(*args) -> pytree of Tensors`` (a tensor, a tuple, a dict…).
    argnums : int or tuple of int, default 0
    holomorphic : bool, default False
        Required for complex inputs or outputs (then both must be complex).

    Returns
    -------
    callable
        Returns the Jacobian of shape ``out.shape + arg.shape``; for pytrees, the output's
        structure outside and the argument's inside (a tuple over a tuple ``argnums`` in
        between). With ``holomorphic=True`` it is ``f'(z)`` — the VJP rows, which are
        ``conj(f'(z))`` under tenferro's Hermitian convention, are conjugated.

    Raises
    ------
    TypeError
        For complex inputs or outputs without ``holomorphic=True``.

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> tf.func.jacrev(lambda x: x * x)(np.array([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """

    @functools.wraps(f)
    def jacrev_f(*args: Any, **kwargs: Any) -> Any:
        nums, single_arg = _norm_argnums(argnums, len(args), "jacrev")
        frame = _Frame("jacrev", args, nums)
        _check_holomorphic("jacrev", frame.wrt, "input", holomorphic)
        outs, out_tree = frame.outputs(frame.call(f, kwargs))
        _check_holomorphic("jacrev", outs, "output", holomorphic)
        blocks = []
        for out in outs:
            per_arg: list[list[Tensor]] = [[] for _ in frame.wrt]
            live = bool(frame.wrt) and (out.requires_grad or _tenferro._is_leaf(out))
            for k in range(out.size if live else 0):
                ct = _basis(frame, out.shape, out.dtype, k)
                gs = frame.vjp(out, ct)
                for j, (g, w) in enumerate(zip(gs, frame.wrt)):
                    if g is None:
                        g = _zeros_like(frame, w)
                    elif holomorphic:
                        g = frame.run(lambda g=g: g.conj())
                    per_arg[j].append(g)
            row = []
            for parts, w in zip(per_arg, frame.wrt):
                if not parts or w.size == 0:
                    row.append(_empty_jac(frame, out, w, w.dtype))
                else:
                    row.append(
                        frame.run(
                            lambda parts=parts, w=w, out=out: _stack_reshape(
                                parts, True, out.shape, w.shape
                            )
                        )
                    )
            blocks.append(row)
        return frame.out(_assemble(frame, blocks, out_tree, single_arg))

    return jacrev_f


def jacfwd(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, holomorphic: bool = False
) -> Callable[..., Any]:
    """Jacobian of ``f`` by forward mode (one JVP per input element), JAX semantics.

    Parameters
    ----------
    f : callable
        ``f(*args) -> pytree of Tensors`` (a tensor, a tuple, a dict…).
    argnums : int or tuple of int, default 0
    holomorphic : bool, default False
        Required for complex inputs (then ``f'(z)`` is returned). Real inputs may give complex
        outputs without it.

    Returns
    -------
    callable
        Returns the Jacobian of shape ``out.shape + arg.shape`` (pytrees nested as
        :func:`jacrev`).

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> tf.func.jacfwd(lambda x: tf.stack([x[0] * x[1], x[0]]))(np.array([2.0, 3.0])).tolist()
    [[3.0, 2.0], [1.0, 0.0]]
    """

    @functools.wraps(f)
    def jacfwd_f(*args: Any, **kwargs: Any) -> Any:
        nums, single_arg = _norm_argnums(argnums, len(args), "jacfwd")
        frame = _Frame("jacfwd", args, nums)
        _check_holomorphic("jacfwd", frame.wrt, "input", holomorphic)
        outs, out_tree = frame.outputs(frame.call(f, kwargs))
        blocks: list[list[Tensor]] = [[] for _ in outs]
        for w in frame.wrt:
            cols: list[list[Tensor]] = [[] for _ in outs]
            for k in range(w.size):
                tan = _basis(frame, w.shape, w.dtype, k)
                for i, out in enumerate(outs):
                    t = None
                    if out.requires_grad or _tenferro._is_leaf(out):
                        t = frame.jvp(out, [w], [tan])
                    cols[i].append(t if t is not None else _zeros_like(frame, out))
            for i, out in enumerate(outs):
                dtype = np.result_type(out.dtype, w.dtype)
                if not cols[i] or out.size == 0:
                    blocks[i].append(_empty_jac(frame, out, w, dtype))
                else:
                    parts = cols[i]
                    blocks[i].append(
                        frame.run(
                            lambda parts=parts, out=out, w=w: _stack_reshape(
                                parts, False, out.shape, w.shape
                            )
                        )
                    )
        return frame.out(_assemble(frame, blocks, out_tree, single_arg))

    return jacfwd_f


def hessian(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, holomorphic: bool = False
) -> Callable[..., Any]:
    """Hessian of the scalar function ``f``: ``jacfwd(jacrev(f, argnums), argnums)``.

    Returns
    -------
    callable
        Returns an array of shape ``x.shape + x.shape`` (for a tuple ``argnums``, a tuple of
        tuples of blocks; for a pytree argument, its structure nested in itself, as JAX).

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> h = tf.func.hessian(lambda x: (x[0] * x[0] * x[1]))(np.array([1.0, 2.0]))
    >>> h.tolist()
    [[4.0, 2.0], [2.0, 0.0]]
    """
    return jacfwd(jacrev(f, argnums, holomorphic), argnums, holomorphic)

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

Shapes follow JAX: ``jacrev(f)(x)`` and ``jacfwd(f)(x)`` have shape ``out.shape + x.shape``; with a
tuple ``argnums`` the result is a tuple over the arguments, and with a tuple of outputs a tuple
over the outputs (outer) of such.

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
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import _tenferro
from ._tenferro import Runtime, Tensor
from .errors import NonScalarGradError

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian"]


# --------------------------------------------------------------------------------------------
# plumbing


def _norm_argnums(argnums: int | Sequence[int], nargs: int, name: str) -> tuple[tuple[int, ...], bool]:
    single = isinstance(argnums, (int, np.integer))
    nums = (int(argnums),) if single else tuple(int(a) for a in argnums)  # type: ignore[union-attr]
    if not nums:
        raise ValueError(f"{name}: argnums must not be empty")
    out = []
    for a in nums:
        if not -nargs <= a < nargs:
            raise ValueError(f"{name}: argnums={a} is out of range for {nargs} positional arguments")
        out.append(a % nargs)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: argnums {nums} repeats an argument")
    return tuple(out), single


def _caller_runtime(args: Sequence[Any]) -> Runtime:
    for a in args:
        if isinstance(a, Tensor):
            return a.runtime
    sessions = _tenferro._state_var().get().sessions
    if sessions and sessions[-1].runtime is not None:
        return sessions[-1].runtime
    return _tenferro.default_runtime()


class _Frame:
    """One call of a transformed function: the runtime it records on and how results leave it."""

    def __init__(self, name: str, args: Sequence[Any], argnums: tuple[int, ...]) -> None:
        self.name = name
        tracked = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
        self.composed = bool(tracked)
        self.home = _caller_runtime(args)
        state = _tenferro._state_var().get()
        self.grad_was_enabled = state.grad_enabled
        # Record on the caller's runtime, so that f may close over the caller's tensors and use
        # the factories; the private leaves die with the call and no gradient slot is touched.
        self.rt: Runtime = tracked[0].runtime if tracked else self.home
        new_args = list(args)
        for i, a in enumerate(args):
            if i in argnums:
                new_args[i] = self._leaf(a)
            elif isinstance(a, Tensor) and not a.requires_grad and a.runtime.id != self.rt.id:
                new_args[i] = a.detach_into(self.rt)
        self.args = new_args
        self.wrt = [new_args[i] for i in argnums]

    def _leaf(self, a: Any) -> Tensor:
        if isinstance(a, Tensor) and a.requires_grad:
            # Identity node: an inner transform counts only the paths through its own argument.
            return _tenferro._implicit_session().reshape(a, a.shape)
        data = np.asarray(a)
        if data.dtype.kind not in "fc":
            raise TypeError(
                f"{self.name}: differentiated arguments need a float or complex dtype, got {data.dtype}"
            )
        return self.rt.variable(data)

    def call(self, f: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
        token = _tenferro._set_modes(grad_enabled=True)
        try:
            return f(*self.args, **kwargs)
        finally:
            _tenferro._state_var().reset(token)

    def run(self, fn: Callable[[], Any]) -> Any:
        """Run a derivative computation with recording on (needed for higher order)."""
        token = _tenferro._set_modes(grad_enabled=True)
        try:
            return fn()
        finally:
            _tenferro._state_var().reset(token)

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
        if isinstance(value, Tensor):
            if self.composed:
                return value if self.grad_was_enabled else value.detach()
            if value.runtime is self.rt:
                return value.detach_into(self.home)
            return value
        if isinstance(value, tuple):
            return tuple(self.out(v) for v in value)
        if isinstance(value, list):
            return [self.out(v) for v in value]
        if isinstance(value, dict):
            return {k: self.out(v) for k, v in value.items()}
        return value


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


def _check_tensor(out: Any, name: str) -> Tensor:
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}: f must return a tenferro Tensor, got {type(out).__name__}")
    return out


def _grads(frame: _Frame, out: Tensor, name: str) -> list[Tensor]:
    if out.shape != ():
        raise NonScalarGradError(
            f"{name}: f must return a scalar (shape ()), got shape {out.shape}; use jacrev or vjp"
        )
    if not out.requires_grad and not _tenferro._is_leaf(out):
        # Constant output: every derivative is zero.
        return [_zeros_like(frame, w) for w in frame.wrt]
    gs = frame.run(lambda: out.runtime.grad_optional(out, frame.wrt))
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
        Positional arguments to differentiate (array_like or tensors of float/complex dtype).
    has_aux : bool, default False
        ``f`` returns ``(output, aux)``; ``aux`` is passed through untouched (its tensors
        converted like the results).

    Returns
    -------
    callable
        ``(value, grad)``, or ``((value, aux), grad)`` with ``has_aux``; ``grad`` has the shape
        and dtype of the argument, or is a tuple of such when ``argnums`` is a tuple. A gradient
        that does not depend on the argument is zeros (as JAX), never ``None``.

    Raises
    ------
    tenferro.errors.NonScalarGradError
        When ``f``'s output is not a scalar.
    TypeError
        When a differentiated argument has an integer or bool dtype, or ``f`` does not return a
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

    @functools.wraps(f)
    def value_and_grad_f(*args: Any, **kwargs: Any) -> Any:
        nums, single = _norm_argnums(argnums, len(args), "value_and_grad")
        frame = _Frame("value_and_grad", args, nums)
        out, aux = _split_aux(frame.call(f, kwargs), has_aux, "value_and_grad")
        out = _check_tensor(out, "value_and_grad")
        gs = _grads(frame, out, "value_and_grad")
        g = gs[0] if single else tuple(gs)
        value = (out, aux) if has_aux else out
        return frame.out((value, g))

    return value_and_grad_f


def grad(f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable[..., Any]:
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
        Returns the gradient (shape and dtype of the argument), a tuple of gradients for a tuple
        ``argnums``, and ``(grad, aux)`` with ``has_aux``.

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
        ``f(*primals) -> Tensor`` (or ``(Tensor, aux)`` with ``has_aux``).
    *primals : array_like or Tensor
        The points (float or complex dtypes); all are differentiated.
    has_aux : bool, default False
        ``f`` returns ``(output, aux)``; then ``(out, vjp_fn, aux)`` is returned.

    Returns
    -------
    out : Tensor
        ``f(*primals)``.
    vjp_fn : callable
        ``vjp_fn(cotangent)`` (shape and dtype of ``out``) returns a tuple with one cotangent per
        primal (zeros where ``out`` does not depend on it); it may be called many times.

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
    out = _check_tensor(out, "vjp")

    def vjp_fn(cotangent: Any) -> tuple[Tensor, ...]:
        ct = frame.import_(cotangent, out, "cotangent")
        if not out.requires_grad and not _tenferro._is_leaf(out):
            gs: list[Any] = [None] * len(frame.wrt)
        else:
            gs = list(frame.run(lambda: out.runtime.vjp_optional(out, frame.wrt, ct)))
        res = tuple(g if g is not None else _zeros_like(frame, w) for g, w in zip(gs, frame.wrt))
        return frame.out(res)

    if has_aux:
        return frame.out(out), vjp_fn, frame.out(aux)
    return frame.out(out), vjp_fn


def jvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False) -> Any:
    """Evaluate ``f(*primals)`` and its Jacobian-vector product along ``tangents``.

    Parameters
    ----------
    f : callable
        ``f(*primals) -> Tensor`` (or ``(Tensor, aux)`` with ``has_aux``).
    primals, tangents : sequence
        Same length; each tangent has its primal's shape and dtype.
    has_aux : bool, default False
        Then ``(out, tangent_out, aux)`` is returned.

    Returns
    -------
    (out, tangent_out)
        ``f(*primals)`` and ``Σ_k ∂f/∂primal_k · tangent_k`` (zeros if ``f`` does not depend on
        the primals). Identical to JAX's ``jvp`` for complex numbers too (``f'(z)·ż``).

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> out, t = tf.func.jvp(tf.sin, (np.array(0.0),), (np.array(2.0),))
    >>> out.tolist(), t.tolist()
    (0.0, 2.0)
    """
    primals, tangents = tuple(primals), tuple(tangents)
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    if not primals:
        raise TypeError("jvp: at least one primal is required")
    frame = _Frame("jvp", primals, tuple(range(len(primals))))
    tans = [frame.import_(t, w, f"tangent {i}") for i, (t, w) in enumerate(zip(tangents, frame.wrt))]
    for i, (t, w) in enumerate(zip(tans, frame.wrt)):
        if t.shape != w.shape:
            raise ValueError(f"jvp: tangent {i} has shape {t.shape}, its primal {w.shape}")
    out, aux = _split_aux(frame.call(f, {}), has_aux, "jvp")
    out = _check_tensor(out, "jvp")
    t_out = None
    if out.requires_grad or _tenferro._is_leaf(out):
        t_out = frame.run(lambda: out.runtime.jvp_optional(out, frame.wrt, tans))
    if t_out is None:
        t_out = _zeros_like(frame, out)
    res = (out, t_out, aux) if has_aux else (out, t_out)
    return frame.out(res)


# --------------------------------------------------------------------------------------------
# Jacobians


def _flat_outputs(out: Any, name: str) -> tuple[list[Tensor], bool]:
    if isinstance(out, Tensor):
        return [out], True
    if isinstance(out, (tuple, list)) and out and all(isinstance(o, Tensor) for o in out):
        return list(out), False
    raise TypeError(f"{name}: f must return a Tensor or a tuple of Tensors, got {type(out).__name__}")


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


def _assemble(blocks: list[list[Any]], single_out: bool, single_arg: bool) -> Any:
    rows = [b[0] if single_arg else tuple(b) for b in blocks]
    return rows[0] if single_out else tuple(rows)


def _stack_reshape(parts: list[Tensor], lead: bool, out_shape: tuple[int, ...], in_shape: tuple[int, ...]) -> Tensor:
    """Stack per-element derivatives into a tensor of shape ``out_shape + in_shape``."""
    from . import _numpy_api as np_api

    target = tuple(out_shape) + tuple(in_shape)
    if not parts:  # zero-size output or input
        return None  # type: ignore[return-value]
    stacked = np_api.stack(parts, axis=0 if lead else -1)
    return np_api.reshape(stacked, target)


def _empty_jac(frame: _Frame, out: Tensor, w: Tensor, dtype: Any) -> Tensor:
    return frame.const(np.zeros(tuple(out.shape) + tuple(w.shape), dtype=dtype))


def jacrev(f: Callable[..., Any], argnums: int | Sequence[int] = 0, holomorphic: bool = False) -> Callable[..., Any]:
    """Jacobian of ``f`` by reverse mode (one VJP per output element), JAX semantics.

    Parameters
    ----------
    f : callable
        ``f(*args) -> Tensor`` or a tuple of tensors.
    argnums : int or tuple of int, default 0
    holomorphic : bool, default False
        Required for complex inputs or outputs (then both must be complex).

    Returns
    -------
    callable
        Returns the Jacobian of shape ``out.shape + arg.shape`` (nested tuples for tuple outputs
        or ``argnums``). With ``holomorphic=True`` it is ``f'(z)`` — the VJP rows, which are
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
        outs, single_out = _flat_outputs(frame.call(f, kwargs), "jacrev")
        _check_holomorphic("jacrev", outs, "output", holomorphic)
        blocks = []
        for out in outs:
            per_arg: list[list[Tensor]] = [[] for _ in frame.wrt]
            live = out.requires_grad or _tenferro._is_leaf(out)
            for k in range(out.size if live else 0):
                ct = _basis(frame, out.shape, out.dtype, k)
                gs = frame.run(lambda ct=ct: out.runtime.vjp_optional(out, frame.wrt, ct))
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
                    row.append(frame.run(lambda parts=parts, w=w: _stack_reshape(parts, True, out.shape, w.shape)))
            blocks.append(row)
        return frame.out(_assemble(blocks, single_out, single_arg))

    return jacrev_f


def jacfwd(f: Callable[..., Any], argnums: int | Sequence[int] = 0, holomorphic: bool = False) -> Callable[..., Any]:
    """Jacobian of ``f`` by forward mode (one JVP per input element), JAX semantics.

    Parameters
    ----------
    f : callable
        ``f(*args) -> Tensor`` or a tuple of tensors.
    argnums : int or tuple of int, default 0
    holomorphic : bool, default False
        Required for complex inputs (then ``f'(z)`` is returned). Real inputs may give complex
        outputs without it.

    Returns
    -------
    callable
        Returns the Jacobian of shape ``out.shape + arg.shape`` (nested tuples as :func:`jacrev`).

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
        outs, single_out = _flat_outputs(frame.call(f, kwargs), "jacfwd")
        blocks: list[list[Tensor]] = [[] for _ in outs]
        for j, w in enumerate(frame.wrt):
            cols: list[list[Tensor]] = [[] for _ in outs]
            for k in range(w.size):
                tan = _basis(frame, w.shape, w.dtype, k)
                for i, out in enumerate(outs):
                    t = None
                    if out.requires_grad or _tenferro._is_leaf(out):
                        t = frame.run(lambda out=out, tan=tan: out.runtime.jvp_optional(out, [w], [tan]))
                    cols[i].append(t if t is not None else _zeros_like(frame, out))
            for i, out in enumerate(outs):
                dtype = np.result_type(out.dtype, w.dtype)
                if not cols[i] or out.size == 0:
                    blocks[i].append(_empty_jac(frame, out, w, dtype))
                else:
                    parts = cols[i]
                    blocks[i].append(frame.run(lambda parts=parts, out=out: _stack_reshape(parts, False, out.shape, w.shape)))
        return frame.out(_assemble(blocks, single_out, single_arg))

    return jacfwd_f


def hessian(f: Callable[..., Any], argnums: int | Sequence[int] = 0, holomorphic: bool = False) -> Callable[..., Any]:
    """Hessian of the scalar function ``f``: ``jacfwd(jacrev(f, argnums), argnums)``.

    Returns
    -------
    callable
        Returns an array of shape ``x.shape + x.shape`` (for a tuple ``argnums``, a tuple of
        tuples of blocks, as JAX).

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> h = tf.func.hessian(lambda x: (x[0] * x[0] * x[1]))(np.array([1.0, 2.0]))
    >>> h.tolist()
    [[4.0, 2.0], [2.0, 0.0]]
    """
    return jacfwd(jacrev(f, argnums, holomorphic), argnums, holomorphic)

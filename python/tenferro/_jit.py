"""Graph mode (``graph-mode.md``): trace a Python function once per kind of arguments, keep the
primitives it issued as a program, and run that program from one call afterwards.

``tf.jit(f)`` returns a callable with ``f``'s signature. Its first call with a new *signature*
runs ``f`` on traced tensors (shape and dtype, no data): every tenferro op they meet — NumPy-named
functions, operators, ``tf.einsum``, ``tf.linalg``, indexing, ``tf.func`` transforms (whose
backward passes emit their rule bodies) — is appended to a program instead of executed. Later
calls with the same signature run the program in Rust, on the engine an eager op would use.

The signature (cache key) is: the pytree structure of the arguments; for each tensor leaf its
dtype and shape (NumPy arrays are converted as ``tf.asarray`` would); the values of static
arguments (``static_argnames`` / ``static_argnums``, compared with ``==``) and of Python ``bool``
and ``int`` arguments (they usually drive control flow); the type, not the value, of Python
``float`` and ``complex`` arguments, which are weakly typed rank-0 inputs (a new value never
retraces; they take the dtype of the tensors they meet, as the Python number would); the
identity of tensors and the values of Python scalars the function captures (closure cells
and globals it or code nested in it names); and the
grad mode. Past ``max_traces`` signatures one ``tf.errors.RecompileWarning`` names the argument
that keeps changing and the function runs eagerly (``on_limit="error"`` raises
``RecompileLimitError``).

Gradients of compiled functions (grad of jit): a call on tensors that require grad, or under a
``tf.func`` transform, runs the compiled program and records one ``CompiledCall`` node whose VJP
and JVP programs are derived from the program (``rt.cache_stats()`` counts them); any order
composes. Differences from the full contract (``graph-mode.md``) in this version: Python ``bool``/``int``
arguments are part of the key (see above). The optimisation passes run at compile time (dead
code, common subexpressions, layout simplification, transpose and conj folding into
``dot_general``); constant subgraphs fold at prepare time; in-place reuse is not built yet. Values captured any other way (a tensor attribute, a
tensor in a captured list, a global of a helper function) are baked into the program as JAX
does; a tensor that requires grad reached that way makes the call run eagerly. So are the
attributes of ``self`` and of any other object argument (objects are keyed by identity): pass
values that change as arguments, or call ``clear_cache()`` after changing them. Arithmetic on a
traced Python number follows tensor (IEEE) rules as in JAX (``s / 0.0`` is ``inf``). As in JAX: dict
arguments reach the traced function with sorted keys (the pytree rules of ``tf.func``), Python
numbers in the output come back as rank-0 tensors, and an error of a value that nothing uses
(dead code, removed by the passes) is not raised.

Examples
--------
>>> import numpy as np
>>> import tenferro as tf
>>> @tf.jit
... def f(x, y):
...     return tf.sin(x) * y + 1.0
>>> x = tf.asarray(np.linspace(0.0, 1.0, 4))
>>> np.allclose(np.asarray(f(x, x)), np.sin(np.linspace(0, 1, 4)) * np.linspace(0, 1, 4) + 1)
True
>>> _ = f(x, x)                           # same signature: replayed, not traced again
>>> f.cache_stats().misses, f.cache_stats().hits
(1, 1)
>>> len(f.trace(x, x).compile()) >= 3    # sin, mul, add
True
"""

from __future__ import annotations

import functools
import inspect
import operator
import os
import sys
import threading
import types
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from . import _tenferro, _trace_errors, _trace_state
from ._tenferro import Tensor
from .errors import ContextMismatchError, RecompileLimitError, RecompileWarning, TraceError
from .func import _flatten, _TreeDef, _unflatten

__all__ = ["jit", "make_graph", "TracedGraph", "CompiledGraph", "TraceCacheStats"]


class TraceCacheStats(NamedTuple):
    """Counters of one jitted function's trace cache (``hits + misses + fallbacks`` = calls)."""

    entries: int
    retained_bytes: int
    hits: int
    misses: int
    evictions: int
    clears: int
    fallbacks: int


class TracedGraph:
    """The primitives one trace issued: inputs and outputs as slots; printable (one line per
    instruction). ``compile()`` gives the :class:`CompiledGraph` that runs it."""

    # How compositions present the value errors of their primitives (``_trace_errors``).
    _error_rules: dict[Any, Any] | None = None
    # The derivative programs of a function that called custom rules (``_Supplier``).
    _supplier: Any = None
    # The traced function entered ``tf.no_grad()``: the program has no stop-gradient step, so
    # its derivative would differentiate through that region (see ``_trace_state.note_no_grad``).
    _stops_gradient = False

    def __init__(self, graph: Any, in_tree: _TreeDef, out_tree: _TreeDef, name: str) -> None:
        self._graph = graph
        self._in_tree = in_tree
        self._out_tree = out_tree
        self.name = name

    def __len__(self) -> int:
        """Number of instructions."""
        return len(self._graph)

    @property
    def op_count(self) -> int:
        """Number of instructions."""
        return len(self._graph)

    def __str__(self) -> str:
        return f"TracedGraph({self.name})\n{self._graph}"

    def __repr__(self) -> str:
        return f"<TracedGraph {self.name}: {len(self)} instructions, {self._graph.n_inputs} inputs>"

    def compile(self, **passes: bool) -> CompiledGraph:
        """The program after the optimisation passes (``graph-mode.md``, "Passes"): ``dce``,
        ``cse``, ``layout``, ``fold_transpose``, ``fold_conj``, ``final_dce``, each on unless
        given as ``False``. The result is backend-neutral and immutable; ``.pass_report`` lists
        ``(pass, ran, instructions after, rewrites)`` per pass."""
        unknown = set(passes) - set(_PASSES)
        if unknown:
            raise TypeError(f"compile: unknown passes {sorted(unknown)}; known: {list(_PASSES)}")
        graph, report = self._graph.optimize(**passes)
        if self._supplier is not None:
            graph._supply_derivatives(self._supplier, self._supplier.runtime)
        if self._error_rules:
            graph = _trace_errors.RenamingGraph(graph, self._error_rules)
        compiled = CompiledGraph(graph, self._out_tree, self.name, [tuple(r) for r in report])
        compiled._stops_gradient = self._stops_gradient
        return compiled


class CompiledGraph:
    """A compiled program; calling it with tensors (in the traced function's flattened argument
    order, static arguments left out) runs it and returns the traced function's output
    structure."""

    def __init__(
        self,
        graph: Any,
        out_tree: _TreeDef,
        name: str,
        pass_report: list[tuple[Any, ...]] | None = None,
    ) -> None:
        self._graph = graph
        self._out_tree = out_tree
        self.name = name
        self.pass_report = pass_report or []
        # Set by ``ctx.compile_graph``: the argument structure and non-tensor leaves it traced
        # (calls then take the function's arguments; see ``_graph_context.flat_inputs``).
        self._in_tree: _TreeDef | None = None
        self._leaf_keys: tuple[Any, ...] = ()

    def __len__(self) -> int:
        return len(self._graph)

    def __str__(self) -> str:
        return f"CompiledGraph({self.name})\n{self._graph}"

    def __repr__(self) -> str:
        return f"<CompiledGraph {self.name}: {len(self)} instructions>"

    #: See ``TracedGraph._stops_gradient``.
    _stops_gradient = False

    def run_flat(self, inputs: Sequence[Any]) -> list[Tensor]:
        """Run on the flat list of tensor inputs; the flat list of outputs."""
        if len(inputs) != self._graph.n_inputs:
            raise TypeError(
                f"{self.name}: the compiled graph takes {self._graph.n_inputs} tensor inputs, "
                f"got {len(inputs)}"
            )
        if self._stops_gradient and _records(inputs):
            from .errors import UnsupportedAdRuleError

            raise UnsupportedAdRuleError(
                f"{self.name}: the traced function entered tf.no_grad(), and a compiled program "
                "has no stop-gradient step yet: its derivative would differentiate through that "
                "region. Call the tf.jit function (it runs such calls eagerly), or call the "
                "compiled graph under tf.no_grad()"
            )
        return list(self._graph.run(list(inputs)))

    def __call__(self, *inputs: Any, **kwinputs: Any) -> Any:
        if self._in_tree is not None:
            from ._graph_context import flat_inputs

            return _unflatten(self._out_tree, self.run_flat(flat_inputs(self, inputs, kwinputs)))
        return _unflatten(self._out_tree, self.run_flat(inputs))


# Limits of each jitted function's trace cache (least recently used traces are evicted beyond
# them; ``cache_stats().evictions`` counts them).
MAX_ENTRIES = 128
MAX_RETAINED_BYTES = 64 << 20
# A captured tensor larger than this warns once (the cache keeps it alive).
BIG_CAPTURE_BYTES = 1 << 20
# How long a call waits for another thread's trace of the same signature before tracing itself.
INFLIGHT_WAIT_S = 10.0

_PASSES = ("dce", "cse", "layout", "fold_transpose", "fold_conj", "final_dce")


def _tracing() -> bool:
    return bool(_tenferro._state_var().get().tracing)


class _Supplier:
    """The first-order derivative programs of a traced function that called custom rules
    (``_Graph._supply_derivatives``): the function traced again on its program inputs under
    ``tf.func.vjp`` / ``tf.func.jvp``, so the rules' own bodies are emitted. Higher derivatives
    of these programs are derived from their primitives (the rules' bodies)."""

    def __init__(
        self, fun: Callable[..., Any], leaves: list[Any], tdef: _TreeDef, rebuild: Any
    ) -> None:
        # Where the program inputs sit among the argument leaves, and how each is traced.
        self.positions = [
            i for i, x in enumerate(leaves) if isinstance(x, Tensor) or type(x) in _WEAK
        ]
        inputs = set(self.positions)
        # The other leaves (static values) are kept; the inputs' data is not.
        self.fun, self.tdef, self.rebuild = fun, tdef, rebuild
        self.leaves = [None if i in inputs else x for i, x in enumerate(leaves)]
        self.metas = [
            ("T", x.dtype, tuple(x.shape)) if isinstance(x, Tensor) else ("W", _WEAK[type(x)], ())
            for x in (leaves[i] for i in self.positions)
        ]
        first = next((x for x in leaves if isinstance(x, Tensor)), None)
        self.runtime = _tenferro._current_runtime(first)

    def _flat_f(self, inputs: Sequence[Any]) -> list[Tensor]:
        full = list(self.leaves)
        for pos, v in zip(self.positions, inputs):
            full[pos] = v
        args, kwargs = self.rebuild(*_unflatten(self.tdef, full))
        out_leaves, _ = _flatten(self.fun(*args, **kwargs))
        return [x if isinstance(x, Tensor) else _as_tensor(x) for x in out_leaves]

    def _trace(
        self, fn: Callable[..., list[Any]], extra: Sequence[tuple[Any, tuple[int, ...]]]
    ) -> Any:
        tr = _tenferro._Trace(self.runtime)
        ins = [
            tr.weak_input(d) if k == "W" else tr.input(d, list(shape)) for k, d, shape in self.metas
        ]
        ins += [tr.input(d, list(shape)) for d, shape in extra]
        token = tr.enter()
        try:
            outs = fn(*ins)
        except BaseException:
            tr.end()
            raise
        finally:
            _tenferro._state_var().reset(token)
        try:
            return tr.finish([x if isinstance(x, Tensor) else _as_tensor(x) for x in outs])
        except BaseException:
            tr.end()
            raise

    def _of(self, xs: Sequence[Any], idx: Sequence[int]) -> Callable[..., tuple[Any, ...]]:
        """The function's flat outputs as a function of the inputs ``idx`` (the others fixed at
        ``xs``): what ``tf.func`` differentiates."""

        def g(*a: Any) -> tuple[Any, ...]:
            full = list(xs)
            for i, v in zip(idx, a):
                full[i] = v
            return tuple(self._flat_f(full))

        return g

    def joint_vjp(
        self, mask: Sequence[bool], out_metas: Sequence[tuple[str, Sequence[int]]]
    ) -> Any:
        """The program ``(x, ȳ) → (y, x̄ of the active inputs)``."""
        from .func import vjp

        n, act = len(self.positions), [i for i, m in enumerate(mask) if m]

        def joint(*xc: Any) -> list[Any]:
            xs, cts = xc[:n], tuple(xc[n:])
            ys, pull = vjp(self._of(xs, act), *[xs[i] for i in act])
            return [*ys, *pull(cts)]

        return self._trace(joint, [(d, tuple(s)) for d, s in out_metas])

    def jvp_program(self, mask: Sequence[bool]) -> Any:
        """The program ``(x, ẋ of the active inputs) → ẏ``."""
        from .func import jvp

        n, act = len(self.positions), [i for i, m in enumerate(mask) if m]

        def tangent_map(*xt: Any) -> list[Any]:
            xs, ts = xt[:n], tuple(xt[n:])
            _, t_out = jvp(self._of(xs, act), tuple(xs[i] for i in act), ts)
            return list(t_out)

        return self._trace(tangent_map, [(self.metas[i][1], self.metas[i][2]) for i in act])

    # -- the recorded rules (higher order): the function itself under tf.func, eagerly ------

    def _differentiable(self, inputs: Sequence[Tensor]) -> tuple[list[Any], list[int]]:
        """The inputs as the function takes them (weak scalars back as Python numbers) and the
        differentiable ones among them (float/complex tensors)."""
        ins: list[Any] = [
            (float if d == "float64" else complex)(x.item()) if k == "W" else x
            for (k, d, _), x in zip(self.metas, inputs)
        ]
        idx = [
            i
            for i, (k, _, _) in enumerate(self.metas)
            if k == "T" and np.dtype(inputs[i].dtype).kind in "fc"
        ]
        return ins, idx

    def vjp(self, inputs: list[Tensor], cts: list[Tensor], record: bool) -> list[Tensor | None]:
        """Cotangents of the inputs: ``tf.func.vjp`` of the function (its custom rules
        recorded as nodes)."""
        from .func import vjp

        ins, idx = self._differentiable(inputs)
        _, pull = vjp(self._of(ins, idx), *[inputs[i] for i in idx])
        out: list[Tensor | None] = [None] * len(inputs)
        for i, ct in zip(idx, pull(tuple(cts))):
            out[i] = ct
        return out

    def jvp(self, inputs: list[Tensor], tangents: list[Tensor], record: bool) -> list[Tensor]:
        """Tangents of the outputs: ``tf.func.jvp`` of the function."""
        from .func import jvp

        ins, idx = self._differentiable(inputs)
        _, t_out = jvp(
            self._of(ins, idx), tuple(inputs[i] for i in idx), tuple(tangents[i] for i in idx)
        )
        return list(t_out)


def _records(inputs: Sequence[Any]) -> bool:
    """A call on these inputs would record a derivative (grad mode on and a tracked input, or
    ``tf.func``'s capture)."""
    state = _tenferro._state_var().get()
    if state.capture_trace:
        return True
    return bool(state.grad_enabled) and any(
        isinstance(x, Tensor) and x.requires_grad for x in inputs
    )


def _is_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex, np.generic)) and not isinstance(x, np.ndarray)


@functools.lru_cache(maxsize=1024)
def _global_names(code: Any) -> tuple[str, ...]:
    """Names ``code`` and the code objects nested in it (comprehensions, inner functions) look
    up as globals (cached per code object: every call of a jitted function reads them)."""
    names = list(code.co_names)
    for c in code.co_consts:
        if hasattr(c, "co_names"):
            names.extend(_global_names(c))
    return tuple(names)


def _scalar_key(x: Any) -> Any:
    """A key that tells apart every scalar eager code could tell apart: ``-0.0`` from ``0.0``,
    ``2`` from ``2.0`` and ``True``, ``np.float64(1.5)`` (strongly typed) from ``1.5`` (weak),
    and NaN equal to itself."""
    if isinstance(x, np.generic):
        return (type(x), x.tobytes())
    if isinstance(x, float):
        return (float, x.hex())
    if isinstance(x, complex):
        return (complex, x.real.hex(), x.imag.hex())
    return (type(x), x)


def _functions(fun: Any, depth: int = 0) -> list[Any]:
    """``fun`` and the functions it wraps (``functools.partial``, ``functools.wraps``)."""
    out = [fun]
    if depth < 4:
        inner = (
            getattr(fun, "func", None)
            if isinstance(fun, functools.partial)
            else getattr(fun, "__wrapped__", None)
        )
        if inner is not None:
            out.extend(_functions(inner, depth + 1))
    return out


class _Captures:
    """What a function (and what it wraps) captures directly — closure cells, the globals it or
    code nested in it names, default arguments, a partial's bound arguments — read on every call
    of a jitted function, cheaply: each function's global names that exist are resolved once
    (again when its module gains or loses names) and read with one ``itemgetter``, and the key
    (tensors by identity, scalars by value; graph mode bakes both into the program) is rebuilt
    only when some value is not the very object it was at the previous call (those values are
    held, so their identities cannot be reused by new objects)."""

    def __init__(self, fun: Callable[..., Any], sink: Any = None) -> None:
        self._fun = fun
        self._plan: list[tuple[Any, ...]] | None = None
        self._last: tuple[tuple[Any, ...], tuple[Any, ...]] | None = None
        # The Rust replay cache (``_CallCache.set_probe``): given how the values are read and the
        # last values and key, it does the identity check of ``key`` itself on every call.
        self._sink = sink
        self._sources: list[tuple[Any, ...]] | None = None
        # Whether the sink holds a probe of the current plan and last key.
        self.probed = False

    def _build(self) -> list[tuple[Any, ...]]:
        plan: list[tuple[Any, ...]] = []
        # The same reads for the probe in Rust: plain functions without keyword-only defaults
        # and partials without keywords (anything else: no probe, ``key`` runs every call).
        sources: list[tuple[Any, ...]] | None = []
        for f in _functions(self._fun):
            if isinstance(f, functools.partial):
                plan.append((f, None, 0, None))
                if sources is not None and type(f) is functools.partial and not f.keywords:
                    sources.append(("p", f))
                else:
                    sources = None
                continue
            code = getattr(f, "__code__", None)
            if code is None:
                continue
            g = getattr(f, "__globals__", None) or {}
            # tenferro's own functions (the tf.func wrappers) read module-level functions and
            # classes of tenferro, never tensors: only their closures and defaults count.
            own = str(g.get("__name__", "")).startswith("tenferro.")
            names = () if own else tuple(n for n in dict.fromkeys(_global_names(code)) if n in g)
            # One itemgetter for several names, the name itself for one, None for none.
            get: Any = (
                operator.itemgetter(*names) if len(names) > 1 else (names[0] if names else None)
            )
            plan.append((f, g, len(g), get))
            if sources is not None and type(f) is types.FunctionType and not f.__kwdefaults__:
                sources.append(("f", f, g, len(g), names))
            else:
                sources = None
        self._plan = plan
        self._sources = sources
        self.probed = False
        return plan

    def values(self) -> tuple[Any, ...]:
        """The captured values, in a fixed order."""
        for attempt in (0, 1):
            plan = self._plan if self._plan is not None else self._build()
            out: list[Any] = []
            stale = False
            for f, g, n, get in plan:
                if g is None:
                    out.extend(f.args)
                    out.extend(v for _, v in sorted(f.keywords.items()))
                    continue
                if len(g) != n and attempt == 0:
                    stale = True
                    break
                for cell in f.__closure__ or ():
                    try:
                        out.append(cell.cell_contents)
                    except ValueError:
                        out.append(None)
                try:
                    if callable(get):
                        out.extend(get(g))
                    elif get:
                        out.append(g[get])
                except KeyError:
                    if attempt == 0:
                        stale = True
                        break
                out.extend(f.__defaults__ or ())
                kw = f.__kwdefaults__
                if kw:
                    out.extend(v for _, v in sorted(kw.items()))
            if not stale:
                return tuple(out)
            self._plan = None
        return tuple(out)

    def key(self) -> tuple[Any, ...]:
        """The captured part of the signature: identities of tensors, keys of scalars."""
        vals = self.values()
        last = self._last
        if last is not None and len(last[0]) == len(vals) and all(map(operator.is_, vals, last[0])):
            key = last[1]
        else:
            key = (
                tuple(id(v) for v in vals if isinstance(v, Tensor)),
                tuple(_scalar_key(v) for v in vals if _is_scalar(v)),
            )
            self._last = (vals, key)
            self.probed = False
        if not self.probed and self._sink is not None:
            # The sink checks these very values by identity from now on (and holds them).
            self._sink.set_probe(self._sources, list(vals), key)
            self.probed = self._sources is not None
        return key

    def tensors(self) -> tuple[Tensor, ...]:
        """The captured tensors."""
        return tuple(v for v in self.values() if isinstance(v, Tensor))


def _static_key(v: Any) -> Any:
    """A static argument's key: compared with ``==`` (``graph-mode.md``), except scalars, which
    are keyed as dynamic scalars are (so ``True``/``1``/``1.0`` and ``0.0``/``-0.0`` differ), also
    inside tuples."""
    if _is_scalar(v):
        return ("S", *_scalar_key(v))
    if type(v) is tuple:
        return tuple(_static_key(x) for x in v)
    return v


class _TrackedCapture(Exception):
    """The traced function used a tensor that requires grad without taking it as an argument."""


class _Entry:
    __slots__ = ("compiled", "captured", "nbytes")

    def __init__(self, compiled: CompiledGraph, captured: tuple[Tensor, ...], nbytes: int) -> None:
        self.compiled, self.captured, self.nbytes = compiled, captured, nbytes


class Jitted:
    """A function compiled on its first call per signature (see :func:`jit`)."""

    def __init__(
        self,
        fun: Callable[..., Any],
        static_argnames: Sequence[str] = (),
        static_argnums: Sequence[int] = (),
        max_traces: int | None = 8,
        on_limit: str = "eager",
    ) -> None:
        if not callable(fun):
            raise TypeError(f"jit: expected a callable, got {type(fun).__name__}")
        if on_limit not in ("eager", "error"):
            raise ValueError(f"jit: on_limit must be 'eager' or 'error', got {on_limit!r}")
        if max_traces is not None and max_traces < 1:
            raise ValueError(f"jit: max_traces must be >= 1 or None, got {max_traces}")
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._name = getattr(fun, "__qualname__", getattr(fun, "__name__", "function"))
        self._static_names = frozenset(static_argnames)
        self._static_nums = frozenset(static_argnums)
        self._max_traces = max_traces
        self._on_limit = on_limit
        try:
            self._sig: inspect.Signature | None = inspect.signature(fun)
        except (TypeError, ValueError):
            self._sig = None
        self._cache: OrderedDict[Any, _Entry] = OrderedDict()
        # Signatures whose value_and_grad the replay cache cannot serve (``_value_and_grad_fast``).
        self._no_fast: set[Any] = set()
        self._n_traces = 0
        self._warned = False
        self._warned_big = False
        self._lock = threading.Lock()
        self._inflight: dict[Any, threading.Event] = {}
        self._last_key: Any = None
        self._hits = self._misses = self._evictions = self._clears = self._fallbacks = 0
        # No static arguments: positional tensors and floats take the fast paths of __call__
        # (the replay cache in Rust, then a flat key here).
        self._plain = not self._static_names and not self._static_nums
        self._fast = _tenferro._CallCache() if self._plain else None
        self._capture = _Captures(fun, self._fast)
        _LIVE.add(self)
        self._captures = any(
            getattr(f, "__code__", None) is None
            or bool(_global_names(f.__code__))
            or bool(getattr(f, "__closure__", None))
            or bool(getattr(f, "__defaults__", None))
            or bool(getattr(f, "__kwdefaults__", None))
            for f in _functions(fun)
        )

    # -- the signature ---------------------------------------------------------------------

    def _split(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[list[Any], list[Any], Any]:
        """(static parts, dynamic pytree parts, a rebuild function)."""
        static_pos = set(self._static_nums)
        if self._static_names and self._sig is not None:
            for i, p in enumerate(self._sig.parameters.values()):
                if p.name in self._static_names and p.kind in (
                    p.POSITIONAL_ONLY,
                    p.POSITIONAL_OR_KEYWORD,
                ):
                    static_pos.add(i)
        statics: list[Any] = []
        dyn_args: list[Any] = []
        for i, a in enumerate(args):
            (statics if i in static_pos else dyn_args).append((i, a) if i in static_pos else a)
        dyn_kw = {k: v for k, v in kwargs.items() if k not in self._static_names}
        statics.extend(sorted((k, v) for k, v in kwargs.items() if k in self._static_names))
        statics = [(i, _static_key(v)) for i, v in statics]
        pos_static = {i for i in static_pos if i < len(args)}

        def rebuild(
            new_dyn_args: list[Any], new_dyn_kw: dict[str, Any]
        ) -> tuple[tuple[Any, ...], dict[str, Any]]:
            it = iter(new_dyn_args)
            full = tuple(a if i in pos_static else next(it) for i, a in enumerate(args))
            kw = dict(new_dyn_kw)
            kw.update({k: v for k, v in kwargs.items() if k in self._static_names})
            return full, kw

        return statics, [dyn_args, dyn_kw], rebuild

    @staticmethod
    def _leaf_key(x: Any) -> Any:
        if isinstance(x, Tensor):
            return ("T", x.dtype, x.shape)
        if type(x) in _WEAK:
            return ("W", type(x))
        if _is_scalar(x):
            return ("S", *_scalar_key(x))
        return ("O", type(x), x)

    def _signature(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Any, list[Any], _TreeDef, Any]:
        statics, dyn, rebuild = self._split(args, kwargs)
        leaves, tdef = _flatten(dyn)
        leaves = [_as_tensor(x) if isinstance(x, np.ndarray) else x for x in leaves]
        state = _tenferro._state_var().get()
        try:
            key = (
                tdef,
                tuple(statics),
                tuple(self._leaf_key(x) for x in leaves),
                self._capture.key(),
                state.grad_enabled,
            )
            hash(key)
        except TypeError as e:
            raise TypeError(
                f"jit({self._name}): static arguments and non-tensor leaves must be hashable: {e}"
            ) from None
        return key, leaves, tdef, rebuild

    # -- tracing -------------------------------------------------------------------------------

    def _trace_leaves(
        self, leaves: list[Any], tdef: _TreeDef, rebuild: Any
    ) -> tuple[TracedGraph, tuple[Tensor, ...]]:
        first = next((x for x in leaves if isinstance(x, Tensor)), None)
        tr = _tenferro._Trace(_tenferro._current_runtime(first))
        traced = [
            tr.input(x.dtype, list(x.shape))
            if isinstance(x, Tensor)
            else tr.weak_input(_WEAK[type(x)])
            if type(x) in _WEAK
            else x
            for x in leaves
        ]
        dyn_args, dyn_kw = _unflatten(tdef, traced)
        args, kwargs = rebuild(dyn_args, dyn_kw)
        token = tr.enter()
        rules: dict[Any, Any] = {}
        rules_token = _trace_errors.RULES.set(rules)
        custom: list[str] = []
        custom_token = _trace_state.CUSTOM_RULES.set(custom)
        no_grad_seen: list[bool] = []
        seen_token = _trace_state.NO_GRAD_SEEN.set(no_grad_seen)
        try:
            out = self._fun(*args, **kwargs)
        except TraceError as e:
            tr.end()  # its tensors are leaked tracers from now on (TracerLeakError)
            if str(e).startswith("jit: ") or ": jit: a tensor that requires grad" in str(e):
                raise _TrackedCapture from e
            raise
        except BaseException:
            tr.end()
            raise
        finally:
            _tenferro._state_var().reset(token)
            _trace_errors.RULES.reset(rules_token)
            _trace_state.CUSTOM_RULES.reset(custom_token)
            _trace_state.NO_GRAD_SEEN.reset(seen_token)
        try:
            out_leaves, out_tree = _flatten(out)
            if any(isinstance(x, Tensor) and x.requires_grad and not x._traced for x in out_leaves):
                raise _TrackedCapture
            outs = [
                x if isinstance(x, Tensor) else _as_tensor(x, f"jit({self._name})")
                for x in out_leaves
            ]
            graph = tr.finish(outs)
        except BaseException:
            tr.end()
            raise
        in_tree = tdef
        traced = TracedGraph(graph, in_tree, out_tree, self._name)
        traced._error_rules = rules
        if custom:
            traced._supplier = _Supplier(self._fun, leaves, tdef, rebuild)
        traced._stops_gradient = bool(no_grad_seen)
        if no_grad_seen:
            _trace_state.note_no_grad()  # an enclosing trace (a jitted function calling this one's trace)
        return traced, self._capture.tensors()

    def trace(self, *args: Any, **kwargs: Any) -> TracedGraph:
        """Trace ``f`` on these arguments (no cache involved) and return the program."""
        _, leaves, tdef, rebuild = self._signature(args, kwargs)
        return self._trace_leaves(leaves, tdef, rebuild)[0]

    # -- calling --------------------------------------------------------------------------------

    def _explain(self, key: Any) -> None:
        if os.environ.get("TENFERRO_EXPLAIN_CACHE_MISSES") == "1":
            print(
                f"tenferro.jit({self._name}): cache miss: {_describe_change(self._last_key, key)}",
                file=sys.stderr,
            )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs and self._fast is not None:
            # One crossing: key, lookup and run in Rust (None: not cached or not servable).
            # The captured-values check runs in Rust once it holds a probe (then None also
            # means "a captured value changed": the general path below recomputes the key).
            cap = self._capture
            if not self._captures:
                r = self._fast.call(args, None)
            elif cap.probed:
                r = self._fast.call_probed(args)
            else:
                r = self._fast.call(args, cap.key())
            if r is not None:
                # A tensor, a tuple of tensors, or (tree, outputs) to unflatten.
                return _unflatten(*r) if type(r) is tuple and r and type(r[0]) is _TreeDef else r
        state = _tenferro._state_var().get()
        if state.tracing:
            # Nested tf.jit: the inner function's ops join the outer trace.
            return self._fun(*args, **kwargs)
        key, leaves, tdef, rebuild = self._signature(args, kwargs)
        entry = self._cache.get(key)
        if entry is None:
            return self._miss(key, leaves, tdef, rebuild, args, kwargs)
        self._hits += 1
        self._cache.move_to_end(key)
        if not kwargs and all(type(a) in _FAST for a in args):
            # The replay cache refused this call only because it was cleared (an eviction).
            self._remember(args, entry.compiled)
        return self._run(entry.compiled, leaves, tdef, rebuild)

    def _value_and_grad_fast(self, args: tuple[Any, ...], argnums: tuple[int, ...]) -> Any:
        """``tf.func.value_and_grad(self, argnums)(*args)`` served by the replay cache in Rust
        (grad of jit: the compiled program's derivative programs, no ``tf.func`` frame), or
        ``None`` when it does not serve the call (then the general path runs)."""
        if self._fast is None:
            return None
        captured = self._capture.key() if self._captures else None
        r = self._fast.value_and_grad(args, captured, list(argnums))
        if (
            r is None
            and all(type(a) in _FAST for a in args)
            and _tenferro._state_var().get().grad_enabled
        ):
            key = self._signature(args, {})[0]
            if (
                key not in self._cache
                and key not in self._no_fast
                and not any(isinstance(a, Tensor) and a.requires_grad for a in args)
                and not (self._max_traces is not None and self._n_traces >= self._max_traces)
                and not any(t.requires_grad for t in self._capture.tensors())
                and len({a.runtime.id for a in args if isinstance(a, Tensor)}) <= 1
            ):
                # First call with this signature: trace and compile it by running it once, so
                # this call and the next are served (the general path would derive other
                # programs: the split of a recorded call). A signature this path cannot serve
                # (the trace fell back to eager) is not tried again.
                try:
                    self(*args)
                except ContextMismatchError:
                    # Tensors of another runtime than the active session's: the general path
                    # re-registers them, as tf.func does.
                    self._no_fast.add(key)
                    return None
                r = self._fast.value_and_grad(args, captured, list(argnums))
                if r is None:
                    self._no_fast.add(key)
        return r

    def _remember(self, args: tuple[Any, ...], compiled: CompiledGraph) -> None:
        """Let the Rust replay cache serve later calls like ``args`` (positional tensors and
        floats) with ``compiled``. (Not a graph that renames its errors: only its Python
        ``run`` applies the renaming.)"""
        if (
            self._fast is not None
            and type(compiled._graph) is _tenferro._Graph
            and not compiled._stops_gradient
        ):
            n = compiled._graph.n_outputs
            probe = [object() for _ in range(n)]
            built = _unflatten(compiled._out_tree, probe)
            if n == 1 and built is probe[0]:
                out = "one"
            elif type(built) is tuple and len(built) == n and all(map(operator.is_, built, probe)):
                out = "tuple"
            else:
                out = "tree"
            key = self._capture.key() if self._captures else None
            self._fast.insert(args, key, compiled._graph, out, compiled._out_tree)

    def _evict(self) -> None:
        """Drop least recently used traces beyond the cache limits (``MAX_ENTRIES`` traces,
        ``MAX_RETAINED_BYTES`` of programs and constants); the newest entry always stays."""
        total = sum(e.nbytes for e in self._cache.values())
        while len(self._cache) > 1 and (
            len(self._cache) > MAX_ENTRIES or total > MAX_RETAINED_BYTES
        ):
            _, old = self._cache.popitem(last=False)
            total -= old.nbytes
            self._evictions += 1
            if self._fast is not None:
                # The replay cache keeps no recency: it refills from the calls that follow.
                self._fast.clear()

    def _eager(self, leaves: list[Any], tdef: _TreeDef, rebuild: Any) -> Any:
        self._fallbacks += 1
        args, kwargs = rebuild(*_unflatten(tdef, leaves))
        return self._fun(*args, **kwargs)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """``@tf.jit`` on a method: the instance is the first (non-tensor, identity-keyed)
        argument."""
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)

    def _miss(
        self,
        key: Any,
        leaves: list[Any],
        tdef: _TreeDef,
        rebuild: Any,
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        """Trace, compile and run for a signature not in the cache (or fall back at the limit).
        A call without keyword arguments is remembered by the replay cache when it can serve it."""
        if self._max_traces is not None and self._n_traces >= self._max_traces:
            return self._limit(key, tuple(leaves) if args is None else args, kwargs or {})
        if any(t.requires_grad for t in self._capture.tensors()):
            return self._eager(leaves, tdef, rebuild)
        # One trace per signature also when threads call at once: a second caller waits for
        # the first one's program (bounded: a waiter holding an engine the tracer needs delays
        # it, never deadlocks it; after the wait it traces by itself).
        with self._lock:
            entry = self._cache.get(key)
            busy = self._inflight.get(key) if entry is None else None
            owner = None
            if entry is None and busy is None:
                owner = self._inflight[key] = threading.Event()
        if busy is not None:
            busy.wait(INFLIGHT_WAIT_S)
            entry = self._cache.get(key)
        if entry is not None:
            self._hits += 1
            return self._run(entry.compiled, leaves, tdef, rebuild)
        try:
            return self._trace_and_run(key, leaves, tdef, rebuild, args, kwargs)
        finally:
            if owner is not None:
                with self._lock:
                    self._inflight.pop(key, None)
                owner.set()

    def _trace_and_run(
        self,
        key: Any,
        leaves: list[Any],
        tdef: _TreeDef,
        rebuild: Any,
        args: tuple[Any, ...] | None,
        kwargs: dict[str, Any] | None,
    ) -> Any:
        self._explain(key)
        try:
            traced, captured = self._trace_leaves(leaves, tdef, rebuild)
        except _TrackedCapture:
            # A tensor that requires grad reached the trace as a constant: its derivative needs
            # eager recording (grad-of-jit is not built yet). Not cached: it may not recur.
            return self._eager(leaves, tdef, rebuild)
        except BaseException:
            self._misses += 1  # a call whose trace raised is a call (hits + misses + fallbacks)
            raise
        self._misses += 1
        self._n_traces += 1
        compiled = traced.compile()
        self._warn_big_captures(captured)
        entry = _Entry(compiled, captured, compiled._graph.nbytes)
        with self._lock:
            self._cache[key] = entry
            self._last_key = key
            self._evict()
        if args is not None and not kwargs:
            self._remember(args, compiled)
        return self._run(compiled, leaves, tdef, rebuild)

    def _run(self, compiled: CompiledGraph, leaves: list[Any], tdef: _TreeDef, rebuild: Any) -> Any:
        """Run a cached program, or the function eagerly when its program has a ``tf.no_grad``
        region and this call records a derivative (the program has no stop-gradient step)."""
        inputs = _inputs(leaves)
        if compiled._stops_gradient and _records(inputs):
            return self._eager(leaves, tdef, rebuild)
        return _unflatten(compiled._out_tree, compiled.run_flat(inputs))

    def _warn_big_captures(self, captured: tuple[Tensor, ...]) -> None:
        """Warn once per function when a captured tensor over 1 MiB became a constant of a
        program: the trace cache keeps it alive (``graph-mode.md``, "Captured tensors")."""
        if self._warned_big:
            return
        for t in captured:
            nbytes = t.size * t.dtype.itemsize
            if nbytes > BIG_CAPTURE_BYTES:
                self._warned_big = True
                warnings.warn(
                    f"jit({self._name}): a captured tensor (shape {tuple(t.shape)}, dtype {t.dtype}, "
                    f"{nbytes / (1 << 20):.1f} MiB) is a constant of the compiled program and the "
                    "trace cache keeps it alive; pass it as an argument instead to share it",
                    UserWarning,
                    stacklevel=4,
                )
                return

    def _limit(self, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        change = _describe_change(self._last_key, key)
        msg = (
            f"jit({self._name}): more than max_traces={self._max_traces} distinct signatures; "
            f"{change}"
        )
        if self._on_limit == "error":
            raise RecompileLimitError(msg)
        if not self._warned:
            self._warned = True
            warnings.warn(msg + "; running eagerly from now on", RecompileWarning, stacklevel=3)
        self._fallbacks += 1
        return self._fun(*args, **kwargs)

    def cache_stats(self) -> TraceCacheStats:
        """Counters of this function's trace cache."""
        return TraceCacheStats(
            entries=len(self._cache),
            retained_bytes=sum(e.nbytes for e in self._cache.values()),
            hits=self._hits + (self._fast.hits if self._fast is not None else 0),
            misses=self._misses,
            evictions=self._evictions,
            clears=self._clears,
            fallbacks=self._fallbacks,
        )

    def clear_cache(self) -> None:
        """Drop every trace (the function stays usable; the trace limit starts over)."""
        self._cache.clear()
        self._no_fast.clear()
        if self._fast is not None:
            self._fast.clear()
        self._n_traces = 0
        self._warned = False
        self._clears += 1

    def __repr__(self) -> str:
        return f"<tenferro.jit of {self._name}>"


# The argument types the replay cache (``_tenferro._CallCache``) serves.
_FAST = (Tensor, float)

# Python numbers traced as weakly typed rank-0 inputs (``graph-mode.md``): a new value never
# retraces. ``bool`` and ``int`` stay part of the key by value: they drive Python control flow
# (loop counts, shapes, indices) far more often than arithmetic, where specialising on them
# keeps such functions traceable.
_WEAK = {float: "float64", complex: "complex128"}


def _inputs(leaves: list[Any]) -> list[Any]:
    """The program inputs among the flattened argument leaves: tensors and weak scalars."""
    return [x for x in leaves if isinstance(x, Tensor) or type(x) in _WEAK]


# Every live jitted function, held weakly (``tf.clear_caches()`` clears their caches).
_LIVE: weakref.WeakSet[Jitted] = weakref.WeakSet()


def _as_tensor(x: Any, what: str = "jit") -> Tensor:
    from ._factories import asarray

    arr = np.asarray(x)
    if arr.dtype.kind not in "biufc":
        raise TypeError(
            f"{what}: outputs must be tensors (or a pytree of them), got {type(x).__name__}"
        )
    return asarray(arr)


def _describe_change(old: Any, new: Any) -> str:
    """Which part of the signature changed (for the recompile warning and miss explanations)."""
    if old is None:
        return "first call"
    parts = (
        "argument structure",
        "static arguments",
        "tensor/scalar arguments",
        "captured tensors",
        "grad mode",
    )
    for name, a, b in zip(parts, old, new):
        if a != b:
            if name == "tensor/scalar arguments" and len(a) == len(b):
                for i, (x, y) in enumerate(zip(a, b)):
                    if x != y:
                        return f"argument leaf {i} changed from {_fmt(x)} to {_fmt(y)}"
            return f"the {name} changed ({a!r} -> {b!r})"
    return "signature changed"


def _fmt(k: Any) -> str:
    if k[0] == "T":
        return f"tensor {k[1]}{list(k[2])}"
    if k[0] == "W":
        return f"weakly typed {k[1].__name__}"
    return f"{k[1].__name__} {k[2]!r}"


def jit(
    fun: Callable[..., Any] | None = None,
    *,
    static_argnames: str | Sequence[str] = (),
    static_argnums: int | Sequence[int] = (),
    max_traces: int | None = 8,
    on_limit: str = "eager",
) -> Any:
    """Compile ``fun`` per signature (see the module docs): trace once, run the program after.

    Parameters
    ----------
    fun
        The function; its arguments are pytrees of tensors, NumPy arrays and Python scalars.
    static_argnames, static_argnums
        Arguments whose values are part of the key (hashable; compared with ``==``).
    max_traces
        Distinct signatures traced before the function runs eagerly (``None``: no limit).
    on_limit
        ``"eager"`` (warn once with ``RecompileWarning``, then run eagerly) or ``"error"``
        (raise ``RecompileLimitError``).

    Returns
    -------
    Jitted
        Callable like ``fun``; ``.trace(*args)``, ``.cache_stats()``, ``.clear_cache()``.

    Raises
    ------
    ConcretizationError
        When the traced function asks a traced tensor for values (``bool(x)``, ``float(x)``,
        ``np.asarray(x)``, ``x.item()``, ``range(x)``, ...), or meets a data-dependent output shape
        (``x[mask]``) or a value-checked index (``x[idx]`` with a traced ``idx``); the message
        names the request, the op that made the tensor, its shape and dtype, and the user's line.
    TracerLeakError
        When a traced tensor kept past its trace is used (by an op or a value request).
    ShapeError, DTypeError, AxisError, EinsumError, ...
        Shape/dtype/parameter errors of the traced ops, while tracing (eager class and message);
        value errors (``ZeroDivisionError``, ``LinAlgError``) come from the compiled call.
    TypeError, ValueError
        For a non-callable ``fun`` or bad options.
    """
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)

    def wrap(f: Callable[..., Any]) -> Jitted:
        return Jitted(f, tuple(static_argnames), tuple(static_argnums), max_traces, on_limit)

    return wrap if fun is None else wrap(fun)


def make_graph(fun: Callable[..., Any], **jit_options: Any) -> Callable[..., TracedGraph]:
    """``make_graph(f)(*args)``: the :class:`TracedGraph` of ``f`` on these arguments."""
    return Jitted(fun, **jit_options).trace

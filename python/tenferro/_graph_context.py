"""Graph mode on an execution context (``graph-mode.md``, "Explicit layer: execution contexts")
and ``tf.clear_caches()``.

The methods ``compile_graph``, ``run_graph``, ``graph_cache_stats`` and ``reset_graph_runtime``
of ``tf.ExecutionContext`` are defined here (attached by ``_tensor_methods.install``);
``graph_buffer_pool_stats`` and ``reset_graph_buffer_pool`` are the binding's.

Each context has a *compiler cache*: ``ctx.compile_graph(f, *args)`` traces and compiles once
per function and signature (the key of ``tf.jit``: argument structure, dtypes, shapes, static
values, captured tensors, grad mode), ``ctx.compile_graph(traced)`` once per ``TracedGraph``.
Compiling reads only the op catalog: it borrows no engine. Running a ``CompiledGraph`` on an
engine uses its *prepared plan* for that engine kind and thread setting — constant-only
subgraphs folded — made on the first run there and kept in the engine's plan cache, whose
graph entries ``ctx.graph_cache_stats()["prepared"]`` counts.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any

import numpy as np

from . import _jit, _tenferro, _trace_errors
from ._jit import CompiledGraph, Jitted, TracedGraph, _TrackedCapture
from ._tenferro import ExecutionContext, Tensor
from ._types import CacheStats
from .errors import TraceError
from .func import _flatten, _unflatten

__all__ = ["clear_caches"]

# Limits of each context's compiler cache (least recently used graphs are evicted beyond them).
MAX_COMPILED = 128
MAX_COMPILED_BYTES = 64 << 20


class _Compiler:
    """One context's cache of compiled graphs, with the counters of ``CacheStats``. Each entry
    keeps the tensors the function captured alive: the key holds their identities, which a
    new tensor could otherwise take over."""

    def __init__(self) -> None:
        self.entries: OrderedDict[Any, tuple[CompiledGraph, tuple[Tensor, ...]]] = OrderedDict()
        self.hits = self.misses = self.evictions = self.clears = 0

    def get(self, key: Any) -> CompiledGraph | None:
        entry = self.entries.get(key)
        if entry is None:
            return None
        self.hits += 1
        self.entries.move_to_end(key)
        return entry[0]

    def put(self, key: Any, cg: CompiledGraph, captured: tuple[Tensor, ...] = ()) -> None:
        self.misses += 1
        self.entries[key] = (cg, captured)
        total = self.retained_bytes()
        while len(self.entries) > 1 and (
            len(self.entries) > MAX_COMPILED or total > MAX_COMPILED_BYTES
        ):
            _, (old, _) = self.entries.popitem(last=False)
            total -= old._graph.nbytes
            self.evictions += 1

    def retained_bytes(self) -> int:
        return sum(cg._graph.nbytes for cg, _ in self.entries.values())

    def stats(self) -> CacheStats:
        return CacheStats(
            len(self.entries),
            self.retained_bytes(),
            self.hits,
            self.misses,
            self.evictions,
            self.clears,
        )

    def clear(self) -> None:
        self.entries.clear()
        self.clears += 1


_COMPILERS: weakref.WeakKeyDictionary[ExecutionContext, _Compiler] = weakref.WeakKeyDictionary()


def _compiler(ctx: ExecutionContext) -> _Compiler:
    comp = _COMPILERS.get(ctx)
    if comp is None:
        comp = _COMPILERS[ctx] = _Compiler()
    return comp


def _ref(obj: Any) -> Any:
    """A key part for ``obj`` that never matches another object: a weak reference (equal only
    to references of the same live object; a dead one equals only itself), else ``obj``."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return obj


def compile_graph(
    self: ExecutionContext, f_or_traced: Any, *example_args: Any, **example_kwargs: Any
) -> CompiledGraph:
    """Compile a function for its example arguments, or a traced graph, without running it.

    Parameters
    ----------
    f_or_traced : callable or TracedGraph
        A function of pytrees of tensors (a ``tf.jit`` function keeps its ``static_argnames``),
        or a ``TracedGraph`` (``tf.jit(f).trace(*args)``, ``tf.make_graph(f)(*args)``).
    *example_args, **example_kwargs
        Arguments fixing the signature (structure, dtypes, shapes; static and scalar values):
        only their shapes and dtypes are read. None with a ``TracedGraph``.

    Returns
    -------
    CompiledGraph
        The optimised program, cached in this context's compiler cache (the same object for
        the same function and signature until ``reset_graph_runtime``). Call it, or
        ``ctx.run_graph(cg, ...)``, with arguments of the example's structure, dtypes and
        shapes (tensors may differ in values), or with its tensor leaves in order.

    Raises
    ------
    TypeError
        ``f_or_traced`` is neither callable nor a ``TracedGraph``, or example arguments come
        with a ``TracedGraph``.
    ConcretizationError, TraceError
        As ``tf.jit`` while tracing (``TraceError`` also when ``f`` uses a captured tensor that
        requires grad: a compiled graph records no derivatives).
    ShapeError, DTypeError
        Shape and dtype errors of the traced ops, with the eager message.

    Notes
    -----
    Compiling reads only the op catalog: no engine is borrowed and nothing runs.

    Examples
    --------
    >>> import numpy as np
    >>> import tenferro as tf
    >>> ctx = tf.ExecutionContext(tf.CpuEngine(threads=1))
    >>> x = np.linspace(0.0, 1.0, 8)                   # NumPy inputs are adopted
    >>> cg = ctx.compile_graph(lambda v: tf.sin(v) * v, x)
    >>> ctx.compile_graph(lambda v: v, x) is not cg
    True
    >>> out = ctx.run_graph(cg, x)                      # prepared on this engine, then run
    >>> bool(np.allclose(np.asarray(out), np.sin(x) * x))
    True
    >>> _ = ctx.run_graph(cg, x)                        # the prepared plan is reused
    >>> s = ctx.graph_cache_stats()
    >>> (s["compiled"].entries, s["prepared"].misses, s["prepared"].hits)
    (2, 1, 1)
    >>> ctx.reset_graph_runtime()
    >>> ctx.graph_cache_stats()["prepared"].entries
    0
    """
    comp = _compiler(self)
    if isinstance(f_or_traced, TracedGraph):
        if example_args or example_kwargs:
            raise TypeError("compile_graph: a TracedGraph takes no example arguments")
        key: Any = ("traced", _ref(f_or_traced))
        cg = comp.get(key)
        if cg is None:
            cg = f_or_traced.compile()
            comp.put(key, cg)
        return cg
    if not callable(f_or_traced):
        raise TypeError(
            f"compile_graph: expected a callable or a TracedGraph, got {type(f_or_traced).__name__}"
        )
    jitted = f_or_traced if isinstance(f_or_traced, Jitted) else Jitted(f_or_traced)
    sig, leaves, tdef, rebuild = jitted._signature(example_args, example_kwargs)
    key = ("fn", _ref(jitted._fun), jitted._static_names, jitted._static_nums, sig)
    cg = comp.get(key)
    if cg is not None:
        return cg
    try:
        traced, captured = jitted._trace_leaves(leaves, tdef, rebuild)
    except _TrackedCapture as e:
        raise TraceError(
            f"compile_graph({jitted._name}): the function uses a tensor that requires grad without "
            "taking it as an argument; a compiled graph records no derivatives (pass it as an "
            "argument, or use tf.jit, which runs such calls eagerly)"
        ) from e
    cg = traced.compile()
    cg._in_tree = tdef
    cg._leaf_keys = tuple(Jitted._leaf_key(x) for x in leaves if not isinstance(x, Tensor))
    # (Python floats and complexes are weakly typed inputs: keyed by type only.)
    comp.put(key, cg, captured)
    return cg


def flat_inputs(cg: CompiledGraph, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The inputs of a call of ``cg``: the tensor leaves (and the Python floats and complexes,
    weakly typed inputs) of ``args``/``kwargs`` when they have the compiled function's
    structure (its other leaves — ``bool``/``int``, static values — must equal the traced ones:
    they are baked into the program), else ``args`` as the flat list of inputs.

    Raises
    ------
    ValueError
        A non-tensor leaf (a Python scalar, a static value) differs from the traced one.
    """
    if cg._in_tree is not None:
        leaves, tdef = _flatten([list(args), kwargs])
        if tdef == cg._in_tree:
            keys = tuple(
                Jitted._leaf_key(x) for x in leaves if not isinstance(x, (Tensor, np.ndarray))
            )
            if keys != cg._leaf_keys:
                raise ValueError(
                    f"{cg.name}: non-tensor arguments {keys} differ from those the graph was compiled "
                    f"for {cg._leaf_keys} (they are constants of the program); compile again for them"
                )
            return [
                x for x in leaves if isinstance(x, (Tensor, np.ndarray)) or type(x) in _jit._WEAK
            ]
    if kwargs:
        raise TypeError(f"{cg.name}: keyword arguments need the compiled function's structure")
    return list(args)


def run_graph(self: ExecutionContext, compiled: CompiledGraph, *args: Any, **kwargs: Any) -> Any:
    """Run ``compiled`` on this context's engine.

    Parameters
    ----------
    compiled : CompiledGraph
        From ``ctx.compile_graph`` (any context's: compiled graphs are backend-neutral),
        ``traced.compile()`` or ``tf.jit``.
    *args, **kwargs
        The compiled function's arguments (same structure, dtypes and shapes as when compiled;
        tensors of this context's runtime, or NumPy arrays), or its tensor inputs in order.

    Returns
    -------
    pytree of Tensor
        The function's output structure; tensors of ``ctx.eager_runtime()``, untracked.

    Raises
    ------
    TypeError
        ``compiled`` is not a ``CompiledGraph``, or the number of tensor inputs differs.
    ShapeError, DTypeError
        An input's shape or dtype differs from the compiled one.
    ContextMismatchError
        A tensor belongs to another runtime than the context's.
    ReenteredError
        This thread holds the engine through a session of another runtime. (A session of this
        context, ``with ctx.session():``, is used as is.)
    EngineBrokenError
        The engine is broken by an earlier panic.

    Notes
    -----
    The engine is borrowed like a one-op session for the run (waiting behind another thread's
    session, GIL released); the graph's prepared plan for the engine is made on its first run
    there (constant folding) and cached in the engine's plan cache. The GIL is released while a
    program of non-trivial size runs; Ctrl-C interrupts it. Inputs are never written.
    """
    if not isinstance(compiled, CompiledGraph):
        raise TypeError(f"run_graph: expected a CompiledGraph, got {type(compiled).__name__}")
    inputs = flat_inputs(compiled, args, kwargs)
    if len(inputs) != compiled._graph.n_inputs:
        raise TypeError(
            f"{compiled.name}: the compiled graph takes {compiled._graph.n_inputs} tensor inputs, got {len(inputs)}"
        )
    graph = compiled._graph
    if not isinstance(graph, _trace_errors.RenamingGraph):
        return _unflatten(compiled._out_tree, self._run_graph(graph, inputs))
    # The trace renamed some errors (library functions keep their own prefix): as its ``run``.
    try:
        outs = self._run_graph(graph._graph, inputs)
    except graph._classes as e:
        new = _trace_errors._renamed(e, graph._rules)
        if new is None:
            raise
        raise new from e
    return _unflatten(compiled._out_tree, outs)


def graph_cache_stats(self: ExecutionContext) -> dict[str, CacheStats]:
    """Statistics of graph mode's caches on this context.

    Returns
    -------
    dict
        ``{"compiled": CacheStats, "prepared": CacheStats}``: this context's compiler cache
        (``compile_graph``), and the prepared graph plans in its engine's plan cache (one per
        compiled graph run on the engine; ``hits``/``misses`` count runs).
    """
    return {"compiled": _compiler(self).stats(), "prepared": self._prepared_graph_stats()}


def reset_graph_runtime(self: ExecutionContext) -> None:
    """Drop the compiled graphs of this context's compiler cache and the prepared graph plans of
    its engine (other plans stay). Compiled graphs held elsewhere stay usable: their next run
    prepares them again."""
    _compiler(self).clear()
    self._clear_prepared_graphs()


def clear_caches() -> None:
    """Clear every cache of the process: each ``tf.jit`` function's trace cache (its
    ``cache_stats().clears`` counts it), every engine's plan cache (einsum programs, GEMM plans,
    prepared graph plans), every context's compiler cache, every runtime's derivative caches
    (``rt.clear_caches()``: AD transforms and prepared derivatives, epoch advanced), and the
    helper caches of ``tf.jit``. Everything stays usable: jitted functions trace again on their
    next call.

    Examples
    --------
    >>> import tenferro as tf
    >>> f = tf.jit(lambda x: x + x)
    >>> x = tf.asarray([1.0, 2.0])
    >>> _ = f(x)
    >>> tf.clear_caches()
    >>> f.cache_stats().entries, f.cache_stats().clears
    (0, 1)
    >>> f(x).tolist()
    [2.0, 4.0]
    """
    for j in list(_jit._LIVE):
        j.clear_cache()
    for comp in list(_COMPILERS.values()):
        comp.clear()
    _tenferro._clear_engine_caches()
    _tenferro._clear_runtime_caches()
    _jit._global_names.cache_clear()

"""Graph mode on execution contexts (``graph-mode.md``, "Explicit layer: execution contexts";
``engines.md``, lending): ``ctx.compile_graph`` / ``ctx.run_graph`` against eager execution and
NumPy, prepared plans cached once per engine (kind and thread setting) in the engine's plan
cache, constant folding at prepare time, the buffer-pool and runtime resets, ``tf.clear_caches``,
inputs never written, the lending rules (``ReenteredError``), the GIL released while a program
runs, and Ctrl-C stopping one."""

from __future__ import annotations

import signal
import threading
import time

import numpy as np
import pytest

import tenferro as tf
from tenferro import _tenferro
from tenferro._jit import TracedGraph
from tenferro.errors import ContextMismatchError, DTypeError, ReenteredError, ShapeError
from tenferro.func import _flatten

RNG = np.random.default_rng(20)


def _ctx(threads: int = 1) -> tf.ExecutionContext:
    return tf.ExecutionContext(tf.CpuEngine(threads=threads))


def _t(ctx: tf.ExecutionContext, a: np.ndarray) -> tf.Tensor:
    """A tensor of ``ctx``'s runtime holding ``a``."""
    with ctx.session() as s:
        return s.constant(a)


def _f(x, y):
    return tf.sin(x) * y + tf.sum(x, axis=0)


def _prepared(ctx: tf.ExecutionContext) -> tf.CacheStats:
    return ctx.graph_cache_stats()["prepared"]


def test_compile_and_run_equal_eager_and_numpy() -> None:
    ctx = _ctx()
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    x, y = _t(ctx, a), _t(ctx, b)
    cg = ctx.compile_graph(_f, x, y)
    assert isinstance(cg, tf.CompiledGraph)
    out = ctx.run_graph(cg, x, y)
    with ctx.session():
        eager = _f(x, y)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(eager))
    np.testing.assert_allclose(np.asarray(out), np.sin(a) * b + a.sum(axis=0), rtol=1e-13)
    assert out.runtime is ctx.eager_runtime()
    # NumPy inputs are adopted; other values of the same shapes run the same graph.
    c = RNG.standard_normal((3, 4))
    np.testing.assert_allclose(
        np.asarray(ctx.run_graph(cg, c, b)), np.sin(c) * b + c.sum(axis=0), rtol=1e-13
    )


def test_pytree_arguments_and_outputs() -> None:
    ctx = _ctx()
    a, b = RNG.standard_normal(5), RNG.standard_normal(5)

    def g(d, scale, n):
        return {"s": d["u"] * scale + d["v"] * n, "n": [tf.sum(d["u"] * d["v"])]}

    d = {"u": _t(ctx, a), "v": _t(ctx, b)}
    cg = ctx.compile_graph(g, d, 2.0, 3)
    out = ctx.run_graph(cg, d, 2.0, 3)
    np.testing.assert_allclose(np.asarray(out["s"]), a * 2.0 + b * 3, rtol=1e-15)
    np.testing.assert_allclose(float(out["n"][0]), float(np.sum(a * b)), rtol=1e-13)
    # A float is a weakly typed input: another value runs the same graph.
    np.testing.assert_allclose(
        np.asarray(ctx.run_graph(cg, d, -1.5, 3)["s"]), a * -1.5 + b * 3, rtol=1e-15
    )
    assert ctx.graph_cache_stats()["prepared"].misses == 1
    # An int is baked into the program: another value is refused, not silently ignored.
    with pytest.raises(ValueError, match="differ from those the graph was compiled for"):
        ctx.run_graph(cg, d, 2.0, 4)
    # The inputs in order work too (the tensor leaves, then the float).
    flat = ctx.run_graph(cg, d["u"], d["v"], 2.0)
    np.testing.assert_array_equal(np.asarray(flat["s"]), np.asarray(out["s"]))


def test_compile_reads_no_engine_and_caches_per_signature() -> None:
    ctx = _ctx()
    x = _t(ctx, RNG.standard_normal(4))
    held, release, released = threading.Event(), threading.Event(), threading.Event()

    def hold() -> None:
        with ctx.session():
            held.set()
            release.wait(30)
        released.set()

    t = threading.Thread(target=hold)
    t.start()
    held.wait(30)
    try:
        # Another thread holds the engine: compiling must not wait for it.
        cg = ctx.compile_graph(lambda v: v * 3.0, x)
        assert not released.is_set()
    finally:
        release.set()
        t.join()
    stats = ctx.graph_cache_stats()
    assert stats["compiled"].misses == 1 and stats["compiled"].entries == 1
    assert stats["prepared"].misses == 0, "compiling prepares nothing"
    assert stats["compiled"].retained_bytes > 0
    # Same function object and signature: the same compiled graph (a hit); a new shape: a miss.
    fn = lambda v: v + 1.0  # noqa: E731
    cg1 = ctx.compile_graph(fn, x)
    assert ctx.compile_graph(fn, x) is cg1
    ctx.compile_graph(fn, _t(ctx, RNG.standard_normal(5)))
    s = ctx.graph_cache_stats()["compiled"]
    assert (s.hits, s.misses, s.entries) == (1, 3, 3)
    # A TracedGraph compiles once too.
    traced = tf.jit(fn).trace(x)
    assert ctx.compile_graph(traced) is ctx.compile_graph(traced)
    np.testing.assert_array_equal(np.asarray(ctx.run_graph(cg, x)), np.asarray(x) * 3.0)
    with pytest.raises(TypeError, match="no example arguments"):
        ctx.compile_graph(traced, x)
    with pytest.raises(TypeError, match="callable or a TracedGraph"):
        ctx.compile_graph(3, x)


def test_plan_prepared_once_per_engine() -> None:
    ctx = _ctx()
    x = _t(ctx, RNG.standard_normal(8))
    cg = ctx.compile_graph(lambda v: tf.exp(v) - v, x)
    for _ in range(4):
        out = ctx.run_graph(cg, x)
    p = _prepared(ctx)
    assert (p.entries, p.misses, p.hits) == (1, 1, 3)
    assert p.retained_bytes > 0
    np.testing.assert_allclose(np.asarray(out), np.exp(np.asarray(x)) - np.asarray(x), rtol=1e-15)
    # The prepared plans live in the engine's plan cache (its totals include them).
    assert ctx.engine.cache_stats().entries >= 1


def test_two_thread_settings_two_plans() -> None:
    serial, pooled = _ctx(1), _ctx(2)
    a = RNG.standard_normal((4, 4))
    cg = serial.compile_graph(lambda v: v @ v + 1.0, _t(serial, a))
    outs = []
    for ctx in (serial, pooled, serial, pooled):
        outs.append(np.asarray(ctx.run_graph(cg, _t(ctx, a))))
    for ctx in (serial, pooled):
        p = _prepared(ctx)
        assert (p.entries, p.misses, p.hits) == (1, 1, 1), (ctx.engine, p)
    for o in outs:
        np.testing.assert_allclose(o, a @ a + 1.0, rtol=1e-13)
    # The compiled graph is backend-neutral: compiling did not involve either engine.
    assert serial.graph_cache_stats()["compiled"].entries == 1
    assert pooled.graph_cache_stats()["compiled"].entries == 0


def _staged(
    ctx: tf.ExecutionContext, body, c: tf.Tensor, x_shape: tuple[int, ...], dtype=np.float64
) -> TracedGraph:
    """The traced graph of ``body(x, k)`` where ``k`` is ``c`` staged as a program constant
    (``_Trace.constant``): ops on it are recorded, so the program has constant-only subgraphs.
    (Ops on a captured tensor inside ``tf.jit`` run at trace time instead.)"""
    tr = _tenferro._Trace(ctx.eager_runtime())
    x = tr.input(np.dtype(dtype), list(x_shape))
    k = tr.constant(c)
    token = tr.enter()
    try:
        out = body(x, k)
    finally:
        _tenferro._state_var().reset(token)
    return TracedGraph(tr.finish([out]), _flatten([[x], {}])[1], _flatten(out)[1], "staged")


def _folding_body(x, k):
    kk = tf.exp(k).T * 2.0 + tf.sum(k)  # constant-only
    return x @ kk + tf.cos(k)


def test_constant_subgraphs_are_folded_at_prepare_time() -> None:
    ctx = _ctx()
    c = _t(ctx, RNG.standard_normal((3, 3)))
    a = RNG.standard_normal((3, 3))
    x = _t(ctx, a)
    cg = ctx.compile_graph(_staged(ctx, _folding_body, c, (3, 3)))
    n_instrs, folded = cg._graph._prepared_len(ctx.engine)
    assert folded > 0 and n_instrs < len(cg), (n_instrs, folded, str(cg))
    assert n_instrs == len(cg) - folded == 2, str(cg)  # the matmul and the add read the input
    with ctx.session():
        eager = _folding_body(x, c)
    got = ctx.run_graph(cg, x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(eager))
    cn = np.asarray(c)
    np.testing.assert_allclose(
        np.asarray(got), a @ (np.exp(cn).T * 2.0 + cn.sum()) + np.cos(cn), rtol=1e-13
    )
    # The prepared plan was made once (by _prepared_len) and served the run.
    p = _prepared(ctx)
    assert (p.entries, p.misses, p.hits) == (1, 1, 1)
    # A program without constant-only instructions folds nothing; tf.jit folds captured
    # tensors at trace time already.
    cg2 = ctx.compile_graph(lambda v: tf.sin(v) * tf.exp(c), x)
    assert cg2._graph._prepared_len(ctx.engine) == (len(cg2), 0)


def test_folding_error_is_raised_by_the_run_with_the_eager_class() -> None:
    ctx = _ctx()
    zero = _t(ctx, np.zeros(2, dtype=np.int64))
    one = _t(ctx, np.ones(2, dtype=np.int64))
    x = _t(ctx, np.array([3, 4], dtype=np.int64))
    cg = ctx.compile_graph(_staged(ctx, lambda v, k: v + one // k, zero, (2,), np.int64))
    n_instrs, _ = cg._graph._prepared_len(ctx.engine)  # preparing does not raise
    assert n_instrs >= 2, "the failing division is kept for the run"
    with pytest.raises(ZeroDivisionError):
        ctx.run_graph(cg, x)


def test_reset_graph_buffer_pool_keeps_plans_valid() -> None:
    ctx = _ctx()
    c = _t(ctx, RNG.standard_normal(4096))
    a = RNG.standard_normal(4096)
    cg = ctx.compile_graph(lambda v: v * tf.exp(c) + tf.sin(v), _t(ctx, a))
    first = np.asarray(ctx.run_graph(cg, _t(ctx, a))).copy()
    ctx.reset_graph_buffer_pool()
    assert ctx.graph_buffer_pool_stats().buffers == 0
    assert ctx.graph_buffer_pool_stats() == ctx.buffer_pool_stats()
    assert _prepared(ctx).entries == 1
    for _ in range(3):
        again = ctx.run_graph(cg, _t(ctx, a))
        np.testing.assert_array_equal(np.asarray(again), first)
    p = _prepared(ctx)
    assert (p.entries, p.misses, p.hits) == (1, 1, 3)


def test_reset_graph_runtime_drops_plans_and_compiled_graphs() -> None:
    ctx = _ctx()
    x = _t(ctx, RNG.standard_normal(6))
    fn = lambda v: v * v  # noqa: E731
    cg = ctx.compile_graph(fn, x)
    ctx.run_graph(cg, x)
    # Einsum plans in the same engine cache are not graph plans: they stay.
    with ctx.session():
        tf.einsum("i,i->", x, x)
    n_other = ctx.engine.cache_stats().entries - _prepared(ctx).entries
    ctx.reset_graph_runtime()
    s = ctx.graph_cache_stats()
    assert s["compiled"].entries == 0 and s["compiled"].clears == 1
    assert s["prepared"].entries == 0 and s["prepared"].clears == 1
    assert ctx.engine.cache_stats().entries == n_other
    # The compiled graph held here still runs: it is prepared again.
    np.testing.assert_array_equal(np.asarray(ctx.run_graph(cg, x)), np.asarray(x) ** 2)
    assert _prepared(ctx).misses == 2
    assert ctx.compile_graph(fn, x) is not cg, "the compiler cache was dropped"


def test_clear_caches_resets_every_cache_and_jitted_functions_keep_working() -> None:
    ctx = _ctx()
    x = _t(ctx, RNG.standard_normal(3))
    f = tf.jit(lambda v: v * 2.0 + 1.0)
    with ctx.session():
        for _ in range(3):
            f(x)
    assert f.cache_stats().entries == 1 and f.cache_stats().hits == 2
    cg = ctx.compile_graph(lambda v: v - 1.0, x)
    ctx.run_graph(cg, x)
    engine_clears = ctx.engine.cache_stats().clears
    tf.clear_caches()
    st = f.cache_stats()
    assert (st.entries, st.clears) == (0, 1)
    assert ctx.engine.cache_stats().entries == 0
    assert ctx.engine.cache_stats().clears == engine_clears + 1
    assert tf.default_engine().cache_stats().entries == 0
    s = ctx.graph_cache_stats()
    assert s["compiled"].entries == 0 and s["prepared"].entries == 0
    with ctx.session():
        np.testing.assert_array_equal(np.asarray(f(x)), np.asarray(x) * 2.0 + 1.0)
    assert f.cache_stats().misses == 2, "traced again after the clear"
    np.testing.assert_array_equal(np.asarray(ctx.run_graph(cg, x)), np.asarray(x) - 1.0)


def test_inputs_and_exported_buffers_are_never_written() -> None:
    a = RNG.standard_normal((16, 16))
    keep = a.copy()
    imported = tf.asarray(a, copy=False)  # shares a's memory
    c = tf.asarray(RNG.standard_normal((16, 16)))
    c_before = np.asarray(c).copy()

    def g(x):
        # Elementwise chains whose inputs die (in-place candidates), an output aliasing an
        # input, and a captured constant computed at trace time returned as an output.
        y = tf.exp(x) * 2.0 - x
        return y + tf.sin(y), x, c * 3.0

    ctx = tf.default_context()
    cg = ctx.compile_graph(g, imported)
    jitted = tf.jit(g)
    outs = [cg(imported) for _ in range(50)] + [jitted(imported) for _ in range(50)]
    outs += [ctx.run_graph(cg, imported) for _ in range(50)]
    np.testing.assert_array_equal(a, keep)
    np.testing.assert_array_equal(np.asarray(imported), keep)
    np.testing.assert_array_equal(np.asarray(c), c_before)
    exported = np.asarray(outs[0][2])
    assert not exported.flags.writeable
    snapshot = exported.copy()
    for _ in range(20):
        cg(imported)
    np.testing.assert_array_equal(exported, snapshot)
    np.testing.assert_array_equal(np.asarray(outs[-1][2]), c_before * 3.0)
    np.testing.assert_array_equal(np.asarray(outs[-1][1]), keep)


def test_lending_rules() -> None:
    ctx = _ctx()
    x = _t(ctx, RNG.standard_normal(4))
    cg = ctx.compile_graph(lambda v: v + v, x)
    # A session of this context held by the caller is used as is.
    with ctx.session():
        np.testing.assert_array_equal(np.asarray(ctx.run_graph(cg, x)), np.asarray(x) * 2)
        # Calling the graph inside the session runs on the session's engine.
        before = _prepared(ctx).hits
        np.testing.assert_array_equal(np.asarray(cg(x)), np.asarray(x) * 2)
        assert _prepared(ctx).hits == before + 1
    # The engine lent to another runtime on this thread: a second lend is ReenteredError.
    rt2 = tf.Runtime()
    with rt2.session(ctx.engine):
        with pytest.raises(ReenteredError, match="run_graph"):
            ctx.run_graph(cg, x)
    # After the failed lend the engine is free again.
    np.testing.assert_array_equal(np.asarray(ctx.run_graph(cg, x)), np.asarray(x) * 2)
    # `with rt.session(engine)`: that session's engine (here another engine entirely).
    other = _ctx()
    y = _t(other, np.asarray(x))
    with other.session():
        np.testing.assert_array_equal(np.asarray(cg(y)), np.asarray(x) * 2)
    assert _prepared(other).misses == 1


def test_input_errors() -> None:
    ctx = _ctx()
    x = _t(ctx, RNG.standard_normal(4))
    cg = ctx.compile_graph(lambda v: v * 2.0, x)
    with pytest.raises(ContextMismatchError, match="run_graph"):
        ctx.run_graph(cg, tf.asarray(np.ones(4)))
    with pytest.raises(
        ShapeError, match=r"input 0 has shape \[5\], the graph was compiled for \[4\]"
    ):
        ctx.run_graph(cg, np.ones(5))
    with pytest.raises(DTypeError, match="input 0 has dtype float32"):
        ctx.run_graph(cg, np.ones(4, dtype=np.float32))
    with pytest.raises(TypeError, match="takes 1 tensor inputs, got 2"):
        ctx.run_graph(cg, x, x)
    with pytest.raises(TypeError, match="expected a CompiledGraph"):
        ctx.run_graph(lambda v: v, x)


def _long_chain(n_steps: int):
    def g(v):
        for _ in range(n_steps):
            v = tf.sin(v) + 0.5
        return v

    return g


def test_gil_released_while_a_program_runs() -> None:
    ctx = _ctx()
    a = RNG.standard_normal(1 << 18)
    g = _long_chain(40)
    x = _t(ctx, a)
    cg = ctx.compile_graph(g, x)
    ctx.run_graph(cg, x)  # prepared outside the measurement
    stamps: list[float] = []
    stop = threading.Event()

    def tick() -> None:
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.0005)

    t = threading.Thread(target=tick)
    t.start()
    try:
        time.sleep(0.01)
        runs = []
        for _ in range(5):
            t0 = time.perf_counter()
            ctx.run_graph(cg, x)
            runs.append((t0, time.perf_counter()))
    finally:
        stop.set()
        t.join()
    # Holding the GIL for a whole run would leave no tick strictly inside any run.
    inside = sum(1 for s in stamps for (t0, t1) in runs if t0 < s < t1)
    assert inside > 0, runs


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="signal.setitimer is POSIX-only")
def test_ctrl_c_stops_a_running_program_and_the_engine_stays_usable() -> None:
    ctx = _ctx()
    a = RNG.standard_normal(1 << 20)
    x = _t(ctx, a)
    cg = ctx.compile_graph(_long_chain(2000), x)  # seconds uninterrupted

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, handler)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(KeyboardInterrupt):
            ctx.run_graph(cg, x)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    small = ctx.compile_graph(_long_chain(2), _t(ctx, a[:4]))
    np.testing.assert_allclose(
        np.asarray(ctx.run_graph(small, a[:4])), np.sin(np.sin(a[:4]) + 0.5) + 0.5, rtol=1e-15
    )


def test_run_graph_raises_value_errors_with_the_eager_message() -> None:
    ctx = _ctx()
    a = np.zeros((3, 3))
    cg = ctx.compile_graph(tf.linalg.inv, a)  # inv runs solve: the trace renames its errors
    with pytest.raises(tf.errors.LinAlgError) as compiled:
        ctx.run_graph(cg, a)
    with pytest.raises(tf.errors.LinAlgError) as eager:
        tf.linalg.inv(tf.asarray(a))
    assert str(compiled.value) == str(eager.value)
    assert str(compiled.value).startswith("linalg.inv: ")
    eye = np.eye(3) * 2.0
    np.testing.assert_allclose(np.asarray(ctx.run_graph(cg, eye)), np.eye(3) / 2.0, rtol=1e-15)


def test_products_with_constant_ones_are_folded_exactly_at_prepare_time() -> None:
    # Reverse mode seeds a cotangent of ones: its product with the local derivative is the
    # derivative itself (y * 1.0 == y bit for bit, NaN, infinities and -0.0 included), so the
    # prepared value_and_grad of a sum of squares runs x*x, sum and x+x only.
    ctx = _ctx()
    vals = np.array([1.5, -0.0, np.inf, -np.inf, np.nan, 3.0, -2.0, 1e-300])
    x = _t(ctx, vals)
    vg = tf.func.value_and_grad(lambda t: (t * t).sum())
    cg = ctx.compile_graph(vg, x)
    n_instrs, folded = cg._graph._prepared_len(ctx.engine)
    assert n_instrs == 3 and folded >= 1, (n_instrs, folded, str(cg))
    with ctx.session():
        ev, eg = vg(x)
    gv, gg = ctx.run_graph(cg, x)
    assert np.asarray(gv).tobytes() == np.asarray(ev).tobytes()
    assert np.asarray(gg).tobytes() == np.asarray(eg).tobytes()
    assert np.asarray(x).tobytes() == vals.tobytes()  # the input is only read
    # Complex products are kept: (a + bi)(1 + 0i) turns an infinite part into NaN.
    z = _t(ctx, vals + 1j * vals[::-1])
    vz = tf.func.value_and_grad(lambda t: tf.real(t * tf.conj(t)).sum())
    cz = ctx.compile_graph(vz, z)
    with ctx.session():
        _, ez = vz(z)
    _, gz = ctx.run_graph(cz, z)
    assert np.asarray(gz).tobytes() == np.asarray(ez).tobytes()
    # A constant of ones captured by the user is read, never written, and a product with it
    # that broadcasts (the output is larger than the other operand) is kept.
    ones = _t(ctx, np.ones((2, 8)))
    cb = ctx.compile_graph(lambda t: t * ones, x)
    assert cb._graph._prepared_len(ctx.engine)[0] == 1
    got = np.asarray(ctx.run_graph(cb, x))
    assert got.tobytes() == np.broadcast_to(vals, (2, 8)).tobytes()
    assert np.asarray(ones).tobytes() == np.ones((2, 8)).tobytes()

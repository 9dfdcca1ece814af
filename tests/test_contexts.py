"""Execution contexts, engine precedence and engine lending (engines.md "Execution context",
python-api.md "Sessions and modes")."""

from __future__ import annotations

import asyncio
import gc
import threading
import time

import numpy as np
import pytest

import tenferro as tf
from tenferro import _testing
from tenferro.testing import assert_close

E = tf.errors
N = 1 << 16  # results big enough to come from an engine's buffer pool


def allocations(engine: tf.CpuEngine) -> int:
    """Output buffers the engine has handed out (from its pool or the system allocator)."""
    stats = engine.buffer_pool_stats()
    return stats.hits + stats.misses


def test_context_owns_one_engine_and_one_eager_runtime() -> None:
    engine = tf.CpuEngine(threads=1)
    ctx = tf.ExecutionContext(engine)
    rt = ctx.eager_runtime()
    assert rt is ctx.eager_runtime() and isinstance(rt, tf.Runtime)
    assert ctx.engine is engine
    assert rt is not tf.default_runtime()
    with ctx.session() as s:
        assert s.runtime is rt and s.engine is engine
        y = s.add(s.constant([1.0, 2.0]), 1.0)
    assert y.runtime is rt
    assert_close(y, np.array([2.0, 3.0]))
    assert "ExecutionContext" in repr(ctx)


def test_default_context_is_behind_the_implicit_layer() -> None:
    ctx = tf.default_context()
    assert ctx is tf.default_context()
    assert ctx.eager_runtime() is tf.default_runtime()
    assert ctx.engine is tf.default_engine()
    assert tf.asarray([1.0]).runtime is ctx.eager_runtime()


def test_engine_precedence_session_then_owning_context_then_default() -> None:
    own, other = tf.CpuEngine(threads=1), tf.CpuEngine(threads=1)
    ctx = tf.ExecutionContext(own)
    rt = ctx.eager_runtime()
    x = rt.constant(np.ones(N))

    before = (allocations(own), allocations(other), allocations(tf.default_engine()))
    y = x * 2.0 + 1.0  # implicit: the owning context's engine
    after = (allocations(own), allocations(other), allocations(tf.default_engine()))
    assert after[0] - before[0] == 2 and after[1:] == before[1:], (before, after)
    assert y.runtime is rt

    with rt.session(other):  # an active session wins over the owning context
        before = (allocations(own), allocations(other))
        z = tf.exp(x)
        after = (allocations(own), allocations(other))
    assert after[0] == before[0] and after[1] == before[1] + 1
    assert z.runtime is rt

    del ctx
    gc.collect()  # the context is gone: the runtime's ops go to the default engine
    before = (allocations(own), allocations(tf.default_engine()))
    w = x - 1.0
    after = (allocations(own), allocations(tf.default_engine()))
    assert after[0] == before[0] and after[1] == before[1] + 1
    assert_close(w, np.zeros(N))


def test_context_session_reentry_and_other_threads() -> None:
    ctx = tf.ExecutionContext(tf.CpuEngine(threads=2))
    with ctx.session():
        with pytest.raises(E.ReenteredError):
            with ctx.session():
                pass
        with pytest.raises(E.ReenteredError):  # the same engine through another runtime
            with tf.Runtime().session(ctx.engine):
                pass
        box: list[BaseException] = []

        def other() -> None:
            try:
                with ctx.session(timeout=0.05):
                    pass
            except BaseException as exc:  # noqa: BLE001
                box.append(exc)

        t = threading.Thread(target=other)
        t.start()
        t.join(10)
        assert len(box) == 1 and isinstance(box[0], E.EngineBusyError)
    with ctx.session(timeout=0.0):  # free again
        pass


def test_second_thread_waits_with_the_gil_released() -> None:
    ctx = tf.ExecutionContext(tf.CpuEngine(threads=1))
    rt = ctx.eager_runtime()
    x = rt.constant(np.array([1.0, 2.0]))
    entered, done = threading.Event(), threading.Event()
    results: list[list[float]] = []

    def waiter() -> None:
        with ctx.session() as s:  # no timeout: waits
            entered.set()
            results.append(np.asarray(s.add(x, x)).tolist())
        done.set()

    def implicit_waiter() -> None:
        results.append((x * 10.0).tolist())  # implicit op on the context's engine: waits too

    with ctx.session():
        threads = [threading.Thread(target=waiter), threading.Thread(target=implicit_waiter)]
        for t in threads:
            t.start()
        # The main thread keeps running Python while they wait (GIL released).
        spins = 0
        deadline = time.monotonic() + 0.3
        while time.monotonic() < deadline:
            spins += 1
        assert spins > 1000 and not entered.is_set() and not results
    for t in threads:
        t.join(10)
    assert done.is_set()
    assert sorted(results) == [[2.0, 4.0], [10.0, 20.0]]


def test_two_asyncio_tasks_on_one_thread_reenter() -> None:
    engine = tf.CpuEngine(threads=1)
    rt = tf.Runtime()

    async def main() -> list[str]:
        holding = asyncio.Event()
        release = asyncio.Event()
        outcome: list[str] = []

        async def holder() -> None:
            with rt.session(engine):
                holding.set()
                await release.wait()
            outcome.append("holder done")

        async def intruder() -> None:
            await holding.wait()
            try:
                with rt.session(engine):
                    outcome.append("entered")
            except E.ReenteredError:
                outcome.append("reentered")
            release.set()

        await asyncio.wait_for(asyncio.gather(holder(), intruder()), timeout=10)
        return outcome

    assert asyncio.run(main()) == ["reentered", "holder done"]


def test_distinct_engines_nest_and_contexts_too() -> None:
    a = tf.ExecutionContext(tf.CpuEngine(threads=1))
    b = tf.ExecutionContext(tf.CpuEngine(threads=2))
    with a.session() as sa, b.session() as sb:
        xa = sa.constant([1.0, 2.0])
        xb = sb.constant([3.0, 4.0])
        assert_close(sb.add(xb, xb), np.array([6.0, 8.0]))
        assert_close(sa.mul(xa, xa), np.array([1.0, 4.0]))
        with pytest.raises(E.ContextMismatchError):
            sa.add(xa, xb)


def test_injected_panic_breaks_that_engine_only() -> None:
    ctx = tf.ExecutionContext(tf.CpuEngine(threads=2))
    rt = ctx.eager_runtime()
    x = rt.constant(np.arange(float(N)))
    _testing.panic_on_next_op(ctx.engine)
    with pytest.raises(E.EngineBrokenError, match="panic"):
        x + 1.0  # implicit path, on the context's engine
    with pytest.raises(E.EngineBrokenError, match="broken"):
        tf.exp(x)
    with pytest.raises(E.EngineBrokenError):
        with ctx.session() as s:
            s.neg(x)
    assert isinstance(E.EngineBrokenError("x"), RuntimeError)
    # The engine was released: the interpreter and other engines carry on.
    fresh = tf.ExecutionContext(tf.CpuEngine(threads=2))
    y = fresh.eager_runtime().constant(np.arange(float(N)))
    assert_close(y + 1.0, np.arange(float(N)) + 1.0)
    assert_close(tf.asarray([1.0, 2.0]) * 2.0, np.array([2.0, 4.0]))

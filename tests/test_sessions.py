"""Sessions, engines and buffer pools (python-api.md "Sessions and modes", engines.md)."""

from __future__ import annotations

import gc
import threading
import time

import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import assert_close

E = tf.errors


def test_session_runs_primitives() -> None:
    rt, engine = tf.Runtime(), tf.CpuEngine(threads=1)
    x = rt.constant(np.array([1.0, 2.0, 3.0]))
    y = rt.constant(np.array([4.0, 5.0, 6.0]))
    with rt.session(engine) as s:
        z = s.add(x, y)
        w = s.mul(x, y)
        r = s.reduce_sum(w)
        c = s.compare(x, y, "lt")
    assert_close(z, np.array([5.0, 7.0, 9.0]))
    assert_close(w, np.array([4.0, 10.0, 18.0]))
    assert_close(r, np.float64(32.0))
    assert np.asarray(c).tolist() == [True, True, True]
    assert z.runtime is rt


def test_reentering_the_same_engine_on_one_thread_raises() -> None:
    rt, engine = tf.Runtime(), tf.CpuEngine(threads=1)
    with rt.session(engine):
        with pytest.raises(E.ReenteredError):
            with rt.session(engine):
                pass
        with pytest.raises(E.ReenteredError):  # another runtime does not help: the engine is held
            with tf.Runtime().session(engine):
                pass
    # Released at exit: a new session on the same engine works.
    with rt.session(engine) as s:
        assert_close(s.add(rt.constant(np.ones(2)), rt.constant(np.ones(2))), np.full(2, 2.0))


def test_engine_released_after_an_exception() -> None:
    rt, engine = tf.Runtime(), tf.CpuEngine(threads=1)
    with pytest.raises(RuntimeError, match="boom"):
        with rt.session(engine):
            raise RuntimeError("boom")
    with rt.session(engine, timeout=1.0):
        pass


def test_other_thread_times_out_while_engine_is_held() -> None:
    rt, engine = tf.Runtime(), tf.CpuEngine(threads=1)
    holding, release, done = threading.Event(), threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def holder() -> None:
        try:
            with rt.session(engine):
                holding.set()
                release.wait(10)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
            holding.set()
        finally:
            done.set()

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert holding.wait(10)
        start = time.monotonic()
        with pytest.raises(E.EngineBusyError):
            with rt.session(engine, timeout=0.1):
                pass
        assert time.monotonic() - start < 5.0
    finally:
        release.set()
        thread.join(10)
    assert done.is_set() and not errors, errors


def test_other_thread_waits_until_release() -> None:
    rt, engine = tf.Runtime(), tf.CpuEngine(threads=1)
    _holding, results = threading.Event(), []
    x = rt.constant(np.array([1.0, 2.0]))

    def waiter() -> None:
        with rt.session(engine, timeout=10.0) as s:
            results.append(np.asarray(s.add(x, x)).tolist())

    with rt.session(engine):
        thread = threading.Thread(target=waiter)
        thread.start()
        time.sleep(0.2)
        assert not results  # still waiting behind this session
    thread.join(10)
    assert results == [[2.0, 4.0]]


def test_sessions_on_different_engines_nest() -> None:
    rt = tf.Runtime()
    e1, e2 = tf.CpuEngine(threads=1), tf.CpuEngine(threads=1)
    x = rt.constant(np.array([1.0, 2.0]))
    with rt.session(e1) as s1:
        with rt.session(e2) as s2:
            assert_close(s2.add(x, x), np.array([2.0, 4.0]))
            assert_close(s1.mul(x, x), np.array([1.0, 4.0]))
        assert_close(s1.sub(x, x), np.zeros(2))


def test_factories_use_the_session_runtime() -> None:
    rt, engine = tf.Runtime(), tf.CpuEngine(threads=1)
    with rt.session(engine):
        inside = [
            tf.zeros((2,)),
            tf.tensor([1.0, 2.0]),
            tf.asarray(np.ones(3)),
            tf.ones((1,)),
            tf.full((2,), 3.0),
        ]
    outside = tf.zeros((2,))
    for t in inside:
        assert t.runtime is rt
    assert outside.runtime is tf.default_runtime()
    assert tf.default_runtime() is tf.default_runtime()
    assert rt is not tf.default_runtime()


def test_cpu_engine_threads() -> None:
    assert tf.CpuEngine(threads=1).num_threads == 1
    assert tf.CpuEngine(threads=2).num_threads == 2
    with pytest.raises(E.CpuThreadError) as info:
        tf.CpuEngine(threads=0)
    assert info.value.reason is E.CpuThreadReason.ZERO_THREADS
    assert isinstance(info.value, ValueError)
    assert "0" in str(info.value)


def test_buffer_pool_stats_and_recycling() -> None:
    rt, engine = tf.Runtime(), tf.CpuEngine(threads=1)
    n = 1 << 16
    x = rt.constant(np.linspace(0.0, 1.0, n))
    y = rt.constant(np.linspace(1.0, 2.0, n))
    engine.reset_buffer_pool()
    before = engine.buffer_pool_stats()
    assert isinstance(before, tf.BufferPoolStats)
    for name in ("buffers", "retained_bytes", "capacity_bytes", "hits", "misses"):
        assert isinstance(getattr(before, name), int), name
    with rt.session(engine) as s:
        for _ in range(8):
            c = s.add(x, y)
            del c
            gc.collect()
    after = engine.buffer_pool_stats()
    assert after.hits > before.hits, (before, after)
    assert after.misses >= before.misses
    with pytest.raises(AttributeError):
        after.hits = 0  # frozen
    engine.reset_buffer_pool()
    cleared = engine.buffer_pool_stats()
    assert cleared.buffers == 0 and cleared.retained_bytes == 0


def test_exported_storage_is_never_recycled() -> None:
    rt, engine = tf.Runtime(), tf.CpuEngine(threads=1)
    n = 1 << 16
    x = rt.constant(np.linspace(0.0, 1.0, n))
    y = rt.constant(np.linspace(1.0, 2.0, n))
    with rt.session(engine) as s:
        c = s.add(x, y)
        exported = np.asarray(c)
        want = exported.copy()
        del c
        gc.collect()
        for i in range(6):  # equal-size results that would reuse a recycled buffer
            d = s.mul(x, rt.constant(np.full(n, float(i + 3))))
            del d
            gc.collect()
    np.testing.assert_array_equal(exported, want)


def test_numpy_operands_are_adopted_into_the_runtime_of_the_tensor_operands() -> None:
    """python-api.md: NumPy arrays and scalars handed to an op become constants of that op's
    runtime — also for the functions that convert their operands before the primitive (matmul,
    tensordot, where, clip, triangular_solve), outside any session."""
    rt = tf.Runtime()
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    x = rt.variable(a)
    e = np.eye(2)
    cases = {
        "x @ ndarray": (lambda: x @ e, a @ e),
        "ndarray @ x": (lambda: e @ x, e @ a),
        "matmul": (lambda: tf.matmul(x, e), a @ e),
        "tensordot": (lambda: tf.tensordot(x, e, axes=1), np.tensordot(a, e, axes=1)),
        "where": (lambda: tf.where(x > 1.5, x, 0.0), np.where(a > 1.5, a, 0.0)),
        "where ndarray condition": (lambda: tf.where(a > 1.5, x, e), np.where(a > 1.5, a, e)),
        "clip": (lambda: tf.clip(x, 0.0, 2.5), np.clip(a, 0.0, 2.5)),
        "triangular_solve": (
            lambda: tf.linalg.triangular_solve(x, np.ones((1, 2)), left=False),
            np.linalg.solve(np.tril(a).T, np.ones((2, 1))).T,
        ),
    }
    for name, (f, want) in cases.items():
        out = f()
        assert out.runtime is rt, name
        np.testing.assert_allclose(np.asarray(out), want, err_msg=name)
    # The result stays differentiable with respect to x.
    tf.sum(tf.clip(x, 0.0, 2.5) @ e).backward()
    np.testing.assert_allclose(np.asarray(x.grad), (a <= 2.5).astype(float))


def test_grad_of_another_runtime_raises_context_mismatch() -> None:
    rt, other = tf.Runtime(), tf.Runtime()
    x = rt.variable(np.array([1.0, 2.0]))
    y = tf.sum(x * x)
    with pytest.raises(tf.errors.ContextMismatchError, match="output belongs to runtime"):
        other.grad(y, x)
    with pytest.raises(tf.errors.ContextMismatchError, match=r"wrt\[0\] belongs"):
        rt.grad(y, [other.variable(np.ones(2))])
    with pytest.raises(tf.errors.ContextMismatchError, match="cotangent"):
        rt.vjp(y, x, other.constant(np.array(1.0)))
    with pytest.raises(tf.errors.ContextMismatchError, match="jvp"):
        other.jvp(y, x, rt.constant(np.ones(2)))
    np.testing.assert_allclose(np.asarray(rt.grad(y, x)), [2.0, 4.0])

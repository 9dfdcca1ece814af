"""Ctrl-C stops long kernels (engines.md, "Interrupting an op").

A ``SIGALRM`` handler that raises ``KeyboardInterrupt`` stands in for Ctrl-C (Python runs both
the same way: the C handler trips a flag, the main thread runs the Python handler). The timer
fires 0.5 s into a kernel that would run far longer; the op must raise ``KeyboardInterrupt`` and
return in under a quarter of its uninterrupted time, and the engine must then compute correctly.
The uninterrupted time of the GEMM and SVD cases is predicted from a small run of the same op on
this machine; the sizes are chosen so that it is at least 8 s (GEMM) and 4 s (a batch of SVDs,
predicted as if the batch ran `threads` times faster than one matrix alone: a lower bound).
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest

import tenferro as tf

pytestmark = pytest.mark.skipif(
    not hasattr(signal, "setitimer"), reason="signal.setitimer is POSIX-only"
)

FIRE_AFTER = 0.5


@pytest.fixture
def alarm_raises() -> Iterator[None]:
    """Make SIGALRM raise KeyboardInterrupt (as Ctrl-C does) for the test's duration."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, handler)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def interrupted_after(fn: Callable[[], object]) -> tuple[bool, float]:
    """Run ``fn`` with the timer set to fire after ``FIRE_AFTER`` s: (raised?, seconds)."""
    signal.setitimer(signal.ITIMER_REAL, FIRE_AFTER)
    t0 = time.perf_counter()
    try:
        fn()
        raised = False
    except KeyboardInterrupt:
        raised = True
    finally:
        elapsed = time.perf_counter() - t0
        signal.setitimer(signal.ITIMER_REAL, 0)
    print(f"interrupted={raised} after {elapsed:.3f} s (latency {elapsed - FIRE_AFTER:.3f} s)")
    return raised, elapsed


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def test_sum_over_a_huge_broadcast_view(alarm_raises: None) -> None:
    # 6·2⁴⁰ additions: hours uninterrupted; the bound is a quarter of 20 s.
    x = tf.asarray(np.arange(6.0))
    raised, elapsed = interrupted_after(lambda: tf.broadcast_to(x, (2**40, 6)).sum())
    assert raised
    assert elapsed < 20.0 / 4
    # The default engine still computes, exactly.
    assert float(tf.broadcast_to(x, (1000, 6)).sum()) == 15000.0
    a = np.random.default_rng(0).standard_normal((300, 200))
    np.testing.assert_allclose(np.asarray(tf.asarray(a).sum(axis=0)), a.sum(axis=0), rtol=1e-12)


@pytest.mark.parametrize("threads", [1, 2])
def test_reduction_of_a_broadcast_in_dim_on_an_explicit_engine(
    alarm_raises: None, threads: int
) -> None:
    rt = tf.Runtime()
    engine = tf.CpuEngine(threads=threads)
    with rt.session(engine) as s:
        x = s.constant(np.arange(6.0))
        big = s.broadcast_in_dim(x, (6, 2**40), (0,))
        raised, elapsed = interrupted_after(lambda: s.reduce_sum(big))
        assert raised and elapsed < 20.0 / 4
        # Reductions over one axis (the row kernel and the per-output fold) still work.
        m = s.constant(np.arange(12.0).reshape(3, 4))
        np.testing.assert_array_equal(np.asarray(s.reduce_sum(m, axes=0)), [12.0, 15, 18, 21])
        np.testing.assert_array_equal(np.asarray(s.reduce_sum(m, axes=1)), [6.0, 22, 38])
        assert float(s.reduce_sum(s.broadcast_in_dim(x, (6, 1000), (0,)))) == 15000.0


def test_large_matmul_stops_between_column_blocks(alarm_raises: None) -> None:
    rng = np.random.default_rng(1)
    small = tf.asarray(rng.standard_normal((1000, 1000)))
    timed(lambda: small @ small)  # warm the pool
    t1 = min(timed(lambda: small @ small) for _ in range(3))
    n = int(1000 * (8.0 / t1) ** (1 / 3))
    if n > 8000:
        pytest.skip(f"this machine multiplies too fast (1000²: {t1:.4f} s) for an 8 s GEMM")
    predicted = t1 * (n / 1000) ** 3
    a = tf.asarray(rng.standard_normal((n, n)))
    raised, elapsed = interrupted_after(lambda: a @ a)
    print(f"matmul {n}²: predicted {predicted:.1f} s uninterrupted")
    assert raised and elapsed < predicted / 4
    b = rng.standard_normal((40, 30))
    c = rng.standard_normal((30, 50))
    np.testing.assert_allclose(np.asarray(tf.asarray(b) @ tf.asarray(c)), b @ c, rtol=1e-12)


def test_batched_svd_stops_between_matrices(alarm_raises: None) -> None:
    rng = np.random.default_rng(2)
    n = 512
    one = tf.asarray(rng.standard_normal((n, n)))
    tf.linalg.svdvals(one)
    t1 = min(timed(lambda: tf.linalg.svdvals(one)) for _ in range(3))
    # One matrix already runs on every worker; a batch is split over them (one matrix each):
    # at best `threads` times the throughput, so this predicts a lower bound.
    threads = tf.default_engine().num_threads
    batch = max(2, int(np.ceil(4.0 * threads / t1)))
    if batch > 250:
        pytest.skip(f"this machine decomposes too fast ({n}²: {t1:.4f} s) for a 4 s batch")
    predicted = t1 * batch / threads
    stack = tf.asarray(rng.standard_normal((batch, n, n)))
    raised, elapsed = interrupted_after(lambda: tf.linalg.svdvals(stack))
    print(f"svdvals of {batch}×{n}²: predicted {predicted:.1f} s uninterrupted")
    assert raised and elapsed < predicted / 4
    a = rng.standard_normal((6, 4))
    np.testing.assert_allclose(
        np.asarray(tf.linalg.svdvals(tf.asarray(a))),
        np.linalg.svd(a, compute_uv=False),
        rtol=1e-12,
    )


def test_waiting_for_an_engine_held_by_another_thread(alarm_raises: None) -> None:
    engine = tf.CpuEngine(threads=1)
    rt = tf.Runtime()
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with rt.session(engine):
            held.set()
            release.wait(20)

    t = threading.Thread(target=holder)
    t.start()
    try:
        assert held.wait(10)

        def enter() -> None:
            with rt.session(engine):
                pass

        raised, elapsed = interrupted_after(enter)  # no timeout: would wait 20 s
        assert raised and elapsed < 20.0 / 4
    finally:
        release.set()
        t.join()
    with rt.session(engine, timeout=5) as s:  # free again, and usable
        assert float(s.reduce_sum(s.constant([1.0, 2.0]))) == 3.0


def test_a_handler_that_does_not_raise_lets_the_op_finish() -> None:
    calls: list[int] = []
    old = signal.signal(signal.SIGALRM, lambda signum, frame: calls.append(signum))
    try:
        x = tf.asarray(np.ones((2**21, 4)))
        signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)
        got = [float(x.sum()) for _ in range(5)]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert got == [2.0**23] * 5
    assert calls, "the handler ran while the ops waited"


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip(reason="POSIX signals")


def test_tril_and_pad_stop_during_their_output_fill(alarm_raises: None) -> None:
    """The zero-fill of a fresh output checks the cancel flag (it ran to completion, 1–2 s per
    GiB, before the column loop looked; found by a helper session)."""
    x = tf.broadcast_to(tf.ones(1), (2**14, 2**14))  # a 2 GiB output from a 8-byte view
    start = time.perf_counter()
    expected = tf.tril(x)
    full = time.perf_counter() - start
    del expected
    if full < 0.4:
        pytest.skip(f"tril of 2 GiB took only {full:.2f} s here: too fast to interrupt reliably")
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        tf.tril(x)
    assert time.perf_counter() - start < full / 4 + 0.05
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(tf.tril(tf.asarray(a), 1), np.tril(a, 1))
    np.testing.assert_array_equal(tf.pad(tf.asarray(a), 1), np.pad(a, 1))

"""``Session.__exit__`` out of order, across grad modes and from another thread (engines.md,
sessions; autodiff.md, ``no_grad`` is context-local): exiting one session must leave the
sessions and grad modes entered after it in force, and a thread that did not enter a session
cannot exit it."""

from __future__ import annotations

import threading

import pytest

import tenferro as tf
from tenferro.errors import ContextMismatchError


def test_exiting_an_outer_session_keeps_the_inner_one() -> None:
    rt1, rt2 = tf.Runtime(), tf.Runtime()
    s1 = rt1.session(tf.CpuEngine(threads=1))
    s2 = rt2.session(tf.CpuEngine(threads=1))
    s1.__enter__()
    s2.__enter__()
    s1.__exit__(None, None, None)
    assert tf.ones(1).runtime is rt2  # s2's block is still open
    s2.__exit__(None, None, None)
    assert tf.ones(1).runtime is tf.default_runtime()


def test_exiting_a_session_inside_no_grad_keeps_no_grad() -> None:
    rt = tf.Runtime()
    s = rt.session(tf.CpuEngine(threads=1))
    x = rt.variable([1.0, 2.0])

    def body():  # a generator: its `with s` block ends inside the caller's no_grad block
        with s:
            yield

    g = body()
    next(g)
    with tf.no_grad():
        next(g, None)
        y = x * 2
        assert not y.requires_grad
    assert (x * 2).requires_grad
    assert tf.ones(1).runtime is tf.default_runtime()


def test_exit_from_another_thread_raises_and_keeps_the_session() -> None:
    rt = tf.Runtime()
    s = rt.session(tf.CpuEngine(threads=1))
    errors: list[BaseException] = []

    def other() -> None:
        try:
            s.__exit__(None, None, None)
        except BaseException as e:  # noqa: BLE001 - collected for the main thread
            errors.append(e)

    with s:
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert len(errors) == 1 and isinstance(errors[0], ContextMismatchError)
        assert "another thread" in str(errors[0])
        assert tf.ones(1).runtime is rt  # still active here
    assert tf.ones(1).runtime is tf.default_runtime()
    with pytest.raises(tf.errors.TenferroError, match="not active"):
        s.neg(tf.ones(1))

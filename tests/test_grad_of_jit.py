"""Grad of jit (issue 21, graph mode part 2): a compiled graph called on tracked inputs (or under
``tf.func``) records one ``CompiledCall`` node whose VJP/JVP are programs derived from the
compiled program. Differential tests against the same compositions evaluated eagerly (no
``tf.jit``): ``grad(jit p)``, ``jvp(jit p)``, ``grad(grad(jit p))`` and ``hessian(jit p)`` on the
hypothesis random programs of ``tests/test_jit_random.py`` (real and complex; complex programs are
differentiated through a real loss ``sum |y|²``, ``jvp`` takes complex inputs directly), then
pytree outputs, inactive inputs, integer/bool and weak Python-number arguments, ``.backward()``
accumulation on ``rt.variable`` leaves, ``create_graph=True``, ``jacfwd``/``jacrev``/``hessian``
of a jitted function; and the runtime's derivative caches (``rt.cache_stats()``: one
preparation for a loop of calls of one signature, evictions under tiny limits,
``clear_caches()``). Tolerances: 1e-12 relative to the largest magnitude (f64/c128; the passes
may reorder sums), 2e-5 (f32/c64)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tenferro as tf
from test_jit_random import DTYPES, build, layout, programs

SETTINGS = settings(derandomize=True, max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _tol(dtype) -> float:
    return 1e-12 if np.dtype(dtype) in (np.float64, np.complex128) else 2e-5


def close(got, want, dtype) -> None:
    """Same dtype, shape, NaN/inf pattern; finite values within ``_tol(dtype)`` of the largest
    magnitude (at least 1)."""
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
    assert np.array_equal(np.isnan(g), np.isnan(w))
    assert np.array_equal(np.isinf(g), np.isinf(w))
    fin = np.isfinite(w)
    scale = max(1.0, float(np.max(np.abs(w[fin]), initial=0.0)))
    err = float(np.max(np.abs(g[fin] - w[fin]), initial=0.0))
    assert err <= _tol(dtype) * scale, (err, scale)


def close_tree(got, want, dtype) -> None:
    fg, fw = tf.func._flatten(got)[0], tf.func._flatten(want)[0]
    assert len(fg) == len(fw)
    for a, b in zip(fg, fw):
        close(a, b, dtype)


def real_loss(p):
    """``sum |p(a, b)|²`` (a real scalar of any program output)."""

    def loss(a, b):
        y = p(a, b)
        return tf.sum(tf.real(tf.conj(y) * y)) if y.dtype.kind == "c" else tf.sum(y * y)

    return loss


def _inputs(d, shape, lay, seed):
    rng = np.random.default_rng(seed)

    def make():
        a = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if np.dtype(d).kind == "c" else 0)
        return tf.asarray(layout(np.asarray(a, dtype=d), lay))

    return [make(), make()]


def _same_or_same_error(eager, jitted):
    """Run ``eager()``; if it raises, ``jitted()`` must raise the same type. Returns both
    results or ``None``."""
    try:
        want = eager()
    except Exception as e:  # noqa: BLE001 — the eager error must be the compiled one too
        with pytest.raises(type(e)):
            jitted()
        return None
    return jitted(), want


def _no_fallback(*jitted):
    for j in jitted:
        assert j.cache_stats().fallbacks == 0, j.cache_stats()


@SETTINGS
@given(steps=programs(), d=st.sampled_from(DTYPES), shape=st.sampled_from([(), (3,), (2, 2), (3, 3), (0, 3)]),
       lay=st.integers(0, 2), seed=st.integers(0, 2**16), where=st.booleans())
def test_random_grad_of_jit_equals_eager(steps, d, shape, lay, seed, where):
    """``grad(jit(loss ∘ p))`` and ``grad(loss ∘ jit(p))`` (a complex-valued compiled call whose
    output cotangent comes from an eager loss) equal eager ``grad(loss ∘ p)``."""
    xs = _inputs(d, shape, lay, seed)
    p = build(steps)
    jp = tf.jit(p)
    jloss = tf.jit(real_loss(p))
    f_eager = tf.func.value_and_grad(real_loss(p), argnums=(0, 1))
    f_jit = tf.func.value_and_grad(jloss if where else real_loss(jp), argnums=(0, 1))
    res = _same_or_same_error(lambda: f_eager(*xs), lambda: f_jit(*xs))
    if res is None:
        return
    (v1, g1), (v0, g0) = res
    rd = np.float64 if np.dtype(d) in (np.float64, np.complex128) else np.float32
    close(v1, v0, rd)
    for a, b in zip(g1, g0):
        close(a, b, d)
    _no_fallback(jp, jloss)


@SETTINGS
@given(steps=programs(), d=st.sampled_from(DTYPES), shape=st.sampled_from([(), (3,), (2, 2), (0, 3)]),
       lay=st.integers(0, 2), seed=st.integers(0, 2**16))
def test_random_jvp_of_jit_equals_eager(steps, d, shape, lay, seed):
    """``jvp(jit p)`` on the program's (complex) inputs directly equals eager ``jvp(p)``."""
    xs = _inputs(d, shape, lay, seed)
    ts = _inputs(d, shape, (lay + 1) % 3, seed + 1)
    p = build(steps)
    jp = tf.jit(p)
    res = _same_or_same_error(lambda: tf.func.jvp(p, xs, ts), lambda: tf.func.jvp(jp, xs, ts))
    if res is None:
        return
    (y1, t1), (y0, t0) = res
    close(y1, y0, d)
    close(t1, t0, d)
    _no_fallback(jp)


@SETTINGS
@given(steps=programs(), d=st.sampled_from(DTYPES), shape=st.sampled_from([(), (3,), (2, 2)]),
       seed=st.integers(0, 2**16))
def test_random_grad_of_grad_of_jit_equals_eager(steps, d, shape, seed):
    """``grad(a ↦ sum |grad(jit loss)(a, b)|²)`` equals the eager composition (the inner
    gradient's backward is itself recorded: the recomputing VJP program)."""
    xs = _inputs(d, shape, 0, seed)
    p = build(steps)
    jloss = tf.jit(real_loss(p))

    def outer(loss):
        def h(a, b):
            g = tf.func.grad(loss, argnums=0)(a, b)
            return tf.sum(tf.real(tf.conj(g) * g)) if g.dtype.kind == "c" else tf.sum(g * g)

        return tf.func.grad(h, argnums=(0, 1))

    res = _same_or_same_error(lambda: outer(real_loss(p))(*xs), lambda: outer(jloss)(*xs))
    if res is None:
        return
    got, want = res
    for a, b in zip(got, want):
        close(a, b, d)
    _no_fallback(jloss)


@SETTINGS
@given(steps=programs(), d=st.sampled_from(DTYPES), shape=st.sampled_from([(), (3,), (2, 2)]),
       seed=st.integers(0, 2**16))
def test_random_hessian_of_jit_equals_eager(steps, d, shape, seed):
    """``hessian(jit loss)`` equals eager ``hessian(loss)``; complex programs through the real
    and imaginary parts of their first input (the complex input is ``re + 1j * im``, formed
    outside the compiled call)."""
    rng = np.random.default_rng(seed)
    real = np.float64 if np.dtype(d) in (np.float64, np.complex128) else np.float32
    p = build(steps)
    loss, jloss = real_loss(p), tf.jit(real_loss(p))
    if np.dtype(d).kind == "c":
        b = tf.asarray((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(d))
        args = [tf.asarray(rng.standard_normal(shape).astype(real)) for _ in range(2)] + [b]
        h0 = tf.func.hessian(lambda re, im, b: loss(re + 1j * im, b), argnums=(0, 1))
        h1 = tf.func.hessian(lambda re, im, b: jloss(re + 1j * im, b), argnums=(0, 1))
    else:
        args = [tf.asarray(rng.standard_normal(shape).astype(d)) for _ in range(2)]
        h0, h1 = tf.func.hessian(loss, argnums=0), tf.func.hessian(jloss, argnums=0)
    res = _same_or_same_error(lambda: h0(*args), lambda: h1(*args))
    if res is None:
        return
    got, want = res
    close_tree(got, want, real)
    _no_fallback(jloss)

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

SETTINGS = settings(
    derandomize=True, max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


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
        a = rng.standard_normal(shape) + (
            1j * rng.standard_normal(shape) if np.dtype(d).kind == "c" else 0
        )
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
@given(
    steps=programs(),
    d=st.sampled_from(DTYPES),
    shape=st.sampled_from([(), (3,), (2, 2), (3, 3), (0, 3)]),
    lay=st.integers(0, 2),
    seed=st.integers(0, 2**16),
    where=st.booleans(),
)
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
@given(
    steps=programs(),
    d=st.sampled_from(DTYPES),
    shape=st.sampled_from([(), (3,), (2, 2), (0, 3)]),
    lay=st.integers(0, 2),
    seed=st.integers(0, 2**16),
)
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
@given(
    steps=programs(),
    d=st.sampled_from(DTYPES),
    shape=st.sampled_from([(), (3,), (2, 2)]),
    seed=st.integers(0, 2**16),
)
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
@given(
    steps=programs(),
    d=st.sampled_from(DTYPES),
    shape=st.sampled_from([(), (3,), (2, 2)]),
    seed=st.integers(0, 2**16),
)
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


# ---------------------------------------------------------------------------------------------
# Structured cases: pytree outputs, inactive inputs, integer/bool/weak arguments, .backward()
# ---------------------------------------------------------------------------------------------


def _a(*shape, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return np.asarray(a, dtype=dtype)


def _tree_fn(x, y):
    return {"s": tf.sin(x) * y, "pair": (x * x, tf.sum(y * tf.exp(x * 0.1)))}


def _tree_loss(f):
    def loss(x, y):
        out = f(x, y)
        return tf.sum(out["s"] * out["s"]) + tf.sum(out["pair"][0] * 0.5) + out["pair"][1] * 3.0

    return loss


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_pytree_outputs_vjp_and_grad_equal_eager(dtype):
    x, y = tf.asarray(_a(3, dtype=dtype, seed=1)), tf.asarray(_a(3, dtype=dtype, seed=2))
    jf = tf.jit(_tree_fn)
    out0, vjp0 = tf.func.vjp(_tree_fn, x, y)
    out1, vjp1 = tf.func.vjp(jf, x, y)
    close_tree(out1, out0, dtype)
    ct = {
        "s": tf.asarray(_a(3, dtype=dtype, seed=3)),
        "pair": (tf.asarray(_a(3, dtype=dtype, seed=4)), tf.asarray(_a(dtype=dtype, seed=5))),
    }
    close_tree(vjp1(ct), vjp0(ct), dtype)
    if dtype == np.float64:
        close_tree(
            tf.func.grad(_tree_loss(jf), argnums=(0, 1))(x, y),
            tf.func.grad(_tree_loss(_tree_fn), argnums=(0, 1))(x, y),
            dtype,
        )
    _no_fallback(jf)


def test_tuple_output_one_output_unused():
    """Only one output of a compiled call reaches the loss: the other's cotangent is zero."""
    f = lambda x: (tf.sin(x), tf.cos(x) * x)  # noqa: E731
    jf = tf.jit(f)
    x = tf.asarray(_a(4, seed=7))
    for k in (0, 1):
        want = tf.func.grad(lambda x: tf.sum(f(x)[k]))(x)
        got = tf.func.grad(lambda x: tf.sum(jf(x)[k]))(x)
        close(got, want, np.float64)
    _no_fallback(jf)


def test_inactive_inputs_are_not_differentiated():
    f = lambda x, y, z: tf.sum(tf.sin(x) * y + z * x)  # noqa: E731
    jf = tf.jit(f)
    x, y, z = (tf.asarray(_a(3, seed=s)) for s in (1, 2, 3))
    for argnums in (0, 1, 2, (0, 2), (1,)):
        close_tree(
            tf.func.grad(jf, argnums=argnums)(x, y, z),
            tf.func.grad(f, argnums=argnums)(x, y, z),
            np.float64,
        )
    # .backward(): only the variable gets a gradient; the constants stay without one.
    rt = tf.default_runtime()
    v = rt.variable(_a(3, seed=1))
    jf(v, y, z).backward()
    close(v.grad, tf.func.grad(f)(x, y, z), np.float64)
    assert y.grad is None and z.grad is None
    _no_fallback(jf)


def test_integer_bool_and_weak_float_arguments():
    def f(x, idx, mask, s):
        picked = tf.take(x, idx, axis=0, mode="clip")
        return tf.sum(tf.where(mask, picked * s, tf.sin(picked))) + s * tf.sum(x * x)

    jf = tf.jit(f)
    x = tf.asarray(_a(5, seed=3))
    idx = tf.asarray(np.array([4, 0, 0, 2], dtype=np.int64))
    mask = tf.asarray(np.array([True, False, True, False]))
    for s in (0.5, -1.25):  # weak Python floats: one trace serves both
        close(tf.func.grad(jf)(x, idx, mask, s), tf.func.grad(f)(x, idx, mask, s), np.float64)
    v = tf.default_runtime().variable(np.asarray(x))
    jf(v, idx, mask, 0.5).backward()
    close(v.grad, tf.func.grad(f)(x, idx, mask, 0.5), np.float64)
    _no_fallback(jf)
    assert jf.cache_stats().misses == 1


def test_integer_and_bool_outputs_next_to_a_differentiated_one():
    def f(x):
        return tf.sum(x * x), x > 0, tf.asarray(np.arange(3))

    jf = tf.jit(f)
    x = tf.asarray(_a(3, seed=4))
    g1 = tf.func.grad(lambda x: jf(x)[0])(x)
    close(g1, 2 * np.asarray(x), np.float64)
    v = tf.default_runtime().variable(np.asarray(x))
    out, pos, ar = jf(v)
    assert out.requires_grad and not pos.requires_grad and not ar.requires_grad
    np.testing.assert_array_equal(np.asarray(pos), np.asarray(x) > 0)
    out.backward()
    close(v.grad, 2 * np.asarray(x), np.float64)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_backward_accumulates_over_two_calls(dtype):
    f = lambda x, w: tf.sum(tf.real(tf.conj(tf.sin(x) * w) * (tf.sin(x) * w)))  # noqa: E731
    jf = tf.jit(f)
    rt = tf.default_runtime()
    xa, wa = _a(2, 3, dtype=dtype, seed=1), _a(2, 3, dtype=dtype, seed=2)
    v, w = rt.variable(xa), rt.variable(wa)
    jf(v, w).backward()
    g1 = np.asarray(v.grad).copy()
    jf(v, w * 2.0).backward()
    want1 = tf.func.grad(f)(tf.asarray(xa), tf.asarray(wa))
    want2 = tf.func.grad(f)(tf.asarray(xa), tf.asarray(wa * 2.0))
    close(g1, want1, dtype)
    close(v.grad, np.asarray(want1) + np.asarray(want2), dtype)
    # w's second contribution goes through w * 2: 2 · ∂f/∂w at (x, 2w).
    gw = lambda w: np.asarray(tf.func.grad(f, argnums=1)(tf.asarray(xa), tf.asarray(w)))  # noqa: E731
    close(w.grad, gw(wa) + 2 * gw(wa * 2.0), dtype)
    _no_fallback(jf)


def test_backward_create_graph_gives_second_derivatives():
    f = lambda x: tf.sum(tf.sin(x) * x * x)  # noqa: E731
    jf = tf.jit(f)
    rt = tf.default_runtime()
    xa = _a(4, seed=5)
    v = rt.variable(xa)
    jf(v).backward(create_graph=True)
    g = v.grad
    assert g.requires_grad
    close(g, 2 * xa * np.sin(xa) + xa * xa * np.cos(xa), np.float64)
    (hv,) = rt.grad(tf.sum(g), [v])
    # d/dx of sum(g) = diag Hessian summed: 2 sin + 4x cos − x² sin
    close(hv, 2 * np.sin(xa) + 4 * xa * np.cos(xa) - xa * xa * np.sin(xa), np.float64)
    # rt.grad with create_graph through the compiled call, third order
    u = rt.variable(xa)
    (g1,) = rt.grad(jf(u), [u])
    (g2,) = rt.grad(tf.sum(g1), [u])
    (g3,) = rt.grad(tf.sum(g2), [u])
    close(g3, 6 * np.cos(xa) - 6 * xa * np.sin(xa) - xa * xa * np.cos(xa), np.float64)


def test_jacfwd_jacrev_hessian_of_jit_equal_eager():
    def f(x, y):
        return tf.sin(x) * tf.einsum("ij,j->i", y, x) + x * 0.5

    jf = tf.jit(f)
    x, y = tf.asarray(_a(3, seed=1)), tf.asarray(_a(3, 3, seed=2))
    for tr in (tf.func.jacfwd, tf.func.jacrev):
        close_tree(tr(jf, argnums=(0, 1))(x, y), tr(f, argnums=(0, 1))(x, y), np.float64)
    loss = lambda x, y: tf.sum(f(x, y) ** 2)  # noqa: E731
    jloss = tf.jit(loss)
    close_tree(
        tf.func.hessian(jloss, argnums=(0, 1))(x, y),
        tf.func.hessian(loss, argnums=(0, 1))(x, y),
        np.float64,
    )
    close_tree(
        tf.func.hessian(lambda x, y: tf.sum(jf(x, y) ** 2))(x, y),
        tf.func.hessian(loss)(x, y),
        np.float64,
    )
    _no_fallback(jf, jloss)


def test_holomorphic_jacobians_of_jit_equal_eager():
    def f(z):
        return tf.exp(z) * z + z * z

    jf = tf.jit(f)
    z = tf.asarray(_a(3, dtype=np.complex128, seed=3))
    for tr in (tf.func.jacfwd, tf.func.jacrev):
        close(tr(jf, holomorphic=True)(z), tr(f, holomorphic=True)(z), np.complex128)
    _no_fallback(jf)


def test_compiled_graph_called_directly_records_its_derivative():
    f = lambda x: tf.sum(tf.exp(x) * x)  # noqa: E731
    x = tf.asarray(_a(3, seed=9))
    cg = tf.jit(f).trace(x).compile()
    close(tf.func.grad(cg)(x), tf.func.grad(f)(x), np.float64)
    close(tf.func.hessian(cg)(x), tf.func.hessian(f)(x), np.float64)
    close_tree(tf.func.jvp(cg, (x,), (x,)), tf.func.jvp(f, (x,), (x,)), np.float64)


# ---------------------------------------------------------------------------------------------
# The runtime's derivative caches (graph-mode.md, "Caches on the Runtime")
# ---------------------------------------------------------------------------------------------


def _stats(rt):
    s = rt.cache_stats()
    return s["ad_transforms"], s["prepared_derivatives"]


def _consistent(rt):
    for s, (max_e, _max_b) in zip(_stats(rt), ((rt_limits(rt, "t")), rt_limits(rt, "p"))):
        assert 0 <= s.entries <= max_e, s
        assert s.entries == 0 or s.retained_bytes > 0, s
        assert s.entries <= s.misses, s  # every entry was a miss once
        assert s.evictions <= s.misses, s


_LIMITS: dict[tuple[int, str], tuple[int, int]] = {}


def rt_limits(rt, which):
    return _LIMITS.get((rt.id, which), (128, 64 << 20))


def _set_limits(rt, which, max_entries, max_bytes):
    setter = (
        rt.set_ad_transform_cache_limits
        if which == "t"
        else rt.set_prepared_derivative_cache_limits
    )
    setter(max_entries=max_entries, max_retained_bytes=max_bytes)
    _LIMITS[(rt.id, which)] = (max_entries, max_bytes)


def _energy(x, w):
    return tf.sum(tf.sin(x) * w + tf.exp(x * 0.1))


@pytest.mark.parametrize("how", ["func.grad", "backward"])
def test_a_thousand_grad_of_jit_calls_prepare_the_derivative_once(how):
    rt = tf.Runtime()
    jf = tf.jit(_energy)
    xa, wa = _a(8, seed=1), _a(8, seed=2)
    w = rt.constant(wa)
    want = np.cos(xa) * wa + 0.1 * np.exp(0.1 * xa)

    if how == "func.grad":
        x = rt.constant(xa)
        g = tf.func.grad(jf)

        def call():
            return g(x, w)
    else:
        v = rt.variable(xa)

        def call():
            v.clear_grad()
            jf(v, w).backward()
            return v.grad

    close(call(), want, np.float64)
    t1, p1 = _stats(rt)
    assert t1.misses >= 1 and p1.misses >= 1 and t1.entries == t1.misses and p1.entries == p1.misses
    close(call(), want, np.float64)
    t2, p2 = _stats(rt)
    assert (t2.misses, p2.misses) == (t1.misses, p1.misses)  # the second call derives nothing
    per_call = (t2.hits - t1.hits, p2.hits - p1.hits)
    assert per_call[1] >= 1  # the prepared derivative is looked up (and found) every call
    for _ in range(998):
        got = call()
    close(got, want, np.float64)
    t, p = _stats(rt)
    assert (t.misses, p.misses) == (t1.misses, p1.misses)
    assert (t.entries, p.entries) == (t1.entries, p1.entries)
    assert (t.hits, p.hits) == (t1.hits + 999 * per_call[0], p1.hits + 999 * per_call[1])
    assert t.evictions == p.evictions == t.clears == p.clears == 0
    assert jf.cache_stats().misses == 1 and jf.cache_stats().fallbacks == 0
    _consistent(rt)


def test_tiny_limits_force_evictions_and_answers_stay_right():
    rt = tf.Runtime()
    _set_limits(rt, "t", 1, 64 << 20)
    _set_limits(rt, "p", 1, 64 << 20)
    jf = tf.jit(_energy)
    g = tf.func.grad(jf)
    for _rnd in range(3):
        for n in (3, 4, 5):  # three signatures, each evicts the others' derivatives
            xa, wa = _a(n, seed=n), _a(n, seed=n + 10)
            close(
                g(rt.constant(xa), rt.constant(wa)),
                np.cos(xa) * wa + 0.1 * np.exp(0.1 * xa),
                np.float64,
            )
            t, p = _stats(rt)
            assert t.entries <= 1 and p.entries <= 1
            _consistent(rt)
    t, p = _stats(rt)
    assert t.evictions > 0 and p.evictions > 0
    assert t.misses >= 9 and p.misses >= 9  # nothing survives to the next signature
    assert t.evictions == t.misses - t.entries and p.evictions == p.misses - p.entries
    # A byte limit below one entry's size keeps at most the newest entry.
    rt2 = tf.Runtime()
    _set_limits(rt2, "t", 128, 1)
    _set_limits(rt2, "p", 128, 1)
    for n in (3, 4, 5):
        xa, wa = _a(n, seed=n), _a(n, seed=n + 10)
        close(
            g(rt2.constant(xa), rt2.constant(wa)),
            np.cos(xa) * wa + 0.1 * np.exp(0.1 * xa),
            np.float64,
        )
        t, p = _stats(rt2)
        assert t.entries <= 1 and p.entries <= 1
    assert _stats(rt2)[0].evictions > 0 and _stats(rt2)[1].evictions > 0
    # Lowering the limits evicts at once.
    rt3 = tf.Runtime()
    for n in (3, 4, 5):
        g(rt3.constant(_a(n)), rt3.constant(_a(n)))
    before = _stats(rt3)[1]
    assert before.entries >= 3
    _set_limits(rt3, "p", 1, 64 << 20)
    after = _stats(rt3)[1]
    assert after.entries == 1 and after.evictions == before.evictions + before.entries - 1


def test_limits_are_checked():
    rt = tf.Runtime()
    for setter in (rt.set_ad_transform_cache_limits, rt.set_prepared_derivative_cache_limits):
        with pytest.raises(ValueError):
            setter(max_entries=0, max_retained_bytes=1 << 20)
        with pytest.raises((ValueError, OverflowError)):
            setter(max_entries=4, max_retained_bytes=-1)


@pytest.mark.parametrize("clear", ["rt", "tf"])
def test_clear_caches_empties_and_the_next_call_prepares_again(clear):
    rt = tf.Runtime()
    jf = tf.jit(_energy)
    g = tf.func.grad(jf)
    xa, wa = _a(6, seed=1), _a(6, seed=2)
    x, w = rt.constant(xa), rt.constant(wa)
    want = np.cos(xa) * wa + 0.1 * np.exp(0.1 * xa)
    close(g(x, w), want, np.float64)
    t1, p1 = _stats(rt)
    g(x, w)
    t2, p2 = _stats(rt)
    assert (t2.misses, p2.misses) == (t1.misses, p1.misses)
    rt.clear_caches() if clear == "rt" else tf.clear_caches()
    t, p = _stats(rt)
    assert (t.entries, t.retained_bytes, p.entries, p.retained_bytes) == (0, 0, 0, 0)
    assert t.clears == p.clears == 1
    assert (t.hits, t.misses, p.hits, p.misses) == (t2.hits, t2.misses, p2.hits, p2.misses)
    close(g(x, w), want, np.float64)  # derives and prepares again
    t3, p3 = _stats(rt)
    assert (t3.misses - t2.misses, p3.misses - p2.misses) == (t1.misses, p1.misses)
    assert (t3.entries, p3.entries) == (t1.entries, p1.entries)
    close(g(x, w), want, np.float64)  # then finds them
    t4, p4 = _stats(rt)
    assert (t4.misses, p4.misses) == (t3.misses, p3.misses)
    assert (t4.hits - t3.hits, p4.hits - p3.hits) == (t2.hits - t1.hits, p2.hits - p1.hits)
    _consistent(rt)


def test_caches_are_per_runtime():
    a, b = tf.Runtime(), tf.Runtime()
    g = tf.func.grad(tf.jit(_energy))
    g(a.constant(_a(4)), a.constant(_a(4)))
    ta, pa = _stats(a)
    tb, pb = _stats(b)
    assert ta.misses >= 1 and pa.misses >= 1
    assert (tb.misses, tb.hits, pb.misses, pb.hits, tb.entries) == (0, 0, 0, 0, 0)
    g(b.constant(_a(4)), b.constant(_a(4)))
    assert _stats(b)[0].misses == ta.misses  # derived again there, not shared


# ---------------------------------------------------------------------------------------------
# Regressions found by the breaker
# ---------------------------------------------------------------------------------------------


def test_eigvals_inside_jit_differentiates_to_first_order_like_eager():
    """``eig``'s eigenvectors have no rule; a jitted function of the eigenvalues has a first
    derivative (grad with recording, jvp), and only a second derivative raises — as eagerly.
    (Recording the derivative program used to derive its own split at once and raise.)"""
    from tenferro.errors import UnsupportedAdRuleError

    a = tf.asarray(np.array([[2.0, 1.0], [0.5, 3.0]]))
    f = lambda a: tf.sum(tf.real(tf.linalg.eigvals(a)) ** 2)  # noqa: E731
    jf = tf.jit(f)
    close(tf.func.grad(jf)(a), tf.func.grad(f)(a), np.float64)
    close_tree(tf.func.jvp(jf, (a,), (a,)), tf.func.jvp(f, (a,), (a,)), np.float64)
    v = tf.default_runtime().variable(np.asarray(a))
    jf(v).backward(create_graph=True)
    close(v.grad, tf.func.grad(f)(a), np.float64)
    for ff in (f, jf):
        with pytest.raises(UnsupportedAdRuleError, match="eigenvectors"):
            tf.func.hessian(ff)(a)


def test_integer_and_bool_outputs_of_a_recorded_call_are_untracked():
    rt = tf.default_runtime()
    x = rt.variable(_a(3, seed=2))
    out, pos, ar = tf.jit(lambda x: (tf.sum(x), x > 0, tf.asarray(np.arange(3))))(x)
    assert out.requires_grad and not pos.requires_grad and not ar.requires_grad
    assert (x > 0).requires_grad is False  # as eagerly


def test_no_grad_inside_a_jitted_function_stops_the_gradient_like_eager():
    """A program has no stop-gradient step: a jitted function that enters ``tf.no_grad()``
    runs eagerly when its call records a derivative (it used to differentiate through the
    region: a wrong gradient), and its compiled graph called directly on tracked inputs
    raises."""
    from tenferro.errors import UnsupportedAdRuleError

    def f(a):
        with tf.no_grad():
            c = tf.sum(a * 3)
        return tf.sum(a * a) * c

    xa = np.array([0.5, -1.0, 2.0])
    want = 2 * xa * np.sum(3 * xa)
    x = tf.asarray(xa)
    jf = tf.jit(f)
    close(jf(x), f(x), np.float64)  # untracked: the compiled program
    close(tf.func.grad(jf)(x), want, np.float64)
    close(tf.func.grad(f)(x), want, np.float64)
    close(tf.jit(tf.func.grad(f))(x), want, np.float64)
    v = tf.default_runtime().variable(xa)
    jf(v).backward()
    close(v.grad, want, np.float64)
    assert jf.cache_stats().fallbacks == 2
    outer = tf.jit(lambda a: jf(a) * 2.0)  # the inner trace joins the outer one
    close(tf.func.grad(outer)(x), 2 * want, np.float64)
    cg = jf.trace(x).compile()
    with pytest.raises(UnsupportedAdRuleError, match="no_grad"):
        cg(tf.default_runtime().variable(xa))
    with tf.no_grad():
        close(cg(tf.default_runtime().variable(xa)), f(x), np.float64)


def test_value_and_grad_of_jit_keeps_the_argnums_order():
    f = lambda a, b: (a * b * a).sum()  # noqa: E731
    x, y = tf.asarray(np.array([1.0, 2.0])), tf.asarray(np.array([3.0, 4.0]))
    for nums in ((1, 0), (-1, 0), (0, 1)):
        want = tf.func.grad(f, argnums=nums)(x, y)
        for _ in range(2):  # the first call traces, the second replays
            got = tf.func.grad(tf.jit(f), argnums=nums)(x, y)
            for a, b in zip(got, want):
                close(a, b, np.float64)
    v, g = tf.func.value_and_grad(tf.jit(f), argnums=(1, 0))(x, y)
    close(v, (x * y * x).sum(), np.float64)
    close(g[0], np.asarray(x) ** 2, np.float64)


def test_grad_of_jit_on_tensors_of_another_runtime_works_as_eagerly():
    rt = tf.Runtime()
    with rt.session(tf.CpuEngine(threads=1)):
        xo = tf.asarray(np.array([1.0, 2.0]))
    x = tf.asarray(np.array([3.0, 5.0]))
    f = lambda a, b: (a * b).sum()  # noqa: E731
    jf = tf.jit(f)
    for _ in range(2):
        close(tf.func.grad(jf)(x, xo), tf.func.grad(f)(x, xo), np.float64)
    g = lambda a: (a * a).sum()  # noqa: E731
    with rt.session(tf.CpuEngine(threads=1)):
        close(tf.func.grad(tf.jit(g))(x), 2 * np.asarray(x), np.float64)


def test_grad_of_jit_that_falls_back_runs_the_function_once_per_call():
    rt = tf.default_runtime()
    w = rt.variable(np.array([2.0, 3.0]))
    runs = []

    def f(x):
        runs.append(1)
        return (x * w).sum()  # a captured tensor that requires grad: runs eagerly

    jf = tf.jit(f)
    x = tf.asarray(np.array([1.0, 1.0]))
    for _ in range(3):
        close(tf.func.grad(jf)(x), np.array([2.0, 3.0]), np.float64)
    s = jf.cache_stats()
    assert len(runs) == 3  # once per call: no extra run to prepare a path that falls back
    assert (s.hits, s.misses, s.fallbacks) == (0, 0, 3)  # hits + misses + fallbacks = calls

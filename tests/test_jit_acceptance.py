"""Graph mode (issue 20), the acceptance lines not covered by ``test_jit.py`` and
``test_jit_random.py``: shape/dtype/parameter errors of random programs made invalid are raised at
trace time with the eager class and message; ``tf.jit(value_and_grad)`` on the einsum instances
and in the TFIM optimisation equals eager; the trace cache's semantics (retrace triggers,
``hits + misses + fallbacks = calls`` through a mixed sequence, entries freed with the function,
memory bounded over 10 000 signatures); safety (inputs, NumPy imports and held outputs bitwise
unchanged by 1 000 calls; threads on two engines share one trace). Oracles: eager tenferro (itself
tested against NumPy), NumPy copies of the inputs."""

from __future__ import annotations

import gc
import os
import threading
import warnings
import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tenferro as tf
from tenferro import errors as E
from test_jit_random import DTYPES, build, layout, programs

RNG = np.random.default_rng(20261202)


def arr(shape, dtype=np.float64):
    a = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype)


def calls(s: tf.TraceCacheStats) -> int:
    return s.hits + s.misses + s.fallbacks


# -- errors at trace time ---------------------------------------------------------------------

# Steps that make a program invalid by shape, dtype or a parameter, whatever the shape/dtype of
# the value they get (rank 0 included); each raises in eager mode.
INVALID = [
    ("reshape_size", lambda v: v.reshape(v.size + 1)),
    ("sum_axis", lambda v: tf.sum(v, axis=v.ndim + 1)),
    (
        "broadcast",
        lambda v: (
            v * tf.ones((2, 3)) + tf.ones((4,))
            if v.ndim == 0
            else v + tf.ones(v.shape[:-1] + (v.shape[-1] + 2,))
        ),
    ),
    ("einsum_rank", lambda v: tf.einsum("ij,jk->ik", v, v[..., None])),
    ("matmul", lambda v: v @ tf.ones((7, 5), dtype=v.dtype)),
    ("transpose_axes", lambda v: tf.transpose(v, (0, 0))),
    ("reshape_two_minus_one", lambda v: v.reshape(-1, -1)),
    ("astype_string", lambda v: v.astype("U3")),
    ("moveaxis", lambda v: tf.moveaxis(v, 0, 9)),
    ("index_rank", lambda v: v[(0,) * (v.ndim + 1)]),
    ("remainder_complex", lambda v: tf.remainder(v + 0j, v)),
]


@settings(
    derandomize=True, max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    steps=programs(),
    k=st.integers(0, len(INVALID) - 1),
    d=st.sampled_from(DTYPES),
    shape=st.sampled_from([(), (0,), (3,), (2, 3), (2, 3, 3)]),
    lay=st.integers(0, 2),
    seed=st.integers(0, 2**16),
)
def test_invalid_random_programs_raise_at_trace_time_with_the_eager_class(
    steps, k, d, shape, lay, seed
):
    rng = np.random.default_rng(seed)
    xs = [
        tf.asarray(layout(np.asarray(rng.standard_normal(shape), dtype=d), lay)) for _ in range(2)
    ]
    valid = build(steps)
    name, bad = INVALID[k]

    def p(a, b):
        return bad(valid(a, b)) * 2.0

    with pytest.raises(Exception) as eager:
        p(*xs)
    jf = tf.jit(p)
    # At trace time: tracing alone (no program is run) raises the eager class and message.
    with pytest.raises(Exception) as traced:
        jf.trace(*xs)
    assert type(traced.value) is type(eager.value), (name, eager.value, traced.value)
    assert str(traced.value) == str(eager.value), name
    with pytest.raises(type(eager.value)):
        jf(*xs)
    assert jf.cache_stats().entries == 0


# Value errors: raised by the compiled call (not at trace time), on the first and on a replayed call.
VALUE_ERRORS = [
    ("floor_divide", lambda a, b: a // b, np.array([1, 2]), np.array([1, 0])),
    ("remainder", lambda a, b: a % b, np.array([1, 2]), np.array([1, 0])),
    ("cholesky", lambda a, b: tf.linalg.cholesky(a) + b, -np.eye(2), np.ones((2, 2))),
    ("solve", lambda a, b: tf.linalg.solve(a, b), np.zeros((2, 2)), np.ones((2, 2))),
    ("inv", lambda a, b: tf.linalg.inv(a) * b, np.zeros((2, 2)), np.ones((2, 2))),
]


def _value_error_pair(k):
    name, f, a, b = VALUE_ERRORS[k]
    ok_a = np.ones_like(a) * 3 if a.dtype.kind == "i" else np.eye(2) * 2.0
    ok_b = np.ones_like(b)
    jf = tf.jit(f)
    jf.trace(tf.asarray(a), tf.asarray(b))  # tracing alone does not raise
    np.testing.assert_allclose(
        np.asarray(jf(tf.asarray(ok_a), tf.asarray(ok_b))),
        np.asarray(f(tf.asarray(ok_a), tf.asarray(ok_b))),
    )
    with pytest.raises(Exception) as eager:
        f(tf.asarray(a), tf.asarray(b))
    with pytest.raises(Exception) as first:
        jf(tf.asarray(a), tf.asarray(b))
    with pytest.raises(Exception) as again:
        jf(tf.asarray(a), tf.asarray(b))
    assert jf.cache_stats().misses == 1
    return name, eager.value, first.value, again.value


@pytest.mark.parametrize("k", range(len(VALUE_ERRORS)))
def test_value_errors_come_from_the_compiled_call_with_the_eager_class(k):
    name, eager, first, again = _value_error_pair(k)
    assert type(first) is type(eager) and type(again) is type(eager), (name, eager, first)
    assert str(first) == str(again)


@pytest.mark.parametrize("k", range(len(VALUE_ERRORS)))
def test_value_errors_come_from_the_compiled_call_with_the_eager_message(k):
    name, eager, first, _ = _value_error_pair(k)
    assert str(first) == str(eager), name


# -- einsum instances and TFIM under jit(value_and_grad) --------------------------------------


QUEEN = "gm_queen5_5_3.wcsp.json"


def _einsum_names():
    import test_einsum_instances as inst

    # gm_queen5_5_3 at its stored size is covered at dimension 2 below (same network and path);
    # the two other heavy instances carry the slow marker as in test_einsum_instances.py.
    out = []
    for f in inst.FILES:
        if f == QUEEN:
            continue
        out.append(pytest.param(f, marks=pytest.mark.slow) if f in inst.HEAVY else f)
    return out


def _check_instance_under_jit(name, subscripts, ops, path):
    import test_einsum_instances as inst

    ts = [tf.asarray(o) for o in ops]
    ct = tf.asarray(
        np.random.default_rng(1).standard_normal(tf.einsum(subscripts, *ts, optimize=path).shape)
    )

    def loss(*xs):  # a real scalar whose gradient is the einsum's VJP of a random cotangent
        return tf.sum(tf.einsum(subscripts, *xs, optimize=path) * ct)

    vg = tf.func.value_and_grad(loss, argnums=tuple(range(len(ts))))

    def f(*xs):  # the contraction itself, and the value and gradient of the loss
        return tf.einsum(subscripts, *xs, optimize=path), vg(*xs)

    out0, (v0, g0) = f(*ts)
    jf = tf.jit(f)
    out1, (v1, g1) = jf(*ts)
    s = jf.cache_stats()
    assert (s.misses, s.fallbacks) == (1, 0)  # traced, not run eagerly
    out0, out1 = np.asarray(out0), np.asarray(out1)
    assert out1.shape == out0.shape and out1.dtype == out0.dtype == np.float64
    assert inst.rel_error(out1, out0) <= 1e-13, name
    assert inst.rel_error(np.asarray(v1), np.asarray(v0)) <= 1e-13, name
    assert len(g1) == len(g0) == len(ts)
    for k, (a, b) in enumerate(zip(g1, g0)):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape == ops[k].shape and a.dtype == b.dtype
        assert inst.rel_error(a, b) <= 1e-13, (name, k)


@pytest.mark.parametrize("name", _einsum_names())
def test_einsum_instance_value_and_grad_under_jit_equal_eager(name):
    import test_einsum_instances as inst

    _check_instance_under_jit(name, *inst.load(name))


def test_gm_queen_network_value_and_grad_under_jit_equal_eager_at_dimension_2():
    """The 19th instance, ``gm_queen5_5_3`` (160 operands of shape (3, 3), 25 indices, a scalar
    output), with its stored ``opt_flops`` path and every index of dimension 2 instead of 3: the
    same program (159 pairwise contractions forward, their VJPs backward, rank-17
    intermediates), 2^17 instead of 3^17 elements in the largest intermediate. At the stored
    size the path keeps 592 M intermediate elements (4.4 GiB) that the backward pass reads; the
    eager reference keeps all of them plus its tape (> 12 GB) and the forward alone takes ~16 s,
    too much for ``make test`` on the 2-core CI machine. ``TENFERRO_FULL_QUEEN=1`` runs the
    stored size under ``tf.jit`` alone (``test_gm_queen_full_size_under_jit``)."""
    import test_einsum_instances as inst

    subscripts, ops, path = inst.load(QUEEN)
    assert len(ops) == 160 and all(o.shape == (3, 3) for o in ops)
    rng = np.random.default_rng(0)
    small = [rng.standard_normal((2, 2)) for _ in ops]
    _check_instance_under_jit(QUEEN + " (dimension 2)", subscripts, small, path)


@pytest.mark.skipif(
    not os.environ.get("TENFERRO_FULL_QUEEN"),
    reason="stored-size gm_queen5_5_3 (minutes, ~GiB): set TENFERRO_FULL_QUEEN=1",
)
def test_gm_queen_full_size_under_jit():
    """The stored-size ``gm_queen5_5_3`` under ``tf.jit(value_and_grad)`` without the eager
    reference (its tape does not fit the CI machine): the network is multilinear with each
    operand once, so ``<∂E/∂x_k, x_k> = E`` for every operand ``k`` (Euler's identity for
    functions linear in ``x_k``), and ``E`` equals ``opt_einsum`` on the same path."""
    import test_einsum_instances as inst

    oe = pytest.importorskip("opt_einsum")
    subscripts, ops, path = inst.load(QUEEN)
    ts = [tf.asarray(o) for o in ops]
    vg = tf.jit(
        tf.func.value_and_grad(
            lambda *xs: tf.einsum(subscripts, *xs, optimize=path), argnums=tuple(range(len(ts)))
        )
    )
    v, g = vg(*ts)
    v = float(np.asarray(v))
    ref = float(oe.contract(subscripts, *ops, optimize=path))
    assert abs(v - ref) <= 1e-10 * abs(ref), (v, ref)
    for k, (gk, xk) in enumerate(zip(g, ops)):
        assert abs(float(np.vdot(np.asarray(gk), xk)) - v) <= 1e-10 * abs(v), k


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_tfim_optimisation_under_jit_matches_eager(dtype):
    """``ground_state(jit=True)`` (``tf.jit(tf.func.value_and_grad)``) against the eager run of
    the same start: final energy to 1e-10 (relative), L-BFGS evaluations within 10 %."""
    from tenferro.examples import tfim

    kw = dict(sites=4, bond=4, g=1.0, tol=1e-11, seed=0, dtype=dtype, progress=False)
    eager = tfim.ground_state(**kw)
    jitted = tfim.ground_state(**kw, jit=True)
    assert eager.converged and jitted.converged
    assert abs(jitted.energy - eager.energy) <= 1e-10 * abs(eager.energy), (
        jitted.energy,
        eager.energy,
    )
    assert abs(jitted.evals - eager.evals) <= 0.1 * eager.evals, (jitted.evals, eager.evals)
    # The first evaluations (before L-BFGS trajectories can drift apart) agree closely.
    np.testing.assert_allclose(jitted.grad_norms[:5], eager.grad_norms[:5], rtol=1e-10)


# -- cache semantics --------------------------------------------------------------------------


def test_retrace_on_pytree_structure_and_grad_mode():
    n_traces = []

    def f(t):
        n_traces.append(1)
        leaves = tf.func._flatten(t)[0]
        return sum(x * float(k + 1) for k, x in enumerate(leaves))

    jf = tf.jit(f)
    x, y = tf.asarray(arr((3,))), tf.asarray(arr((3,)))
    xn, yn = np.asarray(x), np.asarray(y)
    structures = [
        ((x, y), xn + 2 * yn),
        ([x, y], xn + 2 * yn),
        ({"a": x, "b": y}, xn + 2 * yn),
        ({"a": x, "c": y}, xn + 2 * yn),  # same leaves, other keys
        ((x, (y,)), xn + 2 * yn),
        ((x, y, x), 4 * xn + 2 * yn),
    ]
    for _ in range(3):
        for t, want in structures:
            np.testing.assert_allclose(np.asarray(jf(t)), want, rtol=1e-15)
    assert len(n_traces) == len(structures) == jf.cache_stats().misses
    with tf.no_grad():  # grad mode is part of the key
        np.testing.assert_allclose(np.asarray(jf((x, y))), xn + 2 * yn, rtol=1e-15)
        jf((x, y))
    jf((x, y))
    s = jf.cache_stats()
    assert len(n_traces) == s.misses == len(structures) + 1 and s.hits == 2 * len(structures) + 2


def test_new_python_float_values_do_not_retrace():
    # graph-mode.md: Python scalars are weakly typed rank-0 inputs; a new float value never retraces.
    jf = tf.jit(lambda x, c: x * c + c)
    x = tf.asarray(arr((4,)))
    x32 = tf.asarray(arr((4,), np.float32))
    for c in (0.5, 1.5, -2.0, 3.25, 1e300, -0.0):
        got = jf(x, c)
        assert np.asarray(got).tobytes() == np.asarray(x * c + c).tobytes()
    assert jf.cache_stats().misses == 1
    for c in (0.1, 0.7):  # weak: float32 stays float32, values as eager
        got = jf(x32, c)
        assert np.asarray(got).dtype == np.float32
        assert np.asarray(got).tobytes() == np.asarray(x32 * c + c).tobytes()
    assert jf.cache_stats().misses == 2


def test_new_python_complex_values_do_not_retrace_and_ints_specialise():
    # Complex arguments are weakly typed inputs; ints stay keyed by value (docs/python-api.md:
    # they usually drive control flow).
    jf = tf.jit(lambda x, n, z: x * n + z)
    x = tf.asarray(arr((3,), np.complex128))
    for n, z in ((2, 1j), (2, 2 - 1j), (2, 0j), (3, 1j), (-7, 0j)):
        assert np.asarray(jf(x, n, z)).tobytes() == np.asarray(x * n + z).tobytes()
    assert jf.cache_stats().misses == 3


def test_hits_misses_fallbacks_add_up_to_calls_through_a_mixed_sequence():
    rt = tf.default_runtime()
    jf = tf.jit(
        lambda x, y=None, scale=1.0: x * scale + (0.0 if y is None else y.sum()),
        static_argnames=("scale",),
        max_traces=6,
    )
    a3, a4 = tf.asarray(arr((3,))), tf.asarray(arr((4,)))
    n = 0

    def call(*args, **kwargs):
        nonlocal n
        n += 1
        out = jf(*args, **kwargs)
        s = jf.cache_stats()
        assert calls(s) == n, (n, s)
        return out

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(3):
            call(a3)  # fast path: miss, hits
            call(a3, a3)  # a second positional tensor
            call(a3, y=a4)  # keyword: general path
            call(a3, scale=2.0)  # static argument
            call(np.ones(3))  # NumPy leaf
            call(rt.variable(np.ones(3)))  # tracked input: eager fallback
            with tf.no_grad():
                call(a3)  # grad mode: a new signature
            tf.func.grad(lambda t: call(t).sum())(a3)  # under tf.func: eager fallback
            call(a4, scale=3.0)  # past max_traces: warning, eager fallback
            call(tf.asarray(arr((5,))))  # past the limit again: no second warning
        for k in range(5):
            call(a3, scale=float(k + 10))
    s = jf.cache_stats()
    assert s.misses == 6 and s.fallbacks > 0 and s.hits > 0
    assert sum(issubclass(x.category, E.RecompileWarning) for x in w) == 1
    # Past the limit, results still equal eager.
    np.testing.assert_array_equal(np.asarray(call(a4, scale=7.0)), np.asarray(a4) * 7.0)
    # A call whose trace raises is a call too.
    with pytest.raises(E.ShapeError):
        tf.jit(lambda x: x @ x)(tf.asarray(arr((2, 3))))
    jg = tf.jit(lambda x: x @ x)
    with pytest.raises(E.ShapeError):
        jg(tf.asarray(arr((2, 3))))
    jg(tf.asarray(arr((2, 2))))
    assert calls(jg.cache_stats()) == 2, jg.cache_stats()


def test_deleting_the_jitted_function_frees_its_entries():
    captured = tf.asarray(arr((1000,)))

    def f(x):
        return x * captured  # noqa: F821

    jf = tf.jit(f)
    x = tf.asarray(arr((1000,)))
    want = np.asarray(x) * np.asarray(captured)
    np.testing.assert_array_equal(np.asarray(jf(x)), want)
    np.testing.assert_array_equal(np.asarray(jf(x)), want)
    (entry,) = jf._cache.values()
    assert len(entry.captured) == 1 and entry.captured[0] is captured
    refs = [weakref.ref(entry.compiled), weakref.ref(captured), weakref.ref(jf)]
    del entry, f, jf, captured
    gc.collect()
    assert [r() is None for r in refs] == [True, True, True]


def test_deleting_a_jitted_global_capture_and_clearing_frees_it():
    global _BIG
    _BIG = tf.asarray(arr((100,)))
    jf = tf.jit(lambda x: x + _BIG)
    jf(tf.asarray(arr((100,))))
    graph = weakref.ref(next(iter(jf._cache.values())).compiled)
    const = weakref.ref(_BIG)
    _BIG = tf.asarray(arr((100,)))  # rebinding: the next call retraces
    jf(tf.asarray(arr((100,))))
    jf.clear_cache()
    gc.collect()
    assert graph() is None and const() is None
    assert jf.cache_stats().entries == 0 and jf.cache_stats().clears == 1


# Run in a fresh interpreter (RSS of this process mixes in what earlier tests left in the
# allocators): VmRSS of /proc/self/status (the resident set now, not the peak) before and after
# 10 000 traces of distinct shapes, every cache's statistics along the way, printed as JSON.
_TEN_THOUSAND = r"""
import gc, json, sys
import numpy as np
import tenferro as tf
import tenferro._jit as jit_module

def rss():
    with open("/proc/self/status") as fh:
        return next(int(l.split()[1]) * 1024 for l in fh if l.startswith("VmRSS:"))

n = int(sys.argv[1])
rt, engine = tf.Runtime(), tf.CpuEngine(threads=1)
engine.set_buffer_pool_limit(16 << 20)
jf = tf.jit(lambda x: tf.sin(x) * 2.0 + x.sum(), max_traces=None)
worst = dict(entries=0, retained=0, pool=0, plans=0)
bad = []
with rt.session(engine):
    for k in range(300):  # warm-up: allocator arenas, the plan cache and the pool fill up first
        jf(rt.constant(np.full(k + 1, 0.5)))
    gc.collect()
    rss0 = rss()
    for k in range(n):
        size = 301 + k
        out = jf(rt.constant(np.full(size, 0.5)))
        if k % 500 == 0 or k == n - 1:
            got = np.asarray(out)
            if got.shape != (size,) or not np.allclose(got, np.sin(0.5) * 2.0 + 0.5 * size, rtol=1e-12):
                bad.append(size)
            s, pool, plans = jf.cache_stats(), engine.buffer_pool_stats(), engine.cache_stats()
            worst["entries"] = max(worst["entries"], s.entries)
            worst["retained"] = max(worst["retained"], s.retained_bytes)
            worst["pool"] = max(worst["pool"], pool.retained_bytes)
            worst["plans"] = max(worst["plans"], plans.entries)
    gc.collect()
    rss1 = rss()
    # Zero-size inputs of distinct shapes: no data buffers, so the resident set shows what the
    # traces themselves keep (the growth above is mostly the allocator's, for buffers of ever
    # new sizes; measured 45 MiB at 10 000 and 71 MiB at 20 000 traces, 0.15 MiB at 40 000
    # zero-size traces).
    jz = tf.jit(lambda x: tf.sin(x) * 2.0 + x.sum(), max_traces=None)
    for k in range(300):
        jz(rt.constant(np.zeros((0, k + 1))))
    gc.collect()
    rss2 = rss()
    for k in range(3000):
        jz(rt.constant(np.zeros((0, 301 + k))))
    gc.collect()
    zero_growth = rss() - rss2
s, pool, plans = jf.cache_stats(), engine.buffer_pool_stats(), engine.cache_stats()
print(json.dumps(dict(
    stats=s._asdict(), plans=dict(entries=plans.entries, evictions=plans.evictions),
    pool_capacity=pool.capacity_bytes, worst=worst, bad=bad, growth=rss1 - rss0, rss0=rss0,
    zero_growth=zero_growth, zero_evictions=jz.cache_stats().evictions,
    max_entries=jit_module.MAX_ENTRIES, max_retained=jit_module.MAX_RETAINED_BYTES,
)))
"""


def test_ten_thousand_distinct_shapes_stay_within_the_cache_limits():
    """``max_traces=None``: every cache stays within its limits over 10 000 signatures (LRU
    evictions in the trace cache and the engine's plan cache), and the resident set grows by
    less than 100 MiB. The engine's buffer pool keeps up to its capacity (1 GiB by default) of
    buffers of the sizes it saw, in eager mode as well: the run uses an engine whose pool is
    limited to 16 MiB, so that RSS measures the trace caches."""
    import json
    import subprocess
    import sys

    n = 10_000
    run = subprocess.run(
        [sys.executable, "-c", _TEN_THOUSAND, str(n)], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr
    r = json.loads(run.stdout.strip().splitlines()[-1])
    s = r["stats"]
    assert r["bad"] == []
    assert s["misses"] == n + 300 and s["hits"] == s["fallbacks"] == 0
    assert s["entries"] == r["max_entries"] and s["evictions"] == n + 300 - r["max_entries"] > 0
    assert r["worst"]["entries"] <= r["max_entries"]
    assert r["worst"]["retained"] <= r["max_retained"]
    assert r["worst"]["pool"] <= r["pool_capacity"] == 16 << 20
    # Prepared plans leave the engine's plan cache (PlanCache::new(256)) with their evicted traces.
    assert r["worst"]["plans"] <= 256
    growth = r["growth"]
    print(f"RSS {r['rss0'] / 2**20:.0f} MiB, growth {growth / 2**20:.1f} MiB, stats {s}")
    print(f"zero-size growth {r['zero_growth'] / 2**20:.2f} MiB")
    assert growth < 100 << 20, f"RSS grew by {growth / 2**20:.1f} MiB over {n} traces"
    # No per-trace leak: 3 000 traces of zero-size inputs (2 952 of them evicted) keep < 2 MiB.
    assert r["zero_evictions"] == 3300 - r["max_entries"]
    assert r["zero_growth"] < 2 << 20, r["zero_growth"]


# -- safety -----------------------------------------------------------------------------------


def test_inputs_imports_and_held_outputs_are_bitwise_unchanged_after_1000_calls():
    a = arr((4, 3))
    f_order = np.asfortranarray(arr((4, 3)))
    big = arr((8, 3))
    strided = big[::2]
    plain = arr((4, 3))
    originals = [a.copy(), f_order.copy(), big.copy(), plain.copy()]
    xa = tf.asarray(a, copy=False)
    xf = tf.asarray(f_order, copy=False)
    xs = tf.asarray(strided, copy=False)
    assert all(np.shares_memory(np.asarray(t), m) for t, m in ((xa, a), (xf, f_order), (xs, big)))
    xp = tf.asarray(plain)  # a copy
    assert not np.shares_memory(np.asarray(xp), plain)

    def f(x, y, z, w):
        return {
            "plus0": x + 0.0,
            "times1": y * 1.0,
            "set": x.at[0].set(z[0]),
            "add_at": y.at[1:].add(1.0),
            "T": x.T,
            "reshape": y.reshape(3, 4),
            "rev": z[::-1],
            "same": w,
            "mixed": tf.exp(x) * 0.0 + y - z,
        }

    jf = tf.jit(f)
    args = (xa, xf, xs, xp)
    want = {k: np.asarray(v).copy() for k, v in f(*args).items()}
    first = jf(*args)
    held = {k: np.asarray(v) for k, v in first.items()}  # views the user holds
    held_bytes = {k: v.tobytes() for k, v in held.items()}
    for k in want:
        assert held[k].tobytes() == want[k].tobytes(), k
    other = tuple(tf.asarray(arr(t.shape)) for t in args)
    for i in range(1000):
        out = jf(*(args if i % 2 else other))
    for k in want:
        assert np.asarray(out[k]).tobytes() == want[k].tobytes(), k
    assert a.tobytes() == originals[0].tobytes()
    assert f_order.tobytes() == originals[1].tobytes()
    assert big.tobytes() == originals[2].tobytes()
    assert plain.tobytes() == originals[3].tobytes()
    for t, m in zip(args, (originals[0], originals[1], originals[2][::2], originals[3])):
        assert np.asarray(t).tobytes() == np.ascontiguousarray(m).tobytes()
    for k in held:  # outputs of the first call, still held: not overwritten by later calls
        assert held[k].tobytes() == held_bytes[k], k
        assert np.asarray(first[k]).tobytes() == held_bytes[k], k
    # graph-mode.md keys the memory-order class too (the F-ordered and strided imports against
    # the C-ordered copies): one or two signatures.
    assert jf.cache_stats().misses in (1, 2)
    want_other = f(*other)
    got_other = jf(*other)
    for k in want_other:
        assert np.asarray(got_other[k]).tobytes() == np.asarray(want_other[k]).tobytes(), k


def test_writes_to_an_imported_array_reach_the_next_call():
    # copy=False shares the NumPy memory: the compiled call reads it at call time.
    a = np.arange(6.0)
    x = tf.asarray(a, copy=False)
    jf = tf.jit(lambda t: t * 2.0)
    np.testing.assert_array_equal(np.asarray(jf(x)), np.arange(6.0) * 2.0)
    a[0] = 10.0
    np.testing.assert_array_equal(np.asarray(jf(x)), np.asarray(x) * 2.0)
    assert float(np.asarray(jf(x))[0]) == 20.0


def test_two_threads_on_two_engines_share_one_trace_and_get_equal_results():
    rt = tf.Runtime()
    engines = [tf.CpuEngine(threads=1), tf.CpuEngine(threads=1)]
    jf = tf.jit(lambda x, m: tf.tanh(x @ m) * 2.0 + x.sum())
    x, m = rt.constant(arr((16, 8))), rt.constant(arr((8, 8)))
    with rt.session(engines[0]):
        want = np.asarray(tf.tanh(x @ m) * 2.0 + x.sum())
    with rt.session(engines[1]):
        first = np.asarray(jf(x, m))  # traced here; the threads replay
    np.testing.assert_allclose(first, want, rtol=1e-13, atol=1e-13)
    outs: list[list[np.ndarray]] = [[], [], [], []]
    errs: list[BaseException] = []
    start = threading.Barrier(4)

    def work(i: int) -> None:
        try:
            start.wait()
            for _ in range(100):  # threads 0, 2 on one engine, 1, 3 on the other
                with rt.session(engines[i % 2]):
                    outs[i].append(np.asarray(jf(x, m)))
        except BaseException as e:  # pragma: no cover - reported below
            errs.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errs, errs
    assert all(len(o) == 100 for o in outs)
    assert all(o.tobytes() == first.tobytes() for per in outs for o in per)
    s = jf.cache_stats()
    assert s.misses == 1 and s.hits == 400 and s.fallbacks == 0


def test_concurrent_first_calls_on_two_engines_trace_once():
    rt = tf.Runtime()
    engines = [tf.CpuEngine(threads=1), tf.CpuEngine(threads=1)]
    x = rt.constant(arr((16, 16)) * 0.1)

    def f(a):
        for _ in range(300):  # a trace long enough for the threads to overlap
            a = tf.tanh(a @ a) * 0.5
        return a

    for _ in range(3):
        jf = tf.jit(f)
        start = threading.Barrier(4)
        res: list[np.ndarray | None] = [None] * 4

        def work(i: int) -> None:
            start.wait()
            with rt.session(engines[i % 2]):
                res[i] = np.asarray(jf(x))

        ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert all(r is not None and r.tobytes() == res[0].tobytes() for r in res)
        assert jf.cache_stats().misses == 1, jf.cache_stats()

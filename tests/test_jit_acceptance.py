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
import threading
import warnings
import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tenferro as tf
from tenferro import _jit
from tenferro import errors as E
from test_jit_random import DTYPES, build, check_equal, layout, programs

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
    ("broadcast", lambda v: v + tf.ones((5, 7) if v.ndim == 0 else v.shape[:-1] + (v.shape[-1] + 2,))),
    ("einsum_rank", lambda v: tf.einsum("ij,jk->ik", v, v[..., None])),
    ("matmul", lambda v: v @ tf.ones((7, 5), dtype=v.dtype)),
    ("transpose_axes", lambda v: tf.transpose(v, (0, 0))),
    ("reshape_two_minus_one", lambda v: v.reshape(-1, -1)),
    ("astype_string", lambda v: v.astype("U3")),
    ("moveaxis", lambda v: tf.moveaxis(v, 0, 9)),
    ("index_rank", lambda v: v[(0,) * (v.ndim + 1)]),
    ("remainder_complex", lambda v: tf.remainder(v + 0j, v)),
]


@settings(derandomize=True, max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=programs(), k=st.integers(0, len(INVALID) - 1), d=st.sampled_from(DTYPES),
       shape=st.sampled_from([(), (0,), (3,), (2, 3), (2, 3, 3)]), lay=st.integers(0, 2),
       seed=st.integers(0, 2**16))
def test_invalid_random_programs_raise_at_trace_time_with_the_eager_class(steps, k, d, shape, lay, seed):
    rng = np.random.default_rng(seed)
    xs = [tf.asarray(layout(np.asarray(rng.standard_normal(shape), dtype=d), lay)) for _ in range(2)]
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


# -- einsum instances and TFIM under jit(value_and_grad) --------------------------------------


def _einsum_names():
    import test_einsum_instances as inst

    # gm_queen5_5_3's eager backward keeps > 12 GB of intermediates (its forward alone takes
    # 16 s): left out; the two other heavy instances carry the slow marker as in
    # test_einsum_instances.py.
    out = []
    for f in inst.FILES:
        if f == "gm_queen5_5_3.wcsp.json":
            continue
        out.append(pytest.param(f, marks=pytest.mark.slow) if f in inst.HEAVY else f)
    return out


@pytest.mark.parametrize("name", _einsum_names())
def test_einsum_instance_value_and_grad_under_jit_equal_eager(name):
    import test_einsum_instances as inst

    subscripts, ops, path = inst.load(name)
    ts = [tf.asarray(o) for o in ops]
    ct = tf.asarray(np.random.default_rng(1).standard_normal(tf.einsum(subscripts, *ts, optimize=path).shape))

    def loss(*xs):  # a real scalar whose gradient is the einsum's VJP of a random cotangent
        return tf.sum(tf.einsum(subscripts, *xs, optimize=path) * ct)

    vg = tf.func.value_and_grad(loss, argnums=tuple(range(len(ts))))
    v0, g0 = vg(*ts)
    jvg = tf.jit(vg)
    v1, g1 = jvg(*ts)
    s = jvg.cache_stats()
    assert (s.misses, s.fallbacks) == (1, 0)  # traced, not run eagerly
    assert inst.rel_error(np.asarray(v1), np.asarray(v0)) <= 1e-13, name
    assert len(g1) == len(g0) == len(ts)
    for k, (a, b) in enumerate(zip(g1, g0)):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape == ops[k].shape and a.dtype == b.dtype
        assert inst.rel_error(a, b) <= 1e-13, (name, k)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_tfim_optimisation_under_jit_matches_eager(dtype):
    """``ground_state(jit=True)`` (``tf.jit(tf.func.value_and_grad)``) against the eager run of
    the same start: final energy to 1e-10 (relative), L-BFGS evaluations within 10 %."""
    from tenferro.examples import tfim

    kw = dict(sites=4, bond=4, g=1.0, tol=1e-11, seed=0, dtype=dtype, progress=False)
    eager = tfim.ground_state(**kw)
    jitted = tfim.ground_state(**kw, jit=True)
    assert eager.converged and jitted.converged
    assert abs(jitted.energy - eager.energy) <= 1e-10 * abs(eager.energy), (jitted.energy, eager.energy)
    assert abs(jitted.evals - eager.evals) <= 0.1 * eager.evals, (jitted.evals, eager.evals)
    # The first evaluations (before L-BFGS trajectories can drift apart) agree closely.
    np.testing.assert_allclose(jitted.grad_norms[:5], eager.grad_norms[:5], rtol=1e-10)

"""Differential tests of graph mode (issue 20, first acceptance line): random programs of 1–30
primitives through the NumPy-named functions, on inputs of every float/complex dtype, rank 0 and
zero-size shapes, C/F-ordered and strided layouts; ``tf.jit(p)`` equals eager ``p`` bit for bit
without contractions or reductions and to 1e-13 (f64/c128) / 1e-5 (f32/c64) with them, with the
same NaN/inf pattern — with all passes on and with each pass off; ``tf.jit(value_and_grad(p))``
and ``tf.jit(hessian(p))`` equal eager on
the same programs, real and complex (a real loss: ``sum |y|²``). Derandomised (hypothesis ``derandomize=True``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tenferro as tf

PASSES = ("dce", "cse", "layout", "fold_transpose", "fold_conj", "final_dce")

# (name, arity, reduces): elementwise ops keep the shape; reductions/contractions keep it too
# (reduce then broadcast back, or a square matmul on the last axis pair via einsum).
UNARY = [
    ("sin", tf.sin),
    ("cos", tf.cos),
    ("tanh", tf.tanh),
    ("exp_small", lambda x: tf.exp(x * 0.1)),
    ("neg", lambda x: -x),
    ("conj", tf.conj),
    ("abs_cast", lambda x: x * 0.5 + tf.abs(x) * 0.25),
    ("square", lambda x: x * x),
    ("scale", lambda x: x * 1.5 - 0.25),
    ("T2", lambda x: x.T.T),
    ("rev", lambda x: x[::-1][::-1] if x.ndim else x),
]
BINARY = [
    ("add", lambda x, y: x + y),
    ("sub", lambda x, y: x - y),
    ("mul", lambda x, y: x * y),
    ("where", lambda x, y: tf.where(tf.abs(x) > tf.abs(y), x, y)),
]
REDUCING = [
    ("sum_back", lambda x: x * 0.0 + tf.sum(x)),
    ("mean_last", lambda x: x - tf.mean(x, axis=-1, keepdims=True) if x.ndim else x),
    (
        "einsum_sq",
        lambda x: (
            tf.einsum("...ij,...jk->...ik", x, x) * 0.1
            if x.ndim >= 2 and x.shape[-1] == x.shape[-2]
            else x
        ),
    ),
]

DTYPES = [np.float64, np.float32, np.complex128, np.complex64]
SHAPES = [(), (0,), (3,), (2, 2), (3, 3), (0, 3), (2, 3, 3)]


@st.composite
def programs(draw):
    steps = draw(
        st.lists(
            st.tuples(st.integers(0, 2), st.integers(0, 100), st.integers(0, 100)),
            min_size=1,
            max_size=30,
        )
    )
    return steps


def build(steps, n_inputs=2):
    def p(*xs):
        vals = list(xs)
        for kind, a, b in steps:
            if kind == 0:
                name, f = UNARY[a % len(UNARY)]
                vals.append(f(vals[b % len(vals)]))
            elif kind == 1:
                name, f = BINARY[a % len(BINARY)]
                vals.append(f(vals[b % len(vals)], vals[(a + b) % len(vals)]))
            else:
                name, f = REDUCING[a % len(REDUCING)]
                vals.append(f(vals[b % len(vals)]))
            vals = vals[-4:] if len(vals) > 6 else vals
        return vals[-1]

    return p


def layout(a: np.ndarray, which: int) -> np.ndarray:
    if which == 1 and a.ndim >= 2:
        return np.asfortranarray(a)
    if which == 2 and a.ndim >= 1:
        big = np.concatenate([a, a], axis=0)
        return big[::2] if big.shape[0] else a
    return a


def check_equal(got, want, exact, dtype):
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape
    assert np.array_equal(np.isnan(g), np.isnan(w))
    assert np.array_equal(np.isinf(g), np.isinf(w))
    if exact:
        assert np.array_equal(g, w, equal_nan=True)
    else:
        tol = 1e-13 if np.dtype(dtype) in (np.float64, np.complex128) else 1e-5
        fin = np.isfinite(w)
        scale = max(1.0, float(np.max(np.abs(w[fin]), initial=0.0)))
        assert np.all(np.abs(g[fin] - w[fin]) <= tol * scale)


SETTINGS = settings(
    derandomize=True, max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@SETTINGS
@given(
    steps=programs(),
    d=st.sampled_from(DTYPES),
    shape=st.sampled_from(SHAPES),
    lay=st.integers(0, 2),
    seed=st.integers(0, 2**16),
)
def test_random_programs_equal_eager(steps, d, shape, lay, seed):
    rng = np.random.default_rng(seed)

    def make():
        a = rng.standard_normal(shape) + (
            1j * rng.standard_normal(shape) if np.dtype(d).kind == "c" else 0
        )
        return tf.asarray(layout(np.asarray(a, dtype=d), lay))

    xs = [make(), make()]
    p = build(steps)
    try:
        want = p(*xs)
    except Exception as e:  # an eager error must be the traced error too
        with pytest.raises(type(e)):
            tf.jit(p)(*xs)
        return
    exact = not any(k == 2 for k, _, _ in steps)
    jf = tf.jit(p)
    check_equal(jf(*xs), want, exact, d)
    traced = jf.trace(*xs)
    for off in PASSES:
        check_equal(traced.compile(**{off: False})(*xs), want, exact and off != "fold_transpose", d)


def real_loss(p):
    """A real scalar loss of the program's output (complex: ``sum |y|²``, as ``autodiff.md``'s
    Hermitian convention differentiates real losses of complex values)."""

    def loss(a, b):
        y = p(a, b)
        return tf.sum(tf.real(tf.conj(y) * y)) if y.dtype.kind == "c" else tf.sum(y * y)

    return loss


def tolerance_dtype(d):
    return np.float64 if np.dtype(d) in (np.float64, np.complex128) else np.float32


@settings(
    derandomize=True, max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    steps=programs(),
    d=st.sampled_from(DTYPES),
    shape=st.sampled_from([(), (3,), (2, 2), (3, 3)]),
    lay=st.integers(0, 2),
    seed=st.integers(0, 2**16),
)
def test_random_value_and_grad_under_jit_equal_eager(steps, d, shape, lay, seed):
    rng = np.random.default_rng(seed)

    def make():
        a = rng.standard_normal(shape) + (
            1j * rng.standard_normal(shape) if np.dtype(d).kind == "c" else 0
        )
        return tf.asarray(layout(np.asarray(a, dtype=d), lay))

    xs = [make(), make()]
    vg = tf.func.value_and_grad(real_loss(build(steps)), argnums=(0, 1))
    v0, g0 = vg(*xs)
    jvg = tf.jit(vg)
    v1, g1 = jvg(*xs)
    assert np.asarray(v1).dtype == np.asarray(v0).dtype and np.asarray(v0).dtype.kind == "f"
    check_equal(v1, v0, False, tolerance_dtype(d))
    for a, b in zip(g1, g0):
        check_equal(a, b, False, tolerance_dtype(d))
    assert (jvg.cache_stats().misses, jvg.cache_stats().fallbacks) == (1, 0)


@settings(
    derandomize=True, max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    steps=programs(),
    d=st.sampled_from(DTYPES),
    shape=st.sampled_from([(), (3,), (2, 2)]),
    seed=st.integers(0, 2**16),
)
def test_random_hessian_under_jit_equal_eager(steps, d, shape, seed):
    """``tf.jit(hessian(loss))`` equals eager ``hessian(loss)``; complex programs are
    differentiated through the real and imaginary parts of their first input (``hessian`` of a
    real loss of real arguments ``re``, ``im``; the complex input is ``re + 1j * im``)."""
    rng = np.random.default_rng(seed)
    real = np.float64 if np.dtype(d) in (np.float64, np.complex128) else np.float32
    loss = real_loss(build(steps))
    if np.dtype(d).kind == "c":
        b = tf.asarray((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(d))
        args = [tf.asarray(rng.standard_normal(shape).astype(real)) for _ in range(2)] + [b]
        f = lambda re, im, b: loss(re + 1j * im, b)  # noqa: E731
        h = tf.func.hessian(f, argnums=(0, 1))
    else:
        args = [tf.asarray(rng.standard_normal(shape).astype(d)) for _ in range(2)]
        h = tf.func.hessian(loss, argnums=0)
    want = h(*args)
    jh = tf.jit(h)
    got = jh(*args)
    assert (jh.cache_stats().misses, jh.cache_stats().fallbacks) == (1, 0)
    flat_w, flat_g = tf.func._flatten(want)[0], tf.func._flatten(got)[0]
    assert len(flat_w) == len(flat_g) and len(flat_w) in (1, 4)
    for a, b in zip(flat_g, flat_w):
        assert np.asarray(b).shape == shape + shape
        check_equal(a, b, False, real)


# -- programs drawn from the catalog itself, every dtype ---------------------------------------
#
# The programs above go through the NumPy-named functions on float and complex inputs. These draw
# their primitives from ``tf.prim.CATALOG`` (every implemented unary and binary elementwise
# primitive and every reduction, called as ``tf.prim.<name>``), on inputs of every dtype of the
# catalog (bool and the integers included). A primitive that does not take the current dtype
# raises in eager mode, and then the traced call must raise the same class.

CATALOG_DTYPES = [
    np.float64,
    np.float32,
    np.complex128,
    np.complex64,
    np.int64,
    np.int32,
    np.bool_,
]
_ROWS = [r for r in tf.prim.CATALOG if r.implemented]
CAT_UNARY = sorted((r.name, r.dtypes) for r in _ROWS if r.family == "unary")
CAT_BINARY = sorted((r.name, r.dtypes) for r in _ROWS if r.family == "binary")
CAT_REDUCE = sorted((r.name, r.dtypes) for r in _ROWS if r.family == "reduction")
DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")


def _pick(rows, k, dtype):
    """The ``k``-th (cyclically) primitive of ``rows`` that takes ``dtype`` (else any row: the
    program then raises, eagerly and traced alike)."""
    ok = [name for name, dtypes in rows if dtype in dtypes] or [name for name, _ in rows]
    return ok[k % len(ok)]


def catalog_value(rng, d, shape):
    d = np.dtype(d)
    if d.kind == "b":
        return rng.integers(0, 2, shape).astype(d)
    if d.kind == "i":
        return rng.integers(-6, 7, shape).astype(d)
    a = rng.standard_normal(shape) * 2
    if d.kind == "c":
        a = a + 1j * rng.standard_normal(shape) * 2
    return np.asarray(a, dtype=d)


def build_catalog(steps):
    """Steps ``(family, op, operand, operand)``: a primitive of the family that takes the
    operand's dtype, on the operand (and a second one of the same dtype, else itself);
    reductions over all axes are broadcast back to the operand's shape."""

    def p(*xs):
        vals = list(xs)
        for kind, a, b, c in steps:
            x = vals[b % len(vals)]
            if kind == 0:
                vals.append(getattr(tf.prim, _pick(CAT_UNARY, a, x.dtype))(x))
            elif kind == 1:
                same = [v for v in vals if v.dtype == x.dtype]
                y = same[c % len(same)]
                name = _pick(CAT_BINARY, a, x.dtype)
                f = getattr(tf.prim, name)
                vals.append(
                    f(x, y, DIRECTIONS[c % len(DIRECTIONS)]) if name == "compare" else f(x, y)
                )
            else:
                r = getattr(tf.prim, _pick(CAT_REDUCE, a, x.dtype))(x, tuple(range(x.ndim)))
                vals.append(tf.prim.broadcast_in_dim(r, x.shape, ()))
            vals = vals[-4:] if len(vals) > 6 else vals
        return vals[-1]

    return p


@settings(
    derandomize=True, max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    steps=st.lists(
        st.tuples(st.integers(0, 2), st.integers(0, 200), st.integers(0, 100), st.integers(0, 100)),
        min_size=1,
        max_size=30,
    ),
    d=st.sampled_from(CATALOG_DTYPES),
    shape=st.sampled_from([(), (0,), (3,), (2, 3), (0, 2)]),
    lay=st.integers(0, 2),
    seed=st.integers(0, 2**16),
)
def test_random_catalog_programs_of_every_dtype_equal_eager(steps, d, shape, lay, seed):
    rng = np.random.default_rng(seed)
    xs = [tf.asarray(layout(catalog_value(rng, d, shape), lay)) for _ in range(2)]
    p = build_catalog(steps)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = p(*xs)
        except Exception as e:  # an eager error must be the traced error too
            with pytest.raises(type(e)):
                tf.jit(p)(*xs)
            return
        exact = not any(k == 2 for k, *_ in steps)
        jf = tf.jit(p)
        got = jf(*xs)
    g, w = np.asarray(got), np.asarray(want)
    if w.dtype.kind in "biu" or exact:
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.tobytes() == w.tobytes()  # bit for bit, NaN payloads and signed zeros too
    else:
        check_equal(got, want, False, w.dtype)
    assert (jf.cache_stats().misses, jf.cache_stats().fallbacks) == (1, 0)

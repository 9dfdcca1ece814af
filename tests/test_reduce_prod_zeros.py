"""``reduce_prod``'s derivatives at inputs with zeros (issue 19, item 4).

The rule reads no tensor values: the partials ``∂ prod / ∂ x_i`` (the product of the other
reduced elements) are exclusive prefix · suffix products from a pairwise product tree, so the
same primitives run for every input and the Hessian comes from differentiating the rule. The
oracles are the analytic formulas (products of the other elements, evaluated by NumPy) and
central finite differences (``tenferro.testing.check_grads``), under the Hermitian convention of
``autodiff.md``: the VJP is the adjoint under ``<a, b> = Re Σ conj(a)·b``, so for the
holomorphic ``prod`` the cotangent of ``x_i`` is ``ct · conj(∂ prod / ∂ x_i)``.
"""

from __future__ import annotations

import gc
import itertools

import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import check_grads

RNG = np.random.default_rng(19)

# (shape, reduced axes): one axis, the middle axis, several axes, all axes, unordered axes.
CASES = [
    ((6,), (0,)),
    ((3, 5, 2), (1,)),
    ((4, 3, 5), (0, 2)),
    ((2, 3, 4), (0, 1, 2)),
    ((3, 2, 4), (2, 0)),
    ((7, 3), (0,)),
]


def _values(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    a = RNG.uniform(0.5, 1.5, size=shape) * RNG.choice([-1.0, 1.0], size=shape)
    if dtype == "complex128":
        a = a + 1j * RNG.uniform(-1.0, 1.0, size=shape)
    return a.astype(dtype)


def _with_zeros(
    shape: tuple[int, ...], axes: tuple[int, ...], zeros: int, dtype: str
) -> np.ndarray:
    """Random values with exactly ``zeros`` zeros in every reduced group (at random places)."""
    x = _values(shape, dtype)
    kept = [a for a in range(len(shape)) if a not in axes]
    for idx in itertools.product(*(range(shape[a]) for a in kept)):
        group = [slice(None)] * len(shape)
        for a, i in zip(kept, idx):
            group[a] = i
        view = x[tuple(group)]  # the reduced axes, in increasing order
        flat_places = RNG.choice(view.size, size=zeros, replace=False)
        view[np.unravel_index(flat_places, view.shape)] = 0
    return x


def _groups(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[np.ndarray, list[int]]:
    """Output index of each input element (flat, C order) and the kept axes."""
    kept = [a for a in range(len(shape)) if a not in axes]
    grid = np.indices(shape)
    out_shape = [shape[a] for a in kept]
    if not kept:
        return np.zeros(int(np.prod(shape)), dtype=int), kept
    return np.ravel_multi_index([grid[a].ravel() for a in kept], out_shape), kept


def _analytic(x: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Flat partials ``P_i`` and Hessian ``H_ij`` of ``prod(x, axes)`` (each output's own)."""
    flat = x.ravel()
    group, _ = _groups(x.shape, axes)
    n = flat.size
    partials = np.empty(n, dtype=x.dtype)
    hess = np.zeros((n, n), dtype=x.dtype)
    for i in range(n):
        same = group == group[i]
        partials[i] = np.prod(flat[same & (np.arange(n) != i)])
        for j in np.flatnonzero(same):
            if j != i:
                hess[i, j] = np.prod(flat[same & (np.arange(n) != i) & (np.arange(n) != j)])
    return partials, hess


def _assert_exact_close(got: np.ndarray, want: np.ndarray) -> None:
    """Equal to 1e-12 relative, and exactly zero precisely where the analytic value is."""
    got, want = np.asarray(got).ravel(), np.asarray(want).ravel()
    assert got.shape == want.shape
    np.testing.assert_array_equal(got == 0, want == 0)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("zeros", [0, 1, 2, 3])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_first_and_second_order_match_the_products_of_the_others(
    case: int, zeros: int, dtype: str
) -> None:
    shape, axes = CASES[case]
    x = _with_zeros(shape, axes, zeros, dtype)
    partials, hess = _analytic(x, axes)
    group, _ = _groups(shape, axes)
    rt = tf.Runtime()
    v = rt.variable(x)
    y = tf.prim.reduce_prod(v, axes)
    np.testing.assert_allclose(np.asarray(y), np.prod(x, axis=axes), rtol=1e-12)
    ct = _values(y.shape, dtype)
    t = _values(shape, dtype)

    # VJP: ct (broadcast back) · conj(P).
    g = rt.vjp(y, v, rt.constant(ct))
    want_g = ct.ravel()[group] * np.conj(partials)
    _assert_exact_close(np.asarray(g), want_g)

    # JVP: Σ over each group of t · P.
    jv = rt.jvp(y, v, rt.constant(t))
    want_jv = np.zeros(max(y.size, 1), dtype=x.dtype)
    np.add.at(want_jv, group, t.ravel() * partials)
    np.testing.assert_allclose(np.asarray(jv).ravel(), want_jv[: y.size], rtol=1e-12, atol=1e-14)

    # Second order, reverse over reverse: the VJP of g = c · conj(P(x)) at u is
    # conj(Σ_i u_i · conj(c_i) · H_ij) (adjoint of an antilinear map; real: Σ_i u_i c_i H_ij).
    u = _values(shape, dtype)
    h = rt.vjp(g, v, rt.constant(u))
    c = ct.ravel()[group]
    want_h = np.conj((u.ravel() * np.conj(c)) @ hess)
    _assert_exact_close(np.asarray(h), want_h)


@pytest.mark.parametrize("zeros", [0, 1, 2, 3])
def test_real_hessian_of_full_product_is_exact(zeros: int) -> None:
    x = _with_zeros((5,), (0,), zeros, "float64")
    _, hess = _analytic(x, (0,))
    h = np.asarray(tf.func.hessian(lambda t: tf.prim.reduce_prod(t))(x))
    np.testing.assert_array_equal(h == 0, hess == 0)
    np.testing.assert_allclose(h, hess, rtol=1e-12, atol=0)
    g = np.asarray(tf.func.grad(lambda t: tf.prim.reduce_prod(t))(x))
    _assert_exact_close(g, _analytic(x, (0,))[0])


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("zeros", [0, 1, 2, 3])
@pytest.mark.parametrize("case", [1, 2, 3, 4])
def test_derivatives_match_finite_differences_at_zeros(case: int, zeros: int, dtype: str) -> None:
    shape, axes = CASES[case]
    x = _with_zeros(shape, axes, zeros, dtype)
    check_grads(lambda t: tf.prim.reduce_prod(t, axes), [x], order=2)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize(
    ("shape", "axes"),
    [((3, 0, 2), (1,)), ((3, 0, 2), (0,)), ((0, 4), (0, 1)), ((3, 0, 2), (0, 2)), ((2, 3), ())],
)
def test_zero_size_and_empty_axes(
    shape: tuple[int, ...], axes: tuple[int, ...], dtype: str
) -> None:
    x = _values(shape, dtype)
    rt = tf.Runtime()
    v = rt.variable(x)
    y = tf.prim.reduce_prod(v, axes)
    want_y = np.prod(x, axis=axes) if axes else x
    assert y.shape == want_y.shape
    np.testing.assert_allclose(np.asarray(y), want_y, rtol=1e-12)
    ct = _values(y.shape, dtype)
    g = np.asarray(rt.vjp(y, v, rt.constant(ct)))
    assert g.shape == shape and g.dtype == np.dtype(dtype)
    if not axes:
        np.testing.assert_array_equal(g, ct)  # prod over no axes is the identity
    if x.size:
        partials, _ = _analytic(x, axes)
        group, _ = _groups(shape, axes)
        _assert_exact_close(g, ct.ravel()[group] * np.conj(partials))
    t = _values(shape, dtype)
    jv = np.asarray(rt.jvp(y, v, rt.constant(t)))
    assert jv.shape == want_y.shape
    if x.size == 0:
        # Each output is the empty product 1, constant in x: the tangent is zero.
        np.testing.assert_array_equal(jv, np.zeros(want_y.shape, dtype=dtype))
    check_grads(lambda a: tf.prim.reduce_prod(a, axes), [x], order=2)


def _million(zeros: int) -> np.ndarray:
    # Values exp(n_i) with Σ n_i = 0, so the product of the others stays near 1 (no underflow).
    n = RNG.normal(scale=1e-3, size=1_000_000)
    x = np.exp(n - n.mean())
    x[np.linspace(10, x.size - 10, zeros).astype(int)] = 0.0
    return x


# Measured bytes of distinct buffers the engine allocated during one gradient (the pool's
# retained bytes once everything is released), over the input bytes, at R = 10^6 (f64):
# 6.0x without a graph (backward), 13.0x with the graph recorded for higher order (rt.grad).
# The bound checked is 8x and 16x; the replaced rule's [R, R] block needed R x the input bytes
# (8e12 bytes here: the process aborted allocating it).
@pytest.mark.parametrize(("record", "bound"), [(False, 8), (True, 16)])
def test_gradient_over_a_million_elements_with_zeros_stays_linear_in_memory(
    record: bool, bound: int
) -> None:
    engine = tf.CpuEngine(threads=2)
    ctx = tf.ExecutionContext(engine)
    rt = ctx.eager_runtime()
    for zeros in (1, 3):
        x = _million(zeros)
        v = rt.variable(x)
        gc.collect()
        engine.reset_buffer_pool()
        assert engine.buffer_pool_stats().retained_bytes == 0
        with ctx.session() as s:
            y = s.reduce_prod(v)
            if record:
                g = rt.grad(y, v)
            else:
                y.backward()
                g = v.grad
        got = np.array(g)
        del y, g
        rt.clear_grads()
        gc.collect()
        stats = engine.buffer_pool_stats()
        # Everything the gradient allocated is back in the pool (the limit is 1 GiB).
        assert x.nbytes <= stats.retained_bytes <= bound * x.nbytes, (stats, x.nbytes)
        assert stats.capacity_bytes >= 1 << 30
        want = np.zeros_like(x)
        if zeros == 1:
            z = int(np.flatnonzero(x == 0)[0])
            want[z] = np.prod(np.delete(x, z))
            assert 0.5 < want[z] < 2.0
        np.testing.assert_array_equal(got == 0, want == 0)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=0)
        del v

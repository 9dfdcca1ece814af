"""Cumulative scans (issue 22): the primitives ``cumsum``/``cumprod`` and the names ``tf.cumsum``,
``tf.cumprod`` (NumPy) and ``tf.cumulative_sum``, ``tf.cumulative_prod`` (Array API 2024.12)
against NumPy over the dtypes (rank 0, zero-size, strided views, ``dtype=``, ``include_initial``);
their derivatives by ``check_grads(order=2)`` in float64 and complex128, and ``cumprod``'s
gradient and JVP checked *exactly at zeros* (one, two and more zeros in a slice) against the
brute-force partials ``∂y_k/∂x_j = Π_{i≤k, i≠j} x_i``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tenferro as tf
from tenferro.errors import AxisError
from tenferro.testing import check_grads

P = tf.prim
RNG = np.random.default_rng(2212)
DTYPES = ("bool", "int32", "int64", "float32", "float64", "complex64", "complex128")


def sample(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    d = np.dtype(dtype)
    if d.kind == "b":
        return RNG.integers(0, 2, size=shape).astype(bool)
    x = RNG.integers(-3, 4, size=shape).astype(np.float64)
    if d.kind in "fc":
        x = x + RNG.uniform(-0.5, 0.5, size=shape)
    if d.kind == "c":
        x = x + 1j * RNG.uniform(-2, 2, size=shape)
    return x.astype(d)


def assert_close(got: object, want: np.ndarray) -> None:
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind in "fc":
        rtol = 1e-5 if want.dtype in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6,), (3, 4), (2, 0), (0,), (2, 3, 4)])
def test_cumsum_cumprod_match_numpy(dtype: str, shape: tuple[int, ...]) -> None:
    x = sample(dtype, shape)
    t = tf.asarray(x)
    for tv, xv in ((t, x), (t.T, x.T), (t[::-1], x[::-1])):
        for f, g in ((tf.cumsum, np.cumsum), (tf.cumprod, np.cumprod)):
            assert_close(f(tv), g(xv))
            for axis in range(-xv.ndim, xv.ndim):
                assert_close(f(tv, axis=axis), g(xv, axis=axis))
            if xv.ndim and xv.dtype.kind != "c":
                assert_close(f(tv, axis=0, dtype=np.float64), g(xv, axis=0, dtype=np.float64))


def test_rank0() -> None:
    assert_close(tf.cumsum(tf.asarray(3.0)), np.cumsum(np.float64(3.0)))
    assert_close(tf.cumulative_sum(tf.asarray(3)), np.cumulative_sum(np.array([3])))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("include_initial", (False, True))
def test_cumulative_sum_prod_match_numpy(dtype: str, include_initial: bool) -> None:
    x = sample(dtype, (3, 4))
    for axis in (0, 1, -1):
        assert_close(
            tf.cumulative_sum(tf.asarray(x), axis=axis, include_initial=include_initial),
            np.cumulative_sum(x, axis=axis, include_initial=include_initial),
        )
        assert_close(
            tf.cumulative_prod(tf.asarray(x), axis=axis, include_initial=include_initial),
            np.cumulative_prod(x, axis=axis, include_initial=include_initial),
        )
    v = sample(dtype, (5,))
    assert_close(
        tf.cumulative_sum(v, include_initial=include_initial),
        np.cumulative_sum(v, include_initial=include_initial),
    )
    with pytest.raises(ValueError, match="cumulative_sum"):
        tf.cumulative_sum(tf.asarray(x))


@given(
    hnp.arrays(
        st.sampled_from([np.int32, np.int64, np.float64, np.complex128]),
        hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5),
        elements=st.integers(-4, 4),
    )
)
def test_scans_hypothesis(x: np.ndarray) -> None:
    for axis in range(x.ndim):
        assert_close(tf.cumsum(x, axis=axis), np.cumsum(x, axis=axis))
        assert_close(tf.cumprod(x, axis=axis), np.cumprod(x, axis=axis))


def test_scan_errors() -> None:
    with pytest.raises(AxisError, match="cumsum"):
        tf.cumsum(tf.zeros((2, 3)), axis=2)
    with pytest.raises(AxisError, match="cumprod"):
        P.cumprod(tf.zeros((2,)), 1)
    with pytest.raises(TypeError, match="out"):
        tf.cumsum(tf.zeros(3), out=np.zeros(3))


@pytest.mark.parametrize("dtype", ("float64", "complex128"))
def test_grads_order2(dtype: str) -> None:
    x = sample(dtype, (3, 4)) + (0.7 if dtype == "float64" else 0.7 + 0.2j)
    check_grads(lambda a: P.cumsum(a.T, 1), [x], order=2)
    check_grads(lambda a: tf.cumsum(a[::-1], axis=0), [x], order=2)
    check_grads(lambda a: P.cumprod(a.T, 0), [x], order=2)
    check_grads(lambda a: tf.cumulative_prod(a, axis=1, include_initial=True), [x], order=2)


def brute_partials(x: np.ndarray) -> np.ndarray:
    """``J[k, j] = ∂y_k/∂x_j = Π_{i≤k, i≠j} x_i`` (0 for ``j > k``), by direct products."""
    n = len(x)
    J = np.zeros((n, n), dtype=x.dtype)
    for k in range(n):
        for j in range(k + 1):
            J[k, j] = np.prod([x[i] for i in range(k + 1) if i != j])
    return J


ZERO_CASES = [
    [2.0, 0.0, 3.0, 4.0],
    [0.0, 0.0, 1.5, 2.0],
    [1.5, 0.0, -2.0, 0.0, 3.0],
    [0.0, 3.0, 0.0, 0.0, 2.0],
    [1.5, 2.0, 0.0],
    [0.0],
    [2.0, -3.0, 0.5],
]


@pytest.mark.parametrize("values", ZERO_CASES)
@pytest.mark.parametrize("dtype", ("float64", "complex128"))
def test_cumprod_derivatives_exact_at_zeros(values: list[float], dtype: str) -> None:
    x = np.array(values, dtype=dtype)
    if dtype == "complex128":
        x = x * (1 + 0.5j)
    J = brute_partials(x)
    g = RNG.standard_normal(len(x)) + (
        1j * RNG.standard_normal(len(x)) if dtype == "complex128" else 0
    )
    g = g.astype(dtype)
    v = (
        RNG.standard_normal(len(x))
        + (1j * RNG.standard_normal(len(x)) if dtype == "complex128" else 0)
    ).astype(dtype)
    # VJP (Hermitian convention: x̄ = J^H ȳ) and JVP (ẏ = J ẋ).
    _, f_vjp = tf.func.vjp(lambda a: P.cumprod(a, 0), tf.asarray(x))
    (got,) = f_vjp(tf.asarray(g))
    np.testing.assert_allclose(np.asarray(got), J.conj().T @ g, rtol=1e-13, atol=1e-13)
    _, jv = tf.func.jvp(lambda a: P.cumprod(a, 0), [tf.asarray(x)], [tf.asarray(v)])
    np.testing.assert_allclose(np.asarray(jv), J @ v, rtol=1e-13, atol=1e-13)
    # Batched, along axis 1 of a transposed view.
    xb = np.stack([x, x[::-1]], axis=1)  # (n, 2): lines along axis 0
    _, f_vjp = tf.func.vjp(lambda a: P.cumprod(a.T, 1), tf.asarray(xb))
    gb = np.stack([g, g], axis=0)
    (got,) = f_vjp(tf.asarray(gb))
    Jr = brute_partials(x[::-1])
    want = np.stack([J.conj().T @ g, Jr.conj().T @ g], axis=1)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13, atol=1e-13)


def test_cumprod_grad_two_zeros_real() -> None:
    # Both zeros get a gradient only from outputs before the second one.
    x = tf.asarray([2.0, 0.0, 3.0, 0.0, 5.0])
    got = tf.func.grad(lambda a: tf.cumprod(a).sum())(x)
    want = brute_partials(np.asarray(x)).sum(axis=0)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert np.isfinite(np.asarray(got)).all()


def test_scans_under_jit_match_eager() -> None:
    x = sample("float64", (4, 5))
    x[1, 2] = 0.0
    f = lambda a: tf.cumsum(a, axis=0) + tf.cumprod(a, axis=1)  # noqa: E731
    np.testing.assert_allclose(np.asarray(tf.jit(f)(tf.asarray(x))), np.asarray(f(tf.asarray(x))))
    g = tf.func.grad(lambda a: tf.cumprod(a, axis=1).sum())
    np.testing.assert_allclose(np.asarray(tf.jit(g)(tf.asarray(x))), np.asarray(g(tf.asarray(x))))

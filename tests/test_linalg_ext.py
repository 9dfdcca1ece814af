"""The Array API ``linalg`` extension functions (issue 22): ``vector_norm``, ``matrix_norm``,
``cross``, ``outer``, ``matrix_power``, ``matrix_rank``, ``vecdot``, ``matmul``, ``tensordot``,
``trace``/``diagonal`` offsets, against ``numpy.linalg`` (hypothesis) and their derivatives
against finite differences (``check_grads``, order 2, away from kinks)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tenferro as tf
from tenferro.errors import AxisError, LinAlgError, ShapeError
from tenferro.testing import check_grads

L = tf.linalg
ORDS_V = [2, 1, 0, 3, 0.5, -1, -2.5, math.inf, -math.inf]
ORDS_M = ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]


def close(got: Any, want: Any, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    want = np.asarray(want)
    g = np.asarray(got)
    assert g.shape == want.shape, (g.shape, want.shape)
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    np.testing.assert_allclose(g, want, rtol=rtol, atol=atol)


def arrays(dtype: Any, shape: Any) -> st.SearchStrategy:
    if np.dtype(dtype).kind == "c":
        el = st.complex_numbers(max_magnitude=10, allow_nan=False, allow_infinity=False)
    else:
        el = st.floats(-10, 10, width=np.dtype(dtype).itemsize * 8)
    return hnp.arrays(dtype, shape, elements=el)


@settings(max_examples=40)
@given(
    arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3))
    | arrays(np.complex128, hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=3)),
    st.sampled_from(ORDS_V),
    st.booleans(),
    st.data(),
)
def test_vector_norm_matches_numpy(
    a: np.ndarray, ord: Any, keepdims: bool, data: st.DataObject
) -> None:
    nd = a.ndim
    axis = data.draw(
        st.none()
        | (st.integers(-nd, nd - 1) if nd else st.none())
        | st.lists(
            st.integers(0, max(nd - 1, 0)), unique=True, min_size=1, max_size=max(nd, 1)
        ).map(tuple)
        if nd
        else st.none()
    )
    with np.errstate(divide="ignore"):
        want = np.linalg.vector_norm(a, axis=axis, keepdims=keepdims, ord=ord)
    got = L.vector_norm(tf.asarray(a), axis=axis, keepdims=keepdims, ord=ord)
    close(got, want, rtol=1e-9)


@settings(max_examples=30)
@given(
    arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=3))
    | arrays(np.complex128, hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=3)),
    st.sampled_from(ORDS_M),
    st.booleans(),
)
def test_matrix_norm_matches_numpy(a: np.ndarray, ord: Any, keepdims: bool) -> None:
    close(
        L.matrix_norm(tf.asarray(a), ord=ord, keepdims=keepdims),
        np.linalg.matrix_norm(a, ord=ord, keepdims=keepdims),
        rtol=1e-9,
        atol=1e-9,
    )


def test_norm_grads_away_from_kinks() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 4))
    for ord in (2, 1, 3, -1.5, 0.5):
        check_grads(lambda t, o=ord: L.vector_norm(t, ord=o, axis=(0, 1)), [x])
    check_grads(lambda t: L.vector_norm(t, ord=math.inf, axis=1, keepdims=True), [x])
    # Distinct singular values: 2, -2 and nuc are smooth there.
    for ord in ("fro", "nuc", 2, -2, 1, math.inf):
        check_grads(lambda t, o=ord: L.matrix_norm(t, ord=o), [x])
    z = x[:2] + 1j * rng.normal(size=(2, 4))
    check_grads(lambda t: L.vector_norm(t, axis=-1), [z])
    check_grads(lambda t: L.matrix_norm(t, ord="nuc"), [z])


@settings(max_examples=30)
@given(
    hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, min_side=1, max_side=3),
    st.sampled_from([np.float64, np.int64, np.complex128]),
    st.integers(0, 1000),
    st.data(),
)
def test_cross_matches_numpy(shapes: Any, dtype: Any, seed: int, data: st.DataObject) -> None:
    s1, s2 = shapes.input_shapes
    n = min(len(s1), len(s2))
    axis = data.draw(st.integers(-n, -1))
    s1, s2 = list(s1), list(s2)
    s1[axis], s2[axis] = 3, 3
    rng = np.random.default_rng(seed)
    a = (rng.normal(size=s1) * 4).astype(dtype)
    b = (rng.normal(size=s2) * 4).astype(dtype)
    close(L.cross(tf.asarray(a), tf.asarray(b), axis=axis), np.linalg.cross(a, b, axis=axis))


def test_cross_outer_errors_and_grads() -> None:
    with pytest.raises(ShapeError, match="linalg.cross: axis -1 must have length 3"):
        L.cross(tf.zeros(2), tf.zeros(2))
    with pytest.raises(AxisError, match="linalg.cross"):
        L.cross(tf.zeros(3), tf.zeros(3), axis=1)
    with pytest.raises(ShapeError, match="linalg.outer"):
        L.outer(tf.zeros((2, 2)), tf.zeros(2))
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(2, 3)), rng.normal(size=3)
    check_grads(L.cross, [a, b])
    check_grads(L.outer, [b, b[:2]])
    close(L.outer(np.arange(3), np.arange(2.0)), np.linalg.outer(np.arange(3), np.arange(2.0)))


@settings(max_examples=25)
@given(
    st.integers(-3, 5),
    st.integers(1, 4),
    st.integers(0, 1000),
    st.sampled_from([np.float64, np.complex128]),
)
def test_matrix_power_matches_numpy(n: int, k: int, seed: int, dtype: Any) -> None:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(2, k, k)) + 2 * np.eye(k)
    if np.dtype(dtype).kind == "c":
        a = a + 0.5j * rng.normal(size=a.shape)
    close(L.matrix_power(tf.asarray(a), n), np.linalg.matrix_power(a, n), rtol=1e-8, atol=1e-8)


def test_matrix_power_cases() -> None:
    m = np.array([[1, 1], [0, 1]], dtype=np.int64)
    close(L.matrix_power(m, 5), np.linalg.matrix_power(m, 5))
    close(L.matrix_power(m, 0), np.eye(2, dtype=np.int64))
    with pytest.raises(LinAlgError):
        L.matrix_power(np.zeros((2, 2)), -1)
    with pytest.raises(TypeError, match="matrix_power"):
        L.matrix_power(m, 1.5)
    with pytest.raises(ShapeError, match="matrix_power"):
        L.matrix_power(np.zeros((2, 3)), 2)
    a = np.random.default_rng(3).normal(size=(3, 3)) + 3 * np.eye(3)
    check_grads(lambda t: L.matrix_power(t, 3), [a])
    check_grads(lambda t: L.matrix_power(t, -2), [a])


@settings(max_examples=25)
@given(
    st.integers(1, 4),
    st.integers(1, 4),
    st.integers(0, 4),
    st.integers(0, 1000),
    st.sampled_from([None, 1e-3, 0.5]),
)
def test_matrix_rank_matches_numpy(m: int, n: int, r: int, seed: int, rtol: Any) -> None:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(2, m, min(r, m, n) or 1)) @ rng.normal(size=(2, min(r, m, n) or 1, n))
    if r == 0:
        a = a * 0.0
    got = L.matrix_rank(tf.asarray(a), rtol=rtol)
    want = np.linalg.matrix_rank(a, rtol=rtol)
    close(got, want.astype(np.int64))
    close(
        L.matrix_rank(tf.asarray(a.astype(np.float32))),
        np.linalg.matrix_rank(a.astype(np.float32)).astype(np.int64),
    )


def test_vecdot_matmul_tensordot_trace_diagonal() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 3))
    close(L.matmul(a, b), np.linalg.matmul(a, b))
    c = rng.normal(size=(3, 4, 2))
    close(L.tensordot(a, c, axes=2), np.linalg.tensordot(a, c, axes=2))
    close(L.tensordot(a, c, axes=([1], [0])), np.linalg.tensordot(a, c, axes=([1], [0])))
    for off in (-2, -1, 0, 1, 3):
        close(L.trace(a, offset=off), np.linalg.trace(a, offset=off))
        close(L.diagonal(a, offset=off), np.linalg.diagonal(a, offset=off))
    close(
        L.trace(np.arange(8, dtype=np.int32).reshape(2, 2, 2), dtype=np.float64),
        np.linalg.trace(np.arange(8, dtype=np.int32).reshape(2, 2, 2), dtype=np.float64),
    )
    z = a + 1j * rng.normal(size=a.shape)
    close(L.vecdot(z, z[::-1], axis=1), np.linalg.vecdot(z, z[::-1], axis=1))
    check_grads(lambda x, y: L.vecdot(x, y), [z, z[::-1]])
    check_grads(lambda x: L.trace(x, offset=1), [a])


def test_extension_traces_under_jit() -> None:
    a = np.random.default_rng(5).normal(size=(3, 3))
    f = tf.jit(
        lambda t: (
            L.vector_norm(t, axis=(0, 1), ord=3)
            + L.matrix_norm(t, ord="nuc")
            + L.matrix_power(t, 2).sum()
            + L.cross(t, t[::-1]).sum()
        )
    )
    want = (
        np.linalg.vector_norm(a, axis=(0, 1), ord=3)
        + np.linalg.matrix_norm(a, ord="nuc")
        + np.linalg.matrix_power(a, 2).sum()
        + np.linalg.cross(a, a[::-1]).sum()
    )
    np.testing.assert_allclose(f(tf.asarray(a)).item(), want, rtol=1e-12)


def test_vector_norm_ord_none_is_the_2_norm() -> None:
    """``ord=None`` is ``2``, as ``numpy.linalg.vector_norm`` (and ``norm``) and
    ``array_api_strict``; a string order stays an error."""
    a = np.random.default_rng(4).normal(size=(3, 4)) + 1j
    for axis in (None, 1, (0, 1)):
        want = np.linalg.vector_norm(a, axis=axis, ord=None)
        close(L.vector_norm(tf.asarray(a), axis=axis, ord=None), want)
        close(L.vector_norm(tf.asarray(a), axis=axis), want)
    with pytest.raises(ValueError, match="linalg.vector_norm: invalid norm order 'fro'"):
        L.vector_norm(tf.asarray(a), ord="fro")

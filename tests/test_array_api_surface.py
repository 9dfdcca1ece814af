"""The Array API namespace surface (issue 22): ``result_type``, ``can_cast``,
``broadcast_arrays``, ``unstack``, ``matrix_transpose``, ``vecdot``, ``to_device``, the
``device=``/``copy=`` keywords of the creation functions and ``astype``, ``clip(x, min=, max=)``,
against NumPy (hypothesis) and the standard's signatures; derivatives by finite differences."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tenferro as tf
from tenferro.errors import AxisError, DTypeError, ShapeError
from tenferro.testing import check_grads

DTYPES = [
    np.dtype(n) for n in ("bool", "int32", "int64", "float32", "float64", "complex64", "complex128")
]
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


def same(got: Any, want: Any) -> None:
    want = np.asarray(want)
    assert isinstance(got, tf.Tensor)
    assert got.shape == want.shape and got.dtype == want.dtype, (
        got.shape,
        got.dtype,
        want.shape,
        want.dtype,
    )
    np.testing.assert_array_equal(np.asarray(got), want)


@settings(max_examples=60)
@given(
    st.lists(st.sampled_from(DTYPES), min_size=1, max_size=4),
    st.lists(st.sampled_from([True, 1, 1.0, 1j]), max_size=2),
)
def test_result_type_and_can_cast_match_numpy(dtypes: list[np.dtype], scalars: list[Any]) -> None:
    want = np.result_type(*dtypes, *scalars)
    assert tf.result_type(*dtypes, *scalars) == want
    # Tensors count by their dtype.
    ts = [tf.zeros((1,), dtype=d) for d in dtypes]
    assert tf.result_type(*ts, *scalars) == want
    for a in dtypes:
        assert tf.can_cast(a, dtypes[0]) == np.can_cast(a, dtypes[0], casting="safe")
    assert tf.can_cast(ts[0], dtypes[0]) is True


def test_result_type_and_can_cast_errors() -> None:
    with pytest.raises(ValueError, match="result_type"):
        tf.result_type(1, 2.0)
    with pytest.raises(DTypeError, match="result_type: unsupported dtype float16"):
        tf.result_type(np.float16, tf.float32)
    with pytest.raises(DTypeError, match="can_cast: unsupported dtype uint8"):
        tf.can_cast(np.uint8, tf.int64)


@given(
    st.lists(
        hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3), min_size=1, max_size=3
    )
)
def test_broadcast_arrays_matches_numpy(shapes: list[tuple[int, ...]]) -> None:
    arrays = [np.arange(int(np.prod(s)), dtype=np.float64).reshape(s) for s in shapes]
    try:
        want = np.broadcast_arrays(*arrays)
    except ValueError:
        with pytest.raises(ShapeError, match="broadcast_arrays"):
            tf.broadcast_arrays(*arrays)
        return
    got = tf.broadcast_arrays(*[tf.asarray(a) for a in arrays])
    assert isinstance(got, list) and len(got) == len(want)
    for g, w in zip(got, want):
        same(g, w)


@given(
    hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3)),
    st.data(),
)
def test_unstack_matches_numpy(a: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    got = tf.unstack(tf.asarray(a), axis=axis)
    assert isinstance(got, tuple) and len(got) == a.shape[axis]
    for i, g in enumerate(got):
        same(g, np.take(a, i, axis=axis))
    with pytest.raises(AxisError, match="unstack"):
        tf.unstack(tf.asarray(a), axis=a.ndim)


def test_unstack_and_matrix_transpose_grads() -> None:
    x = np.random.default_rng(0).normal(size=(2, 3))
    check_grads(lambda t: tf.unstack(t, axis=1)[2] * tf.unstack(t)[0][:2], [x])
    check_grads(lambda t: tf.matrix_transpose(t) ** 2, [x])
    with pytest.raises(ShapeError, match="matrix_transpose"):
        tf.matrix_transpose(tf.zeros(3))
    same(tf.matrix_transpose(tf.asarray(x)), np.matrix_transpose(x))
    same(tf.asarray(x).mT, x.T)


@settings(max_examples=40)
@given(
    hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, min_side=1, max_side=3),
    st.sampled_from([np.float64, np.float32, np.complex128, np.int32, np.int64]),
    st.integers(0, 10_000),
)
def test_vecdot_matches_numpy(shapes: Any, dtype: Any, seed: int) -> None:
    rng = np.random.default_rng(seed)
    s1, s2 = shapes.input_shapes
    n = min(len(s1), len(s2))
    # the contracted axis needs equal lengths: make the last axis of both 2.
    s1, s2 = (*s1[:-1], 2), (*s2[:-1], 2)
    a = (rng.normal(size=s1) * 3).astype(dtype)
    b = (rng.normal(size=s2) * 3).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.normal(size=s1)
        b = b - 2j * rng.normal(size=s2)
    for axis in (-1, *range(-n, -1)):
        if np.broadcast_shapes(s1, s2)[axis] and a.shape[axis] != b.shape[axis]:
            continue
        want = np.vecdot(a, b, axis=axis)
        got = tf.vecdot(tf.asarray(a), tf.asarray(b), axis=axis)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        np.asarray(tf.linalg.vecdot(a, b)), np.vecdot(a, b), rtol=1e-5, atol=1e-5
    )


def test_vecdot_conjugates_first_and_grads() -> None:
    a, b = np.array([1 + 2j, 3 - 1j]), np.array([2 - 1j, 1j])
    np.testing.assert_allclose(tf.vecdot(a, b).item(), np.vdot(a, b))
    check_grads(lambda x, y: tf.vecdot(x, y), [a, b])
    with pytest.raises(ShapeError, match="vecdot"):
        tf.vecdot(tf.zeros(3), tf.zeros(2))
    with pytest.raises(AxisError, match="vecdot"):
        tf.vecdot(tf.zeros(3), tf.zeros(3), axis=1)


def test_device_and_copy_keywords() -> None:
    x = tf.asarray([1.0, 2.0], device="cpu")
    assert x.device == "cpu" and x.to_device("cpu") is x and tf.to_device(x, x.device) is x
    for make in (
        lambda d: tf.zeros((2,), device=d),
        lambda d: tf.ones((2,), device=d),
        lambda d: tf.empty((2,), device=d),
        lambda d: tf.full((2,), 3.0, device=d),
        lambda d: tf.eye(2, device=d),
        lambda d: tf.linspace(0.0, 1.0, 3, device=d),
        lambda d: tf.arange(3, device=d),
        lambda d: tf.asarray([1.0], device=d),
        lambda d: tf.astype(x, tf.float32, device=d),
        lambda d: tf.from_dlpack(np.arange(2.0), device=d),
        lambda d: tf.zeros_like(x, device=d),
    ):
        assert make("cpu").device == "cpu" and make(None).device == "cpu"
        with pytest.raises(ValueError, match="unsupported device 'cuda'"):
            make("cuda")
    with pytest.raises(ValueError, match="to_device: unsupported device"):
        x.to_device("gpu")
    a = np.arange(3.0)
    c = tf.from_dlpack(a, copy=True)
    a[0] = 9.0
    assert c.tolist() == [0.0, 1.0, 2.0]
    same(tf.linspace(0, 1, 4, endpoint=False), np.linspace(0, 1, 4, endpoint=False))
    same(tf.eye(2, 3, k=1, dtype=tf.int32), np.eye(2, 3, k=1, dtype=np.int32))


def test_clip_min_max_keywords() -> None:
    x = tf.asarray([-2.0, 0.5, 3.0])
    same(tf.clip(x, min=0.0), np.clip(np.asarray(x), 0.0, None))
    same(tf.clip(x, max=tf.asarray([1.0, 0.0, 1.0])), np.minimum(np.asarray(x), [1.0, 0.0, 1.0]))
    same(tf.clip(x, 0.0, 1.0), np.clip(np.asarray(x), 0.0, 1.0))
    same(tf.clip(x, a_min=0.0, a_max=1.0), np.clip(np.asarray(x), 0.0, 1.0))
    with pytest.raises(ValueError, match="clip"):
        tf.clip(x, 0.0, a_min=0.0)


# The signatures of the Array API 2024.12 stubs that differ from NumPy 1 (pos-only markers,
# keyword names): each standard parameter must exist with a compatible kind.
STANDARD = {
    "astype": ["x", "dtype", "/", "*", "copy", "device"],
    "clip": ["x", "/", "min", "max"],
    "asarray": ["obj", "/", "*", "dtype", "device", "copy"],
    "zeros": ["shape", "*", "dtype", "device"],
    "ones": ["shape", "*", "dtype", "device"],
    "empty": ["shape", "*", "dtype", "device"],
    "full": ["shape", "fill_value", "*", "dtype", "device"],
    "eye": ["n_rows", "n_cols", "/", "*", "k", "dtype", "device"],
    "linspace": ["start", "stop", "/", "num", "*", "dtype", "device", "endpoint"],
    "from_dlpack": ["x", "/", "*", "device", "copy"],
    "unstack": ["x", "/", "*", "axis"],
    "vecdot": ["x1", "x2", "/", "*", "axis"],
}


@pytest.mark.parametrize("name", sorted(STANDARD))
def test_standard_signatures(name: str) -> None:
    params = list(inspect.signature(getattr(tf, name)).parameters.values())
    spec = STANDARD[name]
    kind = inspect.Parameter.POSITIONAL_ONLY
    i = 0
    for p in spec:
        if p == "/":
            kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
            continue
        if p == "*":
            kind = inspect.Parameter.KEYWORD_ONLY
            continue
        if kind == inspect.Parameter.KEYWORD_ONLY:
            assert p in {q.name for q in params}, (name, p)
            assert {q.name: q for q in params}[p].kind in (
                kind,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
            )
        else:
            q = params[i]
            if kind == inspect.Parameter.POSITIONAL_OR_KEYWORD:
                assert q.name == p and q.kind == kind, (name, q)
            else:
                assert q.kind in (kind, inspect.Parameter.POSITIONAL_OR_KEYWORD), (name, q)
            i += 1

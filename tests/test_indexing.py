"""Advanced indexing (``gather``) and functional updates ``t.at[...]`` (``scatter``) against
NumPy (python-api.md, "Indexing"): integer arrays, boolean masks, mixed basic and advanced keys
with NumPy's placement rule, negative indices, NumPy's ``IndexError`` messages, strided views,
zero-size and rank-0 cases, every dtype."""

from __future__ import annotations

from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tenferro as tf
from tenferro.testing import assert_close

DTYPES = tuple(
    np.dtype(d) for d in ("bool", "int32", "int64", "float32", "float64", "complex64", "complex128")
)
IMPLEMENTED = {row.name for row in tf.prim.CATALOG if row.implemented}
needs_gather = pytest.mark.skipif(
    "gather" not in IMPLEMENTED, reason="the gather primitive is not built yet"
)
needs_scatter = pytest.mark.skipif(
    "scatter" not in IMPLEMENTED, reason="the scatter primitive is not built yet"
)

X = np.arange(24).reshape(2, 3, 4)
MASK = X > 10


def host_key(key: Any) -> Any:
    """The key NumPy understands (tenferro tensors in it become ndarrays)."""
    if isinstance(key, tuple):
        return tuple(np.asarray(k) if isinstance(k, tf.Tensor) else k for k in key)
    return np.asarray(key) if isinstance(key, tf.Tensor) else key


def check_getitem(x: np.ndarray, t: Any, key: Any) -> None:
    want = x[host_key(key)]
    got = t[key]
    assert isinstance(got, tf.Tensor)
    assert got.shape == want.shape, (key, got.shape, want.shape)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want, err_msg=repr(key))


# Keys as (id, key); index arrays given as lists, ndarrays and tenferro tensors.
KEYS = [
    ("list", [1, 0]),
    ("list-negative", [-1, 0, -2]),
    ("list-tuple", ([1, 0],)),
    ("nested-list", [[0, 1], [1, 1]]),
    ("ndarray", np.array([1, 0, 1])),
    ("ndarray-int32", np.array([[1], [0]], dtype=np.int32)),
    ("tensor", tf.asarray([1, 0])),
    ("tensor-int32", tf.asarray(np.array([0, 0, 1], dtype=np.int32))),
    ("slice-array", (slice(None), [0, 2])),
    ("int-slice-array", (0, slice(None), [1, 2])),  # separated: index axes first
    ("array-none-array", ([1], None, [0])),
    ("slice-array-none-array", (slice(None), [0], None, [0])),
    ("broadcast-arrays", ([[0], [1]], [0, 2])),
    ("broadcast-around-slice", (np.array([[1]]), slice(1, 3), [[0, 3]])),
    ("empty-list", []),
    ("ellipsis-array", (Ellipsis, [3, -1])),
    ("array-ellipsis-array", ([0, 1], Ellipsis, [0, 1])),
    ("reversed-slices", (slice(None, None, -1), [0, 2], slice(None, None, 2))),
    ("int-array-slice", (1, [0, 2], slice(None))),
    ("array-int-array", ([1], 2, [0, 3])),  # adjacent through the int
    ("empty-slice-array", (slice(0, 0), [1])),
    ("0d-int-array", np.array(1)),
    ("slice-0d-int-array", (slice(None), np.array(1))),
    ("0d-int-tensor", (slice(None), tf.asarray(2))),
    ("true", True),
    ("false", False),
    ("ellipsis-true", (Ellipsis, True)),
    ("slice-true-array", (slice(None), True, [0, 1])),
    ("int-slice-true", (0, slice(None), True)),
    ("np-bool", np.True_),
    ("mask-3d", MASK),
    ("mask-3d-tensor", tf.asarray(MASK)),
    ("mask-2d-trailing", (slice(None), MASK[0])),
    ("mask-1d-middle", (slice(None), np.array([True, False, True]))),
    ("mask-and-array", (np.array([False, True]), slice(None), [0, 3])),
    ("mask-all-false", np.zeros((2, 3), dtype=bool)),
    ("mask-list", [True, False]),
    ("mask-0d", np.array(True)),
]


@needs_gather
@pytest.mark.parametrize("key", [k for _, k in KEYS], ids=[i for i, _ in KEYS])
def test_getitem_matches_numpy(key: Any) -> None:
    check_getitem(X, tf.asarray(X), key)


@needs_gather
@pytest.mark.parametrize("dtype", DTYPES, ids=[d.name for d in DTYPES])
def test_getitem_every_dtype(dtype: np.dtype) -> None:
    rng = np.random.default_rng(0)
    x = (
        (rng.standard_normal((3, 4)) * 3).astype(dtype)
        if dtype.kind != "b"
        else rng.random((3, 4)) > 0.5
    )
    t = tf.asarray(x)
    for key in ([2, 0], (slice(None), [3, 3, 0]), ([0, 2], [1, 3]), x != x[0, 0], (Ellipsis, [-1])):
        check_getitem(x, t, key)


def _views(base: np.ndarray) -> list[tuple[str, np.ndarray, Any]]:
    """(label, values, tensor view) for strided tenferro views of ``base``-derived values."""
    t = tf.tensor(base)
    out = [
        ("transposed", base.T, t.T),
        ("reversed", base[::-1, :, ::-2], t[::-1, :, ::-2]),
        ("broadcast", np.broadcast_to(base[:1], base.shape), tf.broadcast_to(t[:1], base.shape)),
    ]
    for _, values, view in out:
        assert not view.is_contiguous
        np.testing.assert_array_equal(np.asarray(view), values)
    return out


@needs_gather
@pytest.mark.parametrize("key", [k for _, k in KEYS], ids=[i for i, _ in KEYS])
def test_getitem_of_strided_views(key: Any) -> None:
    base = np.arange(2 * 3 * 4, dtype=np.float64).reshape(4, 3, 2) * 1.5
    for label, values, view in _views(base):
        try:
            want = values[host_key(key)]
        except IndexError:
            with pytest.raises(IndexError):
                view[key]
            continue
        got = view[key]
        assert got.shape == want.shape, label
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=label)


@needs_gather
def test_getitem_zero_size_and_rank0() -> None:
    x = np.zeros((0, 3))
    t = tf.asarray(x)
    for key in (
        [],
        (slice(None), [0, 2]),
        (slice(None), [[]]),
        np.zeros((0, 3), bool),
        (Ellipsis, [1]),
    ):
        check_getitem(x, t, key)
    y = np.arange(6.0).reshape(2, 3)
    check_getitem(y, tf.asarray(y), (slice(None), []))
    check_getitem(y, tf.asarray(y), ([], []))
    s = np.array(5.0)
    for key in (True, False, (None, True), (Ellipsis, False), np.array(True)):
        check_getitem(s, tf.asarray(s), key)


@needs_gather
def test_getitem_is_a_new_tensor_and_leaves_the_input_alone() -> None:
    t = tf.asarray(X)
    got = t[[0, 0]]
    assert got.shape == (2, 3, 4)
    np.testing.assert_array_equal(np.asarray(t), X)


# ----------------------------------------------------------------------------------------------
# Errors: NumPy's classes and messages
# ----------------------------------------------------------------------------------------------

ERROR_KEYS = [
    ("out-of-bounds", [0, 5]),
    ("out-of-bounds-negative", (slice(None), [-4])),
    ("out-of-bounds-last-axis", (Ellipsis, [4])),
    ("mask-shape", np.array([True, False, True])),
    ("mask-shape-2d", (slice(None), np.ones((3, 5), bool))),
    ("broadcast", ([0, 1], [0, 1, 2])),
    ("float-array", [1.0]),
    ("float-scalar-with-array", (1.5, [0])),
    ("too-many", ([0], [0], [0], [0])),
    ("two-ellipses", (Ellipsis, Ellipsis, [0])),
    ("string", ("a", [0])),
]


@pytest.mark.parametrize("key", [k for _, k in ERROR_KEYS], ids=[i for i, _ in ERROR_KEYS])
def test_getitem_errors_match_numpy(key: Any) -> None:
    with pytest.raises(IndexError) as want:
        X[host_key(key)]
    with pytest.raises(IndexError) as got:
        tf.asarray(X)[key]
    if (
        "bounds" in str(want.value)
        or "boolean index" in str(want.value)
        or "too many" in str(want.value)
    ):
        assert str(got.value) == str(want.value)
    elif "shape mismatch" in str(want.value):
        assert "shape mismatch: indexing arrays could not be broadcast together" in str(got.value)
        assert "(2,)" in str(got.value) and "(3,)" in str(got.value)


def test_setitem_still_points_to_at() -> None:
    t = tf.asarray([1.0, 2.0])
    with pytest.raises(TypeError, match=r"\.at\["):
        t[[0]] = 5.0


# ----------------------------------------------------------------------------------------------
# Hypothesis: random mixed keys
# ----------------------------------------------------------------------------------------------


@st.composite
def keys(draw: st.DrawFn, shape: tuple[int, ...]) -> Any:
    """A random NumPy key for ``shape``: ints, slices, integer arrays (broadcastable shapes),
    masks, ``None`` and at most one ``...``."""
    items: list[Any] = []
    axis = 0
    used_ellipsis = False
    index_shape = draw(st.sampled_from([(2,), (1,), (3, 1), (1, 2), ()]))
    while axis < len(shape):
        kind = draw(
            st.sampled_from(["int", "slice", "array", "array", "mask", "none", "ellipsis", "stop"])
        )
        n = shape[axis]
        if kind == "stop":
            break
        if kind == "none":
            items.append(None)
            continue
        if kind == "ellipsis" and not used_ellipsis:
            used_ellipsis = True
            items.append(Ellipsis)
            axis = len(shape) - draw(st.integers(0, len(shape) - axis))
            continue
        if kind == "int" and n > 0:
            items.append(draw(st.integers(-n, n - 1)))
        elif kind == "array" and n > 0:
            size = int(np.prod(index_shape))
            vals = draw(st.lists(st.integers(-n, n - 1), min_size=size, max_size=size))
            arr = np.array(vals, dtype=np.int64).reshape(index_shape)
            form = draw(st.sampled_from(["ndarray", "list", "tensor"]))
            items.append(
                arr.tolist()
                if form == "list" and arr.ndim
                else (tf.asarray(arr) if form == "tensor" else arr)
            )
        elif kind == "mask" and n > 0:
            k = draw(st.integers(1, len(shape) - axis))
            mshape = shape[axis : axis + k]
            items.append(draw(hnp.arrays(np.bool_, mshape)))
            axis += k
            continue
        else:
            start = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            stop = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            step = draw(st.sampled_from([None, 1, 2, -1, -2]))
            items.append(slice(start, stop, step))
        axis += 1
    return tuple(items)


@needs_gather
@given(data=st.data())
def test_getitem_hypothesis(data: st.DataObject) -> None:
    shape = data.draw(
        hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=4), label="shape"
    )
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    key = data.draw(keys(shape), label="key")
    try:
        want = x[host_key(key)]
    except IndexError:  # masks and arrays may fail to broadcast, as in NumPy
        with pytest.raises(IndexError):
            tf.asarray(x)[key]
        return
    got = tf.asarray(x)[key]
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


# ----------------------------------------------------------------------------------------------
# t.at[...]
# ----------------------------------------------------------------------------------------------


def _points(shape: tuple[int, ...], key: Any) -> tuple[list[tuple[int, ...]], tuple[int, ...]]:
    """The coordinates NumPy's ``x[key]`` selects, in C order, and the selection's shape."""
    if not shape:
        sel = np.zeros((), dtype=np.int64)[host_key(key)]
        return [()] * sel.size, sel.shape
    coords = [g[host_key(key)] for g in np.indices(shape)]
    return list(zip(*(c.reshape(-1).tolist() for c in coords))), coords[0].shape


def _values(x: np.ndarray, v: Any, sel_shape: tuple[int, ...]) -> np.ndarray:
    vals = np.asarray(v).astype(x.dtype)
    while vals.ndim > len(sel_shape) and vals.shape[0] == 1:
        vals = vals[0]
    return np.broadcast_to(vals, sel_shape).reshape(-1)


def expected_set(x: np.ndarray, key: Any, v: Any) -> np.ndarray:
    """``x[key] = v`` with the last value winning at repeated indices (explicit loop)."""
    points, sel_shape = _points(x.shape, key)
    vals = _values(x, v, sel_shape)
    out = x.copy()
    for point, val in zip(points, vals):
        out[point] = val
    return out


def expected_add(x: np.ndarray, key: Any, v: Any) -> np.ndarray:
    """``numpy.add.at(x, key, v)`` (logical or for bool) as an explicit loop."""
    points, sel_shape = _points(x.shape, key)
    vals = _values(x, v, sel_shape)
    out = x.copy()
    for point, val in zip(points, vals):
        out[point] = (out[point] | val) if x.dtype == np.bool_ else out[point] + val
    return out


AT_KEYS = [
    ("int", 1, 5.0),
    ("slice", (slice(None), 0), [1.0, 2.0, 3.0]),
    ("step-slice", (slice(None, None, -2), slice(1, None, 2)), 7.0),
    ("array-duplicates", ([0, 1, 0],), [[1.0], [2.0], [3.0]]),
    ("points-duplicates", ([0, 1, 0, 0], [2, 0, 2, 2]), [[1.0], [2.0], [3.0], [4.0]]),
    ("mask", (X[:, :3, 0] > 5,), -1.0),
    ("negative", (-1, [-1, -3]), [[9.0], [8.0]]),
    ("ellipsis", (Ellipsis, [0, 0, 2]), [10.0, 20.0, 30.0]),
    ("everything", (Ellipsis,), 3.0),
    ("empty", ([],), 1.0),
    ("leading-ones-value", (0,), [[[4.0, 5.0, 6.0]]]),
]
XA = np.arange(2 * 3 * 3, dtype=np.float64).reshape(2, 3, 3) - 7.5


@needs_scatter
@pytest.mark.parametrize("key,v", [(k, v) for _, k, v in AT_KEYS], ids=[i for i, _, _ in AT_KEYS])
def test_at_set_and_add_match_numpy(key: Any, v: Any) -> None:
    t = tf.asarray(XA)
    got_set = t.at[key].set(v)
    got_add = t.at[key].add(v)
    assert_close(got_set, expected_set(XA, key, v))
    assert_close(got_add, expected_add(XA, key, v))
    assert_close(t.at[key].get(), XA[host_key(key)])
    np.testing.assert_array_equal(np.asarray(t), XA)  # immutable


@needs_scatter
@pytest.mark.parametrize("dtype", DTYPES, ids=[d.name for d in DTYPES])
def test_at_every_dtype(dtype: np.dtype) -> None:
    rng = np.random.default_rng(1)
    x = (rng.integers(-5, 6, size=(3, 4))).astype(dtype)
    v = np.array([1, 0, 3]).astype(dtype)
    t = tf.asarray(x)
    cases = [
        ((slice(None), 1), v),
        (([0, 2, 0], [1, 1, 1]), v),
        ((np.array([True, False, True]), 3), v[:2]),
        ((Ellipsis, 2), v[1]),
    ]
    for key, vv in cases:
        got = t.at[key].set(vv)
        assert got.dtype == dtype
        np.testing.assert_array_equal(np.asarray(got), expected_set(x, key, vv))
        got = t.at[key].add(vv)
        assert got.dtype == dtype
        np.testing.assert_array_equal(np.asarray(got), expected_add(x, key, vv))


@needs_scatter
def test_at_on_strided_views_and_with_tensor_values() -> None:
    base = np.arange(12.0).reshape(3, 4)
    for _, values, view in [
        ("transposed", base.T, tf.tensor(base).T),
        ("reversed", base[::-1, ::-2], tf.tensor(base)[::-1, ::-2]),
    ]:
        v = tf.asarray(np.arange(values.shape[0], dtype=np.float64) * 100.0)[::-1]  # strided
        key = ([1, 0, 1], 1)
        assert_close(view.at[key].add(v[:1]), expected_add(values, key, np.asarray(v[:1])))
        assert_close(view.at[:, 0].set(v), expected_set(values, (slice(None), 0), np.asarray(v)))


@needs_scatter
def test_at_set_keeps_signed_zero_and_exact_values() -> None:
    t = tf.asarray([1e20, 5.0, -3.0])
    out = np.asarray(t.at[[0, 1]].set([1.0, -0.0]))
    assert out[0] == 1.0  # exact, not (1 - 1e20) + 1e20
    assert out[1] == 0.0 and np.signbit(out[1])
    c = np.asarray(tf.asarray([1 + 1j]).at[0].set(complex(-0.0, -0.0)))
    assert np.signbit(c[0].real) and np.signbit(c[0].imag)


@needs_scatter
def test_at_duplicates_set_keeps_last_and_add_accumulates() -> None:
    t = tf.zeros(3)
    assert np.asarray(t.at[[2, 2, 2, 0]].set([1.0, 2.0, 3.0, 4.0])).tolist() == [4.0, 0.0, 3.0]
    assert np.asarray(t.at[[2, 2, 2, 0]].add([1.0, 2.0, 3.0, 4.0])).tolist() == [4.0, 0.0, 6.0]
    ints = tf.asarray(np.zeros(4, np.int32))
    assert np.asarray(ints.at[[1, 1, 3]].add(2)).tolist() == [0, 4, 0, 2]


@needs_scatter
def test_at_rank0_zero_size_and_runtime() -> None:
    s = tf.asarray(2.5)
    assert float(s.at[()].set(1.0)) == 1.0
    assert float(s.at[...].add(1.0)) == 3.5
    assert float(s.at[None].add(1.0)) == 3.5
    z = tf.zeros((0, 3))
    assert z.at[:, 1].set(5.0).shape == (0, 3)
    rt = tf.Runtime()
    t = rt.constant(np.array([1.0, 2.0]))
    out = t.at[1].set(7.0)
    assert out.runtime is rt
    assert np.asarray(out).tolist() == [1.0, 7.0]


@needs_scatter
def test_at_casts_values_to_the_tensor_dtype() -> None:
    t = tf.asarray(np.array([1, 2, 3], np.int32))
    out = t.at[0].set(7.9)
    assert out.dtype == np.int32 and np.asarray(out).tolist() == [7, 2, 3]
    f = tf.asarray(np.array([1.0, 2.0], np.float32))
    out = f.at[1].add(tf.asarray([0.5]))
    assert out.dtype == np.float32 and np.asarray(out).tolist() == [1.0, 2.5]


def test_at_errors() -> None:
    t = tf.asarray(np.zeros((2, 3)))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 1 with size 3"):
        t.at[0, 3].set(1.0)
    with pytest.raises(IndexError, match="index -3 is out of bounds for axis 0 with size 2"):
        t.at[[-3]].add(1.0)
    with pytest.raises(IndexError):
        t.at[np.array([True, False, True])].set(1.0)
    with pytest.raises(IndexError):
        t.at[1.5].set(1.0)
    with pytest.raises(
        tf.errors.ShapeError,
        match=r"could not broadcast input array from shape \(2,\) into shape \(3,\)",
    ):
        t.at[0].set([1.0, 2.0])
    with pytest.raises(ValueError):
        t.at[:, 0].add([1.0, 2.0, 3.0])


@needs_scatter
@given(data=st.data())
def test_at_hypothesis(data: st.DataObject) -> None:
    shape = data.draw(
        hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4), label="shape"
    )
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) - 3.0
    key = data.draw(keys(shape), label="key")
    try:
        sel_shape = x[host_key(key)].shape
    except IndexError:
        with pytest.raises(IndexError):
            tf.asarray(x).at[key].set(0.0)
        return
    v = data.draw(
        hnp.arrays(np.float64, sel_shape, elements=st.floats(-10, 10, width=64)), label="v"
    )
    t = tf.asarray(x)
    assert_close(t.at[key].set(v), expected_set(x, key, v))
    assert_close(t.at[key].add(v), expected_add(x, key, v))

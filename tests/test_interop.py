"""NumPy interop (python-api.md, "NumPy and other libraries" and "Objects"): zero-copy export,
the buffer protocol, construction from any NumPy layout, aliasing with ``copy=False``,
lifetimes, ``__array__``/``__array_interface__``/DLPack, mixed ndarray–tensor arithmetic, and
NumPy 2 scalar conversions."""

from __future__ import annotations

import gc
import operator

import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import assert_close

TENSOR_TYPE = type(tf.zeros(()))
FORMATS = {
    "float64": "d",
    "float32": "f",
    "complex128": "Zd",
    "complex64": "Zf",
    "int64": "q",
    "int32": "i",
    "bool": "?",
}


def sample(dtype, shape=(2, 3)) -> np.ndarray:
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    base = np.arange(1, n + 1).reshape(shape)
    if dtype.kind == "b":
        return (base % 2 == 0).astype(dtype)
    if dtype.kind == "c":
        return (
            (base + 0.5j * base[::-1]).astype(dtype) if base.ndim else (base + 0.5j).astype(dtype)
        )
    if dtype.kind == "f":
        return (base / 4).astype(dtype)
    return (base - 3).astype(dtype)


# ----------------------------------------------------------------------------------------------
# Export
# ----------------------------------------------------------------------------------------------


def test_asarray_is_zero_copy_and_read_only() -> None:
    t = tf.tensor(sample("float64"))
    a1, a2 = np.asarray(t), np.asarray(t)
    assert np.shares_memory(a1, a2)
    assert not a1.flags.writeable
    with pytest.raises(ValueError):
        a1[0, 0] = 1.0
    np.testing.assert_array_equal(a1, sample("float64"))
    assert a1.strides == t.strides


@pytest.mark.parametrize("dtype", list(FORMATS))
def test_memoryview_format_codes(dtype: str) -> None:
    t = tf.tensor(sample(dtype))
    m = memoryview(t)
    assert m.format == FORMATS[dtype]
    assert m.readonly
    assert m.shape == t.shape
    assert m.strides == t.strides
    assert m.itemsize == np.dtype(dtype).itemsize
    np.testing.assert_array_equal(np.asarray(m), sample(dtype))


def test_memoryview_of_strided_view_has_true_strides() -> None:
    t = tf.tensor(sample("float64", (4, 3)))
    v = t[::-2].T
    m = memoryview(v)
    assert m.strides == v.strides == np.asarray(v).strides
    np.testing.assert_array_equal(np.asarray(v), sample("float64", (4, 3))[::-2].T)


def test_tensor_dtype_and_module() -> None:
    t = tf.tensor(sample("float32"))
    assert type(t).__module__ == "tenferro"
    assert isinstance(t.dtype, np.dtype)
    assert t.dtype == np.float32
    for name in ("float32", "float64", "complex64", "complex128", "int32", "int64"):
        assert getattr(tf, name) is np.dtype(name)
    assert tf.bool_ is np.dtype("bool")
    assert t.device == "cpu"


@pytest.mark.parametrize("dtype", list(FORMATS))
def test_default_dtypes_of_python_data(dtype: str) -> None:
    values = sample(dtype).tolist()
    t = tf.tensor(values)
    # NumPy's defaults for Python data: int64, float64, complex128, bool.
    assert t.dtype == np.asarray(values).dtype
    np.testing.assert_array_equal(np.asarray(t), np.asarray(values))


# ----------------------------------------------------------------------------------------------
# Import
# ----------------------------------------------------------------------------------------------


def _sources():
    a = sample("float64", (3, 4))
    ro = a.copy()
    ro.flags.writeable = False
    big_endian = a.astype(">f8")
    return {
        "c_order": a,
        "f_order": np.asfortranarray(a),
        "negative_strides": a[::-1, ::-2],
        "non_contiguous": a[:, 1::2],
        "zero_size": np.zeros((0, 3)),
        "zero_size_f": np.zeros((3, 0), order="F"),
        "rank0": np.array(2.5),
        "broadcast_zero_stride": np.broadcast_to(a[:1], (3, 4)),
        "big_endian": big_endian,
        "read_only": ro,
        "int32_f": np.asfortranarray(sample("int32", (2, 5))),
        "complex_neg": sample("complex128", (3, 2))[::-1],
    }


@pytest.mark.parametrize("factory", ["tensor", "asarray"])
@pytest.mark.parametrize("source", list(_sources()))
def test_tensor_from_numpy_layouts(source: str, factory: str) -> None:
    a = _sources()[source]
    t = getattr(tf, factory)(a)
    assert t.shape == a.shape
    assert t.dtype == a.dtype.newbyteorder("=")
    assert t.dtype.isnative
    np.testing.assert_array_equal(np.asarray(t), a)
    if t.size > 0:
        assert tuple(t.strides) == np.asarray(t).strides


def test_c_and_f_ordered_arrays_make_equal_tensors() -> None:
    a = sample("float64", (3, 4))
    tc, tfo = tf.tensor(np.ascontiguousarray(a)), tf.tensor(np.asfortranarray(a))
    eq = tc == tfo
    assert isinstance(eq, TENSOR_TYPE) and eq.dtype == np.bool_
    assert np.asarray(eq).all()


def test_tensor_copies_and_asarray_copies_by_default() -> None:
    a = sample("float64")
    t1, t2 = tf.tensor(a), tf.asarray(a)
    a[0, 0] = 100.0
    assert np.asarray(t1)[0, 0] == sample("float64")[0, 0]
    assert np.asarray(t2)[0, 0] == sample("float64")[0, 0]


@pytest.mark.parametrize("layout", ["c_order", "f_order", "negative_strides"])
def test_asarray_copy_false_aliases(layout: str) -> None:
    base = sample("float64", (3, 4))
    a = {"c_order": base, "f_order": np.asfortranarray(base), "negative_strides": base[::-1, ::-1]}[
        layout
    ]
    t = tf.asarray(a, copy=False)
    assert np.shares_memory(np.asarray(t), a)
    a[0, 1] = 1234.5  # the caller accepted that writing changes the tensor
    assert np.asarray(t)[0, 1] == 1234.5
    np.testing.assert_array_equal(np.asarray(t), a)


def test_asarray_copy_false_refuses_a_conversion() -> None:
    with pytest.raises(ValueError):
        tf.asarray(np.ones(3), dtype=tf.float32, copy=False)
    with pytest.raises(ValueError):
        tf.asarray(np.ones(3, dtype=">f8"), copy=False)


def test_asarray_of_a_tensor_is_the_tensor_and_tensor_copies() -> None:
    t = tf.tensor(sample("float64"))
    assert tf.asarray(t) is t
    u = tf.tensor(t)
    assert u is not t
    assert_close(u, np.asarray(t))
    assert not np.shares_memory(np.asarray(u), np.asarray(t))


def test_exported_view_outlives_the_tensor() -> None:
    want = sample("float64", (50, 40))
    t = tf.tensor(want)
    v = np.asarray(t)
    del t
    gc.collect()
    churn = [tf.tensor(np.full((50, 40), float(i))) for i in range(10)]
    np.testing.assert_array_equal(v, want)
    del churn


# ----------------------------------------------------------------------------------------------
# __array__, __array_interface__, DLPack
# ----------------------------------------------------------------------------------------------


def test_dunder_array() -> None:
    t = tf.tensor(sample("float64"))
    a = t.__array__()
    assert a.dtype == np.float64
    np.testing.assert_array_equal(a, sample("float64"))
    b = t.__array__(dtype=np.float32, copy=True)
    assert b.dtype == np.float32 and b.flags.writeable
    np.testing.assert_array_equal(b, sample("float64").astype(np.float32))
    c = t.__array__(copy=True)
    assert c.flags.writeable and not np.shares_memory(c, np.asarray(t))
    d = np.array(t)  # NumPy asks for a copy
    d[0, 0] = -1.0
    assert np.asarray(t)[0, 0] == sample("float64")[0, 0]


def test_array_interface() -> None:
    t = tf.tensor(sample("int32", (3, 2)))
    ai = t.__array_interface__
    assert ai["version"] == 3
    assert tuple(ai["shape"]) == (3, 2)
    assert np.dtype(ai["typestr"]) == np.int32
    ptr, read_only = ai["data"]
    assert isinstance(ptr, int) and read_only is True
    assert ai.get("strides") in (None, t.strides)

    class Holder:
        __array_interface__ = ai

    h = Holder()
    h.keep = t  # keep the storage alive while NumPy reads it
    np.testing.assert_array_equal(np.asarray(h), sample("int32", (3, 2)))


def test_dlpack_round_trips() -> None:
    t = tf.tensor(sample("float64", (3, 4))).T
    assert t.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(t)
    np.testing.assert_array_equal(a, sample("float64", (3, 4)).T)
    assert np.shares_memory(a, np.asarray(t))
    assert not a.flags.writeable
    src = sample("complex64", (2, 3))
    u = tf.from_dlpack(src)
    assert isinstance(u, TENSOR_TYPE) and u.dtype == np.complex64
    np.testing.assert_array_equal(np.asarray(u), src)
    back = np.from_dlpack(tf.from_dlpack(np.asfortranarray(sample("int64", (2, 3)))))
    np.testing.assert_array_equal(back, sample("int64", (2, 3)))


def test_dlpack_copy_false_needs_a_versioned_capsule() -> None:
    """An unversioned capsule cannot mark memory read-only: the legacy export copies (as NumPy
    refuses to export a read-only array unversioned), so ``copy=False`` there is a BufferError
    (the 2024.12 standard: "must never copy, and raise a BufferError in case a copy is deemed
    necessary"); a versioned request shares memory with the READ_ONLY flag."""
    t = tf.tensor(sample("float64", (3, 4)))
    ro = np.asarray(sample("float64", (3, 4)))
    ro.flags.writeable = False
    for kw in ({"copy": False}, {"copy": False, "max_version": (0, 9)}):
        with pytest.raises(BufferError, match="max_version=\\(1, 0\\)"):
            t.__dlpack__(**kw)
        with pytest.raises(BufferError):  # NumPy does the same for a read-only array
            ro.__dlpack__(**kw)
    assert "dltensor" in repr(t.__dlpack__()) and "versioned" not in repr(t.__dlpack__())
    assert "dltensor_versioned" in repr(t.__dlpack__(copy=False, max_version=(1, 0)))
    a = np.from_dlpack(t, copy=False)
    assert np.shares_memory(a, np.asarray(t)) and not a.flags.writeable


# ----------------------------------------------------------------------------------------------
# Mixed arithmetic and ufuncs
# ----------------------------------------------------------------------------------------------


def test_ndarray_op_tensor_returns_tensor() -> None:
    a = sample("float64")
    t = tf.tensor(sample("float64") * 2)
    for result, want in ((a + t, a + a * 2), (a * t, a * (a * 2)), (t + a, a * 3), (a - t, -a)):
        assert isinstance(result, TENSOR_TYPE), type(result)
        assert_close(result, want)


def test_numpy_ufunc_returns_tensor() -> None:
    t = tf.tensor(sample("float64"))
    r = np.exp(t)
    assert isinstance(r, TENSOR_TYPE), type(r)
    assert_close(r, np.exp(sample("float64")))


def test_numpy_ufuncs_tenferro_lacks_never_drop_a_gradient() -> None:
    """Untracked tensors fall back to NumPy; tracked ones raise (python-api.md), also for ufuncs
    tenferro has when called with keywords or through a method, and inside transforms."""
    a = np.array([0.5, 1.0])
    u = tf.tensor(a)
    np.testing.assert_allclose(np.spacing(u), np.spacing(a))
    np.testing.assert_allclose(np.add.reduce(u), 1.5)
    x = tf.tensor(a, requires_grad=True)
    assert np.arctan(x).requires_grad  # tenferro has arctan now (issue 22): dispatched, tracked
    assert np.cosh(x).requires_grad and np.hypot(x, a).requires_grad  # and cosh, hypot
    calls = {
        "spacing": lambda: np.spacing(x),
        "heaviside": lambda: np.heaviside(x, a),
        "exp with dtype=": lambda: np.exp(x, dtype=np.float64),
        "add.reduce": lambda: np.add.reduce(x),
        "maximum.accumulate": lambda: np.maximum.accumulate(x),
    }
    for what, call in calls.items():
        with pytest.raises(TypeError, match="tracked for differentiation"):
            call()
        assert x.grad is None, what
    with tf.no_grad():
        np.testing.assert_allclose(np.spacing(x), np.spacing(a))
    np.testing.assert_allclose(np.spacing(x.detach()), np.spacing(a))
    with pytest.raises(TypeError, match="numpy.spacing"):
        tf.func.grad(lambda t: tf.sum(tf.asarray(np.spacing(t))))(a)
    # The ufuncs tenferro has stay differentiable: d/dx sum(exp(x)) = exp(x).
    tf.sum(np.exp(x)).backward()
    np.testing.assert_allclose(np.asarray(x.grad), np.exp(a))


# ----------------------------------------------------------------------------------------------
# Scalars, hashing, repr
# ----------------------------------------------------------------------------------------------


def test_scalar_conversions_follow_numpy2() -> None:
    with pytest.raises(TypeError):
        float(tf.tensor([1.0]))
    with pytest.raises(TypeError):
        int(tf.tensor([[3]]))
    with pytest.raises(TypeError):
        complex(tf.tensor([1j]))
    assert float(tf.tensor(2.5)) == 2.5
    assert int(tf.tensor(7)) == 7
    assert complex(tf.tensor(1 + 2j)) == 1 + 2j
    with pytest.raises(ValueError):
        bool(tf.tensor([1.0, 2.0]))
    assert bool(tf.tensor([0.0])) is False
    assert bool(tf.tensor(3)) is True
    assert operator.index(tf.tensor(3)) == 3
    assert operator.index(tf.tensor(np.int32(-4))) == -4
    with pytest.raises(TypeError):
        operator.index(tf.tensor(3.0))
    assert [10, 20, 30][tf.tensor(1)] == 20
    assert tf.tensor(2.5).item() == 2.5
    assert tf.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    np.testing.assert_array_equal(tf.tensor([1.0, 2.0]).numpy(), [1.0, 2.0])


def test_hash_is_identity_and_eq_is_elementwise() -> None:
    t = tf.tensor([1.0, 2.0])
    u = tf.tensor([1.0, 2.0])
    assert hash(t) == hash(t)
    d = {t: "t", u: "u"}
    assert d[t] == "t" and d[u] == "u" and len({t, u, t}) == 2
    eq = t == t
    assert isinstance(eq, TENSOR_TYPE)
    assert np.asarray(eq).tolist() == [True, True]
    assert np.asarray(t == tf.tensor([1.0, 3.0])).tolist() == [True, False]
    assert np.asarray(t != tf.tensor([1.0, 3.0])).tolist() == [False, True]


def test_repr() -> None:
    r = repr(tf.tensor([1.0, 2.0]))
    assert r.startswith("tensor(")
    assert "1." in r and "2." in r
    assert "int32" in repr(tf.tensor(np.array([1, 2], np.int32)))

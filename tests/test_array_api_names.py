"""The Array API namespace basics and the NumPy/standard names composed from primitives
(issue 22, first part): namespace information, ``finfo``/``iinfo``, constants, and each new
function against NumPy (hypothesis: zero-size and rank-0 shapes, float64/float32/complex128/
int64/bool where meaningful), its derivatives against finite differences
(``tf.testing.check_grads``), one ``tf.jit`` run per function, and typed errors naming the
function."""

from __future__ import annotations

import math
import warnings
from typing import Any
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tenferro as tf
from tenferro.errors import ConcretizationError, DTypeError, ShapeError
from tenferro.testing import check_grads

SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
NONZERO_RANK = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4)


def floats(dtype: Any = np.float64, shape: Any = SHAPES, **kw: Any) -> st.SearchStrategy:
    return hnp.arrays(
        np.dtype(dtype), shape, elements=st.floats(width=np.dtype(dtype).itemsize * 8, **kw)
    )


def ints(shape: Any = SHAPES) -> st.SearchStrategy:
    return hnp.arrays(np.int64, shape, elements=st.integers(-50, 50))


def bools(shape: Any = SHAPES) -> st.SearchStrategy:
    return hnp.arrays(np.bool_, shape)


def complexes(shape: Any = SHAPES) -> st.SearchStrategy:
    return hnp.arrays(
        np.complex128,
        shape,
        elements=st.complex_numbers(max_magnitude=1e6, allow_nan=False, allow_infinity=False),
    )


def same(got: Any, want: np.ndarray) -> None:
    """Equal type, shape, dtype and values (NaN equal to NaN)."""
    assert isinstance(got, tf.Tensor)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(np.asarray(got), want)


def within_ulps(got: Any, want: np.ndarray, ulps: float, *, signed_zeros: bool = True) -> None:
    """``got`` within ``ulps`` units in the last place of ``want`` (NaN and infinities at the
    same places; the sign of zero results equal)."""
    want = np.asarray(want)
    g = np.asarray(got)
    assert g.shape == want.shape and g.dtype == want.dtype, (
        g.shape,
        g.dtype,
        want.shape,
        want.dtype,
    )
    np.testing.assert_array_equal(np.isnan(g), np.isnan(want))
    finite = np.isfinite(want)
    np.testing.assert_array_equal(g[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    err = np.abs(g[finite].astype(np.float64) - want[finite]) / np.spacing(
        np.abs(want[finite]).astype(want.dtype)
    ).astype(np.float64)
    assert err.size == 0 or err.max() <= ulps, (
        err.max(),
        g[finite][err.argmax()],
        want[finite][err.argmax()],
    )
    if signed_zeros:
        zero = want == 0
        np.testing.assert_array_equal(np.signbit(g[zero]), np.signbit(want[zero]))


# ----------------------------------------------------------------------------------------------
# Namespace information
# ----------------------------------------------------------------------------------------------

SEVEN = ("bool", "int32", "int64", "float32", "float64", "complex64", "complex128")


def test_version_and_namespace() -> None:
    assert tf.__array_api_version__ == "2024.12"
    x = tf.asarray([1.0])
    assert x.__array_namespace__() is tf
    assert x.__array_namespace__(api_version="2024.12") is tf
    assert x.__array_namespace__(api_version="2023.12") is tf
    with pytest.raises(ValueError, match="__array_namespace__.*'2099.01'"):
        x.__array_namespace__(api_version="2099.01")


@pytest.mark.parametrize(
    "kind, names",
    [
        (None, SEVEN),
        ("bool", ("bool",)),
        ("signed integer", ("int32", "int64")),
        ("unsigned integer", ()),
        ("integral", ("int32", "int64")),
        ("real floating", ("float32", "float64")),
        ("complex floating", ("complex64", "complex128")),
        ("numeric", SEVEN[1:]),
        (("bool", "real floating"), ("bool", "float32", "float64")),
    ],
)
def test_info_dtypes_by_kind(kind: Any, names: tuple[str, ...]) -> None:
    got = tf.__array_namespace_info__().dtypes(kind=kind)
    assert got == {n: np.dtype(n) for n in names}
    for n in names:
        assert tf.isdtype(np.dtype(n), kind) if kind is not None else True


def test_info_defaults_devices_capabilities() -> None:
    info = tf.__array_namespace_info__()
    assert info.default_device() == "cpu" and info.devices() == ["cpu"]
    assert info.default_dtypes() == {
        "real floating": tf.float64,
        "complex floating": tf.complex128,
        "integral": tf.int64,
        "indexing": tf.int64,
    }
    assert info.default_dtypes(device="cpu") == info.default_dtypes()
    caps = info.capabilities()
    assert set(caps) == {"boolean indexing", "data-dependent shapes", "max dimensions"}
    assert tf.asarray([1.0]).device == info.default_device()
    with pytest.raises(ValueError, match="dtypes: unsupported device 'gpu'"):
        info.dtypes(device="gpu")
    with pytest.raises(ValueError, match="dtypes: unknown dtype kind 'floating'"):
        info.dtypes(kind="floating")


@pytest.mark.parametrize("name", ["float32", "float64", "complex64", "complex128"])
def test_finfo_matches_numpy(name: str) -> None:
    want = np.finfo(np.dtype(name))
    for arg in (np.dtype(name), name, tf.zeros((2,), dtype=name)):
        got = tf.finfo(arg)
        for attr in ("eps", "max", "min", "smallest_normal"):
            value = getattr(got, attr)
            assert type(value) is float and value == float(getattr(want, attr)), attr
        assert got.bits == want.bits and got.dtype == want.dtype


@pytest.mark.parametrize("name", ["int32", "int64"])
def test_iinfo_matches_numpy(name: str) -> None:
    want = np.iinfo(np.dtype(name))
    for arg in (np.dtype(name), tf.zeros((), dtype=name)):
        got = tf.iinfo(arg)
        assert (got.bits, got.min, got.max, got.dtype) == (
            want.bits,
            want.min,
            want.max,
            np.dtype(name),
        )
        assert type(got.max) is int


def test_info_errors() -> None:
    with pytest.raises(DTypeError, match="finfo: expected a floating-point dtype, got int32"):
        tf.finfo(tf.int32)
    with pytest.raises(DTypeError, match="iinfo: expected an integer dtype, got float64"):
        tf.iinfo(tf.float64)
    with pytest.raises(DTypeError, match="finfo: unsupported dtype float16"):
        tf.finfo(np.float16)
    with pytest.raises(DTypeError, match="iinfo: unsupported dtype uint8"):
        tf.iinfo(np.uint8)
    with pytest.raises(TypeError, match="isdtype: expected a dtype, got a tensor"):
        tf.isdtype(tf.asarray([1]), "integral")


def test_constants_and_dtype_aliases() -> None:
    assert (tf.e, tf.pi, tf.inf) == (math.e, math.pi, math.inf) and math.isnan(tf.nan)
    assert tf.newaxis is None and tf.asarray([1, 2])[:, tf.newaxis].shape == (2, 1)
    assert tf.bool is np.dtype("bool") and tf.bool_ is tf.bool
    assert tf.float64 is np.dtype("float64") and tf.zeros((1,), dtype=tf.bool).dtype == np.bool_


# ----------------------------------------------------------------------------------------------
# Element-wise compositions against NumPy
# ----------------------------------------------------------------------------------------------

UNARY = ["arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "log2", "log10"]
ALIASES = {
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "atan2": "arctan2",
    "pow": "power",
}


@pytest.mark.parametrize("alias, name", sorted(ALIASES.items()))
def test_alias_pairs(alias: str, name: str) -> None:
    assert getattr(tf, alias) is getattr(tf, name)
    assert alias in tf.__all__ and name in tf.__all__


@pytest.mark.parametrize("name", UNARY)
@given(x=floats(np.float64))
def test_unary_float64_within_2_ulp_of_numpy(name: str, x: np.ndarray) -> None:
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x)
    within_ulps(getattr(tf, name)(tf.asarray(x)), want, 2)


@pytest.mark.parametrize("name", UNARY)
@given(x=floats(np.float32))
def test_unary_float32_within_1_ulp_of_correct_rounding(name: str, x: np.ndarray) -> None:
    # Computed in float64 and rounded: compared with NumPy's float64 result rounded to float32
    # (NumPy's own float32 loops are up to a few ulp off).
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x.astype(np.float64)).astype(np.float32)
    within_ulps(getattr(tf, name)(tf.asarray(x)), want, 1)


@pytest.mark.parametrize("name", UNARY)
@given(x=st.one_of(ints(), bools()))
def test_unary_int_and_bool_inputs_in_float64(name: str, x: np.ndarray) -> None:
    # float64 for both (NumPy's loops give float16 for bool; tenferro has no float16).
    with np.errstate(all="ignore"):
        want = getattr(np, name)(x.astype(np.float64) if x.dtype == np.bool_ else x)
    within_ulps(getattr(tf, name)(tf.asarray(x)), want, 2)


SPECIAL = np.array(
    [
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.0,
        -1.0,
        2.0,
        -2.0,
        1e-300,
        -1e-300,
        5e-324,
        1e300,
        -1e300,
        np.inf,
        -np.inf,
        np.nan,
        2.0**28,
        2.0**28 + 2.0**-24,
        1e-8,
        1 - 2**-53,
    ]
)


@pytest.mark.parametrize("name", UNARY)
def test_unary_special_values(name: str) -> None:
    with np.errstate(all="ignore"):
        want = getattr(np, name)(SPECIAL)
    within_ulps(getattr(tf, name)(tf.asarray(SPECIAL)), want, 2)


@pytest.mark.parametrize("name", ["log2", "log10"])
def test_log_base_exact_at_powers(name: str) -> None:
    base = 2.0 if name == "log2" else 10.0
    k = np.arange(-1074, 1024) if base == 2.0 else np.arange(-307, 309)
    x = base ** k.astype(np.float64)
    same(getattr(tf, name)(tf.asarray(x)), getattr(np, name)(x))
    np.testing.assert_array_equal(
        np.asarray(getattr(tf, name)(tf.asarray(x))), k.astype(np.float64)
    )
    k32 = np.arange(-37, 38) if base == 10.0 else np.arange(-149, 128)
    x32 = (base ** k32.astype(np.float64)).astype(np.float32)
    exact = np.float32(base) ** k32.astype(np.float32) == x32
    got = np.asarray(getattr(tf, name)(tf.asarray(x32)))
    np.testing.assert_array_equal(got[exact], k32[exact].astype(np.float32))


@pytest.mark.parametrize("name", ["log2", "log10"])
@given(z=complexes())
def test_log_base_complex(name: str, z: np.ndarray) -> None:
    with np.errstate(all="ignore"):
        want = getattr(np, name)(z)
    got = np.asarray(getattr(tf, name)(tf.asarray(z)))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)


@pytest.mark.parametrize("name", ["arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh"])
def test_inverse_trig_accepts_complex(name: str) -> None:
    # Complex inputs take the principal branch (tests/test_complex_special.py has the details).
    z = np.array([0.5j, 0.5 - 2j])
    np.testing.assert_allclose(
        np.asarray(getattr(tf, name)(tf.asarray(z))), getattr(np, name)(z), rtol=1e-14
    )


@given(data=st.data())
def test_arctan2_broadcast_within_1_ulp(data: st.DataObject) -> None:
    shapes = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=2, min_side=0, max_side=3)
    ).input_shapes
    dt = data.draw(st.sampled_from([np.float64, np.float32]))
    y, x = (data.draw(floats(dt, s)) for s in shapes)
    with np.errstate(all="ignore"):
        want = np.arctan2(y.astype(np.float64), x.astype(np.float64)).astype(dt)
    within_ulps(tf.arctan2(tf.asarray(y), tf.asarray(x)), want, 1)


def test_arctan2_special_values_exact() -> None:
    sp = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e308, -1e308, 5e-324, -5e-324])
    Y, X = np.meshgrid(sp, sp)
    within_ulps(tf.arctan2(Y, X), np.arctan2(Y, X), 0)
    same(tf.arctan2(tf.asarray([1, -1]), 0), np.arctan2([1, -1], 0))  # ints in float64
    with pytest.raises(DTypeError, match="arctan2: complex inputs are not supported"):
        tf.arctan2(tf.asarray([1j]), 1.0)
    with pytest.raises(ShapeError, match="arctan2: operands could not be broadcast"):
        tf.arctan2(tf.zeros((2,)), tf.zeros((3,)))


@given(
    x=st.one_of(floats(np.float64, allow_nan=True), ints(), bools(), complexes()), data=st.data()
)
def test_isclose_and_allclose_match_numpy(x: np.ndarray, data: st.DataObject) -> None:
    kind = x.dtype
    y = data.draw(
        hnp.arrays(
            kind,
            x.shape,
            elements=hnp.from_dtype(kind, **({"max_magnitude": 1e6} if kind.kind == "c" else {})),
        )
    )
    y = np.where(data.draw(hnp.arrays(np.bool_, x.shape)), x, y)  # some exactly equal pairs
    rtol = data.draw(st.sampled_from([1e-5, 0.1, 0.0]))
    atol = data.draw(st.sampled_from([1e-8, 1.0, 0.0]))
    equal_nan = data.draw(st.booleans())
    with np.errstate(all="ignore"):
        want = np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)
        want_all = bool(np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan))
    same(
        tf.isclose(tf.asarray(x), tf.asarray(y), rtol=rtol, atol=atol, equal_nan=equal_nan),
        np.asarray(want),
    )
    got_all = tf.allclose(tf.asarray(x), y, rtol=rtol, atol=atol, equal_nan=equal_nan)
    assert type(got_all) is bool and got_all == want_all


def test_isclose_python_scalars_and_infinities() -> None:
    x = np.array([1.0, np.inf, -np.inf, np.nan, 1e10])
    for b in (1.0, np.inf, 1, True):
        same(tf.isclose(tf.asarray(x), b), np.isclose(x, b))
    same(
        tf.isclose(tf.asarray(np.float32([1.0, 1.00001])), 1.0),
        np.isclose(np.float32([1.0, 1.00001]), 1.0),
    )


@given(re=floats(np.float64), data=st.data())
def test_complex_is_re_plus_1j_im_as_numpy(re: np.ndarray, data: st.DataObject) -> None:
    im = data.draw(floats(np.float64, re.shape))
    with np.errstate(all="ignore"):
        want = re + 1j * im
    got = tf.complex(tf.asarray(re), tf.asarray(im))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got).real, want.real)
    np.testing.assert_array_equal(np.asarray(got).imag, want.imag)


def test_complex_dtypes_and_errors() -> None:
    assert tf.complex(tf.asarray(np.float32([1])), 2.0).dtype == np.complex64
    assert tf.complex(tf.asarray([1]), tf.asarray([2])).dtype == np.complex128
    assert tf.complex(1.0, 2.0).tolist() == 1 + 2j
    assert "complex" not in tf.__all__  # a star import must not shadow the builtin
    with pytest.raises(DTypeError, match="complex: the parts must be real"):
        tf.complex(tf.asarray([1j]), 1.0)


# ----------------------------------------------------------------------------------------------
# Reductions
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["var", "std"])
@given(
    x=st.one_of(floats(np.float64, min_value=-1e6, max_value=1e6), ints(), bools(), complexes()),
    data=st.data(),
)
def test_var_std_match_numpy(name: str, x: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(
        st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none())
    )
    ddof = data.draw(st.sampled_from([0, 1, 2.5]))
    keepdims = data.draw(st.booleans())
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy warns for N - ddof <= 0
        want = np.asarray(getattr(np, name)(x, axis=axis, ddof=ddof, keepdims=keepdims))
    got = getattr(tf, name)(tf.asarray(x), axis=axis, ddof=ddof, keepdims=keepdims)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(
        np.asarray(got), want, rtol=1e-12, atol=1e-12 * (1 + np.abs(x).max(initial=0)) ** 2
    )
    got_c = getattr(tf, name)(tf.asarray(x), axis=axis, correction=ddof, keepdims=keepdims)
    np.testing.assert_array_equal(np.asarray(got_c), np.asarray(got))


def test_var_float32_and_errors() -> None:
    x = np.float32([[1, 2], [3, 5]])
    same(tf.var(tf.asarray(x), axis=0), np.var(x, axis=0))
    assert tf.std(tf.asarray(np.complex64([1j, 1]))).dtype == np.float32
    with pytest.raises(
        ValueError, match="var: ddof and correction can't be provided simultaneously"
    ):
        tf.var(tf.asarray(x), ddof=1, correction=1)
    with pytest.raises(tf.errors.AxisError):
        tf.std(tf.asarray(x), axis=2)


@given(x=st.one_of(floats(np.float64), ints(), bools(), complexes()), data=st.data())
def test_count_nonzero_matches_numpy(x: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(
        st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none())
    )
    keepdims = data.draw(st.booleans())
    want = np.asarray(np.count_nonzero(x, axis=axis, keepdims=keepdims)).astype(np.int64)
    same(tf.count_nonzero(tf.asarray(x), axis=axis, keepdims=keepdims), want)


# ----------------------------------------------------------------------------------------------
# Creation
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "full_like"])
@given(
    x=st.one_of(floats(np.float64), ints(), bools(), complexes()),
    dtype=st.sampled_from([None, *SEVEN]),
)
def test_like_functions_match_numpy(name: str, x: np.ndarray, dtype: Any) -> None:
    args = (7,) if name == "full_like" else ()
    want = getattr(np, name)(x, *args, dtype=dtype)
    got = getattr(tf, name)(tf.asarray(x), *args, dtype=dtype)
    assert got.shape == want.shape and got.dtype == want.dtype
    if name != "empty_like":
        np.testing.assert_array_equal(np.asarray(got), want)


def test_like_shape_keyword_device_and_runtime() -> None:
    rt = tf.Runtime()
    x = rt.constant(np.ones((2, 3)))
    z = tf.zeros_like(x, shape=(4,))
    assert z.shape == (4,) and z.runtime.id == rt.id
    same(tf.full_like(x, 1.5, dtype="int64"), np.full((2, 3), 1))
    with pytest.raises(ValueError, match="ones_like: unsupported device 'gpu'"):
        tf.ones_like(x, device="gpu")


def test_arange_keywords_array_copy_and_spellings() -> None:
    same(tf.arange(0, 10, step=2), np.arange(0, 10, 2))
    same(tf.arange(5, stop=8), np.arange(5, 8))
    same(tf.arange(1.0, 2.0, 0.25), np.arange(1.0, 2.0, 0.25))
    same(tf.arange(3, dtype="float32"), np.arange(3, dtype=np.float32))
    same(tf.arange(10, 0, -3), np.arange(10, 0, -3))
    with pytest.raises(ZeroDivisionError, match="arange"):
        tf.arange(0, 10, 0)
    a = np.arange(3.0)
    t = tf.array(a)
    a[0] = 7.0
    assert t.tolist() == [0.0, 1.0, 2.0]  # copies
    same(tf.concat([tf.asarray([[1]]), tf.asarray([[2]])], axis=1), np.array([[1, 2]]))
    same(tf.permute_dims(tf.zeros((1, 2, 3)), (2, 0, 1)), np.zeros((3, 1, 2)))
    same(tf.pow(tf.asarray([2, 3]), 2), np.array([4, 9]))


# ----------------------------------------------------------------------------------------------
# Rearranging
# ----------------------------------------------------------------------------------------------

ANY = st.one_of(floats(np.float64), ints(), bools(), complexes())


@given(
    vecs=st.lists(hnp.arrays(np.float64, st.integers(0, 3)), min_size=0, max_size=3),
    indexing=st.sampled_from(["xy", "ij"]),
    sparse=st.booleans(),
)
def test_meshgrid_matches_numpy(vecs: list[np.ndarray], indexing: str, sparse: bool) -> None:
    want = np.meshgrid(*vecs, indexing=indexing, sparse=sparse)
    got = tf.meshgrid(*[tf.asarray(v) for v in vecs], indexing=indexing, sparse=sparse)
    assert isinstance(got, list) and len(got) == len(want)  # the Array API's list (NumPy: tuple)
    for g, w in zip(got, want):
        same(g, w)


@given(x=ANY, data=st.data())
def test_repeat_matches_numpy(x: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(
        st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1) if x.ndim else st.none())
    )
    n = x.size if axis is None else x.shape[axis]
    reps = data.draw(
        st.one_of(st.integers(0, 3), st.lists(st.integers(0, 3), min_size=n, max_size=n))
    )
    same(tf.repeat(tf.asarray(x), reps, axis=axis), np.repeat(x, reps, axis=axis))


@given(x=ANY, data=st.data())
def test_roll_matches_numpy(x: np.ndarray, data: st.DataObject) -> None:
    if x.ndim == 0 or data.draw(st.booleans()):
        shift, axis = data.draw(st.integers(-7, 7)), None
    else:
        axis = tuple(data.draw(st.lists(st.integers(-x.ndim, x.ndim - 1), min_size=1, max_size=3)))
        shift = tuple(
            data.draw(st.lists(st.integers(-7, 7), min_size=len(axis), max_size=len(axis)))
        )
    same(tf.roll(tf.asarray(x), shift, axis=axis), np.roll(x, shift, axis=axis))


@given(
    x=ANY, reps=st.one_of(st.integers(0, 3), st.lists(st.integers(0, 3), min_size=0, max_size=4))
)
def test_tile_matches_numpy(x: np.ndarray, reps: Any) -> None:
    same(tf.tile(tf.asarray(x), reps), np.tile(x, reps))


@given(
    x=st.one_of(
        floats(np.float64, NONZERO_RANK, allow_nan=False),
        ints(NONZERO_RANK),
        bools(NONZERO_RANK),
        complexes(NONZERO_RANK),
    ),
    data=st.data(),
)
def test_diff_matches_numpy(x: np.ndarray, data: st.DataObject) -> None:
    n = data.draw(st.integers(0, 3))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    kw = {}
    if x.dtype.kind != "b" and data.draw(st.booleans()):
        kw["prepend"] = 0
    if x.dtype.kind != "b" and data.draw(st.booleans()):
        kw["append"] = np.ones(
            tuple(2 if d == axis % x.ndim else s for d, s in enumerate(x.shape)), x.dtype
        )
    want = np.diff(x, n=n, axis=axis, **kw)
    same(tf.diff(tf.asarray(x), n=n, axis=axis, **kw), want)


@given(x=st.one_of(floats(np.float64, NONZERO_RANK), ints(NONZERO_RANK)), data=st.data())
def test_split_matches_numpy(x: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[axis]
    if data.draw(st.booleans()):
        divisors = [d for d in range(1, n + 1) if n % d == 0] or [1]
        arg: Any = data.draw(st.sampled_from(divisors))
    else:
        arg = sorted(data.draw(st.lists(st.integers(0, n + 2), max_size=4)))
    want = np.split(x, arg, axis=axis)
    got = tf.split(tf.asarray(x), arg, axis=axis)
    assert isinstance(got, list) and len(got) == len(want)
    for g, w in zip(got, want):
        same(g, w)


@given(
    x=st.one_of(floats(np.float64, NONZERO_RANK), ints(NONZERO_RANK), complexes(NONZERO_RANK)),
    data=st.data(),
)
def test_take_along_axis_matches_numpy(x: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[axis]
    shape = [data.draw(st.sampled_from([1, s])) for s in x.shape]
    shape[axis] = data.draw(st.integers(0, 3)) if n else 0
    idx = data.draw(
        hnp.arrays(np.int64, tuple(shape), elements=st.integers(-n, n - 1) if n else st.just(0))
    )
    same(tf.take_along_axis(tf.asarray(x), idx, axis=axis), np.take_along_axis(x, idx, axis=axis))


def test_take_along_axis_none_and_errors() -> None:
    x = np.arange(6.0).reshape(2, 3)
    same(
        tf.take_along_axis(tf.asarray(x), np.array([5, 0]), axis=None),
        np.take_along_axis(x, np.array([5, 0]), axis=None),
    )
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 1 with size 3"):
        tf.take_along_axis(tf.asarray(x), np.array([[3]]), axis=1)
    with pytest.raises(
        ValueError,
        match="take_along_axis: `indices` and `arr` must have the same number of dimensions",
    ):
        tf.take_along_axis(tf.asarray(x), np.array([1]), axis=1)
    with pytest.raises(TypeError, match="take_along_axis: indices must be integers"):
        tf.take_along_axis(tf.asarray(x), np.array([[1.0]]), axis=1)


@given(a=ANY, b=ANY)
def test_kron_and_outer_match_numpy(a: np.ndarray, b: np.ndarray) -> None:
    if a.dtype.kind == "b" and b.dtype.kind == "b":
        return  # NumPy multiplies bools as logical and; tenferro too, checked below on ints
    for got, want in (
        (tf.kron(tf.asarray(a), tf.asarray(b)), np.kron(a, b)),
        (tf.outer(tf.asarray(a), tf.asarray(b)), np.outer(a, b)),
    ):
        if want.dtype.kind == "c":  # complex products may round differently (FMA): 1 ulp
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-15, atol=0)
        else:
            same(got, want)


def test_kron_outer_bool() -> None:
    a = np.array([True, False])
    same(tf.outer(tf.asarray(a), tf.asarray(a)), np.outer(a, a))
    same(tf.kron(tf.asarray(a), tf.asarray(a)), np.kron(a, a))


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: tf.repeat(tf.asarray([1, 2]), -1), ValueError, "repeat: negative repeats"),
        (
            lambda: tf.repeat(tf.asarray([1, 2]), [1, 2, 3]),
            ValueError,
            "repeat: operands could not be broadcast",
        ),
        (lambda: tf.repeat(tf.asarray([1, 2]), 1.5), TypeError, "repeat: indices must be integers"),
        (lambda: tf.tile(tf.asarray([1]), (-1,)), ValueError, "tile: negative dimensions"),
        (
            lambda: tf.split(tf.arange(5), 2),
            ValueError,
            "split: array split does not result in an equal division",
        ),
        (
            lambda: tf.split(tf.arange(5), 0),
            ValueError,
            "split: number sections must be larger than 0",
        ),
        (lambda: tf.diff(tf.asarray([1, 2]), n=-1), ValueError, "diff: order must be non-negative"),
        (
            lambda: tf.diff(tf.asarray(1.0)),
            ValueError,
            "diff: diff requires input that is at least one dimensional",
        ),
        (
            lambda: tf.roll(tf.asarray([1, 2]), (1, 2), axis=(0, 0, 0)),
            ValueError,
            "roll: 'shift' and 'axis'",
        ),
        (lambda: tf.roll(tf.asarray([1, 2]), 1, axis=1), tf.errors.AxisError, "roll"),
        (
            lambda: tf.meshgrid(tf.asarray([1]), indexing="yx"),
            ValueError,
            "meshgrid: indexing must be",
        ),
        (lambda: tf.permute_dims(tf.zeros((2, 3)), (0,)), ValueError, "transpose: axes"),
        (lambda: tf.zeros_like(tf.asarray([1]), dtype="float16"), DTypeError, "float16"),
    ],
)
def test_typed_errors_name_the_function(call: Callable[[], Any], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        call()


# ----------------------------------------------------------------------------------------------
# Derivatives and tf.jit
# ----------------------------------------------------------------------------------------------

_R = np.random.default_rng(7)
_U = _R.uniform(-0.9, 0.9, (3,))
_P = _R.uniform(0.5, 3.0, (3,))
_M = _R.normal(size=(3, 2))
_TAKE = np.array([[1, 1], [0, 1], [1, 0]])

# name -> (function of tensors, primal points); each differentiable where the maths is.
DIFFERENTIABLE: dict[str, tuple[Callable[..., Any], list[Any]]] = {
    "arcsin": (tf.arcsin, [_U]),
    "arccos": (tf.arccos, [_U]),
    "arctan": (tf.arctan, [3 * _R.normal(size=3)]),
    "arctan2": (tf.arctan2, [_R.normal(size=3), _R.normal(size=3)]),
    "arctan2 on the y = 0 axis": (
        tf.arctan2,
        [np.zeros(3), np.array([1.5, 2.0, 0.5])],
    ),  # x < 0: the cut
    "arcsinh": (tf.arcsinh, [np.array([-3.0, 0.0, 0.4, 2.0**29])]),
    "arccosh": (tf.arccosh, [np.array([1.5, 3.0, 2.0**29])]),
    "arctanh": (tf.arctanh, [np.array([-0.5, 0.0, 0.9])]),
    "log2": (tf.log2, [np.array([0.3, 4.0, 1024.0])]),
    "log10": (tf.log10, [np.array([0.3, 100.0, 1000.0])]),
    "log10 complex": (tf.log10, [_P + 1j * _U]),
    "var": (lambda x: tf.var(x, axis=0, ddof=1), [_M]),
    "var complex": (lambda x: tf.var(x, axis=1), [_M + 1j * _M[::-1]]),
    "std": (lambda x: tf.std(x, keepdims=True), [_M]),
    "meshgrid": (lambda a, b: tf.meshgrid(a, b)[0] * tf.meshgrid(a, b)[1], [_U, _P]),
    "repeat": (lambda x: tf.repeat(x, [1, 0, 2]), [_U]),
    "roll": (lambda x: tf.roll(x, (1, -1), (0, 1)), [_M]),
    "tile": (lambda x: tf.tile(x, (2, 3)), [_U]),
    "diff": (lambda x: tf.diff(x, n=2, prepend=1.0), [_U]),
    "split": (lambda x: tf.split(x, [1])[1] * 2.0, [_U]),
    "take_along_axis": (lambda x: tf.take_along_axis(x, _TAKE, 1), [_M]),
    "kron": (tf.kron, [_U, _M]),
    "outer": (tf.outer, [_U, _P]),
    "complex": (tf.complex, [_U, _P]),
    "full_like": (lambda v: tf.full_like(_U, v), [1.5]),
    "zeros_like": (lambda x: tf.zeros_like(x) + x * x, [_U]),
    "ones_like": (lambda x: tf.ones_like(x) * x, [_U]),
    "concat": (lambda a, b: tf.concat([a, b]), [_U, _P]),
    "permute_dims": (lambda x: tf.permute_dims(x, (1, 0)), [_M]),
    "pow": (tf.pow, [_P, _U]),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_derivatives_against_finite_differences(name: str) -> None:
    f, args = DIFFERENTIABLE[name]
    check_grads(f, args, order=2)


def test_derivative_values_at_special_points() -> None:
    rt = tf.Runtime()
    x = rt.variable(np.array([0.0, 0.0, 8.0, 1000.0]))
    g = rt.grad(
        tf.arcsinh(x[:1]).sum()
        + tf.arctanh(x[1:2]).sum()
        + tf.log2(x[2:3]).sum()
        + tf.log10(x[3:]).sum(),
        [x],
    )[0]
    np.testing.assert_allclose(
        np.asarray(g), [1.0, 1.0, 1 / (8 * math.log(2)), 1 / (1000 * math.log(10))], rtol=1e-15
    )
    y, xx = rt.variable(np.array([0.0, -0.0])), rt.variable(np.array([-2.0, 4.0]))
    gy, gx = rt.grad(tf.arctan2(y, xx).sum(), [y, xx])
    np.testing.assert_allclose(np.asarray(gy), [-0.5, 0.25])
    np.testing.assert_array_equal(np.asarray(gx), [0.0, 0.0])


NOT_DIFFERENTIABLE: dict[str, tuple[Callable[..., Any], list[Any]]] = {
    "isclose": (lambda a, b: tf.isclose(a, b), [_U, _U + 1e-9]),
    "count_nonzero": (lambda x: tf.count_nonzero(x, axis=0), [_M]),
    "empty_like": (lambda x: tf.empty_like(x), [_M]),
    "take_along_axis (traced indices)": (lambda x, i: tf.take_along_axis(x, i, 1), [_M, _TAKE - 2]),
}


@pytest.mark.parametrize("name", sorted({**DIFFERENTIABLE, **NOT_DIFFERENTIABLE}))
def test_traces_under_jit(name: str) -> None:
    f, args = {**DIFFERENTIABLE, **NOT_DIFFERENTIABLE}[name]
    tensors = [tf.asarray(a) for a in args]
    eager = f(*tensors)
    compiled = tf.jit(f)
    for _ in range(2):  # the trace, then the cached program
        got = compiled(*tensors)
        assert got.dtype == eager.dtype and got.shape == eager.shape
        np.testing.assert_array_equal(np.asarray(got), np.asarray(eager))


def test_take_along_axis_traced_indices_wrap_negatives() -> None:
    x = np.arange(6.0).reshape(2, 3)
    idx = np.array([[-1, 0], [2, -3]])
    got = tf.jit(lambda a, i: tf.take_along_axis(a, i, 1))(tf.asarray(x), tf.asarray(idx))
    same(got, np.take_along_axis(x, idx, 1))


def test_allclose_needs_values_under_jit() -> None:
    with pytest.raises(ConcretizationError):
        tf.jit(lambda a: tf.asarray(1.0) if tf.allclose(a, a) else a)(tf.asarray([1.0]))
    assert tf.allclose([1.0, 2.0], [1.0, 2.0 + 1e-9]) is True


def test_ndarray_operands_join_a_tensors_non_default_runtime() -> None:
    """An ndarray beside a tensor of a non-default runtime becomes a constant of that runtime
    (python-api.md), in the joining and product functions too (they raised
    ContextMismatchError when the ndarray became a default-runtime constant first)."""
    rt = tf.Runtime()
    a = np.arange(3.0)
    v = rt.constant(np.array([4.0, 5.0, 6.0]))
    vv = np.asarray(v)
    cases = [
        (lambda: np.stack([a, v]), np.stack([a, vv])),
        (lambda: tf.stack([a, v]), np.stack([a, vv])),
        (lambda: tf.stack([a, v], axis=1, dtype="float32"), np.stack([a, vv], 1, dtype="float32")),
        (lambda: tf.concatenate([a, v], dtype="complex128"), np.concatenate([a, vv]) + 0j),
        (lambda: tf.kron(a, v), np.kron(a, vv)),
        (lambda: tf.kron(v, a), np.kron(vv, a)),
        (lambda: tf.outer(a, v), np.outer(a, vv)),
        (lambda: tf.diff(v, prepend=a), np.diff(vv, prepend=a)),
        (lambda: tf.diff(a, append=v), np.diff(a, append=vv)),
        (lambda: tf.diff(a, prepend=v[:1]), np.diff(a, prepend=vv[:1])),
    ]
    for f, want in cases:
        got = f()
        assert isinstance(got, tf.Tensor) and got.runtime.id == rt.id
        same(got, want)

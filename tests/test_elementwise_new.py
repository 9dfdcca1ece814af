"""The elementwise functions of issue 22: ``floor``/``ceil``/``trunc``, ``sinh``/``cosh``, the
bitwise functions and operators (``&``, ``|``, ``^``, ``~``, ``<<``, ``>>``), ``copysign``,
``nextafter``, ``signbit``, ``reciprocal``, ``hypot``, ``logaddexp``, ``cbrt`` and ``exp2``.

Each is compared with NumPy (hypothesis: rank-0 and zero-size shapes, strided views, the dtypes
it admits, special values), its derivatives with finite differences (``check_grads(order=2)``)
where it is differentiable, and its errors are typed and name the function."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tenferro as tf
from tenferro.errors import DTypeError
from tenferro.testing import check_grads

SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
MATRIX = hnp.array_shapes(min_dims=2, max_dims=2, min_side=0, max_side=4)
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
I32, I64 = np.dtype(np.int32), np.dtype(np.int64)

SPECIAL = np.array(
    [
        0.0,
        -0.0,
        np.inf,
        -np.inf,
        np.nan,
        -np.nan,
        1e-310,
        -1e-310,
        1e308,
        -1e308,
        0.5,
        -0.5,
        2.5,
        -2.5,
    ]
)


def float_arrays(dtype: np.dtype, shape: Any = SHAPES, **kw: Any) -> st.SearchStrategy:
    return hnp.arrays(dtype, shape, elements=st.floats(width=dtype.itemsize * 8, **kw))


def int_arrays(
    dtype: np.dtype, shape: Any = SHAPES, lo: int | None = None, hi: int | None = None
) -> st.SearchStrategy:
    info = np.iinfo(dtype)
    return hnp.arrays(
        dtype,
        shape,
        elements=st.integers(info.min if lo is None else lo, info.max if hi is None else hi),
    )


def identical(got: Any, want: Any) -> None:
    """Same shape, dtype, values, NaN places and signs of zeros (bit-for-bit up to NaN payload)."""
    assert isinstance(got, tf.Tensor), type(got)
    want = np.asarray(want)
    g = np.asarray(got)
    assert g.shape == want.shape and g.dtype == want.dtype, (
        g.shape,
        g.dtype,
        want.shape,
        want.dtype,
    )
    np.testing.assert_array_equal(g, want)
    if want.dtype.kind == "f":
        np.testing.assert_array_equal(
            np.signbit(g[~np.isnan(want)]), np.signbit(want[~np.isnan(want)])
        )


def within_ulps(got: Any, want: Any, ulps: float) -> None:
    """``got`` within ``ulps`` units in the last place of ``want``; infinities and NaN at the same
    places, zero results with the same sign."""
    want = np.asarray(want)
    g = np.asarray(got)
    assert g.shape == want.shape and g.dtype == want.dtype, (
        g.shape,
        g.dtype,
        want.shape,
        want.dtype,
    )
    np.testing.assert_array_equal(np.isnan(g), np.isnan(want))
    inf = np.isinf(want)
    np.testing.assert_array_equal(g[inf], want[inf])
    fin = np.isfinite(want)
    err = np.abs(g[fin].astype(np.float64) - want[fin]) / np.spacing(np.abs(want[fin])).astype(
        np.float64
    )
    assert err.size == 0 or err.max() <= ulps, (
        err.max(),
        g[fin][err.argmax()],
        want[fin][err.argmax()],
    )
    zero = want == 0
    np.testing.assert_array_equal(np.signbit(g[zero]), np.signbit(want[zero]))


def views(a: np.ndarray) -> list[tuple[Any, np.ndarray]]:
    """``a`` as a compact tensor and as strided views (transposed, reversed), with NumPy's."""
    t = tf.asarray(a)
    out = [(t, a)]
    if a.ndim >= 2:
        out.append((tf.asarray(np.ascontiguousarray(a.T)).T, a))
    if a.ndim >= 1:
        out.append((tf.asarray(a[::-1].copy())[::-1], a))
    return out


# ----------------------------------------------------------------------------------------------
# floor, ceil, trunc
# ----------------------------------------------------------------------------------------------

ROUNDING = ("floor", "ceil", "trunc")


@pytest.mark.parametrize("name", ROUNDING)
@given(data=st.data())
def test_rounding_matches_numpy(name: str, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from([F32, F64]))
    a = data.draw(float_arrays(dtype, allow_subnormal=True))
    for t, v in views(a):
        identical(getattr(tf, name)(t), getattr(np, name)(v))


@pytest.mark.parametrize("name", ROUNDING)
def test_rounding_special_values_and_integers(name: str) -> None:
    fn, ref = getattr(tf, name), getattr(np, name)
    identical(fn(tf.asarray(SPECIAL)), ref(SPECIAL))
    with np.errstate(over="ignore"):
        s32 = SPECIAL.astype(F32)
    identical(getattr(tf.prim, name)(tf.asarray(s32)), ref(s32))
    big = np.array([2.0**52 + 1, -(2.0**52) - 1, 2.0**60, 4503599627370495.5])
    identical(fn(tf.asarray(big)), ref(big))
    # Integers and bools are returned as they are (Array API; NumPy 2 keeps their dtype).
    for a in (
        np.array([-3, 0, 7], dtype=I32),
        np.array([[-(2**62)], [5]], dtype=I64),
        np.array([True, False]),
    ):
        identical(fn(tf.asarray(a)), ref(a))
        identical(getattr(tf.prim, name)(tf.asarray(a)), a)
    identical(fn(tf.asarray(np.zeros((0, 3)))), np.zeros((0, 3)))


@pytest.mark.parametrize("name", ROUNDING)
def test_rounding_rejects_complex_and_has_zero_derivative(name: str) -> None:
    with pytest.raises(DTypeError, match=name):
        getattr(tf, name)(tf.asarray([1.5 + 2j]))
    with pytest.raises(DTypeError, match=name):
        getattr(tf.prim, name)(tf.asarray([1.5 + 2j]))
    rt = tf.Runtime()
    x = rt.variable(np.array([0.3, -1.7, 2.5]))
    (g,) = rt.grad((getattr(tf, name)(x) * x).sum(), [x])
    np.testing.assert_array_equal(np.asarray(g), getattr(np, name)(np.array([0.3, -1.7, 2.5])))


# ----------------------------------------------------------------------------------------------
# sinh, cosh
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ("sinh", "cosh"))
@given(data=st.data())
def test_hyperbolic_matches_numpy(name: str, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from([F32, F64]))
    a = data.draw(float_arrays(dtype, min_value=-80.0, max_value=80.0))
    for t, v in views(a):
        within_ulps(getattr(tf, name)(t), getattr(np, name)(v), 2)


@pytest.mark.parametrize("name", ("sinh", "cosh"))
def test_hyperbolic_wide_range_integers_and_complex(name: str) -> None:
    fn, ref = getattr(tf, name), getattr(np, name)
    with np.errstate(all="ignore"):
        within_ulps(fn(tf.asarray(SPECIAL)), ref(SPECIAL), 2)
        x = np.array([-710.3, 710.0, 709.0, -1e-300, 1e-5])
        within_ulps(fn(tf.asarray(x)), ref(x), 2)
    same_dtype = fn(tf.asarray(np.array([1, -2], dtype=I32)))
    within_ulps(same_dtype, ref(np.array([1.0, -2.0])), 2)
    rng = np.random.default_rng(0)
    z = rng.normal(size=(3, 4)) * 3 + 1j * rng.normal(size=(3, 4)) * 3
    for t, v in views(z):
        np.testing.assert_allclose(np.asarray(fn(t)), ref(v), rtol=1e-14)
    z64 = z.astype(np.complex64)
    got = fn(tf.asarray(z64))
    assert got.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(got), ref(z64), rtol=2e-6)


def test_hyperbolic_complex_special_values() -> None:
    """C99 Annex G values (the Array API's special cases)."""
    inf, nan = np.inf, np.nan

    def one(fn: Any, z: complex) -> complex:
        return complex(np.asarray(fn(tf.asarray(np.array([z]))))[0])

    s = one(tf.sinh, complex(0.0, inf))
    assert s.real == 0.0 and math.isnan(s.imag)
    assert one(tf.sinh, complex(inf, 0.0)) == complex(inf, 0.0)
    s = one(tf.sinh, complex(inf, inf))
    assert math.isinf(s.real) and math.isnan(s.imag)
    s = one(tf.sinh, complex(nan, 0.0))
    assert math.isnan(s.real) and s.imag == 0.0
    assert one(tf.cosh, complex(0.0, 0.0)) == complex(1.0, 0.0)
    c = one(tf.cosh, complex(0.0, inf))
    assert math.isnan(c.real) and c.imag == 0.0
    assert one(tf.cosh, complex(inf, 0.0)) == complex(inf, 0.0)
    c = one(tf.cosh, complex(inf, nan))
    assert c.real == inf and math.isnan(c.imag)
    c = one(tf.cosh, complex(inf, 1.0))
    assert c == complex(inf * math.cos(1.0), inf * math.sin(1.0))


# ----------------------------------------------------------------------------------------------
# Bitwise functions and operators
# ----------------------------------------------------------------------------------------------

BITWISE = {
    "bitwise_and": (np.bitwise_and, lambda a, b: a & b),
    "bitwise_or": (np.bitwise_or, lambda a, b: a | b),
    "bitwise_xor": (np.bitwise_xor, lambda a, b: a ^ b),
}


@pytest.mark.parametrize("name", sorted(BITWISE))
@given(data=st.data())
def test_bitwise_matches_numpy(name: str, data: st.DataObject) -> None:
    ref, op = BITWISE[name]
    dtype = data.draw(st.sampled_from([I32, I64, np.dtype(bool)]))
    shape = data.draw(MATRIX)
    arrays = hnp.arrays(bool, shape) if dtype.kind == "b" else int_arrays(dtype, shape)
    a, b = data.draw(arrays), data.draw(arrays)
    want = ref(a, b)
    identical(getattr(tf, name)(tf.asarray(a), tf.asarray(b)), want)
    identical(op(tf.asarray(a), tf.asarray(b)), want)
    ta, tb = tf.asarray(np.ascontiguousarray(a.T)).T, tf.asarray(b[::-1].copy())[::-1]  # strided
    identical(op(ta, tb), want)
    identical(getattr(tf, name)(ta[..., :1], tb), ref(a[..., :1], b))  # broadcasting


@given(data=st.data())
def test_invert_matches_numpy(data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from([I32, I64, np.dtype(bool)]))
    a = data.draw(hnp.arrays(bool, SHAPES) if dtype.kind == "b" else int_arrays(dtype))
    for t, v in views(a):
        identical(~t, np.invert(v))
        identical(tf.bitwise_invert(t), np.invert(v))
    assert tf.invert is tf.bitwise_invert and tf.bitwise_not is tf.bitwise_invert


SHIFTS = {
    "bitwise_left_shift": (np.left_shift, lambda a, b: a << b),
    "bitwise_right_shift": (np.right_shift, lambda a, b: a >> b),
}


@pytest.mark.parametrize("name", sorted(SHIFTS))
@given(data=st.data())
def test_shifts_match_numpy_for_every_count(name: str, data: st.DataObject) -> None:
    ref, op = SHIFTS[name]
    dtype = data.draw(st.sampled_from([I32, I64]))
    shape = data.draw(SHAPES)
    a = data.draw(int_arrays(dtype, shape))
    b = data.draw(int_arrays(dtype, shape, -70, 70))  # past the width and negative included
    want = ref(a, b)
    for (ta, _va), (tb, _vb) in zip(views(a), views(b)):
        identical(getattr(tf, name)(ta, tb), want)
        identical(op(ta, tb), want)


def test_shift_edge_counts_as_numpy() -> None:
    for dtype in (I32, I64):
        bits = dtype.itemsize * 8
        x = np.array([1, -1, 3, -8, 8, np.iinfo(dtype).min, np.iinfo(dtype).max], dtype=dtype)
        for n in (0, 1, bits - 1, bits, bits + 1, 100, -1, -3, -bits):
            c = np.full_like(x, n)
            identical(tf.left_shift(tf.asarray(x), tf.asarray(c)), np.left_shift(x, c))
            identical(tf.right_shift(tf.asarray(x), tf.asarray(c)), np.right_shift(x, c))
    assert tf.left_shift(tf.asarray(np.int64(1)), 64).item() == 0
    assert tf.right_shift(tf.asarray(np.int64(-8)), 100).item() == -1


def test_bitwise_operators_with_python_scalars() -> None:
    x32 = tf.asarray(np.array([12, -5, 7], dtype=I32))
    a = np.array([12, -5, 7], dtype=I32)
    for got, want in [
        (x32 & 6, a & 6),
        (6 & x32, 6 & a),
        (x32 | 1, a | 1),
        (1 | x32, 1 | a),
        (x32 ^ -1, a ^ -1),
        (3 ^ x32, 3 ^ a),
        (x32 << 2, a << 2),
        (1 << tf.asarray(np.array([0, 3], dtype=I32)), 1 << np.array([0, 3], dtype=I32)),
        (x32 >> 1, a >> 1),
        (100 >> tf.asarray(np.array([1, 2], dtype=I32)), 100 >> np.array([1, 2], dtype=I32)),
        (x32 & True, a & True),
        (~x32, ~a),
    ]:
        identical(got, want)  # a Python int is weak: the result stays int32
    b = tf.asarray(np.array([True, False]))
    identical(b & True, np.array([True, False]))
    identical(b ^ True, np.array([False, True]))
    identical(~b, np.array([False, True]))
    identical(tf.bitwise_and(b, tf.asarray(np.array([3, 2]))), np.array([1, 0]))  # bool -> int64
    identical(tf.left_shift(b, b), np.array([2, 0]))  # two bools shift as int64 (NumPy: int8)
    x = 5
    x_t = tf.asarray(np.int64(5))
    x_t &= 3  # in-place forms fall back to the operator (tensors are immutable)
    x &= 3
    identical(x_t, np.int64(x))


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda f: tf.bitwise_and(f, 1), "bitwise_and"),
        (lambda f: tf.bitwise_or(f, f), "bitwise_or"),
        (lambda f: tf.bitwise_xor(1, f), "bitwise_xor"),
        (lambda f: tf.bitwise_invert(f), "bitwise_invert"),
        (lambda f: tf.left_shift(f, 1), "bitwise_left_shift"),
        (lambda f: tf.right_shift(f, 1), "bitwise_right_shift"),
        (lambda f: f & 1, "bitwise_and"),
        (lambda f: 1 | f, "bitwise_or"),
        (lambda f: f ^ f, "bitwise_xor"),
        (lambda f: ~f, "bitwise_not"),
        (lambda f: f << 1, "shift_left"),
        (lambda f: 1 >> f, "shift_right_arithmetic"),
        (lambda f: tf.asarray([1, 2]) & 1.5, "bitwise_and"),
    ],
)
def test_bitwise_rejects_floats_with_a_typed_error(call: Any, name: str) -> None:
    for f in (tf.asarray([1.0, 2.0]), tf.asarray([1.0 + 1j])):
        with pytest.raises(DTypeError, match=name):
            call(f)


def test_shifts_reject_bool_primitive_and_bitwise_cuts_the_graph() -> None:
    with pytest.raises(DTypeError, match="shift_left"):
        tf.prim.shift_left(tf.asarray([True]), tf.asarray([True]))
    rt = tf.Runtime()
    x = rt.variable(np.array([1.0, 2.0]))
    i = rt.constant(np.array([3, 5])) & 1
    assert not i.requires_grad
    (g,) = rt.grad((x * tf.astype(i, np.float64)).sum(), [x])
    np.testing.assert_array_equal(np.asarray(g), [1.0, 1.0])


# ----------------------------------------------------------------------------------------------
# copysign, nextafter, signbit
# ----------------------------------------------------------------------------------------------

NEG_NAN = np.copysign(np.nan, -1.0)
SIGNED = np.array(
    [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, NEG_NAN, 5e-324, -5e-324, 1.7e308]
)


def test_copysign_and_signbit_read_the_sign_bit() -> None:
    a, b = np.meshgrid(SIGNED, SIGNED)
    for dtype in (F32, F64):
        with np.errstate(all="ignore"):
            x, y = a.astype(dtype), b.astype(dtype)
        got = tf.copysign(tf.asarray(x), tf.asarray(y))
        identical(got, np.copysign(x, y))
        np.testing.assert_array_equal(
            np.signbit(np.asarray(got)), np.signbit(np.copysign(x, y))
        )  # NaN signs too
        identical(tf.signbit(tf.asarray(x)), np.signbit(x))
        identical(tf.signbit(tf.asarray(x).T), np.signbit(x.T))
    identical(tf.signbit(tf.asarray(np.array([-3, 0, 2]))), np.signbit(np.array([-3, 0, 2])))
    identical(tf.signbit(tf.asarray(np.array([True, False]))), np.array([False, False]))
    identical(
        tf.copysign(tf.asarray(np.array([1, 2])), -1), np.copysign(np.array([1, 2]), -1)
    )  # ints -> float64
    identical(tf.copysign(tf.asarray(np.float32(2.0)), -0.0), np.float32(-2.0))  # weak scalar


@given(data=st.data())
def test_copysign_nextafter_match_numpy(data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from([F32, F64]))
    shape = data.draw(SHAPES)
    a = data.draw(float_arrays(dtype, shape))
    b = data.draw(float_arrays(dtype, shape))
    for (ta, _va), (tb, _vb) in zip(views(a), views(b)):
        identical(tf.copysign(ta, tb), np.copysign(a, b))
        identical(tf.nextafter(ta, tb), np.nextafter(a, b))


def test_nextafter_edges() -> None:
    for dtype in (F32, F64):
        fi = np.finfo(dtype)
        x = np.array(
            [
                0.0,
                -0.0,
                0.0,
                1.0,
                1.0,
                fi.max,
                fi.max,
                -fi.max,
                fi.smallest_subnormal,
                -fi.smallest_subnormal,
                np.inf,
                np.nan,
                1.0,
                fi.smallest_normal,
            ],
            dtype=dtype,
        )
        y = np.array(
            [1.0, -1.0, -0.0, 2.0, 0.0, np.inf, 0.0, -np.inf, 0.0, 0.0, 0.0, 1.0, np.nan, 0.0],
            dtype=dtype,
        )
        identical(tf.nextafter(tf.asarray(x), tf.asarray(y)), np.nextafter(x, y))
    with pytest.raises(DTypeError, match="nextafter"):
        tf.nextafter(tf.asarray([1j]), 1.0)
    with pytest.raises(DTypeError, match="copysign"):
        tf.copysign(1.0, tf.asarray([1j]))
    with pytest.raises(DTypeError, match="signbit"):
        tf.signbit(tf.asarray([1j]))
    with pytest.raises(DTypeError, match="nextafter"):
        tf.prim.nextafter(tf.asarray([1, 2]), tf.asarray([1, 2]))


# ----------------------------------------------------------------------------------------------
# reciprocal, exp2, cbrt, hypot, logaddexp
# ----------------------------------------------------------------------------------------------


def test_reciprocal() -> None:
    x = np.array([2.0, -0.5, 0.0, -0.0, np.inf, 3.0])
    identical(tf.reciprocal(tf.asarray(x)), np.reciprocal(x))
    identical(tf.reciprocal(tf.asarray(x.astype(F32))), np.reciprocal(x.astype(F32)))
    z = np.array([1 + 2j, -3j, 0.5])
    np.testing.assert_allclose(
        np.asarray(tf.reciprocal(tf.asarray(z))), np.reciprocal(z), rtol=1e-15
    )
    i = np.array([1, 2, -1, -2, 7], dtype=I32)
    identical(tf.reciprocal(tf.asarray(i)), np.reciprocal(i))
    with pytest.raises(ZeroDivisionError, match="reciprocal"):
        tf.reciprocal(tf.asarray([1, 0]))


@given(data=st.data())
def test_exp2_cbrt_match_numpy(data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from([F32, F64]))
    a = data.draw(float_arrays(dtype, allow_subnormal=False))
    with np.errstate(all="ignore"):
        for t, v in views(a):
            within_ulps(tf.exp2(t), np.exp2(v), 2)
            within_ulps(tf.cbrt(t), np.cbrt(v), 1)


def test_exp2_cbrt_special_and_other_dtypes() -> None:
    with np.errstate(all="ignore"):
        within_ulps(tf.exp2(tf.asarray(SPECIAL)), np.exp2(SPECIAL), 2)
        within_ulps(tf.cbrt(tf.asarray(SPECIAL)), np.cbrt(SPECIAL), 1)
    k = np.arange(-1074, 1024, 7.0)
    identical(tf.exp2(tf.asarray(k)), np.exp2(k))  # exact at integers
    cubes = np.arange(-50.0, 51.0) ** 3
    identical(tf.cbrt(tf.asarray(cubes)), np.cbrt(cubes))  # exact for perfect cubes
    i = np.array([-8, 0, 27, 5])
    within_ulps(tf.cbrt(tf.asarray(i)), np.cbrt(i), 1)
    within_ulps(tf.exp2(tf.asarray(i)), np.exp2(i), 0)
    z = np.array([1 + 2j, -0.5 + 0.25j])
    np.testing.assert_allclose(np.asarray(tf.exp2(tf.asarray(z))), np.exp2(z), rtol=1e-14)
    with pytest.raises(DTypeError, match="cbrt"):
        tf.cbrt(tf.asarray([1j]))


@given(data=st.data())
def test_hypot_matches_numpy(data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from([F32, F64]))
    shape = data.draw(SHAPES)
    a = data.draw(float_arrays(dtype, shape))
    b = data.draw(float_arrays(dtype, shape))
    want = np.hypot(a, b)
    for (ta, _va), (tb, _vb) in zip(views(a), views(b)):
        within_ulps(tf.hypot(ta, tb), want, 2)


def test_hypot_special_values() -> None:
    x = np.array([1e300, 1e-300, 3.0, 0.0, -0.0, np.inf, np.nan, -np.inf, np.nan, 5e-324, 1.7e308])
    y = np.array([1e300, 1e-300, -4.0, 0.0, 0.0, np.nan, np.inf, 1.0, 1.0, 5e-324, 1.7e308])
    got = tf.hypot(tf.asarray(x), tf.asarray(y))
    within_ulps(got, np.hypot(x, y), 2)
    assert np.isfinite(np.asarray(got)[0])
    within_ulps(
        tf.hypot(tf.asarray(np.float32([3e38, 1e-40])), np.float32(3e38)),
        np.hypot(np.float32([3e38, 1e-40]), np.float32(3e38)),
        1,
    )
    within_ulps(tf.hypot(tf.asarray(np.array([3, 5])), 4), np.hypot(np.array([3, 5]), 4), 1)
    with pytest.raises(DTypeError, match="hypot"):
        tf.hypot(tf.asarray([1j]), 1.0)


@given(data=st.data())
def test_logaddexp_matches_numpy(data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from([F32, F64]))
    shape = data.draw(SHAPES)
    big = float(np.finfo(dtype).max)
    a = data.draw(float_arrays(dtype, shape, min_value=-big, max_value=big))
    b = data.draw(float_arrays(dtype, shape, min_value=-big, max_value=big))
    with np.errstate(all="ignore"):
        want = np.logaddexp(a, b)
    for (ta, _va), (tb, _vb) in zip(views(a), views(b)):
        within_ulps(tf.logaddexp(ta, tb), want, 2)


def test_logaddexp_special_values() -> None:
    inf, nan = np.inf, np.nan
    x = np.array([-inf, inf, -inf, inf, nan, 1.0, -inf, 1000.0, -1000.0, 0.0, 1e308])
    y = np.array([-inf, inf, inf, 3.0, -inf, nan, 2.0, 1000.0, -1001.0, 0.0, 1e308])
    with np.errstate(all="ignore"):
        want = np.logaddexp(x, y)
    within_ulps(tf.logaddexp(tf.asarray(x), tf.asarray(y)), want, 2)
    assert tf.logaddexp(tf.asarray(-inf), -inf).item() == -inf
    within_ulps(tf.logaddexp(tf.asarray(np.array([1, 2])), 0), np.logaddexp(np.array([1, 2]), 0), 2)
    with pytest.raises(DTypeError, match="logaddexp"):
        tf.logaddexp(tf.asarray([1j]), 1.0)


# ----------------------------------------------------------------------------------------------
# Derivatives and tracing
# ----------------------------------------------------------------------------------------------

_R = np.random.default_rng(3)
_U = _R.uniform(-2, 2, size=(2, 3))
_V = _R.uniform(-2, 2, size=(2, 3))
_Z = _R.normal(size=3) + 1j * _R.normal(size=3)

DIFFERENTIABLE = {
    "sinh": (lambda x: tf.sinh(x.T), [_U]),
    "cosh": (lambda x: tf.cosh(x[::-1]), [_U]),
    "sinh complex": (tf.sinh, [_Z]),
    "cosh complex": (tf.cosh, [_Z]),
    "reciprocal": (tf.reciprocal, [_U + 3.0]),
    "reciprocal complex": (tf.reciprocal, [_Z]),
    "exp2": (lambda x: tf.exp2(x.T), [_U]),
    "exp2 complex": (tf.exp2, [_Z]),
    "cbrt": (tf.cbrt, [np.array([-8.0, -0.3, 0.5, 27.0, 1e-3])]),
    "hypot": (lambda a, b: tf.hypot(a.T, b.T), [_U, _V]),
    "hypot tie": (tf.hypot, [np.array([1.5, -2.0]), np.array([1.5, 2.0])]),
    "hypot broadcast": (tf.hypot, [_U, np.array([0.7, -1.1, 0.2])]),
    "logaddexp": (lambda a, b: tf.logaddexp(a, b[::-1]), [_U, _V]),
    "logaddexp tie and large": (
        tf.logaddexp,
        [np.array([0.5, 800.0, -40.0]), np.array([0.5, 801.0, 3.0])],
    ),
    "copysign": (lambda a, b: tf.copysign(a.T, b.T), [_U, _V]),
    "nextafter": (tf.nextafter, [_U, _V]),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_derivatives_against_finite_differences(name: str) -> None:
    f, args = DIFFERENTIABLE[name]
    check_grads(f, args, order=2)


def test_derivative_values() -> None:
    rt = tf.Runtime()
    x, y = rt.variable(np.array([3.0, -1.0, 0.0])), rt.variable(np.array([4.0, 2.0, 0.0]))
    gx, gy = rt.grad(tf.logaddexp(x, y).sum(), [x, y])
    s = 1 / (1 + np.exp(np.array([1.0, 3.0, 0.0])))
    np.testing.assert_allclose(np.asarray(gx), s, rtol=1e-15)
    np.testing.assert_allclose(np.asarray(gy), 1 - s, rtol=1e-15)
    gx, gy = rt.grad(tf.hypot(x[:2], y[:2]).sum(), [x, y])
    np.testing.assert_allclose(np.asarray(gx), [0.6, -1 / math.sqrt(5), 0.0], rtol=1e-15)
    np.testing.assert_allclose(np.asarray(gy), [0.8, 2 / math.sqrt(5), 0.0], rtol=1e-15)
    (g,) = rt.grad(tf.cbrt(x[:2]).sum(), [x])
    np.testing.assert_allclose(np.asarray(g), [3.0 ** (-2 / 3) / 3, 1 / 3, 0.0], rtol=1e-14)
    (g,) = rt.grad(tf.copysign(x, -1.0).sum(), [x])
    np.testing.assert_array_equal(np.asarray(g), [-1.0, 1.0, -1.0])
    # logaddexp(-inf, -inf) and hypot(0, 0) give finite derivatives (no NaN from the branch not taken).
    z = rt.variable(np.array([-np.inf, 1.0]))
    (g,) = rt.grad(tf.logaddexp(z, -np.inf).sum(), [z])
    np.testing.assert_array_equal(np.asarray(g), [1.0, 1.0])
    w = rt.variable(np.array([0.0, 2.0]))
    (g,) = rt.grad(tf.hypot(w, 0.0).sum(), [w])
    assert np.isfinite(np.asarray(g)).all()


def test_compositions_trace_under_jit() -> None:
    @tf.jit
    def f(a: Any, b: Any) -> Any:
        return (
            tf.hypot(a, b) + tf.logaddexp(a, b) + tf.cbrt(a) + tf.exp2(b) + tf.sinh(a) * tf.floor(b)
        )

    a, b = _U.copy(), _V.copy()
    want = np.hypot(a, b) + np.logaddexp(a, b) + np.cbrt(a) + np.exp2(b) + np.sinh(a) * np.floor(b)
    np.testing.assert_allclose(np.asarray(f(tf.asarray(a), tf.asarray(b))), want, rtol=1e-14)

    @tf.jit
    def g(i: Any, j: Any) -> Any:
        return ((i & j) | (i << 2)) ^ ~(j >> 1)

    i, j = np.array([5, -3, 12]), np.array([1, 2, 70])
    identical(g(tf.asarray(i), tf.asarray(j)), ((i & j) | (i << 2)) ^ ~(j >> 1))

"""``prim.round`` (round half to even) and its NumPy-named functions ``tf.round``/``tf.around``
(``numpy.round``) and ``tf.rint`` (``numpy.rint``), against NumPy bit for bit (the sign of zero
included), and their zero derivative. The catalog-driven tests (``test_ops.py``,
``test_op_table.py``, ``test_ad_catalog.py``, the Rust rule-table tests) pick the primitive up
from the op table; this file pins what they do not: ties, huge values, NaN/inf, signed zeros,
``decimals``, integer and boolean inputs."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
from tenferro import _testing
from tenferro.errors import DTypeError

RNG = np.random.default_rng(19)

FLOATS = ("float32", "float64")
COMPLEX = ("complex64", "complex128")

#: Ties (both signs, odd and even neighbours), values just below a tie (``0.49999999999999994``
#: and ``2**52 - 0.5`` defeat ``floor(x + 0.5)``), magnitudes past ``2**52`` (already integers),
#: signed zeros, tiny and negative-tiny values (round to a signed zero), NaN and infinities.
SPECIAL = [
    0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, -3.5, 0.49999999999999994, -0.49999999999999994,
    2.0**52 - 0.5, -(2.0**52 - 0.5), 2.0**51 + 0.5, 2.0**52, 2.0**52 + 1, 2.0**53 + 2, 2.0**60,
    -(2.0**60), 1e300, -1e300, 0.0, -0.0, 1e-300, -1e-300, -0.4, 0.4, 0.6, -0.6, 7.0, -7.0,
    np.nan, -np.nan, np.inf, -np.inf,
]  # fmt: skip


def assert_same_bits(got: object, want: np.ndarray) -> None:
    """Equal values and dtypes, NaN where NaN, and the same sign bits (``-0.0`` is not ``0.0``)."""
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)
    if want.dtype.kind == "c":
        for part in (np.real, np.imag):
            np.testing.assert_array_equal(np.signbit(part(got)), np.signbit(part(want)))
    elif want.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def special(dtype: str) -> np.ndarray:
    x = np.array(SPECIAL, dtype=np.float64)
    if np.dtype(dtype).kind == "c":
        # Each value as a real part, with the values of a shuffled copy as imaginary parts.
        z = np.empty(x.shape, dtype=dtype)
        with np.errstate(over="ignore"):
            z.real, z.imag = x, RNG.permutation(x)
        return z
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def random(dtype: str, shape: tuple[int, ...] = (4, 5), scale: float = 10.0) -> np.ndarray:
    x = RNG.uniform(-scale, scale, size=shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.uniform(-scale, scale, size=shape)
    return x.astype(dtype)


# ---------------------------------------------------------------- the primitive and rint


@pytest.mark.parametrize("dtype", FLOATS + COMPLEX)
def test_prim_round_is_rint(dtype: str) -> None:
    for x in (special(dtype), random(dtype), random(dtype, (3,), 3.0).round(0) + 0.5):
        assert_same_bits(tf.prim.round(tf.tensor(x)), np.rint(x))
        assert_same_bits(tf.rint(x), np.rint(x))
        assert_same_bits(tf.round(x), np.round(x))
        assert_same_bits(tf.around(x), np.around(x))


def test_round_of_strided_views_and_rank_zero() -> None:
    x = random("float64", (4, 6), 4.0)
    t = tf.tensor(x)
    assert_same_bits(tf.rint(t.T[::2]), np.rint(x.T[::2]))
    assert_same_bits(tf.rint(tf.tensor(np.float64(-2.5))), np.rint(np.float64(-2.5)).reshape(()))
    assert_same_bits(tf.round(2.5), np.asarray(np.round(2.5)))


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64"])
def test_rint_of_integers_and_bools_is_float64(dtype: str) -> None:
    x = (
        np.array([0, 1, 1, 0], dtype=dtype)
        if dtype == "bool"
        else np.array([-7, 0, 3, 2**30], dtype=dtype)
    )
    want = np.rint(x)
    # NumPy gives float16 for bool (a dtype tenferro does not have): float64, like tf.exp.
    assert_same_bits(tf.rint(x), want.astype(np.float64))


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64"])
def test_prim_round_rejects_integers_and_bools(dtype: str) -> None:
    with pytest.raises(DTypeError, match="round"):
        tf.prim.round(tf.tensor(np.zeros(3, dtype=dtype)))


# ---------------------------------------------------------------- decimals


@pytest.mark.parametrize("dtype", FLOATS + COMPLEX)
@pytest.mark.parametrize("decimals", [-3, -2, -1, 1, 2, 3, 7])
def test_round_decimals_matches_numpy(dtype: str, decimals: int) -> None:
    x = random(dtype, (6, 7), 10.0 ** max(1, -decimals + 2))
    with np.errstate(all="ignore"):
        want = np.round(x, decimals)
    assert_same_bits(tf.round(tf.tensor(x), decimals), want)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    "decimals", [-400, -309, -25, -23, -5, -1, 1, 2, 9, 10, 22, 23, 25, 30, 300, 309, 400]
)
def test_round_decimals_special_values_and_extreme_decimals(dtype: str, decimals: int) -> None:
    x = np.concatenate(
        [
            special(dtype),
            np.array([2.675, -2.675, 0.125, 0.375, 1.005, 123.456, 0.045], dtype=dtype),
        ]
    )
    with np.errstate(all="ignore"):
        want = np.round(x, decimals)
    assert_same_bits(tf.round(x, decimals), want)


def test_round_decimals_documented_cases() -> None:
    # 1.005 * 100 is 100.49999999999999 in float64: NumPy (and tenferro) give 1.0.
    assert tf.round(tf.asarray([1.005, 2.675]), 2).tolist() == [1.0, 2.68]
    assert tf.round(tf.asarray([0.125, 0.375]), 2).tolist() == np.round([0.125, 0.375], 2).tolist()
    assert tf.round(tf.asarray([1250.0, 1350.0, -1250.0]), -2).tolist() == [1200.0, 1400.0, -1200.0]


@pytest.mark.parametrize("dtype", COMPLEX)
def test_round_decimals_complex_finite_parts(dtype: str) -> None:
    # Finite parts, none rounding to zero: exact (see tf.round's note on NaN/inf and zero signs).
    x = (np.array([1.25, -2.35, 0.125, 7.5]) + 1j * np.array([-3.45, 0.55, 2.5, -1.05])).astype(
        dtype
    )
    for decimals in (-1, 1, 2):
        want = np.round(x, decimals)
        got = np.asarray(tf.round(x, decimals))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_round_of_integers_keeps_the_dtype(dtype: str) -> None:
    info = np.iinfo(dtype)
    x = np.array(
        [15, 25, -15, -25, 14, 5, -5, 0, 1234567, -7654321, 2**30, info.min // 2, info.max // 3],
        dtype=dtype,
    )
    if dtype == "int64":
        x = np.concatenate([x, np.array([2**53 + 1, -(2**53) - 3, 2**60 + 12345], dtype=dtype)])
    for decimals in (0, 1, 2, 5, -1, -2, -3, -6, -20):
        got, want = tf.round(x, decimals), np.round(x, decimals)
        assert_same_bits(got, want)
    t = tf.tensor(x)
    assert tf.round(t) is t or np.array_equal(np.asarray(tf.round(t)), x)


def test_round_of_bools() -> None:
    x = np.array([True, False, True])
    got = tf.round(x)
    assert got.dtype == np.float64  # NumPy: float16
    np.testing.assert_array_equal(np.asarray(got), np.round(x).astype(np.float64))
    for decimals in (1, -1):
        with pytest.raises(TypeError):  # NumPy: a casting error (a TypeError)
            np.round(x, decimals)
        with pytest.raises(DTypeError, match="decimals"):
            tf.round(x, decimals)
    assert issubclass(DTypeError, TypeError)


def test_round_decimals_must_be_an_integer() -> None:
    x = tf.asarray([1.26])
    with pytest.raises(TypeError):
        tf.round(x, 1.5)
    assert tf.round(x, np.int64(1)).tolist() == np.round(np.array([1.26]), np.int64(1)).tolist()


# ---------------------------------------------------------------- derivative


@pytest.mark.parametrize("decimals", [0, 2, -1])
def test_gradient_is_zero(decimals: int) -> None:
    x = random("float64", (5,), 20.0)
    g = tf.func.grad(lambda t: tf.sum(tf.round(t, decimals)))(tf.tensor(x))
    assert_same_bits(g, np.zeros(5))
    g = tf.func.grad(lambda t: tf.sum(tf.rint(t) * t))(tf.tensor(x))
    np.testing.assert_array_equal(np.asarray(g), np.rint(x))  # d/dt (rint(t) t) = rint(t)


def test_gradient_is_zero_under_create_graph_and_second_order() -> None:
    xv = random("float64", (4,), 5.0)
    x = tf.tensor(xv, requires_grad=True)
    gs = tf.sum(tf.prim.round(x) * x * x).backward(create_graph=True)
    gx = gs[x]
    np.testing.assert_allclose(np.asarray(gx), 2 * np.rint(xv) * xv, rtol=1e-15)
    # d/dx of sum(gx) = 2 rint(x) (round contributes nothing at second order either).
    h = tf.func.grad(lambda t: tf.sum(tf.func.grad(lambda s: tf.sum(tf.round(s) * s * s))(t)))(
        tf.tensor(xv)
    )
    np.testing.assert_allclose(np.asarray(h), 2 * np.rint(xv), rtol=1e-15)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_jvp_and_vjp_are_zero(dtype: str) -> None:
    x = random(dtype, (3,), 4.0)
    v = random(dtype, (3,), 1.0)
    _, t = tf.func.jvp(lambda s: tf.prim.round(s), (tf.tensor(x),), (tf.tensor(v),))
    np.testing.assert_array_equal(np.asarray(t), np.zeros(3, dtype=dtype))
    _, pullback = tf.func.vjp(lambda s: tf.prim.round(s), tf.tensor(x))
    (ct,) = pullback(tf.tensor(v))
    np.testing.assert_array_equal(np.asarray(ct), np.zeros(3, dtype=dtype))


# ---------------------------------------------------------------- the op table


def test_catalog_row_rule_and_faces() -> None:
    row = {r.name: r for r in tf.prim.CATALOG}["round"]
    assert (row.arity, row.family, row.implemented) == (1, "unary", True)
    assert set(row.dtypes) == {np.dtype(d) for d in FLOATS + COMPLEX}
    assert _testing.ad_rules()["round"] == "zero"
    assert callable(tf.prim.round) and callable(tf.Session.round)
    assert {"round", "around", "rint"} <= set(tf.__all__)


def test_builtin_round_and_the_round_method_follow_numpy():
    a = np.array([0.5, 1.5, 2.5, -0.5, 1.2345])
    t = tf.asarray(a)
    # NumPy arrays define no __round__: the builtin round() of rank > 0 is a TypeError; a 0-d
    # tensor rounds as its NumPy scalar (tests/test_pickle.py).
    for args in ((), (2,)):
        with pytest.raises(TypeError):
            round(a, *args)
        with pytest.raises(TypeError, match="tf.round"):
            round(t, *args)
    assert round(t[2]) == round(a[2]) == 2 and round(t[4], 2) == round(a[4], 2)
    np.testing.assert_array_equal(np.asarray(t.round(1)), a.round(1))

"""The semantics ops.md pins down: promotion lattice, weak Python scalars, checked and lossy
conversion, integer division, pow, NaN propagation, empty reductions, accuracy of special
functions and of float summation. Expected values are written from the spec, not computed by
the code under test."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.special

import tenferro as tf
from tenferro.testing import assert_close

B, I32, I64 = np.dtype(np.bool_), np.dtype(np.int32), np.dtype(np.int64)
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
C64, C128 = np.dtype(np.complex64), np.dtype(np.complex128)
DTYPES = (B, I32, I64, F32, F64, C64, C128)
INTS = (I32, I64)
FLOATS = (F32, F64)

# ops.md: bool+T→T; i32+i32→i32; i32+i64→i64; any int with f32 or f64 → f64; any int with a
# complex → c128; f32+f64→f64; f32+c64→c64; f32+c128→c128; f64+c64→c128; c64+c128→c128.
_LATTICE_ROWS = {
    (I32, I64): I64,
    (I32, F32): F64,
    (I32, F64): F64,
    (I64, F32): F64,
    (I64, F64): F64,
    (I32, C64): C128,
    (I32, C128): C128,
    (I64, C64): C128,
    (I64, C128): C128,
    (F32, F64): F64,
    (F32, C64): C64,
    (F32, C128): C128,
    (F64, C64): C128,
    (F64, C128): C128,
    (C64, C128): C128,
}


def lattice(a: np.dtype, b: np.dtype) -> np.dtype:
    if a == b:
        return a
    if a == B:
        return b
    if b == B:
        return a
    return _LATTICE_ROWS.get((a, b)) or _LATTICE_ROWS[(b, a)]


def T(values, dtype=None):
    return tf.tensor(np.asarray(values, dtype=dtype))


def row(name: str):
    return {r.name: r for r in tf.prim.CATALOG}[name]


# ----------------------------------------------------------------------------------------------
# Promotion
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("a,b", list(itertools.product(DTYPES, DTYPES)), ids=lambda d: d.name)
def test_promotion_lattice(a: np.dtype, b: np.dtype) -> None:
    want = lattice(a, b)
    x, y = tf.ones((2,), dtype=a), tf.ones((2,), dtype=b)
    if want not in {np.dtype(d) for d in row("add").dtypes}:
        with pytest.raises(tf.errors.DTypeError):
            tf.prim.add(x, y)
        return
    z = tf.prim.add(x, y)
    assert z.dtype == want, f"{a} + {b} gave {z.dtype}, ops.md says {want}"
    assert_close(z, np.full((2,), 1 + 1, dtype=want) if want != B else np.ones(2, bool))


def test_promotion_is_symmetric_and_associative() -> None:
    for a, b, c in itertools.product(DTYPES, repeat=3):
        assert lattice(a, b) == lattice(b, a)
        assert lattice(lattice(a, b), c) == lattice(a, lattice(b, c))


WEAK_CASES = [
    # (tensor dtype, expression, expected dtype)
    (F32, lambda x: x * 2.0, F32),
    (F32, lambda x: 2.0 * x, F32),
    (F32, lambda x: x + 1, F32),
    (F32, lambda x: tf.prim.mul(x, 2.0), F32),
    (F64, lambda x: x * 2.0, F64),
    (I32, lambda x: x + 1, I32),
    (I32, lambda x: 1 + x, I32),
    (I32, lambda x: tf.prim.add(x, 1), I32),
    (I64, lambda x: x + 1, I64),
    (I32, lambda x: x * 0.5, F64),
    (I32, lambda x: 0.5 * x, F64),
    (I64, lambda x: x * 0.5, F64),
    (I32, lambda x: x + True, I32),
    (F32, lambda x: x + 1j, C64),
    (F64, lambda x: x + 1j, C128),
    (C64, lambda x: x * 2.0, C64),
    (C64, lambda x: x * 2, C64),
    (I32, lambda x: x + 1j, C128),
    (B, lambda x: x + 1, I64),
    (B, lambda x: x * 1.5, F64),
]


@pytest.mark.parametrize(
    "dtype,expr,want", WEAK_CASES, ids=[f"{d.name}-{i}" for i, (d, _, _) in enumerate(WEAK_CASES)]
)
def test_weak_python_scalars(dtype: np.dtype, expr, want: np.dtype) -> None:
    values = np.array([1, 0, 1], dtype=dtype) if dtype == B else np.array([1, 2, 3], dtype=dtype)
    result = expr(tf.tensor(values))
    assert result.dtype == want
    # The value: the same expression in NumPy 2 (whose Python scalars are also weak).
    assert_close(result, np.asarray(expr(values)).astype(want))


def test_weak_int_scalar_out_of_range() -> None:
    x = T([1, 2], np.int32)
    with pytest.raises(OverflowError):
        x + 2**40
    with pytest.raises(OverflowError):
        tf.prim.add(x, 2**40)


# ----------------------------------------------------------------------------------------------
# Conversion
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("src,dst", list(itertools.product(DTYPES, DTYPES)), ids=lambda d: d.name)
def test_convert_only_up_the_lattice(src: np.dtype, dst: np.dtype) -> None:
    x = tf.tensor(np.array([0, 1, 1], dtype=src))
    if lattice(src, dst) == dst:
        y = tf.prim.convert(x, dst)
        assert y.dtype == dst
        assert_close(y, np.array([0, 1, 1], dtype=src).astype(dst))
    else:
        with pytest.raises(tf.errors.DTypeError) as info:
            tf.prim.convert(x, dst)
        message = str(info.value)
        assert "convert" in message and src.name in message and dst.name in message, message


@pytest.mark.parametrize("src", FLOATS)
@pytest.mark.parametrize("dst", INTS)
def test_cast_float_to_int_truncates_toward_zero(src: np.dtype, dst: np.dtype) -> None:
    x = T([-2.7, -0.5, -0.0, 0.5, 2.7, 3.0, -3.0], src)
    y = tf.prim.cast(x, dst)
    assert y.dtype == dst
    assert np.asarray(y).tolist() == [-2, 0, 0, 0, 2, 3, -3]


@pytest.mark.parametrize("src", (C64, C128))
def test_cast_complex_drops_imaginary_part(src: np.dtype) -> None:
    x = T([1.5 + 2j, -1.25 - 3j, 0 + 7j], src)
    for dst in (F32, F64):
        y = tf.prim.cast(x, dst)
        assert y.dtype == dst
        assert np.asarray(y).tolist() == [1.5, -1.25, 0.0]
    for dst in INTS:
        assert np.asarray(tf.prim.cast(x, dst)).tolist() == [1, -1, 0]


def test_cast_nonzero_is_true() -> None:
    cases = [
        (T([0.0, -0.0, 0.5, np.nan, -np.inf, 1e-300], F64), [False, False, True, True, True, True]),
        (T([0.0, -2.0], F32), [False, True]),
        (T([0j, 1j, 1 + 0j, complex(0, -0.0)], C128), [False, True, True, False]),
        (T([0j, 1j], C64), [False, True]),
        (T([0, 3, -1], I32), [False, True, True]),
        (T([0, 2**40], I64), [False, True]),
    ]
    for x, want in cases:
        y = tf.prim.cast(x, B)
        assert y.dtype == B
        assert np.asarray(y).tolist() == want, x.dtype


def test_cast_bool_to_numbers() -> None:
    x = T([True, False], B)
    for dst in (I32, I64, F32, F64, C64, C128):
        y = tf.prim.cast(x, dst)
        assert y.dtype == dst
        assert np.asarray(y).tolist() == [1, 0]


# ----------------------------------------------------------------------------------------------
# Integer division, remainder, pow
# ----------------------------------------------------------------------------------------------

A_INT = [7, -7, 7, -7, 0, 6, -6, 1]
B_INT = [2, 2, -2, -2, 3, -3, 4, 5]


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.name)
def test_integer_div_rem_truncate_but_operators_floor(dtype: np.dtype) -> None:
    a, b = T(A_INT, dtype), T(B_INT, dtype)
    # StableHLO primitives: truncation toward zero; remainder has the dividend's sign.
    q = tf.prim.div(a, b)
    r = tf.prim.rem(a, b)
    assert q.dtype == dtype and r.dtype == dtype
    assert np.asarray(q).tolist() == [3, -3, -3, 3, 0, -2, -1, 0]
    assert np.asarray(r).tolist() == [1, -1, 1, -1, 0, 0, -2, 1]
    # Python operators follow NumPy: floor; remainder has the divisor's sign.
    assert np.asarray(a // b).tolist() == [3, -4, -4, 3, 0, -2, -2, 0]
    assert np.asarray(a % b).tolist() == [1, 1, -1, -1, 0, 0, 2, 1]
    assert (a // b).dtype == dtype and (a % b).dtype == dtype
    # With a weak scalar divisor.
    assert np.asarray(a // 2).tolist() == (np.array(A_INT) // 2).tolist()
    assert np.asarray(a % -3).tolist() == (np.array(A_INT) % -3).tolist()
    assert np.asarray(tf.prim.div(a, 2)).tolist() == [3, -3, 3, -3, 0, 3, -3, 0]
    assert np.asarray(tf.prim.rem(a, 2)).tolist() == [1, -1, 1, -1, 0, 0, 0, 1]


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
def test_float_div_rem_and_operators(dtype: np.dtype) -> None:
    a, b = T([7.5, -7.5, 7.5, -7.5], dtype), T([2, 2, -2, -2], dtype)
    assert np.asarray(tf.prim.div(a, b)).tolist() == [3.75, -3.75, -3.75, 3.75]
    assert np.asarray(tf.prim.rem(a, b)).tolist() == [1.5, -1.5, 1.5, -1.5]  # fmod
    assert np.asarray(a // b).tolist() == [3.0, -4.0, -4.0, 3.0]
    assert np.asarray(a % b).tolist() == [1.5, 0.5, -0.5, -1.5]
    one = T([1.0, -1.0, 0.0], dtype)
    zero = T([0.0, 0.0, 0.0], dtype)
    q = np.asarray(tf.prim.div(one, zero))  # float division by zero is IEEE, not an error
    assert q[0] == np.inf and q[1] == -np.inf and np.isnan(q[2])


def _zero_division_calls(dtype):
    a = T([5, 6, 7], dtype)
    z = T([1, 0, 2], dtype)  # one zero among nonzero divisors
    return {
        "prim.div": lambda: tf.prim.div(a, z),
        "prim.rem": lambda: tf.prim.rem(a, z),
        "prim.div scalar": lambda: tf.prim.div(a, 0),
        "floordiv": lambda: a // z,
        "mod": lambda: a % z,
        "floordiv scalar": lambda: a // 0,
        "mod scalar": lambda: a % 0,
    }


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.name)
@pytest.mark.parametrize("which", list(_zero_division_calls(I32)))
def test_integer_division_by_zero_raises(dtype: np.dtype, which: str) -> None:
    with pytest.raises(ZeroDivisionError):
        _zero_division_calls(dtype)[which]()


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.name)
def test_int_min_divided_by_minus_one_wraps(dtype: np.dtype) -> None:
    lo = int(np.iinfo(dtype).min)
    a, m = T([lo, lo], dtype), T([-1, -1], dtype)
    assert np.asarray(tf.prim.div(a, m)).tolist() == [lo, lo]
    assert np.asarray(tf.prim.rem(a, m)).tolist() == [0, 0]
    assert np.asarray(a // m).tolist() == [lo, lo]
    assert np.asarray(a % m).tolist() == [0, 0]
    assert np.asarray(a // -1).tolist() == [lo, lo]
    # Negation and abs of INT_MIN wrap too (two's complement, as NumPy).
    assert np.asarray(tf.prim.neg(a)).tolist() == [lo, lo]


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.name)
def test_true_division_of_ints_is_float64(dtype: np.dtype) -> None:
    a, b = T([1, -3, 4], dtype), T([2, 2, 4], dtype)
    q = a / b
    assert q.dtype == F64
    assert np.asarray(q).tolist() == [0.5, -1.5, 1.0]
    q2 = a / 2
    assert q2.dtype == F64
    assert np.asarray(q2).tolist() == [0.5, -1.5, 2.0]
    assert tf.prim.div(a, b).dtype == dtype  # the primitive keeps the integer dtype


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.name)
def test_true_division_by_numpy_integers_is_float64(dtype: np.dtype) -> None:
    """NumPy integer scalars and arrays divide as NumPy does (float64), also reflected and by 0."""
    a = T([-5, 0, 7], dtype)
    ref = np.array([-5, 0, 7], dtype)
    for other in (np.int64(2), np.int32(3), np.array([2]), np.array([2, 3, 4], np.int32), np.True_):
        with np.errstate(divide="ignore", invalid="ignore"):
            want, want_r = ref / other, other / ref
        got, got_r = a / other, other / a
        assert got.dtype == F64 and got_r.dtype == F64, (other, got.dtype, got_r.dtype)
        np.testing.assert_array_equal(np.asarray(got), want)
        np.testing.assert_array_equal(np.asarray(got_r), want_r)


def test_bitwise_of_bool_tensors_follows_numpy() -> None:
    t = T([True, False], np.dtype(bool))
    for other in (True, np.True_, np.array([False, True]), T([False, True], np.dtype(bool))):
        ref = np.asarray(t)
        o = np.asarray(other)
        assert np.asarray(t & other).tolist() == (ref & o).tolist()
        assert np.asarray(t | other).tolist() == (ref | o).tolist()
        assert np.asarray(t ^ other).tolist() == (ref ^ o).tolist()
        assert np.asarray(other & t).tolist() == (o & ref).tolist()
    # Integer operands: the integer bitwise ops of the promoted dtype, as NumPy (issue 22).
    for other in (2, -1, np.int64(2), np.array([1, 2])):
        for op in (lambda a, b: a & b, lambda a, b: a | b, lambda a, b: a ^ b):
            got, want = op(t, other), op(np.asarray(t), other)
            assert got.dtype == want.dtype and np.asarray(got).tolist() == want.tolist()
    assert np.asarray(2 & t).tolist() == (2 & np.asarray(t)).tolist()
    for op, name in (
        (lambda a, b: a & b, "bitwise_and"),
        (lambda a, b: a | b, "bitwise_or"),
        (lambda a, b: a ^ b, "bitwise_xor"),
    ):
        with pytest.raises(TypeError, match=name):
            op(t, 1.0)
    # NumPy operands on the left keep NumPy's own integer semantics (the ufunc falls back).
    assert np.asarray(np.array([1, 2]) & t).tolist() == [1, 0]


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.name)
def test_integer_pow(dtype: np.dtype) -> None:
    base, expo = T([2, 3, -2, 0, 5], dtype), T([3, 0, 3, 0, 1], dtype)
    p = tf.prim.pow(base, expo)
    assert p.dtype == dtype
    assert np.asarray(p).tolist() == [8, 1, -8, 1, 5]  # 0 ** 0 == 1
    with pytest.raises(ValueError):
        tf.prim.pow(base, T([1, 1, -1, 1, 1], dtype))
    with pytest.raises(ValueError):
        base**-1
    with pytest.raises(ValueError):
        tf.prim.pow(base, -2)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
def test_zero_to_the_zero_is_one(dtype: np.dtype) -> None:
    z = T([0, 0], dtype)
    assert np.asarray(tf.prim.pow(z, z)).tolist() == [1, 1]
    assert np.asarray(z**0).tolist() == [1, 1]


def test_float_pow_negative_exponent() -> None:
    assert np.asarray(tf.prim.pow(T([2.0, 4.0]), T([-1.0, -0.5]))).tolist() == [0.5, 0.5]


# ----------------------------------------------------------------------------------------------
# NaN propagation and empty reductions
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
def test_nan_propagation(dtype: np.dtype) -> None:
    nan = np.nan
    x, y = T([nan, 1.0, 2.0, nan], dtype), T([1.0, nan, 3.0, nan], dtype)
    for op in (tf.prim.maximum, tf.prim.minimum):
        got = np.asarray(op(x, y))
        assert np.isnan(got[[0, 1, 3]]).all() and not np.isnan(got[2]), (op, got)
    assert np.asarray(tf.prim.maximum(x, y))[2] == 3.0
    assert np.asarray(tf.prim.minimum(x, y))[2] == 2.0
    v, lo, hi = (
        T([nan, 0.5, 0.5, 0.5, 5.0], dtype),
        T([0.0, nan, 0.0, 0.0, 0.0], dtype),
        T([1.0, 1.0, nan, 1.0, 1.0], dtype),
    )
    got = np.asarray(tf.prim.clamp(v, lo, hi))
    assert np.isnan(got[:3]).all(), got
    assert got[3:].tolist() == [0.5, 1.0]
    m = T([[1.0, nan, 0.0], [2.0, 3.0, -1.0]], dtype)
    for op, axis0, axis1 in (
        (tf.prim.reduce_max, [2.0, nan, 0.0], [nan, 3.0]),
        (tf.prim.reduce_min, [1.0, nan, -1.0], [nan, -1.0]),
    ):
        assert np.isnan(np.asarray(op(m)))
        assert_close(op(m, axes=0), np.array(axis0, dtype=dtype))
        assert_close(op(m, axes=1), np.array(axis1, dtype=dtype))
        # NaN in the first or in the last position of the reduced run.
        assert np.isnan(np.asarray(op(T([nan, 1.0, 2.0], dtype))))
        assert np.isnan(np.asarray(op(T([1.0, 2.0, nan], dtype))))


@pytest.mark.parametrize("name", ["reduce_max", "reduce_min"])
def test_max_min_of_empty_axis(name: str) -> None:
    op = getattr(tf.prim, name)
    with pytest.raises(ValueError):
        op(tf.zeros((0, 3)), axes=0)
    with pytest.raises(ValueError):
        op(tf.zeros((0, 3)))
    with pytest.raises(ValueError):
        op(tf.zeros((0,), dtype=tf.int32))
    # Reducing a non-empty axis of a zero-size tensor is fine and gives a zero-size result.
    r = op(tf.zeros((3, 0)), axes=0)
    assert r.shape == (0,)
    # No axes: nothing is reduced.
    assert op(tf.zeros((0,)), axes=()).shape == (0,)


def test_sum_and_prod_of_empty_axes_are_identities() -> None:
    assert_close(tf.prim.reduce_sum(tf.zeros((0, 3)), axes=0), np.zeros(3))
    assert_close(tf.prim.reduce_prod(tf.zeros((0, 3)), axes=0), np.ones(3))
    assert_close(tf.prim.reduce_sum(tf.zeros((0,), dtype=tf.int32)), np.int32(0))
    assert_close(tf.prim.reduce_prod(tf.zeros((0,), dtype=tf.int64)), np.int64(1))


def test_reductions_keep_dtype() -> None:
    x = T([2**30, 2**30, 2**30, 2**30], I32)
    s = tf.prim.reduce_sum(x)
    assert s.dtype == I32 and s.shape == ()
    assert int(np.asarray(s)) == int(
        np.array([2**30] * 4, np.int32).sum(dtype=np.int32)
    )  # wraps to 0
    assert tf.prim.reduce_sum(T([1.0, 2.0], F32)).dtype == F32
    assert tf.prim.reduce_prod(T([1 + 1j], C64)).dtype == C64
    # axes=() keeps the shape; negative axes count from the end.
    m = T([[1, 2, 3], [4, 5, 6]], I64)
    assert tf.prim.reduce_sum(m, axes=()).shape == (2, 3)
    assert np.asarray(tf.prim.reduce_sum(m, axes=-1)).tolist() == [6, 15]
    assert np.asarray(tf.prim.reduce_sum(m, axes=(0, 1))).tolist() == 21


# ----------------------------------------------------------------------------------------------
# Accuracy
# ----------------------------------------------------------------------------------------------


def _ordered(x: np.ndarray) -> list[int]:
    """Map float64 values to integers whose differences count ulps (±0 both map to 0)."""
    bits = np.ascontiguousarray(x, dtype=np.float64).view(np.int64)
    mag = bits & np.int64(0x7FFFFFFFFFFFFFFF)
    return np.where(bits < 0, -mag, mag).tolist()


def assert_ulp(actual, desired: np.ndarray, max_ulp: int, what: str) -> None:
    a = np.asarray(actual, dtype=np.float64)
    d = np.asarray(desired, dtype=np.float64)
    assert a.shape == d.shape
    nan_a, nan_d = np.isnan(a), np.isnan(d)
    assert (nan_a == nan_d).all(), f"{what}: NaN mismatch at {np.flatnonzero(nan_a != nan_d)[:5]}"
    keep = ~nan_d
    oa, od = _ordered(a[keep]), _ordered(d[keep])
    dist = np.array([abs(p - q) for p, q in zip(oa, od)], dtype=object)
    worst = int(np.argmax(dist)) if dist.size else 0
    assert dist.size == 0 or dist[worst] <= max_ulp, (
        f"{what}: {dist[worst]} ulp at x={np.flatnonzero(keep)[worst]} "
        f"(got {a[keep][worst]!r}, want {d[keep][worst]!r})"
    )


TINY = [
    1e-300,
    -1e-300,
    1e-20,
    -1e-20,
    1e-8,
    -1e-8,
    5e-324,
    -5e-324,
    0.0,
    -0.0,
    2.2250738585072014e-308,
]


def _grid(lo: float, hi: float) -> np.ndarray:
    mags = np.logspace(-30, np.log10(hi), 300)
    return np.concatenate([np.linspace(lo, hi, 1201), mags, -mags[mags <= -lo], TINY])


def test_erf_within_2_ulp() -> None:
    x = np.concatenate([_grid(-6.0, 6.0), [np.inf, -np.inf, np.nan, 30.0, -30.0]])
    assert_ulp(tf.prim.erf(tf.tensor(x)), scipy.special.erf(x), 2, "erf")


def test_expm1_within_2_ulp() -> None:
    x = np.concatenate([_grid(-50.0, 709.0), [-745.0, -1e3, np.inf, -np.inf, np.nan, 709.78]])
    with np.errstate(over="ignore"):
        want = np.expm1(x)
    assert_ulp(tf.prim.expm1(tf.tensor(x)), want, 2, "expm1")


def test_log1p_within_2_ulp() -> None:
    mags = np.logspace(-30, 300, 400)
    x = np.concatenate(
        [
            np.linspace(-0.999999, 10.0, 1201),
            mags,
            -mags[mags < 1],
            TINY,
            [-1.0 + 2**-52, 1e308, np.inf, np.nan, -1.0],
        ]
    )
    with np.errstate(divide="ignore"):
        want = np.log1p(x)
    assert_ulp(tf.prim.log1p(tf.tensor(x)), want, 2, "log1p")


def test_exp_within_4_ulp_including_edges() -> None:
    edges = [
        709.78,
        709.782712893384,
        709.79,
        710.0,
        -708.39,
        -708.4,
        -740.0,
        -745.0,
        -745.13,
        -745.2,
        -800.0,
    ]
    x = np.concatenate([np.linspace(-745.0, 709.78, 4001), edges, TINY, [np.inf, -np.inf, np.nan]])
    with np.errstate(over="ignore", under="ignore"):
        want = np.exp(x)
    got = tf.prim.exp(tf.tensor(x))
    assert_ulp(got, want, 4, "exp")
    g = np.asarray(got)
    assert g[-3] == np.inf and g[-2] == 0.0 and np.isnan(g[-1])


BRANCH_POINTS = [
    complex(-1.0, 0.0),
    complex(-1.0, -0.0),
    complex(-4.0, 0.0),
    complex(-4.0, -0.0),
    complex(-0.5, 0.0),
    complex(-0.5, -0.0),
    complex(-1e-3, 0.0),
    complex(-1e-3, -0.0),
    complex(-2.5, 1e-300),
    complex(-2.5, -1e-300),
    complex(0.0, 3.0),
    complex(0.0, -3.0),
    complex(-0.0, 2.0),
    complex(-0.0, -2.0),
    1 + 1j,
    -2 + 3j,
    0.5 - 0.25j,
    1e-10 + 1e-10j,
    -1e-10 - 1e-10j,
    2.5 + 0j,
    0.75 - 1.5j,
    -3 - 0.5j,
]


@pytest.mark.parametrize("dtype", (C128, C64), ids=lambda d: d.name)
@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "cos", "tanh"])
def test_complex_functions_follow_numpy_branch_cuts(name: str, dtype: np.dtype) -> None:
    points = BRANCH_POINTS + ([0j, complex(0.0, -0.0)] if name in ("sqrt", "log") else [])
    z = np.array(points, dtype=dtype)  # in complex64 the ±1e-300 parts become ±0.0: on the cut
    with np.errstate(divide="ignore"):
        want = getattr(np, name)(z)
    got = getattr(tf.prim, name)(tf.tensor(z))
    assert got.dtype == dtype
    assert_close(got, want, err_msg=f"{name} at {z.tolist()}")
    # On the cut itself the sign of the imaginary zero selects the side (NumPy/C99).
    if name in ("log", "sqrt"):
        g = np.asarray(got)
        on_cut = (z.real < 0) & (z.imag == 0)
        assert (np.signbit(g.imag[on_cut]) == np.signbit(z.imag[on_cut])).all(), (
            z[on_cut],
            g[on_cut],
        )


def test_float32_sum_is_pairwise() -> None:
    rng = np.random.default_rng(1234)
    x = rng.random(10**6, dtype=np.float32)
    exact = float(np.sum(x, dtype=np.float64))
    numpy_err = abs(float(np.sum(x)) - exact) / exact
    bound = max(5e-7, 4 * numpy_err)  # naive sequential float32 summation is off by ~1e-5 here
    s = tf.prim.reduce_sum(tf.tensor(x))
    assert s.dtype == F32
    assert abs(float(np.asarray(s)) - exact) / exact <= bound
    # A strided (transposed) view and a partial reduction along the long axis.
    m = tf.tensor(x.reshape(1000, 1000))
    s_t = tf.prim.reduce_sum(m.T)
    assert abs(float(np.asarray(s_t)) - exact) / exact <= bound


# Complex functions far from the unit circle: NumPy (C99 csqrt/clog) scales to avoid overflow
# and underflow of |z|. The expected values are checked here against an independent formula.
_HUGE = complex(1e308, 1e308)
_TINY = complex(1e-320, 1e-320)  # subnormal parts


def _polar_sqrt(z: complex) -> complex:
    """sqrt by scaling: sqrt(z) = 2**k * sqrt(z / 4**k), exact in binary floating point."""
    k = 600 if abs(z.real) < 1e-300 else -600
    w = complex(np.ldexp(z.real, 2 * k), np.ldexp(z.imag, 2 * k))
    r = np.sqrt(np.complex128(w))
    return complex(np.ldexp(r.real, -k), np.ldexp(r.imag, -k))


@pytest.mark.parametrize("z", [_HUGE, _TINY], ids=["huge", "subnormal"])
def test_complex_sqrt_extreme_magnitudes(z: complex) -> None:
    want = _polar_sqrt(z)
    with np.errstate(all="ignore"):
        # The oracle agrees with NumPy (atol=0: the values are far below the default atol).
        assert_close(np.sqrt(np.complex128(z)), np.complex128(want), atol=0)
    got = tf.prim.sqrt(tf.tensor(np.array([z])))
    assert_close(got, np.array([want]), atol=0)


def test_complex_log_subnormal() -> None:
    re = float(np.float64(_TINY.real))
    want_real = np.log(np.ldexp(re, 600)) + 0.5 * np.log(2.0) - 600 * np.log(2.0)  # ln(|re|·√2)
    assert abs(float(np.log(np.complex128(_TINY)).real) - want_real) <= 1e-12 * abs(want_real)
    got = np.asarray(tf.prim.log(tf.tensor(np.array([_TINY]))))[0]
    assert_close(got, np.complex128(complex(want_real, np.pi / 4)))

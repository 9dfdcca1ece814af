"""Complex special values and the complex inverse trigonometric/hyperbolic functions (issue 22):
C99 Annex G values of ``sqrt``, ``tanh``, ``exp``, ``expm1`` at infinite and NaN parts, exact
``imag`` of non-finite values, and ``asin``/``acos``/``atan``/``asinh``/``acosh``/``atanh`` of
complex64/complex128 against NumPy (principal branches, signed zeros on the cuts, special
values), with their derivatives against finite differences."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tenferro as tf
from tenferro.testing import check_grads

INF, NAN = math.inf, math.nan
PARTS = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -3.0, 1e300, -1e300, INF, -INF, NAN]
GRID = np.array([complex(a, b) for a, b in itertools.product(PARTS, PARTS)], dtype=np.complex128)
INVERSE = ["arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh"]


def same_special(got: np.ndarray, want: np.ndarray, rtol: float, where: Any) -> None:
    """Equal NaN positions and infinities per part; finite parts close; zero parts with the same
    sign (C99 specifies them)."""
    for part in (np.real, np.imag):
        g, w = part(got), part(want)
        bad = np.isnan(g) != np.isnan(w)
        assert not bad.any(), (where[bad], got[bad], want[bad])
        fin = np.isfinite(w)
        assert np.array_equal(g[~fin & ~np.isnan(w)], w[~fin & ~np.isnan(w)]), (where, got, want)
        np.testing.assert_allclose(g[fin], w[fin], rtol=rtol, atol=0)
        z = fin & (w == 0)
        assert np.array_equal(np.signbit(g[z]), np.signbit(w[z])), (where[z], got[z], want[z])


def test_sqrt_tanh_exp_expm1_special_values() -> None:
    x = tf.asarray(GRID)
    # exp(-inf ± i·inf): C99 leaves the signs of the zero parts unspecified (NumPy: -0 imaginary
    # part for -inf·i, tenferro +0).
    free = (GRID.real == -INF) & np.isinf(GRID.imag)
    with np.errstate(all="ignore"):
        same_special(np.asarray(tf.sqrt(x)), np.sqrt(GRID), 1e-14, GRID)
        same_special(np.asarray(tf.exp(x))[~free], np.exp(GRID)[~free], 1e-14, GRID[~free])
        # expm1: NumPy's complex expm1 is not C99's at infinities (expm1(inf + 0i) = inf + NaN·i);
        # the standard's values are exp(z) - 1 there, and expm1(x ± 0i) = expm1(x) ± 0i (+0 at x = -0).
        fin = np.isfinite(GRID)
        want = np.where(fin, np.expm1(GRID), np.exp(GRID) - 1)
        real_axis = GRID.imag == 0
        want.real[real_axis] = np.expm1(GRID.real[real_axis]) + 0.0  # expm1(-0 + 0i) = +0 + 0i
        want.imag[real_axis] = GRID.imag[real_axis]
        same_special(np.asarray(tf.expm1(x))[~free], want[~free], 1e-14, GRID[~free])
    # tanh: NumPy's own tanh differs from C99 at (0 + i·inf) (NaN real part); the standard's
    # values are checked explicitly.
    t = np.asarray(
        tf.tanh(
            tf.asarray(
                np.array(
                    [
                        complex(0, INF),
                        complex(-0.0, NAN),
                        complex(INF, INF),
                        complex(-INF, NAN),
                        complex(NAN, 0),
                        complex(NAN, -0.0),
                        complex(3, 1),
                    ]
                )
            )
        )
    )
    want = [
        complex(0, NAN),
        complex(-0.0, NAN),
        complex(1, 0),
        complex(-1, 0),
        complex(NAN, 0),
        complex(NAN, -0.0),
        np.tanh(complex(3, 1)),
    ]
    same_special(t, np.array(want), 1e-15, np.arange(len(want)))


def test_imag_is_exact_for_non_finite_real_parts() -> None:
    z = np.array([complex(INF, 1.0), complex(NAN, -2.0), complex(-INF, -0.0)])
    np.testing.assert_array_equal(
        np.signbit(np.asarray(tf.imag(tf.asarray(z)))), np.signbit(z.imag)
    )
    np.testing.assert_array_equal(np.asarray(tf.imag(tf.asarray(z))), z.imag)


@pytest.mark.parametrize("name", INVERSE)
def test_inverse_special_values_match_numpy(name: str) -> None:
    with np.errstate(all="ignore"):
        want = getattr(np, name)(GRID)
    got = np.asarray(getattr(tf, name)(tf.asarray(GRID)))
    same_special(got, want, 1e-13, GRID)
    if name == "arccosh":  # C99: acosh(±0 + NaN·i) = NaN ± i·pi/2
        z = np.asarray(tf.arccosh(tf.asarray(np.array([complex(0.0, NAN), complex(-0.0, NAN)]))))
        assert np.isnan(z.real).all() and np.allclose(np.abs(z.imag), np.pi / 2)


@settings(max_examples=40)
@given(
    hnp.arrays(
        np.complex128,
        hnp.array_shapes(min_dims=0, max_dims=2, max_side=4),
        elements=st.complex_numbers(max_magnitude=1e12, allow_nan=False, allow_infinity=False),
    ),
    st.sampled_from(INVERSE),
)
def test_inverse_functions_match_numpy(z: np.ndarray, name: str) -> None:
    want = getattr(np, name)(z)
    got = getattr(tf, name)(tf.asarray(z))
    assert got.dtype == want.dtype and got.shape == want.shape
    g = np.asarray(got)
    # Absolute error relative to the magnitude: the formulas share NumPy's cancellation near the
    # branch points and the unit circle (atanh), where both are accurate to ~eps·|value|.
    np.testing.assert_allclose(g, want, rtol=1e-9, atol=1e-12 * (1 + np.abs(want).max(initial=0)))
    g32 = np.asarray(getattr(tf, name)(tf.asarray(z.astype(np.complex64))))
    assert g32.dtype == np.complex64
    np.testing.assert_allclose(
        g32,
        getattr(np, name)(z.astype(np.complex64)),
        rtol=2e-5,
        atol=1e-6 * (1 + np.abs(want).max(initial=0)),
    )


@pytest.mark.parametrize("name", INVERSE)
def test_inverse_branch_cuts_and_signed_zeros(name: str) -> None:
    xs = np.array([-3.0, -1.5, -0.5, 0.0, 0.5, 1.5, 3.0, 1e10, -1e10])
    z = np.concatenate(
        [xs + 0j, xs - 0j, 1j * xs, -1j * xs * 1.0 + 0.0, np.array([complex(-0.0, x) for x in xs])]
    )
    z = np.concatenate([z, np.conj(z)])
    with np.errstate(all="ignore"):
        want = getattr(np, name)(z)
    same_special(np.asarray(getattr(tf, name)(tf.asarray(z))), want, 1e-12, z)


@pytest.mark.parametrize("name", INVERSE)
def test_inverse_derivatives(name: str) -> None:
    z = np.array([0.3 + 0.4j, -1.2 + 0.7j, 2.5 - 1.5j, -0.1 - 2.0j])
    f = getattr(tf, name)
    check_grads(f, [z])
    # The derivative is the analytic one, d/dz f(z) (tenferro's convention: the JVP of a
    # holomorphic f along v is f'(z)·v).
    deriv = {
        "arcsin": lambda w: 1 / np.sqrt(1 - w * w),
        "arccos": lambda w: -1 / np.sqrt(1 - w * w),
        "arctan": lambda w: 1 / (1 + w * w),
        "arcsinh": lambda w: 1 / np.sqrt(1 + w * w),
        "arccosh": lambda w: 1 / (np.sqrt(w - 1) * np.sqrt(w + 1)),
        "arctanh": lambda w: 1 / (1 - w * w),
    }[name]
    v = np.array([1.0 + 0.5j, -0.3j, 0.7 + 0j, 1 - 1j])
    _, jv = tf.func.jvp(f, (tf.asarray(z),), (tf.asarray(v),))
    np.testing.assert_allclose(np.asarray(jv), deriv(z) * v, rtol=1e-10)


def test_inverse_functions_trace_under_jit() -> None:
    z = np.array([0.3 + 0.4j, 2 - 1j, -3 + 0j])
    f = tf.jit(lambda t: tf.arcsin(t) + tf.arctanh(t) * tf.arccosh(t))
    np.testing.assert_allclose(
        np.asarray(f(tf.asarray(z))), np.arcsin(z) + np.arctanh(z) * np.arccosh(z), rtol=1e-13
    )


def test_sign_of_minus_zero_and_expm1_at_complex_zero() -> None:
    # NumPy and the Array API: sign(-0.0) = +0.0; expm1(±0 + 0i) = 0 + 0i (real part +0), while
    # the real expm1(-0.0) stays -0.0 and expm1(x - 0i) keeps the -0 imaginary part.
    for dt in (np.float32, np.float64):
        got = np.asarray(tf.sign(tf.asarray(np.array([-0.0, 0.0, -2.0, NAN], dtype=dt))))
        want = np.sign(np.array([-0.0, 0.0, -2.0, NAN], dtype=dt))
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    z = np.array([complex(-0.0, 0.0), complex(0.0, 0.0), complex(-0.0, -0.0), complex(1.0, -0.0)])
    got = np.asarray(tf.expm1(tf.asarray(z)))
    np.testing.assert_array_equal(np.signbit(got.real), [False, False, False, False])
    np.testing.assert_array_equal(np.signbit(got.imag), [False, False, True, True])
    assert np.signbit(np.asarray(tf.expm1(tf.asarray([-0.0])))[0])


def test_atanh_and_atan_near_minus_one_keep_precision() -> None:
    """atanh is odd: a negative real part is folded, so log1p never cancels near -1 (and atan
    near -i, through atan z = -i atanh(iz)). NumPy as the oracle, to 1e-13."""
    zs = np.array([-0.99999999999 + 0j, -0.9999999 + 0j, -1 + 1e-10j, -0.9 - 1e-3j, -2 - 0.0j])
    np.testing.assert_allclose(tf.atanh(tf.asarray(zs)).tolist(), np.arctanh(zs), rtol=1e-13)
    ws = np.array([1e-10 - 1j, 1e-12 - 0.9999999j])
    np.testing.assert_allclose(tf.atan(tf.asarray(ws)).tolist(), np.arctan(ws), rtol=1e-13)


# Real parts where e^x, cosh x or sinh x overflow while the products with cos y / sin y need not
# (up to (1024 + 1074) ln2 ≈ 1454.9), imaginary parts down to subnormal.
BIG = [
    0.0,
    -0.0,
    1e-300,
    -1e-300,
    5e-324,
    0.5,
    -2.0,
    3.0,
    700.0,
    710.0,
    -715.0,
    800.0,
    -1000.0,
    1454.0,
    1500.0,
    INF,
    -INF,
    NAN,
]
BIG_GRID = np.array([complex(a, b) for a, b in itertools.product(BIG, BIG)], dtype=np.complex128)


@pytest.mark.parametrize("name", ["sin", "cos", "exp", "sinh", "cosh"])
def test_forward_functions_past_the_overflow_of_their_real_parts(name: str) -> None:
    """``sin(1000j) = 0 + inf·i`` (not NaN + inf·i), ``exp(800 + 1e-300j)`` keeps its finite
    imaginary part, and C99's special values, as NumPy (npymath's FreeBSD-derived ``csin``,
    ``cexp``)."""
    with np.errstate(all="ignore"):
        want = getattr(np, name)(BIG_GRID)
    got = np.asarray(getattr(tf, name)(tf.asarray(BIG_GRID)))
    # C99 leaves the sign of a zero or infinite part unspecified where the other part is NaN or
    # both parts of the argument are infinite (G.6.2.4-5, G.6.3.1); NumPy picks one, we another.
    free = np.isnan(want.real) | np.isnan(want.imag)
    free |= np.isinf(BIG_GRID.real) & np.isinf(BIG_GRID.imag)
    same_special(got[~free], want[~free], rtol=4e-15, where=BIG_GRID[~free])
    for part in (np.real, np.imag):
        g, w = part(got[free]), part(want[free])
        assert np.array_equal(np.isnan(g), np.isnan(w)), (BIG_GRID[free], got[free], want[free])
        assert np.array_equal(np.abs(g[~np.isnan(w)]), np.abs(w[~np.isnan(w)]))
    # complex64: the same formulas in single precision (the scaled exponential in double)
    small = BIG_GRID[np.isfinite(BIG_GRID) & (np.abs(BIG_GRID.real) < 200)].astype(np.complex64)
    with np.errstate(all="ignore"):
        want32 = getattr(np, name)(small)
    got32 = np.asarray(getattr(tf, name)(tf.asarray(small)))
    same_special(got32, want32, rtol=2e-6, where=small)

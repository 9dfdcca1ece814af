"""Wrong answers a breaker found in issue 22's functions, each against an oracle:

* ``cumprod``'s *second* derivatives with zeros in a slice (the Hessian of ``Σ w·cumprod(x)``,
  forward-over-reverse, reverse-over-reverse) against the brute-force second partials
  ``∂²y_k/∂x_j∂x_m = Π_{i≤k, i∉{j,m}} x_i`` and central differences of the gradient;
* ``cbrt``'s derivative at ``±0``, ``±inf``, NaN (``1/(3·cbrt(x)**2)``, JAX's rule);
* complex ``asin``/``asinh``/``acos``/``acosh`` on tiny, huge and near-1 parts against NumPy
  (the platform's ``casin`` etc.), in units of the last place per component;
* complex ``tan`` for ``|Im z| > 710`` and ``log`` near the unit circle against NumPy.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import check_grads

P = tf.prim
RNG = np.random.default_rng(3322)

# ----------------------------------------------------------------------------------------------
# cumprod: second derivatives at zeros
# ----------------------------------------------------------------------------------------------


def second_partials(x: np.ndarray) -> np.ndarray:
    """``T[k, j, m] = ∂²y_k/∂x_j∂x_m`` of ``y = cumprod(x)`` by direct products (0 on j = m)."""
    n = len(x)
    T = np.zeros((n, n, n), dtype=x.dtype)
    for k, j, m in itertools.product(range(n), repeat=3):
        if j != m and j <= k and m <= k:
            T[k, j, m] = np.prod([x[i] for i in range(k + 1) if i not in (j, m)])
    return T


ZERO_LINES = [
    [1.5, -2.0, 0.5, 3.0],  # no zero
    [0.0, 2.0, 3.0, -1.5],  # one zero (the breaker's case, extended)
    [2.0, 0.0, 3.0, 0.0],  # two zeros
    [0.0, 0.0, 0.0, 2.5],  # three zeros
]


@pytest.mark.parametrize("values", ZERO_LINES)
def test_cumprod_hessian_at_zeros_real(values: list[float]) -> None:
    x = np.array(values)
    w = np.array([0.5, -1.0, 2.0, 1.5])
    T = second_partials(x)
    for weights in (np.ones(4), w):
        H = np.einsum("k,kjm->jm", weights, T)
        f = lambda a, c=weights: tf.sum(tf.asarray(c) * tf.cumprod(a))  # noqa: E731
        got = np.asarray(tf.func.hessian(f)(tf.asarray(x)))
        np.testing.assert_allclose(got, H, rtol=1e-14, atol=1e-14)
        np.testing.assert_array_equal(got, got.T)  # symmetric
        # reverse-over-reverse and forward-over-reverse, and central differences of the grad
        g = tf.func.grad(f)
        np.testing.assert_allclose(
            np.asarray(tf.func.jacrev(g)(tf.asarray(x))), H, rtol=1e-14, atol=1e-14
        )
        v = RNG.standard_normal(4)
        _, hv = tf.func.jvp(g, (tf.asarray(x),), (tf.asarray(v),))
        np.testing.assert_allclose(np.asarray(hv), H @ v, rtol=1e-13, atol=1e-13)
        h = 1e-6
        fd = (np.asarray(g(tf.asarray(x + h * v))) - np.asarray(g(tf.asarray(x - h * v)))) / (2 * h)
        np.testing.assert_allclose(np.asarray(hv), fd, rtol=1e-7, atol=1e-7)
    # the breaker's example: sum(cumprod([0, 2, 3])) has Hessian [[0, 4, 2], [4, 0, 0], [2, 0, 0]]
    got = tf.func.hessian(lambda a: tf.sum(tf.cumprod(a)))(tf.asarray([0.0, 2.0, 3.0]))
    np.testing.assert_array_equal(np.asarray(got), [[0, 4, 2], [4, 0, 0], [2, 0, 0]])


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_cumprod_forward_over_reverse_2d(axis: int, dtype: str) -> None:
    """``x ↦ vjp(cumprod(x, axis))(ȳ) = J(x)^H ȳ`` differentiated along ``v`` (jvp-of-vjp),
    each line holding 0, 1, 2 and 3 zeros, against the brute-force second partials:
    ``d/dt J(x + tv)^H ȳ = conj(Σ_m v_m ∂_m J)^T ȳ``."""
    lines = np.array(ZERO_LINES, dtype=dtype)  # (4 lines, 4)
    if dtype == "complex128":
        lines = lines * np.array([1 + 0.5j, -0.3 + 1j, 0.7 - 0.2j, 1j])
    x = lines if axis == 1 else lines.T
    ct = RNG.standard_normal(x.shape).astype(dtype)
    v = RNG.standard_normal(x.shape).astype(dtype)
    if dtype == "complex128":
        ct = ct + 1j * RNG.standard_normal(x.shape)
        v = v + 1j * RNG.standard_normal(x.shape)

    def g(a: tf.Tensor) -> tf.Tensor:
        _, back = tf.func.vjp(lambda b: P.cumprod(b, axis), a)
        return back(tf.asarray(ct))[0]

    _, got = tf.func.jvp(g, (tf.asarray(x),), (tf.asarray(v),))
    got = np.asarray(got)
    want = np.zeros_like(x)
    for r in range(4):
        sl = (r, slice(None)) if axis == 1 else (slice(None), r)
        T = second_partials(x[sl])
        D = np.einsum("kjm,m->kj", T, v[sl])
        want[sl] = np.conj(D).T @ ct[sl]
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    h = 1e-6
    fd = (np.asarray(g(tf.asarray(x + h * v))) - np.asarray(g(tf.asarray(x - h * v)))) / (2 * h)
    np.testing.assert_allclose(got, fd, rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_cumprod_check_grads_order2_with_zeros(dtype: str) -> None:
    x = np.array([[0.0, 2.0, 0.0, 1.5, -0.5], [1.5, 0.0, 0.0, 0.0, 2.0]], dtype=dtype)
    if dtype == "complex128":
        x = x * (1 - 0.5j)
    check_grads(lambda a: P.cumprod(a, 1), [x], order=2)
    check_grads(lambda a: P.cumprod(a.T, 0), [x], order=2)


def test_cumprod_gradient_without_overflow() -> None:
    # The partials are formed without dividing y_k by x_j: y_1 = 1e-400 underflows to 0 here
    # while dy_2/dx_0 = x_1·x_2 = 1 and dy_2/dx_1 = x_0·x_2 = 1 (y_k/x_j gave 1 and 0).
    x = tf.asarray([1e-200, 1e-200, 1e200])
    got = np.asarray(tf.func.grad(lambda a: tf.sum(tf.cumprod(a)))(x))
    np.testing.assert_array_equal(got, [2.0, 1.0, 0.0])


# ----------------------------------------------------------------------------------------------
# cbrt: derivative at special values
# ----------------------------------------------------------------------------------------------


def test_cbrt_derivative_special_values() -> None:
    x = np.array([0.0, -0.0, math.inf, -math.inf, math.nan, 8.0, -27.0, 1e-300])
    y = tf.cbrt(tf.asarray(x))
    np.testing.assert_array_equal(np.asarray(y)[:5], x[:5])
    np.testing.assert_array_equal(np.signbit(np.asarray(y)), np.signbit(np.cbrt(x)))
    np.testing.assert_array_equal(np.asarray(y)[5:7], [2.0, -3.0])
    g = np.asarray(tf.func.grad(lambda a: tf.sum(tf.cbrt(a)))(tf.asarray(x)))
    with np.errstate(divide="ignore"):
        want = 1 / (3 * np.cbrt(x) ** 2)  # inf, inf, 0, 0, nan, 1/12, 1/27, 1/(3e-200)
    np.testing.assert_allclose(g, want, rtol=1e-14)
    _, jv = tf.func.jvp(tf.cbrt, (tf.asarray(x),), (tf.asarray(np.ones_like(x)),))
    np.testing.assert_allclose(np.asarray(jv), want, rtol=1e-14)
    # float32 and the second derivative -2/(9 x**(5/3)) away from 0
    g32 = tf.func.grad(lambda a: tf.sum(tf.cbrt(a)))(tf.asarray(x.astype(np.float32)))
    assert np.asarray(g32).dtype == np.float32 and np.isinf(np.asarray(g32)[:2]).all()
    check_grads(tf.cbrt, [np.array([8.0, -2.0, 0.3])], order=2)
    h = np.asarray(tf.func.hessian(lambda a: tf.sum(tf.cbrt(a)))(tf.asarray([8.0, -1.0])))
    np.testing.assert_allclose(np.diag(h), [-2 / (9 * 32), 2 / 9], rtol=1e-14)


# ----------------------------------------------------------------------------------------------
# complex asin/asinh/acos/acosh: accuracy in ulps against NumPy
# ----------------------------------------------------------------------------------------------

SMALL = [0.0, 1e-300, 1e-20, 1e-9, 1e-5]
MID = [0.5, 1 - 2**-52, 1.0, 1 + 2**-52, 1 + 1e-9, 1.5, 3.0, 1e8, 1e20]
BIG = [1e300, math.inf, math.nan]
PARTS = SMALL + MID + BIG
SIGNED = sorted({s * p for p in PARTS for s in (1.0, -1.0)}, key=str) + [-0.0]
ZGRID = np.array([complex(a, b) for a, b in itertools.product(SIGNED, SIGNED)])


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """``|got - want|`` in units of the last place of ``want`` (finite, nonzero parts), as the
    spacing at ``|want|`` (subnormal spacing below the normal range)."""
    return np.abs(got - want) / np.spacing(np.abs(want))


@pytest.mark.parametrize("name", ["arcsin", "arcsinh", "arccos", "arccosh"])
def test_complex_inverse_ulp_grid(name: str) -> None:
    with np.errstate(all="ignore"):
        want = getattr(np, name)(ZGRID)
    got = np.asarray(getattr(tf, name)(tf.asarray(ZGRID)))
    worst = 0.0
    for part in (np.real, np.imag):
        g, w = part(got), part(want)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=name)
        inf = np.isinf(w)
        np.testing.assert_array_equal(g[inf], w[inf], err_msg=name)
        z = w == 0
        np.testing.assert_array_equal(np.signbit(g[z]), np.signbit(w[z]), err_msg=name)
        assert (g[z] == 0).all(), (name, ZGRID[z][g[z] != 0], g[z][g[z] != 0])
        fin = np.isfinite(w) & ~z
        e = ulps(g[fin], w[fin])
        bad = e > 4
        assert not bad.any(), (name, ZGRID[fin][bad], g[fin][bad], w[fin][bad], e[bad])
        worst = max(worst, float(e.max(initial=0)))
    assert worst <= 4


def test_complex_inverse_tiny_parts_keep_relative_precision() -> None:
    # asinh(1e-300 + 0.5i) = 1.1547e-300 + 0.5236i (the breaker's 0), asin(0.5 + 1e-300i) likewise
    z = np.array([1e-300 + 0.5j, 1e-20 + 0.9j, 0.5 + 1e-300j, 1e-20 + 1.5j, 1 + 1e-20j])
    for name in ("arcsinh", "arcsin", "arccos", "arccosh"):
        got = np.asarray(getattr(tf, name)(tf.asarray(z)))
        want = getattr(np, name)(z)
        np.testing.assert_allclose(got.real, want.real, rtol=1e-15, atol=0, err_msg=name)
        np.testing.assert_allclose(got.imag, want.imag, rtol=1e-15, atol=0, err_msg=name)


@pytest.mark.parametrize("name", ["arcsin", "arcsinh", "arccos", "arccosh"])
def test_complex_inverse_derivatives_in_every_region(name: str) -> None:
    # points in each of Hull et al.'s regions: A near 1, A > 10, y/A near 1, tiny parts
    z = np.array([0.3 + 0.4j, 1e-9 + 0.5j, 1e-9 + 1.5j, 2e-8 + 0.999j, 20 - 30j, 0.9 + 1e-7j])
    f = getattr(tf, name)
    deriv = {
        "arcsin": lambda w: 1 / np.sqrt(1 - w * w),
        "arccos": lambda w: -1 / np.sqrt(1 - w * w),
        "arcsinh": lambda w: 1 / np.sqrt(1 + w * w),
        "arccosh": lambda w: 1 / (np.sqrt(w - 1) * np.sqrt(w + 1)),
    }[name]
    v = np.array([1.0 + 0.5j, -0.3j, 0.7 + 0j, 1 - 1j, 1j, 0.5 + 0j])
    _, jv = tf.func.jvp(f, (tf.asarray(z),), (tf.asarray(v),))
    np.testing.assert_allclose(np.asarray(jv), deriv(z) * v, rtol=1e-8)
    check_grads(f, [np.array([0.3 + 0.4j, 2.0 - 1.5j, -0.1 + 1.5j])], order=2)


# ----------------------------------------------------------------------------------------------
# complex tan and log
# ----------------------------------------------------------------------------------------------


def test_complex_tan_large_imaginary_part() -> None:
    z = np.array([1 + 800j, 1 - 800j, -2 + 1000j, 0.5 + 710.5j, 3 - 1e300j, 1 + 2j, 0.0 + 0j])
    z = np.concatenate([z, [complex(-0.0, 800.0), complex(0.0, math.inf)]])
    with np.errstate(all="ignore"):
        want = np.tan(z)
    got = np.asarray(tf.tan(tf.asarray(z)))
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)
    np.testing.assert_array_equal(np.signbit(got.real), np.signbit(want.real))
    np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(want.imag))
    check_grads(tf.tan, [np.array([0.3 + 0.4j, -1.0 + 2.0j])], order=2)


def test_complex_log_near_unit_circle() -> None:
    z = np.array([1 + 1e-10j, 1 - 2**-30 + 2**-20 * 1j, 1e-10 - 1j, 0.6 + 0.8j, 1.5 + 0j])
    got = np.asarray(tf.log(tf.asarray(z)))
    want = np.log(z)
    np.testing.assert_allclose(got.real, want.real, rtol=1e-14, atol=0)
    np.testing.assert_allclose(got.imag, want.imag, rtol=1e-15, atol=0)
    assert got.real[0] > 4.9e-21  # was 0


def test_arctan2_large_and_tiny_operands() -> None:
    # The large-operand scaling of the arctan2 composition flushed the small operand: atan2 of
    # (5.9e-158, 8.2e153) is 7.2e-312, not 0 (and Re acos(8.2e153 - 5.9e-158j) with it).
    y = np.array([5.91e-158, 1e-300, 2.0**-574, -3e-200, 1e300])
    x = np.array([8.2e153, 1e300, 2.0**501, 1e120, -1e-300])
    got = np.asarray(tf.arctan2(tf.asarray(y), tf.asarray(x)))
    np.testing.assert_array_equal(got, np.arctan2(y, x))
    z = np.array([8.2e153 - 5.91e-158j, -3e160 + 1e-160j])
    np.testing.assert_allclose(np.asarray(tf.arccos(tf.asarray(z))), np.arccos(z), rtol=1e-15)


# --- breaker findings of the merged tree (session 33) ---


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_tan_tanh_near_the_poles_and_for_large_parts_match_numpy(dtype):
    """Kahan's ctanh (FreeBSD s_ctanh.c): the textbook quotient cancelled near the poles
    (tan(pi/2 + 0j) was inf+nanj, tan(1.57079632) 17 % off) and 2y overflowed."""
    z = np.array(
        [
            np.pi / 2 + 0j,
            1.57079632 + 0j,
            -1.5707963 + 0j,
            0.5 + 30j,
            0.3 + 0.2j,
            -2 - 3j,
            3e37 + 0.1j,
        ],
        dtype=dtype,
    )
    tol = 1e-14 if dtype == np.complex128 else 2e-6
    for name, arg in (("tan", z), ("tanh", 1j * z)):
        got = np.asarray(getattr(tf, name)(tf.asarray(arg.astype(dtype))))
        want = getattr(np, name)(arg.astype(dtype))
        np.testing.assert_allclose(got, want, rtol=tol, atol=0)
    # |Re| >= 22: the tiny imaginary part is kept (NumPy: 1.47e-26), not flushed to 0
    got = complex(np.asarray(tf.tanh(tf.asarray(np.array([30 + 0.5j])))[0]))
    assert got.real == 1.0 and got.imag == pytest.approx(np.tanh(30 + 0.5j).imag, rel=1e-13)


def test_atanh_on_the_pole_line_with_a_tiny_imaginary_part_is_finite():
    z = np.array([1 + 1e-160j, -1 - 1e-200j, 1 + 1e-17j])
    np.testing.assert_allclose(np.asarray(tf.atanh(tf.asarray(z))), np.arctanh(z), rtol=1e-14)
    np.testing.assert_allclose(
        np.asarray(tf.atan(tf.asarray(np.array([1e-160 + 1j])))),
        np.arctan([1e-160 + 1j]),
        rtol=1e-14,
    )


def test_einsum_promotes_every_operand_before_it_computes():
    """np.einsum's default: a label summed within one operand, or two narrow operands
    contracted first, must not wrap (int32) or overflow (float32)."""
    i32 = np.full(4, 2**30, np.int32)
    y = np.array([1], np.int64)
    for eq, ops in (
        ("i,j->j", (i32, y)),
        ("i,i,j->j", (np.full(2, 2**20, np.int32), np.full(2, 2**20, np.int32), y)),
        ("i,i,j->j", (np.full(3, 1e30, np.float32), np.full(3, 1e30, np.float32), np.ones(1))),
    ):
        want = np.einsum(eq, *ops)
        got = tf.einsum(eq, *ops)
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
        np.testing.assert_allclose(
            np.asarray(tf.jit(lambda *a, e=eq: tf.einsum(e, *a))(*ops)), want, rtol=1e-12
        )


def test_vector_norm_negative_order_does_not_underflow():
    for x, p in (([1.0, 1e300], -2), ([1e-300, 1e300], -0.5), ([0.5, 1e-3, 3.0], -1.5)):
        x = np.array(x)
        want = np.linalg.vector_norm(x, ord=p)
        np.testing.assert_allclose(np.asarray(tf.linalg.vector_norm(x, ord=p)), want, rtol=1e-14)
    check_grads(
        lambda v: tf.linalg.vector_norm(v, ord=-2), (tf.asarray([0.5, 1e-3, 3.0]),), order=2
    )


def test_argmax_over_a_zero_size_tensor_along_a_nonempty_axis():
    for f, nf in ((tf.argmax, np.argmax), (tf.argmin, np.argmin)):
        for shape, axis in (((0, 3), 1), ((3, 0), 0)):
            got = f(np.zeros(shape), axis=axis)
            assert got.shape == nf(np.zeros(shape), axis=axis).shape
        with pytest.raises(ValueError, match="empty sequence"):
            f(np.zeros((3, 0)), axis=1)

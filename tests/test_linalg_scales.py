"""``tf.linalg`` at extreme scales (issue 17, part 5): values at ``1e±200`` and ``1e±300`` (float64,
complex128; ``1e±30`` float32) against NumPy/SciPy up to gauge, ``det`` matching NumPy's inf/0
where NumPy over/underflows, scale covariance of the ``svd``/``eigh`` derivatives
(``∇L(c·A) = c^(k−1)·∇L(A)`` for a loss homogeneous of degree ``k``), ``norm``'s gradient under
over/underflow of the squares, and regression tests with the inputs of the issue."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.linalg as sla

import tenferro as tf
from tenferro.testing import check_grads

L = tf.linalg
SCALES = (1e-300, 1e-200, 1e200, 1e300)
RC = ("float64", "complex128")


def rand(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def H(x: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(x, -1, -2))


def assert_normwise(got: Any, ref: np.ndarray, unit: float, tol: float) -> None:
    """``‖got − ref‖ ≤ tol·‖ref‖``, measured in ``unit`` (so the norms themselves do not over- or
    underflow)."""
    g = np.asarray(got).astype(np.complex128) / unit
    r = np.asarray(ref).astype(np.complex128) / unit
    assert np.all(np.isfinite(g)), g
    err = np.linalg.norm(g - r)
    assert err <= tol * np.linalg.norm(r), (
        f"normwise error {err / np.linalg.norm(r):.2e} > {tol:.0e}"
    )


def align_columns(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """``got`` with each column multiplied by the unit phase that best matches ``ref``'s (the
    gauge of singular and eigenvectors, and the sign of ``qr``'s columns)."""
    d = np.sum(np.conj(got) * ref, axis=-2, keepdims=True)
    ph = np.where(np.abs(d) > 0, d / np.where(np.abs(d) > 0, np.abs(d), 1), 1)
    return got * ph


TOL = {"float64": 1e-12, "complex128": 1e-12, "float32": 1e-5, "complex64": 1e-5}
F32_SCALES = (1e-30, 1e30)


def cases() -> list[tuple[str, float]]:
    return [(d, c) for d in RC for c in SCALES] + [
        (d, c) for d in ("float32", "complex64") for c in F32_SCALES
    ]


# ---------------------------------------------------------------------------------------------
# values against NumPy
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("dtype", "c"), cases(), ids=str)
def test_decompositions_match_numpy_at_extreme_scales(dtype: str, c: float) -> None:
    tol = TOL[dtype]
    a = (rand((4, 4), dtype) * c).astype(dtype)
    b = (rand((4, 3), dtype, seed=1) * c).astype(dtype)
    h = ((rand((4, 4), dtype, seed=2) + H(rand((4, 4), dtype, seed=2))) * c).astype(dtype)
    g = rand((4, 4), dtype, seed=3)
    p = ((g @ H(g) + 4 * np.eye(4)) * c).astype(dtype)
    r = (rand((5, 3), dtype, seed=4) * c).astype(dtype)
    ref = {
        k: v.astype(np.complex128) if dtype in ("float32", "complex64") else v
        for k, v in dict(a=a, b=b, h=h, p=p, r=r).items()
    }

    # svd / svdvals (also rectangular), values and vectors up to phase
    for m in (a, r):
        mr = m.astype(ref["a"].dtype)
        u, s, vh = L.svd(m, full_matrices=False)
        un, sn, vhn = np.linalg.svd(mr, full_matrices=False)
        assert_normwise(s, sn, c, tol)
        assert_normwise(L.svdvals(m), sn, c, tol)
        assert_normwise(align_columns(np.asarray(u), un), un, 1.0, tol * 10)
        assert_normwise(align_columns(H(np.asarray(vh)), H(vhn)), H(vhn), 1.0, tol * 10)

    # eigh / eigvalsh
    w, v = L.eigh(h)
    wn, vn = np.linalg.eigh(ref["h"])
    assert_normwise(w, wn, c, tol)
    assert_normwise(L.eigvalsh(h), wn, c, tol)
    assert_normwise(align_columns(np.asarray(v), vn), vn, 1.0, tol * 10)

    # eig (eigenvalues in NumPy's order by matching, vectors up to phase)
    we, ve = (np.asarray(t) for t in L.eig(a))
    wne, vne = np.linalg.eig(ref["a"])
    order = [int(np.argmin(np.abs(we / c - z / c))) for z in wne]
    assert sorted(order) == list(range(4))
    assert_normwise(we[order], wne, c, tol)
    assert_normwise(align_columns(ve[:, order], vne), vne, 1.0, tol * 100)

    # qr: R up to the signs of its rows, Q up to the signs of its columns
    for m in (a, r):
        q, rr = (np.asarray(t) for t in L.qr(m))
        qn, rn = np.linalg.qr(m.astype(ref["a"].dtype))
        ph = np.diagonal(rn) / np.abs(np.diagonal(rn))
        assert_normwise(rr, np.conj(ph)[:, None] * rn, c, tol)
        assert_normwise(q, qn * ph[None, :], 1.0, tol * 10)

    # cholesky: L scales with sqrt(c)
    assert_normwise(L.cholesky(p), np.linalg.cholesky(ref["p"]), np.sqrt(c), tol)

    # lu against SciPy (same partial pivoting)
    pl, ll, ul = (np.asarray(t) for t in L.lu(a))
    ps, ls, us = sla.lu(ref["a"])
    np.testing.assert_array_equal(pl, ps)
    assert_normwise(ll, ls, 1.0, tol)
    assert_normwise(ul, us, c, tol)

    # solve (x = A⁻¹·b is O(1)); b at another scale too
    assert_normwise(L.solve(a, b), np.linalg.solve(ref["a"], ref["b"]), 1.0, tol * 10)
    b1 = (b / c).astype(dtype)
    assert_normwise(
        L.solve(a, b1), np.linalg.solve(ref["a"], b1.astype(ref["a"].dtype)), 1 / c, tol * 10
    )

    # pinv scales with 1/c
    assert_normwise(L.pinv(r), np.linalg.pinv(ref["r"]), 1 / c, tol * 10)

    # slogdet is finite; det is NumPy's value, inf or 0 where that over/underflows
    s, ld = L.slogdet(a)
    sn, ldn = np.linalg.slogdet(ref["a"])
    assert np.isfinite(float(ld))
    assert abs(float(ld) - ldn) <= tol * abs(ldn)
    assert abs(complex(s) - sn) <= tol
    with np.errstate(over="ignore", under="ignore"):
        dn = np.linalg.det(a)
    d = np.asarray(L.det(a))
    if np.isfinite(dn) and dn != 0 and np.abs(dn) > np.finfo(a.real.dtype).tiny:
        assert abs(d - dn) <= 1e3 * np.finfo(a.real.dtype).eps * abs(dn)
    else:
        assert (
            (np.isinf(dn) and np.isinf(d) and np.sign(d.real) == np.sign(dn.real))
            or (dn == 0 and d == 0)
            or (abs(dn) <= np.finfo(a.real.dtype).tiny and abs(d) <= np.finfo(a.real.dtype).tiny)
        ), (d, dn)

    # norms: Frobenius and 2-norm are ``c·‖A‖`` (NumPy's ``sqrt(Σ x²)`` overflows above ≈1e154;
    # SciPy's LAPACK ``nrm2`` does not)
    for ord_ in (None, "fro", 2, "nuc"):
        assert_normwise(L.norm(a, ord_), np.linalg.norm(ref["a"] / c, ord_) * c, c, tol)
    assert_normwise(L.norm(a[:, 0]), sla.norm(ref["a"][:, 0]), c, tol)


@pytest.mark.parametrize("c", [1e300, 1e-300])
def test_det_overflows_and_underflows_like_numpy(c: float) -> None:
    """A 3×3 determinant at ``1e±300`` is ``1e±900``: NumPy returns inf / 0, and so does
    ``det``; ``slogdet`` stays finite."""
    a = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, -4.0]]) * c
    with np.errstate(over="ignore", under="ignore"):
        dn = np.linalg.det(a)
    d = float(L.det(a))
    assert d == dn and np.signbit(d) == np.signbit(dn)
    s, ld = L.slogdet(a)
    sn, ldn = np.linalg.slogdet(a)
    assert float(s) == sn and abs(float(ld) - ldn) <= 1e-13 * abs(ldn)


# ---------------------------------------------------------------------------------------------
# regression tests: the inputs of the issue
# ---------------------------------------------------------------------------------------------


def test_svdvals_of_a_tiny_matrix_matches_numpy() -> None:
    """Was ``[3.16, 1.58]e-200`` (NumPy ``[3.62, 1.38]e-200``)."""
    a = np.array([[1.0, 2.0], [3.0, 1.0]]) * 1e-200
    assert_normwise(L.svdvals(a), np.linalg.svdvals(a), 1e-200, 1e-14)


@pytest.mark.parametrize("c", [1e155, 1e160, 1e200, 1e300, 1e307])
def test_svd_of_a_huge_matrix_converges(c: float) -> None:
    """Raised "did not converge" above ≈1e155."""
    a = np.array([[1.0, 2.0], [3.0, 1.0]]) * c
    u, s, vh = L.svd(a)
    assert_normwise(s, np.linalg.svdvals(a), c, 1e-14)
    assert_normwise(np.asarray(u) @ np.diag(np.asarray(s) / c) @ np.asarray(vh), a / c, 1.0, 1e-14)


@pytest.mark.parametrize("dtype", RC)
def test_eigh_near_the_overflow_threshold_is_finite(dtype: str) -> None:
    """Entries near 1e307 gave ±inf eigenvalues (``[[1, 2], [2, 1]]·3e307``: ``[-inf, inf]``,
    NumPy ``[-3e307, 9e307]``)."""
    a2 = (np.array([[1.0, 2.0], [2.0, 1.0]]) * 3e307).astype(dtype)
    assert_normwise(L.eigvalsh(a2), np.linalg.eigvalsh(a2), 1e307, 1e-15)
    assert_normwise(L.eigh(a2).eigenvalues, [-3e307, 9e307], 1e307, 1e-15)
    a = (np.array([[1.0, 2.0, 0.5], [2.0, 1.0, -1.0], [0.5, -1.0, 3.0]]) * 2e307).astype(dtype)
    if dtype == "complex128":
        a = a + 1j * np.array([[0, 1, -1], [-1, 0, 0.5], [1, -0.5, 0]]) * 1e307
    w, v = L.eigh(a)
    wn = np.linalg.eigvalsh(a)
    assert_normwise(w, wn, 1e307, 1e-14)
    v = np.asarray(v)
    assert_normwise(v @ np.diag(np.asarray(w) / 1e307) @ H(v), a / 1e307, 1.0, 1e-13)


# ---------------------------------------------------------------------------------------------
# scale covariance of the svd / eigh derivatives
# ---------------------------------------------------------------------------------------------

COVARIANCE_SCALES = (1e-100, 1e-6, 1.0, 1e6, 1e100)


def svd_vector_loss(dtype: str, shape: tuple[int, int]) -> Callable[[Any], Any]:
    """A loss of the singular vectors alone (homogeneous of degree 0), gauge-invariant:
    ``Re Σ W₁∘(U·D₁·Uᴴ) + Re Σ W₂∘(V·D₂·Vᴴ)``."""
    m, n = shape
    k = min(m, n)
    w1, w2 = rand((m, m), dtype, seed=5), rand((n, n), dtype, seed=6)
    d1, d2 = np.arange(1.0, k + 1), np.arange(k, 0.0, -1)

    def f(x: Any) -> Any:
        u, _, vh = L.svd(x, full_matrices=False)
        pu = tf.matmul(u * d1, tf.conj(L.matrix_transpose(u)))
        pv = tf.matmul(tf.conj(L.matrix_transpose(vh)) * d2, vh)
        return tf.real(tf.sum(pu * w1) + tf.sum(pv * w2))

    return f


def svd_value_loss(dtype: str, shape: tuple[int, int]) -> Callable[[Any], Any]:
    """``Σ wᵢ·sᵢ`` (homogeneous of degree 1)."""
    wts = np.arange(1.0, min(shape) + 1)
    return lambda x: tf.sum(L.svdvals(x) * wts)


def eigh_vector_loss(dtype: str, shape: tuple[int, int]) -> Callable[[Any], Any]:
    n = shape[0]
    w1 = rand((n, n), dtype, seed=7)
    d = np.arange(1.0, n + 1)

    def f(x: Any) -> Any:
        _, v = L.eigh(x)
        return tf.real(tf.sum(tf.matmul(v * d, tf.conj(L.matrix_transpose(v))) * w1))

    return f


def eigh_value_loss(dtype: str, shape: tuple[int, int]) -> Callable[[Any], Any]:
    wts = np.arange(1.0, shape[0] + 1)
    return lambda x: tf.sum(L.eigvalsh(x) * wts)


def grad_at(f: Callable[[Any], Any], a: np.ndarray) -> np.ndarray:
    rt = tf.Runtime()
    x = rt.variable(a)
    return np.asarray(rt.grad(f(x), x))


LOSSES = [
    ("svd vectors", svd_vector_loss, 0, (4, 4)),
    ("svd vectors", svd_vector_loss, 0, (5, 3)),
    ("svd vectors", svd_vector_loss, 0, (3, 5)),
    ("svd values", svd_value_loss, 1, (4, 4)),
    ("svd values", svd_value_loss, 1, (5, 3)),
    ("eigh vectors", eigh_vector_loss, 0, (4, 4)),
    ("eigh values", eigh_value_loss, 1, (4, 4)),
]


def matrix_for(name: str, dtype: str, shape: tuple[int, int]) -> np.ndarray:
    a = rand(shape, dtype, seed=8)
    return ((a + H(a)) / 2).astype(dtype) if name.startswith("eigh") else a


@pytest.mark.parametrize("dtype", RC)
@pytest.mark.parametrize(
    ("name", "make", "k", "shape"), LOSSES, ids=lambda v: str(v) if not callable(v) else ""
)
def test_gradients_are_scale_covariant(
    name: str, make: Any, k: int, shape: tuple[int, int], dtype: str
) -> None:
    """``∇L(c·A) = c^(k−1)·∇L(A)`` to 1e-10 for ``c`` in ``1e-100 … 1e100``; was 18 % off at
    ``c = 1e-6`` for the singular vectors (absolute broadening ``1e-12``)."""
    f = make(dtype, shape)
    a = matrix_for(name, dtype, shape)
    g1 = grad_at(f, a)
    assert np.all(np.isfinite(g1)) and np.linalg.norm(g1) > 0
    for c in COVARIANCE_SCALES:
        gc = grad_at(f, (a * c).astype(dtype))
        assert_normwise(gc, g1 * c ** (k - 1), c ** (k - 1), 1e-10)


@pytest.mark.parametrize("dtype", RC)
@pytest.mark.parametrize(
    ("name", "make", "k", "shape"), LOSSES, ids=lambda v: str(v) if not callable(v) else ""
)
def test_gradients_at_unit_scale_match_finite_differences(
    name: str, make: Any, k: int, shape: tuple[int, int], dtype: str
) -> None:
    check_grads(make(dtype, shape), [matrix_for(name, dtype, shape)], order=2)


@pytest.mark.parametrize("dtype", RC)
@pytest.mark.parametrize("name", ["svd vectors", "eigh vectors"])
def test_singular_vector_gradients_survive_at_1e_minus_200(name: str, dtype: str) -> None:
    """Vanished near 1e-200 (the squared gaps underflowed under the absolute broadening); now
    ``1e200`` times the gradient at scale 1 (the forward is computed on ``2^e·A``)."""
    make = svd_vector_loss if name.startswith("svd") else eigh_vector_loss
    f = make(dtype, (4, 4))
    a = matrix_for(name, dtype, (4, 4))
    g1 = grad_at(f, a)
    gc = grad_at(f, (a * 1e-200).astype(dtype))
    assert_normwise(gc, g1 / 1e-200, 1e200, 1e-10)


def test_svd_vector_gradient_at_1e_minus_6_matches_unit_scale() -> None:
    """The issue's finding: a random 4×4 matrix scaled by 1e-6, scale-invariant loss of the
    singular vectors, 18 % max-relative error before."""
    f = svd_vector_loss("float64", (4, 4))
    a = rand((4, 4), "float64", seed=9)
    g1, g2 = grad_at(f, a), grad_at(f, a * 1e-6) * 1e-6
    assert np.max(np.abs(g2 - g1)) <= 1e-10 * np.max(np.abs(g1))


# ---------------------------------------------------------------------------------------------
# norm
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        ([1e-170, 0.0], [1.0, 0.0]),
        ([1e200, 1e200], [2**-0.5, 2**-0.5]),
        ([3e-320, -4e-320], [0.6, -0.8]),
        ([3e307, 4e307], [0.6, 0.8]),
    ],
    ids=str,
)
def test_norm_gradient_survives_under_and_overflow(x: list[float], expected: list[float]) -> None:
    """Was 0 at ``[1e-170, 0]`` and ``[1e200, 1e200]``: ``Σx²`` under/overflowed."""
    rt = tf.Runtime()
    v = rt.variable(np.array(x))
    np.testing.assert_allclose(
        np.asarray(rt.grad(L.norm(v), v)), expected, rtol=1e-12 if abs(x[0]) > 1e-300 else 1e-3
    )
    np.testing.assert_allclose(
        float(L.norm(np.array(x))),
        sla.norm(np.array(x)),
        rtol=1e-12 if abs(x[0]) > 1e-300 else 1e-3,
    )


@pytest.mark.parametrize("dtype", RC)
@pytest.mark.parametrize(
    ("ord_", "axis"),
    [(None, None), (2, 1), (3, 1), (0.5, 1), ("fro", (0, 1)), (None, (0, 1))],
    ids=str,
)
@pytest.mark.parametrize("c", SCALES + (1.0,))
def test_norm_values_and_gradients_are_scale_covariant(
    ord_: Any, axis: Any, c: float, dtype: str
) -> None:
    a = rand((3, 4), dtype, seed=10)
    ref = np.linalg.norm(a, ord_, axis)
    assert_normwise(L.norm((a * c).astype(dtype), ord_, axis), ref * c, c, 1e-13)
    g1 = grad_at(lambda x: tf.sum(L.norm(x, ord_, axis)), a)
    gc = grad_at(lambda x: tf.sum(L.norm(x, ord_, axis)), (a * c).astype(dtype))
    assert_normwise(gc, g1, 1.0, 1e-12)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_norm_keeps_numpy_special_values() -> None:
    """Scaling by ``max|x|`` leaves inf, NaN and zero vectors as NumPy has them."""
    assert float(L.norm(np.array([np.inf, 1.0]))) == np.inf
    assert np.isnan(float(L.norm(np.array([np.nan, 1.0]))))
    assert float(L.norm(np.zeros(3))) == 0.0
    assert float(L.norm(np.array([0.0, 0.0]), -1)) == 0.0
    np.testing.assert_allclose(
        float(L.norm(np.array([3.0, 0.0, 4.0]), -2)), np.linalg.norm([3.0, 0.0, 4.0], -2)
    )


@pytest.mark.parametrize("dtype", RC)
@pytest.mark.parametrize("name", ["svd vectors", "eigh vectors"])
def test_the_unit_is_per_matrix_of_a_batch(name: str, dtype: str) -> None:
    """A batch mixing scales 1e-100 and 1e100: each matrix gets its own unit σ, so each gradient
    is ``c^(−1)`` times its gradient at scale 1 (a batch-wide unit would broaden one away)."""
    make = svd_vector_loss if name.startswith("svd") else eigh_vector_loss
    f = make(dtype, (4, 4))
    a1, a2 = matrix_for(name, dtype, (4, 4)), matrix_for(name, dtype, (4, 4)).T.copy()
    g1, g2 = grad_at(f, a1), grad_at(f, a2)
    gb = grad_at(f, np.stack([a1 * 1e-100, a2 * 1e100]).astype(dtype))
    assert_normwise(gb[0], g1 * 1e100, 1e100, 1e-10)
    assert_normwise(gb[1], g2 * 1e-100, 1e-100, 1e-10)


@pytest.mark.parametrize("top", [1e4, 1e6, 1e7])
def test_svd_vector_gradient_of_an_ill_conditioned_matrix(top: float) -> None:
    """The relative broadening must not drop the coupling of small singular values: with it on
    the squared gaps (eps·σ² on s_j² − s_i²), s = [1e7, 2, 1] lost it entirely (found by a
    breaker helper). Oracle: central differences along a random direction, with an absolute
    step suited to the gap between 2 and 1."""
    rng = np.random.default_rng(11)
    q, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    p, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    w = rng.standard_normal((4, 3))
    a = q[:, :3] @ np.diag([top, 2.0, 1.0]) @ p

    def loss_np(x: np.ndarray) -> float:
        u = np.linalg.svd(x, full_matrices=False)[0]
        return float((np.abs(u) ** 2 * w).sum())

    def loss(x):
        u = tf.linalg.svd(x, full_matrices=False).U
        return (tf.real(u * tf.conj(u)) * w).sum()

    g = np.asarray(tf.func.grad(loss)(a))
    v = rng.standard_normal(a.shape)
    h = 1e-4
    fd = (loss_np(a + h * v) - loss_np(a - h * v)) / (2 * h)
    np.testing.assert_allclose(np.vdot(g, v), fd, rtol=1e-3, atol=1e-8)


@pytest.mark.parametrize(
    "dtype,big", [(np.float64, 1e300), (np.complex128, 1e300), (np.float32, 1e30)]
)
def test_factorisations_keep_entries_far_below_the_largest(dtype, big: float) -> None:
    """lu/solve/cholesky/qr/slogdet are not rescaled: a global 2^e flushed the small diagonal
    entry of diag(big, 1/big) (det 0 instead of 1, 'singular' from inv; found by a breaker)."""
    d = np.diag([big, 1 / big]).astype(dtype)
    sign, logdet = tf.linalg.slogdet(d)
    want_sign, want_logdet = np.linalg.slogdet(d)
    np.testing.assert_allclose(np.asarray(sign), want_sign)
    np.testing.assert_allclose(np.asarray(logdet), want_logdet, atol=1e-5)
    np.testing.assert_allclose(np.asarray(tf.linalg.det(d)), np.linalg.det(d), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(tf.linalg.inv(d)), np.linalg.inv(d), rtol=1e-5)
    np.testing.assert_allclose(
        np.asarray(tf.linalg.solve(d, np.ones(2, dtype))),
        np.linalg.solve(d, np.ones(2, dtype)),
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        np.abs(np.asarray(tf.linalg.qr(d).R)), np.abs(np.linalg.qr(d)[1]), rtol=1e-5
    )
    np.testing.assert_allclose(np.asarray(tf.linalg.cholesky(d)), np.linalg.cholesky(d), rtol=1e-5)


@pytest.mark.parametrize("dtype,x", [(np.float64, [3e-320, 4e-320]), (np.float32, [3e-40, 4e-40])])
@pytest.mark.parametrize("ord", [2, 30, -1, -2])
def test_norm_of_subnormal_vectors(dtype, x, ord) -> None:
    """Subnormal inputs: the p-norm was 0 and its gradient [nan, inf] or 0 (found by a breaker);
    oracle: ``m·(Σ(|v|/m)^p)^(1/p)`` in Python floats on the stored values, and the gradient at
    an exact power-of-two multiple (the norm's gradient is homogeneous of degree 0)."""
    x = np.array(x, dtype=dtype)
    c = dtype(2.0 ** (np.finfo(dtype).nmant + 11))
    vals = [float(abs(v)) for v in x]
    m = max(vals)
    want = m * sum((v / m) ** ord for v in vals) ** (1.0 / ord)
    v = float(tf.linalg.norm(tf.asarray(x), ord))
    np.testing.assert_allclose(v, want, rtol=1e-3)
    g = np.asarray(tf.func.grad(lambda t: tf.linalg.norm(t, ord))(x))
    want = np.asarray(tf.func.grad(lambda t: tf.linalg.norm(t, ord))(x * c))  # degree-0 homogeneous
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, want, rtol=2e-2, atol=1e-3)

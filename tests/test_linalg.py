"""``tf.linalg``: forward values against NumPy/SciPy up to gauge, derivative checks through
gauge-invariant losses (``check_grads(order=2)``, forward and reverse, real and complex),
degenerate inputs against independent values, errors, and the manifest of the ``linalg``
family of the catalog."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.linalg as sla

import tenferro as tf
from tenferro import _testing
from tenferro.testing import assert_close, check_grads

L = tf.linalg
RNG = np.random.default_rng(11)
DTYPES = ("float32", "float64", "complex64", "complex128")
RC = ("float64", "complex128")
TOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-10, "complex128": 1e-10}


def rand(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    a = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype)


def spd(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Well-conditioned Hermitian positive-definite matrices."""
    a = rand(shape, dtype)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def herm(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    a = rand(shape, dtype)
    return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(dtype)


def well(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Well-conditioned square matrices."""
    n = shape[-1]
    return (rand(shape, dtype) + 3 * np.eye(n)).astype(dtype)


def np_of(t: Any) -> np.ndarray:
    return np.asarray(t)


def H(x: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(x, -1, -2))


SHAPES = [(3, 3), (4, 2), (2, 5), (2, 3, 4, 3), (3, 2, 4)]


# ---------------------------------------------------------------------------------------------
# forward values
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("full", [True, False])
def test_svd_forward(shape: tuple[int, ...], dtype: str, full: bool) -> None:
    a = rand(shape, dtype)
    u, s, vh = (np_of(x) for x in L.svd(a, full_matrices=full))
    m, n = shape[-2:]
    k = min(m, n)
    assert u.shape == (*shape[:-2], m, m if full else k)
    assert vh.shape == (*shape[:-2], n if full else k, n)
    assert s.dtype == np.dtype(dtype).type(0).real.dtype
    tol = TOL[dtype] * 10
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), atol=tol, rtol=tol)
    rec = (u[..., :k] * s[..., None, :]) @ vh[..., :k, :]
    np.testing.assert_allclose(rec, a, atol=tol, rtol=tol)
    np.testing.assert_allclose(
        H(u) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2), atol=tol
    )
    np.testing.assert_allclose(
        vh @ H(vh),
        np.broadcast_to(np.eye(vh.shape[-2]), vh.shape[:-2] + (vh.shape[-2],) * 2),
        atol=tol,
    )
    assert_close(L.svdvals(a), np.linalg.svd(a, compute_uv=False), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_forward(shape: tuple[int, ...], dtype: str, mode: str) -> None:
    a = rand(shape, dtype)
    q, r = (np_of(x) for x in L.qr(a, mode=mode))
    qn, rn = np.linalg.qr(a, mode=mode)
    tol = TOL[dtype] * 10
    np.testing.assert_allclose(q @ r, a, atol=tol, rtol=tol)
    assert q.shape == qn.shape and r.shape == rn.shape
    d = np.diagonal(r, axis1=-2, axis2=-1)
    assert np.all(d.real >= 0) and np.allclose(d.imag, 0)
    np.testing.assert_allclose(np.triu(r), r)
    # Unique with a positive diagonal: equal to NumPy's after fixing its signs.
    k = min(shape[-2:])
    ph = np.diagonal(rn, axis1=-2, axis2=-1)[..., :k]
    ph = np.where(ph == 0, 1, ph / np.abs(ph))
    np.testing.assert_allclose(
        q[..., :k], qn[..., :k] * ph[..., None, :], atol=tol * 10, rtol=tol * 10
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape", [(63, 63), (64, 64), (100, 100), (300, 300), (300, 120), (2, 70, 90)], ids=str
)
def test_svd_and_eigh_of_larger_matrices(shape: tuple[int, ...], dtype: str) -> None:
    """Sizes that take faer's divide-and-conquer bidiagonal/tridiagonal solvers (64 and up) and,
    from about 64³ multiply-adds, the parallel reductions on the default engine's workers."""
    tol = (1e-3 if dtype in ("float32", "complex64") else 1e-9) * np.sqrt(shape[-1])
    a = rand(shape, dtype)
    u, s, vh = (np_of(x) for x in L.svd(a, full_matrices=False))
    scale = np.linalg.norm(a, 2, axis=(-2, -1))[..., None]
    np.testing.assert_allclose(s / scale, np.linalg.svd(a, compute_uv=False) / scale, atol=tol)
    np.testing.assert_allclose(
        ((u * s[..., None, :]) @ vh) / scale[..., None], a / scale[..., None], atol=tol
    )
    k = s.shape[-1]
    np.testing.assert_allclose(
        H(u) @ u, np.broadcast_to(np.eye(k), u.shape[:-2] + (k, k)), atol=tol
    )
    np.testing.assert_allclose(
        vh @ H(vh), np.broadcast_to(np.eye(k), vh.shape[:-2] + (k, k)), atol=tol
    )
    h = herm(shape[:-1] + (shape[-2],), dtype)
    w, v = (np_of(x) for x in L.eigh(h))
    hs = np.abs(np.linalg.eigvalsh(h)).max(axis=-1)[..., None]
    np.testing.assert_allclose(w / hs, np.linalg.eigvalsh(h) / hs, atol=tol)
    np.testing.assert_allclose((h @ v - v * w[..., None, :]) / hs[..., None], 0, atol=tol)
    n = h.shape[-1]
    np.testing.assert_allclose(
        H(v) @ v, np.broadcast_to(np.eye(n), v.shape[:-2] + (n, n)), atol=tol
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1)], ids=str)
def test_eigh_eig_cholesky_forward(shape: tuple[int, ...], dtype: str) -> None:
    tol = TOL[dtype] * 100
    a = herm(shape, dtype)
    junk = a + np.triu(rand(shape, dtype), 1)  # only the lower triangle is read
    w, v = (np_of(x) for x in L.eigh(junk))
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), atol=tol, rtol=tol)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tol, rtol=tol)
    np.testing.assert_allclose(
        np_of(L.eigvalsh(H(junk), UPLO="U")), np.linalg.eigvalsh(a), atol=tol, rtol=tol
    )
    g = well(shape, dtype)
    we, ve = (np_of(x) for x in L.eig(g))
    np.testing.assert_allclose(g @ ve, ve * we[..., None, :], atol=tol, rtol=tol)
    wn = np.linalg.eigvals(g).reshape(-1, shape[-1])
    for ours, ref in zip(we.reshape(-1, shape[-1]), wn):
        dist = np.abs(ours[:, None] - ref[None, :])
        assert dist.min(axis=1).max() < tol * 10 and dist.min(axis=0).max() < tol * 10, (ours, ref)
    np.testing.assert_allclose(np_of(L.eigvals(g)), we)
    p = spd(shape, dtype)
    np.testing.assert_allclose(np_of(L.cholesky(p)), np.linalg.cholesky(p), atol=tol, rtol=tol)
    np.testing.assert_allclose(
        np_of(L.cholesky(p, upper=True)), H(np.linalg.cholesky(p)), atol=tol, rtol=tol
    )
    # Like NumPy, upper=True reads the upper triangle and upper=False the lower one.
    n = shape[-1]
    junk_low = p + np.tril(rand(shape, dtype) * 100, -1)
    junk_up = p + np.triu(rand(shape, dtype) * 100, 1)
    np.testing.assert_allclose(
        np_of(L.cholesky(junk_low, upper=True)),
        np.linalg.cholesky(junk_low, upper=True),
        atol=tol * n,
        rtol=tol,
    )
    np.testing.assert_allclose(
        np_of(L.cholesky(junk_up)), np.linalg.cholesky(junk_up), atol=tol * n, rtol=tol
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape", [(3, 3), (4, 2), (2, 5), (2, 3, 4, 3), (0, 3, 3), (3, 0), (1, 1)], ids=str
)
def test_values_only_forward(shape: tuple[int, ...], dtype: str) -> None:
    """``svdvals``/``eigvalsh`` untracked (the values-only primitives, no vectors computed) against
    NumPy, through ``tf.linalg`` (batch first) and ``tf.prim`` (batch last); tracked, the same
    values come from ``svd``/``eigh``."""
    tol = TOL[dtype] * 100
    a = rand(shape, dtype)
    s_ref = (
        np.linalg.svd(a, compute_uv=False) if a.size else np.zeros((*shape[:-2], min(shape[-2:])))
    )
    s = L.svdvals(a)
    assert s.shape == s_ref.shape and np_of(s).dtype == np.dtype(dtype).type(0).real.dtype
    np.testing.assert_allclose(np_of(s), s_ref, atol=tol, rtol=tol)
    core = np.moveaxis(a, (-2, -1), (0, 1))
    np.testing.assert_allclose(
        np_of(tf.prim.svdvals(core)), np.moveaxis(s_ref, -1, 0), atol=tol, rtol=tol
    )
    np.testing.assert_allclose(
        np_of(L.svdvals(tf.tensor(a, requires_grad=True))), s_ref, atol=tol, rtol=tol
    )
    if shape[-1] != shape[-2]:
        with pytest.raises(tf.errors.ShapeError, match="eigvalsh"):
            L.eigvalsh(a)
        return
    h = herm(shape, dtype)
    w_ref = np.linalg.eigvalsh(h) if h.size else np.zeros(shape[:-1])
    junk = rand(shape, dtype)
    lower = h + np.triu(junk, 1)  # only the lower triangle (and the real diagonal) is read
    if np.dtype(dtype).kind == "c":
        lower = (lower + 1j * np.eye(shape[-1])).astype(dtype)  # imaginary diagonal ignored
    upper = h + np.tril(junk, -1)
    assert lower.dtype == upper.dtype == np.dtype(dtype)
    for w in (
        L.eigvalsh(lower),
        L.eigvalsh(upper, UPLO="U"),
        L.eigvalsh(tf.tensor(lower, requires_grad=True)),
    ):
        np.testing.assert_allclose(np_of(w), w_ref, atol=tol, rtol=tol)
    w = tf.prim.eigvalsh(np.moveaxis(lower, (-2, -1), (0, 1)))
    np.testing.assert_allclose(np_of(w), np.moveaxis(w_ref, -1, 0), atol=tol, rtol=tol)


@pytest.mark.parametrize(
    "a", [[[0.0, 1.0], [0.0, 1.0]], np.zeros((2, 2)), np.zeros((2, 3)), np.zeros((3, 2))], ids=str
)
def test_lu_with_a_zero_pivot_column_raises_instead_of_nan(a: Any) -> None:
    with pytest.raises(tf.errors.LinAlgError, match="zero pivot column"):
        L.lu(a)


def test_lu_of_other_singular_matrices_matches_scipy() -> None:
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    p, lo, up = (np_of(x) for x in L.lu(a))
    ps, ls, us = sla.lu(a)
    np.testing.assert_allclose(p, ps)
    np.testing.assert_allclose(lo, ls)
    np.testing.assert_allclose(up, us, atol=1e-15)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (2, 3, 3)], ids=str)
def test_lu_forward(shape: tuple[int, ...], dtype: str) -> None:
    a = rand(shape, dtype)
    p, lo, up = (np_of(x) for x in L.lu(a))
    tol = TOL[dtype] * 10
    np.testing.assert_allclose(p @ lo @ up, a, atol=tol, rtol=tol)
    for idx in np.ndindex(*shape[:-2]):
        ps, ls, us = sla.lu(a[idx])
        np.testing.assert_allclose(p[idx], ps)
        np.testing.assert_allclose(lo[idx], ls, atol=tol, rtol=tol)
        np.testing.assert_allclose(up[idx], us, atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_inv_det_forward(dtype: str) -> None:
    tol = TOL[dtype] * 100
    a = well((2, 3, 3), dtype)
    b = rand((3, 2), dtype)
    np.testing.assert_allclose(np_of(L.solve(a, b)), np.linalg.solve(a, b), atol=tol, rtol=tol)
    v = rand((3,), dtype)
    np.testing.assert_allclose(
        np_of(L.solve(a[0], v)), np.linalg.solve(a[0], v), atol=tol, rtol=tol
    )
    np.testing.assert_allclose(np_of(L.inv(a)), np.linalg.inv(a), atol=tol, rtol=tol)
    np.testing.assert_allclose(np_of(L.det(a)), np.linalg.det(a), atol=tol, rtol=tol)
    s, ld = L.slogdet(a)
    sn, ldn = np.linalg.slogdet(a)
    np.testing.assert_allclose(np_of(s), sn, atol=tol)
    np.testing.assert_allclose(np_of(ld), ldn, atol=tol, rtol=tol)
    for lower in (True, False):
        tri = np.tril(a) if lower else np.triu(a)
        x = np_of(L.triangular_solve(a, b, lower=lower))
        np.testing.assert_allclose(
            x,
            sla.solve_triangular(tri, np.broadcast_to(b, (2, 3, 2)), lower=lower)
            if False
            else np.linalg.solve(tri, b),
            atol=tol,
            rtol=tol,
        )
        xr = np_of(L.triangular_solve(a, H(b)[..., :3], lower=lower, left=False))
        np.testing.assert_allclose(xr @ tri, np.broadcast_to(H(b), (2, 2, 3)), atol=tol, rtol=tol)
    np.testing.assert_allclose(np_of(L.pinv(rand((4, 3), dtype))).shape, (3, 4))
    r = rand((4, 3), dtype)
    np.testing.assert_allclose(np_of(L.pinv(r)), np.linalg.pinv(r), atol=tol, rtol=tol)


def test_singular_determinant_and_transposed_views() -> None:
    s, ld = L.slogdet(np.ones((3, 3)))
    assert float(s) == 0.0 and float(ld) == -np.inf
    assert float(L.det(np.ones((3, 3)))) == 0.0
    # Strided (transposed, reversed) inputs reach the kernels as views.
    a = tf.asarray(well((3, 4, 4), "float64"))
    v = a.mT[::-1]
    assert not v.is_contiguous
    np.testing.assert_allclose(np_of(L.inv(v)), np.linalg.inv(np.asarray(v)), atol=1e-10)
    np.testing.assert_allclose(
        np_of(L.svdvals(v)), np.linalg.svd(np.asarray(v), compute_uv=False), atol=1e-10
    )


NORM_CASES: list[tuple[tuple[int, ...], Any, Any]] = [
    ((5,), None, None),
    ((5,), 1, None),
    ((5,), np.inf, None),
    ((5,), -np.inf, None),
    ((5,), 0, None),
    ((5,), 3, None),
    ((3, 4), None, None),
    ((3, 4), "fro", None),
    ((3, 4), "nuc", None),
    ((3, 4), 2, None),
    ((3, 4), -2, None),
    ((3, 4), 1, None),
    ((3, 4), -1, None),
    ((3, 4), np.inf, None),
    ((3, 4), -np.inf, None),
    ((2, 3, 4), None, 1),
    ((2, 3, 4), 2, (2, 0)),
    ((2, 3, 4), "fro", (0, 1)),
    ((2, 3, 4), None, None),
]


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("case", NORM_CASES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm_matches_numpy(case: tuple[Any, Any, Any], dtype: str, keepdims: bool) -> None:
    shape, ord_, axis = case
    x = rand(shape, dtype)
    assert_close(
        L.norm(x, ord_, axis, keepdims),
        np.linalg.norm(x, ord_, axis, keepdims),
        rtol=1e-10,
        atol=1e-12,
    )


@pytest.mark.parametrize("ord_", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 0)], ids=str)
def test_norm_of_empty_matrices_matches_numpy(shape: tuple[int, ...], ord_: Any) -> None:
    """NumPy gives 0 where the reduction has an identity and raises ``ValueError`` for the
    minimum-type norms (``-2``, ``-inf``, ``-1`` over no columns)."""
    x = np.zeros(shape)
    axis = (-2, -1)
    try:
        ref = np.linalg.norm(x, ord_, axis)
    except ValueError:
        with pytest.raises(ValueError):
            L.norm(x, ord_, axis)
        return
    assert_close(L.norm(x, ord_, axis), ref)


@pytest.mark.parametrize("ord_", [None, 1, 2, 3, 0.5, -1, -2, np.inf, -np.inf, 0])
def test_norm_of_empty_vectors_matches_numpy(ord_: Any) -> None:
    try:
        with np.errstate(divide="ignore"):  # NumPy computes 0 ** (1/p) = inf for p < 0
            ref = np.linalg.norm(np.zeros(0), ord_)
    except ValueError:
        with pytest.raises(ValueError):
            L.norm(np.zeros(0), ord_)
        return
    assert float(L.norm(np.zeros(0), ord_)) == ref


def test_norm_axis_is_checked_like_numpy() -> None:
    x = np.arange(6.0).reshape(2, 3)
    for axis in [(5,), (0, 5), (-3, 1), 2, -3]:
        with pytest.raises(tf.errors.AxisError, match="out of bounds"):
            L.norm(x, axis=axis)
        with pytest.raises(np.exceptions.AxisError):  # NumPy agrees that these are errors
            np.linalg.norm(x, axis=axis)
    assert_close(L.norm(x, axis=np.int64(1)), np.linalg.norm(x, axis=np.int64(1)))
    assert_close(L.norm(x, axis=(np.int64(0),)), np.linalg.norm(x, axis=(np.int64(0),)))
    with pytest.raises(TypeError):
        L.norm(x, axis=1.5)
    with pytest.raises(tf.errors.AxisError, match="repeated axis"):  # NumPy: ValueError too
        L.norm(x, axis=(1, -1))


def test_norm_propagates_nan_like_numpy() -> None:
    for x, ord_ in [
        (np.array([np.nan, 1.0]), None),
        (np.array([[np.nan, 1.0], [0.0, 1.0]]), None),
        (np.array([[np.nan, 1.0], [0.0, 1.0]]), "fro"),
        (np.array([1.0, np.nan]), 3),
        (np.array([1.0, 2.0]), np.nan),
    ]:
        assert np.isnan(np.linalg.norm(x, ord_))
        assert np.isnan(float(L.norm(x, ord_)))


@pytest.mark.parametrize("dtype", RC)
@pytest.mark.parametrize(
    ("shape", "ord_", "axis"),
    [
        ((3,), None, None),
        ((3,), 3, None),
        ((3,), 0.5, None),
        ((3,), -1, None),
        ((2, 3), None, None),
        ((2, 3), "fro", None),
        ((2, 3), 2, 1),
    ],
    ids=str,
)
def test_norm_gradient_at_zero_is_the_zero_subgradient(
    shape: tuple[int, ...], ord_: Any, axis: Any, dtype: str
) -> None:
    """``sqrt``/``** (1/p)`` at 0 would give ``0·inf = NaN``; like PyTorch, the zero vector gets the
    zero subgradient (JAX returns NaN). Away from zero the same expression keeps its derivatives."""
    rt = tf.Runtime()
    z = rt.variable(np.zeros(shape, dtype))
    g = np.asarray(rt.grad(tf.sum(L.norm(z, ord_, axis)), z))
    np.testing.assert_array_equal(g, np.zeros(shape))
    check_grads(lambda v: L.norm(v, ord_, axis), [rand(shape, dtype)], order=2)


def test_pinv_of_full_rank_matrices_is_exact_at_repeated_singular_values() -> None:
    """At ``I`` and at matrices with orthonormal columns every singular value is 1: a route
    through ``svd`` drops the coupling terms there (module docs). ``pinv`` of full-rank input
    goes through ``qr``; its gradient must equal ``inv``'s (through ``solve``) and the analytic
    ``−A⁻ᵀ·W·A⁻ᵀ``, and its derivatives must match finite differences to second order."""
    w = RNG.standard_normal((3, 3))
    q, _ = np.linalg.qr(RNG.standard_normal((3, 3)))
    for a in (np.eye(3), q):
        rt = tf.Runtime()
        x = rt.variable(a)
        g_pinv = np.asarray(rt.grad(tf.sum(L.pinv(x) * rt.constant(w)), x))
        g_inv = np.asarray(rt.grad(tf.sum(L.inv(x) * rt.constant(w)), x))
        ai = np.linalg.inv(a)
        np.testing.assert_allclose(g_pinv, -ai.T @ w @ ai.T, atol=1e-12)
        np.testing.assert_allclose(g_pinv, g_inv, atol=1e-12)
    tall, _ = np.linalg.qr(RNG.standard_normal((4, 2)) + 1j * RNG.standard_normal((4, 2)))
    for a in (np.eye(3), q, tall, H(tall), np.eye(2, dtype=complex)):
        check_grads(L.pinv, [a], order=2)
    # The route is chosen per matrix: I keeps its exact gradient next to a rank-deficient matrix.
    rt = tf.Runtime()
    x = rt.variable(np.stack([np.eye(3), np.diag([1.0, 2.0, 0.0])]))
    g = np.asarray(rt.grad(tf.sum(L.pinv(x) * rt.constant(np.stack([w, w]))), x))
    np.testing.assert_allclose(g[0], -w, atol=1e-12)
    np.testing.assert_allclose(
        np_of(L.pinv(x)), np.linalg.pinv(np.asarray(x), rtol=None), atol=1e-14
    )


def test_pinv_gradient_at_rank_deficient_matrices_is_the_constant_rank_derivative() -> None:
    """Projectors (repeated kept singular values next to dropped zeros), a generic rank-2 matrix
    and a batch with a zero matrix, against the Golub–Pereyra derivative written out in NumPy:
    ``dA⁺ = −A⁺·dA·A⁺ + A⁺A⁺ᵀ·dAᵀ·(I − AA⁺) + (I − A⁺A)·dAᵀ·A⁺ᵀA⁺`` (JAX's and PyTorch's rule)."""
    q, _ = np.linalg.qr(RNG.standard_normal((3, 3)))
    mats = [
        np.diag([1.0, 1.0, 0.0]),
        q @ np.diag([1.0, 1.0, 0.0]) @ q.T,
        q @ np.diag([2.0, 2.0, 0.0]) @ q.T,
        RNG.standard_normal((4, 2)) @ RNG.standard_normal((2, 3)),
        np.zeros((3, 3)),
    ]
    for a in mats:
        w = RNG.standard_normal(a.T.shape)
        rt = tf.Runtime()
        x = rt.variable(a)
        g = np.asarray(rt.grad(tf.sum(L.pinv(x) * rt.constant(w)), x))
        ap = np.linalg.pinv(a)
        m, n = a.shape
        for _ in range(3):
            d = RNG.standard_normal(a.shape)
            gp = (
                -ap @ d @ ap
                + ap @ ap.T @ d.T @ (np.eye(m) - a @ ap)
                + (np.eye(n) - ap @ a) @ d.T @ ap.T @ ap
            )
            assert abs(np.sum(w * gp) - np.sum(g * d)) < 1e-7 * max(1.0, np.abs(g).sum()), a


@pytest.mark.parametrize("dtype", ["float32", "complex64", "float64"])
def test_pinv_of_badly_conditioned_full_rank_matrices_matches_numpy(dtype: str) -> None:
    """Smallest singular value just above the cutoff: unpivoted QR is not accurate there (faer's
    single-precision QR returned an exactly zero diagonal entry of R), so these take the SVD."""
    eps = np.finfo(dtype).eps
    u, _ = np.linalg.qr(RNG.standard_normal((8, 5)))
    v, _ = np.linalg.qr(RNG.standard_normal((5, 5)))
    a = ((u * np.geomspace(1, 1.2 * 8 * eps, 5)) @ v.T).astype(dtype)
    for x in (a, a.T):
        ref = np.linalg.pinv(
            x.astype(np.complex128 if np.iscomplexobj(x) else np.float64), rtol=8 * eps
        )
        np.testing.assert_allclose(np_of(L.pinv(x)), ref, atol=0.1 * np.abs(ref).max())


def test_pinv_rtol_broadcasts_over_the_batch_and_empty_input_stays_attached() -> None:
    b = np.stack([np.diag([1.0, 0.15])] * 2)
    rtol = np.array([0.1, 0.2])
    np.testing.assert_allclose(np_of(L.pinv(b, rtol=rtol)), np.linalg.pinv(b, rtol=rtol))
    with pytest.raises(ValueError, match="rtol of shape"):
        L.pinv(np.eye(2), rtol=np.array([0.1]))
    with pytest.raises(ValueError, match="rtol of shape"):
        L.pinv(b, rtol=np.array([0.1, 0.2, 0.3]))
    with pytest.raises(L.LinAlgError, match=r"^linalg\.pinv: .*non-finite"):
        L.pinv(np.array([[np.nan, 1.0], [0.0, 1.0]]))
    rt = tf.Runtime()
    v = rt.variable(np.zeros((2, 0, 3)))
    p = L.pinv(v)
    assert p.shape == (2, 3, 0) and p.runtime is rt and p.requires_grad
    assert rt.grad(tf.sum(p), v).shape == (2, 0, 3)


def test_structural_helpers() -> None:
    x = rand((2, 3, 4), "float64")
    assert_close(L.matrix_transpose(x), np.linalg.matrix_transpose(x))
    assert_close(L.trace(x[:, :, :3]), np.linalg.trace(x[:, :, :3]))
    assert_close(L.diagonal(x, offset=1), np.linalg.diagonal(x, offset=1))


# ---------------------------------------------------------------------------------------------
# derivatives: every catalog op of the family through gauge-invariant losses
# ---------------------------------------------------------------------------------------------


def _svd_uv(full: bool) -> Callable[[Any], Any]:
    def f(a: Any) -> Any:
        u, s, vh = L.svd(a, full_matrices=full)
        k = s.shape[-1]
        # U·diag(s²)·Vh and U·Uᴴ (the complement projector for full matrices): gauge invariant.
        w = tf.matmul(u[..., :k] * (s * s)[..., None, :], vh[..., :k, :])
        p = (
            tf.matmul(u, L.matrix_transpose(tf.conj(u))[..., :, :])
            if full
            else tf.matmul(u[..., :1], tf.conj(L.matrix_transpose(u[..., :1])))
        )
        return tf.concatenate(
            [tf.reshape(w, (-1,)), tf.reshape(p, (-1,)), tf.reshape(s, (-1,)).astype(w.dtype)]
        )

    return f


def _eigh_loss(a: Any) -> Any:
    w, v = L.eigh(a)
    m = tf.matmul(v * (w * w)[..., None, :], tf.conj(L.matrix_transpose(v)))
    return tf.concatenate([tf.reshape(m, (-1,)), tf.reshape(w, (-1,)).astype(m.dtype)])


def _qr_loss(mode: str) -> Callable[[Any], Any]:
    def f(a: Any) -> Any:
        q, r = L.qr(a, mode=mode)
        return tf.concatenate([tf.reshape(q, (-1,)), tf.reshape(r, (-1,))])

    return f


def _lu_loss(a: Any) -> Any:
    p, lo, up = L.lu(a)
    return tf.concatenate([tf.reshape(lo, (-1,)), tf.reshape(up, (-1,)), tf.reshape(p, (-1,))])


def _slogdet_loss(a: Any) -> Any:
    s, ld = L.slogdet(a)
    return tf.concatenate([tf.reshape(s, (-1,)), tf.reshape(ld, (-1,)).astype(s.dtype)])


def _eig_loss(a: Any) -> Any:
    w = L.eigvals(a)
    return tf.sum(w * w * w, axis=-1)  # symmetric in the eigenvalues: order invariant


Builder = Callable[[str], tuple[Callable[..., Any], list[np.ndarray]]]
# case name -> (catalog op, order, builder)
GRAD_CASES: dict[str, tuple[str, int, Builder]] = {
    "svd_thin_tall": ("svd", 2, lambda d: (_svd_uv(False), [rand((2, 4, 3), d)])),
    "svd_thin_wide": ("svd", 2, lambda d: (_svd_uv(False), [rand((3, 4), d)])),
    "svd_full_tall": ("svd", 2, lambda d: (_svd_uv(True), [rand((4, 2), d)])),
    "svd_full_wide": ("svd", 2, lambda d: (_svd_uv(True), [rand((2, 2, 3), d)])),
    "svd_square": ("svd", 2, lambda d: (_svd_uv(True), [rand((3, 3), d)])),
    "svdvals": ("svd", 2, lambda d: (lambda a: L.svdvals(a), [rand((3, 2), d)])),
    "svdvals_primitive": (
        "svdvals",
        2,
        lambda d: (lambda a: tf.prim.svdvals(a.T), [rand((3, 2, 2), d)]),
    ),
    "qr_tall": ("qr", 2, lambda d: (_qr_loss("reduced"), [rand((2, 4, 3), d)])),
    "qr_square": ("qr", 2, lambda d: (_qr_loss("complete"), [rand((3, 3), d)])),
    "qr_wide": ("qr", 2, lambda d: (_qr_loss("reduced"), [rand((2, 4), d)])),
    "eigh": ("eigh", 2, lambda d: (_eigh_loss, [herm((2, 3, 3), d)])),
    "eigh_upper": ("eigh", 2, lambda d: (lambda a: L.eigvalsh(a, UPLO="U"), [herm((3, 3), d)])),
    "eigvalsh_primitive": (
        "eigvalsh",
        2,
        lambda d: (
            lambda a: tf.prim.eigvalsh(tf.prim.transpose(a, (1, 2, 0))),
            [herm((2, 3, 3), d)],
        ),
    ),
    "eig": ("eig", 1, lambda d: (_eig_loss, [well((2, 3, 3), d)])),
    "cholesky": ("cholesky", 2, lambda d: (lambda a: L.cholesky(a), [spd((2, 3, 3), d)])),
    "cholesky_upper": (
        "cholesky",
        2,
        lambda d: (lambda a: L.cholesky(a, upper=True), [spd((3, 3), d)]),
    ),
    "lu": ("lu", 2, lambda d: (_lu_loss, [rand((2, 3, 3), d)])),
    "solve": (
        "solve",
        2,
        lambda d: (lambda a, b: L.solve(a, b), [well((2, 3, 3), d), rand((3, 2), d)]),
    ),
    "solve_vector": (
        "solve",
        2,
        lambda d: (lambda a, b: L.solve(a.mT, b), [well((3, 3), d), rand((3,), d)]),
    ),
    "triangular_solve": (
        "triangular_solve",
        2,
        lambda d: (lambda a, b: L.triangular_solve(a, b), [well((2, 3, 3), d), rand((2, 3, 2), d)]),
    ),
    "triangular_solve_upper_right": (
        "triangular_solve",
        2,
        lambda d: (
            lambda a, b: L.triangular_solve(a, b, lower=False, left=False),
            [well((3, 3), d), rand((2, 3), d)],
        ),
    ),
    "inv": ("solve", 2, lambda d: (lambda a: L.inv(a), [well((2, 3, 3), d)])),
    "slogdet": ("slogdet", 2, lambda d: (_slogdet_loss, [well((2, 3, 3), d)])),
    "det": ("slogdet", 2, lambda d: (lambda a: L.det(a), [well((3, 3), d)])),
    "pinv": ("svd", 2, lambda d: (lambda a: L.pinv(a), [rand((4, 3), d)])),
    "norm_2": ("svd", 2, lambda d: (lambda a: L.norm(a, 2), [rand((3, 4), d)])),
    "norm_nuc": ("svd", 2, lambda d: (lambda a: L.norm(a, "nuc"), [rand((3, 3), d)])),
}

PARAMS = [(c, d) for c in sorted(GRAD_CASES) for d in RC]


@pytest.mark.parametrize(("case", "dtype"), PARAMS, ids=[f"{c}-{d}" for c, d in PARAMS])
def test_check_grads(case: str, dtype: str) -> None:
    _, order, build = GRAD_CASES[case]
    f, args = build(dtype)
    check_grads(f, args, order=order, modes=("fwd", "rev"))


def _inner(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.real(np.sum(np.conj(a) * b)))


@pytest.mark.parametrize(("case", "dtype"), PARAMS, ids=[f"{c}-{d}" for c, d in PARAMS])
def test_dot_product_identity(case: str, dtype: str) -> None:
    """``<vjp(u), v> = <u, jvp(v)>`` directly between the two rules (no finite differences)."""
    _, _, build = GRAD_CASES[case]
    f, args = build(dtype)
    rt = tf.Runtime()
    xs = [rt.variable(a) for a in args]
    y = f(*xs)
    vs = [rand(a.shape, dtype) for a in args]
    u = rand(tuple(y.shape), str(np.asarray(y).dtype))
    t = np.asarray(rt.jvp(y, xs, [rt.constant(v) for v in vs]))
    gs = rt.vjp(y, xs, rt.constant(u))
    lhs = sum(_inner(np.asarray(g), v) for g, v in zip(gs, vs))
    rhs = _inner(u, t)
    assert abs(lhs - rhs) <= 1e-9 * (1 + abs(rhs)), (lhs, rhs)


def test_manifest_every_linalg_op_has_derivative_cases() -> None:
    family = {row.name for row in tf.prim.CATALOG if row.family == "linalg"}
    assert family == {
        "svd",
        "svdvals",
        "qr",
        "eigh",
        "eigvalsh",
        "eig",
        "cholesky",
        "lu",
        "solve",
        "triangular_solve",
        "slogdet",
    }
    rules = _testing.ad_rules()
    assert all(rules[name] == "linearize" for name in family)
    covered = {op for op, _, _ in GRAD_CASES.values()}
    assert covered == family, family ^ covered


#: Forward tests of each catalog op of the family (values against NumPy/SciPy up to gauge).
FORWARD_TESTS: dict[str, Callable[..., None]] = {
    "svd": test_svd_forward,
    "svdvals": test_values_only_forward,
    "eigvalsh": test_values_only_forward,
    "qr": test_qr_forward,
    "eigh": test_eigh_eig_cholesky_forward,
    "eig": test_eigh_eig_cholesky_forward,
    "cholesky": test_eigh_eig_cholesky_forward,
    "lu": test_lu_forward,
    "solve": test_solve_inv_det_forward,
    "triangular_solve": test_solve_inv_det_forward,
    "slogdet": test_solve_inv_det_forward,
}


def test_manifest_every_linalg_op_has_forward_tests() -> None:
    family = {row.name for row in tf.prim.CATALOG if row.family == "linalg"}
    assert set(FORWARD_TESTS) == family
    assert all(
        row.implemented and set(row.dtypes) == {np.dtype(d) for d in DTYPES}
        for row in tf.prim.CATALOG
        if row.family == "linalg"
    )


def test_eig_eigenvectors_raise_unsupported() -> None:
    a = tf.tensor(well((3, 3), "float64"), requires_grad=True)
    _, v = L.eig(a)
    loss = tf.sum(tf.abs(v))
    with pytest.raises(tf.errors.UnsupportedAdRuleError, match="eig"):
        loss.backward()


def test_qr_complete_tall_has_no_rule() -> None:
    a = tf.tensor(rand((4, 2), "float64"), requires_grad=True)
    q, _ = L.qr(a, mode="complete")
    with pytest.raises(tf.errors.UnsupportedAdRuleError, match="qr"):
        tf.sum(q * q).backward()


# ---------------------------------------------------------------------------------------------
# degenerate inputs against independent values
# ---------------------------------------------------------------------------------------------


def _grad(f: Callable[[Any], Any], x: np.ndarray) -> np.ndarray:
    t = tf.tensor(x, requires_grad=True)
    f(t).backward()
    return np.asarray(t.grad)


def _sq(r: Any) -> Any:
    return tf.sum(tf.real(r * tf.conj(r))) if r.dtype.kind == "c" else tf.sum(r * r)


@pytest.mark.parametrize("dtype", RC)
def test_svd_reconstruction_norm_at_identity(dtype: str) -> None:
    """``L = ‖U S Vᴴ‖²`` at ``I₃`` (all singular values equal): the gradient is ``2I``."""

    def f(a: Any) -> Any:
        u, s, vh = L.svd(a)
        return _sq(tf.matmul(u * s[None, :], vh))

    g = _grad(f, np.eye(3, dtype=dtype))
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, 2 * np.eye(3), atol=1e-12)


def test_eigh_reconstruction_norm_at_repeated_eigenvalue() -> None:
    """``L = ‖V diag(λ) Vᴴ‖² = ‖A‖²`` through the eigenvectors at ``diag(1, 1, 2)``: ``2A``."""

    def f(a: Any) -> Any:
        w, v = L.eigh(a)
        return _sq(tf.matmul(v * w[None, :], L.matrix_transpose(v)))

    g = _grad(f, np.diag([1.0, 1.0, 2.0]))
    np.testing.assert_allclose(g, 2 * np.diag([1.0, 1.0, 2.0]), atol=1e-12)


@pytest.mark.parametrize("dtype", RC)
@pytest.mark.parametrize("a", ["identity", "degenerate"])
def test_svd_sum_of_singular_values_gradient_is_u_vh(dtype: str, a: str) -> None:
    x = np.eye(3, dtype=dtype) if a == "identity" else np.diag([2.0, 2.0, 1.0]).astype(dtype)
    if a == "degenerate":
        q = np.linalg.qr(rand((3, 3), dtype))[0]
        x = (q @ x @ H(np.linalg.qr(rand((3, 3), dtype))[0])).astype(dtype)
    g = _grad(lambda t: tf.sum(L.svdvals(t)), x)
    u, _, vh = np.linalg.svd(x)
    np.testing.assert_allclose(g, u @ vh, atol=1e-10)


def test_eigh_sum_of_squares_at_repeated_eigenvalue() -> None:
    g = _grad(lambda t: tf.sum(L.eigvalsh(t) ** 2), np.diag([1.0, 1.0, 2.0]))
    np.testing.assert_allclose(g, 2 * np.diag([1.0, 1.0, 2.0]), atol=1e-12)
    # The full Hermitian gradient (2·A) lands in the lower triangle the op reads.
    a = herm((3, 3), "complex128")
    g = _grad(lambda t: tf.sum(L.eigvalsh(t) ** 2), a)
    full = (
        2 * a.conj()
    )  # d/dA of tr(A²) under the Hermitian convention: 2·conj(A)ᴴ = 2A... per entry
    low = np.tril(2 * a) + np.tril(2 * a, -1)
    np.testing.assert_allclose(g, low, atol=1e-10)
    del full


def _fd_grad(f: Callable[[np.ndarray], float], x: np.ndarray, h: float = 1e-7) -> np.ndarray:
    g = np.zeros_like(x)
    for idx in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[idx] = h
        g[idx] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def test_near_degenerate_gradients_match_finite_differences() -> None:
    q = np.linalg.qr(RNG.standard_normal((3, 3)))[0]
    a = q @ np.diag([1.0, 1.0 + 1e-4, 2.0]) @ q.T
    c = RNG.standard_normal((3, 3))

    def eig_loss(t: Any) -> Any:
        w, v = L.eigh(t)
        return tf.sum(tf.matmul(v[:, :1], L.matrix_transpose(v[:, :1])) * c)

    def eig_np(x: np.ndarray) -> float:
        x = np.tril(x) + np.tril(x, -1).T
        v = np.linalg.eigh(x)[1][:, :1]
        return float(np.sum(v @ v.T * c))

    np.testing.assert_allclose(_grad(eig_loss, a), _fd_grad(eig_np, a), rtol=1e-4, atol=1e-4)
    b = q @ np.diag([2.0, 2.0 + 1e-4, 1.0]) @ np.linalg.qr(RNG.standard_normal((3, 3)))[0]

    def svd_loss(t: Any) -> Any:
        u, s, vh = L.svd(t)
        return tf.sum(tf.matmul(u[:, :1], vh[:1, :]) * c)

    def svd_np(x: np.ndarray) -> float:
        u, _, vh = np.linalg.svd(x)
        return float(np.sum(u[:, :1] @ vh[:1, :] * c))

    np.testing.assert_allclose(_grad(svd_loss, b), _fd_grad(svd_np, b), rtol=1e-4, atol=1e-4)


def test_peers_return_non_finite_on_degenerate_cases() -> None:
    """Where PyTorch or JAX is installed, record that they give NaN/inf where tenferro is finite."""
    seen = 0
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        x = torch.eye(3, dtype=torch.float64, requires_grad=True)
        u, s, vh = torch.linalg.svd(x)
        r = (u * s) @ vh
        torch.sum(r * r).backward()
        assert not torch.all(torch.isfinite(x.grad))
        seen += 1
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        jax = None
    if jax is not None:
        jax.config.update("jax_enable_x64", True)

        def f(a: Any) -> Any:
            u, s, vh = jnp.linalg.svd(a)
            r = (u * s) @ vh
            return jnp.sum(r * r)

        def g(a: Any) -> Any:
            w, v = jnp.linalg.eigh(a)
            r = (v * w) @ v.T
            return jnp.sum(r * r)

        assert not np.all(np.isfinite(np.asarray(jax.grad(f)(jnp.eye(3)))))
        assert not np.all(
            np.isfinite(np.asarray(jax.grad(g)(jnp.diag(jnp.array([1.0, 1.0, 2.0])))))
        )
        seen += 1
    if not seen:
        pytest.skip("neither PyTorch nor JAX is installed (JAX lives in .venv-bench)")


# ---------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------


def test_errors() -> None:
    assert (
        issubclass(L.LinAlgError, np.linalg.LinAlgError) and L.LinAlgError is tf.errors.LinAlgError
    )
    with pytest.raises(L.LinAlgError, match=r"solve: matrix 0 is singular"):
        L.solve(np.zeros((2, 2)), np.ones(2))
    with pytest.raises(L.LinAlgError, match=r"^linalg\.inv: .*singular"):
        L.inv(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(tf.errors.ShapeError, match=r"^linalg\.det: .*square"):
        L.det(np.ones((2, 3)))
    with pytest.raises(L.LinAlgError, match=r"matrix 1 is not positive definite"):
        L.cholesky(np.stack([np.eye(2), -np.eye(2)]))
    with pytest.raises(L.LinAlgError, match=r"svd: non-finite value"):
        L.svd(np.array([[np.nan, 1.0], [0.0, 1.0]]))
    with pytest.raises(L.LinAlgError, match=r"eigh: non-finite value inf"):
        L.eigh(np.array([[np.inf, 0.0], [0.0, 1.0]]))
    with pytest.raises(L.LinAlgError, match=r"triangular_solve: matrix 0 is singular"):
        L.triangular_solve(np.array([[1.0, 0.0], [1.0, 0.0]]), np.ones((2, 1)))
    with pytest.raises(tf.errors.ShapeError, match=r"square"):
        L.inv(np.ones((2, 3)))
    with pytest.raises(tf.errors.ShapeError, match=r"eigh.*square"):
        L.eigh(np.ones((2, 3)))
    with pytest.raises(tf.errors.ShapeError, match=r"batch axes"):
        L.solve(np.ones((2, 3, 3)), np.ones((4, 3, 1)))
    with pytest.raises(tf.errors.ShapeError, match=r"rows"):
        L.solve(np.eye(3), np.ones(4))
    with pytest.raises(tf.errors.ShapeError, match=r"at least two dimensions"):
        L.svd(np.ones(3))
    with pytest.raises(ValueError, match=r"mode"):
        L.qr(np.eye(2), mode="r")
    with pytest.raises(tf.errors.ShapeError, match=r"slogdet: expected square"):
        tf.prim.slogdet(np.ones((2, 3)))


def test_gil_is_released_and_batches_run_in_parallel() -> None:
    """Two Python threads factorizing concurrently both finish with correct results."""
    import threading

    a = well((64, 16, 16), "float64")
    out: list[np.ndarray] = []

    def work() -> None:
        out.append(np.asarray(L.inv(a)))

    ts = [threading.Thread(target=work) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for o in out:
        np.testing.assert_allclose(o, np.linalg.inv(a), atol=1e-10)


# Real matrices up to 32×32 take the engine's own Householder QR (geqr2 + org2r); larger ones
# and complex ones faer's blocked QR. Both routes against NumPy, at and around the boundary.
QR_ROUTE_SHAPES = [
    (0, 0),
    (0, 3),
    (3, 0),
    (1, 1),
    (1, 5),
    (5, 1),
    (16, 16),
    (32, 32),
    (33, 33),
    (32, 5),
    (5, 32),
    (32, 33),
    (40, 3),
    (64, 16, 16),
    (3, 2, 7, 4),
]


def _check_qr(a: np.ndarray, mode: str, tol: float, unique: bool = True) -> None:
    q, r = (np_of(x) for x in L.qr(a, mode=mode))
    qn, rn = np.linalg.qr(a, mode=mode)
    assert q.shape == qn.shape and r.shape == rn.shape
    assert q.dtype == qn.dtype and r.dtype == rn.dtype
    scale = max(float(np.max(np.abs(a), initial=0.0)), np.finfo(a.dtype).tiny)
    np.testing.assert_allclose(q @ r / scale, a / scale, atol=tol, rtol=0)
    kq = q.shape[-1]
    eye = np.broadcast_to(np.eye(kq), q.shape[:-2] + (kq, kq))
    np.testing.assert_allclose(H(q) @ q, eye, atol=tol, rtol=0)
    np.testing.assert_array_equal(np.triu(r), r)
    d = np.diagonal(r, axis1=-2, axis2=-1)
    assert np.all(d.real >= 0) and np.all(d.imag == 0)
    if unique:
        k = min(a.shape[-2:])
        ph = np.diagonal(rn, axis1=-2, axis2=-1)[..., :k]
        ph = np.where(ph == 0, 1, ph / np.abs(ph))
        np.testing.assert_allclose(q[..., :k], qn[..., :k] * ph[..., None, :], atol=tol * 10)
        np.testing.assert_allclose(
            r[..., :k, :] / scale, np.conj(ph)[..., :, None] * rn[..., :k, :] / scale, atol=tol * 10
        )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", QR_ROUTE_SHAPES, ids=str)
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_small_route_against_numpy(shape: tuple[int, ...], dtype: str, mode: str) -> None:
    a = rand(shape, dtype)
    tol = {"float32": 2e-5, "complex64": 2e-5}.get(dtype, 1e-13) * max(shape[-2:] + (1,))
    _check_qr(a, mode, tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "case",
    ["zero", "zero_column", "rank_one", "triangular_negative", "tiny", "huge", "mixed"],
)
def test_qr_small_route_special_inputs(case: str, dtype: str) -> None:
    n = 8
    a = rand((n, n), "float64")
    if case == "zero":
        a = np.zeros((n, n))
    elif case == "zero_column":
        a[:, 2] = 0
    elif case == "rank_one":
        a = np.outer(a[:, 0], a[0])
    elif case == "triangular_negative":
        # Columns with nothing below the diagonal (no reflector) and negative pivots.
        a = -np.triu(np.abs(a)) - np.eye(n)
    elif case == "tiny":
        a = a * (1e-300 if dtype == "float64" else 1e-35)
    elif case == "huge":
        a = a * (1e300 if dtype == "float64" else 1e35)
    elif case == "mixed":
        a[:, 0] *= 1e-200 if dtype == "float64" else 1e-30
    a = a.astype(dtype)
    tol = 1e-12 if dtype == "float64" else 1e-5
    _check_qr(a, "reduced", tol, unique=case in ("tiny", "huge", "triangular_negative"))
    _check_qr(a, "complete", tol, unique=False)
    if case == "mixed":  # the tiny column is kept, not flushed: R[0, 0] = ‖a[:, 0]‖
        r = np_of(L.qr(a)[1])
        f = 1e-200 if dtype == "float64" else 1e-30
        c = a[:, 0].astype("float64")
        np.testing.assert_allclose(r[0, 0], f * np.linalg.norm(c / f), rtol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_qr_small_route_batch_matches_single(dtype: str) -> None:
    """One matrix gives the same bits alone as inside a batch (the batch runs on the pool)."""
    a = rand((256, 12, 12), dtype)
    q, r = (np_of(x) for x in L.qr(a))
    for i in (0, 77, 255):
        qi, ri = (np_of(x) for x in L.qr(a[i]))
        np.testing.assert_array_equal(qi, q[i])
        np.testing.assert_array_equal(ri, r[i])

"""tenferro inside quimb and autoray (``tenferro.integrations``): the ``TNOptimizer`` handler
(value, gradient, Hessian-vector product; quimb's complex packing) on quimb's own test
fixtures, and autoray's registration."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import tenferro as tf

qu = pytest.importorskip("quimb")
qtn = pytest.importorskip("quimb.tensor")
autoray = pytest.importorskip("autoray")

warnings.filterwarnings("ignore", message=".*kahypar.*")


def _heis(L: int, chi: int, dtype: str):
    """quimb's ``heis_pbc`` test fixture (periodic Heisenberg chain, random MPS)."""
    psi0 = qtn.MPS_rand_state(L, chi, cyclic=True, seed=42).astype(dtype)
    H = qtn.MPO_ham_heis(L, cyclic=True).astype(dtype)

    def norm_fn(psi):
        return psi / (psi & psi).contract(all, optimize="random-greedy") ** 0.5

    def loss_fn(psi, H):
        k, H, b = qtn.tensor_network_align(psi, H, psi)
        return (k & H & b).contract(all, optimize="random-greedy")

    return psi0, H, norm_fn, loss_fn, qu.groundenergy(qu.ham_heis(L, cyclic=True, sparse=True))


def _mbl(L: int, chi: int, dtype: str = "complex64"):
    """quimb's ``ham_mbl_pbc_complex`` test fixture (complex MPS, random-field chain)."""
    psi0 = qtn.MPS_rand_state(L, chi, cyclic=True, seed=42).astype(dtype)
    opts = {"cyclic": True, "dh": 0.7, "dh_dim": 3, "seed": 42}
    H = qtn.MPO_ham_mbl(L, **opts).astype(dtype)

    def norm_fn(psi):
        return psi * (psi.H & psi).contract(all, optimize="random-greedy") ** -0.5

    def loss_fn(psi, H):
        k, H, b = qtn.tensor_network_align(psi, H, psi.H)
        return autoray.do("real", (k & H & b).contract(all, optimize="random-greedy"))

    return psi0, H, norm_fn, loss_fn, qu.groundenergy(qu.ham_mbl(L, sparse=True, **opts))


def _optimizer(fixture, **kw):
    tf.integrations.quimb.register()
    tf.integrations.quimb.register()  # idempotent
    psi0, H, norm_fn, loss_fn, en_ex = fixture
    opt = qtn.TNOptimizer(
        psi0,
        loss_fn=loss_fn,
        norm_fn=norm_fn,
        loss_constants={"H": H},
        autodiff_backend="tenferro",
        progbar=False,
        **kw,
    )
    return opt, en_ex


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_heisenberg_pbc_ground_state(dtype: str) -> None:
    opt, en_ex = _optimizer(_heis(10, 8, dtype))
    opt.optimize(100)
    assert abs(opt.loss - en_ex) / abs(en_ex) <= 1e-3, (opt.loss, en_ex)


def test_complex_mbl_ground_state() -> None:
    opt, en_ex = _optimizer(_mbl(10, 8))
    opt.optimize(100)
    assert abs(opt.loss - en_ex) / abs(en_ex) <= 1e-3, (opt.loss, en_ex)


@pytest.mark.parametrize("case", ["real", "complex"])
def test_hessp_trust_ncg_converges(case: str) -> None:
    fixture = _heis(6, 4, "float64") if case == "real" else _mbl(6, 4, "complex128")
    opt, en_ex = _optimizer(fixture, optimizer="trust-ncg")
    opt.optimize(400, hessp=True)
    assert abs(opt.loss - en_ex) / abs(en_ex) <= 1e-4, (opt.loss, en_ex, opt._n)


def _fd(f, x: np.ndarray, h: float) -> np.ndarray:
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


@pytest.mark.parametrize("case", ["real", "complex"])
def test_gradient_and_hessp_match_finite_differences_in_quimbs_packing(case: str) -> None:
    """The packed real gradient (complex arrays as real and imaginary parts) and the packed
    Hessian-vector product agree with central differences of quimb's vectorised loss."""
    fixture = _heis(4, 2, "float64") if case == "real" else _mbl(4, 2, "complex128")
    opt, _ = _optimizer(fixture)
    x = np.array(opt.vectorizer.vector, copy=True)
    p = np.random.default_rng(1).standard_normal(x.size)
    _, g = opt.vectorized_value_and_grad(x)
    g = np.array(g, copy=True)
    np.testing.assert_allclose(g, _fd(opt.vectorized_value, x, 1e-6), rtol=1e-5, atol=1e-7)
    hp = np.array(opt.vectorized_hessp(x, p), copy=True)

    def directional(t: float) -> np.ndarray:
        return np.array(opt.vectorized_value_and_grad(x + t * p)[1], copy=True)

    h = 1e-5
    np.testing.assert_allclose(
        hp, (directional(h) - directional(-h)) / (2 * h), rtol=1e-4, atol=1e-6
    )


def test_autoray_svd_is_reduced_whatever_the_import_order_and_tenferro_never_imports_it() -> None:
    tf.integrations.autoray.register()
    u, s, vh = autoray.do("linalg.svd", tf.asarray(np.ones((4, 2))))
    assert (u.shape, s.shape, vh.shape) == ((4, 2), (2,), (2, 2))
    code = (
        "import sys, autoray, tenferro as tf, numpy as np\n"
        "u, s, vh = autoray.do('linalg.svd', tf.asarray(np.ones((5, 3))))\n"
        "assert u.shape == (5, 3), u.shape\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    code = (
        "import sys, tenferro\nassert 'autoray' not in sys.modules and 'quimb' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    # tenferro imported first: registered when autoray is imported later (the finder then goes).
    code = (
        "import sys, tenferro as tf, numpy as np\n"
        "assert 'autoray' not in sys.modules\n"
        "import autoray\n"
        "u, s, vh = autoray.do('linalg.svd', tf.asarray(np.ones((5, 3))))\n"
        "assert u.shape == (5, 3), u.shape\n"
        "assert not any(type(f).__name__ == '_RegisterOnImport' for f in sys.meta_path)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)

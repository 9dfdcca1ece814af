"""quimb's MPS algorithms on tenferro arrays (issue 22, autoray acceptance): ``MPS.compress``,
``canonize``, ``gate_split`` and ``local_expectation_canonical`` run through autoray on
tenferro tensors and agree with the same calls on NumPy arrays.

The factors of an MPS are fixed only up to a gauge (and the SVD's signs/phases), so the checks
compare gauge-invariant quantities: the dense state vector, the canonical form itself (the
isometry conditions of every site off the orthogonality centre), the bond dimensions and the
expectation values.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tenferro as tf

qu = pytest.importorskip("quimb")
qtn = pytest.importorskip("quimb.tensor")
pytest.importorskip("autoray")

warnings.filterwarnings("ignore", message=".*kahypar.*")

L, CHI, TOL = 8, 7, 1e-10


def _state(dtype: str):
    return qtn.MPS_rand_state(L, CHI, seed=3, dtype=dtype)


def _gate(dtype: str) -> np.ndarray:
    if dtype.startswith("complex"):
        return qu.rand_uni(4, seed=5).astype(dtype)
    return np.asarray(qu.rand_herm(4, seed=5).real, dtype=dtype)


def _on_tenferro(psi):
    out = psi.copy()
    out.apply_to_arrays(tf.asarray)
    return out


def _all_tenferro(psi) -> None:
    kinds = {type(a) for a in psi.arrays}
    assert kinds == {tf.Tensor}, kinds


def _dense(psi) -> np.ndarray:
    return np.asarray(psi.to_dense()).ravel()


def _assert_canonical_around(psi, center: int) -> None:
    """Sites left of ``center`` are left isometries, sites right of it right isometries."""
    for j in range(L):
        if j == center:
            continue
        t = psi[j]
        nb = j + 1 if j < center else j - 1  # the bond toward the centre stays open
        (keep,) = qtn.bonds(t, psi[nb])
        others = [i for i in t.inds if i != keep]
        a = np.asarray(t.transpose(*others, keep).data)
        m = a.reshape(-1, a.shape[-1])
        np.testing.assert_allclose(m.conj().T @ m, np.eye(m.shape[1]), atol=TOL)


DTYPES = ["float64", "complex128"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_compress_max_bond_4_matches_numpy(dtype: str) -> None:
    ref = _state(dtype)
    ours = _on_tenferro(ref)
    ref.compress(max_bond=4)
    ours.compress(max_bond=4)
    _all_tenferro(ours)
    assert ours.max_bond() == ref.max_bond() == 4
    # A real truncation happened: the compressed state differs from the input.
    assert np.linalg.norm(_dense(ref) - _dense(_state(dtype))) > 1e-3
    np.testing.assert_allclose(_dense(ours), _dense(ref), atol=TOL)
    _assert_canonical_around(ours, 0)  # form="right": orthogonality centre at site 0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("center", [0, 3, L - 1])
def test_canonize_matches_numpy(dtype: str, center: int) -> None:
    ref = _state(dtype)
    ours = _on_tenferro(ref)
    ref.canonize(center)
    ours.canonize(center)
    _all_tenferro(ours)
    np.testing.assert_allclose(_dense(ours), _dense(ref), atol=TOL)
    _assert_canonical_around(ours, center)
    # The centre carries the whole norm.
    np.testing.assert_allclose(
        np.linalg.norm(np.asarray(ours[center].data)), np.linalg.norm(_dense(ref)), rtol=TOL
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("max_bond", [None, 4])
def test_gate_split_matches_numpy(dtype: str, max_bond: int | None) -> None:
    ref = _state(dtype)
    ours = _on_tenferro(ref)
    g = _gate(dtype)
    a = ref.gate_split(g, where=(2, 3), max_bond=max_bond)
    b = ours.gate_split(tf.asarray(g), where=(2, 3), max_bond=max_bond)
    _all_tenferro(b)
    assert b.max_bond() == a.max_bond()
    np.testing.assert_allclose(_dense(b), _dense(a), atol=TOL)
    if max_bond is None:  # exact: the gate applied to the dense state
        full = np.kron(np.kron(np.eye(4), g), np.eye(2 ** (L - 4)))
        np.testing.assert_allclose(_dense(b), full @ _dense(ref), atol=TOL)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("where", [(0, 1), (4, 5)])
def test_local_expectation_canonical_matches_numpy(dtype: str, where: tuple[int, int]) -> None:
    ref = _state(dtype)
    ours = _on_tenferro(ref)
    g = _gate(dtype)
    expected = ref.local_expectation_canonical(g, where)
    got = ours.local_expectation_canonical(tf.asarray(g), where)
    assert isinstance(got, tf.Tensor)
    np.testing.assert_allclose(complex(got), complex(expected), atol=TOL)
    # And against the dense expectation <psi|G|psi> / <psi|psi>.
    v = _dense(_state(dtype))
    i = where[0]
    full = np.kron(np.kron(np.eye(2**i), g), np.eye(2 ** (L - i - 2)))
    np.testing.assert_allclose(complex(got), np.vdot(v, full @ v) / np.vdot(v, v), atol=TOL)

"""``tf.einsum`` / ``tf.einsum_path`` against ``numpy.einsum``: explicit and implicit output,
ellipsis broadcasting, traces and diagonals, hyper-edges, embedding (``i->ii``), Unicode labels,
rank-0 and zero-size operands, mixed dtypes, the interleaved form, random subscripts
(hypothesis), derivatives (``check_grads``), paths and their costs, and errors."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tenferro as tf

opt_einsum = pytest.importorskip("opt_einsum")
einsum_mod = importlib.import_module("tenferro.einsum")

DTYPES = (np.dtype(np.float64), np.dtype(np.complex128))


def rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any = np.float64) -> np.ndarray:
    dtype = np.dtype(dtype)
    x = rng.uniform(-1.0, 1.0, size=shape)
    if dtype.kind == "c":
        x = x + 1j * rng.uniform(-1.0, 1.0, size=shape)
    return x.astype(dtype)


def check(subscripts: str, *arrays: np.ndarray, optimize: Any = "greedy") -> None:
    expected = np.einsum(subscripts, *arrays, optimize=False)
    got = tf.einsum(subscripts, *[tf.asarray(a) for a in arrays], optimize=optimize)
    assert tuple(got.shape) == expected.shape
    assert np.dtype(got.dtype) == expected.dtype
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-10, atol=1e-10)


CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij,kj", [(2, 3), (4, 3)]),
    ("ba,ac", [(2, 3), (3, 4)]),
    ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("ii->", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iii->i", [(3, 3, 3)]),
    ("iji->j", [(3, 2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("ij", [(2, 3)]),
    ("ji", [(2, 3)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ijk,jkl,lm->im", [(2, 3, 4), (3, 4, 5), (5, 2)]),
    ("ia,ib,ic->abc", [(4, 2), (4, 3), (4, 2)]),
    ("ia,ib,ic->iabc", [(4, 2), (4, 3), (4, 2)]),
    ("ij,ij,ij->i", [(3, 4), (3, 4), (3, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]),
    ("i...->...", [(3, 2, 2)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("ij...,j...->i...", [(2, 3, 4), (3, 1)]),
    ("...,...", [(2, 3), (3,)]),
    (",->", [(), ()]),
    (",i->i", [(), (3,)]),
    ("i,->", [(3,), ()]),
    ("", [()]),
    ("ij,jk->ik", [(0, 3), (3, 4)]),
    ("ij,jk->ik", [(2, 0), (0, 4)]),
    ("ij,jk", [(2, 3), (3, 0)]),
    ("ii->i", [(0, 0)]),
    ("i,i", [(1,), (3,)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),
    ("abcd,dcbe->ae", [(2, 3, 2, 3), (3, 2, 3, 2)]),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize(("subscripts", "shapes"), CASES, ids=[c[0] or "empty" for c in CASES])
def test_cases_vs_numpy(subscripts: str, shapes: list[tuple[int, ...]], dtype: np.dtype) -> None:
    rng = np.random.default_rng(0)
    arrays = [rand(rng, s, dtype) for s in shapes]
    for optimize in (False, "greedy", "optimal"):
        check(subscripts, *arrays, optimize=optimize)


def test_embedding_repeated_output() -> None:
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.array(tf.einsum("i->ii", tf.asarray(x)).tolist()), np.diag(x))
    a = rand(np.random.default_rng(1), (2, 3))
    got = np.array(tf.einsum("ij->iji", tf.asarray(a)).tolist())
    exp = np.einsum("ij,ik->ijk", a, np.eye(2))
    np.testing.assert_allclose(got, exp)
    got = np.array(tf.einsum("ij,jk->kik", tf.asarray(a), tf.asarray(np.ones((3, 2)))).tolist())
    exp = np.einsum("ik,kl->kil", a @ np.ones((3, 2)), np.eye(2))
    np.testing.assert_allclose(got, exp)


def test_unicode_labels() -> None:
    rng = np.random.default_rng(2)
    a, b = rand(rng, (2, 3)), rand(rng, (3, 4))
    got = tf.einsum("αβ,βγ->γα", tf.asarray(a), tf.asarray(b))
    np.testing.assert_allclose(np.array(got.tolist()), (a @ b).T)
    # implicit output sorts by code point; 'é' > 'z'
    got = tf.einsum("éz,zß", tf.asarray(a), tf.asarray(b))
    np.testing.assert_allclose(np.array(got.tolist()), (a @ b).T)


def test_mixed_dtypes_promote() -> None:
    rng = np.random.default_rng(3)
    a = rand(rng, (2, 3), np.float64)
    b = rand(rng, (3, 4), np.complex128)
    check("ij,jk->ik", a, b)
    check("ij,jk->ik", a.astype(np.float32), b)
    check(
        "ij,jk->ik",
        np.arange(6, dtype=np.int64).reshape(2, 3),
        np.arange(12, dtype=np.int64).reshape(3, 4),
    )


def test_bool_operands() -> None:
    a = np.array([[True, False], [False, False]])
    b = np.array([[True, True], [False, True]])
    check("ij,jk->ik", a, b)


def test_interleaved_form() -> None:
    rng = np.random.default_rng(4)
    a, b = rand(rng, (2, 3)), rand(rng, (3, 4))
    got = tf.einsum(tf.asarray(a), [0, 1], tf.asarray(b), [1, 2], [0, 2])
    np.testing.assert_allclose(np.array(got.tolist()), a @ b)
    got = tf.einsum(tf.asarray(a), [0, 1], tf.asarray(b), [1, 2])
    np.testing.assert_allclose(np.array(got.tolist()), a @ b)
    c = rand(rng, (5, 2, 3))
    got = tf.einsum(tf.asarray(c), [Ellipsis, 0, 1], tf.asarray(b), [1, 2], [Ellipsis, 0, 2])
    np.testing.assert_allclose(
        np.array(got.tolist()), np.einsum(c, [Ellipsis, 0, 1], b, [1, 2], [Ellipsis, 0, 2])
    )
    got = tf.einsum(tf.asarray(a), [60, 61], tf.asarray(b), [61, 62], [62, 60])
    np.testing.assert_allclose(np.array(got.tolist()), (a @ b).T)


def test_numpy_inputs_and_mixed_tensors() -> None:
    rng = np.random.default_rng(5)
    a, b = rand(rng, (2, 3)), rand(rng, (3, 4))
    got = tf.einsum("ij,jk", a, tf.asarray(b))
    np.testing.assert_allclose(np.array(got.tolist()), a @ b)


# -- random subscripts ------------------------------------------------------------------------

LETTERS = "abcdefg"


@st.composite
def einsum_problems(draw: Any) -> tuple[str, list[tuple[int, ...]], bool]:
    n_ops = draw(st.integers(2, 6))
    sizes = {
        c: draw(st.integers(0, 3) if draw(st.booleans()) and c == "g" else st.integers(1, 3))
        for c in LETTERS
    }
    use_ell = draw(st.booleans())
    ell_shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    terms, shapes = [], []
    for _ in range(n_ops):
        labels = draw(st.lists(st.sampled_from(LETTERS), min_size=0, max_size=4))
        shape = [sizes[c] for c in labels]
        term = "".join(labels)
        if use_ell and draw(st.booleans()):
            # a trailing part of the ellipsis shape, with some axes broadcast as size 1
            k = draw(st.integers(0, len(ell_shape)))
            part = [1 if draw(st.booleans()) else n for n in ell_shape[len(ell_shape) - k :]]
            pos = draw(st.integers(0, len(labels)))
            term = term[:pos] + "..." + term[pos:]
            shape = shape[:pos] + part + shape[pos:]
        terms.append(term)
        shapes.append(tuple(shape))
    explicit = draw(st.booleans())
    subs = ",".join(terms)
    if explicit:
        present = sorted({c for t in terms for c in t if c.isalpha()})
        out = draw(st.lists(st.sampled_from(present), unique=True, max_size=4)) if present else []
        out_s = "".join(out)
        if any("..." in t for t in terms):
            pos = draw(st.integers(0, len(out_s)))
            out_s = out_s[:pos] + "..." + out_s[pos:]
        subs += "->" + out_s
    return subs, shapes, draw(st.sampled_from([False, "greedy", "optimal"]))


@given(einsum_problems(), st.sampled_from(DTYPES))
def test_random_vs_numpy(problem: tuple[str, list[tuple[int, ...]], Any], dtype: np.dtype) -> None:
    subs, shapes, optimize = problem
    rng = np.random.default_rng(0)
    arrays = [rand(rng, s, dtype) for s in shapes]
    check(subs, *arrays, optimize=optimize)
    # opt_einsum (the acceptance oracle) agrees too, on column-major copies and on zero-copy
    # views of the C-ordered arrays (the planner orders products by memory layout)
    expected = opt_einsum.contract(subs, *arrays)
    for copy in (True, False):
        got = tf.einsum(
            subs, *[tf.asarray(np.asarray(a), copy=copy) for a in arrays], optimize=optimize
        )
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-10, atol=1e-10)


# -- derivatives ------------------------------------------------------------------------------


def test_grads_matmul() -> None:
    rng = np.random.default_rng(6)
    tf.testing.check_grads(
        lambda a, b: tf.einsum("ij,jk->ik", a, b), [rand(rng, (2, 3)), rand(rng, (3, 2))], order=2
    )


def test_grads_trace_diag_hyperedge() -> None:
    rng = np.random.default_rng(7)
    args = [rand(rng, (3, 3, 2), np.complex128), rand(rng, (3, 2)), rand(rng, (3, 4))]
    tf.testing.check_grads(lambda a, b, c: tf.einsum("iik,ik,ij->kj", a, b, c), args, order=2)
    tf.testing.check_grads(lambda a: tf.einsum("ii->", a), [rand(rng, (3, 3))], order=2)
    tf.testing.check_grads(lambda a: tf.einsum("i->ii", a), [rand(rng, (3,))], order=2)


GRAD_CASES = [
    # (subscripts, shapes, dtypes) — one per einsum feature
    ("ij,jk", [(2, 3), (3, 2)], "dc"),  # implicit output, real x complex
    ("...ij,...jk->...ik", [(2, 2, 3), (3, 2)], "cc"),  # ellipsis broadcasting
    ("i...,i->...", [(3, 1, 2), (3,)], "dd"),  # size-1 broadcast axis
    ("iii->i", [(2, 2, 2)], "c"),  # triple diagonal
    ("iji->j", [(2, 3, 2)], "d"),  # trace inside an operand
    ("i,j->ij", [(2,), (3,)], "cd"),  # outer product
    ("ia,ib,ic->abc", [(3, 2), (3, 2), (3, 2)], "ccd"),  # hyper-edge
    ("ij->iij", [(2, 3)], "c"),  # repeated output label (embedding)
    (",i->i", [(), (3,)], "cc"),  # rank-0 operand
    ("αβ,βγ->γα", [(2, 3), (3, 2)], "dc"),  # Unicode labels, transposed output
    ("ab,asc,bsd->cd", [(3, 3), (3, 2, 3), (3, 2, 3)], "ccc"),  # MPS transfer step
    ("ij,jk->ik", [(0, 2), (2, 3)], "dd"),  # zero-size
]


@pytest.mark.parametrize(
    ("subscripts", "shapes", "kinds"), GRAD_CASES, ids=[c[0] for c in GRAD_CASES]
)
@pytest.mark.parametrize("optimize", [False, "optimal"])
def test_grads_each_feature(
    subscripts: str, shapes: list[tuple[int, ...]], kinds: str, optimize: Any
) -> None:
    rng = np.random.default_rng(8)
    args = [
        rand(rng, sh, np.complex128 if k == "c" else np.float64) for sh, k in zip(shapes, kinds)
    ]
    tf.testing.check_grads(lambda *xs: tf.einsum(subscripts, *xs, optimize=optimize), args, order=2)


def test_grads_interleaved_form() -> None:
    rng = np.random.default_rng(9)
    args = [rand(rng, (2, 3), np.complex128), rand(rng, (3, 4))]
    tf.testing.check_grads(lambda a, b: tf.einsum(a, [0, 1], b, [1, 2], [2, 0]), args, order=2)


def _mps(rng: np.random.Generator, n: int, d: int, bond: int, dtype: Any) -> list[np.ndarray]:
    dims = [1] + [bond] * (n - 1) + [1]
    return [rand(rng, (dims[i], d, dims[i + 1]), dtype) for i in range(n)]


def _overlap_subscripts(n: int) -> str:
    """``<psi|phi>`` of two open MPS as one einsum: bra bonds a_i, ket bonds b_i, physical s_i."""
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    bra = [next(letters) for _ in range(n + 1)]
    ket = [next(letters) for _ in range(n + 1)]
    phys = [next(letters) for _ in range(n)]
    terms = [bra[i] + phys[i] + bra[i + 1] for i in range(n)] + [
        ket[i] + phys[i] + ket[i + 1] for i in range(n)
    ]
    return ",".join(terms) + "->"


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_mps_overlap_gradient_matches_finite_differences(dtype: np.dtype) -> None:
    """L = |<psi|phi>|² of two 10-site MPS (bond 3): the gradient with respect to every entry of
    every bra tensor against central finite differences on the NumPy contraction."""
    n, rng = 10, np.random.default_rng(10)
    psi, phi = _mps(rng, n, 2, 3, dtype), _mps(rng, n, 2, 3, dtype)
    subs = _overlap_subscripts(n)

    def loss_np(bra: list[np.ndarray]) -> float:
        z = opt_einsum.contract(subs, *[b.conj() for b in bra], *phi)
        return float(abs(z) ** 2)

    rt = tf.Runtime()
    leaves = [rt.variable(a) for a in psi]
    z = tf.einsum(subs, *[tf.conj(x) for x in leaves], *[rt.constant(a) for a in phi])
    loss = (z * tf.conj(z)).real
    assert abs(float(loss) - loss_np(psi)) <= 1e-10 * loss_np(psi)
    loss.backward()
    h = 1e-6
    for k, a in enumerate(psi):
        grad = np.asarray(leaves[k].grad)
        fd = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            for unit in (1.0, 1j) if dtype.kind == "c" else (1.0,):
                plus = [b.copy() for b in psi]
                minus = [b.copy() for b in psi]
                plus[k][idx] += h * unit
                minus[k][idx] -= h * unit
                fd[idx] += unit * (loss_np(plus) - loss_np(minus)) / (2 * h)
        scale = max(1.0, float(np.max(np.abs(fd))))
        np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-6 * scale, err_msg=f"site {k}")


# -- paths ------------------------------------------------------------------------------------


def _replay(path: list[tuple[int, ...]], n: int) -> None:
    remaining = n
    for entry in path:
        assert len(set(entry)) == len(entry) and all(0 <= k < remaining for k in entry)
        remaining -= len(entry) - 1
    assert remaining == 1


PATH_CASES = [
    ("ij,jk,kl->il", [(2, 30), (30, 40), (40, 3)]),
    ("ab,bc,cd,de,ef->af", [(5, 10), (10, 2), (2, 20), (20, 3), (3, 7)]),
    ("ij,ik,il,im->jklm", [(6, 2), (6, 3), (6, 2), (6, 3)]),
    ("abc,bd,ce,de->a", [(3, 4, 5), (4, 6), (5, 6), (6, 6)]),
    ("i,j,k,ij,jk", [(4,), (5,), (6,), (4, 5), (5, 6)]),
]


@pytest.mark.parametrize(("subscripts", "shapes"), PATH_CASES, ids=[c[0] for c in PATH_CASES])
def test_paths_valid_and_optimal_not_worse(subscripts: str, shapes: list[tuple[int, ...]]) -> None:
    arrays = [np.ones(s) for s in shapes]
    costs = {}
    for opt in (False, "greedy", "optimal"):
        path, info = tf.einsum_path(subscripts, *arrays, optimize=opt)
        _replay(path, len(arrays))
        assert info.opt_cost > 0 and info.largest_intermediate >= max(a.size for a in arrays)
        assert subscripts.split("->")[0].split(",")[0] in str(info)
        costs[opt] = info.opt_cost
        # the same path given explicitly (both forms) gives the same result
        rng = np.random.default_rng(8)
        vals = [rand(rng, s) for s in shapes]
        exp = np.einsum(subscripts, *vals)
        for given_path in (path, ["einsum_path", *path], tuple(path)):
            got = tf.einsum(subscripts, *vals, optimize=given_path)
            np.testing.assert_allclose(np.array(got.tolist()), exp, rtol=1e-10, atol=1e-12)
    assert costs["optimal"] <= costs["greedy"]


def test_path_matches_numpy_path_format() -> None:
    arrays = [np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))]
    np_path, _ = np.einsum_path("ij,jk,kl->il", *arrays, optimize="greedy")
    got = tf.einsum("ij,jk,kl->il", *arrays, optimize=np_path)
    np.testing.assert_allclose(np.array(got.tolist()), np.einsum("ij,jk,kl->il", *arrays))


def test_optimal_falls_back_above_its_limit() -> None:
    n = 13  # "optimal" is exact up to 12 operands (docs/ops.md)
    subs = ",".join("ab" for _ in range(n)) + "->ab"
    arrays = [np.ones((2, 2))] * n
    path, info = tf.einsum_path(subs, *arrays, optimize="optimal")
    _replay(path, n)
    assert info.method == "greedy" and "greedy" in info.note and "greedy" in str(info)


def test_single_operand_path() -> None:
    path, info = tf.einsum_path("ii->i", np.ones((3, 3)))
    assert path == [(0,)]


def test_plan_cache_is_the_engines() -> None:
    rt, cpu = tf.Runtime(), tf.CpuEngine(threads=1)
    a = rt.constant(np.arange(6.0).reshape(2, 3))
    b = rt.constant(np.arange(12.0).reshape(3, 4))
    with rt.session(cpu) as s:
        first = s.einsum("ij,jk->ik", a, b)
        stats = cpu.cache_stats()
        assert stats.entries >= 1 and stats.misses >= 1
        again = s.einsum("ij,jk->ik", a, b)
        stats2 = cpu.cache_stats()
        # the einsum program (and the GEMM plan) are hits the second time; nothing new is built
        assert stats2.misses == stats.misses and stats2.hits > stats.hits
        assert stats2.entries == stats.entries
        np.testing.assert_array_equal(np.asarray(first), np.asarray(again))
        # a different path, shape or dtype is a different plan
        s.einsum("ij,jk->ik", a, b, optimize=[(0, 1)])
        s.einsum("ij,jk->ik", a, b, optimize=False)
        s.einsum("ij,jk->ik", a, rt.constant(np.ones((3, 5))))
        s.einsum("ij,jk->ik", a, rt.constant(np.ones((3, 4), np.complex128)))
        assert cpu.cache_stats().entries > stats2.entries
    np.testing.assert_allclose(
        np.asarray(first), np.arange(6.0).reshape(2, 3) @ np.arange(12.0).reshape(3, 4)
    )
    cpu.clear_caches()
    cleared = cpu.cache_stats()
    assert cleared.entries == 0 and cleared.clears == 1
    # the implicit layer uses the default engine's cache
    d = tf.default_engine()
    h0 = d.cache_stats().hits
    tf.einsum("ij->ji", np.ones((2, 3)))
    tf.einsum("ij->ji", np.ones((2, 3)))
    assert d.cache_stats().hits > h0


def test_plan_cache_is_bounded() -> None:
    rt, cpu = tf.Runtime(), tf.CpuEngine(threads=1)
    with rt.session(cpu) as s:
        for k in range(300):
            y = s.einsum("i->", rt.constant(np.ones(k + 1)))
            assert float(y) == k + 1
    stats = cpu.cache_stats()
    assert stats.entries <= 256 and stats.evictions >= 300 - 256


# -- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("subscripts", "shapes", "fragment"),
    [
        ("ij,jk->ik", [(2, 3)], "1 operand"),
        ("ij,jk->ik", [(2, 3), (4, 5)], "'j'"),
        ("ij->ik", [(2, 3)], "'k'"),
        ("i>->i", [(2, 2)], "'>' at position 1"),
        ("i.j->i", [(2, 2)], "position 1"),
        ("i->i->i", [(2,)], "'->'"),
        ("ij->i", [(2,)], "rank 1"),
        ("...i,...i->i", [(2, 3), (4, 3)], "ellipsis"),
        ("...ij->ij", [(2, 3, 4)], "'...'"),
        ("i-j", [(2, 2)], "'-'"),
    ],
)
def test_errors(subscripts: str, shapes: list[tuple[int, ...]], fragment: str) -> None:
    with pytest.raises(tf.errors.EinsumError) as exc:
        tf.einsum(subscripts, *[np.ones(s) for s in shapes])
    msg = str(exc.value)
    assert repr(subscripts) in msg and fragment in msg
    assert isinstance(exc.value, ValueError)


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ([(0, 3)], "entry 0"),
        ([(0, 0)], "entry 0"),
        ([(0, 1)], "uncontracted"),
        ([(0, 1), (0, 2)], "entry 1"),
        (["bogus", (0, 1)], "entry 0"),
        ([(0, "a")], "entry 0"),
    ],
)
def test_invalid_paths(path: Any, fragment: str) -> None:
    arrays = [np.ones((2, 2))] * 3
    with pytest.raises(tf.errors.EinsumError) as exc:
        tf.einsum("ij,jk,kl->il", *arrays, optimize=path)
    assert "'ij,jk,kl->il'" in str(exc.value) and fragment in str(exc.value)


def test_unknown_optimize() -> None:
    with pytest.raises(tf.errors.EinsumError, match="unknown optimize 'bogus' .*'greedy'"):
        tf.einsum("ij,jk", np.ones((2, 2)), np.ones((2, 2)), optimize="bogus")


def test_opt_einsum_dispatches_to_tenferro() -> None:
    """opt_einsum picks the backend from ``type(x).__module__`` (python-api.md): contracting
    tenferro tensors stays in tenferro, and gradients flow through it."""
    rng = np.random.default_rng(13)
    a, b, c = rand(rng, (3, 4)), rand(rng, (4, 5), np.complex128), rand(rng, (5, 2))
    rt = tf.Runtime()
    x = rt.variable(a)
    out = opt_einsum.contract("ij,jk,kl->il", x, rt.constant(b), rt.constant(c))
    assert isinstance(out, tf.Tensor)
    np.testing.assert_allclose(np.asarray(out), a @ b @ c, rtol=1e-12)
    loss = (out * tf.conj(out)).real.sum()
    loss.backward()
    # d/dx Σ|x M|² = 2 (x M) Mᴴ with M = b c (tenferro's convention: the conjugate gradient)
    m = b @ c
    np.testing.assert_allclose(np.asarray(x.grad), (2 * (a @ m) @ m.conj().T).real, rtol=1e-10)


# -- regressions found by a hostile-input session ------------------------------------------------


@pytest.mark.parametrize(
    ("subscripts", "arrays"),
    [
        ("i,j->", [np.array([True, False, True]), np.arange(3.0)]),
        ("i,i,->", [np.array([True, False, True]), np.array([True, True, True]), 2.0]),
        ("ii,j->j", [np.eye(2, dtype=bool), np.arange(3.0)]),
        ("i,i->i", [np.array([True, False]), np.array([3, 4], np.int32)]),
    ],
)
def test_bool_mixed_with_other_dtypes(subscripts: str, arrays: list[Any]) -> None:
    expected = np.einsum(subscripts, *arrays)
    got = tf.einsum(subscripts, *arrays)
    assert np.dtype(got.dtype) == expected.dtype
    np.testing.assert_array_equal(np.asarray(got), expected)


def test_all_bool_counts_never_wrap() -> None:
    t = np.ones(1 << 16, bool)
    assert bool(tf.einsum("i,j,k,l->", t, t, t, t)) is True  # 2**64 true products
    ops: list[Any] = []
    for k in range(64):
        ops += [np.ones(2, bool), [k]]
    assert bool(tf.einsum(*ops, [])) is True
    assert bool(tf.einsum("i,i->", np.array([True, False]), np.array([False, True]))) is False


@pytest.mark.parametrize(
    ("subscripts", "shape"), [("ii->i", (1, 3)), ("ii", (3, 1)), ("iij->ij", (1, 2, 3))]
)
def test_diagonal_needs_equal_sizes(subscripts: str, shape: tuple[int, ...]) -> None:
    with pytest.raises(tf.errors.EinsumError, match="repeated in operand 0 with sizes"):
        tf.einsum(subscripts, np.ones(shape))


def test_path_entries_are_validated_on_cache_hits_too() -> None:
    a = np.ones((2, 2))
    tf.einsum("ij,jk->ik", a, a, optimize=[(0, 1)])  # cached
    with pytest.raises(tf.errors.EinsumError, match="invalid path entry 0"):
        tf.einsum("ij,jk->ik", a, a, optimize=[(False, True)])


def test_large_interleaved_labels() -> None:
    m = np.arange(6.0).reshape(2, 3)
    for k in (35328, 36000, 1_000_000):  # around and above the surrogate range
        np.testing.assert_array_equal(np.asarray(tf.einsum(m, [0, k], [0])), m.sum(1))
        assert tf.einsum_path(m, [0, k], [0])[0] == [(0,)]
    with pytest.raises(tf.errors.EinsumError, match="too large"):
        tf.einsum(m, [0, 2**70], [0])


def test_error_positions_count_in_the_given_string() -> None:
    with pytest.raises(tf.errors.EinsumError, match="position 3"):
        tf.einsum("  i.j", np.ones((2, 2)))
    with pytest.raises(tf.errors.EinsumError, match="'-' at position 10"):
        tf.einsum("ij, jk ->i-k", np.ones((2, 2)), np.ones((2, 2)))


@pytest.mark.parametrize("optimize", [1, 0, 1.5, object(), np.True_])
def test_non_path_optimize_is_an_einsum_error(optimize: Any) -> None:
    with pytest.raises(tf.errors.EinsumError, match="invalid optimize"):
        tf.einsum("ij->ji", np.ones((2, 2)), optimize=optimize)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64], ids=str)
def test_grads_single_precision_with_default_tolerances(dtype: Any) -> None:
    """check_grads picks a step and tolerances suited to single precision by default."""
    rng = np.random.default_rng(14)
    args = [rand(rng, (3, 4), dtype), rand(rng, (4, 2), dtype)]
    tf.testing.check_grads(lambda a, b: tf.einsum("ij,jk->ki", a, b), args, order=2)
    tf.testing.check_grads(lambda p, q: p * q, [rand(rng, (3,), dtype)] * 2, order=1)

"""Contractions against ``numpy.einsum`` / ``numpy.matmul`` / ``numpy.tensordot``:
``dot_general`` and ``dot_general_with_conj`` for random configurations (batch, contracting and
free axes in every position, zero-size axes) in float32/float64/complex64/complex128 with
compact, transposed and negative-stride operands (hypothesis); NumPy's batch-leading
``tf.matmul``/``@`` with 1-d promotion and broadcasting; ``tf.tensordot``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tenferro as tf
from reference import dot_general_subscripts
from tenferro.testing import assert_close

FLOATS = tuple(np.dtype(d) for d in ("float32", "float64", "complex64", "complex128"))
SINGLE = (np.dtype(np.float32), np.dtype(np.complex64))


def random_values(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    x = rng.uniform(-2.0, 2.0, size=shape)
    if dtype.kind == "c":
        x = x + 1j * rng.uniform(-2.0, 2.0, size=shape)
    return x.astype(dtype)


def as_layout(x: np.ndarray, layout: str) -> Any:
    """``x`` as a tenferro tensor with the given memory layout; strided layouts are views whose
    non-compact strides are asserted."""
    # (np.ascontiguousarray would turn rank 0 into rank 1.)
    if layout == "c_order":
        return tf.tensor(np.array(x, order="C"))
    if layout == "f_order":
        return tf.tensor(np.array(x, order="F"))
    if layout == "transposed":
        rev = tuple(range(x.ndim - 1, -1, -1))
        t = tf.tensor(np.array(np.transpose(x, rev), order="C")).transpose(rev)
    elif layout == "reversed":
        t = tf.tensor(np.array(x[::-1], order="C"))[::-1] if x.ndim else tf.tensor(x)
    else:  # "step_2": every other element of a larger buffer along the last axis
        if x.ndim == 0:
            return tf.tensor(x)
        big = np.repeat(x, 2, axis=-1)
        t = tf.tensor(big)[..., ::2]
    np.testing.assert_array_equal(np.asarray(t), x)
    if not np.asarray(t).flags.f_contiguous:
        assert not t.is_contiguous, (layout, t.strides)
    return t


LAYOUTS = ("c_order", "f_order", "transposed", "reversed", "step_2")


def tolerance(dtype: np.dtype, k: int, a: np.ndarray, b: np.ndarray) -> dict:
    eps = float(np.finfo(dtype).eps)
    big = (float(np.max(np.abs(a))) if a.size else 0.0) * (
        float(np.max(np.abs(b))) if b.size else 0.0
    )
    base = 1e-6 if dtype in SINGLE else 1e-14
    return {"rtol": 10 * eps, "atol": base + 4 * max(k, 1) * eps * big}


@st.composite
def dot_configs(draw: st.DrawFn) -> dict:
    """Random operand shapes and a matching ``DotGeneralConfig``: each role (batch, contracting,
    free) gets 0-2 axes, placed at random positions of each operand."""
    n_batch = draw(st.integers(0, 2), label="batch")
    n_contract = draw(st.integers(0, 2), label="contracting")
    n_lfree = draw(st.integers(0, 2), label="lhs free")
    n_rfree = draw(st.integers(0, 2), label="rhs free")
    size = st.integers(0, 3) if draw(st.booleans()) else st.integers(1, 3)
    batch = [draw(size) for _ in range(n_batch)]
    contract = [draw(size) for _ in range(n_contract)]
    lfree = [draw(size) for _ in range(n_lfree)]
    rfree = [draw(size) for _ in range(n_rfree)]
    lhs_roles = (
        [("b", i) for i in range(n_batch)]
        + [("c", i) for i in range(n_contract)]
        + [("f", i) for i in range(n_lfree)]
    )
    rhs_roles = (
        [("b", i) for i in range(n_batch)]
        + [("c", i) for i in range(n_contract)]
        + [("f", i) for i in range(n_rfree)]
    )
    lhs_roles = draw(st.permutations(lhs_roles), label="lhs order")
    rhs_roles = draw(st.permutations(rhs_roles), label="rhs order")
    sizes = {"b": batch, "c": contract}
    lhs_shape = tuple(lfree[i] if r == "f" else sizes[r][i] for r, i in lhs_roles)
    rhs_shape = tuple(rfree[i] if r == "f" else sizes[r][i] for r, i in rhs_roles)
    # The pairing order of batch/contracting dims is itself random.
    c_order = draw(st.permutations(range(n_contract)), label="contract pairing order")
    b_order = draw(st.permutations(range(n_batch)), label="batch pairing order")
    cfg = tf.DotGeneralConfig(
        lhs_contracting_dims=[lhs_roles.index(("c", i)) for i in c_order],
        rhs_contracting_dims=[rhs_roles.index(("c", i)) for i in c_order],
        lhs_batch_dims=[lhs_roles.index(("b", i)) for i in b_order],
        rhs_batch_dims=[rhs_roles.index(("b", i)) for i in b_order],
    )
    return {
        "lhs": lhs_shape,
        "rhs": rhs_shape,
        "cfg": cfg,
        "k": int(np.prod(contract)) if contract else 1,
    }


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@given(
    spec=dot_configs(),
    layouts=st.tuples(st.sampled_from(LAYOUTS), st.sampled_from(LAYOUTS)),
    seed=st.integers(0, 2**16),
)
def test_dot_general_matches_einsum(
    spec: dict, dtype: np.dtype, layouts: tuple[str, str], seed: int
) -> None:
    rng = np.random.default_rng(seed)
    a = random_values(rng, spec["lhs"], dtype)
    b = random_values(rng, spec["rhs"], dtype)
    cfg = spec["cfg"]
    sub = dot_general_subscripts(a.ndim, b.ndim, cfg)
    wide = np.complex128 if dtype.kind == "c" else np.float64
    want = np.einsum(sub, a.astype(wide), b.astype(wide)).astype(dtype)
    got = tf.prim.dot_general(as_layout(a, layouts[0]), as_layout(b, layouts[1]), cfg)
    assert got.dtype == dtype
    assert_close(got, np.asarray(want), **tolerance(dtype, spec["k"], a, b), err_msg=f"{sub} {cfg}")


@given(
    spec=dot_configs(),
    dtype=st.sampled_from(FLOATS),
    flags=st.tuples(st.booleans(), st.booleans()),
    layout=st.sampled_from(LAYOUTS),
    seed=st.integers(0, 2**16),
)
def test_dot_general_with_conj_matches_einsum(
    spec: dict, dtype: np.dtype, flags: tuple[bool, bool], layout: str, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    a = random_values(rng, spec["lhs"], dtype)
    b = random_values(rng, spec["rhs"], dtype)
    cfg = spec["cfg"]
    sub = dot_general_subscripts(a.ndim, b.ndim, cfg)
    wide = np.complex128 if dtype.kind == "c" else np.float64
    ca = np.conj(a) if flags[0] else a
    cb = np.conj(b) if flags[1] else b
    want = np.einsum(sub, ca.astype(wide), cb.astype(wide)).astype(dtype)
    got = tf.prim.dot_general_with_conj(
        as_layout(a, layout), as_layout(b, "transposed"), cfg, *flags
    )
    assert_close(
        got, np.asarray(want), **tolerance(dtype, spec["k"], a, b), err_msg=f"{sub} {flags}"
    )


@pytest.mark.parametrize("dtype", [np.int32, np.int64], ids=["int32", "int64"])
def test_dot_general_integers_are_exact(dtype: Any) -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(-50, 50, size=(3, 4, 5)).astype(dtype)
    b = rng.integers(-50, 50, size=(5, 3, 2)).astype(dtype)
    cfg = tf.DotGeneralConfig(
        lhs_contracting_dims=[2], rhs_contracting_dims=[0], lhs_batch_dims=[0], rhs_batch_dims=[1]
    )
    got = tf.prim.dot_general(tf.asarray(a), tf.asarray(b), cfg)
    assert got.dtype == dtype
    np.testing.assert_array_equal(np.asarray(got), np.einsum("abc,cad->bda", a, b))


def test_dot_general_mixed_dtypes_promote() -> None:
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.linspace(0, 1, 3, dtype=np.float32)
    cfg = tf.DotGeneralConfig(lhs_contracting_dims=[1], rhs_contracting_dims=[0])
    got = tf.prim.dot_general(tf.asarray(a), tf.asarray(b), cfg)
    assert got.dtype == np.float64  # int with float32 -> float64 (ops.md lattice)
    assert_close(got, a.astype(np.float64) @ b.astype(np.float64))
    got = tf.prim.dot_general(
        tf.asarray(b.astype(np.float32)),
        tf.asarray(b.astype(np.complex64)),
        cfg.__class__(lhs_contracting_dims=[0], rhs_contracting_dims=[0]),
    )
    assert got.dtype == np.complex64


def test_batch_axes_come_last() -> None:
    a = np.ones((7, 2, 3))
    b = np.ones((7, 3, 4))
    cfg = tf.DotGeneralConfig(
        lhs_contracting_dims=[2], rhs_contracting_dims=[1], lhs_batch_dims=[0], rhs_batch_dims=[0]
    )
    out = tf.prim.dot_general(tf.asarray(a), tf.asarray(b), cfg)
    assert out.shape == (2, 4, 7)
    assert_close(out, np.full((2, 4, 7), 3.0))


# ----------------------------------------------------------------------------------------------
# tf.matmul / @ (NumPy semantics)
# ----------------------------------------------------------------------------------------------

MATMUL_SHAPES = [
    ((3, 4), (4, 5)),
    ((4,), (4,)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((1, 3, 4), (2, 1, 4, 5)),
    ((2, 3, 4), (2, 4, 5)),
    ((1, 1, 3, 4), (1, 4, 5)),
    ((5,), (2, 5, 3)),
    ((2, 3, 5), (5,)),
    ((0, 3, 4), (4, 5)),
    ((3, 0), (0, 5)),
    ((2, 3, 0), (1, 0, 4)),
    ((0,), (0,)),
]


@pytest.mark.parametrize("dtype", FLOATS + (np.dtype(np.int64),), ids=lambda d: d.name)
@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=[f"{a}@{b}" for a, b in MATMUL_SHAPES])
def test_matmul_matches_numpy(sa: tuple, sb: tuple, dtype: np.dtype) -> None:
    rng = np.random.default_rng(len(sa) * 10 + len(sb))
    a = random_values(rng, sa, dtype) if dtype.kind != "i" else rng.integers(-9, 10, size=sa)
    b = random_values(rng, sb, dtype) if dtype.kind != "i" else rng.integers(-9, 10, size=sb)
    want = np.matmul(a, b)
    k = sa[-1]
    tol = tolerance(dtype, k, a, b) if dtype.kind != "i" else {}
    for la, lb in (("c_order", "c_order"), ("transposed", "reversed"), ("step_2", "f_order")):
        ta, tb = as_layout(a, la), as_layout(b, lb)
        got = tf.matmul(ta, tb)
        assert got.shape == want.shape
        assert got.dtype == want.dtype
        assert_close(got, np.asarray(want), **tol)
        assert_close(ta @ tb, np.asarray(want), **tol)
    assert_close(a @ tf.asarray(b), np.asarray(want), **tol)  # ndarray @ tensor (__array_ufunc__)
    assert_close(tf.asarray(a) @ b, np.asarray(want), **tol)


def test_matmul_bool_and_mixed_dtypes() -> None:
    a = np.array([[True, False], [True, True]])
    b = np.array([[False, True], [False, False]])
    got = tf.matmul(a, b)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(got), a @ b)
    x = np.arange(4, dtype=np.int32).reshape(2, 2)
    y = np.ones((2, 2), np.float32)
    got = tf.matmul(x, y)
    assert got.dtype == np.result_type(x, y)
    assert_close(got, x @ y)


def test_matmul_errors() -> None:
    with pytest.raises(tf.errors.ShapeError, match=r"matmul.*size 3 is different from 4"):
        tf.matmul(np.ones((2, 4)), np.ones((3, 2)))
    with pytest.raises(
        tf.errors.ShapeError, match=r"matmul.*Input operand 0 does not have enough dimensions"
    ):
        tf.matmul(tf.asarray(1.0), np.ones(3))
    with pytest.raises(ValueError, match=r"matmul.*\(2,\) vs \(3,\)"):
        tf.matmul(np.ones((2, 3, 4)), np.ones((3, 4, 5)))
    with pytest.raises(tf.errors.ShapeError, match="matmul"):
        tf.prim.matmul(tf.ones((2, 3, 4)), tf.ones((4, 5)))  # the primitive is rank-2 only


# ----------------------------------------------------------------------------------------------
# tensordot
# ----------------------------------------------------------------------------------------------

TENSORDOT_CASES = [
    ((3, 4, 5), (4, 5, 2), 2),
    ((3, 4), (4, 5), 1),
    ((3,), (4,), 0),
    ((2, 3, 4), (4, 3, 2), ([1, 2], [1, 0])),
    ((2, 3, 4), (4, 3, 2), ([-1], [0])),
    ((2, 3), (3, 2), ((0, 1), (1, 0))),
    ((2, 0), (0, 3), 1),
    ((), (), 0),
]


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize(
    "sa,sb,axes", TENSORDOT_CASES, ids=[str(i) for i in range(len(TENSORDOT_CASES))]
)
def test_tensordot_matches_numpy(sa: tuple, sb: tuple, axes: Any, dtype: np.dtype) -> None:
    rng = np.random.default_rng(7)
    a, b = random_values(rng, sa, dtype), random_values(rng, sb, dtype)
    want = np.asarray(np.tensordot(a, b, axes))
    got = tf.tensordot(as_layout(a, "transposed"), as_layout(b, "reversed"), axes=axes)
    assert got.dtype == dtype
    assert_close(got, want, **tolerance(dtype, 24, a, b))


def test_tensordot_errors() -> None:
    with pytest.raises(tf.errors.ShapeError, match="tensordot: shape-mismatch for sum"):
        tf.tensordot(np.ones((2, 3)), np.ones((2, 3)), axes=1)
    with pytest.raises(tf.errors.ShapeError, match="tensordot"):
        tf.tensordot(np.ones((2, 3)), np.ones((3,)), axes=([1, 0], [0]))
    with pytest.raises(tf.errors.AxisError, match="tensordot"):
        tf.tensordot(np.ones((2, 3)), np.ones((3,)), axes=([2], [0]))
    with pytest.raises(ValueError, match="tensordot"):
        tf.tensordot(np.ones(2), np.ones(2), axes=-1)


@pytest.mark.parametrize(
    "dtype", [np.float64, np.complex128, np.float32, np.int32, np.bool_], ids=str
)
@pytest.mark.parametrize(
    ("shape", "perm", "step"),
    [
        ((40, 33), (0, 1), None),  # C-ordered: the tiled path
        ((5, 17, 20), (1, 0, 2), None),
        ((3, 64, 18), (1, 2, 0), -1),  # negative first stride, offset
        ((4, 20, 2, 18), (1, 0, 3, 2), 2),
        ((17, 0, 16), (0, 1, 2), None),  # zero-size
        ((2, 300), (0, 1), None),  # short first axis
        ((40, 33), (1, 0), None),  # F-ordered view: the run-wise path
        ((5, 3, 7), (0, 1, 2), None),  # unit axis too short to tile
    ],
)
def test_transposing_copies_match_numpy(
    dtype: Any, shape: tuple[int, ...], perm: tuple[int, ...], step: Any
) -> None:
    """Materialising views whose unit-stride axis is not the first (the tiled copy path of
    ``map::transpose_copy``), including negative steps, offsets and zero-size axes, and views
    that take the run-wise path, against NumPy."""
    rng = np.random.default_rng(11)
    a = (rng.normal(size=shape) * 10).astype(dtype)
    t = tf.asarray(a, copy=False)
    v = tf.prim.transpose(t, perm)
    expected = a.transpose(perm)
    if step is not None:
        v = v[::step]
        expected = expected[::step]
    got = tf.asarray(v, copy=True)
    assert np.asarray(got).flags.f_contiguous
    np.testing.assert_array_equal(np.asarray(got), expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128], ids=str)
@pytest.mark.parametrize(
    ("subscripts", "shapes"),
    [
        ("bij,bjk->bik", [(70, 3, 4), (70, 4, 5)]),  # batch not a multiple of the block width
        ("bij,bjk->bik", [(33, 1, 1), (33, 1, 1)]),
        ("bcij,bcjk->bcik", [(5, 7, 2, 3), (5, 7, 3, 2)]),  # two batch axes merging
        ("bipq,bpqk->bik", [(40, 3, 2, 4), (40, 2, 4, 3)]),  # two contracting axes
        ("bi,bi->b", [(100, 6), (100, 6)]),  # vector operands
        ("bij,bjk->bik", [(64, 16, 16), (64, 16, 16)]),
    ],
)
def test_batch_innermost_contractions(
    dtype: Any, subscripts: str, shapes: list[tuple[int, ...]]
) -> None:
    """Batch axes leading in NumPy's C order become the unit-stride axes of tenferro's
    column-major copies (``tf.asarray``): the batch-vectorised kernel path, against NumPy."""
    rng = np.random.default_rng(12)
    arrays = []
    for sh in shapes:
        x = rng.normal(size=sh)
        if np.dtype(dtype).kind == "c":
            x = x + 1j * rng.normal(size=sh)
        arrays.append(x.astype(dtype))
    ts = [tf.asarray(a) for a in arrays]  # column-major copies: batch stride 1
    got = tf.einsum(subscripts, *ts)
    expected = np.einsum(subscripts, *arrays)
    tol = (
        1e-4
        if np.dtype(dtype).itemsize <= 8 and np.dtype(dtype).kind != "c" or dtype == np.complex64
        else 1e-12
    )
    np.testing.assert_allclose(np.asarray(got), expected, rtol=tol, atol=tol)
    # strided batch views (every other batch element) take the GEMM path and agree too
    sub = [t[::2] for t in ts]
    np.testing.assert_allclose(
        np.asarray(tf.einsum(subscripts, *sub)),
        np.einsum(subscripts, *[a[::2] for a in arrays]),
        rtol=tol,
        atol=tol,
    )


@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=str)
@pytest.mark.parametrize(
    ("subscripts", "shapes"),
    [
        ("abc,bcd->ad", [(4, 5, 6), (5, 6, 7)]),
        ("xabc,xbcd->xad", [(3, 4, 5, 6), (3, 5, 6, 7)]),
        ("abcd,cdef->abef", [(2, 3, 4, 5), (4, 5, 3, 2)]),
    ],
)
def test_c_ordered_multi_axis_groups_read_in_place(
    dtype: Any, subscripts: str, shapes: list[tuple[int, ...]]
) -> None:
    """NumPy arrays read in place (C order) whose contracted/free axis groups span several axes
    are contracted on their axis-reversed (column-major) views: no operand copy."""
    rng = np.random.default_rng(15)
    arrays = [rng.normal(size=s).astype(dtype) for s in shapes]
    engine = tf.default_engine()
    before = engine.operand_copies
    got = tf.einsum(subscripts, *[tf.asarray(a, copy=False) for a in arrays])
    assert engine.operand_copies == before
    np.testing.assert_allclose(
        np.asarray(got), np.einsum(subscripts, *arrays), rtol=1e-12, atol=1e-12
    )


def test_contracting_pairs_are_reordered_to_read_an_operand_in_place() -> None:
    """The TFIM step ``bctv,btd->cvd``: a column-major intermediate (copied either way: its
    contracted axes ``b, t`` are not adjacent) and a C-ordered site tensor, whose ``(b, t)``
    chain in the order ``(t, b)``. The pairs are listed in that order: one operand copy, not
    two; values as NumPy's."""
    rng = np.random.default_rng(16)
    y = rng.normal(size=(4, 5, 2, 3))
    a = rng.normal(size=(4, 2, 6))
    engine = tf.CpuEngine(threads=1)
    rt = tf.Runtime()
    ty = rt.constant(np.asfortranarray(y))  # column-major
    with rt.session(engine):
        # C order: the axis-reversed view of a column-major tensor
        ta = tf.prim.transpose(rt.constant(a.transpose(2, 1, 0)), (2, 1, 0))
        assert np.asarray(ta).flags.c_contiguous and not np.asarray(ta).flags.f_contiguous
        before = engine.operand_copies
        got = tf.einsum("bctv,btd->cvd", ty, ta)
        assert engine.operand_copies - before == 1
    np.testing.assert_allclose(
        np.asarray(got), np.einsum("bctv,btd->cvd", y, a), rtol=1e-13, atol=1e-13
    )


@pytest.mark.parametrize("dtype", [np.float64, np.complex64, np.int64, np.bool_], ids=str)
def test_copies_of_broadcast_reversed_and_single_element_views_match_numpy(dtype: Any) -> None:
    """Small views of any strides (broadcast axes of stride 0, negative steps, size-1 axes,
    rank 0) materialise as NumPy's values in column-major order."""
    rng = np.random.default_rng(17)
    a = (rng.normal(size=(3, 1, 4)) * 10).astype(dtype)
    t = tf.asarray(a, copy=False)
    views = [
        (tf.broadcast_to(t, (3, 5, 4)), np.broadcast_to(a, (3, 5, 4))),
        (tf.prim.transpose(tf.broadcast_to(t, (3, 5, 4)), (2, 0, 1))[::-1], None),
        (t[::-1, :, ::-2], a[::-1, :, ::-2]),
        (t[1:2, :, 2:3], a[1:2, :, 2:3]),
        (t[1, 0, 2], a[1, 0, 2]),
    ]
    views[1] = (views[1][0], np.broadcast_to(a, (3, 5, 4)).transpose(2, 0, 1)[::-1])
    for v, want in views:
        got = np.asarray(tf.asarray(v, copy=True))
        assert got.shape == np.shape(want) and got.dtype == np.dtype(dtype)
        assert got.ndim == 0 or got.flags.f_contiguous
        np.testing.assert_array_equal(got, want)

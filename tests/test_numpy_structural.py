"""NumPy-named structural functions against NumPy (python-api.md, "Two vocabularies"):
``take``, ``concatenate``, ``stack``, ``pad`` (constant mode), ``tril``/``triu`` on the last two
axes, ``diagonal``, ``trace`` and the matching ``Tensor`` methods, with strided views, zero-size
and every dtype. (``matmul``/``tensordot`` are in ``test_contractions.py``.)"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

import numpy as np
import pytest

import tenferro as tf

DTYPES = tuple(
    np.dtype(d) for d in ("bool", "int32", "int64", "float32", "float64", "complex64", "complex128")
)
IMPLEMENTED = {row.name for row in tf.prim.CATALOG if row.implemented}


def needs(*names: str):
    missing = [n for n in names if n not in IMPLEMENTED]
    return pytest.mark.skipif(bool(missing), reason=f"primitives not built yet: {missing}")


def values(shape: tuple[int, ...], dtype: Any = np.float64, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) > 0.5
    x = rng.integers(-9, 10, size=shape)
    if dtype.kind == "c":
        x = x + 1j * rng.integers(-9, 10, size=shape)
    return x.astype(dtype)


def same(got: Any, want: np.ndarray) -> None:
    """Equal shape, dtype and values (exact: these functions move values, they do not compute)."""
    assert isinstance(got, tf.Tensor)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(np.asarray(got), want)


def layouts(x: np.ndarray) -> list[tuple[str, Any]]:
    """The tensor for ``x`` as a compact tensor and as strided tenferro views."""
    out: list[tuple[str, Any]] = [("compact", tf.asarray(x))]
    if x.ndim >= 2:
        out.append(
            (
                "transposed",
                tf.tensor(np.ascontiguousarray(np.swapaxes(x, 0, 1))).transpose(
                    1, 0, *range(2, x.ndim)
                ),
            )
        )
    if x.ndim >= 1 and x.shape[0] > 0:
        view = tf.tensor(np.repeat(x[::-1], 2, axis=0))[::-2]  # negative step, every other row
        assert x.size == 0 or not view.is_contiguous
        out.append(("step-2", view))
    for label, t in out:
        np.testing.assert_array_equal(np.asarray(t), x, err_msg=label)
    return out


# ----------------------------------------------------------------------------------------------
# take
# ----------------------------------------------------------------------------------------------

TAKE_CASES = [
    ((3, 4), [2, 0, -1], 0),
    ((3, 4), [[1, 3], [0, -4]], 1),
    ((3, 4), [5, 0], None),
    ((3, 4), 2, 1),  # a scalar index removes the axis
    ((2, 3, 4), [1, 1], -2),
    ((3, 4), [], 0),
    ((0, 4), [], 0),
    ((3, 0), [1, 2], 0),
    ((5,), np.array([[4], [0]], np.int32), 0),
]


@needs("gather")
@pytest.mark.parametrize(
    "shape,indices,axis", TAKE_CASES, ids=[str(i) for i in range(len(TAKE_CASES))]
)
def test_take_matches_numpy(shape: tuple, indices: Any, axis: Any) -> None:
    x = values(shape)
    for _label, t in layouts(x):
        same(tf.take(t, indices, axis=axis), np.take(x, indices, axis=axis))
        same(t.take(indices, axis=axis), x.take(indices, axis=axis))
        same(
            tf.take(t, tf.asarray(np.asarray(indices, dtype=np.int64)), axis=axis),
            np.take(x, indices, axis=axis),
        )


@needs("gather")
@pytest.mark.parametrize("dtype", DTYPES, ids=[d.name for d in DTYPES])
def test_take_every_dtype(dtype: np.dtype) -> None:
    x = values((3, 4), dtype)
    same(tf.take(x, [3, 0, 0], axis=1), np.take(x, [3, 0, 0], axis=1))


@needs("gather")
def test_take_modes_and_errors() -> None:
    x = values((3, 4))
    for mode in ("wrap", "clip"):
        same(tf.take(x, [-5, 7, 1], axis=1, mode=mode), np.take(x, [-5, 7, 1], axis=1, mode=mode))
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 1 with size 4"):
        tf.take(x, [0, 4], axis=1)
    with pytest.raises(IndexError, match="index -13 is out of bounds for axis 0 with size 12"):
        tf.take(x, [-13])
    with pytest.raises(tf.errors.AxisError, match="take"):
        tf.take(x, [0], axis=2)
    with pytest.raises(TypeError, match="take"):
        tf.take(x, [0.5])
    with pytest.raises(ValueError, match="mode"):
        tf.take(x, [0], mode="bad")


# ----------------------------------------------------------------------------------------------
# concatenate / stack
# ----------------------------------------------------------------------------------------------

CONCAT_CASES = [
    ([(2, 3), (4, 3)], 0),
    ([(2, 3), (2, 1), (2, 0)], 1),
    ([(2, 3, 4), (2, 1, 4)], -2),
    ([(5,)], 0),
    ([(0, 3), (2, 3)], 0),
    ([(2, 3), (3,)], None),
]


@needs("concatenate")
@pytest.mark.parametrize(
    "shapes,axis", CONCAT_CASES, ids=[str(i) for i in range(len(CONCAT_CASES))]
)
def test_concatenate_matches_numpy(shapes: list, axis: Any) -> None:
    xs = [values(s, seed=i) for i, s in enumerate(shapes)]
    want = np.concatenate(xs, axis=axis)
    same(tf.concatenate([tf.asarray(x) for x in xs], axis=axis), want)
    same(tf.concatenate(xs, axis=axis), want)  # NumPy operands
    views = [layouts(x)[-1][1] for x in xs]  # strided views
    same(tf.concatenate(views, axis=axis), want)


@needs("concatenate")
def test_concatenate_promotes_and_casts() -> None:
    a = np.array([1, 2], np.int32)
    b = np.array([0.5], np.float32)
    c = np.array([True])
    same(tf.concatenate([tf.asarray(a), tf.asarray(b)]), np.concatenate([a, b]))
    same(tf.concatenate([tf.asarray(a), tf.asarray(c)]), np.concatenate([a, c]))
    same(
        tf.concatenate([tf.asarray(a), tf.asarray(b)], dtype=np.float32),
        np.concatenate([a, b], dtype=np.float32),
    )
    for d1 in DTYPES:
        for d2 in DTYPES:
            x, y = values((2,), d1), values((1,), d2, seed=1)
            same(tf.concatenate([tf.asarray(x), tf.asarray(y)]), np.concatenate([x, y]))


def test_concatenate_errors() -> None:
    with pytest.raises(ValueError, match="need at least one array"):
        tf.concatenate([])
    with pytest.raises(tf.errors.ShapeError, match="zero-dimensional"):
        tf.concatenate([tf.asarray(1.0), tf.asarray(2.0)])
    with pytest.raises(tf.errors.ShapeError, match=r"concatenate.*array at index 1 has size 2"):
        tf.concatenate([np.zeros((2, 3)), np.zeros((2, 2))])
    with pytest.raises(tf.errors.ShapeError, match=r"concatenate.*same number of dimensions"):
        tf.concatenate([np.zeros((2, 3)), np.zeros(3)])
    with pytest.raises(tf.errors.AxisError, match="concatenate"):
        tf.concatenate([np.zeros((2, 3)), np.zeros((2, 3))], axis=2)


@needs("concatenate")
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_stack_matches_numpy(axis: int) -> None:
    xs = [values((2, 3), seed=i) for i in range(3)]
    same(tf.stack([tf.asarray(x) for x in xs], axis=axis), np.stack(xs, axis=axis))
    same(tf.stack(xs, axis=axis), np.stack(xs, axis=axis))
    same(tf.stack([tf.asarray(x).T for x in xs], axis=axis), np.stack([x.T for x in xs], axis=axis))
    with pytest.raises(tf.errors.ShapeError, match="same shape"):
        tf.stack([np.zeros(2), np.zeros(3)])
    with pytest.raises(tf.errors.AxisError):
        tf.stack(xs, axis=3)
    same(
        tf.stack([np.zeros((0, 2)), np.ones((0, 2))], axis=1),
        np.stack([np.zeros((0, 2)), np.ones((0, 2))], axis=1),
    )


# ----------------------------------------------------------------------------------------------
# pad
# ----------------------------------------------------------------------------------------------

PAD_CASES = [
    ((3,), 2, 0),
    ((3,), (1, 2), 0),
    ((2, 3), ((1, 0), (0, 2)), 0),
    ((2, 3), 1, 5),
    ((2, 3), 1, ((7, 8), (5, 6))),  # corners take the later axis's value
    ((2, 3), ((0, 0), (1, 1)), ((7, 8), (0, 0))),
    (
        (2, 3),
        ((1, 1), (1, 1)),
        ((7, 8), (0, 0)),
    ),  # zero constants on the last axis still win corners
    ((2, 3, 2), ((1,), (0,), (2,)), -1),
    ((0, 3), 1, 4),
    ((2, 2), 0, 9),
    ((), 3, 1),
]


@needs("pad", "select")
@pytest.mark.parametrize(
    "shape,width,const", PAD_CASES, ids=[str(i) for i in range(len(PAD_CASES))]
)
def test_pad_matches_numpy(shape: tuple, width: Any, const: Any) -> None:
    for dtype in (np.float64, np.int32, np.complex64):
        x = values(shape, dtype)
        want = np.pad(x, width, mode="constant", constant_values=const)
        for _label, t in layouts(x):
            same(tf.pad(t, width, constant_values=const), want)
            same(tf.pad(t, width, mode="constant", constant_values=const), want)


@needs("pad", "select")
def test_pad_bool_and_cast_constant() -> None:
    x = np.array([[True, False]])
    same(tf.pad(x, 1, constant_values=True), np.pad(x, 1, constant_values=True))
    y = np.array([1, 2], np.int64)
    same(tf.pad(y, 1, constant_values=3.7), np.pad(y, 1, constant_values=3.7))


def test_pad_errors() -> None:
    x = tf.asarray(np.zeros((2, 3)))
    for mode in ("edge", "reflect", "wrap", "mean"):
        with pytest.raises(tf.errors.UnsupportedError, match=f"pad: mode '{mode}'"):
            tf.pad(x, 1, mode=mode)
    with pytest.raises(TypeError, match="pad_width"):
        tf.pad(x, 1.5)
    with pytest.raises(ValueError, match="negative"):
        tf.pad(x, -1)
    with pytest.raises(ValueError, match="pad_width"):
        tf.pad(x, ((1, 2, 3),))


# ----------------------------------------------------------------------------------------------
# tril / triu / diagonal / trace
# ----------------------------------------------------------------------------------------------

TRI_SHAPES = [(4,), (3, 3), (3, 5), (5, 3), (2, 3, 4), (2, 1, 4, 3), (0, 3), (2, 0, 0)]


@needs("tril", "triu")
@pytest.mark.parametrize("shape", TRI_SHAPES, ids=[str(s) for s in TRI_SHAPES])
@pytest.mark.parametrize("k", [0, 1, -1, 4, -4])
def test_tril_triu_match_numpy(shape: tuple, k: int) -> None:
    x = values(shape)
    for _label, t in layouts(x):
        same(tf.tril(t, k), np.tril(x, k))
        same(tf.triu(t, k=k), np.triu(x, k=k))


@needs("tril", "triu")
@pytest.mark.parametrize("dtype", DTYPES, ids=[d.name for d in DTYPES])
def test_tril_triu_every_dtype(dtype: np.dtype) -> None:
    x = values((2, 3, 3), dtype)
    same(tf.tril(x), np.tril(x))
    same(tf.triu(x, -1), np.triu(x, -1))


def test_tril_of_a_scalar_is_an_error() -> None:
    with pytest.raises(tf.errors.ShapeError, match="tril"):
        tf.tril(tf.asarray(1.0))
    with pytest.raises(tf.errors.ShapeError, match="triu"):
        tf.triu(tf.asarray(1.0))


DIAG_CASES = [
    ((3, 3), 0, 0, 1),
    ((3, 4), 1, 0, 1),
    ((3, 4), -2, 0, 1),
    ((3, 4), 5, 0, 1),
    ((3, 4), -7, 1, 0),
    ((2, 3, 4), 0, 2, 0),
    ((2, 3, 4), 1, -1, -2),
    ((2, 3, 4, 5), -1, 1, 3),
    ((0, 3), 0, 0, 1),
]


@needs("extract_diag")
@pytest.mark.parametrize(
    "shape,offset,axis1,axis2", DIAG_CASES, ids=[str(i) for i in range(len(DIAG_CASES))]
)
def test_diagonal_and_trace_match_numpy(shape: tuple, offset: int, axis1: int, axis2: int) -> None:
    x = values(shape)
    for _label, t in layouts(x):
        same(tf.diagonal(t, offset, axis1, axis2), np.diagonal(x, offset, axis1, axis2))
        same(t.diagonal(offset=offset, axis1=axis1, axis2=axis2), x.diagonal(offset, axis1, axis2))
        same(tf.trace(t, offset, axis1, axis2), np.asarray(np.trace(x, offset, axis1, axis2)))
        same(t.trace(offset, axis1, axis2), np.asarray(x.trace(offset, axis1, axis2)))


@needs("extract_diag", "reduce_sum")
@pytest.mark.parametrize("dtype", DTYPES, ids=[d.name for d in DTYPES])
def test_diagonal_and_trace_every_dtype(dtype: np.dtype) -> None:
    x = values((3, 3, 2), dtype)
    same(tf.diagonal(x), np.diagonal(x))
    same(tf.trace(x), np.asarray(np.trace(x)))  # bool and int32 accumulate in int64, as NumPy
    if dtype.kind != "c":
        same(tf.trace(x, dtype=np.float64), np.asarray(np.trace(x, dtype=np.float64)))


def test_diagonal_errors() -> None:
    with pytest.raises(tf.errors.ShapeError, match="diagonal"):
        tf.diagonal(tf.asarray([1.0, 2.0]))
    with pytest.raises(ValueError, match="axis1 and axis2 cannot be the same"):
        tf.diagonal(tf.zeros((2, 2)), 0, 1, -1)
    with pytest.raises(tf.errors.AxisError, match="diagonal"):
        tf.diagonal(tf.zeros((2, 2)), 0, 0, 2)


# ----------------------------------------------------------------------------------------------
# The functions are compositions of primitives: they take tensors of any runtime
# ----------------------------------------------------------------------------------------------


@needs("gather", "concatenate", "pad", "tril", "extract_diag")
@pytest.mark.parametrize(
    "fn",
    [
        lambda t: tf.take(t, [1, 0], axis=0),
        lambda t: tf.concatenate([t, t]),
        lambda t: tf.stack([t, t]),
        lambda t: tf.pad(t, 1, constant_values=2.0),
        lambda t: tf.tril(t),
        lambda t: tf.diagonal(t),
        lambda t: tf.trace(t),
    ],
    ids=["take", "concatenate", "stack", "pad", "tril", "diagonal", "trace"],
)
def test_results_stay_in_the_operand_runtime(fn: Callable) -> None:
    rt = tf.Runtime()
    t = rt.constant(np.arange(4.0).reshape(2, 2))
    assert fn(t).runtime is rt

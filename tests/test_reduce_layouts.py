"""Reductions over every axis subset of C-ordered, column-major and transposed-view inputs
against NumPy: covers the row-combining path (a kept axis is unit-stride in the input), the
strided per-output fold and the split single-output reduction."""

import itertools

import numpy as np
import pytest
import tenferro as tf

SHAPES = [(64, 64, 64), (9, 3, 20), (10, 1, 12, 3), (300, 5, 4), (2, 200), (8, 8), (3, 1000, 2)]


def _views(x: np.ndarray) -> dict[str, tf.Tensor]:
    return {
        "F": tf.asarray(x),
        "C": tf.asarray(x, copy=False),
        "T": tf.asarray(np.ascontiguousarray(x.T), copy=False).T,
    }


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", ["sum", "max", "min", "prod"])
def test_reductions_match_numpy_on_every_layout(shape: tuple[int, ...], name: str) -> None:
    rng = np.random.default_rng(len(shape) * 7 + shape[0])
    # prod: values near 1 keep long products finite.
    x = rng.uniform(0.9, 1.1, size=shape) if name == "prod" else rng.standard_normal(shape)
    ours, ref = getattr(tf, name), getattr(np, name)
    for k in range(1, len(shape) + 1):
        for axes in itertools.combinations(range(len(shape)), k):
            want = ref(x, axis=axes)
            for layout, t in _views(x).items():
                got = np.asarray(ours(t, axis=axes))
                assert got.shape == want.shape, (axes, layout)
                np.testing.assert_allclose(
                    got, want, rtol=1e-12, atol=1e-12, err_msg=f"{axes} {layout}"
                )


def test_row_reduction_keeps_pairwise_accuracy() -> None:
    # 2**20 rows of a C-ordered (n, 8) array summed over axis 0: blocks of 128 merged pairwise,
    # so the error stays far below naive accumulation's n·ε.
    n = 1 << 20
    x = np.full((n, 8), 0.1)
    got = np.asarray(tf.sum(tf.asarray(x, copy=False), axis=0))
    exact = np.float64(n) * 0.1
    assert np.max(np.abs(got - exact)) / exact < 64 * np.finfo(np.float64).eps


def test_integer_and_complex_row_reductions() -> None:
    rng = np.random.default_rng(5)
    xi = rng.integers(-5, 5, size=(20, 30, 40))
    assert np.array_equal(np.asarray(tf.sum(tf.asarray(xi, copy=False), axis=0)), xi.sum(axis=0))
    xc = rng.standard_normal((30, 40)) + 1j * rng.standard_normal((30, 40))
    np.testing.assert_allclose(
        np.asarray(tf.sum(tf.asarray(xc, copy=False), axis=0)), xc.sum(axis=0), rtol=1e-13
    )

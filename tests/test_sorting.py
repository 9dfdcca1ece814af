"""Sorting and searching (issue 22): the primitives ``sort``, ``argsort``, ``argmax``, ``argmin``,
``searchsorted`` and their NumPy/Array API names, against NumPy over every dtype (rank 0 where
allowed, zero-size, transposed and reversed views, NaNs, signed zeros, ties); ``sort``'s
derivative (``check_grads(order=2)``, gradient = cotangent scattered back through the
permutation); the eager-only set functions (``nonzero``, ``unique*``) and their
``ConcretizationError`` under ``tf.jit``; typed errors naming the op."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tenferro as tf
from tenferro.errors import AxisError, ConcretizationError, DTypeError, ShapeError
from tenferro.testing import check_grads

P = tf.prim
RNG = np.random.default_rng(22)
DTYPES = ("bool", "int32", "int64", "float32", "float64", "complex64", "complex128")
SPECIAL = [0.0, -0.0, 1.0, -1.0, np.nan, -np.nan, np.inf, -np.inf, 2.0, 1.0, 0.0, -0.0, np.nan]


def sample(dtype: str, shape: tuple[int, ...], special: bool = True) -> np.ndarray:
    """Random values with ties (small integers), and for floats signed zeros, NaN and inf."""
    d = np.dtype(dtype)
    if d.kind == "b":
        return RNG.integers(0, 2, size=shape).astype(bool)
    base = RNG.integers(-3, 4, size=shape).astype(np.float64)
    if d.kind in "fc" and special and base.size:
        flat = base.reshape(-1)
        pick = RNG.integers(0, base.size, size=max(1, base.size // 3))
        flat[pick] = RNG.choice(SPECIAL, size=pick.size)
        base = flat.reshape(shape)
    if d.kind == "c":
        im = RNG.integers(-2, 3, size=shape).astype(np.float64)
        if special and base.size:
            im.reshape(-1)[RNG.integers(0, base.size, size=1)] = np.nan
        return (base + 1j * im).astype(d) if base.size else np.zeros(shape, d)
    with np.errstate(invalid="ignore"):
        return base.astype(d)


def same_bits(got: object, want: np.ndarray) -> None:
    """Equal dtype, shape, values (NaN where NaN) and sign bits of zeros."""
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)
    if want.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    if want.dtype.kind == "c":
        for part in (np.real, np.imag):
            np.testing.assert_array_equal(
                np.signbit(part(got)[~np.isnan(part(got))]),
                np.signbit(part(want)[~np.isnan(part(want))]),
            )


def views(x: np.ndarray):
    """The tensor as given, transposed, and reversed along axis 0 (strided inputs)."""
    t = tf.asarray(x)
    yield t, x
    if x.ndim >= 2:
        yield t.T, x.T
    if x.ndim >= 1:
        yield t[::-1], x[::-1]


SHAPES = [(7,), (3, 5), (4, 0), (0,), (2, 3, 4), (300,), (2, 600)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_sort_argsort_match_numpy_stable(dtype: str, shape: tuple[int, ...]) -> None:
    x = sample(dtype, shape)
    for t, xv in views(x):
        for axis in range(-xv.ndim, xv.ndim):
            same_bits(tf.sort(t, axis=axis), np.sort(xv, axis=axis, kind="stable"))
            same_bits(
                tf.argsort(t, axis=axis), np.argsort(xv, axis=axis, kind="stable").astype(np.int64)
            )
    same_bits(tf.sort(tf.asarray(x), axis=None), np.sort(x, axis=None, kind="stable"))


def desc_argsort_oracle(x: np.ndarray, axis: int) -> np.ndarray:
    """Stable descending argsort with NaN last: sort by (is NaN, -rank of the value) stably."""
    x = np.moveaxis(x, axis, -1)
    out = np.empty(x.shape, np.int64)
    for idx in np.ndindex(x.shape[:-1]):
        row = x[idx]
        keys = []
        for i, v in enumerate(row):
            vals = [v.real, v.imag] if np.iscomplexobj(row) else [v]
            k = tuple((1, 0.0) if np.isnan(p) else (0, -float(p)) for p in vals)
            keys.append((k, i))
        out[idx] = [i for _, i in sorted(keys)]
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("dtype", DTYPES)
def test_descending_is_stable_with_nan_last(dtype: str) -> None:
    x = sample(dtype, (4, 9))
    for axis in (0, 1):
        want = desc_argsort_oracle(x, axis)
        got = tf.argsort(tf.asarray(x), axis=axis, descending=True)
        same_bits(got, want)
        same_bits(
            tf.sort(tf.asarray(x), axis=axis, descending=True), np.take_along_axis(x, want, axis)
        )


@given(
    hnp.arrays(
        st.sampled_from([np.int32, np.int64, np.float32, np.float64]),
        hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6),
    ),
    st.booleans(),
)
def test_sort_hypothesis(x: np.ndarray, desc: bool) -> None:
    t = tf.asarray(x)
    for axis in range(x.ndim):
        if desc:
            want_idx = desc_argsort_oracle(x, axis) if x.size else np.zeros(x.shape, np.int64)
            same_bits(tf.argsort(t, axis=axis, descending=True), want_idx)
        else:
            same_bits(tf.sort(t, axis=axis), np.sort(x, axis=axis, kind="stable"))
            same_bits(
                tf.argsort(t, axis=axis), np.argsort(x, axis=axis, kind="stable").astype(np.int64)
            )


def test_large_radix_path_signed_zero_order_and_nan_payloads() -> None:
    x = RNG.standard_normal(5000)
    x[RNG.integers(0, 5000, 300)] = 0.0
    x[RNG.integers(0, 5000, 300)] = -0.0
    x[RNG.integers(0, 5000, 50)] = np.nan
    x[RNG.integers(0, 5000, 50)] = -np.nan
    same_bits(tf.sort(x), np.sort(x, kind="stable"))
    same_bits(tf.argsort(x), np.argsort(x, kind="stable"))
    xf = x.astype(np.float32)
    same_bits(tf.sort(xf), np.sort(xf, kind="stable"))
    xi = RNG.integers(-(2**62), 2**62, 4000)
    same_bits(tf.sort(xi), np.sort(xi))
    same_bits(tf.argsort(xi), np.argsort(xi, kind="stable"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4), (1,)])
def test_argmax_argmin_match_numpy(dtype: str, shape: tuple[int, ...]) -> None:
    x = sample(dtype, shape)
    for t, xv in views(x):
        for f, g in ((tf.argmax, np.argmax), (tf.argmin, np.argmin)):
            same_bits(f(t), np.asarray(g(xv), np.int64))
            same_bits(f(t, keepdims=True), np.asarray(g(xv, keepdims=True), np.int64))
            for axis in range(-xv.ndim, xv.ndim):
                same_bits(f(t, axis=axis), g(xv, axis=axis).astype(np.int64))
                same_bits(
                    f(t, axis=axis, keepdims=True), g(xv, axis=axis, keepdims=True).astype(np.int64)
                )


def test_argmax_rank0_and_errors() -> None:
    same_bits(tf.argmax(tf.asarray(3.0)), np.asarray(np.argmax(3.0), np.int64))
    with pytest.raises(ValueError, match="argmax"):
        tf.argmax(tf.zeros((0, 3)))
    with pytest.raises(ValueError, match="argmin"):
        P.argmin(tf.zeros((2, 0)), 1)
    with pytest.raises(AxisError, match="argmax"):
        tf.argmax(tf.zeros((2, 3)), axis=2)


@pytest.mark.parametrize("dtype", ("int32", "int64", "float32", "float64", "complex128", "bool"))
@pytest.mark.parametrize("side", ("left", "right"))
def test_searchsorted_matches_numpy(dtype: str, side: str) -> None:
    a = np.sort(sample(dtype, (12,)), kind="stable")
    v = sample(dtype, (3, 4))
    same_bits(
        tf.searchsorted(tf.asarray(a), tf.asarray(v), side=side),
        np.searchsorted(a, v, side=side).astype(np.int64),
    )
    same_bits(
        tf.searchsorted(tf.asarray(a), tf.asarray(v).T, side=side),
        np.searchsorted(a, v.T, side=side).astype(np.int64),
    )
    perm = RNG.permutation(12)
    shuffled = a[perm]
    sorter = np.argsort(shuffled, kind="stable")
    same_bits(
        tf.searchsorted(tf.asarray(shuffled), tf.asarray(v), side=side, sorter=tf.asarray(sorter)),
        np.searchsorted(shuffled, v, side=side, sorter=sorter).astype(np.int64),
    )


def test_searchsorted_scalars_empty_and_errors() -> None:
    a = np.array([1.0, 2.0, 2.0, 4.0])
    assert tf.searchsorted(tf.asarray(a), 2.0).item() == np.searchsorted(a, 2.0)
    assert tf.searchsorted(tf.asarray(a), 2.0, side="right").item() == 3
    same_bits(tf.searchsorted(tf.zeros((0,)), tf.asarray([1.0])), np.array([0], np.int64))
    with pytest.raises(ShapeError, match="searchsorted"):
        tf.searchsorted(tf.zeros((2, 2)), tf.asarray([1.0]))
    with pytest.raises(ValueError, match="side"):
        tf.searchsorted(tf.asarray(a), 1.0, side="middle")


def test_searchsorted_validates_sorter_as_numpy() -> None:
    a = np.array([3.0, 1.0, 2.0])
    good = np.argsort(a)
    same_bits(
        tf.searchsorted(tf.asarray(a), tf.asarray([2.5]), sorter=tf.asarray(good.astype(np.int32))),
        np.searchsorted(a, [2.5], sorter=good).astype(np.int64),
    )
    # (sorter, tenferro's error, NumPy's error): the same builtin class, the op named.
    cases = [
        ([0, 1], ShapeError, ValueError),  # wrong length
        ([[0, 1, 2]], ShapeError, (TypeError, ValueError)),  # not 1-D
        ([0.0, 1.0, 2.0], DTypeError, TypeError),  # float
        ([True, False, True], DTypeError, TypeError),  # bool
        ([0, 1, 3], ValueError, ValueError),  # out of range
        ([-1, 0, 1], ValueError, ValueError),  # negative: out of range, not wrapped
    ]
    for sorter, ours, theirs in cases:
        with pytest.raises(theirs):
            np.searchsorted(a, [2.5], sorter=sorter)
        for s in (sorter, tf.asarray(np.asarray(sorter))):
            with pytest.raises(ours, match="searchsorted: sorter"):
                tf.searchsorted(tf.asarray(a), tf.asarray([2.5]), sorter=s)
    with pytest.raises(ShapeError, match="searchsorted: a must be 1-D"):
        tf.searchsorted(tf.zeros((2, 2)), 1.0, sorter=[0, 1, 2, 3])


@pytest.mark.parametrize("name", ["argmax", "argmin", "sort", "argsort", "cumsum"])
def test_tuple_or_float_axis_is_a_type_error_as_numpy(name: str) -> None:
    x = np.arange(6.0).reshape(2, 3)
    for axis in ((0, 1), (1,), 1.0):
        with pytest.raises(TypeError):
            getattr(np, name)(x, axis=axis)
        with pytest.raises(TypeError, match=f"{name}: axis must be an integer"):
            getattr(tf, name)(tf.asarray(x), axis=axis)
    same_bits(getattr(tf, name)(tf.asarray(x), axis=np.int64(1)), getattr(np, name)(x, axis=1))


def test_sort_errors() -> None:
    with pytest.raises(AxisError, match="sort"):
        tf.sort(tf.asarray(1.0))
    with pytest.raises(AxisError, match="argsort"):
        tf.argsort(tf.zeros((2, 3)), axis=2)
    with pytest.raises(ValueError, match="kind"):
        tf.sort(tf.zeros(3), kind="bogo")
    with pytest.raises(ValueError, match="order"):
        tf.sort(tf.zeros(3), order="x")
    with pytest.raises(DTypeError, match="cumsum"):
        P.cumsum(tf.asarray([True]), 0)


def test_sort_gradients() -> None:
    x = RNG.standard_normal((3, 4))
    check_grads(lambda a: P.sort(a.T, 0), [x], order=2)
    check_grads(lambda a: tf.sort(a[::-1], axis=1, descending=True), [x], order=2)
    # The gradient is the cotangent scattered back through the permutation (ties included).
    xt = np.array([3.0, 1.0, 3.0, -2.0])
    g = np.array([10.0, 20.0, 30.0, 40.0])
    _, f_vjp = tf.func.vjp(lambda a: tf.sort(a), tf.asarray(xt))
    (got,) = f_vjp(tf.asarray(g))
    perm = np.argsort(xt, kind="stable")
    want = np.zeros(4)
    want[perm] = g
    np.testing.assert_array_equal(np.asarray(got), want)


def test_sort_under_jit_matches_eager() -> None:
    x = RNG.standard_normal((5, 6))
    f = tf.jit(
        lambda a: (
            tf.sort(a, axis=0)
            + tf.argsort(a, axis=1)
            + tf.argmax(a, axis=0)
            + tf.searchsorted(tf.sort(a[0]), a)
        )
    )
    eager = (
        tf.sort(x, axis=0)
        + tf.argsort(x, axis=1)
        + tf.argmax(x, axis=0)
        + tf.searchsorted(tf.sort(x[0]), x)
    )
    np.testing.assert_array_equal(np.asarray(f(tf.asarray(x))), np.asarray(eager))
    g = tf.jit(tf.func.grad(lambda a: (tf.sort(a, axis=1) * tf.asarray(np.arange(6.0))).sum()))
    ge = tf.func.grad(lambda a: (tf.sort(a, axis=1) * tf.asarray(np.arange(6.0))).sum())
    np.testing.assert_allclose(np.asarray(g(tf.asarray(x))), np.asarray(ge(tf.asarray(x))))


# --- eager-only set functions ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_nonzero_argwhere_flatnonzero(dtype: str) -> None:
    x = sample(dtype, (3, 4))
    for t, xv in views(x):
        got = tf.nonzero(t)
        want = np.nonzero(xv)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same_bits(g, w.astype(np.int64))
        same_bits(tf.argwhere(t), np.argwhere(xv).astype(np.int64))
        same_bits(tf.flatnonzero(t), np.flatnonzero(xv).astype(np.int64))
    with pytest.raises(ValueError, match="nonzero"):
        tf.nonzero(tf.asarray(1.0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_unique_family(dtype: str) -> None:
    x = sample(dtype, (3, 5))
    t = tf.asarray(x).T
    xv = x.T
    r = tf.unique_all(t)
    w = np.unique_all(xv)
    same_bits(r.values, w.values)
    same_bits(r.indices, w.indices.astype(np.int64))
    same_bits(r.inverse_indices, w.inverse_indices.reshape(xv.shape).astype(np.int64))
    same_bits(r.counts, w.counts.astype(np.int64))
    # Sorted, as documented (NumPy >= 2.3's unique_values need not sort; unique_inverse does).
    same_bits(tf.unique_values(t), np.unique_inverse(xv).values)
    same_bits(tf.unique_counts(t).counts, np.unique_counts(xv).counts.astype(np.int64))
    same_bits(
        tf.unique_inverse(t).inverse_indices,
        np.unique_inverse(xv).inverse_indices.reshape(xv.shape).astype(np.int64),
    )
    got = tf.unique(t, return_index=True, return_inverse=True, return_counts=True)
    want = np.unique(xv, return_index=True, return_inverse=True, return_counts=True)
    same_bits(got[0], want[0])
    for g, w2 in zip(got[1:], want[1:]):
        same_bits(g, w2.astype(np.int64))
    same_bits(tf.unique(tf.asarray(x), axis=0), np.unique(x, axis=0))


@pytest.mark.parametrize(
    "fn",
    [
        tf.nonzero,
        tf.argwhere,
        tf.flatnonzero,
        tf.unique,
        tf.unique_all,
        tf.unique_counts,
        tf.unique_inverse,
        tf.unique_values,
    ],
)
def test_data_dependent_shapes_raise_under_jit(fn) -> None:
    f = tf.jit(lambda a: fn(a))
    with pytest.raises(ConcretizationError, match=fn.__name__):
        f(tf.asarray([1.0, 0.0, 1.0]))


def test_unique_values_are_differentiable() -> None:
    """The unique values of a float tensor are gathered from it: tracked, and their derivatives
    agree with finite differences (distinct values: duplicates make the function jump)."""
    from tenferro.testing import check_grads

    x = tf.asarray(np.array([3.0, 1.0, 2.5, -0.5]))
    w = [1.0, -2.0, 3.0, 0.5]
    check_grads(lambda t: (tf.unique_values(t) ** 3 * tf.asarray(w)).sum(), (x,), order=2)
    check_grads(lambda t: (tf.unique(t) * tf.asarray(w)).sum(), (x,), order=2)
    check_grads(lambda t: (tf.unique_all(t).values * tf.asarray(w)).sum(), (x,), order=1)
    z = tf.tensor([1.0, 3.0, 1.0], requires_grad=True)
    assert tf.unique_values(z).requires_grad

"""``Tensor``'s non-mutating ndarray methods (``argmax``, ``argmin``, ``argsort``,
``searchsorted``, ``nonzero``, ``cumsum``, ``cumprod``, ``std``, ``var``, ``repeat``) against
the same methods of the NumPy array: values, dtypes and shapes, on C-ordered, transposed and
zero-size inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tenferro as tf

RNG = np.random.default_rng(7)
BASE = RNG.standard_normal((3, 4))
CASES: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("argmax", (), {}),
    ("argmax", (1,), {}),
    ("argmin", (0,), {"keepdims": True}),
    ("argsort", (), {}),
    ("argsort", (0,), {"stable": True}),
    ("cumsum", (), {}),
    ("cumsum", (1,), {}),
    ("cumprod", (0,), {}),
    ("std", (), {}),
    ("std", (0,), {"ddof": 1}),
    ("var", (1,), {"keepdims": True}),
    ("repeat", (2,), {"axis": 1}),
    ("repeat", (3,), {}),
]


@pytest.mark.parametrize("layout", ["C", "T"])
@pytest.mark.parametrize(("name", "args", "kwargs"), CASES)
def test_methods_match_the_numpy_array_methods(
    layout: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    a = BASE if layout == "C" else BASE.T
    t = tf.asarray(a)
    want = getattr(a, name)(*args, **kwargs)
    got = np.asarray(getattr(t, name)(*args, **kwargs))
    assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)


def test_nonzero_searchsorted_and_zero_size() -> None:
    a = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    for g, w in zip(tf.asarray(a).nonzero(), a.nonzero(), strict=True):
        np.testing.assert_array_equal(np.asarray(g), w)
    s = np.array([1.0, 2.0, 2.0, 5.0])
    v = np.array([0.0, 2.0, 6.0])
    np.testing.assert_array_equal(np.asarray(tf.asarray(s).searchsorted(v)), s.searchsorted(v))
    np.testing.assert_array_equal(
        np.asarray(tf.asarray(s).searchsorted(v, side="right")), s.searchsorted(v, side="right")
    )
    z = np.zeros((0, 3))
    assert np.asarray(tf.asarray(z).cumsum(0)).shape == z.cumsum(0).shape
    assert np.asarray(tf.asarray(z).argmax(1)).shape == z.argmax(1).shape


def test_methods_differentiate_like_the_functions() -> None:
    rt = tf.Runtime()
    x = rt.variable(tf.asarray(BASE))
    y = x.cumprod(1).std()
    (g,) = rt.grad(y, [x])
    x2 = rt.variable(tf.asarray(BASE))
    (g2,) = rt.grad(tf.std(tf.cumprod(x2, 1)), [x2])
    np.testing.assert_array_equal(np.asarray(g), np.asarray(g2))


def test_three_argument_pow_is_a_type_error_as_numpy() -> None:
    # pow(t, y, m) used to ignore m silently; NumPy raises TypeError.
    a = np.array([3, 4, 5])
    t = tf.asarray(a)
    with pytest.raises(TypeError):
        pow(a, 2, 5)
    with pytest.raises(TypeError):
        pow(t, 2, 5)
    with pytest.raises(TypeError):
        pow(t, t, 5)
    np.testing.assert_array_equal(np.asarray(pow(t, 2)), a**2)

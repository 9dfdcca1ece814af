"""No-op shortcuts of the NumPy-named functions (NumPy returns the input itself) obey grad
mode: inside ``no_grad`` every result is untracked, so no gradient flows through them
(found by a breaker helper: ``with no_grad(): s = tf.real(x)`` kept ``x``'s node and doubled
``x.grad``). Also ``0 ** z`` for complex ``z`` against NumPy 2."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf

SHORTCUTS = {
    "astype same dtype": lambda x: tf.astype(x, x.dtype),
    "reshape same shape": lambda x: tf.reshape(x, x.shape),
    "ravel of 1-d": lambda x: tf.ravel(x),
    "transpose identity": lambda x: tf.transpose(x, (0,)),
    "moveaxis identity": lambda x: tf.moveaxis(x, 0, 0),
    "squeeze no axes": lambda x: tf.squeeze(x, axis=()),
    "real of real": lambda x: tf.real(x),
    "conj of real": lambda x: tf.conj(x),
    "broadcast_to same shape": lambda x: tf.broadcast_to(x, x.shape),
    "positive": lambda x: tf.positive(x),
    "unary plus": lambda x: +x,
    "concatenate one": lambda x: tf.concatenate([x]),
    "clip without bounds": lambda x: tf.clip(x, None, None),
    "flip no axes": lambda x: tf.flip(x, axis=()),
    "whole-array index": lambda x: x[:],
    "ellipsis index": lambda x: x[...],
}


@pytest.mark.parametrize("name", sorted(SHORTCUTS))
def test_shortcut_under_no_grad_is_untracked(name: str) -> None:
    f = SHORTCUTS[name]
    rt = tf.Runtime()
    x = rt.variable([1.0, 2.0, 3.0])
    with tf.no_grad():
        s = f(x)
    assert not s.requires_grad, name
    (x * s).sum().backward()
    # d/dx sum(x * s) with s constant is s = x.
    np.testing.assert_allclose(np.asarray(x.grad), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("name", sorted(SHORTCUTS))
def test_shortcut_in_grad_mode_keeps_the_gradient(name: str) -> None:
    f = SHORTCUTS[name]
    rt = tf.Runtime()
    x = rt.variable([1.0, 2.0, 3.0])
    (x * f(x)).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), [2.0, 4.0, 6.0])


def test_whole_array_index_is_a_non_leaf_view() -> None:
    rt = tf.Runtime()
    x = rt.variable([1.0, 2.0])
    y = x[:]
    assert y.requires_grad and y.grad is None
    assert np.shares_memory(np.asarray(y), np.asarray(x))


@pytest.mark.parametrize("b", [1 + 2j, -1 + 2j, 2j, 0.5 + 0j, -1 + 0j, 3 + 0j, 0j])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_power_of_zero_matches_numpy(b: complex, dtype: type) -> None:
    a = np.zeros(2, dtype=dtype)
    with np.errstate(all="ignore"):
        want = a ** dtype(b)
    got = np.asarray(tf.asarray(a) ** tf.asarray(np.asarray(b, dtype=dtype)))
    np.testing.assert_array_equal(got, want)

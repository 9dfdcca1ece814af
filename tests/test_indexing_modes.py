"""Basic indexing under the grad modes and sessions (autodiff.md, "Leaves and recording";
engines.md, runtime membership): a whole-array key (``x[:]``, ``x[...]``, ``x[()]``, ``x[0:]``)
runs no op but must behave like one that does, so that ``x[:]`` and ``x[1:]`` agree."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import ContextMismatchError

WHOLE = [
    slice(None),
    Ellipsis,
    (),
    slice(0, None),
    slice(-(10**30), 10**30),
    (slice(None), Ellipsis),
]
PARTIAL = [slice(1, None), slice(None, None, -1), 0]


@pytest.mark.parametrize("key", WHOLE + PARTIAL, ids=repr)
def test_getitem_under_no_grad_is_untracked(key: Any) -> None:
    # Oracle: d/dx [sum(x) + sum(stop_gradient(x[key])**2)] = ones (autodiff.md: inside no_grad
    # "nothing is recorded and every result is untracked").
    rt = tf.Runtime()
    x = rt.variable([1.0, 2.0, 3.0])
    with tf.no_grad():
        y = x[key]
    assert not y.requires_grad
    (x.sum() + (y * y).sum()).backward()
    np.testing.assert_array_equal(np.asarray(x.grad), np.ones(3))


@pytest.mark.parametrize("key", WHOLE, ids=repr)
def test_getitem_whole_key_keeps_tracking_in_grad_mode(key: Any) -> None:
    rt = tf.Runtime()
    x = rt.variable([1.0, 2.0, 3.0])
    y = x[key]
    assert y.requires_grad
    (y * y).sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), 2 * np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("key", WHOLE + PARTIAL, ids=repr)
def test_getitem_in_a_session_of_another_runtime_raises(key: Any) -> None:
    rt, other = tf.Runtime(), tf.Runtime()
    x = rt.constant([1.0, 2.0, 3.0])
    with other.session(tf.CpuEngine(threads=1)):
        with pytest.raises(ContextMismatchError, match="runtime"):
            x[key]
    assert x[key].runtime is rt


@pytest.mark.parametrize("spec", ["i->i", "i", "...->...", "...i->...i"])
def test_identity_einsum_under_no_grad_is_untracked(spec: str) -> None:
    # An identity einsum program returns its input slot; under no_grad the result must be
    # untracked like any op's (oracle: d/dx [sum(x) + sum(stop_gradient(x)**2)] = ones).
    rt = tf.Runtime()
    x = rt.variable([1.0, 2.0, 3.0])
    with tf.no_grad():
        y = tf.einsum(spec, x)
    assert not y.requires_grad
    (x.sum() + (y * y).sum()).backward()
    np.testing.assert_array_equal(np.asarray(x.grad), np.ones(3))
    z = tf.einsum(spec, x)
    assert z.requires_grad


def test_func_vjp_jvp_shape_mismatch_is_a_shape_error() -> None:
    # As rt.vjp / rt.jvp / backward_with (autodiff.md): a wrong cotangent or tangent shape is a
    # ShapeError (still a ValueError, as documented for func.vjp / func.jvp).
    _, fn = tf.func.vjp(lambda x: x[1:], np.ones(3))
    with pytest.raises(tf.errors.ShapeError, match="cotangent"):
        fn(np.ones(3))
    with pytest.raises(tf.errors.ShapeError, match="tangent"):
        tf.func.jvp(lambda x: x[1:], (np.ones(3),), (np.ones(2),))


def test_func_transforms_of_a_tracked_leaf_under_no_grad() -> None:
    # f(x) = sum(x[::-1] * x): grad = 2 * x[::-1] (oracle: by hand, and the same transform of a
    # NumPy argument). Under the caller's no_grad the derivative is still computed; the results
    # are untracked and no gradient slot is touched.
    rt = tf.Runtime()
    f = lambda x: (x[::-1] * x).sum()  # noqa: E731
    with tf.no_grad():
        v = rt.variable([1.0, 2.0, 3.0])
        g = tf.func.grad(f)(v)
        _, tangent = tf.func.jvp(f, (v,), (np.ones(3),))
        (ct,) = tf.func.vjp(lambda x: x[::-1] * x, v)[1](np.ones(3))
    np.testing.assert_array_equal(np.asarray(g), [6.0, 4.0, 2.0])
    assert not g.requires_grad
    assert float(tangent) == 12.0
    np.testing.assert_array_equal(np.asarray(ct), [6.0, 4.0, 2.0])
    assert v.grad is None

"""Regressions of issue 17, fixes 2 and 4: repeated ``wrt`` entries of the Runtime transforms,
factory dtypes (against NumPy 2), AD stacking of nested tracked tensors (JAX's ``jnp.asarray``
of tracers, checked by finite differences), ``x.grad = None``. The pytree transforms of
``tf.func`` are in ``test_func.py``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tenferro as tf
from tenferro.errors import DTypeError, ShapeError


def _np(t):
    return np.asarray(t)


def _fd(f, xs, eps=1e-6):
    """Central finite differences of the real scalar ``f(*xs)`` (floats) w.r.t. each x."""
    gs = []
    for i in range(len(xs)):
        lo, hi = list(xs), list(xs)
        lo[i], hi[i] = xs[i] - eps, xs[i] + eps
        gs.append((f(*hi) - f(*lo)) / (2 * eps))
    return gs


# ---------------------------------------------------------------------------------------------
# Fix 2: the same tensor twice in `wrt`


X0 = np.array([1.0, 2.0, -0.5])
E1 = np.array([1.0, 0.0, 2.0])
E2 = np.array([0.5, 1.0, -1.0])


def _square_sum():
    rt = tf.Runtime()
    x = rt.variable(X0)
    return rt, x, (x * x).sum()


def test_grad_optional_repeated_wrt_gets_full_gradient_each_time():
    rt, x, out = _square_sum()
    g1, g2 = rt.grad_optional(out, [x, x])
    np.testing.assert_allclose(_np(g1), 2 * X0)
    np.testing.assert_allclose(_np(g2), 2 * X0)


@pytest.mark.parametrize("how", ["grad", "vjp", "vjp_optional"])
def test_grad_and_vjp_repeated_wrt_do_not_raise(how):
    rt, x, out = _square_sum()
    y = rt.variable(np.array([3.0, 4.0, 5.0]))
    out = out + (x * y).sum()  # x twice, y once in between
    wrt = [x, y, x]
    if how == "grad":
        gs = rt.grad(out, wrt)
    else:
        gs = getattr(rt, how)(out, wrt, rt.constant(np.array(2.0)))
    scale = 1.0 if how == "grad" else 2.0
    want_x = scale * (2 * X0 + np.array([3.0, 4.0, 5.0]))
    np.testing.assert_allclose(_np(gs[0]), want_x)
    np.testing.assert_allclose(_np(gs[1]), scale * X0)
    np.testing.assert_allclose(_np(gs[2]), want_x)


def test_jvp_repeated_wrt_adds_tangents():
    rt, x, out = _square_sum()
    t = rt.jvp(out, [x, x], [rt.constant(E1), rt.constant(E2)])
    want = float(np.dot(2 * X0, E1 + E2))  # <2x, e1 + e2>, torch.autograd / JAX linearity
    assert float(t) == pytest.approx(want, rel=1e-14)
    # The finite-difference check of the same number: d/dh (x + h(e1+e2))² summed.
    f = lambda h: float(((X0 + h * (E1 + E2)) ** 2).sum())  # noqa: E731
    assert float(t) == pytest.approx(_fd(f, [0.0])[0], rel=1e-7)
    assert rt.jvp_optional(out, [x, x], [rt.constant(E1), rt.constant(E2)]) is not None


def test_issue_example_scalar_jvp_is_six():
    """The issue's numbers: x = 1, e1 = 1, e2 = 2 gave 4.0 (only e2 counted); <2x, e1+e2> = 6."""
    rt = tf.Runtime()
    x = rt.variable(np.array(1.0))
    out = (x * x).sum()
    t = rt.jvp(out, [x, x], [rt.constant(np.array(1.0)), rt.constant(np.array(2.0))])
    assert float(t) == 6.0
    assert [float(g) for g in rt.grad_optional(out, [x, x])] == [2.0, 2.0]  # was [None, 2x]
    assert [float(g) for g in rt.grad(out, [x, x])] == [2.0, 2.0]  # raised InactiveError


def test_repeated_wrt_through_an_intermediate_node():
    rt = tf.Runtime()
    x = rt.variable(X0)
    h = tf.sin(x)
    out = (h * h).sum()
    g1, g2 = rt.grad(out, [h, h])
    np.testing.assert_allclose(_np(g1), 2 * np.sin(X0))
    np.testing.assert_allclose(_np(g2), 2 * np.sin(X0))


def test_repeated_wrt_second_order():
    rt, x, out = _square_sum()
    g1, g2 = rt.grad(out, [x, x])
    hx = rt.grad((g1 * g2).sum(), x)  # Σ (2x)² → 8x
    np.testing.assert_allclose(_np(hx), 8 * X0)


# ---------------------------------------------------------------------------------------------
# Fix 4: factory dtypes against NumPy 2


@pytest.mark.parametrize("fn", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("shape", [3, (2, 0), ()])
def test_float_factories_dtype_none_is_float64(fn, shape):
    t = getattr(tf, fn)(shape, dtype=None)
    want = getattr(np, fn)(shape, dtype=None)
    assert t.dtype == want.dtype == np.float64
    assert t.shape == want.shape
    if fn != "empty":
        np.testing.assert_array_equal(_np(t), want)


def test_eye_and_linspace_dtype_none():
    assert tf.eye(3, dtype=None).dtype == np.eye(3, dtype=None).dtype == np.float64
    np.testing.assert_array_equal(_np(tf.eye(3, 4, 1, dtype=None)), np.eye(3, 4, 1))
    assert tf.linspace(0, 1, 5, dtype=None).dtype == np.float64
    assert tf.linspace(0, 1j, 3, dtype=None).dtype == np.linspace(0, 1j, 3).dtype


def test_zeros_ones_explicit_dtypes_still_honoured():
    assert tf.zeros(2, dtype=bool).dtype == np.bool_
    assert tf.ones(2, dtype=tf.int32).tolist() == [1, 1]


_PY_SCALAR = st.one_of(
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(-1e6, 1e6, allow_nan=False),
    st.complex_numbers(max_magnitude=1e6, allow_nan=False, allow_infinity=False),
)


@given(
    shape=st.lists(st.integers(0, 3), max_size=3).map(tuple),
    value=_PY_SCALAR,
)
def test_full_infers_as_numpy2(shape, value):
    t = tf.full(shape, value)
    want = np.full(shape, value)
    assert t.dtype == want.dtype
    np.testing.assert_array_equal(_np(t), want)


_NUM = st.one_of(
    st.integers(-20, 20), st.floats(-20, 20, allow_nan=False).map(lambda v: round(v, 2))
)


@given(start=_NUM, stop=_NUM, step=_NUM.filter(lambda s: abs(s) >= 0.25))
def test_arange_infers_as_numpy2(start, stop, step):
    want = np.arange(start, stop, step)
    t = tf.arange(start, stop, step)
    assert t.dtype == want.dtype
    np.testing.assert_array_equal(_np(t), want)
    stop_only = np.arange(stop)
    assert tf.arange(stop).dtype == stop_only.dtype


@given(
    rows=st.integers(1, 3),
    cols=st.integers(1, 3),
    data=st.data(),
)
def test_asarray_nested_mixed_scalars_infers_as_numpy2(rows, cols, data):
    nested = [[data.draw(_PY_SCALAR) for _ in range(cols)] for _ in range(rows)]
    want = np.asarray(nested)
    for fn in (tf.asarray, tf.array, tf.tensor):
        t = fn(nested)
        assert t.dtype == want.dtype, fn
        np.testing.assert_array_equal(_np(t), want)


# ---------------------------------------------------------------------------------------------
# Fix 4: sequences of tracked tensors are stacked with AD


def _two_leaves():
    rt = tf.Runtime()
    return rt, rt.variable(np.array(0.7)), rt.variable(np.array(-1.3))


@pytest.mark.parametrize("fn", ["asarray", "array", "tensor", "stack"])
def test_sequence_of_tracked_scalars_is_tracked(fn):
    """The finding: ``tf.asarray([E1, E2])`` of tracked 0-d tensors lost the gradient."""
    rt, a, b = _two_leaves()
    e1, e2 = a * b, tf.sin(a)
    v = getattr(tf, fn)([e1, e2])
    assert v.requires_grad and v.shape == (2,) and v.dtype == np.float64
    loss = (v * v * rt.constant(np.array([1.0, 3.0]))).sum()
    ga, gb = rt.grad(loss, [a, b])
    f = lambda a, b: (a * b) ** 2 + 3 * np.sin(a) ** 2  # noqa: E731
    fa, fb = _fd(f, [0.7, -1.3])
    assert float(ga) == pytest.approx(fa, rel=1e-7)
    assert float(gb) == pytest.approx(fb, rel=1e-7)


def test_nested_mixed_with_python_scalars_and_constants():
    rt, a, b = _two_leaves()
    m = tf.asarray([[a, 2], [np.float64(3.0), a * b]])
    assert m.requires_grad and m.shape == (2, 2) and m.dtype == np.float64
    np.testing.assert_allclose(_np(m), [[0.7, 2.0], [3.0, 0.7 * -1.3]])
    ga, gb = rt.grad((m * m).sum(), [a, b])
    f = lambda a, b: a * a + 4 + 9 + (a * b) ** 2  # noqa: E731
    fa, fb = _fd(f, [0.7, -1.3])
    assert float(ga) == pytest.approx(fa, rel=1e-7)
    assert float(gb) == pytest.approx(fb, rel=1e-7)


def test_nested_rows_of_tracked_vectors():
    rt = tf.Runtime()
    x = rt.variable(np.array([1.0, 2.0]))
    y = rt.variable(np.array([3.0, -1.0]))
    m = tf.asarray([[x, y], [y, [0.5, 0.5]]])
    assert m.shape == (2, 2, 2) and m.requires_grad
    gx, gy = rt.grad((m * m).sum(), [x, y])
    np.testing.assert_allclose(_np(gx), 2 * np.array([1.0, 2.0]))
    np.testing.assert_allclose(_np(gy), 4 * np.array([3.0, -1.0]))


def test_stacked_dtype_is_numpy2_promotion():
    rt = tf.Runtime()
    a = rt.variable(np.float32(1.5))
    c = rt.variable(np.complex64(1 + 1j))
    for nested in ([a, 2.0], [a, 1], [a, c], [[a], [True]]):
        host = [
            [np.asarray(e) if isinstance(e, tf.Tensor) else e for e in r]
            if isinstance(r, list)
            else (np.asarray(r) if isinstance(r, tf.Tensor) else r)
            for r in nested
        ]
        assert tf.asarray(nested).dtype == np.asarray(host).dtype


def test_stack_explicit_dtype_and_ragged_error():
    rt, a, b = _two_leaves()
    v = tf.asarray([a, b], dtype=np.complex128)
    assert v.dtype == np.complex128 and v.requires_grad
    with pytest.raises(ValueError):
        tf.asarray([[a, b], [a]])
    with pytest.raises(ValueError):
        tf.asarray([a, b], copy=False)
    with pytest.raises(DTypeError):
        tf.asarray([a, b], dtype=np.float16)


def test_concatenate_and_binary_ops_accept_nested_tracked():
    rt, a, b = _two_leaves()
    c = tf.concatenate([[a, b], [b]])
    assert c.requires_grad and _np(c).tolist() == [0.7, -1.3, -1.3]
    ga, gb = rt.grad((c * c).sum(), [a, b])
    assert (float(ga), float(gb)) == pytest.approx((1.4, -5.2))
    s = tf.add(a, [a, b])  # the list operand is adopted with AD
    ga, gb = rt.grad((s * s).sum(), [a, b])
    fa, fb = _fd(lambda a, b: (2 * a) ** 2 + (a + b) ** 2, [0.7, -1.3])
    assert (float(ga), float(gb)) == pytest.approx((fa, fb), rel=1e-7)


def test_at_set_where_and_clip_accept_nested_tracked():
    rt, a, b = _two_leaves()
    z = rt.constant(np.zeros(3))
    r = z.at[:2].set([a * b, b])
    assert r.requires_grad
    ga, gb = rt.grad((r * r).sum(), [a, b])
    fa, fb = _fd(lambda a, b: (a * b) ** 2 + b * b, [0.7, -1.3])
    assert (float(ga), float(gb)) == pytest.approx((fa, fb), rel=1e-7)
    r = z.at[1:].add([[a, 2.0]])
    assert float(rt.grad(r.sum(), a)) == pytest.approx(1.0)
    w = tf.where(np.array([True, False]), [a, b], rt.constant(np.zeros(2)))
    ga, gb = rt.grad_optional(w.sum(), [a, b])
    assert float(ga) == 1.0 and (gb is None or float(gb) == 0.0)
    c = tf.clip([a, b], -1.0, 1.0)
    ga, gb = rt.grad_optional(c.sum(), [a, b])
    assert float(ga) == 1.0 and (gb is None or float(gb) == 0.0)


def test_linalg_solve_accepts_nested_tracked():
    rt, a, b = _two_leaves()
    rhs = rt.constant(np.array([4.0, 1.0]))
    x = tf.linalg.solve([[a, 0.5], [0.0, b]], rhs)
    assert x.requires_grad
    ga, gb = rt.grad(x.sum(), [a, b])
    ref = lambda a, b: float(np.linalg.solve(np.array([[a, 0.5], [0.0, b]]), [4.0, 1.0]).sum())  # noqa: E731
    fa, fb = _fd(ref, [0.7, -1.3])
    assert (float(ga), float(gb)) == pytest.approx((fa, fb), rel=1e-6)
    y = tf.linalg.solve(rt.constant(np.diag([2.0, 4.0])), [a, b])
    ga, gb = rt.grad(y.sum(), [a, b])
    assert (float(ga), float(gb)) == pytest.approx((0.5, 0.25))


def test_copy_of_tracked_tensor_stays_tracked():
    rt, a, _ = _two_leaves()
    for t in (tf.asarray(a, copy=True), tf.array(a), tf.tensor(a)):
        assert t.requires_grad
        assert float(rt.grad(t * t, a)) == pytest.approx(1.4)
    leaf = tf.tensor(a, requires_grad=True)  # a new leaf from the value (as torch.tensor)
    assert leaf.requires_grad and tf.autodiff._tenferro._node_id(
        leaf
    ) != tf.autodiff._tenferro._node_id(a)


def test_untracked_tensors_in_lists_still_work():
    t = tf.asarray([tf.asarray(1.0), tf.asarray(2)])
    assert t.dtype == np.float64 and not t.requires_grad
    assert _np(t).tolist() == [1.0, 2.0]


# ---------------------------------------------------------------------------------------------
# Fix 4: x.grad = None


def test_assign_none_resets_grad_slot():
    rt = tf.Runtime()
    x = rt.variable(np.array([1.0, 2.0]))
    (x * x).sum().backward()
    np.testing.assert_allclose(_np(x.grad), [2.0, 4.0])
    x.grad = None
    assert x.grad is None
    (x * x).sum().backward()
    np.testing.assert_allclose(_np(x.grad), [2.0, 4.0])  # fresh, not accumulated


def test_assign_tensor_seeds_accumulation_and_errors():
    rt = tf.Runtime()
    x = rt.variable(np.array([1.0, 2.0]))
    x.grad = rt.constant(np.array([10.0, 20.0]))
    (x * x).sum().backward()
    np.testing.assert_allclose(_np(x.grad), [12.0, 24.0])
    with pytest.raises(ShapeError):
        x.grad = rt.constant(np.array([1.0]))
    with pytest.raises(DTypeError):
        x.grad = rt.constant(np.array([1.0, 2.0], dtype=np.float32))
    with pytest.raises(TypeError):
        x.grad = [1.0, 2.0]
    with pytest.raises(ValueError):
        (x * 2.0).grad = rt.constant(np.array([1.0, 2.0]))
    c = rt.constant(np.array([1.0]))
    c.grad = None  # no slot: a no-op, as clear_grad
    assert c.grad is None


def test_pad_with_tracked_constant_values_keeps_their_gradient() -> None:
    """A tracked ``constant_values`` was copied to NumPy and its gradient silently dropped."""
    from tenferro.testing import check_grads

    x0 = np.array([[1.0, 2.0], [3.0, 4.0]])
    for cv0, width in [
        (np.array(2.5), ((1, 0), (0, 2))),
        (np.array([1.0, -1.0]), 1),
        (np.array([[1.0, 2.0], [3.0, 4.0]]), (2, 1)),
    ]:
        y = tf.pad(tf.tensor(x0), width, constant_values=tf.tensor(cv0, requires_grad=True))
        np.testing.assert_array_equal(np.asarray(y), np.pad(x0, width, constant_values=cv0))
        check_grads(
            lambda x, c, w=width: tf.pad(x, w, constant_values=c) ** 2,
            [x0, cv0],
            order=2,
            modes=("fwd", "rev"),
        )


def test_full_with_a_tracked_fill_keeps_its_gradient_and_runtime() -> None:
    """``full`` turned a tracked fill into a Python float (gradient 0 instead of 12)."""
    g = tf.func.grad(lambda c: (tf.full((2, 3), c) * 2.0).sum())(tf.asarray(3.0))
    np.testing.assert_allclose(np.asarray(g), 12.0)
    rt = tf.Runtime()
    s = rt.variable(np.array(3.0))
    y = tf.full((2,), s)
    assert y.requires_grad and y.runtime.id == rt.id


@pytest.mark.parametrize(
    "fill",
    [
        np.float32(1),
        np.int32(1),
        np.complex64(1 + 1j),
        np.float64(2.5),
        [1.0, 2.0, 3.0],
        np.array([1, 2, 3]),
    ],
)
def test_full_takes_the_fill_dtype_as_numpy(fill) -> None:
    got = tf.full((2, 3), fill)
    want = np.full((2, 3), fill)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want)


def test_linspace_with_tracked_endpoints_keeps_their_gradient() -> None:
    g = tf.func.grad(lambda c: (tf.linspace(c[0], c[1], 5) * np.arange(5.0)).sum())(
        tf.asarray([1.0, 2.0])
    )
    np.testing.assert_allclose(np.asarray(g), [2.5, 7.5])
    for start, stop, num, endpoint in [
        ([1.0, 0.0], 2.0, 4, False),
        (-1.0, 3.0, 1, True),
        (0.5, 0.25, 6, True),
    ]:
        got = tf.linspace(tf.tensor(start, requires_grad=True), stop, num, endpoint=endpoint)
        np.testing.assert_allclose(
            np.asarray(got),
            np.linspace(start, stop, num, endpoint=endpoint),
            rtol=1e-15,
            atol=1e-15,
        )


def test_transforms_and_check_grads_build_factory_constants_on_the_callers_runtime() -> None:
    """func.py: f may build constants with the factories, also on a non-default runtime."""
    from tenferro.testing import check_grads

    rt = tf.Runtime()
    c = rt.constant(np.array([1.0, 2.0]))
    np.testing.assert_allclose(
        np.asarray(tf.func.grad(lambda x: (x * tf.ones(2)).sum())(c)), [1.0, 1.0]
    )
    v = rt.variable(np.array([1.0, 2.0]))
    np.testing.assert_allclose(
        np.asarray(tf.func.grad(lambda x: (x * tf.asarray([3.0, 4.0])).sum())(v)), [3.0, 4.0]
    )
    check_grads(lambda x: (x * tf.asarray([1.0, 2.0])).sum(), [[1.0, 2.0]])

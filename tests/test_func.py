"""``tenferro.func``: function transforms against finite differences and NumPy closed forms."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
from tenferro.testing import assert_close

RNG = np.random.default_rng(7)
TOL = dict(rtol=1e-6, atol=1e-8)  # finite differences


def _fd_grad(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central finite-difference gradient of a real scalar NumPy function (complex: ∂x + i∂y)."""
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        for unit in (1.0, 1j) if np.iscomplexobj(x) else (1.0,):
            e = np.zeros_like(x)
            e[idx] = unit * eps
            d = (f(x + e) - f(x - e)) / (2 * eps)
            g[idx] += unit * np.real(d)
    return g


def _fd_jac(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    out = np.asarray(f(x))
    jac = np.zeros(out.shape + x.shape, dtype=np.result_type(out, x))
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = eps
        jac[(Ellipsis,) + idx] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps)
    return jac


# f and its NumPy twin
def f_tf(x):
    return (tf.sin(x) * tf.exp(x) + x * x * x).sum()


def f_np(x):
    return np.sum(np.sin(x) * np.exp(x) + x**3)


def test_grad_and_value_and_grad_match_closed_form() -> None:
    x = RNG.normal(size=(3, 2))
    closed = np.cos(x) * np.exp(x) + np.sin(x) * np.exp(x) + 3 * x**2
    g = tf.func.grad(f_tf)(x)
    assert_close(g, closed)
    assert not g.requires_grad and g.runtime is tf.default_runtime()
    v, g2 = tf.func.value_and_grad(f_tf)(tf.tensor(x))
    assert_close(v, np.float64(f_np(x)))
    assert_close(g2, closed)
    assert_close(tf.func.grad(f_tf)(x), _fd_grad(f_np, x), **TOL)


def test_argnums_tuple_negative_and_kwargs() -> None:
    x, y = RNG.normal(size=3), RNG.normal(size=3)

    def f(a, b, scale=1.0):
        return (b * b * a).sum() * scale

    gx, gy = tf.func.grad(f, argnums=(0, 1))(x, y, scale=2.0)
    assert_close(gx, 2 * y * y)
    assert_close(gy, 4 * x * y)
    assert_close(tf.func.grad(f, argnums=-1)(x, y), 2 * x * y)
    # A non-differentiated tensor argument of the caller's runtime is accepted.
    assert_close(tf.func.grad(f)(x, tf.tensor(y)), y * y)
    with pytest.raises(ValueError, match="argnums"):
        tf.func.grad(f, argnums=2)(x, y)


def test_has_aux() -> None:
    x = np.array([1.0, 2.0])
    g, aux = tf.func.grad(lambda t: ((t * t).sum(), {"double": t * 2.0, "n": 2}), has_aux=True)(x)
    assert_close(g, 2 * x)
    assert aux["n"] == 2 and not aux["double"].requires_grad
    assert_close(aux["double"], 2 * x)
    (v, aux2), g2 = tf.func.value_and_grad(lambda t: ((t * t).sum(), t.sum()), has_aux=True)(x)
    assert_close(v, np.float64(5.0)) and assert_close(aux2, np.float64(3.0))
    assert_close(g2, 2 * x)
    with pytest.raises(TypeError, match="has_aux"):
        tf.func.grad(lambda t: (t * t).sum(), has_aux=True)(x)


def test_inactive_argument_gives_zeros_and_errors() -> None:
    x, y = np.array([1.0, 2.0]), np.array([3.0])
    gx, gy = tf.func.grad(lambda a, b: (a * a).sum(), argnums=(0, 1))(x, y)
    assert_close(gy, np.zeros(1))
    assert_close(tf.func.grad(lambda a: tf.sign(a).sum())(x), np.zeros(2))
    assert_close(tf.func.grad(lambda a: tf.tensor(1.0).detach_into(a.runtime))(x), np.zeros(2))
    with pytest.raises(tf.errors.NonScalarGradError, match="shape"):
        tf.func.grad(lambda a: a * a)(x)
    with pytest.raises(TypeError, match="int64"):
        tf.func.grad(lambda a: a.sum())(np.array([1, 2]))


def test_no_slots_touched_and_results_untracked() -> None:
    rt = tf.Runtime()
    x = rt.variable([1.0, 2.0])
    g = tf.func.grad(lambda t: (t * t).sum())(x)  # composed: tracked input
    assert x.grad is None
    assert g.requires_grad  # differentiable further
    c = rt.constant([1.0, 2.0])
    g2 = tf.func.grad(lambda t: (t * t).sum())(c)  # fresh runtime, result in c's runtime
    assert not g2.requires_grad and g2.runtime is rt
    assert_close(g2 + c, np.array([3.0, 6.0]))
    with tf.no_grad():  # recording is forced on inside the transform
        g3 = tf.func.grad(lambda t: (t * t).sum())(np.array([3.0]))
    assert_close(g3, np.array([6.0]))


def test_backward_through_grad_result_gives_hessian_row_sums() -> None:
    rt = tf.Runtime()
    xv = np.array([0.3, -0.4])
    x = rt.variable(xv)
    g = tf.func.grad(lambda t: (tf.exp(t) * t[0] * t[1]).sum())(x)
    g.sum().backward()
    h = tf.func.hessian(lambda t: (tf.exp(t) * t[0] * t[1]).sum())(xv)
    assert_close(x.grad, np.asarray(h).sum(axis=0), rtol=1e-12, atol=1e-12)


def test_higher_order_and_no_perturbation_confusion() -> None:
    d3 = tf.func.grad(tf.func.grad(tf.func.grad(lambda x: x * x * x * x)))
    assert_close(d3(np.array(2.0)), np.float64(24 * 2.0))

    # d/dx [x * (d/dy x*y)|_{y=x}] = d/dx x^2 = 2x (a confused implementation gives 4x).
    def outer(x):
        return x * tf.func.grad(lambda y: x * y)(x)

    assert_close(tf.func.grad(outer)(np.array(3.0)), np.float64(6.0))


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_vjp_and_jvp_against_finite_differences(dtype: str) -> None:
    x = RNG.normal(size=(4,)).astype(dtype)
    if dtype == "complex128":
        x = x + 1j * RNG.normal(size=4)

    def f(t):
        return tf.exp(t) * t[::-1] + tf.sin(t)

    def f_np_(a):
        return np.exp(a) * a[::-1] + np.sin(a)

    v = RNG.normal(size=4).astype(dtype)
    out, t_out = tf.func.jvp(f, (x,), (v,))
    assert_close(out, f_np_(x))
    eps = 1e-6
    assert_close(t_out, (f_np_(x + eps * v) - f_np_(x - eps * v)) / (2 * eps), **TOL)
    out2, vjp_fn = tf.func.vjp(f, x)
    u = RNG.normal(size=4).astype(dtype)
    (ct,) = vjp_fn(u)
    (ct_again,) = vjp_fn(tf.tensor(u))  # callable repeatedly, tensor cotangent accepted
    assert_close(ct, np.asarray(ct_again))
    # Dot-product identity <vjp(u), v> = <u, jvp(v)> with <a, b> = Re Σ conj(a) b.
    lhs = np.real(np.vdot(np.asarray(ct), v))
    rhs = np.real(np.vdot(u, np.asarray(t_out)))
    assert abs(lhs - rhs) <= 1e-12 * max(1.0, abs(rhs))


def test_complex_convention_is_tenferros() -> None:
    g = tf.func.grad(lambda z: (z * z.conj()).real.sum())(np.array([3 + 4j]))
    assert_close(g, np.array([6 + 8j]))  # jax.grad: 6-8j
    z0 = np.array(0.5 + 0.5j)
    _, t = tf.func.jvp(tf.sin, (z0,), (np.array(1 + 0j),))
    assert_close(t, np.cos(z0))
    _, vjp_fn = tf.func.vjp(tf.sin, z0)
    assert_close(vjp_fn(np.array(1 + 0j))[0], np.conj(np.cos(z0)))


def test_jacobians_against_finite_differences() -> None:
    x = RNG.normal(size=(2, 3))

    def f(t):
        return tf.tanh(t @ t.T) * 2.0 + t.sum(axis=1) ** 2

    def fn(a):
        return np.tanh(a @ a.T) * 2.0 + a.sum(axis=1) ** 2

    want = _fd_jac(fn, x)
    jr = tf.func.jacrev(f)(x)
    jf = tf.func.jacfwd(f)(x)
    assert jr.shape == (2, 2, 2, 3) and jf.shape == (2, 2, 2, 3)
    assert_close(jr, want, **TOL)
    assert_close(jf, np.asarray(jr), rtol=1e-12, atol=1e-12)


def test_jacobian_structures_tuple_argnums_and_outputs() -> None:
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])

    def f(a, b):
        return a * a, a * b.sum()

    for jac in (tf.func.jacrev, tf.func.jacfwd):
        (jaa, jab), (jba, jbb) = jac(f, argnums=(0, 1))(x, y)
        assert_close(jaa, np.diag(2 * x))
        assert_close(jab, np.zeros((2, 3)))
        assert_close(jba, np.eye(2) * y.sum())
        assert_close(jbb, np.outer(x, np.ones(3)))
        j0, j1 = jac(f)(x, y)
        assert_close(j0, np.diag(2 * x)) and assert_close(j1, np.eye(2) * y.sum())


def test_holomorphic_jacobians_and_dtype_rules() -> None:
    z = np.array([1 + 2j, -0.5 + 0.3j])
    for jac in (tf.func.jacrev, tf.func.jacfwd):
        assert_close(jac(lambda t: t * t * t, holomorphic=True)(z), np.diag(3 * z**2))
        with pytest.raises(TypeError, match="holomorphic"):
            jac(lambda t: t * t)(z)
    with pytest.raises(TypeError, match="holomorphic"):  # jacrev: complex output
        tf.func.jacrev(lambda t: tf.exp(t * 1j))(np.array([1.0]))
    j = tf.func.jacfwd(lambda t: tf.exp(t * 1j))(np.array([0.5]))  # jacfwd allows it
    assert_close(j, np.array([[1j * np.exp(0.5j)]]))


def test_hessian_closed_form_and_finite_differences() -> None:
    xv = np.array([0.3, -0.7, 1.1])

    def f(x):
        return (tf.exp(x) * x).sum() + x[0] * x[1] * x[1]

    h = tf.func.hessian(f)(xv)
    want = np.diag(2 * np.exp(xv) + xv * np.exp(xv))
    want[0, 1] += 2 * xv[1]
    want[1, 0] += 2 * xv[1]
    want[1, 1] += 2 * xv[0]
    assert_close(h, want, rtol=1e-12, atol=1e-12)
    fd = _fd_jac(lambda a: np.asarray(tf.func.grad(f)(a)), xv)
    assert_close(h, fd, **TOL)
    blocks = tf.func.hessian(lambda a, b: (a * a * b).sum(), argnums=(0, 1))(
        np.array([2.0]), np.array([3.0])
    )
    assert_close(blocks[0][0], np.array([[6.0]]))
    assert_close(blocks[0][1], np.array([[4.0]]))
    assert_close(blocks[1][0], np.array([[4.0]]))
    assert_close(blocks[1][1], np.array([[0.0]]))


def test_numpy_left_operand_with_tensor_of_fresh_runtime() -> None:
    # Inside a transform, non-differentiated NumPy arguments meet tensors of the fresh runtime.
    g = tf.func.grad(lambda a, b: (np.sum(b) * a).sum())(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    assert_close(g, np.array([7.0, 7.0]))


# --------------------------------------------------------------------------------------------
# Pytrees (issue 17, fix 4): arguments, gradients, outputs and tangents are pytrees, as JAX's.
# Expectations are JAX's documented semantics, checked here by finite differences.

P_A = np.array([0.4, -1.2, 0.9])
P_B = np.array([[0.3, 0.5], [-0.8, 1.1]])
P_C = 0.7


def _loss_np(a, b, c):
    return np.sum(np.sin(a) * c) + np.sum(b * b) * c + a[0] * b[1, 0]


def _loss_tf(a, b, c):
    return (tf.sin(a) * c).sum() + (b * b).sum() * c + a[0] * b[1, 0]


def _fd_pytree(f, leaves):
    """Finite-difference gradients of ``f(*leaves)`` w.r.t. each leaf (arrays or floats)."""
    out = []
    for i, leaf in enumerate(leaves):
        arr = np.asarray(leaf, dtype=float)
        out.append(
            _fd_grad(
                lambda v, i=i: f(*leaves[:i], v if v.ndim else float(v), *leaves[i + 1 :]), arr
            )
        )
    return out


def test_grad_dict_list_and_nested_pytrees_match_finite_differences() -> None:
    fa, fb, fc = _fd_pytree(_loss_np, [P_A, P_B, P_C])
    params = {"w": [P_A, {"m": P_B}], "c": P_C}
    g = tf.func.grad(lambda p: _loss_tf(p["w"][0], p["w"][1]["m"], p["c"]))(params)
    assert set(g) == {"w", "c"} and isinstance(g["w"], list) and set(g["w"][1]) == {"m"}
    assert_close(g["w"][0], fa, **TOL)
    assert_close(g["w"][1]["m"], fb, **TOL)
    assert_close(g["c"], np.float64(fc), **TOL)
    assert g["c"].shape == () and g["w"][1]["m"].shape == P_B.shape


def test_list_argument_is_a_pytree_not_stacked() -> None:
    """The finding: ``tf.func`` given a list of arrays silently stacked it."""
    g = tf.func.grad(lambda xs: xs[0] * xs[0] * xs[1])([2.0, 5.0])
    assert isinstance(g, list) and len(g) == 2
    assert [float(v) for v in g] == pytest.approx([20.0, 4.0])
    # Leaves of different shapes (could not be stacked at all).
    g = tf.func.grad(lambda xs: (xs[0] * xs[0]).sum() + (xs[1] * xs[1] * xs[1]).sum())([P_A, P_B])
    assert_close(g[0], 2 * P_A)
    assert_close(g[1], 3 * P_B**2)


def test_tuple_namedtuple_and_none_structure_preserved() -> None:
    from collections import namedtuple

    Pair = namedtuple("Pair", "u v")
    g = tf.func.grad(lambda t: (t[0].u * t[0].v).sum() + t[2] * 0.0)(
        (Pair(P_A, 2 * P_A), None, 1.0)
    )
    assert isinstance(g, tuple) and isinstance(g[0], Pair) and g[1] is None
    assert_close(g[0].u, 2 * P_A)
    assert_close(g[0].v, P_A)
    assert_close(g[2], np.float64(0.0))


def test_argnums_select_pytree_arguments() -> None:
    def f(scale, params, data):
        return scale * ((params["a"] * data).sum() + (params["b"] * params["b"]).sum())

    params = {"a": P_A, "b": P_B}
    data = np.array([1.0, 2.0, 3.0])
    g = tf.func.grad(f, argnums=1)(2.0, params, data)
    assert_close(g["a"], 2.0 * data)
    assert_close(g["b"], 4.0 * P_B)
    v, (gp, gs) = tf.func.value_and_grad(f, argnums=(1, 0))(2.0, params, data)
    assert_close(gp["a"], 2.0 * data)
    fs = _fd_pytree(lambda s: s * (np.sum(P_A * data) + np.sum(P_B**2)), [2.0])[0]
    assert_close(gs, np.float64(fs), **TOL)
    assert float(v) == pytest.approx(2.0 * (np.sum(P_A * data) + np.sum(P_B**2)))
    # an empty pytree argument: an empty gradient of the same structure
    assert tf.func.grad(lambda p, x: (x * x).sum(), argnums=0)([], P_A) == []


def test_pytree_grad_complex_convention_kept() -> None:
    """tenferro's convention (∂L/∂x + i∂L/∂y, PyTorch's numbers) holds for pytree leaves too."""
    z = {"z": np.array([3 + 4j, 1 - 2j]), "r": [np.array(0.5)]}
    g = tf.func.grad(lambda p: (p["z"] * p["z"].conj()).real.sum() * p["r"][0])(z)
    assert_close(g["z"], 2 * 0.5 * z["z"])  # jax.grad would give the conjugate
    assert_close(g["r"][0], np.float64(np.sum(np.abs(z["z"]) ** 2)))


def test_pytree_grad_composes() -> None:
    def f(p):
        return (p[0] * p[0] * p[0]).sum() * p[1]

    gg = tf.func.grad(lambda p: tf.func.grad(f)(p)[0].sum())([P_A, 2.0])
    assert_close(gg[0], 12.0 * P_A)  # d/da Σ 3a²·s = 6a·s
    assert_close(gg[1], np.float64(3 * np.sum(P_A**2)))


def test_jvp_several_outputs_and_pytree_primals() -> None:
    """The finding: ``tf.func.jvp`` rejected functions with several outputs."""

    def f(p, s):
        return {"prod": p["a"] * s, "sum": (p["a"] * p["a"]).sum()}, [tf.sin(s)]

    primals = ({"a": P_A}, 0.3)
    ta = np.array([1.0, -2.0, 0.5])
    tangents = ({"a": ta}, 2.0)
    out, t_out = tf.func.jvp(f, primals, tangents)
    assert isinstance(out, tuple) and set(out[0]) == {"prod", "sum"} and isinstance(out[1], list)
    assert (
        isinstance(t_out, tuple) and set(t_out[0]) == {"prod", "sum"} and isinstance(t_out[1], list)
    )
    assert_close(out[0]["prod"], P_A * 0.3)
    # Finite differences along the tangent direction.
    h = 1e-6
    hi = (P_A + h * ta) * (0.3 + h * 2.0), np.sum((P_A + h * ta) ** 2), np.sin(0.3 + h * 2.0)
    lo = (P_A - h * ta) * (0.3 - h * 2.0), np.sum((P_A - h * ta) ** 2), np.sin(0.3 - h * 2.0)
    fd = [(a - b) / (2 * h) for a, b in zip(hi, lo)]
    assert_close(t_out[0]["prod"], fd[0], **TOL)
    assert_close(t_out[0]["sum"], np.float64(fd[1]), **TOL)
    assert_close(t_out[1][0], np.float64(fd[2]), **TOL)
    # A plain tuple of outputs, as in the issue.
    out, (t1, t2) = tf.func.jvp(lambda x: (x * x, x.sum()), (P_A,), (ta,))
    assert_close(t1, 2 * P_A * ta)
    assert_close(t2, np.float64(ta.sum()))


def test_jvp_structure_errors() -> None:
    with pytest.raises(TypeError, match="tree structure"):
        tf.func.jvp(lambda p: p["a"], ({"a": P_A},), ({"b": P_A},))
    with pytest.raises(TypeError, match="tree structure"):
        tf.func.jvp(lambda p: p[0], ([P_A, P_A],), ([P_A],))
    with pytest.raises(TypeError, match="tuple or list"):
        tf.func.jvp(lambda x: x, P_A, P_A)
    with pytest.raises(ValueError, match="shape"):
        tf.func.jvp(lambda p: p[0], ([P_A],), ([P_B],))


def test_vjp_pytree_primals_and_outputs() -> None:
    def f(p, c):
        return {"y": p[0] * c, "s": (p[1] * p[1]).sum()}

    out, vjp_fn = tf.func.vjp(f, [P_A, P_B], 0.5)
    assert set(out) == {"y", "s"}
    ct = {"y": np.array([1.0, 2.0, -1.0]), "s": 3.0}
    gp, gc = vjp_fn(ct)
    assert isinstance(gp, list)
    assert_close(gp[0], 0.5 * ct["y"])
    assert_close(gp[1], 3.0 * 2 * P_B)
    assert_close(gc, np.float64(np.dot(P_A, ct["y"])))
    with pytest.raises(TypeError, match="tree structure"):
        vjp_fn({"y": ct["y"]})


def test_jacobians_of_pytrees_nest_output_outside_argument_inside() -> None:
    def f(p):
        return {"u": p["a"] * p["c"], "v": [(p["a"] * p["a"]).sum()]}

    p = {"a": P_A, "c": 1.5}
    for jac in (tf.func.jacrev, tf.func.jacfwd):
        j = jac(f)(p)
        assert set(j) == {"u", "v"} and isinstance(j["v"], list) and set(j["u"]) == {"a", "c"}
        assert (
            j["u"]["a"].shape == (3, 3)
            and j["u"]["c"].shape == (3,)
            and j["v"][0]["a"].shape == (3,)
        )
        assert_close(j["u"]["a"], 1.5 * np.eye(3))
        assert_close(j["u"]["c"], P_A)
        assert_close(j["v"][0]["a"], 2 * P_A)
        assert_close(j["v"][0]["c"], np.float64(0.0))
        assert_close(j["u"]["a"], _fd_jac(lambda a: a * 1.5, P_A), **TOL)
    # A list of outputs stays a list (was turned into a tuple).
    j = tf.func.jacrev(lambda x: [x * x, x.sum()])(P_A)
    assert isinstance(j, list) and j[0].shape == (3, 3) and j[1].shape == (3,)


def test_hessian_of_dict_argument_matches_finite_differences() -> None:
    def f(p):
        return (p["a"] * p["a"] * p["b"]).sum() + tf.sin(p["b"]) * p["a"][0]

    p = {"a": P_A, "b": 0.3}
    h = tf.func.hessian(f)(p)
    assert set(h) == {"a", "b"} and set(h["a"]) == {"a", "b"}
    assert h["a"]["a"].shape == (3, 3) and h["a"]["b"].shape == (3,) and h["b"]["b"].shape == ()
    ga = lambda a: np.asarray(tf.func.grad(f)({"a": a, "b": 0.3})["a"])  # noqa: E731
    assert_close(h["a"]["a"], _fd_jac(ga, P_A), **TOL)
    gb = lambda b: np.asarray(tf.func.grad(f)({"a": P_A, "b": float(b)})["a"])  # noqa: E731
    assert_close(h["a"]["b"], _fd_jac(gb, np.array(0.3)), **TOL)
    assert_close(h["b"]["a"], h["a"]["b"], rtol=1e-12, atol=1e-12)
    assert_close(h["b"]["b"], np.float64(-np.sin(0.3) * P_A[0]), rtol=1e-10)


def test_nested_transform_sees_the_outer_variable_it_closes_over():
    """An inner transform whose function closes over the outer transform's argument composes
    with it (JAX's semantics): d/dy Σ ∂/∂x Σ x²y = d/dy Σ 2xy = 2x, by grad, vjp and jvp, eager
    and with the inner function jitted."""
    x0, y0 = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    want = 2 * x0
    inner_grad = lambda y: tf.sum(tf.func.grad(lambda x: tf.sum(x * x * y))(x0))  # noqa: E731
    np.testing.assert_allclose(np.asarray(tf.func.grad(inner_grad)(y0)), want, rtol=1e-15)
    inner_vjp = lambda y: tf.sum(tf.func.vjp(lambda x: x * x * y, x0)[1](np.ones(2))[0])  # noqa: E731
    np.testing.assert_allclose(np.asarray(tf.func.grad(inner_vjp)(y0)), want, rtol=1e-15)
    inner_jvp = lambda y: tf.func.jvp(lambda x: tf.sum(x * x * y), (x0,), (np.ones(2),))[1]  # noqa: E731
    np.testing.assert_allclose(np.asarray(tf.func.grad(inner_jvp)(y0)), want, rtol=1e-15)
    jf = tf.jit(lambda x, y: tf.sum(x * x * y))
    inner_jit = lambda y: tf.sum(tf.func.grad(jf)(x0, y))  # noqa: E731
    np.testing.assert_allclose(np.asarray(tf.func.grad(inner_jit)(y0)), want, rtol=1e-15)

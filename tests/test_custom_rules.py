"""``tf.custom_vjp`` / ``tf.custom_jvp`` (``graph-mode.md``, "Custom derivative rules"), against
oracles: the same function without the decorator (tenferro's own derivatives), central finite
differences, and for the fixed-point example the implicit-function gradient computed with NumPy.
Eager (``backward``, ``tf.func``), under ``tf.jit`` (the jitted function takes the
derivative) and in higher order (``grad(grad(f))``); error cases; a ``bwd`` inside a session."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import tenferro as tf
from tenferro import _tenferro

E = tf.errors
RNG = np.random.default_rng(7)


def close(a, b, tol=1e-10) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def fd_grad(f, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central differences of the real scalar ``f`` (NumPy in, float out); complex ``x``:
    ``∂f/∂Re + i ∂f/∂Im`` (tenferro's convention)."""
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        for unit in [1.0] if not np.iscomplexobj(x) else [1.0, 1j]:
            e = np.zeros_like(x)
            e[idx] = unit * h
            d = (f(x + e) - f(x - e)) / (2 * h)
            g[idx] += d * unit
    return g


# --------------------------------------------------------------------------------------------
# a real custom_vjp: f(x, y) = sin(x) * y, with its exact rule


def plain_f(x, y):
    return tf.sin(x) * y


@tf.custom_vjp
def f(x, y):
    return tf.sin(x) * y


def f_fwd(x, y):
    return f(x, y), (tf.cos(x), tf.sin(x), y)


def f_bwd(res, ct):
    cos_x, sin_x, y = res
    return ct * cos_x * y, ct * sin_x


f.defvjp(f_fwd, f_bwd)


def loss(fn):
    return lambda x, y: (fn(x, y) ** 2).sum()


X = RNG.standard_normal(4)
Y = RNG.standard_normal(4)


def np_loss(x, y):
    return float(((np.sin(x) * y) ** 2).sum())


def test_custom_vjp_grad_matches_plain_and_fd() -> None:
    g = tf.func.grad(loss(f), argnums=(0, 1))(X, Y)
    gp = tf.func.grad(loss(plain_f), argnums=(0, 1))(X, Y)
    close(g[0], gp[0])
    close(g[1], gp[1])
    close(g[0], fd_grad(lambda x: np_loss(x, Y), X), 1e-6)
    close(g[1], fd_grad(lambda y: np_loss(X, y), Y), 1e-6)


def test_custom_vjp_backward_on_variables() -> None:
    rt = tf.default_runtime()
    x, y = rt.variable(X), rt.variable(Y)
    loss(f)(x, y).backward()
    xp, yp = rt.variable(X), rt.variable(Y)
    loss(plain_f)(xp, yp).backward()
    close(x.grad, xp.grad)
    close(y.grad, yp.grad)
    assert not x.grad.requires_grad


def test_custom_vjp_vjp_and_value_and_grad() -> None:
    ct = RNG.standard_normal(4)
    out, vjp_fn = tf.func.vjp(f, X, Y)
    outp, vjp_p = tf.func.vjp(plain_f, X, Y)
    close(out, outp)
    for a, b in zip(vjp_fn(ct), vjp_p(ct)):
        close(a, b)
    v, g = tf.func.value_and_grad(loss(f))(X, Y)
    close(v, np_loss(X, Y))
    close(g, tf.func.grad(loss(plain_f))(X, Y))


def test_custom_vjp_is_used_not_the_primal_derivative() -> None:
    # A deliberately different rule proves the node's rule runs (and fwd/fun are called as
    # documented: fun only when nothing records).
    calls = {"fun": 0, "fwd": 0, "bwd": 0}

    @tf.custom_vjp
    def g(x):
        calls["fun"] += 1
        return x * 1.0

    def g_fwd(x):
        calls["fwd"] += 1
        return x * 1.0, None

    def g_bwd(_, ct):
        calls["bwd"] += 1
        return (3.0 * ct,)

    g.defvjp(g_fwd, g_bwd)
    close(tf.func.grad(lambda x: g(x).sum())(np.ones(3)), 3.0 * np.ones(3))
    assert calls == {"fun": 0, "fwd": 1, "bwd": 1}
    close(g(tf.tensor([1.0, 2.0])), [1.0, 2.0])
    assert calls["fun"] == 1 and calls["fwd"] == 1


def test_custom_vjp_under_jit_value_and_grad() -> None:
    vg = tf.jit(tf.func.value_and_grad(loss(f), argnums=(0, 1)))
    v, (gx, gy) = vg(X, Y)
    ve, (gxe, gye) = tf.func.value_and_grad(loss(plain_f), argnums=(0, 1))(X, Y)
    close(v, ve)
    close(gx, gxe)
    close(gy, gye)
    # A second call with other values runs the compiled program (the bwd ops are in it).
    X2 = X + 0.5
    v2, (gx2, _) = vg(X2, Y)
    close(gx2, tf.func.grad(loss(plain_f))(X2, Y))
    st = vg.cache_stats()
    assert (st.misses, st.hits, st.fallbacks) == (1, 1, 0)


def test_custom_vjp_second_order() -> None:
    h = lambda x: tf.func.grad(lambda x: loss(f)(x, Y))(x).sum()  # noqa: E731
    hp = lambda x: tf.func.grad(lambda x: loss(plain_f)(x, Y))(x).sum()  # noqa: E731
    g2 = tf.func.grad(h)(X)
    close(g2, tf.func.grad(hp)(X))
    close(
        g2,
        fd_grad(
            lambda x: float(np.asarray(tf.func.grad(lambda x: loss(plain_f)(x, Y))(x)).sum()), X
        ),
        1e-6,
    )
    # backward(create_graph=True), then the gradient of the gradient.
    rt = tf.Runtime()
    x = rt.variable(X)
    loss(f)(x, rt.constant(Y)).backward(create_graph=True)
    assert x.grad.requires_grad
    close(rt.grad(x.grad.sum(), x), g2)


def test_custom_vjp_grad_of_grad_under_jit() -> None:
    h = lambda x: tf.func.grad(lambda x: loss(f)(x, Y))(x).sum()  # noqa: E731
    hp = lambda x: tf.func.grad(lambda x: loss(plain_f)(x, Y))(x).sum()  # noqa: E731
    close(tf.jit(tf.func.grad(h))(X), tf.func.grad(hp)(X))


# --------------------------------------------------------------------------------------------
# complex: the Hermitian convention


@tf.custom_vjp
def cexp(z, w):
    return tf.exp(z) * w


def cexp_fwd(z, w):
    e = tf.exp(z)
    return e * w, (e, w)


def cexp_bwd(res, ct):
    e, w = res
    # JAX's rule for holomorphic pieces is (ct * e * w, ct * e); tenferro's convention
    # conjugates the derivative.
    return ct * tf.conj(e * w), ct * tf.conj(e)


cexp.defvjp(cexp_fwd, cexp_bwd)


def plain_cexp(z, w):
    return tf.exp(z) * w


Z = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
W = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)


@pytest.mark.parametrize("kind", ["abs2", "real"])
def test_complex_custom_vjp_matches_plain_and_fd(kind: str) -> None:
    c = np.array([0.3 - 1j, 2.0 + 0.5j, -1.0 + 0j])
    if kind == "abs2":
        L = lambda fn: lambda z, w: tf.sum(tf.abs(fn(z, w)) ** 2)  # noqa: E731
        npL = lambda z, w: float(np.sum(np.abs(np.exp(z) * w) ** 2))  # noqa: E731
    else:
        L = lambda fn: lambda z, w: tf.real(tf.sum(fn(z, w) * c))  # noqa: E731
        npL = lambda z, w: float(np.real(np.sum(np.exp(z) * w * c)))  # noqa: E731
    gz, gw = tf.func.grad(L(cexp), argnums=(0, 1))(Z, W)
    pz, pw = tf.func.grad(L(plain_cexp), argnums=(0, 1))(Z, W)
    close(gz, pz)
    close(gw, pw)
    close(gz, fd_grad(lambda z: npL(z, W), Z), 1e-6)
    close(gw, fd_grad(lambda w: npL(Z, w), W), 1e-6)
    jz, jw = tf.jit(tf.func.grad(L(cexp), argnums=(0, 1)))(Z, W)
    close(jz, pz)
    close(jw, pw)


def test_complex_custom_vjp_second_order() -> None:
    L = lambda fn: lambda z: tf.sum(tf.abs(fn(z, W)) ** 2)  # noqa: E731
    h = lambda fn: lambda z: tf.real(tf.sum(tf.func.grad(L(fn))(z) * tf.conj(tf.asarray(W))))  # noqa: E731
    close(tf.func.grad(h(cexp))(Z), tf.func.grad(h(plain_cexp))(Z))


# --------------------------------------------------------------------------------------------
# custom_jvp


@tf.custom_jvp
def sp(x, y):
    return tf.log1p(tf.exp(x)) * y


@sp.defjvp
def sp_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return sp(x, y), tx / (1.0 + tf.exp(-x)) * y + tf.log1p(tf.exp(x)) * ty


def plain_sp(x, y):
    return tf.log1p(tf.exp(x)) * y


@tf.custom_jvp
def csq(z):
    return z * z * tf.conj(z)  # not holomorphic: z|z|^2


@csq.defjvp
def csq_jvp(primals, tangents):
    (z,), (t,) = primals, tangents
    return csq(z), 2.0 * z * tf.conj(z) * t + z * z * tf.conj(t)


def plain_csq(z):
    return z * z * tf.conj(z)


def test_custom_jvp_forward_and_reverse_match_plain() -> None:
    tx, ty = RNG.standard_normal(4), RNG.standard_normal(4)
    o, t = tf.func.jvp(sp, (X, Y), (tx, ty))
    op_, tp = tf.func.jvp(plain_sp, (X, Y), (tx, ty))
    close(o, op_)
    close(t, tp)
    g = tf.func.grad(loss(sp), argnums=(0, 1))(X, Y)
    gp = tf.func.grad(loss(plain_sp), argnums=(0, 1))(X, Y)
    close(g[0], gp[0])
    close(g[1], gp[1])
    npl = lambda x, y: float(((np.log1p(np.exp(x)) * y) ** 2).sum())  # noqa: E731
    close(g[0], fd_grad(lambda x: npl(x, Y), X), 1e-6)
    close(tf.func.jacfwd(sp)(X, Y), tf.func.jacrev(plain_sp)(X, Y))
    rt = tf.Runtime()
    x, y = rt.variable(X), rt.constant(Y)
    loss(sp)(x, y).backward()
    close(x.grad, gp[0])


def test_custom_jvp_under_jit_and_second_order() -> None:
    close(tf.jit(tf.func.grad(loss(sp)))(X, Y), tf.func.grad(loss(plain_sp))(X, Y))
    h = lambda fn: lambda x: tf.func.grad(lambda x: loss(fn)(x, Y))(x).sum()  # noqa: E731
    close(tf.func.grad(h(sp))(X), tf.func.grad(h(plain_sp))(X))
    close(tf.jit(tf.func.grad(h(sp)))(X), tf.func.grad(h(plain_sp))(X))
    close(
        tf.func.hessian(lambda x: loss(sp)(x, Y))(X),
        tf.func.hessian(lambda x: loss(plain_sp)(x, Y))(X),
    )


def test_complex_custom_jvp_transposes_in_the_hermitian_convention() -> None:
    L = lambda fn: lambda z: tf.sum(tf.abs(fn(z) - W) ** 2)  # noqa: E731
    npL = lambda z: float(np.sum(np.abs(z * z * np.conj(z) - W) ** 2))  # noqa: E731
    g = tf.func.grad(L(csq))(Z)
    close(g, tf.func.grad(L(plain_csq))(Z))
    close(g, fd_grad(npL, Z), 1e-6)
    t = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
    close(tf.func.jvp(csq, (Z,), (t,))[1], tf.func.jvp(plain_csq, (Z,), (t,))[1])
    close(tf.jit(tf.func.grad(L(csq)))(Z), g)


def test_several_outputs_custom_jvp_and_vjp() -> None:
    @tf.custom_jvp
    def two(x, y):
        return tf.sin(x) * y, {"p": x * y}

    @two.defjvp
    def two_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return two(x, y), (tf.cos(x) * y * tx + tf.sin(x) * ty, {"p": tx * y + x * ty})

    @tf.custom_vjp
    def two_v(x, y):
        return tf.sin(x) * y, {"p": x * y}

    def two_v_fwd(x, y):
        return two_v(x, y), (x, y)

    def two_v_bwd(res, ct):
        (x, y), (a, b) = res, (ct[0], ct[1]["p"])
        return a * tf.cos(x) * y + b * y, a * tf.sin(x) + b * x

    two_v.defvjp(two_v_fwd, two_v_bwd)

    def plain(x, y):
        return tf.sin(x) * y, {"p": x * y}

    L = lambda fn: lambda x, y: (fn(x, y)[0] ** 2).sum() + tf.sum(tf.exp(fn(x, y)[1]["p"]))  # noqa: E731
    ref = tf.func.grad(L(plain), argnums=(0, 1))(X, Y)
    for fn in (two, two_v):
        g = tf.func.grad(L(fn), argnums=(0, 1))(X, Y)
        close(g[0], ref[0])
        close(g[1], ref[1])
    jr = tf.func.jacrev(plain)(X, Y)
    for fn in (two, two_v):
        j = tf.func.jacrev(fn)(X, Y)
        close(j[0], jr[0])
        close(j[1]["p"], jr[1]["p"])
    close(tf.func.jacfwd(two)(X, Y)[1]["p"], jr[1]["p"])
    # Only one output used: the other's cotangent is zero.
    close(tf.func.grad(lambda x: two_v(x, Y)[1]["p"].sum())(X), Y)
    close(tf.func.grad(lambda x: two(x, Y)[1]["p"].sum())(X), Y)


def test_capture_trace_records_the_custom_node() -> None:
    rt = tf.Runtime()
    for fn in (f, sp):
        with tf.capture_trace():
            x = rt.constant(X)
            out = loss(fn)(x, rt.constant(Y))
        plain = {f: plain_f, sp: plain_sp}[fn]
        close(rt.grad(out, x), tf.func.grad(loss(plain))(X, Y))


# --------------------------------------------------------------------------------------------
# the fixed-point example (docs/custom-rules.md): x* = tanh(A x* + θ)


@tf.custom_vjp
def fixed_point(A, theta):
    x = tf.zeros(theta.shape, dtype=theta.dtype)
    for _ in range(200):
        x = tf.tanh(A @ x + theta)
    return x


def fixed_point_fwd(A, theta):
    with tf.no_grad():
        x = fixed_point(A, theta)
    return x, (A, x)


def fixed_point_bwd(res, ct):
    A, x = res
    d = 1.0 - x * x  # tanh' at the fixed point
    n = x.shape[0]
    # (I - diag(d) A)^T u = ct
    u = tf.linalg.solve(tf.eye(n, dtype=x.dtype) - tf.transpose(d[:, None] * A), ct)
    du = d * u
    return du[:, None] * x[None, :], du


fixed_point.defvjp(fixed_point_fwd, fixed_point_bwd)


def np_fixed_point(A, th):
    x = np.zeros_like(th)
    for _ in range(200):
        x = np.tanh(A @ x + th)
    return x


def test_fixed_point_gradient_matches_the_implicit_function_formula() -> None:
    n = 5
    A = 0.4 * RNG.standard_normal((n, n)) / np.sqrt(n)
    th = RNG.standard_normal(n)
    w = RNG.standard_normal(n)
    xs = np_fixed_point(A, th)
    assert np.max(np.abs(np.tanh(A @ xs + th) - xs)) < 1e-14
    # Implicit-function theorem, independently in NumPy: dx = (I - D A)^{-1} D (dA x + dθ).
    D = np.diag(1.0 - xs**2)
    u = np.linalg.solve((np.eye(n) - D @ A).T, w)
    g_th = D @ u
    g_A = np.outer(D @ u, xs)
    L = lambda A, th: (fixed_point(A, th) * w).sum()  # noqa: E731
    gA, gth = tf.func.grad(L, argnums=(0, 1))(A, th)
    close(gth, g_th, 1e-10)
    close(gA, g_A, 1e-10)
    v, (jA, jth) = tf.jit(tf.func.value_and_grad(L, argnums=(0, 1)))(A, th)
    close(v, xs @ w)
    close(jth, g_th, 1e-10)
    close(jA, g_A, 1e-10)
    # and by finite differences of the NumPy solver
    close(gth, fd_grad(lambda t: float(np_fixed_point(A, t) @ w), th), 1e-7)


# --------------------------------------------------------------------------------------------
# pytrees, nondiff_argnums, None cotangents


def test_nondiff_argnums_and_pytrees() -> None:
    seen = []

    @functools.partial(tf.custom_vjp, nondiff_argnums=(0,))
    def scaled(scale, p):
        return {"a": p["u"] * scale, "b": p["v"] * p["u"]}

    def scaled_fwd(scale, p):
        return scaled(scale, p), p

    def scaled_bwd(scale, p, ct):
        seen.append(scale)
        return ({"u": ct["a"] * scale + ct["b"] * p["v"], "v": ct["b"] * p["u"]},)

    scaled.defvjp(scaled_fwd, scaled_bwd)
    p = {"u": RNG.standard_normal(3), "v": RNG.standard_normal(3)}
    L = lambda p: (scaled(2.5, p)["a"] ** 2).sum() + scaled(2.5, p)["b"].sum()  # noqa: E731
    g = tf.func.grad(L)(p)
    expect_u = 2 * (2.5 * p["u"]) * 2.5 + p["v"]
    close(g["u"], expect_u)
    close(g["v"], p["u"])
    assert seen == [2.5, 2.5]


def test_none_cotangent_is_zero() -> None:
    @tf.custom_vjp
    def h(x, y):
        return x * y

    h.defvjp(lambda x, y: (x * y, x), lambda x, ct: (None, ct * x))
    gx, gy = tf.func.grad(lambda x, y: h(x, y).sum(), argnums=(0, 1))(X, Y)
    close(gx, np.zeros(4))
    close(gy, X)


def test_no_cycle_and_nodes_freed() -> None:
    import gc

    rt = tf.Runtime()

    def work() -> None:
        x = rt.variable(X)
        loss(f)(x, rt.constant(Y)).backward()
        loss(sp)(x, rt.constant(Y)).backward()
        tf.func.grad(lambda x: tf.func.grad(loss(f))(x, Y).sum())(X)
        tf.func.grad(lambda x: tf.func.grad(loss(sp))(x, Y).sum())(X)

    work()
    gc.collect()
    before = _tenferro._live_counts(rt)[0]
    gc.disable()  # the nodes must die by reference counting (no cycle through the rules)
    try:
        for _ in range(3):
            work()
        assert _tenferro._live_counts(rt)[0] == before
    finally:
        gc.enable()


# --------------------------------------------------------------------------------------------
# errors


def test_forward_mode_of_custom_vjp_raises_type_error_naming_it() -> None:
    with pytest.raises(TypeError, match=r"custom_vjp function.*\bf\b"):
        tf.func.jvp(lambda x: f(x, Y), (X,), (np.ones(4),))
    with pytest.raises(TypeError, match="custom_vjp function"):
        tf.func.jacfwd(lambda x: f(x, Y))(X)
    with pytest.raises(TypeError, match="custom_vjp function"):
        tf.func.hessian(lambda x: loss(f)(x, Y))(X)


def _bad(ret):
    @tf.custom_vjp
    def badfun(x, y):
        return x * y

    badfun.defvjp(lambda x, y: (x * y, None), lambda _, ct: ret(ct))
    return badfun


def test_bwd_wrong_count_shape_dtype() -> None:
    L = lambda fn: lambda x, y: fn(x, y).sum()  # noqa: E731
    with pytest.raises(E.ShapeError, match=r"badfun.*1 cotangents, expected 2"):
        tf.func.grad(L(_bad(lambda ct: (ct,))))(X, Y)
    with pytest.raises(E.ShapeError, match=r"badfun.*shape \(3,\), expected \(4,\)"):
        tf.func.grad(L(_bad(lambda ct: (ct[:3], ct))))(X, Y)
    with pytest.raises(E.DTypeError, match=r"badfun.*complex128, expected float64"):
        tf.func.grad(L(_bad(lambda ct: (ct * 1j, ct))))(X, Y)
    with pytest.raises(TypeError, match="badfun.*tuple"):
        tf.func.grad(L(_bad(lambda ct: ct)))(X, Y)
    # eagerly through backward too, and the error is the user's, raised unchanged
    rt = tf.Runtime()
    x = rt.variable(X)
    with pytest.raises(E.ShapeError, match="badfun"):
        L(_bad(lambda ct: (ct,)))(x, rt.constant(Y)).backward()

    class Boom(Exception):
        pass

    def boom(ct):
        raise Boom("from bwd")

    with pytest.raises(Boom, match="from bwd"):
        tf.func.grad(L(_bad(boom)))(X, Y)


def test_custom_jvp_wrong_tangent_shape_dtype() -> None:
    def make(tan):
        @tf.custom_jvp
        def jfun(x):
            return x * 2.0

        jfun.defjvp(lambda p, t: (jfun(*p), tan(t[0])))
        return jfun

    with pytest.raises(E.ShapeError, match=r"jfun.*shape \(2,\), expected \(4,\)"):
        tf.func.jvp(make(lambda t: t[:2]), (X,), (X,))
    with pytest.raises(E.DTypeError, match="jfun.*complex128"):
        tf.func.grad(lambda x: make(lambda t: t * 1j)(x).sum())(X)


def test_undefined_rules() -> None:
    @tf.custom_vjp
    def nofwd(x):
        return x

    with pytest.raises(AttributeError, match="nofwd"):
        nofwd(tf.tensor(1.0))


# --------------------------------------------------------------------------------------------
# sessions


def test_bwd_inside_a_session() -> None:
    rt, engine = tf.Runtime(), tf.CpuEngine(threads=1)
    x, y = rt.variable(X), rt.constant(Y)
    xp = rt.variable(X)
    with rt.session(engine):
        loss(f)(x, y).backward()
        loss(plain_f)(xp, y).backward()
        g = tf.func.grad(loss(sp))(x, y)
    close(x.grad, xp.grad)
    close(g, tf.func.grad(loss(plain_sp))(X, Y))


def test_docs_page_examples_run() -> None:
    import doctest
    import pathlib

    page = pathlib.Path(__file__).resolve().parents[1] / "docs" / "custom-rules.md"
    r = doctest.testfile(
        str(page),
        module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
    )
    assert r.attempted > 10 and r.failed == 0, r


# --------------------------------------------------------------------------------------------
# custom rules inside a jitted function differentiated from outside (grad of jit)


def _three_times():
    @tf.custom_vjp
    def g(x):
        return x * 1.0

    g.defvjp(lambda x: (x * 1.0, None), lambda _, ct: (3.0 * ct,))
    return g


def test_custom_vjp_inside_jit_differentiated_from_outside_uses_the_rule() -> None:
    g = _three_times()
    L = lambda x: (tf.sin(g(x)) * 2.0).sum()  # noqa: E731
    want = 6.0 * np.cos(X)  # the rule's 3, not the primal's 1
    jL = tf.jit(L)
    close(tf.func.grad(L)(X), want)
    close(tf.func.grad(jL)(X), want)  # value_and_grad of a jitted function (Rust fast path)
    close(tf.func.vjp(jL, X)[1](tf.tensor(1.0))[0], want)  # the tf.func frame
    rt = tf.Runtime()
    x = rt.variable(X)
    jL(x).backward()
    close(x.grad, want)
    assert jL.cache_stats().fallbacks == 0
    # Second order: the rule at every order (d/dx 6 cos g(x) = -6 sin g(x) · 3), as eagerly.
    close(tf.func.grad(lambda x: tf.func.grad(jL)(x).sum())(X), -18.0 * np.sin(X))
    close(tf.func.grad(lambda x: tf.func.grad(L)(x).sum())(X), -18.0 * np.sin(X))
    # Forward mode of a custom_vjp function raises, also compiled.
    with pytest.raises(TypeError, match="custom_vjp"):
        tf.func.jvp(jL, (X,), (X,))


def test_fixed_point_gradient_of_a_jitted_function_matches_the_implicit_formula() -> None:
    n = 4
    A = 0.4 * RNG.standard_normal((n, n)) / np.sqrt(n)
    th = RNG.standard_normal(n)
    w = RNG.standard_normal(n)
    xs = np_fixed_point(A, th)
    D = np.diag(1.0 - xs**2)
    u = np.linalg.solve((np.eye(n) - D @ A).T, w)
    jL = tf.jit(lambda A, th: (fixed_point(A, th) * w).sum())
    gA, gth = tf.func.grad(jL, argnums=(0, 1))(A, th)
    close(gth, D @ u, 1e-10)
    close(gA, np.outer(D @ u, xs), 1e-10)
    rt = tf.Runtime()
    a, t = rt.variable(A), rt.variable(th)
    jL(a, t).backward()
    close(t.grad, D @ u, 1e-10)
    close(a.grad, np.outer(D @ u, xs), 1e-10)


def test_custom_jvp_inside_jit_differentiated_from_outside() -> None:
    @tf.custom_jvp
    def h(x):
        return tf.sin(x)

    @h.defjvp
    def h_jvp(primals, tangents):  # deliberately 2·cos: the rule, not the primal, must run
        (x,), (t,) = primals, tangents
        return tf.sin(x), 2.0 * tf.cos(x) * t

    jh = tf.jit(lambda x: h(x) * 1.5)
    close(tf.func.grad(lambda x: jh(x).sum())(X), 3.0 * np.cos(X))  # transposed JVP
    t = RNG.standard_normal(X.shape)
    o, dt = tf.func.jvp(jh, (X,), (t,))
    close(o, 1.5 * np.sin(X))
    close(dt, 3.0 * np.cos(X) * t)


def test_higher_order_of_a_jitted_function_with_custom_rules_uses_the_rules() -> None:
    """grad∘grad, hessian, jvp∘grad and create_graph of a jitted function that calls custom
    rules keep the rules at every order (the recorded derivative runs the function itself under
    tf.func), equal to eager; forward-over-reverse of a custom_vjp raises TypeError."""

    @tf.custom_vjp
    def s(x):
        return tf.sin(x)

    s.defvjp(lambda x: (s(x), x), lambda x, ct: (ct * tf.cos(x) * 10.0,))
    f = lambda x: tf.sum(s(x) * s(x))  # noqa: E731
    x = np.array([0.01, 0.4])
    gg = lambda fn: tf.func.grad(lambda x: tf.sum(tf.func.grad(fn)(x)))(x)  # noqa: E731
    want = 20 * np.cos(x) ** 2 * 10 - 20 * np.sin(x) * np.sin(x)  # d/dx (2 sin x · 10 cos x)
    close(gg(f), want)
    close(gg(tf.jit(f)), want)

    @tf.custom_jvp
    def c(x):
        return tf.sin(x)

    @c.defjvp
    def c_jvp(p, t):
        return tf.sin(p[0]), 10 * tf.cos(p[0]) * t[0]

    f2 = lambda x: tf.sum(c(x) * c(x) * 3)  # noqa: E731
    jf2 = tf.jit(f2)
    close(tf.func.hessian(jf2)(x), tf.func.hessian(f2)(x))
    close(gg(jf2), gg(f2))
    t = np.ones(2)
    close(
        tf.func.jvp(tf.func.grad(jf2), (x,), (t,))[1], tf.func.jvp(tf.func.grad(f2), (x,), (t,))[1]
    )

    @tf.custom_vjp
    def clip(x):
        return x * 1.0

    clip.defvjp(lambda x: (x * 1.0, None), lambda _, ct: (tf.clip(ct, -0.1, 0.1),))
    loss = lambda x: 3 * tf.sum(clip(x) ** 2)  # noqa: E731
    rt = tf.Runtime()
    a = rt.variable(np.array([1.0, 2.0]))
    tf.jit(loss)(a).backward(create_graph=True)
    close(a.grad, [0.1, 0.1])
    with pytest.raises(TypeError, match="custom_vjp"):
        tf.func.jacfwd(tf.func.grad(tf.jit(loss)))(np.array([1.0, 2.0]))


def test_detach_inside_a_jitted_function_stops_the_gradient_from_outside() -> None:
    f = lambda x: tf.sum(x * x.detach())  # noqa: E731
    x = np.array([1.0, 2.0, 3.0])
    jf = tf.jit(f)
    close(tf.func.grad(jf)(x), x)
    close(tf.func.jvp(jf, (x,), (np.ones(3),))[1], x.sum())
    rt = tf.Runtime()
    a = rt.variable(x)
    jf(a).backward()
    close(a.grad, x)

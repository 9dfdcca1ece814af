"""The call path of ``tf.jit``: Python ``float``/``complex`` arguments are weakly typed rank-0
inputs (``graph-mode.md``, "Signature") — a new value never retraces, and values and dtypes equal
eager execution, where the same arguments are Python numbers (oracle: the eager call) — and the
replay cache in Rust serves repeated calls with the same outputs, statistics and captured-value
checks as the Python path."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import ConcretizationError


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes(), (a, b)


def _x(dtype="float32", n=5):
    rng = np.random.default_rng(3)
    v = rng.standard_normal(n) + (1j * rng.standard_normal(n) if np.dtype(dtype).kind == "c" else 0)
    return tf.asarray(v.astype(dtype))


FLOATS = [0.5, 1.5, -0.0, 0.0, 1e300, 3.0000000000000004, float("inf"), float("nan"), -7.25]


def test_a_new_float_value_never_retraces_and_equals_eager():
    def f(x, s):
        return x * s + s

    jf = tf.jit(f)
    x = _x("float32")
    for s in FLOATS:
        _same(jf(x, s), f(x, s))
    st = jf.cache_stats()
    assert st.misses == 1 and st.hits == len(FLOATS) - 1
    assert jf(x, 2.0).dtype == np.float32  # the weak float takes the tensor's dtype


@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "complex64", "complex128", "int32", "int64", "bool"]
)
def test_weak_arithmetic_stays_weak_and_functions_are_strong(dtype):
    def f(x, s):
        a = (s * 2.0 + 1) / 3.0 - s  # Python arithmetic on a Python float: still weak
        b = -(abs(s) ** 2)
        return x * a, x + b, tf.sin(s) * x, x * (s > 0.25)

    jf = tf.jit(f)
    x = _x(dtype) if dtype != "bool" else tf.asarray(np.array([True, False, True]))
    if dtype.startswith("int"):
        x = tf.asarray(np.arange(-2, 3, dtype=dtype))
    for s in (0.3, -1.75):
        for a, b in zip(jf(x, s), f(x, s)):
            _same(a, b)
    assert jf.cache_stats().misses == 1


def test_complex_weak_scalars():
    def f(x, z):
        return x * z + z * 1j, tf.conj(x) * (z - 1)

    jf = tf.jit(f)
    for dtype in ("float32", "complex64", "float64"):
        x = _x(dtype)
        for z in (0.5 + 2j, -1j, complex(0.0, -0.0)):
            for a, b in zip(jf(x, z), f(x, z)):
                _same(a, b)
    assert jf.cache_stats().misses == 3  # one per tensor dtype


def test_float_and_complex_and_int_are_different_signatures():
    jf = tf.jit(lambda x, s: x * s)
    x = _x("float64")
    _same(jf(x, 2.0), x * 2.0)
    _same(jf(x, 2), x * 2)
    _same(jf(x, 2j), x * 2j)
    _same(jf(x, 3), x * 3)  # ints stay keyed by value (control flow)
    assert jf.cache_stats().misses == 4


def test_ints_still_drive_python_control_flow():
    @tf.jit
    def power(x, n):
        y = x
        for _ in range(n - 1):
            y = y * x
        return y

    x = _x("float64")
    _same(power(x, 3), x * x * x)
    _same(power(x, 1), x)


def test_where_clip_and_fill_with_weak_scalars_equal_eager():
    def f(x, s):
        return tf.where(x > 0, x, s), tf.clip(x, -s, s), tf.maximum(x, s), tf.minimum(s, x)

    jf = tf.jit(f)
    for dtype in ("float32", "float64"):
        x = _x(dtype)
        for s in (0.25, 0.75):
            for a, b in zip(jf(x, s), f(x, s)):
                _same(a, b)


def test_value_requests_on_a_weak_scalar_raise():
    @tf.jit
    def f(x, s):
        return x * math.exp(s)

    with pytest.raises(ConcretizationError):
        f(_x("float64"), 0.5)


def test_gradients_with_weak_scalars_equal_eager():
    def loss(x, s):
        return tf.sum(tf.sin(x * s) ** 2) * s

    vg = tf.func.value_and_grad(loss)
    jvg = tf.jit(vg)
    for dtype in ("float32", "float64"):
        x = _x(dtype, 7)
        for s in (0.5, -2.0):
            (v1, g1), (v2, g2) = jvg(x, s), vg(x, s)
            _same(v1, v2)
            _same(g1, g2)
    # The derivative with respect to the scalar itself (a strongly typed leaf, as eagerly).
    gs = tf.func.grad(loss, argnums=1)
    jgs = tf.jit(gs)
    x = _x("float64", 7)
    for s in (0.5, 1.25):
        np.testing.assert_allclose(np.asarray(jgs(x, s)), np.asarray(gs(x, s)), rtol=1e-13)


def test_fast_path_and_pytree_path_both_take_floats():
    jf = tf.jit(lambda x, s: x * s)
    x = _x("float64")
    for s in (1.0, 2.0, 3.0):
        _same(jf(x, s), x * s)
    jg = tf.jit(lambda d: d["x"] * d["s"])
    for s in (1.0, 2.0, 3.0):
        _same(jg({"x": x, "s": s}), x * s)
    assert jf.cache_stats().misses == 1 and jg.cache_stats().misses == 1


def test_a_weak_scalar_output_is_a_float64_tensor():
    jf = tf.jit(lambda x, s: (x + 1, s * 2.0))
    _, s2 = jf(_x("float32"), 0.75)
    assert s2.dtype == np.float64 and float(s2) == 1.5


def test_replay_cache_outputs_and_statistics():
    x = _x("float64")
    one = tf.jit(lambda x: x * 2.0)
    pair = tf.jit(lambda x: (x + 1, x - 1))
    tree = tf.jit(lambda x: {"a": x, "b": [x * 3, (x,)]})
    empty = tf.jit(lambda x: ())
    for _ in range(3):
        _same(one(x), x * 2.0)
        a, b = pair(x)
        _same(a, x + 1)
        _same(b, x - 1)
        t = tree(x)
        assert sorted(t) == ["a", "b"] and isinstance(t["b"], list) and isinstance(t["b"][1], tuple)
        _same(t["b"][0], x * 3)
        assert empty(x) == ()
    for j in (one, pair, tree, empty):
        st = j.cache_stats()
        assert (st.misses, st.hits, st.fallbacks) == (1, 2, 0)
    with tf.no_grad():  # the grad mode is part of the key
        _same(one(x), x * 2.0)
    assert one.cache_stats().misses == 2
    one.clear_cache()
    _same(one(x), x * 2.0)
    assert one.cache_stats().misses == 3 and one.cache_stats().clears == 1


def test_globals_defined_after_decoration_and_rebound_are_keyed():
    ns: dict = {}
    exec("import tenferro as tf\n@tf.jit\ndef f(x):\n    return x * W + c\n", ns)
    f = ns["f"]
    x = _x("float64")
    ns["W"], ns["c"] = tf.asarray(np.full(5, 2.0)), 1.0
    _same(f(x), x * 2.0 + 1.0)
    ns["W"] = tf.asarray(np.full(5, 3.0))  # rebound tensor: retrace
    _same(f(x), x * 3.0 + 1.0)
    ns["c"] = 5.0  # a captured float is a constant of the program: retrace
    _same(f(x), x * 3.0 + 5.0)
    ns["other"] = 1  # the module gains a name: still served correctly
    _same(f(x), x * 3.0 + 5.0)
    del ns["other"]
    _same(f(x), x * 3.0 + 5.0)
    assert f.cache_stats().misses == 3


def test_rebound_closure_cells_and_defaults_are_keyed():
    W = tf.asarray(np.full(5, 2.0))

    def f(x, k=2.0):
        return x * W * k

    jf = tf.jit(f)
    x = _x("float64")
    _same(jf(x), x * W * 2.0)
    W = tf.asarray(np.full(5, -1.0))  # noqa: F841 (rebinding the cell f reads)
    _same(jf(x), f(x))
    f.__defaults__ = (4.0,)
    _same(jf(x), f(x))
    assert jf.cache_stats().misses == 3


def test_a_captured_tensor_over_one_mib_warns_once():
    big = tf.asarray(np.ones(200_000))  # 1.6 MiB
    small = tf.asarray(np.ones(10))

    @tf.jit
    def f(x):
        return x * big[:3] + small[:3]

    x = tf.asarray(np.zeros(3))
    with pytest.warns(UserWarning, match="captured tensor .*200000.*MiB"):
        _same(f(x), np.ones(3))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same(f(tf.asarray(np.zeros(3, np.float32))), np.ones(3))  # retrace, no second warning

    @tf.jit
    def g(x):
        return x + small[:3]

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same(g(x), np.ones(3))


def test_functions_of_a_weak_scalar_are_strong_and_its_attributes_weak():
    # Eagerly tf.conj(0.3) is a float64 tensor, while (0.3).real is a Python float.
    def f(x, s, z):
        return (
            tf.conj(s) * x,
            tf.real(s) * x,
            tf.positive(s) * x,
            tf.clip(s, x, None),
            x * z.real,
            x * z.imag,
            x * z.conjugate(),
            x * s.real,
        )

    jf = tf.jit(f)
    x = _x("float32")
    for s, z in ((0.3, 1.1 + 2j), (-2.5, -0.5j)):
        for a, b in zip(jf(x, s, z), f(x, s, z)):
            _same(a, b)


def test_complex_weak_scalars_are_not_silently_made_real():
    xr = tf.asarray(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="complex"):
        xr.at[0].set(1 + 2j)
    with pytest.raises(TypeError, match="complex"):
        tf.jit(lambda x, s: x.at[0].set(s))(xr, 1 + 2j)
    with pytest.raises(TypeError, match="complex"):
        tf.jit(lambda x, s: x + tf.asarray(s, dtype=np.float64))(xr, 1 + 2j)


def test_weak_scalars_as_fill_values_and_list_entries():
    def f(x, s):
        return (
            tf.full((3,), s) * x,
            tf.linspace(0.0, s, 5),
            tf.pad(x, 1, constant_values=s),
        )

    jf = tf.jit(f)
    x = _x("float64", 3)
    for s in (0.5, -1.25):
        for a, b in zip(jf(x, s), f(x, s)):
            _same(a, b)
    assert jf.cache_stats().misses == 1


def test_a_value_request_on_a_weak_scalar_says_what_it_is():
    with pytest.raises(ConcretizationError, match="Python float/complex argument.*static_argnames"):
        tf.jit(lambda x, s: x * float(s))(_x("float64"), 0.5)
    with pytest.raises(ConcretizationError, match="weakly typed scalar"):
        tf.jit(lambda x, s: x * float(2 * s))(_x("float64"), 0.5)


def test_a_compiled_graph_on_tracked_inputs_records_its_gradient():
    rt = tf.default_runtime()
    x = _x("float64")
    cg = tf.jit(lambda x: tf.sin(x) * 2.0).trace(x).compile()
    v = rt.variable(np.asarray(x))
    y = cg(v)
    assert y.requires_grad
    tf.sum(y * y).backward()
    xs = np.asarray(x)
    np.testing.assert_allclose(np.asarray(v.grad), 8 * np.sin(xs) * np.cos(xs), rtol=1e-14)
    with tf.no_grad():
        assert not cg(v).requires_grad
        _same(cg(v), tf.sin(x) * 2.0)
    # tf.jit on a tracked argument runs the compiled program and records its node too.
    w = rt.variable(np.asarray(x))
    jf = tf.jit(lambda x: tf.sum(tf.sin(x) * 2.0))
    out = jf(w)
    out.backward()
    np.testing.assert_allclose(np.asarray(w.grad), 2 * np.cos(xs), rtol=1e-15)
    assert jf.cache_stats().fallbacks == 0


def test_captured_values_checked_in_rust_follow_every_rebinding():
    # The identity check of the captured values runs in the Rust replay cache once it holds a
    # probe (closure cells, globals, defaults): every rebinding is seen on the very next call,
    # also back to an earlier value; an equal float in a new object is not a new signature.
    W = tf.asarray(np.full(5, 2.0))
    s = 1.0

    def f(x, k=2.0):
        return x * W * k + s

    def g(x, *, k=3.0):  # keyword-only defaults: checked in Python, same semantics
        return x * W * k

    jf, jg = tf.jit(f), tf.jit(g)
    x = _x("float64")
    W0 = W
    for step in range(6):
        for _ in range(3):
            _same(jf(x), f(x))
            _same(jg(x), g(x))
        if step == 0:
            W = tf.asarray(np.full(5, -1.0))  # noqa: F841 (the cell f and g read)
        elif step == 1:
            W = W0  # back to the first tensor
        elif step == 2:
            s = float("1.0")  # an equal float, another object: no retrace
            s = s + 0.0
        elif step == 3:
            s = 7.0  # noqa: F841
        elif step == 4:
            f.__defaults__ = (-3.0,)
            g.__kwdefaults__ = {"k": -4.0}
    # f: W0, W1, W0 again (its trace is still cached), s=7, k=-3 -> 4 traces; g: W0, W1, k=-4
    assert jf.cache_stats().misses == 4, jf.cache_stats()
    assert jg.cache_stats().misses == 3, jg.cache_stats()
    assert jf.cache_stats().hits + jf.cache_stats().misses == 18

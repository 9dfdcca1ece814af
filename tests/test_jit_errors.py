"""Graph mode's errors (issue 20, item 6; ``graph-mode.md``, "Values Python asks for").

Every value request on a traced tensor raises ``ConcretizationError`` naming the request, the op
that made the tensor, its shape and dtype and the user's source line; a tracer kept past its
trace raises ``TracerLeakError`` for ops and value requests alike; value-routed library functions
(``linalg.pinv``) trace, data-dependent shapes (boolean masks) and value-checked indices raise
``ConcretizationError`` naming themselves; errors that depend only on shapes/dtypes/parameters
are raised while tracing, value errors by the compiled call, each with the eager class and
message. Eager execution of the same function is the oracle throughout.
"""

from __future__ import annotations

import operator
import re

import numpy as np
import pytest

import tenferro as tf
from tenferro import errors as E

RNG = np.random.default_rng(20261202)


def arr(shape, dtype=np.float64):
    a = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype)


def _lineno(fun, text):
    """The line of ``fun``'s source (in this file) that contains ``text``."""
    import inspect

    lines, start = inspect.getsourcelines(fun)
    hits = [start + i for i, line in enumerate(lines) if text in line]
    assert len(hits) == 1, (text, hits)
    return hits[0]


# ---------------------------------------------------------------------------------------------
# 1. value requests: one function per request; the request is on the marked line
# ---------------------------------------------------------------------------------------------


def r_bool(x):
    return tf.asarray(bool(tf.sin(x) > 0.0))  # REQ


def r_if(x):
    if tf.sin(x) > 0.0:  # REQ
        return x
    return -x


def r_int(x):
    return tf.asarray(int(tf.sin(x)))  # REQ


def r_float(x):
    return tf.asarray(float(tf.sin(x)))  # REQ


def r_complex(x):
    return tf.asarray(complex(tf.sin(x)))  # REQ


def r_item(x):
    return tf.asarray(tf.sin(x).item())  # REQ


def r_tolist(x):
    return tf.asarray(tf.sin(x).tolist())  # REQ


def r_asarray(x):
    return tf.asarray(np.asarray(tf.sin(x)) + 1.0)  # REQ


def r_array(x):
    return tf.asarray(np.array(tf.sin(x)))  # REQ


def r_dunder_array(x):
    return tf.asarray(tf.sin(x).__array__())  # REQ


def r_numpy(x):
    return tf.asarray(tf.sin(x).numpy())  # REQ


def r_memoryview(x):
    return tf.asarray(np.asarray(memoryview(tf.sin(x))))  # REQ


def r_dlpack(x):
    return tf.asarray(np.from_dlpack(tf.sin(x)))  # REQ


def r_array_interface(x):
    return tf.asarray(len(tf.sin(x).__array_interface__["shape"]) + x)  # REQ


def r_format(x):
    return tf.asarray(float(f"{tf.sin(x):.3f}"))  # REQ


def r_iter_then_value(x):
    return tf.asarray([float(v) for v in tf.sin(x)])  # REQ


def r_np_ufunc_kw(x):
    return tf.asarray(np.add(tf.sin(x), 1.0, dtype=np.float64))  # REQ


def i_range(k):
    return tf.asarray(sum(range(k + 1)))  # REQ


def i_list(k):
    return tf.asarray([10.0, 20.0, 30.0][k + 1])  # REQ


def i_index(k):
    return tf.asarray(operator.index(k + 1))  # REQ


def i_shape(k):
    return tf.zeros(k + 1)  # REQ


# (function, input, made-by op, shape of the asked tensor, dtype)
SCALAR = np.float64(0.3)
VECTOR = np.array([0.1, -0.2, 0.3])
REQUESTS = [
    (r_bool, SCALAR, "op compare", "[]", "bool", "bool()"),
    (r_if, SCALAR, "op compare", "[]", "bool", "bool()"),
    (r_int, SCALAR, "op sin", "[]", "float64", "int()"),
    (r_float, SCALAR, "op sin", "[]", "float64", "float()"),
    (r_complex, SCALAR, "op sin", "[]", "float64", "complex()"),
    (r_item, SCALAR, "op sin", "[]", "float64", "item()"),
    (r_tolist, VECTOR, "op sin", "[3]", "float64", "tolist()"),
    (r_asarray, VECTOR, "op sin", "[3]", "float64", None),
    (r_array, VECTOR, "op sin", "[3]", "float64", None),
    (r_dunder_array, VECTOR, "op sin", "[3]", "float64", "__array__"),
    (r_numpy, VECTOR, "op sin", "[3]", "float64", "numpy()"),
    (r_memoryview, VECTOR, "op sin", "[3]", "float64", "buffer protocol"),
    (r_dlpack, VECTOR, "op sin", "[3]", "float64", "__dlpack__"),
    (r_array_interface, VECTOR, "op sin", "[3]", "float64", "__array_interface__"),
    (r_format, SCALAR, "op sin", "[]", "float64", "format("),
    (r_iter_then_value, VECTOR, "op ", "[]", "float64", "float()"),
    (r_np_ufunc_kw, VECTOR, "op sin", "[3]", "float64", None),
    (i_range, np.int64(1), "op add", "[]", "int64", "__index__"),
    (i_list, np.int64(1), "op add", "[]", "int64", "__index__"),
    (i_index, np.int64(1), "op add", "[]", "int64", "__index__"),
    (i_shape, np.int64(1), "op add", "[]", "int64", None),
]


@pytest.mark.parametrize("case", REQUESTS, ids=[c[0].__name__ for c in REQUESTS])
def test_every_value_request_raises_concretization_error_naming_op_shape_dtype_and_line(case):
    fun, value, made_by, shape, dtype, request = case
    x = tf.asarray(np.asarray(value))
    eager = fun(x)  # the oracle: eagerly, the request has a value
    assert isinstance(eager, tf.Tensor)
    with pytest.raises(E.ConcretizationError) as ei:
        tf.jit(fun)(x)
    msg = str(ei.value)
    assert f"made by {made_by}" in msg, msg
    assert f"shape {shape}" in msg and f"dtype {dtype}" in msg, msg
    assert "tf.where" in msg and "static_argnames" in msg and "without tf.jit" in msg, msg
    if request is not None:
        assert msg.startswith(request), msg
    # the user's line: this file, the marked line, its code text
    line = _lineno(fun, "# REQ")
    func = "<listcomp>" if fun is r_iter_then_value else fun.__name__  # the comprehension's frame
    assert ei.value.source is not None and ei.value.source[:3] == (__file__, line, func), (
        ei.value.source
    )
    assert f"{__file__}:{line} in {func}: " in msg and "# REQ" in msg.splitlines()[-1], msg
    assert isinstance(ei.value, TypeError) and isinstance(ei.value, E.TenferroError)


def test_shape_and_dtype_errors_of_value_requests_come_first_as_in_eager():
    """A request that fails on the shape or dtype alone fails the same way under jit."""
    cases = [
        (lambda x: bool(x), arr((3,)), ValueError, "more than one element"),
        (lambda x: bool(x), arr((0,)), ValueError, "empty tensor"),
        (lambda x: float(x), arr((3,)), TypeError, "only 0-dimensional"),
        (lambda x: float(x), arr((), np.complex128), TypeError, "complex"),
        (lambda x: int(x), arr((), np.complex128), TypeError, "complex"),
        (lambda x: x.item(), arr((2,)), ValueError, "size 1"),
        (lambda x: range(x), arr(()), TypeError, "integer scalar"),
        (lambda x: format(x, ".2f"), arr((2,)), TypeError, "format"),
    ]
    for fun, a, cls, text in cases:
        with pytest.raises(cls, match=text) as eager:
            fun(tf.asarray(a))
        with pytest.raises(cls, match=text) as traced:
            tf.jit(lambda x, fun=fun: tf.asarray(0.0) if fun(x) is None else x)(tf.asarray(a))
        assert type(traced.value) is type(eager.value) and str(traced.value) == str(eager.value)
        assert not isinstance(traced.value, E.ConcretizationError)


def test_metadata_printing_and_len_work_on_traced_tensors():
    seen = {}

    def f(x):
        y = tf.sin(x)
        seen.update(shape=y.shape, ndim=y.ndim, size=y.size, dtype=y.dtype, len=len(y))
        seen.update(repr=repr(y), str=str(y), fmt=f"{y}", rows=[r.shape for r in y])
        return y

    x = tf.asarray(arr((3, 2)))
    np.testing.assert_array_equal(tf.jit(f)(x), tf.sin(x))
    assert (seen["shape"], seen["ndim"], seen["size"], seen["len"]) == ((3, 2), 2, 6, 3)
    assert seen["dtype"] == np.float64 and seen["rows"] == [(2,)] * 3
    assert "traced" in seen["repr"] and seen["str"] == seen["repr"] == seen["fmt"]


def test_format_of_concrete_tensors_follows_numpy():
    t = tf.asarray(np.float64(2.0 / 3.0))
    assert f"{t:.3f}" == f"{np.float64(2.0 / 3.0):.3f}" == "0.667"
    v = tf.asarray([1.0, 2.0])
    assert f"{v}" == str(np.asarray([1.0, 2.0]))
    with pytest.raises(TypeError):
        format(v, ".3f")
    with pytest.raises(TypeError):
        format(np.asarray([1.0, 2.0]), ".3f")


def test_concretization_error_inside_helpers_names_the_user_line_not_tenferro():
    def helper(t):
        return t.tolist()

    def f(x):
        return tf.asarray(helper(x * 2.0))

    with pytest.raises(E.ConcretizationError) as ei:
        tf.jit(f)(tf.asarray(arr((2,))))
    assert ei.value.source[2] == "helper" and ei.value.source[3] == "return t.tolist()"
    assert "made by op mul" in str(ei.value)


# ---------------------------------------------------------------------------------------------
# 2. leaked tracers
# ---------------------------------------------------------------------------------------------

LEAKED = None


def _leak_via_global(x):
    global LEAKED
    LEAKED = tf.sin(x)
    return x


def _leaks():
    """Four leaked tracers: via a global, a list append, a closure, and one that left its trace
    inside an exception (the trace aborted)."""
    x = tf.asarray(arr((3,)))
    tf.jit(_leak_via_global)(x)
    kept = []

    def f_list(x):
        kept.append(x * 2.0)
        return x

    tf.jit(f_list)(x)
    box = None

    def f_closure(x):
        nonlocal box
        box = tf.cos(x)
        return x

    tf.jit(f_closure)(x)

    class Carry(Exception):
        pass

    def f_raise(x):
        raise Carry(tf.exp(x))

    with pytest.raises(Carry) as ei:
        tf.jit(f_raise)(x)
    return {"global": LEAKED, "list": kept[0], "closure": box, "raised": ei.value.args[0]}


VALUE_REQUESTS = {
    "np.asarray": np.asarray,
    "np.array": np.array,
    "__array__": lambda t: t.__array__(),
    "memoryview": memoryview,
    "tolist": lambda t: t.tolist(),
    "numpy": lambda t: t.numpy(),
    "item": lambda t: t[0].item(),
    "float": lambda t: float(t[0]),
    "bool": lambda t: bool(t[0]),
    "format": lambda t: format(t.sum(), ".2f"),
}


@pytest.mark.parametrize("how", ["global", "list", "closure", "raised"])
def test_leaked_tracers_raise_tracer_leak_error_for_ops_and_value_requests(how):
    t = _leaks()[how]
    assert t._traced
    for name, ask in VALUE_REQUESTS.items():
        with pytest.raises(E.TracerLeakError) as ei:
            ask(t)
        msg = str(ei.value)
        assert "trace ended" in msg and "shape [" in msg and "dtype float64" in msg, (name, msg)
        assert not isinstance(ei.value, E.ConcretizationError)
    # the leak error carries the user's line too
    with pytest.raises(E.TracerLeakError) as ei:
        np.asarray(t)  # LEAKLINE
    assert ei.value.source[:2] == (
        __file__,
        _lineno(
            test_leaked_tracers_raise_tracer_leak_error_for_ops_and_value_requests,
            "# LEAK" + "LINE",
        ),
    )
    for op in (
        lambda t: t + 1.0,
        lambda t: tf.sin(t),
        lambda t: t @ t,
        lambda t: t[1:],
        lambda t: tf.sum(t),
    ):
        with pytest.raises(E.TracerLeakError):
            op(t)
    # used inside another trace: still a leak (its trace is not this one)
    with pytest.raises(E.TracerLeakError):
        tf.jit(lambda y: y + t)(tf.asarray(arr((3,))))


def test_leak_message_names_the_op_that_made_the_tracer():
    t = _leaks()["closure"]
    with pytest.raises(E.TracerLeakError, match="made by op cos"):
        np.asarray(t)


# ---------------------------------------------------------------------------------------------
# 3. library functions: pinv traces; masks and value-checked indices are named
# ---------------------------------------------------------------------------------------------


def _rank_deficient(m, n, r, dtype=np.float64):
    return (arr((m, r), dtype) @ arr((r, n), dtype)).astype(dtype)


PINV_INPUTS = [
    ("tall full rank", arr((5, 3))),
    ("wide full rank", arr((3, 5))),
    ("square rank 2", _rank_deficient(4, 4, 2)),
    ("tall rank 1", _rank_deficient(5, 3, 1)),
    ("zero", np.zeros((3, 2))),
    ("identity", np.eye(3)),
    ("batch mixed", np.stack([arr((4, 3)), _rank_deficient(4, 3, 2), np.zeros((4, 3))])),
    ("complex rank 2", _rank_deficient(4, 3, 2, np.complex128)),
    ("ill conditioned", np.diag([1.0, 1e-9, 1e-3])),
]


@pytest.mark.parametrize("name,a", PINV_INPUTS, ids=[p[0] for p in PINV_INPUTS])
def test_pinv_traces_and_equals_eager_and_numpy(name, a):
    x = tf.asarray(a)
    jp = tf.jit(tf.linalg.pinv)
    got, eager = np.asarray(jp(x)), np.asarray(tf.linalg.pinv(x))
    # same routes, selected inside the program (folded transposes may reorder GEMM operands)
    np.testing.assert_allclose(got, eager, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(eager).max()))
    rtol = max(a.shape[-2:]) * np.finfo(a.dtype).eps
    ref = np.linalg.pinv(a, rtol=rtol)
    np.testing.assert_allclose(got, ref, rtol=1e-7, atol=1e-9 * max(1.0, np.abs(ref).max()))
    assert jp.cache_stats().misses == 1


@pytest.mark.parametrize("rtol", [1e-2, 0.3, [1e-12, 0.5, 1e-12]])
def test_pinv_rtol_under_jit_as_static_value_and_as_traced_tensor(rtol):
    a = np.stack([np.diag([3.0, 1.0, 0.01]), np.diag([2.0, 1.5, 0.2]), _rank_deficient(3, 3, 2)])
    ref = np.linalg.pinv(a, rtol=np.asarray(rtol))
    eager = np.asarray(tf.linalg.pinv(tf.asarray(a), rtol=rtol))
    np.testing.assert_allclose(eager, ref, rtol=1e-10, atol=1e-10)
    static = tf.jit(tf.linalg.pinv, static_argnames="rtol")
    rt = tuple(rtol) if isinstance(rtol, list) else rtol
    np.testing.assert_allclose(
        np.asarray(static(tf.asarray(a), rtol=rt)), eager, rtol=1e-12, atol=1e-12
    )
    traced = tf.jit(lambda x, r: tf.linalg.pinv(x, rtol=r))
    np.testing.assert_allclose(
        np.asarray(traced(tf.asarray(a), tf.asarray(np.asarray(rtol)))),
        eager,
        rtol=1e-12,
        atol=1e-12,
    )


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_pinv_hermitian_matches_numpy_eagerly_and_under_jit(dtype):
    b = arr((4, 2), dtype)
    h = b @ b.conj().T  # rank 2, Hermitian
    s = arr((3, 3), dtype)
    indefinite = s + s.conj().T
    a = np.stack([h, np.pad(indefinite, ((0, 1), (0, 1)))])
    ref = np.linalg.pinv(a, hermitian=True, rtol=1e-10)
    eager = np.asarray(tf.linalg.pinv(tf.asarray(a), rtol=1e-10, hermitian=True))
    np.testing.assert_allclose(eager, ref, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(eager, np.linalg.pinv(a, rtol=1e-10), rtol=1e-9, atol=1e-10)
    jp = tf.jit(lambda x: tf.linalg.pinv(x, rtol=1e-10, hermitian=True))
    np.testing.assert_allclose(np.asarray(jp(tf.asarray(a))), eager, rtol=1e-12, atol=1e-12)
    with pytest.raises(E.ShapeError, match="square"):
        tf.linalg.pinv(tf.asarray(arr((3, 2))), hermitian=True)


def test_pinv_gradient_under_jit_equals_eager():
    for a in (arr((4, 3)), _rank_deficient(4, 3, 2)):
        f = lambda x: (tf.linalg.pinv(x) ** 2).sum()  # noqa: E731
        g_eager = np.asarray(tf.func.grad(f)(tf.asarray(a)))
        g_jit = np.asarray(tf.jit(tf.func.grad(f))(tf.asarray(a)))
        np.testing.assert_allclose(g_jit, g_eager, rtol=1e-10, atol=1e-10)


def test_boolean_mask_indexing_is_named_with_its_data_dependent_shape():
    x = tf.asarray(arr((5,)))
    f = lambda x: x[x > 0.0]  # noqa: E731
    np.testing.assert_array_equal(f(x), np.asarray(x)[np.asarray(x) > 0])  # eager works
    with pytest.raises(E.ConcretizationError) as ei:
        tf.jit(f)(x)
    msg = str(ei.value)
    assert msg.startswith("boolean mask indexing") and "data-dependent output shape" in msg, msg
    assert (
        "tf.where(mask, x, fill)" in msg
        and "made by op compare" in msg
        and ei.value.source[0] == __file__
    )
    # a mask that is not traced (a NumPy constant) keeps working under jit
    m = np.array([True, False, True, True, False])
    np.testing.assert_array_equal(tf.jit(lambda x: x[m])(x), np.asarray(x)[m])
    # the traceable formulation the message suggests
    g = lambda x: tf.where(x > 0.0, x, 0.0).sum()  # noqa: E731
    np.testing.assert_allclose(tf.jit(g)(x), np.asarray(x)[np.asarray(x) > 0].sum(), rtol=1e-15)
    # at[] with a traced mask
    with pytest.raises(E.ConcretizationError, match="^boolean mask indexing"):
        tf.jit(lambda x: x.at[x > 0.0].set(0.0))(x)


def test_integer_tensor_indices_constant_trace_traced_are_named():
    a = arr((4, 4))
    x = tf.asarray(a)
    idx_np = np.array([3, -1, 0])
    idx_t = tf.asarray(idx_np)
    # concrete indices (NumPy, or a captured tensor) are constants of the program
    np.testing.assert_array_equal(tf.jit(lambda x: x[idx_np])(x), a[idx_np])
    np.testing.assert_array_equal(tf.jit(lambda x: x[idx_t, 1:])(x), a[idx_np, 1:])
    np.testing.assert_array_equal(tf.jit(lambda x: x.at[idx_t].add(1.0))(x), x.at[idx_t].add(1.0))
    # a concrete out-of-range index raises NumPy's IndexError at trace time, as in eager
    bad = tf.asarray(np.array([4]))
    with pytest.raises(IndexError) as eager:
        x[bad]
    with pytest.raises(IndexError) as traced:
        tf.jit(lambda x: x[bad])(x)
    assert str(traced.value) == str(eager.value)
    # a traced index: named, with the traceable alternative
    for fun in (
        lambda x, i: x[i],
        lambda x, i: x[i, 0],
        lambda x, i: x[:, i[:2]],
        lambda x, i: x.at[i].set(0.0),
    ):
        np.asarray(fun(x, idx_t))  # eager works
        with pytest.raises(E.ConcretizationError) as ei:
            tf.jit(fun)(x, idx_t)
        msg = str(ei.value)
        assert (
            msg.startswith("integer-array indexing")
            and 'mode="clip"' in msg
            and "bounds check" in msg
        ), msg
    # a traced 0-d integer index too
    with pytest.raises(E.ConcretizationError, match="^integer-array indexing"):
        tf.jit(lambda x, i: x[i])(x, tf.asarray(np.int64(1)))


@pytest.mark.parametrize("mode", ["clip", "wrap"])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_take_with_traced_indices_traces_for_clip_and_wrap(mode, axis):
    a = arr((4, 3))
    idx = np.array([[0, 5, -1], [-7, 2, 3]])
    jt = tf.jit(lambda x, i: tf.take(x, i, axis=axis, mode=mode))
    got = jt(tf.asarray(a), tf.asarray(idx))
    np.testing.assert_array_equal(got, np.take(a, idx, axis=axis, mode=mode))
    np.testing.assert_array_equal(
        got, tf.take(tf.asarray(a), tf.asarray(idx), axis=axis, mode=mode)
    )
    assert jt.cache_stats().misses == 1


def test_take_with_traced_indices_and_mode_raise_is_named():
    x, i = tf.asarray(arr((4,))), tf.asarray(np.array([1, 2]))
    with pytest.raises(E.ConcretizationError) as ei:
        tf.jit(lambda x, i: tf.take(x, i))(x, i)
    assert str(ei.value).startswith("take: ") and 'mode="clip"' in str(ei.value)
    with pytest.raises(TypeError, match="indices must be integers"):
        tf.jit(lambda x, i: tf.take(x, i > 0, mode="clip"))(x, i)
    with pytest.raises(IndexError, match="empty"):
        tf.jit(lambda x, i: tf.take(x[:0], i, mode="wrap"))(x, i)


def test_where_one_argument_fails_as_in_eager():
    x = tf.asarray(arr((3,)))
    with pytest.raises(E.UnsupportedError) as eager:
        tf.where(x > 0)
    with pytest.raises(E.UnsupportedError) as traced:
        tf.jit(lambda x: tf.where(x > 0))(x)
    assert str(traced.value) == str(eager.value)


# ---------------------------------------------------------------------------------------------
# 4. shape/dtype/parameter errors at trace time; value errors from the compiled call
# ---------------------------------------------------------------------------------------------

TRACE_TIME = [
    ("matmul shape", lambda a, b: a @ b, (arr((2, 3)), arr((2, 3)))),
    ("reshape size", lambda a, b: tf.reshape(a, (4, 2)) + b.sum(), (arr((2, 3)), arr((2, 3)))),
    ("einsum subscripts", lambda a, b: tf.einsum("ij,jk->ik", a, b), (arr((2, 3)), arr((2, 3)))),
    ("einsum output label", lambda a, b: tf.einsum("ij,jk->il", a, b), (arr((2, 3)), arr((3, 3)))),
    ("sum axis", lambda a, b: tf.sum(a, axis=5) + b, (arr((2, 3)), arr((2, 3)))),
    ("transpose axes", lambda a, b: tf.transpose(a, (0, 0)) + b, (arr((2, 3)), arr((2, 3)))),
    ("broadcast", lambda a, b: a + b, (arr((2, 3)), arr((3, 2)))),
    ("dtype and", lambda a, b: a & b, (arr((2,)), arr((2,)))),
    (
        "dtype floor_divide complex",
        lambda a, b: a // b,
        (arr((2,), np.complex128), arr((2,), np.complex128)),
    ),
    ("dtype cast", lambda a, b: a.astype("x") + b, (arr((2,)), arr((2,)))),
    ("solve shape", lambda a, b: tf.linalg.solve(a, b), (arr((2, 3)), arr((2,)))),
    ("cholesky shape", lambda a, b: tf.linalg.cholesky(a) + b, (arr((2, 3)), arr((2, 3)))),
    ("concatenate", lambda a, b: tf.concatenate([a, b], axis=1), (arr((2, 3)), arr((3, 3)))),
    ("basic index", lambda a, b: a[5] + b, (arr((2, 3)), arr((3,)))),
]


@pytest.mark.parametrize("name,f,args", TRACE_TIME, ids=[t[0] for t in TRACE_TIME])
def test_shape_dtype_parameter_errors_raise_at_trace_time_with_the_eager_class_and_message(
    name, f, args
):
    ts = [tf.asarray(a) for a in args]
    with pytest.raises(Exception) as eager:
        f(*ts)
    assert isinstance(eager.value, (E.TenferroError, ValueError, TypeError, IndexError)), (
        eager.value
    )
    jf = tf.jit(f)
    with pytest.raises(type(eager.value)) as traced:
        jf.trace(*ts)  # tracing only: nothing runs
    assert type(traced.value) is type(eager.value)
    assert str(traced.value) == str(eager.value)
    with pytest.raises(type(eager.value)) as called:
        jf(*ts)
    assert str(called.value) == str(eager.value)


def _spd_or_not(n, pd):
    b = arr((n, n))
    a = b @ b.T + n * np.eye(n)
    return a if pd else a - 100.0 * n * np.eye(n)


VALUE_ERRORS = [
    (
        "integer floor division by zero",
        lambda a, b: a // b,
        (np.array([4, 5, 6]), np.array([1, 0, 2])),
        (np.array([4, 5, 6]), np.array([1, 2, 3])),
    ),
    (
        "integer remainder by zero",
        lambda a, b: a % b,
        (np.array([4, 5]), np.array([0, 2])),
        (np.array([4, 5]), np.array([3, 2])),
    ),
    (
        "cholesky not positive definite",
        lambda a, b: tf.linalg.cholesky(a) * b,
        (_spd_or_not(3, False), np.float64(2.0)),
        (_spd_or_not(3, True), np.float64(2.0)),
    ),
    (
        "solve singular",
        lambda a, b: tf.linalg.solve(a, b),
        (np.array([[1.0, 2.0], [2.0, 4.0]]), arr((2,))),
        (np.array([[1.0, 2.0], [3.0, 4.0]]), arr((2,))),
    ),
    (
        "inv singular",
        lambda a, b: tf.linalg.inv(a) + b,
        (np.zeros((2, 2)), np.float64(1.0)),
        (np.eye(2), np.float64(1.0)),
    ),
]


@pytest.mark.parametrize("name,f,bad,good", VALUE_ERRORS, ids=[v[0] for v in VALUE_ERRORS])
def test_value_errors_are_raised_by_the_compiled_call_with_the_eager_class_and_message(
    name, f, bad, good
):
    bad_t = [tf.asarray(np.asarray(a)) for a in bad]
    good_t = [tf.asarray(np.asarray(a)) for a in good]
    with pytest.raises(Exception) as eager:
        f(*bad_t)
    jf = tf.jit(f)
    traced = jf.trace(*bad_t)  # tracing reads no values: no error
    assert len(traced) >= 1
    with pytest.raises(type(eager.value)) as compiled:
        jf(*bad_t)
    assert type(compiled.value) is type(eager.value)
    assert str(compiled.value) == str(eager.value)
    # the same compiled program runs on good values, equal to eager
    np.testing.assert_allclose(
        np.asarray(jf(*good_t)), np.asarray(f(*good_t)), rtol=1e-13, atol=1e-13
    )
    assert jf.cache_stats().misses == 1 and jf.cache_stats().hits == 1


@pytest.mark.parametrize(
    "f",
    [
        tf.linalg.pinv,
        lambda x: tf.linalg.pinv(x, hermitian=True),
        tf.linalg.det,
        tf.linalg.inv,
        lambda x: tf.linalg.solve(x, x),
        tf.linalg.cholesky,
        tf.linalg.svdvals,
    ],
    ids=["pinv", "pinv hermitian", "det", "inv", "solve", "cholesky", "svdvals"],
)
def test_non_finite_input_linalg_errors_of_the_compiled_call_equal_eager(f):
    """Compositions that prefix ``linalg.<name>:`` eagerly get the same prefix from the compiled
    call (``_trace_errors``)."""
    a = tf.asarray(np.array([[2.0, np.nan], [0.5, 1.0]]))
    with pytest.raises(E.LinAlgError) as eager:
        f(a)
    jf = tf.jit(f)
    with pytest.raises(E.LinAlgError) as compiled:
        jf(a)
    assert str(compiled.value) == str(eager.value)
    good = tf.asarray(np.array([[2.0, 0.5], [0.5, 1.0]]))
    np.testing.assert_allclose(np.asarray(jf(good)), np.asarray(f(good)), rtol=1e-12, atol=1e-12)


def test_a_program_with_two_renaming_compositions_of_one_primitive_keeps_the_primitive_message():
    """``//`` and ``%`` rename the ``div`` primitive's error differently: the compiled call cannot
    tell which one failed, so it keeps the primitive's own message (never a wrong name)."""
    a, b = tf.asarray(np.array([3, 4])), tf.asarray(np.array([1, 0]))
    with pytest.raises(ZeroDivisionError) as compiled:
        tf.jit(lambda a, b: (a // b, a % b))(a, b)
    assert str(compiled.value).startswith("div: ")


def test_errors_messages_are_regular_expressions_safe():
    """The user's line is appended after the message (a ``match=`` on the message start works)."""
    with pytest.raises(E.ConcretizationError) as ei:
        tf.jit(r_float)(tf.asarray(SCALAR))
    first, at = str(ei.value).split("\n  at ")
    assert re.match(
        r"float\(\): the tensor is traced by tf\.jit \(made by op sin, shape \[\], dtype float64\)",
        first,
    )
    assert at.startswith(__file__)

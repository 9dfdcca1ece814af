"""NEP 18 (``Tensor.__array_function__``): NumPy functions on tenferro tensors run tenferro's
implementation, read host data for the value consumers, fall back to NumPy for untracked tensors
and raise ``TypeError`` for tracked ones — never silently dropping a gradient
(python-api.md, "NumPy and other libraries")."""

from __future__ import annotations

import io
import warnings
from collections import Counter
from typing import Any

import numpy as np
import pytest

import tenferro as tf
from tenferro import _nep18

RT = tf.default_runtime()
DISPATCHER = type(np.sum)
rng = np.random.default_rng(0)


def _dispatched(mod: Any, modname: str) -> list[tuple[str, Any]]:
    return [
        (f"{modname}.{n}", getattr(mod, n))
        for n in sorted(dir(mod))
        if isinstance(getattr(mod, n), DISPATCHER) and getattr(mod, n).__module__ == modname
    ]


FUNCS = _dispatched(np, "numpy") + _dispatched(np.linalg, "numpy.linalg")

_M = object()  # where the array argument goes in a candidate call


def _candidates() -> list[tuple[Any, ...]]:
    cond = np.array([[True, False, True]] * 3)
    return [
        (_M,),
        (_M, _M),
        (_M, 1),
        (_M, 0),
        (_M, _M, _M),
        ("ij,jk->ik", _M, _M),
        (_M, (9,)),
        (_M, (3, 3)),
        (_M, 2),
        (cond, _M, _M),
        (_M, np.array([0, 2])),
        (_M, np.array([[0], [2], [1]]), 1),
        (_M, 1, 0),
        (_M, [1]),
        (_M, 3),
        (_M, (1, 0)),
        (_M, 0, 1),
        (_M, np.float32),
        (1.0, _M),
        (_M, 0.5),
        (_M, [1, 2]),
        ([_M, _M],),
        ((_M, _M),),
    ]


def _put(c: Any, v: Any) -> Any:
    if c is _M:
        return v
    if isinstance(c, list):
        return [_put(x, v) for x in c]
    if isinstance(c, tuple):
        return tuple(_put(x, v) for x in c)
    return c


def _leaves(r: Any) -> list[Any]:
    if isinstance(r, (list, tuple)):
        return [y for x in r for y in _leaves(x)]
    return [r]


class _Probe:
    """Records whether NumPy dispatches a call to it (a call whose array argument NumPy's
    dispatcher does not see, like a list given to ``np.is_busday``, converts with
    ``__array__`` and is not a NEP 18 call)."""

    seen = False

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        _Probe.seen = True
        return NotImplemented


def _dispatches(f: Any, c: Any) -> bool:
    _Probe.seen = False
    try:
        f(*_put(c, _Probe()))
    except Exception:  # noqa: BLE001 - only whether NumPy dispatched matters
        pass
    return _Probe.seen


def _numpy_call(f: Any, c: Any, x: np.ndarray) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.seterr(all="ignore")
        return f(*_put(c, x.copy()))


# Decompositions with a gauge freedom (signs, phases, order of eigenpairs): their values are
# checked by tests/test_linalg.py.
_GAUGE = {"numpy.linalg.svd", "numpy.linalg.qr", "numpy.linalg.eig", "numpy.linalg.eigh"}
# Uninitialised values.
_NO_VALUES = {"numpy.empty_like"}


def _same(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True)


def test_walk_every_dispatched_function_with_a_tracked_argument(
    tmp_path: Any, monkeypatch: Any
) -> None:
    """Every ``__array_function__``-dispatched function of ``numpy`` and ``numpy.linalg``,
    called (where a generic call exists) with a tracked tensor: a tenferro tensor (tracked when
    float/complex and dependent on the input; equal to NumPy's values), a Python value (the
    allow-listed consumers, or a tenferro namesake returning one), or ``TypeError`` — never an
    ndarray."""
    monkeypatch.chdir(tmp_path)  # np.save("ij,jk->ik", x) and friends write files
    r = rng.standard_normal((3, 3))
    x = r @ r.T + 3 * np.eye(3)  # symmetric positive definite, distinct values
    dx = 1e-3 * rng.standard_normal((3, 3))
    dx = dx + dx.T
    outcome: Counter[str] = Counter()
    skipped: list[str] = []
    failures: list[str] = []
    vec = np.array([0.5, 1.25, 2.0])
    for name, f in FUNCS:
        call = None
        for c in _candidates():
            for arg in (x, vec):
                try:
                    r0 = _numpy_call(f, c, arg)
                except Exception:  # noqa: BLE001 - not a call NumPy takes: try the next one
                    continue
                if _dispatches(f, c):
                    call = (c, arg, r0)
                    break
            if call is not None:
                break
        if call is None:
            skipped.append(name)
            continue
        c, arg, r0 = call
        t = RT.variable(arg)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = f(*_put(c, t))
        except TypeError as e:
            assert name.removeprefix("numpy.") in str(e) or "numpy" in str(e), (name, e)
            outcome["TypeError"] += 1
            continue
        except Exception as e:  # noqa: BLE001 - the test reports any other exception
            failures.append(f"{name}{c}: {type(e).__name__}: {e}")
            continue
        leaves = _leaves(out)
        if any(isinstance(v, np.ndarray) for v in leaves):
            failures.append(f"{name}{c}: returned an ndarray")
            continue
        tensors = [v for v in leaves if isinstance(v, tf.Tensor)]
        if not tensors:
            plan = _nep18._plan(f)
            if name not in _nep18.CONSUMERS and plan.fn is None:
                failures.append(
                    f"{name}{c}: returned {type(out).__name__} without a tenferro namesake"
                )
            outcome["value"] += 1
            continue
        outcome["tensor"] += 1
        r1 = _numpy_call(f, c, arg + (dx if arg.ndim == 2 else dx[0]))
        for v, a0, a1 in zip(leaves, _leaves(r0), _leaves(r1)):
            if not isinstance(v, tf.Tensor):
                continue
            dependent = (
                np.asarray(a0).dtype.kind in "fc" and not _same(a0, a1) and name not in _NO_VALUES
            )
            if dependent and not v.requires_grad:
                failures.append(f"{name}{c}: result depends on the tracked input but is untracked")
            if name not in _GAUGE | _NO_VALUES and not _same(v, a0):
                failures.append(f"{name}{c}: values differ from NumPy's")
    print(
        f"dispatched functions: {len(FUNCS)}, called: {len(FUNCS) - len(skipped)}, "
        f"skipped: {len(skipped)} {skipped}, outcomes: {dict(outcome)}"
    )
    assert not failures, "\n".join(failures)
    assert len(FUNCS) >= 200 and len(FUNCS) - len(skipped) >= 190
    assert outcome["tensor"] >= 60 and outcome["TypeError"] >= 50


def test_list_argument_not_seen_by_numpy_is_a_documented_nep18_limit() -> None:
    # np.is_busday's dispatcher sees the list, not the tensors in it: NumPy converts them with
    # __array__ without asking tenferro (docs/python-api.md lists this limit).
    assert not _dispatches(np.is_busday, ([_M],))


def _fd_grad(f: Any, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


_W = {}


def _weights(shape: tuple[int, ...]) -> np.ndarray:
    if shape not in _W:
        _W[shape] = np.random.default_rng(len(shape) + sum(shape)).standard_normal(shape)
    return _W[shape]


def _loss_np(y: Any) -> float:
    y = np.asarray(y)
    return float(np.sum(_weights(y.shape) * y))


def _loss_tf(y: tf.Tensor) -> tf.Tensor:
    return tf.sum(tf.asarray(_weights(y.shape)) * y)


A = rng.standard_normal((3, 4))
B0 = rng.standard_normal((4, 2))

MIXED = {
    "tensordot": (lambda a, b: np.tensordot(a, b, axes=1), A, B0),
    "tensordot_axes_pairs": (lambda a, b: np.tensordot(a, b, axes=([1], [0])), A, B0),
    "einsum": (lambda a, b: np.einsum("ij,jk->ik", a, b), A, B0),
    "matmul": (lambda a, b: np.matmul(a, b), A, B0),
    "matmul_operator": (lambda a, b: a @ b, A, B0),
    "sum": (lambda a, b: np.sum(b, axis=0) * np.sum(a), A, B0),
    "stack": (lambda a, b: np.stack([a[:, :2], b[:3]], axis=1), A, B0),
    "concatenate": (lambda a, b: np.concatenate([a, b.T], axis=0), A, B0),
}


@pytest.mark.parametrize("name", sorted(MIXED))
@pytest.mark.parametrize("tracked_first", [False, True])
def test_mixed_ndarray_tracked_gradients_match_finite_differences(
    name: str, tracked_first: bool
) -> None:
    f, a, b = MIXED[name]
    if tracked_first:  # the tracked tensor is the first operand, the ndarray the second
        x = a
        fun = lambda v: f(v, b)  # noqa: E731
    else:
        x = b
        fun = lambda v: f(a, v)  # noqa: E731
    t = RT.variable(x)
    y = fun(t)
    assert isinstance(y, tf.Tensor) and y.requires_grad
    np.testing.assert_allclose(np.asarray(y), fun(x), rtol=1e-12, atol=1e-12)
    _loss_tf(y).backward()
    np.testing.assert_allclose(
        np.asarray(t.grad), _fd_grad(lambda v: _loss_np(fun(v)), x), rtol=1e-6, atol=1e-8
    )


def test_svd_of_tracked_gradient_matches_finite_differences() -> None:
    x = rng.standard_normal((4, 3))
    w = rng.standard_normal(3)
    wg = rng.standard_normal((4, 4))

    def loss_np(v: np.ndarray) -> float:
        u, s, vh = np.linalg.svd(v, full_matrices=False)
        return float(np.sum(w * s) + np.sum(wg * ((u * s**2) @ u.T)))  # gauge invariant

    t = RT.variable(x)
    u, s, vh = np.linalg.svd(t, full_matrices=False)
    assert all(isinstance(v, tf.Tensor) and v.requires_grad for v in (u, s, vh))
    loss = tf.sum(tf.asarray(w) * s) + tf.sum(tf.asarray(wg) * ((u * s**2) @ u.T))
    loss.backward()
    np.testing.assert_allclose(np.asarray(t.grad), _fd_grad(loss_np, x), rtol=1e-6, atol=1e-8)
    # NumPy's default full_matrices=True is honoured (tenferro's own default is the same).
    assert np.linalg.svd(t)[0].shape == (4, 4)


@pytest.mark.parametrize("order", ["ndarray_first", "tracked_first"])
def test_opt_einsum_contract_gradient_in_both_operand_orders(order: str) -> None:
    opt_einsum = pytest.importorskip("opt_einsum")
    a = rng.standard_normal((3, 4))
    c = rng.standard_normal((2, 5))
    b = RT.variable(rng.standard_normal((4, 2)))
    if order == "ndarray_first":
        out = opt_einsum.contract("ij,jk,kl->", a, b, c)
    else:
        out = opt_einsum.contract("jk,ij,kl->", b, a, c)
    assert isinstance(out, tf.Tensor) and out.requires_grad
    out.backward()
    # d/dB sum_ijkl A_ij B_jk C_kl = (sum_i A_ij)(sum_l C_kl)
    np.testing.assert_allclose(np.asarray(b.grad), np.einsum("ij,kl->jk", a, c), rtol=1e-12)
    # The case: contract(ndarray, tracked) of ones gives 3 per entry, not 1.
    b2 = RT.variable(np.ones((4, 2)))
    opt_einsum.contract("ij,jk->", np.ones((3, 4)), b2).backward()
    np.testing.assert_array_equal(np.asarray(b2.grad), np.full((4, 2), 3.0))


def test_consumers_read_host_data_of_tracked_tensors(tmp_path: Any) -> None:
    x = np.arange(6.0).reshape(2, 3)
    t = RT.variable(x)
    assert np.shape(t) == (2, 3) and np.ndim(t) == 2 and np.size(t) == 6
    assert np.allclose(t, x) is True and np.array_equal(t, x) and np.array_equiv(t, x)
    assert np.result_type(t, np.float32) == np.float64
    assert np.array2string(t) == np.array2string(x)
    assert np.array_repr(t) == np.array_repr(x)
    buf = io.BytesIO()
    np.save(buf, t)
    buf.seek(0)
    np.testing.assert_array_equal(np.load(buf), x)
    np.savez(tmp_path / "a.npz", t=t)
    np.testing.assert_array_equal(np.load(tmp_path / "a.npz")["t"], x)
    np.savetxt(tmp_path / "a.txt", t)
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "a.txt"), x)


def test_tracked_without_equivalent_raises_type_error_naming_the_function() -> None:
    t = RT.variable(np.arange(6.0))
    with pytest.raises(TypeError, match=r"numpy\.median: tenferro has no tf\.median.*\.detach\(\)"):
        np.median(t)
    with pytest.raises(
        TypeError,
        match=r"numpy\.linalg\.svd: tf\.linalg\.svd does not take the argument compute_uv",
    ):
        np.linalg.svd(t.reshape(2, 3), compute_uv=False)
    with pytest.raises(TypeError, match=r"numpy\.sum: tf\.sum does not take the argument where"):
        np.sum(t, where=np.ones(6, bool))
    # Untracked (or under no_grad): NumPy on host data.
    assert np.median(t.detach()) == np.median(np.arange(6.0))
    with tf.no_grad():
        assert np.median(t) == 2.5
    s = np.sum(t.detach(), where=np.arange(6) > 2)
    assert s == 12.0


def test_default_arguments_equal_to_numpy_defaults_pass_and_numpy_defaults_win() -> None:
    t = RT.variable(np.arange(6.0).reshape(2, 3))
    y = np.sum(t, axis=0, out=None)
    assert isinstance(y, tf.Tensor) and y.requires_grad
    assert np.tensordot(t, t, axes=([0, 1], [0, 1])).requires_grad
    # positional arguments map by name: np.sum(a, axis, dtype, out, keepdims)
    y = np.sum(t, 1, None, None, True)
    assert y.shape == (2, 1) and y.requires_grad


def test_untracked_tensor_falls_back_to_numpy_and_namesakes_return_tensors() -> None:
    x = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0])
    t = tf.asarray(x)
    assert isinstance(np.sum(t), tf.Tensor)
    # functions without a tenferro namesake (whichever of these tenferro still lacks)
    absent = [
        f
        for f in (np.median, np.percentile, np.nanmedian, np.unwrap, np.histogram)
        if _nep18._plan(f).fn is None
    ]
    assert absent
    for f in absent:
        args = (t, 50) if f is np.percentile else (t,)
        got = f(*args)
        want = f(*((x,) + args[1:]))
        for g, w in zip(_leaves(got), _leaves(want)):
            assert isinstance(g, (np.ndarray, np.generic)) and not isinstance(g, tf.Tensor)
            np.testing.assert_array_equal(g, w)


def test_other_array_types_get_not_implemented() -> None:
    class Other:
        def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
            return "other"

    t = tf.asarray([1.0, 2.0])
    assert (
        t.__array_function__(np.concatenate, (tf.Tensor, Other), ([t, Other()],), {})
        is NotImplemented
    )
    assert np.concatenate([t, Other()]) == "other"


_X = rng.standard_normal((3, 4))
_KW_CALLS = [
    ("mean", lambda x: np.mean(x, axis=1, keepdims=True)),
    ("mean_dtype", lambda x: np.mean(x, 0, np.float32)),
    ("std_ddof", lambda x: np.std(x, axis=0, ddof=1)),
    ("var_ddof", lambda x: np.var(x, ddof=1)),
    ("sum_keepdims", lambda x: np.sum(x, axis=(0, 1), keepdims=True)),
    ("prod", lambda x: np.prod(x, axis=-1)),
    ("max", lambda x: np.max(x, axis=0, keepdims=True)),
    ("amin", lambda x: np.amin(x, 1)),
    ("transpose", lambda x: np.transpose(x, (1, 0))),
    ("reshape_F", lambda x: np.reshape(x, (4, 3), order="F")),
    ("reshape_shape_kw", lambda x: np.reshape(x, shape=(2, 6))),
    ("ravel_F", lambda x: np.ravel(x, order="F")),
    ("clip", lambda x: np.clip(x, -0.5, 0.5)),
    ("clip_kw", lambda x: np.clip(x, min=-0.5, max=None)),
    ("where", lambda x: np.where(x > 0, x, 0.0)),
    ("split", lambda x: np.split(x, 2, axis=1)),
    ("round", lambda x: np.round(x, 2)),
    ("around", lambda x: np.around(x, decimals=1)),
    ("trace", lambda x: np.trace(x, offset=1)),
    ("diagonal", lambda x: np.diagonal(x, 1)),
    ("tensordot_int", lambda x: np.tensordot(x, x.T, 1)),
    ("einsum_optimize", lambda x: np.einsum("ij,kj->ik", x, x, optimize=True)),
    ("concatenate_none", lambda x: np.concatenate([x, x], axis=None)),
    ("stack_neg", lambda x: np.stack([x, x], axis=-1)),
    ("moveaxis", lambda x: np.moveaxis(x, 0, -1)),
    ("swapaxes", lambda x: np.swapaxes(x, 0, 1)),
    ("expand_dims", lambda x: np.expand_dims(x, (0, 2))),
    ("squeeze", lambda x: np.squeeze(x[None], axis=0)),
    ("flip", lambda x: np.flip(x, axis=1)),
    ("roll", lambda x: np.roll(x, 2, axis=1)),
    ("tile", lambda x: np.tile(x, (2, 1))),
    ("repeat", lambda x: np.repeat(x, 2, axis=0)),
    ("pad", lambda x: np.pad(x, 1, mode="constant", constant_values=2.0)),
    ("diff", lambda x: np.diff(x, n=2, axis=1)),
    ("kron", lambda x: np.kron(x, x)),
    ("outer", lambda x: np.outer(x, x)),
    ("tril", lambda x: np.tril(x, -1)),
    ("triu", lambda x: np.triu(x, k=1)),
    ("take", lambda x: np.take(x, [0, 2], axis=1)),
    (
        "take_along_axis",
        lambda x: np.take_along_axis(
            x, np.argsort(x.detach() if isinstance(x, tf.Tensor) else x, axis=1), axis=1
        ),
    ),
    ("cumsum", lambda x: np.cumsum(x, axis=1)),
    ("count_nonzero", lambda x: np.count_nonzero(x > 0, axis=0)),
    ("isclose", lambda x: np.isclose(x, x + 1e-9, rtol=0.0, atol=1e-12)),
    ("zeros_like", lambda x: np.zeros_like(x, dtype=np.float32)),
    ("full_like", lambda x: np.full_like(x, 3.0)),
    ("broadcast_to", lambda x: np.broadcast_to(x[0], (2, 4))),
    ("linalg_norm_fro", lambda x: np.linalg.norm(x, "fro")),
    ("linalg_norm_axis", lambda x: np.linalg.norm(x, ord=1, axis=1)),
    ("linalg_norm_2", lambda x: np.linalg.norm(x, 2)),
    ("linalg_svd_values", lambda x: np.linalg.svd(x, full_matrices=False)[1]),
    ("linalg_svdvals", lambda x: np.linalg.svdvals(x)),
    ("linalg_pinv", lambda x: np.linalg.pinv(x)),
    ("linalg_pinv_rcond", lambda x: np.linalg.pinv(x, rcond=1e-3)),
    ("linalg_matrix_transpose", lambda x: np.linalg.matrix_transpose(x)),
    ("linalg_det", lambda x: np.linalg.det(x[:, :3] @ x[:, :3].T)),
    (
        "linalg_eigvalsh_upper",
        lambda x: np.linalg.eigvalsh(x[:, :3] @ x[:, :3].T + np.triu(np.ones((3, 3)), 1), UPLO="U"),
    ),
    ("linalg_solve", lambda x: np.linalg.solve(x[:, :3] @ x[:, :3].T + np.eye(3), x)),
    ("linalg_trace", lambda x: np.linalg.trace(x, offset=1)),
]


@pytest.mark.parametrize("name", [n for n, _ in _KW_CALLS])
def test_numpy_keywords_give_numpy_values_or_type_error(name: str) -> None:
    """A tenferro namesake either takes NumPy's arguments and gives NumPy's values, or the call
    is refused (tracked: TypeError) / computed by NumPy (untracked): never silently wrong."""
    f = dict(_KW_CALLS)[name]
    want = f(_X)
    for make in (RT.variable, tf.asarray):
        t = make(_X)
        try:
            got = f(t)
        except TypeError as e:
            assert t.requires_grad, f"untracked {name}: {e}"
            assert "numpy." in str(e) and "detach()" in str(e)
            continue
        for g, w in zip(_leaves(got), _leaves(want)):
            assert not (t.requires_grad and isinstance(g, np.ndarray)), name
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-10, atol=1e-12, err_msg=name)
            assert np.asarray(g).shape == np.shape(w)


def test_traced_tensors_dispatch_to_tenferro_and_name_the_function_otherwise() -> None:
    seen = {}

    def f(x: tf.Tensor) -> tf.Tensor:
        seen["shape"] = np.shape(x)
        seen["rt"] = np.result_type(x, 1.0)
        return np.tensordot(np.ones((2, 3)), x, axes=1)

    np.testing.assert_allclose(np.asarray(tf.jit(f)(tf.asarray(np.eye(3)))), np.ones((2, 3)))
    assert seen == {"shape": (3, 3), "rt": np.float64}
    with pytest.raises(tf.errors.ConcretizationError, match="numpy.median"):
        tf.jit(lambda x: tf.asarray(np.median(x)))(tf.asarray(np.eye(3)))


def test_like_a_tracked_tensor_never_returns_an_ndarray() -> None:
    """NEP 35 (like=tensor): NumPy strips ``like`` from the arguments; the result is a tensor."""
    x = tf.default_runtime().variable(np.ones(3))
    for made, want in [
        (np.identity(3, like=x), np.identity(3)),
        (np.zeros((2, 3), order="F", like=x), np.zeros((2, 3))),
        (np.asarray([1, 2], order="F", like=x), np.asarray([1, 2])),
    ]:
        assert isinstance(made, tf.Tensor), type(made)
        np.testing.assert_array_equal(np.asarray(made), want)

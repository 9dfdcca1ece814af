"""Sliced contractions (``memory_limit=``, ``executor=``; issue 25): the plan meets the limit,
values equal the unsliced contraction (1e-12 relative), gradients equal the unsliced ones and
central finite differences, forward mode, errors, and one process-pool and one Dask run."""

from __future__ import annotations

import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import EinsumError

from test_einsum_instances import DATA, FILES, HEAVY, load


def regular_graph(n: int, seed: int) -> list[tuple[int, int]]:
    """A random 3-regular simple graph on ``n`` nodes (pairing model, rejection)."""
    rng = np.random.default_rng(seed)
    while True:
        stubs = rng.permutation(np.repeat(np.arange(n), 3))
        edges = [tuple(sorted((int(a), int(b)))) for a, b in stubs.reshape(-1, 2)]
        if all(a != b for a, b in edges) and len(set(edges)) == len(edges):
            return edges


def network(n: int, seed: int, d: int, dtype: np.dtype, open_legs: int = 0):
    """Subscripts and operands of a random 3-regular network with bond ``d``; the first
    ``open_legs`` nodes carry an output leg of size 2."""
    edges = regular_graph(n, seed)
    labels = [[] for _ in range(n)]
    for e, (a, b) in enumerate(edges):
        labels[a].append(chr(0x4E00 + e))
        labels[b].append(labels[a][-1])
    out = ""
    for k in range(open_legs):
        c = chr(0x4E00 + 500 + k)
        labels[k].append(c)
        out += c
    subs = ",".join("".join(t) for t in labels) + "->" + out
    rng = np.random.default_rng(seed + 1)
    ops = []
    for t in labels:
        shape = tuple(2 if c in out else d for c in t)
        a = rng.standard_normal(shape)
        if dtype.kind == "c":
            a = a + 1j * rng.standard_normal(shape)
        ops.append(a.astype(dtype))
    return subs, ops


def rel(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


# the 200-site MPS ring needs ~10^120 slices at 1/8 (every boundary must be cut): 5 s to find
@pytest.mark.parametrize(
    "name", [f for f in FILES if f not in HEAVY and "inner_product_200" not in f]
)
def test_instance_plans_meet_an_eighth_of_the_largest(name: str) -> None:
    d = json.loads((DATA / name).read_text())
    subscripts = d["format_string"]
    ops = [np.broadcast_to(0.0, tuple(s)) for s in d["shapes"]]  # shapes only
    path = [tuple(p) for p in d["paths"]["opt_flops"]["path"]]
    _, info = tf.einsum_path(subscripts, *ops, optimize=path)
    limit = max(1, info.largest_intermediate // 8)
    got, sinfo = tf.einsum_path(subscripts, *ops, optimize=path, memory_limit=limit)
    sl = sinfo.slicing
    assert got == path
    assert sl.largest_intermediate <= limit
    assert sl.unsliced_largest_intermediate <= info.largest_intermediate
    assert sl.nslices == int(np.prod(sl.sizes, dtype=object))
    assert (sl.nslices > 1) == (sl.unsliced_largest_intermediate > limit)
    assert sl.cost == info.opt_cost and sl.sliced_cost >= sl.cost
    assert sl.overhead == pytest.approx(sl.sliced_cost / sl.cost)


@pytest.mark.parametrize("name", sorted(f for f in FILES if f not in HEAVY)[:3])
def test_instance_values_equal_unsliced(name: str) -> None:
    subscripts, ops, path = load(name)
    _, info = tf.einsum_path(subscripts, *ops, optimize=path)
    limit = max(1, info.largest_intermediate // 8)
    ts = [tf.asarray(o) for o in ops]
    ref = np.asarray(tf.einsum(subscripts, *ts, optimize=path))
    out = np.asarray(tf.einsum(subscripts, *ts, optimize=path, memory_limit=limit))
    assert out.shape == ref.shape
    assert rel(out, ref) <= 1e-12 or np.allclose(out, ref, rtol=1e-12, atol=0)


@pytest.mark.parametrize("dtype", [np.dtype(np.float64), np.dtype(np.complex128)])
@pytest.mark.parametrize("open_legs", [0, 2])
def test_regular_graph_values_and_plan(dtype: np.dtype, open_legs: int) -> None:
    subs, ops = network(12, 3, 3, dtype, open_legs)
    _, info = tf.einsum_path(subs, *ops)
    limit = info.largest_intermediate // 8
    _, sinfo = tf.einsum_path(subs, *ops, memory_limit=limit)
    assert sinfo.slicing.largest_intermediate <= limit
    ts = [tf.asarray(o) for o in ops]
    ref = np.asarray(tf.einsum(subs, *ts))
    out = np.asarray(tf.einsum(subs, *ts, memory_limit=limit))
    assert out.dtype == dtype and out.shape == ref.shape
    assert rel(out, ref) <= 1e-12


def test_output_labels_are_placed() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((6, 5)), rng.standard_normal((5, 4))
    _, info = tf.einsum_path("ij,jk->ik", a, b, memory_limit=4)
    assert {"i", "k"} & set(info.slicing.labels)
    out = np.asarray(tf.einsum("ij,jk->ik", tf.asarray(a), tf.asarray(b), memory_limit=4))
    np.testing.assert_allclose(out, a @ b, rtol=1e-13)
    # a diagonal of a sliced label within an operand
    m = rng.standard_normal((5, 5, 3))
    v = rng.standard_normal(3)
    out = tf.einsum("iik,k->i", tf.asarray(m), tf.asarray(v), memory_limit=1)
    np.testing.assert_allclose(np.asarray(out), np.einsum("iik,k->i", m, v), rtol=1e-13)


def _loss(subs, ts, **kw):
    z = tf.einsum(subs, *ts, **kw)
    return tf.sum((z * tf.conj(z)).real)


@pytest.mark.parametrize("dtype", [np.dtype(np.float64), np.dtype(np.complex128)])
def test_gradients_match_unsliced_and_finite_differences(dtype: np.dtype) -> None:
    subs, ops = network(8, 5, 2, dtype, open_legs=1)
    _, info = tf.einsum_path(subs, *ops)
    limit = max(1, info.largest_intermediate // 8)

    def f_sliced(*ts):
        return _loss(subs, ts, memory_limit=limit)

    def f_plain(*ts):
        return _loss(subs, ts)

    ts = [tf.asarray(o) for o in ops]
    argnums = tuple(range(len(ops)))
    v1, g1 = tf.func.value_and_grad(f_sliced, argnums=argnums)(*ts)
    v0, g0 = tf.func.value_and_grad(f_plain, argnums=argnums)(*ts)
    assert abs(float(v1) - float(v0)) <= 1e-12 * abs(float(v0))
    for a, b in zip(g1, g0):
        assert rel(a, b) <= 1e-12
    # central differences along one random direction per operand
    rng = np.random.default_rng(1)
    h = 1e-6
    for k in (0, len(ops) - 1):
        d = rng.standard_normal(ops[k].shape)
        if dtype.kind == "c":
            d = d + 1j * rng.standard_normal(ops[k].shape)
        d = d.astype(dtype)

        def at(s):
            xs = list(ts)
            xs[k] = tf.asarray(ops[k] + s * d)
            return float(f_plain(*xs))

        fd = (at(h) - at(-h)) / (2 * h)
        # Hermitian convention: dL = Re <g, d>
        an = float(np.real(np.vdot(np.asarray(g1[k]), d)))
        assert abs(fd - an) <= 1e-6 * max(1.0, abs(an))


def test_backward_records_one_node_and_forward_mode() -> None:
    subs, ops = network(8, 7, 2, np.dtype(np.float64))
    rt = tf.Runtime()
    leaves = [rt.variable(o) for o in ops]
    z = tf.einsum(subs, *leaves, memory_limit=4)
    z.backward()
    plain = [rt.variable(o) for o in ops]
    tf.einsum(subs, *plain).backward()
    for a, b in zip(leaves, plain):
        assert rel(a.grad, b.grad) <= 1e-12
    ts = [tf.asarray(o) for o in ops]
    tangent = [tf.asarray(np.ones_like(o)) for o in ops]
    _, t1 = tf.func.jvp(lambda *xs: tf.einsum(subs, *xs, memory_limit=4), ts, tangent)
    _, t0 = tf.func.jvp(lambda *xs: tf.einsum(subs, *xs), ts, tangent)
    assert abs(float(t1) - float(t0)) <= 1e-12 * abs(float(t0))


def test_errors_name_the_limit() -> None:
    a = np.ones((3, 3))
    with pytest.raises(EinsumError, match="memory_limit=0"):
        tf.einsum_path("ij,jk->ik", a, a, memory_limit=0)
    with pytest.raises(EinsumError, match="memory_limit=-2"):
        tf.einsum("ij,jk->ik", a, a, memory_limit=-2)
    with pytest.raises(EinsumError, match="memory_limit=1.5"):
        tf.einsum("ij,jk->ik", a, a, memory_limit=1.5)
    # a label repeated in the output cannot be sliced
    with pytest.raises(EinsumError, match="memory_limit=2 cannot be met"):
        tf.einsum("i->ii", tf.asarray(np.ones(3)), memory_limit=2)


def _check_executor(executor) -> None:
    subs, ops = network(8, 11, 2, np.dtype(np.float64), open_legs=1)
    ts = [tf.asarray(o) for o in ops]
    limit = 8
    v0, g0 = tf.func.value_and_grad(
        lambda *xs: _loss(subs, xs, memory_limit=limit), argnums=(0, 3)
    )(*ts)
    v1, g1 = tf.func.value_and_grad(
        lambda *xs: _loss(subs, xs, memory_limit=limit, executor=executor), argnums=(0, 3)
    )(*ts)
    assert abs(float(v1) - float(v0)) <= 1e-12 * abs(float(v0))
    for a, b in zip(g1, g0):
        assert rel(a, b) <= 1e-12


def test_process_pool_executor_and_shut_down_error() -> None:
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=ctx) as ex:
        _check_executor(ex)
        subs, ops = network(8, 11, 2, np.dtype(np.float64))
        rt = tf.Runtime()
        leaves = [rt.variable(o) for o in ops]
        z = tf.einsum(subs, *leaves, memory_limit=8, executor=ex)
    with pytest.raises(RuntimeError, match="ProcessPoolExecutor"):
        z.backward()


def test_dask_local_cluster() -> None:
    distributed = pytest.importorskip("dask.distributed")
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        _check_executor(client.get_executor())


def test_jit_and_second_order() -> None:
    rng = np.random.default_rng(0)
    a, b, c = (tf.asarray(rng.standard_normal(s)) for s in ((4, 5), (5, 6), (6, 4)))

    def f(x, y, z, **kw):
        return tf.einsum("ij,jk,ki->", x, y, z, **kw)

    sliced = tf.jit(lambda x, y, z: f(x, y, z, memory_limit=4))
    assert abs(float(sliced(a, b, c)) - float(f(a, b, c))) <= 1e-12 * abs(float(f(a, b, c)))
    g1 = tf.jit(tf.func.grad(lambda x, y, z: f(x, y, z, memory_limit=4)))(a, b, c)
    assert rel(g1, tf.func.grad(f)(a, b, c)) <= 1e-12
    h1 = tf.func.hessian(lambda x: f(x, b, c, memory_limit=4) ** 2)(a)
    h0 = tf.func.hessian(lambda x: f(x, b, c) ** 2)(a)
    assert rel(h1, h0) <= 1e-12

    def gg(x, **kw):
        return tf.sum(tf.func.grad(lambda x: f(x, b, c, **kw) ** 2)(x) ** 2)

    assert rel(tf.func.grad(lambda x: gg(x, memory_limit=4))(a), tf.func.grad(gg)(a)) <= 1e-12


def test_a_memory_limit_beyond_every_tensor_is_no_limit() -> None:
    # 2**128 and up raised a bare OverflowError from the planner binding.
    a, b = np.arange(12.0).reshape(3, 4), np.arange(20.0).reshape(4, 5)
    for limit in (2**127, 2**128, 10**40):
        path, info = tf.einsum_path("ij,jk->ik", a, b, memory_limit=limit)
        assert path == [(0, 1)]
        got = tf.einsum("ij,jk->ik", tf.asarray(a), tf.asarray(b), memory_limit=limit)
        np.testing.assert_allclose(np.asarray(got), a @ b)


def test_sliced_output_labels_under_jit_jvp_and_second_order() -> None:
    """Output labels sliced: eager results are placed in one array; traced (tf.jit) and
    recorded (second order) ones are concatenated — the same values either way."""
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal(s) for s in ((6, 5), (5, 7), (7, 4)))
    subs = "ij,jk,kl->il"
    _, info = tf.einsum_path(subs, a, b, c, memory_limit=6)
    assert set(info.slicing.labels) & {"i", "l"}
    ta, tb, tc = (tf.asarray(x) for x in (a, b, c))
    ref = a @ b @ c

    def f(x, y, z, **kw):
        return tf.einsum(subs, x, y, z, **kw)

    eager = np.asarray(f(ta, tb, tc, memory_limit=6))
    assert rel(eager, ref) <= 1e-13
    jitted = np.asarray(tf.jit(lambda x, y, z: f(x, y, z, memory_limit=6))(ta, tb, tc))
    assert rel(jitted, ref) <= 1e-13

    def loss(x, **kw):
        return tf.sum(f(x, tb, tc, **kw) ** 2)

    g1 = tf.jit(tf.func.grad(lambda x: loss(x, memory_limit=6)))(ta)
    assert rel(g1, tf.func.grad(loss)(ta)) <= 1e-12
    # forward mode: tangents placed per output block
    da = rng.standard_normal(a.shape)
    _, t1 = tf.func.jvp(lambda x: f(x, tb, tc, memory_limit=6), (ta,), (tf.asarray(da),))
    assert rel(t1, da @ b @ c) <= 1e-13
    _, t2 = tf.jit(lambda x, d: tf.func.jvp(lambda y: f(y, tb, tc, memory_limit=6), (x,), (d,)))(
        ta, tf.asarray(da)
    )
    assert rel(t2, da @ b @ c) <= 1e-13
    # second order through the placed output: the Hessian-vector product of the loss
    h1 = tf.func.hessian(lambda x: loss(x, memory_limit=6))(ta)
    h0 = tf.func.hessian(loss)(ta)
    assert rel(h1, h0) <= 1e-12
    # gradients of a real operand in a complex contraction stay real
    cc = (rng.standard_normal(c.shape) + 1j * rng.standard_normal(c.shape)).astype(complex)
    g = tf.func.grad(lambda x: tf.sum(tf.abs(f(x, tb, tf.asarray(cc), memory_limit=6)) ** 2))(ta)
    g0 = tf.func.grad(lambda x: tf.sum(tf.abs(f(x, tb, tf.asarray(cc))) ** 2))(ta)
    assert np.dtype(g.dtype) == np.float64 and rel(g, g0) <= 1e-12


def test_breaker_cases_of_the_placed_output() -> None:
    """Found by the breaker: a tangent term concrete and another traced under tf.jit; a
    non-default runtime's tensor with a raw NumPy operand; a non-executor; raw NumPy operands
    read in place as the unsliced einsum reads them."""
    rng = np.random.default_rng(0)
    a, b, da, d0 = (rng.standard_normal(s) for s in ((3, 6), (6, 4), (3, 6), (6, 4)))
    A, B, dA = tf.asarray(a), tf.asarray(b), tf.asarray(da)

    def tangent(d, **kw):
        f = lambda u, v: tf.einsum("ij,jk->ik", u, v, **kw)  # noqa: E731
        return tf.func.jvp(f, (A, B), (dA, d))[1]

    ref = da @ b + a @ d0
    assert rel(tf.jit(lambda d: tangent(d, memory_limit=4))(tf.asarray(d0)), ref) <= 1e-13
    g = tf.func.grad(lambda d: tf.sum(tangent(d, memory_limit=4) ** 2))(tf.asarray(d0))
    assert rel(g, a.T @ (2 * ref)) <= 1e-13
    # the tensors' runtime for the raw operands
    rt = tf.Runtime()
    x = rt.variable(a)
    y = tf.einsum("ij,jk->ik", x, b, memory_limit=4)
    assert y.runtime.id == rt.id and rel(y, a @ b) <= 1e-13
    y.sum().backward()
    assert rel(x.grad, np.ones((3, 4)) @ b.T) <= 1e-13
    with pytest.raises(TypeError, match="executor='foo' is not a concurrent.futures.Executor"):
        tf.einsum("ij,jk->ik", a, b, memory_limit=4, executor="foo")
    # raw NumPy operands are read in place: no copy of an operand far above the limit
    big = rng.standard_normal((2000, 250))
    v = rng.standard_normal(250)
    engine = tf.default_engine()
    engine.reset_peak_memory_stats()
    base = engine.buffer_pool_stats().live_bytes
    out = tf.einsum("ij,j->i", big, v, memory_limit=1000)
    assert engine.buffer_pool_stats().peak_live_bytes - base < big.nbytes // 8
    assert rel(out, big @ v) <= 1e-13


def test_placed_blocks_turn_to_kept_blocks_when_a_traced_one_follows() -> None:
    """The safety net of ``_Placed``: concrete blocks written, then a traced one (callers
    decide from their inputs, so this only guards against a caller that did not)."""
    from tenferro import _sliced

    plan = _sliced.SlicePlan(
        {
            "labels": ["i"],
            "sizes": [2],
            "cost": 1,
            "sliced_cost": 1,
            "overhead": 1.0,
            "largest": 1,
            "unsliced_largest": 2,
            "footprint": 1,
            "memory_limit": 1,
            "operand_axes": [[[0, 0]]],
            "output_axes": [[0, 0]],
            "output_shape": [2, 3],
        }
    )
    rows = np.arange(6.0).reshape(2, 3)

    def f(x):
        p = _sliced._Placed(plan, plan.output_axes, (2, 3), np.float64)
        p.add((0,), tf.asarray(rows[:1]))
        p.add((0,), tf.asarray(rows[:1]))  # summed into the same block
        p.add((1,), x[1:] * 2.0)  # traced
        return p.result(_sliced._XP())

    out = tf.jit(f)(tf.asarray(rows))
    np.testing.assert_array_equal(np.asarray(out), np.stack([2 * rows[0], 2 * rows[1]]))

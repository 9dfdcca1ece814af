"""Pickling and copying tensors (``pickle`` protocols 2-5 with out-of-band buffers, ``copy``,
``copy.deepcopy``), ``format``/``round`` of 0-d tensors, and the ecosystem uses they enable
(``ProcessPoolExecutor`` with the spawn context, ``matplotlib``)."""

from __future__ import annotations

import concurrent.futures
import copy
import multiprocessing
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tenferro as tf
from tenferro import errors as E

DTYPES = ["bool", "int32", "int64", "float32", "float64", "complex64", "complex128"]


@st.composite
def host_arrays(draw: st.DrawFn) -> np.ndarray:
    """Arrays of every dtype, rank 0-3 (sizes 0-4), C or F order, possibly strided."""
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=0, max_size=3)))
    n = int(np.prod(shape)) if shape else 1
    seed = draw(st.integers(0, 2**16))
    vals = np.random.default_rng(seed).standard_normal(2 * n) * 10
    a = (vals[:n] + (1j * vals[n:] if dtype.kind == "c" else 0)).astype(dtype).reshape(shape)
    if draw(st.booleans()):
        a = np.asfortranarray(a)
    if a.ndim and draw(st.booleans()):  # a strided view: every other element along an axis
        ax = draw(st.integers(0, a.ndim - 1))
        big = np.repeat(a, 2, axis=ax)
        a = big[(slice(None),) * ax + (slice(None, None, 2),)]
    return a


@st.composite
def tensors(draw: st.DrawFn) -> tf.Tensor:
    a = draw(host_arrays())
    how = draw(st.sampled_from(["asarray", "share", "variable", "view"]))
    if how == "variable" and a.dtype.kind in "fc":
        return tf.default_runtime().variable(a)
    if how == "share":  # the tensor keeps NumPy's strides (C, F or strided)
        return tf.asarray(a, copy=False)
    t = tf.asarray(a)
    if how == "view" and t.ndim >= 2:
        return t.T  # a transposed view
    return t


def _check_same(u: tf.Tensor, t: tf.Tensor) -> None:
    a, b = np.asarray(u), np.asarray(t)
    assert isinstance(u, tf.Tensor)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)
    # memory order: a C- or F-contiguous tensor stays so (other strides become C-contiguous)
    if b.flags.c_contiguous or b.flags.f_contiguous:
        assert (a.flags.c_contiguous, a.flags.f_contiguous) == (
            b.flags.c_contiguous,
            b.flags.f_contiguous,
        )
    else:
        assert a.flags.c_contiguous
    assert u.requires_grad == t.requires_grad


@settings(max_examples=150, deadline=None)
@given(tensors(), st.sampled_from([2, 3, 4, 5]))
def test_pickle_round_trip(t: tf.Tensor, protocol: int) -> None:
    u = pickle.loads(pickle.dumps(t, protocol=protocol))
    _check_same(u, t)
    assert u.runtime is tf.default_runtime()
    if u.requires_grad:
        assert tf._tenferro._is_leaf(u) and u.grad is None


@settings(max_examples=100, deadline=None)
@given(tensors())
def test_pickle_protocol5_out_of_band(t: tf.Tensor) -> None:
    buffers: list[pickle.PickleBuffer] = []
    data = pickle.dumps(t, protocol=5, buffer_callback=buffers.append)
    a = np.asarray(t)
    if a.flags.c_contiguous or a.flags.f_contiguous:
        assert len(buffers) == 1 and buffers[0].raw().nbytes == a.nbytes
        assert len(data) < 400  # the data is not in the stream
    u = pickle.loads(data, buffers=buffers)
    _check_same(u, t)


@settings(max_examples=150, deadline=None)
@given(tensors())
def test_deepcopy_round_trip(t: tf.Tensor) -> None:
    u = copy.deepcopy(t)
    _check_same(u, t)
    assert u is not t and u.runtime is t.runtime
    if t.size and not t.requires_grad:
        assert not np.shares_memory(np.asarray(u), np.asarray(t))
    assert copy.copy(t) is t  # tensors are immutable


def test_deepcopy_of_tracked_leaf_is_a_new_leaf_with_its_own_gradient() -> None:
    rt = tf.Runtime()
    x = rt.variable(np.array([1.0, 2.0]))
    (x * x).sum().backward()
    y = copy.deepcopy(x)
    assert y.requires_grad and y.grad is None and y.runtime is rt
    (y * 3.0).sum().backward()
    np.testing.assert_array_equal(np.asarray(y.grad), [3.0, 3.0])
    np.testing.assert_array_equal(np.asarray(x.grad), [2.0, 4.0])
    # deepcopy of a container keeps sharing: one copy per tensor
    d = copy.deepcopy({"a": x, "b": x})
    assert d["a"] is d["b"]


def test_unpickled_tensor_belongs_to_the_factories_runtime() -> None:
    rt = tf.Runtime()
    t = tf.asarray([1.0, 2.0])
    data = pickle.dumps(t)
    with rt.session(tf.CpuEngine(threads=1)):
        u = pickle.loads(data)
        assert u.runtime is rt is tf.asarray(0.0).runtime
    assert pickle.loads(data).runtime is tf.default_runtime()


def test_tracked_non_leaf_refuses_pickle_and_deepcopy() -> None:
    x = tf.default_runtime().variable(np.array([1.0, 2.0]))
    y = x * 2.0
    for f in (pickle.dumps, copy.deepcopy):
        with pytest.raises(TypeError, match=r"tracked non-leaf.*detach\(\)"):
            f(y)
    np.testing.assert_array_equal(np.asarray(pickle.loads(pickle.dumps(y.detach()))), [2.0, 4.0])
    with tf.no_grad():  # values computed without recording are untracked: they pickle
        z = x * 2.0
    assert not pickle.loads(pickle.dumps(z)).requires_grad


def test_traced_tensor_refuses_pickle() -> None:
    def f(x: tf.Tensor) -> tf.Tensor:
        pickle.dumps(x)
        return x

    with pytest.raises(E.ConcretizationError, match="pickle"):
        tf.jit(f)(tf.asarray([1.0]))


def test_protocol5_of_100mb_tensor_makes_no_extra_copy() -> None:
    """Peak RSS of pickling (out of band) and unpickling a 100 MB tensor, in a fresh process:
    within a small margin of the tensor itself (a copy would add 100 MB)."""
    code = textwrap.dedent(
        """
        import pickle, numpy as np, tenferro as tf
        def peak():
            # This process's own high-water mark (VmHWM, MiB). Not getrusage's ru_maxrss: Linux
            # carries the parent's peak across fork and exec into it (a large pytest process
            # would hide everything measured here).
            with open("/proc/self/status") as f:
                line = next(l for l in f if l.startswith("VmHWM:"))
            return int(line.split()[1]) / 1024
        n = 100 * 2**20 // 8
        t = tf.ones(n)  # made in place: no transient copy raises the high-water mark
        base = peak()
        bufs = []
        data = pickle.dumps(t, protocol=5, buffer_callback=bufs.append)
        u = pickle.loads(data, buffers=bufs)
        assert float(u.sum()) == n
        oob = peak() - base
        del u, bufs, data
        u2 = pickle.loads(pickle.dumps(t, protocol=4))  # in band: the stream holds a copy
        assert float(u2.sum()) == n
        inband = peak() - base
        print(f"{base:.1f} {oob:.1f} {inband:.1f}")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    base, oob, inband = map(float, out.stdout.split())
    print(
        f"peak RSS MiB: after making the tensor {base}, growth for protocol 5 out of band {oob}, "
        f"growth for protocol 4 (in-band stream + unpickled copy) {inband}"
    )
    assert oob < 20, oob  # no extra 100 MB copy
    assert inband > 90, inband  # the measurement sees a copy when there is one


def _square_sum(t: tf.Tensor) -> tf.Tensor:
    return tf.sum(t * t)


def test_spawn_process_pool_maps_tenferro_function_over_tensors() -> None:
    xs = [tf.asarray(np.arange(n, dtype=np.float64)) for n in (3, 4, 5)]
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=ctx) as ex:
        sums = list(ex.map(tf.sum, xs))
        squares = list(ex.map(_square_sum, xs))
    assert all(isinstance(s, tf.Tensor) for s in sums + squares)
    assert [float(s) for s in sums] == [3.0, 6.0, 10.0]
    assert [float(s) for s in squares] == [5.0, 14.0, 30.0]


def test_matplotlib_plot_of_tensors() -> None:
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    x = tf.asarray(np.linspace(0.0, 1.0, 5))
    y = tf.default_runtime().variable(np.linspace(0.0, 1.0, 5) ** 2)
    fig, ax = plt.subplots()
    try:
        (line,) = ax.plot(x, y.detach())
        np.testing.assert_array_equal(line.get_xdata(), np.asarray(x))
        (line2,) = plt.plot(x)
        np.testing.assert_array_equal(line2.get_ydata(), np.asarray(x))
        fig.canvas.draw()
    finally:
        plt.close(fig)


def test_format_and_round_of_0d_tensors_follow_numpy_scalars() -> None:
    for v in (np.float64(1.23456789), np.float32(-2.5), np.int64(1234), np.int32(-7)):
        t = tf.asarray(v)
        for spec in ("", ".6f", "10.3e", "+g"):
            if v.dtype.kind == "i" and spec in (".6f", "10.3e", "+g"):
                assert format(t, spec) == format(v.item(), spec)
            else:
                assert format(t, spec) == format(v, spec)
        for nd in (None, 0, 1, 3, -1):
            got, want = (round(t), round(v)) if nd is None else (round(t, nd), round(v, nd))
            assert type(got) is type(want) and got == want
    assert f"{tf.asarray(2.0 / 3.0):.6f}" == "0.666667"
    assert format(tf.asarray(1 + 2j), ".2f") == format(np.complex128(1 + 2j), ".2f")
    with pytest.raises(ValueError):
        round(tf.asarray(np.nan))
    for bad in (tf.asarray([1.5]), tf.asarray([[1.5]]), tf.asarray(True), tf.asarray(1 + 1j)):
        with pytest.raises(TypeError):
            round(bad, 1)
    with pytest.raises(TypeError):
        format(tf.asarray([1.0, 2.0]), ".2f")  # as ndarray.__format__
    with pytest.raises(TypeError):
        format(np.asarray([1.0, 2.0]), ".2f")
    assert format(tf.asarray([1.0, 2.0]), "") == str(np.asarray([1.0, 2.0]))
    # a tracked 0-d tensor rounds to a number (a value request, as float(t))
    assert round(tf.default_runtime().variable(np.float64(2.345)), 2) == round(np.float64(2.345), 2)


def test_copies_inside_a_transform_keep_the_derivative_or_refuse() -> None:
    """Inside tf.func transforms a tensor being differentiated is not cut from the graph:
    deepcopy returns it (its derivative flows, checked against the closed form 2x), pickle
    raises TypeError (a copy would have a silent zero derivative)."""
    x0 = tf.asarray(np.array([1.0, 2.0, 3.0]))
    g = tf.func.grad(lambda x: tf.sum(copy.deepcopy(x) ** 2))(x0)
    np.testing.assert_allclose(np.asarray(g), [2.0, 4.0, 6.0])
    _, t = tf.func.jvp(lambda x: tf.sum(copy.deepcopy(x) ** 2), (x0,), (tf.asarray(np.ones(3)),))
    assert float(t) == 12.0
    with pytest.raises(TypeError, match="transform"):
        tf.func.grad(lambda x: tf.sum(pickle.loads(pickle.dumps(x)) ** 2))(x0)
    # The detached value pickles (no derivative through it, by request).
    g = tf.func.grad(lambda x: tf.sum(pickle.loads(pickle.dumps(x.detach())) * x))(x0)
    np.testing.assert_allclose(np.asarray(g), [1.0, 2.0, 3.0])

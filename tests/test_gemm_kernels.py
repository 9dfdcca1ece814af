"""The engine's own GEMM kernels (issue 26): every CPU kernel level this machine can run is forced
in turn and checked against NumPy — small and batched-small products over C/F-ordered,
transposed, reversed, strided, zero-size and rank-edge operands, real and complex, with the
conjugation flags, and batches of medium products (the AVX-512 level's route for real ones up to
128) — and the levels agree bit for bit wherever they take the small kernel (all dimensions up
to 16 at the vector levels, up to 8 at the baseline one). Thread policy: a serial engine's GEMM
runs on the caller's thread only, a pool's on its own workers (OS per-thread CPU time)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import tenferro as tf
from tenferro import _testing

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    a = rng.normal(size=shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.normal(size=shape)
    return a.astype(dtype)


def _tol(dtype: Any) -> dict[str, float]:
    single = np.dtype(dtype) in (np.float32, np.complex64)
    return {"rtol": 2e-5, "atol": 2e-5} if single else {"rtol": 1e-12, "atol": 1e-12}


def _layouts(a: np.ndarray) -> Iterator[tuple[str, Any, np.ndarray]]:
    """``(name, tenferro operand, the NumPy array it holds)`` for several memory layouts."""
    yield "C", tf.asarray(a, copy=False), a
    yield "F", tf.asarray(np.asfortranarray(a)), a
    if a.ndim >= 2:
        t = tf.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2)), copy=False)
        yield "T-view", tf.prim.transpose(t, (*range(a.ndim - 2), a.ndim - 1, a.ndim - 2)), a
        # Reversed rows (negative stride) and every other column (stride 2) of bigger arrays.
        big = np.concatenate([a, a], axis=-1)
        yield "reversed+strided", tf.asarray(big, copy=False)[..., ::-1, ::2], big[..., ::-1, ::2]


#: (lhs shape, rhs shape): batched tiny (each register width of the small kernel: rows 4, 8,
#: 12 and 16, with partial vectors and column blocks), single small, edge sizes, dimensions past
#: the small kernel's route (16) — a few products (faer) and batches of at least two per worker
#: (real: the AVX-512 level's kernel — several row blocks, partial ones, column tails; faer on
#: the others and for complex) — vector operands (rank 1) and zero-size batches and dimensions.
SHAPES = [
    ((7, 8, 8), (7, 8, 8)),
    ((5, 3, 4), (5, 4, 2)),
    ((3, 4, 4), (3, 4, 4)),
    ((3, 16, 16), (3, 16, 16)),
    ((2, 12, 7), (2, 7, 11)),
    ((2, 5, 16), (2, 16, 9)),
    ((16, 16), (16, 16)),
    ((1, 1), (1, 1)),
    ((2, 9, 13), (2, 13, 16)),
    ((3, 17, 5), (3, 5, 4)),
    ((6, 17, 17), (6, 17, 17)),
    ((5, 40, 23), (5, 23, 37)),
    ((4, 128, 128), (4, 128, 128)),
    ((4,), (4, 6)),
    ((6, 4), (4,)),
    ((0, 3, 4), (0, 4, 2)),
    ((3, 0, 4), (3, 4, 2)),
    ((3, 3, 0), (3, 0, 2)),
]


def _products(
    rng: np.random.Generator,
) -> list[tuple[str, Callable[[], Any], np.ndarray, Any, bool]]:
    """``(label, tenferro call, NumPy reference, dtype, largest dimension)`` for every shape,
    layout and dtype."""
    out = []
    for dtype in DTYPES:
        for sa, sb in SHAPES:
            a, b = _rand(rng, sa, dtype), _rand(rng, sb, dtype)
            big = max(*sa[-2:], *sb[-2:])
            for (la, ta, na), (lb, tb, nb) in zip(_layouts(a), _layouts(b), strict=False):
                label = f"{np.dtype(dtype).name} {sa}@{sb} {la}/{lb}"
                out.append((label, lambda ta=ta, tb=tb: tf.matmul(ta, tb), na @ nb, dtype, big))
        # Conjugation flags (complex only in effect), on a batch-last small product.
        a, b = _rand(rng, (4, 6, 3), dtype), _rand(rng, (6, 5, 3), dtype)
        cfg = tf.DotGeneralConfig(
            lhs_contracting_dims=(1,),
            rhs_contracting_dims=(0,),
            lhs_batch_dims=(2,),
            rhs_batch_dims=(2,),
        )
        ta, tb = tf.asarray(a, copy=False), tf.asarray(b, copy=False)
        for lc in (False, True):
            for rc in (False, True):
                want = np.einsum("ikb,kjb->ijb", np.conj(a) if lc else a, np.conj(b) if rc else b)
                out.append(
                    (
                        f"{np.dtype(dtype).name} conj=({lc}, {rc})",
                        lambda ta=ta, tb=tb, cfg=cfg, lc=lc, rc=rc: tf.prim.dot_general_with_conj(
                            ta, tb, cfg, lc, rc
                        ),
                        want,
                        dtype,
                        6,
                    )
                )
    return out


def test_every_cpu_kernel_this_machine_has_matches_numpy_and_the_others_bit_for_bit() -> None:
    selected, available = _testing.cpu_kernels()
    assert available[0] == "scalar" and selected == available[-1]
    products = _products(np.random.default_rng(26))
    results: dict[str, list[np.ndarray]] = {}
    try:
        for kernel in available:
            _testing.set_cpu_kernel(kernel)
            assert _testing.cpu_kernels()[0] == kernel
            got = []
            for label, call, want, dtype, _ in products:
                r = np.asarray(call())
                assert r.dtype == want.dtype and r.shape == want.shape, (kernel, label)
                np.testing.assert_allclose(r, want, err_msg=f"{kernel}: {label}", **_tol(dtype))
                got.append(r)
            results[kernel] = got
    finally:
        _testing.set_cpu_kernel(None)
    assert _testing.cpu_kernels()[0] == selected
    # The levels that take the small kernel for a product agree bit for bit: every level up to
    # 8, the vector levels (AVX2, AVX-512) up to 16; faer elsewhere.
    for i, (label, *_, big) in enumerate(products):
        small = [k for k in available if big <= 8 or (big <= 16 and k != "scalar")]
        for kernel in small[1:]:
            np.testing.assert_array_equal(
                results[small[0]][i], results[kernel][i], err_msg=f"{kernel} vs {small[0]}: {label}"
            )


def test_forcing_an_unknown_or_missing_kernel_raises() -> None:
    with pytest.raises(ValueError, match="unknown kernel"):
        _testing.set_cpu_kernel("sse9")
    _, available = _testing.cpu_kernels()
    for kernel in {"avx2", "avx512"} - set(available):
        with pytest.raises(ValueError, match=f"cannot run the {kernel} kernel"):
            _testing.set_cpu_kernel(kernel)
    assert _testing.cpu_kernels()[0] == available[-1]


def _thread_cpu_seconds() -> dict[int, float]:
    """User + system CPU time of every thread of this process (Linux ``/proc``), in seconds."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        out[int(tid)] = (int(fields[11]) + int(fields[12])) / tick
    return out


def _gemm_work(engine: tf.CpuEngine) -> list[tuple[np.ndarray, np.ndarray]]:
    """A large and a batched-small GEMM on ``engine``: ``[(result, operand), ...]`` (the NumPy
    references are computed by the caller, outside the measured window: OpenBLAS has threads
    of its own)."""
    rng = np.random.default_rng(3)
    rt = tf.Runtime()
    big = rng.normal(size=(1024, 1024))
    tiny = rng.normal(size=(4096, 8, 8))
    with rt.session(engine):
        x, t = rt.constant(big), tf.asarray(tiny, copy=False)
        for _ in range(3):
            y = tf.matmul(x, x)
            z = tf.matmul(t, t)
    return [(np.asarray(y), big), (np.asarray(z), tiny)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/task")
@pytest.mark.parametrize("threads", [1, 2])
def test_gemm_runs_on_the_caller_or_the_engines_workers_only(threads: int) -> None:
    """A serial engine's GEMMs (large and batched-small) run one thread at a time; a pool's
    use its workers and the caller — never another pool's threads (rayon's global pool)."""
    engine = tf.CpuEngine(threads=threads)
    _gemm_work(engine)  # warm-up: plans, buffers, the pool's threads
    time.sleep(0.05)  # other engines' workers stop polling
    mine = {threading_native_id(), *engine.worker_tids}
    before, p0, w0 = _thread_cpu_seconds(), time.process_time(), time.perf_counter()
    results = _gemm_work(engine)
    after, total, wall = _thread_cpu_seconds(), time.process_time() - p0, time.perf_counter() - w0
    for got, x in results:
        np.testing.assert_allclose(got, x @ x, rtol=1e-11, atol=1e-9)
    others = sum(v - before.get(tid, 0.0) for tid, v in after.items() if tid not in mine)
    workers = sum(after.get(tid, 0.0) - before.get(tid, 0.0) for tid in engine.worker_tids)
    assert others <= 0.03, f"{others:.2f} s of CPU on threads outside the engine"
    # Ops this large run on a short-lived helper thread while the caller serves Ctrl-C (it has
    # ended by now, so it is in neither table): a serial engine shows as work done one thread
    # at a time -- the process's CPU time no more than the wall time.
    if threads == 1:
        assert engine.worker_tids == [] and total >= 0.05
        assert total <= 1.2 * wall + 0.02, f"{total:.2f} s of CPU in {wall:.2f} s: parallel"
    else:
        assert workers >= 0.03, f"the workers did {workers:.2f} s (all threads {total:.2f} s)"


def threading_native_id() -> int:
    import threading

    return threading.get_native_id()

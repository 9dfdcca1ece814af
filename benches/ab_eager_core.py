"""A/B timing of the eager op path (issue 18: the eager core moved into ``tenferro-eager``).

Run in whichever environment holds the build under test, one fresh process per round::

    /work/wt-before/.venv/bin/python benches/ab_eager_core.py
    /work/wt-after/.venv/bin/python benches/ab_eager_core.py

Only the public API is used, so the same file runs against the builds before and after the
restructuring. Prints one JSON object; every figure is the median over many samples (each
sample a block of calls timed with ``time.perf_counter_ns``, the garbage collector off, after a
warm-up):

- ``tiny_tf_us`` / ``tiny_np_us`` / ``tiny_ratio``: untracked ``a + b`` on two 8-element
  float64 tensors (``tf.asarray``), the same with NumPy arrays, and tenferro/NumPy;
- ``rec_op_us``: per recorded op, a chain of 1000 ``y = y * x`` from a tracked leaf
  ``x = rt.variable(8 f64)`` (tensor * tensor, every op recorded);
- ``rec_op_scalar_us``: the same with ``y = y * 1.0001`` (weak Python scalar, as bench_ad);
- ``bwd_node_us``: per backward node, ``y.sum().backward()`` of a fresh chain of 1000 recorded
  ops (``y * 1.0001`` alternated with ``y + 0.001``; 1001 nodes with the sum), only the
  backward timed;
- ``tfim_ms``: one TFIM energy+gradient evaluation, N=16 sites, bond D=8, float64, exactly as
  ``make demo`` / ``benches/bench_tfim.py`` run it (``TfimProblem.value_and_grad`` on a serial
  ``CpuEngine(threads=1)`` session).
"""

from __future__ import annotations

import gc
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import tenferro as tf
from tenferro.examples import tfim

CHAIN = 1000


def sample_ns(block: Callable[[], int], samples: int, warmup: int) -> list[int]:
    """Run ``block`` (which returns its own elapsed ns) ``warmup`` times, then ``samples`` times
    with the garbage collector off; return the timed samples."""
    for _ in range(warmup):
        block()
    out = []
    for _ in range(samples):
        gc.collect()
        gc.disable()
        try:
            out.append(block())
        finally:
            gc.enable()
    return out


def loop_block(fn: Callable[[], Any], n: int) -> Callable[[], int]:
    def block() -> int:
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn()
        return time.perf_counter_ns() - t0

    return block


#: How the samples of one figure combine: ``median`` (default) or ``min`` (``--stat=min``, the
#: best sample: less sensitive to other load on a shared machine).
STAT = statistics.median


def median_us(samples: list[int], per: int) -> float:
    return STAT(samples) / per / 1e3


def tiny(samples: int) -> dict[str, float]:
    rng = np.random.default_rng(0)
    an, bn = rng.normal(size=8), rng.normal(size=8)
    a, b = tf.asarray(an), tf.asarray(bn)
    assert np.allclose(np.asarray(a + b), an + bn)
    n = 2000

    def tf_add() -> int:
        t0 = time.perf_counter_ns()
        for _ in range(n):
            a + b
        return time.perf_counter_ns() - t0

    def np_add() -> int:
        t0 = time.perf_counter_ns()
        for _ in range(n):
            an + bn
        return time.perf_counter_ns() - t0

    # interleave the two libraries sample by sample
    tf_s, np_s = [], []
    for _ in range(5):
        tf_add(), np_add()
    for _ in range(samples):
        gc.collect()
        gc.disable()
        try:
            tf_s.append(tf_add())
            np_s.append(np_add())
        finally:
            gc.enable()
    t, p = median_us(tf_s, n), median_us(np_s, n)
    return {"tiny_tf_us": t, "tiny_np_us": p, "tiny_ratio": t / p}


def rec_op(samples: int) -> dict[str, float]:
    rt = tf.Runtime()
    x = rt.variable(1.0 + 1e-4 * np.random.default_rng(1).normal(size=8))

    def chain_tt() -> int:
        t0 = time.perf_counter_ns()
        y = x
        for _ in range(CHAIN):
            y = y * x
        t1 = time.perf_counter_ns()
        del y  # freeing the graph is not timed
        return t1 - t0

    def chain_scalar() -> int:
        t0 = time.perf_counter_ns()
        y = x
        for _ in range(CHAIN):
            y = y * 1.0001
        t1 = time.perf_counter_ns()
        del y
        return t1 - t0

    return {
        "rec_op_us": median_us(sample_ns(chain_tt, samples, 5), CHAIN),
        "rec_op_scalar_us": median_us(sample_ns(chain_scalar, samples, 5), CHAIN),
    }


def bwd_node(samples: int) -> dict[str, float]:
    rt = tf.Runtime()
    x0 = np.random.default_rng(2).normal(size=8)

    def block() -> int:
        x = rt.variable(x0)
        y = x
        for k in range(CHAIN):
            y = y * 1.0001 if k % 2 == 0 else y + 0.001
        s = y.sum()
        t0 = time.perf_counter_ns()
        s.backward()
        t1 = time.perf_counter_ns()
        assert x.grad is not None
        return t1 - t0

    return {"bwd_node_us": median_us(sample_ns(block, samples, 5), CHAIN + 1)}


def tfim_eval(samples: int) -> dict[str, float]:
    sites, bond = 16, 8
    engine = tf.CpuEngine(threads=1)  # as `make demo` and benches/bench_tfim.py
    rt = tf.Runtime()
    problem = tfim.TfimProblem(sites, bond, 1.0, 1.0, "float64", runtime=rt)
    x = problem.pack(tfim.random_mps(sites, bond, seed=0, dtype="float64"))
    inner = 5
    with rt.session(engine):
        e, g = problem.value_and_grad(x)
        # cross-check the gradient along one random direction by a central difference
        d = np.random.default_rng(3).normal(size=x.size)
        h = 1e-6
        fd = (problem.energy(x + h * d) - problem.energy(x - h * d)) / (2 * h)
        assert abs(fd - g @ d) <= 1e-5 * max(1.0, abs(fd)), (fd, g @ d)
        st = sample_ns(loop_block(lambda: problem.value_and_grad(x), inner), samples, 2)
    return {"tfim_ms": STAT(st) / inner / 1e6, "tfim_energy": e}


def main() -> int:
    global STAT
    quick = "--quick" in sys.argv
    if "--stat=min" in sys.argv:
        STAT = min
    s = 5 if quick else 41
    only = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--only=")]
    figures: dict[str, Callable[[int], dict[str, float]]] = {
        "tiny": tiny,
        "rec_op": rec_op,
        "bwd_node": bwd_node,
        "tfim": tfim_eval,
    }
    out: dict[str, Any] = {"python": sys.executable, "samples": s, "stat": STAT.__name__}
    for name, fn in figures.items():
        if only and name not in only:
            continue
        out.update(fn(s))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

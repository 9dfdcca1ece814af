"""Side-by-side timings of tenferro against NumPy, JAX and PyTorch, printed as one table.

Run with ``make bench`` (or ``python benches/bench_ops.py [--quick]`` in an environment holding
the tenferro wheel and ``benches/requirements-bench.txt``). JAX and PyTorch are optional: a peer
that is not installed shows ``n/a``. Every peer runs on the CPU in float64 (JAX with
``jax_enable_x64``; its eager ``jnp`` ops are timed with ``.block_until_ready()``).

Cases
-----
tiny add
    ``a + b`` on 8 float64: the per-op dispatch cost, in microseconds per op (``timeit``, best of
    several repeats of many iterations).
add 1e7
    ``a + b`` on 10**7 float64 returning a new tensor, in milliseconds (best of N); for tenferro
    the buffer-pool hits and misses of the default engine during the case are reported.
exp 1e6
    ``exp(a)`` on 10**6 float64, in milliseconds (best of N).

Inputs are built once (``tf.asarray`` from the same NumPy data for every library); only the op is
timed. The result of each repetition is dropped after the clock stops, so a library that recycles
buffers (tenferro's buffer pool, PyTorch's allocator) can reuse it on the next repetition.
Ratios are ours/peer: below 1 means tenferro is faster. The targets are printed, not asserted
(testing.md: speed is measured here, never by timed assertions in tests).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import timeit
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tenferro as tf

try:  # optional peer
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    import jax.numpy as jnp
except Exception:  # noqa: BLE001 - any import failure means "not available"
    jax = jnp = None

try:  # optional peer, best effort
    import torch
except Exception:  # noqa: BLE001
    torch = None

LIBS = ("tenferro", "numpy", "jax", "torch")


@dataclass
class Case:
    name: str
    unit: str  # "us" or "ms"
    target: str  # human-readable target
    results: dict[str, float] = field(default_factory=dict)  # lib -> time in `unit`
    note: str = ""


def _progress(iterable: Any, total: int) -> Any:
    """tqdm progress on a terminal (optional dependency), the plain iterable otherwise."""
    if sys.stderr.isatty():
        try:
            from tqdm import tqdm

            return tqdm(iterable, total=total, desc="bench", leave=False)
        except ImportError:
            pass
    return iterable


def time_tiny(stmt: str, env: dict[str, Any], number: int, repeat: int) -> float:
    """Best mean time of ``stmt`` over ``repeat`` runs of ``number`` executions, in microseconds.

    ``timeit`` compiles ``stmt`` into its loop, so no Python call overhead is added.
    """
    timer = timeit.Timer(stmt, globals=env)
    timer.timeit(number=max(number // 100, 10))  # warm up (JAX compiles on first use)
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e6


def time_big(fn: Callable[[], Any], repeat: int) -> float:
    """Best time of one call over ``repeat`` calls, in milliseconds (result dropped untimed)."""
    result = fn()  # warm up
    del result
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        t1 = time.perf_counter()
        del result
        best = min(best, t1 - t0)
    return best * 1e3


def _pool_stats() -> Any:
    try:
        return tf.default_engine().buffer_pool_stats()
    except AttributeError:  # pragma: no cover - engine API not built yet
        return None


def run(quick: bool) -> list[Case]:
    rng = np.random.default_rng(0)
    tiny_n, tiny_r = (20_000, 3) if quick else (200_000, 7)
    big_r = 5 if quick else 20
    exp_r = 10 if quick else 50

    cases: list[Case] = []
    tasks: list[tuple[Case, str, Callable[[], float]]] = []

    # (a) tiny-op dispatch
    x8, y8 = rng.normal(size=8), rng.normal(size=8)
    tiny = Case("a + b, 8 f64 (dispatch)", "us", "tenferro <= 1.0 us")
    cases.append(tiny)
    peers: dict[str, tuple[Any, Any]] = {
        "tenferro": (tf.asarray(x8), tf.asarray(y8)),
        "numpy": (x8, y8),
    }
    if jnp is not None:
        peers["jax"] = (jnp.asarray(x8), jnp.asarray(y8))
    if torch is not None:
        peers["torch"] = (torch.from_numpy(x8.copy()), torch.from_numpy(y8.copy()))
    for lib, (a, b) in peers.items():
        stmt = "(a + b).block_until_ready()" if lib == "jax" else "a + b"
        env = {"a": a, "b": b}
        tasks.append((tiny, lib, lambda s=stmt, e=env: time_tiny(s, e, tiny_n, tiny_r)))

    # (b) large add, new result each time
    x7, y7 = rng.normal(size=10**7), rng.normal(size=10**7)
    big = Case("a + b, 1e7 f64 (new tensor)", "ms", "<= 1.0x numpy")
    cases.append(big)
    peers = {"tenferro": (tf.asarray(x7), tf.asarray(y7)), "numpy": (x7, y7)}
    if jnp is not None:
        peers["jax"] = (jnp.asarray(x7), jnp.asarray(y7))
    if torch is not None:
        peers["torch"] = (torch.from_numpy(x7), torch.from_numpy(y7))
    for lib, (a, b) in peers.items():
        fn = (
            (lambda a=a, b=b: (a + b).block_until_ready())
            if lib == "jax"
            else (lambda a=a, b=b: a + b)
        )
        tasks.append((big, lib, lambda fn=fn: time_big(fn, big_r)))

    # (c) exp
    x6 = rng.normal(size=10**6)
    ex = Case("exp, 1e6 f64", "ms", "<= 1.0x jax")
    cases.append(ex)
    t6 = tf.asarray(x6)
    fns: dict[str, Callable[[], Any]] = {
        "tenferro": lambda: tf.exp(t6),
        "numpy": lambda: np.exp(x6),
    }
    if jnp is not None:
        j6 = jnp.asarray(x6)
        fns["jax"] = lambda: jnp.exp(j6).block_until_ready()
    if torch is not None:
        p6 = torch.from_numpy(x6)
        fns["torch"] = lambda: torch.exp(p6)
    for lib, fn in fns.items():
        tasks.append((ex, lib, lambda fn=fn: time_big(fn, exp_r)))

    for case, lib, measure in _progress(tasks, total=len(tasks)):
        before = _pool_stats() if (lib == "tenferro" and case is big) else None
        case.results[lib] = measure()
        if before is not None:
            after = _pool_stats()
            case.note = (
                f"tenferro buffer pool during this case: {after.hits - before.hits} hits, "
                f"{after.misses - before.misses} misses"
            )
    return cases


def _fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def report(cases: list[Case]) -> None:
    try:
        threads = tf.default_engine().num_threads
    except AttributeError:  # pragma: no cover
        threads = "?"
    versions = [
        f"tenferro {getattr(tf, '__version__', '?')} ({threads} threads)",
        f"numpy {np.__version__}",
        f"jax {jax.__version__} (cpu, x64)" if jax is not None else "jax n/a",
        f"torch {torch.__version__} ({torch.get_num_threads()} threads)" if torch else "torch n/a",
    ]
    print(" | ".join(versions))
    print(f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print()
    head = f"{'case':<30} {'unit':<4}" + "".join(f"{lib:>10}" for lib in LIBS)
    head += "".join(f"{'tf/' + lib[:5]:>10}" for lib in LIBS[1:])
    print(head)
    print("-" * len(head))
    for case in cases:
        ours = case.results.get("tenferro")
        row = f"{case.name:<30} {case.unit:<4}"
        row += "".join(f"{_fmt(case.results.get(lib)):>10}" for lib in LIBS)
        for lib in LIBS[1:]:
            peer = case.results.get(lib)
            row += f"{(f'{ours / peer:.2f}x' if ours and peer else 'n/a'):>10}"
        print(row)
    print()
    for case in cases:
        if case.note:
            print(case.note)
    print("targets:")
    tiny, big, ex = cases
    checks = [
        (tiny, tiny.results.get("tenferro"), 1.0, " us"),
        (big, _ratio(big, "numpy"), 1.0, "x numpy"),
        (ex, _ratio(ex, "jax"), 1.0, "x jax"),
    ]
    for case, value, limit, unit in checks:
        if value is None:
            verdict = "n/a (peer not installed)"
        else:
            verdict = f"{value:.2f}{unit}: " + ("met" if value <= limit else "MISSED")
        print(f"  {case.name:<30} target {case.target:<18} -> {verdict}")


def _ratio(case: Case, peer: str) -> float | None:
    ours, theirs = case.results.get("tenferro"), case.results.get(peer)
    return ours / theirs if ours and theirs else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    args = parser.parse_args(argv)
    report(run(args.quick))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Shared helpers of the benchmarks: peer detection, timing, table rows and results files.

Every bench imports this module (``benches/`` is the script's own folder, so a plain ``import
_harness`` works), measures with one of the timing functions below, prints its table, and writes
its rows with :func:`write_results` to ``benches/results/<bench>.json``; ``benches/report.py``
turns all present results into ``docs/benchmarks.md`` and ``docs/benchmarks.png``.

Results file format (JSON)::

    {"bench": "bench_tfim", "machine": {...machine_info()...},
     "rows": [{"case": str, "unit": str, "ours": float, "peer": str | null,
               "peer_value": float | null, "ratio": float | null, "target": str,
               "higher_is_better": bool}, ...]}

``ratio`` is always tenferro/peer in the row's unit, so for times below 1 means tenferro is faster
(for throughputs, ``higher_is_better`` is true and above 1 means faster).
"""

from __future__ import annotations

import datetime as _dt
import gc
import json
import os
import platform
import statistics
import sys
import time
import timeit
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

RESULTS_DIR = Path(__file__).resolve().parent / "results"


# ------------------------------------------------------------------------------------ peers


@dataclass
class Peers:
    """The optional peer libraries that could be imported (``None`` when missing)."""

    jax: Any = None
    jnp: Any = None
    torch: Any = None


def import_peers() -> Peers:
    """Import JAX (CPU, ``jax_enable_x64``) and PyTorch if installed; missing peers are None."""
    peers = Peers()
    try:
        import jax

        jax.config.update("jax_enable_x64", True)
        jax.config.update("jax_platforms", "cpu")
        import jax.numpy as jnp

        peers.jax, peers.jnp = jax, jnp
    except Exception:  # noqa: BLE001 - any import failure means "not available"
        pass
    try:
        import torch

        peers.torch = torch
    except Exception:  # noqa: BLE001
        pass
    return peers


def versions_line(peers: Peers, tf: Any) -> str:
    """``tenferro 0.1.0 (2 threads) | numpy ... | jax ... | torch ...``."""
    try:
        threads = tf.default_engine().num_threads
    except AttributeError:  # pragma: no cover - engine API not built yet
        threads = "?"
    torch = peers.torch
    return " | ".join(
        [
            f"tenferro {getattr(tf, '__version__', '?')} ({threads} threads)",
            f"numpy {np.__version__}",
            f"jax {peers.jax.__version__} (cpu, x64)" if peers.jax is not None else "jax n/a",
            f"torch {torch.__version__} ({torch.get_num_threads()} threads)"
            if torch
            else "torch n/a",
        ]
    )


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _vector_isa() -> str:
    """The widest vector instruction sets the CPU reports (``avx512f+avx2+fma``, ``neon``, ...)."""
    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith(("flags", "Features")):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    wanted = ("avx512f", "avx2", "fma", "avx", "sse4_2", "sve2", "sve", "asimd", "neon")
    found = [f for f in wanted if f in flags]
    if "avx512f" in found:  # the widest x86 set names the machine; drop the implied ones
        found = [f for f in found if f not in ("avx", "sse4_2")]
    elif "avx2" in found:
        found = [f for f in found if f not in ("avx", "sse4_2")]
    return "+".join(found) or "?"


def cpu_description() -> str:
    """The CPU model and its vector ISA, e.g. ``AMD EPYC 9R14 (avx512f+avx2+fma)``: the header of
    every results file and report (kernel speed depends on both, issue 26)."""
    return f"{_cpu_model()} ({_vector_isa()})"


def machine_info(peers: Peers | None = None) -> dict[str, Any]:
    """CPU model, CPU counts, Python and library versions, and the UTC date of the run."""
    try:
        allowed = len(os.sched_getaffinity(0))
    except AttributeError:  # non-Linux
        allowed = os.cpu_count()
    info: dict[str, Any] = {
        "cpu": _cpu_model(),
        "isa": _vector_isa(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "allowed_cpus": allowed,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }
    try:
        import tenferro

        info["tenferro"] = getattr(tenferro, "__version__", "?")
    except ImportError:  # pragma: no cover
        pass
    if peers is not None:
        if peers.jax is not None:
            info["jax"] = peers.jax.__version__
        if peers.torch is not None:
            info["torch"] = peers.torch.__version__
    return info


def machine_line(info: dict[str, Any] | None = None) -> str:
    info = info or machine_info()
    return (
        f"{info['cpu']} ({info['machine']}, {info.get('isa', '?')}), {info['allowed_cpus']} of {info['cpus']} CPUs, "
        f"Python {info['python']}, {info['date']}"
    )


# ------------------------------------------------------------------------------------ timing


def progress(iterable: Iterable[Any], total: int, desc: str = "bench") -> Iterable[Any]:
    """tqdm progress on a terminal (optional dependency), the plain iterable otherwise."""
    if sys.stderr.isatty():
        try:
            from tqdm import tqdm

            return tqdm(iterable, total=total, desc=desc, leave=False)
        except ImportError:
            pass
    return iterable


def time_tiny(
    stmt: str | Callable[[], Any],
    env: dict[str, Any] | None = None,
    number: int | None = None,
    repeat: int = 5,
) -> float:
    """Best mean time of ``stmt`` over ``repeat`` runs of ``number`` executions, in µs (timeit).

    ``number=None`` lets ``timeit.autorange`` choose. A string ``stmt`` is compiled into timeit's
    loop, so no Python call overhead is added.
    """
    timer = timeit.Timer(stmt, globals=env or {})
    if number is None:
        number, _ = timer.autorange()
    else:
        timer.timeit(number=max(number // 100, 10))  # warm up (JAX compiles on first use)
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e6


def time_best(fn: Callable[[], Any], repeat: int) -> float:
    """Best time of one call over ``repeat`` calls, in milliseconds (after one warm-up call; the
    result is dropped after the clock stops)."""
    result = fn()
    del result
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        t1 = time.perf_counter()
        del result
        best = min(best, t1 - t0)
    return best * 1e3


#: Seconds to sleep before each library's timing in :func:`round_robin`. Worker threads of the
#: previous library keep spinning after its call returns: OpenBLAS's (NumPy, opt_einsum) for
#: 2**28 cycles (``OPENBLAS_THREAD_TIMEOUT``'s default, ~0.1 s), and on 2 cores a spinning
#: thread takes one core from whoever is timed next (measured: a 2.9 ms batched matmul timed at
#: 4.0–4.3 ms 20 ms after ``np.matmul``). Sleeping past that lets every library start idle.
SETTLE = 0.2


def calibrate(
    fns: dict[str, Callable[[], Any]], budget: float = 0.05
) -> tuple[dict[str, int], float]:
    """Warm every function up (plans, pools, JAX tracing) and return, per library, how many
    back-to-back calls fill ``budget`` seconds (at least 1), and the slowest single call (s).

    A single sub-millisecond call timed after a sleep measures thread wake-up and cold caches,
    not throughput; repeating it until the block lasts ``budget`` seconds measures the latter
    for every library alike.
    """
    inner: dict[str, int] = {}
    slowest = 0.0
    for lib, fn in fns.items():
        t0 = time.perf_counter()
        fn()
        once = time.perf_counter() - t0
        if once < 1.0:  # the first call may have built plans or compiled
            t0 = time.perf_counter()
            fn()
            once = time.perf_counter() - t0
        slowest = max(slowest, once)
        inner[lib] = max(1, int(budget / max(once, 1e-7)))
    return inner, slowest


def round_robin(
    fns: dict[str, Callable[[], Any]],
    rounds: int,
    inner: int | dict[str, int] = 1,
    *,
    stat: str = "median",
    warmup: int = 3,
    sleep: float = SETTLE,
    desc: str = "bench",
) -> dict[str, float]:
    """Seconds per call of each function, measured round-robin.

    Per round every function runs ``inner`` calls back to back (timed together, garbage collector
    off as in ``timeit``, after a ``sleep`` (:data:`SETTLE`) so the previous library's worker
    threads stop spinning);
    slow drifts of a shared machine then hit every library alike. ``inner`` may differ per
    library (a dict), e.g. calibrated to a time budget. ``stat`` combines the rounds:
    ``"median"`` or ``"min"`` (best round).
    """
    samples = round_robin_samples(fns, rounds, inner, warmup=warmup, sleep=sleep, desc=desc)
    combine = statistics.median if stat == "median" else min
    return {lib: combine(s) for lib, s in samples.items()}


def round_robin_samples(
    fns: dict[str, Callable[[], Any]],
    rounds: int,
    inner: int | dict[str, int] = 1,
    *,
    warmup: int = 3,
    sleep: float = SETTLE,
    desc: str = "bench",
) -> dict[str, list[float]]:
    """:func:`round_robin`'s measurement: seconds per call of each function in every round."""
    calls = inner if isinstance(inner, dict) else {lib: inner for lib in fns}
    for fn in fns.values():  # warm-up: pools, plan caches, JAX tracing and compilation
        for _ in range(warmup):
            fn()
    # Everything alive now (modules, JAX's caches, the benchmark's data) is moved out of the
    # collector's reach: the collection before each timed block then takes microseconds instead
    # of ~0.1 s with JAX imported (the timed blocks themselves run with the collector off).
    gc.collect()
    gc.freeze()
    samples: dict[str, list[float]] = {lib: [] for lib in fns}
    try:
        _timed_rounds(fns, rounds, calls, sleep, desc, samples)
    finally:
        gc.unfreeze()  # no lasting effect on the process
    return samples


def _timed_rounds(
    fns: dict[str, Callable[[], Any]],
    rounds: int,
    calls: dict[str, int],
    sleep: float,
    desc: str,
    samples: dict[str, list[float]],
) -> None:
    for _ in progress(range(rounds), rounds, desc):
        for lib, fn in fns.items():
            time.sleep(sleep)
            gc.collect()
            gc.disable()
            try:
                t0 = time.perf_counter()
                for _ in range(calls[lib]):
                    fn()
                elapsed = time.perf_counter() - t0
            finally:
                gc.enable()
            samples[lib].append(elapsed / calls[lib])


# ------------------------------------------------------------------------------------ rows


def fmt(value: float | None) -> str:
    """3 significant digits, integers from 100 on, ``n/a`` for None."""
    if value is None:
        return "n/a"
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def ratio(ours: float | None, peer: float | None) -> float | None:
    return ours / peer if ours and peer else None


@dataclass
class Row:
    """One comparison: tenferro's value and one peer's, in ``unit``."""

    case: str
    unit: str
    ours: float | None
    peer: str | None = None
    peer_value: float | None = None
    target: str = ""
    higher_is_better: bool = False
    #: whether the row's target is met (None: no verdict); ``report.py`` warns on False.
    met: bool | None = None

    @property
    def ratio(self) -> float | None:
        return ratio(self.ours, self.peer_value)

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ratio"] = self.ratio
        return d


def rows_from_results(
    case: str,
    unit: str,
    results: dict[str, float],
    peers: Iterable[str],
    targets: dict[str, str] | None = None,
    higher_is_better: bool = False,
    ours: str = "tenferro",
    met: bool | None = None,
) -> list[Row]:
    """One :class:`Row` per peer present in ``results`` (a single row with ``peer=None`` when
    none is)."""
    targets = targets or {}
    rows = [
        Row(case, unit, results.get(ours), p, results[p], targets.get(p, ""), higher_is_better, met)
        for p in peers
        if p in results
    ]
    return rows or [
        Row(
            case,
            unit,
            results.get(ours),
            target=targets.get("", ""),
            higher_is_better=higher_is_better,
            met=met,
        )
    ]


def write_results(
    bench: str, rows: Iterable[Row], peers: Peers | None = None, extra: dict[str, Any] | None = None
) -> Path:
    """Write ``benches/results/<bench>.json`` (see the module docstring) and return its path."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    payload = {
        "bench": bench,
        "cpu": cpu_description(),
        "machine": machine_info(peers),
        "rows": [r.as_dict() for r in rows],
    }
    if extra:
        payload.update(extra)
    path = RESULTS_DIR / f"{bench}.json"
    path.write_text(json.dumps(payload, indent=1) + "\n")
    print(
        f"results written to {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}"
    )
    return path

"""Side-by-side timings of tenferro against NumPy, JAX and PyTorch, printed as one table.

Run with ``make bench`` (or ``python benches/bench_ops.py [--quick]`` in an environment holding
the tenferro wheel and ``benches/requirements-bench.txt``). JAX and PyTorch are optional: a peer
that is not installed shows ``n/a``. Every peer runs on the CPU in float64 (JAX with
``jax_enable_x64``; its eager ``jnp`` ops are timed with ``.block_until_ready()``).

Cases
-----
tiny add
    ``a + b`` on 8 float64: the per-op dispatch cost, in microseconds per op (``timeit``, best of
    several repeats of many iterations); target ``<= 1.0x numpy`` (issue 26), a ``WARNING`` line
    when missed.
add 1e7
    ``a + b`` on 10**7 float64 returning a new tensor, in milliseconds (best of N); for tenferro
    the buffer-pool hits and misses of the default engine during the case are reported.
exp 1e6
    ``exp(a)`` on 10**6 float64, in milliseconds (best of N).
math functions
    ``exp``, ``log``, ``sin``, ``cos``, ``tanh``, ``expm1``, ``log1p``, ``pow``, ``erf`` on 10**6
    float64 (``erf`` against ``scipy.special.erf`` and ``jax.scipy.special.erf``), in
    milliseconds: median of interleaved rounds (``_harness.round_robin``, each round about 50 ms
    of calls per library); target ``<= 1.0x`` the faster of NumPy and JAX (issue 26).
sort 1e6
    ``sort(a)`` on 10**6 normal float64 (one row), in milliseconds (best of N); target
    ``<= 1.0x numpy`` (NumPy 2 uses x86-simd-sort on AVX-512 hosts; tenferro an LSD radix sort).
contractions
    GEMM f64 2048² and c128 1024² with C-ordered (NumPy memory shared with ``copy=False``),
    F-ordered (tenferro's compact layout) and transposed-view operands, and batched
    ``bij,bjk->bik`` in float64, float32, complex128 and complex64 with (B, n) = (64, 128),
    (4096, 4), (4096, 8) and (4096, 16) (C-ordered), in GFLOP/s (higher is better;
    complex FLOPs counted as 4 real multiply-adds). Targets (issue 26): GEMM ≥ 1.0× NumPy,
    batched ≥ 1.0× ``np.matmul``, with no operand copy for any layout (the engine's
    ``operand_copies`` counter is printed). Each timing repeats the call for about 50 ms (counts
    calibrated per library), best round. Then the 2-thread scaling of the 2048² f64 GEMM:
    ``CpuEngine(threads=1)`` against ``threads=2`` in the same rounds, target ≥ 1.8×. Each
    missed target prints a ``WARNING`` line (with the CPU model and vector ISA of the header).

Inputs are built once (``tf.asarray`` from the same NumPy data for every library); only the op is
timed. The result of each repetition is dropped after the clock stops, so a library that recycles
buffers (tenferro's buffer pool, PyTorch's allocator) can reuse it on the next repetition.
Ratios are ours/peer: below 1 means tenferro is faster. The targets are printed, not asserted
(testing.md: speed is measured here, never by timed assertions in tests).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import _harness as h
import tenferro as tf

PEERS = h.import_peers()
jax, jnp, torch = PEERS.jax, PEERS.jnp, PEERS.torch

LIBS = ("tenferro", "numpy", "jax", "torch")


@dataclass
class Case:
    name: str
    unit: str  # "us" or "ms"
    target: str  # human-readable target
    results: dict[str, float] = field(default_factory=dict)  # lib -> time in `unit`
    note: str = ""


time_tiny = h.time_tiny  # best mean of `repeat` timeit runs of `number` executions, in µs
time_big = h.time_best  # best single call of `repeat` (after a warm-up), in ms


def _pool_stats() -> Any:
    try:
        return tf.default_engine().buffer_pool_stats()
    except AttributeError:  # pragma: no cover - engine API not built yet
        return None


#: (name, arguments, tenferro, numpy (or scipy), jax) of the math-function cases.
def _math_fns(rng: np.random.Generator) -> list[tuple[str, tuple[np.ndarray, ...], Any, Any, Any]]:
    n = 10**6
    x = rng.normal(size=n)
    pos = rng.uniform(0.01, 10.0, size=n)
    y = rng.uniform(-3.0, 3.0, size=n)
    import scipy.special as sps

    jsp = None
    if jax is not None:
        import jax.scipy.special as jsp
    return [
        ("exp", (x,), tf.exp, np.exp, jnp and jnp.exp),
        ("log", (pos,), tf.log, np.log, jnp and jnp.log),
        ("sin", (3 * x,), tf.sin, np.sin, jnp and jnp.sin),
        ("cos", (3 * x,), tf.cos, np.cos, jnp and jnp.cos),
        ("tanh", (x,), tf.tanh, np.tanh, jnp and jnp.tanh),
        ("expm1", (x,), tf.expm1, np.expm1, jnp and jnp.expm1),
        ("log1p", (pos,), tf.log1p, np.log1p, jnp and jnp.log1p),
        ("pow", (pos, y), tf.pow, np.power, jnp and jnp.power),
        ("erf", (x,), tf.prim.erf, sps.erf, jsp and jsp.erf),
    ]


def run_math(quick: bool) -> list[Case]:
    """The transcendental functions on 10**6 float64, interleaved rounds, median."""
    rounds = 5 if quick else 9
    cases = []
    for name, args, ftf, fnp, fjax in _math_fns(np.random.default_rng(2)):
        case = Case(f"{name}, 1e6 f64", "ms", "<= 1.0x best(numpy, jax)")
        targs = [tf.asarray(a) for a in args]
        fns: dict[str, Callable[[], Any]] = {
            "tenferro": lambda f=ftf, a=targs: f(*a),
            "numpy": lambda f=fnp, a=args: f(*a),
        }
        if fjax is not None:
            jargs = [jnp.asarray(a) for a in args]
            fns["jax"] = lambda f=fjax, a=jargs: f(*a).block_until_ready()
        inner, _ = h.calibrate(fns)
        secs = h.round_robin(fns, rounds, inner, desc=name)
        case.results = {lib: v * 1e3 for lib, v in secs.items()}
        cases.append(case)
    return cases


def report_math(cases: list[Case]) -> None:
    print()
    head = f"{'math, 1e6 f64':<20} {'tenferro':>10} {'numpy':>10} {'jax':>10}"
    head += f"{'tf/numpy':>10}{'tf/jax':>10}{'tf/best':>10}"
    print(head + "  (ms, median of interleaved rounds)")
    print("-" * len(head))
    for case in cases:
        r = case.results
        best = min(v for k, v in r.items() if k != "tenferro")
        row = f"{case.name.split(',')[0]:<20}" + "".join(
            f"{_fmt(r.get(lib)):>10}" for lib in ("tenferro", "numpy", "jax")
        )
        for peer in ("numpy", "jax"):
            q = _ratio(case, peer)
            row += f"{(f'{q:.2f}x' if q else 'n/a'):>10}"
        row += f"{r['tenferro'] / best:>9.2f}x"
        print(row)
    for case in cases:
        best = min(v for k, v in case.results.items() if k != "tenferro")
        q = case.results["tenferro"] / best
        if q > 1.0:
            print(f"WARNING: {case.name}: {q:.2f}x the faster of numpy/jax misses {case.target}")


def run(quick: bool) -> list[Case]:
    rng = np.random.default_rng(0)
    tiny_n, tiny_r = (20_000, 3) if quick else (200_000, 7)
    big_r = 5 if quick else 20
    exp_r = 10 if quick else 50

    cases: list[Case] = []
    tasks: list[tuple[Case, str, Callable[[], float]]] = []

    # (a) tiny-op dispatch
    x8, y8 = rng.normal(size=8), rng.normal(size=8)
    tiny = Case("a + b, 8 f64 (dispatch)", "us", "<= 1.0x numpy")
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

    # (d) sort (issue 22): 1e6 float64, one row
    xs = rng.normal(size=10**6)
    srt = Case("sort, 1e6 f64", "ms", "<= 1.0x numpy")
    cases.append(srt)
    ts = tf.asarray(xs)
    fns = {
        "tenferro": lambda: tf.sort(ts),
        "numpy": lambda: np.sort(xs),
    }
    if jnp is not None:
        js = jnp.asarray(xs)
        fns["jax"] = lambda: jnp.sort(js).block_until_ready()
    if torch is not None:
        ps = torch.from_numpy(xs)
        fns["torch"] = lambda: torch.sort(ps)
    for lib, fn in fns.items():
        tasks.append((srt, lib, lambda fn=fn: time_big(fn, big_r)))

    for case, lib, measure in h.progress(tasks, total=len(tasks), desc="bench_ops"):
        before = _pool_stats() if (lib == "tenferro" and case is big) else None
        case.results[lib] = measure()
        if before is not None:
            after = _pool_stats()
            case.note = (
                f"tenferro buffer pool during this case: {after.hits - before.hits} hits, "
                f"{after.misses - before.misses} misses"
            )
    return cases


_fmt = h.fmt


def report(cases: list[Case]) -> None:
    print(h.versions_line(PEERS, tf))
    print(h.machine_line(h.machine_info(PEERS)))
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
    tiny, big, ex = cases[:3]
    checks = [
        (tiny, _ratio(tiny, "numpy"), 1.0, "x numpy"),
        (big, _ratio(big, "numpy"), 1.0, "x numpy"),
        (ex, _ratio(ex, "jax"), 1.0, "x jax"),
    ]
    for case, value, limit, unit in checks:
        if value is None:
            verdict = "n/a (peer not installed)"
        else:
            verdict = f"{value:.2f}{unit}: " + ("met" if value <= limit else "MISSED")
        print(f"  {case.name:<30} target {case.target:<18} -> {verdict}")
        if value is not None and value > limit:
            print(f"WARNING: {case.name}: {value:.2f}{unit} misses {case.target}")


@dataclass
class Gemm:
    name: str
    flops: float
    target: float  # minimum tenferro/numpy GFLOP/s ratio
    gflops: dict[str, float] = field(default_factory=dict)
    copies: int = 0


def run_contractions(quick: bool) -> list[Gemm]:
    """GEMM and batched-matmul throughput of tenferro, NumPy, JAX and PyTorch."""
    rng = np.random.default_rng(1)
    reps = 2 if quick else 6
    engine = tf.default_engine()
    rows: list[Gemm] = []

    def measure(row: Gemm, fns: dict[str, Callable[[], Any]]) -> None:
        # Round-robin over the libraries, best of `reps` rounds each: slow drifts of a shared
        # machine then hit every library alike; the harness's sleep (SETTLE) lets the previous
        # library's worker threads (OpenBLAS, rayon) stop spinning. Each timing repeats the call for
        # about 50 ms (calibrated per library during the warm-up): a single sub-millisecond
        # call after a sleep would time thread wake-up and cold caches, not GFLOP/s.
        inner, _ = h.calibrate(fns, 0.05)
        before = engine.operand_copies
        best = h.round_robin(fns, reps, inner, stat="min", warmup=0, desc="gemm")
        row.copies = engine.operand_copies - before
        row.gflops = {lib: row.flops / t / 1e9 for lib, t in best.items()}
        rows.append(row)

    for dtype, n, mult in (
        (np.float64, 1024 if quick else 2048, 2.0),
        (np.complex128, 512 if quick else 1024, 8.0),
    ):
        a = rng.normal(size=(n, n)).astype(dtype)
        b = rng.normal(size=(n, n)).astype(dtype)
        if dtype == np.complex128:
            a = a + 1j * rng.normal(size=(n, n))
            b = b + 1j * rng.normal(size=(n, n))
        flops = mult * n**3
        name = f"{np.dtype(dtype).name} {n}x{n}"
        layouts = {
            "C": (tf.asarray(a, copy=False), tf.asarray(b, copy=False)),
            "F": (tf.asarray(a), tf.asarray(b)),
            "T-view": (tf.asarray(a.T.copy()).T, tf.asarray(b.T.copy()).T),
        }
        for lay, (ta, tb) in layouts.items():
            fns: dict[str, Callable[[], Any]] = {
                "tenferro": lambda ta=ta, tb=tb: tf.prim.matmul(ta, tb),
                "numpy": lambda: a @ b,
            }
            if jnp is not None:
                ja, jb = jnp.asarray(a), jnp.asarray(b)
                fns["jax"] = lambda ja=ja, jb=jb: (ja @ jb).block_until_ready()
            if torch is not None:
                pa, pb = torch.from_numpy(a), torch.from_numpy(b)
                fns["torch"] = lambda pa=pa, pb=pb: pa @ pb
            measure(Gemm(f"GEMM {name} {lay}", flops, 1.0), fns)

    for dtype, (batch, n) in (
        (dt, bn)
        for dt in (np.float64, np.float32, np.complex128, np.complex64)
        for bn in ((64, 128), (4096, 4), (4096, 8), (4096, 16))
    ):
        x, y = (rng.normal(size=(batch, n, n)) for _ in range(2))
        if np.dtype(dtype).kind == "c":
            x, y = x + 1j * rng.normal(size=x.shape), y + 1j * rng.normal(size=y.shape)
        x, y = x.astype(dtype), y.astype(dtype)
        tx, ty = tf.asarray(x, copy=False), tf.asarray(y, copy=False)
        fns = {
            "tenferro": lambda: tf.matmul(tx, ty),
            "numpy": lambda: np.matmul(x, y),
        }
        if jnp is not None:
            jx, jy = jnp.asarray(x), jnp.asarray(y)
            fns["jax"] = lambda: jnp.matmul(jx, jy).block_until_ready()
        if torch is not None:
            px, py_ = torch.from_numpy(x), torch.from_numpy(y)
            fns["torch"] = lambda: torch.matmul(px, py_)
        mult = 8.0 if np.dtype(dtype).kind == "c" else 2.0
        name = f"bij,bjk->bik {np.dtype(dtype).name} B={batch} n={n}"
        measure(Gemm(name, mult * batch * n**3, 1.0), fns)

    # 2-thread scaling of the f64 GEMM: a serial engine against a 2-worker pool, same rounds.
    n = 1024 if quick else 2048
    a, b = rng.normal(size=(n, n)), rng.normal(size=(n, n))
    rt = tf.Runtime()
    ta, tb = rt.constant(a), rt.constant(b)

    def on(engine: Any) -> Callable[[], Any]:
        def call() -> Any:
            with rt.session(engine):
                return tf.matmul(ta, tb)

        return call

    scaling = Gemm(f"GEMM float64 {n}x{n} 2 threads / 1", 2.0 * n**3, 1.8)
    fns = {"threads=2": on(tf.CpuEngine(threads=2)), "threads=1": on(tf.CpuEngine(threads=1))}
    inner, _ = h.calibrate(fns, 0.05)
    best = h.round_robin(fns, reps, inner, stat="min", warmup=0, desc="gemm scaling")
    scaling.gflops = {lib: scaling.flops / t / 1e9 for lib, t in best.items()}
    rows.append(scaling)
    return rows


def report_contractions(rows: list[Gemm]) -> None:
    print()
    head = f"{'contraction (GFLOP/s)':<34}" + "".join(f"{lib:>10}" for lib in LIBS)
    head += f"{'tf/numpy':>10}{'copies':>8}  target"
    print(head)
    print("-" * len(head))
    warnings = []
    for r in rows:
        if "threads=2" in r.gflops:  # the scaling row: 2 threads against 1, same rounds
            two, one = r.gflops["threads=2"], r.gflops["threads=1"]
            ratio = two / one
            ok = ratio >= r.target
            print(
                f"{r.name:<34}{_fmt(two):>10}{'':>30}{ratio:>10.2f}x{'':>7}  "
                f">= {r.target}x the serial engine ({_fmt(one)} GFLOP/s): "
                + ("met" if ok else "MISSED")
            )
            if not ok:
                warnings.append(f"{r.name}: {ratio:.2f}x the serial engine (target {r.target}x)")
            continue
        ours, np_ = r.gflops.get("tenferro"), r.gflops.get("numpy")
        ratio = ours / np_ if ours and np_ else None
        ok = ratio is not None and ratio >= r.target and r.copies == 0
        row = f"{r.name:<34}" + "".join(f"{_fmt(r.gflops.get(lib)):>10}" for lib in LIBS)
        row += f"{(f'{ratio:.2f}x' if ratio else 'n/a'):>10}{r.copies:>8}  >= {r.target}x numpy: "
        print(row + ("met" if ok else "MISSED"))
        if not ok:
            got = f"{ratio:.2f}x" if ratio else "n/a"
            warnings.append(
                f"{r.name}: {got} numpy's GFLOP/s, {r.copies} copies (target {r.target}x, 0 copies)"
            )
    cpu = h.machine_info()
    for w in warnings:
        print(f"WARNING: missed target on {cpu['cpu']} ({cpu['isa']}): {w}")


def _ratio(case: Case, peer: str) -> float | None:
    ours, theirs = case.results.get("tenferro"), case.results.get(peer)
    return ours / theirs if ours and theirs else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    args = parser.parse_args(argv)
    cases = run(args.quick)
    report(cases)
    maths = run_math(args.quick)
    report_math(maths)
    gemms = run_contractions(args.quick)
    report_contractions(gemms)
    rows: list[h.Row] = []
    for case in cases:
        rows += h.rows_from_results(
            case.name,
            case.unit,
            case.results,
            LIBS[1:],
            {"": case.target, **{p: case.target for p in LIBS[1:]}},
        )
    for case in maths:
        best = min(v for k, v in case.results.items() if k != "tenferro")
        rows += h.rows_from_results(
            case.name,
            case.unit,
            case.results,
            ("numpy", "jax"),
            {p: case.target for p in ("numpy", "jax")},
            met=case.results["tenferro"] <= best,
        )
    for g in gemms:
        if "threads=2" in g.gflops:
            rows.append(
                h.Row(
                    g.name,
                    "GFLOP/s",
                    g.gflops["threads=2"],
                    "threads=1",
                    g.gflops["threads=1"],
                    f">= {g.target}x threads=1",
                    higher_is_better=True,
                )
            )
            continue
        rows += h.rows_from_results(
            g.name,
            "GFLOP/s",
            g.gflops,
            LIBS[1:],
            {"numpy": f">= {g.target}x numpy, 0 copies (got {g.copies})"},
            higher_is_better=True,
        )
    h.write_results("bench_ops", rows, PEERS)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Thread scaling of the CPU engine: the same ops on ``CpuEngine(threads=1)`` and ``threads=2``.

Run in the environment of ``benches/bench_ops.py`` (``python benches/bench_engines.py
[--quick]``); JAX is not needed. Every case runs inside a session on an explicit engine, in
float64.

Cases
-----
elementwise 1e7
    ``exp(a * 0.5)`` (two primitives: ``mul`` then ``exp``) on 10**7 float64, in
    milliseconds (best of N). Memory-bound ``add`` scales less than this.
gemm 2048
    ``matmul`` of two 2048 x 2048 float64 matrices, in milliseconds (best of N), with GFLOP/s
    (2 n**3 flops). Needs ``tf.matmul``; skipped (``n/a``) on builds without it.
tiny add
    ``s.add(a, b)`` on 8 float64, in microseconds per op (``timeit``, best of several repeats):
    small ops run on the caller's thread, so this must not change from 1 to 2 threads (no
    worker wake-up).

The scaling ratio is time(1 thread) / time(2 threads): 2.0 is perfect on two cores, 1.0 means no
gain. Numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import _harness as h
import tenferro as tf

best_ms = h.time_best  # best single call of `repeat` (after a warm-up), in ms


def tiny_us(fn):
    """Best of 3 ``timeit`` runs (``autorange`` sizes them), µs per call."""
    return h.time_tiny(fn, number=None, repeat=3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    repeat = 3 if args.quick else 7
    rng = np.random.default_rng(0)
    big = rng.standard_normal(10**7)
    n = 2048
    ma, mb = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    small_a, small_b = np.ones(8), np.ones(8)
    has_matmul = hasattr(tf, "matmul")

    print(f"tenferro {tf.__version__} | allowed CPUs {tf.allowed_cpus()}")
    print(h.machine_line())
    rows: dict[str, dict[int, float]] = {
        "elementwise 1e7 (ms)": {},
        "gemm 2048 (ms)": {},
        "tiny add (us)": {},
    }
    engines = {threads: tf.CpuEngine(threads=threads) for threads in (1, 2)}
    rt = tf.Runtime()
    a, ta, tb = rt.constant(big), rt.constant(ma), rt.constant(mb)
    sa, sb = rt.constant(small_a), rt.constant(small_b)
    for threads, engine in engines.items():
        with rt.session(engine) as s:
            rows["elementwise 1e7 (ms)"][threads] = best_ms(lambda: s.exp(s.mul(a, 0.5)), repeat)
            if has_matmul:
                rows["gemm 2048 (ms)"][threads] = best_ms(
                    lambda: tf.matmul(ta, tb), max(2, repeat // 2)
                )
    # Tiny ops: alternate the engines round by round so machine noise hits both alike.
    with rt.session(engines[1]) as s1, rt.session(engines[2]) as s2:
        best = {1: float("inf"), 2: float("inf")}
        sessions = {1: s1, 2: s2}
        for round_ in range(4 if args.quick else 8):
            for threads in (1, 2) if round_ % 2 == 0 else (2, 1):
                s = sessions[threads]
                best[threads] = min(best[threads], tiny_us(lambda: s.add(sa, sb)))
        rows["tiny add (us)"] = best

    print(f"{'case':<24}{'1 thread':>12}{'2 threads':>12}{'t1/t2':>8}  note")
    for name, r in rows.items():
        if not r:
            print(f"{name:<24}{'n/a':>12}{'n/a':>12}{'n/a':>8}  tf.matmul missing on this build")
            continue
        ratio = r[1] / r[2]
        note = ""
        if name.startswith("gemm"):
            note = f"{2 * n**3 / (r[1] * 1e-3) / 1e9:.1f} / {2 * n**3 / (r[2] * 1e-3) / 1e9:.1f} GFLOP/s"
        if name.startswith("tiny"):
            note = "should stay ~1.0 (no worker wake-up)"
        print(f"{name:<24}{r[1]:>12.3f}{r[2]:>12.3f}{ratio:>8.2f}  {note}")
    sys.stdout.flush()
    out = [
        h.Row(
            f"{name.rsplit(' (', 1)[0]}, 2 threads",
            name.rsplit("(", 1)[1].rstrip(")"),
            r[2],
            "1 thread",
            r[1],
            "tiny: ~1.0x" if name.startswith("tiny") else "",
        )
        for name, r in rows.items()
        if r
    ]
    h.write_results("bench_engines", out)


if __name__ == "__main__":
    main()

"""quimb's ``TNOptimizer`` with ``autodiff_backend="tenferro"`` against ``"autograd"``: milliseconds
per loss evaluation on quimb's own test fixtures (periodic Heisenberg chain, L=10, χ=8, float32
and float64; complex random-field (MBL) chain, complex64), 100 L-BFGS-B iterations each.

Run from a source checkout with the development environment plus autograd::

    .venv/bin/python -m pip install autograd
    .venv/bin/python benches/bench_quimb.py [--rounds 3]

Interleaved: each round runs every (case, backend) once, so drifts of a shared machine hit both
alike; the table gives the median over rounds of (optimisation time / evaluations), the final
relative energy error of each backend and the ratio tenferro/autograd (target ≤ 0.75, printed,
never asserted).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import quimb.tensor as qtn  # noqa: E402

import tenferro as tf  # noqa: E402
from test_integrations import _heis, _mbl  # noqa: E402  (quimb's fixtures)


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


CASES = {
    "heis L=10 chi=8 float32": lambda: _heis(10, 8, "float32"),
    "heis L=10 chi=8 float64": lambda: _heis(10, 8, "float64"),
    "mbl L=10 chi=8 complex64": lambda: _mbl(10, 8, "complex64"),
}


def run(case: str, backend: str, iters: int) -> tuple[float, float]:
    psi0, H, norm_fn, loss_fn, en_ex = CASES[case]()
    opt = qtn.TNOptimizer(
        psi0,
        loss_fn=loss_fn,
        norm_fn=norm_fn,
        loss_constants={"H": H},
        autodiff_backend=backend,
        progbar=False,
    )
    t0 = time.perf_counter()
    opt.optimize(iters)
    dt = time.perf_counter() - t0
    return 1e3 * dt / opt._n, abs(opt.loss - en_ex) / abs(en_ex)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=100)
    args = ap.parse_args()
    tf.integrations.quimb.register()
    times: dict[tuple[str, str], list[float]] = {}
    errs: dict[tuple[str, str], float] = {}
    for _ in range(args.rounds):
        for case in CASES:
            for backend in ("tenferro", "autograd"):
                ms, rel = run(case, backend, args.iters)
                times.setdefault((case, backend), []).append(ms)
                errs[(case, backend)] = rel
    print(
        f"CPU: {cpu_name()}; {args.rounds} interleaved rounds, {args.iters} iterations, median ms/evaluation"
    )
    print(
        f"{'case':28s} {'tenferro':>9s} {'autograd':>9s} {'ratio':>6s} {'rel err tf':>11s} {'rel err ag':>11s}"
    )
    for case in CASES:
        a = statistics.median(times[(case, "tenferro")])
        b = statistics.median(times[(case, "autograd")])
        print(
            f"{case:28s} {a:9.1f} {b:9.1f} {a / b:6.2f} {errs[(case, 'tenferro')]:11.2e} {errs[(case, 'autograd')]:11.2e}"
        )


if __name__ == "__main__":
    main()

"""einsum path quality: ``optimize=tf.EinsumAnneal`` against cotengra's hyper-optimiser.

Run ``python benches/bench_einsum_planner.py [--time T] [--sizes 50,100,200] [--graphs 10]
[--only NAME ...]`` in an environment holding tenferro, opt_einsum and cotengra (``make bench``
does it in ``.venv-bench``, with cotengra pinned in ``benches/requirements-bench.txt``).

Cases
-----
stored instances
    The 19 networks of ``../shared/data/einsum-instances`` (every file but
    ``permutation_patterns.json``; shapes only).
random 3-regular graphs
    ``--graphs`` seeded random 3-regular graphs (bond dimension 2, closed: scalar output) of each
    of ``--sizes`` tensors.

Per case, with the same wall-clock budget ``T`` (``--time``, the issue's 30 s by default) and one
thread each: tenferro's ``EinsumAnneal(seed=0, max_time=T, max_repeats=10**6)`` and cotengra's
``HyperOptimizer(methods=["greedy", "labels"], optlib="random", max_time=T,
max_repeats=10**6, parallel=False)`` (its constructor is not timed; without ``--lhs`` the random
optlib samples uniformly, ``optlib_opts={"lhs": False}``: the default Latin-hypercube warm-up
pre-draws ``max_repeats / 2`` stratified samples per method, which takes minutes for ``10**6``
and draws the same distribution for the few thousand trials a budget allows). Both paths are scored by opt_einsum's ``opt_cost``
(``opt_einsum.contract_path(..., optimize=path)``), and ``"greedy"``'s cost is printed for
reference. Target: anneal ≤ 1.1× cotengra on every case. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time
import types
from typing import Any

import _harness as h
import numpy as np
import opt_einsum as oe
import tenferro as tf

TARGET = 1.1


def _find_data() -> pathlib.Path:
    """``$TENFERRO_EINSUM_INSTANCES``, else ``shared/data/einsum-instances`` beside the checkout,
    any of its ancestors, or ``/work`` (as ``benches/bench_einsum.py``)."""
    if "TENFERRO_EINSUM_INSTANCES" in os.environ:
        return pathlib.Path(os.environ["TENFERRO_EINSUM_INSTANCES"])
    rel = pathlib.Path("shared") / "data" / "einsum-instances"
    roots = [*pathlib.Path(__file__).resolve().parents[1].parents, pathlib.Path("/work")]
    return next((r / rel for r in roots if (r / rel).is_dir()), roots[0] / rel)


def instances() -> list[tuple[str, str, list[tuple[int, ...]]]]:
    out = []
    for path in sorted(_find_data().glob("*.json")):
        if path.name == "permutation_patterns.json":
            continue
        d = json.loads(path.read_text())
        out.append((path.stem, d["format_string"], [tuple(s) for s in d["shapes"]]))
    return out


def regular3(n: int, seed: int, bond: int = 2) -> tuple[str, list[tuple[int, ...]]]:
    """A seeded random 3-regular graph of ``n`` tensors (no self-loops or double edges)."""
    rng = np.random.default_rng(seed)
    while True:
        stubs = rng.permutation(np.repeat(np.arange(n), 3))
        pairs = [tuple(sorted(p)) for p in stubs.reshape(-1, 2).tolist()]
        if all(a != b for a, b in pairs) and len(set(pairs)) == len(pairs):
            break
    terms: list[list[str]] = [[] for _ in range(n)]
    for e, (a, b) in enumerate(pairs):
        terms[a].append(oe.get_symbol(e))
        terms[b].append(oe.get_symbol(e))
    return ",".join("".join(t) for t in terms) + "->", [(bond,) * 3] * n


def cost(subs: str, shapes: list[tuple[int, ...]], path: Any) -> int:
    return int(oe.contract_path(subs, *shapes, shapes=True, optimize=path)[1].opt_cost)


def run_case(
    name: str, subs: str, shapes: list[tuple[int, ...]], budget: float, ctg: Any, lhs: bool
) -> dict[str, Any]:
    metas = [types.SimpleNamespace(shape=s, dtype=np.dtype("f8")) for s in shapes]
    _, greedy = tf.einsum_path(subs, *metas, optimize="greedy")
    t0 = time.perf_counter()
    path, info = tf.einsum_path(
        subs, *metas, optimize=tf.EinsumAnneal(seed=0, max_time=budget, max_repeats=10**6)
    )
    t_anneal = time.perf_counter() - t0
    ours = cost(subs, shapes, path)
    assert ours == info.opt_cost, (name, ours, info.opt_cost)
    opt = ctg.HyperOptimizer(
        methods=["greedy", "labels"],
        optlib="random",
        max_time=budget,
        max_repeats=10**6,
        parallel=False,
        progbar=False,
        minimize="flops",
        optlib_opts=None if lhs else {"lhs": False},
    )
    t0 = time.perf_counter()
    cpath = oe.contract_path(subs, *shapes, shapes=True, optimize=opt)[0]
    t_ctg = time.perf_counter() - t0
    theirs = cost(subs, shapes, cpath)
    return {
        "case": name,
        "n": len(shapes),
        "greedy": int(greedy.opt_cost),
        "anneal": ours,
        "cotengra": theirs,
        "ratio": ours / theirs if theirs else 1.0,
        "t_anneal": t_anneal,
        "t_cotengra": t_ctg,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--time", type=float, default=30.0, help="seconds per planner and case")
    ap.add_argument("--sizes", default="50,100,200", help="3-regular graph sizes")
    ap.add_argument("--graphs", type=int, default=10, help="graphs per size")
    ap.add_argument("--no-instances", action="store_true", help="skip the stored instances")
    ap.add_argument(
        "--lhs",
        action="store_true",
        help="cotengra's default Latin-hypercube warm-up (pre-draws max_repeats/2 samples per "
        "method in its constructor: minutes for 10**6)",
    )
    ap.add_argument("--only", nargs="*", default=None, help="only cases whose name contains one")
    args = ap.parse_args()
    import cotengra as ctg

    cases: list[tuple[str, str, list[tuple[int, ...]]]] = []
    if not args.no_instances:
        cases += instances()
    for n in [int(s) for s in args.sizes.split(",") if s]:
        for seed in range(args.graphs):
            cases.append((f"3-regular n={n} seed={seed}", *regular3(n, seed)))
    if args.only:
        cases = [c for c in cases if any(o in c[0] for o in args.only)]
    print(f"# einsum planner quality: {h.machine_line()}")
    print(
        f"# tenferro {getattr(tf, '__version__', '?')}, cotengra {ctg.__version__}, opt_einsum "
        f"{oe.__version__}; budget T = {args.time:g} s per planner and case, one thread each; "
        f"cotengra LHS warm-up {'on' if args.lhs else 'off'}"
    )
    print(
        f"{'case':<52} {'n':>4} {'greedy':>10} {'anneal':>10} {'cotengra':>10} "
        f"{'ratio':>6} {'t_ann':>6} {'t_ctg':>6}"
    )
    rows, results = [], []
    for name, subs, shapes in cases:
        r = run_case(name, subs, shapes, args.time, ctg, args.lhs)
        results.append(r)
        flag = "" if r["ratio"] <= TARGET else "  > target"
        print(
            f"{name:<52} {r['n']:>4} {r['greedy']:>10.3e} {r['anneal']:>10.3e} "
            f"{r['cotengra']:>10.3e} {r['ratio']:>6.3f} {r['t_anneal']:>6.1f} "
            f"{r['t_cotengra']:>6.1f}{flag}",
            flush=True,
        )
        rows.append(
            h.Row(
                case=f"planner {name}",
                unit="flops",
                ours=float(r["anneal"]),
                peer="cotengra",
                peer_value=float(r["cotengra"]),
                target=f"<= {TARGET}x cotengra",
            )
        )
    worst = max((r["ratio"] for r in results), default=1.0)
    ok = sum(r["ratio"] <= TARGET for r in results)
    print(f"# {ok}/{len(results)} cases within {TARGET}x cotengra; worst ratio {worst:.3f}")
    h.write_results("bench_einsum_planner", rows, extra={"budget_s": args.time})
    sys.stdout.flush()


if __name__ == "__main__":
    main()

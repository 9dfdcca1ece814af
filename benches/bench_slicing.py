"""Slicing quality: tenferro's slice finder against cotengra's ``SliceFinder`` (not CI).

For each network (random 3-regular graphs and the stored einsum instances) and its greedy
path, with ``memory_limit`` = 1/8 and 1/64 of the unsliced largest intermediate, both finders
slice the *same* tree to the *same* limit; the table gives each one's FLOP overhead (sliced /
unsliced FLOPs), both in cotengra's cost model (its ``ContractionCosts.remove`` on each
finder's labels) and in tenferro's (opt_einsum's ``flop_count``), and their ratio
(target: tenferro <= 1.2 x cotengra). Finder times are single runs (noisy under load).

Run ``python benches/bench_slicing.py`` in an environment holding tenferro and cotengra
(``benches/requirements-bench.txt``).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import platform
import sys
import time

import numpy as np

import tenferro as tf

try:
    import cotengra as ctg
except ImportError:  # pragma: no cover
    sys.exit("bench_slicing needs cotengra (pip install cotengra)")

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))


def cpu_header() -> str:
    model = "unknown CPU"
    flags: set[str] = set()
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and model == "unknown CPU":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    isa = [
        f
        for f in (
            "avx512f",
            "avx512bw",
            "avx512vl",
            "avx512dq",
            "avx512_vbmi",
            "avx512_vnni",
            "avx512_bf16",
            "avx2",
            "fma",
        )
        if f in flags
    ]
    return f"{model} ({os.cpu_count()} cores; {', '.join(isa) or 'no AVX'}), {platform.python_version()}"


def regular(n: int, seed: int, d: int) -> tuple[str, list[tuple[int, ...]]]:
    from sliced_contraction import regular_graph

    edges = regular_graph(n, np.random.default_rng(seed))
    labels: list[list[str]] = [[] for _ in range(n)]
    for e, (a, b) in enumerate(edges):
        c = chr(0x4E00 + e)
        labels[a].append(c)
        labels[b].append(c)
    return ",".join("".join(t) for t in labels) + "->", [(d,) * 3 for _ in range(n)]


def instances() -> list[tuple[str, str, list[tuple[int, ...]]]]:
    """The stored einsum instances (``shared/data/einsum-instances``) but the heavy three."""
    import json

    env = os.environ.get("TENFERRO_EINSUM_INSTANCES")
    rel = pathlib.Path("shared") / "data" / "einsum-instances"
    cands = ([pathlib.Path(env)] if env else []) + [p / rel for p in ROOT.parents]
    cands.append(pathlib.Path("/work") / rel)
    data = next((c for c in cands if c.is_dir()), None)
    if data is None:
        return []
    heavy = ("gm_queen5_5_3", "permutation_focus_step409", "permutation_light_415")
    out = []
    for p in sorted(data.glob("*.json")):
        if p.name == "permutation_patterns.json" or any(h in p.name for h in heavy):
            continue
        d = json.loads(p.read_text())
        out.append((p.stem, d["format_string"], [tuple(s) for s in d["shapes"]]))
    return out


def compare(name: str, subs: str, shapes: list[tuple[int, ...]], frac: int) -> dict:
    ops = [np.broadcast_to(0.0, s) for s in shapes]
    path, info = tf.einsum_path(subs, *ops, optimize="greedy")
    limit = max(1, info.largest_intermediate // frac)
    t0 = time.perf_counter()
    _, sinfo = tf.einsum_path(subs, *ops, optimize=path, memory_limit=limit)
    t_tf = time.perf_counter() - t0
    sl = sinfo.slicing
    lhs, out = subs.split("->")
    inputs = [list(t) for t in lhs.split(",")]
    size_dict = {c: int(s[i]) for t, s in zip(inputs, shapes) for i, c in enumerate(t)}
    tree = ctg.ContractionTree.from_path(inputs, list(out), size_dict, path=path)
    t0 = time.perf_counter()
    sf = ctg.SliceFinder(tree, target_size=limit, seed=0)
    ix_ctg, cost_ctg = sf.search(max_repeats=16)
    t_ctg = time.perf_counter() - t0
    # tenferro's labels in cotengra's model
    cost = sf.costs[frozenset()]
    for ix in sl.labels:
        cost = cost.remove(ix)
    # cotengra's labels in tenferro's model: the same path sliced by hand is not exposed, so
    # tenferro's model is reported for its own labels only
    return {
        "name": name,
        "frac": frac,
        "limit": limit,
        "tf_labels": len(sl.labels),
        "ctg_labels": len(ix_ctg),
        "tf_over_ctgmodel": float(cost.overhead),
        "ctg_over": float(cost_ctg.overhead),
        "tf_over_tfmodel": sl.overhead,
        "tf_size_ctgmodel": int(cost.size),
        "t_tf": t_tf,
        "t_ctg": t_ctg,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two graphs only")
    args = ap.parse_args()
    print(f"# bench_slicing: {cpu_header()}; cotengra {ctg.__version__}")
    cases = [(f"3-regular n={n} d=2", *regular(n, 1, 2)) for n in (40, 60, 80)]
    cases += [(f"3-regular n={n} d=3", *regular(n, 2, 3)) for n in (30, 40)]
    if args.quick:
        cases = cases[:2]
    else:
        cases += instances()
    print(
        f"{'network':<44} {'limit':>6} {'tf sl':>5} {'ctg sl':>6} {'tf over':>9} "
        f"{'ctg over':>9} {'ratio':>6} {'tf model':>9} {'t tf':>7} {'t ctg':>7} fits"
    )
    ratios = []
    for name, subs, shapes in cases:
        for frac in (8, 64):
            try:
                r = compare(name, subs, shapes, frac)
            except Exception as e:  # noqa: BLE001 -- report and go on
                print(f"{name:<44} 1/{frac}: {type(e).__name__}: {e}")
                continue
            ratio = r["tf_over_ctgmodel"] / r["ctg_over"]
            ratios.append(ratio)
            print(
                f"{name[:44]:<44} 1/{frac:<4} {r['tf_labels']:>5} {r['ctg_labels']:>6} "
                f"{r['tf_over_ctgmodel']:>9.4g} {r['ctg_over']:>9.4g} {ratio:>6.3f} "
                f"{r['tf_over_tfmodel']:>9.4g} {r['t_tf']:>7.3f} {r['t_ctg']:>7.3f} "
                f"{r['tf_size_ctgmodel'] <= r['limit']}"
            )
    # "fits": tenferro's labels meet the limit in cotengra's size model too
    if ratios:
        print(
            f"# overhead ratio tenferro / cotengra (cotengra's model): max {max(ratios):.3f}, "
            f"geometric mean {float(np.exp(np.mean(np.log(ratios)))):.3f} over {len(ratios)} cases"
        )


if __name__ == "__main__":
    main()

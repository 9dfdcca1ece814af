"""einsum: tenferro against NumPy (``optimize=True``), opt_einsum, JAX and PyTorch.

Run ``python benches/bench_einsum.py [--quick]`` in an environment holding tenferro and
opt_einsum (``make bench`` does it in ``.venv-bench``). JAX and PyTorch are optional (``n/a``
when missing); everything runs on the CPU (JAX with ``jax_enable_x64``, results waited for with
``block_until_ready``).

Cases
-----
MPS transfer
    ``ab,asc,bsd->cd`` with bond 64 and 128, physical dimension 2, float64 and complex128 — one
    step of a tensor-network environment contraction. Target: tenferro ≤ 1.0× NumPy
    ``einsum(..., optimize=True)`` (PyTorch eager took 290 µs at bond 64 where NumPy took 118 µs
    on the 2-core reference machine; JAX's eager ``jnp.einsum`` costs ~210 µs even on 2×2).
stored-path instances
    The 19 networks of ``../shared/data/einsum-instances`` (every file but
    ``permutation_patterns.json``), seeded standard-normal float64 operands, contracted with
    their stored ``opt_flops`` path by tenferro, opt_einsum and NumPy (NumPy only accepts ASCII
    letters: ``n/a`` for networks with other labels; the path is passed as
    ``["einsum_path", ...]``). Target: tenferro ≤ the faster of NumPy and opt_einsum. The path
    is given, so contraction is timed without path search; opt_einsum's time includes its own
    bookkeeping of the given path (``contract_path`` is part of ``contract``).
path search
    ``tf.einsum_path(..., optimize="greedy")`` against ``opt_einsum.contract_path(...,
    optimize="greedy")`` on the same networks (shapes only, no contraction; both return the same
    path). Target: tenferro ≤ 0.2× opt_einsum (planning is the Rust crate ``tenferro-einsum``).
cached small call
    ``tf.einsum("ij,jk->ik")`` on two 8×8 float64 tensors, the plan cached, against
    ``np.einsum`` on the arrays. Target: ≤ 1.0× NumPy.

Operands: tenferro reads the same C-ordered NumPy memory as NumPy and opt_einsum, through
zero-copy ``tf.asarray(a, copy=False)`` views (JAX gets ``jnp.asarray`` copies).

Timing: per round, each library runs a few calls back to back (timed together), libraries in
round-robin with a 0.2 s sleep between them and the garbage collector off while timing; the
best round counts. Cases slower than a second get a single round. Ratios are tenferro/peer:
below 1 means tenferro is faster. Targets are printed, never asserted (testing.md).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import _harness as h
import numpy as np
import opt_einsum as oe
import tenferro as tf

PEERS = h.import_peers()
jax, jnp, torch = PEERS.jax, PEERS.jnp, PEERS.torch


def _find_data() -> pathlib.Path:
    """``$TENFERRO_EINSUM_INSTANCES``, else ``shared/data/einsum-instances`` beside the checkout,
    any of its ancestors, or ``/work`` (as ``tests/test_einsum_instances.py``)."""
    if "TENFERRO_EINSUM_INSTANCES" in os.environ:
        return pathlib.Path(os.environ["TENFERRO_EINSUM_INSTANCES"])
    rel = pathlib.Path("shared") / "data" / "einsum-instances"
    roots = [*pathlib.Path(__file__).resolve().parents[1].parents, pathlib.Path("/work")]
    return next((r / rel for r in roots if (r / rel).is_dir()), roots[0] / rel)


DATA = _find_data()
HEAVY = {
    "gm_queen5_5_3.wcsp.json",
    "tensornetwork_permutation_focus_step409_316.json",
    "tensornetwork_permutation_light_415.json",
}
LIBS = ("tenferro", "numpy", "opt_einsum", "jax", "torch")


@dataclass
class Case:
    name: str
    unit: str
    versus: tuple[str, ...]  # the ratio compares tenferro with the best of these
    target: bool = True  # False: the ratio is reported, no target
    limit: float = 1.0  # the target ratio
    results: dict[str, float] = field(default_factory=dict)


def measure(
    case: Case,
    fns: dict[str, Callable[[], Any]],
    rounds: int,
    budget: float = 0.05,
    sleep: float = h.SETTLE,
) -> None:
    """Round-robin best-of-``rounds`` (``_harness.round_robin``); each timing repeats a call
    until ``budget`` seconds (calibrated per library during the warm-up)."""
    scale = {"us": 1e6, "ms": 1e3, "s": 1.0}[case.unit]
    inner, slowest = h.calibrate(fns, budget)
    slow = slowest > 1.0  # single calls over a second: one round
    best = h.round_robin(
        fns, 1 if slow else rounds, inner, stat="min", warmup=0, sleep=sleep, desc="bench_einsum"
    )
    case.results = {lib: t * scale for lib, t in best.items()}


def _rand(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def case_transfer(bond: int, dtype: Any, rounds: int) -> Case:
    subs = "ab,asc,bsd->cd"
    case = Case(f"MPS transfer {subs} D={bond} {np.dtype(dtype).name}", "us", ("numpy",))
    rng = np.random.default_rng(bond)
    arrays = [
        _rand(rng, (bond, bond), dtype),
        _rand(rng, (bond, 2, bond), dtype),
        _rand(rng, (bond, 2, bond), dtype),
    ]
    ts = [tf.asarray(a, copy=False) for a in arrays]  # the memory NumPy and opt_einsum read
    fns: dict[str, Callable[[], Any]] = {
        "tenferro": lambda: tf.einsum(subs, *ts),
        "numpy": lambda: np.einsum(subs, *arrays, optimize=True),
        "opt_einsum": lambda: oe.contract(subs, *arrays),
    }
    if jax is not None:
        js = [jnp.asarray(a) for a in arrays]
        fns["jax"] = lambda: jnp.einsum(subs, *js).block_until_ready()
    if torch is not None:
        ps = [torch.from_numpy(a) for a in arrays]
        fns["torch"] = lambda: torch.einsum(subs, *ps)
    got = np.asarray(fns["tenferro"]())
    np.testing.assert_allclose(
        got, np.einsum(subs, *arrays, optimize=True), rtol=1e-9, atol=1e-9 * bond
    )
    measure(case, fns, rounds)
    return case


def case_small_cached(rounds: int) -> Case:
    """A cached 8x8 ``ij,jk->ik``: the fixed cost of one call (one crossing into Rust)."""
    case = Case("cached 8x8 ij,jk->ik (tensors vs np.einsum)", "us", ("numpy",))
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal((8, 8)), rng.standard_normal((8, 8))
    ta, tb = tf.asarray(a), tf.asarray(b)
    np.testing.assert_allclose(np.asarray(tf.einsum("ij,jk->ik", ta, tb)), a @ b, rtol=1e-12)
    fns: dict[str, Callable[[], Any]] = {
        "tenferro": lambda: tf.einsum("ij,jk->ik", ta, tb),
        "numpy": lambda: np.einsum("ij,jk->ik", a, b),
    }
    measure(case, fns, rounds, sleep=0.02)
    return case


def load(path: pathlib.Path) -> tuple[str, list[np.ndarray], list[tuple[int, ...]]]:
    d = json.loads(path.read_text())
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(tuple(s)) for s in d["shapes"]]
    return d["format_string"], arrays, [tuple(p) for p in d["paths"]["opt_flops"]["path"]]


def case_instance(path: pathlib.Path, rounds: int) -> tuple[Case, Case]:
    subs, arrays, stored = load(path)
    unit = "s" if path.name in HEAVY else "ms"
    case = Case(f"{path.stem} (stored path)", unit, ("numpy", "opt_einsum"))
    ts = [tf.asarray(a, copy=False) for a in arrays]  # the memory NumPy and opt_einsum read
    fns: dict[str, Callable[[], Any]] = {
        "tenferro": lambda: tf.einsum(subs, *ts, optimize=stored),
        "opt_einsum": lambda: oe.contract(subs, *arrays, optimize=stored),
    }
    if subs.replace(",", "").replace("->", "").isascii() and all(
        c.isalpha() for c in subs.replace(",", "").replace("->", "")
    ):
        np_path = ["einsum_path", *stored]
        fns["numpy"] = lambda: np.einsum(subs, *arrays, optimize=np_path)
    measure(case, fns, rounds)
    search = Case(f"{path.stem} (greedy path search)", "ms", ("opt_einsum",), limit=0.2)
    measure(
        search,
        {
            "tenferro": lambda: tf.einsum_path(subs, *arrays, optimize="greedy"),
            "opt_einsum": lambda: oe.contract_path(subs, *arrays, optimize="greedy"),
        },
        rounds,
        sleep=0.02,  # pure Python on both sides: no worker threads to settle
    )
    return case, search


def report(cases: list[Case]) -> None:
    libs = [lib for lib in LIBS if any(lib in c.results for c in cases)]
    head = f"{'case':<62}" + "".join(f"{lib:>12}" for lib in libs) + f"{'ratio':>9}  target"
    print(head)
    print("-" * len(head))
    for c in cases:
        row = f"{c.name[:61]:<62}"
        for lib in libs:
            v = c.results.get(lib)
            row += f"{v:>10.3g}{c.unit:>2}" if v is not None else f"{'n/a':>12}"
        peers = [c.results[p] for p in c.versus if p in c.results]
        if peers:
            ratio = c.results["tenferro"] / min(peers)
            if c.target:
                met = "met" if ratio <= c.limit else "MISSED"
                row += f"{ratio:>9.2f}  {met} (≤ {c.limit}× {'/'.join(c.versus)})"
            else:
                row += f"{ratio:>9.2f}  (reported, no target)"
        print(row)


def write_results(cases: list[Case]) -> None:
    """Rows for ``benches/report.py`` (``benches/results/bench_einsum.json``), one per peer."""

    rows: list[h.Row] = []
    for c in cases:
        target = f"<= {c.limit}x {'/'.join(c.versus)}" if c.target else ""
        rows += h.rows_from_results(
            c.name, c.unit, c.results, LIBS[1:], {p: target for p in c.versus} | {"": target}
        )
    h.write_results("bench_einsum", rows, PEERS)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--quick", action="store_true", help="fewer rounds, skip the three heavy networks"
    )
    args = ap.parse_args()
    rounds = 3 if args.quick else 7
    print(f"{h.versions_line(PEERS, tf)} | opt_einsum {oe.__version__}")
    print(h.machine_line(h.machine_info(PEERS)))
    cases = [case_transfer(b, d, rounds) for b in (64, 128) for d in (np.float64, np.complex128)]
    cases.append(case_small_cached(rounds))
    searches = []
    files = sorted(p for p in DATA.glob("*.json") if p.name != "permutation_patterns.json")
    for p in files:
        if args.quick and p.name in HEAVY:
            continue
        c, s = case_instance(p, rounds)
        cases.append(c)
        searches.append(s)
    report(cases + searches)
    write_results(cases + searches)


if __name__ == "__main__":
    main()

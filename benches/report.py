"""Turn the benches' results into ``docs/benchmarks.md`` (tables) and bar charts of the ratios.

Reads every ``benches/results/*.json`` present (written by the benches through
``_harness.write_results``; format in ``benches/_harness.py``) and writes one table per bench —
case, unit, tenferro, peer, the peer's value, the ratio tenferro/peer, the target — with the
machine and date of each run, plus horizontal bar charts of the ratios on a log scale (for times,
bars left of 1 mean tenferro is faster; throughput ratios are inverted so the same holds):
``docs/benchmarks.png`` for the headline benches (embedded in the README) and
``docs/benchmarks_all.png`` for every row.
The headline benches' tables also replace the text between ``<!-- bench:begin -->`` and
``<!-- bench:end -->`` in ``README.md``. ``make bench`` runs it last; ``python benches/report.py`` re-runs it alone.

A results file may carry extra tables (``"tables": [{"title", "columns", "rows"}]``, e.g. the
graph-mode first-call and pass-ablation tables of ``bench_tfim``) and the bench's printed target
verdicts (``"verdicts": [str]``); both follow the bench's main table. A bench without a results
file keeps its section of the existing ``docs/benchmarks.md`` (so re-running one bench and the
report updates that bench's section only); ``benchmarks_all.png`` is then left as it is.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
README_BENCHES = ("bench_tfim", "bench_ad")  # the headline table in README.md
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
ORDER = (
    "bench_tfim",
    "bench_ad",
    "bench_ops",
    "bench_engines",
    "bench_einsum",
    "bench_linalg",
    "bench_fft",
)
TITLES = {
    "bench_tfim": "Main job: TFIM variational MPS, one energy+gradient evaluation",
    "bench_ad": "Automatic differentiation, eager and tf.jit",
    "bench_ops": "Primitive ops and contractions",
    "bench_engines": "Thread scaling of the CPU engine",
    "bench_einsum": "einsum",
    "bench_linalg": "Linear algebra",
    "bench_fft": "FFT (tf.fft against numpy.fft and jax.numpy.fft)",
}


def _fmt(v: float | None) -> str:
    if v is None:
        return "n/a"
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"


def load(results_dir: Path) -> list[dict[str, Any]]:
    found = {p.stem: json.loads(p.read_text()) for p in sorted(results_dir.glob("*.json"))}
    names = [n for n in ORDER if n in found] + sorted(n for n in found if n not in ORDER)
    return [found[n] for n in names]


def warnings(results: list[dict[str, Any]]) -> list[str]:
    """One ``CPU`` line per results file, then a ``WARNING:`` line per missed target: rows whose
    bench marked them (``"met": false``) and the bench's printed verdicts that say ``MISSED``."""
    out = []
    for res in results:
        m = res.get("machine", {})
        cpu = res.get("cpu") or f"{m.get('cpu', '?')} ({m.get('isa', '?')})"
        out.append(f"{res['bench']}: CPU {cpu}, {m.get('date', '?')}")
    for res in results:
        for row in res["rows"]:
            if row.get("met") is False:
                ratio = row.get("ratio")
                q = f"{ratio:.2f}x {row.get('peer')}" if ratio else "n/a"
                out.append(
                    f"WARNING: {res['bench']}: {row['case']}: {q} misses {row.get('target', '')}"
                )
        for verdict in res.get("verdicts", []):
            if "MISSED" in verdict:
                out.append(f"WARNING: {res['bench']}: {verdict.strip()}")
    return out


def _speed_ratio(row: dict[str, Any]) -> float | None:
    """time(tenferro)/time(peer): < 1 means tenferro is faster, whatever the unit."""
    r = row.get("ratio")
    if not r:
        return None
    return 1.0 / r if row.get("higher_is_better") else r


def existing_sections(md: Path) -> dict[str, str]:
    """The per-bench sections of an existing ``benchmarks.md``, keyed by bench name (from the
    ``(`benches/NAME.py`)`` of each ``## `` heading)."""
    if not md.exists():
        return {}
    sections: dict[str, str] = {}
    name, lines = None, []
    for line in md.read_text().splitlines() + ["## end"]:
        if line.startswith("## "):
            if name is not None:
                sections[name] = "\n".join(lines).rstrip() + "\n"
            m = re.search(r"\(`benches/(\w+)\.py`\)", line)
            name, lines = (m.group(1) if m else None), [line]
        elif name is not None:
            lines.append(line)
    return sections


def markdown(
    results: list[dict[str, Any]],
    png_name: str | None,
    all_png_name: str | None = None,
    kept: dict[str, str] | None = None,
) -> str:
    out = [
        "# Benchmarks",
        "",
        "Produced by `make bench` (the benches in `benches/`, then `benches/report.py`); do not edit "
        "by hand. Every peer runs in the same process on the same machine, on the CPU, in float64 / "
        "complex128 (JAX with `jax_enable_x64`). **ratio = tenferro / peer** in the row's unit: for "
        "times (ms, µs) below 1 means tenferro is faster; for throughputs (GFLOP/s, marked ↑) above "
        "1 means tenferro is faster. Targets are the project's goals, printed, never asserted.",
        "",
    ]
    if png_name:
        out += [
            f"![tenferro / peer time ratios of the headline benches (log scale; left of 1 = "
            f"tenferro faster)]({png_name})",
            "",
        ]
    if all_png_name:
        out += [f"Every row of every bench as one chart: [{all_png_name}]({all_png_name}).", ""]
    by_name = {res["bench"]: res for res in results}
    kept = {k: v for k, v in (kept or {}).items() if k not in by_name}
    names = [n for n in ORDER if n in by_name or n in kept]
    names += sorted(n for n in [*by_name, *kept] if n not in ORDER)
    for name in names:
        if name in kept:
            out += [kept[name]]
            continue
        res = by_name[name]
        m = res.get("machine", {})
        title = TITLES.get(res["bench"], res["bench"])
        out += [f"## {title} (`benches/{res['bench']}.py`)", ""]
        out += [f"Machine: {_machine(m)}.", ""]
        out += _table(res["rows"])
        out.append("")
        for extra in res.get("tables", []):
            out += [f"**{extra['title']}**", ""]
            out += _extra_table(extra["columns"], extra["rows"])
            out.append("")
        if res.get("verdicts"):
            out += ["Targets (as the bench printed them):", ""]
            out += [f"- {v}" for v in res["verdicts"]]
            out.append("")
    return "\n".join(out)


def _extra_table(columns: list[str], rows: list[list[Any]]) -> list[str]:
    out = [
        "| " + " | ".join(columns) + " |",
        "| " + " | ".join(["---"] + ["---:"] * (len(columns) - 1)) + " |",
    ]
    for r in rows:
        cells = [
            _fmt(v) if isinstance(v, (int, float)) else ("" if v is None else str(v)) for v in r
        ]
        out.append("| " + " | ".join(cells) + " |")
    return out


def _table(rows: list[dict[str, Any]]) -> list[str]:
    out = [
        "| case | unit | tenferro | peer | peer value | ratio | target |",
        "| --- | --- | ---: | --- | ---: | ---: | --- |",
    ]
    for r in rows:
        unit = r["unit"] + (" ↑" if r.get("higher_is_better") else "")
        ratio = f"{r['ratio']:.3g}×" if r.get("ratio") else "n/a"
        out.append(
            f"| {r['case']} | {unit} | {_fmt(r.get('ours'))} | {r.get('peer') or '—'} | "
            f"{_fmt(r.get('peer_value'))} | {ratio} | {r.get('target') or ''} |"
        )
    return out


def _machine(m: dict[str, Any]) -> str:
    libs = ", ".join(f"{k} {m[k]}" for k in ("tenferro", "numpy", "jax", "torch") if k in m)
    isa = f", {m['isa']}" if m.get("isa") else ""
    return (
        f"{m.get('cpu', '?')} ({m.get('machine', '?')}{isa}), {m.get('allowed_cpus', '?')} of "
        f"{m.get('cpus', '?')} CPUs usable; Python {m.get('python', '?')}; {libs}; "
        f"run {m.get('date', '?')}"
    )


def update_readme(results: list[dict[str, Any]], readme: Path) -> bool:
    """Replace the text between the bench markers of README.md by the headline table."""
    if not readme.exists():
        return False
    text = readme.read_text()
    if BEGIN not in text or END not in text:
        return False
    head = [r for r in results if r["bench"] in README_BENCHES]
    if not head:
        return False
    lines: list[str] = []
    for res in head:
        lines.append(
            f"**{TITLES.get(res['bench'], res['bench'])}** — {_machine(res.get('machine', {}))}."
        )
        lines.append("")
        lines += _table(res["rows"])
        lines.append("")
    a, b = text.index(BEGIN) + len(BEGIN), text.index(END)
    readme.write_text(text[:a] + "\n" + "\n".join(lines) + text[b:])
    return True


def chart(results: list[dict[str, Any]], path: Path) -> bool:
    try:
        from matplotlib.figure import Figure
        from matplotlib.patches import Patch
    except ImportError:
        print("matplotlib not installed: no chart", file=sys.stderr)
        return False
    labels, ratios, colors, colors_peers = [], [], [], []
    palette = {"jax": "#1f77b4", "jax.jit": "#9467bd", "torch": "#d62728", "numpy": "#2ca02c"}
    for res in results:
        for r in res["rows"]:
            v = _speed_ratio(r)
            if v is None:
                continue
            labels.append(f"{r['case']}  vs {r['peer']}")
            ratios.append(v)
            colors.append(palette.get(r["peer"], "#7f7f7f"))
            colors_peers.append(r["peer"])
    if not ratios:
        return False
    fig = Figure(figsize=(9, 0.28 * len(ratios) + 1.4), layout="constrained")
    ax = fig.subplots()
    y = list(range(len(ratios)))[::-1]
    # Bars grow from 1 (parity) towards the ratio: left = tenferro faster, right = slower.
    ax.barh(y, [r - 1.0 for r in ratios], left=1.0, color=colors)
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", lw=0.8)
    lo, hi = min(ratios + [1.0]), max(ratios + [1.0])
    ax.set_xlim(lo / 2.5, hi * 2.5)
    for yy, r in zip(y, ratios):
        ax.text(
            r * (0.92 if r < 1 else 1.08),
            yy,
            f"{r:.3g}×",
            va="center",
            ha="right" if r < 1 else "left",
            fontsize=7,
        )
    used = [p for p in palette if p in {c for c in colors_peers}]
    ax.legend(
        [Patch(color=palette[p]) for p in used],
        [f"vs {p}" for p in used],
        fontsize=7,
        loc="lower right",
    )
    ax.set_yticks(list(y), labels, fontsize=7)
    ax.set_xlabel("time ratio tenferro / peer (log scale; < 1: tenferro faster)")
    date = results[0].get("machine", {}).get("date", "")
    cpu = results[0].get("machine", {}).get("cpu", "")
    ax.set_title(f"tenferro vs peers — {cpu}, {date}", fontsize=9)
    ax.grid(True, axis="x", which="both", alpha=0.3)
    fig.savefig(path, dpi=110)
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--results", type=Path, default=HERE / "results")
    p.add_argument("--out", type=Path, default=ROOT / "docs")
    p.add_argument(
        "--readme",
        type=Path,
        default=ROOT / "README.md",
        help="README whose bench markers get the headline table",
    )
    args = p.parse_args(argv)
    results = load(args.results)
    if not results:
        print(f"no results in {args.results}: run the benches first", file=sys.stderr)
        return 1
    for line in warnings(results):
        print(line)
    args.out.mkdir(parents=True, exist_ok=True)
    md = args.out / "benchmarks.md"
    names = {r["bench"] for r in results}
    kept = {k: v for k, v in existing_sections(md).items() if k not in names}
    if kept:
        print(
            f"no results for {', '.join(sorted(kept))}: their sections of {md} are kept",
            file=sys.stderr,
        )
    png = args.out / "benchmarks.png"  # the headline benches (README)
    headline = [r for r in results if r["bench"] in README_BENCHES] or results
    has_png = chart(headline, png)
    all_png = args.out / "benchmarks_all.png"  # every row
    drew_all = False
    if kept:  # a chart of some benches only would mislead: keep the previous one
        has_all = all_png.exists()
    else:
        has_all = drew_all = len(headline) < len(results) and chart(results, all_png)
    md.write_text(
        markdown(results, png.name if has_png else None, all_png.name if has_all else None, kept)
    )
    print(f"wrote {md}" + (f", {png}" if has_png else "") + (f", {all_png}" if drew_all else ""))
    if args.readme is not None and update_readme(results, args.readme):
        print(f"updated the benchmark table of {args.readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The benchmark plumbing: ``benches/_harness.py`` writes results, ``benches/report.py`` renders them.

The benches themselves are not run here (they need the peers of ``.venv-bench`` and minutes);
this checks that a results file round-trips into the Markdown table, the README block and the
chart, with ratios computed as tenferro / peer.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

BENCHES = Path(__file__).resolve().parent.parent / "benches"


@pytest.fixture()
def bench_modules(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(BENCHES))
    harness = importlib.import_module("_harness")
    report = importlib.import_module("report")
    monkeypatch.setattr(harness, "RESULTS_DIR", tmp_path / "results")
    yield harness, report
    for name in ("_harness", "report"):
        sys.modules.pop(name, None)


def test_round_robin_and_ratios(bench_modules) -> None:
    harness, _ = bench_modules
    secs = harness.round_robin(
        {"a": lambda: sum(range(1000)), "b": lambda: None}, rounds=3, inner=2, warmup=1, sleep=0.0
    )
    assert set(secs) == {"a", "b"} and all(v > 0 for v in secs.values())
    rows = harness.rows_from_results(
        "case",
        "ms",
        {"tenferro": 2.0, "jax": 8.0, "torch": 1.0},
        ("jax", "jax.jit", "torch"),
        {"jax": "<= 0.25x"},
    )
    assert [(r.peer, r.ratio, r.target) for r in rows] == [
        ("jax", 0.25, "<= 0.25x"),
        ("torch", 2.0, ""),
    ]
    lone = harness.rows_from_results("case", "ms", {"tenferro": 2.0}, ("jax",))
    assert len(lone) == 1 and lone[0].peer is None and lone[0].ratio is None


def test_report_renders_results(bench_modules, tmp_path) -> None:
    harness, report = bench_modules
    rows = [
        harness.Row("TFIM N=16", "ms", 2.0, "jax", 100.0, "<= 10 ms"),
        harness.Row("GEMM", "GFLOP/s", 20.0, "numpy", 25.0, ">= 0.9x", higher_is_better=True),
    ]
    path = harness.write_results("bench_tfim", rows)
    data = json.loads(path.read_text())
    assert data["bench"] == "bench_tfim" and "date" in data["machine"]
    assert data["rows"][0]["ratio"] == pytest.approx(0.02)
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- bench:begin -->\nold\n<!-- bench:end -->\noutro\n")
    out = tmp_path / "docs"
    assert (
        report.main(["--results", str(path.parent), "--out", str(out), "--readme", str(readme)])
        == 0
    )
    md = (out / "benchmarks.md").read_text()
    assert "| TFIM N=16 | ms | 2 | jax | 100 | 0.02× | <= 10 ms |" in md
    assert "GFLOP/s ↑" in md
    assert (out / "benchmarks.png").read_bytes()[:4] == b"\x89PNG"
    text = readme.read_text()
    assert "old" not in text and "0.02×" in text and text.endswith("<!-- bench:end -->\noutro\n")


def test_report_extra_tables_verdicts_and_kept_sections(bench_modules, tmp_path) -> None:
    """Extra tables and verdicts of a results file follow its table; a bench without a results
    file keeps its section of the existing page (re-running one bench updates only its section)."""
    harness, report = bench_modules
    rows = [harness.Row("TFIM N=16, tf.jit", "ms", 1.0, "jax.jit", 2.0, "<= 1.1x")]
    tables = [
        {
            "title": "pass ablation",
            "columns": ["passes", "instructions", "ms"],
            "rows": [["all passes", 205, 1.25], ["no cse", 230, None]],
        }
    ]
    path = harness.write_results(
        "bench_tfim", rows, extra={"tables": tables, "verdicts": ["tf.jit 0.5x -> met"]}
    )
    assert json.loads(path.read_text())["machine"]["isa"]
    out = tmp_path / "docs"
    out.mkdir()
    old = (
        "# Benchmarks\n\nintro\n\n## Old TFIM (`benches/bench_tfim.py`)\n\nstale tfim\n\n"
        "## Einsum (`benches/bench_einsum.py`)\n\n| einsum row |\n"
    )
    (out / "benchmarks.md").write_text(old)
    assert (
        report.main(
            [
                "--results",
                str(path.parent),
                "--out",
                str(out),
                "--readme",
                str(tmp_path / "absent.md"),
            ]
        )
        == 0
    )
    md = (out / "benchmarks.md").read_text()
    assert (
        "stale tfim" not in md
        and "| TFIM N=16, tf.jit | ms | 1 | jax.jit | 2 | 0.5× | <= 1.1x |" in md
    )
    assert (
        "**pass ablation**" in md
        and "| all passes | 205 | 1.25 |" in md
        and "| no cse | 230 |  |" in md
    )
    assert "- tf.jit 0.5x -> met" in md
    assert "## Einsum (`benches/bench_einsum.py`)\n\n| einsum row |" in md
    assert md.index("bench_tfim.py") < md.index("bench_einsum.py")  # ORDER kept


def test_results_record_the_cpu_and_report_warns_on_missed_targets(bench_modules) -> None:
    harness, report = bench_modules
    rows = [
        harness.Row("exp, 1e6 f64", "ms", 2.0, "numpy", 1.0, "<= 1.0x", met=False),
        harness.Row("log, 1e6 f64", "ms", 1.0, "numpy", 2.0, "<= 1.0x", met=True),
    ]
    path = harness.write_results("bench_ops", rows, extra={"verdicts": ["  a: 3 ms -> MISSED"]})
    data = json.loads(path.read_text())
    cpu = harness.cpu_description()
    assert data["cpu"] == cpu and "(" in cpu and data["machine"]["isa"] in cpu
    lines = report.warnings([data])
    assert lines[0].startswith(f"bench_ops: CPU {cpu}")
    assert lines[1:] == [
        "WARNING: bench_ops: exp, 1e6 f64: 2.00x numpy misses <= 1.0x",
        "WARNING: bench_ops: a: 3 ms -> MISSED",
    ]

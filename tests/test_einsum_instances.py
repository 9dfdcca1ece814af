"""The stored-path einsum instances of ``../shared/data/einsum-instances`` (tenferro-benchmark,
MIT): each network is contracted with its stored ``opt_flops`` path on seeded standard-normal
float64 operands and compared with ``opt_einsum.contract`` on the same path (norm-wise relative
error ≤ 1e-8). The three heavy networks carry the ``slow`` marker (``make test`` runs them)."""

from __future__ import annotations

import json
import os
import pathlib
import time
import numpy as np
import pytest

import tenferro as tf

oe = pytest.importorskip("opt_einsum")


def _find_data() -> pathlib.Path:
    """The instances directory: ``$TENFERRO_EINSUM_INSTANCES``, else ``shared/data/einsum-instances``
    beside the checkout or any of its ancestors, else this project's machine layout
    (``/work/shared``), so that a clean clone anywhere on the machine finds it."""
    env = os.environ.get("TENFERRO_EINSUM_INSTANCES")
    root = pathlib.Path(__file__).resolve().parents[1]
    rel = pathlib.Path("shared") / "data" / "einsum-instances"
    candidates = ([pathlib.Path(env)] if env else []) + [p / rel for p in root.parents]
    candidates.append(pathlib.Path("/work") / rel)
    return next((c for c in candidates if c.is_dir()), candidates[0])


DATA = _find_data()
HEAVY = {
    "gm_queen5_5_3.wcsp.json",
    "tensornetwork_permutation_focus_step409_316.json",
    "tensornetwork_permutation_light_415.json",
}
FILES = (
    sorted(p.name for p in DATA.glob("*.json") if p.name != "permutation_patterns.json")
    if DATA.is_dir()
    else []
)


def load(name: str) -> tuple[str, list[np.ndarray], list[tuple[int, ...]]]:
    """Subscripts, seeded operands (``default_rng(0)``, standard normal) and the stored path."""
    d = json.loads((DATA / name).read_text())
    assert d["dtype"] == "float64" and d["num_tensors"] == len(d["shapes"])
    rng = np.random.default_rng(0)
    ops = [rng.standard_normal(tuple(s)) for s in d["shapes"]]
    path = [tuple(p) for p in d["paths"]["opt_flops"]["path"]]
    return d["format_string"], ops, path


def rel_error(out: np.ndarray, ref: np.ndarray) -> float:
    """‖out − ref‖ / ‖ref‖, scaled first so that values near the float range do not overflow."""
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    if scale == 0.0:
        return float(np.max(np.abs(out))) if out.size else 0.0
    return float(np.linalg.norm((out - ref) / scale) / np.linalg.norm(ref / scale))


def test_instances_are_present() -> None:
    assert len(FILES) == 19, f"expected 19 stored-path instances in {DATA}, found {len(FILES)}"


@pytest.mark.parametrize(
    "name", [pytest.param(f, marks=pytest.mark.slow) if f in HEAVY else f for f in FILES]
)
def test_instance_matches_opt_einsum(name: str) -> None:
    subscripts, ops, path = load(name)
    t0 = time.perf_counter()
    ref = np.asarray(oe.contract(subscripts, *ops, optimize=path))
    t1 = time.perf_counter()
    out = np.asarray(tf.einsum(subscripts, *[tf.asarray(o) for o in ops], optimize=path))
    t2 = time.perf_counter()
    assert out.shape == ref.shape and out.dtype == np.float64
    assert np.all(np.isfinite(out)) == np.all(np.isfinite(ref))
    err = rel_error(out, ref)
    assert err <= 1e-8, f"{name}: relative error {err:.3e}"
    # per-instance times (``pytest -s``); benches/bench_einsum.py measures them properly
    print(f"{name}: opt_einsum {t1 - t0:.3f} s, tenferro {t2 - t1:.3f} s, rel. error {err:.1e}")


@pytest.mark.parametrize("name", [f for f in FILES if f not in HEAVY])
def test_instance_path_is_kept(name: str) -> None:
    """``einsum_path`` reports the stored path back unchanged, with opt_einsum's FLOP count."""
    subscripts, ops, path = load(name)
    got, info = tf.einsum_path(subscripts, *ops, optimize=path)
    assert got == path and info.method == "explicit path"
    _, oe_info = oe.contract_path(subscripts, *ops, optimize=path)
    assert info.opt_cost == oe_info.opt_cost

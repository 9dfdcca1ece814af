"""The main job's inner loop: one energy+gradient evaluation of the TFIM variational MPS.

Run with ``make bench`` (or ``PYTHONPATH=python .venv-bench/bin/python benches/bench_tfim.py
[--quick]`` from a source checkout). Milliseconds per evaluation of ``E(x)`` and ``∂E/∂x``
(``x`` the real parameter vector, as L-BFGS sees it) for (16 sites, bond 8) and (32 sites,
bond 16), float64 and complex128:

- tenferro: :class:`tenferro.examples.tfim.TfimProblem` exactly as ``make demo`` runs it (fresh
  leaves from ``x``, three pairwise ``tf.einsum`` per site, ``backward``, gradients back to
  NumPy), on a serial CPU engine;
- JAX eager: the same contraction with ``jnp.einsum`` (same pairwise steps) under
  ``jax.value_and_grad``, not compiled, gradients back to NumPy;
- ``jax.jit``: that function compiled once (a reference for a traced, fused program);
- PyTorch eager (best effort, when installed): ``torch.einsum`` and ``torch.autograd.grad``.

All start from the same random MPS and their energies and gradients are cross-checked before
timing. Timing: round-robin over the libraries, median of the rounds (``benches/_harness.py``).
Ratios are tenferro/peer (below 1: tenferro faster). Targets (16 sites, bond 8, float64):
≤ 10 ms per evaluation and ≤ 0.25× JAX eager; printed, never asserted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

import _harness as h
import tenferro as tf
from tenferro.examples import tfim

PEER_NAMES = ("jax", "jax.jit", "torch")
CASES = ((16, 8), (32, 16))
DTYPES = ("float64", "complex128")
STEPS = (tfim._STEP_KET, tfim._STEP_MPO, tfim._STEP_BRA)


def _split(xp: Any, x: Any, problem: tfim.TfimProblem) -> list[Any]:
    """Real vector -> site tensors, in the array library ``xp`` (jnp or torch)."""
    n = problem.n_complex
    flat = x[:n] + 1j * x[n:] if problem.is_complex else x
    o = problem.offsets
    return [flat[o[k] : o[k + 1]].reshape(s) for k, s in enumerate(problem.shapes)]


def jax_fns(peers: h.Peers, problem: tfim.TfimProblem) -> tuple[Callable, Callable]:
    jax, jnp = peers.jax, peers.jnp
    mpo = jnp.asarray(tfim.tfim_mpo(problem.g, problem.J, problem.dtype))

    def energy(x: Any) -> Any:
        env = jnp.zeros((1, 3, 1), dtype=problem.dtype).at[0, 0, 0].set(1.0)
        for a in _split(jnp, x, problem):
            bra = jnp.conj(a) if problem.is_complex else a
            env = jnp.einsum(STEPS[0], env, a)
            env = jnp.einsum(STEPS[1], env, mpo)
            env = jnp.einsum(STEPS[2], env, bra)
        return jnp.real(env[0, 2, 0]) / jnp.real(env[0, 0, 0])

    eager = jax.value_and_grad(energy)
    jitted = jax.jit(eager)

    def run(fn: Callable) -> Callable:
        def call(x: np.ndarray) -> tuple[float, np.ndarray]:
            e, g = fn(jnp.asarray(x))
            return float(e), np.asarray(g)

        return call

    return run(eager), run(jitted)


def torch_fn(peers: h.Peers, problem: tfim.TfimProblem) -> Callable:
    torch = peers.torch
    mpo = torch.from_numpy(tfim.tfim_mpo(problem.g, problem.J, problem.dtype))

    def call(x: np.ndarray) -> tuple[float, np.ndarray]:
        xt = torch.from_numpy(np.array(x)).requires_grad_(True)
        env = torch.zeros((1, 3, 1), dtype=mpo.dtype)
        env[0, 0, 0] = 1.0
        for a in _split(torch, xt, problem):
            bra = torch.conj(a) if problem.is_complex else a
            env = torch.einsum(STEPS[0], env, a)
            env = torch.einsum(STEPS[1], env, mpo)
            env = torch.einsum(STEPS[2], env, bra)
        e = torch.real(env[0, 2, 0]) / torch.real(env[0, 0, 0])
        (g,) = torch.autograd.grad(e, xt)
        return float(e), g.numpy()

    return call


def measure_case(peers: h.Peers, sites: int, bond: int, dtype: str, rounds: int) -> dict[str, float]:
    """ms per evaluation of every available library for one case."""
    engine = tf.CpuEngine(threads=1)  # as `make demo`
    rt = tf.Runtime()
    problem = tfim.TfimProblem(sites, bond, 1.0, 1.0, dtype, runtime=rt)
    x = problem.pack(tfim.random_mps(sites, bond, seed=0, dtype=dtype))
    with rt.session(engine):
        fns: dict[str, Callable[[np.ndarray], tuple[float, np.ndarray]]] = {
            "tenferro": problem.value_and_grad
        }
        if peers.jax is not None:
            fns["jax"], fns["jax.jit"] = jax_fns(peers, problem)
        if peers.torch is not None:
            fns["torch"] = torch_fn(peers, problem)
        e_ref, g_ref = fns["tenferro"](x)
        for lib, fn in fns.items():  # cross-check before timing
            e, g = fn(x)
            assert abs(e - e_ref) <= 1e-10 * abs(e_ref), (lib, e, e_ref)
            err = np.linalg.norm(g - g_ref) / np.linalg.norm(g_ref)
            assert err <= 1e-8, (lib, err)
        # The slow eager peer gets fewer calls per round; every library sees the same x.
        calls = {lib: (lambda fn=fn: fn(x)) for lib, fn in fns.items()}
        secs = _round_robin_mixed(calls, rounds, inner=10 if sites <= 16 else 3)
    return {lib: s * 1e3 for lib, s in secs.items()}


def _round_robin_mixed(calls: dict[str, Callable[[], Any]], rounds: int, inner: int) -> dict[str, float]:
    """``inner`` calls per round for the fast libraries, one for JAX eager (tens of ms each)."""
    fast = {k: v for k, v in calls.items() if k != "jax"}
    out = h.round_robin(fast, rounds, inner=inner, warmup=2, desc="tfim")
    if "jax" in calls:
        out.update(h.round_robin({"jax": calls["jax"]}, max(3, rounds // 2), inner=1, warmup=1,
                                 desc="tfim jax eager"))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else 9
    peers = h.import_peers()
    print(h.versions_line(peers, tf))
    print(h.machine_line(h.machine_info(peers)))
    print()
    head = f"{'case (ms per energy+gradient)':<34}" + "".join(f"{lib:>10}" for lib in ("tenferro", *PEER_NAMES))
    head += "".join(f"{'tf/' + lib:>12}" for lib in PEER_NAMES)
    print(head)
    print("-" * len(head))
    rows: list[h.Row] = []
    verdicts = []
    for sites, bond in CASES:
        for dtype in DTYPES:
            case = f"TFIM MPS N={sites} D={bond} {dtype}"
            res = measure_case(peers, sites, bond, dtype, rounds)
            main_case = (sites, bond, dtype) == (16, 8, "float64")
            targets = {"jax": "<= 10 ms, <= 0.25x", "": "<= 10 ms"} if main_case else {}
            rows += h.rows_from_results(case, "ms", res, PEER_NAMES, targets)
            line = f"{case:<34}" + "".join(f"{h.fmt(res.get(lib)):>10}" for lib in ("tenferro", *PEER_NAMES))
            for lib in PEER_NAMES:
                r = h.ratio(res.get("tenferro"), res.get(lib))
                line += f"{(f'{r:.3f}x' if r else 'n/a'):>12}"
            print(line, flush=True)
            if main_case:
                ours = res["tenferro"]
                verdicts.append(f"  {case}: {ours:.2f} ms <= 10 ms -> " + ("met" if ours <= 10 else "MISSED"))
                r = h.ratio(ours, res.get("jax"))
                verdicts.append(f"  {case}: tf/jax eager {r:.3f}x <= 0.25x -> " + ("met" if r <= 0.25 else "MISSED")
                                if r else f"  {case}: vs jax eager n/a (JAX not installed)")
    print()
    print("targets:")
    print("\n".join(verdicts))
    h.write_results("bench_tfim", rows, peers, {"quick": args.quick})
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Eager automatic differentiation: tenferro against JAX (eager and ``jax.jit``) and PyTorch.

Run ``python benches/bench_ad.py [--quick]`` in an environment holding tenferro (for a source
checkout: ``PYTHONPATH=python .venv-bench/bin/python benches/bench_ad.py``). JAX and PyTorch are
optional (``n/a`` when missing); everything runs on the CPU in float64 (JAX with
``jax_enable_x64``, results waited for with ``block_until_ready``).

Cases
-----
tiny backward
    ``y = (x * x).sum(); y.backward()`` on 8 float64, µs per step. JAX: ``jax.grad`` of the same
    function (eager: traced every call; jit: compiled once). Target tenferro ≤ 21 µs
    (PyTorch 71 µs on the reference machine).
per recorded op
    A chain of 1000 cheap ops (``y = y * 1.0001``) on a tracked 8-element tensor, forward only,
    µs per op. JAX: ``jax.vjp`` of the chain (forward + linearisation), per op. Target ≤ 2 µs
    (PyTorch 2.2 µs).
per backward node
    The reverse pass of that recorded chain (re-run on the same graph), µs per node. JAX:
    calling the ``vjp`` function. Target ≤ 3 µs (PyTorch 4.5 µs).
MPS norm gradient
    ``<ψ|ψ>`` of a real MPS with 32 sites, bond 16, physical dimension 2, contracted site by site
    with ``prim.dot_general``/``transpose``/``reshape``, and its gradient with respect to all 32
    tensors, ms per forward+backward. Target ≤ 6 ms (PyTorch eager 12.6 ms, JAX eager 64.6 ms,
    ``jax.jit`` 0.65 ms on the reference machine).

Timing: every library's case runs round-robin (per round, a few calls of each library timed
together, a 0.2 s sleep between libraries so worker threads settle, the garbage collector off
while timing as ``timeit`` does), best of the rounds. Ratios are tenferro/peer: below 1
means tenferro is faster. Targets are printed, never asserted (testing.md).
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

LIBS = ("tenferro", "jax", "jax.jit", "torch")
CHAIN = 1000
SITES, BOND, PHYS = 32, 16, 2


@dataclass
class Case:
    name: str
    unit: str
    target: float  # tenferro's target, in `unit`
    per: int = 1  # divide the measured time by this (per op / per node)
    results: dict[str, float] = field(default_factory=dict)


def measure(case: Case, fns: dict[str, Callable[[], Any]], rounds: int, inner: int) -> None:
    """Round-robin: per round, each library runs ``inner`` calls back to back (timed together);
    the best round counts (``_harness.round_robin`` with ``stat="min"``)."""
    scale = 1e6 if case.unit == "us" else 1e3
    best = h.round_robin(fns, rounds, inner, stat="min", warmup=3, desc="bench_ad")
    case.results = {lib: t * scale / case.per for lib, t in best.items()}


# ------------------------------------------------------------------------------------ cases


def case_tiny(rounds: int) -> Case:
    case = Case("(x*x).sum().backward(), 8 f64", "us", 21.0)
    x8 = np.random.default_rng(0).normal(size=8)
    rt = tf.Runtime()
    tx = rt.variable(x8)

    def tenferro_step() -> None:
        y = (tx * tx).sum()
        y.backward()

    fns: dict[str, Callable[[], Any]] = {"tenferro": tenferro_step}
    if jax is not None:
        jx = jnp.asarray(x8)
        g = jax.grad(lambda a: (a * a).sum())
        gj = jax.jit(g)
        fns["jax"] = lambda: g(jx).block_until_ready()
        fns["jax.jit"] = lambda: gj(jx).block_until_ready()
    if torch is not None:
        px = torch.tensor(x8, requires_grad=True)

        def torch_step() -> None:
            y = (px * px).sum()
            y.backward()

        fns["torch"] = torch_step
    measure(case, fns, rounds, inner=200)
    return case


def case_chain(rounds: int) -> tuple[Case, Case]:
    fwd = Case(f"per recorded op (chain {CHAIN})", "us", 2.0, per=CHAIN)
    bwd = Case("per backward node", "us", 3.0, per=CHAIN)
    x8 = np.random.default_rng(1).normal(size=8)
    rt = tf.Runtime()
    tx = rt.variable(x8)

    def tf_chain() -> Any:
        y = tx
        for _ in range(CHAIN):
            y = y * 1.0001
        return y

    tf_graph = tf_chain().sum()  # the sum adds one node to the reverse pass (0.1 %)
    f_fns: dict[str, Callable[[], Any]] = {"tenferro": tf_chain}
    b_fns: dict[str, Callable[[], Any]] = {"tenferro": lambda: tf_graph.backward()}
    if jax is not None:
        jx = jnp.asarray(x8)

        def j_chain(a: Any) -> Any:
            for _ in range(CHAIN):
                a = a * 1.0001
            return a.sum()

        _, vjp_fn = jax.vjp(j_chain, jx)
        one = jnp.asarray(1.0)
        f_fns["jax"] = lambda: jax.block_until_ready(jax.vjp(j_chain, jx)[0])
        b_fns["jax"] = lambda: vjp_fn(one)[0].block_until_ready()
        jg = jax.jit(jax.grad(j_chain))
        b_fns["jax.jit"] = lambda: jg(jx).block_until_ready()  # fwd + bwd, fused: reference only
    if torch is not None:
        px = torch.tensor(x8, requires_grad=True)

        def t_chain() -> Any:
            y = px
            for _ in range(CHAIN):
                y = y * 1.0001
            return y

        t_graph = t_chain().sum()
        f_fns["torch"] = t_chain
        b_fns["torch"] = lambda: t_graph.backward(retain_graph=True)
    measure(fwd, f_fns, rounds, inner=3)
    measure(bwd, b_fns, rounds, inner=3)
    return fwd, bwd


def _mps(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    dims = [1] + [BOND] * (SITES - 1) + [1]
    return [
        rng.normal(size=(dims[k], PHYS, dims[k + 1])) / np.sqrt(dims[k] * PHYS)
        for k in range(SITES)
    ]


def tf_mps_norm(tensors: list[Any]) -> Any:
    """<ψ|ψ> with the primitives (column-major reshape, batch-last dot_general)."""
    p = tf.prim
    c00 = tf.DotGeneralConfig(lhs_contracting_dims=(0,), rhs_contracting_dims=(0,))
    c10 = tf.DotGeneralConfig(lhs_contracting_dims=(1,), rhs_contracting_dims=(0,))
    env = None
    for a in tensors:
        dl, d, dr = a.shape
        if env is None:  # left boundary: bond 1
            t1 = p.reshape(a, (d, dr))  # (s, b)
            env = p.dot_general(t1, t1, c00)  # (b, b')
            continue
        t1 = p.dot_general(env, a, c00)  # (a', s, b)
        t1 = p.transpose(t1, (2, 0, 1))  # (b, a', s)
        t1 = p.reshape(t1, (dr, dl * d))  # column-major: (a', s) with a' fastest
        env = p.dot_general(t1, p.reshape(a, (dl * d, dr)), c10)  # (b, b')
    return p.reshape(env, ())


def case_mps(rounds: int) -> Case:
    case = Case(f"MPS norm grad L={SITES} D={BOND} d={PHYS}", "ms", 6.0)
    data = _mps(2)
    rt = tf.Runtime()
    ts = [rt.variable(a) for a in data]

    def tenferro_step() -> Any:
        return rt.grad(tf_mps_norm(ts), ts)

    fns: dict[str, Callable[[], Any]] = {"tenferro": tenferro_step}
    # Cross-check the value against NumPy once.
    env = np.ones((1, 1))
    for a in data:
        env = np.einsum("ab,asc,bsd->cd", env, a, a)
    got = float(np.asarray(tf_mps_norm(ts)))
    assert abs(got - env.item()) <= 1e-10 * abs(env.item()), (got, env.item())
    if jax is not None:
        jdata = [jnp.asarray(a) for a in data]

        def j_norm(ts_: list[Any]) -> Any:
            e = jnp.ones((1, 1))
            for a in ts_:
                t1 = jnp.tensordot(e, a, axes=([0], [0]))  # (a', s, b)
                e = jnp.tensordot(t1, a, axes=([0, 1], [0, 1]))  # (b, b')
            return e.reshape(())

        g = jax.grad(j_norm)
        gj = jax.jit(g)
        fns["jax"] = lambda: jax.block_until_ready(g(jdata))
        fns["jax.jit"] = lambda: jax.block_until_ready(gj(jdata))
    if torch is not None:
        pdata = [torch.tensor(a, requires_grad=True) for a in data]

        def torch_step() -> Any:
            e = torch.ones((1, 1), dtype=torch.float64)
            for a in pdata:
                t1 = torch.tensordot(e, a, dims=([0], [0]))
                e = torch.tensordot(t1, a, dims=([0, 1], [0, 1]))
            return torch.autograd.grad(e.reshape(()), pdata)

        fns["torch"] = torch_step
    measure(case, fns, rounds, inner=5)
    return case


# ------------------------------------------------------------------------------------ report


_fmt = h.fmt


def report(cases: list[Case]) -> None:
    print(h.versions_line(PEERS, tf))
    print(h.machine_line(h.machine_info(PEERS)))
    print()
    head = f"{'case':<36} {'unit':<4}" + "".join(f"{lib:>10}" for lib in LIBS)
    head += "".join(f"{'tf/' + lib:>12}" for lib in LIBS[1:])
    print(head)
    print("-" * len(head))
    for c in cases:
        ours = c.results.get("tenferro")
        row = f"{c.name:<36} {c.unit:<4}" + "".join(f"{_fmt(c.results.get(lib)):>10}" for lib in LIBS)
        for lib in LIBS[1:]:
            peer = c.results.get(lib)
            row += f"{(f'{ours / peer:.2f}x' if ours and peer else 'n/a'):>12}"
        print(row)
    print()
    print("(jax.jit on the chain rows: jit(grad(chain)) per op, fused; a reference, not a peer)")
    print("targets:")
    for c in cases:
        v = c.results.get("tenferro")
        verdict = f"{v:.3g} {c.unit}: " + ("met" if v <= c.target else "MISSED")
        print(f"  {c.name:<36} tenferro <= {c.target:g} {c.unit:<3} -> {verdict}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else 10
    cases = [case_tiny(rounds), *case_chain(rounds), case_mps(rounds)]
    report(cases)
    rows: list[h.Row] = []
    for c in cases:
        target = f"<= {c.target:g} {c.unit}"
        rows += h.rows_from_results(c.name, c.unit, c.results, LIBS[1:],
                                    {"": target, **{p: target for p in LIBS[1:]}})
    h.write_results("bench_ad", rows, PEERS)
    return 0


if __name__ == "__main__":
    sys.exit(main())

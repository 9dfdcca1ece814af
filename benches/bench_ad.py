"""Automatic differentiation: tenferro (eager and ``tf.jit``) against JAX (eager and ``jax.jit``)
and PyTorch.

Run ``python benches/bench_ad.py [--quick]`` in an environment holding tenferro (for a source
checkout: ``PYTHONPATH=python .venv-bench/bin/python benches/bench_ad.py``). JAX and PyTorch are
optional (``n/a`` when missing); everything runs on the CPU in float64 (JAX with
``jax_enable_x64``, results waited for with ``block_until_ready``).

Columns: ``tenferro`` (eager: recording and ``backward``/``rt.grad``), ``tenferro.jit``
(``tf.jit`` of the same computation written with ``tf.func``: traced once, forward and backward in
one program, replayed per call; inputs are untracked tensors), ``jax`` (eager), ``jax.jit``
(compiled once), ``torch`` (eager). The eager ratios are tenferro/peer; ``tf.jit/jax.jit``
compares the two compiled columns.

Cases
-----
tiny backward
    ``y = (x * x).sum(); y.backward()`` on 8 float64, µs per step. JAX: ``jax.grad`` of the same
    function (eager: traced every call; jit: compiled once); tenferro.jit:
    ``tf.jit(tf.func.grad(f))``. Target tenferro ≤ 21 µs (PyTorch 71 µs on the reference
    machine).
jit one op
    ``x + x`` on 8 float64, µs per call: ``tf.jit(lambda x: x + x)`` against
    ``jax.jit(lambda x: x + x)`` (the call overhead of a compiled program); eager columns for
    reference. Target tenferro.jit ≤ 3 µs.
jit value_and_grad
    ``value_and_grad(lambda x: (x * x).sum())`` on 8 float64, µs per call, ``tf.func`` /
    ``jax`` transforms eagerly and under ``tf.jit`` / ``jax.jit``. Target tenferro.jit ≤ 5 µs.
per recorded op
    A chain of 1000 cheap ops (``y = y * 1.0001``) on a tracked 8-element tensor, forward only,
    µs per op. JAX: ``jax.vjp`` of the chain (forward + linearisation), per op. Target ≤ 2 µs
    (PyTorch 2.2 µs).
per backward node
    The reverse pass of that recorded chain (re-run on the same graph), µs per node. JAX:
    calling the ``vjp`` function. Target ≤ 3 µs (PyTorch 4.5 µs). ``jax.jit`` and
    ``tenferro.jit`` columns: ``jit(grad(chain))`` per op (forward and backward; both compilers
    fold the chain, whose gradient is constant): a reference, not a peer.
MPS norm gradient
    ``<ψ|ψ>`` of a real MPS with 32 sites, bond 16, physical dimension 2, contracted site by site
    with ``prim.dot_general``/``transpose``/``reshape``, and its gradient with respect to all 32
    tensors, ms per forward+backward. Target ≤ 6 ms (PyTorch eager 12.6 ms, JAX eager 64.6 ms,
    ``jax.jit`` 0.65 ms on the reference machine). tenferro.jit: ``tf.jit(tf.func.grad(norm))``
    of the list of site tensors.

Timing: every library's case runs round-robin (per round, a few calls of each library timed
together, a 0.2 s sleep between libraries so worker threads settle, the garbage collector off
while timing as ``timeit`` does); the eager cases take the best of the rounds, the two jit
cases (whose targets are graph-mode's: ``graph-mode.md``, issue 20) the median. Ratios are
tenferro/peer: below 1 means tenferro is faster. Targets are printed, never asserted
(testing.md). A second table gives the first call of every jitted function (trace, compile,
run) for tenferro.jit and jax.jit.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import _harness as h
import tenferro as tf

PEERS = h.import_peers()
jax, jnp, torch = PEERS.jax, PEERS.jnp, PEERS.torch

LIBS = ("tenferro", "tenferro.jit", "jax", "jax.jit", "torch")
PEER_LIBS = ("jax", "jax.jit", "torch")  # eager tenferro's peers
CHAIN = 1000
SITES, BOND, PHYS = 32, 16, 2


@dataclass
class Case:
    name: str
    unit: str
    target: float  # tenferro's target, in `unit`
    per: int = 1  # divide the measured time by this (per op / per node)
    target_lib: str = "tenferro"  # the column the target is for
    stat: str = "min"  # how the rounds combine (round_robin's stat)
    jit_label: str = "tf.jit"  # what the tenferro.jit column runs (its rows' case suffix)
    results: dict[str, float] = field(default_factory=dict)
    first: dict[str, float] = field(default_factory=dict)  # ms of the jitted functions' first call


def measure(case: Case, fns: dict[str, Callable[[], Any]], rounds: int, inner: int) -> None:
    """Round-robin: per round, each library runs ``inner`` calls back to back (timed together);
    the rounds combine with ``case.stat`` (the best one for the eager cases)."""
    scale = 1e6 if case.unit == "us" else 1e3
    best = h.round_robin(fns, rounds, inner, stat=case.stat, warmup=3, desc="bench_ad")
    case.results = {lib: t * scale / case.per for lib, t in best.items()}


def first_call(case: Case, lib: str, fn: Callable[[], Any]) -> None:
    """Time ``fn``'s first call (a fresh jitted function: trace, compile, run) into ``case.first``."""
    t0 = time.perf_counter()
    fn()
    case.first[lib] = (time.perf_counter() - t0) * 1e3


def _same(lib: str, got: Any, want: Any, rtol: float = 1e-12) -> None:
    """Cross-check a jitted result against the eager one before timing."""
    got, want = np.asarray(got), np.asarray(want)
    assert np.allclose(got, want, rtol=rtol, atol=0.0), (lib, got, want)


# ------------------------------------------------------------------------------------ cases


def case_tiny(rounds: int) -> Case:
    case = Case("(x*x).sum().backward(), 8 f64", "us", 21.0, jit_label="tf.jit(grad)")
    x8 = np.random.default_rng(0).normal(size=8)
    rt = tf.Runtime()
    tx = rt.variable(x8)

    def tenferro_step() -> None:
        y = (tx * tx).sum()
        y.backward()

    cx = rt.constant(x8)
    tgj = tf.jit(tf.func.grad(lambda a: (a * a).sum()))
    first_call(case, "tenferro.jit", lambda: tgj(cx))
    _same("tenferro.jit", tgj(cx), 2 * x8)
    fns: dict[str, Callable[[], Any]] = {"tenferro": tenferro_step, "tenferro.jit": lambda: tgj(cx)}
    if jax is not None:
        jx = jnp.asarray(x8)
        g = jax.grad(lambda a: (a * a).sum())
        gj = jax.jit(g)
        first_call(case, "jax.jit", lambda: gj(jx).block_until_ready())
        fns["jax"] = lambda: g(jx).block_until_ready()
        fns["jax.jit"] = lambda: gj(jx).block_until_ready()
    if torch is not None:
        px = torch.tensor(x8, requires_grad=True)

        def torch_step() -> None:
            y = (px * px).sum()
            y.backward()

        fns["torch"] = torch_step
    measure(case, fns, rounds, inner=200)
    _one_trace(case, tgj)
    return case


def _one_trace(case: Case, *jitted: Any) -> None:
    """A tenferro.jit column must have replayed one trace (no retrace, no eager fallback)."""
    for j in jitted:
        st = j.cache_stats()
        if st.misses != 1 or st.fallbacks != 0:
            raise RuntimeError(f"tf.jit column of {case.name!r} did not replay one trace: {st}")


def case_jit_one_op(rounds: int) -> Case:
    case = Case("jit one op x + x, 8 f64", "us", 3.0, target_lib="tenferro.jit", stat="median")
    x8 = np.random.default_rng(3).normal(size=8)
    tx = tf.asarray(x8)
    tj = tf.jit(lambda a: a + a)
    first_call(case, "tenferro.jit", lambda: tj(tx))
    _same("tenferro.jit", tj(tx), x8 + x8)
    fns: dict[str, Callable[[], Any]] = {
        "tenferro": lambda: tx + tx,
        "tenferro.jit": lambda: tj(tx),
    }
    if jax is not None:
        jx = jnp.asarray(x8)
        jj = jax.jit(lambda a: a + a)
        first_call(case, "jax.jit", lambda: jj(jx).block_until_ready())
        fns["jax"] = lambda: (jx + jx).block_until_ready()
        fns["jax.jit"] = lambda: jj(jx).block_until_ready()
    if torch is not None:
        px = torch.tensor(x8)
        fns["torch"] = lambda: px + px
    measure(case, fns, rounds, inner=500)
    _one_trace(case, tj)
    return case


def case_jit_value_and_grad(rounds: int) -> Case:
    case = Case(
        "jit value_and_grad((x*x).sum()), 8 f64",
        "us",
        5.0,
        target_lib="tenferro.jit",
        stat="median",
    )
    x8 = np.random.default_rng(4).normal(size=8)
    tx = tf.asarray(x8)

    def f(a: Any) -> Any:
        return (a * a).sum()

    tvg = tf.func.value_and_grad(f)
    tj = tf.jit(tf.func.value_and_grad(f))
    first_call(case, "tenferro.jit", lambda: tj(tx))
    v, g = tj(tx)
    _same("tenferro.jit value", v, (x8 * x8).sum())
    _same("tenferro.jit grad", g, 2 * x8)
    fns: dict[str, Callable[[], Any]] = {
        "tenferro": lambda: tvg(tx),
        "tenferro.jit": lambda: tj(tx),
    }
    if jax is not None:
        jx = jnp.asarray(x8)
        jvg = jax.value_and_grad(lambda a: (a * a).sum())
        jj = jax.jit(jvg)
        first_call(case, "jax.jit", lambda: jax.block_until_ready(jj(jx)))
        fns["jax"] = lambda: jax.block_until_ready(jvg(jx))
        fns["jax.jit"] = lambda: jax.block_until_ready(jj(jx))
    if torch is not None:
        px = torch.tensor(x8, requires_grad=True)

        def torch_step() -> Any:
            y = (px * px).sum()
            return y, torch.autograd.grad(y, px)

        fns["torch"] = torch_step
    measure(case, fns, rounds, inner=200)
    _one_trace(case, tj)
    return case


def case_chain(rounds: int) -> tuple[Case, Case]:
    fwd = Case(f"per recorded op (chain {CHAIN})", "us", 2.0, per=CHAIN)
    bwd = Case("per backward node", "us", 3.0, per=CHAIN, jit_label="tf.jit(grad(chain)) per op")
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

    def tf_chain_sum(y: Any) -> Any:
        for _ in range(CHAIN):
            y = y * 1.0001
        return y.sum()

    cx = rt.constant(x8)
    tjg = tf.jit(tf.func.grad(tf_chain_sum))  # fwd + bwd in one program: reference only
    first_call(bwd, "tenferro.jit", lambda: tjg(cx))
    _same("tenferro.jit", tjg(cx), np.full(8, 1.0001**CHAIN), rtol=1e-10)
    b_fns["tenferro.jit"] = lambda: tjg(cx)
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
        first_call(bwd, "jax.jit", lambda: jg(jx).block_until_ready())
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
    _one_trace(bwd, tjg)
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
    case = Case(f"MPS norm grad L={SITES} D={BOND} d={PHYS}", "ms", 6.0, jit_label="tf.jit(grad)")
    data = _mps(2)
    rt = tf.Runtime()
    ts = [rt.variable(a) for a in data]

    def tenferro_step() -> Any:
        return rt.grad(tf_mps_norm(ts), ts)

    consts = [rt.constant(a) for a in data]
    tj = tf.jit(tf.func.grad(tf_mps_norm))
    first_call(case, "tenferro.jit", lambda: tj(consts))
    fns: dict[str, Callable[[], Any]] = {
        "tenferro": tenferro_step,
        "tenferro.jit": lambda: tj(consts),
    }
    # Cross-check the value against NumPy once, and tf.jit's gradient against eager's.
    env = np.ones((1, 1))
    for a in data:
        env = np.einsum("ab,asc,bsd->cd", env, a, a)
    got = float(np.asarray(tf_mps_norm(ts)))
    assert abs(got - env.item()) <= 1e-10 * abs(env.item()), (got, env.item())
    for gj, ge in zip(tj(consts), tenferro_step()):
        _same("tenferro.jit", gj, ge, rtol=1e-10)
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
        first_call(case, "jax.jit", lambda: jax.block_until_ready(gj(jdata)))
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
    _one_trace(case, tj)
    return case


# ------------------------------------------------------------------------------------ report


_fmt = h.fmt


def _r(a: float | None, b: float | None, digits: int = 2) -> str:
    r = h.ratio(a, b)
    return f"{r:.{digits}f}x" if r else "n/a"


def report(cases: list[Case]) -> list[str]:
    """Print the tables and the target verdicts; return the verdict lines."""
    print(h.versions_line(PEERS, tf))
    print(h.machine_line(h.machine_info(PEERS)))
    print()
    head = f"{'case':<40} {'unit':<4}" + "".join(f"{lib:>13}" for lib in LIBS)
    head += "".join(f"{'tf/' + lib:>12}" for lib in PEER_LIBS) + f"{'tf.jit/jax.jit':>16}"
    print(head)
    print("-" * len(head))
    for c in cases:
        res = c.results
        row = f"{c.name:<40} {c.unit:<4}" + "".join(f"{_fmt(res.get(lib)):>13}" for lib in LIBS)
        row += "".join(f"{_r(res.get('tenferro'), res.get(lib)):>12}" for lib in PEER_LIBS)
        row += f"{_r(res.get('tenferro.jit'), res.get('jax.jit')):>16}"
        print(row)
    print()
    print(
        "(jit columns of the chain rows: jit(grad(chain)) per op, folded; a reference, not a peer;"
    )
    print(" the eager cases take the best round, the two jit cases the median of the rounds)")
    print()
    head = f"{'first call of the jitted function (ms)':<40}{'tenferro.jit':>14}{'jax.jit':>10}{'ratio':>10}"
    print(head)
    print("-" * len(head))
    for c in cases:
        if c.first:
            a, b = c.first.get("tenferro.jit"), c.first.get("jax.jit")
            print(f"{c.name:<40}{_fmt(a):>14}{_fmt(b):>10}{_r(a, b, 3):>10}")
    print()
    print("targets:")
    verdicts = []
    for c in cases:
        v = c.results.get(c.target_lib)
        verdict = f"{v:.3g} {c.unit}: " + ("met" if v <= c.target else "MISSED")
        line = f"{c.name:<40} {c.target_lib} <= {c.target:g} {c.unit:<3} -> {verdict}"
        if c.target_lib == "tenferro.jit" and c.results.get("jax.jit"):
            line += f" (jax.jit {c.results['jax.jit']:.3g} {c.unit})"
        verdicts.append(" ".join(line.split()))
        print("  " + line)
    return verdicts


def warm_up() -> None:
    """Load both compilers (JAX's backend, tenferro's tracer) on a throw-away function, so the
    first-call figures measure the function, not the library's start-up."""
    tf.jit(lambda a: a * a)(tf.asarray(np.ones(3)))
    if jax is not None:
        jax.jit(lambda a: a * a)(jnp.ones(3)).block_until_ready()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else 10
    warm_up()
    cases = [
        case_tiny(rounds),
        case_jit_one_op(rounds),
        case_jit_value_and_grad(rounds),
        *case_chain(rounds),
        case_mps(rounds),
    ]
    verdicts = report(cases)
    rows: list[h.Row] = []
    for c in cases:
        target = f"<= {c.target:g} {c.unit}"
        eager_target = target if c.target_lib == "tenferro" else ""
        rows += h.rows_from_results(
            c.name,
            c.unit,
            c.results,
            PEER_LIBS,
            {"": eager_target, **{p: eager_target for p in PEER_LIBS}},
        )
        if "tenferro.jit" in c.results:
            jit_target = target if c.target_lib == "tenferro.jit" else ""
            rows += h.rows_from_results(
                f"{c.name}, {c.jit_label}",
                c.unit,
                c.results,
                ("jax.jit",),
                {"": jit_target, "jax.jit": jit_target},
                ours="tenferro.jit",
            )
    first_rows = [
        [
            c.name,
            c.first.get("tenferro.jit"),
            c.first.get("jax.jit"),
            h.ratio(c.first.get("tenferro.jit"), c.first.get("jax.jit")),
        ]
        for c in cases
        if c.first
    ]
    tables = [
        {
            "title": "Graph mode: first call of each jitted function (ms; trace, compile, run)",
            "columns": ["case", "tf.jit first call", "jax.jit first call", "ratio"],
            "rows": first_rows,
        }
    ]
    h.write_results(
        "bench_ad", rows, PEERS, {"quick": args.quick, "tables": tables, "verdicts": verdicts}
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

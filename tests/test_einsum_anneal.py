"""``optimize="anneal"`` / ``tf.EinsumAnneal``: simulated annealing over contraction trees.

Checked against oracles: the returned path is a valid contraction whose ``info.opt_cost`` equals
the Python oracle's and opt_einsum's ``opt_cost`` of the same path; values equal ``np.einsum``
to 1e-12; the same seed gives the same path; the path never costs more than ``"greedy"``'s (its
tree is a candidate) and, on small networks, never less than the exact optimum; bad options
raise ``EinsumError`` naming the option; Ctrl-C interrupts a long search; the progress hook is
driven. The quality against cotengra is ``benches/bench_einsum_planner.py`` (not CI).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from typing import Any

import einsum_oracle as oracle
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_einsum_oracle import _oracle_parse, networks

import tenferro as tf
import tenferro._progress as progress

oe = pytest.importorskip("opt_einsum")

FAST = tf.EinsumAnneal(seed=3, max_repeats=2)


def regular3(n: int, seed: int, bond: int = 2) -> tuple[str, list[tuple[int, ...]]]:
    """A seeded random 3-regular graph of ``n`` tensors (a closed network, bonds ``bond``)."""
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


@settings(max_examples=25)
@given(networks(max_ops=7), st.sampled_from(["flops", "size", "combo"]))
def test_paths_are_valid_and_costs_follow_opt_einsum(
    problem: tuple[str, list[tuple[int, ...]]], minimize: str
) -> None:
    subs, shapes = problem
    if isinstance(_oracle_parse(subs, shapes), Exception):
        return
    arrays = [np.empty(s) for s in shapes]
    path, info = tf.einsum_path(subs, *arrays, optimize=FAST, minimize=minimize)
    # opt_einsum's opt_cost of the same path: the convention's definition (the Python oracle
    # counts a lone operand and labels summed within one operand differently; it is compared on
    # plain networks in test_regular_graphs_values_seed_and_greedy_bound)
    assert info.opt_cost == int(
        oe.contract_path(subs, *shapes, shapes=True, optimize=path)[1].opt_cost
    )
    # never worse than greedy, never better than the exact optimum
    _, g = tf.einsum_path(subs, *arrays, optimize="greedy", minimize=minimize)
    _, o = tf.einsum_path(subs, *arrays, optimize="optimal", minimize=minimize)
    if minimize == "flops":
        assert o.opt_cost <= info.opt_cost <= g.opt_cost
    elif minimize == "size":  # info's largest intermediate also counts the operands: monotone
        assert o.largest_intermediate <= info.largest_intermediate <= g.largest_intermediate


@settings(max_examples=25)
@given(networks(max_ops=6))
def test_values_equal_numpy(problem: tuple[str, list[tuple[int, ...]]]) -> None:
    subs, shapes = problem
    if isinstance(_oracle_parse(subs, shapes), Exception):
        return
    rng = np.random.default_rng(1)
    arrays = [rng.uniform(-1, 1, s) for s in shapes]
    want = np.einsum(subs, *arrays)
    got = tf.einsum(subs, *arrays, optimize=FAST)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


def test_regular_graphs_values_seed_and_greedy_bound() -> None:
    for seed in range(4):
        subs, shapes = regular3(24, seed)
        arrays = [np.random.default_rng(seed).uniform(0.5, 1.5, s) for s in shapes]
        opt = tf.EinsumAnneal(seed=seed, max_repeats=3)
        path, info = tf.einsum_path(subs, *arrays, optimize=opt)
        assert info.method == "anneal"
        again, _ = tf.einsum_path(subs, *arrays, optimize=tf.EinsumAnneal(seed=seed, max_repeats=3))
        assert again == path
        _, g = tf.einsum_path(subs, *arrays, optimize="greedy")
        assert info.opt_cost <= g.opt_cost
        assert info.opt_cost == int(
            oe.contract_path(subs, *shapes, shapes=True, optimize=path)[1].opt_cost
        )
        f8 = [np.dtype("f8")] * len(shapes)
        assert info.opt_cost == oracle._make_plan(subs, shapes, f8, path).info.opt_cost
        want = oe.contract(subs, *arrays, optimize=path)
        got = float(np.asarray(tf.einsum(subs, *arrays, optimize=opt)))
        assert got == pytest.approx(want, rel=1e-12)


def test_anneal_name_and_cache_key() -> None:
    subs, shapes = regular3(12, 7)
    arrays = [np.ones(s) for s in shapes]
    p0, i0 = tf.einsum_path(subs, *arrays, optimize="anneal")
    p1, _ = tf.einsum_path(subs, *arrays, optimize=tf.EinsumAnneal())
    assert p0 == p1 and i0.method == "anneal"
    eng = tf.CpuEngine(threads=1)
    rt = tf.Runtime()
    misses = []
    with rt.session(eng) as s:
        ops = [rt.constant(a) for a in arrays]
        for seed in (1, 1, 2):
            s.einsum(subs, *ops, optimize=tf.EinsumAnneal(seed=seed, max_repeats=1))
            misses.append(eng.cache_stats().misses)
    # the same options hit the cached plan; another seed is another key
    assert misses[0] >= 1 and misses[1] == misses[0] and misses[2] > misses[1]
    assert "seed=1" in repr(tf.EinsumAnneal(seed=1))


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"seed": -1}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"seed": 2**64}, "seed"),
        ({"max_repeats": 0}, "max_repeats"),
        ({"max_repeats": True}, "max_repeats"),
        ({"max_time": -1.0}, "max_time"),
        ({"max_time": 0}, "max_time"),
        ({"max_time": float("nan")}, "max_time"),
        ({"max_time": "1s"}, "max_time"),
        ({"max_time": 10**400}, "max_time"),
    ],
)
def test_bad_options_name_the_option(kwargs: dict[str, Any], name: str) -> None:
    with pytest.raises(tf.errors.EinsumError, match=name):
        tf.EinsumAnneal(**kwargs)


def test_bad_options_reaching_the_planner_name_the_option() -> None:
    class Forged:
        _tenferro_anneal = (0, -2.0, 1)

    with pytest.raises(tf.errors.EinsumError, match="max_time"):
        tf.einsum("ij,jk", np.ones((2, 2)), np.ones((2, 2)), optimize=Forged())
    with pytest.raises(tf.errors.EinsumError, match="anneal"):
        tf.einsum("ij,jk", np.ones((2, 2)), np.ones((2, 2)), optimize="annealing")


@pytest.fixture
def alarm_raises() -> Iterator[None]:
    """SIGALRM raises KeyboardInterrupt (as Ctrl-C does) for the test's duration."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, handler)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="POSIX only")
def test_ctrl_c_interrupts_a_long_search(alarm_raises: None) -> None:
    subs, shapes = regular3(60, 0)
    long = tf.EinsumAnneal(max_time=60.0, max_repeats=10**6)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        tf.einsum_path(subs, *[np.empty(s) for s in shapes], optimize=long)
    assert time.perf_counter() - t0 < 30.0  # stopped long before max_time


def test_progress_bar_is_driven(monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[Any] = []

    class Bar:
        def update(self, k: int) -> None:
            events.append(k)

        def close(self) -> None:
            events.append("close")

    def start(desc: str, total: int) -> Bar:
        events.append((desc, total))
        return Bar()

    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "start", start)
    subs, shapes = regular3(40, 1)
    tf.einsum_path(
        subs,
        *[np.empty(s) for s in shapes],
        optimize=tf.EinsumAnneal(max_time=0.15, max_repeats=10**6),
    )
    assert events[0] == ("einsum anneal", 1000)
    assert events[-1] == "close"
    assert sum(e for e in events[1:-1]) == 1000


def test_no_bar_without_a_terminal() -> None:
    assert progress.start("x", 10) is None  # pytest captures stderr: not a terminal

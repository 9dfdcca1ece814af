"""The Rust einsum front end (``tenferro-einsum``) against its oracles on random subscripts:

- the previous Python parser (``tests/einsum_oracle.py``): same equation, label sizes and errors;
- ``numpy.einsum``: values to 1e-12 for every planner;
- ``opt_einsum`` 3.4: ``"greedy"`` gives opt_einsum's greedy path (or at most 1.01x its
  ``opt_cost``), ``"optimal"`` equals opt_einsum's ``optimal`` ``opt_cost``, and ``info.opt_cost``
  is opt_einsum's ``opt_cost`` of the same path;

plus the ``optimize=`` forms (opt_einsum names, ``PathOptimizer`` instances, nested-tuple trees)
and ``minimize=``."""

from __future__ import annotations

from typing import Any

import einsum_oracle as oracle
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tenferro as tf

oe = pytest.importorskip("opt_einsum")

LETTERS = "abcdefgh"


@st.composite
def networks(
    draw: Any, max_ops: int = 6, ellipsis: bool = True
) -> tuple[str, list[tuple[int, ...]]]:
    """Random subscripts and shapes: hyper-edges, repeated labels, size-1 broadcasting,
    implicit or explicit output, and (optionally) ellipses."""
    n = draw(st.integers(1, max_ops))
    sizes = {c: draw(st.integers(1, 4)) for c in LETTERS}
    use_ell = ellipsis and draw(st.booleans())
    ell = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    terms, shapes = [], []
    for _ in range(n):
        labels = draw(st.lists(st.sampled_from(LETTERS), max_size=4))
        shape = [sizes[c] if not draw(st.integers(0, 9)) == 0 else 1 for c in labels]
        # a repeated label needs equal sizes
        for i, c in enumerate(labels):
            if labels.index(c) != i:
                shape[i] = shape[labels.index(c)]
        term = "".join(labels)
        if use_ell and draw(st.booleans()):
            k = draw(st.integers(0, len(ell)))
            pos = draw(st.integers(0, len(labels)))
            term = term[:pos] + "..." + term[pos:]
            shape = shape[:pos] + list(ell[len(ell) - k :]) + shape[pos:]
        terms.append(term)
        shapes.append(tuple(shape))
    subs = ",".join(terms)
    if draw(st.booleans()):
        present = sorted({c for t in terms for c in t if c.isalpha()})
        out = "".join(draw(st.lists(st.sampled_from(present), unique=True))) if present else ""
        if any("..." in t for t in terms):
            pos = draw(st.integers(0, len(out)))
            out = out[:pos] + "..." + out[pos:]
        subs += "->" + out
    return subs, shapes


def _oracle_parse(subs: str, shapes: list[tuple[int, ...]]) -> Any:
    try:
        return oracle._parse(subs, shapes)
    except tf.errors.EinsumError as e:
        return e


@given(networks())
def test_parser_matches_the_oracle(problem: tuple[str, list[tuple[int, ...]]]) -> None:
    subs, shapes = problem
    want = _oracle_parse(subs, shapes)
    arrays = [np.empty(s) for s in shapes]
    if isinstance(want, Exception):
        with pytest.raises(tf.errors.EinsumError) as exc:
            tf.einsum_path(subs, *arrays)
        assert str(exc.value) == str(want)
        return
    _, info = tf.einsum_path(subs, *arrays)
    assert info.eq == oracle._fmt_eq(want)
    assert info.size_dict == want.sizes


@pytest.mark.parametrize(
    ("subs", "shapes"),
    [
        ("ij,jk->ik", [(2, 3)]),
        ("ij,jk->ik", [(2, 3), (4, 5)]),
        ("ij->ik", [(2, 3)]),
        ("i>->i", [(2, 2)]),
        ("  i.j", [(2, 2)]),
        ("ij, jk ->i-k", [(2, 2), (2, 2)]),
        ("i->i->i", [(2,)]),
        ("ij->i", [(2,)]),
        ("...i,...i->i", [(2, 3), (4, 3)]),
        ("...ij->ij", [(2, 3, 4)]),
        ("ii->i", [(1, 3)]),
    ],
)
def test_error_messages_equal_the_oracle(subs: str, shapes: list[tuple[int, ...]]) -> None:
    want = _oracle_parse(subs, shapes)
    assert isinstance(want, tf.errors.EinsumError)
    with pytest.raises(tf.errors.EinsumError) as exc:
        tf.einsum(subs, *[np.ones(s) for s in shapes])
    assert str(exc.value) == str(want)


def test_digits_are_labels_as_in_opt_einsum() -> None:
    """The stored instances (``lm_batch_likelihood_*``) use ``0`` as a label; opt_einsum accepts
    digits, NumPy does not."""
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(tf.einsum("i1->i", a)), a.sum(1))


PLANNERS = [False, "greedy", "optimal", "dp", "auto", "auto-hq", "branch-2"]


@given(networks(), st.sampled_from(PLANNERS), st.sampled_from(["flops", "size", "combo"]))
def test_values_equal_numpy(
    problem: tuple[str, list[tuple[int, ...]]], optimize: Any, minimize: str
) -> None:
    subs, shapes = problem
    if isinstance(_oracle_parse(subs, shapes), Exception):
        return
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-1, 1, s) for s in shapes]
    want = np.einsum(subs, *arrays)
    got = tf.einsum(subs, *arrays, optimize=optimize, minimize=minimize)
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


def _oe_cost(subs: str, shapes: list[tuple[int, ...]], path: Any) -> int:
    return int(oe.contract_path(subs, *shapes, shapes=True, optimize=path)[1].opt_cost)


@given(networks(max_ops=8, ellipsis=False))
def test_greedy_is_opt_einsums_and_costs_follow_its_convention(
    problem: tuple[str, list[tuple[int, ...]]],
) -> None:
    subs, shapes = problem
    if isinstance(_oracle_parse(subs, shapes), Exception):
        return
    arrays = [np.empty(s) for s in shapes]
    path, info = tf.einsum_path(subs, *arrays, optimize="greedy")
    want, want_info = oe.contract_path(subs, *shapes, shapes=True, optimize="greedy")
    if path != [tuple(e) for e in want]:
        assert _oe_cost(subs, shapes, path) <= 1.01 * int(want_info.opt_cost)
    # info.opt_cost is opt_einsum's opt_cost of the same path
    assert info.opt_cost == _oe_cost(subs, shapes, path)


def test_greedy_exact_match_rate() -> None:
    """Seeded random networks (3..12 operands, hyper-edges, broadcasting): every greedy path
    equals opt_einsum's (the rate is asserted as 1.0: any divergence is a bug in the replica)."""
    rng = np.random.default_rng(24)
    same = total = 0
    for _ in range(150):
        n = int(rng.integers(3, 13))
        letters = "abcdefghijklmnop"
        sizes = {c: int(rng.integers(1, 6)) for c in letters}
        terms = ["".join(rng.choice(list(letters), size=int(rng.integers(1, 5)))) for _ in range(n)]
        shapes = [tuple(sizes[c] for c in t) for t in terms]
        present = sorted(set("".join(terms)))
        out = "".join(c for c in present if rng.random() < 0.2)
        subs = ",".join(terms) + "->" + out
        path, _ = tf.einsum_path(subs, *[np.empty(s) for s in shapes], optimize="greedy")
        want, _ = oe.contract_path(subs, *shapes, shapes=True, optimize="greedy")
        total += 1
        same += path == [tuple(e) for e in want]
    assert same == total, f"exact-match rate {same}/{total}"


@given(networks(max_ops=6, ellipsis=False))
def test_optimal_equals_opt_einsums_optimal(problem: tuple[str, list[tuple[int, ...]]]) -> None:
    subs, shapes = problem
    if isinstance(_oracle_parse(subs, shapes), Exception):
        return
    arrays = [np.empty(s) for s in shapes]
    _, info = tf.einsum_path(subs, *arrays, optimize="optimal")
    _, want = oe.contract_path(subs, *shapes, shapes=True, optimize="optimal")
    assert info.method == "optimal" or len(shapes) <= 2
    # opt_einsum's search differs from the opt_cost it reports in two ways: it caches pair
    # results by the two label sets (ignoring the other operands), and it counts a step as
    # summing only when a *shared* label disappears (its report also counts a label only one
    # operand carries). So where label sets repeat or an operand carries a lone label it can
    # miss the least opt_cost -- never beat it; elsewhere the two are equal.
    assert info.opt_cost <= int(want.opt_cost)
    terms = subs.split("->")[0].split(",")
    sets = [frozenset(t) for t in terms]
    out = set(subs.split("->")[1]) if "->" in subs else set()
    lone = any(c not in out and sum(c in s for s in sets) == 1 for s in sets for c in s)
    if len(set(sets)) == len(sets) and not lone:
        assert info.opt_cost == int(want.opt_cost)
    # dp (connected trees only) and greedy are never better than the optimum
    for other in ("dp", "greedy", "auto"):
        assert tf.einsum_path(subs, *arrays, optimize=other)[1].opt_cost >= info.opt_cost


def test_planners_agree_with_the_python_oracle_on_paths() -> None:
    """The oracle's exhaustive planner minimised the FLOPs of its own (prepared-operand) cost;
    on networks without lone labels the two conventions agree, so the optimal costs match."""
    subs = "ab,bc,cd,de,ea->"
    shapes = [(2, 3), (3, 4), (4, 5), (5, 6), (6, 2)]
    parsed = oracle._parse(subs, shapes)
    want = oracle._optimal(parsed.inputs, parsed.output, parsed.sizes)
    _, info = tf.einsum_path(subs, *[np.empty(s) for s in shapes], optimize="optimal")
    assert info.opt_cost == _oe_cost(subs, shapes, want)


class _Greedy(oe.paths.PathOptimizer):
    """A PathOptimizer subclass (as cotengra's are) running opt_einsum's greedy."""

    def __call__(self, inputs: Any, output: Any, size_dict: Any, memory_limit: Any = None) -> Any:
        return oe.paths.greedy(inputs, output, size_dict)


def test_opt_einsum_names_and_path_optimizers() -> None:
    rng = np.random.default_rng(5)
    subs = "ab,bc,cd,de,ef->af"
    arrays = [rng.uniform(-1, 1, s) for s in [(3, 4), (4, 5), (5, 2), (2, 6), (6, 3)]]
    want = np.einsum(subs, *arrays)
    for opt in (
        "auto-hq",
        "branch-2",
        "branch-all",
        "dynamic-programming",
        "random-greedy",
        _Greedy(),
        oe.paths.BranchBound(nbranch=2),
        oe.paths.DynamicProgramming(),
        oe.path_random.RandomGreedy(max_repeats=4),
    ):
        got = tf.einsum(subs, *arrays, optimize=opt)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    # a PathOptimizer's own path is used
    path, info = tf.einsum_path(subs, *arrays, optimize=_Greedy())
    assert path == [tuple(e) for e in oe.contract_path(subs, *arrays, optimize="greedy")[0]]
    assert info.method == "_Greedy"
    with pytest.raises(tf.errors.EinsumError, match="unknown optimize 'bogus' .*'dp'"):
        tf.einsum(subs, *arrays, optimize="bogus")
    with pytest.raises(tf.errors.EinsumError, match="unknown minimize"):
        tf.einsum(subs, *arrays, minimize="time")


def test_nested_tuple_trees() -> None:
    rng = np.random.default_rng(6)
    subs = "ab,bc,cd,de->ae"
    arrays = [rng.uniform(-1, 1, s) for s in [(3, 4), (4, 5), (5, 2), (2, 6)]]
    want = np.einsum(subs, *arrays)
    for tree in (((0, 1), (2, 3)), (((0, 1), 2), 3), (0, 1, 2, 3), ((3, 2), (1, 0))):
        np.testing.assert_allclose(
            np.asarray(tf.einsum(subs, *arrays, optimize=tree)), want, rtol=1e-12
        )
    path, info = tf.einsum_path(subs, *arrays, optimize=((0, 2), (1, 3)))
    assert path == [(0, 2), (0, 1), (0, 1)] and info.method == "explicit tree"
    for bad in (((0, 1), (1, 2), 3), ((0, 1), 2), ((0, 1), (2, "x"), 3), ((0, 1), (2, ()), 3)):
        with pytest.raises(tf.errors.EinsumError, match="tree"):
            tf.einsum(subs, *arrays, optimize=bad)


def test_minimize_size_never_has_a_larger_intermediate() -> None:
    shapes = [(2, 30), (30, 40), (40, 3), (3, 50)]
    arrays = [np.empty(s) for s in shapes]
    subs = "ij,jk,kl,lm->im"
    _, flops = tf.einsum_path(subs, *arrays, optimize="optimal")
    _, size = tf.einsum_path(subs, *arrays, optimize="optimal", minimize="size")
    assert size.largest_intermediate <= flops.largest_intermediate
    assert size.opt_cost >= flops.opt_cost


def test_huge_costs_are_exact_ints() -> None:
    """opt_cost and naive_cost of networks beyond every machine integer are exact."""
    n = 40
    subs = ",".join(chr(0x4E00 + k) + chr(0x4E00 + k + 1) for k in range(n)) + "->"
    shapes = [(1000, 1000)] * n
    big = np.lib.stride_tricks.as_strided(np.empty(1), (1000, 1000), (0, 0))
    path, info = tf.einsum_path(subs, *[big] * n)
    _, want = oe.contract_path(subs, *shapes, shapes=True, optimize=path)
    assert info.opt_cost == int(want.opt_cost)
    assert info.naive_cost == int(want.naive_cost) and info.naive_cost > 2**128


def _clean(subs: str) -> bool:
    """No repeated label sets and no lone labels: where opt_einsum's ``optimal`` search is exact
    in its own ``opt_cost`` (see ``test_optimal_equals_opt_einsums_optimal``)."""
    ins, out = subs.split("->")
    sets = [frozenset(t) for t in ins.split(",")]
    lone = any(c not in out and sum(c in s for s in sets) == 1 for s in sets for c in s)
    return len(set(sets)) == len(sets) and not lone


# Found by a seeded search against opt_einsum's optimal (400 random networks of 3..7 operands:
# 61 worse): the connected-subset DP, its components joined smallest first, paid 1.2x-5x here.
DP_CASES = [
    ("a,b,afh,ceg,d->fgh", dict(a=5, b=4, c=5, d=4, e=3, f=4, g=4, h=3)),
    ("c,abdf,bef->", dict(a=3, b=4, c=1, d=4, e=4, f=4)),
    ("bdf,e,abg->bfg", dict(a=4, b=1, d=5, e=5, f=1, g=5)),
    ("ad,b,e,b->ab", dict(a=4, b=3, d=1, e=4)),
    ("aehi,dfgi,ce->deh", dict(a=2, c=1, d=1, e=2, f=4, g=3, h=3, i=2)),
    ("b,bce,d,a,def->df", dict(a=4, b=5, c=1, d=1, e=5, f=5)),
    ("abg,cf,ce,de,a,d,bfg->ce", dict(a=4, b=3, c=3, d=2, e=1, f=2, g=4)),
]


def test_dp_and_optimal_equal_opt_einsums_optimal() -> None:
    """Seeded random dense networks (3..6 operands; outer products between intermediates that
    share only output labels) and the cases the connected-only DP missed: ``"dp"`` and
    ``"optimal"`` reach opt_einsum's ``optimal`` ``opt_cost`` (never more; equal where its
    search is exact)."""
    rng = np.random.default_rng(2434)
    letters = "abcdefgh"
    problems = []
    for _ in range(60):
        n = int(rng.integers(3, 7))
        sizes = {c: int(rng.integers(1, 6)) for c in letters}
        terms = [
            "".join(sorted(set(rng.choice(list(letters), size=int(rng.integers(1, 5))))))
            for _ in range(n)
        ]
        present = sorted(set("".join(terms)))
        out = "".join(c for c in present if rng.random() < 0.3)
        problems.append((",".join(terms) + "->" + out, sizes))
    problems += [(subs, sizes) for subs, sizes in DP_CASES]
    for subs, sizes in problems:
        terms = subs.split("->")[0].split(",")
        shapes = [tuple(sizes[c] for c in t) for t in terms]
        _, want = oe.contract_path(subs, *shapes, shapes=True, optimize="optimal")
        arrays = [np.empty(s) for s in shapes]
        for opt in ("optimal", "dp"):
            got = tf.einsum_path(subs, *arrays, optimize=opt)[1].opt_cost
            assert got <= int(want.opt_cost), (subs, opt)
            if _clean(subs):
                assert got == int(want.opt_cost), (subs, opt)


def test_numpy_memory_limit_tuples_and_paths_round_trip() -> None:
    rng = np.random.default_rng(7)
    subs = "ij,jk,kl,lm->im"
    arrays = [rng.uniform(-1, 1, s) for s in [(40, 2), (2, 30), (30, 2), (2, 3)]]
    want = np.einsum(subs, *arrays)
    for name in ("greedy", "optimal"):
        for limit in (0, 60, 80, 1000, 1e9):
            path, info = tf.einsum_path(subs, *arrays, optimize=(name, limit))
            # every intermediate (the final result excepted) fits, or one joint step
            rows = info.contraction_list
            assert all(size <= limit for _, _, _, size in rows[:-1]), (name, limit, path)
            assert info.method.endswith(f"memory_limit={int(limit)}")
            got = tf.einsum(subs, *arrays, optimize=(name, limit))
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
        # nothing fits: one joint contraction, as NumPy
        np_path, _ = np.einsum_path(subs, *arrays, optimize=(name, 0))
        assert tf.einsum_path(subs, *arrays, optimize=(name, 0))[0] == np_path[1:]
    # the unlimited planner is the limit-free one
    assert (
        tf.einsum_path(subs, *arrays, optimize=("greedy", 1e9))[0]
        == tf.einsum_path(subs, *arrays)[0]
    )
    # NumPy's path (["einsum_path", ...]) round-trips, as a list or a tuple
    for name in ("greedy", "optimal"):
        np_path, _ = np.einsum_path(subs, *arrays, optimize=name)
        for explicit in (np_path, tuple(np_path)):
            path, info = tf.einsum_path(subs, *arrays, optimize=explicit)
            assert path == list(np_path[1:]) and info.method == "explicit path"
            got = tf.einsum(subs, *arrays, optimize=explicit)
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    for bad in (("greedy", "x"), ("bogus", 10), ("greedy", float("nan"))):
        with pytest.raises(tf.errors.EinsumError):
            tf.einsum_path(subs, *arrays, optimize=bad)


def test_path_optimizer_labels_never_collide_with_ellipsis_axes() -> None:
    """Ellipsis axes reach a ``PathOptimizer`` as private-use code points from U+F0000; a user
    label in that range keeps its own name and the axes skip it."""
    seen: dict[str, Any] = {}

    def spy(inputs: Any, output: Any, size_dict: Any, memory_limit: Any = None) -> Any:
        seen.update(inputs=inputs, output=output, size_dict=dict(size_dict))
        return oe.paths.greedy(inputs, output, size_dict)

    rng = np.random.default_rng(3)
    a, b = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (3, 4))
    u0, u1 = "\U000f0000", "\U000f0001"
    got = tf.einsum(f"{u0}...,...{u1}->...", a, b, optimize=spy)
    np.testing.assert_allclose(np.asarray(got), np.einsum("a...,...b->...", a, b), rtol=1e-12)
    sizes = seen["size_dict"]
    assert len(sizes) == 3 and sizes[u0] == 2 and sizes[u1] == 4, sizes
    (ell,) = set(sizes) - {u0, u1}
    assert sizes[ell] == 3 and seen["output"] == frozenset({ell})
    assert seen["inputs"] == [frozenset({u0, ell}), frozenset({ell, u1})]

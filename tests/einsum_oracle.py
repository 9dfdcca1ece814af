"""The test oracle of ``tf.einsum``: the Python parser, planners (left to right, greedy, exhaustive
optimal) and lowering that ``tenferro.einsum`` used before the Rust crate ``tenferro-einsum``
replaced them (not shipped). ``tests/test_einsum_oracle.py`` compares the two on random
subscripts. Original module docs follow.

``tf.einsum`` and ``tf.einsum_path``: Einstein summation lowered onto :mod:`tenferro.prim`.

A contraction is parsed (NumPy subscript syntax, or the interleaved form), planned (a pairwise
contraction path, ``opt_einsum``-style) and lowered to primitives only:

1. per operand, ``extract_diag`` for a label repeated within the operand, ``reduce_sum`` for a
   label that appears nowhere else (and to drop a size-1 axis broadcast against a larger one);
2. along the path, one ``dot_general`` per pair: labels shared by the pair and needed later
   (by another operand or the output) are batch axes, the other shared labels are contracted,
   the rest are free; ``dot_general`` returns ``[lhs free..., rhs free..., batch...]``;
3. at the end ``transpose`` to the output order, ``broadcast_in_dim`` for output axes that no
   operand carries, and ``embed_diag`` for labels repeated in the output (``i->ii``).

Because only primitives are called, derivatives of any order come from the primitives' rules.
The lowered plan is a flat program of primitive steps; it is cached in the executing engine's
plan cache per ``(subscripts, shapes, dtypes, optimize)`` (``engine.cache_stats()``) and replayed
by the Rust core in one call, which releases the GIL around large steps and checks for Ctrl-C
between steps.

Examples
--------
>>> import numpy as np, tenferro as tf
>>> a = tf.asarray(np.arange(6.0).reshape(2, 3))
>>> tf.einsum("ij->ji", a).tolist()
[[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
"""

from __future__ import annotations

import heapq
import math
import string
from collections.abc import Sequence
from typing import Any

import numpy as np

from tenferro import Tensor
from tenferro._types import DotGeneralConfig
from tenferro.errors import EinsumError

_OPTIMAL_MAX = 8
_BOOL = np.dtype(bool)
_F64 = np.dtype(np.float64)


# ----------------------------------------------------------------------------------------------
# parsing


def _label_of_int(k: Any, subscripts: str) -> str:
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 0:
        raise EinsumError(
            f"einsum: interleaved sublist {subscripts}: entry {k!r} is not a non-negative int or Ellipsis"
        )
    k = int(k)
    if k < 52:
        return string.ascii_letters[k]
    # Code points from U+4E00 (CJK ideographs, never ASCII), skipping the surrogates.
    cp = 0x4E00 + (k - 52)
    if cp >= 0xD800:
        cp += 0x800
    if cp > 0x10FFFF:
        raise EinsumError(
            f"einsum: interleaved sublist {subscripts}: label {k} is too large "
            f"(at most {0x10FFFF - 0x800 - 0x4E00 + 52})"
        )
    return chr(cp)


def _interleaved(args: Sequence[Any]) -> tuple[str, list[Any]]:
    """``(op0, sub0, op1, sub1, ..., [out])`` -> (subscripts string, operands)."""
    args = list(args)
    operands = args[0::2]
    sublists = args[1::2]
    out = None
    if len(args) % 2 == 1:
        out = operands.pop()
        if isinstance(out, Tensor) or isinstance(out, np.ndarray):
            raise EinsumError("einsum: interleaved form: every operand needs a sublist")

    def conv(sub: Any) -> str:
        try:
            items = list(sub)
        except TypeError:
            raise EinsumError(
                f"einsum: interleaved form: sublist {sub!r} is not a sequence"
            ) from None
        parts = []
        for k in items:
            parts.append("..." if k is Ellipsis else _label_of_int(k, repr(sub)))
        return "".join(parts)

    subs = ",".join(conv(s) for s in sublists)
    if out is not None:
        subs += "->" + conv(out)
    return subs, operands


def _parse_term(term: str, subscripts: str, offset: int, where: Sequence[int]) -> list[str]:
    """Labels of one term; ``'...'`` kept as the token ``'...'``. ``term`` starts at ``offset``
    of the whitespace-free subscripts; ``where`` maps those positions to the original string."""
    labels: list[str] = []
    i = 0
    while i < len(term):
        ch = term[i]
        if ch == ".":
            if term[i : i + 3] != "...":
                raise EinsumError(
                    f"einsum: subscripts {subscripts!r}: invalid '.' at position {where[offset + i]} "
                    "(an ellipsis is exactly '...')"
                )
            if "..." in labels:
                raise EinsumError(
                    f"einsum: subscripts {subscripts!r}: more than one ellipsis in one term at "
                    f"position {where[offset + i]}"
                )
            labels.append("...")
            i += 3
            continue
        if ch in ",->":
            raise EinsumError(
                f"einsum: subscripts {subscripts!r}: invalid label {ch!r} at position {where[offset + i]} "
                "(',', '-' and '>' only separate terms)"
            )
        labels.append(ch)
        i += 1
    return labels


class _Parsed:
    __slots__ = ("inputs", "output", "sizes", "subscripts", "explicit")

    def __init__(
        self,
        inputs: list[list[str]],
        output: list[str],
        sizes: dict[str, int],
        subscripts: str,
        explicit: bool,
    ) -> None:
        self.inputs = inputs
        self.output = output
        self.sizes = sizes
        self.subscripts = subscripts
        self.explicit = explicit


def _ell(r: int) -> str:
    """Internal label of the ellipsis axis ``r`` counted from the right (never a letter)."""
    return f"\u2026{r}"


def _parse(subscripts: str, shapes: Sequence[tuple[int, ...]]) -> _Parsed:
    if not isinstance(subscripts, str):
        raise EinsumError(f"einsum: subscripts must be a str, got {type(subscripts).__name__}")
    where = [i for i, ch in enumerate(subscripts) if not ch.isspace()]
    s = "".join(subscripts[i] for i in where)
    if s.count("->") > 1:
        raise EinsumError(f"einsum: subscripts {subscripts!r}: more than one '->'")
    explicit = "->" in s
    lhs, _, rhs = s.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise EinsumError(
            f"einsum: subscripts {subscripts!r}: {len(terms)} input term(s) but {len(shapes)} operand(s)"
        )
    raw: list[list[str]] = []
    off = 0
    for t in terms:
        raw.append(_parse_term(t, subscripts, off, where))
        off += len(t) + 1
    out_raw = _parse_term(rhs, subscripts, len(lhs) + 2, where) if explicit else None

    n_ell = 0
    inputs: list[list[str]] = []
    sizes: dict[str, int] = {}
    where: dict[str, int] = {}
    for k, (labels, shape) in enumerate(zip(raw, shapes)):
        named = [lab for lab in labels if lab != "..."]
        if "..." in labels:
            ne = len(shape) - len(named)
            if ne < 0:
                raise EinsumError(
                    f"einsum: subscripts {subscripts!r}: operand {k} has rank {len(shape)} but term "
                    f"{terms[k]!r} names {len(named)} axes"
                )
            p = labels.index("...")
            full = labels[:p] + [_ell(r) for r in range(ne - 1, -1, -1)] + labels[p + 1 :]
            n_ell = max(n_ell, ne)
        else:
            if len(named) != len(shape):
                raise EinsumError(
                    f"einsum: subscripts {subscripts!r}: operand {k} has rank {len(shape)} but term "
                    f"{terms[k]!r} has {len(named)} labels"
                )
            full = labels
        mine: dict[str, int] = {}
        for lab, n in zip(full, shape):
            if mine.setdefault(lab, n) != n:
                raise EinsumError(
                    f"einsum: subscripts {subscripts!r}: label {lab!r} repeated in operand {k} "
                    f"with sizes {mine[lab]} and {n} (a diagonal needs equal sizes)"
                )
            if lab not in sizes or (sizes[lab] == 1 and n != 1):
                sizes[lab] = n
                where[lab] = k
            elif n != 1 and n != sizes[lab]:
                name = "ellipsis axis" if lab.startswith("\u2026") else f"label {lab!r}"
                raise EinsumError(
                    f"einsum: subscripts {subscripts!r}: {name} has size {sizes[lab]} in operand "
                    f"{where[lab]} but {n} in operand {k}"
                )
        inputs.append(full)

    ell_out = [_ell(r) for r in range(n_ell - 1, -1, -1)]
    if explicit:
        assert out_raw is not None
        if "..." in out_raw:
            p = out_raw.index("...")
            output = out_raw[:p] + ell_out + out_raw[p + 1 :]
        else:
            if n_ell:
                raise EinsumError(
                    f"einsum: subscripts {subscripts!r}: the operands have {n_ell} ellipsis axes "
                    "but the output has no '...'"
                )
            output = list(out_raw)
        for lab in out_raw:
            if lab != "..." and lab not in sizes:
                raise EinsumError(
                    f"einsum: subscripts {subscripts!r}: output label {lab!r} does not appear in "
                    "any input term"
                )
    else:
        counts: dict[str, int] = {}
        for labels in raw:
            for lab in labels:
                counts[lab] = counts.get(lab, 0) + 1
        once = sorted(lab for lab, c in counts.items() if c == 1 and lab != "...")
        output = ell_out + once
    return _Parsed(inputs, output, sizes, subscripts, explicit)


# ----------------------------------------------------------------------------------------------
# planning


def _size(labels: Sequence[str], sizes: dict[str, int]) -> int:
    return math.prod(sizes[lab] for lab in labels)


def _flops(labels: set[str], inner: bool, sizes: dict[str, int]) -> int:
    """opt_einsum's ``flop_count`` for a pairwise contraction."""
    return _size(sorted(labels), sizes) * (2 if inner else 1)


def _pair_result(a: Sequence[str], b: Sequence[str], needed: set[str]) -> list[str]:
    shared = [lab for lab in a if lab in b]
    af = [lab for lab in a if lab not in b and lab in needed]
    bf = [lab for lab in b if lab not in a and lab in needed]
    batch = [lab for lab in shared if lab in needed]
    return af + bf + batch


class _LabelCount:
    """How many operands (of a changing collection) carry each label."""

    __slots__ = ("n",)

    def __init__(self, terms: Sequence[Sequence[str]]) -> None:
        self.n: dict[str, int] = {}
        for t in terms:
            self.add(t)

    def add(self, term: Sequence[str]) -> None:
        for lab in set(term):
            self.n[lab] = self.n.get(lab, 0) + 1

    def remove(self, term: Sequence[str]) -> None:
        for lab in set(term):
            self.n[lab] -= 1

    def __getitem__(self, lab: str) -> int:
        return self.n.get(lab, 0)


def _greedy(
    terms: list[list[str]], output: list[str], sizes: dict[str, int]
) -> list[tuple[int, ...]]:
    """Greedy pairwise path (the strategy of ``opt_einsum``'s ``greedy``): repeatedly contract the
    pair sharing a label whose result grows the total size least (``size(result) - size(a) -
    size(b)``, ties to the smaller result, then the older operands); when no remaining pair shares
    a label, take the outer product of the two smallest operands.

    Candidate pairs live in a heap with lazy deletion; a pair's result does not change when other
    operands merge (a label stays needed outside the pair as long as some operand or the output
    carries it), so each merge only adds the new operand's pairs: ``O(P log P)`` for ``P``
    candidate pairs.
    """
    n = len(terms)
    if n == 1:
        return [(0,)]
    out = set(output)
    sets: dict[int, frozenset[str]] = {k: frozenset(t) for k, t in enumerate(terms)}
    size_of = {k: _size(sorted(t), sizes) for k, t in sets.items()}
    count: dict[str, int] = {}
    holders: dict[str, set[int]] = {}
    for k, t in sets.items():
        for lab in t:
            count[lab] = count.get(lab, 0) + 1
            holders.setdefault(lab, set()).add(k)

    def result(a: int, b: int) -> frozenset[str]:
        sa, sb = sets[a], sets[b]
        return frozenset(
            lab for lab in sa | sb if lab in out or count[lab] > (lab in sa) + (lab in sb)
        )

    heap: list[tuple[int, int, int, int]] = []
    alive = set(range(n))
    ssa: list[tuple[int, int]] = []
    nxt = n

    def merge(a: int, b: int) -> frozenset[str]:
        nonlocal nxt
        r = result(a, b)
        for k in (a, b):
            alive.discard(k)
            for lab in sets[k]:
                count[lab] -= 1
                holders[lab].discard(k)
        sets[nxt] = r
        size_of[nxt] = _size(sorted(r), sizes)
        for lab in r:
            count[lab] += 1
            holders[lab].add(nxt)
        alive.add(nxt)
        ssa.append((a, b))
        nxt += 1
        return r

    # Operands with the same labels first (Hadamard products never grow anything), as
    # opt_einsum's greedy does.
    same: dict[frozenset[str], int] = {}
    for k in range(n):
        if sets[k] in same:
            merge(same[sets[k]], k)
            same[sets[k]] = nxt - 1
        else:
            same[sets[k]] = k

    def push(a: int, b: int) -> None:
        a, b = min(a, b), max(a, b)
        rs = _size(sorted(result(a, b)), sizes)
        heapq.heappush(heap, (rs - size_of[a] - size_of[b], rs, a, b))

    for k in sorted(alive):
        partners: set[int] = set()
        for lab in sets[k]:
            partners.update(j for j in holders[lab] if j > k)
        for j in partners:
            push(k, j)
    while len(alive) > 1:
        pair = None
        while heap:
            _, _, a, b = heapq.heappop(heap)
            if a in alive and b in alive:
                pair = (a, b)
                break
        if pair is None:  # disconnected: outer product of the two smallest
            a, b = sorted(sorted(alive), key=lambda k: size_of[k])[:2]
            pair = (min(a, b), max(a, b))
        r = merge(*pair)
        partners = set()
        for lab in r:
            partners.update(holders[lab])
        partners.discard(nxt - 1)
        for j in partners:
            push(j, nxt - 1)
    return _linear_path(ssa, n)


def _linear_path(ssa: list[tuple[int, int]], n: int) -> list[tuple[int, ...]]:
    """Static-single-assignment pairs (operand ``n + k`` is the result of pair ``k``) to the
    linear path format of ``numpy``/``opt_einsum`` (positions in the shrinking operand list)."""
    ids = list(range(n))
    path: list[tuple[int, ...]] = []
    nxt = n
    for x, y in ssa:
        i, j = sorted((ids.index(x), ids.index(y)))
        path.append((i, j))
        ids.pop(j)
        ids.pop(i)
        ids.append(nxt)
        nxt += 1
    return path


def _optimal(
    terms: list[list[str]], output: list[str], sizes: dict[str, int]
) -> list[tuple[int, ...]]:
    """Exhaustive search over contraction trees (DP over subsets), minimising the FLOP count."""
    n = len(terms)
    if n == 1:
        return [(0,)]
    full = (1 << n) - 1
    out = set(output)
    labels_of = [set(t) for t in terms]
    union: dict[int, set[str]] = {}
    for m in range(1, full + 1):
        s: set[str] = set()
        for k in range(n):
            if m >> k & 1:
                s |= labels_of[k]
        union[m] = s

    def result(m: int) -> set[str]:
        return union[m] & (out | union[full ^ m]) if m != full else union[m] & out

    best: dict[int, tuple[int, Any]] = {1 << k: (0, k) for k in range(n)}
    for m in sorted(range(1, full + 1), key=lambda x: bin(x).count("1")):
        if m in best:
            continue
        low = m & -m
        cand = None
        sub = (m - 1) & m
        while sub:
            if sub & low:  # each split once: the part holding the lowest bit
                rest = m ^ sub
                ra, rb = result(sub), result(rest)
                inner = bool((ra & rb) - result(m))
                c = best[sub][0] + best[rest][0] + _flops(ra | rb, inner, sizes)
                if cand is None or c < cand[0]:
                    cand = (c, (sub, rest))
            sub = (sub - 1) & m
        assert cand is not None
        best[m] = cand

    ssa: list[tuple[int, int]] = []
    counter = [n]

    def walk(m: int) -> int:
        node = best[m][1]
        if isinstance(node, int):
            return node
        x, y = walk(node[0]), walk(node[1])
        ssa.append((x, y))
        counter[0] += 1
        return counter[0] - 1

    walk(full)
    return _linear_path(ssa, n)


def _validate_path(path: Any, n: int, subscripts: str) -> list[tuple[int, ...]]:
    try:
        entries = list(path)
    except TypeError:
        raise EinsumError(
            f"einsum: subscripts {subscripts!r}: invalid optimize {path!r} "
            "(False, True, 'greedy', 'optimal' or a path)"
        ) from None
    if entries and isinstance(entries[0], str):
        if entries[0] != "einsum_path":
            raise EinsumError(
                f"einsum: subscripts {subscripts!r}: invalid path entry 0: {entries[0]!r} "
                "(a NumPy path starts with 'einsum_path')"
            )
        entries = entries[1:]
    out: list[tuple[int, ...]] = []
    remaining = n
    for pos, e in enumerate(entries):
        try:
            t = tuple(e)
        except TypeError:
            raise EinsumError(
                f"einsum: subscripts {subscripts!r}: invalid path entry {pos}: {e!r} is not a tuple"
            ) from None
        ok = (
            len(t) >= 1
            and all(isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in t)
            and len(set(t)) == len(t)
            and all(0 <= k < remaining for k in t)
        )
        if not ok:
            raise EinsumError(
                f"einsum: subscripts {subscripts!r}: invalid path entry {pos}: {e!r} "
                f"(distinct indices in [0, {remaining}) expected)"
            )
        out.append(tuple(int(k) for k in t))
        remaining = remaining - len(t) + 1
    if remaining != 1:
        raise EinsumError(
            f"einsum: subscripts {subscripts!r}: path {list(entries)!r} leaves {remaining} operands "
            "uncontracted"
        )
    return out


class _Plan:
    """Primitive steps of one contraction: per-operand preparation, pairwise contractions,
    final layout, and the bookkeeping reported by :func:`einsum_path`."""

    __slots__ = ("prep", "steps", "final", "path", "info", "bool_out")

    def __init__(self) -> None:
        self.prep: list[list[tuple[str, tuple[Any, ...]]]] = []
        # per path entry: the operand positions taken, then per pairwise product
        # (lhs sums, rhs sums, "dot_general", config) or (lhs sums, rhs sums, "mul",
        # ((lhs transpose, result shape, broadcast dims), (rhs ...)))
        self.steps: list[
            tuple[tuple[int, ...], list[tuple[tuple[int, ...], tuple[int, ...], str, Any]]]
        ] = []
        self.final: list[tuple[str, tuple[Any, ...]]] = []
        self.path: list[tuple[int, ...]] = []
        self.info: EinsumPathInfo | None = None
        self.bool_out = False


def _prep_operand(
    labels: list[str], shape: tuple[int, ...], others: set[str], sizes: dict[str, int]
) -> tuple[list[tuple[str, tuple[Any, ...]]], list[str]]:
    ops: list[tuple[str, tuple[Any, ...]]] = []
    labels = list(labels)
    # size-1 axes broadcast against a larger size: the operand does not depend on that label
    drop = [k for k, (lab, n) in enumerate(zip(labels, shape)) if n == 1 and sizes[lab] != 1]
    if drop:
        ops.append(("reduce_sum", (tuple(drop),)))
        labels = [lab for k, lab in enumerate(labels) if k not in drop]
    # repeated labels: diagonal
    while True:
        rep = next((lab for lab in labels if labels.count(lab) > 1), None)
        if rep is None:
            break
        p = labels.index(rep)
        q = labels.index(rep, p + 1)
        perm = (p, q) + tuple(k for k in range(len(labels)) if k not in (p, q))
        if perm != tuple(range(len(labels))):
            ops.append(("transpose", (perm,)))
        ops.append(("extract_diag", (0, 1)))
        labels = [rep] + [labels[k] for k in perm[2:]]
    # labels appearing nowhere else
    lone = [k for k, lab in enumerate(labels) if lab not in others]
    if lone:
        ops.append(("reduce_sum", (tuple(lone),)))
        labels = [lab for k, lab in enumerate(labels) if k not in lone]
    return ops, labels


def _make_plan(
    subscripts: str,
    shapes: list[tuple[int, ...]],
    dtypes: list[np.dtype],
    optimize: Any,
    c_order: Sequence[bool] | None = None,
) -> _Plan:
    """Parse, plan and lower one contraction. ``c_order[k]`` says operand ``k`` is laid out
    row-major (NumPy memory read in place); it only steers the axis order of products with
    nothing summed, so that they walk the larger operand's memory contiguously."""
    parsed = _parse(subscripts, shapes)
    sizes, output = parsed.sizes, parsed.output
    n = len(shapes)
    plan = _Plan()
    terms: list[list[str]] = []
    held = _LabelCount(parsed.inputs)
    out_set = set(output)
    for k in range(n):
        mine = set(parsed.inputs[k])
        others = {lab for lab in mine if lab in out_set or held[lab] > 1}
        ops, labs = _prep_operand(parsed.inputs[k], shapes[k], others, sizes)
        plan.prep.append(ops)
        terms.append(labs)

    note = ""
    path: list[tuple[int, ...]]
    if optimize is False or optimize is None:
        path = [(0,)] if n == 1 else [(0, 1)] * (n - 1)
        method = "left to right"
    elif optimize is True or optimize == "greedy":
        path = _greedy(terms, output, sizes)
        method = "greedy"
    elif optimize == "optimal":
        if n > _OPTIMAL_MAX:
            path = _greedy(terms, output, sizes)
            method = "greedy"
            note = f"'optimal' falls back to greedy above {_OPTIMAL_MAX} operands ({n} given)"
        else:
            path = _optimal(terms, output, sizes)
            method = "optimal"
    elif isinstance(optimize, str):
        raise EinsumError(
            f"einsum: subscripts {subscripts!r}: unknown optimize {optimize!r} "
            "(False, 'greedy', 'optimal' or a path)"
        )
    else:
        path = _validate_path(optimize, n, subscripts)
        method = "explicit path"
    plan.path = list(path)

    # pairwise lowering along the path
    cur = [list(t) for t in terms]
    # per operand: memory order is the reverse of the axis order (untouched row-major inputs;
    # every computed intermediate is column-major)
    cur_c = [bool(c_order[k]) and not plan.prep[k] if c_order else False for k in range(n)]
    rows: list[tuple[tuple[int, ...], str, int, int]] = []
    opt_cost = 0
    largest = max([_size(t, sizes) for t in cur] + [0])
    live = _LabelCount(cur)  # operands holding each label, among those not yet contracted
    for entry in path:
        idx = sorted(entry, reverse=True)
        group = [cur[k] for k in sorted(entry)]
        group_c = [cur_c[k] for k in sorted(entry)]
        for k in idx:
            live.remove(cur.pop(k))
            cur_c.pop(k)
        acc = group[0]
        pairs: list[tuple[tuple[int, ...], tuple[int, ...], str, Any]] = []
        for g, b in enumerate(group[1:], start=1):
            later = set().union(*group[g + 1 :])
            a, a_c, b_c = acc, group_c[0] if g == 1 else False, group_c[g]
            need = {lab for lab in set(a) | set(b) if lab in out_set or live[lab] or lab in later}
            pre_a = [k for k, lab in enumerate(a) if lab not in b and lab not in need]
            pre_b = [k for k, lab in enumerate(b) if lab not in a and lab not in need]
            a2 = [lab for k, lab in enumerate(a) if k not in pre_a]
            b2 = [lab for k, lab in enumerate(b) if k not in pre_b]
            shared = [lab for lab in a2 if lab in b2]
            batch = [lab for lab in shared if lab in need]
            contr = [lab for lab in shared if lab not in need]
            res = (
                [lab for lab in a2 if lab not in shared]
                + [lab for lab in b2 if lab not in shared]
                + batch
            )
            if contr:
                cfg = DotGeneralConfig(
                    lhs_contracting_dims=tuple(a2.index(lab) for lab in contr),
                    rhs_contracting_dims=tuple(b2.index(lab) for lab in contr),
                    lhs_batch_dims=tuple(a2.index(lab) for lab in batch),
                    rhs_batch_dims=tuple(b2.index(lab) for lab in batch),
                )
                pairs.append((tuple(pre_a), tuple(pre_b), "dot_general", cfg))
            else:
                # Nothing summed (outer and elementwise products): both operands as broadcast
                # views of the result's shape, then one `mul` -- a GEMM per batch element
                # would cost a kernel call per element. The result keeps the larger operand's
                # axis order (its memory order for tenferro's column-major tensors), so that
                # operand and the output are walked contiguously.
                mem_a = a2[::-1] if a_c and not pre_a else a2
                mem_b = b2[::-1] if b_c and not pre_b else b2
                big, small = (
                    (mem_a, mem_b) if _size(a2, sizes) >= _size(b2, sizes) else (mem_b, mem_a)
                )
                res = list(big) + [lab for lab in small if lab not in big]
                shape = tuple(sizes[lab] for lab in res)
                views = []
                for labs in (a2, b2):
                    order = sorted(range(len(labs)), key=lambda k: res.index(labs[k]))
                    dims = tuple(res.index(labs[k]) for k in order)
                    views.append((tuple(order), shape, dims))
                pairs.append((tuple(pre_a), tuple(pre_b), "mul", views))
            cost = _flops(set(a2) | set(b2), bool(contr), sizes)
            opt_cost += cost
            largest = max(largest, _size(res, sizes))
            rows.append(
                (
                    tuple(sorted(entry)),
                    _fmt(a2) + "," + _fmt(b2) + "->" + _fmt(res),
                    cost,
                    _size(res, sizes),
                )
            )
            acc = res
        cur.append(acc)
        cur_c.append(False)
        live.add(acc)
        plan.steps.append((tuple(sorted(entry)), pairs))
    final_labels = cur[0] if cur else []

    # final layout
    fin: list[tuple[str, tuple[Any, ...]]] = []
    extra = [k for k, lab in enumerate(final_labels) if lab not in output]
    if extra:
        fin.append(("reduce_sum", (tuple(extra),)))
        final_labels = [lab for k, lab in enumerate(final_labels) if k not in extra]
    uniq: list[str] = []
    for lab in output:
        if lab not in uniq:
            uniq.append(lab)
    present = [lab for lab in uniq if lab in final_labels]
    perm = tuple(final_labels.index(lab) for lab in present)
    if perm != tuple(range(len(perm))):
        fin.append(("transpose", (perm,)))
    if len(present) != len(uniq):
        shape = tuple(sizes[lab] for lab in uniq)
        dims = tuple(uniq.index(lab) for lab in present)
        fin.append(("broadcast_in_dim", (shape, dims)))
    labs = list(uniq)
    for k, lab in enumerate(output):
        if lab in output[:k]:
            p = labs.index(lab)
            fin.append(("embed_diag", (p, p + 1)))
            labs.insert(p + 1, lab)
    if labs != output:
        used = [False] * len(labs)
        perm2 = []
        for lab in output:
            j = next(j for j in range(len(labs)) if labs[j] == lab and not used[j])
            used[j] = True
            perm2.append(j)
        fin.append(("transpose", (tuple(perm2),)))
    plan.final = fin
    plan.bool_out = bool(dtypes) and all(d == _BOOL for d in dtypes)

    naive = _flops(set(sizes), any(lab not in output for lab in sizes), sizes) * max(1, n - 1)
    plan.info = EinsumPathInfo(
        subscripts=subscripts,
        eq=_fmt_eq(parsed),
        path=list(path),
        method=method,
        opt_cost=opt_cost,
        naive_cost=naive,
        largest_intermediate=largest,
        rows=rows,
        note=note,
        sizes=dict(sizes),
    )
    return plan


def _fmt(labels: Sequence[str]) -> str:
    return "".join("." if lab.startswith("\u2026") else lab for lab in labels)


def _fmt_eq(parsed: _Parsed) -> str:
    return ",".join(_fmt(t) for t in parsed.inputs) + "->" + _fmt(parsed.output)


def _sci(n: int) -> str:
    """``n`` in scientific notation, also beyond the float range."""
    digits = str(n)
    if len(digits) <= 300:
        return f"{n:.3e}"
    return f"{digits[0]}.{digits[1:4]}e+{len(digits) - 1:02d}"


class EinsumPathInfo:
    """What :func:`einsum_path` reports about a contraction (as ``opt_einsum.PathInfo``).

    Attributes
    ----------
    path : list of tuple of int
        The contraction path (linear, ``opt_einsum`` convention).
    opt_cost : int
        FLOP count of the path (``opt_einsum``'s ``flop_count``: size of the joint index space,
        doubled when labels are summed).
    naive_cost : int
        FLOP count of a single joint contraction.
    speedup : float
        ``naive_cost / opt_cost``.
    largest_intermediate : int
        Element count of the largest tensor along the path (operands included).
    method : str
        ``"left to right"``, ``"greedy"``, ``"optimal"`` or ``"explicit path"``.
    note : str
        Non-empty when ``"optimal"`` fell back to greedy.
    contraction_list : list of tuple
        ``(indices, equation, flops, result size)`` per pairwise step.
    """

    def __init__(
        self,
        *,
        subscripts: str,
        eq: str,
        path: list[tuple[int, ...]],
        method: str,
        opt_cost: int,
        naive_cost: int,
        largest_intermediate: int,
        rows: list[Any],
        note: str,
        sizes: dict[str, int],
    ) -> None:
        self.subscripts = subscripts
        self.eq = eq
        self.path = path
        self.method = method
        self.opt_cost = opt_cost
        self.naive_cost = naive_cost
        self.largest_intermediate = largest_intermediate
        self.contraction_list = rows
        self.note = note
        self.size_dict = sizes
        try:
            self.speedup = naive_cost / opt_cost if opt_cost else 1.0
        except OverflowError:  # naive costs of large networks exceed the float range
            self.speedup = math.inf

    def __repr__(self) -> str:
        return (
            f"EinsumPathInfo(path={self.path!r}, opt_cost={self.opt_cost}, "
            f"largest_intermediate={self.largest_intermediate}, method={self.method!r})"
        )

    def __str__(self) -> str:
        lines = [
            f"  Complete contraction:  {self.eq}",
            f"         Naive scaling:  {len(self.size_dict)}",
            f"      Optimized method:  {self.method}",
            f"      Naive FLOP count:  {_sci(self.naive_cost)}",
            f"  Optimized FLOP count:  {_sci(self.opt_cost)}",
            f"   Theoretical speedup:  {self.speedup:.3e}",
            f"  Largest intermediate:  {_sci(self.largest_intermediate)} elements",
        ]
        if self.note:
            lines.append(f"                  Note:  {self.note}")
        lines.append("-" * 74)
        lines.append(f"{'step':>4}  {'indices':<10} {'flops':>12} {'size':>12}  contraction")
        lines.append("-" * 74)
        for k, (idx, eq, cost, size) in enumerate(self.contraction_list):
            lines.append(f"{k:>4}  {str(idx):<10} {cost:>12} {size:>12}  {eq}")
        return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# entry points


def _split_args(args: Sequence[Any]) -> tuple[str, list[Any]]:
    if not args:
        raise EinsumError("einsum: no subscripts given")
    if isinstance(args[0], str):
        return args[0], list(args[1:])
    return _interleaved(args)


def _meta(x: Any) -> tuple[tuple[int, ...], np.dtype]:
    shape = getattr(x, "shape", None)
    dtype = getattr(x, "dtype", None)
    if shape is not None and isinstance(dtype, np.dtype):
        return tuple(shape), dtype
    a = np.asarray(x)
    return a.shape, a.dtype


Instr = tuple[str, tuple[Any, ...], tuple[int, ...]]


def _lower(
    subscripts: str,
    shapes: list[tuple[int, ...]],
    dtypes: list[np.dtype],
    optimize: Any,
    c_order: Sequence[bool] | None = None,
) -> tuple[list[Instr], int]:
    """The flat program the Rust core caches (engine plan cache) and runs for one einsum call.

    Returns ``(instructions, output_slot)``. Slots ``0..n`` hold the operands; instruction ``k``
    writes slot ``n + k``. ``c_order`` flags row-major operands (see :func:`_make_plan`; part of
    the plan-cache key). Each instruction is ``(primitive, arguments, input slots)``;
    ``compare_ne_zero`` is ``compare(x, 0, "NE")`` (all-bool contractions, counted in float64).
    """
    plan = _make_plan(subscripts, shapes, dtypes, optimize, c_order)
    n = len(shapes)
    prog: list[Instr] = []

    def emit(name: str, args: tuple[Any, ...], *ins: int) -> int:
        prog.append((name, args, ins))
        return n + len(prog) - 1

    xs = list(range(n))
    # Bool operands: all-bool contractions count in float64 (never wraps; positive stays
    # positive) and test != 0 at the end; with other dtypes, bools convert to the result type.
    to = _F64 if plan.bool_out else np.result_type(*dtypes) if dtypes else None
    xs = [emit("convert", (to,), x) if dtypes[x] == _BOOL else x for x in xs]
    for k, prep in enumerate(plan.prep):
        for name, a in prep:
            xs[k] = emit(name, a, xs[k])
    for idx, pairs in plan.steps:
        group = [xs[k] for k in idx]
        for k in sorted(idx, reverse=True):
            xs.pop(k)
        acc = group[0]
        for b, (pre_a, pre_b, kind, arg) in zip(group[1:], pairs):
            if pre_a:
                acc = emit("reduce_sum", (pre_a,), acc)
            if pre_b:
                b = emit("reduce_sum", (pre_b,), b)
            if kind == "dot_general":
                acc = emit("dot_general", (arg,), acc, b)
                continue
            xy = []
            for x, (order, shape, dims) in zip((acc, b), arg):
                if order != tuple(range(len(order))):
                    x = emit("transpose", (order,), x)
                xy.append(emit("broadcast_in_dim", (shape, dims), x))
            acc = emit("mul", (), *xy)
        xs.append(acc)
    out = xs[0]
    for name, a in plan.final:
        out = emit(name, a, out)
    if plan.bool_out:
        out = emit("compare_ne_zero", (), out)
    return prog, out

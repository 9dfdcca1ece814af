"""The peak of live engine buffers of a sliced contraction (issue 25): during
``value_and_grad`` (and a forward pass) it stays within one slice's peak, computed from the
plan's contraction tree, plus the operands, the output and the gradients being built; and far
below the same contraction unsliced.

The per-slice peak (elements, then bytes) is an upper bound computed from the tree of the path
with the sliced labels of size 1 (``peaks``):

- forward, nothing recorded: at each step the intermediates made before and not yet consumed,
  the step's result and a compact copy of each of its two inputs (a GEMM copies an operand it
  cannot read in place);
- forward + VJP (a slice's backward recomputes the slice recorded, then walks it back): the
  recorded graph keeps every intermediate (the *tape*); the cotangents pending at any time of
  the reverse walk form an antichain of the tree (a node's cotangent exists from its parent's
  step until its own), bounded by the heaviest antichain; one step makes two cotangents with a
  compact copy of its two inputs each; and the leaves' cotangents are returned at the end.
"""

from __future__ import annotations

import tracemalloc
from math import prod

import numpy as np
import pytest

import tenferro as tf

from test_einsum_sliced import network

# a random 3-regular network of 20 nodes, bond 4: largest intermediate 65536 elements unsliced,
# 16 slices of at most 4096 at a limit of 8192 (1/8)
N, SEED, D = 20, 3, 4


def contraction_tree(
    inputs: list[str], output: str, path: list[tuple[int, ...]]
) -> list[tuple[frozenset[str], tuple[int, ...]]]:
    """Nodes ``(labels, children)``: the leaves (operands) first, then one node per path entry
    in path order (the last is the root)."""
    nodes: list[tuple[frozenset[str], tuple[int, ...]]] = [(frozenset(t), ()) for t in inputs]
    live = list(range(len(inputs)))
    for step in path:
        ids = [live[i] for i in step]
        for i in sorted(step, reverse=True):
            live.pop(i)
        rest = set(output).union(*(nodes[j][0] for j in live))
        labels = frozenset().union(*(nodes[j][0] for j in ids)) & rest
        nodes.append((labels, tuple(ids)))
        live.append(len(nodes) - 1)
    return nodes


def peaks(nodes, n_leaves: int, size: dict[str, int]) -> tuple[int, int]:
    """``(forward, forward + VJP)`` peak in elements of one contraction along the tree."""
    sz = [prod(size[c] for c in labels) for labels, _ in nodes]
    internal = range(n_leaves, len(nodes))
    parent = {c: v for v in internal for c in nodes[v][1]}
    parent[len(nodes) - 1] = len(nodes)
    fwd = max(
        sum(sz[j] for j in range(n_leaves, v) if parent[j] >= v)
        + sz[v]
        + sum(sz[c] for c in nodes[v][1])
        for v in internal
    )
    tape = sum(sz[v] for v in internal)
    rec_fwd = max(sum(sz[n_leaves:v]) + sz[v] + sum(sz[c] for c in nodes[v][1]) for v in internal)
    anti: dict[int, int] = {}
    for v in internal:  # children before parents
        anti[v] = max(sz[v], sum(anti[c] for c in nodes[v][1] if c >= n_leaves))
    step = max(
        sum(sz[c] for c in nodes[v][1]) + sz[v] + max(sz[c] for c in nodes[v][1]) for v in internal
    )
    vjp = tape + anti[len(nodes) - 1] + step + sum(sz[:n_leaves])
    return fwd, max(rec_fwd, vjp)


def test_tree_peaks_of_a_chain() -> None:
    # ij,jk,kl-> along ((0, 1), 2): k (i and j summed: 3 elements), then the scalar
    nodes = contraction_tree(["ij", "jk", "kl"], "", [(0, 1), (0, 1)])
    assert [sorted(lab) for lab, _ in nodes[3:]] == [["k"], []]
    size = {"i": 2, "j": 5, "k": 3, "l": 2}
    fwd, vjp = peaks(nodes, 3, size)
    # step 1: k + ij + jk = 3 + 10 + 15; step 2: k (pending) + scalar + k + kl = 3 + 1 + 3 + 6
    assert fwd == 28
    # tape 3 + 1; heaviest antichain {k}: 3; step at node k: ij + jk cotangents 10 + 15, its
    # own 3, a copy of the larger input 15; leaves' cotangents 10 + 15 + 6
    assert vjp == 4 + 3 + 43 + 31


#: tracemalloc traces Python objects too (tensor headers, slice keys, the slice list, bounded
#: caches): an allowance for them, far below the copies the bounds exclude
PY_OBJECTS = 32 * 1024


def _measure(engine, fn):
    """Peak bytes of ``fn()`` above what was live before, and its result: the engine's live
    buffers plus the host memory ``tracemalloc`` traces (NumPy arrays — a sliced contraction
    places its output and gradients in NumPy memory shared by the result — and Python
    objects). ``fn`` runs once before (first-call imports and caches are not its memory)."""
    fn()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        host0 = tracemalloc.get_traced_memory()[0]
        engine.reset_peak_memory_stats()
        base = engine.buffer_pool_stats().live_bytes
        out = fn()
        peak = engine.buffer_pool_stats().peak_live_bytes - base
        host = tracemalloc.get_traced_memory()[1] - host0
    finally:
        tracemalloc.stop()
    return peak + host, out


def test_sliced_value_and_grad_peak_is_one_slice_plus_operands_and_gradients() -> None:
    subs, ops = network(N, SEED, D, np.dtype(np.float64))
    inputs, output = subs.split("->")[0].split(","), subs.split("->")[1]
    path, info = tf.einsum_path(subs, *ops)
    limit = info.largest_intermediate // 8
    spath, sinfo = tf.einsum_path(subs, *ops, memory_limit=limit)
    sl = sinfo.slicing
    assert spath == path and sl.nslices > 1
    size = {c: n for t, o in zip(inputs, ops) for c, n in zip(t, o.shape)}
    sliced = {**size, **dict.fromkeys(sl.labels, 1)}
    nodes = contraction_tree(inputs, output, path)
    item = 8  # float64
    fwd_slice, vg_slice = (item * p for p in peaks(nodes, len(ops), sliced))
    fwd_full, vg_full = (item * p for p in peaks(nodes, len(ops), size))
    operands = sum(o.nbytes for o in ops)
    out = item  # a scalar
    grads = operands

    engine = tf.default_engine()
    argnums = tuple(range(len(ops)))

    def value_and_grad(**kw):
        def run():
            ts = [tf.asarray(o) for o in ops]  # created inside the measurement
            return tf.func.value_and_grad(lambda *xs: tf.einsum(subs, *xs, **kw), argnums)(*ts)

        return _measure(engine, run)

    peak, (v1, g1) = value_and_grad(memory_limit=limit)
    peak0, (v0, g0) = value_and_grad()
    assert abs(float(v1) - float(v0)) <= 1e-12 * abs(float(v0))
    # One slice in flight (local: slices run one after the other; its operand cotangents are
    # part of its peak). Besides it: the operands; the output; the gradients being built (each
    # slice's cotangents are added in place into one array per operand).
    bound = 1 * vg_slice + operands + out + grads + PY_OBJECTS
    print(f"value_and_grad: peak {peak} <= {bound}; unsliced {peak0} (model {vg_full})")
    assert peak <= bound
    # the same bound unsliced, and the measured unsliced run, are far above
    assert bound < (vg_full + operands + out + grads) / 4
    assert peak <= peak0 / 4

    # forward only: one slice's forward (its result is part of it), the operands, the output
    fpeak, y1 = _measure(engine, lambda: tf.einsum(subs, *ops, memory_limit=limit))
    fpeak0, y0 = _measure(engine, lambda: tf.einsum(subs, *ops))
    assert abs(float(y1) - float(y0)) <= 1e-12 * abs(float(y0))
    fbound = 1 * fwd_slice + operands + out + PY_OBJECTS
    print(f"forward: peak {fpeak} <= {fbound}; unsliced {fpeak0} (model {fwd_full})")
    assert fpeak <= fbound
    assert fpeak <= fpeak0 / 4


@pytest.mark.parametrize(
    ("subs", "shapes", "limit"),
    [
        # the breaker's chain: the operands and gradients dominate
        ("ij,jk,kl->il", [(40, 50), (50, 60), (60, 30)], 300),
        # an outer-product-like contraction: the output dominates
        ("ij,jk->ik", [(200, 10), (10, 300)], 60000 // 8),
    ],
)
def test_sliced_output_label_is_placed_without_a_second_copy(subs, shapes, limit) -> None:
    """A sliced *output* label: each slice's block is written into the one full output (and
    each slice's cotangent into the one full gradient) as it comes, so the blocks and their
    concatenation are never alive together (found by the breaker: the peak was 1.3x the
    unsliced one). The output and the gradients live in host memory shared with NumPy
    (``tracemalloc`` traces it); the engine's buffers are counted as above."""
    rng = np.random.default_rng(0)
    ops = [rng.standard_normal(s) for s in shapes]
    path, sinfo = tf.einsum_path(subs, *ops, memory_limit=limit)
    sl = sinfo.slicing
    inputs, output = subs.split("->")[0].split(","), subs.split("->")[1]
    assert set(sl.labels) & set(output) and sl.nslices > 1 and sl.largest_intermediate <= limit
    size = {c: n for t, o in zip(inputs, ops) for c, n in zip(t, o.shape)}
    sliced = {**size, **dict.fromkeys(sl.labels, 1)}
    nodes = contraction_tree(inputs, output, path)
    item = 8
    fwd_slice, vg_slice = (item * p for p in peaks(nodes, len(ops), sliced))
    operands = sum(o.nbytes for o in ops)
    out = item * prod(size[c] for c in output)
    grads = operands
    engine = tf.default_engine()

    def value_and_grad(**kw):
        def run():
            ts = [tf.asarray(o) for o in ops]
            argnums = tuple(range(len(ops)))
            f = tf.func.value_and_grad(lambda *xs: tf.einsum(subs, *xs, **kw).sum(), argnums)
            return f(*ts)

        return _measure(engine, run)

    peak, (v1, g1) = value_and_grad(memory_limit=limit)
    peak0, (v0, g0) = value_and_grad()
    assert abs(float(v1) - float(v0)) <= 1e-12 * abs(float(v0))
    for a, b in zip(g1, g0):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)
    # one slice in flight, the operands, the output (and its cotangent: the sum's pullback
    # broadcasts 1 to the output's shape), the gradients being built
    bound = vg_slice + operands + 2 * out + grads + PY_OBJECTS
    print(f"value_and_grad: peak {peak} <= {bound} (one slice {vg_slice}); unsliced {peak0}")
    assert peak <= bound

    fpeak, y1 = _measure(engine, lambda: tf.einsum(subs, *ops, memory_limit=limit))
    ref = np.einsum(subs, *ops, optimize=True)
    assert np.linalg.norm(np.asarray(y1) - ref) <= 1e-12 * np.linalg.norm(ref)
    fbound = fwd_slice + operands + out + PY_OBJECTS
    print(f"forward: peak {fpeak} <= {fbound}")
    assert fpeak <= fbound


# stored instances whose plan at 1/8 slices an output label (the larger ones hold the same
# bound: bin_matmul_1024 67 MB against 76 MB, bin_outer_product_4096 135 MB against 269 MB,
# bin_elementwise_mul_2048x2048 168 MB against 201 MB; minutes on 2 cores)
@pytest.mark.parametrize("name", ["bin_matmul_256.json", "bin_batched_matmul_b32_m64_n64_k64.json"])
def test_stored_instance_value_and_grad_peak(name: str) -> None:
    from test_einsum_instances import DATA, load

    if not (DATA / name).is_file():
        pytest.skip(f"{name} not in the data directory")
    subs, ops, _ = load(name)
    inputs, output = subs.split("->")[0].split(","), subs.split("->")[1]
    _, info = tf.einsum_path(subs, *ops)
    limit = max(1, info.largest_intermediate // 8)
    spath, sinfo = tf.einsum_path(subs, *ops, memory_limit=limit)
    sl = sinfo.slicing
    assert sl.largest_intermediate <= limit and set(sl.labels) & set(output)
    size = {c: n for t, o in zip(inputs, ops) for c, n in zip(t, o.shape)}
    sliced = {**size, **dict.fromkeys(sl.labels, 1)}
    _, vg_slice = (8 * p for p in peaks(contraction_tree(inputs, output, spath), len(ops), sliced))
    operands = sum(o.nbytes for o in ops)
    out = 8 * prod(size[c] for c in output)
    argnums = tuple(range(len(ops)))

    def run(**kw):
        ts = [tf.asarray(o) for o in ops]
        return tf.func.value_and_grad(lambda *xs: tf.sum(tf.einsum(subs, *xs, **kw)), argnums)(*ts)

    peak, (v1, g1) = _measure(tf.default_engine(), lambda: run(memory_limit=limit))
    v0, g0 = run()
    assert abs(float(v1) - float(v0)) <= 1e-12 * abs(float(v0))
    for a, b in zip(g1, g0):
        assert np.linalg.norm(np.asarray(a) - np.asarray(b)) <= 1e-12 * np.linalg.norm(b)
    # one slice, the operands, the output and its cotangent, the gradients
    bound = vg_slice + operands + 2 * out + operands + PY_OBJECTS
    print(f"{name}: {sl.nslices} slices, peak {peak} <= {bound}")
    assert peak <= bound

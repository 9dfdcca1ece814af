"""A sliced tensor-network contraction and its gradient, locally and on a Dask cluster.

The network is a random 3-regular graph of ``--nodes`` tensors with bond dimension ``--bond``
(one tensor per node, one index per edge): its scalar value ``Z`` is contracted along the
greedy path under ``memory_limit`` = 1/``--fraction`` of the unsliced largest intermediate, so
the contraction is *sliced* (``tf.einsum_path(..., memory_limit=)`` reports how), and the
gradient of ``log |Z|`` with respect to every tensor comes from one recorded node that
recomputes each slice in the backward pass. The same is then run on a Dask ``LocalCluster``
(two worker processes on the loopback interface; ``--no-dask`` skips it) through
``client.get_executor()``, and both are checked against the unsliced contraction.

Run ``python examples/sliced_contraction.py [--nodes 80 --bond 2 --fraction 16]``; exits
non-zero when a check fails.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import tenferro as tf


def regular_graph(n: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """A random 3-regular simple graph (pairing model with rejection)."""
    while True:
        stubs = rng.permutation(np.repeat(np.arange(n), 3))
        edges = [tuple(sorted((int(a), int(b)))) for a, b in stubs.reshape(-1, 2)]
        if all(a != b for a, b in edges) and len(set(edges)) == len(edges):
            return edges


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=80)
    ap.add_argument("--bond", type=int, default=2)
    ap.add_argument("--fraction", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-dask", action="store_true")
    args = ap.parse_args()

    rng = np.random.default_rng(args.seed)
    edges = regular_graph(args.nodes, rng)
    labels: list[str] = [""] * args.nodes
    for e, (a, b) in enumerate(edges):
        c = chr(0x4E00 + e)
        labels[a] += c
        labels[b] += c
    subs = ",".join(labels) + "->"
    arrays = [rng.uniform(0.5, 1.0, (args.bond,) * 3) for _ in range(args.nodes)]
    ops = [tf.asarray(a) for a in arrays]

    _, info = tf.einsum_path(subs, *ops)
    limit = max(1, info.largest_intermediate // args.fraction)
    _, sinfo = tf.einsum_path(subs, *ops, memory_limit=limit)
    sl = sinfo.slicing
    print(
        f"{args.nodes} tensors, bond {args.bond}: largest intermediate "
        f"{info.largest_intermediate} elements, memory_limit={limit}"
    )
    print(
        f"sliced labels {len(sl.labels)}, {sl.nslices} slices, FLOP overhead "
        f"{sl.overhead:.3f}, largest per slice {sl.largest_intermediate}"
    )

    def log_z(*xs, **kw):
        return tf.log(tf.abs(tf.einsum(subs, *xs, **kw)))

    argnums = tuple(range(len(ops)))
    t0 = time.perf_counter()
    v_ref, g_ref = tf.func.value_and_grad(log_z, argnums=argnums)(*ops)
    t1 = time.perf_counter()
    v_sl, g_sl = tf.func.value_and_grad(
        lambda *xs: log_z(*xs, memory_limit=limit), argnums=argnums
    )(*ops)
    t2 = time.perf_counter()

    def err(gs):
        return max(
            float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(np.asarray(b)))
            for a, b in zip(gs, g_ref)
        )

    ok = abs(float(v_sl) - float(v_ref)) <= 1e-12 * abs(float(v_ref)) and err(g_sl) <= 1e-10
    print(
        f"log|Z| = {float(v_sl):.12f} (unsliced {float(v_ref):.12f}); gradient rel. error "
        f"{err(g_sl):.1e}; {t1 - t0:.2f} s unsliced, {t2 - t1:.2f} s sliced"
    )

    if not args.no_dask:
        from dask.distributed import Client, LocalCluster

        with (
            LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
            ) as cluster,
            Client(cluster) as client,
        ):
            ex = client.get_executor()
            t0 = time.perf_counter()
            v_d, g_d = tf.func.value_and_grad(
                lambda *xs: log_z(*xs, memory_limit=limit, executor=ex), argnums=argnums
            )(*ops)
            t1 = time.perf_counter()
        good = abs(float(v_d) - float(v_ref)) <= 1e-12 * abs(float(v_ref)) and err(g_d) <= 1e-10
        ok = ok and good
        print(
            f"Dask LocalCluster (2 workers): log|Z| = {float(v_d):.12f}; gradient rel. error "
            f"{err(g_d):.1e}; {t1 - t0:.2f} s"
        )
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

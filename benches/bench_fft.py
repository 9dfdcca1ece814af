"""FFTs: tenferro's ``tf.fft`` against ``numpy.fft`` and ``jax.numpy.fft`` (eager and
``jax.jit``).

Run ``python benches/bench_fft.py [--quick]`` in an environment holding tenferro (for a source
checkout: ``PYTHONPATH=python .venv-bench/bin/python benches/bench_fft.py``). JAX is optional
(``n/a`` when missing); everything runs on the CPU (JAX with ``jax_enable_x64``, results waited
for with ``block_until_ready``).

Cases
-----
fft 2^20 c128
    ``fft(x)`` of one complex128 vector of 2^20 points, ms.
rfft2 512x512 f64
    ``rfft2(x)`` of one 512×512 float64 array, ms.

Targets: tenferro ≤ numpy.fft and ≤ JAX. Timing: round-robin rounds (``_harness.round_robin``),
each library's block calibrated to ~50 ms, the **median** round reported. Ratios are
tenferro/peer: below 1 means tenferro is faster. Targets are printed, never asserted
(testing.md).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import _harness as h
import numpy as np
import tenferro as tf

try:
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    import jax.numpy as jnp
except ImportError:  # pragma: no cover - optional peer
    jax = jnp = None

LIBS = ("tenferro", "numpy", "jax", "jax.jit")


def _cases() -> list[tuple[str, dict[str, Callable[[], Any]]]]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1 << 20) + 1j * rng.standard_normal(1 << 20)
    r = rng.standard_normal((512, 512))
    tx, tr = tf.asarray(x), tf.asarray(r)
    out = []
    fns: dict[str, Callable[[], Any]] = {
        "tenferro": lambda: tf.fft.fft(tx),
        "numpy": lambda: np.fft.fft(x),
    }
    gns: dict[str, Callable[[], Any]] = {
        "tenferro": lambda: tf.fft.rfft2(tr),
        "numpy": lambda: np.fft.rfft2(r),
    }
    if jax is not None:
        jx, jr = jnp.asarray(x), jnp.asarray(r)
        jf, jg = jax.jit(jnp.fft.fft), jax.jit(jnp.fft.rfft2)
        fns["jax"] = lambda: jnp.fft.fft(jx).block_until_ready()
        fns["jax.jit"] = lambda: jf(jx).block_until_ready()
        gns["jax"] = lambda: jnp.fft.rfft2(jr).block_until_ready()
        gns["jax.jit"] = lambda: jg(jr).block_until_ready()
    # The same values first (a benchmark of a wrong answer is worthless).
    np.testing.assert_allclose(np.asarray(fns["tenferro"]()), np.fft.fft(x), rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(np.asarray(gns["tenferro"]()), np.fft.rfft2(r), rtol=1e-9, atol=1e-8)
    out.append(("fft 2^20 c128", fns))
    out.append(("rfft2 512x512 f64", gns))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else 9
    print(h.machine_line())
    print(
        f"tenferro {getattr(tf, '__version__', '?')}, numpy {np.__version__}, "
        + (f"jax {jax.__version__} (cpu, x64)" if jax is not None else "jax n/a")
    )
    print(
        f"{'case':<22}"
        + "".join(f"{lib:>10}" for lib in LIBS)
        + "   ratio vs numpy / jax / jax.jit"
    )
    rows: list[h.Row] = []
    for name, fns in _cases():
        calls = h.calibrate(fns, 0.05)[0]
        times = h.round_robin(fns, rounds, calls, stat="median", warmup=2, desc="bench_fft")
        ms = {lib: t * 1e3 for lib, t in times.items()}
        ours = ms["tenferro"]
        ratios = " / ".join(f"{ours / ms[p]:.2f}" if p in ms else "n/a" for p in LIBS[1:])
        print(
            f"{name:<22}"
            + "".join(f"{ms[lib]:>10.3f}" if lib in ms else f"{'n/a':>10}" for lib in LIBS)
            + f"   {ratios}"
        )
        rows += h.rows_from_results(
            name, "ms", ms, LIBS[1:], {p: "<= peer" for p in ("", *LIBS[1:])}
        )
    h.write_results("bench_fft", rows, h.Peers(jax=jax, jnp=jnp))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Test-only hooks (not part of the public API, absent from the public stubs' documentation)."""

from __future__ import annotations

from typing import Any

from . import _tenferro
from ._tenferro import (
    CpuEngine,
    _fail_next_affinity_handshake,
    _cpu_kernels,
    _fail_next_pool_build,
    _set_cpu_kernel,
    _set_linger_us,
)


def panic_on_next_op(engine: CpuEngine) -> None:
    """Make the next kernel executed by ``engine`` panic inside Rust.

    The panic must surface as :class:`tenferro.errors.EngineBrokenError`, mark the engine
    broken (later ops raise the same error) and leave the interpreter running.
    """
    engine._inject_panic_on_next_op()


def fail_next_pool_build() -> None:
    """Make the next worker-pool build fail.

    An explicit ``CpuEngine(threads=n)`` / ``CpuEngine(pin=...)`` then raises
    :class:`tenferro.errors.CpuThreadError` with reason ``POOL``; a default ``CpuEngine()``
    falls back to a serial engine without fixing the process default.
    """
    _fail_next_pool_build()


def set_linger_us(us: int) -> None:
    """Set how long every engine's workers keep polling after a parallel op, in µs (``0`` parks
    them at once). The default is 2000 or ``TENFERRO_LINGER_US``; see ``docs/engines.md``."""
    _set_linger_us(us)


def cpu_kernels() -> tuple[str, list[str]]:
    """``(selected, available)``: the CPU kernel level the engine's own vector kernels use now
    (small and batched-small GEMM) and every level this CPU can run, narrowest first — names
    ``"scalar"``, ``"avx2"``, ``"avx512"`` (chosen at run time from the CPU's features)."""
    return _cpu_kernels()


def set_cpu_kernel(name: str | None) -> None:
    """Force the kernel level ``name`` (one of :func:`cpu_kernels`'s available ones) for every
    later op of the process; ``None`` goes back to the widest available. Raises ``ValueError``
    for a name this CPU cannot run."""
    _set_cpu_kernel(name)


def fail_next_affinity_handshake() -> None:
    """Make worker 0 of the next pinned pool report a mask other than its pin.

    ``CpuEngine(pin=...)`` then raises :class:`tenferro.errors.CpuThreadError` with reason
    ``AFFINITY``.
    """
    _fail_next_affinity_handshake()


def live_counts(rt: Any) -> tuple[int, int, int]:
    """``(recorded nodes alive in the process, live gradient slots of rt, registry entries of
    rt)`` — leak tests check that these return to their baseline."""
    return _tenferro._live_counts(rt)


def ad_rules() -> dict[str, str]:
    """The derivative-rule table: op name → ``linearize``/``zero``/``cut``/``missing``."""
    return dict(_tenferro._ad_rules())


def profile(reset: bool = False) -> dict[str, dict[str, tuple[int, float]]]:
    """The eager-op profile gathered when ``TENFERRO_PROFILE_EAGER_OP_AGG=1`` was set at start:
    ``{op: {"forward"|"recording"|"backward": (calls, microseconds)}}``."""
    out = {}
    for op, calls, micros in _tenferro._profile(reset):
        out[op] = {
            phase: (calls[i], micros[i])
            for i, phase in enumerate(("forward", "recording", "backward"))
        }
    return out

"""Test-only hooks (not part of the public API, absent from the public stubs' documentation)."""

from __future__ import annotations

from ._tenferro import CpuEngine


def panic_on_next_op(engine: CpuEngine) -> None:
    """Make the next kernel executed by ``engine`` panic inside Rust.

    The panic must surface as :class:`tenferro.errors.EngineBrokenError`, mark the engine
    broken (later ops raise the same error) and leave the interpreter running.
    """
    engine._inject_panic_on_next_op()

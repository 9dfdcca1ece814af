"""What a ``tf.jit`` trace in progress learns about the traced function beyond its primitives
(``graph-mode.md``), noted by the code that runs inside the trace and read by
``tenferro._jit`` when the trace ends. A leaf module: ``autodiff`` and ``_custom`` note here
without importing the jit machinery.

* :func:`note_no_grad`: the function entered ``tf.no_grad()`` or detached a traced tensor. The
  program has no stop-gradient step, so a derivative of the compiled function taken from
  outside would differentiate through that value: such calls run eagerly.
* :func:`note_custom_rule`: a function with custom derivative rules (``tf.custom_vjp`` /
  ``tf.custom_jvp``) ran inside the trace, so the compiled graph's derivatives are traced from
  the function under ``tf.func`` rather than derived from primitives that do not know the rules.
"""

from __future__ import annotations

from contextvars import ContextVar

__all__ = ["NO_GRAD_SEEN", "CUSTOM_RULES", "note_no_grad", "note_custom_rule"]

NO_GRAD_SEEN: ContextVar[list[bool] | None] = ContextVar("tenferro_no_grad_seen", default=None)
"""While ``Jitted._trace_leaves`` runs the function: a list that :func:`note_no_grad` appends to."""

CUSTOM_RULES: ContextVar[list[str] | None] = ContextVar("tenferro_jit_custom_rules", default=None)
"""While ``Jitted._trace_leaves`` runs the function: the names of the custom-rule functions it
called."""


def note_no_grad() -> None:
    """A no-grad region (``tf.no_grad()``, ``Tensor.detach``) in the trace in progress, if any."""
    seen = NO_GRAD_SEEN.get()
    if seen is not None:
        seen.append(True)


def note_custom_rule(name: str) -> None:
    """A function with custom derivative rules ran inside the trace in progress (no-op outside
    ``tf.jit``)."""
    used = CUSTOM_RULES.get()
    if used is not None:
        used.append(name)

"""Integrations with libraries of the scientific ecosystem that dispatch on array types.

* :mod:`tenferro.integrations.autoray` — what autoray (used by quimb, cotengra) needs to run
  on tensors (reduced ``svd``, ...); ``import tenferro`` registers it when autoray is already
  imported, without importing autoray itself.
* :mod:`tenferro.integrations.quimb` — a ``TNOptimizer`` handler, ``autodiff_backend="tenferro"``.

Each ``register()`` is idempotent and imports its library only when called.
"""

from __future__ import annotations

from . import autoray, quimb

__all__ = ["autoray", "quimb"]

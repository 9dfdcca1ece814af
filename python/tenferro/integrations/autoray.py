"""autoray support: ``register()`` tells autoray how to call tenferro where the NumPy-named
function alone is not enough.

autoray dispatches on ``type(x).__module__`` (``"tenferro"``) and finds most functions at
tenferro's top level (``tensordot``, ``einsum``, ``reshape``, ``linalg.qr`` ...). What
``register()`` adds:

* ``linalg.svd``: reduced by default (``full_matrices=False``), as autoray does for NumPy, JAX
  and torch — tensor-network code (quimb) expects ``U`` of shape ``(m, k)``.

``import tenferro`` calls :func:`register` when autoray is already imported (quimb imports it);
it never imports autoray. Otherwise call it once yourself (it is idempotent).

Examples
--------
>>> import autoray, tenferro as tf
>>> tf.integrations.autoray.register()
>>> u, s, vh = autoray.do("linalg.svd", tf.ones((4, 2)))
>>> u.shape
(4, 2)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["register"]

_REGISTERED = False


def _reduced_svd(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def svd(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("full_matrices", False)
        return fn(*args, **kwargs)

    return svd


def register() -> None:
    """Register tenferro's translations with autoray (idempotent; imports autoray).

    Raises
    ------
    ImportError
        When autoray is not installed.
    """
    global _REGISTERED
    if _REGISTERED:
        return
    import autoray as ar

    ar.register_function("tenferro", "linalg.svd", wrapper=_reduced_svd)
    _REGISTERED = True

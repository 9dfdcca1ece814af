"""autoray support: ``register()`` tells autoray how to call tenferro where the NumPy-named
function alone is not enough.

autoray dispatches on ``type(x).__module__`` (``"tenferro"``) and finds most functions at
tenferro's top level (``tensordot``, ``einsum``, ``reshape``, ``linalg.qr`` ...). What
``register()`` adds:

* ``linalg.svd``: reduced by default (``full_matrices=False``), as autoray does for NumPy, JAX
  and torch — tensor-network code (quimb) expects ``U`` of shape ``(m, k)``.

``import tenferro`` calls :func:`register` when autoray is already imported (quimb imports it),
and otherwise arranges for it to run as soon as autoray is imported (a finder on
``sys.meta_path`` that removes itself at autoray's import), so the order of ``import tenferro``
and ``import quimb`` does not matter; it never imports autoray. Calling it yourself is harmless
(it is idempotent).

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
import importlib.abc
import importlib.util
import sys
import warnings
from collections.abc import Callable, Sequence
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
    _uninstall()


class _RegisterOnImport(importlib.abc.MetaPathFinder):
    """Runs :func:`register` right after autoray's module has executed (``import tenferro``
    before ``import quimb``). Finds nothing itself: it removes itself from ``sys.meta_path``,
    asks the other finders for autoray's spec and wraps that loader's ``exec_module``."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: Any = None) -> Any:
        if fullname != "autoray":
            return None
        _uninstall()
        spec = importlib.util.find_spec(fullname)
        loader = getattr(spec, "loader", None)
        exec_module = getattr(loader, "exec_module", None)
        if exec_module is None:
            return spec

        def exec_then_register(module: Any) -> None:
            exec_module(module)
            try:
                register()
            except Exception as err:  # never break autoray's import
                warnings.warn(
                    f"tenferro.integrations.autoray.register() failed ({err!r}); call it "
                    "yourself before autoray dispatches on tenferro tensors",
                    RuntimeWarning,
                    stacklevel=2,
                )

        loader.exec_module = exec_then_register  # type: ignore[union-attr]
        return spec


_HOOK = _RegisterOnImport()


def _uninstall() -> None:
    if _HOOK in sys.meta_path:
        sys.meta_path.remove(_HOOK)


def _register_now_or_on_import() -> None:
    """``import tenferro``'s call: register now when autoray is loaded, else at its import."""
    if "autoray" in sys.modules:
        register()
    elif not _REGISTERED and _HOOK not in sys.meta_path:
        sys.meta_path.insert(0, _HOOK)

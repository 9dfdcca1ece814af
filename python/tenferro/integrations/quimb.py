"""quimb support: ``register()`` installs a ``TNOptimizer`` handler, so that
``quimb.tensor.TNOptimizer(..., autodiff_backend="tenferro")`` optimises with tenferro's
automatic differentiation.

The handler evaluates quimb's loss (a function of the list of arrays of the tensor network) on
tenferro tensors through autoray (registered too, :mod:`tenferro.integrations.autoray`):

* ``value(arrays)``: the loss;
* ``value_and_grad(arrays)``: loss and gradient by :func:`tenferro.func.value_and_grad`;
* ``hessp(primals, tangents)``: the Hessian-vector product, forward over reverse
  (:func:`tenferro.func.jvp` of :func:`tenferro.func.grad`), for ``optimize(..., hessp=True)``.

Complex parameters: quimb packs a complex array as its real and imaginary parts and wants the
gradient ``∂L/∂x + i ∂L/∂y`` of the real loss ``L`` — tenferro's own convention
(``autodiff.md``), so gradients are passed on unchanged (the autograd and JAX handlers conjugate
theirs). The Hessian-vector product is the derivative of that gradient along the tangent
``ẋ + i ẏ``, in the same packing.

``jit_fn=True`` (a backend option: ``TNOptimizer(..., autodiff_backend="tenferro",
jit_fn=True)``) traces the loss once with :func:`tenferro.jit`.

Examples
--------
>>> import tenferro as tf
>>> tf.integrations.quimb.register()  # doctest: +SKIP
>>> opt = qtn.TNOptimizer(psi, loss_fn=energy, autodiff_backend="tenferro")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import func as _func
from .._factories import asarray
from .._jit import jit

__all__ = ["register", "TenferroHandler"]


class TenferroHandler:
    """quimb's backend-handler interface (``to_variable``, ``to_constant``, ``setup_fn``,
    ``value``, ``value_and_grad``, ``hessp``) on tenferro.

    Parameters
    ----------
    jit_fn : bool, default False
        Trace the loss with :func:`tenferro.jit` (one program per evaluation).
    device : None or "cpu"
        tenferro tensors live on the CPU.
    """

    def __init__(self, jit_fn: bool = False, device: Any = None) -> None:
        if device not in (None, "cpu"):
            raise ValueError(
                f"TenferroHandler: device={device!r}: tenferro tensors live on the CPU"
            )
        self.jit_fn = jit_fn

    def to_variable(self, x: Any) -> Any:
        return asarray(x)

    def to_constant(self, x: Any) -> Any:
        return asarray(x)

    def setup_fn(self, fn: Callable[[Any], Any]) -> None:
        loss = jit(fn) if self.jit_fn else fn
        self._fn = loss
        self._value_and_grad = _func.value_and_grad(loss)
        self._grad = _func.grad(loss)

    def _tensors(self, arrays: Any) -> Any:
        from quimb.utils import tree_map

        return tree_map(self.to_constant, arrays)

    def value(self, arrays: Any) -> np.ndarray:
        return np.asarray(self._fn(self._tensors(arrays)))

    def value_and_grad(self, arrays: Any) -> tuple[np.ndarray, Any]:
        from quimb.utils import tree_map

        loss, grads = self._value_and_grad(self._tensors(arrays))
        return np.asarray(loss), tree_map(np.asarray, grads)

    def hessp(self, primals: Any, tangents: Any) -> Any:
        from quimb.utils import tree_map

        _, hp = _func.jvp(self._grad, (self._tensors(primals),), (self._tensors(tangents),))
        return tree_map(np.asarray, hp)


_REGISTERED = False


def register() -> None:
    """Install :class:`TenferroHandler` as quimb's ``autodiff_backend="tenferro"`` and register
    autoray's translations (idempotent; imports quimb).

    Raises
    ------
    ImportError
        When quimb is not installed.
    """
    global _REGISTERED
    from . import autoray as _autoray

    _autoray.register()
    if _REGISTERED:
        return
    from quimb.tensor import optimize as _opt

    _opt._BACKEND_HANDLERS["tenferro"] = TenferroHandler
    _REGISTERED = True

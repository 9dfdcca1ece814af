"""Pickling and copying of tensors (``pickle``, ``copy.copy``, ``copy.deepcopy``).

A tensor pickles as its host value (a NumPy array, so NumPy's own reduction carries dtype, shape,
memory order and, under protocol 5, out-of-band buffers) plus whether it is a tracked leaf;
:func:`_rebuild` makes the tensor again in the runtime a factory would use at that point
(innermost active session, else the default runtime). Tensors are immutable, so ``copy.copy``
returns the tensor itself; ``copy.deepcopy`` makes a tensor with its own storage in the same
runtime (a tracked leaf stays a tracked leaf, with its own gradient slot).

A tracked non-leaf (a value computed from tracked leaves) has no independent existence: pickling
or deep-copying it would silently cut it from its leaves, so both raise ``TypeError`` pointing to
``detach()``. A tensor traced by ``tf.jit`` has no values: ``ConcretizationError``. Inside a
``tf.func`` transform, the tensors it differentiates (its inputs are leaves of a private
runtime) are not copied: ``copy.deepcopy`` returns the tensor itself (it is immutable, and a
copy would be a new leaf the transform cannot see: a silent zero derivative), and ``pickle``
raises ``TypeError``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _tenferro
from ._tenferro import Runtime, Tensor


def _host_value(t: Tensor, request: str) -> tuple[np.ndarray, bool]:
    """``t``'s value as a (read-only, zero-copy) NumPy view and whether ``t`` is a tracked leaf.

    Raises ``ConcretizationError`` for a traced tensor and ``TypeError`` for a tracked
    non-leaf."""
    if t._traced:
        raise t._value_error(request)
    tracked = t.requires_grad
    if tracked and not _tenferro._is_leaf(t):
        raise TypeError(
            f"{request}: cannot serialise a tracked non-leaf tensor (shape {t.shape}, dtype {t.dtype}): "
            "its value belongs to the computation that recorded it. Use t.detach() for its value "
            "(or rt.variable(t.detach()) for a new tracked leaf), or serialise the leaves it was computed from"
        )
    return np.asarray(t), tracked


def _reduce_ex(self: Tensor, protocol: int) -> tuple[Any, ...]:
    """``pickle`` support: ``(_rebuild, (ndarray, requires_grad))``.

    The ndarray is a zero-copy view of the tensor, so NumPy's reduction applies: with protocol 5
    a C- or F-contiguous tensor is written as a ``pickle.PickleBuffer`` (out of band when the
    pickler has a ``buffer_callback``: no copy of the data is made); other strides are copied
    into a contiguous buffer in C order.

    Raises
    ------
    TypeError
        For a tracked non-leaf tensor (pickle ``t.detach()`` instead).
    tenferro.errors.ConcretizationError
        For a tensor traced by ``tf.jit``.
    """
    if self.requires_grad and _in_transform():
        raise TypeError(
            f"pickle: cannot serialise a tensor that a tf.func transform differentiates (shape "
            f"{self.shape}, dtype {self.dtype}): the unpickled tensor would be cut from the "
            "transform and its derivative would silently be zero. Pickle t.detach() (no derivative) "
            "or pickle outside the transform"
        )
    arr, tracked = _host_value(self, "pickle")
    return (_rebuild, (arr, tracked))


def _in_transform() -> bool:
    """Whether a ``tf.func`` transform is running in this context."""
    from .func import _ACTIVE

    return _ACTIVE.get() > 0


def _rebuild(arr: np.ndarray, requires_grad: bool) -> Tensor:
    """The unpickled tensor: ``arr`` in the runtime a factory would use now (a tracked leaf when
    ``requires_grad``), in ``arr``'s memory order. An untracked tensor shares ``arr``'s memory
    (the array was made by the unpickler; with out-of-band buffers it is the buffer given to
    ``pickle.loads``, which must not be written afterwards, as with NumPy); a tracked leaf
    gets its own copy."""
    from ._factories import _current_runtime

    if requires_grad:
        arr = np.array(arr, order="K", copy=True)
    return _in_runtime(_current_runtime(), arr, requires_grad)


def _in_runtime(rt: Runtime, arr: np.ndarray, tracked: bool) -> Tensor:
    """A tensor of ``rt`` sharing ``arr`` (so keeping its strides; one copy when ``arr`` is
    unaligned or not in native byte order), a tracked leaf when ``tracked``."""
    from ._factories import _recording_on, asarray

    with _recording_on(rt):
        try:
            t = asarray(arr, copy=False)
        except ValueError:
            t = asarray(np.array(arr, order="K", dtype=arr.dtype.newbyteorder("=")), copy=False)
    return _tenferro._variable(rt, t, share=True) if tracked else t


def _copy(self: Tensor) -> Tensor:
    """``copy.copy(t)``: ``t`` itself (tensors are immutable)."""
    return self


def _deepcopy(self: Tensor, memo: dict[int, Any]) -> Tensor:
    """``copy.deepcopy(t)``: a tensor of the same runtime, value, dtype, shape and memory order
    (C or F; other strides become C) with storage of its own; a tracked leaf gives a new
    tracked leaf (its own gradient slot, no gradient yet). Inside a ``tf.func`` transform, a
    tensor the transform differentiates is returned itself (module docstring).

    Raises
    ------
    TypeError
        For a tracked non-leaf tensor (deep-copy ``t.detach()`` instead).
    tenferro.errors.ConcretizationError
        For a tensor traced by ``tf.jit``.
    """
    if self.requires_grad and _in_transform():
        # Immutable, and differentiated by the running transform: the tensor itself (a copy
        # would be a new leaf outside the transform's graph, with a silent zero derivative).
        memo[id(self)] = self
        return self
    arr, tracked = _host_value(self, "copy.deepcopy")
    out = _in_runtime(self.runtime, np.array(arr, order="K", copy=True), tracked)
    memo[id(self)] = out
    return out

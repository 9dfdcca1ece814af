"""Shared helpers of the NumPy-named functions: operand conversion (weak Python scalars, adoption
of array-likes into a tensor's runtime), NumPy 2 result dtypes and axis tuples."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import prim as _p
from .._factories import _tracked_in, asarray
from .. import _tenferro
from .._tenferro import Tensor


ArrayLike = Any
"""Anything :func:`tenferro.asarray` accepts: a tensor, a NumPy array, nested lists, a scalar."""


_PY_SCALARS = (bool, int, float, complex)


_F64 = np.dtype(np.float64)


_I64 = np.dtype(np.int64)


_BOOL = np.dtype(np.bool_)


_REAL_OF = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): _F64}


def _as_tensor(x: ArrayLike, dtype: Any = None) -> Tensor:
    """``x`` as a tensor; a tensor is returned as it is (converted if ``dtype`` differs)."""
    if isinstance(x, Tensor):
        if x._weak:  # a traced Python number: a function of it is strong, as of the number
            x = x._with_weak(False)
        return x if dtype is None else _to_dtype(x, dtype)
    return asarray(x, dtype=dtype)


def _operand(x: ArrayLike, like: Sequence[Any] = ()) -> Any:
    """A tensor, or a Python scalar kept as it is (weak), for the binary primitives; an array-like
    is adopted into the runtime of the first tensor in ``like`` (see :func:`_adopt`)."""
    if isinstance(x, Tensor) or type(x) in _PY_SCALARS:
        return x
    return _adopt(x, like)


def _operands(x1: ArrayLike, x2: ArrayLike) -> tuple[Any, Any]:
    """Both operands of a binary function; two Python scalars become a tensor and a scalar.
    An array-like next to a tensor is adopted into that tensor's runtime."""
    a, b = _operand(x1, (x1, x2)), _operand(x2, (x1, x2))
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = asarray(a)
    return a, b


def _result_dtype(*operands: Any) -> np.dtype:
    """NumPy 2 result dtype of tensors and weak Python scalars (the lattice of ops.md); a weakly
    typed traced scalar (a float argument under ``tf.jit``) counts as the Python number it
    stands for."""
    return np.result_type(
        *[
            ((_WEAK_STANDIN[o.dtype.kind] if o._weak else o.dtype) if isinstance(o, Tensor) else o)
            for o in operands
        ]
    )


# The Python number a weakly typed traced scalar stands for, by dtype kind.
_WEAK_STANDIN = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}


def _unchanged(x: Tensor) -> Tensor:
    """``x`` as the result of a no-op (NumPy returns the input itself): ``x``, or inside
    ``no_grad`` an untracked tensor of its value when ``x`` is recorded (every result there is
    untracked)."""
    return _tenferro._unchanged(x)


def _to_dtype(x: Tensor, dtype: Any) -> Tensor:
    """``x`` in ``dtype``: ``convert`` when it is up the lattice, else the lossy ``cast``."""
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return _unchanged(x)
    if np.promote_types(x.dtype, dtype) == dtype:
        return _p.convert(x, dtype)
    return _p.cast(x, dtype)


def _adopt(x: ArrayLike, like: Sequence[Any], dtype: Any = None) -> Tensor:
    """``x`` as a tensor: a tensor as it is, an array-like as a constant of the runtime of the
    first tensor in ``like`` (python-api.md: NumPy arrays and scalars handed to an op become
    constants of that op's runtime), else of the current one."""
    if isinstance(x, Tensor):
        return x
    ref = next((t for t in like if isinstance(t, Tensor)), None)
    if ref is None or _tracked_in(x) is not None:
        # Nested tracked tensors are stacked with AD (tf.asarray), never copied to the host.
        return asarray(x, dtype=dtype)
    return ref.runtime.constant(np.asarray(x, dtype=dtype))


def _to_common(operands: Sequence[Any], dtype: np.dtype) -> list[Tensor]:
    """Every operand as a tensor of ``dtype`` (scalars are built directly in that dtype, in the
    runtime of the tensor operands)."""
    return [
        _to_dtype(o, dtype) if isinstance(o, Tensor) else _adopt(o, operands, dtype)
        for o in operands
    ]


def _float_input(x: ArrayLike) -> Tensor:
    """``x`` as a tensor; bool and integer tensors converted to float64 (NumPy's ufunc loops)."""
    x = _as_tensor(x)
    if x.dtype.kind in "biu":
        x = _p.convert(x, _F64)
    return x


def _normalize_axes(
    op: str, axis: Any, ndim: int, *, allow_duplicates: bool = False
) -> tuple[int, ...]:
    """NumPy's ``normalize_axis_tuple``: ``None`` means all axes; negatives count from the end
    (the extension's one axis rule, ``docs/ops.md``).

    Raises ``AxisError`` (a ``ValueError`` and an ``IndexError``, like ``numpy.exceptions.AxisError``)
    for an axis out of range or repeated.
    """
    return _tenferro._normalize_axes(op, axis, ndim, allow_duplicates)


def _shape_tuple(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (tuple, list)):
        return tuple(operator.index(s) for s in shape)
    return (operator.index(shape),)


def _host_indices(op: str, indices: Any) -> np.ndarray:
    """Integer indices as a host NumPy array (index arrays never carry gradients)."""
    idx = np.asarray(indices)
    if idx.dtype.kind not in "iu":
        if (
            idx.size == 0
            and idx.dtype.kind == "f"
            and not isinstance(indices, (np.ndarray, Tensor))
        ):
            return idx.astype(np.int64)  # an empty Python list, as NumPy's intp
        raise TypeError(
            f"{op}: indices must be integers, got dtype {idx.dtype} (cannot cast safely to int64)"
        )
    return idx.astype(np.int64, copy=False)

"""NumPy-named functions with NumPy 2 semantics, lowered onto :mod:`tenferro.prim`.

This module is the *NumPy vocabulary* of tenferro (python-api.md, "Two vocabularies, never
mixed"): ``tf.exp``, ``tf.sum``, ``tf.reshape``, ``tf.floor_divide`` ... follow NumPy 2 (C-order
reshape, ``axis``/``keepdims`` keywords, ``sum`` of ints and bools accumulating in int64, floor
division with the sign of the divisor, true division of ints giving float64), while every one of
them is a short composition of the primitives of :mod:`tenferro.prim`, which keep tenferro's own
semantics (column-major ``reshape``, truncating integer ``div``/``rem``, dtype-keeping reductions).
Because only primitives are called, whatever the primitives record (automatic differentiation,
engine dispatch) applies to these functions unchanged.

Inputs may be tensors, NumPy arrays, nested lists or Python scalars. Non-tensors are converted with
:func:`tenferro.asarray`, except Python scalars given next to a tensor, which stay *weak* as in
NumPy 2 (NEP 50) and JAX: ``tf.add(x_f32, 1.0)`` is float32, ``tf.add(x_i32, 1)`` is int32.

The dtypes are the seven of ops.md (bool, int32, int64, float32, float64, complex64, complex128),
combined by the promotion lattice of ops.md, which agrees with NumPy's ``result_type`` on them.

``TENSOR_METHODS`` and ``TENSOR_PROPERTIES`` list the NumPy-style ``Tensor`` methods
(``x.sum(axis=0)``, ``x // y``, ``x.real``) built from the same functions; the package attaches them
to the ``Tensor`` class at import.
"""

from __future__ import annotations

import builtins as _b
import math
import operator
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import _factories
from . import prim as _p
from ._tenferro import Tensor
from ._types import DotGeneralConfig, GatherConfig, PadConfig
from .errors import AxisError, DTypeError, ShapeError, UnsupportedError

# NB: this module defines ``sum``, ``max``, ``min``, ``abs``, ``all``, ``any``, ``round``-free
# NumPy names that shadow Python builtins; internal code uses ``_b.<builtin>`` explicitly.

__all__ = [
    "abs",
    "absolute",
    "add",
    "all",
    "amax",
    "amin",
    "any",
    "astype",
    "broadcast_to",
    "clip",
    "concatenate",
    "conj",
    "conjugate",
    "cos",
    "diagonal",
    "divide",
    "divmod",
    "equal",
    "exp",
    "expand_dims",
    "expm1",
    "flip",
    "floor_divide",
    "greater",
    "greater_equal",
    "imag",
    "isfinite",
    "isinf",
    "isnan",
    "less",
    "less_equal",
    "log",
    "log1p",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "matmul",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "mod",
    "moveaxis",
    "multiply",
    "negative",
    "not_equal",
    "pad",
    "positive",
    "power",
    "prod",
    "ravel",
    "real",
    "remainder",
    "reshape",
    "sign",
    "sin",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "subtract",
    "sum",
    "swapaxes",
    "take",
    "tan",
    "tanh",
    "tensordot",
    "trace",
    "transpose",
    "tril",
    "triu",
    "true_divide",
    "where",
]

ArrayLike = Any
"""Anything :func:`tenferro.asarray` accepts: a tensor, a NumPy array, nested lists, a scalar."""

_PY_SCALARS = (bool, int, float, complex)
_F64 = np.dtype(np.float64)
_I64 = np.dtype(np.int64)
_BOOL = np.dtype(np.bool_)
_REAL_OF = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): _F64}
# 2**(mantissa bits): every float at or above it is an integer; adding and subtracting it rounds
# smaller magnitudes to the nearest integer (ties to even) -- used by ``_floor``.
_ROUNDING_MAGIC = {np.dtype(np.float32): 2.0**23, _F64: 2.0**52}


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _tf() -> Any:
    """The ``tenferro`` package (imported lazily: it imports this module)."""
    return sys.modules["tenferro"]


def _as_tensor(x: ArrayLike, dtype: Any = None) -> Tensor:
    """``x`` as a tensor; a tensor is returned as it is (converted if ``dtype`` differs)."""
    if isinstance(x, Tensor):
        return x if dtype is None else _to_dtype(x, dtype)
    return _tf().asarray(x, dtype=dtype)


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
        a = _tf().asarray(a)
    return a, b


def _result_dtype(*operands: Any) -> np.dtype:
    """NumPy 2 result dtype of tensors and weak Python scalars (the lattice of ops.md)."""
    return np.result_type(*[o.dtype if isinstance(o, Tensor) else o for o in operands])


def _to_dtype(x: Tensor, dtype: Any) -> Tensor:
    """``x`` in ``dtype``: ``convert`` when it is up the lattice, else the lossy ``cast``."""
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
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
    if ref is None or _factories._tracked_in(x) is not None:
        # Nested tracked tensors are stacked with AD (tf.asarray), never copied to the host.
        return _tf().asarray(x, dtype=dtype)
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
    """NumPy's ``normalize_axis_tuple``: ``None`` means all axes; negatives count from the end.

    Raises ``AxisError`` (a ``ValueError`` and an ``IndexError``, like ``numpy.exceptions.AxisError``)
    for an axis out of range or repeated.
    """
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for ax in axes:
        ax = operator.index(ax)
        if not -ndim <= ax < ndim:
            raise AxisError(f"{op}: axis {ax} is out of bounds for array of dimension {ndim}")
        out.append(ax % ndim)
    if not allow_duplicates and len(set(out)) != len(out):
        raise AxisError(f"{op}: repeated axis in {tuple(axes)} for array of dimension {ndim}")
    return tuple(out)


def _shape_tuple(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (tuple, list)):
        return tuple(operator.index(s) for s in shape)
    return (operator.index(shape),)


def _keepdims(out: Tensor, in_shape: tuple[int, ...], axes: tuple[int, ...]) -> Tensor:
    """Re-insert the reduced ``axes`` with length 1 (only size-1 axes move, so the order of the
    column-major reshape does not matter)."""
    shape = tuple(1 if i in axes else s for i, s in enumerate(in_shape))
    return out if tuple(out.shape) == shape else _p.reshape(out, shape)


def _reduce(op: str, prim_fn: Callable, x: Tensor, axis: Any, keepdims: bool) -> Tensor:
    axes = _normalize_axes(op, axis, x.ndim)
    out = prim_fn(x, axes)
    return _keepdims(out, tuple(x.shape), axes) if keepdims else out


def _floor(x: Tensor) -> Tensor:
    """``floor`` of a real float tensor, from add/sub/compare/select (there is no floor primitive).

    Below ``2**52`` (``2**23`` in float32) ``(|x| + 2**52) - 2**52`` is ``|x|`` rounded to an
    integer; stepping down where that exceeds ``x`` gives the floor. Larger magnitudes, infinities
    and NaN are already their own floor.
    """
    magic = _ROUNDING_MAGIC[x.dtype]
    ax = _p.abs(x)
    r = _p.sub(_p.add(ax, magic), magic)
    r = _p.select(_p.compare(x, 0, "LT"), _p.neg(r), r)
    r = _p.select(_p.compare(r, x, "GT"), _p.sub(r, 1), r)
    return _p.select(_p.compare(ax, magic, "LT"), r, x)


def _floor_operands(name: str, x1: ArrayLike, x2: ArrayLike) -> tuple[Tensor, Tensor]:
    """Operands of floor division/remainder as two tensors of one real dtype (bool -> int64)."""
    a, b = _operands(x1, x2)
    dtype = _result_dtype(a, b)
    if dtype.kind == "c":
        raise DTypeError(f"{name}: not supported for complex dtype {dtype} (as in NumPy)")
    if dtype.kind == "b":
        dtype = _I64  # NumPy gives int8, which tenferro does not have
    a, b = _to_common((a, b), dtype)
    return a, b


def _int_floor_divmod(op: str, a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """Python/NumPy floor quotient and remainder of integers from the truncating primitives.

    ``q = div(a, b)`` and ``r = rem(a, b)`` truncate toward zero; where ``r != 0`` and ``r`` and
    ``b`` have opposite signs, the floor quotient is ``q - 1`` and the remainder ``r + b``.
    Division by zero raises ``ZeroDivisionError`` (from the primitives).
    """
    try:
        q = _p.div(a, b)
        r = _p.rem(a, b)
    except ZeroDivisionError as err:
        raise ZeroDivisionError(f"{op}: integer division or modulo by zero") from err
    adjust = _p.compare(r, 0, "NE") & (_p.compare(r, 0, "LT") ^ _p.compare(b, 0, "LT"))
    return _p.select(adjust, _p.sub(q, 1), q), _p.select(adjust, _p.add(r, b), r)


def _float_floor_divmod(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """NumPy's ``npy_divmod`` (numpy/_core/src/npymath/npy_math_internal.h.src) on tensors.

    ``mod = fmod(a, b)`` (the float ``rem`` primitive); ``div = (a - mod) / b``; where ``mod != 0``
    has the opposite sign of ``b``: ``mod += b``, ``div -= 1``; a zero ``mod`` takes the sign of
    ``b``; the quotient is ``floor(div)`` snapped up when ``div - floor(div) > 0.5``, a zero
    quotient takes the sign of ``a / b``; for ``b == 0`` the quotient is ``a / b`` and the
    remainder ``fmod(a, 0)`` (NaN).
    """
    mod = _p.rem(a, b)
    div = _p.div(_p.sub(a, mod), b)
    mod_nonzero = _p.compare(mod, 0, "NE")
    adjust = mod_nonzero & (_p.compare(b, 0, "LT") ^ _p.compare(mod, 0, "LT"))
    mod = _p.select(adjust, _p.add(mod, b), mod)
    div = _p.select(adjust, _p.sub(div, 1), div)
    mod = _p.select(mod_nonzero, mod, _p.mul(_p.sign(b), 0.0))  # copysign(0, b)
    floordiv = _floor(div)
    floordiv = _p.select(
        _p.compare(_p.sub(div, floordiv), 0.5, "GT"), _p.add(floordiv, 1), floordiv
    )
    quotient = _p.div(a, b)
    floordiv = _p.select(_p.compare(div, 0, "EQ"), _p.mul(quotient, 0.0), floordiv)
    floordiv = _p.select(_p.compare(b, 0, "EQ"), quotient, floordiv)
    return floordiv, mod


# ---------------------------------------------------------------------------------------------
# unary element-wise functions with a transcendental primitive (one row each)
# ---------------------------------------------------------------------------------------------

_UNARY_DOC = """{summary}

Lowers to {lowering}. Boolean and integer inputs are converted to float64 first, as NumPy's
ufunc loops do; complex inputs follow NumPy's branch cuts.{note}

Parameters
----------
x : Tensor or array_like
    Input of any shape (rank 0 included); non-tensors are converted with
    :func:`tenferro.asarray`.

Returns
-------
Tensor
    Same shape as ``x``; dtype ``x.dtype`` for float and complex inputs, float64 for boolean
    and integer ones.

Raises
------
DTypeError
    If ``x`` has a dtype tenferro does not support (from :func:`tenferro.asarray`).

See Also
--------
numpy.{name}

Examples
--------
>>> import tenferro as tf
>>> x = tf.asarray({example_input})
>>> {example_call}
{example_output}
"""


def _make_unary(
    name: str,
    lower: Callable[[Tensor], Tensor],
    lowering: str,
    summary: str,
    example_input: str,
    example_output: str,
    note: str = "",
    example_call: str | None = None,
) -> Callable[[ArrayLike], Tensor]:
    def fn(x: ArrayLike, /) -> Tensor:
        return lower(_float_input(x))

    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = __name__
    fn.__doc__ = _UNARY_DOC.format(
        name=name,
        summary=summary,
        lowering=lowering,
        note=f"\n\n{note}" if note else "",
        example_input=example_input,
        example_call=example_call or f"tf.{name}(x).numpy().round(6).tolist()",
        example_output=example_output,
    )
    return fn


exp = _make_unary(
    "exp",
    _p.exp,
    "the primitive ``prim.exp``",
    "Exponential ``e**x``, element-wise.",
    "[0.0, 1.0]",
    "[1.0, 2.718282]",
)
expm1 = _make_unary(
    "expm1",
    _p.expm1,
    "the primitive ``prim.expm1``",
    "``exp(x) - 1``, element-wise, accurate for small ``|x|``.",
    "[0.0, 1e-10]",
    "[0.0, 1.00000000005]",
    note="The primitive is accurate to 2 ulp in float64 (ops.md), including tiny arguments.",
    example_call="(tf.expm1(x).numpy() / 1e-10).round(12).tolist()",
)
log = _make_unary(
    "log",
    _p.log,
    "the primitive ``prim.log``",
    "Natural logarithm, element-wise (NaN below 0, ``-inf`` at 0 for real inputs).",
    "[1.0, 100.0]",
    "[0.0, 4.60517]",
)
log1p = _make_unary(
    "log1p",
    _p.log1p,
    "the primitive ``prim.log1p``",
    "``log(1 + x)``, element-wise, accurate for small ``|x|``.",
    "[0.0, 1e-10]",
    "[0.0, 0.99999999995]",
    note="The primitive is accurate to 2 ulp in float64 (ops.md), including tiny arguments.",
    example_call="(tf.log1p(x).numpy() / 1e-10).round(12).tolist()",
)
sin = _make_unary(
    "sin",
    _p.sin,
    "the primitive ``prim.sin``",
    "Sine (argument in radians), element-wise.",
    "[0.0, 1.0]",
    "[0.0, 0.841471]",
)
cos = _make_unary(
    "cos",
    _p.cos,
    "the primitive ``prim.cos``",
    "Cosine (argument in radians), element-wise.",
    "[0.0, 1.0]",
    "[1.0, 0.540302]",
)
tan = _make_unary(
    "tan",
    lambda x: _p.div(_p.sin(x), _p.cos(x)),
    "``prim.div(prim.sin(x), prim.cos(x))`` (there is no tangent primitive)",
    "Tangent (argument in radians), element-wise.",
    "[0.0, 1.0]",
    "[0.0, 1.557408]",
    note="The quotient adds up to about one ulp to the errors of ``sin`` and ``cos``; close to the "
    "poles ``pi/2 + k*pi`` the relative error grows like that of ``cos``.",
)
tanh = _make_unary(
    "tanh",
    _p.tanh,
    "the primitive ``prim.tanh``",
    "Hyperbolic tangent, element-wise.",
    "[0.0, 1.0]",
    "[0.0, 0.761594]",
)
sqrt = _make_unary(
    "sqrt",
    _p.sqrt,
    "the primitive ``prim.sqrt``",
    "Non-negative square root, element-wise (NaN below 0 for real inputs; principal branch for "
    "complex).",
    "[1.0, 4.0, 9.0]",
    "[1.0, 2.0, 3.0]",
    example_call="tf.sqrt(x).tolist()",
)


# ---------------------------------------------------------------------------------------------
# other unary element-wise functions
# ---------------------------------------------------------------------------------------------


def abs(x: ArrayLike, /) -> Tensor:
    """Absolute value, element-wise; the modulus ``|z|`` for complex inputs.

    Lowers to the primitive ``prim.abs``. Booleans are returned unchanged, as in NumPy.

    Parameters
    ----------
    x : Tensor or array_like
        Input of any shape.

    Returns
    -------
    Tensor
        Same shape as ``x``; dtype ``x.dtype``, except the real counterpart (float32/float64) for
        complex inputs. ``abs`` of the most negative integer wraps to itself, as in NumPy.

    Raises
    ------
    DTypeError
        If ``x`` has a dtype tenferro does not support.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.abs(tf.asarray([-1.5, 2.0])).tolist()
    [1.5, 2.0]
    >>> tf.abs(tf.asarray([3 + 4j])).tolist()
    [5.0]
    """
    x = _as_tensor(x)
    if x.dtype == _BOOL:
        return x
    return _p.abs(x)


absolute = abs


def negative(x: ArrayLike, /) -> Tensor:
    """Numerical negative ``-x``, element-wise.

    Lowers to the primitive ``prim.neg``.

    Parameters
    ----------
    x : Tensor or array_like
        Input of any shape, not boolean.

    Returns
    -------
    Tensor
        Same shape and dtype as ``x``.

    Raises
    ------
    DTypeError
        For a boolean input (NumPy raises ``TypeError`` too; use ``~x``).

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.negative(tf.asarray([1, -2])).tolist()
    [-1, 2]
    """
    x = _as_tensor(x)
    if x.dtype == _BOOL:
        raise DTypeError("negative: not supported for bool tensors; use ~x (logical not)")
    return _p.neg(x)


def positive(x: ArrayLike, /) -> Tensor:
    """Numerical positive ``+x``: the input itself (tensors are immutable, so no copy is needed).

    Parameters
    ----------
    x : Tensor or array_like
        Input of any shape, not boolean.

    Returns
    -------
    Tensor
        ``x`` (converted with :func:`tenferro.asarray` if it was not a tensor).

    Raises
    ------
    DTypeError
        For a boolean input, as NumPy.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.positive(tf.asarray([1.0, -2.0])).tolist()
    [1.0, -2.0]
    """
    x = _as_tensor(x)
    if x.dtype == _BOOL:
        raise DTypeError("positive: not supported for bool tensors")
    return x


def conj(x: ArrayLike, /) -> Tensor:
    """Complex conjugate, element-wise; real inputs are returned with their values unchanged.

    Lowers to the primitive ``prim.conj``.

    Parameters
    ----------
    x : Tensor or array_like
        Input of any shape.

    Returns
    -------
    Tensor
        Same shape and dtype as ``x``.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.conj(tf.asarray([1 + 2j, 3 - 1j])).tolist()
    [(1-2j), (3+1j)]
    """
    x = _as_tensor(x)
    if x.dtype.kind != "c":
        return x
    return _p.conj(x)


conjugate = conj


def real(val: ArrayLike, /) -> Tensor:
    """Real part, element-wise.

    For complex inputs this is the primitive ``prim.cast`` to the real dtype (which drops the
    imaginary part, ops.md); real inputs are returned unchanged, as in NumPy.

    Parameters
    ----------
    val : Tensor or array_like
        Input of any shape.

    Returns
    -------
    Tensor
        Same shape as ``val``; float32 for complex64, float64 for complex128, else ``val.dtype``.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.real(tf.asarray([1 + 2j, 3 - 1j])).tolist()
    [1.0, 3.0]
    """
    x = _as_tensor(val)
    real_dtype = _REAL_OF.get(x.dtype)
    if real_dtype is None:
        return x
    return _p.cast(x, real_dtype)


def imag(val: ArrayLike, /) -> Tensor:
    """Imaginary part, element-wise.

    For complex inputs this is ``prim.cast(prim.mul(val, -1j), real dtype)``: the real part of
    ``-i*z = Im z - i Re z``. For real inputs the result is zeros of ``val``'s dtype, as in NumPy.

    Where ``Re z`` is infinite or NaN the product ``-i*z`` has a NaN real part, so the result is
    NaN there (NumPy returns ``Im z``); finite inputs are exact.

    Parameters
    ----------
    val : Tensor or array_like
        Input of any shape.

    Returns
    -------
    Tensor
        Same shape as ``val``; float32 for complex64, float64 for complex128, else ``val.dtype``.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.imag(tf.asarray([1 + 2j, 3 - 1j])).tolist()
    [2.0, -1.0]
    >>> tf.imag(tf.asarray([1.0, 2.0])).tolist()
    [0.0, 0.0]
    """
    x = _as_tensor(val)
    real_dtype = _REAL_OF.get(x.dtype)
    if real_dtype is None:
        return _tf().zeros(tuple(x.shape), dtype=x.dtype)
    return _p.cast(_p.mul(x, -1j), real_dtype)


def sign(x: ArrayLike, /) -> Tensor:
    """Sign, element-wise: -1, 0 or 1 for real inputs (NaN stays NaN); ``z/|z|`` for complex
    (0 at 0), as NumPy 2.

    Lowers to the primitive ``prim.sign``.

    Parameters
    ----------
    x : Tensor or array_like
        Input of any shape.

    Returns
    -------
    Tensor
        Same shape and dtype as ``x``.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.sign(tf.asarray([-2.5, 0.0, 3.0])).tolist()
    [-1.0, 0.0, 1.0]
    """
    return _p.sign(_as_tensor(x))


def square(x: ArrayLike, /) -> Tensor:
    """``x * x``, element-wise (lowers to ``prim.mul(x, x)``).

    Parameters
    ----------
    x : Tensor or array_like
        Input of any shape.

    Returns
    -------
    Tensor
        Same shape and dtype as ``x``; integers wrap on overflow, as in NumPy.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.square(tf.asarray([-3, 4])).tolist()
    [9, 16]
    """
    x = _as_tensor(x)
    return _p.mul(x, x)


def isnan(x: ArrayLike, /) -> Tensor:
    """Test for NaN, element-wise (lowers to ``prim.compare(x, x, "NE")``).

    A complex number is NaN when either part is. Integer and boolean inputs give all ``False``.

    Parameters
    ----------
    x : Tensor or array_like
        Input of any shape.

    Returns
    -------
    Tensor
        bool, same shape as ``x``.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.isnan(tf.asarray([1.0, float("nan")])).tolist()
    [False, True]
    """
    x = _as_tensor(x)
    return _p.compare(x, x, "NE")


def isinf(x: ArrayLike, /) -> Tensor:
    """Test for positive or negative infinity, element-wise (``|x| == inf``).

    A complex number is infinite when either part is (``|z|`` is then infinite, C99 ``hypot``).
    Integer and boolean inputs give all ``False``.

    Parameters
    ----------
    x : Tensor or array_like
        Input of any shape.

    Returns
    -------
    Tensor
        bool, same shape as ``x``.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.isinf(tf.asarray([1.0, -float("inf"), float("nan")])).tolist()
    [False, True, False]
    """
    x = _as_tensor(x)
    if x.dtype.kind not in "fc":
        return _p.compare(x, x, "NE")
    return _p.compare(_p.abs(x), math.inf, "EQ")


def isfinite(x: ArrayLike, /) -> Tensor:
    """Test for finiteness (neither infinite nor NaN), element-wise (``|x| < inf``).

    Integer and boolean inputs give all ``True``.

    Parameters
    ----------
    x : Tensor or array_like
        Input of any shape.

    Returns
    -------
    Tensor
        bool, same shape as ``x``.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.isfinite(tf.asarray([1.0, float("inf"), float("nan")])).tolist()
    [True, False, False]
    """
    x = _as_tensor(x)
    if x.dtype.kind not in "fc":
        return _p.compare(x, x, "EQ")
    return _p.compare(_p.abs(x), math.inf, "LT")


# ---------------------------------------------------------------------------------------------
# binary element-wise functions
# ---------------------------------------------------------------------------------------------

_BINARY_DOC = """{summary}

Lowers to {lowering}. Shapes broadcast as in NumPy; dtypes combine by the promotion lattice of
ops.md, Python scalars being weak (NumPy 2, NEP 50): ``tf.{name}(x_f32, 2.0)`` is float32.{note}

Parameters
----------
x1, x2 : Tensor or array_like
    Operands; non-tensors other than Python scalars are converted with
    :func:`tenferro.asarray`.

Returns
-------
Tensor
    Shape: the broadcast of both shapes. dtype: {dtype}.

Raises
------
ShapeError
    If the shapes do not broadcast.
DTypeError
    {dtype_errors}

See Also
--------
numpy.{name}

Examples
--------
>>> import tenferro as tf
>>> x = tf.asarray({example_x1})
>>> tf.{name}(x, {example_x2}).tolist()
{example_output}
"""


def _make_binary(
    name: str,
    lower: Callable[[Any, Any], Tensor],
    lowering: str,
    summary: str,
    example_x1: str,
    example_x2: str,
    example_output: str,
    *,
    dtype: str = "the promoted dtype of the operands",
    dtype_errors: str = "If a dtype is not supported by the primitive.",
    note: str = "",
) -> Callable[[ArrayLike, ArrayLike], Tensor]:
    def fn(x1: ArrayLike, x2: ArrayLike, /) -> Tensor:
        a, b = _operands(x1, x2)
        return lower(a, b)

    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = __name__
    fn.__doc__ = _BINARY_DOC.format(
        name=name,
        summary=summary,
        lowering=lowering,
        note=f"\n\n{note}" if note else "",
        dtype=dtype,
        dtype_errors=dtype_errors,
        example_x1=example_x1,
        example_x2=example_x2,
        example_output=example_output,
    )
    return fn


add = _make_binary(
    "add",
    _p.add,
    "the primitive ``prim.add``",
    "Sum ``x1 + x2``, element-wise.",
    "[1.0, 2.0]",
    "10.0",
    "[11.0, 12.0]",
)


def _sub(a: Any, b: Any) -> Tensor:
    if _result_dtype(a, b) == _BOOL:
        raise DTypeError("subtract: not supported for bool operands; use ^ (logical xor)")
    return _p.sub(a, b)


subtract = _make_binary(
    "subtract",
    _sub,
    "the primitive ``prim.sub``",
    "Difference ``x1 - x2``, element-wise.",
    "[1.0, 2.0]",
    "0.5",
    "[0.5, 1.5]",
    dtype_errors="If both operands are boolean (as NumPy), or a dtype is not supported.",
)
multiply = _make_binary(
    "multiply",
    _p.mul,
    "the primitive ``prim.mul``",
    "Product ``x1 * x2``, element-wise.",
    "[1.0, 2.0]",
    "3.0",
    "[3.0, 6.0]",
)


def _true_divide(a: Any, b: Any) -> Tensor:
    if _result_dtype(a, b).kind in "biu":
        a = _p.convert(a, _F64) if isinstance(a, Tensor) else float(a)
        b = _p.convert(b, _F64) if isinstance(b, Tensor) else float(b)
    return _p.div(a, b)


divide = _make_binary(
    "divide",
    _true_divide,
    "the primitive ``prim.div`` after converting boolean and integer operands to float64",
    "True division ``x1 / x2``, element-wise (division by zero gives ``inf``/NaN, as IEEE 754).",
    "[1, 2]",
    "4",
    "[0.25, 0.5]",
    dtype="the promoted dtype, float64 when both operands are boolean or integer",
)
true_divide = divide


def maximum_or_minimum_doc(which: str) -> str:
    return (
        f"NaN propagates (as NumPy's ``{which}``); complex operands raise ``DTypeError`` (NumPy "
        "orders them lexicographically)."
    )


maximum = _make_binary(
    "maximum",
    _p.maximum,
    "the primitive ``prim.maximum``",
    "Element-wise maximum.",
    "[1.0, 5.0]",
    "2.0",
    "[2.0, 5.0]",
    dtype_errors="For complex operands.",
    note=maximum_or_minimum_doc("maximum"),
)
minimum = _make_binary(
    "minimum",
    _p.minimum,
    "the primitive ``prim.minimum``",
    "Element-wise minimum.",
    "[1.0, 5.0]",
    "2.0",
    "[1.0, 2.0]",
    dtype_errors="For complex operands.",
    note=maximum_or_minimum_doc("minimum"),
)
del maximum_or_minimum_doc

power = _make_binary(
    "power",
    _p.pow,
    "the primitive ``prim.pow``",
    "``x1 ** x2``, element-wise.",
    "[1.0, 2.0, 3.0]",
    "2",
    "[1.0, 4.0, 9.0]",
    note="An integer base with a negative integer exponent raises ``ValueError`` (NumPy too); "
    "``0**0`` is 1.",
)

_COMPARISONS = (
    ("equal", "EQ", "x1 == x2", "[1.0, 2.0]", "2.0", "[False, True]"),
    ("not_equal", "NE", "x1 != x2", "[1.0, 2.0]", "2.0", "[True, False]"),
    ("less", "LT", "x1 < x2", "[1.0, 2.0]", "2.0", "[True, False]"),
    ("less_equal", "LE", "x1 <= x2", "[1.0, 2.0]", "2.0", "[True, True]"),
    ("greater", "GT", "x1 > x2", "[1.0, 2.0]", "1.0", "[False, True]"),
    ("greater_equal", "GE", "x1 >= x2", "[1.0, 2.0]", "2.0", "[False, True]"),
)


def _make_comparison(
    name: str, direction: str, expr: str, ex1: str, ex2: str, out: str
) -> Callable[[ArrayLike, ArrayLike], Tensor]:
    ordering = direction not in ("EQ", "NE")
    return _make_binary(
        name,
        lambda a, b: _p.compare(a, b, direction),
        f'the primitive ``prim.compare(x1, x2, "{direction}")``',
        f"Truth value of ``{expr}``, element-wise (IEEE 754: any comparison with NaN is False, "
        "except ``!=``).",
        ex1,
        ex2,
        out,
        dtype="bool",
        dtype_errors="For complex operands." if ordering else "If a dtype is not supported.",
    )


equal, not_equal, less, less_equal, greater, greater_equal = (
    _make_comparison(*row) for row in _COMPARISONS
)


def floor_divide(x1: ArrayLike, x2: ArrayLike, /) -> Tensor:
    """Largest integer not greater than ``x1 / x2`` (Python's ``//``), element-wise, as NumPy.

    Integers: built from the truncating primitives ``div`` and ``rem``: where the remainder is
    nonzero and its sign differs from the divisor's, the truncated quotient is reduced by one.
    ``INT_MIN // -1`` wraps as in NumPy. Floats: NumPy's ``npy_divmod``
    (numpy/_core/src/npymath/npy_math_internal.h.src): ``(x1 - fmod(x1, x2)) / x2`` corrected for
    the sign convention and snapped to an integer; division by zero gives ``x1 / x2``
    (``+-inf`` or NaN).

    Parameters
    ----------
    x1, x2 : Tensor or array_like
        Dividend and divisor, real; Python scalars are weak.

    Returns
    -------
    Tensor
        Shape: the broadcast of both shapes. dtype: the promoted dtype; int64 when both operands
        are boolean (NumPy gives int8, which tenferro does not have).

    Raises
    ------
    ZeroDivisionError
        For an integer division by zero (NumPy returns 0 with a warning; tenferro raises, see
        ops.md).
    DTypeError
        For complex operands (NumPy raises ``TypeError`` too).
    ShapeError
        If the shapes do not broadcast.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.floor_divide(tf.asarray([7, -7, 7, -7]), tf.asarray([2, 2, -2, -2])).tolist()
    [3, -4, -4, 3]
    >>> tf.floor_divide(tf.asarray([7.5, -7.5]), 2.0).tolist()
    [3.0, -4.0]
    """
    a, b = _floor_operands("floor_divide", x1, x2)
    if a.dtype.kind == "f":
        return _float_floor_divmod(a, b)[0]
    return _int_floor_divmod("floor_divide", a, b)[0]


def remainder(x1: ArrayLike, x2: ArrayLike, /) -> Tensor:
    """Remainder of floor division (Python's ``%``), element-wise: the sign of the divisor.

    ``remainder(x1, x2) == x1 - floor_divide(x1, x2) * x2``. Integers: the truncating primitive
    ``rem`` plus ``x2`` where the remainder is nonzero and its sign differs from the divisor's.
    Floats: NumPy's ``npy_divmod`` (numpy/_core/src/npymath/npy_math_internal.h.src) from
    ``fmod``; a zero remainder takes the sign of ``x2``; a zero divisor gives NaN.

    Parameters
    ----------
    x1, x2 : Tensor or array_like
        Dividend and divisor, real; Python scalars are weak.

    Returns
    -------
    Tensor
        Shape: the broadcast of both shapes. dtype: the promoted dtype; int64 when both operands
        are boolean.

    Raises
    ------
    ZeroDivisionError
        For an integer division by zero.
    DTypeError
        For complex operands (NumPy raises ``TypeError`` too).
    ShapeError
        If the shapes do not broadcast.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.remainder(tf.asarray([7, -7, 7, -7]), tf.asarray([2, 2, -2, -2])).tolist()
    [1, 1, -1, -1]
    >>> tf.remainder(tf.asarray([7.5, -7.5]), 2.0).tolist()
    [1.5, 0.5]
    """
    a, b = _floor_operands("remainder", x1, x2)
    if a.dtype.kind == "f":
        return _float_floor_divmod(a, b)[1]
    return _int_floor_divmod("remainder", a, b)[1]


mod = remainder


def divmod(x1: ArrayLike, x2: ArrayLike, /) -> tuple[Tensor, Tensor]:
    """``(floor_divide(x1, x2), remainder(x1, x2))`` computed together, as ``numpy.divmod``.

    Parameters
    ----------
    x1, x2 : Tensor or array_like
        Dividend and divisor, real; Python scalars are weak.

    Returns
    -------
    tuple of Tensor
        Quotient and remainder, each as :func:`floor_divide` and :func:`remainder` return them.

    Raises
    ------
    ZeroDivisionError
        For an integer division by zero.
    DTypeError
        For complex operands.
    ShapeError
        If the shapes do not broadcast.

    Examples
    --------
    >>> import tenferro as tf
    >>> q, r = tf.divmod(tf.asarray([7, -7]), 3)
    >>> q.tolist(), r.tolist()
    ([2, -3], [1, 2])
    """
    a, b = _floor_operands("divmod", x1, x2)
    if a.dtype.kind == "f":
        return _float_floor_divmod(a, b)
    return _int_floor_divmod("divmod", a, b)


def _truth(x: Any) -> Tensor:
    """``x`` as a bool tensor (``x != 0`` unless already boolean)."""
    x = _as_tensor(x)
    return x if x.dtype == _BOOL else _p.compare(x, 0, "NE")


def logical_not(x: ArrayLike, /) -> Tensor:
    """Truth value of ``not x``, element-wise (nonzero is true), as ``numpy.logical_not``.

    Lowers to ``prim.compare(x, 0, "EQ")`` (or ``~x`` on booleans).

    Parameters
    ----------
    x : Tensor or array_like
        Input of any shape and dtype.

    Returns
    -------
    Tensor
        bool, same shape as ``x``.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.logical_not(tf.asarray([0.0, 2.0])).tolist()
    [True, False]
    """
    return ~_truth(x)


def _make_logical(name: str, op: Callable[[Tensor, Tensor], Tensor], symbol: str, out: str):
    def fn(x1: ArrayLike, x2: ArrayLike, /) -> Tensor:
        return op(_truth(x1), _truth(x2))

    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = __name__
    fn.__doc__ = f"""Truth value of ``x1 {symbol} x2``, element-wise (nonzero is true), as ``numpy.{name}``.

    Both operands are made boolean (``x != 0``) and combined with the tensor operator
    ``{symbol}``; shapes broadcast as in NumPy.

    Parameters
    ----------
    x1, x2 : Tensor or array_like
        Operands of any dtype.

    Returns
    -------
    Tensor
        bool, the broadcast shape.

    Raises
    ------
    ShapeError
        If the shapes do not broadcast.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.{name}(tf.asarray([True, True, False]), tf.asarray([1, 0, 0])).tolist()
    {out}
    """
    return fn


logical_and = _make_logical("logical_and", operator.and_, "&", "[True, False, False]")
logical_or = _make_logical("logical_or", operator.or_, "|", "[True, True, False]")
logical_xor = _make_logical("logical_xor", operator.xor, "^", "[False, True, False]")


# ---------------------------------------------------------------------------------------------
# selection
# ---------------------------------------------------------------------------------------------


def where(condition: ArrayLike, x: ArrayLike = None, y: ArrayLike = None, /) -> Tensor:
    """Elements of ``x`` where ``condition`` holds, else of ``y`` (NumPy's three-argument form).

    Lowers to the primitive ``prim.select(condition, x, y)``; a non-boolean ``condition`` is
    first compared with zero (``condition != 0``), and ``x``/``y`` are converted to their common
    dtype (Python scalars weak).

    Parameters
    ----------
    condition : Tensor or array_like
        Where true, take ``x``; any dtype (nonzero is true).
    x, y : Tensor, array_like or scalar
        Values to choose from.

    Returns
    -------
    Tensor
        Shape: the broadcast of the three shapes; dtype: the promoted dtype of ``x`` and ``y``
        (two Python scalars give NumPy's default dtypes: int64, float64, complex128).

    Raises
    ------
    UnsupportedError
        For the one-argument form ``where(condition)`` (NumPy's ``nonzero``), not built yet.
    ValueError
        If only one of ``x`` and ``y`` is given.
    ShapeError
        If the shapes do not broadcast.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([-1.0, 2.0, -3.0])
    >>> tf.where(x > 0, x, 0.0).tolist()
    [0.0, 2.0, 0.0]
    """
    if x is None and y is None:
        raise UnsupportedError("where(condition) (nonzero) is not implemented; pass x and y")
    if x is None or y is None:
        raise ValueError("where: either both or neither of x and y should be given")
    cond = _adopt(condition, (condition, x, y))
    if cond.dtype != _BOOL:
        cond = _p.compare(cond, 0, "NE")
    a, b = _operand(x, (cond, x, y)), _operand(y, (cond, x, y))
    on_true, on_false = _to_common((a, b), _result_dtype(a, b))
    return _p.select(cond, on_true, on_false)


_NO_VALUE = object()


def clip(
    a: ArrayLike,
    a_min: ArrayLike = _NO_VALUE,
    a_max: ArrayLike = _NO_VALUE,
    /,
    *,
    min: ArrayLike = _NO_VALUE,
    max: ArrayLike = _NO_VALUE,
) -> Tensor:
    """Limit the values of ``a`` to ``[a_min, a_max]``: ``minimum(maximum(a, a_min), a_max)``.

    With both bounds this lowers to the primitive ``prim.clamp(a, a_min, a_max)``; with one, to
    ``prim.maximum`` or ``prim.minimum``; with none, ``a`` is returned. As in NumPy, NaN
    propagates, ``a_min > a_max`` gives ``a_max``, and ``min=``/``max=`` are keyword aliases
    (NumPy >= 2.1) of ``a_min``/``a_max``. The bounds may be scalars or tensors that broadcast.

    Parameters
    ----------
    a : Tensor or array_like
        Real input.
    a_min, a_max : Tensor, array_like, scalar or None
        Lower and upper bounds; ``None`` means unbounded on that side.

    Returns
    -------
    Tensor
        Shape: the broadcast of ``a`` and the bounds; dtype: their promoted dtype (Python scalars
        weak: clipping float32 with ``0.5`` stays float32).

    Raises
    ------
    ValueError
        If a bound is given both positionally and by keyword.
    DTypeError
        For complex inputs (NumPy orders them lexicographically; tenferro refuses).
    ShapeError
        If the shapes do not broadcast.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.clip(tf.asarray([-2.0, 0.5, 3.0]), 0.0, 1.0).tolist()
    [0.0, 0.5, 1.0]
    >>> tf.clip(tf.asarray([-2, 5]), None, 1).tolist()
    [-2, 1]
    """
    if a_min is not _NO_VALUE and min is not _NO_VALUE:
        raise ValueError("clip: pass a_min or min, not both")
    if a_max is not _NO_VALUE and max is not _NO_VALUE:
        raise ValueError("clip: pass a_max or max, not both")
    lo = a_min if a_min is not _NO_VALUE else min
    hi = a_max if a_max is not _NO_VALUE else max
    lo = None if lo is _NO_VALUE else lo
    hi = None if hi is _NO_VALUE else hi
    x = _as_tensor(a)
    bounds = [_operand(v, (x,)) for v in (lo, hi) if v is not None]
    if not bounds:
        return x
    dtype = _result_dtype(x, *bounds)
    x, *bounds = _to_common((x, *bounds), dtype)
    if lo is not None and hi is not None:
        return _p.clamp(x, bounds[0], bounds[1])
    if lo is not None:
        return _p.maximum(x, bounds[0])
    return _p.minimum(x, bounds[0])


# ---------------------------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------------------------


def _sum_like(
    op: str, prim_fn: Callable, a: ArrayLike, axis: Any, dtype: Any, keepdims: bool
) -> Tensor:
    x = _as_tensor(a)
    if dtype is not None:
        x = _to_dtype(x, dtype)
    elif x.dtype.kind == "b" or x.dtype == np.int32:
        x = _p.convert(x, _I64)  # NumPy 2 accumulates small ints and bools in int64
    return _reduce(op, prim_fn, x, axis, keepdims)


def sum(a: ArrayLike, axis: Any = None, dtype: Any = None, *, keepdims: bool = False) -> Tensor:
    """Sum of the elements over the given axes, as ``numpy.sum``.

    Lowers to the primitive ``prim.reduce_sum`` (pairwise summation for floats, NumPy accuracy).
    Booleans and int32 are converted to int64 first, as NumPy 2 accumulates them in the default
    integer; other dtypes are kept.

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape.
    axis : None, int or tuple of int
        Axes to reduce (negative counts from the end); ``None`` reduces all, ``()`` none.
    dtype : dtype, optional
        Accumulator and result dtype; ``a`` is converted to it first (unsafe cast if needed).
    keepdims : bool
        Keep the reduced axes with length 1, so the result broadcasts against ``a``.

    Returns
    -------
    Tensor
        ``a.shape`` without the reduced axes (or with them as 1); dtype as described above. A
        full reduction is a 0-d tensor (``.item()`` gives the Python number).

    Raises
    ------
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1, 2, 3], [4, 5, 6]], dtype="int32")
    >>> tf.sum(x).item(), tf.sum(x).dtype
    (21, dtype('int64'))
    >>> tf.sum(x, axis=0).tolist()
    [5, 7, 9]
    >>> tf.sum(x, axis=1, keepdims=True).tolist()
    [[6], [15]]
    """
    return _sum_like("sum", _p.reduce_sum, a, axis, dtype, keepdims)


def prod(a: ArrayLike, axis: Any = None, dtype: Any = None, *, keepdims: bool = False) -> Tensor:
    """Product of the elements over the given axes, as ``numpy.prod``.

    Lowers to the primitive ``prim.reduce_prod``; booleans and int32 are converted to int64
    first (NumPy 2); integer products wrap on overflow. The product over no elements is 1.

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape.
    axis : None, int or tuple of int
        Axes to reduce; ``None`` reduces all.
    dtype : dtype, optional
        Accumulator and result dtype.
    keepdims : bool
        Keep the reduced axes with length 1.

    Returns
    -------
    Tensor
        ``a.shape`` without (or with length-1) reduced axes.

    Raises
    ------
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1.0, 2.0], [3.0, 4.0]])
    >>> tf.prod(x).item()
    24.0
    >>> tf.prod(x, axis=1).tolist()
    [2.0, 12.0]
    """
    return _sum_like("prod", _p.reduce_prod, a, axis, dtype, keepdims)


def max(a: ArrayLike, axis: Any = None, *, keepdims: bool = False) -> Tensor:
    """Maximum over the given axes, as ``numpy.max`` (NaN propagates).

    Lowers to the primitive ``prim.reduce_max``; the dtype is kept.

    Parameters
    ----------
    a : Tensor or array_like
        Real input of any shape.
    axis : None, int or tuple of int
        Axes to reduce; ``None`` reduces all.
    keepdims : bool
        Keep the reduced axes with length 1.

    Returns
    -------
    Tensor
        ``a.shape`` without (or with length-1) reduced axes; dtype ``a.dtype``.

    Raises
    ------
    ValueError
        If a reduced axis has length 0 (no identity, as NumPy).
    AxisError
        If an axis is out of range or repeated.
    DTypeError
        For complex inputs.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1.0, 5.0], [3.0, 2.0]])
    >>> tf.max(x).item(), tf.max(x, axis=0).tolist()
    (5.0, [3.0, 5.0])
    """
    return _reduce("max", _p.reduce_max, _as_tensor(a), axis, keepdims)


def min(a: ArrayLike, axis: Any = None, *, keepdims: bool = False) -> Tensor:
    """Minimum over the given axes, as ``numpy.min`` (NaN propagates).

    Lowers to the primitive ``prim.reduce_min``; the dtype is kept.

    Parameters
    ----------
    a : Tensor or array_like
        Real input of any shape.
    axis : None, int or tuple of int
        Axes to reduce; ``None`` reduces all.
    keepdims : bool
        Keep the reduced axes with length 1.

    Returns
    -------
    Tensor
        ``a.shape`` without (or with length-1) reduced axes; dtype ``a.dtype``.

    Raises
    ------
    ValueError
        If a reduced axis has length 0.
    AxisError
        If an axis is out of range or repeated.
    DTypeError
        For complex inputs.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1.0, 5.0], [3.0, 2.0]])
    >>> tf.min(x).item(), tf.min(x, axis=1, keepdims=True).tolist()
    (1.0, [[1.0], [2.0]])
    """
    return _reduce("min", _p.reduce_min, _as_tensor(a), axis, keepdims)


amax = max
amin = min


def mean(a: ArrayLike, axis: Any = None, dtype: Any = None, *, keepdims: bool = False) -> Tensor:
    """Arithmetic mean over the given axes, as ``numpy.mean``: ``sum(a, axis) / count``.

    Booleans and integers are averaged in float64; float and complex dtypes are kept. The mean
    over no elements is NaN (``0/0``; NumPy also warns).

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape.
    axis : None, int or tuple of int
        Axes to reduce; ``None`` reduces all.
    dtype : dtype, optional
        Accumulator and result dtype. An integer dtype truncates the mean toward zero, as NumPy.
    keepdims : bool
        Keep the reduced axes with length 1.

    Returns
    -------
    Tensor
        ``a.shape`` without (or with length-1) reduced axes.

    Raises
    ------
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1, 2], [3, 4]])
    >>> tf.mean(x).item()
    2.5
    >>> tf.mean(x, axis=0).tolist()
    [2.0, 3.0]
    """
    x = _as_tensor(a)
    out_dtype = None if dtype is None else np.dtype(dtype)
    if out_dtype is not None:
        x = _to_dtype(x, out_dtype)  # NumPy casts the elements to the accumulator dtype
    if x.dtype.kind in "biu":
        x = _p.convert(x, _F64)
    axes = _normalize_axes("mean", axis, x.ndim)
    count = math.prod(x.shape[i] for i in axes)
    out = _p.div(_reduce("mean", _p.reduce_sum, x, axes, keepdims), count)
    if out_dtype is not None and out_dtype.kind in "biu":
        out = _p.cast(out, out_dtype)  # truncates toward zero, as NumPy's unsafe cast back
    return out


def _count_nonzero_compared(
    op: str, x: Tensor, axis: Any, keepdims: bool, direction: str, value: int
) -> Tensor:
    nonzero = x if x.dtype == _BOOL else _p.compare(x, 0, "NE")
    zeros_or_ones = nonzero if direction == "GT" else ~nonzero
    count = _reduce(op, _p.reduce_sum, _p.convert(zeros_or_ones, _I64), axis, keepdims)
    return _p.compare(count, value, direction)


def any(a: ArrayLike, axis: Any = None, *, keepdims: bool = False) -> Tensor:
    """Whether any element over the given axes is nonzero (true), as ``numpy.any``.

    Lowers to a count of nonzero elements (``prim.compare``, ``prim.reduce_sum`` in int64)
    compared with 0. NaN counts as true. ``any`` over no elements is ``False``.

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape and dtype.
    axis : None, int or tuple of int
        Axes to reduce; ``None`` reduces all.
    keepdims : bool
        Keep the reduced axes with length 1.

    Returns
    -------
    Tensor
        bool, ``a.shape`` without (or with length-1) reduced axes.

    Raises
    ------
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[0, 1], [0, 0]])
    >>> tf.any(x).item(), tf.any(x, axis=1).tolist()
    (True, [True, False])
    """
    return _count_nonzero_compared("any", _as_tensor(a), axis, keepdims, "GT", 0)


def all(a: ArrayLike, axis: Any = None, *, keepdims: bool = False) -> Tensor:
    """Whether all elements over the given axes are nonzero (true), as ``numpy.all``.

    Lowers to a count of zero elements compared with 0. ``all`` over no elements is ``True``.

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape and dtype.
    axis : None, int or tuple of int
        Axes to reduce; ``None`` reduces all.
    keepdims : bool
        Keep the reduced axes with length 1.

    Returns
    -------
    Tensor
        bool, ``a.shape`` without (or with length-1) reduced axes.

    Raises
    ------
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1, 1], [0, 1]])
    >>> tf.all(x).item(), tf.all(x, axis=1).tolist()
    (False, [True, False])
    """
    return _count_nonzero_compared("all", _as_tensor(a), axis, keepdims, "EQ", 0)


# ---------------------------------------------------------------------------------------------
# layout (metadata-only where the primitives allow)
# ---------------------------------------------------------------------------------------------


def transpose(a: ArrayLike, axes: Sequence[int] | None = None) -> Tensor:
    """Permute the axes, as ``numpy.transpose``: ``out.shape[i] == a.shape[axes[i]]``.

    Lowers to the primitive ``prim.transpose`` (a view: no data moves).

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape.
    axes : sequence of int, optional
        A permutation of ``range(a.ndim)`` (negative entries count from the end); ``None``
        reverses the axes.

    Returns
    -------
    Tensor
        Same dtype; shape permuted.

    Raises
    ------
    ValueError
        If ``len(axes) != a.ndim``.
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1, 2, 3], [4, 5, 6]])
    >>> tf.transpose(x).tolist()
    [[1, 4], [2, 5], [3, 6]]
    >>> tf.transpose(tf.zeros((2, 3, 4)), (1, -1, 0)).shape
    (3, 4, 2)
    """
    x = _as_tensor(a)
    ndim = x.ndim
    if axes is None:
        perm = tuple(range(ndim - 1, -1, -1))
    else:
        axes = tuple(axes)
        if len(axes) != ndim:
            raise ValueError(f"transpose: axes {axes} don't match array of dimension {ndim}")
        perm = _normalize_axes("transpose", axes, ndim)
    if perm == tuple(range(ndim)):
        return x
    return _p.transpose(x, perm)


def _resolve_shape(shape: Any, size: int) -> tuple[int, ...]:
    """``shape`` with a single ``-1`` replaced, validated against ``size`` (NumPy's rules)."""
    shape = _shape_tuple(shape)
    unknown = [i for i, s in enumerate(shape) if s < 0]
    if len(unknown) > 1:
        raise ValueError(f"reshape: can only specify one unknown dimension, got {shape}")
    if unknown and shape[unknown[0]] != -1:
        raise ValueError(f"reshape: negative dimensions not allowed, got {shape}")
    if math.prod(s for s in shape if s > 0) > sys.maxsize:
        # As NumPy: too big even with a zero extent; quoted as given (not as the reversed shape
        # the row-major lowering hands to the column-major primitive).
        raise ShapeError(f"reshape: cannot reshape tensor of size {size} into shape {shape}: more than {sys.maxsize} elements")
    known = math.prod(s for s in shape if s != -1)
    if unknown:
        if known == 0 or size % known:
            raise ShapeError(f"reshape: cannot reshape tensor of size {size} into shape {shape}")
        i = unknown[0]
        return shape[:i] + (size // known,) + shape[i + 1 :]
    if known != size:
        raise ShapeError(f"reshape: cannot reshape tensor of size {size} into shape {shape}")
    return shape


def reshape(a: ArrayLike, /, shape: Any, order: str = "C", *, copy: bool | None = None) -> Tensor:
    """Give a new shape to the data, as ``numpy.reshape`` (row-major ``order="C"`` by default).

    The primitive ``prim.reshape`` is column-major (the core's layout, ops.md), so
    ``order="F"`` maps to it directly, while ``order="C"`` is lowered as *reverse the axes,
    column-major reshape to the reversed shape, reverse the axes back*: reversing the axes turns
    row-major element order into column-major order and back. Transposes are views; the reshape
    is a view when the strides allow it. When only length-1 axes are inserted or removed, the
    order does not matter and a single ``prim.reshape`` is used.

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape.
    shape : int or tuple of int
        New shape with the same number of elements; one entry may be -1 (inferred).
    order : {"C", "F"}
        Read and write the elements in row-major ("C", NumPy's default) or column-major ("F")
        order.
    copy : bool or None
        Accepted for NumPy compatibility and ignored: tensors are immutable, so whether the
        result shares memory is not observable.

    Returns
    -------
    Tensor
        Same dtype and elements, shape ``shape``.

    Raises
    ------
    ShapeError
        If the sizes do not match (a ``ValueError``, as NumPy raises).
    ValueError
        For more than one -1, another negative entry, or an unknown ``order``.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([1, 2, 3, 4, 5, 6])
    >>> tf.reshape(x, (2, 3)).tolist()
    [[1, 2, 3], [4, 5, 6]]
    >>> tf.reshape(x, (2, -1), order="F").tolist()
    [[1, 3, 5], [2, 4, 6]]
    """
    del copy
    x = _as_tensor(a)
    if order not in ("C", "F"):
        raise ValueError(f"reshape: order must be 'C' or 'F', got {order!r}")
    old = tuple(x.shape)
    new = _resolve_shape(shape, x.size)
    if new == old:
        return x
    if order == "F" or [s for s in old if s != 1] == [s for s in new if s != 1]:
        return _p.reshape(x, new)
    xt = x if x.ndim <= 1 else _p.transpose(x, tuple(range(x.ndim - 1, -1, -1)))
    y = _p.reshape(xt, new[::-1])
    return y if len(new) <= 1 else _p.transpose(y, tuple(range(len(new) - 1, -1, -1)))


def ravel(a: ArrayLike, order: str = "C") -> Tensor:
    """The elements as a 1-d tensor, as ``numpy.ravel`` (``reshape(a, -1, order)``).

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape.
    order : {"C", "F"}
        Row-major (default) or column-major reading order.

    Returns
    -------
    Tensor
        Shape ``(a.size,)``, same dtype.

    Raises
    ------
    ValueError
        For an unknown ``order``.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1, 2], [3, 4]])
    >>> tf.ravel(x).tolist(), tf.ravel(x, order="F").tolist()
    ([1, 2, 3, 4], [1, 3, 2, 4])
    """
    return reshape(a, (-1,), order=order)


def broadcast_to(array: ArrayLike, shape: Any) -> Tensor:
    """Broadcast to a new shape, as ``numpy.broadcast_to`` (a view: no data moves).

    Lowers to the primitive ``prim.broadcast_in_dim`` with the input axes aligned to the
    trailing output axes (NumPy's rule: each input length must be 1 or equal the output's).

    Parameters
    ----------
    array : Tensor or array_like
        Input of any shape.
    shape : int or tuple of int
        Target shape, at least ``array.ndim`` long.

    Returns
    -------
    Tensor
        Shape ``shape``, same dtype.

    Raises
    ------
    ShapeError
        If ``array`` cannot be broadcast to ``shape`` (a ``ValueError``, as NumPy raises).
    ValueError
        For a negative entry in ``shape``.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.broadcast_to(tf.asarray([1, 2, 3]), (2, 3)).tolist()
    [[1, 2, 3], [1, 2, 3]]
    """
    x = _as_tensor(array)
    shape = _shape_tuple(shape)
    if _b.any(s < 0 for s in shape):
        raise ValueError(f"broadcast_to: all elements of the shape must be non-negative: {shape}")
    offset = len(shape) - x.ndim
    if offset < 0 or _b.any(s != 1 and s != shape[offset + i] for i, s in enumerate(x.shape)):
        raise ShapeError(
            f"broadcast_to: cannot broadcast a tensor of shape {tuple(x.shape)} to shape {shape}"
        )
    if shape == tuple(x.shape):
        return x
    return _p.broadcast_in_dim(x, shape, tuple(range(offset, len(shape))))


def flip(m: ArrayLike, axis: Any = None) -> Tensor:
    """Reverse the order of the elements along the given axes, as ``numpy.flip`` (a view).

    Lowers to the primitive ``prim.reverse``.

    Parameters
    ----------
    m : Tensor or array_like
        Input of any shape.
    axis : None, int or tuple of int
        Axes to reverse; ``None`` reverses all.

    Returns
    -------
    Tensor
        Same shape and dtype.

    Raises
    ------
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1, 2], [3, 4]])
    >>> tf.flip(x).tolist(), tf.flip(x, axis=1).tolist()
    ([[4, 3], [2, 1]], [[2, 1], [4, 3]])
    """
    x = _as_tensor(m)
    axes = _normalize_axes("flip", axis, x.ndim)
    return _p.reverse(x, axes) if axes else x


def moveaxis(a: ArrayLike, source: Any, destination: Any) -> Tensor:
    """Move axes to new positions, the others keeping their order, as ``numpy.moveaxis``.

    Lowers to the primitive ``prim.transpose`` (a view).

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape.
    source, destination : int or sequence of int
        Original and new positions of the moved axes (same count; negatives allowed).

    Returns
    -------
    Tensor
        Same dtype; axes permuted.

    Raises
    ------
    ValueError
        If ``source`` and ``destination`` differ in length.
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.moveaxis(tf.zeros((3, 4, 5)), 0, -1).shape
    (4, 5, 3)
    """
    x = _as_tensor(a)
    src = _normalize_axes("moveaxis", source, x.ndim)
    dst = _normalize_axes("moveaxis", destination, x.ndim)
    if len(src) != len(dst):
        raise ValueError(
            "moveaxis: `source` and `destination` arguments must have the same number of elements"
        )
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(x, order)


def swapaxes(a: ArrayLike, axis1: int, axis2: int) -> Tensor:
    """Interchange two axes, as ``numpy.swapaxes`` (a view via ``prim.transpose``).

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape.
    axis1, axis2 : int
        The axes to swap (negatives allowed; equal axes give ``a``).

    Returns
    -------
    Tensor
        Same dtype; the two axes swapped.

    Raises
    ------
    AxisError
        If an axis is out of range.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.swapaxes(tf.zeros((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    x = _as_tensor(a)
    i, j = _normalize_axes("swapaxes", (axis1, axis2), x.ndim, allow_duplicates=True)
    perm = list(range(x.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(x, perm)


def squeeze(a: ArrayLike, axis: Any = None) -> Tensor:
    """Remove axes of length 1, as ``numpy.squeeze`` (a view via ``prim.reshape``).

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape.
    axis : None, int or tuple of int
        The length-1 axes to remove; ``None`` removes all of them.

    Returns
    -------
    Tensor
        Same dtype and elements; shape without the removed axes.

    Raises
    ------
    ShapeError
        If a selected axis does not have length 1 (a ``ValueError``, as NumPy raises).
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.zeros((1, 3, 1))
    >>> tf.squeeze(x).shape, tf.squeeze(x, axis=0).shape
    ((3,), (3, 1))
    """
    x = _as_tensor(a)
    shape = tuple(x.shape)
    if axis is None:
        axes = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        axes = _normalize_axes("squeeze", axis, x.ndim)
        for i in axes:
            if shape[i] != 1:
                raise ShapeError(
                    f"squeeze: cannot select axis {i} to squeeze out: it has length {shape[i]}, "
                    "not 1"
                )
    if not axes:
        return x
    return _p.reshape(x, tuple(s for i, s in enumerate(shape) if i not in axes))


def expand_dims(a: ArrayLike, axis: Any) -> Tensor:
    """Insert axes of length 1 at the given positions of the result, as ``numpy.expand_dims``.

    A view via ``prim.reshape``.

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape.
    axis : int or tuple of int
        Positions in the *output* (of rank ``a.ndim + len(axis)``); negatives allowed.

    Returns
    -------
    Tensor
        Same dtype and elements; rank ``a.ndim + len(axis)``.

    Raises
    ------
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([1.0, 2.0])
    >>> tf.expand_dims(x, 0).shape, tf.expand_dims(x, (0, -1)).shape
    ((1, 2), (1, 2, 1))
    """
    x = _as_tensor(a)
    n_new = len(axis) if isinstance(axis, (tuple, list)) else 1
    out_ndim = x.ndim + n_new
    axes = _normalize_axes("expand_dims", axis, out_ndim)
    dims = iter(x.shape)
    return _p.reshape(x, tuple(1 if i in axes else next(dims) for i in range(out_ndim)))


# ---------------------------------------------------------------------------------------------
# dtype
# ---------------------------------------------------------------------------------------------


def astype(x: ArrayLike, dtype: Any, /, *, copy: bool = True) -> Tensor:
    """``x`` in ``dtype`` with NumPy's unsafe casting, as ``numpy.astype`` (array API).

    Lowers to the checked primitive ``prim.convert`` when ``dtype`` is up the promotion lattice
    (exact), else to the lossy ``prim.cast`` (float to int truncates toward zero, complex to real
    drops the imaginary part, nonzero to ``True``; ops.md).

    Parameters
    ----------
    x : Tensor or array_like
        Input of any shape.
    dtype : dtype-like
        One of tenferro's seven dtypes (NumPy dtype objects or names).
    copy : bool
        Accepted for NumPy compatibility and ignored (tensors are immutable); the same dtype
        returns ``x`` itself.

    Returns
    -------
    Tensor
        Same shape, dtype ``dtype``.

    Raises
    ------
    DTypeError
        If ``dtype`` is not supported.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.astype(tf.asarray([1.7, -1.7]), "int64").tolist()
    [1, -1]
    """
    del copy
    return _to_dtype(_as_tensor(x), dtype)


# ---------------------------------------------------------------------------------------------
# contraction, joining, padding and matrix structure
# ---------------------------------------------------------------------------------------------


def _host_indices(op: str, indices: Any) -> np.ndarray:
    """Integer indices as a host NumPy array (index arrays never carry gradients)."""
    idx = np.asarray(indices)
    if idx.dtype.kind not in "iu":
        if idx.size == 0 and idx.dtype.kind == "f" and not isinstance(indices, (np.ndarray, Tensor)):
            return idx.astype(np.int64)  # an empty Python list, as NumPy's intp
        raise TypeError(
            f"{op}: indices must be integers, got dtype {idx.dtype} (cannot cast safely to int64)"
        )
    return idx.astype(np.int64, copy=False)


def _contract(a: Tensor, b: Tensor, cfg: Any) -> Tensor:
    """``dot_general`` in NumPy's result dtype; two bool operands give the bool ``any(a & b)``
    (the primitive does not admit bool)."""
    if a.dtype == _BOOL and b.dtype == _BOOL:
        out = _p.dot_general(_p.convert(a, _I64), _p.convert(b, _I64), cfg)
        return _p.compare(out, 0, "NE")
    return _p.dot_general(a, b, cfg)


def matmul(x1: ArrayLike, x2: ArrayLike, /) -> Tensor:
    """Matrix product with NumPy's broadcasting rules, as ``numpy.matmul`` (the ``@`` operator).

    Lowers to the primitive ``prim.dot_general``. NumPy semantics: the last two axes hold the
    matrices and the leading axes are batch axes broadcast against each other; a 1-d first
    operand is a row vector and a 1-d second operand a column vector, whose added axis is removed
    from the result. Batch axes present (with length > 1) in both operands become batch axes of
    ``dot_general``; those of only one operand become its free axes (no copy of the broadcast
    operand); the result is transposed from ``dot_general``'s ``[lhs free, rhs free, batch]`` into
    NumPy's batch-leading order (a view).

    Parameters
    ----------
    x1, x2 : Tensor or array_like
        Operands of rank >= 1; shapes ``(..., n, k)`` and ``(..., k, m)``.

    Returns
    -------
    Tensor
        Shape ``broadcast(x1.shape[:-2], x2.shape[:-2]) + (n, m)`` (without ``n`` / ``m`` for 1-d
        operands); dtype ``numpy.result_type(x1, x2)`` (two bool operands give bool).

    Raises
    ------
    ShapeError
        If an operand is 0-d, the inner lengths differ, or the batch axes do not broadcast (all
        ``ValueError``, as NumPy raises).

    See Also
    --------
    numpy.matmul, tenferro.prim.dot_general, tensordot

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> a = tf.asarray([[1, 2], [3, 4]])
    >>> (a @ a).tolist()
    [[7, 10], [15, 22]]
    >>> tf.matmul(a, tf.asarray([1, 1])).tolist()
    [3, 7]
    >>> tf.matmul(np.ones((5, 1, 2, 3)), np.ones((4, 3, 6))).shape
    (5, 4, 2, 6)
    """
    a, b = _adopt(x1, (x1, x2)), _adopt(x2, (x1, x2))
    for i, t in enumerate((a, b)):
        if t.ndim == 0:
            raise ShapeError(
                f"matmul: Input operand {i} does not have enough dimensions (has 0, gufunc core "
                "with signature (n?,k),(k,m?)->(n?,m?) requires 1)"
            )
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    k_a = a.shape[-1]
    k_b = b.shape[0] if b_vec else b.shape[-2]
    if k_a != k_b:
        raise ShapeError(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
            f"signature (n?,k),(k,m?)->(n?,m?) (size {k_b} is different from {k_a}); shapes "
            f"{tuple(a.shape)} and {tuple(b.shape)}"
        )
    if a.ndim == 2 and b.ndim == 2 and a.dtype != _BOOL:
        return _p.matmul(a, b)
    a_batch = tuple(a.shape[:-2])
    b_batch = tuple(b.shape[:-2]) if not b_vec else ()
    try:
        batch = np.broadcast_shapes(a_batch, b_batch)
    except ValueError:
        raise ShapeError(
            f"matmul: batch axes of shapes {tuple(a.shape)} and {tuple(b.shape)} do not broadcast "
            f"({a_batch} vs {b_batch})"
        ) from None
    nb = len(batch)
    a_off, b_off = nb - len(a_batch), nb - len(b_batch)

    def size(shape: tuple[int, ...], off: int, p: int) -> int:
        return shape[p - off] if p >= off else 1

    # Batch positions: 'common' (dot_general batch), 'a' / 'b' (free axes of one operand), or
    # length 1 in both (restored by the final reshape).
    kinds = {}
    for p in range(nb):
        sa, sb = size(a_batch, a_off, p), size(b_batch, b_off, p)
        if sa != 1 and sb != 1:
            kinds[p] = "common"
        elif sa != 1:
            kinds[p] = "a"
        elif sb != 1:
            kinds[p] = "b"
    a_kept = [p for p in range(nb) if kinds.get(p) in ("common", "a")]
    b_kept = [p for p in range(nb) if kinds.get(p) in ("common", "b")]
    a_core = tuple(a.shape[-2:]) if not a_vec else (k_a,)
    b_core = tuple(b.shape[-2:]) if not b_vec else (k_b,)
    a_shape = tuple(batch[p] for p in a_kept) + a_core
    b_shape = tuple(batch[p] for p in b_kept) + b_core
    a_s = a if tuple(a.shape) == a_shape else _p.reshape(a, a_shape)  # drops length-1 axes
    b_s = b if tuple(b.shape) == b_shape else _p.reshape(b, b_shape)
    common = [p for p in range(nb) if kinds.get(p) == "common"]
    cfg = DotGeneralConfig(
        lhs_contracting_dims=(len(a_shape) - 1,),
        rhs_contracting_dims=(len(b_kept) if b_vec else len(b_shape) - 2,),
        lhs_batch_dims=tuple(a_kept.index(p) for p in common),
        rhs_batch_dims=tuple(b_kept.index(p) for p in common),
    )
    out = _contract(a_s, b_s, cfg)
    # dot_general's axes: [a free (a-only batch, n), b free (b-only batch, m), common batch].
    labels: list[Any] = [p for p in a_kept if kinds[p] == "a"] + ([] if a_vec else ["n"])
    labels += [p for p in b_kept if kinds[p] == "b"] + ([] if b_vec else ["m"]) + common
    want = [p for p in range(nb) if p in kinds] + ([] if a_vec else ["n"]) + ([] if b_vec else ["m"])
    perm = tuple(labels.index(label) for label in want)
    if perm != tuple(range(len(perm))):
        out = _p.transpose(out, perm)
    final = batch + (() if a_vec else (a.shape[-2],)) + (() if b_vec else (b.shape[-1],))
    return out if tuple(out.shape) == final else _p.reshape(out, final)


def tensordot(a: ArrayLike, b: ArrayLike, axes: Any = 2) -> Tensor:
    """Sum products over the given axes, as ``numpy.tensordot``.

    Lowers to one ``prim.dot_general`` without batch axes, whose output order (free axes of
    ``a``, then free axes of ``b``) is NumPy's.

    Parameters
    ----------
    a, b : Tensor or array_like
        Operands.
    axes : int or (sequence of int, sequence of int)
        An int ``N`` sums the last ``N`` axes of ``a`` against the first ``N`` of ``b``; a pair
        lists the summed axes of each operand (same count, negatives allowed).

    Returns
    -------
    Tensor
        Shape: the free axes of ``a`` then those of ``b``; dtype ``numpy.result_type(a, b)``.

    Raises
    ------
    ShapeError
        If the summed lengths differ or the counts differ (``ValueError``).
    AxisError
        If an axis is out of range or repeated.
    ValueError
        If ``axes`` is a negative int.

    See Also
    --------
    numpy.tensordot, tenferro.prim.dot_general

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> a, b = np.arange(24.0).reshape(2, 3, 4), np.arange(12.0).reshape(4, 3)
    >>> tf.tensordot(a, b, axes=([1, 2], [1, 0])).tolist() == np.tensordot(a, b, ([1, 2], [1, 0])).tolist()
    True
    >>> tf.tensordot(np.ones(3), np.ones(4), axes=0).shape
    (3, 4)
    """
    x, y = _adopt(a, (a, b)), _adopt(b, (a, b))
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        n = operator.index(axes)
        if n < 0:
            raise ValueError(f"tensordot: axes must be a non-negative integer, got {n}")
        if n > x.ndim or n > y.ndim:
            raise ShapeError(
                f"tensordot: cannot sum over {n} axes of operands of shapes {tuple(x.shape)} and "
                f"{tuple(y.shape)}"
            )
        ax_a, ax_b = tuple(range(x.ndim - n, x.ndim)), tuple(range(n))
    else:
        try:
            spec_a, spec_b = axes
        except (TypeError, ValueError):
            raise ValueError(f"tensordot: axes must be an int or a pair of sequences, got {axes!r}") from None
        ax_a = _normalize_axes("tensordot", spec_a, x.ndim)
        ax_b = _normalize_axes("tensordot", spec_b, y.ndim)
        if len(ax_a) != len(ax_b):
            raise ShapeError(f"tensordot: shape-mismatch for sum: axes {ax_a} and {ax_b} differ in count")
    for i, j in zip(ax_a, ax_b):
        if x.shape[i] != y.shape[j]:
            raise ShapeError(
                f"tensordot: shape-mismatch for sum: axis {i} of {tuple(x.shape)} has length "
                f"{x.shape[i]} but axis {j} of {tuple(y.shape)} has length {y.shape[j]}"
            )
    return _contract(x, y, DotGeneralConfig(lhs_contracting_dims=ax_a, rhs_contracting_dims=ax_b))


def _empty_like_result(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A zero-size result of ``shape`` derived from ``x`` (a view of none of its elements)."""
    if x.ndim == 0:
        x = _p.reshape(x, (1,))
    empty = x[(slice(0, 0),)]
    return _p.reshape(empty, shape)


def _take_gather(x: Tensor, idx: np.ndarray, axis: int) -> Tensor:
    """``numpy.take(x, idx, axis)`` for in-range non-negative ``idx`` via ``prim.gather``."""
    out_shape = tuple(x.shape[:axis]) + idx.shape + tuple(x.shape[axis + 1 :])
    if math.prod(out_shape) == 0:
        return _empty_like_result(x, out_shape)
    rank = len(out_shape)
    cfg = GatherConfig(
        offset_dims=tuple(range(axis)) + tuple(range(axis + idx.ndim, rank)),
        collapsed_slice_dims=(axis,),
        start_index_map=(axis,),
        index_vector_dim=idx.ndim,
        slice_sizes=tuple(1 if d == axis else n for d, n in enumerate(x.shape)),
    )
    return _p.gather(x, idx[..., None], cfg)


def take(a: ArrayLike, indices: ArrayLike, axis: int | None = None, mode: str = "raise") -> Tensor:
    """Elements at the given indices along an axis, as ``numpy.take``.

    Lowers to the primitive ``prim.gather``; the indices are read on the host (they never carry
    gradients). ``axis=None`` takes from the C-order flattened input.

    Parameters
    ----------
    a : Tensor or array_like
        Source.
    indices : Tensor or array_like of int
        Any shape; negative values count from the end (``mode="raise"``).
    axis : int, optional
        Axis to take along (negatives allowed); ``None`` flattens first.
    mode : {"raise", "wrap", "clip"}
        Out-of-range indices raise ``IndexError``, wrap around, or clip to the ends (as NumPy).

    Returns
    -------
    Tensor
        Shape ``a.shape[:axis] + indices.shape + a.shape[axis + 1:]``, dtype of ``a``.

    Raises
    ------
    IndexError
        For an out-of-range index with ``mode="raise"`` (NumPy's message), or a non-empty take
        from an empty axis.
    AxisError
        If ``axis`` is out of range.
    TypeError
        If ``indices`` are not integers.
    ValueError
        For an unknown ``mode``.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1, 2, 3], [4, 5, 6]])
    >>> tf.take(x, [2, 0], axis=1).tolist()
    [[3, 1], [6, 4]]
    >>> x.take([-1, 0]).tolist()
    [6, 1]
    """
    x = _as_tensor(a)
    if axis is None:
        x = ravel(x)
        ax = 0
    else:
        (ax,) = _normalize_axes("take", axis, x.ndim)
    idx = _host_indices("take", indices)
    n = x.shape[ax]
    if mode == "raise":
        bad = (idx < -n) | (idx >= n)
        if bad.any():
            raise IndexError(f"index {int(idx[bad].flat[0])} is out of bounds for axis {ax} with size {n}")
        idx = np.where(idx < 0, idx + n, idx)
    elif mode in ("wrap", "clip"):
        if n == 0 and idx.size:
            raise IndexError("cannot do a non-empty take from an empty axes.")
        idx = np.mod(idx, n) if mode == "wrap" else np.clip(idx, 0, _b.max(n - 1, 0))
    else:
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    return _take_gather(x, idx, ax)


def _join_operands(op: str, arrays: Any) -> list[Any]:
    """Tensors kept; other operands as host arrays (adopted by the primitive's runtime)."""
    if isinstance(arrays, (Tensor, np.ndarray)):
        arrays = list(arrays) if arrays.ndim else [arrays]
    items = [
        x if isinstance(x, Tensor) else _tf().asarray(x) if _factories._tracked_in(x) is not None else np.asarray(x)
        for x in arrays
    ]
    if not items:
        raise ValueError(f"{op}: need at least one array to {'stack' if op == 'stack' else 'concatenate'}")
    return items


def concatenate(arrays: Sequence[ArrayLike], axis: int | None = 0, dtype: Any = None) -> Tensor:
    """Join tensors along an existing axis, as ``numpy.concatenate``.

    Lowers to the primitive ``prim.concatenate``; the dtypes are promoted by the lattice of
    ops.md (NumPy's ``result_type`` on tenferro's dtypes).

    Parameters
    ----------
    arrays : sequence of Tensor or array_like
        Operands of one rank >= 1 whose lengths agree except along ``axis``.
    axis : int or None
        Joining axis (negatives allowed); ``None`` flattens every operand first.
    dtype : dtype-like, optional
        Result dtype (each operand converted as by :func:`astype`).

    Returns
    -------
    Tensor
        The joined tensor.

    Raises
    ------
    ShapeError
        For 0-d operands, ranks that differ or lengths that differ off ``axis`` (``ValueError``).
    AxisError
        If ``axis`` is out of range.
    ValueError
        For an empty sequence.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.concatenate([tf.asarray([[1, 2]]), tf.asarray([[3, 4], [5, 6]])]).tolist()
    [[1, 2], [3, 4], [5, 6]]
    >>> tf.concatenate([[1, 2], [3.5]], axis=None).tolist()
    [1.0, 2.0, 3.5]
    """
    items = _join_operands("concatenate", arrays)
    if axis is None:
        items = [ravel(x) for x in items]
        axis = 0
    if dtype is not None:
        items = [_to_dtype(_as_tensor(x), dtype) for x in items]
    ndim = items[0].ndim
    if _b.any(x.ndim == 0 for x in items):
        raise ShapeError("concatenate: zero-dimensional arrays cannot be concatenated")
    (ax,) = _normalize_axes("concatenate", axis, ndim)
    first = tuple(items[0].shape)
    for i, x in enumerate(items[1:], start=1):
        if x.ndim != ndim:
            raise ShapeError(
                "concatenate: all the input arrays must have same number of dimensions, but the "
                f"array at index 0 has {ndim} dimension(s) and the array at index {i} has "
                f"{x.ndim} dimension(s)"
            )
        for d in range(ndim):
            if d != ax and x.shape[d] != first[d]:
                raise ShapeError(
                    "concatenate: all the input array dimensions except for the concatenation axis "
                    f"must match exactly, but along dimension {d}, the array at index 0 has size "
                    f"{first[d]} and the array at index {i} has size {x.shape[d]}"
                )
    if len(items) == 1:
        return _as_tensor(items[0])
    return _p.concatenate(items, ax)


def stack(arrays: Sequence[ArrayLike], axis: int = 0, dtype: Any = None) -> Tensor:
    """Join tensors of one shape along a new axis, as ``numpy.stack``.

    Each operand gets a length-1 axis at ``axis`` (a view), then ``prim.concatenate`` joins them.

    Parameters
    ----------
    arrays : sequence of Tensor or array_like
        Operands of equal shapes.
    axis : int
        Position of the new axis in the result (``-1`` is last).
    dtype : dtype-like, optional
        Result dtype.

    Returns
    -------
    Tensor
        Rank ``arrays[0].ndim + 1``; promoted dtype.

    Raises
    ------
    ShapeError
        If the shapes differ (``ValueError``).
    AxisError
        If ``axis`` is out of range.
    ValueError
        For an empty sequence.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.stack([tf.asarray([1, 2]), tf.asarray([3, 4])], axis=1).tolist()
    [[1, 3], [2, 4]]
    """
    items = _join_operands("stack", arrays)
    shapes = {tuple(x.shape) for x in items}
    if len(shapes) != 1:
        raise ShapeError(f"stack: all input arrays must have the same shape, got {sorted(shapes)}")
    (ax,) = _normalize_axes("stack", axis, items[0].ndim + 1)
    return concatenate([expand_dims(_as_tensor(x), ax) for x in items], axis=ax, dtype=dtype)


def _as_pairs(op: str, name: str, value: Any, ndim: int, *, as_index: bool) -> np.ndarray:
    """NumPy's ``numpy.lib._arraypad_impl._as_pairs``: ``value`` as ``(ndim, 2)`` before/after."""
    arr = np.asarray(value)
    if as_index:
        if arr.dtype.kind not in "iu":
            if arr.dtype.kind == "b" or arr.size:
                raise TypeError(f"{op}: `{name}` must be of integral type, got {value!r}")
            arr = arr.astype(np.int64)
        if (arr < 0).any():
            raise ValueError(f"{op}: index can't contain negative values ({name}={value!r})")
    try:
        return np.broadcast_to(arr, (ndim, 2))
    except ValueError:
        raise ValueError(
            f"{op}: {name} of shape {arr.shape} cannot be broadcast to ({ndim}, 2) for an array "
            f"of dimension {ndim}"
        ) from None


def pad(array: ArrayLike, pad_width: Any, mode: str = "constant", *, constant_values: Any = 0) -> Tensor:
    """Pad with a constant, as ``numpy.pad(..., mode="constant")``.

    Lowers to the primitive ``prim.pad`` (which fills zeros) and, for nonzero constants, to one
    ``prim.select`` per padded axis with host-built masks, applied in axis order so that the
    corners take the value of the later axis, as NumPy does.

    Parameters
    ----------
    array : Tensor or array_like
        Input of any shape.
    pad_width : int or sequence
        ``((before_0, after_0), ..., (before_n, after_n))``, or shorter forms broadcast to it
        (``(before, after)``, ``(n,)``, ``n``); non-negative integers.
    mode : str
        Only ``"constant"``.
    constant_values : scalar or sequence
        The padding values, per axis and side as ``pad_width``; cast to the input's dtype.

    Returns
    -------
    Tensor
        Shape ``shape[i] + before_i + after_i``, dtype of ``array``.

    Raises
    ------
    UnsupportedError
        For any other ``mode``.
    TypeError
        If ``pad_width`` is not integral.
    ValueError
        For negative widths or ones that do not broadcast to ``(ndim, 2)``.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.pad(tf.asarray([1, 2]), (1, 2)).tolist()
    [0, 1, 2, 0, 0]
    >>> tf.pad(tf.asarray([[1]]), 1, constant_values=((7, 8), (5, 6))).tolist()
    [[5, 7, 6], [5, 1, 6], [5, 8, 6]]
    """
    if mode != "constant":
        raise UnsupportedError(f"pad: mode {mode!r} is not supported (only 'constant')")
    x = _as_tensor(array)
    ndim = x.ndim
    widths = _as_pairs("pad", "pad_width", pad_width, ndim, as_index=True).astype(np.int64)
    tracked = _factories._tracked_in(constant_values) is not None
    if not tracked:
        values = _as_pairs("pad", "constant_values", constant_values, ndim, as_index=False)
    if ndim == 0:
        return x
    low, high = tuple(int(w) for w in widths[:, 0]), tuple(int(w) for w in widths[:, 1])
    if _b.any(low) or _b.any(high):
        cfg = PadConfig(edge_padding_low=low, edge_padding_high=high, interior_padding=(0,) * ndim)
        out = _p.pad(x, cfg)
    else:
        out = x
    if tracked:
        # Differentiable constants: each padded band is a host mask times the tracked value.
        cv = _factories.asarray(constant_values)
        try:
            cv = broadcast_to(cv, (ndim, 2))
        except ValueError:
            raise ValueError(
                f"pad: constant_values of shape {cv.shape} does not broadcast to ({ndim}, 2)"
            ) from None
        cv = cv.astype(x.dtype)
        for d in range(ndim):
            if low[d] == 0 and high[d] == 0:
                continue
            n = out.shape[d]
            shape = tuple(n if i == d else 1 for i in range(ndim))
            keep = np.zeros(n, dtype=bool)
            keep[low[d] : n - high[d]] = True
            before = np.zeros(n, dtype=x.dtype)
            before[: low[d]] = 1
            after = np.zeros(n, dtype=x.dtype)
            after[n - high[d] :] = 1
            fill = before.reshape(shape) * cv[d, 0] + after.reshape(shape) * cv[d, 1]
            out = _p.select(keep.reshape(shape), out, fill)
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        consts = values.astype(x.dtype)
    started = False
    for d in range(ndim):
        started = started or _b.bool(consts[d, 0] != 0) or _b.bool(consts[d, 1] != 0)
        if not started or (low[d] == 0 and high[d] == 0):
            continue
        n = out.shape[d]
        keep = np.zeros(n, dtype=bool)
        keep[low[d] : n - high[d]] = True
        fill = np.empty(n, dtype=x.dtype)
        fill[: low[d]] = consts[d, 0]
        fill[n - high[d] :] = consts[d, 1]
        fill[keep] = 0
        shape = tuple(n if i == d else 1 for i in range(ndim))
        out = _p.select(keep.reshape(shape), out, fill.reshape(shape))
    return out


def _triangle(name: str, prim_fn: Callable, m: ArrayLike, k: int) -> Tensor:
    x = _as_tensor(m)
    k = operator.index(k)
    if x.ndim == 0:
        raise ShapeError(f"{name}: input must be at least 1-d, got a 0-d tensor")
    if x.ndim == 1:
        x = broadcast_to(x, (x.shape[0], x.shape[0]))
    nd = x.ndim
    if nd == 2:
        return prim_fn(x, k)
    front = (nd - 2, nd - 1) + tuple(range(nd - 2))
    back = tuple(range(2, nd)) + (0, 1)
    return _p.transpose(prim_fn(_p.transpose(x, front), k), back)


def tril(m: ArrayLike, k: int = 0) -> Tensor:
    """Lower triangle of the matrices in the last two axes, as ``numpy.tril``.

    Element ``[..., i, j]`` is kept where ``j - i <= k`` and zeroed elsewhere. Lowers to the
    primitive ``prim.tril`` (which acts on axes 0 and 1) between two transposes (views).

    Parameters
    ----------
    m : Tensor or array_like
        Rank >= 1 (a 1-d input is broadcast to a square matrix, as NumPy).
    k : int
        Diagonal above which to zero (0: main, > 0 above, < 0 below).

    Returns
    -------
    Tensor
        Same shape (``(n, n)`` for 1-d input) and dtype.

    Raises
    ------
    ShapeError
        For a 0-d input.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.tril(tf.asarray([[1, 2, 3], [4, 5, 6]])).tolist()
    [[1, 0, 0], [4, 5, 0]]
    """
    return _triangle("tril", lambda x, k: _p.tril(x, k), m, k)


def triu(m: ArrayLike, k: int = 0) -> Tensor:
    """Upper triangle of the matrices in the last two axes, as ``numpy.triu``.

    Element ``[..., i, j]`` is kept where ``j - i >= k`` and zeroed elsewhere. Lowers to the
    primitive ``prim.triu`` (which acts on axes 0 and 1) between two transposes (views).

    Parameters
    ----------
    m : Tensor or array_like
        Rank >= 1 (a 1-d input is broadcast to a square matrix, as NumPy).
    k : int
        Diagonal below which to zero.

    Returns
    -------
    Tensor
        Same shape (``(n, n)`` for 1-d input) and dtype.

    Raises
    ------
    ShapeError
        For a 0-d input.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.triu(tf.asarray([[1, 2, 3], [4, 5, 6]]), k=1).tolist()
    [[0, 2, 3], [0, 0, 6]]
    """
    return _triangle("triu", lambda x, k: _p.triu(x, k), m, k)


def diagonal(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """Diagonals of the matrices in ``(axis1, axis2)``, as ``numpy.diagonal``.

    The two axes are removed and the diagonal becomes the **last** axis (NumPy's layout), of
    length ``max(0, min(n1, n2 - offset))`` for ``offset >= 0`` (``min(n1 + offset, n2)``
    otherwise). Lowers to a transpose and a basic slice (views) and the primitive
    ``prim.extract_diag``.

    Parameters
    ----------
    a : Tensor or array_like
        Rank >= 2.
    offset : int
        Diagonal offset: ``a[..., i, i + offset]``.
    axis1, axis2 : int
        The matrix axes (distinct; negatives allowed).

    Returns
    -------
    Tensor
        Rank ``a.ndim - 1``, dtype of ``a``.

    Raises
    ------
    ShapeError
        For rank < 2 (``ValueError``).
    AxisError
        If an axis is out of range.
    ValueError
        If ``axis1`` and ``axis2`` name the same axis.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[1, 2, 3], [4, 5, 6]])
    >>> tf.diagonal(x).tolist(), x.diagonal(offset=1).tolist(), x.diagonal(-1).tolist()
    ([1, 5], [2, 6], [4])
    """
    x = _as_tensor(a)
    offset = operator.index(offset)
    if x.ndim < 2:
        raise ShapeError(f"diagonal: diag requires an array of at least two dimensions, got shape {tuple(x.shape)}")
    i, j = _normalize_axes("diagonal", (axis1, axis2), x.ndim, allow_duplicates=True)
    if i == j:
        raise ValueError(f"diagonal: axis1 and axis2 cannot be the same (both are axis {i})")
    rest = tuple(d for d in range(x.ndim) if d not in (i, j))
    y = transpose(x, (i, j) + rest)
    if offset > 0:
        y = y[:, offset:]
    elif offset < 0:
        y = y[-offset:]
    return moveaxis(_p.extract_diag(y, 0, 1), 0, -1)


def trace(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None) -> Tensor:
    """Sum along diagonals, as ``numpy.trace``: ``sum(diagonal(a, offset, axis1, axis2), -1)``.

    The sum follows :func:`sum`'s NumPy dtype rules (bool and int32 accumulate in int64).

    Parameters
    ----------
    a : Tensor or array_like
        Rank >= 2.
    offset, axis1, axis2 : int
        As :func:`diagonal`.
    dtype : dtype-like, optional
        Accumulator and result dtype.

    Returns
    -------
    Tensor
        Rank ``a.ndim - 2``.

    Raises
    ------
    ShapeError, AxisError, ValueError
        As :func:`diagonal`.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.trace(tf.asarray([[1, 2], [3, 4]])).tolist()
    5
    """
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


# ---------------------------------------------------------------------------------------------
# Tensor methods and properties (attached to the class by the package)
# ---------------------------------------------------------------------------------------------


def _method_transpose(self: Tensor, *axes: Any) -> Tensor:
    """``x.transpose()``, ``x.transpose((1, 0))`` or ``x.transpose(1, 0)``, as NumPy."""
    if not axes or (len(axes) == 1 and axes[0] is None):
        return transpose(self)
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        return transpose(self, axes[0])
    return transpose(self, axes)


def _method_flatten(self: Tensor, order: str = "C") -> Tensor:
    """``x.flatten(order="C")``: the elements as a 1-d tensor (as :func:`ravel`; no copy is
    needed since tensors are immutable)."""
    return ravel(self, order=order)


def _method_clip(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """``x.clip(min=None, max=None)``: as :func:`clip`."""
    return clip(self, min, max)


def _is_operand(other: Any) -> bool:
    return isinstance(other, (Tensor, np.ndarray, np.generic, list, tuple, *_PY_SCALARS))


def _binary_method(fn: Callable, name: str, reflected: bool) -> Callable:
    if reflected:

        def method(self: Tensor, other: Any) -> Any:
            return fn(other, self) if _is_operand(other) else NotImplemented

    else:

        def method(self: Tensor, other: Any) -> Any:
            return fn(self, other) if _is_operand(other) else NotImplemented

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``{name}``: :func:`{fn.__name__}` with the operands in {'reflected' if reflected else 'given'} order."
    return method


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "sum": sum,
    "prod": prod,
    "max": max,
    "min": min,
    "mean": mean,
    "any": any,
    "all": all,
    "exp": exp,
    "log": log,
    "sqrt": sqrt,
    "conj": conj,
    "conjugate": conjugate,
    "transpose": _method_transpose,
    "swapaxes": swapaxes,
    "flatten": _method_flatten,
    "ravel": ravel,
    "squeeze": squeeze,
    "clip": _method_clip,
    "diagonal": diagonal,
    "trace": trace,
    "take": take,
    "__matmul__": _binary_method(matmul, "__matmul__", False),
    "__rmatmul__": _binary_method(matmul, "__rmatmul__", True),
    "__floordiv__": _binary_method(floor_divide, "__floordiv__", False),
    "__rfloordiv__": _binary_method(floor_divide, "__rfloordiv__", True),
    "__mod__": _binary_method(remainder, "__mod__", False),
    "__rmod__": _binary_method(remainder, "__rmod__", True),
    "__divmod__": _binary_method(divmod, "__divmod__", False),
    "__rdivmod__": _binary_method(divmod, "__rdivmod__", True),
}
"""NumPy-style methods for ``Tensor``; each takes the tensor first (``setattr(Tensor, k, v)``)."""

TENSOR_PROPERTIES: dict[str, Callable[[Tensor], Tensor]] = {"real": real, "imag": imag}
"""NumPy-style read-only properties for ``Tensor`` (``setattr(Tensor, k, property(v))``)."""

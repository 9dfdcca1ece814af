"""Element-wise NumPy functions: the unary transcendental rows (``exp``, ``log``, ...), the other
unary functions (``abs``, ``real``, ``isnan``, ...), the binary arithmetic and comparison
functions, floor division and remainder with NumPy's signs, the logical functions and ``clip``."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _trace_errors
from .. import prim as _p
from .._factories import zeros
from .._tenferro import Tensor
from ..errors import DTypeError
from ._common import (
    ArrayLike,
    _BOOL,
    _F64,
    _I64,
    _REAL_OF,
    _as_tensor,
    _unchanged,
    _float_input,
    _operand,
    _operands,
    _result_dtype,
    _to_common,
)

__all__ = [
    "abs",
    "absolute",
    "add",
    "around",
    "clip",
    "conj",
    "conjugate",
    "cos",
    "divide",
    "divmod",
    "equal",
    "exp",
    "expm1",
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
    "maximum",
    "minimum",
    "mod",
    "multiply",
    "negative",
    "not_equal",
    "positive",
    "power",
    "real",
    "remainder",
    "rint",
    "round",
    "sign",
    "sin",
    "sqrt",
    "square",
    "subtract",
    "tan",
    "tanh",
    "true_divide",
]


# 2**(mantissa bits): every float at or above it is an integer; adding and subtracting it rounds
# smaller magnitudes to the nearest integer (ties to even) -- used by ``_floor``.
_ROUNDING_MAGIC = {np.dtype(np.float32): 2.0**23, _F64: 2.0**52}


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
    message = f"{op}: integer division or modulo by zero"
    _trace_errors.rename(ZeroDivisionError, "div", "replace", message)  # under tf.jit
    _trace_errors.rename(ZeroDivisionError, "rem", "replace", message)
    try:
        q = _p.div(a, b)
        r = _p.rem(a, b)
    except ZeroDivisionError as err:
        raise ZeroDivisionError(message) from err
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


def _expm1(x: Tensor) -> Tensor:
    """``prim.expm1``; for complex ``x`` plus ``0 - 0i``, which turns the real part of
    ``expm1(-0 ± 0i)`` into ``+0`` (the Array API's ``0 + 0j``) and keeps every other value, the
    signs of zero imaginary parts included."""
    y = _p.expm1(x)
    return _p.add(y, complex(0.0, -0.0)) if y.dtype.kind == "c" else y


expm1 = _make_unary(
    "expm1",
    _expm1,
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


def _tan(x: Tensor) -> Tensor:
    """``sin(x)/cos(x)`` for real ``x``; ``-i·tanh(i·x)`` for complex ``x`` (C99's definition of
    ``ctan``; the products with ``±i`` are ``scale_complex``, exact for infinite and NaN parts),
    so ``|Im x| > 710``, where ``sin`` and ``cos`` overflow, gives ``±0 ± 1i`` as NumPy."""
    if x.dtype.kind == "c":
        return _p.scale_complex(_p.tanh(_p.scale_complex(x, 1j)), -1j)
    return _p.div(_p.sin(x), _p.cos(x))


tan = _make_unary(
    "tan",
    _tan,
    "``prim.div(prim.sin(x), prim.cos(x))`` (there is no tangent primitive); for complex "
    "``x``, ``-i·prim.tanh(i·x)``",
    "Tangent (argument in radians), element-wise.",
    "[0.0, 1.0]",
    "[0.0, 1.557408]",
    note="The quotient adds up to about one ulp to the errors of ``sin`` and ``cos``; close to the "
    "poles ``pi/2 + k*pi`` the relative error grows like that of ``cos``. Complex inputs take "
    "C99's ``ctan(z) = -i·ctanh(i·z)`` with its special values (NumPy's).",
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


rint = _make_unary(
    "rint",
    _p.round,
    "the primitive ``prim.round``",
    "Round to the nearest integer, element-wise; halfway values go to the even neighbour (``0.5`` "
    "to ``0``, ``1.5`` and ``2.5`` to ``2``), and the sign of zero is kept (``-0.4`` to ``-0.0``).",
    "[0.5, 1.5, 2.5, -0.5, -0.4]",
    "[0.0, 2.0, 2.0, -0.0, -0.0]",
    note="Complex inputs round their real and imaginary parts separately, as NumPy. The derivative "
    "is zero (the rule of ``prim.round``).",
    example_call="tf.rint(x).tolist()",
)


#: NumPy's ``power_of_ten`` (numpy/_core/src/multiarray/calculation.c): ``1e0`` .. ``1e8`` from a
#: table, larger powers by multiplying ``1e9`` by 10 repeatedly (NumPy's factor, which is not
#: ``10.0**n`` for every ``n``).
_POWERS_OF_TEN = (1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8)


def _power_of_ten(n: int) -> float:
    if n < len(_POWERS_OF_TEN):
        return _POWERS_OF_TEN[n]
    ret = 1e9
    for _ in range(n - 9):
        ret *= 10.0
        if math.isinf(ret):
            break
    return ret


def round(a: ArrayLike, decimals: int = 0) -> Tensor:  # noqa: A001 - NumPy's name
    """Round to ``decimals`` decimal places, halfway values to even, as ``numpy.round``.

    ``decimals == 0`` is :func:`rint` (the primitive ``prim.round``). Otherwise, as NumPy's
    ``PyArray_Round``: ``rint(x * f) / f`` with ``f = 10**decimals`` for ``decimals > 0`` and
    ``rint(x / f) * f`` with ``f = 10**-decimals`` for ``decimals < 0`` (``f`` is NumPy's
    factor, the multiplications are ``prim.scale_real``). The result is therefore NumPy's,
    including its surprises: ``round(1.005, 2)`` is ``1.0`` (``1.005 * 100`` is
    ``100.49999999999999``), and ``decimals`` past the float range give NaN.

    Integer inputs keep their dtype: with ``decimals >= 0`` they are returned unchanged; with
    ``decimals < 0`` they are rounded in float64 (``rint(x / f) * f``) and cast back, so
    magnitudes above ``2**53`` round as their float64 values do and a result outside the
    integer range is the ``prim.cast`` of it (NumPy's overflows). Boolean inputs give float64
    for ``decimals == 0`` (NumPy: float16, which tenferro does not have).

    Complex inputs round their real and imaginary parts separately, as NumPy. With
    ``decimals != 0`` the division by ``f`` is the complex division by ``f + 0j``: exact for
    finite parts, but a NaN or infinite part makes the other part NaN and a zero part may lose
    its sign (NumPy divides each part by ``f``).

    The derivative is zero (the rule of ``prim.round``; ``prim.scale_real``/``prim.div`` by
    ``f`` carry it through).

    Parameters
    ----------
    a : Tensor or array_like
        Input of any shape (rank 0 included); non-tensors are converted with
        :func:`tenferro.asarray`.
    decimals : int, optional
        Number of decimal places (negative: places left of the decimal point); default 0.

    Returns
    -------
    Tensor
        Same shape as ``a``; dtype ``a.dtype``, except float64 for boolean ``a``.

    Raises
    ------
    TypeError
        If ``decimals`` is not an integer.
    DTypeError
        If ``a`` is boolean and ``decimals != 0`` (NumPy cannot cast the float result back to
        bool either), or has a dtype tenferro does not support.

    See Also
    --------
    numpy.round, numpy.around, rint

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.round(tf.asarray([0.5, 1.5, 2.5, -2.5])).tolist()
    [0.0, 2.0, 2.0, -2.0]
    >>> tf.round(tf.asarray([1.25, 1.35, 123.456]), 1).tolist()
    [1.2, 1.4, 123.5]
    >>> tf.round(tf.asarray([15, 25, 1234]), -1).tolist()
    [20, 20, 1230]
    """
    decimals = operator.index(decimals)
    x = _as_tensor(a)
    kind = x.dtype.kind
    if kind in "iu":
        if decimals >= 0:
            return _unchanged(x)
        f = _power_of_ten(-decimals)
        r = _p.scale_real(_p.round(_p.div(_p.convert(x, _F64), f)), f)
        return _p.cast(r, x.dtype)
    if kind == "b":
        if decimals != 0:
            raise DTypeError(
                f"round: boolean input with decimals={decimals} (the float result cannot be "
                "cast back to bool, as in NumPy)"
            )
        return _p.round(_p.convert(x, _F64))
    if decimals == 0:
        return _p.round(x)
    if decimals > 0:
        f = _power_of_ten(decimals)
        return _p.div(_p.round(_p.scale_real(x, f)), f)
    f = _power_of_ten(-decimals)
    return _p.scale_real(_p.round(_p.div(x, f)), f)


around = round


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
        return _unchanged(x)
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
    return _unchanged(x)


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
        return _unchanged(x)
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
        return _unchanged(x)
    return _p.cast(x, real_dtype)


def imag(val: ArrayLike, /) -> Tensor:
    """Imaginary part, element-wise.

    For complex inputs this is ``prim.cast(prim.scale_complex(val, -1j), real dtype)``: the real
    part of ``-i*z = Im z - i Re z``, exact for every input (``scale_complex`` by an imaginary
    constant scales each part alone, so an infinite or NaN ``Re z`` does not reach ``Im z``).
    For real inputs the result is zeros of ``val``'s dtype, as in NumPy.

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
        return zeros(tuple(x.shape), dtype=x.dtype)
    return _p.cast(_p.scale_complex(x, -1j), real_dtype)


def sign(x: ArrayLike, /) -> Tensor:
    """Sign, element-wise: -1, 0 or 1 for real inputs (NaN stays NaN); ``z/|z|`` for complex
    (0 at 0), as NumPy 2.

    Lowers to the primitive ``prim.sign``; for real floats plus ``0.0``, so that ``sign(-0.0)`` is
    ``+0.0`` as NumPy's (and the Array API's ``0``).

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
    y = _p.sign(_as_tensor(x))
    return _p.add(y, 0.0) if y.dtype.kind == "f" else y


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


_NO_VALUE = object()


def clip(
    a: ArrayLike,
    /,
    min: ArrayLike = _NO_VALUE,
    max: ArrayLike = _NO_VALUE,
    *,
    a_min: ArrayLike = _NO_VALUE,
    a_max: ArrayLike = _NO_VALUE,
) -> Tensor:
    """Limit the values of ``a`` to ``[a_min, a_max]``: ``minimum(maximum(a, a_min), a_max)``.

    With both bounds this lowers to the primitive ``prim.clamp(a, a_min, a_max)``; with one, to
    ``prim.maximum`` or ``prim.minimum``; with none, ``a`` is returned. As in NumPy, NaN
    propagates, ``a_min > a_max`` gives ``a_max``. The second and third parameters are named
    ``min``/``max`` (the Array API's names, NumPy >= 2.1's keywords); NumPy's ``a_min=``/``a_max=``
    are keyword aliases. The bounds may be scalars or tensors that broadcast.

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
        return _unchanged(x)
    dtype = _result_dtype(x, *bounds)
    x, *bounds = _to_common((x, *bounds), dtype)
    if lo is not None and hi is not None:
        return _p.clamp(x, bounds[0], bounds[1])
    if lo is not None:
        return _p.maximum(x, bounds[0])
    return _p.minimum(x, bounds[0])

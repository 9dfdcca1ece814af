"""Rounding, hyperbolic and floating-point functions of the Array API and NumPy: ``floor``,
``ceil``, ``trunc``, ``sinh``, ``cosh`` (primitives), ``copysign``, ``nextafter`` (primitives),
and the compositions ``reciprocal``, ``hypot``, ``logaddexp``, ``signbit``, ``cbrt``, ``exp2``.

The compositions are short programs of primitives, so they are differentiable where the maths is
and trace under ``tf.jit``; branches use the "double where" pattern (each branch sees only inputs
it is valid for), so the branch not taken adds no NaN to a gradient.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import prim as _p
from .._tenferro import Tensor
from ..errors import DTypeError
from ._common import (
    ArrayLike,
    _F64,
    _I64,
    _as_tensor,
    _float_input,
    _operands,
    _result_dtype,
    _to_common,
    _unchanged,
)
from .elementwise import _make_unary
from .mathfuncs import _one_like, _via_f64

__all__ = [
    "cbrt",
    "ceil",
    "copysign",
    "cosh",
    "exp2",
    "floor",
    "hypot",
    "logaddexp",
    "nextafter",
    "reciprocal",
    "signbit",
    "sinh",
    "trunc",
]


def _real_float_input(op: str, x: ArrayLike) -> Tensor:
    """``x`` as a real floating tensor (bool and integers to float64, NumPy's ufunc loops);
    complex inputs raise ``DTypeError`` naming ``op``."""
    t = _float_input(x)
    if t.dtype.kind == "c":
        raise DTypeError(
            f"{op}: complex inputs are not supported (got {t.dtype}); tenferro composes {op} "
            "from real primitives"
        )
    return t


# ----------------------------------------------------------------------------------------------
# floor, ceil, trunc
# ----------------------------------------------------------------------------------------------

_ROUNDING_DOC = """{summary}, element-wise, as ``numpy.{name}``.

Lowers to the primitive ``prim.{name}``. Bool and integer inputs are returned as they are (they
are already integers: NumPy 2 and the Array API keep their dtype). The derivative is zero (the
rule of ``prim.{name}``, as ``round``).

Parameters
----------
x : Tensor or array_like
    Real input of any shape (rank 0 included).

Returns
-------
Tensor
    Same shape and dtype. ``-0.0``, infinities and NaN are kept.

Raises
------
DTypeError
    For complex inputs (NumPy has no complex ``{name}`` either).

See Also
--------
numpy.{name}

Examples
--------
>>> import tenferro as tf
>>> tf.{name}(tf.asarray([-1.5, -0.5, 0.5, 1.5])).tolist()
{example}
"""


def _make_rounding(name: str, prim: Any, summary: str, example: str) -> Any:
    def fn(x: ArrayLike, /) -> Tensor:
        t = _as_tensor(x)
        if t.dtype.kind == "c":
            raise DTypeError(f"{name}: not supported for complex dtype {t.dtype} (as NumPy)")
        if t.dtype.kind in "bi":
            return _unchanged(t)
        return prim(t)

    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = __name__
    fn.__doc__ = _ROUNDING_DOC.format(name=name, summary=summary, example=example)
    return fn


floor = _make_rounding(
    "floor", _p.floor, "Largest integer not above ``x``", "[-2.0, -1.0, 0.0, 1.0]"
)
ceil = _make_rounding("ceil", _p.ceil, "Smallest integer not below ``x``", "[-1.0, -0.0, 1.0, 2.0]")
trunc = _make_rounding("trunc", _p.trunc, "``x`` rounded toward zero", "[-1.0, -0.0, 0.0, 1.0]")


# ----------------------------------------------------------------------------------------------
# sinh, cosh
# ----------------------------------------------------------------------------------------------

sinh = _make_unary(
    "sinh",
    _p.sinh,
    "the primitive ``prim.sinh`` (its derivative is ``cosh``)",
    "Hyperbolic sine, element-wise.",
    "[0.0, 1.0]",
    "[0.0, 1.175201]",
    note="Complex inputs follow C99 Annex G (``sinh(x + iy) = sinh x cos y + i cosh x sin y`` "
    "with its special values at zeros and infinities).",
)
cosh = _make_unary(
    "cosh",
    _p.cosh,
    "the primitive ``prim.cosh`` (its derivative is ``sinh``)",
    "Hyperbolic cosine, element-wise.",
    "[0.0, 1.0]",
    "[1.0, 1.543081]",
    note="Complex inputs follow C99 Annex G (``cosh(x + iy) = cosh x cos y + i sinh x sin y`` "
    "with its special values at zeros and infinities).",
)


# ----------------------------------------------------------------------------------------------
# copysign, nextafter, signbit
# ----------------------------------------------------------------------------------------------


def _real_float_operands(op: str, x1: ArrayLike, x2: ArrayLike) -> list[Tensor]:
    """Both operands as tensors of one real float dtype (bool and integers to float64, NumPy's
    ufunc loops); complex operands raise ``DTypeError`` naming ``op``."""
    a, b = _operands(x1, x2)
    dtype = _result_dtype(a, b)
    if dtype.kind == "c":
        raise DTypeError(f"{op}: not supported for complex dtype {dtype} (as NumPy)")
    if dtype.kind in "bi":
        dtype = _F64
    return _to_common((a, b), dtype)


def copysign(x1: ArrayLike, x2: ArrayLike, /) -> Tensor:
    """``|x1|`` with the sign bit of ``x2``, element-wise, as ``numpy.copysign``.

    Lowers to the primitive ``prim.copysign`` (IEEE ``copySign``: ``-0.0`` and a negative NaN in
    ``x2`` count as negative). Derivatives: ``d/dx1 = sign(x1)·sign(x2)`` (by sign bits), zero
    in ``x2``.

    Parameters
    ----------
    x1, x2 : Tensor or array_like
        Real operands; shapes broadcast, Python scalars are weak. Bool and integer operands are
        computed in float64.

    Returns
    -------
    Tensor
        The broadcast shape; the promoted float dtype.

    Raises
    ------
    ShapeError
        If the shapes do not broadcast.
    DTypeError
        For complex operands (as NumPy).

    See Also
    --------
    numpy.copysign

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.copysign(tf.asarray([1.0, -2.0, 3.0]), tf.asarray([-0.0, 1.0, -1.0])).tolist()
    [-1.0, 2.0, -3.0]
    """
    a, b = _real_float_operands("copysign", x1, x2)
    return _p.copysign(a, b)


def nextafter(x1: ArrayLike, x2: ArrayLike, /) -> Tensor:
    """The next representable float after ``x1`` in the direction of ``x2``, element-wise, as
    ``numpy.nextafter`` (C ``nextafter``).

    Lowers to the primitive ``prim.nextafter``: ``x2`` where ``x1 == x2``, NaN if either is NaN,
    the smallest subnormal (signed as ``x2``) after a zero, infinity past the largest finite
    value. Derivatives: 1 in ``x1``, 0 in ``x2`` (``x1`` plus a piecewise-constant step).

    Parameters
    ----------
    x1, x2 : Tensor or array_like
        Real operands; shapes broadcast, Python scalars are weak. Bool and integer operands are
        computed in float64.

    Returns
    -------
    Tensor
        The broadcast shape; the promoted float dtype (the step is one ulp of that dtype).

    Raises
    ------
    ShapeError
        If the shapes do not broadcast.
    DTypeError
        For complex operands (as NumPy).

    See Also
    --------
    numpy.nextafter

    Examples
    --------
    >>> import tenferro as tf
    >>> (tf.nextafter(tf.asarray([1.0]), 2.0).numpy() - 1.0).tolist()
    [2.220446049250313e-16]
    """
    a, b = _real_float_operands("nextafter", x1, x2)
    return _p.nextafter(a, b)


def signbit(x: ArrayLike, /) -> Tensor:
    """Whether the sign bit is set, element-wise, as ``numpy.signbit``: true for negative
    numbers, ``-0.0``, ``-inf`` and a NaN with the sign bit set.

    ``copysign(1, x) < 0`` (``prim.copysign`` reads the sign bit); ``x < 0`` for integers, false
    for bools. The boolean result records no derivative.

    Parameters
    ----------
    x : Tensor or array_like
        Real input of any shape.

    Returns
    -------
    Tensor
        Same shape, dtype bool.

    Raises
    ------
    DTypeError
        For complex inputs (as NumPy).

    See Also
    --------
    numpy.signbit

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.signbit(tf.asarray([-1.0, -0.0, 0.0, 2.0])).tolist()
    [True, True, False, False]
    """
    t = _as_tensor(x)
    if t.dtype.kind == "c":
        raise DTypeError(f"signbit: not supported for complex dtype {t.dtype} (as NumPy)")
    if t.dtype.kind in "bi":
        return _p.compare(t, False if t.dtype.kind == "b" else 0, "LT")
    return _p.compare(_p.copysign(_one_like(t), t), 0.0, "LT")


# ----------------------------------------------------------------------------------------------
# reciprocal, exp2, cbrt
# ----------------------------------------------------------------------------------------------


def reciprocal(x: ArrayLike, /) -> Tensor:
    """``1 / x``, element-wise, as ``numpy.reciprocal``.

    Lowers to ``prim.div(1, x)``: floats and complex numbers divide (complex by Smith's
    algorithm; ``1/±0`` is ``±inf``); integers divide as NumPy's integer ``reciprocal`` does,
    truncating (``1/2 == 0``, ``1/-1 == -1``); bools are taken as int64. Differentiable
    (``-1/x**2``).

    Parameters
    ----------
    x : Tensor or array_like
        Input of any shape.

    Returns
    -------
    Tensor
        Same shape; ``x``'s dtype (int64 for bools).

    Raises
    ------
    ZeroDivisionError
        For an integer zero (NumPy warns and returns garbage).

    See Also
    --------
    numpy.reciprocal

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.reciprocal(tf.asarray([2.0, -0.5, 0.0])).tolist()
    [0.5, -2.0, inf]
    >>> tf.reciprocal(tf.asarray([1, 2, -1])).tolist()
    [1, 0, -1]
    """
    t = _as_tensor(x)
    if t.dtype.kind == "b":
        t = _p.convert(t, _I64)
    one = 1 if t.dtype.kind == "i" else 1.0
    try:
        return _p.div(one, t)
    except ZeroDivisionError as err:
        raise ZeroDivisionError("reciprocal: integer division by zero") from err


def exp2(x: ArrayLike, /) -> Tensor:
    """``2**x``, element-wise, as ``numpy.exp2``.

    Lowers to ``prim.pow(2, x)`` (exact at integers; derivative ``log(2)·2**x``). Bool and
    integer inputs are computed in float64; complex inputs use the principal ``pow``.

    Parameters
    ----------
    x : Tensor or array_like
        Input of any shape.

    Returns
    -------
    Tensor
        Same shape; ``x``'s float or complex dtype (float64 for bools and integers).

    See Also
    --------
    numpy.exp2

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.exp2(tf.asarray([0.0, 3.0, -1.0, 0.5])).numpy().round(6).tolist()
    [1.0, 8.0, 0.5, 1.414214]
    """
    t = _float_input(x)
    return _p.pow(_p.mul(_one_like(t), 2.0), t)


def cbrt(x: ArrayLike, /) -> Tensor:
    """Real cube root, element-wise, as ``numpy.cbrt`` (negative for negative ``x``).

    ``y0 = sign(x)·|x|**(1/3)`` (``prim.pow``) refined by one Newton step
    ``y0 - (y0 - x/y0**2)/3`` in float64 (float32 inputs are computed in float64 and rounded
    once), which brings it within an ulp of the correctly rounded root (exact for perfect cubes).
    Zeros (signed), infinities and NaN are returned as they are. The derivative is
    ``1/(3·cbrt(x)**2)`` (a custom JVP rule, as JAX's): ``+inf`` at ``±0``, ``0`` at ``±inf``,
    NaN at NaN; higher derivatives follow from the rule.

    Parameters
    ----------
    x : Tensor or array_like
        Real input of any shape; bool and integer inputs are computed in float64.

    Returns
    -------
    Tensor
        Same shape; float dtype.

    Raises
    ------
    DTypeError
        For complex inputs (as NumPy).

    See Also
    --------
    numpy.cbrt

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.cbrt(tf.asarray([27.0, -8.0, 2.0])).numpy().round(6).tolist()
    [3.0, -2.0, 1.259921]
    """
    t = _real_float_input("cbrt", x)
    return _via_f64(_cbrt_f64(), t)


def _cbrt_values(u: Tensor) -> Tensor:
    """The values of ``cbrt(u)`` (float64; see :func:`cbrt`); its own derivative is not used."""
    special = _p.compare(u, 0.0, "EQ") | ~_p.compare(_p.abs(u), math.inf, "LT")
    safe = _p.select(special, _one_like(u), u)
    a = _p.abs(safe)
    y0 = _p.mul(_p.sign(safe), _p.pow(a, 1.0 / 3.0))
    y1 = _p.sub(y0, _p.div(_p.sub(y0, _p.div(safe, _p.mul(y0, y0))), 3.0))
    return _p.select(special, u, y1)


_CBRT: list[Any] = []


def _cbrt_f64() -> Any:
    """``cbrt`` of float64 tensors with the derivative ``1/(3·cbrt(x)**2)`` as a custom JVP
    (JAX's rule): ``+inf`` at ``±0``, ``0`` at ``±inf``, NaN at NaN, and higher derivatives by
    differentiating the rule. No composition of primitives has these: the chain rule through
    ``sign(x)·|x|**(1/3)`` gives ``0·inf`` at 0 and a ``select`` on the special values gives 1."""
    if not _CBRT:
        from .._custom import custom_jvp

        @custom_jvp
        def cbrt_f64(u: Tensor) -> Tensor:
            return _cbrt_values(u)

        @cbrt_f64.defjvp
        def _cbrt_jvp(primals: Any, tangents: Any) -> Any:
            (u,), (du,) = primals, tangents
            # The composition, not cbrt_f64 (whose node would differentiate this rule again):
            # its derivative equals 1/(3·y**2) away from the special values, so the second
            # derivative is -2/(9·y**5) there.
            y = _cbrt_values(u)
            return y, _p.div(du, _p.mul(_p.mul(y, y), 3.0))

        _CBRT.append(cbrt_f64)
    return _CBRT[0]


# ----------------------------------------------------------------------------------------------
# hypot, logaddexp
# ----------------------------------------------------------------------------------------------


def _isinf(t: Tensor) -> Tensor:
    return _p.compare(_p.abs(t), math.inf, "EQ")


def hypot(x1: ArrayLike, x2: ArrayLike, /) -> Tensor:
    """``sqrt(x1**2 + x2**2)`` without overflow or underflow, element-wise, as ``numpy.hypot``.

    With ``m``/``n`` the larger/smaller of ``|x1|`` and ``|x2|``: ``m·sqrt(1 + (n/m)**2)`` (``0``
    where ``m == 0``), so ``hypot(1e300, 1e300)`` is finite; within 2 ulp of the C library's
    ``hypot`` (float32 inputs: the plain formula in float64, rounded once). ``+inf`` if either
    operand is infinite, even when the other is NaN (C99 and the Array API); else NaN if either is
    NaN. Derivatives ``x1/hypot`` and ``x2/hypot`` (both operands zero is a kink).

    Parameters
    ----------
    x1, x2 : Tensor or array_like
        Real operands; shapes broadcast, Python scalars are weak. Bool and integer operands are
        computed in float64.

    Returns
    -------
    Tensor
        The broadcast shape; the promoted float dtype.

    Raises
    ------
    ShapeError
        If the shapes do not broadcast.
    DTypeError
        For complex operands (as NumPy).

    See Also
    --------
    numpy.hypot

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.hypot(tf.asarray([3.0, 1e300]), tf.asarray([4.0, 1e300])).tolist()
    [5.0, 1.4142135623730952e+300]
    """
    a, b = _real_float_operands("hypot", x1, x2)
    if a.dtype == np.float32:
        a64, b64 = _p.convert(a, _F64), _p.convert(b, _F64)
        h = _p.cast(_p.sqrt(_p.add(_p.mul(a64, a64), _p.mul(b64, b64))), np.float32)
    else:
        # The larger magnitude by select, not maximum/minimum: at ties both orders give the same
        # smooth formula, so higher derivatives there are right too.
        aa, ab = _p.abs(a), _p.abs(b)
        swap = _p.compare(aa, ab, "LT")
        m, n = _p.select(swap, ab, aa), _p.select(swap, aa, ab)
        zero = _p.compare(m, 0.0, "EQ")
        m_inf = _isinf(m)
        m_safe = _p.select(zero | m_inf, 1.0, m)
        r = _p.div(_p.select(m_inf, 0.0, n), m_safe)
        h = _p.mul(m, _p.sqrt(_p.add(_p.mul(r, r), 1.0)))
    return _p.select(_isinf(a) | _isinf(b), math.inf, h)


def logaddexp(x1: ArrayLike, x2: ArrayLike, /) -> Tensor:
    """``log(exp(x1) + exp(x2))`` without overflow, element-wise, as ``numpy.logaddexp``.

    NumPy's ``npy_logaddexp``: with ``d = x1 - x2``, ``x1 + log1p(exp(-d))`` where ``d > 0``,
    else ``x2 + log1p(exp(d))``; equal infinities give themselves (``logaddexp(-inf, -inf) ==
    -inf``, ``logaddexp(inf, inf) == inf``); NaN in either operand gives NaN. Float32 operands
    are computed in float64 and rounded once. Derivatives: ``sigmoid(x1 - x2)`` and
    ``sigmoid(x2 - x1)`` (``½`` each at ties).

    Parameters
    ----------
    x1, x2 : Tensor or array_like
        Real operands; shapes broadcast, Python scalars are weak. Bool and integer operands are
        computed in float64.

    Returns
    -------
    Tensor
        The broadcast shape; the promoted float dtype.

    Raises
    ------
    ShapeError
        If the shapes do not broadcast.
    DTypeError
        For complex operands (as NumPy).

    See Also
    --------
    numpy.logaddexp

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.logaddexp(tf.asarray([1000.0, 0.0, -1e400]), tf.asarray([1000.0, 0.0, -1e400])).numpy().round(6).tolist()
    [1000.693147, 0.693147, -inf]
    """
    a, b = _real_float_operands("logaddexp", x1, x2)

    def f(x: Tensor, y: Tensor) -> Tensor:
        same_inf = _p.compare(x, y, "EQ") & _isinf(x)
        d = _p.select(same_inf, 0.0, _p.sub(x, y))
        pos = _p.compare(d, 0.0, "GT")
        hi_x = _p.add(x, _p.log1p(_p.exp(_p.neg(_p.select(pos, d, 0.0)))))
        hi_y = _p.add(y, _p.log1p(_p.exp(_p.select(pos, 0.0, d))))
        return _p.select(same_inf, x, _p.select(pos, hi_x, hi_y))

    if a.dtype == np.float32:
        return _p.cast(f(_p.convert(a, _F64), _p.convert(b, _F64)), np.float32)
    return f(a, b)

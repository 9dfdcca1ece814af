"""Element-wise functions composed from the primitives (no kernel of their own): the inverse
trigonometric and hyperbolic functions with both spellings (``arcsin``/``asin``, ...),
``arctan2``/``atan2``, ``log2``, ``log10``, ``isclose``, ``allclose`` and ``complex``.

Every function here is a short program of primitives, so it is differentiable where the maths is
and traces under ``tf.jit``. Branches are selected with the "double where" pattern (each branch
sees only inputs it is valid for), so the branch not taken contributes no NaN to a gradient.
"""

from __future__ import annotations

import builtins as _b
import math
from typing import Any

import numpy as np

from .. import prim as _p
from .._tenferro import Tensor
from ..errors import DTypeError, ShapeError
from . import complex_inverse as _cinv
from .elementwise import power
from ._common import ArrayLike, _F64, _float_input, _operands, _result_dtype, _to_common, _to_dtype

__all__ = [
    "acos",
    "acosh",
    "allclose",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "complex",
    "isclose",
    "log10",
    "log2",
    "pow",
]


_LN2 = math.log(2.0)


def _via_f64(fn: Any, *ts: Tensor) -> Tensor:
    """``fn(*ts)``, computed in float64 and rounded back for float32 operands (the compositions
    round several times; in float64 they stay within 0.5 ulp of float32)."""
    if ts[0].dtype != np.float32:
        return fn(*ts)
    return _p.cast(fn(*(_p.convert(t, _F64) for t in ts)), ts[0].dtype)


def _with_values_of(x: Tensor, mask: Tensor, values: Tensor) -> Tensor:
    """``values`` where ``mask``, else ``x``, with the derivative of ``x`` everywhere (the
    correction ``values - x`` is detached): for elements where ``x`` has the right derivative and
    ``values`` the right (exact) value."""
    correction = _p.select(mask, _p.sub(values, x), 0.0)
    return _p.add(x, correction.detach())


def _negative_or_minus_zero(x: Tensor) -> Tensor:
    """``x < 0``, or ``x`` is ``-0.0`` (where ``1/x`` is ``-inf``); false for NaN."""
    return _p.compare(_p.select(_p.compare(x, 0.0, "EQ"), _p.div(1.0, x), x), 0.0, "LT")


def _one_like(x: Tensor) -> Tensor:
    """Ones of ``x``'s shape and dtype, exact for every ``x`` (``x*0 + 1`` is NaN at inf)."""
    from .creation import full_like

    return full_like(x, 1.0)


def _atan2(y: Tensor, x: Tensor) -> Tensor:
    """``atan2(y, x)`` for real tensors of one dtype and shape.

    The angle is the imaginary part of ``log(x + 1j*y)`` (the complex logarithm's imaginary part
    is ``atan2(Im, Re)``). Around it: infinite operands are replaced by ``±1`` and the finite one
    by ``±0`` (the same quadrant, C99's special values), magnitudes above ``2**500`` (``2**100``
    in float32) are scaled by a power of two (exact) so ``log|z|`` stays finite, and ``y = ±0``
    takes the IEEE 754 values (``±0`` for ``x > 0`` or ``+0``, ``±pi`` for ``x < 0`` or ``-0``,
    which the product ``1j*y`` cannot carry) with the derivative of ``y/x``. Each branch sees
    only inputs it is valid for, so no NaN reaches a gradient from the branch not taken."""
    f32 = y.dtype == np.float32
    cdt = np.dtype(np.complex64) if f32 else np.dtype(np.complex128)
    # The scale keeps |z| below overflow and the smaller operand above underflow wherever
    # y/x itself is representable (2**-600 flushed atan2(5.9e-158, 8.2e153) = 7.2e-312 to 0).
    big, scale = (2.0**100, 2.0**-64) if f32 else (2.0**500, 2.0**-100)
    inf_y = _p.compare(_p.abs(y), math.inf, "EQ")
    inf_x = _p.compare(_p.abs(x), math.inf, "EQ")
    any_inf = inf_y | inf_x
    ys = _p.select(any_inf, _p.select(inf_y, _p.sign(y), _p.mul(y, 0.0)), y)
    xs = _p.select(any_inf, _p.select(inf_x, _p.sign(x), _p.mul(x, 0.0)), x)
    large = _p.compare(_p.maximum(_p.abs(ys), _p.abs(xs)), big, "GT")
    ys = _p.select(large, _p.mul(ys, scale), ys)
    xs = _p.select(large, _p.mul(xs, scale), xs)
    y_zero = _p.compare(ys, 0.0, "EQ")
    x_log = _p.select(y_zero, _one_like(xs), xs)  # log(0) is never taken
    z = _p.add(_p.convert(x_log, cdt), _p.mul(_p.convert(ys, cdt), 1j))
    lz = _p.log(z)
    r = _p.cast(_p.mul(lz, -1j), y.dtype)  # Im log z (finite Re log z: exact)
    base = _p.select(_negative_or_minus_zero(xs), math.pi, 0.0)
    base = _p.select(_p.compare(xs, xs, "NE"), math.nan, base)
    signed = _p.select(_negative_or_minus_zero(ys), _p.neg(base), base)
    signed = _p.cast(signed, y.dtype) if signed.dtype != y.dtype else signed  # pi rounded
    q = _p.div(
        _p.select(y_zero, ys, _p.mul(ys, 0.0)), _p.select(_p.compare(xs, 0.0, "EQ"), 1.0, xs)
    )
    fixed = _p.sub(signed, _p.sub(q.detach(), q))  # keeps the sign of a zero `signed`
    return _p.select(y_zero, fixed, r)


def _atan2_operands(op: str, x1: ArrayLike, x2: ArrayLike) -> tuple[Tensor, Tensor]:
    """Both operands as real floating tensors of the promoted dtype (ints and bools to float64)
    and the broadcast shape."""
    from .layout import broadcast_to

    a, b = _operands(x1, x2)
    dt = _result_dtype(a, b)
    if dt.kind == "c":
        raise DTypeError(f"{op}: complex inputs are not supported (got {dt}), as NumPy's arctan2")
    if dt.kind in "biu":
        dt = _F64
    a, b = _to_common([a, b], dt)
    try:
        shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    except ValueError:
        raise ShapeError(
            f"{op}: operands could not be broadcast together with shapes {tuple(a.shape)} {tuple(b.shape)}"
        ) from None
    return broadcast_to(a, shape), broadcast_to(b, shape)


def arctan2(x1: ArrayLike, x2: ArrayLike, /) -> Tensor:
    """Angle of the point ``(x2, x1)``: ``atan2(x1, x2)`` in ``[-pi, pi]``, element-wise, as
    ``numpy.arctan2`` (alias ``atan2``, the Array API's name).

    Composed from primitives (there is no ``atan2`` kernel): the imaginary part of the complex
    ``prim.log`` of ``x2 + 1j*x1``, with the IEEE 754 special values for infinities and signed
    zeros (``atan2(±0, -0.0) = ±pi``, ``atan2(±inf, ±inf) = ±pi/4`` or ``±3pi/4``) and the
    derivative ``(x2, -x1) / (x1**2 + x2**2)``. Values agree with NumPy's ``arctan2`` to a few
    ulp (tests/test_array_api_names.py measures it).

    Parameters
    ----------
    x1, x2 : Tensor or array_like
        Real; broadcast together. Booleans and integers are computed in float64.

    Returns
    -------
    Tensor
        The promoted real floating dtype.

    Raises
    ------
    DTypeError
        For complex operands (NumPy has no complex ``arctan2`` either).
    ShapeError
        If the shapes do not broadcast.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.arctan2(tf.asarray([1.0, -1.0, 0.0]), tf.asarray([1.0, -1.0, -1.0])).numpy().round(6).tolist()
    [0.785398, -2.356194, 3.141593]
    """
    y, x = _atan2_operands("arctan2", x1, x2)
    return _via_f64(_atan2, y, x)


def arctan(x: ArrayLike, /) -> Tensor:
    """Inverse tangent in ``(-pi/2, pi/2)``, element-wise, as ``numpy.arctan`` (alias ``atan``):
    ``arctan2(x, 1)`` (see :func:`arctan2` for the lowering and accuracy).

    Parameters
    ----------
    x : Tensor or array_like
        Real or complex (booleans and integers are computed in float64).

    Returns
    -------
    Tensor
        Same shape; float dtype.

    Complex inputs (complex64/complex128) take the principal branch with C99's special values
    (NumPy's), see :mod:`tenferro._numpy_api.complex_inverse`.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.arctan(tf.asarray([0.0, 1.0, float("inf")])).numpy().round(6).tolist()
    [0.0, 0.785398, 1.570796]
    """
    t = _float_input(x)
    if t.dtype.kind == "c":
        return _cinv.catan(t)  # principal branch, C99 special values
    return _via_f64(lambda u: _atan2(u, _one_like(u)), t)


def _sqrt_one_minus_square(t: Tensor) -> Tensor:
    """``sqrt((1 - t) * (1 + t))``: ``1 - t**2`` without cancellation near ``|t| = 1``."""
    return _p.sqrt(_p.mul(_p.sub(1.0, t), _p.add(t, 1.0)))


def arcsin(x: ArrayLike, /) -> Tensor:
    """Inverse sine in ``[-pi/2, pi/2]``, element-wise, as ``numpy.arcsin`` (alias ``asin``):
    ``arctan2(x, sqrt((1 - x)(1 + x)))``; NaN outside ``[-1, 1]``.

    Parameters
    ----------
    x : Tensor or array_like
        Real or complex (booleans and integers are computed in float64).

    Returns
    -------
    Tensor
        Same shape; float dtype.

    Complex inputs (complex64/complex128) take the principal branch with C99's special values
    (NumPy's), see :mod:`tenferro._numpy_api.complex_inverse`.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.arcsin(tf.asarray([0.0, 0.5, 1.0])).numpy().round(6).tolist()
    [0.0, 0.523599, 1.570796]
    """
    t = _float_input(x)
    if t.dtype.kind == "c":
        return _cinv.casin(t)  # principal branch, C99 special values
    return _via_f64(lambda u: _atan2(u, _sqrt_one_minus_square(u)), t)


def arccos(x: ArrayLike, /) -> Tensor:
    """Inverse cosine in ``[0, pi]``, element-wise, as ``numpy.arccos`` (alias ``acos``):
    ``arctan2(sqrt((1 - x)(1 + x)), x)``; NaN outside ``[-1, 1]``.

    Parameters
    ----------
    x : Tensor or array_like
        Real or complex (booleans and integers are computed in float64).

    Returns
    -------
    Tensor
        Same shape; float dtype.

    Complex inputs (complex64/complex128) take the principal branch with C99's special values
    (NumPy's), see :mod:`tenferro._numpy_api.complex_inverse`.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.arccos(tf.asarray([1.0, 0.0, -1.0])).numpy().round(6).tolist()
    [0.0, 1.570796, 3.141593]
    """
    t = _float_input(x)
    if t.dtype.kind == "c":
        return _cinv.cacos(t)  # principal branch, C99 special values
    return _via_f64(lambda u: _atan2(_sqrt_one_minus_square(u), u), t)


def _odd(f: Any, t: Tensor) -> Tensor:
    """``f`` (defined for ``t >= 0``) extended as an odd function, ``-f(-t)`` below zero and at
    ``-0.0`` (so the sign of zero is kept); the derivative at ``+0`` is ``f'(0)``."""
    neg = _negative_or_minus_zero(t)
    a = _p.select(neg, _p.neg(t), t)
    v = f(a)
    return _p.select(neg, _p.neg(v), v)


def _large_split(t: Tensor, limit: float, small: Any, large: Any, small_safe: float) -> Tensor:
    """``large(t)`` where ``t > limit``, else ``small(t)``; each branch is fed only inputs it
    has finite derivatives at (``limit`` and ``small_safe`` elsewhere), so the branch not taken
    adds no NaN to a gradient."""
    is_large = _p.compare(t, limit, "GT")
    one = _one_like(t)
    return _p.select(
        is_large,
        large(_p.select(is_large, t, _p.mul(one, limit))),
        small(_p.select(is_large, _p.mul(one, small_safe), t)),
    )


def arcsinh(x: ArrayLike, /) -> Tensor:
    """Inverse hyperbolic sine, element-wise, as ``numpy.arcsinh`` (alias ``asinh``).

    fdlibm's formulas: ``log1p(t + t**2 / (1 + sqrt(1 + t**2)))`` for ``t = |x| <= 2**28`` and
    ``log(t) + log(2)`` above, odd in ``x`` (``-0.0`` stays ``-0.0``).

    Parameters
    ----------
    x : Tensor or array_like
        Real or complex (booleans and integers are computed in float64).

    Returns
    -------
    Tensor
        Same shape; float dtype.

    Complex inputs (complex64/complex128) take the principal branch with C99's special values
    (NumPy's), see :mod:`tenferro._numpy_api.complex_inverse`.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.arcsinh(tf.asarray([0.0, 1.0, -1.0])).numpy().round(6).tolist()
    [0.0, 0.881374, -0.881374]
    """
    t = _float_input(x)
    if t.dtype.kind == "c":
        return _cinv.casinh(t)  # principal branch, C99 special values

    def small(a: Tensor) -> Tensor:
        a2 = _p.mul(a, a)
        return _p.log1p(_p.add(a, _p.div(a2, _p.add(_p.sqrt(_p.add(a2, 1.0)), 1.0))))

    def large(a: Tensor) -> Tensor:
        return _p.add(_p.log(a), _LN2)

    return _via_f64(lambda u: _odd(lambda a: _large_split(a, 2.0**28, small, large, 0.0), u), t)


def arccosh(x: ArrayLike, /) -> Tensor:
    """Inverse hyperbolic cosine for ``x >= 1`` (NaN below), element-wise, as
    ``numpy.arccosh`` (alias ``acosh``).

    ``log1p(t + sqrt(2t + t**2))`` with ``t = x - 1`` (exact for ``x`` in ``[1, 2]``) for
    ``x <= 2**28``, ``log(x) + log(2)`` above.

    Parameters
    ----------
    x : Tensor or array_like
        Real or complex (booleans and integers are computed in float64).

    Returns
    -------
    Tensor
        Same shape; float dtype.

    Complex inputs (complex64/complex128) take the principal branch with C99's special values
    (NumPy's), see :mod:`tenferro._numpy_api.complex_inverse`.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.arccosh(tf.asarray([1.0, 2.0])).numpy().round(6).tolist()
    [0.0, 1.316958]
    """
    t = _float_input(x)
    if t.dtype.kind == "c":
        return _cinv.cacosh(t)  # principal branch, C99 special values

    def small(a: Tensor) -> Tensor:
        u = _p.sub(a, 1.0)
        return _p.log1p(_p.add(u, _p.sqrt(_p.mul(u, _p.add(u, 2.0)))))

    def large(a: Tensor) -> Tensor:
        return _p.add(_p.log(a), _LN2)

    def f(u: Tensor) -> Tensor:
        # NaN below 1 explicitly (for x < -1 the formula can round to a finite value).
        return _p.select(
            _p.compare(u, 1.0, "LT"), math.nan, _large_split(u, 2.0**28, small, large, 2.0)
        )

    return _via_f64(f, t)


def arctanh(x: ArrayLike, /) -> Tensor:
    """Inverse hyperbolic tangent, element-wise, as ``numpy.arctanh`` (alias ``atanh``):
    ``±inf`` at ``±1``, NaN beyond.

    fdlibm's ``0.5 * log1p(2t / (1 - t))`` for ``t = |x|``, odd in ``x``.

    Parameters
    ----------
    x : Tensor or array_like
        Real or complex (booleans and integers are computed in float64).

    Returns
    -------
    Tensor
        Same shape; float dtype.

    Complex inputs (complex64/complex128) take the principal branch with C99's special values
    (NumPy's), see :mod:`tenferro._numpy_api.complex_inverse`.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.arctanh(tf.asarray([0.0, 0.5, -1.0])).numpy().round(6).tolist()
    [0.0, 0.549306, -inf]
    """
    t = _float_input(x)
    if t.dtype.kind == "c":
        return _cinv.catanh(t)  # principal branch, C99 special values

    def f(a: Tensor) -> Tensor:
        return _p.mul(_p.log1p(_p.div(_p.mul(a, 2.0), _p.sub(1.0, a))), 0.5)

    return _via_f64(lambda u: _odd(f, u), t)


asin, acos, atan, atan2 = arcsin, arccos, arctan, arctan2
asinh, acosh, atanh = arcsinh, arccosh, arctanh

#: The Array API's name of :func:`power`.
pow = power  # noqa: A001


# log_b(e), correctly rounded (1/log(b) computed in float64 is one ulp off for b = 10).
_LOG_E = {2.0: 1.442695040888963407359924681001892137, 10.0: 0.434294481903251827651128918916605082}


def _log_base(x: ArrayLike, base: float) -> Tensor:
    t = _float_input(x)
    if t.dtype.kind == "c":
        return _p.scale_real(_p.log(t), _LOG_E[base])  # NumPy: each part of the log times log_b(e)
    return _via_f64(lambda u: _snapped_log(u, base), t)


def _snapped_log(t: Tensor, base: float) -> Tensor:
    """``log(t) * log_b(e)``, exact at powers of the base as the C library's ``log2``/``log10``
    that NumPy calls.

    With ``k = round(r)``: where ``p = base**k`` (``prim.pow``, which may be an ulp or two off for
    large ``k``) equals ``t`` — within ``2**-52`` relative (an ulp) for ``|k| >= 2``, where ``log_b`` of
    ``t`` then still rounds to ``k`` — and ``r`` is within 16 ulp of ``k`` (which excludes
    subnormal ``t``, whose nearest power is inexact), the value is ``k``. The derivative stays
    that of ``r``."""
    r = _p.mul(_p.log(t), _LOG_E[base])
    k = _p.round(r)
    tol = _p.mul(_p.maximum(_p.abs(k), 1.0), 16 * 2.0**-52)
    near_k = _p.compare(_p.abs(_p.sub(r, k)), tol, "LE")
    p = _p.pow(_p.mul(_one_like(t), base), k)
    slack = _p.select(_p.compare(_p.abs(k), 2.0, "GE"), _p.mul(_p.abs(t), 2.0**-52), 0.0)
    exact = _p.compare(_p.abs(_p.sub(p, t)), slack, "LE") & near_k
    return _with_values_of(r, exact, k)


def log2(x: ArrayLike, /) -> Tensor:
    """Base-2 logarithm, element-wise, as ``numpy.log2``.

    ``prim.log(x) * log2(e)``, snapped to the integer ``k`` where ``2**k == x`` exactly (so
    powers of two give exact integers, as the C library's ``log2``); elsewhere within 2 ulp of
    NumPy in float64 (measured in tests/test_array_api_names.py). Complex inputs: both parts of
    the complex log times ``log2(e)`` (``prim.scale_real``), as NumPy.

    Parameters
    ----------
    x : Tensor or array_like
        Booleans and integers are computed in float64.

    Returns
    -------
    Tensor
        Same shape; float or complex dtype.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.log2(tf.asarray([1.0, 8.0, 0.5, 0.0])).tolist()
    [0.0, 3.0, -1.0, -inf]
    """
    return _log_base(x, 2.0)


def log10(x: ArrayLike, /) -> Tensor:
    """Base-10 logarithm, element-wise, as ``numpy.log10``.

    ``prim.log(x) * log10(e)``, snapped to the integer ``k`` where ``10**k == x`` (the
    float nearest to it), so ``log10(1000.0)`` is exactly ``3.0`` as in NumPy; elsewhere within
    2 ulp of NumPy in float64 (measured in tests/test_array_api_names.py). Complex inputs: both parts
    of the complex log times ``log10(e)`` (``prim.scale_real``), as NumPy.

    Parameters
    ----------
    x : Tensor or array_like
        Booleans and integers are computed in float64.

    Returns
    -------
    Tensor
        Same shape; float or complex dtype.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.log10(tf.asarray([1.0, 1000.0, 1e-5])).tolist()
    [0.0, 3.0, -5.0]
    """
    return _log_base(x, 10.0)


def isclose(
    a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Tensor:
    """Element-wise closeness, as ``numpy.isclose`` (NumPy 2's formula):
    ``(|a - b| <= atol + rtol * |b| and b finite) or a == b``, plus ``isnan(a) & isnan(b)`` with
    ``equal_nan``. Not symmetric in ``a``, ``b`` (as NumPy). ``b`` is computed in a floating
    dtype.

    Parameters
    ----------
    a, b : Tensor or array_like
        Broadcast together; any dtype (complex: moduli).
    rtol, atol : float
    equal_nan : bool

    Returns
    -------
    Tensor
        bool, the broadcast shape (no derivative).

    Raises
    ------
    ShapeError
        If the shapes do not broadcast.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.isclose(tf.asarray([1.0, 1.1, float("nan")]), 1.0 + 1e-9).tolist()
    [True, False, False]
    """
    from .elementwise import (
        abs as _abs,
        add,
        equal,
        isfinite,
        isnan,
        less_equal,
        multiply,
        subtract,
    )

    x, y = _operands(a, b)
    if isinstance(y, Tensor):
        y = _to_dtype(y, _F64) if y.dtype.kind in "biu" else y
        tol = add(multiply(_abs(y), rtol), atol)
    else:
        y = float(y) if type(y) in (bool, int) else y
        tol = atol + rtol * _b.abs(y)  # a Python number, weak as in NumPy
    result = (less_equal(_abs(subtract(x, y)), tol) & isfinite(y)) | equal(x, y)
    if equal_nan:
        result = result | (isnan(x) & isnan(y))
    return result


def allclose(
    a: ArrayLike, b: ArrayLike, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """Whether every element is close, as ``numpy.allclose``: ``all(isclose(a, b, ...))`` as a
    Python bool.

    A Python bool needs the values, so under ``tf.jit`` this raises ``ConcretizationError``
    (use ``tf.all(tf.isclose(...))``, a traced bool tensor, there).

    Parameters
    ----------
    a, b : Tensor or array_like
    rtol, atol : float
    equal_nan : bool

    Returns
    -------
    bool

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.allclose(tf.asarray([1.0, 2.0]), [1.0, 2.0 + 1e-9])
    True
    """
    from .reductions import all as _all

    return bool(_all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def complex(real: ArrayLike, imag: ArrayLike, /) -> Tensor:  # noqa: A001 - autoray's name
    """A complex tensor from real and imaginary parts: ``real + 1j * imag``, evaluated as NumPy
    evaluates that expression (the spelling autoray's ``do("complex", re, im)`` uses).

    ``prim.convert`` to complex, ``prim.mul`` by ``1j`` and ``prim.add``; differentiable in both
    parts. As in NumPy's ``re + 1j*im``, an infinite imaginary part gives a NaN real part
    (``1j * inf = nan + inf j``) and ``-0.0`` imaginary parts become ``+0.0``.

    Parameters
    ----------
    real, imag : Tensor or array_like
        Real (bool, integer or floating); broadcast together.

    Returns
    -------
    Tensor
        complex64 when the promoted dtype is float32, else complex128 (NumPy's ``re + 1j*im``).

    Raises
    ------
    DTypeError
        For complex operands.
    ShapeError
        If the shapes do not broadcast.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.complex(tf.asarray([1.0, 2.0]), tf.asarray([0.5, -1.0])).tolist()
    [(1+0.5j), (2-1j)]
    """
    re, im = _operands(real, imag)
    dt = _result_dtype(re, im)
    if dt.kind == "c":
        raise DTypeError(f"complex: the parts must be real, got {dt}")
    cdt = np.dtype(np.complex64) if dt == np.float32 else np.dtype(np.complex128)
    re, im = _to_common([re, im], cdt)
    return _p.add(re, _p.mul(im, 1j))

"""Complex inverse trigonometric and hyperbolic functions (``arcsin``, ``arccos``, ``arctan``,
``arcsinh``, ``arccosh``, ``arctanh`` of complex64/complex128 tensors), composed from primitives.

Principal branches and special values as C99 Annex G (``casinh``, ``cacos``, ``catanh``, ...),
which NumPy's ``npymath`` and the Array API standard follow; the identities
``asin z = -i asinh(iz)``, ``atan z = -i atanh(iz)``, ``acos z = pi/2 - asin z`` and FreeBSD's
``cacosh`` from ``cacos`` give the others, with the signs of zeros kept on the branch cuts:

* ``asinh``: ``log1p(w + w**2 / (1 + sqrt(1 + w**2)))`` for ``Re w >= 0`` (odd symmetry for the
  left half plane; no cancellation near 0), ``log(2) + log(w)`` for ``|w| > 2**28`` and for
  infinite parts (which ``log`` maps to C99's values);
* ``atanh``: from the real parts ``x``, ``y``: ``Re = log1p(4x / ((1-x)**2 + y**2)) / 4``,
  ``Im = atan2(2y, (1-x)(1+x) - y**2) / 2`` (FreeBSD's ``catanh``), and
  ``1/z ± i·pi/2`` for ``|z| > 2**28``.

Every function is a program of primitives (``select`` with each branch fed only inputs it is
valid for), so it is differentiable where the function is holomorphic (off the branch cuts):
``d/dz asin z = 1/sqrt(1 - z**2)``, ``d/dz atanh z = 1/(1 - z**2)``, ... in tenferro's complex
convention (autodiff.md). float32 parts are computed in float64 and rounded once.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import prim as _p
from .._tenferro import Tensor
from .elementwise import logical_not

_C128 = np.dtype(np.complex128)
_F64 = np.dtype(np.float64)
_BIG = 2.0**28
_LN2 = math.log(2.0)
_EPS = 2.0**-52
_TINY = math.sqrt(6.0 * _EPS) / 4  # FreeBSD's SQRT_6_EPSILON / 4
_FOUR_SQRT_MIN = 2.0**-509
_A_CROSSOVER = 10.0
_B_CROSSOVER = 0.6417


def _re(z: Tensor) -> Tensor:
    return _p.cast(z, _F64)


def _im(z: Tensor) -> Tensor:
    # scale_complex by an imaginary constant scales each part alone: exact for inf and NaN.
    return _p.cast(_p.scale_complex(z, -1j), _F64)


def _mk(x: Tensor, y: Tensor) -> Tensor:
    """``x + i·y`` exactly (infinite and NaN parts, signed zeros): ``conj(x) + i·y``."""
    return _p.add(_p.conj(_p.convert(x, _C128)), _p.scale_complex(_p.convert(y, _C128), 1j))


def _neg_or_minus_zero(x: Tensor) -> Tensor:
    """``x < 0`` or ``x`` is ``-0.0`` (false for NaN)."""
    return _p.compare(_p.select(_p.compare(x, 0.0, "EQ"), _p.div(1.0, x), x), 0.0, "LT")


def _copysign(c: Any, y: Tensor) -> Tensor:
    """``copysign(c, y)`` for a non-negative ``c`` (a tensor or a number)."""
    neg = _neg_or_minus_zero(y)
    if isinstance(c, Tensor):
        return _p.select(neg, _p.neg(c), c)
    return _p.select(neg, -float(c), float(c))


def _with_values_of(x: Tensor, mask: Tensor, values: Tensor) -> Tensor:
    """``values`` where ``mask``, else ``x``, with ``x``'s derivative everywhere:
    ``values - (x̄ - x)`` there (``x̄`` detached; subtracting the zero keeps a ``-0`` value,
    which adding a correction to ``x`` cannot)."""
    return _p.select(mask, _p.sub(values.detach(), _p.sub(x.detach(), x)), x)


def _isnan(x: Tensor) -> Tensor:
    return _p.compare(x, x, "NE")


def _isinf(x: Tensor) -> Tensor:
    return _p.compare(_p.abs(x), math.inf, "EQ")


def _not(m: Tensor) -> Tensor:
    return logical_not(m)


def _hull_f(a: Tensor, b: Tensor, h: Tensor) -> Tensor:
    """Hull et al.'s ``f(a, b) = (hypot(a, b) - b)/2`` without cancellation, ``h = hypot(a, b)``:
    ``(h - b)/2`` for ``b <= 0`` and ``a**2/(h + b)/2`` for ``b > 0`` (the second fed
    ``b = h = 1`` where the first is taken)."""
    pos = _p.compare(b, 0.0, "GT")
    bp, hp = _p.select(pos, b, 1.0), _p.select(pos, h, 1.0)
    q = _p.div(_p.mul(a, a), _p.mul(_p.add(hp, bp), 2.0))
    return _p.select(pos, q, _p.mul(_p.sub(h, b), 0.5))


def _asinh_hft(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """``asinh(x + iy)`` for ``x, y >= 0``, finite, ``max(x, y) <= 2**28`` and not both below
    ``sqrt(6 eps)/4``: Hull, Fairgrieve & Tang (ACM TOMS 23, 1997) as FreeBSD's ``catrig.c``
    (``do_hard_work``): ``Re = log(A + sqrt(A**2 - 1))``, ``Im = asin(y/A)`` with
    ``A = (|z + i| + |z - i|)/2``, rewritten without cancellation where ``A`` is near 1 or
    ``y/A`` near 1. Every branch is fed values it is valid for, so the derivative is the
    branch formula's (which equals the function's to rounding)."""
    from .mathfuncs import _atan2

    eps = _EPS
    r = _p.abs(_mk(x, _p.add(y, 1.0)))  # |z + i|
    s = _p.abs(_mk(x, _p.sub(y, 1.0)))  # |z - i|
    a0 = _p.mul(_p.add(r, s), 0.5)
    a = _p.select(_p.compare(a0, 1.0, "LT"), 1.0, a0)  # A >= 1 (rounding)
    y_is1 = _p.compare(y, 1.0, "EQ")
    x_big = _p.compare(x, _p.mul(_p.abs(_p.sub(y, 1.0)), eps), "GE")  # x >= eps|y - 1|
    y_lt1 = _p.compare(y, 1.0, "LT")

    # Real part.
    r1 = y_is1 & _p.compare(x, eps * eps / 128, "LT")
    r2 = _not(r1) & x_big
    r3 = _not(r1) & _not(x_big) & y_lt1
    rx1 = _p.sqrt(_p.select(r1, x, 1.0))
    x2, y2 = _p.select(r2, x, 1.0), _p.select(r2, y, 1.0)
    rr2, s2 = _p.select(r2, r, math.sqrt(5.0)), _p.select(r2, s, 1.0)
    a2 = _p.select(r2, a, (math.sqrt(5.0) + 1.0) / 2)
    am1 = _p.add(_hull_f(x2, _p.add(y2, 1.0), rr2), _hull_f(x2, _p.sub(1.0, y2), s2))
    rx2 = _p.log1p(_p.add(am1, _p.sqrt(_p.mul(am1, _p.add(a2, 1.0)))))
    y3 = _p.select(r3, y, 0.0)
    rx3 = _p.div(x, _p.sqrt(_p.mul(_p.sub(1.0, y3), _p.add(y3, 1.0))))
    y4 = _p.select(r1 | r2 | r3, 2.0, y)  # y > 1 in the last case
    y4m1 = _p.sub(y4, 1.0)
    rx4 = _p.log1p(_p.add(y4m1, _p.sqrt(_p.mul(y4m1, _p.add(y4, 1.0)))))
    small_a = _p.compare(a, _A_CROSSOVER, "LT")
    a5 = _p.select(small_a, _A_CROSSOVER, a)
    rx5 = _p.log(_p.add(a5, _p.sqrt(_p.sub(_p.mul(a5, a5), 1.0))))
    rx = _p.select(r1, rx1, _p.select(r2, rx2, _p.select(r3, rx3, rx4)))
    rx = _p.select(small_a, rx, rx5)

    # Imaginary part.
    q0 = _p.compare(y, _FOUR_SQRT_MIN, "LT")  # y/A could underflow: scaled atan2
    ry0 = _atan2(_p.mul(y, 2.0 / eps), _p.mul(a, 2.0 / eps))
    b = _p.div(y, a)
    q1 = _not(q0) & _p.compare(b, _B_CROSSOVER, "LE")
    b1 = _p.select(q1, b, 0.0)
    ry1 = _atan2(b1, _p.sqrt(_p.mul(_p.sub(1.0, b1), _p.add(b1, 1.0))))  # asin(B)
    # B near 1: Im = atan2(y, sqrt(A**2 - y**2)), the root from f as above.
    q2a = y_is1 & _p.compare(x, eps / 128, "LT")
    q2b = _not(q2a) & x_big
    q2c = _not(q2a) & _not(x_big) & _not(y_lt1)
    sa = _p.mul(_p.sqrt(_p.select(q2a, x, 1.0)), _p.sqrt(_p.mul(_p.add(a, y), 0.5)))
    xb, yb = _p.select(q2b, x, 1.0), _p.select(q2b, y, 1.0)
    rb, sb = _p.select(q2b, r, math.sqrt(5.0)), _p.select(q2b, s, 1.0)
    ab = _p.select(q2b, a, (math.sqrt(5.0) + 1.0) / 2)
    amy = _p.add(_hull_f(xb, _p.add(yb, 1.0), rb), _hull_f(xb, _p.sub(yb, 1.0), sb))
    s_b = _p.sqrt(_p.mul(amy, _p.add(ab, yb)))
    yc = _p.select(q2c, y, 2.0)
    k = 4.0 / eps / eps
    s_c = _p.div(_p.mul(_p.mul(x, k), yc), _p.sqrt(_p.mul(_p.add(yc, 1.0), _p.sub(yc, 1.0))))
    yd = _p.select(q2a | q2b | q2c, 0.0, y)  # y < 1 in the last case
    s_d = _p.sqrt(_p.mul(_p.sub(1.0, yd), _p.add(yd, 1.0)))
    root = _p.select(q2a, sa, _p.select(q2b, s_b, _p.select(q2c, s_c, s_d)))
    new_y = _p.select(q2c, _p.mul(yc, k), y)
    ry2 = _atan2(new_y, root)
    ry = _p.select(q0, ry0, _p.select(q1, ry1, ry2))
    return rx, ry


def _asinh_parts(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """Real and imaginary parts of ``asinh(x + iy)`` (float64 parts)."""
    neg = _neg_or_minus_zero(x)
    xs = _p.select(neg, _p.neg(x), x)
    ys = _p.select(neg, _p.neg(y), y)
    ax, ay = _p.abs(xs), _p.abs(ys)
    finite = _p.compare(ax, _BIG, "LE") & _p.compare(ay, _BIG, "LE")  # false for NaN and inf
    # |z| < sqrt(6 eps)/4: asinh z = z (the cubic term is below half an ulp).
    tiny = _p.compare(ax, _TINY, "LT") & _p.compare(ay, _TINY, "LT")
    hard = finite & _not(tiny)
    # Hull et al. on the first quadrant (y folded by its sign), fed (1/2, 1/2) elsewhere.
    yneg = _neg_or_minus_zero(ys)
    yq = _p.select(yneg, _p.neg(ys), ys)
    rx, ry = _asinh_hft(_p.select(hard, xs, 0.5), _p.select(hard, yq, 0.5))
    ry = _p.select(yneg, _p.neg(ry), ry)
    u = _p.select(tiny, xs, rx)
    v = _p.select(tiny, ys, ry)
    # Large and non-finite: log(2w) = log(w) + log 2 (C99's values of log at infinities).
    wl = _mk(_p.select(finite, _BIG * 2, xs), _p.select(finite, 0.0, ys))
    large = _p.log(wl)
    u = _p.select(finite, u, _p.add(_re(large), _LN2))
    v = _p.select(finite, v, _im(large))
    u = _p.select(neg, _p.neg(u), u)
    v = _p.select(neg, _p.neg(v), v)
    # Exact values the roundings above can miss (values only; the derivative stays the
    # formula's): the real axis maps to itself (Im = ±0 with the sign of y, also for x NaN:
    # asinh(NaN ± 0i) = NaN ± 0i), the imaginary segment |y| <= 1 too (Re = ±0 with the sign of
    # x), and Im asinh(±0 + iy) = ±pi/2 for |y| >= 1.
    y_zero = _p.compare(y, 0.0, "EQ")
    x_zero = _p.compare(x, 0.0, "EQ")
    on_cut = x_zero & _p.compare(_p.abs(y), 1.0, "GE")
    u = _with_values_of(u, x_zero & _p.compare(_p.abs(y), 1.0, "LE"), x)
    v = _with_values_of(v, on_cut, _copysign(math.pi / 2, y))
    v = _p.select(_isnan(x) & y_zero, y, _with_values_of(v, y_zero, y))
    return u, v


def _atanh_parts(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """Real and imaginary parts of ``atanh(x + iy)`` (float64 parts).

    ``atanh`` is odd, so a negative real part is folded to a positive one first (as FreeBSD's
    ``catanh`` does with ``|x|``): the ``log1p`` of the real part then never cancels near
    ``x = -1``."""
    neg = _p.compare(x, 0.0, "LT")
    re, im = _atanh_parts_right(_p.select(neg, _p.neg(x), x), _p.select(neg, _p.neg(y), y))
    return _p.select(neg, _p.neg(re), re), _p.select(neg, _p.neg(im), im)


def _atanh_parts_right(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """:func:`_atanh_parts` for ``x >= 0`` or NaN (the formulas below)."""
    from .mathfuncs import _atan2

    ax, ay = _p.abs(x), _p.abs(y)
    finite = _p.compare(ax, _BIG, "LE") & _p.compare(ay, _BIG, "LE")
    big = _p.compare(_p.maximum(ax, ay), _BIG, "GT") & _p.compare(
        _p.maximum(ax, ay), math.inf, "LT"
    )
    big = big & _not(_isnan(x)) & _not(_isnan(y))
    # Moderate: FreeBSD's catanh formulas, fed (0, 0) elsewhere.
    xf = _p.select(finite, x, 0.0)
    yf = _p.select(finite, y, 0.0)
    one_m = _p.sub(1.0, xf)
    den = _p.add(_p.mul(one_m, one_m), _p.mul(yf, yf))
    re_s = _p.mul(_p.log1p(_p.div(_p.mul(xf, 4.0), den)), 0.25)
    # On the pole's line x = 1 with |y| < eps, 4/y**2 overflows: FreeBSD's (ln 2 - log|y|)/2.
    pole = (
        _p.compare(xf, 1.0, "EQ") & _p.compare(_p.abs(yf), _EPS, "LT") & _p.compare(yf, 0.0, "NE")
    )
    re_pole = _p.mul(_p.sub(math.log(2.0), _p.log(_p.abs(_p.select(pole, yf, 1.0)))), 0.5)
    re_s = _p.select(pole, re_pole, re_s)
    im_s = _p.mul(
        _atan2(_p.mul(yf, 2.0), _p.sub(_p.mul(one_m, _p.add(xf, 1.0)), _p.mul(yf, yf))), 0.5
    )
    # Large finite: 1/z ± i·pi/2 (the series of atanh(1/z) past its first term is below eps).
    xb = _p.select(big, x, _BIG * 2)
    yb = _p.select(big, y, 0.0)
    s = _p.maximum(_p.abs(xb), _p.abs(yb))
    xn, yn = _p.div(xb, s), _p.div(yb, s)
    r2 = _p.mul(_p.add(_p.mul(xn, xn), _p.mul(yn, yn)), s)
    re_b = _p.div(xn, r2)
    im_b = _p.sub(_copysign(math.pi / 2, yb), _p.div(yn, r2))
    re = _p.select(finite, re_s, re_b)
    im = _p.select(finite, im_s, im_b)
    # Infinite and NaN parts (C99 Annex G, catanh).
    x_nan, y_nan, x_inf, y_inf = _isnan(x), _isnan(y), _isinf(x), _isinf(y)
    zero_x = _copysign(0.0, _p.select(x_nan, 0.0, x))
    nonfinite = x_nan | y_nan | x_inf | y_inf
    re_n = _p.select(y_inf | x_inf, zero_x, _p.select(_p.compare(x, 0.0, "EQ"), x, math.nan))
    im_n = _p.select(
        y_inf | (x_inf & _not(y_nan)), _copysign(math.pi / 2, _p.select(y_nan, 0.0, y)), math.nan
    )
    return _p.select(nonfinite, re_n, re), _p.select(nonfinite, im_n, im)


def _parts(z: Tensor) -> tuple[Tensor, Tensor]:
    z = z if z.dtype == _C128 else _p.convert(z, _C128)
    return _re(z), _im(z)


def _out(z: Tensor, re: Tensor, im: Tensor) -> Tensor:
    w = _mk(re, im)
    return w if z.dtype == _C128 else _p.cast(w, z.dtype)


def casinh(z: Tensor) -> Tensor:
    """``asinh`` of a complex tensor (see the module docstring)."""
    x, y = _parts(z)
    u, v = _asinh_parts(x, y)
    return _out(z, u, v)


def casin(z: Tensor) -> Tensor:
    """``asin z = -i·asinh(i·z)``, as FreeBSD's ``casin``: ``asinh(y + ix) = a + ib`` gives
    ``asin(x + iy) = b + ia`` (the same for finite values; no sign flips of NaN results)."""
    x, y = _parts(z)
    u, v = _asinh_parts(y, x)
    return _out(z, v, u)


def _acos_parts(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """Real and imaginary parts of ``acos(x + iy)``: ``Im = -Re asinh(y + ix)`` (as
    ``acos z = pi/2 - asin z``); ``Re = 2·atan2(Re sqrt(1 - z), Re sqrt(1 + z))`` (Kahan; no
    cancellation where ``Re acos z`` is small), ``|arg z|`` for ``|z| > 2**28`` and infinite parts
    (FreeBSD's ``cacos``), ``pi/2`` at ``±0 + NaN·i``."""
    from .mathfuncs import _atan2

    u, _ = _asinh_parts(y, x)
    finite = _p.compare(_p.abs(x), _BIG, "LE") & _p.compare(_p.abs(y), _BIG, "LE")
    zf = _mk(_p.select(finite, x, 0.0), _p.select(finite, y, 0.0))
    one = complex(1.0, -0.0)  # keeps an imaginary -0 (see _asinh_parts)
    a = _p.sqrt(_p.add(_p.neg(zf), one))
    b = _p.sqrt(_p.add(zf, one))
    re_s = _p.mul(_atan2(_re(a), _re(b)), 2.0)
    re_l = _p.abs(_atan2(_p.select(finite, 0.0, y), _p.select(finite, 1.0, x)))
    re = _p.select(finite, re_s, re_l)
    re = _p.select(_p.compare(x, 0.0, "EQ") & _isnan(y), math.pi / 2, re)
    return re, _p.neg(u)


def cacos(z: Tensor) -> Tensor:
    """``acos z`` (see :func:`_acos_parts`; ``acos(±0 + 0i) = pi/2 - 0i``)."""
    x, y = _parts(z)
    re, im = _acos_parts(x, y)
    return _out(z, re, im)


def cacosh(z: Tensor) -> Tensor:
    """``acosh`` from ``w = acos z``: ``|Im w| + i·copysign(Re w, Im z)`` (FreeBSD's ``cacosh``),
    with C99's NaN cases (``acosh(±0 + NaN i) = NaN ± i·pi/2``)."""
    x, y = _parts(z)
    rx, ry = _acos_parts(x, y)  # acos z = rx + i·ry
    rx_nan, ry_nan = _isnan(rx), _isnan(ry)
    re = _p.abs(ry)
    im = _p.select(rx_nan, math.nan, _p.select(ry_nan, rx, _copysign(_p.abs(rx), y)))
    return _out(z, re, im)


def catanh(z: Tensor) -> Tensor:
    """``atanh`` of a complex tensor (see the module docstring)."""
    x, y = _parts(z)
    u, v = _atanh_parts(x, y)
    return _out(z, u, v)


def catan(z: Tensor) -> Tensor:
    """``atan z = -i·atanh(i·z)``, as FreeBSD's ``catan``: ``atanh(y + ix) = a + ib`` gives
    ``atan(x + iy) = b + ia``."""
    x, y = _parts(z)
    u, v = _atanh_parts(y, x)
    return _out(z, v, u)

"""NumPy/SciPy reference implementations of tenferro's primitives (jax's ``lax_reference`` pattern).

Each function takes NumPy arrays (or Python scalars, which are *weak* as in NumPy 2 and tenferro)
plus the primitive's static parameters, and returns a NumPy array with **tenferro's** semantics
(ops.md), which differ from NumPy's where noted:

- integer ``div`` truncates toward zero and ``rem`` has the dividend's sign (StableHLO), integer
  division or remainder by zero raises ``ZeroDivisionError``, ``INT_MIN / -1`` wraps;
- ``pow`` of integers with a negative exponent raises ``ValueError``;
- ``sign`` of a complex number is ``z / |z|`` (0 at 0), ``abs`` of a complex number is real;
- ``reshape`` is column-major (``order="F"``);
- ``broadcast_in_dim`` follows StableHLO (input axis ``i`` becomes output axis ``dims[i]``);
- reductions keep the dtype (the sum of ``int32`` values is ``int32``), ``axes=None`` reduces
  every axis and ``axes=()`` none; ``reduce_max``/``reduce_min`` of an empty axis raise
  ``ValueError`` and propagate NaN;
- ``maximum``/``minimum``/``clamp``/ordering comparisons and ``erf`` reject complex input
  (``TypeError``, the base of ``tf.errors.DTypeError``), ``neg`` rejects bool.

``REFERENCE`` maps each primitive name of the catalog to its reference.
"""

from __future__ import annotations

import operator
import warnings
from typing import Any, Callable

import numpy as np
import scipy.special

FLOAT32 = np.dtype(np.float32)
FLOAT64 = np.dtype(np.float64)
COMPLEX64 = np.dtype(np.complex64)
COMPLEX128 = np.dtype(np.complex128)
INT32 = np.dtype(np.int32)
INT64 = np.dtype(np.int64)
BOOL = np.dtype(np.bool_)

#: The seven tenferro dtypes, in lattice order.
DTYPES = (BOOL, INT32, INT64, FLOAT32, FLOAT64, COMPLEX64, COMPLEX128)
_RANK = {d: i for i, d in enumerate(DTYPES)}


# --------------------------------------------------------------------------------------------
# Promotion (ops.md, "Dtype promotion lattice")
# --------------------------------------------------------------------------------------------


def promote(a: Any, b: Any) -> np.dtype:
    """The join of two tenferro dtypes on the promotion lattice of ops.md."""
    a, b = np.dtype(a), np.dtype(b)
    if a == b:
        return a
    lo, hi = sorted((a, b), key=_RANK.__getitem__)
    if lo == BOOL:
        return hi
    if lo == INT32 and hi == INT64:
        return INT64
    if lo.kind == "i" and hi.kind == "f":
        return FLOAT64
    if lo.kind == "i" and hi.kind == "c":
        return COMPLEX128
    if lo == FLOAT32:
        return {FLOAT64: FLOAT64, COMPLEX64: COMPLEX64, COMPLEX128: COMPLEX128}[hi]
    if lo == FLOAT64:
        return COMPLEX128
    if lo == COMPLEX64:
        return COMPLEX128
    raise AssertionError(f"unreachable: {a} {b}")  # pragma: no cover


def _is_weak(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def _weak_result(t: np.dtype, s: Any) -> np.dtype:
    """tensor dtype ⊕ weak Python scalar (NumPy 2 / JAX rules, as tenferro's ``promote_weak``)."""
    if isinstance(s, bool):
        return t
    if isinstance(s, int):
        return INT64 if t == BOOL else t
    if isinstance(s, float):
        return FLOAT64 if t.kind in "bi" else t
    return COMPLEX64 if t in (FLOAT32, COMPLEX64) else COMPLEX128


def _default_scalar_dtype(s: Any) -> np.dtype:
    if isinstance(s, bool):
        return BOOL
    if isinstance(s, int):
        return INT64
    if isinstance(s, float):
        return FLOAT64
    return COMPLEX128


def result_dtype(*args: Any) -> np.dtype:
    """Result dtype of an elementwise op over tensors (arrays) and weak Python scalars."""
    strong = [np.asarray(a).dtype for a in args if not _is_weak(a)]
    weak = [a for a in args if _is_weak(a)]
    if strong:
        dt = strong[0]
        for d in strong[1:]:
            dt = promote(dt, d)
    else:
        dt = _default_scalar_dtype(weak[0])
        weak = weak[1:]
    for s in weak:
        dt = _weak_result(dt, s)
    return dt


def _operands(*args: Any) -> tuple[np.dtype, list[np.ndarray]]:
    """Promote every operand to the common dtype (Python scalars must fit it)."""
    dt = result_dtype(*args)
    out = []
    for a in args:
        if _is_weak(a) and dt.kind in "iu" and isinstance(a, int) and not isinstance(a, bool):
            info = np.iinfo(dt)
            if not info.min <= a <= info.max:
                raise OverflowError(f"Python integer {a} out of bounds for {dt}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            out.append(np.asarray(a).astype(dt, copy=False))
    return dt, out


def _check_dtype(op: str, x: np.ndarray, *, complex_ok: bool = True, bool_ok: bool = True) -> None:
    if not complex_ok and x.dtype.kind == "c":
        raise TypeError(f"{op}: complex dtype {x.dtype} is not admitted")
    if not bool_ok and x.dtype.kind == "b":
        raise TypeError(f"{op}: bool dtype is not admitted")


def _tensor(x: Any) -> np.ndarray:
    if _is_weak(x):
        return np.asarray(x, dtype=_default_scalar_dtype(x))
    return np.asarray(x)


# --------------------------------------------------------------------------------------------
# Unary
# --------------------------------------------------------------------------------------------


def _unary(op: str, fn: Callable[[np.ndarray], np.ndarray], *, complex_ok: bool = True, bool_ok: bool = True):
    def ref(x: Any) -> np.ndarray:
        x = _tensor(x)
        _check_dtype(op, x, complex_ok=complex_ok, bool_ok=bool_ok)
        with np.errstate(all="ignore"):
            out = np.asarray(fn(x))
        return out

    ref.__name__ = op
    ref.__doc__ = f"Reference of the unary primitive ``{op}``."
    return ref


def _same_dtype(fn):
    """Apply ``fn`` and keep the input's dtype (inexact ops of a float32 stay float32)."""

    def wrapped(x: np.ndarray) -> np.ndarray:
        return np.asarray(fn(x)).astype(x.dtype, copy=False)

    return wrapped


def _neg(x: np.ndarray) -> np.ndarray:
    return np.negative(x)


def _abs(x: np.ndarray) -> np.ndarray:
    if x.dtype == BOOL:
        return x.copy()
    return np.abs(x)


def _sign(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "c":
        mag = np.abs(x)
        safe = np.where(mag == 0, 1, mag)
        return np.where(mag == 0, 0, x / safe).astype(x.dtype)
    if x.dtype == BOOL:
        return x.copy()
    return np.sign(x)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    one = np.ones((), dtype=x.dtype)
    return (one / np.sqrt(x)).astype(x.dtype, copy=False)


def _erf(x: np.ndarray) -> np.ndarray:
    return np.asarray(scipy.special.erf(x)).astype(x.dtype, copy=False)


def _float_of(x: np.ndarray) -> np.ndarray:
    """Transcendental ops of integer/bool inputs compute in float64 (NumPy's rule)."""
    return x.astype(FLOAT64) if x.dtype.kind in "bi" else x


def _transcendental(fn):
    return lambda x: fn(_float_of(x))


neg = _unary("neg", _neg, bool_ok=False)
conj = _unary("conj", lambda x: np.conj(x) if x.dtype.kind == "c" else x.copy())
abs = _unary("abs", _abs)  # noqa: A001 - the primitive's name
sign = _unary("sign", _sign)
exp = _unary("exp", _transcendental(np.exp))
log = _unary("log", _transcendental(np.log))
sin = _unary("sin", _transcendental(np.sin))
cos = _unary("cos", _transcendental(np.cos))
tanh = _unary("tanh", _transcendental(np.tanh))
sqrt = _unary("sqrt", _transcendental(np.sqrt))
rsqrt = _unary("rsqrt", _transcendental(_rsqrt))
expm1 = _unary("expm1", _transcendental(np.expm1))
log1p = _unary("log1p", _transcendental(np.log1p))
erf = _unary("erf", _transcendental(_erf), complex_ok=False)


# --------------------------------------------------------------------------------------------
# Binary
# --------------------------------------------------------------------------------------------


def _binary(op: str, fn: Callable[[np.ndarray, np.ndarray], np.ndarray], *, complex_ok: bool = True):
    def ref(x: Any, y: Any) -> np.ndarray:
        dt, (a, b) = _operands(x, y)
        if not complex_ok and dt.kind == "c":
            raise TypeError(f"{op}: complex dtype {dt} is not admitted")
        # ValueError on a mismatch. Operands are broadcast first so that checks such as "division
        # by zero" only see the element pairs that are actually computed (none for a zero-size result).
        a, b = np.broadcast_arrays(a, b)
        with np.errstate(all="ignore"):
            out = np.asarray(fn(a, b))
        return out.astype(dt, copy=False)

    ref.__name__ = op
    ref.__doc__ = f"Reference of the binary primitive ``{op}``."
    return ref


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.any(b == 0):
        raise ZeroDivisionError("integer division by zero")
    q = np.floor_divide(a, b)
    # floor -> truncation: add one where the exact quotient is negative and inexact.
    adjust = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return (q + adjust.astype(q.dtype)).astype(a.dtype, copy=False)


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu":
        return _int_div(a, b)
    if a.dtype == BOOL:
        if np.any(~b):
            raise ZeroDivisionError("integer division by zero")
        return a.copy()
    return np.true_divide(a, b)


def _rem(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iub":
        if np.any(b == 0):
            raise ZeroDivisionError("integer remainder by zero")
        if a.dtype == BOOL:
            return np.zeros(np.broadcast_shapes(a.shape, b.shape), dtype=BOOL)
    if a.dtype.kind == "c":
        raise TypeError(f"rem: complex dtype {a.dtype} is not admitted")
    return np.fmod(a, b)


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu" and np.any(b < 0):
        raise ValueError("pow: integers to negative integer powers are not allowed")
    if a.dtype == BOOL:
        # x ** y on {0, 1}: 0 ** 0 == 1, 0 ** 1 == 0, 1 ** y == 1.
        return a | ~b
    return np.power(a, b)


def _sub(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype == BOOL:
        return a ^ b
    return np.subtract(a, b)


add = _binary("add", np.add)
sub = _binary("sub", _sub)
mul = _binary("mul", np.multiply)
div = _binary("div", _div)
rem = _binary("rem", _rem)
pow = _binary("pow", _pow)  # noqa: A001 - the primitive's name
maximum = _binary("maximum", np.maximum, complex_ok=False)
minimum = _binary("minimum", np.minimum, complex_ok=False)

_COMPARE = {
    "EQ": np.equal,
    "NE": np.not_equal,
    "LT": np.less,
    "LE": np.less_equal,
    "GT": np.greater,
    "GE": np.greater_equal,
}


def direction_name(direction: Any) -> str:
    """``tf.CompareDir.LT`` or ``"lt"`` → ``"LT"``."""
    name = getattr(direction, "name", direction)
    if not isinstance(name, str) or name.upper() not in _COMPARE:
        raise ValueError(f"compare: unknown direction {direction!r}")
    return name.upper()


def compare(x: Any, y: Any, direction: Any) -> np.ndarray:
    """Reference of ``compare(x, y, direction)``; ordering directions reject complex."""
    d = direction_name(direction)
    dt, (a, b) = _operands(x, y)
    if dt.kind == "c" and d not in ("EQ", "NE"):
        raise TypeError(f"compare: ordering comparison {d} of complex dtype {dt}")
    np.broadcast_shapes(a.shape, b.shape)
    return np.asarray(_COMPARE[d](a, b))


# --------------------------------------------------------------------------------------------
# Ternary
# --------------------------------------------------------------------------------------------


def select(pred: Any, on_true: Any, on_false: Any) -> np.ndarray:
    """Reference of ``select(pred, on_true, on_false)`` (``pred`` must be bool)."""
    p = _tensor(pred)
    if p.dtype != BOOL:
        raise TypeError(f"select: predicate must be bool, got {p.dtype}")
    dt, (t, f) = _operands(on_true, on_false)
    shape = np.broadcast_shapes(p.shape, t.shape, f.shape)
    return np.broadcast_to(np.where(p, t, f), shape).astype(dt)


def clamp(x: Any, lo: Any, hi: Any) -> np.ndarray:
    """Reference of ``clamp(x, lo, hi) = minimum(maximum(x, lo), hi)``, propagating NaN."""
    dt, (a, l, h) = _operands(x, lo, hi)
    if dt.kind == "c":
        raise TypeError(f"clamp: complex dtype {dt} is not admitted")
    np.broadcast_shapes(a.shape, l.shape, h.shape)
    with np.errstate(all="ignore"):
        return np.minimum(np.maximum(a, l), h).astype(dt, copy=False)


# --------------------------------------------------------------------------------------------
# Conversion
# --------------------------------------------------------------------------------------------


def _target_dtype(op: str, dtype: Any) -> np.dtype:
    dt = np.dtype(dtype)
    if dt not in DTYPES:
        raise TypeError(f"{op}: unsupported dtype {dt}")
    return dt


def convert(x: Any, dtype: Any) -> np.ndarray:
    """Reference of ``convert``: only up the lattice (``promote(from, to) == to``)."""
    x = _tensor(x)
    to = _target_dtype("convert", dtype)
    if promote(x.dtype, to) != to:
        raise TypeError(f"convert: cannot convert {x.dtype} to {to}")
    return x.astype(to)


def cast(x: Any, dtype: Any) -> np.ndarray:
    """Reference of ``cast``: float→int truncates toward zero, complex→real drops the imaginary
    part, nonzero→True. (Out-of-range float→int is not pinned by the spec; callers avoid it.)"""
    x = _tensor(x)
    to = _target_dtype("cast", dtype)
    if to == BOOL:
        return x != 0
    src = x.real if x.dtype.kind == "c" and to.kind != "c" else x
    if to.kind in "iu" and src.dtype.kind == "f":
        src = np.trunc(src)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        return src.astype(to)


# --------------------------------------------------------------------------------------------
# Layout
# --------------------------------------------------------------------------------------------


def _axis(op: str, axis: Any, ndim: int) -> int:
    a = operator.index(axis)
    if not -ndim <= a < ndim:
        raise IndexError(f"{op}: axis {a} out of range for rank {ndim}")
    return a % ndim if ndim else a


def _axes(op: str, axes: Any, ndim: int) -> tuple[int, ...]:
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        axes = (axes,)
    out = tuple(_axis(op, a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: repeated axis in {tuple(axes)}")
    return out


def transpose(x: Any, perm: Any) -> np.ndarray:
    """Reference of ``transpose(x, perm)``: output axis ``i`` is input axis ``perm[i]``."""
    x = _tensor(x)
    perm = tuple(operator.index(p) for p in perm)
    if sorted(perm) != list(range(x.ndim)):
        raise ValueError(f"transpose: {perm} is not a permutation of rank {x.ndim}")
    return np.transpose(x, perm).copy()


def reshape(x: Any, shape: Any) -> np.ndarray:
    """Reference of ``reshape(x, shape)``: **column-major** (NumPy ``order="F"``)."""
    x = _tensor(x)
    shape = tuple(operator.index(s) for s in shape)
    if any(s < 0 for s in shape) or int(np.prod(shape, dtype=np.int64)) != x.size:
        raise ValueError(f"reshape: cannot reshape {x.shape} into {shape}")
    return np.reshape(x, shape, order="F").copy()


def broadcast_in_dim(x: Any, shape: Any, dims: Any) -> np.ndarray:
    """Reference of StableHLO ``broadcast_in_dim``: input axis ``i`` becomes output axis
    ``dims[i]``; each input axis has size 1 or the size of its output axis."""
    x = _tensor(x)
    shape = tuple(operator.index(s) for s in shape)
    dims = tuple(operator.index(d) for d in dims)
    if any(s < 0 for s in shape):
        raise ValueError(f"broadcast_in_dim: negative size in {shape}")
    if len(dims) != x.ndim:
        raise ValueError(f"broadcast_in_dim: {len(dims)} dims for an input of rank {x.ndim}")
    if any(not 0 <= d < len(shape) for d in dims) or len(set(dims)) != len(dims):
        raise ValueError(f"broadcast_in_dim: bad dims {dims} for output rank {len(shape)}")
    for i, d in enumerate(dims):
        if x.shape[i] not in (1, shape[d]):
            raise ValueError(f"broadcast_in_dim: input axis {i} of size {x.shape[i]} vs {shape[d]}")
    order = sorted(range(x.ndim), key=lambda i: dims[i])
    xt = np.transpose(x, order)
    expanded = [1] * len(shape)
    for j, i in enumerate(order):
        expanded[dims[i]] = xt.shape[j]
    return np.broadcast_to(xt.reshape(expanded), shape).copy()


def reverse(x: Any, axes: Any) -> np.ndarray:
    """Reference of ``reverse(x, axes)``."""
    x = _tensor(x)
    ax = _axes("reverse", axes, x.ndim)
    return np.flip(x, axis=ax).copy() if ax else x.copy()


# --------------------------------------------------------------------------------------------
# Reductions
# --------------------------------------------------------------------------------------------


def _reduction(op: str, fn, *, complex_ok: bool = True, empty_error: bool = False, real_only: bool = False):
    def ref(x: Any, axes: Any = None) -> np.ndarray:
        x = _tensor(x)
        if real_only and x.dtype.kind != "f":
            raise TypeError(f"{op}: dtype {x.dtype} is not admitted (real floats only)")
        _check_dtype(op, x, complex_ok=complex_ok)
        ax = _axes(op, axes, x.ndim)
        if empty_error and any(x.shape[a] == 0 for a in ax):
            raise ValueError(f"{op}: reduction over an empty axis of {x.shape}")
        with np.errstate(all="ignore"):
            return np.asarray(fn(x, ax)).astype(x.dtype, copy=False)

    ref.__name__ = op
    ref.__doc__ = f"Reference of ``{op}(x, axes=None)`` (dtype kept)."
    return ref


def _sum(x: np.ndarray, ax: tuple[int, ...]) -> np.ndarray:
    if x.dtype == BOOL:
        return np.any(x, axis=ax)
    return np.sum(x, axis=ax, dtype=x.dtype)


def _prod(x: np.ndarray, ax: tuple[int, ...]) -> np.ndarray:
    if x.dtype == BOOL:
        return np.all(x, axis=ax)
    return np.prod(x, axis=ax, dtype=x.dtype)


reduce_sum = _reduction("reduce_sum", _sum)
reduce_prod = _reduction("reduce_prod", _prod)
reduce_max = _reduction("reduce_max", lambda x, ax: np.max(x, axis=ax), complex_ok=False, empty_error=True)
reduce_min = _reduction("reduce_min", lambda x, ax: np.min(x, axis=ax), complex_ok=False, empty_error=True)
reduce_sum_squares = _reduction(
    "reduce_sum_squares", lambda x, ax: np.sum(x * x, axis=ax, dtype=x.dtype), real_only=True
)


REFERENCE: dict[str, Callable[..., np.ndarray]] = {
    # unary
    "neg": neg,
    "conj": conj,
    "abs": abs,
    "sign": sign,
    "exp": exp,
    "log": log,
    "sin": sin,
    "cos": cos,
    "tanh": tanh,
    "sqrt": sqrt,
    "rsqrt": rsqrt,
    "expm1": expm1,
    "log1p": log1p,
    "erf": erf,
    # binary
    "add": add,
    "sub": sub,
    "mul": mul,
    "div": div,
    "rem": rem,
    "pow": pow,
    "maximum": maximum,
    "minimum": minimum,
    "compare": compare,
    # ternary
    "select": select,
    "where_select": select,
    "clamp": clamp,
    # conversion
    "convert": convert,
    "cast": cast,
    # layout
    "transpose": transpose,
    "reshape": reshape,
    "broadcast_in_dim": broadcast_in_dim,
    "reverse": reverse,
    # reductions
    "reduce_sum": reduce_sum,
    "reduce_prod": reduce_prod,
    "reduce_max": reduce_max,
    "reduce_min": reduce_min,
    "reduce_sum_squares": reduce_sum_squares,
}

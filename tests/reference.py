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

``REFERENCE`` maps each primitive name of the catalog to its reference; it is the tests' list of
the unary primitives (a reference made by ``_unary``, with the input ``domain`` the tests draw
from), which ``tests/test_ops.py`` checks against the catalog's ``unary`` family. Adding a unary
primitive to the op table needs its entry here and nothing else in the tests.
"""

from __future__ import annotations

import builtins
import operator
import warnings
from typing import Any
from collections.abc import Callable

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


#: The unary references in definition order (``_unary`` registers each; ``REFERENCE`` holds them).
_UNARY: dict[str, Callable[..., np.ndarray]] = {}


def _unary(
    op: str,
    fn: Callable[[np.ndarray], np.ndarray],
    *,
    complex_ok: bool = True,
    bool_ok: bool = True,
    domain: str = "any",
):
    """The reference of the unary primitive ``op``. ``domain`` names the inputs the tests draw
    (a key of ``tests/test_ops.py``'s ``REAL_DOMAINS``: ``"positive"`` for ``log``, ...);
    ``tests/test_autodiff.py`` and ``tests/test_ad_catalog.py`` differentiate at positive points
    when it is ``"positive"`` or ``"log1p"``."""

    def ref(x: Any) -> np.ndarray:
        x = _tensor(x)
        _check_dtype(op, x, complex_ok=complex_ok, bool_ok=bool_ok)
        with np.errstate(all="ignore"):
            out = np.asarray(fn(x))
        return out

    ref.__name__ = op
    ref.__doc__ = f"Reference of the unary primitive ``{op}``."
    ref.family = "unary"  # type: ignore[attr-defined]
    ref.domain = domain  # type: ignore[attr-defined]
    _UNARY[op] = ref
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
exp = _unary("exp", _transcendental(np.exp), domain="exp")
log = _unary("log", _transcendental(np.log), domain="positive")
sin = _unary("sin", _transcendental(np.sin), domain="exp")
cos = _unary("cos", _transcendental(np.cos), domain="exp")
tanh = _unary("tanh", _transcendental(np.tanh), domain="tanh")
sqrt = _unary("sqrt", _transcendental(np.sqrt), domain="positive")
rsqrt = _unary("rsqrt", _transcendental(_rsqrt), domain="positive")
expm1 = _unary("expm1", _transcendental(np.expm1), domain="exp")
log1p = _unary("log1p", _transcendental(np.log1p), domain="log1p")
erf = _unary("erf", _transcendental(_erf), complex_ok=False)
round = _unary("round", _transcendental(np.rint))  # noqa: A001 - the primitive's name


def _integral(fn):
    """Rounding to an integer: bool and integers are already integers (returned as they are,
    NumPy's and the Array API's rule); complex is rejected (NumPy has no complex floor)."""

    def ref(x: np.ndarray) -> np.ndarray:
        return x.copy() if x.dtype.kind in "bi" else fn(x)

    return ref


def _bitwise_unary(fn):
    def ref(x: np.ndarray) -> np.ndarray:
        if x.dtype.kind not in "bi":
            raise TypeError(f"bitwise ops take integer or bool dtypes, got {x.dtype}")
        return fn(x)

    return ref


floor = _unary("floor", _integral(np.floor), complex_ok=False)
ceil = _unary("ceil", _integral(np.ceil), complex_ok=False)
trunc = _unary("trunc", _integral(np.trunc), complex_ok=False)
sinh = _unary("sinh", _transcendental(np.sinh), domain="exp")
cosh = _unary("cosh", _transcendental(np.cosh), domain="exp")
bitwise_not = _unary("bitwise_not", _bitwise_unary(np.invert))


# --------------------------------------------------------------------------------------------
# Binary
# --------------------------------------------------------------------------------------------


def _binary(
    op: str, fn: Callable[[np.ndarray, np.ndarray], np.ndarray], *, complex_ok: bool = True
):
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


def _kinds(op: str, fn: Callable[[np.ndarray, np.ndarray], np.ndarray], kinds: str):
    """``fn`` for operands of the dtype kinds ``kinds`` (promoted first); ``TypeError`` else."""

    def ref(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.dtype.kind not in kinds:
            raise TypeError(f"{op}: dtype {a.dtype} is not admitted")
        return fn(a, b)

    return ref


# Shifts: NumPy's results for every count, those outside [0, bits) included (0, or -1 for a
# negative operand shifted right).
bitwise_and = _binary("bitwise_and", _kinds("bitwise_and", np.bitwise_and, "bi"))
bitwise_or = _binary("bitwise_or", _kinds("bitwise_or", np.bitwise_or, "bi"))
bitwise_xor = _binary("bitwise_xor", _kinds("bitwise_xor", np.bitwise_xor, "bi"))
shift_left = _binary("shift_left", _kinds("shift_left", np.left_shift, "i"))
shift_right_arithmetic = _binary(
    "shift_right_arithmetic", _kinds("shift_right_arithmetic", np.right_shift, "i")
)
copysign = _binary("copysign", _kinds("copysign", np.copysign, "f"))
nextafter = _binary("nextafter", _kinds("nextafter", np.nextafter, "f"))

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


def _reduction(
    op: str, fn, *, complex_ok: bool = True, empty_error: bool = False, real_only: bool = False
):
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
reduce_max = _reduction(
    "reduce_max", lambda x, ax: np.max(x, axis=ax), complex_ok=False, empty_error=True
)
reduce_min = _reduction(
    "reduce_min", lambda x, ax: np.min(x, axis=ax), complex_ok=False, empty_error=True
)
reduce_sum_squares = _reduction(
    "reduce_sum_squares", lambda x, ax: np.sum(x * x, axis=ax, dtype=x.dtype), real_only=True
)


# --------------------------------------------------------------------------------------------
# Slicing (StableHLO slice, pad, dynamic_slice, dynamic_update_slice, concatenate)
# --------------------------------------------------------------------------------------------


_py_slice = builtins.slice  # the name ``slice`` is the primitive's below


def _config_ints(values: Any) -> tuple[int, ...]:
    return tuple(operator.index(v) for v in values)


def _rank_check(op: str, what: str, n: int, ndim: int) -> None:
    if n != ndim:
        raise ValueError(f"{op}: {what} has {n} entries but the operand has rank {ndim}")


def slice(x: Any, config: Any) -> np.ndarray:  # noqa: A001 - the primitive's name
    """Reference of ``slice(x, SliceConfig)``: ``x[starts[i]:limits[i]:strides[i], ...]`` with
    ``0 <= start <= limit <= dim`` and ``stride >= 1``."""
    x = _tensor(x)
    starts, limits = _config_ints(config.starts), _config_ints(config.limits)
    strides = (1,) * len(starts) if config.strides is None else _config_ints(config.strides)
    _rank_check("slice", "starts", len(starts), x.ndim)
    if not len(starts) == len(limits) == len(strides):
        raise ValueError("slice: starts, limits and strides differ in length")
    for i, (s, l, k) in enumerate(zip(starts, limits, strides)):
        if not 0 <= s <= l <= x.shape[i] or k < 1:
            raise ValueError(
                f"slice: bad start {s}, limit {l}, stride {k} on axis {i} of {x.shape}"
            )
    return x[tuple(_py_slice(s, l, k) for s, l, k in zip(starts, limits, strides))].copy()


def pad(x: Any, config: Any) -> np.ndarray:
    """Reference of ``pad(x, PadConfig)`` with zeros: ``interior`` zeros between neighbours,
    then ``low``/``high`` zeros at the edges (negative values crop)."""
    x = _tensor(x)
    low = _config_ints(config.edge_padding_low)
    high = _config_ints(config.edge_padding_high)
    interior = _config_ints(config.interior_padding)
    _rank_check("pad", "edge_padding_low", len(low), x.ndim)
    if not len(low) == len(high) == len(interior) or any(p < 0 for p in interior):
        raise ValueError(f"pad: bad config {config}")
    body = [d + max(d - 1, 0) * p for d, p in zip(x.shape, interior)]
    out_shape = [l + b + h for l, b, h in zip(low, body, high)]
    if any(s < 0 for s in out_shape):
        raise ValueError(f"pad: negative output size {out_shape}")
    # Interior padding, then padding with the positive edges, then cropping the negative ones.
    y = np.zeros(body, dtype=x.dtype)
    y[tuple(_py_slice(None, None, p + 1) for p in interior)] = x
    if x.ndim == 0:
        return y
    y = np.pad(y, [(max(l, 0), max(h, 0)) for l, h in zip(low, high)])
    crop = tuple(
        _py_slice(max(-l, 0), y.shape[i] - max(-h, 0)) for i, (l, h) in enumerate(zip(low, high))
    )
    out = y[crop].copy()
    assert list(out.shape) == out_shape
    return out


def _index_vector(op: str, starts: Any, ndim: int) -> np.ndarray:
    s = np.asarray(starts)
    if s.dtype.kind not in "iu":
        if s.size == 0 and s.dtype.kind == "f" and not isinstance(starts, np.ndarray):
            s = s.astype(np.int64)  # an empty Python sequence
        else:
            raise TypeError(f"{op}: starts must have an integer dtype, got {s.dtype}")
    if s.shape != (ndim,):
        raise ValueError(
            f"{op}: starts must be a rank-1 tensor of {ndim} entries, got shape {s.shape}"
        )
    return s.astype(np.int64)


def dynamic_slice(x: Any, starts: Any, sizes: Any) -> np.ndarray:
    """Reference of ``dynamic_slice(x, starts, sizes)``: each start is clamped to
    ``[0, dim - size]`` (StableHLO)."""
    x = _tensor(x)
    sizes = _config_ints(sizes)
    _rank_check("dynamic_slice", "sizes", len(sizes), x.ndim)
    s = _index_vector("dynamic_slice", starts, x.ndim)
    if any(not 0 <= z <= d for z, d in zip(sizes, x.shape)):
        raise ValueError(f"dynamic_slice: sizes {sizes} exceed the shape {x.shape}")
    lo = [int(np.clip(v, 0, d - z)) for v, d, z in zip(s, x.shape, sizes)]
    return x[tuple(_py_slice(a, a + z) for a, z in zip(lo, sizes))].copy()


def dynamic_update_slice(x: Any, update: Any, starts: Any) -> np.ndarray:
    """Reference of ``dynamic_update_slice(x, update, starts)``: ``update`` written at the starts
    clamped to ``[0, dim - update_dim]``; data operands promoted."""
    dt, (a, u) = _operands(x, update)
    if u.ndim != a.ndim or any(e > d for e, d in zip(u.shape, a.shape)):
        raise ValueError(f"dynamic_update_slice: update shape {u.shape} does not fit {a.shape}")
    s = _index_vector("dynamic_update_slice", starts, a.ndim)
    lo = [int(np.clip(v, 0, d - e)) for v, d, e in zip(s, a.shape, u.shape)]
    out = a.copy()
    out[tuple(_py_slice(b, b + e) for b, e in zip(lo, u.shape))] = u
    return out


def concatenate(xs: Any, axis: Any) -> np.ndarray:
    """Reference of ``concatenate(xs, axis)``: same rank, equal other dims, promoted dtypes."""
    xs = list(xs)
    if not xs:
        raise ValueError("concatenate: needs at least one operand")
    dt, arrays = _operands(*xs)
    ndim = arrays[0].ndim
    if ndim == 0:
        raise ValueError("concatenate: rank-0 operands")
    ax = _axis("concatenate", axis, ndim)
    for a in arrays:
        if a.ndim != ndim or any(a.shape[i] != arrays[0].shape[i] for i in range(ndim) if i != ax):
            raise ValueError(f"concatenate: incompatible shapes {[b.shape for b in arrays]}")
    return np.concatenate(arrays, axis=ax).astype(dt, copy=False)


# --------------------------------------------------------------------------------------------
# Indexing (StableHLO gather / scatter-add)
# --------------------------------------------------------------------------------------------


def _indices(op: str, indices: Any) -> np.ndarray:
    i = _tensor(indices)
    if i.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must have an integer dtype, got {i.dtype}")
    return i.astype(np.int64)


def _with_index_vector(op: str, idx: np.ndarray, index_vector_dim: int) -> np.ndarray:
    """Indices with the index vectors moved to the last axis (an implicit trailing axis of
    length 1 when ``index_vector_dim == indices.ndim``)."""
    if not 0 <= index_vector_dim <= idx.ndim:
        raise ValueError(
            f"{op}: index_vector_dim {index_vector_dim} out of range for rank {idx.ndim}"
        )
    if index_vector_dim == idx.ndim:
        return idx[..., None]
    return np.moveaxis(idx, index_vector_dim, -1)


def gather(x: Any, indices: Any, config: Any) -> np.ndarray:
    """Reference of StableHLO ``gather`` (no batching dims); window starts are clamped so that
    the window of ``slice_sizes`` fits the operand."""
    x = _tensor(x)
    idx = _with_index_vector(
        "gather", _indices("gather", indices), operator.index(config.index_vector_dim)
    )
    offset_dims = _config_ints(config.offset_dims)
    collapsed = _config_ints(config.collapsed_slice_dims)
    start_map = _config_ints(config.start_index_map)
    sizes = _config_ints(config.slice_sizes)
    _rank_check("gather", "slice_sizes", len(sizes), x.ndim)
    if any(not 0 <= d < x.ndim for d in collapsed + start_map):
        raise ValueError(f"gather: dimension out of range in {config}")
    if len(set(start_map)) != len(start_map) or len(set(collapsed)) != len(collapsed):
        raise ValueError(f"gather: repeated dimension in {config}")
    if idx.shape[-1] != len(start_map):
        raise ValueError(
            f"gather: index vectors of {idx.shape[-1]} entries for start_index_map {start_map}"
        )
    if any(not 0 <= z <= d for z, d in zip(sizes, x.shape)) or any(
        sizes[d] != 1 for d in collapsed
    ):
        raise ValueError(
            f"gather: slice_sizes {sizes} do not fit {x.shape} / collapsed {collapsed}"
        )
    batch_shape = idx.shape[:-1]
    offset_axes = [d for d in range(x.ndim) if d not in collapsed]
    if len(offset_axes) != len(offset_dims):
        raise ValueError(f"gather: offset_dims {offset_dims} vs {len(offset_axes)} window axes")
    out_rank = len(batch_shape) + len(offset_dims)
    if list(offset_dims) != sorted(set(offset_dims)) or any(
        not 0 <= d < out_rank for d in offset_dims
    ):
        raise ValueError(f"gather: bad offset_dims {offset_dims} for output rank {out_rank}")
    batch_pos = [p for p in range(out_rank) if p not in offset_dims]
    out_shape = [0] * out_rank
    for p, n in zip(batch_pos, batch_shape):
        out_shape[p] = n
    for p, d in zip(offset_dims, offset_axes):
        out_shape[p] = sizes[d]
    out = np.zeros(out_shape, dtype=x.dtype)
    for b in np.ndindex(*batch_shape):
        start = [0] * x.ndim
        for k, d in enumerate(start_map):
            start[d] = int(np.clip(idx[b + (k,)], 0, x.shape[d] - sizes[d]))
        window = x[tuple(_py_slice(s, s + z) for s, z in zip(start, sizes))]
        window = window.reshape([sizes[d] for d in offset_axes])
        target: list[Any] = [_py_slice(None)] * out_rank
        for p, i in zip(batch_pos, b):
            target[p] = i
        out[tuple(target)] = window
    return out


def scatter(x: Any, indices: Any, updates: Any, config: Any) -> np.ndarray:
    """Reference of StableHLO ``scatter`` with an *add* combiner (``or`` for bool): duplicates
    accumulate; an update window that does not fit entirely inside the operand is skipped."""
    dt, (a, u) = _operands(x, updates)
    idx = _with_index_vector(
        "scatter", _indices("scatter", indices), operator.index(config.index_vector_dim)
    )
    window_dims = _config_ints(config.update_window_dims)
    inserted = _config_ints(config.inserted_window_dims)
    to_operand = _config_ints(config.scatter_dims_to_operand_dims)
    if any(not 0 <= d < a.ndim for d in inserted + to_operand) or any(
        not 0 <= d < u.ndim for d in window_dims
    ):
        raise ValueError(f"scatter: dimension out of range in {config}")
    if len(window_dims) + len(inserted) != a.ndim or idx.shape[-1] != len(to_operand):
        raise ValueError(
            f"scatter: inconsistent config {config} for shapes {a.shape}, {idx.shape}, {u.shape}"
        )
    scatter_dims = [d for d in range(u.ndim) if d not in window_dims]
    if tuple(u.shape[d] for d in scatter_dims) != idx.shape[:-1]:
        raise ValueError(
            f"scatter: update scatter dims of {u.shape} vs index batch {idx.shape[:-1]}"
        )
    window_operand = [d for d in range(a.ndim) if d not in inserted]
    window_size = [1] * a.ndim
    for k, d in enumerate(window_operand):
        window_size[d] = u.shape[window_dims[k]]
        if window_size[d] > a.shape[d]:
            raise ValueError(f"scatter: update window {u.shape} exceeds operand {a.shape}")
    out = a.copy()
    # Move the update's scatter dims first, its window dims last.
    u_t = np.transpose(u, scatter_dims + list(window_dims))
    for b in np.ndindex(*idx.shape[:-1]):
        start = [0] * a.ndim
        for k, d in enumerate(to_operand):
            start[d] = int(idx[b + (k,)])
        if any(s < 0 or s + w > n for s, w, n in zip(start, window_size, a.shape)):
            continue
        region = tuple(_py_slice(s, s + w) for s, w in zip(start, window_size))
        upd = u_t[b].reshape([window_size[d] for d in range(a.ndim)])
        if dt == BOOL:
            out[region] |= upd
        else:
            out[region] += upd
    return out


# --------------------------------------------------------------------------------------------
# Matrix structure
# --------------------------------------------------------------------------------------------


def _diag_axes(op: str, a: Any, b: Any, rank: int) -> tuple[int, int]:
    a, b = operator.index(a), operator.index(b)
    if a == b or not 0 <= a < rank or not 0 <= b < rank:
        raise ValueError(f"{op}: axes ({a}, {b}) must be distinct and below rank {rank}")
    return a, b


def extract_diag(x: Any, axis_a: Any = 0, axis_b: Any = 1) -> np.ndarray:
    """Reference of ``extract_diag``: the diagonal of axes ``a`` and ``b`` (length ``min``) takes
    ``a``'s place, ``b`` disappears."""
    x = _tensor(x)
    a, b = _diag_axes("extract_diag", axis_a, axis_b, x.ndim)
    d = np.diagonal(x, 0, a, b)  # the diagonal last
    return np.moveaxis(d, -1, a if a < b else a - 1).copy()


def embed_diag(x: Any, axis_a: Any = 0, axis_b: Any = 1) -> np.ndarray:
    """Reference of ``embed_diag``, the inverse of ``extract_diag``: ``a`` and ``b`` are output
    axes; the input's diagonal axis (``a``, or ``a - 1`` when ``a > b``) is spread over the
    diagonal of the output axes ``a`` and ``b``; zeros elsewhere."""
    x = _tensor(x)
    a, b = _diag_axes("embed_diag", axis_a, axis_b, x.ndim + 1)
    src = a - 1 if a > b else a
    n = x.shape[src]
    out_shape = list(x.shape)
    out_shape.insert(b, n)
    out = np.zeros(out_shape, dtype=x.dtype)
    for i in range(n):
        dst: list[Any] = [_py_slice(None)] * len(out_shape)
        dst[a] = i
        dst[b] = i
        src_index: list[Any] = [_py_slice(None)] * x.ndim
        src_index[src] = i
        out[tuple(dst)] = x[tuple(src_index)]
    return out


def _triangle(op: str, keep: Callable[[np.ndarray, int], np.ndarray]):
    def ref(x: Any, k: Any = 0) -> np.ndarray:
        x = _tensor(x)
        if x.ndim < 2:
            raise ValueError(f"{op}: needs rank >= 2, got shape {x.shape}")
        k = operator.index(k)
        i = np.arange(x.shape[0])[:, None]
        j = np.arange(x.shape[1])[None, :]
        mask = keep(j - i, k).reshape(x.shape[:2] + (1,) * (x.ndim - 2))
        return np.where(mask, x, np.zeros((), x.dtype)).astype(x.dtype)

    ref.__name__ = op
    ref.__doc__ = f"Reference of ``{op}(x, k=0)`` on axes 0 (rows) and 1 (columns), batch after."
    return ref


tril = _triangle("tril", lambda d, k: d <= k)
triu = _triangle("triu", lambda d, k: d >= k)


# --------------------------------------------------------------------------------------------
# Contraction
# --------------------------------------------------------------------------------------------

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def dot_general_subscripts(lhs_ndim: int, rhs_ndim: int, config: Any) -> str:
    """The ``numpy.einsum`` subscripts of a ``dot_general``: output ``[lhs free, rhs free,
    batch]``."""
    lc, rc = _config_ints(config.lhs_contracting_dims), _config_ints(config.rhs_contracting_dims)
    lb, rb = _config_ints(config.lhs_batch_dims), _config_ints(config.rhs_batch_dims)
    letters = iter(_LETTERS)
    lhs = [next(letters) for _ in range(lhs_ndim)]
    rhs = [next(letters) for _ in range(rhs_ndim)]
    for a, b in zip(lc, rc):
        rhs[b] = lhs[a]
    for a, b in zip(lb, rb):
        rhs[b] = lhs[a]
    lfree = [lhs[d] for d in range(lhs_ndim) if d not in lc and d not in lb]
    rfree = [rhs[d] for d in range(rhs_ndim) if d not in rc and d not in rb]
    out = lfree + rfree + [lhs[d] for d in lb]
    return f"{''.join(lhs)},{''.join(rhs)}->{''.join(out)}"


def _check_dot_config(op: str, ls: tuple, rs: tuple, config: Any) -> None:
    lc, rc = _config_ints(config.lhs_contracting_dims), _config_ints(config.rhs_contracting_dims)
    lb, rb = _config_ints(config.lhs_batch_dims), _config_ints(config.rhs_batch_dims)
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ValueError(f"{op}: unequal dimension counts in {config}")
    for dims, n in ((lc + lb, len(ls)), (rc + rb, len(rs))):
        if len(set(dims)) != len(dims) or any(not 0 <= d < n for d in dims):
            raise ValueError(f"{op}: bad dimensions in {config}")
    for a, b in list(zip(lc, rc)) + list(zip(lb, rb)):
        if ls[a] != rs[b]:
            raise ValueError(
                f"{op}: size mismatch lhs axis {a} ({ls[a]}) vs rhs axis {b} ({rs[b]})"
            )


def dot_general(lhs: Any, rhs: Any, config: Any) -> np.ndarray:
    """Reference of ``dot_general``: ``numpy.einsum`` in the promoted dtype (bool rejected),
    output ``[lhs free..., rhs free..., batch...]``."""
    dt, (a, b) = _operands(lhs, rhs)
    if dt == BOOL:
        raise TypeError("dot_general: bool dtype is not admitted")
    _check_dot_config("dot_general", a.shape, b.shape, config)
    sub = dot_general_subscripts(a.ndim, b.ndim, config)
    wide = np.complex128 if dt.kind == "c" else (np.float64 if dt.kind == "f" else dt)
    return np.asarray(np.einsum(sub, a.astype(wide), b.astype(wide))).astype(dt)


def dot_general_with_conj(
    lhs: Any, rhs: Any, config: Any, lhs_conj: Any, rhs_conj: Any
) -> np.ndarray:
    """Reference of ``dot_general_with_conj``: the flagged operands conjugated first."""
    a, b = _tensor(lhs), _tensor(rhs)
    if lhs_conj:
        a = np.conj(a)
    if rhs_conj:
        b = np.conj(b)
    return dot_general(a, b, config)


def matmul(a: Any, b: Any) -> np.ndarray:
    """Reference of the rank-2 ``matmul`` primitive (promoted dtype; bool rejected)."""
    dt, (x, y) = _operands(a, b)
    if dt == BOOL:
        raise TypeError("matmul: bool dtype is not admitted")
    if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[0]:
        raise ValueError(f"matmul: operands of shapes {x.shape} and {y.shape}")
    wide = np.complex128 if dt.kind == "c" else (np.float64 if dt.kind == "f" else dt)
    return (x.astype(wide) @ y.astype(wide)).astype(dt)


def scale_real(x: Any, factor: Any) -> np.ndarray:
    """Reference of ``scale_real(x, r)``: ``x * r`` in ``x``'s dtype; integers rounded half away
    from zero (as Rust's ``f64::round``; ops.md does not pin ties, so the tests avoid them);
    bool: ``r == 0`` gives False, else ``x``."""
    x = _tensor(x)
    if isinstance(factor, (complex, np.complexfloating)) or not isinstance(
        factor, (int, float, np.integer, np.floating)
    ):
        raise TypeError(f"scale_real: factor must be a real number, got {factor!r}")
    r = float(factor)
    if x.dtype == BOOL:
        return x & (r != 0)
    if x.dtype.kind in "iu":
        p = x.astype(np.float64) * r
        return (np.sign(p) * np.floor(np.abs(p) + 0.5)).astype(x.dtype)
    return (x * np.asarray(r).astype(x.real.dtype)).astype(x.dtype)


def scale_complex(x: Any, factor: Any) -> np.ndarray:
    """Reference of ``scale_complex(x, c)``: ``x * c`` for a complex ``x``."""
    x = _tensor(x)
    if x.dtype.kind != "c":
        raise TypeError(f"scale_complex: x must be complex, got {x.dtype}")
    # A bool is a number here, as for scale_real (complex(True) == 1+0j).
    if not isinstance(factor, (int, float, complex, np.number)):
        raise TypeError(f"scale_complex: factor must be a number, got {factor!r}")
    return (x * np.asarray(complex(factor)).astype(x.dtype)).astype(x.dtype)


def fft(x: Any, fft_type: Any, fft_length: Any, axes: Any = None) -> np.ndarray:
    """Reference of ``fft(x, fft_type, fft_length, axes)`` (StableHLO ``fft`` over ``axes``,
    default the trailing ones): ``numpy.fft.fftn``/``ifftn``/``rfftn``/``irfftn`` with
    ``s=fft_length``; complex operands for ``FFT``/``IFFT``/``IRFFT`` and real ones for
    ``RFFT`` (``TypeError`` otherwise), sizes equal to the lengths (``n//2 + 1`` frequencies on
    the last axis of ``IRFFT``; ``ValueError`` otherwise); results keep the precision."""
    x = _tensor(x)
    t = str(fft_type).upper()
    if t not in ("FFT", "IFFT", "RFFT", "IRFFT"):
        raise ValueError(f"fft: unknown fft_type {fft_type!r}")
    lengths = tuple(int(n) for n in fft_length)
    ax = tuple(range(x.ndim - len(lengths), x.ndim)) if axes is None else _axes("fft", axes, x.ndim)
    if len(ax) != len(lengths) or not ax or any(n < 1 for n in lengths):
        raise ValueError(f"fft: axes {ax} and fft_length {lengths} do not fit")
    if (x.dtype.kind == "c") == (t == "RFFT") or x.dtype.kind not in "fc":
        raise TypeError(f"fft: {t} does not take {x.dtype}")
    for i, (a, n) in enumerate(zip(ax, lengths)):
        want = n // 2 + 1 if (t == "IRFFT" and i == len(ax) - 1) else n
        if x.shape[a] != want:
            raise ValueError(f"fft: axis {a} has {x.shape[a]}, expected {want}")
    fn = {"FFT": np.fft.fftn, "IFFT": np.fft.ifftn, "RFFT": np.fft.rfftn, "IRFFT": np.fft.irfftn}[t]
    out = fn(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64), s=lengths, axes=ax)
    single = x.dtype in (FLOAT32, COMPLEX64)
    return out.astype(
        {"c": COMPLEX64 if single else COMPLEX128, "f": FLOAT32 if single else FLOAT64}[
            out.dtype.kind
        ]
    )


def _axis_arg(x: np.ndarray, axis: int, op: str) -> int:
    if not -x.ndim <= axis < max(x.ndim, 1) or x.ndim == 0:
        raise np.exceptions.AxisError(f"{op}: axis {axis} is out of bounds for rank {x.ndim}")
    return axis % x.ndim


def sort(x: Any, axis: int = -1, descending: bool = False) -> np.ndarray:
    """Reference of ``sort``: NumPy's stable sort (NaN last, ``-0.0 == 0.0``, complex
    lexicographic); ``descending`` reverses the order of the values, ties and NaNs staying in
    input order (NaN last)."""
    x = _tensor(x)
    ax = _axis_arg(x, axis, "sort")
    return np.take_along_axis(x, argsort(x, ax, descending), ax)


def argsort(x: Any, axis: int = -1, descending: bool = False) -> np.ndarray:
    """Reference of ``argsort``: ``numpy.argsort(kind='stable')``; descending: a stable sort on
    the key ``(is NaN, -part)`` of each part (real, then imaginary for complex), so larger values
    come first, NaN parts last, ties in input order."""
    x = _tensor(x)
    ax = _axis_arg(x, axis, "argsort")
    if not descending:
        return np.argsort(x, axis=ax, kind="stable").astype(INT64)
    flat = np.moveaxis(x, ax, -1)
    out = np.empty(flat.shape, INT64)
    for idx in np.ndindex(flat.shape[:-1]):
        row = flat[idx]

        def key(i: int) -> tuple:
            parts = (row[i].real, row[i].imag) if row.dtype.kind == "c" else (row[i],)
            return tuple((1, 0.0) if np.isnan(p) else (0, -float(p)) for p in parts)

        out[idx] = sorted(range(len(row)), key=key)
    return np.moveaxis(out, -1, ax)


def argmax(x: Any, axis: int) -> np.ndarray:
    """Reference of ``argmax``: ``numpy.argmax`` (first maximum, the first NaN wins)."""
    x = _tensor(x)
    return np.asarray(np.argmax(x, axis=_axis_arg(x, axis, "argmax")), INT64)


def argmin(x: Any, axis: int) -> np.ndarray:
    """Reference of ``argmin``: ``numpy.argmin`` (first minimum, the first NaN wins)."""
    x = _tensor(x)
    return np.asarray(np.argmin(x, axis=_axis_arg(x, axis, "argmin")), INT64)


def searchsorted(sorted: Any, values: Any, right: bool = False) -> np.ndarray:
    """Reference of ``searchsorted``: ``numpy.searchsorted`` on the promoted operands."""
    a, v = _tensor(sorted), _tensor(values)
    d = promote(a.dtype, v.dtype)
    return np.asarray(
        np.searchsorted(a.astype(d), v.astype(d), side="right" if right else "left"), INT64
    )


def cumsum(x: Any, axis: int) -> np.ndarray:
    """Reference of ``cumsum``: ``numpy.cumsum`` keeping the dtype (integers wrap)."""
    x = _tensor(x)
    return np.cumsum(x, axis=_axis_arg(x, axis, "cumsum"), dtype=x.dtype)


def cumprod(x: Any, axis: int) -> np.ndarray:
    """Reference of ``cumprod``: ``numpy.cumprod`` keeping the dtype (integers wrap)."""
    x = _tensor(x)
    return np.cumprod(x, axis=_axis_arg(x, axis, "cumprod"), dtype=x.dtype)


REFERENCE: dict[str, Callable[..., np.ndarray]] = {
    # unary: every reference made by `_unary`
    **_UNARY,
    # binary
    "add": add,
    "sub": sub,
    "mul": mul,
    "div": div,
    "rem": rem,
    "pow": pow,
    "maximum": maximum,
    "minimum": minimum,
    "bitwise_and": bitwise_and,
    "bitwise_or": bitwise_or,
    "bitwise_xor": bitwise_xor,
    "shift_left": shift_left,
    "shift_right_arithmetic": shift_right_arithmetic,
    "copysign": copysign,
    "nextafter": nextafter,
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
    # slicing
    "slice": slice,
    "pad": pad,
    "dynamic_slice": dynamic_slice,
    "dynamic_update_slice": dynamic_update_slice,
    "concatenate": concatenate,
    # indexing
    "gather": gather,
    "scatter": scatter,
    # matrix structure
    "extract_diag": extract_diag,
    "embed_diag": embed_diag,
    "tril": tril,
    "triu": triu,
    # contraction
    "dot_general": dot_general,
    "dot_general_with_conj": dot_general_with_conj,
    "matmul": matmul,
    "scale_real": scale_real,
    "scale_complex": scale_complex,
    # fft
    "fft": fft,
    # sorting
    "sort": sort,
    "argsort": argsort,
    "argmax": argmax,
    "argmin": argmin,
    "searchsorted": searchsorted,
    # scan
    "cumsum": cumsum,
    "cumprod": cumprod,
}

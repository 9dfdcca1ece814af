"""Public testing helpers of tenferro (used by tenferro's own test suite).

:func:`assert_close` compares tensors, NumPy arrays and scalars with tolerances chosen per dtype.
Gradient checking (``check_grads``) arrives with automatic differentiation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _factories
from ._tenferro import Runtime

__all__ = ["assert_close", "check_grads"]

# Default tolerances per dtype kind: (rtol, atol). Integers and bools compare exactly.
_SINGLE = (1e-5, 1e-6)
_DOUBLE = (1e-12, 1e-14)
_EXACT = (0.0, 0.0)
_TOLERANCES = {
    np.dtype(np.float32): _SINGLE,
    np.dtype(np.complex64): _SINGLE,
    np.dtype(np.float16): (1e-3, 1e-5),
    np.dtype(np.float64): _DOUBLE,
    np.dtype(np.complex128): _DOUBLE,
}

_PY_SCALARS = (bool, int, float, complex)


def _default_tolerance(dtype: np.dtype) -> tuple[float, float]:
    if dtype in _TOLERANCES:
        return _TOLERANCES[dtype]
    if dtype.kind in "fc":  # other inexact dtypes (longdouble, ...): the double tolerances
        return _DOUBLE
    return _EXACT


def _as_array(value: Any, name: str) -> np.ndarray:
    try:
        return np.asarray(value)
    except Exception as exc:  # pragma: no cover - message only
        raise TypeError(
            f"assert_close: cannot convert {name} ({type(value).__name__}) to an array"
        ) from exc


def _close_mask(
    a: np.ndarray, d: np.ndarray, rtol: float, atol: float, equal_nan: bool
) -> np.ndarray:
    """Elementwise ``|a - d| <= atol + rtol * |d|``; non-finite values must match exactly."""
    kind = np.result_type(a, d).kind
    if kind in "biu" or (rtol == 0.0 and atol == 0.0 and kind not in "fc"):
        return np.asarray(a == d)
    if kind == "f":
        return np.isclose(a, d, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if kind == "c":
        a = a.astype(np.result_type(a, d, np.complex64), copy=False)
        d = d.astype(a.dtype, copy=False)
        finite = np.isfinite(a) & np.isfinite(d)
        with np.errstate(invalid="ignore", over="ignore"):
            by_modulus = np.abs(a - d) <= atol + rtol * np.abs(d)
        by_parts = np.isclose(
            a.real, d.real, rtol=rtol, atol=atol, equal_nan=equal_nan
        ) & np.isclose(a.imag, d.imag, rtol=rtol, atol=atol, equal_nan=equal_nan)
        return np.where(finite, by_modulus, by_parts)
    # Any other kind (object, strings): plain equality.
    return np.asarray(a == d)


def assert_close(
    actual: Any,
    desired: Any,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    check_dtype: bool = True,
    err_msg: str = "",
) -> None:
    """Assert that two tensors, arrays or scalars are equal up to dtype-dependent tolerances.

    Both arguments are converted with :func:`numpy.asarray` (zero-copy for tenferro tensors). The
    shapes must be equal (no broadcasting) and, unless ``check_dtype=False``, the dtypes too. A
    Python scalar (``bool``, ``int``, ``float``, ``complex``) given as ``desired`` is *weak*: it
    is compared in ``actual``'s dtype and takes no part in the dtype check. Values are close when
    ``|actual - desired| <= atol + rtol * |desired|`` elementwise (the modulus for complex values;
    infinities must match exactly, and NaNs match NaNs when ``equal_nan``).

    Parameters
    ----------
    actual : Tensor, numpy.ndarray or scalar
        The value under test.
    desired : Tensor, numpy.ndarray or scalar
        The expected value.
    rtol, atol : float, optional
        Relative and absolute tolerance. The defaults depend on the dtypes of both arguments;
        the looser of the two applies: ``float32``/``complex64`` ``rtol=1e-5, atol=1e-6``;
        ``float64``/``complex128`` ``rtol=1e-12, atol=1e-14``; integers and bools compare exactly.
    equal_nan : bool, default True
        Whether NaNs in the same positions compare equal (for complex, a NaN in either part).
    check_dtype : bool, default True
        Whether the dtypes must be equal.
    err_msg : str, default ""
        Text prepended to the failure message.

    Raises
    ------
    AssertionError
        When the shapes, the dtypes (if checked) or any value differ; the message gives the
        number of mismatches, the largest absolute and relative differences and the first
        mismatching positions.

    Examples
    --------
    >>> import numpy as np
    >>> import tenferro as tf
    >>> from tenferro.testing import assert_close
    >>> assert_close(tf.tensor([1.0, 2.0]), np.array([1.0, 2.0 + 1e-13]))
    >>> assert_close(tf.tensor([1.0, 2.0]), np.array([1.0, 2.1]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    AssertionError: Values are not close (1 of 2 elements differ) ...
    >>> assert_close(tf.tensor([1, 2], dtype=tf.int32), np.array([1.0, 2.0]), check_dtype=False)
    """
    prefix = f"{err_msg}\n" if err_msg else ""
    weak = isinstance(desired, _PY_SCALARS) and not isinstance(desired, np.generic)
    a = _as_array(actual, "actual")
    d = _as_array(desired, "desired")
    if weak and a.dtype.kind in "biufc":
        try:
            d = np.asarray(desired, dtype=a.dtype)
        except (TypeError, ValueError, OverflowError):
            pass

    if a.shape != d.shape:
        raise AssertionError(f"{prefix}Shapes differ: actual {a.shape}, desired {d.shape}")
    if check_dtype and not weak and a.dtype != d.dtype:
        raise AssertionError(f"{prefix}Dtypes differ: actual {a.dtype}, desired {d.dtype}")

    if rtol is None or atol is None:
        ra, aa = _default_tolerance(a.dtype)
        rd, ad = _default_tolerance(d.dtype)
        if rtol is None:
            rtol = max(ra, rd)
        if atol is None:
            atol = max(aa, ad)

    if a.size == 0:
        return
    if a.dtype.kind == "b" and d.dtype.kind != "b" or d.dtype.kind == "b" and a.dtype.kind != "b":
        # Compare bools with numbers as 0/1.
        a = a.astype(np.result_type(a.dtype, d.dtype, np.int8), copy=False)
        d = d.astype(a.dtype, copy=False)

    with np.errstate(all="ignore"):
        ok = _close_mask(a, d, float(rtol), float(atol), equal_nan)
    if bool(np.all(ok)):
        return

    bad = ~np.asarray(ok, dtype=bool)
    n_bad = int(np.count_nonzero(bad))
    lines = [
        f"{prefix}Values are not close ({n_bad} of {a.size} elements differ) with rtol={rtol:g}, atol={atol:g}"
    ]
    if a.dtype.kind in "biufc" and d.dtype.kind in "biufc":
        with np.errstate(all="ignore"):
            wide = np.result_type(a.dtype, d.dtype, np.float64)
            diff = np.abs(a.astype(wide) - d.astype(wide))
            rel = diff / np.abs(d.astype(wide))
        finite = np.isfinite(diff[bad])
        if np.any(finite):
            lines.append(
                f"Max absolute difference among mismatches: {np.max(diff[bad][finite]):.6g}"
            )
            rel_bad = rel[bad][finite]
            rel_bad = rel_bad[np.isfinite(rel_bad)]
            if rel_bad.size:
                lines.append(f"Max relative difference among mismatches: {np.max(rel_bad):.6g}")
    positions = np.argwhere(bad)[:5]
    for pos in positions:
        idx = tuple(int(i) for i in pos)
        lines.append(f"  at {idx}: actual {a[idx]!r}, desired {d[idx]!r}")
    if n_bad > len(positions):
        lines.append(f"  ... and {n_bad - len(positions)} more")
    raise AssertionError("\n".join(lines))


def _inner(a: np.ndarray, b: np.ndarray) -> float:
    """Real inner product ``Re Σ conj(a)·b`` (tenferro's Hermitian convention)."""
    return float(np.real(np.vdot(np.asarray(a).ravel(), np.asarray(b).ravel())))


def check_grads(
    f: Any,
    args: Any,
    order: int = 2,
    modes: Any = ("fwd", "rev"),
    *,
    eps: float | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    seed: int = 0,
) -> None:
    """Check the derivatives of ``f`` against central finite differences.

    Along random directions ``v`` (complex inputs perturbed along both 1 and i), the JVP must
    equal ``(f(x + εv) - f(x - εv)) / 2ε`` (``"fwd"``), and the VJP of a random cotangent ``u``
    must satisfy ``<vjp(u), v> = <u, Df[v]>`` with ``<a, b> = Re Σ conj(a)·b`` (``"rev"``).
    ``order=2`` repeats the checks on the first derivative (``x ↦ vjp(f(x), x, u)``), which
    exercises the rules' own derivatives. Defaults follow ``torch.autograd.gradcheck`` in double
    precision (``eps=1e-6, atol=1e-5, rtol=1e-3``); when any argument is single precision
    (float32/complex64) they are ``eps=1e-3, atol=1e-2, rtol=1e-2`` (a 1e-6 step is below
    single-precision resolution).

    Parameters
    ----------
    f : callable
        ``f(*tensors) -> Tensor``, built from tenferro ops.
    args : sequence of array_like
        Primal points (float or complex dtypes).
    order : int
        1 or 2 (derivatives of the first derivative too).
    modes : sequence of {"fwd", "rev"}
        Which modes to check.
    eps, atol, rtol : float, optional
        Finite-difference step and tolerances (defaults by precision, above).
    seed : int
        Seed of the random directions and cotangents.

    Raises
    ------
    AssertionError
        With the mode, order and the mismatching numbers.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.testing.check_grads(lambda x: (tf.exp(x) * x).sum(), [[0.5, -1.0]])
    """
    rng = np.random.default_rng(seed)
    prim = [np.array(np.asarray(a), copy=True) for a in args]
    single = any(np.asarray(a).dtype in (np.float32, np.complex64) for a in prim)
    eps = eps if eps is not None else (1e-3 if single else 1e-6)
    atol = atol if atol is not None else (1e-2 if single else 1e-5)
    rtol = rtol if rtol is not None else (1e-2 if single else 1e-3)

    def rand_like(a: np.ndarray) -> np.ndarray:
        r = rng.normal(size=a.shape)
        if np.iscomplexobj(a):
            r = r + 1j * rng.normal(size=a.shape)
        return r.astype(a.dtype)

    def evaluate(fn: Any, xs: list[np.ndarray]) -> np.ndarray:
        return np.array(np.asarray(fn(*[_factories.tensor(x) for x in xs])), copy=True)

    def check(fn: Any, xs: list[np.ndarray], level: int) -> None:
        vs = [rand_like(x) for x in xs]
        plus = evaluate(fn, [x + eps * v for x, v in zip(xs, vs)])
        minus = evaluate(fn, [x - eps * v for x, v in zip(xs, vs)])
        numeric = (plus - minus) / (2 * eps)
        rt = Runtime()
        tx = [rt.variable(x) for x in xs]
        with _factories._recording_on(rt):  # constants f builds with the factories live on rt
            y = fn(*tx)
        if "fwd" in modes:
            t = rt.jvp_optional(y, tx, [rt.constant(v) for v in vs])
            t = np.zeros_like(numeric) if t is None else np.asarray(t)
            np.testing.assert_allclose(
                t,
                numeric,
                rtol=rtol,
                atol=atol,
                err_msg=f"check_grads: JVP vs finite differences (order {level})",
            )
        if "rev" in modes:
            u = rand_like(np.asarray(y))
            gs = rt.vjp_optional(y, tx, rt.constant(u))
            lhs = sum(_inner(np.asarray(g), v) for g, v in zip(gs, vs) if g is not None)
            rhs = _inner(u, numeric)
            assert abs(lhs - rhs) <= atol + rtol * abs(rhs), (
                f"check_grads: <vjp(u), v> = {lhs} but <u, Df[v]> = {rhs} (order {level})"
            )
        if level < order and "rev" in modes:
            u2 = rand_like(np.asarray(y))

            def first(*ts: Any) -> Any:
                if all(t.requires_grad for t in ts):
                    rt2 = ts[0].runtime
                    vs2 = list(ts)
                else:
                    rt2 = Runtime()
                    vs2 = [rt2.variable(np.asarray(t)) for t in ts]
                with _factories._recording_on(rt2):
                    out = fn(*vs2)
                g = rt2.vjp_optional(out, vs2, rt2.constant(u2.astype(np.asarray(out).dtype)))[0]
                # A linear map has a constant derivative: the first derivative is inactive.
                return g if g is not None else rt2.constant(np.zeros_like(np.asarray(vs2[0])))

            check(first, xs, level + 1)

    check(f, prim, 1)

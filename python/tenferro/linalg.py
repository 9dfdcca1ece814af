"""Differentiable dense linear algebra, as ``numpy.linalg`` (``tf.linalg``).

Every function takes NumPy's layout: matrices in the **last two** axes, any leading axes are batch
axes. The decompositions (``svd``, ``qr``, ``eigh``, ``eig``, ``cholesky``, ``lu``, ``solve``,
``triangular_solve``, ``slogdet``) are primitives of the op catalog (family ``linalg``, run by
faer inside the engine's own thread pool with the GIL released); the primitives keep their
matrices in axes 0 and 1 with the batch last, and this module moves the axes with views. The other
functions (``inv``, ``det``, ``pinv``, ``norm``, ``svdvals``, ``eigvalsh``, ``eigvals``,
``matrix_transpose``, ``trace``, ``diagonal``) are compositions of primitives. Everything is
differentiable in forward and reverse mode, to any order (except ``eigvals``: first order, its
second derivative needs the eigenvectors' rule, which raises ``UnsupportedAdRuleError``), for
float32, float64, complex64 and complex128 (integer and bool inputs are converted to float64, as
NumPy does); the derivative rules, with their sources, are documented in ``tenferro-ad``
(``rules/linalg.rs``).

Degenerate spectra: the ``svd`` and ``eigh`` rules replace ``1/g`` (``g = s_j² − s_i²``, resp.
``λ_j − λ_i``) by ``g/(g² + eps²)`` and ``1/s`` by ``s/(s² + eps²)`` (per-call ``eps``, default
``1e-12``, relative: the values are measured in the unit ``σ = 2^⌊log₂ max|v|⌋`` of each matrix,
so the broadening is ``eps·σ²`` on ``s_j² − s_i²`` and ``eps·σ`` on ``1/s`` and ``λ_j − λ_i``,
and gradients are scale-covariant), so gradients stay finite where JAX and PyTorch return NaN or
inf. Where two values
are exactly equal this drops the derivative terms that couple them (their true value is a limit
that the rule cannot see, e.g. ``f'(λ)`` for ``V·f(Λ)·Vᴴ``): gradients are exact for losses of
the values alone (``Σ s``, ``Σ λ²``, norms) and whenever the cotangent reaching the
decomposition has no coupling component there (``‖U S Vᴴ‖²`` at ``I``); otherwise, e.g. for a
general weighted sum of ``V·f(Λ)·Vᴴ`` or ``U·S·Vᴴ`` at a repeated value, the value is biased
(JAX and PyTorch give NaN). Gaps well above ``eps`` (relative) are exact.

Extreme scales: a matrix whose largest entry lies outside LAPACK's safe range
``[sqrt(tiny)/eps, eps/sqrt(tiny)]`` (about ``1e±138`` in double, ``1e±12`` in single precision)
is factorised as ``2^e·a`` and the results are unscaled, exactly, as LAPACK's drivers do, so
values match NumPy up to ``1e±300`` (``det`` over/underflows to inf/0 where NumPy's does;
``slogdet`` stays finite); ``norm`` scales by ``max|x|`` as LAPACK's ``dnrm2``. :func:`pinv` of a full-rank,
not badly conditioned matrix does not go through :func:`svd` and is exact there.

Errors: :class:`tenferro.errors.ShapeError` for non-square matrices where square ones are needed
and for batch axes that do not broadcast; :class:`LinAlgError` (also a
``numpy.linalg.LinAlgError``) for singular matrices in ``solve``/``inv``/``triangular_solve``,
non-positive-definite ``cholesky`` inputs, non-finite inputs and non-convergence — a NaN is never
returned silently.

Examples
--------
>>> import tenferro as tf
>>> a = tf.asarray([[3.0, 1.0], [1.0, 3.0]])
>>> tf.linalg.eigvalsh(a).tolist()
[2.0, 4.0]
>>> round(float(tf.linalg.det(a)), 12)
8.0
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from . import _trace_errors
from . import prim as _p
from ._factories import asarray
from ._numpy_api import elementwise as _ew
from ._numpy_api import indexing as _ix
from ._numpy_api import layout as _lay
from ._numpy_api import linear as _lin
from ._numpy_api import reductions as _red
from ._numpy_api._common import _adopt, _normalize_axes
from ._tenferro import Tensor
from .errors import LinAlgError, ShapeError

__all__ = [
    "LinAlgError",
    "EigResult",
    "EighResult",
    "LUResult",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "cholesky",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "lu",
    "matrix_transpose",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "trace",
    "triangular_solve",
]

ArrayLike = Any


class SVDResult(NamedTuple):
    """``(U, S, Vh)`` of :func:`svd`."""

    U: Tensor
    S: Tensor
    Vh: Tensor


class QRResult(NamedTuple):
    """``(Q, R)`` of :func:`qr`."""

    Q: Tensor
    R: Tensor


class EighResult(NamedTuple):
    """``(eigenvalues, eigenvectors)`` of :func:`eigh`."""

    eigenvalues: Tensor
    eigenvectors: Tensor


class EigResult(NamedTuple):
    """``(eigenvalues, eigenvectors)`` of :func:`eig`."""

    eigenvalues: Tensor
    eigenvectors: Tensor


class LUResult(NamedTuple):
    """``(P, L, U)`` of :func:`lu`."""

    P: Tensor
    L: Tensor
    U: Tensor


class SlogdetResult(NamedTuple):
    """``(sign, logabsdet)`` of :func:`slogdet`."""

    sign: Tensor
    logabsdet: Tensor


# ---------------------------------------------------------------------------------------------
# layout helpers
# ---------------------------------------------------------------------------------------------


def _matrix(op: str, a: ArrayLike, *, square: bool = False) -> Tensor:
    """``a`` as a float or complex tensor of rank >= 2 (ints and bools become float64)."""
    x = a if isinstance(a, Tensor) else asarray(a)
    if x.ndim < 2:
        raise ShapeError(
            f"linalg.{op}: expected an array of at least two dimensions, got shape {tuple(x.shape)}"
        )
    if square and x.shape[-1] != x.shape[-2]:
        raise ShapeError(
            f"linalg.{op}: last 2 dimensions of the array must be square, got shape {tuple(x.shape)}"
        )
    if x.dtype.kind in "biu":
        x = x.astype(np.float64)
    return x


def _core(a: Tensor) -> Tensor:
    """``(..., m, n)`` → ``(m, n, ...)`` (a view)."""
    nd = a.ndim
    if nd == 2:
        return a
    return _p.transpose(a, (nd - 2, nd - 1, *range(nd - 2)))


def _batch_first(t: Tensor, core: int) -> Tensor:
    """``(core axes..., batch...)`` → ``(batch..., core axes...)`` (a view)."""
    nd = t.ndim
    if nd == core:
        return t
    return _p.transpose(t, (*range(core, nd), *range(core)))


@contextlib.contextmanager
def _named(op: str, *primitives: str) -> Iterator[None]:
    """Prefix ``linalg.<op>:`` to a :class:`LinAlgError` raised by the primitives a composition
    runs (``inv`` runs ``solve``), so the message names the function the user called. Under
    ``tf.jit`` the errors of ``primitives`` come from the compiled call, which applies the same
    prefix (``_trace_errors``)."""
    for prim in primitives:
        if prim != op:
            _trace_errors.rename(LinAlgError, prim, "prefix", f"linalg.{op}: ")
    try:
        yield
    except LinAlgError as e:
        if str(e).startswith((f"{op}:", f"linalg.{op}:")):
            raise
        raise LinAlgError(f"linalg.{op}: {e}") from e


def _eye_like(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Constant identity matrices (``np.eye(m, n)`` in the last two axes) of ``shape``, in
    ``x``'s runtime and dtype."""
    return x.runtime.constant(np.broadcast_to(np.eye(shape[-2], shape[-1], dtype=x.dtype), shape))


def _swap(a: Tensor) -> Tensor:
    nd = a.ndim
    return _p.transpose(a, (*range(nd - 2), nd - 1, nd - 2))


def _hermitian_core(op: str, a: ArrayLike, UPLO: str) -> Tensor:
    """The batch-last core of ``a`` whose lower triangle holds the triangle named by ``UPLO``
    (the kernels read the lower one)."""
    if UPLO not in ("L", "U"):
        raise ValueError(f"linalg.{op}: UPLO must be 'L' or 'U', got {UPLO!r}")
    x = _matrix(op, a, square=True)
    if UPLO == "U":
        x = _ew.conj(_swap(x))
    return _core(x)


def _broadcast_batch(op: str, a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """Broadcast the batch axes of ``a`` and ``b`` against each other (NumPy rules)."""
    try:
        batch = np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    except ValueError:
        raise ShapeError(
            f"linalg.{op}: batch axes {tuple(a.shape[:-2])} and {tuple(b.shape[:-2])} do not broadcast"
        ) from None
    if tuple(a.shape[:-2]) != batch:
        a = _lay.broadcast_to(a, (*batch, *a.shape[-2:]))
    if tuple(b.shape[:-2]) != batch:
        b = _lay.broadcast_to(b, (*batch, *b.shape[-2:]))
    return a, b


def _common(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    d = np.result_type(a.dtype, b.dtype)
    if d.kind in "biu":
        d = np.dtype(np.float64)
    return (a if a.dtype == d else a.astype(d)), (b if b.dtype == d else b.astype(d))


# ---------------------------------------------------------------------------------------------
# decompositions
# ---------------------------------------------------------------------------------------------


def svd(a: ArrayLike, full_matrices: bool = True, eps: float = 1e-12) -> SVDResult:
    """Singular value decomposition ``a = U @ diag(S) @ Vh``, as ``numpy.linalg.svd``.

    Parameters
    ----------
    a : Tensor or array_like
        Shape ``(..., m, n)``; float32, float64, complex64 or complex128.
    full_matrices : bool
        ``U`` is ``(..., m, m)`` and ``Vh`` ``(..., n, n)``; else ``(..., m, k)`` and
        ``(..., k, n)`` with ``k = min(m, n)``.
    eps : float
        Broadening of the derivative rules, relative to the scale ``σ ≈ max(S)`` (a power of
        two): ``1/(s_j² − s_i²)`` becomes ``g/(g² + (eps·σ²)²)`` and ``1/s`` becomes
        ``s/(s² + (eps·σ)²)`` (Townsend 2016; complex gauge
        term after Wan & Zhang 2019 and JAX's ``svd_jvp_rule``). With ``full_matrices`` and
        ``m != n`` the completing vectors get the tangent ``-U₁·dU₁ᴴ·U₂`` (gauge
        ``U₂ᴴ·dU₂ = 0``).

    Returns
    -------
    SVDResult
        ``U``, ``S`` (real, non-increasing, shape ``(..., k)``), ``Vh``.

    Raises
    ------
    ShapeError
        For rank < 2.
    LinAlgError
        For non-finite input or non-convergence.

    Examples
    --------
    >>> import tenferro as tf
    >>> U, S, Vh = tf.linalg.svd(tf.asarray([[3.0, 0.0], [0.0, -2.0]]))
    >>> S.tolist()
    [3.0, 2.0]
    """
    x = _core(_matrix("svd", a))
    u, s, vh = _p.svd(x, bool(full_matrices), float(eps))
    return SVDResult(_batch_first(u, 2), _batch_first(s, 1), _batch_first(vh, 2))


def svdvals(a: ArrayLike, eps: float = 1e-12) -> Tensor:
    """Singular values of ``a`` (shape ``(..., min(m, n))``, non-increasing), as
    ``numpy.linalg.svdvals``.

    Singular vectors are computed only when the call is recorded for differentiation (``a``
    tracked in grad mode, or inside a transform): then the values come from :func:`svd`, whose
    vectors the derivative ``Ā = U·diag(s̄)·Vh`` needs; otherwise only the values are computed
    (as PyTorch's ``torch.linalg.svdvals``). ``eps`` is :func:`svd`'s.

    Raises
    ------
    ShapeError
        For inputs of rank < 2.
    LinAlgError
        For non-finite input or non-convergence.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.linalg.svdvals(tf.asarray([[0.0, 2.0], [1.0, 0.0]])).tolist()
    [2.0, 1.0]
    """
    x = _core(_matrix("svdvals", a))
    if _p._SESSION._records(x):
        _, s, _ = _p.svd(x, False, float(eps))
    else:
        s = _p.svdvals(x)
    return _batch_first(s, 1)


def qr(a: ArrayLike, mode: str = "reduced") -> QRResult:
    """QR decomposition ``a = Q @ R`` with a real non-negative diagonal of ``R``.

    Parameters
    ----------
    a : Tensor or array_like
        Shape ``(..., m, n)``.
    mode : {"reduced", "complete"}
        ``"reduced"``: ``Q`` ``(..., m, k)``, ``R`` ``(..., k, n)``; ``"complete"``: ``Q``
        ``(..., m, m)``, ``R`` ``(..., m, n)``.

    Returns
    -------
    QRResult
        ``Q`` with orthonormal columns, ``R`` upper triangular. Derivatives: Walter & Lehmann
        2018 / JAX ``qr_jvp_rule`` for ``m >= n``, the split ``A = [X | Y]`` of PyTorch's
        ``linalg_qr_backward`` for ``m < n``; ``"complete"`` with ``m > n`` has no derivative
        (``UnsupportedAdRuleError``).

    Raises
    ------
    ValueError
        For another ``mode``.
    LinAlgError
        For non-finite input.

    Examples
    --------
    >>> import tenferro as tf
    >>> Q, R = tf.linalg.qr(tf.asarray([[0.0, 1.0], [-2.0, 0.0]]))
    >>> R.tolist()
    [[2.0, 0.0], [0.0, 1.0]]
    """
    if mode not in ("reduced", "complete"):
        raise ValueError(f"linalg.qr: mode must be 'reduced' or 'complete', got {mode!r}")
    x = _core(_matrix("qr", a))
    q, r = _p.qr(x, mode == "complete")
    return QRResult(_batch_first(q, 2), _batch_first(r, 2))


def eigh(a: ArrayLike, UPLO: str = "L", eps: float = 1e-12) -> EighResult:
    """Eigendecomposition of Hermitian matrices, as ``numpy.linalg.eigh``.

    Only the triangle named by ``UPLO`` is read (and the real part of the diagonal).

    Parameters
    ----------
    a : Tensor or array_like
        Shape ``(..., n, n)``.
    UPLO : {"L", "U"}
        Triangle to read.
    eps : float
        Broadening of ``1/(λ_j − λ_i)`` in the derivative rules, relative to the scale
        ``σ ≈ max|λ|`` (a power of two): ``g/(g² + (eps·σ)²)`` (Giles 2008; JAX
        ``eigh_jvp_rule``).

    Returns
    -------
    EighResult
        ``eigenvalues`` (real, ascending, ``(..., n)``) and ``eigenvectors`` (columns).

    Raises
    ------
    ShapeError
        For non-square matrices.
    LinAlgError
        For non-finite input or non-convergence.

    Examples
    --------
    >>> import tenferro as tf
    >>> w, V = tf.linalg.eigh(tf.asarray([[2.0, 1.0], [1.0, 2.0]]))
    >>> w.tolist()
    [1.0, 3.0]
    """
    w, v = _p.eigh(_hermitian_core("eigh", a, UPLO), float(eps))
    return EighResult(_batch_first(w, 1), _batch_first(v, 2))


def eigvalsh(a: ArrayLike, UPLO: str = "L", eps: float = 1e-12) -> Tensor:
    """Eigenvalues of Hermitian matrices (ascending, shape ``(..., n)``), as
    ``numpy.linalg.eigvalsh``; only the triangle named by ``UPLO`` is read.

    Eigenvectors are computed only when the call is recorded for differentiation: then the
    values come from :func:`eigh` (the derivative ``Ā = V·diag(w̄)·Vᴴ`` needs them); otherwise
    only the values are computed. ``eps`` is :func:`eigh`'s.

    Raises
    ------
    ShapeError
        For non-square matrices.
    LinAlgError
        For non-finite input or non-convergence.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.linalg.eigvalsh(tf.asarray([[1.0, 0.0], [0.0, -1.0]])).tolist()
    [-1.0, 1.0]
    """
    c = _hermitian_core("eigvalsh", a, UPLO)
    if _p._SESSION._records(c):
        w, _ = _p.eigh(c, float(eps))
    else:
        w = _p.eigvalsh(c)
    return _batch_first(w, 1)


def eig(a: ArrayLike) -> EigResult:
    """Eigendecomposition of general square matrices: ``a @ V = V * w``.

    Unlike NumPy the result is always complex (also for real input with real eigenvalues);
    eigenvectors have unit 2-norm. Only the eigenvalues are differentiable (Giles 2008:
    ``ā = V⁻ᴴ·diag(w̄)·Vᴴ``); derivatives through the eigenvectors raise
    ``UnsupportedAdRuleError``.

    Raises
    ------
    ShapeError
        For non-square matrices.
    LinAlgError
        For non-finite input or non-convergence.

    Examples
    --------
    >>> import tenferro as tf
    >>> w, V = tf.linalg.eig(tf.asarray([[0.0, -1.0], [1.0, 0.0]]))
    >>> sorted(round(z.imag, 12) for z in w.tolist())
    [-1.0, 1.0]
    """
    x = _core(_matrix("eig", a, square=True))
    w, v = _p.eig(x)
    return EigResult(_batch_first(w, 1), _batch_first(v, 2))


def eigvals(a: ArrayLike) -> Tensor:
    """Eigenvalues of general square matrices (complex), differentiable.

    Examples
    --------
    >>> import tenferro as tf
    >>> sorted(z.real for z in tf.linalg.eigvals(tf.asarray([[2.0, 1.0], [0.0, 3.0]])).tolist())
    [2.0, 3.0]
    """
    return eig(a).eigenvalues


def cholesky(a: ArrayLike, upper: bool = False) -> Tensor:
    """Cholesky factor of Hermitian positive-definite matrices, as ``numpy.linalg.cholesky``.

    Reads the lower triangle (the upper one with ``upper=True``, as NumPy) and the real part of
    the diagonal. Derivatives: Murray 2016.

    Parameters
    ----------
    a : Tensor or array_like
        Shape ``(..., n, n)``.
    upper : bool
        Return ``U = Lᴴ`` (``a = Uᴴ @ U``) instead of ``L`` (``a = L @ Lᴴ``).

    Raises
    ------
    ShapeError
        For non-square matrices.
    LinAlgError
        If a matrix is not positive definite or not finite.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.linalg.cholesky(tf.asarray([[4.0, 2.0], [2.0, 5.0]])).tolist()
    [[2.0, 0.0], [1.0, 2.0]]
    """
    x = _matrix("cholesky", a, square=True)
    if upper:
        # The kernel reads the lower triangle: hand it aᴴ, whose lower triangle is a's upper one.
        x = _ew.conj(_swap(x))
    low = _batch_first(_p.cholesky(_core(x)), 2)
    return _ew.conj(_swap(low)) if upper else low


def lu(a: ArrayLike) -> LUResult:
    """LU decomposition with partial pivoting ``a = P @ L @ U``, as ``scipy.linalg.lu``.

    ``P`` is a permutation matrix of ``a``'s dtype, ``L`` ``(..., m, k)`` unit lower triangular,
    ``U`` ``(..., k, n)`` upper triangular, ``k = min(m, n)``. Derivatives (square matrices):
    PyTorch ``linalg_lu_backward``; ``P`` has zero derivative.

    Raises
    ------
    LinAlgError
        For non-finite input, and for a rank-deficient matrix whose pivot column is exactly zero
        at some elimination step (e.g. a zero column): faer's LU divides by that pivot where
        LAPACK's ``getrf`` skips the step, so tenferro raises rather than return NaN factors.
        Other singular matrices factor (``U`` has a zero on its diagonal).

    Examples
    --------
    >>> import tenferro as tf
    >>> P, L, U = tf.linalg.lu(tf.asarray([[1.0, 2.0], [3.0, 4.0]]))
    >>> P.tolist(), U.tolist()
    ([[0.0, 1.0], [1.0, 0.0]], [[3.0, 4.0], [0.0, 0.6666666666666667]])
    """
    x = _core(_matrix("lu", a))
    p, low, up = _p.lu(x)
    return LUResult(_batch_first(p, 2), _batch_first(low, 2), _batch_first(up, 2))


def _solve_like(op: str, a: ArrayLike, b: ArrayLike, run: Any) -> Tensor:
    if isinstance(b, Tensor) and not isinstance(a, Tensor):
        a = _adopt(a, (b,))  # nested tracked tensors stay tracked
    x = _matrix(op, a, square=True)
    y = _adopt(b, (x,))
    vector = y.ndim == 1
    if vector:
        y = _lay.expand_dims(y, -1)
    if y.ndim < 2:
        raise ShapeError(
            f"linalg.{op}: b must have at least one dimension, got shape {tuple(y.shape)}"
        )
    if y.shape[-2] != x.shape[-1]:
        raise ShapeError(
            f"linalg.{op}: a has shape {tuple(x.shape)} but b has shape {tuple(y.shape) if not vector else tuple(y.shape[:-1])}: "
            f"b needs {x.shape[-1]} rows"
        )
    x, y = _common(x, y)
    x, y = _broadcast_batch(op, x, y)
    with _named(op, "triangular_solve" if op == "triangular_solve" else "solve"):
        res = run(_core(x), _core(y))
    out = _batch_first(res, 2)
    return out[..., 0] if vector else out


def solve(a: ArrayLike, b: ArrayLike) -> Tensor:
    """Solve ``a @ x = b``, as ``numpy.linalg.solve`` (NumPy 2: ``b`` is a vector only when 1-d).

    LU with partial pivoting; zero pivots are detected. Derivatives: Giles 2008
    (``b̄ = a⁻ᴴ·x̄``, ``ā = −b̄·xᴴ``).

    Parameters
    ----------
    a : Tensor or array_like
        ``(..., n, n)``.
    b : Tensor or array_like
        ``(n,)`` or ``(..., n, k)``; batch axes broadcast with ``a``'s.

    Raises
    ------
    ShapeError
        For non-square ``a``, mismatched rows, batch axes that do not broadcast.
    LinAlgError
        For a singular ``a`` or non-finite input.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.linalg.solve(tf.asarray([[2.0, 0.0], [0.0, 4.0]]), tf.asarray([2.0, 2.0])).tolist()
    [1.0, 0.5]
    """
    return _solve_like("solve", a, b, _p.solve)


def triangular_solve(a: ArrayLike, b: ArrayLike, lower: bool = True, left: bool = True) -> Tensor:
    """Solve ``tri(a) @ x = b`` (``left=True``) or ``x @ tri(a) = b`` (``left=False``).

    Only the lower (``lower=True``) or upper triangle of ``a`` is read. Derivatives: JAX's
    ``triangular_solve`` rules.

    Raises
    ------
    ShapeError
        As :func:`solve`.
    LinAlgError
        For a zero on the diagonal or non-finite input.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.linalg.triangular_solve(tf.asarray([[2.0, 0.0], [1.0, 1.0]]), tf.asarray([2.0, 3.0])).tolist()
    [1.0, 2.0]
    """
    if left:
        return _solve_like(
            "triangular_solve", a, b, lambda x, y: _p.triangular_solve(x, y, bool(lower))
        )
    x = _matrix("triangular_solve", a, square=True)
    y = _adopt(b, (x,))
    if y.ndim < 2:
        raise ShapeError(
            f"linalg.triangular_solve: with left=False b must be a matrix, got shape {tuple(y.shape)}"
        )
    return _swap(
        _solve_like(
            "triangular_solve",
            _swap(x),
            _swap(y),
            lambda p, q: _p.triangular_solve(p, q, not lower),
        )
    )


def inv(a: ArrayLike) -> Tensor:
    """Inverse of square matrices, as ``numpy.linalg.inv`` (``solve(a, I)``).

    Raises
    ------
    ShapeError
        For non-square matrices.
    LinAlgError
        For singular matrices.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.linalg.inv(tf.asarray([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    x = _matrix("inv", a, square=True)
    return _solve_like("inv", x, _eye_like(x, tuple(x.shape)), _p.solve)


def slogdet(a: ArrayLike) -> SlogdetResult:
    """Sign and natural log of the absolute determinant, as ``numpy.linalg.slogdet``.

    ``sign`` has ``a``'s dtype (a unit phase for complex), ``logabsdet`` is real; a singular
    matrix gives ``(0, -inf)``. Derivatives: ``d logabsdet = Re tr(a⁻¹·da)``, ``d sign =
    sign·i·Im tr(a⁻¹·da)`` (Giles 2008).

    Examples
    --------
    >>> import tenferro as tf
    >>> s, l = tf.linalg.slogdet(tf.asarray([[-2.0, 0.0], [0.0, 1.0]]))
    >>> float(s), round(float(l), 6)
    (-1.0, 0.693147)
    """
    x = _core(_matrix("slogdet", a, square=True))
    s, logabs = _p.slogdet(x)
    return SlogdetResult(_batch_first(s, 0), _batch_first(logabs, 0))


def det(a: ArrayLike) -> Tensor:
    """Determinant, as ``numpy.linalg.det``: ``sign * exp(logabsdet)`` of :func:`slogdet`.

    Raises
    ------
    ShapeError
        For non-square matrices.
    LinAlgError
        For non-finite input; and when differentiating at an exactly singular matrix: the
        derivative goes through :func:`slogdet`'s ``d logabsdet = Re tr(a⁻¹·da)``, which solves
        with ``a`` (the adjugate form ``tr(adj(a)·da)`` that stays finite there is not built).

    Examples
    --------
    >>> import tenferro as tf
    >>> round(float(tf.linalg.det(tf.asarray([[1.0, 2.0], [3.0, 4.0]]))), 12)
    -2.0
    """
    with _named("det", "slogdet"):
        s, logabs = slogdet(_matrix("det", a, square=True))
    return _ew.multiply(s, _ew.exp(logabs))


def pinv(a: ArrayLike, rtol: Any = None, hermitian: bool = False) -> Tensor:
    """Moore–Penrose pseudo-inverse, as ``numpy.linalg.pinv(a, rtol=rtol, hermitian=hermitian)``.

    Parameters
    ----------
    a : array_like, shape ``(..., m, n)``
        float32/float64/complex64/complex128 (ints and bools become float64).
    rtol : float or array_like, optional
        Singular values at or below ``rtol * max(S)`` are treated as zero; an array broadcasts
        against the batch axes (NumPy's ``rtol[..., newaxis]``). The default is
        ``max(m, n) * finfo(dtype).eps``: NumPy's ``rtol=None`` and the array API's default
        (a bare ``numpy.linalg.pinv(a)`` still uses the legacy ``rcond=1e-15``). A tensor
        (also one traced by ``tf.jit``) is used as a tensor.
    hermitian : bool
        ``a`` is Hermitian (only its lower triangle is read, as NumPy's ``eigh``): the
        pseudo-inverse is ``U·diag(1/λ)·Uᴴ`` over the eigenvalues of :func:`eigh` with
        ``|λ| > rtol·max|λ|`` (NumPy's formula; derivatives through :func:`eigh`'s broadened
        rules).

    Returns
    -------
    Tensor, shape ``(..., n, m)``, ``a``'s dtype.

    Notes
    -----
    A matrix with full rank and condition number below ``1/sqrt(eps)`` (``eps`` of the dtype:
    about 7e7 in double, 3e3 in single precision) goes through the reduced :func:`qr` of ``a``
    (of ``aᴴ`` when ``m < n``): ``R⁻¹·Qᴴ``. Its derivatives are the exact ones of a
    constant-rank pseudo-inverse to any order (Golub & Pereyra 1973, as JAX's and PyTorch's
    ``pinv`` rules), also at repeated singular values such as at ``I``, where the route through
    :func:`svd` meets the broadened inverse gaps (module docs). Every other matrix, rank-deficient
    or worse conditioned (where unpivoted QR loses accuracy), gets ``V·diag(1/s)·Uᴴ`` over the
    kept singular values of :func:`svd`. Its first derivative is the constant-rank one as well
    (also at repeated kept values, e.g. at projectors) when the kept values lie within
    ``eps**(1/4)`` of the largest; otherwise it carries the broadening. The choice is made per
    matrix of the batch, on the singular values. Second derivatives at rank-deficient matrices
    meet the broadened ``1/s`` at ``s = 0`` and are not reliable there.

    Under ``tf.jit`` the choice cannot read the singular values at trace time: the traced
    program computes both routes and selects per matrix with ``where`` on the same test
    (the QR route runs on the identity in place of a matrix that takes the SVD route), so the
    values equal eager ones.

    Raises
    ------
    ShapeError
        For inputs of rank < 2, or non-square ones with ``hermitian=True``.
    ValueError
        If ``rtol`` does not broadcast to the batch shape.
    LinAlgError
        For non-finite input or non-convergence (under ``tf.jit``: from the compiled call).

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> tf.linalg.pinv(tf.asarray([[2.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    >>> np.round(tf.linalg.pinv(tf.asarray([[1.0], [1.0]])), 12).tolist()
    [[0.5, 0.5]]
    """
    x = _matrix("pinv", a)
    m, n = x.shape[-2:]
    batch = tuple(x.shape[:-2])
    eps = float(np.finfo(x.dtype).eps)
    if rtol is None:
        rtol = max(m, n) * eps
    tol: Any
    if isinstance(rtol, Tensor):
        tol = _lay.expand_dims(rtol, -1) if rtol.ndim else rtol
        tol_batch = tuple(rtol.shape)
    else:
        tol = np.asarray(rtol, dtype=np.float64)
        if tol.ndim:
            tol = tol[..., None]
        tol_batch = tuple(tol.shape[:-1]) if tol.ndim else ()
    if tol_batch:
        try:
            fits = np.broadcast_shapes(tol_batch, batch) == batch
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(
                f"linalg.pinv: rtol of shape {tol_batch} does not broadcast to the batch shape {batch}"
            )
    if min(m, n) == 0:
        # Zeros of shape (..., n, m), in `a`'s runtime and attached to it (zero derivative).
        return _ew.multiply(_swap(x), 0)
    if hermitian:
        if m != n:
            raise ShapeError(
                f"linalg.pinv: hermitian=True needs square matrices, got shape {tuple(x.shape)}"
            )
        with _named("pinv", "eigh"):
            w, u = eigh(x)
            aw = _ew.abs(w)
            keep = _ew.greater(aw, _ew.multiply(_red.max(aw, axis=-1, keepdims=True), tol))
            winv = _ix.where(keep, _ew.divide(1.0, _ix.where(keep, w, 1.0)), 0.0)
            return _lin.matmul(_ew.multiply(u, _lay.expand_dims(winv, -2)), _ew.conj(_swap(u)))
    traced = x._traced or (isinstance(tol, Tensor) and tol._traced)
    if traced:
        # The route is chosen per matrix inside the program (see Notes).
        with _named("pinv", "svdvals", "svd"):
            sv = svdvals(x.detach())
        smax = _red.max(sv, axis=-1, keepdims=True)
        floor = (
            _ew.maximum(tol, math.sqrt(eps))
            if isinstance(tol, Tensor)
            else np.maximum(tol, math.sqrt(eps))
        )
        well = _red.all(_ew.greater(sv, _ew.multiply(floor, smax)), axis=-1)
        mask = _lay.expand_dims(well, (-2, -1))
        stand_in = _eye_like(x, tuple(x.shape))
        return _ix.where(mask, _pinv_qr(_ix.where(mask, x, stand_in)), _pinv_svd(x, tol, eps))
    if isinstance(tol, Tensor):
        tol = np.asarray(tol, dtype=np.float64)
    with _named("pinv"):
        sv = np.asarray(svdvals(x.detach()))  # the routes are chosen on values only
    smax = sv.max(axis=-1, keepdims=True)
    well = np.all(sv > np.maximum(tol, math.sqrt(eps)) * smax, axis=-1)
    if well.all():
        return _pinv_qr(x)
    if not well.any():
        return _pinv_svd(x, tol, eps)
    mask = well[..., None, None]
    stand_in = _eye_like(x, tuple(x.shape))
    return _ix.where(mask, _pinv_qr(_ix.where(mask, x, stand_in)), _pinv_svd(x, tol, eps))


def _pinv_qr(x: Tensor) -> Tensor:
    """``R⁻¹·Qᴴ`` of full-rank ``x`` (through ``xᴴ`` when it is wide)."""
    m, n = x.shape[-2:]
    y = x if m >= n else _ew.conj(_swap(x))
    q, r = qr(y)
    p = triangular_solve(r, _ew.conj(_swap(q)), lower=False)
    return p if m >= n else _ew.conj(_swap(p))


def _pinv_svd(x: Tensor, tol: np.ndarray, eps: float) -> Tensor:
    """``V·diag(1/s)·Uᴴ`` over the singular values above ``tol·max(s)``.

    When the call records and a matrix's kept singular values lie within ``eps**(1/4)`` of the
    largest, its derivative is taken from the rank-``r`` expression
    ``(P·AᴴA·P + c·(I − P))⁻¹·P·Aᴴ`` (``P = V_r·V_rᴴ``, ``c = max(s)²``), which equals the
    pseudo-inverse of the rank-``r`` truncation of ``A`` and has the constant-rank (Golub &
    Pereyra 1973) first derivative also at repeated kept values, where ``V·diag(1/s)·Uᴴ``'s
    derivative meets the broadened gaps. ``P`` only enters through the kept/dropped couplings,
    whose gaps are at least the cutoff. The value stays ``V·diag(1/s)·Uᴴ``'s (``p + (g − g)``
    with ``g`` detached once), since that expression squares the condition number. ``eps`` is
    the dtype's.
    """
    u, s, vh = svd(x, full_matrices=False)
    cutoff = _ew.multiply(_red.max(s, axis=-1, keepdims=True), tol)
    keep = _ew.greater(s, cutoff).astype(s.dtype)
    # 1/s where kept, 0 elsewhere, without a division by zero (whose derivative would be inf).
    sinv = _ew.divide(keep, _ew.add(s, _ew.subtract(1.0, keep)))
    v = _ew.conj(_swap(vh))
    p = _lin.matmul(_ew.multiply(v, _lay.expand_dims(sinv, -2)), _ew.conj(_swap(u)))
    if not _p._SESSION._records(x):
        return p
    if s._traced:
        # Under tf.jit: the same expression with the test on the values inside the program.
        kept_t = _ew.greater(keep, 0)
        smax_t = s[..., :1]
        smallest = _red.min(_ix.where(kept_t, s, np.inf), axis=-1, keepdims=True)
        smooth_t = _lay.expand_dims(
            _ew.logical_and(
                _red.any(kept_t, axis=-1, keepdims=True),
                _ew.greater(smallest, _ew.multiply(eps**0.25, smax_t)),
            ),
            -1,
        )
        return _pinv_smooth(x, v, keep, p, _ew.square(smax_t), smooth_t)
    sv, kept = np.asarray(s.detach()), np.asarray(keep.detach()) > 0
    smax = sv[..., :1]
    smallest_kept = np.where(kept, sv, np.inf).min(axis=-1, keepdims=True)
    smooth = (kept.any(axis=-1, keepdims=True) & (smallest_kept > eps**0.25 * smax))[..., None]
    if not smooth.any():
        return p
    return _pinv_smooth(x, v, keep, p, (smax**2)[..., None], smooth)


def _pinv_smooth(x: Tensor, v: Tensor, keep: Tensor, p: Tensor, smax2: Any, smooth: Any) -> Tensor:
    """``p`` with the derivative of the rank-``r`` expression where ``smooth`` (see
    :func:`_pinv_svd`); ``smax2`` is ``max(s)²`` of shape ``(..., 1, 1)``."""
    vk = _ew.multiply(v, _lay.expand_dims(keep, -2))
    proj = _lin.matmul(vk, _ew.conj(_swap(vk)))
    eye = _eye_like(x, tuple(proj.shape))
    xr = _lin.matmul(x, proj)
    xrh = _ew.conj(_swap(xr))
    gram = _ew.add(_lin.matmul(xrh, xr), _ew.multiply(_ew.subtract(eye, proj), smax2))
    g = solve(_ix.where(smooth, gram, eye), xrh)
    return _ix.where(smooth, _ew.add(p.detach(), _ew.subtract(g, g.detach())), p)


def _abs2(x: Tensor) -> Tensor:
    if x.dtype.kind == "c":
        return _ew.add(_ew.square(_ew.real(x)), _ew.square(_ew.imag(x)))
    return _ew.square(x)


def _where_nonzero(v: Tensor, f: Any, at_zero: float) -> Tensor:
    """``f(v)`` where ``v != 0`` and ``at_zero`` elsewhere, with derivative 0 at the zeros (``f``
    only ever sees non-zero values, so no ``0·inf = NaN``); NaN stays NaN."""
    nz = _ew.not_equal(v, 0)
    return _ix.where(nz, f(_ix.where(nz, v, 1.0)), at_zero)


def _root(s: Tensor, p: float) -> Tensor:
    """``s ** (1/p)`` of a sum ``s`` of ``|x|**p``. For ``p > 0`` the norm of a zero vector gets
    the zero subgradient, as in PyTorch; ``p < 0`` needs no guard (``0 ** (1/p) = inf``, as
    NumPy)."""
    if p < 0:
        return _ew.power(s, 1.0 / p)
    return _where_nonzero(s, _ew.sqrt if p == 2 else (lambda v: _ew.power(v, 1.0 / p)), 0.0)


def _abs_pow(ax: Tensor, p: float) -> Tensor:
    """``|x| ** p`` whose derivative is 0 at ``x == 0`` (``p·0**(p-1)`` is inf for ``p < 1``),
    the convention that gives PyTorch's zero subgradient."""
    return _where_nonzero(ax, lambda v: _ew.power(v, p), 0.0 if p > 0 else math.inf)


def _max0(x: Tensor, axis: Any, keepdims: bool) -> Tensor:
    """``max`` of non-negative values over ``axis``, 0 over an empty axis (as NumPy's norms)."""
    axes = axis if isinstance(axis, tuple) else (axis,)
    if any(x.shape[a] == 0 for a in axes):
        return _red.sum(x, axis=axis, keepdims=keepdims)
    return _red.max(x, axis=axis, keepdims=keepdims)


def _scaled_power_norm(x: Tensor, p: float, axis: Any, keepdims: bool) -> Tensor:
    """``(Σ|x|**p)**(1/p)`` over ``axis`` as ``m·(Σ|x/m|**p)**(1/p)`` with ``m = max|x|`` (``min|x|`` for ``p < 0``; at
    least the smallest normal number; 1 where it is not finite), as LAPACK's ``dnrm2`` and ``hypot`` scale: no ``|x|**p``
    over- or underflows where the norm does not (``[1e200, 1e200]``, ``[1e-170, 0]``), and the
    gradient ``x·|x|**(p−2)/‖x‖**(p−1)`` survives there. ``m`` is a constant: the expression is
    homogeneous of degree 0 in it, so the derivatives of every order are those of the norm."""
    # A negative order is dominated by the smallest |x|: scaling by it keeps |x/m| >= 1, so
    # |x/m| ** p <= 1 never overflows (scaling by the largest overflowed for entries far below it).
    ax0 = _ew.abs(x.detach())
    m = _red.min(ax0, axis=axis, keepdims=True) if p < 0 else _max0(ax0, axis, True)
    info = np.finfo(m.dtype)
    tiny = float(info.tiny)
    # Subnormal slices are first lifted by the exact constant c = 2^(nmant+11) (normal for every
    # subnormal), so that x/m lies in [1, 2] there too and neither the value (|x/m|**30) nor the
    # reverse-mode cotangent (scaled by m, then by 1/m) underflows.
    # (The selected branch is a tensor so that the constants join m's runtime.)
    lift = _ix.where(
        _ew.logical_and(m > 0, m < tiny), m * 0.0 + float(2.0 ** (info.nmant + 11)), 1.0
    )
    x = _ew.multiply(x, lift)
    m = _ew.multiply(m, lift)
    # At least the smallest normal number, whose reciprocal (in the derivative) is finite.
    m = _ix.where(_ew.isfinite(m), _ew.maximum(m, tiny), 1.0)
    xs = _ew.divide(x, m)
    if p == 2:
        r = _root(_red.sum(_abs2(xs), axis=axis, keepdims=True), 2)
    else:
        r = _root(_red.sum(_abs_pow(_ew.abs(xs), p), axis=axis, keepdims=True), p)
    r = _ew.divide(_ew.multiply(r, m), lift)
    return r if keepdims else _lay.squeeze(r, axis=axis)


def _vector_norm(x: Tensor, ord: Any, axis: int, keepdims: bool) -> Tensor:
    if ord is None or ord == 2:
        return _scaled_power_norm(x, 2, axis, keepdims)
    ax = _ew.abs(x)
    if ord == math.inf:
        return _max0(ax, axis, keepdims)
    if ord == -math.inf:
        return _red.min(ax, axis=axis, keepdims=keepdims)
    if ord == 0:
        return _red.sum(_ew.not_equal(x, 0), axis=axis, keepdims=keepdims).astype(ax.dtype)
    if ord == 1:
        return _red.sum(ax, axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"linalg.norm: invalid norm order {ord!r} for vectors")
    p = float(ord)
    if p < 0 and any(x.shape[a] == 0 for a in _axes_tuple(axis, x.ndim)):
        # An empty sum: 0 ** (1/p) = inf, as NumPy.
        return _root(_red.sum(_abs_pow(ax, p), axis=axis, keepdims=keepdims), p)
    return _scaled_power_norm(x, p, axis, keepdims)


def _axes_tuple(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in (axis if isinstance(axis, tuple) else (axis,)))


def _matrix_norm(x: Tensor, ord: Any, axes: tuple[int, int], keepdims: bool) -> Tensor:
    r, c = axes
    if ord is None or ord == "fro":
        out = _scaled_power_norm(x, 2, (r, c), True)
    elif ord in ("nuc", 2, -2):
        # Singular values of the matrices in (r, c): move them last.
        y = _lay.moveaxis(x, (r, c), (-2, -1))
        s = svdvals(y)
        if ord == "nuc":
            red = _red.sum(s, axis=-1)
        elif ord == 2:
            red = _max0(s, -1, False)
        else:
            red = _red.min(s, axis=-1)
        out = _lay.expand_dims(_lay.expand_dims(red, -1), -1)
        out = _lay.moveaxis(out, (-2, -1), (r, c))
    elif ord in (1, -1, math.inf, -math.inf):
        # 1: max over columns of the column sums; inf: max over rows of the row sums.
        sum_ax, red_ax = (r, c) if ord in (1, -1) else (c, r)
        sums = _red.sum(_ew.abs(x), axis=sum_ax, keepdims=True)
        red = _max0 if ord in (1, math.inf) else _red.min
        out = red(sums, axis=red_ax, keepdims=True)
    else:
        raise ValueError(f"linalg.norm: invalid norm order {ord!r} for matrices")
    if not keepdims:
        out = _lay.squeeze(out, axis=(r, c))
    return out


def norm(x: ArrayLike, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Vector or matrix norm, as ``numpy.linalg.norm``.

    ``axis=None``: the 2-norm of the flattened input when ``ord`` is None, else the vector norm
    of a 1-d or the matrix norm of a 2-d input. ``axis`` an int: vector norms (``ord`` in
    ``None, inf, -inf, 0, 1, 2, p``). ``axis`` a pair: matrix norms (``None``/``"fro"``,
    ``"nuc"``, ``1, -1, 2, -2, inf, -inf``; ``2``/``-2``/``"nuc"`` go through :func:`svd`).

    Returns
    -------
    Tensor
        Real (float32/float64); int and bool inputs give float64.

    Notes
    -----
    The 2-, Frobenius and ``p``-norms are computed as ``m·‖x/m‖`` with ``m = max|x|`` (LAPACK's
    ``dnrm2``), so neither they nor their gradients over- or underflow where the norm itself does
    not: ``norm([1e200, 1e200])`` is ``1.414e200`` (NumPy's ``sqrt(x·x)`` gives inf) and the
    gradient at ``[1e-170, 0]`` is ``[1, 0]``.

    Raises
    ------
    ValueError
        For an invalid ``ord``, or ``ord`` with ``axis=None`` on an input of rank > 2, and for
        ``-2``/``-inf`` (``-1`` over no columns) of empty inputs, as NumPy.
    AxisError
        For an axis out of range (a ``TypeError`` for a non-integer axis).
    LinAlgError
        For non-finite input to the norms computed from singular values (``2``, ``-2``,
        ``"nuc"``), as :func:`svd`; the other norms propagate NaN and inf as NumPy.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.asarray([[3.0, 0.0], [0.0, -4.0]])
    >>> float(tf.linalg.norm(x)), float(tf.linalg.norm(x, 2)), float(tf.linalg.norm(x, "nuc"))
    (5.0, 4.0, 7.0)
    >>> tf.linalg.norm(x, axis=1).tolist()
    [3.0, 4.0]
    """
    t = x if isinstance(x, Tensor) else asarray(x)
    if t.dtype.kind in "biu":
        t = t.astype(np.float64)
    nd = t.ndim
    if axis is None:
        if ord is None:
            r = _scaled_power_norm(_lay.reshape(t, (-1,)), 2, 0, False)
            if keepdims:
                r = _lay.reshape(r, (1,) * nd)
            return r
        if nd == 1:
            return _vector_norm(t, ord, 0, keepdims)
        if nd == 2:
            return _matrix_norm(t, ord, (0, 1), keepdims)
        raise ValueError("linalg.norm: improper number of dimensions to norm")
    axes = _normalize_axes("linalg.norm", axis, nd)
    if len(axes) == 1:
        return _vector_norm(t, ord, axes[0], keepdims)
    if len(axes) == 2:
        return _matrix_norm(t, ord, axes, keepdims)
    raise ValueError("linalg.norm: improper number of dimensions to norm")


# ---------------------------------------------------------------------------------------------
# structural helpers (NumPy 2 ``numpy.linalg`` names)
# ---------------------------------------------------------------------------------------------


def matrix_transpose(x: ArrayLike, /) -> Tensor:
    """Swap the last two axes (a view), as ``numpy.linalg.matrix_transpose``.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.linalg.matrix_transpose(tf.asarray([[1, 2, 3]])).shape
    (3, 1)
    """
    t = x if isinstance(x, Tensor) else asarray(x)
    if t.ndim < 2:
        raise ShapeError(f"linalg.matrix_transpose: expected rank >= 2, got shape {tuple(t.shape)}")
    return _swap(t)


def trace(x: ArrayLike, /, *, offset: int = 0, dtype: Any = None) -> Tensor:
    """Sum of the diagonals of the last two axes, as ``numpy.linalg.trace`` and the Array API's
    ``linalg.trace`` (``dtype``: the accumulation and result dtype; ``None`` as
    :func:`tenferro.trace`, integers accumulating in int64).

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.linalg.trace(tf.asarray([[1.0, 2.0], [3.0, 4.0]])).tolist()
    5.0
    """
    return _lin.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def diagonal(x: ArrayLike, /, *, offset: int = 0) -> Tensor:
    """Diagonals of the last two axes, as ``numpy.linalg.diagonal``.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.linalg.diagonal(tf.asarray([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [1.0, 4.0]
    """
    return _lin.diagonal(x, offset=offset, axis1=-2, axis2=-1)


# The Array API extension functions of NumPy 2's ``numpy.linalg`` (vector_norm, matrix_norm,
# cross, outer, matrix_power, matrix_rank, vecdot, matmul, tensordot).
from . import _linalg_api  # noqa: E402
from ._linalg_api import *  # noqa: E402,F401,F403

__all__ += _linalg_api.__all__

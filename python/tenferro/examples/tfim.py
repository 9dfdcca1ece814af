"""Ground state of the open transverse-field Ising chain with a variational MPS (``make demo``).

The Hamiltonian of ``N`` spins-1/2 with open ends is

    H = -J Σ_{i=0}^{N-2} Z_i Z_{i+1}  -  g Σ_{i=0}^{N-1} X_i

(Pauli matrices, ``J`` the coupling, ``g`` the transverse field; ``g = J`` is the critical point).
It is written as a matrix-product operator (MPO) of bond dimension 3, and the ground state is
approximated by a matrix-product state (MPS) of bond dimension ``D`` whose site ``i`` has shape
``(Dl, 2, Dr)`` with ``Dl = min(D, 2**i, 2**(N-i))`` and ``Dr = min(D, 2**(i+1), 2**(N-i-1))``.
The Rayleigh quotient ``E = <ψ|H|ψ> / <ψ|ψ>`` is contracted with :func:`tenferro.einsum`, its
gradient comes from tenferro's reverse mode (``backward``), and all MPS entries are optimised
together with ``scipy.optimize.minimize(method="L-BFGS-B", jac=True)``.

The reference energy is independent of the MPS: by the Jordan-Wigner transformation the open
chain is a free-fermion problem whose ground energy is ``-Σ_k s_k``, the sum of the singular
values of the ``N x N`` upper-bidiagonal matrix with ``g`` on the diagonal and ``J`` on the
superdiagonal (P. Pfeuty, Ann. Phys. 57, 79 (1970); see :func:`exact_energy`).

Run ``python -m tenferro.examples.tfim --help`` (or ``python examples/tfim_ground_state.py``).
The last line printed is the summary: sites, bond, energy, exact energy, relative error, the
number of energy+gradient evaluations, the seconds from the first evaluation to the end of the
optimisation and the milliseconds per evaluation (that time divided by the evaluations, so the
optimiser's own work is included). The exit status is 1 when ``--tol`` was not reached.

Complex MPS (``--dtype complex128``): L-BFGS works on the real vector ``[Re z, Im z]`` of all
parameters. For a real loss tenferro's gradient is ``∂E/∂Re z + i ∂E/∂Im z`` (the Hermitian
convention of ``docs/autodiff.md``), so its real and imaginary parts are exactly the gradient
with respect to that real vector.

Examples
--------
>>> from tenferro.examples import tfim
>>> tfim.bond_dims(6, 3)
[(1, 2), (2, 3), (3, 3), (3, 3), (3, 2), (2, 1)]
>>> round(tfim.exact_energy(2, g=1.0), 12) == round(-(5 ** 0.5), 12)   # -sqrt(J**2 + 4 g**2)
True
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import tenferro as tf

__all__ = [
    "bond_dims",
    "exact_energy",
    "tfim_mpo",
    "random_mps",
    "mps_energy",
    "TfimProblem",
    "Result",
    "ground_state",
    "save_plot",
    "main",
]

# One step of the left environment, site by site (see `mps_energy`): the environment L has axes
# (ket bond a, MPO bond w, bra bond b); each pairwise step is one dot_general whose natural output
# order ([lhs free..., rhs free...]) is already the order the next step wants, so no transpose.
_STEP_KET = "awb,asc->wbsc"  # contract the ket bond with A[a, s, c]
_STEP_MPO = "wbsc,wtsv->bctv"  # apply the MPO W[w, t, s, v] (ket spin s -> bra spin t)
_STEP_BRA = "bctv,btd->cvd"  # close with conj(A)[b, t, d]: the new L[c, v, d]


def bond_dims(sites: int, bond: int) -> list[tuple[int, int]]:
    """Left and right bond dimensions ``(Dl, Dr)`` of every MPS site.

    ``Dl = min(D, 2**i, 2**(N-i))`` and ``Dr = min(D, 2**(i+1), 2**(N-i-1))``: the largest bonds
    an exact state of ``N`` spins-1/2 could need, capped at ``D``.

    Parameters
    ----------
    sites : int
        Number of spins ``N >= 1``.
    bond : int
        Maximal bond dimension ``D >= 1``.

    Returns
    -------
    list of (int, int)
        ``N`` pairs; ``Dl`` of site 0 and ``Dr`` of site ``N-1`` are 1.

    Examples
    --------
    >>> bond_dims(4, 8)
    [(1, 2), (2, 4), (4, 2), (2, 1)]
    """
    if sites < 1 or bond < 1:
        raise ValueError(
            f"bond_dims: need sites >= 1 and bond >= 1, got sites={sites}, bond={bond}"
        )
    return [
        (min(bond, 2**i, 2 ** (sites - i)), min(bond, 2 ** (i + 1), 2 ** (sites - i - 1)))
        for i in range(sites)
    ]


def exact_energy(sites: int, g: float = 1.0, J: float = 1.0) -> float:
    """Exact ground energy of the open chain ``H = -J Σ Z_i Z_{i+1} - g Σ X_i`` of ``sites`` spins.

    After the Jordan-Wigner transformation the chain is the quadratic fermion Hamiltonian
    ``Σ_k s_k (2 η_k† η_k - 1)``, where the single-particle energies ``s_k`` are the singular
    values of the ``N x N`` upper-bidiagonal matrix ``B`` with ``B[i, i] = g`` and
    ``B[i, i+1] = J``; the ground state has no quasi-particle, so ``E0 = -Σ_k s_k``
    (P. Pfeuty, "The one-dimensional Ising model with a transverse field", Ann. Phys. 57, 79
    (1970); E. Lieb, T. Schultz, D. Mattis, Ann. Phys. 16, 407 (1961)).

    Parameters
    ----------
    sites : int
        Number of spins ``N >= 1``.
    g, J : float
        Transverse field and Ising coupling (same units; the energy is in those units).

    Returns
    -------
    float
        The ground-state energy (float64).

    Examples
    --------
    >>> exact_energy(1, g=0.5)        # a single spin in a field: -g
    -0.5
    >>> exact_energy(3, g=0.0)        # classical chain: -J (N - 1)
    -2.0
    """
    if sites < 1:
        raise ValueError(f"exact_energy: need sites >= 1, got {sites}")
    b = np.diag(np.full(sites, float(g))) + np.diag(np.full(sites - 1, float(J)), 1)
    return float(-np.linalg.svd(b, compute_uv=False).sum())


def tfim_mpo(g: float = 1.0, J: float = 1.0, dtype: Any = np.float64) -> np.ndarray:
    """The bulk MPO tensor ``W[w, t, s, v]`` of the chain, MPO bond dimension 3.

    ``s`` is the ket (input) spin, ``t`` the bra (output) spin, ``w``/``v`` the left/right MPO
    bonds. The MPO bond is a finite-state machine read left to right: state 0 = only identities
    so far, state 1 = a ``Z`` was just placed and the next site must close ``-J Z Z``, state 2 =
    one term of ``H`` is complete. So ``W[0, :, :, 0] = I``, ``W[0, :, :, 1] = Z``,
    ``W[1, :, :, 2] = -J Z``, ``W[0, :, :, 2] = -g X``, ``W[2, :, :, 2] = I``. Started in state 0,
    a chain of these ends in state 2 with ``H`` and in state 0 with the identity — so one pass of
    the environment gives ``<ψ|H|ψ>`` and ``<ψ|ψ>`` together.

    Returns
    -------
    numpy.ndarray
        Shape ``(3, 2, 2, 3)``, the given dtype.
    """
    eye = np.eye(2)
    x = np.array([[0.0, 1.0], [1.0, 0.0]])
    z = np.array([[1.0, 0.0], [0.0, -1.0]])
    w = np.zeros((3, 2, 2, 3), dtype=dtype)
    w[0, :, :, 0] = eye
    w[0, :, :, 1] = z
    w[1, :, :, 2] = -J * z
    w[0, :, :, 2] = -g * x
    w[2, :, :, 2] = eye
    return w


def random_mps(sites: int, bond: int, seed: int = 0, dtype: Any = np.float64) -> list[np.ndarray]:
    """Random MPS: i.i.d. standard-normal entries from ``numpy.random.default_rng(seed)``.

    The real parts are drawn site by site in site order (each site in C order); for a complex
    dtype the imaginary parts are drawn afterwards, again site by site, so the real part of a
    complex start equals the float64 start of the same seed.

    Returns
    -------
    list of numpy.ndarray
        Site ``i`` has shape ``(Dl, 2, Dr)`` (:func:`bond_dims`) and the given dtype.
    """
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float64), np.dtype(np.complex128)):
        raise ValueError(f"random_mps: dtype must be float64 or complex128, got {dtype}")
    rng = np.random.default_rng(seed)
    shapes = [(dl, 2, dr) for dl, dr in bond_dims(sites, bond)]
    re = [rng.standard_normal(s) for s in shapes]
    if dtype.kind != "c":
        return re
    return [r + 1j * rng.standard_normal(s) for r, s in zip(re, shapes)]


def mps_energy(mps: Sequence[Any], mpo: Any) -> tuple[Any, Any]:
    """``<ψ|H|ψ>`` and ``<ψ|ψ>`` of an MPS, contracted left to right with :func:`tenferro.einsum`.

    The left environment ``L[a, w, b]`` (ket bond, MPO bond, bra bond) starts as ``[[[1, 0, 0]]]``
    and absorbs one site per three pairwise contractions (ket tensor, MPO tensor, conjugated bra
    tensor); cost ``O(N D^3)``. After the last site ``L[0, 2, 0]`` is ``<ψ|H|ψ>`` and
    ``L[0, 0, 0]`` is ``<ψ|ψ>`` (:func:`tfim_mpo`).

    Parameters
    ----------
    mps : sequence of Tensor
        Site tensors of shape ``(Dl, 2, Dr)``, float64 or complex128, first ``Dl`` and last ``Dr``
        equal to 1; tracked or not.
    mpo : Tensor
        The bulk MPO tensor ``(3, 2, 2, 3)`` of the same dtype.

    Returns
    -------
    (Tensor, Tensor)
        ``<ψ|H|ψ>`` and ``<ψ|ψ>``, shape ``()``, the MPS dtype (real-valued up to rounding).
    """
    dtype = mps[0].dtype
    env = np.zeros((1, 3, 1), dtype=dtype)
    env[0, 0, 0] = 1.0
    L: Any = mps[0].runtime.constant(env)
    complex_ = dtype.kind == "c"
    for a in mps:
        bra = tf.conj(a) if complex_ else a
        L = tf.einsum(_STEP_KET, L, a)
        L = tf.einsum(_STEP_MPO, L, mpo)
        L = tf.einsum(_STEP_BRA, L, bra)
    return L[0, 2, 0], L[0, 0, 0]


@dataclass
class TfimProblem:
    """The energy ``E(x)`` of the MPS whose entries are the real vector ``x``, and its gradient.

    ``x`` concatenates the sites' entries (C order, site order); for complex128 it is
    ``[Re z, Im z]`` of that concatenation. Every call of :meth:`value_and_grad` records the
    contraction on one persistent :class:`tenferro.Runtime` (fresh leaves each call) and runs
    ``backward``.
    """

    sites: int
    bond: int
    g: float = 1.0
    J: float = 1.0
    dtype: Any = np.float64
    runtime: Any = None
    jit: bool = False
    shapes: list[tuple[int, int, int]] = field(init=False)

    def __post_init__(self) -> None:
        self.dtype = np.dtype(self.dtype)
        if self.dtype not in (np.dtype(np.float64), np.dtype(np.complex128)):
            raise ValueError(f"TfimProblem: dtype must be float64 or complex128, got {self.dtype}")
        if self.runtime is None:
            self.runtime = tf.Runtime()
        self.shapes = [(dl, 2, dr) for dl, dr in bond_dims(self.sites, self.bond)]
        self.sizes = [math.prod(s) for s in self.shapes]
        self.offsets = np.cumsum([0, *self.sizes]).tolist()
        self.n_complex = self.offsets[-1]
        self.is_complex = self.dtype.kind == "c"
        self.mpo = self.runtime.constant(tfim_mpo(self.g, self.J, self.dtype))
        # Graph mode: energy and gradient traced once into one program (`tf.jit` of
        # `tf.func.value_and_grad`), replayed for every evaluation; the program also joins the
        # site gradients into one vector.
        self._vg = tf.func.value_and_grad(self._energy_of, argnums=tuple(range(self.sites)))
        self._jitted = tf.jit(self._energy_and_flat_grad) if self.jit else None

    def _energy_and_flat_grad(self, *sites: Any) -> tuple[Any, Any]:
        """``E`` and ``∂E/∂x`` of the site tensors (traced under ``tf.jit``): the site
        gradients joined into one vector of the parameter vector's layout."""
        e, grads = self._vg(*sites)
        g = tf.concatenate([t.reshape(-1) for t in grads])
        if self.is_complex:  # tenferro: ∂E/∂Re z + i ∂E/∂Im z (docs/autodiff.md)
            g = tf.concatenate([tf.real(g), tf.imag(g)])
        return e, g

    def _energy_of(self, *sites: Any) -> Any:
        num, den = mps_energy(list(sites), self.mpo)
        if self.is_complex:
            num, den = tf.real(num), tf.real(den)
        return num / den

    @property
    def size(self) -> int:
        """Length of the real parameter vector ``x``."""
        return self.n_complex * (2 if self.is_complex else 1)

    def pack(self, mps: Sequence[np.ndarray]) -> np.ndarray:
        """Site arrays -> the real vector ``x`` (float64, shape ``(size,)``)."""
        flat = np.concatenate([np.asarray(a, dtype=self.dtype).ravel() for a in mps])
        return (
            np.concatenate([flat.real, flat.imag]) if self.is_complex else flat.astype(np.float64)
        )

    def unpack(self, x: np.ndarray) -> list[np.ndarray]:
        """The real vector ``x`` -> site arrays (views of one buffer when real)."""
        x = np.asarray(x, dtype=np.float64)
        flat = x[: self.n_complex] + 1j * x[self.n_complex :] if self.is_complex else x
        o = self.offsets
        return [flat[o[k] : o[k + 1]].reshape(s) for k, s in enumerate(self.shapes)]

    def energy(self, x: np.ndarray) -> float:
        """``E(x) = Re<ψ|H|ψ> / Re<ψ|ψ>`` without recording (float)."""
        with tf.no_grad():
            num, den = mps_energy([self.runtime.constant(a) for a in self.unpack(x)], self.mpo)
        return float(np.real(num.item()) / np.real(den.item()))

    def value_and_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """``E(x)`` and ``∂E/∂x`` (float, float64 array of shape ``(size,)``)."""
        rt = self.runtime
        if self._jitted is not None:
            e, g = self._jitted(*[rt.constant(a) for a in self.unpack(x)])
            return float(e), np.asarray(g)
        leaves = [rt.variable(a) for a in self.unpack(x)]
        num, den = mps_energy(leaves, self.mpo)
        if self.is_complex:
            num, den = tf.real(num), tf.real(den)
        e = num / den
        e.backward()
        g = np.concatenate([np.asarray(t.grad).ravel() for t in leaves])
        if self.is_complex:  # tenferro: ∂E/∂Re z + i ∂E/∂Im z (docs/autodiff.md)
            g = np.concatenate([g.real, g.imag])
        return e.item(), g


@dataclass
class Result:
    """Outcome of :func:`ground_state`. Energies in the units of ``g`` and ``J``."""

    sites: int
    bond: int
    dtype: str
    g: float
    J: float
    tol: float
    energy: float
    exact: float
    rel_error: float
    evals: int
    seconds: float
    converged: bool
    rel_errors: list[float]
    grad_norms: list[float]
    x: np.ndarray

    @property
    def ms_per_eval(self) -> float:
        """Milliseconds per energy+gradient evaluation, the optimiser's own work included."""
        return 1e3 * self.seconds / max(self.evals, 1)

    def summary(self) -> str:
        """The one-line report that :func:`main` prints last."""
        return (
            f"TFIM sites={self.sites} bond={self.bond} dtype={self.dtype} g={self.g:g} "
            f"energy={self.energy:.12f} exact={self.exact:.12f} rel_error={self.rel_error:.2e} "
            f"evals={self.evals} time={self.seconds:.2f} s ({self.ms_per_eval:.2f} ms/eval)"
        )


class _Converged(Exception):
    """Raised inside the objective to stop L-BFGS once the tolerance is reached."""


def _progress_bar(enabled: bool | None) -> Any:
    try:
        from tqdm import tqdm
    except ImportError:  # optional dependency
        return None
    # disable=None: shown only when stderr is a terminal (python-api.md).
    return tqdm(
        desc="L-BFGS",
        unit="eval",
        disable=None if enabled is None else not enabled,
        mininterval=0.2,
        leave=False,
    )


def _single_threaded_blas() -> Any:
    """Limit NumPy/SciPy's BLAS to one thread while L-BFGS runs (``threadpoolctl``, if present).

    L-BFGS-B's vector updates on ~10^3 entries gain nothing from threads, and a multi-threaded
    OpenBLAS spinning up its pool on every call cost ~4 ms per iteration on a 2-core machine,
    more than the energy and gradient themselves.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # optional: only a speed-up
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def ground_state(
    sites: int = 16,
    bond: int = 8,
    g: float = 1.0,
    J: float = 1.0,
    tol: float = 1e-6,
    seed: int = 0,
    dtype: Any = "float64",
    engine_threads: int | None = None,
    progress: bool | None = None,
    exact: float | None = None,
    jit: bool = False,
) -> Result:
    """Minimise the MPS energy with L-BFGS until the relative error reaches ``tol``.

    Parameters
    ----------
    sites, bond : int
        Chain length ``N`` and MPS bond dimension ``D``.
    g, J : float
        Transverse field and coupling of ``H = -J Σ Z Z - g Σ X``.
    tol : float
        Stop as soon as an evaluation has ``|E - E0| / |E0| <= tol``.
    seed : int
        Seed of the random start (:func:`random_mps`).
    dtype : {"float64", "complex128"}
        dtype of the MPS.
    engine_threads : int, optional
        Run on ``tf.CpuEngine(threads=engine_threads)`` (1 = serial, on the caller's thread);
        default: a serial engine, the fastest for these small tensors.
    progress : bool, optional
        tqdm progress bar; default: only when stderr is a terminal.
    exact : float, optional
        Reference energy ``E0``; default :func:`exact_energy` (free fermions).
    jit : bool, optional
        Evaluate energy and gradient with ``tf.jit(tf.func.value_and_grad(...))`` (traced once,
        one program for forward and backward) instead of eager recording and ``backward``.

    Returns
    -------
    Result
        Final energy, relative error, evaluation count, wall time from the first evaluation to the
        end, and the convergence history (relative error and gradient 2-norm per evaluation).
    """
    from scipy.optimize import minimize

    dtype = np.dtype(dtype)
    e0 = exact_energy(sites, g, J) if exact is None else float(exact)
    engine = tf.CpuEngine(threads=1 if engine_threads is None else engine_threads)
    rt = tf.Runtime()
    problem = TfimProblem(sites, bond, g, J, dtype, runtime=rt, jit=jit)
    x0 = problem.pack(random_mps(sites, bond, seed, dtype))
    rel_errors: list[float] = []
    grad_norms: list[float] = []
    best = {"e": math.inf, "x": x0}
    bar = _progress_bar(progress)
    t_first: list[float] = []

    def fun(x: np.ndarray) -> tuple[float, np.ndarray]:
        if not t_first:
            t_first.append(time.perf_counter())
        e, grad = problem.value_and_grad(x)
        rel = abs(e - e0) / abs(e0)
        rel_errors.append(rel)
        grad_norms.append(float(np.linalg.norm(grad)))
        if e < best["e"]:
            best["e"], best["x"] = e, x.copy()
        if bar is not None:
            bar.update(1)
            bar.set_postfix_str(f"E={e:.10f} rel.err={rel:.2e}", refresh=False)
        if rel <= tol:
            raise _Converged
        return e, grad

    with rt.session(engine), _single_threaded_blas():
        try:
            minimize(
                fun,
                x0,
                method="L-BFGS-B",
                jac=True,
                options=dict(maxiter=5000, maxfun=20000, gtol=1e-12, ftol=1e-15),
            )
        except _Converged:
            pass
        finally:
            t_end = time.perf_counter()
            if bar is not None:
                bar.close()
    e = best["e"]
    rel = abs(e - e0) / abs(e0)
    return Result(
        sites=sites,
        bond=bond,
        dtype=dtype.name,
        g=g,
        J=J,
        tol=tol,
        energy=e,
        exact=e0,
        rel_error=rel,
        evals=len(rel_errors),
        seconds=t_end - t_first[0],
        converged=rel <= tol,
        rel_errors=rel_errors,
        grad_norms=grad_norms,
        x=best["x"],
    )


def save_plot(result: Result, path: str) -> None:
    """Log-scale convergence plot: relative error and gradient norm against evaluation number.

    Annotated with sites, bond, dtype and ms/eval; drawn on a bare ``matplotlib.figure.Figure``
    (no pyplot state, no display needed). The format follows the file extension (``.png``,
    ``.pdf``, ``.svg``...).
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.2), layout="constrained")
    ax = fig.subplots()
    n = np.arange(1, result.evals + 1)
    ax.semilogy(n, np.maximum(result.rel_errors, 1e-17), label="relative error |E - E0| / |E0|")
    ax.semilogy(n, result.grad_norms, label="gradient norm ‖∂E/∂x‖", alpha=0.7)
    ax.axhline(result.tol, color="gray", ls="--", lw=0.8, label=f"tol = {result.tol:g}")
    ax.set_xlabel("energy + gradient evaluation")
    ax.set_title(
        f"TFIM ground state, L-BFGS on tenferro gradients: {result.sites} sites, bond {result.bond}, "
        f"{result.dtype}",
        fontsize=10,
    )
    ax.text(
        0.98,
        0.97,
        f"g = {result.g:g}, J = {result.J:g}\n{result.evals} evals, {result.ms_per_eval:.2f} ms/eval\n"
        f"final rel. error {result.rel_error:.1e}",
        transform=ax.transAxes,
        ha="right",
        va="top",
        fontsize=9,
        bbox=dict(boxstyle="round", fc="white", ec="0.8"),
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower left", fontsize=9)
    fig.savefig(path, dpi=120)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m tenferro.examples.tfim",
        description="Variational MPS ground state of the open transverse-field Ising chain "
        "H = -J sum Z_i Z_i+1 - g sum X_i, optimised with tenferro gradients and L-BFGS.",
    )
    p.add_argument("--sites", type=int, default=16, help="number of spins N (default 16)")
    p.add_argument("--bond", type=int, default=8, help="MPS bond dimension D (default 8)")
    p.add_argument("--g", type=float, default=1.0, help="transverse field g (default 1.0)")
    p.add_argument("--J", type=float, default=1.0, help="Ising coupling J (default 1.0)")
    p.add_argument(
        "--tol",
        type=float,
        default=1e-6,
        help="stop at this relative error against the exact energy (default 1e-6)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the random start (default 0)")
    p.add_argument("--dtype", choices=("float64", "complex128"), default="float64")
    p.add_argument(
        "--engine-threads",
        type=int,
        default=None,
        help="worker threads of the CPU engine (default 1: serial, fastest here)",
    )
    p.add_argument(
        "--plot",
        metavar="PATH",
        default=None,
        help="save a log-scale convergence plot (matplotlib) to PATH",
    )
    p.add_argument("--no-progress", action="store_true", help="no tqdm progress bar")
    p.add_argument(
        "--jit",
        action="store_true",
        help="graph mode: energy and gradient as one traced program (tf.jit)",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status (0 when ``--tol`` was reached)."""
    args = _parser().parse_args(argv)
    result = ground_state(
        sites=args.sites,
        bond=args.bond,
        g=args.g,
        J=args.J,
        tol=args.tol,
        seed=args.seed,
        dtype=args.dtype,
        engine_threads=args.engine_threads,
        progress=False if args.no_progress else None,
        jit=args.jit,
    )
    if args.plot:
        save_plot(result, args.plot)
        print(f"convergence plot written to {args.plot}")
    if not result.converged:
        print(
            f"tolerance {args.tol:g} NOT reached (best relative error {result.rel_error:.2e})",
            file=sys.stderr,
        )
    print(result.summary(), flush=True)
    return 0 if result.converged else 1


if __name__ == "__main__":
    sys.exit(main())

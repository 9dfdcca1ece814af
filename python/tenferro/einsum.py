"""``tf.einsum`` and ``tf.einsum_path``: Einstein summation lowered onto :mod:`tenferro.prim`.

A contraction is parsed (NumPy subscript syntax, or the interleaved form), planned (a pairwise
contraction path, ``opt_einsum``-style) and lowered to primitives only, by the Rust crate
``tenferro-einsum`` (``docs/architecture.md``) in one call from Python:

1. per operand, ``extract_diag`` for a label repeated within the operand, ``reduce_sum`` for a
   label that appears nowhere else (and to drop a size-1 axis broadcast against a larger one);
2. along the path, one ``dot_general`` per pair: labels shared by the pair and needed later
   (by another operand or the output) are batch axes, the other shared labels are contracted,
   the rest are free; ``dot_general`` returns ``[lhs free..., rhs free..., batch...]``;
3. at the end ``transpose`` to the output order, ``broadcast_in_dim`` for output axes that no
   operand carries, and ``embed_diag`` for labels repeated in the output (``i->ii``).

Because only primitives are called, derivatives of any order come from the primitives' rules,
and a call under :func:`tenferro.jit` traces the same primitives. The lowered plan is a flat
program of primitive steps; it is cached in the executing engine's plan cache per
``(subscripts, shapes, dtypes, layouts, optimize, minimize)`` (``engine.cache_stats()``) and
replayed by the Rust core in one call, which releases the GIL around large steps and checks for
Ctrl-C between steps.

Planners (``optimize=``): ``False`` (left to right), ``"greedy"`` (``opt_einsum``'s greedy,
step for step: the same paths), ``"optimal"`` (exact dynamic programming over every subset:
the least ``opt_einsum`` ``opt_cost`` of any path, up to 12 operands), ``"dp"`` (up to 12
operands the same exhaustive search, above exact over connected subsets as ``opt_einsum``'s
``dynamic_programming``; up to 64 operands and about a second of work), ``"auto"`` (optimal up
to 8 operands, dp up to 24 within tens of milliseconds, greedy otherwise), ``"anneal"`` /
:class:`EinsumAnneal` (simulated annealing over contraction trees, seeded, never worse than
greedy), an explicit
path or nested-tuple tree, or an ``opt_einsum`` ``PathOptimizer`` instance (called with
``opt_einsum``'s ``(inputs, output, size_dict)``; ``cotengra.HyperOptimizer()`` works).

Examples
--------
>>> import numpy as np, tenferro as tf
>>> a = tf.asarray(np.arange(6.0).reshape(2, 3))
>>> tf.einsum("ij->ji", a).tolist()
[[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
"""

from __future__ import annotations

import math
import string
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _progress
from ._tenferro import (
    EinsumPathInfo,
    Session,
    Tensor,
    _einsum,
    _einsum_path,
    _implicit_session,
    _register_hooks,
)
from .errors import EinsumError

__all__ = ["EinsumAnneal", "einsum", "einsum_path"]

_SESSION = _implicit_session()


def _label_of_int(k: Any, subscripts: str) -> str:
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 0:
        raise EinsumError(
            f"einsum: interleaved sublist {subscripts}: entry {k!r} is not a non-negative int or Ellipsis"
        )
    k = int(k)
    if k < 52:
        return string.ascii_letters[k]
    # Code points from U+4E00 (CJK ideographs, never ASCII), skipping the surrogates.
    cp = 0x4E00 + (k - 52)
    if cp >= 0xD800:
        cp += 0x800
    if cp > 0x10FFFF:
        raise EinsumError(
            f"einsum: interleaved sublist {subscripts}: label {k} is too large "
            f"(at most {0x10FFFF - 0x800 - 0x4E00 + 52})"
        )
    return chr(cp)


def _interleaved(args: Sequence[Any]) -> tuple[str, list[Any]]:
    """``(op0, sub0, op1, sub1, ..., [out])`` -> (subscripts string, operands)."""
    args = list(args)
    operands = args[0::2]
    sublists = args[1::2]
    out = None
    if len(args) % 2 == 1:
        out = operands.pop()
        if isinstance(out, Tensor) or isinstance(out, np.ndarray):
            raise EinsumError("einsum: interleaved form: every operand needs a sublist")

    def conv(sub: Any) -> str:
        try:
            items = list(sub)
        except TypeError:
            raise EinsumError(
                f"einsum: interleaved form: sublist {sub!r} is not a sequence"
            ) from None
        parts = []
        for k in items:
            parts.append("..." if k is Ellipsis else _label_of_int(k, repr(sub)))
        return "".join(parts)

    subs = ",".join(conv(s) for s in sublists)
    if out is not None:
        subs += "->" + conv(out)
    return subs, operands


class EinsumAnneal:
    """Options of the annealing planner, for ``optimize=`` of :func:`einsum` and
    :func:`einsum_path` (``optimize="anneal"`` is ``EinsumAnneal()``).

    Simulated annealing over binary contraction trees, as TreeSA (Kalachev et al. 2021,
    arXiv:2108.05665) and cotengra's ``SA``: each repeat starts from a tree -- the first from
    ``"greedy"``'s path, the others from a randomised greedy (the next pair drawn with Boltzmann
    weights over ``opt_einsum``'s "memory removed" cost) -- and anneals it by local rotations
    ``((A, B), C) -> ((A, C), B)`` with Metropolis acceptance over a rising inverse temperature
    (100 steps of 10 sweeps over the tree). Trees are scored by ``minimize=`` with
    ``opt_einsum``'s ``opt_cost`` convention; the best tree of all repeats is used, greedy's
    included, so the path is never worse than ``"greedy"``'s. Deterministic for a given
    ``seed`` unless ``max_time`` ends the search first. Runs in Rust with the GIL released;
    Ctrl-C interrupts it, and searches longer than a second show a ``tqdm`` progress bar when
    ``sys.stderr`` is a terminal and ``tqdm`` is installed. Plans are cached per options like
    every other ``optimize=`` value.

    Parameters
    ----------
    seed : int, optional
        Seed of the random stream, in ``[0, 2**64)`` (default 0).
    max_time : float or None, optional
        Wall-clock limit of the search in seconds (``None``, the default: no limit); the best
        tree found by then is used.
    max_repeats : int, optional
        Number of annealed trees (default 8, at least 1). With ``max_time``, a large value
        (``10**6``) anneals until the time is up.

    Raises
    ------
    EinsumError
        For an option of the wrong type or out of range; the message names the option.

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> a, b, c = np.ones((2, 30)), np.ones((30, 40)), np.ones((40, 3))
    >>> path, info = tf.einsum_path("ij,jk,kl->il", a, b, c, optimize=tf.EinsumAnneal(seed=1))
    >>> path, info.opt_cost, info.method
    ([(0, 1), (0, 1)], 5280, 'anneal')
    >>> tf.einsum_path("ij,jk,kl->il", a, b, c, optimize="greedy")[1].opt_cost
    7560
    """

    __slots__ = ("max_repeats", "max_time", "seed")

    def __init__(self, seed: int = 0, *, max_time: float | None = None, max_repeats: int = 8):
        def integer(name: str, v: Any, lo: int) -> int:
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                raise EinsumError(f"einsum: EinsumAnneal {name}={v!r} is not an int")
            if not lo <= int(v) < 2**64:
                raise EinsumError(f"einsum: EinsumAnneal {name}={v!r} is not in [{lo}, 2**64)")
            return int(v)

        self.seed = integer("seed", seed, 0)
        self.max_repeats = integer("max_repeats", max_repeats, 1)
        if max_time is not None:
            if isinstance(max_time, (bool, np.bool_)) or not isinstance(
                max_time, (int, float, np.integer, np.floating)
            ):
                raise EinsumError(f"einsum: EinsumAnneal max_time={max_time!r} is not a number")
            # an int past float's range is out of range too (not float()'s OverflowError)
            seconds = float(max_time) if abs(max_time) < 1e9 else math.inf
            if not 0 < seconds < 1e9:
                raise EinsumError(
                    f"einsum: EinsumAnneal max_time={max_time!r} is not in (0, 1e9) seconds"
                )
            max_time = seconds
        self.max_time = max_time

    @property
    def _tenferro_anneal(self) -> tuple[int, float | None, int]:
        return self.seed, self.max_time, self.max_repeats

    def __repr__(self) -> str:
        return (
            f"EinsumAnneal(seed={self.seed}, max_time={self.max_time}, "
            f"max_repeats={self.max_repeats})"
        )


def _split_args(args: Sequence[Any]) -> tuple[str, list[Any]]:
    if not args:
        raise EinsumError("einsum: no subscripts given")
    if isinstance(args[0], str):
        return args[0], list(args[1:])
    return _interleaved(args)


def _meta(x: Any) -> tuple[tuple[int, ...], np.dtype]:
    shape = getattr(x, "shape", None)
    dtype = getattr(x, "dtype", None)
    if shape is not None and isinstance(dtype, np.dtype):
        return tuple(shape), dtype
    a = np.asarray(x)
    return a.shape, a.dtype


def einsum(
    *operands: Any,
    optimize: Any = "greedy",
    minimize: str = "flops",
    memory_limit: Any = None,
    executor: Any = None,
) -> Tensor:
    """Einstein summation, as ``numpy.einsum``, lowered onto :mod:`tenferro.prim`.

    ``einsum(subscripts, *operands)`` or the interleaved form
    ``einsum(op0, sublist0, op1, sublist1, ..., [sublist_out])`` (sublists of ints in
    ``[0, 52)`` -- larger ints are accepted too -- and ``Ellipsis``).

    Subscripts follow NumPy: explicit (``"ij,jk->ik"``) or implicit output (the labels that
    appear exactly once, sorted, after the ``...`` axes), ``...`` broadcasting (size-1 axes
    broadcast), repeated labels within an operand (trace ``"ii->"``, diagonal ``"ii->i"``),
    labels shared by three or more operands, rank-0 and zero-size operands, whitespace ignored.
    Beyond NumPy, as in ``opt_einsum``, every character other than ``,-.>`` and whitespace is a
    label (Unicode letters, digits, symbols), and an output label may repeat (``"i->ii"`` embeds
    a diagonal).

    Parameters
    ----------
    subscripts : str
        The contraction, e.g. ``"ij,jk->ik"``.
    *operands : Tensor or array_like
        The operands; dtypes are combined by the primitives' promotion (NumPy's
        ``result_type``). All-bool operands give a bool result (``any`` of products).
    optimize : {"greedy", "optimal", "dp", "auto", "anneal", False} or EinsumAnneal or path or tree or PathOptimizer, optional
        Contraction order: ``False`` pairwise left to right (no reordering; unlike NumPy's
        unoptimised loop it forms intermediates, which outer products can make large),
        ``"greedy"`` (default; ``opt_einsum``'s greedy, the same paths), ``"optimal"`` (exact
        dynamic programming over every subset: the least ``opt_einsum`` ``opt_cost``; up to 12
        operands, greedy above with ``info.note`` saying so), ``"dp"`` (up to 12
        operands the exhaustive search of ``"optimal"``, outer products between
        intermediates included; above, exact over connected subsets, as ``opt_einsum``'s
        ``dynamic_programming``: no outer products inside a connected component; up to 64 operands and a fixed work budget of 1–4 s, greedy above),
        ``"auto"`` (optimal up to 8 operands, dp up to 24 within tens of milliseconds, greedy
        otherwise), ``"anneal"`` or :class:`EinsumAnneal` ``(seed=, max_time=, max_repeats=)``
        (simulated annealing over contraction trees as TreeSA / cotengra's ``SA``, the best of
        greedy's tree and the annealed ones; ``"anneal"`` is ``EinsumAnneal()``), an explicit
        path (a list of index tuples, or NumPy's ``["einsum_path", (0, 1), ...]`` as
        ``np.einsum_path`` returns it), NumPy's ``(name, memory_limit)`` (the named planner with
        every intermediate of at most ``memory_limit`` elements, the final result excepted;
        when no pair fits, the operands left are contracted in one step, as NumPy; the limit
        only restricts the path, nothing is sliced -- the ``memory_limit=`` keyword slices),
        a nested-tuple contraction tree
        (``((0, 1), (2, 3))``), or an ``opt_einsum`` ``PathOptimizer`` instance (called as
        ``optimizer(inputs, output, size_dict)``; ``cotengra.HyperOptimizer()`` works). Other
        ``opt_einsum`` names map onto these: ``"auto-hq"``/``"dynamic-programming"`` to dp,
        ``"branch-all"`` to optimal, ``"branch-1"``/``"branch-2"`` to auto,
        ``"random-greedy"``/``"eager"`` to greedy.
    minimize : {"flops", "size", "combo"}, optional
        Objective of ``"optimal"``/``"dp"``/``"auto"``/``"anneal"``: ``opt_einsum``'s FLOP
        count, the largest intermediate (ties broken by FLOPs), or FLOPs + 64 x elements written.
    memory_limit : int or "max_input", optional
        Largest tensor of the contraction, in **elements** (``opt_einsum``'s unit; ``"max_input"``:
        the largest operand). Unlike ``opt_einsum``'s ``memory_limit``, which only restricts
        the path, tenferro keeps the path and **slices** it (cotengra's ``SliceFinder``): labels
        are fixed to one value per slice so that every tensor of a slice (intermediates and
        prepared operands; the operands are read as views) has at most this many elements;
        the slices' results are summed (contracted labels) or placed (output labels).
        :func:`einsum_path` reports the slicing (``info.slicing``). Under autodiff the sliced
        contraction is one node that keeps no per-slice intermediate: the backward pass
        recomputes each slice's forward and pulls back one slice at a time (forward mode
        likewise, slice by slice).
    executor : concurrent.futures.Executor, optional
        Run groups of slices on this executor (``ProcessPoolExecutor``,
        ``dask.distributed.Client.get_executor()``, ``mpi4py.futures.MPIPoolExecutor``, loky):
        one task per worker, the operands sent once per task as NumPy arrays, the partial sums
        returned; in the backward pass workers return their slices' operand cotangents. It must
        still be open when ``backward()`` runs. Not under :func:`tenferro.jit`.

    Returns
    -------
    Tensor
        The contraction, with the output labels' sizes as its shape.

    Raises
    ------
    EinsumError
        For malformed subscripts (a stray ``.``, ``-`` or ``>``, two ``->``, a lone surrogate), an
        operand-count or rank mismatch, a label with two sizes, an output label absent from the
        inputs, an invalid path or tree, or an unknown ``optimize``/``minimize`` name (the message
        lists the accepted values); the message names the subscripts and the offending label or
        position; for a malformed :class:`EinsumAnneal` option. A ``memory_limit`` that is not
        a positive int, or that no slicing can meet (e.g. ``0``, or below a label repeated in
        the output, which cannot be sliced).
    RuntimeError
        ``executor`` was shut down before the backward pass (the message names it).
    KeyboardInterrupt
        When Ctrl-C stops an annealing search (a Python signal handler that raises another
        exception stops it too, and that exception is raised).

    See Also
    --------
    einsum_path, EinsumAnneal, numpy.einsum, tenferro.prim.dot_general

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> a = tf.asarray(np.arange(6.0).reshape(2, 3))
    >>> b = tf.asarray(np.arange(3.0))
    >>> tf.einsum("ij,j->i", a, b).tolist()
    [5.0, 14.0]
    >>> m = tf.asarray([[1.0, 2.0], [3.0, 4.0]])
    >>> tf.einsum("ii", m).tolist(), tf.einsum("ii->i", m).tolist()
    (5.0, [1.0, 4.0])
    >>> tf.einsum("i->ii", tf.asarray([1.0, 2.0])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    >>> tf.einsum(a, [0, 1], b, [1], [0]).tolist()
    [5.0, 14.0]
    >>> tf.einsum("...j,j", a, b).tolist()
    [5.0, 14.0]

    Sliced to at most 4 elements per tensor (each slice fixes ``j``):

    >>> x = tf.asarray(np.arange(12.0).reshape(3, 4))
    >>> y = tf.asarray(np.arange(8.0).reshape(4, 2))
    >>> bool(tf.all(tf.einsum("ij,jk->ik", x, y, memory_limit=4) == tf.einsum("ij,jk->ik", x, y)))
    True
    """
    if memory_limit is None and executor is None:
        return _einsum(_SESSION, operands, optimize, minimize)
    return _sliced_call(_SESSION, operands, optimize, minimize, memory_limit, executor)


def _sliced_call(
    session: Any, operands: Any, optimize: Any, minimize: Any, memory_limit: Any, executor: Any
) -> Tensor:
    from ._sliced import sliced_einsum

    subscripts, raw = _split_args(operands)
    if not isinstance(subscripts, str):
        raise EinsumError(f"einsum: subscripts must be a str, got {type(subscripts).__name__}")
    return sliced_einsum(session, subscripts, raw, optimize, minimize, memory_limit, executor)


def einsum_path(
    *operands: Any, optimize: Any = "greedy", minimize: str = "flops", memory_limit: Any = None
) -> tuple[list[tuple[int, ...]], EinsumPathInfo]:
    """The contraction path :func:`einsum` would use, as ``opt_einsum.contract_path``.

    Parameters
    ----------
    subscripts, *operands, optimize, minimize
        As :func:`einsum` (operands may be tensors or arrays; only shapes and dtypes are used).
    memory_limit : int or "max_input", optional
        Slice the path so that every tensor of one slice has at most this many elements (see
        :func:`einsum`); ``info.slicing`` reports the sliced labels, the number of slices, the
        FLOP overhead and the largest tensor per slice.

    Returns
    -------
    path : list of tuple of int
        Linear path: each entry names positions in the current operand list, which are removed
        and whose contraction is appended at the end.
    info : EinsumPathInfo
        ``.opt_cost`` (FLOP count: ``opt_einsum``'s ``opt_cost`` of the same path),
        ``.largest_intermediate`` (elements, the prepared operands included), ``.naive_cost``, ``.method``,
        ``.note`` (set when ``"optimal"``/``"dp"`` fell back to greedy) and a printable table
        (``str(info)``, built when printed); see :class:`EinsumPathInfo`.

    Raises
    ------
    EinsumError
        As :func:`einsum`.

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> a, b, c = np.ones((2, 30)), np.ones((30, 40)), np.ones((40, 3))
    >>> path, info = tf.einsum_path("ij,jk,kl->il", a, b, c)
    >>> path
    [(1, 2), (0, 1)]
    >>> info.opt_cost, info.largest_intermediate
    (7560, 1200)
    """
    if memory_limit is None:
        return _einsum_path(operands, optimize, minimize)
    from ._sliced import SlicePlan, memory_limit_of

    _, raw = _split_args(operands)
    limit = memory_limit_of(memory_limit, [_meta(x)[0] for x in raw])
    path, info = _einsum_path(operands, optimize, minimize, limit)
    info.slicing = SlicePlan(info.slicing)
    return path, info


def _session_einsum(
    self: Session,
    *operands: Any,
    optimize: Any = "greedy",
    minimize: str = "flops",
    memory_limit: Any = None,
    executor: Any = None,
) -> Tensor:
    """``s.einsum(subscripts, *operands, optimize="greedy", minimize="flops")``: :func:`einsum` on
    this session's runtime and engine (the plan is cached in that engine's plan cache).

    Parameters, returns and errors are those of :func:`tenferro.einsum`.

    Examples
    --------
    >>> import numpy as np, tenferro as tf
    >>> rt, cpu = tf.Runtime(), tf.CpuEngine(threads=1)
    >>> with rt.session(cpu) as s:
    ...     y = s.einsum("ij,j->i", rt.constant(np.eye(2)), rt.constant(np.array([1.0, 2.0])))
    >>> y.tolist()
    [1.0, 2.0]
    """
    if memory_limit is None and executor is None:
        return _einsum(self, operands, optimize, minimize)
    return _sliced_call(self, operands, optimize, minimize, memory_limit, executor)


# The extension calls this back for the interleaved form; it never imports this module (which
# imports it).
_register_hooks(einsum_split_args=_split_args, einsum_progress=_progress)

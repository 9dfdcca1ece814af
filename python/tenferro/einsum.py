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
``dynamic_programming``; up to 64 operands and about a second of work), ``"auto"`` (optimal up to 8 operands, dp up to 24 within tens of
milliseconds, greedy otherwise), an explicit
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

import string
from collections.abc import Sequence
from typing import Any

import numpy as np

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

__all__ = ["einsum", "einsum_path"]

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


def _split_args(args: Sequence[Any]) -> tuple[str, list[Any]]:
    if not args:
        raise EinsumError("einsum: no subscripts given")
    if isinstance(args[0], str):
        return args[0], list(args[1:])
    return _interleaved(args)


def einsum(*operands: Any, optimize: Any = "greedy", minimize: str = "flops") -> Tensor:
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
    optimize : {"greedy", "optimal", "dp", "auto", False} or path or tree or PathOptimizer, optional
        Contraction order: ``False`` pairwise left to right (no reordering; unlike NumPy's
        unoptimised loop it forms intermediates, which outer products can make large),
        ``"greedy"`` (default; ``opt_einsum``'s greedy, the same paths), ``"optimal"`` (exact
        dynamic programming over every subset: the least ``opt_einsum`` ``opt_cost``; up to 12
        operands, greedy above with ``info.note`` saying so), ``"dp"`` (up to 12
        operands the exhaustive search of ``"optimal"``, outer products between
        intermediates included; above, exact over connected subsets, as ``opt_einsum``'s
        ``dynamic_programming``: no outer products inside a connected component; up to 64 operands and a fixed work budget of 1–4 s, greedy above),
        ``"auto"`` (optimal up to 8 operands, dp up to 24 within tens of milliseconds, greedy
        otherwise), an explicit path (a list of index
        tuples, or NumPy's ``["einsum_path", (0, 1), ...]`` as ``np.einsum_path`` returns it),
        NumPy's ``(name, memory_limit)`` (the named planner with every intermediate of at most
        ``memory_limit`` elements, the final result excepted; when no pair fits, the operands
        left are contracted in one step, as NumPy; the limit only restricts the path, nothing
        is sliced), a nested-tuple contraction tree
        (``((0, 1), (2, 3))``), or an ``opt_einsum`` ``PathOptimizer`` instance (called as
        ``optimizer(inputs, output, size_dict)``; ``cotengra.HyperOptimizer()`` works). Other
        ``opt_einsum`` names map onto these: ``"auto-hq"``/``"dynamic-programming"`` to dp,
        ``"branch-all"`` to optimal, ``"branch-1"``/``"branch-2"`` to auto,
        ``"random-greedy"``/``"eager"`` to greedy.
    minimize : {"flops", "size", "combo"}, optional
        Objective of ``"optimal"``/``"dp"``/``"auto"``: ``opt_einsum``'s FLOP count, the largest
        intermediate (ties broken by FLOPs), or FLOPs + 64 x elements written.

    Returns
    -------
    Tensor
        The contraction, with the output labels' sizes as its shape.

    Raises
    ------
    EinsumError
        For malformed subscripts (a stray ``.``, ``-`` or ``>``, two ``->``), an
        operand-count or rank mismatch, a label with two sizes, an output label absent from the
        inputs, an invalid path or tree, or an unknown ``optimize``/``minimize`` name (the message
        lists the accepted values); the message names the subscripts and the offending label or
        position.

    See Also
    --------
    einsum_path, numpy.einsum, tenferro.prim.dot_general

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
    """
    return _einsum(_SESSION, operands, optimize, minimize)


def einsum_path(
    *operands: Any, optimize: Any = "greedy", minimize: str = "flops"
) -> tuple[list[tuple[int, ...]], EinsumPathInfo]:
    """The contraction path :func:`einsum` would use, as ``opt_einsum.contract_path``.

    Parameters
    ----------
    subscripts, *operands, optimize, minimize
        As :func:`einsum` (operands may be tensors or arrays; only shapes and dtypes are used).

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
    return _einsum_path(operands, optimize, minimize)


def _session_einsum(
    self: Session, *operands: Any, optimize: Any = "greedy", minimize: str = "flops"
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
    return _einsum(self, operands, optimize, minimize)


# The extension calls this back for the interleaved form; it never imports this module (which
# imports it).
_register_hooks(einsum_split_args=_split_args)

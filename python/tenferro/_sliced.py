"""Sliced contractions: ``tf.einsum(..., memory_limit=M, executor=E)``.

The Rust planner (``tenferro-einsum``'s ``slice`` module, cotengra's ``SliceFinder``) chooses
labels to *slice*: each slice fixes those labels to one value, is contracted along the same
tree with those labels of size 1, and its result is summed into the output (contracted labels)
or placed into it (output labels). Every tensor of one slice then has at most ``M`` elements.

Under autodiff the whole sliced contraction is **one** recorded node (the custom-rule node of
``tf.custom_jvp``, ``_tenferro._custom_call``): its value is computed with recording off, so
no per-slice intermediate is kept; its VJP recomputes each slice's forward and pulls the
slice's cotangent back through it, one slice at a time, accumulating the operands' cotangents;
its JVP sums, per slice, the contractions with one operand replaced by its tangent. The node
lives in the Rust core, so it traces under ``tf.jit`` (the slices' ops are emitted there);
the slice loop is Python because the executors (``concurrent.futures``) are. Results,
tangents and cotangents are written slice by slice into one full array (:class:`_Placed`).

With ``executor=``, groups of slices are tasks (one per worker, the operands sent once per
task as NumPy arrays); each returns the partial sums of its slices' results (forward) or of
its slices' operand cotangents (backward). Workers need only ``tenferro``.
"""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from . import _tenferro
from ._tenferro import Tensor
from .errors import EinsumError

_S = _tenferro._implicit_session()

#: Show a tqdm progress bar from this many slices on (when stderr is a terminal).
PROGRESS_MIN_SLICES = 64
#: ``einsum`` refuses plans of more slices (``einsum_path`` reports them).
MAX_SLICES = 2**40
#: The limit of ``executor=`` without ``memory_limit=`` (nothing sliced).
NO_LIMIT = 2**127


class SlicePlan:
    """The slicing of one contraction (``info.slicing`` of :func:`tenferro.einsum_path`).

    Attributes
    ----------
    labels : tuple of str
        The sliced labels (``'…k'`` for the ``k``-th ellipsis axis from the right).
    sizes : tuple of int
        Their sizes.
    nslices : int
        Number of slices, ``prod(sizes)``.
    cost, sliced_cost : int
        FLOPs (``opt_einsum``'s ``opt_cost`` convention) of the unsliced path and of all slices
        together.
    overhead : float
        ``sliced_cost / cost``.
    largest_intermediate : int
        Largest tensor of one slice (elements): at most ``memory_limit``.
    unsliced_largest_intermediate : int
        The same without slicing.
    footprint : int
        All tensors of one slice together (elements): what one slice's forward pass can hold.
    memory_limit : int
        The limit (elements).
    output_shape : tuple of int
        The contraction's output shape.
    operand_axes : tuple of tuple of (int, int)
        Per operand, ``(axis, j)``: the axis carries ``labels[j]``.
    output_axes : tuple of (int, int)
        ``(axis, j)`` of the output.
    """

    def __init__(self, d: dict[str, Any]) -> None:
        self.labels = tuple(d["labels"])
        self.sizes = tuple(int(s) for s in d["sizes"])
        self.nslices = int(np.prod(self.sizes, dtype=object))  # exact (Rust's saturates)
        self.cost = int(d["cost"])
        self.sliced_cost = int(d["sliced_cost"])
        self.overhead = float(d["overhead"])
        self.largest_intermediate = int(d["largest"])
        self.unsliced_largest_intermediate = int(d["unsliced_largest"])
        self.footprint = int(d["footprint"])
        self.memory_limit = int(d["memory_limit"])
        self.operand_axes = tuple(tuple((int(a), int(j)) for a, j in t) for t in d["operand_axes"])
        self.output_axes = tuple((int(a), int(j)) for a, j in d["output_axes"])
        self.output_shape = tuple(int(s) for s in d["output_shape"])

    def __repr__(self) -> str:
        return (
            f"SlicePlan(labels={self.labels!r}, nslices={self.nslices}, "
            f"overhead={self.overhead:.4g}, largest_intermediate={self.largest_intermediate}, "
            f"memory_limit={self.memory_limit})"
        )

    def coords(self) -> Iterator[tuple[int, ...]]:
        """Every slice's values of the sliced labels."""
        return itertools.product(*(range(s) for s in self.sizes))


def memory_limit_of(memory_limit: Any, shapes: Sequence[tuple[int, ...]]) -> int:
    """``memory_limit=`` as a number of elements (an int >= 1, or ``'max_input'``)."""
    if isinstance(memory_limit, str) and memory_limit == "max_input":
        return max([int(np.prod(s, dtype=object)) for s in shapes] or [1])
    if isinstance(memory_limit, (bool, np.bool_)) or not isinstance(
        memory_limit, (int, np.integer)
    ):
        raise EinsumError(
            f"einsum: memory_limit={memory_limit!r} is not an int (elements) or 'max_input'"
        )
    if memory_limit < 1:
        raise EinsumError(f"einsum: memory_limit={int(memory_limit)} must be at least 1 element")
    # a limit no tensor can reach is no limit (the planner's limit is a u128: 2**128 and up
    # raised a bare OverflowError)
    return min(int(memory_limit), NO_LIMIT)


def _index(plan: SlicePlan, k: int, c: tuple[int, ...], ndim: int) -> tuple[Any, ...]:
    idx: list[Any] = [slice(None)] * ndim
    for ax, j in plan.operand_axes[k]:
        idx[ax] = slice(c[j], c[j] + 1)
    return tuple(idx)


def _out_key(plan: SlicePlan, c: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(c[j] for _, j in plan.output_axes)


def _op_key(plan: SlicePlan, k: int, c: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(c[j] for _, j in plan.operand_axes[k])


def _assemble(
    blocks: dict[tuple[int, ...], Any],
    axes: Sequence[tuple[int, int]],
    plan: SlicePlan,
    shape: tuple[int, ...],
    dtype: Any,
    xp: Any,
) -> Any:
    """The full tensor from its blocks keyed by the sliced labels' values on ``axes``.

    ``blocks`` is consumed: each block is dropped once copied (the concatenations cannot
    write in place, so the blocks and the result are alive together only up to one copy of
    the result)."""
    js = [j for _, j in axes]
    if len(set(js)) == len(js):

        def build(level: int, prefix: tuple[int, ...]) -> Any:
            if level == len(axes):
                return blocks.pop(prefix)
            ax, j = axes[level]
            parts = [build(level + 1, prefix + (v,)) for v in range(plan.sizes[j])]
            return xp.concatenate(parts, axis=ax)

        return build(0, ())
    # a label sliced on two axes of one operand (a diagonal): the blocks off it are zero
    out = xp.zeros(shape, dtype=dtype)
    while blocks:
        key, b = blocks.popitem()
        idx: list[Any] = [slice(None)] * len(shape)
        for (ax, _), v in zip(axes, key):
            idx[ax] = slice(v, v + 1)
        if xp is np:
            out[tuple(idx)] += b
        else:
            out = out.at[tuple(idx)].add(b)
    return out


def _progress(it: Any, total: int, nslices: int | None = None) -> Any:
    """``it`` with a tqdm bar when there are many slices and stderr is a terminal."""
    if (total if nslices is None else nslices) < PROGRESS_MIN_SLICES or not sys.stderr.isatty():
        return it
    try:
        from tqdm import tqdm  # type: ignore[import-untyped]
    except ImportError:
        return it
    return tqdm(it, total=total, desc="einsum slices", leave=False)


def _add(blocks: dict[tuple[int, ...], Any], key: tuple[int, ...], v: Any) -> None:
    blocks[key] = v if key not in blocks else blocks[key] + v


class _Placed:
    """The sum of blocks of one tensor (the output, or one operand's cotangent), each block keyed
    by the sliced labels' values on ``axes``.

    Concrete blocks (neither traced by ``tf.jit`` nor recorded for a higher derivative) are
    written, as they come, into one NumPy array of the full shape that the result then shares
    (``_from_numpy(copy=False)``): the full tensor and one slice's block are alive together, never
    all the blocks and their concatenation (which doubled the peak when an output label was
    sliced). Traced or recorded blocks are kept and concatenated (:func:`_assemble`), so that
    the result is a differentiable (or traced) function of them. The sums are the same in both
    modes, in the same order: the first block of a key is copied, later ones added.
    """

    def __init__(
        self,
        plan: SlicePlan,
        axes: Sequence[tuple[int, int]],
        shape: tuple[int, ...],
        dtype: Any,
        keep: bool = False,
    ) -> None:
        self.plan, self.axes, self.shape, self.dtype = plan, axes, shape, np.dtype(dtype)
        self.keep = keep  # blocks kept (and concatenated) whatever they are
        self.blocks: dict[tuple[int, ...], Any] = {}
        self.dense: np.ndarray | None = None
        # which blocks hold a value (one byte per block, not a Python set of every key): the
        # first block of a key is copied, later ones added
        self._js = list(dict.fromkeys(j for _, j in axes))  # the labels, each once
        self.written = np.zeros([plan.sizes[j] for j in self._js], dtype=bool)
        self._first = [[j for _, j in axes].index(j) for j in self._js]  # its key position
        self.runtime: Any = None  # the blocks' (the result's)

    def add(self, key: tuple[int, ...], v: Any) -> None:
        a = None
        if self.dense is None and not self.blocks and not self.keep and _concrete(v):
            a = np.asarray(v.detach() if isinstance(v, Tensor) else v)
            # the blocks' dtype (a real operand's cotangent is real) and layout (the engine's
            # compact layout is F-ordered; adding across layouts would buffer a copy)
            order = "F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C"
            self.dense = np.zeros(self.shape, dtype=a.dtype, order=order)
            if isinstance(v, Tensor):
                self.runtime = v.runtime
        elif self.dense is not None and not _concrete(v):
            self._to_blocks()
        if self.dense is None:
            _add(self.blocks, key, v)
            return
        if a is None:
            a = np.asarray(v.detach() if isinstance(v, Tensor) else v)
        w = tuple(key[i] for i in self._first)
        if self.written[w]:
            self.dense[self._index(key)] += a
        else:
            self.dense[self._index(key)] = a
            self.written[w] = True

    def _index(self, key: tuple[int, ...]) -> tuple[Any, ...]:
        idx: list[Any] = [slice(None)] * len(self.shape)
        for (ax, _), k in zip(self.axes, key):
            idx[ax] = slice(k, k + 1)
        return tuple(idx)

    def _to_blocks(self) -> None:
        """A traced or recorded block after concrete ones (callers decide from their inputs, so
        this is a safety net): the sums so far become kept blocks."""
        dense, self.dense, self.keep = self.dense, None, True
        assert dense is not None
        for w in zip(*np.nonzero(self.written)):
            vals = dict(zip(self._js, (int(x) for x in w)))
            key = tuple(vals[j] for _, j in self.axes)
            self.blocks[key] = _tenferro._from_numpy(
                np.array(dense[self._index(key)]), False, self.runtime
            )

    def __bool__(self) -> bool:
        return self.dense is not None or bool(self.blocks)

    def result(self, xp: Any, runtime: Any = None) -> Any:
        """The full tensor (a NumPy array if ``xp`` is ``np``, else a tensor of the blocks'
        runtime, or of ``runtime`` for NumPy blocks); consumes it."""
        if self.dense is not None:
            dense, self.dense = self.dense, None
            if xp is np:
                return dense
            return _tenferro._from_numpy(dense, False, self.runtime or runtime)
        blocks, self.blocks = self.blocks, {}
        return _assemble(blocks, self.axes, self.plan, self.shape, self.dtype, xp)


def _concrete(v: Any) -> bool:
    """``v`` is a NumPy array or a tensor neither traced nor recorded."""
    if not isinstance(v, Tensor):
        return True
    return not v._traced and not _S._records(v)


def _keep(*xs: Any) -> bool:
    """Whether blocks computed from ``xs`` (tensors, ``None``s) must be kept and concatenated:
    some input is traced, or recorded (the blocks then are too)."""
    return not all(_concrete(x) for x in xs if x is not None)


class _Contraction:
    """One sliced contraction: subscripts, the per-slice path, the plan."""

    def __init__(
        self,
        session: Any,
        subscripts: str,
        path: list[tuple[int, ...]],
        plan: SlicePlan,
        out_shape: tuple[int, ...],
        out_dtype: Any,
    ) -> None:
        self.session, self.subscripts, self.path, self.plan = session, subscripts, path, plan
        self.out_shape, self.out_dtype = out_shape, np.dtype(out_dtype)

    def einsum(self, ops: Sequence[Any]) -> Tensor:
        return _tenferro._einsum(self.session, (self.subscripts, *ops), list(self.path), "flops")

    def slice_ops(self, ops: Sequence[Any], c: tuple[int, ...]) -> list[Any]:
        return [o[_index(self.plan, k, c, len(o.shape))] for k, o in enumerate(ops)]

    # -- local ------------------------------------------------------------------------------
    def forward(
        self,
        ops: Sequence[Any],
        coords: tuple[Iterable[tuple[int, ...]], int] | None = None,
        assemble: bool = True,
    ) -> Any:
        cs, total = (self.plan.coords(), self.plan.nslices) if coords is None else coords
        if not assemble:  # a worker's partial sums, per output block
            blocks: dict[tuple[int, ...], Any] = {}
            for c in _progress(cs, total):
                _add(blocks, _out_key(self.plan, c), self.einsum(self.slice_ops(ops, c)))
            return blocks
        out = _Placed(self.plan, self.plan.output_axes, self.out_shape, self.out_dtype, _keep(*ops))
        for c in _progress(cs, total):
            out.add(_out_key(self.plan, c), self.einsum(self.slice_ops(ops, c)))
        return out.result(_XP())

    def tangent(
        self,
        ops: Sequence[Any],
        tangents: Sequence[Any | None],
        slots: Sequence[int],
        record: bool,
    ) -> Tensor:
        """``Σ_k einsum(ops with ops[slots[k]] -> tangents[k])``, slice by slice."""
        keep = record or _keep(*ops, *tangents)
        out = _Placed(self.plan, self.plan.output_axes, self.out_shape, self.out_dtype, keep)
        for c in self.plan.coords():
            sub = self.slice_ops(ops, c)
            for s, t in zip(slots, tangents):
                if t is None:
                    continue
                terms = list(sub)
                terms[s] = t[_index(self.plan, s, c, len(t.shape))]
                out.add(_out_key(self.plan, c), self.einsum(terms))
        return out.result(_XP())

    def cotangents(
        self,
        ops: Sequence[Any],
        slots: Sequence[int],
        ct: Any,
        record: bool,
        coords: tuple[Iterable[tuple[int, ...]], int] | None = None,
        keep: bool = False,
    ) -> list[_Placed]:
        """Per differentiated operand (``slots``), its cotangent: each slice's forward
        recomputed on fresh leaves (or, ``record``, on the recorded operands) and pulled back.
        ``keep``: the blocks are kept (a worker's partial sums), not placed."""
        rt = ops[slots[0]].runtime if slots else None
        keep = keep or record or _keep(*ops, ct)
        placed = [
            _Placed(
                self.plan,
                self.plan.operand_axes[s],
                tuple(ops[s].shape),
                np.dtype(ops[s].dtype),
                keep,
            )
            for s in slots
        ]
        cs, total = (self.plan.coords(), self.plan.nslices) if coords is None else coords
        for c in _progress(cs, total):
            sub = self.slice_ops(ops, c)
            idx = [slice(None)] * len(self.out_shape)
            for ax, j in self.plan.output_axes:
                idx[ax] = slice(c[j], c[j] + 1)
            ct_s = ct[tuple(idx)]
            if record:
                wrt = [sub[s] for s in slots]
            else:
                wrt = [_tenferro._variable(rt, sub[s], True) for s in slots]
                for s, w in zip(slots, wrt):
                    sub[s] = w
            y = self.einsum(sub)
            gs = _tenferro._vjp(y, wrt, ct_s, create_graph=record)
            # the slice's graph (every intermediate of its forward) goes before the next
            # slice's forward: one slice in flight, not two
            del y, wrt, sub, ct_s
            for p, s, g in zip(placed, slots, gs):
                if g is not None:
                    p.add(_op_key(self.plan, s, c), g)
            del gs
        return placed


class _XP:
    """The array namespace ``_assemble`` needs, over tenferro's NumPy API."""

    def __init__(self) -> None:
        from ._factories import zeros
        from ._numpy_api.joining import concatenate

        self.concatenate = concatenate
        self.zeros = zeros


# -- executors ------------------------------------------------------------------------------


def _workers(executor: Any) -> int:
    n = getattr(executor, "_max_workers", None)
    if isinstance(n, int) and n > 0:
        return n
    client = getattr(executor, "_client", None)
    if client is not None:
        try:
            return max(1, len(client.scheduler_info()["workers"]))
        except Exception:  # noqa: BLE001 -- any failure: a default
            pass
    return os.cpu_count() or 2


def _groups(nslices: int, n: int) -> list[tuple[int, int]]:
    """One group per worker: ``(first, step)``, the slices ``first, first + step, ...`` of
    :meth:`SlicePlan.coords` (sent as two numbers, not a list of every slice's values)."""
    n = max(1, min(n, nslices))
    return [(i, n) for i in range(n)]


def _group_coords(plan: SlicePlan, group: tuple[int, int]) -> tuple[Iterator[Any], int]:
    first, step = group
    return itertools.islice(plan.coords(), first, None, step), len(range(first, plan.nslices, step))


def _submit(executor: Any, fn: Any, *args: Any) -> Any:
    try:
        return executor.submit(fn, *args)
    except Exception as e:  # noqa: BLE001 -- shut-down executors raise various types
        raise RuntimeError(
            f"einsum: the executor {executor!r} given to einsum(..., executor=) cannot take "
            f"work ({type(e).__name__}: {e}); it must stay open until the sliced contraction's "
            "backward pass has run"
        ) from e


def _spec(con: _Contraction) -> dict[str, Any]:
    p = con.plan
    return {
        "subscripts": con.subscripts,
        "path": list(con.path),
        "sizes": p.sizes,
        "operand_axes": p.operand_axes,
        "output_axes": p.output_axes,
        "out_shape": con.out_shape,
        "out_dtype": con.out_dtype.str,
    }


class _WorkerPlan(SlicePlan):
    def __init__(self, spec: dict[str, Any]) -> None:  # noqa: D107 -- a worker's plan
        self.sizes = tuple(spec["sizes"])
        self.operand_axes = tuple(spec["operand_axes"])
        self.output_axes = tuple(spec["output_axes"])
        self.nslices = int(np.prod(self.sizes, dtype=object))


def _worker_con(spec: dict[str, Any]) -> _Contraction:
    return _Contraction(
        _S,
        spec["subscripts"],
        spec["path"],
        _WorkerPlan(spec),
        tuple(spec["out_shape"]),
        np.dtype(spec["out_dtype"]),
    )


def _task_forward(
    spec: dict[str, Any], arrays: list[np.ndarray], group: tuple[int, int]
) -> dict[tuple[int, ...], np.ndarray]:
    """Worker: the summed results of ``group``'s slices, per output block."""
    from . import _factories

    con = _worker_con(spec)
    ops = [_factories.asarray(a) for a in arrays]
    blocks = con.forward(ops, _group_coords(con.plan, group), assemble=False)
    return {k: np.asarray(v) for k, v in blocks.items()}


def _task_vjp(
    spec: dict[str, Any],
    arrays: list[np.ndarray],
    slots: list[int],
    ct: np.ndarray,
    group: tuple[int, int],
) -> list[dict[Any, np.ndarray]]:
    """Worker: per differentiated operand, the summed cotangent blocks of ``group``'s slices."""
    from . import _factories

    con = _worker_con(spec)
    ops = [_factories.asarray(a) for a in arrays]
    coords = _group_coords(con.plan, group)
    placed = con.cotangents(ops, slots, _factories.asarray(ct), False, coords, keep=True)
    return [{k: np.asarray(v) for k, v in p.blocks.items()} for p in placed]


def _host(t: Any, executor: Any) -> np.ndarray:
    if isinstance(t, Tensor) and t._traced:
        raise EinsumError(
            f"einsum: executor={executor!r} needs concrete operands; a sliced contraction "
            "under tf.jit runs locally (omit executor=)"
        )
    return np.asarray(t.detach() if isinstance(t, Tensor) else t)


def _remote_forward(con: _Contraction, ops: Sequence[Any], executor: Any) -> Tensor:
    spec = _spec(con)
    arrays = [_host(o, executor) for o in ops]
    futs = [
        _submit(executor, _task_forward, spec, arrays, g)
        for g in _groups(con.plan.nslices, _workers(executor))
    ]
    out = _Placed(con.plan, con.plan.output_axes, con.out_shape, con.out_dtype)
    for f in _progress(futs, len(futs), con.plan.nslices):
        for k, v in f.result().items():
            out.add(k, v)
    dense = np.asarray(out.result(np), dtype=con.out_dtype)
    return _tenferro._from_numpy(dense, False, _runtime_of(ops))


def _remote_cotangents(
    con: _Contraction, ops: Sequence[Any], slots: list[int], ct: Any, executor: Any
) -> list[_Placed]:
    spec = _spec(con)
    arrays = [_host(o, executor) for o in ops]
    ct_a = _host(ct, executor)
    futs = [
        _submit(executor, _task_vjp, spec, arrays, slots, ct_a, g)
        for g in _groups(con.plan.nslices, _workers(executor))
    ]
    placed = [
        _Placed(con.plan, con.plan.operand_axes[s], arrays[s].shape, arrays[s].dtype) for s in slots
    ]
    for f in futs:
        for acc, part in zip(placed, f.result()):
            for k, v in part.items():
                acc.add(k, v)
    return placed


# -- the recorded node ----------------------------------------------------------------------


class _Bridge:
    """The rules of one recorded sliced contraction (called by the custom-rule node)."""

    def __init__(self, con: _Contraction, ops: list[Any], slots: list[int], executor: Any) -> None:
        # constants (operands that are not node inputs) are kept; inputs come with each call
        self.con, self.slots, self.executor = con, slots, executor
        self.consts = [None if k in slots else o for k, o in enumerate(ops)]

    def _ops(self, inputs: Sequence[Tensor]) -> list[Any]:
        ops = list(self.consts)
        for s, t in zip(self.slots, inputs):
            ops[s] = t
        return ops

    def vjp(self, inputs: list[Tensor], cts: list[Tensor], record: bool) -> list[Tensor | None]:
        ops = self._ops(inputs)
        ct = cts[0]
        if self.executor is not None and not record:
            placed = _remote_cotangents(self.con, ops, self.slots, ct, self.executor)
        else:
            token = _tenferro._set_modes(grad_enabled=True)
            try:
                placed = self.con.cotangents(ops, self.slots, ct, record)
            finally:
                _tenferro._state_var().reset(token)
        # one operand's cotangent at a time (kept blocks are dropped once placed)
        rt = _runtime_of(ops)
        return [p.result(_XP(), rt) if p else None for p in placed]

    def jvp(
        self, inputs: list[Tensor], tangents: list[Tensor], record: bool
    ) -> list[Tensor | None]:
        return [self.con.tangent(self._ops(inputs), tangents, self.slots, record)]


def _runtime_of(ops: Sequence[Any]) -> Any:
    """The operands' runtime (the result's), else the factories' runtime."""
    for o in ops:
        if isinstance(o, Tensor):
            return o.runtime
    from ._factories import _current_runtime

    return _current_runtime()


def _is_inexact(x: Any) -> bool:
    return isinstance(x, Tensor) and np.dtype(x.dtype).kind in "fc"


def sliced_einsum(
    session: Any,
    subscripts: str,
    raw: list[Any],
    optimize: Any,
    minimize: Any,
    memory_limit: Any,
    executor: Any,
) -> Tensor:
    """``einsum`` with ``memory_limit=``/``executor=`` (see :func:`tenferro.einsum`)."""
    from ._factories import _current_runtime
    from ._interop import as_supported_ndarray

    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise TypeError(
            f"einsum: executor={executor!r} is not a concurrent.futures.Executor "
            "(an object with a submit method)"
        )
    # other operands read in place (as the unsliced einsum does), on the tensors' runtime
    rt = next((o.runtime for o in raw if isinstance(o, Tensor)), None) or _current_runtime()
    ops = [
        o
        if isinstance(o, Tensor)
        else _tenferro._from_numpy(as_supported_ndarray(o, op="einsum"), False, rt)
        for o in raw
    ]
    # executor= without a limit: one slice
    limit = (
        NO_LIMIT if memory_limit is None else memory_limit_of(memory_limit, [o.shape for o in ops])
    )
    # the planner itself (what einsum_path calls), so that this module needs nothing of einsum.py
    path, info = _tenferro._einsum_path((subscripts, *ops), optimize, minimize, limit)
    plan = SlicePlan(info.slicing)
    if plan.nslices > MAX_SLICES:
        raise EinsumError(
            f"einsum: subscripts {subscripts!r}: memory_limit={memory_limit} needs "
            f"{plan.nslices} slices (more than {MAX_SLICES}): slicing cannot reach it in "
            "practice on this path; raise the limit or choose a path of smaller intermediates"
        )
    out_dtype = np.result_type(*[np.dtype(o.dtype) for o in ops]) if ops else np.float64
    con = _Contraction(session, subscripts, path, plan, plan.output_shape, out_dtype)
    slots = [k for k, o in enumerate(ops) if _is_inexact(o)]
    st = _tenferro._state_var().get()
    records = st.grad_enabled and (st.capture_trace or any(_S._records(ops[s]) for s in slots))

    def value() -> Tensor:
        if executor is not None:
            return _remote_forward(con, ops, executor)
        return con.forward(ops)

    if not records:
        return value()
    token = _tenferro._set_modes(grad_enabled=False)
    try:
        out = value()
    finally:
        _tenferro._state_var().reset(token)
    bridge = _Bridge(con, ops, slots, executor)
    inputs = [ops[s] for s in slots]
    return _tenferro._custom_call(bridge, "einsum", True, inputs, [out])[0]

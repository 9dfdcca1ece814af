"""Catalog-driven forward tests: every implemented primitive of ``tf.prim.CATALOG`` against
``reference.py``, over every admitted dtype, shapes including rank 0, zero-size axes and
broadcasting, with inputs that are compact (from C- and F-ordered NumPy arrays) and strided
**tenferro views** (transposed, negative steps, broadcast with zero strides) whose strides are
asserted (testing.md, "Oracles").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tenferro as tf
from reference import DTYPES, REFERENCE, promote
from tenferro.testing import assert_close

CATALOG = tuple(tf.prim.CATALOG)
ROWS = {row.name: row for row in CATALOG}

#: Primitives of the catalog without a kernel yet. The manifest test fails when one of them
#: becomes implemented while still listed here, and when an unimplemented row is not listed, so
#: the list is kept honest. Every row of ops.md is implemented: it is empty.
PENDING: frozenset[str] = frozenset()

TENSOR_TYPE = type(tf.zeros(()))

#: The catalog's unary primitives; each needs its reference (``reference.py``), whose ``domain``
#: says where the inputs are drawn (``test_manifest`` fails when one is missing).
UNARY = tuple(row.name for row in CATALOG if row.family == "unary")
BINARY = ("add", "sub", "mul", "div", "rem", "pow", "maximum", "minimum")
BINARY += (
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "shift_left",
    "shift_right_arithmetic",
    "copysign",
    "nextafter",
)
REDUCTIONS = ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_sum_squares")
DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")

UNARY_SHAPES = [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]
BINARY_SHAPES = [
    ((), ()),
    ((5,), ()),
    ((), (5,)),
    ((3, 4), (3, 4)),
    ((3, 1), (1, 4)),
    ((2, 3, 4), (3, 1)),
    ((0, 3), (1, 3)),
    ((2, 0, 3), (3,)),
    ((4,), (3, 1)),
]
TERNARY_SHAPES = [
    ((), (), ()),
    ((3, 4), (3, 4), (3, 4)),
    ((3, 1), (1, 4), ()),
    ((2, 3, 4), (3, 4), (4,)),
    ((0, 3), (3,), (1, 3)),
]


# ----------------------------------------------------------------------------------------------
# Values
# ----------------------------------------------------------------------------------------------

# Real intervals (lo, hi) per domain; complex values draw both parts from COMPLEX_DOMAINS.
REAL_DOMAINS = {
    "any": (-3.0, 3.0),
    "positive": (0.1, 5.0),
    "log1p": (-0.9, 4.0),
    "exp": (-5.0, 5.0),
    "tanh": (-4.0, 4.0),
    "pow_base": (0.5, 2.5),
    "pow_exp": (-2.0, 2.0),
    "cast": (-50.0, 50.0),
}
COMPLEX_DOMAINS = {
    "any": ((-3.0, 3.0), (-3.0, 3.0)),
    "positive": ((-3.0, 3.0), (-3.0, 3.0)),
    "log1p": ((-0.5, 3.0), (-3.0, 3.0)),
    "exp": ((-5.0, 5.0), (-3.0, 3.0)),
    "tanh": ((-2.0, 2.0), (-1.2, 1.2)),
    "pow_base": ((-2.0, 2.0), (-2.0, 2.0)),
    "pow_exp": ((-1.0, 1.0), (-1.0, 1.0)),
    "cast": ((-50.0, 50.0), (-50.0, 50.0)),
}
INT_DOMAINS = {
    "any": (-20, 20),
    "positive": (1, 20),
    "log1p": (0, 20),
    "exp": (-5, 5),
    "tanh": (-4, 4),
    "pow_base": (-4, 4),
    "pow_exp": (0, 4),
    "cast": (-50, 50),
}
#: The value domain of each unary primitive: its reference's (``"any"`` until it has one; the
#: manifest test reports the missing reference).
UNARY_DOMAIN = {name: getattr(REFERENCE.get(name), "domain", "any") for name in UNARY}


def make_values(
    rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, domain: str = "any"
) -> np.ndarray:
    """Random values of ``dtype`` in the domain; ``"discrete"`` draws from a small set (ties),
    ``"nonzero"`` keeps magnitudes away from zero (divisors)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if domain == "discrete":
        vals = rng.integers(-2, 3, size=shape)
        if dtype.kind == "c":
            return (vals + 1j * rng.integers(-1, 2, size=shape)).astype(dtype)
        return vals.astype(dtype)
    if domain == "nonzero":
        sign = rng.choice([-1, 1], size=shape)
        if dtype.kind in "iu":
            return (sign * rng.integers(1, 8, size=shape)).astype(dtype)
        mag = rng.uniform(0.5, 3.0, size=shape)
        if dtype.kind == "c":
            phase = rng.uniform(-np.pi, np.pi, size=shape)
            return (mag * np.exp(1j * phase)).astype(dtype)
        return (sign * mag).astype(dtype)
    if dtype.kind in "iu":
        lo, hi = INT_DOMAINS[domain]
        return rng.integers(lo, hi + 1, size=shape).astype(dtype)
    if dtype.kind == "c":
        (rlo, rhi), (ilo, ihi) = COMPLEX_DOMAINS[domain]
        return (rng.uniform(rlo, rhi, size=shape) + 1j * rng.uniform(ilo, ihi, size=shape)).astype(
            dtype
        )
    lo, hi = REAL_DOMAINS[domain]
    return rng.uniform(lo, hi, size=shape).astype(dtype)


# ----------------------------------------------------------------------------------------------
# Strided tenferro views
# ----------------------------------------------------------------------------------------------


def _fortran(a: np.ndarray) -> np.ndarray:
    """An F-ordered copy (``np.asfortranarray`` would turn rank 0 into rank 1)."""
    return np.array(a, order="F", copy=True)


def _c_order(a: np.ndarray) -> np.ndarray:
    """A C-ordered copy that keeps rank 0."""
    return np.array(a, order="C", copy=True)


def _junk(dtype: np.dtype) -> Any:
    return True if dtype.kind == "b" else 77


def _from_c(a: np.ndarray):
    return a, tf.tensor(_c_order(a)), None


def _from_f(a: np.ndarray):
    return a, tf.tensor(_fortran(a)), None


def _transposed(a: np.ndarray):
    """``t.T`` of a compact tensor holding ``a.T``."""
    if a.ndim < 2:
        return None
    base = _c_order(a.T)
    return a, tf.tensor(base).T, _fortran(base).T


def _step_minus_two(a: np.ndarray):
    """``t[::-2]`` of a compact tensor with junk rows between the values (reversed)."""
    if a.ndim < 1 or a.shape[0] < 1:
        return None
    n = a.shape[0]
    base = np.full((2 * n - 1,) + a.shape[1:], _junk(a.dtype), dtype=a.dtype)
    base[::2] = a[::-1]
    return a, tf.tensor(base)[::-2], _fortran(base)[::-2]


def _transposed_reversed(a: np.ndarray):
    """``t.T[::-1, :]``: a transposed view with a negative first stride."""
    if a.ndim < 2:
        return None
    base = _c_order(a[::-1].T)
    index = (slice(None, None, -1), slice(None))
    return a, tf.tensor(base).T[index], _fortran(base).T[index]


def _broadcast(a: np.ndarray):
    """``tf.broadcast_to`` of a tensor whose first axis has length 1 (a zero stride); the values
    become those of the broadcast."""
    if a.ndim < 1 or a.shape[0] < 2:
        return None
    small = _c_order(a[:1])
    return (
        np.broadcast_to(small, a.shape).copy(),
        tf.broadcast_to(tf.tensor(small), a.shape),
        np.broadcast_to(_fortran(small), a.shape),
    )


VARIANTS: dict[str, Callable[[np.ndarray], Any]] = {
    "c_order": _from_c,
    "f_order": _from_f,
    "transposed": _transposed,
    "step_-2": _step_minus_two,
    "transposed_reversed": _transposed_reversed,
    "broadcast": _broadcast,
}
STRIDED = ("transposed", "step_-2", "transposed_reversed", "broadcast")


def check_view(t: Any, values: np.ndarray, np_view: np.ndarray | None) -> None:
    """The tensor view has the shape, dtype and values of ``values``; its strides are NumPy's for
    the same view of an F-ordered (compact) base, and it is not compact where NumPy's view is not
    Fortran-contiguous. ``np.asarray(t)`` reports the same strides as ``t.strides``."""
    assert isinstance(t, TENSOR_TYPE)
    assert t.shape == values.shape
    assert t.dtype == values.dtype
    exported = np.asarray(t)
    if t.size > 0:
        assert tuple(t.strides) == exported.strides, (t.strides, exported.strides)
    if np_view is None:
        if t.size > 1:
            assert t.is_contiguous
            assert exported.flags.f_contiguous
    else:
        if t.size > 0:
            assert len(t.strides) == np_view.ndim
            for axis, (got, want) in enumerate(zip(t.strides, np_view.strides)):
                if np_view.shape[axis] > 1:
                    assert got == want, (
                        f"strides {t.strides} != NumPy's {np_view.strides} (axis {axis})"
                    )
        if not np_view.flags.f_contiguous:
            assert not t.is_contiguous, f"view with strides {t.strides} reported as contiguous"
    np.testing.assert_array_equal(exported, values)


# ----------------------------------------------------------------------------------------------
# Cases
# ----------------------------------------------------------------------------------------------


@dataclass
class Case:
    label: str
    arrays: list[np.ndarray]
    params: tuple = ()
    kwargs: dict = field(default_factory=dict)
    rtol: float | None = None
    atol: float | None = None
    #: The first ``pack`` arrays go to the op as one sequence argument (``concatenate(xs, axis)``).
    pack: int = 0


def _unary_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    domain = UNARY_DOMAIN.get(name, "any")
    out = []
    for shape in UNARY_SHAPES:
        x = make_values(rng, shape, dtype, domain)
        if name in ("sign", "abs", "neg", "conj") and x.size and dtype.kind != "b":
            x.flat[0] = 0  # sign(0) == 0, abs(0), -0
        out.append(Case(f"{shape}", [x]))
    return out


BINARY_DOMAINS = {
    "div": ("any", "nonzero"),
    "rem": ("any", "nonzero"),
    "pow": ("pow_base", "pow_exp"),
    "maximum": ("discrete", "discrete"),
    "minimum": ("discrete", "discrete"),
}


def _binary_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    dx, dy = BINARY_DOMAINS.get(name, ("any", "any"))
    out = []
    for sx, sy in BINARY_SHAPES:
        x = make_values(rng, sx, dtype, dx)
        y = make_values(rng, sy, dtype, dy)
        out.append(Case(f"{sx}x{sy}", [x, y]))
    return out


def _compare_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    directions = ("EQ", "NE") if dtype.kind == "c" else DIRECTIONS
    out = []
    for i, (sx, sy) in enumerate(BINARY_SHAPES):
        x = make_values(rng, sx, dtype, "discrete")
        y = make_values(rng, sy, dtype, "discrete")
        for j, d in enumerate(directions):
            # Both spellings of a direction: the enum member and a case-insensitive string.
            direction = getattr(tf.CompareDir, d) if (i + j) % 2 == 0 else d.lower()
            out.append(Case(f"{sx}x{sy}-{d}", [x, y], (direction,)))
    return out


def _select_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    out = []
    for sp, st_, sf in TERNARY_SHAPES:
        p = rng.integers(0, 2, size=sp).astype(bool)
        t = make_values(rng, st_, dtype)
        f = make_values(rng, sf, dtype)
        out.append(Case(f"{sp}/{st_}/{sf}", [p, t, f]))
    return out


def _clamp_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    out = []
    for sx, sl, sh in TERNARY_SHAPES:
        x = make_values(rng, sx, dtype, "discrete")
        lo = make_values(rng, sl, dtype, "discrete")
        hi = make_values(rng, sh, dtype, "discrete")
        if dtype.kind != "b":
            hi = hi + np.asarray(2, dtype=dtype)  # mostly lo <= hi; ties and crossings remain
        out.append(Case(f"{sx}/{sl}/{sh}", [x, lo, hi]))
    return out


def _conversion_values(
    rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype
) -> np.ndarray:
    x = make_values(rng, shape, dtype, "cast")
    if x.size >= 2 and dtype.kind != "b":
        x.flat[0] = 0  # zero -> False
        if dtype.kind in "fc":
            x.flat[1] = -0.75  # truncation toward zero, not floor
    return x


def _convert_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    out = []
    for shape in [(), (0,), (5,), (3, 4)]:
        x = _conversion_values(rng, shape, dtype)
        for to in DTYPES:
            if promote(dtype, to) == to:
                out.append(Case(f"{shape}->{to}", [x], (to,)))
        # Any NumPy dtype-like names the target.
        out.append(Case(f"{shape}->'{dtype.name}'", [x], (dtype.name,)))
    return out


def _cast_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    out = []
    for shape in [(), (0,), (5,), (3, 4)]:
        x = _conversion_values(rng, shape, dtype)
        for to in DTYPES:
            out.append(Case(f"{shape}->{to}", [x], (to,)))
    return out


def _transpose_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    specs = [
        ((), ()),
        ((5,), (0,)),
        ((3, 4), (1, 0)),
        ((3, 4), (0, 1)),
        ((2, 3, 4), (2, 0, 1)),
        ((2, 3, 4), (1, 2, 0)),
        ((2, 0, 3), (2, 1, 0)),
    ]
    return [Case(f"{s}{p}", [make_values(rng, s, dtype)], (p,)) for s, p in specs]


def _reshape_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    specs = [
        ((), (1,)),
        ((), ()),
        ((1,), ()),
        ((6,), (2, 3)),
        ((3, 4), (12,)),
        ((3, 4), (2, 6)),
        ((3, 4), (4, 3)),
        ((3, 4), (2, 2, 3)),
        ((2, 3, 4), (4, 6)),
        ((2, 3, 4), (24,)),
        ((2, 3, 4), (6, 1, 4)),
        ((0, 3), (3, 0)),
        ((0, 3), (0,)),
    ]
    return [Case(f"{s}->{t}", [make_values(rng, s, dtype)], (t,)) for s, t in specs]


def _broadcast_in_dim_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    specs = [
        ((), (2, 3), ()),
        ((), (), ()),
        ((3,), (2, 3), (1,)),
        ((3,), (3, 2), (0,)),
        ((3, 1), (3, 4), (0, 1)),
        ((1, 4), (2, 3, 4), (0, 2)),
        ((3, 4), (4, 2, 3), (2, 0)),  # dims need not be increasing (StableHLO)
        ((2, 3), (2, 3), (0, 1)),
        ((0,), (2, 0), (1,)),
        ((1,), (0, 2), (0,)),
    ]
    return [Case(f"{s}->{t}@{d}", [make_values(rng, s, dtype)], (t, d)) for s, t, d in specs]


def _reverse_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    specs = [
        ((), ()),
        ((5,), (0,)),
        ((5,), (-1,)),
        ((3, 4), (1,)),
        ((3, 4), (0, 1)),
        ((3, 4), ()),
        ((2, 3, 4), (0, 2)),
        ((2, 0, 3), (2,)),
    ]
    return [Case(f"{s}{a}", [make_values(rng, s, dtype)], (a,)) for s, a in specs]


REDUCTION_SPECS = [
    ((), [None, ()]),
    ((0,), [None, 0, ()]),
    ((5,), [None, 0, -1, ()]),
    ((3, 4), [None, 0, 1, (0, 1), (1, 0), (), -2, [1]]),
    ((2, 0, 3), [None, 0, 1, (0, 2), ()]),
    ((3, 0), [0]),
    ((2, 3, 4), [None, 1, (0, 2), (2, 0), -1, ()]),
]


def _reduction_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    domain = "discrete" if name in ("reduce_max", "reduce_min") else "any"
    if name == "reduce_prod":
        domain = "pow_base" if dtype.kind in "fc" else "discrete"
    out = []
    for shape, axes_list in REDUCTION_SPECS:
        x = make_values(rng, shape, dtype, domain)
        for axes in axes_list:
            kwargs = {} if axes is None else {"axes": axes}
            case = Case(f"{shape}-axes={axes}", [x], (), kwargs)
            if dtype.kind in "fc" and x.size:
                # Summation error bound: (number of terms) * eps * (largest term).
                ax = range(x.ndim) if axes is None else ([axes] if isinstance(axes, int) else axes)
                n = math.prod(x.shape[a] for a in ax) if x.ndim else 1
                eps = float(np.finfo(dtype).eps)
                big = float(np.max(np.abs(x)))
                if name == "reduce_sum_squares":
                    big = big * big
                if name in ("reduce_sum", "reduce_sum_squares"):
                    case.atol = 1e-6 if dtype in (np.float32, np.complex64) else 1e-14
                    case.atol += 2 * max(n, 1) * eps * big
            out.append(case)
    return out


# ----------------------------------------------------------------------------------------------
# Slicing, indexing, matrix structure and contraction cases
# ----------------------------------------------------------------------------------------------


def _index_array(values: Any, dtype: Any = np.int64) -> np.ndarray:
    return np.array(values, dtype=dtype)


def _slice_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    specs = [
        ((), (), (), None),
        ((5,), (1,), (4,), None),
        ((5,), (0,), (5,), (2,)),
        ((5,), (5,), (5,), None),  # empty, start == dim
        ((3, 4), (0, 1), (3, 4), (1, 1)),
        ((3, 4), (1, 0), (3, 4), (2, 3)),
        ((3, 4), (1, 1), (1, 3), None),  # zero-size result
        ((2, 3, 4), (0, 1, 1), (2, 3, 4), (1, 1, 2)),
        ((0, 3), (0, 1), (0, 2), None),
    ]
    return [
        Case(
            f"{s}[{a}:{b}:{k}]",
            [make_values(rng, s, dtype)],
            (tf.SliceConfig(starts=a, limits=b, strides=k),),
        )
        for s, a, b, k in specs
    ]


def _pad_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    specs = [
        ((), (), (), ()),
        ((5,), (1,), (2,), (0,)),
        ((5,), (-1,), (-2,), (1,)),
        ((3,), (-3,), (0,), (0,)),  # cropped to nothing
        ((3,), (-2,), (2,), (2,)),  # crop into the interior padding
        ((3, 4), (0, 1), (1, 0), (1, 2)),
        ((2, 3), (-1, 2), (0, -4), (3, 0)),
        ((2, 3, 4), (1, -1, 0), (0, 0, -2), (0, 1, 0)),
        ((0, 3), (1, 0), (1, 1), (2, 0)),
    ]
    out = []
    for s, lo, hi, interior in specs:
        cfg = tf.PadConfig(edge_padding_low=lo, edge_padding_high=hi, interior_padding=interior)
        out.append(Case(f"{s}lo{lo}hi{hi}in{interior}", [make_values(rng, s, dtype)], (cfg,)))
    return out


def _dynamic_slice_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    specs = [
        ((), [], ()),
        ((5,), [1], (3,)),
        ((5,), [4], (3,)),  # clamped to 2
        ((5,), [-2], (2,)),  # clamped to 0
        ((3, 4), [1, 2], (2, 2)),
        ((3, 4), [5, -1], (1, 4)),
        ((2, 3, 4), [0, 1, 1], (2, 2, 2)),
        ((3, 4), [1, 1], (0, 2)),  # zero-size result
        ((0, 3), [0, 1], (0, 2)),
    ]
    out = []
    for i, (s, starts, sizes) in enumerate(specs):
        idx_dtype = np.int32 if i % 2 else np.int64
        out.append(
            Case(
                f"{s}@{starts}x{sizes}",
                [make_values(rng, s, dtype), _index_array(starts, idx_dtype)],
                (sizes,),
            )
        )
    return out


def _dynamic_update_slice_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    specs = [
        ((), (), []),
        ((5,), (2,), [1]),
        ((5,), (2,), [4]),  # clamped to 3
        ((3, 4), (2, 2), [1, -3]),
        ((2, 3, 4), (1, 3, 2), [1, 0, 5]),
        ((3, 4), (0, 2), [1, 1]),  # zero-size update
        ((3, 4), (3, 4), [0, 0]),
        ((0, 3), (0, 2), [0, 0]),
    ]
    out = []
    for i, (s, us, starts) in enumerate(specs):
        idx_dtype = np.int32 if i % 2 else np.int64
        arrays = [
            make_values(rng, s, dtype),
            make_values(rng, us, dtype),
            _index_array(starts, idx_dtype),
        ]
        out.append(Case(f"{s}<-{us}@{starts}", arrays))
    return out


def _concatenate_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    specs = [
        ([(5,)], 0),
        ([(2, 3), (4, 3)], 0),
        ([(2, 3), (2, 1), (2, 0)], 1),
        ([(2, 3, 4), (2, 1, 4)], 1),
        ([(2, 3, 4), (2, 3, 2)], -1),
        ([(0, 3), (2, 3)], 0),
        ([(3, 2), (3, 2)], 1),
    ]
    out = [
        Case(
            f"{shapes}@{axis}",
            [make_values(rng, s, dtype) for s in shapes],
            (axis,),
            pack=len(shapes),
        )
        for shapes, axis in specs
    ]
    # Mixed dtypes are promoted: a bool operand joins any dtype.
    mixed = [make_values(rng, (2, 3), dtype), make_values(rng, (1, 3), np.dtype(bool))]
    out.append(Case("promoted-with-bool", mixed, (0,), pack=2))
    return out


def _gather_config(offset, collapsed, start_map, ivd, sizes) -> Any:
    return tf.GatherConfig(
        offset_dims=offset,
        collapsed_slice_dims=collapsed,
        start_index_map=start_map,
        index_vector_dim=ivd,
        slice_sizes=sizes,
    )


def _gather_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    specs = [
        # (label, operand shape, indices, config)
        ("rows", (4, 3), [[2], [0], [3]], _gather_config((1,), (0,), (0,), 1, (1, 3))),
        ("rows-implicit-vector", (4, 3), [2, 0, 3, 1], _gather_config((1,), (0,), (0,), 1, (1, 3))),
        ("columns", (4, 3), [[2], [0]], _gather_config((0,), (1,), (1,), 1, (4, 1))),
        (
            "points",
            (3, 4, 2),
            [[0, 1], [2, 3], [1, 0], [2, 2], [0, 3]],
            _gather_config((1,), (0, 1), (0, 1), 1, (1, 1, 2)),
        ),
        (
            "windows-clamped",
            (5, 4),
            [[3], [-1], [4], [9]],
            _gather_config((1, 2), (), (0,), 1, (2, 3)),
        ),
        (
            "vector-dim-0",
            (3, 4),
            [[0, 1, 2], [3, 0, 1]],
            _gather_config((), (0, 1), (1, 0), 0, (1, 1)),
        ),
        ("batch-2d", (4, 3), [[[1], [3]], [[0], [0]]], _gather_config((2,), (0,), (0,), 2, (1, 3))),
        (
            "batch-2d-offset-middle",
            (4, 3),
            [[[1], [3]], [[0], [2]]],
            _gather_config((1,), (0,), (0,), 2, (1, 3)),
        ),
        ("rank0-batch", (4, 3), [2], _gather_config((0,), (0,), (0,), 0, (1, 3))),
        (
            "empty-indices",
            (4, 3),
            np.zeros((0, 1), np.int64),
            _gather_config((1,), (0,), (0,), 1, (1, 3)),
        ),
        ("empty-window", (4, 0), [[1], [2]], _gather_config((1,), (0,), (0,), 1, (1, 0))),
    ]
    out = []
    for i, (label, shape, indices, cfg) in enumerate(specs):
        idx = _index_array(indices, np.int32 if i % 3 == 1 else np.int64)
        out.append(Case(label, [make_values(rng, shape, dtype), idx], (cfg,)))
    return out


def _scatter_config(window, inserted, to_operand, ivd) -> Any:
    return tf.ScatterConfig(
        update_window_dims=window,
        inserted_window_dims=inserted,
        scatter_dims_to_operand_dims=to_operand,
        index_vector_dim=ivd,
    )


def _scatter_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    specs = [
        # (label, operand shape, indices, updates shape, config)
        ("rows-duplicates", (4, 3), [[0], [2], [0]], (3, 3), _scatter_config((1,), (0,), (0,), 1)),
        ("rows-implicit-vector", (4, 3), [1, 3, 1], (3, 3), _scatter_config((1,), (0,), (0,), 1)),
        (
            "points",
            (3, 4),
            [[0, 1], [2, 3], [0, 1], [1, 0], [2, 2]],
            (5,),
            _scatter_config((), (0, 1), (0, 1), 1),
        ),
        (
            "windows-out-of-bounds-dropped",
            (5, 4),
            [[1, 0], [4, 2], [-1, 0], [3, 1]],
            (4, 2, 3),
            _scatter_config((1, 2), (), (0, 1), 1),
        ),
        (
            "vector-dim-0",
            (3, 4),
            [[0, 1, 0], [3, 0, 3]],
            (3,),
            _scatter_config((), (0, 1), (1, 0), 0),
        ),
        ("window-leading", (3, 4), [[1], [3]], (3, 2), _scatter_config((0,), (1,), (1,), 1)),
        (
            "empty-updates",
            (4, 3),
            np.zeros((0, 1), np.int64),
            (0, 3),
            _scatter_config((1,), (0,), (0,), 1),
        ),
        (
            "index-out-of-range-dropped",
            (4,),
            [[7], [1], [-1]],
            (3,),
            _scatter_config((), (0,), (0,), 1),
        ),
    ]
    out = []
    for i, (label, shape, indices, ushape, cfg) in enumerate(specs):
        idx = _index_array(indices, np.int32 if i % 3 == 1 else np.int64)
        arrays = [make_values(rng, shape, dtype), idx, make_values(rng, ushape, dtype)]
        out.append(Case(label, arrays, (cfg,)))
    return out


def _extract_diag_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    specs = [
        ((3, 3), 0, 1),
        ((3, 4), 0, 1),
        ((3, 4), 1, 0),
        ((2, 3, 4), 2, 0),
        ((2, 3, 4), 0, 2),
        ((3, 2, 3), 1, 2),
        ((0, 3), 0, 1),
        ((2, 3, 0), 1, 0),
    ]
    out = [Case(f"{s}-{a},{b}", [make_values(rng, s, dtype)], (a, b)) for s, a, b in specs]
    out.append(Case("defaults", [make_values(rng, (4, 2, 3), dtype)]))
    return out


def _embed_diag_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    specs = [
        ((3,), 0, 1),
        ((3,), 1, 0),
        ((3, 2), 0, 1),
        ((3, 2), 2, 0),
        ((2, 3), 1, 2),
        ((0,), 0, 1),
        ((2, 0), 0, 2),
    ]
    out = [Case(f"{s}-{a},{b}", [make_values(rng, s, dtype)], (a, b)) for s, a, b in specs]
    out.append(Case("defaults", [make_values(rng, (4, 3), dtype)]))
    return out


def _triangle_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    out = []
    for shape in [(3, 3), (3, 5), (5, 3), (3, 4, 2), (0, 3), (2, 0, 4)]:
        x = make_values(rng, shape, dtype)
        for k in (0, 1, -1, 5, -5):
            out.append(Case(f"{shape}k={k}", [x], (k,)))
    out.append(Case("default-k", [make_values(rng, (4, 4), dtype)]))
    out.append(Case("keyword-k", [make_values(rng, (4, 4, 2), dtype)], kwargs={"k": 2}))
    return out


DOT_SPECS = [
    # (lhs shape, rhs shape, lhs_contracting, rhs_contracting, lhs_batch, rhs_batch)
    ((3, 4), (4, 5), (1,), (0,), (), ()),
    ((4, 3), (5, 4), (0,), (1,), (), ()),
    ((2, 3, 4), (2, 4, 5), (2,), (1,), (0,), (0,)),
    ((3, 2, 4, 5), (5, 2, 4, 6), (2, 3), (2, 0), (1,), (1,)),
    ((3, 4, 2), (2, 4), (1,), (1,), (2,), (0,)),  # batch last in lhs, first in rhs
    ((3,), (4,), (), (), (), ()),  # outer product
    ((4,), (4,), (0,), (0,), (), ()),  # inner product
    ((), (3,), (), (), (), ()),  # rank 0
    ((3, 0), (0, 4), (1,), (0,), (), ()),  # empty contraction: zeros
    ((0, 4), (4, 5), (1,), (0,), (), ()),
    ((3, 4), (3, 4), (), (), (0, 1), (0, 1)),  # batch only
]


def _dot_tolerance(case: Case, dtype: np.dtype, a: np.ndarray, b: np.ndarray, k: int) -> Case:
    if dtype.kind in "fc" and a.size and b.size:
        eps = float(np.finfo(dtype).eps)
        base = 1e-6 if dtype in (np.float32, np.complex64) else 1e-14
        case.atol = base + 4 * max(k, 1) * eps * float(np.max(np.abs(a))) * float(np.max(np.abs(b)))
    return case


def _dot_general_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    flags = [(True, False), (False, True), (True, True), (False, False)]
    out = []
    for i, (ls, rs, lc, rc, lb, rb) in enumerate(DOT_SPECS):
        a, b = make_values(rng, ls, dtype), make_values(rng, rs, dtype)
        cfg = tf.DotGeneralConfig(
            lhs_contracting_dims=lc, rhs_contracting_dims=rc, lhs_batch_dims=lb, rhs_batch_dims=rb
        )
        params: tuple = (cfg,) if name == "dot_general" else (cfg, *flags[i % 4])
        k = math.prod(ls[d] for d in lc)
        out.append(_dot_tolerance(Case(f"{ls}x{rs}-{cfg}", [a, b], params), dtype, a, b, k))
    return out


def _matmul_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    out = []
    for ls, rs in [
        ((3, 4), (4, 5)),
        ((1, 1), (1, 1)),
        ((0, 3), (3, 2)),
        ((3, 0), (0, 2)),
        ((2, 3), (3, 0)),
        ((5, 2), (2, 4)),
    ]:
        a, b = make_values(rng, ls, dtype), make_values(rng, rs, dtype)
        out.append(_dot_tolerance(Case(f"{ls}@{rs}", [a, b]), dtype, a, b, ls[1]))
    return out


def _scale_real_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    # Factors whose products with small integers are never halfway between two integers.
    factors = (2.0, -3.0, 0.4, 0.0, 1.0 / 3.0, 2)
    out = []
    for i, shape in enumerate(UNARY_SHAPES):
        x = make_values(rng, shape, dtype)
        for factor in factors[i % 2 :: 2] if len(shape) > 1 else factors:
            out.append(Case(f"{shape}*{factor}", [x], (factor,)))
    return out


def _scale_complex_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    out = []
    for shape in UNARY_SHAPES:
        x = make_values(rng, shape, dtype)
        for factor in (1j, 0.5 - 2j, 2.0, 0j, 1 + 1j):
            out.append(Case(f"{shape}*{factor}", [x], (factor,)))
    return out


def _fft_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    """Every ``fft_type`` on every dtype (the wrong kinds raise ``TypeError``), odd and even
    lengths, default and explicit axes, a size mismatch (``ValueError``)."""
    tol = (
        {"rtol": 1e-4, "atol": 1e-4}
        if dtype in (np.float32, np.complex64)
        else {"rtol": 1e-10, "atol": 1e-12}
    )
    specs = [
        # (fft_type, input shape, fft_length, axes)
        ("FFT", (3, 4), (4,), None),
        ("ifft", (5, 2, 3), (5, 3), (0, 2)),
        ("RFFT", (4, 6), (6,), None),
        ("RFFT", (5, 3), (3, 5), (1, 0)),
        ("IRFFT", (3, 4), (6,), None),
        ("IRFFT", (3, 4), (7,), (1,)),
        ("IRFFT", (4, 2, 3), (4, 4), (0, 2)),
        ("FFT", (0, 3), (3,), None),
        ("FFT", (3, 4), (5,), None),
    ]
    return [
        Case(
            f"{t}{shape}{n}{axes}",
            [make_values(rng, shape, dtype)],
            (t, n) if axes is None else (t, n, axes),
            **tol,
        )
        for t, shape, n, axes in specs
    ]


def _sorting_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    """``sort``/``argsort`` (both directions), ``argmax``/``argmin`` and the scans along each
    axis, zero-size axes included (``argmax`` of an empty axis raises ``ValueError``)."""
    specs = [
        ((5,), 0),
        ((5,), -1),
        ((3, 4), 0),
        ((3, 4), 1),
        ((2, 0, 3), 2),
        ((2, 0, 3), 1),
        ((2, 3, 4), 1),
    ]
    cases = [Case(f"{s}@{a}", [make_values(rng, s, dtype)], (a,)) for s, a in specs]
    if name in ("sort", "argsort"):
        cases += [Case(f"{s}@{a}desc", [make_values(rng, s, dtype)], (a, True)) for s, a in specs]
    return cases


def _searchsorted_cases(name: str, dtype: np.dtype, rng: np.random.Generator) -> list[Case]:
    cases = []
    for n, vs in ((6, (4,)), (0, (2,)), (5, (2, 3)), (1, ())):
        a = np.sort(make_values(rng, (n,), dtype), kind="stable")
        for right in (False, True):
            cases.append(Case(f"{n}/{vs}/{right}", [a, make_values(rng, vs, dtype)], (right,)))
    return cases


CASE_BUILDERS: dict[str, Callable[[str, np.dtype, np.random.Generator], list[Case]]] = {
    **{name: _unary_cases for name in UNARY},
    **{name: _binary_cases for name in BINARY},
    "compare": _compare_cases,
    "select": _select_cases,
    "where_select": _select_cases,
    "clamp": _clamp_cases,
    "convert": _convert_cases,
    "cast": _cast_cases,
    "transpose": _transpose_cases,
    "reshape": _reshape_cases,
    "broadcast_in_dim": _broadcast_in_dim_cases,
    "reverse": _reverse_cases,
    **{name: _reduction_cases for name in REDUCTIONS},
    "slice": _slice_cases,
    "pad": _pad_cases,
    "dynamic_slice": _dynamic_slice_cases,
    "dynamic_update_slice": _dynamic_update_slice_cases,
    "concatenate": _concatenate_cases,
    "gather": _gather_cases,
    "scatter": _scatter_cases,
    "extract_diag": _extract_diag_cases,
    "embed_diag": _embed_diag_cases,
    "tril": _triangle_cases,
    "triu": _triangle_cases,
    "dot_general": _dot_general_cases,
    "dot_general_with_conj": _dot_general_cases,
    "matmul": _matmul_cases,
    "scale_real": _scale_real_cases,
    "scale_complex": _scale_complex_cases,
    "fft": _fft_cases,
    **{
        name: _sorting_cases
        for name in ("sort", "argsort", "argmax", "argmin", "cumsum", "cumprod")
    },
    "searchsorted": _searchsorted_cases,
}


# ----------------------------------------------------------------------------------------------
# Runner
# ----------------------------------------------------------------------------------------------


def run_case(name: str, case: Case, variant: str) -> bool:
    """Run one case with every array argument made by ``variant``; returns False when the variant
    produced no strided input (nothing new to test)."""
    make = VARIANTS[variant]
    values, tensors, strided = [], [], False
    for a in case.arrays:
        made = make(a)
        if made is None:
            made = _from_c(a)
        else:
            strided = strided or variant in STRIDED
        v, t, np_view = made
        check_view(t, v, np_view)
        values.append(v)
        tensors.append(t)
    if variant in STRIDED and not strided:
        return False

    op = getattr(tf.prim, name)
    ref = REFERENCE[name]
    args: list[Any] = list(tensors)
    ref_args: list[Any] = list(values)
    if case.pack:
        args = [args[: case.pack], *args[case.pack :]]
        ref_args = [ref_args[: case.pack], *ref_args[case.pack :]]
    try:
        expected = ref(*ref_args, *case.params, **case.kwargs)
    except (ZeroDivisionError, ValueError, TypeError, IndexError) as exc:
        with pytest.raises(_builtin_base(exc)):
            op(*args, *case.params, **case.kwargs)
        return True

    result = op(*args, *case.params, **case.kwargs)
    assert isinstance(result, TENSOR_TYPE), type(result)
    if result.size > 0:
        assert tuple(result.strides) == np.asarray(result).strides
    assert_close(
        result,
        expected,
        rtol=case.rtol,
        atol=case.atol,
        err_msg=f"{name}[{case.label}] with {variant} inputs",
    )
    # Inputs are immutable.
    for t, v in zip(tensors, values):
        np.testing.assert_array_equal(np.asarray(t), v)
    return True


def _builtin_base(exc: BaseException) -> type[BaseException]:
    """The builtin exception class tenferro must raise when the reference raises ``exc``."""
    for cls in (ZeroDivisionError, IndexError, TypeError, ValueError):
        if isinstance(exc, cls):
            return cls
    return type(exc)  # pragma: no cover


#: The ``linalg`` family is checked by ``tests/test_linalg.py`` (values up to gauge against
#: NumPy/SciPy, not elementwise against a reference; its own manifest test covers every row).
LINALG = frozenset(row.name for row in CATALOG if row.family == "linalg")


def _implemented_params():
    params = []
    for row in CATALOG:
        if not row.implemented or row.name in LINALG:
            continue
        for dtype in row.dtypes:
            dt = np.dtype(dtype)
            params.append(pytest.param(row.name, dt, id=f"{row.name}-{dt.name}"))
    return params


@pytest.mark.parametrize("name,dtype", _implemented_params())
def test_catalog_op(name: str, dtype: np.dtype) -> None:
    """Every implemented primitive, every admitted dtype, every variant of input layout."""
    assert name in CASE_BUILDERS, f"no cases for implemented primitive {name!r}"
    rng = np.random.default_rng(_seed(name, dtype))
    cases = CASE_BUILDERS[name](name, dtype, rng)
    assert cases
    ran_strided = False
    for case in cases:
        for variant in VARIANTS:
            ran = run_case(name, case, variant)
            ran_strided = ran_strided or (ran and variant in STRIDED)
    assert ran_strided, f"{name}: no case reached a strided input"


def _seed(name: str, dtype: np.dtype) -> int:
    """A deterministic seed per (op, dtype) (``hash`` of a str is randomised per process)."""
    return int.from_bytes(f"{name}/{dtype.name}".encode(), "little") % (2**32)


# ----------------------------------------------------------------------------------------------
# Manifest
# ----------------------------------------------------------------------------------------------


def test_manifest() -> None:
    """Every catalog row is either implemented, with a reference and test cases, or PENDING."""
    names = [row.name for row in CATALOG]
    assert len(names) == len(set(names)), "duplicate catalog rows"
    missing_pending = PENDING - set(names)
    assert not missing_pending, f"PENDING names not in the catalog: {sorted(missing_pending)}"
    problems = []
    for row in CATALOG:
        if row.name in PENDING:
            if row.implemented:
                problems.append(f"{row.name} is implemented: remove it from PENDING and test it")
            continue
        if not row.implemented:
            problems.append(f"{row.name} is neither implemented nor PENDING")
        if row.name in LINALG:
            if not hasattr(tf.prim, row.name):
                problems.append(f"{row.name} is not a function of tf.prim")
            continue
        if row.name not in REFERENCE:
            problems.append(f"{row.name} has no reference implementation")
        if row.name not in CASE_BUILDERS:
            problems.append(f"{row.name} is not exercised by test_catalog_op")
        if not row.dtypes:
            problems.append(f"{row.name} admits no dtype")
        if not hasattr(tf.prim, row.name):
            problems.append(f"{row.name} is not a function of tf.prim")
    assert not problems, "\n".join(problems)


def test_catalog_rows_are_well_formed() -> None:
    families = {
        "unary",
        "binary",
        "ternary",
        "conversion",
        "layout",
        "slicing",
        "indexing",
        "matrix_structure",
        "reduction",
        "contraction",
        "linalg",
        "fft",
        "sorting",
        "scan",
    }
    allowed = set(DTYPES)
    for row in CATALOG:
        assert isinstance(row.name, str) and row.name
        assert row.family in families, (row.name, row.family)
        assert isinstance(row.arity, int) and (row.arity >= 1 or row.arity == -1), (
            row.name,
            row.arity,
        )
        assert all(isinstance(d, np.dtype) for d in row.dtypes), row.name
        assert set(row.dtypes) <= allowed, (row.name, row.dtypes)
        assert isinstance(row.implemented, bool)
    # The unary family is exactly the unary references of reference.py (hand-written, so an
    # independent list): a catalog row without one, or a reference the catalog lost, fails here.
    unary_references = {
        name for name, ref in REFERENCE.items() if getattr(ref, "family", None) == "unary"
    }
    unary_family = {row.name for row in CATALOG if row.family == "unary"}
    assert unary_family == unary_references, (
        f"unary primitives without a reference in tests/reference.py: {sorted(unary_family - unary_references)}; "
        f"unary references without a catalog row: {sorted(unary_references - unary_family)}"
    )
    assert len(UNARY) >= 14
    # The catalog of ops.md: each family's members.
    expected = {
        "unary": unary_references,
        "binary": set(BINARY) | {"compare"},
        "reduction": set(REDUCTIONS),
        "layout": {"transpose", "reshape", "broadcast_in_dim", "reverse"},
        "conversion": {"convert", "cast"},
    }
    for family, members in expected.items():
        got = {row.name for row in CATALOG if row.family == family}
        assert members <= got, (family, sorted(members - got))
    # Admitted dtypes pinned by ops.md.
    assert np.dtype(np.complex128) not in ROWS["erf"].dtypes
    assert np.dtype(np.complex64) not in ROWS["erf"].dtypes
    for name in ("maximum", "minimum", "clamp", "reduce_max", "reduce_min"):
        assert not any(np.dtype(d).kind == "c" for d in ROWS[name].dtypes), name
    assert set(ROWS["reduce_sum_squares"].dtypes) == {np.dtype(np.float32), np.dtype(np.float64)}
    assert np.dtype(np.bool_) not in ROWS["neg"].dtypes


def test_where_select_is_select() -> None:
    pred = tf.tensor(np.array([True, False, True]))
    a = tf.tensor(np.array([1.0, 2.0, 3.0]))
    b = tf.tensor(np.array([-1.0, -2.0, -3.0]))
    assert_close(tf.prim.where_select(pred, a, b), np.array([1.0, -2.0, 3.0]))
    assert_close(tf.prim.select(pred, a, b), np.array([1.0, -2.0, 3.0]))


# ----------------------------------------------------------------------------------------------
# Hypothesis: shapes and values
# ----------------------------------------------------------------------------------------------

ELEMENTWISE = tuple(
    row.name
    for row in CATALOG
    if row.implemented and row.name in set(UNARY) | set(BINARY) | {"compare", "select", "clamp"}
)


def _elements(dtype: np.dtype, domain: str) -> st.SearchStrategy:
    """Hypothesis element strategies per dtype and value domain (no NaN/inf/subnormals)."""
    width = 32 if dtype in (np.float32, np.complex64) else 64
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        bounds = {
            "positive": (1, info.max),
            "log1p": (0, 1000),
            "exp": (-20, 20),
            "tanh": (-20, 20),
            "pow_base": (-10, 10),
            "pow_exp": (0, 10),
            "nonzero": None,
        }.get(domain, (int(info.min), int(info.max)))
        if bounds is None:
            return st.integers(int(info.min), int(info.max)).filter(lambda v: v != 0)
        return st.integers(*bounds)

    def floats(lo: float, hi: float) -> st.SearchStrategy:
        if width == 32:  # bounds must be representable at width 32
            lo, hi = float(np.float32(lo)), float(np.float32(hi))
        return st.floats(
            lo, hi, width=width, allow_nan=False, allow_infinity=False, allow_subnormal=False
        )

    real = {
        "any": (-1e3, 1e3),
        "positive": (1e-3, 1e3),
        "log1p": (-0.999, 1e3),
        "exp": (-20.0, 20.0),
        "trig": (-10.0, 10.0),
        "tanh": (-20.0, 20.0),
        "pow_base": (0.1, 10.0),
        "pow_exp": (-3.0, 3.0),
    }
    if dtype.kind == "f":
        if domain == "nonzero":
            return st.one_of(floats(-1e3, -1e-3), floats(1e-3, 1e3))
        return floats(*real[domain])
    parts = {
        "any": ((-1e3, 1e3), (-1e3, 1e3)),
        "positive": ((-1e3, 1e3), (-1e3, 1e3)),
        "nonzero": ((-1e3, 1e3), (-1e3, 1e3)),
        "log1p": ((-0.5, 1e3), (-1e3, 1e3)),
        "exp": ((-20.0, 20.0), (-10.0, 10.0)),
        "trig": ((-10.0, 10.0), (-5.0, 5.0)),
        "tanh": ((-5.0, 5.0), (-1.2, 1.2)),
        "pow_base": ((-3.0, 3.0), (-3.0, 3.0)),
        "pow_exp": ((-2.0, 2.0), (-2.0, 2.0)),
    }[domain]
    strategy = st.builds(complex, floats(*parts[0]), floats(*parts[1]))
    if domain in ("positive", "nonzero", "pow_base"):
        strategy = strategy.filter(lambda z: abs(z) > 1e-3)
    return strategy


HYP_UNARY_DOMAIN = {**UNARY_DOMAIN, "sin": "trig", "cos": "trig"}
HYP_BINARY_DOMAINS = {
    "div": ("any", "nonzero"),
    "rem": ("any", "nonzero"),
    "pow": ("pow_base", "pow_exp"),
}


@pytest.mark.skipif(not ELEMENTWISE, reason="no elementwise primitive implemented yet")
@given(data=st.data())
def test_elementwise_hypothesis(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(ELEMENTWISE), label="op")
    row = ROWS[name]
    dtype = np.dtype(data.draw(st.sampled_from(row.dtypes), label="dtype"))
    if name in UNARY:
        arity, domains = 1, (HYP_UNARY_DOMAIN.get(name, "any"),)
    elif name in ("select", "clamp"):
        arity, domains = 3, ("any", "any", "any")
    else:
        arity, domains = 2, HYP_BINARY_DOMAINS.get(name, ("any", "any"))
    shapes = data.draw(
        hnp.mutually_broadcastable_shapes(num_shapes=arity, min_dims=0, max_dims=3, max_side=4)
    )
    arrays = []
    for i, (shape, domain) in enumerate(zip(shapes.input_shapes, domains)):
        dt = np.dtype(bool) if (name == "select" and i == 0) else dtype
        arrays.append(
            data.draw(hnp.arrays(dt, shape, elements=_elements(dt, domain)), label=f"arg{i}")
        )
    params: tuple = ()
    if name == "compare":
        directions = ("EQ", "NE") if dtype.kind == "c" else DIRECTIONS
        params = (data.draw(st.sampled_from(directions), label="direction"),)
    variant = data.draw(st.sampled_from(list(VARIANTS)), label="layout")
    run_case(name, Case("hypothesis", arrays, params), variant)


STRUCTURAL = tuple(
    row.name
    for row in CATALOG
    if row.implemented
    and row.name in set(REDUCTIONS) | {"transpose", "reshape", "broadcast_in_dim", "reverse"}
)


@st.composite
def _structural_case(draw: st.DrawFn) -> tuple[str, Case]:
    name = draw(st.sampled_from(STRUCTURAL), label="op")
    dtype = np.dtype(draw(st.sampled_from(ROWS[name].dtypes), label="dtype"))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4), label="shape")
    domain = "pow_base" if (name == "reduce_prod" and dtype.kind in "fc") else "any"
    if name in ("reduce_max", "reduce_min", "reduce_prod") and dtype.kind in "iu":
        domain = "pow_base"
    x = draw(hnp.arrays(dtype, shape, elements=_elements(dtype, domain)), label="x")
    ndim = len(shape)
    if name == "transpose":
        perm = tuple(draw(st.permutations(range(ndim))))
        return name, Case("hyp", [x], (perm,))
    if name == "reverse":
        axes = (
            draw(st.lists(st.integers(0, max(ndim - 1, 0)), unique=True, max_size=ndim))
            if ndim
            else []
        )
        return name, Case("hyp", [x], (tuple(axes),))
    if name == "reshape":
        dims = list(draw(st.permutations(shape)))
        if len(dims) >= 2 and draw(st.booleans()):
            i = draw(st.integers(0, len(dims) - 2))
            dims[i : i + 2] = [dims[i] * dims[i + 1]]
        if draw(st.booleans()):
            dims.insert(draw(st.integers(0, len(dims))), 1)
        return name, Case("hyp", [x], (tuple(dims),))
    if name == "broadcast_in_dim":
        out_rank = draw(st.integers(ndim, ndim + 2))
        dims = draw(st.permutations(range(out_rank)))[:ndim]
        if draw(st.booleans()):
            dims = sorted(dims)
        out_shape = [draw(st.integers(0, 3)) for _ in range(out_rank)]
        for i, d in enumerate(dims):
            out_shape[d] = shape[i] if shape[i] != 1 else draw(st.integers(0, 3))
        return name, Case("hyp", [x], (tuple(out_shape), tuple(dims)))
    # reductions
    if draw(st.booleans()):
        axes = None
        kwargs = {}
    else:
        axes = (
            draw(
                st.lists(st.integers(-ndim, ndim - 1), unique_by=lambda a: a % ndim, max_size=ndim)
            )
            if ndim
            else []
        )
        kwargs = {"axes": tuple(axes)}
    case = Case("hyp", [x], (), kwargs)
    if dtype.kind in "fc" and x.size:
        eps = float(np.finfo(dtype).eps)
        big = float(np.max(np.abs(x)))
        if name == "reduce_sum_squares":
            big *= big
        default_atol = 1e-6 if dtype in (np.float32, np.complex64) else 1e-14
        if name in ("reduce_sum", "reduce_sum_squares"):
            case.atol = default_atol + 2 * x.size * eps * big
        if name == "reduce_prod":
            case.rtol = (1e-5 if dtype in (np.float32, np.complex64) else 1e-12) + 2 * x.size * eps
    return name, case


@pytest.mark.skipif(not STRUCTURAL, reason="no layout or reduction primitive implemented yet")
@given(drawn=_structural_case(), variant=st.sampled_from(list(VARIANTS)))
def test_structural_hypothesis(drawn: tuple[str, Case], variant: str) -> None:
    name, case = drawn
    run_case(name, case, variant)

"""Catalog-driven derivative checks: every primitive with a derivative rule runs through
``check_grads(order=2, modes=("fwd", "rev"))`` (JVP vs central differences and the dot-product
identity ``<vjp(u), v> = <u, jvp(v)>``) in float64 and complex128 where admitted, with rank-0,
broadcast and strided-view (transposed / reversed) operands. The manifest test fails when a
primitive has a rule but no case here, or a case but no rule."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tenferro as tf
from reference import REFERENCE
from tenferro import _testing
from tenferro.testing import check_grads

P = tf.prim
RNG = np.random.default_rng(7)


def arr(shape: tuple[int, ...], dtype: str, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    a = RNG.uniform(lo, hi, size=shape)
    if dtype == "complex128":
        a = a + 1j * RNG.uniform(lo, hi, size=shape)
    return a.astype(dtype)


def _own(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    """As :func:`arr` from a generator of its own (cases added later leave ``RNG``'s stream be)."""
    g = np.random.default_rng(seed)
    a = g.uniform(-1.0, 1.0, size=shape)
    if dtype == "complex128":
        a = a + 1j * g.uniform(-1.0, 1.0, size=shape)
    return a.astype(dtype)


def pos(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    return arr(shape, dtype, 0.5, 1.5)


def const(t: Any, value: Any) -> Any:
    return t.runtime.constant(value)


# op -> (dtypes, builder(dtype) -> (f, args)). Operands are routed through strided views
# (``.T``, ``[::-1]``) inside ``f`` so the derivative kernels see non-compact inputs.
Case = tuple[tuple[str, ...], Callable[[str], tuple[Callable[..., Any], list[np.ndarray]]]]
RC = ("float64", "complex128")
R = ("float64",)

#: Operand layout of a unary primitive's case: the strided view inside ``f`` (``"T"``: transposed,
#: ``"rev"``: reversed, ``""``: as given) and the shape; a primitive not listed is compact (3,).
UNARY_LAYOUT: dict[str, tuple[str, tuple[int, ...]]] = {
    "neg": ("T", (2, 3)),
    "conj": ("rev", (3,)),
    "abs": ("T", (2, 3)),
    "exp": ("", ()),
    "log": ("T", (2, 2)),
    "sin": ("rev", (3,)),
    "cos": ("", (2,)),
    "tanh": ("T", (2, 2)),
    "expm1": ("rev", (3,)),
    "erf": ("", (4,)),
}
_VIEWS: dict[str, Callable[[Any], Any]] = {
    "T": lambda t: t.T,
    "rev": lambda t: t[::-1],
    "": lambda t: t,
}


def _unary_case(row: Any) -> Case:
    """The case of a unary primitive: float64 and complex128 where admitted, positive points where
    the reference's domain is (``log``, ``sqrt``, ``rsqrt``, ``log1p``) and for ``abs`` (not
    differentiable at 0)."""
    name = row.name
    dtypes = tuple(d for d in RC if np.dtype(d) in row.dtypes)
    view, shape = UNARY_LAYOUT.get(name, ("", (3,)))
    positive = name == "abs" or getattr(REFERENCE.get(name), "domain", "any") in (
        "positive",
        "log1p",
    )
    op, v = getattr(P, name), _VIEWS[view]
    return (dtypes, lambda d: (lambda t: op(v(t)), [(pos if positive else arr)(shape, d)]))


_RULES = _testing.ad_rules()

#: The unary primitives with a derivative rule: every row of the catalog's unary family but those
#: whose derivative is symbolically zero (``sign``).
UNARY_RULES = {
    row.name: _unary_case(row)
    for row in P.CATALOG
    if row.family == "unary" and _RULES[row.name] == "linearize"
}

CASES: dict[str, Case] = {
    **UNARY_RULES,
    "add": (RC, lambda d: (lambda a, b: P.add(a.T, b), [arr((3, 2), d), arr((3,), d)])),
    "sub": (RC, lambda d: (lambda a, b: P.sub(a, b), [arr((2, 3), d), arr((), d)])),
    "mul": (RC, lambda d: (lambda a, b: P.mul(a[::-1], b), [arr((3, 2), d), arr((2,), d)])),
    "div": (RC, lambda d: (lambda a, b: P.div(a, b.T), [arr((2, 2), d), pos((2, 2), d)])),
    "rem": (
        R,
        lambda d: (lambda a, b: P.rem(a, b), [arr((4,), d, 2.0, 5.0), arr((4,), d, 0.7, 1.3)]),
    ),
    "pow": (RC, lambda d: (lambda a, b: P.pow(a, b), [pos((3,), d), arr((3,), d)])),
    "maximum": (R, lambda d: (lambda a, b: P.maximum(a, b), [arr((4,), d), arr((4,), d)])),
    "minimum": (R, lambda d: (lambda a, b: P.minimum(a, b.T), [arr((2, 2), d), arr((2, 2), d)])),
    # Fixed operands (no draw from RNG, so the other cases keep their values).
    "copysign": (
        R,
        lambda d: (
            lambda a, b: P.copysign(a.T, b),
            [np.array([[0.3, -0.7], [0.9, -0.2]], d), np.array([-0.5, 0.4], d)],
        ),
    ),
    "nextafter": (
        R,
        lambda d: (
            lambda a, b: P.nextafter(a, b[::-1]),
            [np.array([0.3, -0.6, 0.8], d), np.array([-0.1, 0.9, 0.2], d)],
        ),
    ),
    "select": (
        RC,
        lambda d: (
            lambda a, b: P.select(const(a, np.array([True, False, True])), a, b),
            [arr((3,), d), arr((3,), d)],
        ),
    ),
    # fixed points 0.2 away from the kinks at ±0.5: random ones near a kink made the central
    # difference straddle it (single precision uses eps = 1e-2) depending on test order
    "clamp": (
        R,
        lambda d: (lambda a: P.clamp(a, -0.5, 0.5), [np.array([-0.9, -0.3, 0.1, 0.3, 0.8], d)]),
    ),
    "convert": (R, lambda d: (lambda a: P.convert(a, np.complex128) * (1 + 2j), [arr((3,), d)])),
    "cast": (("complex128",), lambda d: (lambda a: P.cast(a, np.float64), [arr((3,), d)])),
    "transpose": (RC, lambda d: (lambda a: P.transpose(a, (2, 0, 1)), [arr((2, 3, 2), d)])),
    "reshape": (RC, lambda d: (lambda a: P.reshape(a.T, (6,)), [arr((2, 3), d)])),
    "broadcast_in_dim": (
        RC,
        lambda d: (lambda a: P.broadcast_in_dim(a, (2, 3, 4), (0, 2)), [arr((2, 4), d)]),
    ),
    "reverse": (RC, lambda d: (lambda a: P.reverse(a, (1,)), [arr((2, 3), d)])),
    "slice": (
        RC,
        lambda d: (
            lambda a: P.slice(a.T, tf.SliceConfig(starts=(0, 1), limits=(3, 2), strides=(2, 1))),
            [arr((2, 3), d)],
        ),
    ),
    "dynamic_slice": (
        RC,
        lambda d: (lambda a: P.dynamic_slice(a, [1, 5], [2, 2]), [arr((3, 4), d)]),
    ),
    "dynamic_update_slice": (
        RC,
        lambda d: (
            lambda a, u: P.dynamic_update_slice(a, u, [1, 1]),
            [arr((3, 4), d), arr((2, 2), d)],
        ),
    ),
    "pad": (
        RC,
        lambda d: (
            lambda a: P.pad(
                a,
                tf.PadConfig(
                    edge_padding_low=(1, -1), edge_padding_high=(-1, 2), interior_padding=(1, 1)
                ),
            ),
            [arr((3, 3), d)],
        ),
    ),
    "concatenate": (
        RC,
        lambda d: (lambda a, b: P.concatenate([a.T, b], 0), [arr((2, 3), d), arr((1, 2), d)]),
    ),
    "gather": (
        RC,
        lambda d: (
            lambda a: P.gather(
                a,
                const(a, np.array([[2], [0], [7]])),
                tf.GatherConfig(
                    offset_dims=(1,),
                    collapsed_slice_dims=(0,),
                    start_index_map=(0,),
                    index_vector_dim=1,
                    slice_sizes=(1, 2),
                ),
            ),
            [arr((4, 2), d)],
        ),
    ),
    "scatter": (
        RC,
        lambda d: (
            lambda a, u: P.scatter(
                a,
                const(a, np.array([[1], [1], [9]])),
                u,
                tf.ScatterConfig(
                    update_window_dims=(1,),
                    inserted_window_dims=(0,),
                    scatter_dims_to_operand_dims=(0,),
                    index_vector_dim=1,
                ),
            ),
            [arr((3, 2), d), arr((3, 2), d)],
        ),
    ),
    "extract_diag": (RC, lambda d: (lambda a: P.extract_diag(a, 0, 1), [arr((3, 4), d)])),
    "embed_diag": (RC, lambda d: (lambda a: P.embed_diag(a, 0, 1), [arr((3,), d)])),
    "tril": (RC, lambda d: (lambda a: P.tril(a.T, 0), [arr((3, 3), d)])),
    "triu": (RC, lambda d: (lambda a: P.triu(a, 1), [arr((3, 4), d)])),
    "reduce_sum": (RC, lambda d: (lambda a: P.reduce_sum(a.T, (0,)), [arr((2, 3), d)])),
    "reduce_prod": (
        RC,
        lambda d: (
            lambda a: P.reduce_prod(a, (1,)),
            [np.array([[2.0, 0.0, 3.0], [1.0, 2.0, -1.0]], dtype=d)],
        ),
    ),
    "reduce_max": (R, lambda d: (lambda a: P.reduce_max(a, (1,)), [arr((3, 4), d)])),
    "reduce_min": (R, lambda d: (lambda a: P.reduce_min(a[::-1], None), [arr((5,), d)])),
    "reduce_sum_squares": (
        R,
        lambda d: (lambda a: P.reduce_sum_squares(a, (0,)), [arr((3, 2), d)]),
    ),
    "dot_general": (
        RC,
        lambda d: (
            lambda a, b: P.dot_general(
                a.T, b, tf.DotGeneralConfig(lhs_contracting_dims=(1,), rhs_contracting_dims=(1,))
            ),
            [arr((3, 2), d), arr((4, 3), d)],
        ),
    ),
    "dot_general_with_conj": (
        RC,
        lambda d: (
            lambda a, b: P.dot_general_with_conj(
                a,
                b,
                tf.DotGeneralConfig(
                    lhs_contracting_dims=(1,),
                    rhs_contracting_dims=(1,),
                    lhs_batch_dims=(0,),
                    rhs_batch_dims=(0,),
                ),
                True,
                False,
            ),
            [arr((2, 3, 2), d), arr((2, 3, 4), d)],
        ),
    ),
    "matmul": (RC, lambda d: (lambda a, b: P.matmul(a, b.T), [arr((2, 3), d), arr((4, 3), d)])),
    "scale_real": (RC, lambda d: (lambda a: P.scale_real(a, -1.5), [arr((3,), d)])),
    "scale_complex": (
        ("complex128",),
        lambda d: (lambda a: P.scale_complex(a, 0.5 - 2j), [arr((3,), d)]),
    ),
    # fft: RFFT (odd length, transposed operand) on float64, IRFFT on a reversed complex128 one;
    # tests/test_fft.py covers every type and tf.fft function.
    "fft": (
        RC,
        lambda d: (
            (lambda a: P.fft(a.T, "RFFT", (5, 3), (1, 0)))
            if d == "float64"
            else (lambda a: P.fft(a[::-1], "IRFFT", (6,), (0,))),
            [arr((5, 3), d)] if d == "float64" else [arr((4, 2), d)],
        ),
    ),
    # sorting/scan (issue 22): own generators, so the shared RNG stream of the cases above stays
    "sort": (RC, lambda d: (lambda a: P.sort(a.T, 0, True), [_own((3, 4), d, 1)])),
    "cumsum": (RC, lambda d: (lambda a: P.cumsum(a[::-1], 1), [_own((3, 4), d, 2)])),
    "cumprod": (RC, lambda d: (lambda a: P.cumprod(a.T, 0), [_own((3, 4), d, 3)])),
}


def test_manifest_every_rule_has_a_case() -> None:
    rules = _testing.ad_rules()
    # The linalg family has its own cases (gauge-invariant losses) in tests/test_linalg.py.
    linalg = {row.name for row in tf.prim.CATALOG if row.family == "linalg"}
    differentiable = {op for op, kind in rules.items() if kind == "linearize"} - linalg
    assert differentiable == set(CASES), differentiable ^ set(CASES)
    assert {op for op, kind in rules.items() if kind == "missing"} == set()


PARAMS = [(op, d) for op, (dtypes, _) in sorted(CASES.items()) for d in dtypes]


@pytest.mark.parametrize(("op", "dtype"), PARAMS, ids=[f"{o}-{d}" for o, d in PARAMS])
def test_check_grads_second_order(op: str, dtype: str) -> None:
    f, args = CASES[op][1](dtype)
    check_grads(f, args, order=2, modes=("fwd", "rev"))


LOW = {"float64": "float32", "complex128": "complex64"}
PARAMS32 = [(op, LOW[d]) for op, (dtypes, _) in sorted(CASES.items()) for d in dtypes]


@pytest.mark.parametrize(("op", "dtype"), PARAMS32, ids=[f"{o}-{d}" for o, d in PARAMS32])
def test_check_grads_single_precision(op: str, dtype: str) -> None:
    """float32/complex64: the same cases with single-precision tolerances (first order)."""
    f, args = CASES[op][1]({"float32": "float64", "complex64": "complex128"}[dtype])
    args = [a.astype(dtype) for a in args]
    check_grads(f, args, order=1, eps=1e-2, atol=5e-2, rtol=5e-2)


# Permuted dimension parameters (issue 17, finding 1): every op with dimension parameters, with
# non-identity, non-monotonic ones — broadcast dims out of order (with and without size-1
# expansion), cyclic permutations, reduce axes listed out of order, diagonals with
# axis_a > axis_b, dot_general contracting/batch dims permuted on both sides, and gather/scatter
# dimension numbers whose maps are permuted. Each is checked with ``check_grads`` (JVP against
# central differences, the dot-product identity to second order) and ``jacrev == jacfwd``.
_GATHER_IDX = np.array([[1, 0], [0, 2], [2, 1]]).T.copy()  # index vector along axis 0
_PERM_DG = dict(
    lhs_contracting_dims=(2, 0),
    rhs_contracting_dims=(0, 3),
    lhs_batch_dims=(3, 1),
    rhs_batch_dims=(2, 1),
)

PERMUTED: dict[str, Case] = {
    "broadcast_in_dim": (
        RC,
        lambda d: (lambda a: P.broadcast_in_dim(a, (4, 3, 5, 2), (3, 0, 2)), [arr((2, 4, 5), d)]),
    ),
    "broadcast_in_dim/expand": (
        RC,
        lambda d: (lambda a: P.broadcast_in_dim(a.T, (4, 3, 5, 2), (3, 1, 0)), [arr((1, 3, 2), d)]),
    ),
    "transpose": (RC, lambda d: (lambda a: P.transpose(a, (1, 2, 0)), [arr((2, 3, 4), d)])),
    "reverse": (RC, lambda d: (lambda a: P.reverse(a, (2, 0)), [arr((2, 3, 4), d)])),
    "reduce_sum": (RC, lambda d: (lambda a: P.reduce_sum(a, (2, 0)), [arr((2, 3, 4), d)])),
    "reduce_prod": (
        RC,
        lambda d: (lambda a: P.reduce_prod(a, (2, 0)), [arr((2, 3, 2), d, 0.5, 1.5)]),
    ),
    "reduce_max": (R, lambda d: (lambda a: P.reduce_max(a, (2, 0)), [arr((2, 3, 4), d)])),
    "reduce_min": (R, lambda d: (lambda a: P.reduce_min(a, (2, 0)), [arr((2, 3, 4), d)])),
    "reduce_sum_squares": (
        R,
        lambda d: (lambda a: P.reduce_sum_squares(a, (2, 0)), [arr((2, 3, 4), d)]),
    ),
    "extract_diag": (RC, lambda d: (lambda a: P.extract_diag(a, 2, 0), [arr((3, 2, 4), d)])),
    "embed_diag": (RC, lambda d: (lambda a: P.embed_diag(a, 2, 0), [arr((3, 2), d)])),
    "concatenate": (
        RC,
        lambda d: (
            lambda a, b: P.concatenate([P.transpose(a, (2, 0, 1)), b], 1),
            [arr((2, 3, 4), d), arr((4, 1, 3), d)],
        ),
    ),
    "dot_general": (
        RC,
        lambda d: (
            lambda a, b: P.dot_general(a, b, tf.DotGeneralConfig(**_PERM_DG)),
            [arr((2, 5, 3, 4), d), arr((3, 5, 4, 2, 6), d)],
        ),
    ),
    "dot_general_with_conj": (
        RC,
        lambda d: (
            lambda a, b: P.dot_general_with_conj(
                a, b, tf.DotGeneralConfig(**_PERM_DG), True, False
            ),
            [arr((2, 5, 3, 4), d), arr((3, 5, 4, 2, 6), d)],
        ),
    ),
    "gather": (
        RC,
        lambda d: (
            lambda a: P.gather(
                a,
                const(a, _GATHER_IDX),
                tf.GatherConfig(
                    offset_dims=(0, 2),
                    collapsed_slice_dims=(1,),
                    start_index_map=(2, 1),
                    index_vector_dim=0,
                    slice_sizes=(2, 1, 2),
                ),
            ),
            [arr((2, 4, 3), d)],
        ),
    ),
    "scatter": (
        RC,
        lambda d: (
            lambda a, u: P.scatter(
                a,
                const(a, _GATHER_IDX),
                u,
                tf.ScatterConfig(
                    update_window_dims=(0, 2),
                    inserted_window_dims=(1,),
                    scatter_dims_to_operand_dims=(2, 1),
                    index_vector_dim=0,
                ),
            ),
            [arr((2, 4, 3), d), arr((2, 3, 2), d)],
        ),
    ),
}

# Ops whose parameters name dimensions: each needs a permuted case above.
DIMENSION_PARAMETER_OPS = {
    "broadcast_in_dim",
    "transpose",
    "reverse",
    "reduce_sum",
    "reduce_prod",
    "reduce_max",
    "reduce_min",
    "reduce_sum_squares",
    "extract_diag",
    "embed_diag",
    "concatenate",
    "dot_general",
    "dot_general_with_conj",
    "gather",
    "scatter",
}


def test_every_op_with_dimension_parameters_has_a_permuted_case() -> None:
    assert {k.split("/")[0] for k in PERMUTED} == DIMENSION_PARAMETER_OPS


PERM_PARAMS = [(op, d) for op, (dtypes, _) in sorted(PERMUTED.items()) for d in dtypes]


@pytest.mark.parametrize(("op", "dtype"), PERM_PARAMS, ids=[f"{o}-{d}" for o, d in PERM_PARAMS])
def test_permuted_dimension_parameters(op: str, dtype: str) -> None:
    f, args = PERMUTED[op][1](dtype)
    check_grads(f, args, order=2, modes=("fwd", "rev"))
    if op == "dot_general_with_conj" and dtype == "complex128":
        return  # not holomorphic: no complex Jacobian; the dot-product identity above covers it
    holo = dtype == "complex128"
    argnums = tuple(range(len(args)))
    xs = [tf.tensor(a) for a in args]
    rev = tf.func.jacrev(f, argnums=argnums, holomorphic=holo)(*xs)
    fwd = tf.func.jacfwd(f, argnums=argnums, holomorphic=holo)(*xs)
    for r, fw in zip(rev, fwd):
        np.testing.assert_allclose(np.asarray(r), np.asarray(fw), rtol=1e-12, atol=1e-12)


def test_broadcast_in_dim_vjp_with_transposing_dims() -> None:
    """Finding 1: the VJP of a broadcast whose dims are not increasing transposes back."""
    x = tf.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    w = np.arange(6.0).reshape(3, 2)
    (tf.prim.broadcast_in_dim(x, (3, 2), (1, 0)) * w).sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), w.T)


def test_tanh_and_expm1_gradients_keep_relative_accuracy_in_their_tails() -> None:
    """``tanh' = sech² x`` and ``expm1' = exp x`` computed from ``x``: the forms from the output
    (``1 - y²``, ``y + 1``) cancel to a few digits or to 0 in the tails (x = 18 for tanh,
    x < -1 for expm1), against the long-double reference."""
    x = np.array([-40.0, -19.5, -18.0, -3.0, 0.0, 0.5, 7.0, 15.0, 18.0, 19.5, 40.0])
    g = np.asarray(tf.func.grad(lambda a: tf.tanh(a).sum())(tf.asarray(x)))
    want = (1 / np.cosh(x.astype(np.longdouble)) ** 2).astype(np.float64)
    np.testing.assert_allclose(g, want, rtol=1e-14, atol=0)
    x = np.array([-100.0, -40.0, -30.0, -20.0, -1.0, -1e-10, 0.0, 1e-10, 2.0, 30.0])
    g = np.asarray(tf.func.grad(lambda a: tf.expm1(a).sum())(tf.asarray(x)))
    np.testing.assert_allclose(g, np.exp(x), rtol=1e-15, atol=0)
    x32 = np.array([-17.0, -5.0, 0.25, 4.15, 7.0], np.float32)
    g32 = np.asarray(tf.func.grad(lambda a: tf.tanh(a).sum())(tf.asarray(x32)))
    np.testing.assert_allclose(g32, 1 / np.cosh(x32.astype(np.float64)) ** 2, rtol=2e-6)
    g32 = np.asarray(tf.func.grad(lambda a: tf.expm1(a).sum())(tf.asarray(x32)))
    np.testing.assert_allclose(g32, np.exp(x32.astype(np.float64)), rtol=2e-6)

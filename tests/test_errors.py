"""Validation paths: each raises a typed exception whose message names the op and the offending
value (testing.md, "Errors and robustness"), and random calls with random, often invalid,
arguments end in a clean exception or in the reference's result."""

from __future__ import annotations

import re
from typing import Any
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tenferro as tf
from reference import REFERENCE
from tenferro.testing import assert_close

E = tf.errors
TENSOR_TYPE = type(tf.zeros(()))
SUPPORTED = ("float32", "float64", "complex64", "complex128", "int32", "int64", "bool")


class OneOf:
    """Any of several accepted spellings of an offending value in a message."""

    def __init__(self, *options: Any) -> None:
        self.options = options


def _patterns(value: Any) -> list[str]:
    if isinstance(value, OneOf):
        return [p for option in value.options for p in _patterns(option)]
    if isinstance(value, str):
        return [re.escape(value)]
    if isinstance(value, int):
        return [rf"(?<![\w.]){value}(?![\w.])"]
    if isinstance(value, (tuple, list)):
        items = r"\s*,\s*".join(str(v) for v in value)
        return [rf"[\[(]\s*{items}\s*,?\s*[\])]"]
    raise TypeError(value)  # pragma: no cover


def check_message(exc: BaseException, op: str | OneOf, *values: Any) -> None:
    message = str(exc)
    ops = op.options if isinstance(op, OneOf) else (op,)
    assert any(o in message for o in ops), f"message does not name the op {ops}: {message!r}"
    for value in values:
        assert any(re.search(p, message) for p in _patterns(value)), (
            f"message does not name the offending value {value if not isinstance(value, OneOf) else value.options}: "
            f"{message!r}"
        )


def raises(exc_type, fn: Callable[[], Any], op: str | OneOf, *values: Any) -> BaseException:
    with pytest.raises(exc_type) as info:
        fn()
    check_message(info.value, op, *values)
    return info.value


def T(values, dtype=None):
    return tf.tensor(np.asarray(values, dtype=dtype))


X2 = np.arange(6.0).reshape(2, 3)
C = np.array([1 + 1j, 2 - 1j])

# (id, exception class, callable, op name, offending values...)
CASES: list[tuple] = [
    # axes
    ("reduce_sum-axis-2", E.AxisError, lambda: tf.prim.reduce_sum(T(X2), axes=2), "reduce_sum", 2),
    (
        "reduce_sum-axis--3",
        E.AxisError,
        lambda: tf.prim.reduce_sum(T(X2), axes=-3),
        "reduce_sum",
        -3,
    ),
    (
        "reduce_max-axis-5",
        E.AxisError,
        lambda: tf.prim.reduce_max(T(X2), axes=(0, 5)),
        "reduce_max",
        5,
    ),
    (
        "reduce_prod-rank0-axis",
        E.AxisError,
        lambda: tf.prim.reduce_prod(T(1.0), axes=0),
        "reduce_prod",
        0,
    ),
    (
        "reduce_sum-repeated",
        E.AxisError,
        lambda: tf.prim.reduce_sum(T(X2), axes=(1, 1)),
        "reduce_sum",
        1,
    ),
    ("reverse-axis-2", E.AxisError, lambda: tf.prim.reverse(T(X2), (2,)), "reverse", 2),
    ("reverse-repeated", E.AxisError, lambda: tf.prim.reverse(T(X2), (0, 0)), "reverse", 0),
    # permutations
    ("transpose-dup", E.ShapeError, lambda: tf.prim.transpose(T(X2), (0, 0)), "transpose", (0, 0)),
    ("transpose-short", E.ShapeError, lambda: tf.prim.transpose(T(X2), (0,)), "transpose", (0,)),
    (
        "transpose-range",
        E.ShapeError,
        lambda: tf.prim.transpose(T(X2), (0, 2)),
        "transpose",
        (0, 2),
    ),
    (
        "transpose-long",
        E.ShapeError,
        lambda: tf.prim.transpose(T(X2), (0, 1, 2)),
        "transpose",
        (0, 1, 2),
    ),
    # reshape
    ("reshape-size", E.ShapeError, lambda: tf.prim.reshape(T(X2), (4, 2)), "reshape", (4, 2)),
    ("reshape-size-1d", E.ShapeError, lambda: tf.prim.reshape(T(X2), (7,)), "reshape", (7,)),
    # broadcasting
    (
        "add-broadcast",
        E.ShapeError,
        lambda: tf.prim.add(T([1.0, 2, 3]), T([1.0, 2, 3, 4])),
        "add",
        (3,),
        (4,),
    ),
    (
        "mul-broadcast",
        E.ShapeError,
        lambda: tf.prim.mul(T(X2), T(np.ones((3, 2)))),
        "mul",
        (2, 3),
        (3, 2),
    ),
    (
        "compare-broadcast",
        E.ShapeError,
        lambda: tf.prim.compare(T([1.0, 2]), T([1.0, 2, 3]), "EQ"),
        "compare",
        (2,),
        (3,),
    ),
    (
        "select-broadcast",
        E.ShapeError,
        lambda: tf.prim.select(T([True, False]), T([1.0, 2, 3]), T([1.0, 2, 3])),
        "select",
        (2,),
    ),
    (
        "clamp-broadcast",
        E.ShapeError,
        lambda: tf.prim.clamp(T([1.0, 2, 3]), T([0.0, 0]), T(5.0)),
        "clamp",
        (2,),
    ),
    (
        "broadcast_to",
        E.ShapeError,
        lambda: tf.broadcast_to(T([1.0, 2, 3]), (4,)),
        OneOf("broadcast_to", "broadcast_in_dim"),
        (4,),
    ),
    # broadcast_in_dim
    (
        "bid-size",
        E.ShapeError,
        lambda: tf.prim.broadcast_in_dim(T([1.0, 2, 3]), (3, 2), (1,)),
        "broadcast_in_dim",
        OneOf((3, 2), (1,), (3,)),
    ),
    (
        "bid-count",
        E.ShapeError,
        lambda: tf.prim.broadcast_in_dim(T(X2), (2, 3), (0,)),
        "broadcast_in_dim",
        OneOf((0,), (2, 3)),
    ),
    (
        "bid-range",
        E.ShapeError,
        lambda: tf.prim.broadcast_in_dim(T([1.0, 2, 3]), (3,), (1,)),
        "broadcast_in_dim",
        OneOf((1,), 1),
    ),
    (
        "bid-duplicate",
        E.ShapeError,
        lambda: tf.prim.broadcast_in_dim(T(np.ones((3, 3))), (3, 3), (0, 0)),
        "broadcast_in_dim",
        (0, 0),
    ),
    # dtypes
    ("maximum-complex", E.DTypeError, lambda: tf.prim.maximum(T(C), T(C)), "maximum", "complex128"),
    (
        "minimum-complex64",
        E.DTypeError,
        lambda: tf.prim.minimum(T(C, np.complex64), T(C, np.complex64)),
        "minimum",
        "complex64",
    ),
    (
        "compare-lt-complex",
        E.DTypeError,
        lambda: tf.prim.compare(T(C), T(C), "LT"),
        "compare",
        "complex128",
    ),
    (
        "compare-ge-complex",
        E.DTypeError,
        lambda: tf.prim.compare(T(C), T(C), tf.CompareDir.GE),
        "compare",
        "complex128",
    ),
    ("clamp-complex", E.DTypeError, lambda: tf.prim.clamp(T(C), T(C), T(C)), "clamp", "complex128"),
    (
        "reduce_max-complex",
        E.DTypeError,
        lambda: tf.prim.reduce_max(T(C)),
        "reduce_max",
        "complex128",
    ),
    (
        "reduce_min-complex",
        E.DTypeError,
        lambda: tf.prim.reduce_min(T(C)),
        "reduce_min",
        "complex128",
    ),
    (
        "reduce_sum_squares-complex",
        E.DTypeError,
        lambda: tf.prim.reduce_sum_squares(T(C)),
        "reduce_sum_squares",
        "complex128",
    ),
    ("neg-bool", E.DTypeError, lambda: tf.prim.neg(T([True, False])), "neg", "bool"),
    ("erf-complex", E.DTypeError, lambda: tf.prim.erf(T(C)), "erf", "complex128"),
    (
        "convert-down",
        E.DTypeError,
        lambda: tf.prim.convert(T([1.0]), tf.float32),
        "convert",
        "float64",
        "float32",
    ),
    (
        "convert-c-to-f",
        E.DTypeError,
        lambda: tf.prim.convert(T(C), tf.float64),
        "convert",
        "complex128",
        "float64",
    ),
    (
        "convert-f-to-i",
        E.DTypeError,
        lambda: tf.prim.convert(T([1.0]), tf.int64),
        "convert",
        "float64",
        "int64",
    ),
    (
        "convert-i64-to-i32",
        E.DTypeError,
        lambda: tf.prim.convert(T([1], np.int64), tf.int32),
        "convert",
        "int64",
        "int32",
    ),
    (
        "convert-float16",
        E.DTypeError,
        lambda: tf.prim.convert(T([1.0]), np.float16),
        "convert",
        "float16",
    ),
    ("cast-uint8", E.DTypeError, lambda: tf.prim.cast(T([1.0]), np.uint8), "cast", "uint8"),
    (
        "select-pred-dtype",
        E.DTypeError,
        lambda: tf.prim.select(T([1.0, 0.0]), T([1.0, 2]), T([3.0, 4])),
        "select",
        "float64",
    ),
    # values
    (
        "compare-direction",
        ValueError,
        lambda: tf.prim.compare(T([1.0]), T([1.0]), "XX"),
        "compare",
        "XX",
    ),
    ("div-zero", ZeroDivisionError, lambda: tf.prim.div(T([1, 2]), T([1, 0])), "div"),
    (
        "rem-zero",
        ZeroDivisionError,
        lambda: tf.prim.rem(T([1, 2], np.int32), T([0, 1], np.int32)),
        "rem",
    ),
    ("pow-negative", ValueError, lambda: tf.prim.pow(T([2, 3]), T([1, -1])), "pow", -1),
    # NumPy input dtypes
    (
        "asarray-float16",
        E.DTypeError,
        lambda: tf.asarray(np.zeros(3, np.float16)),
        "asarray",
        "float16",
        *SUPPORTED,
    ),
    (
        "asarray-uint8",
        E.DTypeError,
        lambda: tf.asarray(np.zeros(3, np.uint8)),
        "asarray",
        "uint8",
        *SUPPORTED,
    ),
    (
        "asarray-object",
        E.DTypeError,
        lambda: tf.asarray(np.array([1.0, None], dtype=object)),
        "asarray",
        "object",
        *SUPPORTED,
    ),
    (
        "tensor-uint16",
        E.DTypeError,
        lambda: tf.tensor(np.zeros(3, np.uint16)),
        "tensor",
        "uint16",
        *SUPPORTED,
    ),
]


@pytest.mark.parametrize(
    "exc_type,fn,op,values", [pytest.param(c[1], c[2], c[3], c[4:], id=c[0]) for c in CASES]
)
def test_validation_error(exc_type, fn, op, values) -> None:
    raises(exc_type, fn, op, *values)


def test_error_classes_are_the_documented_builtins() -> None:
    assert issubclass(E.AxisError, IndexError) and issubclass(E.AxisError, E.ShapeError)
    assert issubclass(E.ShapeError, ValueError)
    assert issubclass(E.DTypeError, TypeError)
    assert issubclass(E.ContextMismatchError, ValueError)


def test_unsupported_numpy_dtype_is_fine_with_explicit_dtype() -> None:
    t = tf.asarray(np.array([1.5, 2.5], np.float16), dtype=tf.float32)
    assert t.dtype == tf.float32
    assert_close(t, np.array([1.5, 2.5], np.float32))
    u = tf.asarray(np.arange(3, dtype=np.uint8), dtype=tf.int64)
    assert u.dtype == tf.int64
    assert np.asarray(u).tolist() == [0, 1, 2]


def test_mixing_runtimes_is_context_mismatch() -> None:
    rt1, rt2 = tf.Runtime(), tf.Runtime()
    a = rt1.constant(np.array([1.0, 2.0]))
    b = rt2.constant(np.array([3.0, 4.0]))
    assert a.runtime is rt1 and b.runtime is rt2
    raises(E.ContextMismatchError, lambda: tf.prim.add(a, b), "add")
    raises(
        E.ContextMismatchError,
        lambda: tf.prim.select(rt1.constant(np.array([True, False])), a, b),
        "select",
    )
    with pytest.raises(E.ContextMismatchError):
        a * b
    # The same runtime is fine; NumPy arrays and scalars are adopted as constants of the op's runtime.
    assert_close(tf.prim.add(a, rt1.constant(np.array([1.0, 1.0]))), np.array([2.0, 3.0]))
    c = tf.prim.add(b, np.array([1.0, 1.0]))
    assert c.runtime is rt2
    assert_close(c, np.array([4.0, 5.0]))


def test_huge_allocation_fails_cleanly() -> None:
    with pytest.raises((MemoryError, ValueError)):
        tf.zeros((2**62,))
    with pytest.raises((MemoryError, ValueError, OverflowError)):
        tf.ones((2**40, 2**40))
    # The process is intact.
    assert_close(tf.zeros((3,)), np.zeros(3))


def test_setitem_points_to_at() -> None:
    t = T([1.0, 2.0, 3.0])
    with pytest.raises(TypeError) as info:
        t[0] = 1
    assert ".at[" in str(info.value)
    assert np.asarray(t).tolist() == [1.0, 2.0, 3.0]


# ----------------------------------------------------------------------------------------------
# Configs of the structural primitives: validated on construction, typed errors naming the
# config (and its primitive) and the offending values
# ----------------------------------------------------------------------------------------------

CONFIG_CASES: list[tuple] = [
    # SliceConfig
    (
        "slice-lengths",
        E.ShapeError,
        lambda: tf.SliceConfig(starts=[0, 1], limits=[2]),
        OneOf("SliceConfig"),
        (0, 1),
        (2,),
    ),
    (
        "slice-strides-length",
        E.ShapeError,
        lambda: tf.SliceConfig(starts=[0], limits=[2], strides=[1, 1]),
        "SliceConfig",
        (1, 1),
    ),
    (
        "slice-start-above-limit",
        E.ShapeError,
        lambda: tf.SliceConfig(starts=[0, 3], limits=[2, 2]),
        "SliceConfig",
        3,
        2,
    ),
    (
        "slice-negative-start",
        E.ShapeError,
        lambda: tf.SliceConfig(starts=[-1], limits=[2]),
        "SliceConfig",
        -1,
    ),
    (
        "slice-stride-0",
        E.ShapeError,
        lambda: tf.SliceConfig(starts=[0], limits=[2], strides=[0]),
        "SliceConfig",
        0,
    ),
    (
        "slice-stride-negative",
        E.ShapeError,
        lambda: tf.SliceConfig(starts=[0], limits=[2], strides=[-2]),
        "SliceConfig",
        -2,
    ),
    # PadConfig
    (
        "pad-lengths",
        E.ShapeError,
        lambda: tf.PadConfig(edge_padding_low=[0], edge_padding_high=[0, 1], interior_padding=[0]),
        "PadConfig",
        (0, 1),
    ),
    (
        "pad-negative-interior",
        E.ShapeError,
        lambda: tf.PadConfig(edge_padding_low=[0], edge_padding_high=[0], interior_padding=[-1]),
        "PadConfig",
        -1,
    ),
    # GatherConfig
    (
        "gather-offset-duplicate",
        E.AxisError,
        lambda: tf.GatherConfig(
            offset_dims=[1, 1],
            collapsed_slice_dims=[],
            start_index_map=[0],
            index_vector_dim=1,
            slice_sizes=[1, 2],
        ),
        "GatherConfig",
        (1, 1),
    ),
    (
        "gather-offset-unsorted",
        E.AxisError,
        lambda: tf.GatherConfig(
            offset_dims=[2, 1],
            collapsed_slice_dims=[],
            start_index_map=[0],
            index_vector_dim=1,
            slice_sizes=[1, 2],
        ),
        "GatherConfig",
        (2, 1),
    ),
    # Negative dimension numbers count from the end (ops.md); out of range they are AxisErrors.
    (
        "gather-negative-dim",
        E.AxisError,
        lambda: tf.GatherConfig(
            offset_dims=[1],
            collapsed_slice_dims=[-3],
            start_index_map=[0],
            index_vector_dim=1,
            slice_sizes=[1, 2],
        ),
        "GatherConfig",
        -3,
    ),
    (
        "gather-map-duplicate",
        E.AxisError,
        lambda: tf.GatherConfig(
            offset_dims=[],
            collapsed_slice_dims=[0, 1],
            start_index_map=[0, 0],
            index_vector_dim=1,
            slice_sizes=[1, 1],
        ),
        "GatherConfig",
        (0, 0),
    ),
    (
        "gather-counts",
        E.ShapeError,
        lambda: tf.GatherConfig(
            offset_dims=[1, 2],
            collapsed_slice_dims=[0],
            start_index_map=[0],
            index_vector_dim=1,
            slice_sizes=[1, 2],
        ),
        "GatherConfig",
        (1, 2),
        (0,),
    ),
    (
        "gather-collapsed-size",
        E.ShapeError,
        lambda: tf.GatherConfig(
            offset_dims=[1],
            collapsed_slice_dims=[0],
            start_index_map=[0],
            index_vector_dim=1,
            slice_sizes=[2, 2],
        ),
        "GatherConfig",
        0,
        2,
    ),
    (
        "gather-map-range",
        E.AxisError,
        lambda: tf.GatherConfig(
            offset_dims=[1],
            collapsed_slice_dims=[0],
            start_index_map=[2],
            index_vector_dim=1,
            slice_sizes=[1, 2],
        ),
        "GatherConfig",
        2,
    ),
    (
        "gather-negative-size",
        E.ShapeError,
        lambda: tf.GatherConfig(
            offset_dims=[0, 1],
            collapsed_slice_dims=[],
            start_index_map=[0],
            index_vector_dim=1,
            slice_sizes=[1, -2],
        ),
        "GatherConfig",
        -2,
    ),
    # ScatterConfig
    (
        "scatter-window-duplicate",
        E.AxisError,
        lambda: tf.ScatterConfig(
            update_window_dims=[1, 1],
            inserted_window_dims=[0],
            scatter_dims_to_operand_dims=[0],
            index_vector_dim=1,
        ),
        "ScatterConfig",
        (1, 1),
    ),
    (
        "scatter-window-unsorted",
        E.AxisError,
        lambda: tf.ScatterConfig(
            update_window_dims=[2, 1],
            inserted_window_dims=[0],
            scatter_dims_to_operand_dims=[0],
            index_vector_dim=1,
        ),
        "ScatterConfig",
        (2, 1),
    ),
    (
        "scatter-map-duplicate",
        E.AxisError,
        lambda: tf.ScatterConfig(
            update_window_dims=[],
            inserted_window_dims=[0, 1],
            scatter_dims_to_operand_dims=[1, 1],
            index_vector_dim=1,
        ),
        "ScatterConfig",
        (1, 1),
    ),
    # DotGeneralConfig
    (
        "dot-contract-count",
        E.ShapeError,
        lambda: tf.DotGeneralConfig(lhs_contracting_dims=[1, 2], rhs_contracting_dims=[0]),
        OneOf("DotGeneralConfig"),
        (1, 2),
        (0,),
    ),
    (
        "dot-batch-count",
        E.ShapeError,
        lambda: tf.DotGeneralConfig(
            lhs_contracting_dims=[1],
            rhs_contracting_dims=[0],
            lhs_batch_dims=[0],
            rhs_batch_dims=[],
        ),
        "DotGeneralConfig",
        (0,),
    ),
    (
        "dot-duplicate",
        E.AxisError,
        lambda: tf.DotGeneralConfig(lhs_contracting_dims=[1, 1], rhs_contracting_dims=[0, 1]),
        "DotGeneralConfig",
        (1, 1),
    ),
    (
        "dot-role-overlap-lhs",
        E.AxisError,
        lambda: tf.DotGeneralConfig(
            lhs_contracting_dims=[0],
            rhs_contracting_dims=[1],
            lhs_batch_dims=[0],
            rhs_batch_dims=[0],
        ),
        "DotGeneralConfig",
        0,
    ),
    (
        "dot-role-overlap-rhs",
        E.AxisError,
        lambda: tf.DotGeneralConfig(
            lhs_contracting_dims=[1],
            rhs_contracting_dims=[2],
            lhs_batch_dims=[0],
            rhs_batch_dims=[2],
        ),
        "DotGeneralConfig",
        2,
    ),
]


@pytest.mark.parametrize(
    "exc_type,fn,op,values", [pytest.param(c[1], c[2], c[3], c[4:], id=c[0]) for c in CONFIG_CASES]
)
def test_config_validation_error(exc_type, fn, op, values) -> None:
    exc = raises(exc_type, fn, op, *values)
    # The message names the primitive the config belongs to as well.
    assert any(
        p in str(exc) for p in ("(slice)", "(pad)", "(gather)", "(scatter)", "(dot_general)")
    ), str(exc)


def test_configs_are_frozen_keyword_only_values() -> None:
    cfg = tf.SliceConfig(starts=[0, 1], limits=np.array([2, 3]))
    assert cfg.starts == (0, 1) and cfg.limits == (2, 3) and cfg.strides == (1, 1)
    assert all(type(v) is int for v in cfg.limits)
    assert cfg == tf.SliceConfig(starts=(0, 1), limits=(2, 3), strides=(1, 1))
    assert hash(cfg) == hash(tf.SliceConfig(starts=(0, 1), limits=(2, 3), strides=(1, 1)))
    assert cfg != tf.SliceConfig(starts=(0, 1), limits=(2, 3), strides=(1, 2))
    with pytest.raises(AttributeError):
        cfg.starts = (1, 1)  # type: ignore[misc]
    with pytest.raises(TypeError):
        tf.SliceConfig((0,), (1,))  # type: ignore[misc]  # keyword-only
    with pytest.raises(TypeError, match="SliceConfig"):
        tf.SliceConfig(starts=[0.5], limits=[1])
    with pytest.raises(TypeError, match="DotGeneralConfig"):
        tf.DotGeneralConfig(lhs_contracting_dims=1, rhs_contracting_dims=[0])
    with pytest.raises(TypeError, match="GatherConfig"):
        tf.GatherConfig(
            offset_dims=[],
            collapsed_slice_dims=[0],
            start_index_map=[0],
            index_vector_dim=1.0,
            slice_sizes=[1],
        )
    d = tf.DotGeneralConfig(lhs_contracting_dims=[1], rhs_contracting_dims=[0])
    assert d.lhs_batch_dims == () and d.rhs_batch_dims == ()
    assert {d: 1}[tf.DotGeneralConfig(lhs_contracting_dims=(1,), rhs_contracting_dims=(0,))] == 1


# Shape-dependent validation, by the primitives (before any allocation).
X3 = np.zeros((2, 3, 4))
G = tf.GatherConfig(
    offset_dims=[1],
    collapsed_slice_dims=[0],
    start_index_map=[0],
    index_vector_dim=1,
    slice_sizes=[1, 3],
)
S = tf.ScatterConfig(
    update_window_dims=[1],
    inserted_window_dims=[0],
    scatter_dims_to_operand_dims=[0],
    index_vector_dim=1,
)
DOT = tf.DotGeneralConfig(lhs_contracting_dims=[1], rhs_contracting_dims=[0])
PRIM_SHAPE_CASES: list[tuple] = [
    (
        "slice-rank",
        E.ShapeError,
        lambda: tf.prim.slice(T(X2), tf.SliceConfig(starts=[0], limits=[1])),
        "slice",
        OneOf(1, 2),
    ),
    (
        "slice-limit",
        E.ShapeError,
        lambda: tf.prim.slice(T(X2), tf.SliceConfig(starts=[0, 0], limits=[2, 5])),
        "slice",
        5,
    ),
    (
        "pad-rank",
        E.ShapeError,
        lambda: tf.prim.pad(
            T(X2), tf.PadConfig(edge_padding_low=[1], edge_padding_high=[1], interior_padding=[0])
        ),
        "pad",
        OneOf(1, 2),
    ),
    (
        "pad-negative-size",
        E.ShapeError,
        lambda: tf.prim.pad(
            T(X2),
            tf.PadConfig(
                edge_padding_low=[0, -2], edge_padding_high=[0, -2], interior_padding=[0, 0]
            ),
        ),
        "pad",
        -2,
    ),
    (
        "dynamic_slice-size",
        E.ShapeError,
        lambda: tf.prim.dynamic_slice(T(X2), T([0, 0]), (2, 4)),
        "dynamic_slice",
        4,
    ),
    (
        "dynamic_slice-starts",
        E.ShapeError,
        lambda: tf.prim.dynamic_slice(T(X2), T([0]), (1, 1)),
        "dynamic_slice",
        OneOf(1, 2),
    ),
    (
        "dynamic_slice-float-starts",
        E.DTypeError,
        lambda: tf.prim.dynamic_slice(T(X2), T([0.0, 0.0]), (1, 1)),
        "dynamic_slice",
        "float64",
    ),
    (
        "dynamic_update_slice-big",
        E.ShapeError,
        lambda: tf.prim.dynamic_update_slice(T(X2), T(np.zeros((3, 1))), T([0, 0])),
        "dynamic_update_slice",
        (3, 1),
    ),
    (
        "concatenate-shapes",
        E.ShapeError,
        lambda: tf.prim.concatenate([T(X2), T(np.zeros((2, 2)))], 0),
        "concatenate",
        OneOf((2, 2), (2, 3)),
    ),
    (
        "concatenate-axis",
        E.AxisError,
        lambda: tf.prim.concatenate([T(X2), T(X2)], 2),
        "concatenate",
        2,
    ),
    (
        "gather-float-indices",
        E.DTypeError,
        lambda: tf.prim.gather(T(X2), T([[0.0]]), G),
        "gather",
        "float64",
    ),
    (
        "gather-slice-sizes",
        E.ShapeError,
        lambda: tf.prim.gather(T(np.zeros((2, 2))), T([[0]]), G),
        "gather",
        OneOf((1, 3), 3),
    ),
    (
        "gather-vector-length",
        E.ShapeError,
        lambda: tf.prim.gather(T(X2), T([[0, 1]]), G),
        "gather",
        OneOf(2, (0,)),
    ),
    (
        "gather-rank",
        E.ShapeError,
        lambda: tf.prim.gather(T(X3), T([[0]]), G),
        "gather",
        OneOf(3, 2, (1, 3)),
    ),
    (
        "scatter-updates",
        E.ShapeError,
        lambda: tf.prim.scatter(T(X2), T([[0], [1]]), T(np.zeros((3, 3))), S),
        "scatter",
        OneOf((3, 3), (3,), (2,)),
    ),
    (
        "scatter-window",
        E.ShapeError,
        lambda: tf.prim.scatter(T(X2), T([[0]]), T(np.zeros((1, 4))), S),
        "scatter",
        4,
    ),
    (
        "extract_diag-same-axis",
        E.AxisError,
        lambda: tf.prim.extract_diag(T(X2), 1, 1),
        "extract_diag",
        OneOf((1, 1), 1),
    ),
    (
        "extract_diag-range",
        E.AxisError,
        lambda: tf.prim.extract_diag(T(X2), 0, 2),
        "extract_diag",
        OneOf((0, 2), 2),
    ),
    (
        "embed_diag-range",
        E.AxisError,
        lambda: tf.prim.embed_diag(T(X2), 0, 3),
        "embed_diag",
        OneOf((0, 3), 3),
    ),
    ("tril-rank", E.ShapeError, lambda: tf.prim.tril(T([1.0, 2.0])), "tril", (2,)),
    (
        "dot_general-size",
        E.ShapeError,
        lambda: tf.prim.dot_general(T(X2), T(np.zeros((2, 3))), DOT),
        "dot_general",
        3,
        2,
    ),
    (
        "dot_general-range",
        E.AxisError,
        lambda: tf.prim.dot_general(
            T(X2), T(X2), tf.DotGeneralConfig(lhs_contracting_dims=[2], rhs_contracting_dims=[0])
        ),
        "dot_general",
        2,
    ),
    (
        "dot_general-bool",
        E.DTypeError,
        lambda: tf.prim.dot_general(
            T([True]),
            T([True]),
            tf.DotGeneralConfig(lhs_contracting_dims=[0], rhs_contracting_dims=[0]),
        ),
        "dot_general",
        "bool",
    ),
    (
        "dot_general_with_conj-size",
        E.ShapeError,
        lambda: tf.prim.dot_general_with_conj(T(X2), T(np.zeros((2, 3))), DOT, True, False),
        "dot_general_with_conj",
        3,
        2,
    ),
    ("matmul-rank", E.ShapeError, lambda: tf.prim.matmul(T(X3), T(X2)), "matmul", (2, 3, 4)),
    ("matmul-inner", E.ShapeError, lambda: tf.prim.matmul(T(X2), T(X2)), "matmul", (2, 3)),
    (
        "scale_complex-real",
        E.DTypeError,
        lambda: tf.prim.scale_complex(T(X2), 1j),
        "scale_complex",
        "float64",
    ),
    # One rule for negative axis parameters (ops.md): they count from the end of the rank they
    # index; out of range they are AxisErrors quoting the value as given (never 2**64 - k).
    (
        "gather-index-vector-dim",
        E.AxisError,
        lambda: tf.prim.gather(
            T(X2),
            T(np.array([[0]])),
            tf.GatherConfig(
                offset_dims=[1],
                collapsed_slice_dims=[0],
                start_index_map=[0],
                index_vector_dim=-3,
                slice_sizes=[1, 2],
            ),
        ),
        "gather",
        -3,
    ),
    (
        "scatter-inserted-negative",
        E.AxisError,
        lambda: tf.prim.scatter(
            T(X2),
            T(np.array([[0]])),
            T(np.ones((1, 3))),
            tf.ScatterConfig(
                update_window_dims=[1],
                inserted_window_dims=[-3],
                scatter_dims_to_operand_dims=[0],
                index_vector_dim=1,
            ),
        ),
        "scatter",
        -3,
    ),
    (
        "scatter-index-vector-dim",
        E.AxisError,
        lambda: tf.prim.scatter(
            T(X2),
            T(np.array([[0]])),
            T(np.ones((1, 3))),
            tf.ScatterConfig(
                update_window_dims=[1],
                inserted_window_dims=[0],
                scatter_dims_to_operand_dims=[0],
                index_vector_dim=-3,
            ),
        ),
        "scatter",
        -3,
    ),
    (
        "dot-negative",
        E.AxisError,
        lambda: tf.prim.dot_general(
            T(X2), T(X2), tf.DotGeneralConfig(lhs_contracting_dims=[-3], rhs_contracting_dims=[0])
        ),
        "dot_general",
        -3,
    ),
    (
        "transpose-negative",
        E.AxisError,
        lambda: tf.prim.transpose(T(X2), (-1, -3)),
        "transpose",
        -3,
    ),
    (
        "broadcast_in_dim-negative",
        E.AxisError,
        lambda: tf.prim.broadcast_in_dim(T([1.0, 2.0]), (3, 2), (-5,)),
        "broadcast_in_dim",
        -5,
    ),
    (
        "reduce_sum-negative",
        E.AxisError,
        lambda: tf.prim.reduce_sum(T(X2), (-3,)),
        "reduce_sum",
        -3,
    ),
    ("reverse-negative", E.AxisError, lambda: tf.prim.reverse(T(X2), (-3,)), "reverse", -3),
]


@pytest.mark.parametrize(
    "exc_type,fn,op,values",
    [pytest.param(c[1], c[2], c[3], c[4:], id=c[0]) for c in PRIM_SHAPE_CASES],
)
def test_primitive_shape_validation_error(exc_type, fn, op, values) -> None:
    raises(exc_type, fn, op, *values)


# ----------------------------------------------------------------------------------------------
# Robustness: random ops with random, often invalid, arguments
# ----------------------------------------------------------------------------------------------

ALLOWED = (
    E.TenferroError,
    TypeError,
    ValueError,
    IndexError,
    ZeroDivisionError,
    OverflowError,
    MemoryError,
)
IMPLEMENTED = tuple(row for row in tf.prim.CATALOG if row.implemented)
ALL_DTYPES = tuple(
    np.dtype(d) for d in ("bool", "int32", "int64", "float32", "float64", "complex64", "complex128")
)


class Junk:
    """An arbitrary Python object."""

    def __repr__(self) -> str:
        return "Junk()"


JUNK = st.sampled_from(
    [None, "abc", Junk(), [[1], [2, 3]], 1.5, (), {}, b"x", np.zeros(2, np.float16)]
)
SCALARS = st.sampled_from([0, 1, -2, 3, 2.5, -0.5, True, False, 1 + 2j, 2**40, -(2**63), 1e300])


@st.composite
def tensors(draw: st.DrawFn, pool: list, dtypes: tuple = ALL_DTYPES) -> Any:
    candidates = [t for t in pool if t.dtype in dtypes]
    if candidates and draw(st.booleans()):
        return draw(st.sampled_from(candidates))
    dtype = draw(st.sampled_from(dtypes))
    shape = tuple(draw(st.lists(st.integers(0, 3), max_size=3)))
    n = int(np.prod(shape, dtype=np.int64))
    vals = np.array(
        draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n)), dtype=np.int64
    ).reshape(shape)
    if dtype.kind == "c":
        vals = np.where(vals == 0, 1, vals) + 1j * np.array(
            draw(st.lists(st.integers(-2, 2), min_size=n, max_size=n)), dtype=np.int64
        ).reshape(shape)
    arr = vals.astype(dtype)
    kind = draw(st.sampled_from(["tensor", "tensor", "tensor", "view", "numpy"]))
    if kind == "numpy":
        return arr
    t = tf.tensor(arr)
    if kind == "view" and t.ndim >= 2:
        return tf.tensor(np.ascontiguousarray(arr.T)).T
    return t


def _operand(pool: list) -> st.SearchStrategy:
    return st.one_of(tensors(pool), tensors(pool), tensors(pool), SCALARS, JUNK)


INTS = st.integers(-4, 5)
AXES = st.one_of(st.none(), INTS, st.lists(INTS, max_size=4).map(tuple), JUNK)
DTYPE_ARGS = st.sampled_from(
    list(ALL_DTYPES)
    + [np.float16, "float32", "int64", "nope", None, int, float, complex, bool, np.uint8]
)
DIRECTIONS = st.sampled_from(
    ["EQ", "ne", "Lt", "le", "GT", "ge", tf.CompareDir.EQ, tf.CompareDir.LT, "xx", 3, None]
)
SHAPES = st.lists(st.integers(0, 6), max_size=4).map(tuple)


DIMS = st.lists(st.integers(-1, 3), max_size=3).map(tuple)
SORTED_DIMS = st.lists(st.integers(0, 3), max_size=3, unique=True).map(lambda v: tuple(sorted(v)))


def INDEX_ARGS(pool: list) -> st.SearchStrategy:
    """Index operands: integer tensors (often fitting), sequences of ints, or anything."""
    ints = (np.dtype(np.int32), np.dtype(np.int64))
    return st.one_of(tensors(pool, ints), tensors(pool, ints), DIMS, _operand(pool))


def _config(make: Callable[[], Any]) -> Any:
    """A config from random numbers, or junk when they do not make a valid config."""
    try:
        return make()
    except (TypeError, ValueError):
        return Junk()


def _args_for(draw: st.DrawFn, name: str, pool: list) -> tuple[list, dict]:
    row = next(r for r in IMPLEMENTED if r.name == name)
    x = draw(_operand(pool))
    if row.family == "unary":
        args = [x]
    elif name == "compare":
        args = [x, draw(_operand(pool)), draw(DIRECTIONS)]
    elif row.family == "binary":
        args = [x, draw(_operand(pool))]
    elif row.family == "ternary":
        pred = draw(st.one_of(tensors(pool, (np.dtype(bool),)), _operand(pool)))
        args = [
            pred if name in ("select", "where_select") else x,
            draw(_operand(pool)),
            draw(_operand(pool)),
        ]
    elif row.family == "conversion":
        args = [x, draw(DTYPE_ARGS)]
    elif name == "transpose":
        args = [x, draw(st.one_of(st.lists(st.integers(0, 4), max_size=4).map(tuple), JUNK))]
    elif name == "reshape":
        args = [x, draw(st.one_of(SHAPES, JUNK))]
    elif name == "broadcast_in_dim":
        args = [
            x,
            draw(st.one_of(SHAPES, JUNK)),
            draw(st.one_of(st.lists(st.integers(0, 4), max_size=4).map(tuple), JUNK)),
        ]
    elif name == "reverse":
        args = [x, draw(AXES)]
    elif row.family == "reduction":
        axes = draw(AXES)
        return [x], ({} if draw(st.booleans()) and axes is None else {"axes": axes})
    elif name == "slice":
        args = [
            x,
            _config(
                lambda: tf.SliceConfig(
                    starts=draw(DIMS), limits=draw(DIMS), strides=draw(st.one_of(st.none(), DIMS))
                )
            ),
        ]
    elif name == "pad":
        args = [
            x,
            _config(
                lambda: tf.PadConfig(
                    edge_padding_low=draw(DIMS),
                    edge_padding_high=draw(DIMS),
                    interior_padding=draw(DIMS),
                )
            ),
        ]
    elif name == "dynamic_slice":
        args = [x, draw(INDEX_ARGS(pool)), draw(st.one_of(DIMS, JUNK))]
    elif name == "dynamic_update_slice":
        args = [x, draw(_operand(pool)), draw(INDEX_ARGS(pool))]
    elif name == "concatenate":
        args = [
            draw(st.one_of(st.lists(_operand(pool), max_size=3), JUNK)),
            draw(st.one_of(INTS, JUNK)),
        ]
    elif name == "gather":
        cfg = _config(
            lambda: tf.GatherConfig(
                offset_dims=draw(SORTED_DIMS),
                collapsed_slice_dims=draw(DIMS),
                start_index_map=draw(DIMS),
                index_vector_dim=draw(st.integers(-1, 3)),
                slice_sizes=draw(DIMS),
            )
        )
        args = [x, draw(INDEX_ARGS(pool)), cfg]
    elif name == "scatter":
        cfg = _config(
            lambda: tf.ScatterConfig(
                update_window_dims=draw(SORTED_DIMS),
                inserted_window_dims=draw(DIMS),
                scatter_dims_to_operand_dims=draw(DIMS),
                index_vector_dim=draw(st.integers(-1, 3)),
            )
        )
        args = [x, draw(INDEX_ARGS(pool)), draw(_operand(pool)), cfg]
    elif name in ("extract_diag", "embed_diag"):
        args = [x] + draw(st.lists(st.one_of(INTS, JUNK), max_size=2))
    elif name in ("tril", "triu"):
        args = [x] + draw(st.lists(st.one_of(INTS, JUNK), max_size=1))
    elif name in ("dot_general", "dot_general_with_conj"):
        cfg = _config(
            lambda: tf.DotGeneralConfig(
                lhs_contracting_dims=draw(DIMS),
                rhs_contracting_dims=draw(DIMS),
                lhs_batch_dims=draw(DIMS),
                rhs_batch_dims=draw(DIMS),
            )
        )
        args = [x, draw(_operand(pool)), cfg]
        if name == "dot_general_with_conj":
            args += [draw(st.one_of(st.booleans(), JUNK)), draw(st.booleans())]
    elif name == "matmul":
        args = [x, draw(_operand(pool))]
    elif name in ("scale_real", "scale_complex"):
        args = [x, draw(st.one_of(SCALARS, JUNK))]
    else:  # an op this test does not know yet: random positional arguments
        args = [x] + draw(st.lists(st.one_of(_operand(pool), INTS, AXES), max_size=3))
    if draw(st.integers(0, 9)) == 0:  # sometimes a wrong argument count
        args = args[:-1] if draw(st.booleans()) else args + [draw(_operand(pool))]
    return args, {}


def _unpinned(name: str, args: list, expected: np.ndarray) -> bool:
    """Results the spec does not pin: casts of non-finite/out-of-range floats to ints, complex
    arithmetic that overflows (C99 and Rust differ on the parts of infinities), complex powers of
    zero."""
    arrays = [np.asarray(a) for a in args if isinstance(a, (TENSOR_TYPE, np.ndarray))]
    if expected.dtype.kind == "c" and not np.isfinite(expected).all():
        return True
    if name == "pow" and expected.dtype.kind == "c" and args and np.any(np.asarray(args[0]) == 0):
        # 0 ** z for non-real z: NumPy gives 0 (for Re z > 0), Python raises ZeroDivisionError,
        # tenferro gives NaN; the spec pins only 0 ** 0 == 1.
        return True
    if any(a.dtype.kind == "c" and not np.isfinite(a).all() for a in arrays):
        return True
    if (
        name == "scale_real"
        and expected.dtype.kind in "iu"
        and arrays
        and arrays[0].size
        and len(args) > 1
    ):
        # Products that overflow the integer dtype or fall halfway between two integers (the
        # rounding of ties is not pinned by ops.md).
        with np.errstate(all="ignore"):
            prod = arrays[0].astype(np.float64) * float(args[1])
        info = np.iinfo(expected.dtype)
        if not (np.abs(prod) < info.max).all() or (np.abs(prod - np.trunc(prod)) == 0.5).any():
            return True
    source = (
        np.asarray(args[0])
        if args and isinstance(args[0], (TENSOR_TYPE, np.ndarray, float, complex))
        else None
    )
    if (
        name == "cast"
        and source is not None
        and source.dtype.kind in "fc"
        and expected.dtype.kind in "iu"
    ):
        src = source.real
        info = np.iinfo(expected.dtype)
        if not (np.isfinite(src).all() and (np.abs(src) < min(abs(info.min), info.max)).all()):
            return True
    return False


def _tolerance(name: str, args: list, expected: np.ndarray) -> dict:
    if not name.startswith("reduce_") or expected.dtype.kind not in "fc":
        return {}
    x = np.asarray(args[0])
    if x.size == 0 or not np.isfinite(x).all():
        return {}
    eps = float(np.finfo(expected.dtype).eps)
    with np.errstate(all="ignore"):
        big = float(
            np.max(np.abs(x)).astype(np.float64) ** (2 if name == "reduce_sum_squares" else 1)
        )
    if not np.isfinite(big):
        return {}
    base = 1e-6 if expected.dtype in (np.float32, np.complex64) else 1e-14
    return {
        "atol": base + 2 * x.size * eps * big,
        "rtol": (1e-5 if base == 1e-6 else 1e-12) + 2 * x.size * eps,
    }


@pytest.mark.skipif(not IMPLEMENTED, reason="no primitive implemented yet")
@given(data=st.data())
def test_random_calls_fail_cleanly_or_match_reference(data: st.DataObject) -> None:
    pool: list = []
    for step in range(data.draw(st.integers(1, 4), label="steps")):
        row = data.draw(st.sampled_from(IMPLEMENTED), label=f"op{step}")
        args, kwargs = _args_for(data.draw, row.name, pool)
        op = getattr(tf.prim, row.name)
        try:
            result = op(*args, **kwargs)
        except E.EngineBrokenError as exc:  # a Rust panic: never acceptable
            pytest.fail(f"{row.name}{tuple(args)!r} {kwargs} panicked: {exc!r}")
        except ALLOWED:
            continue
        if row.name not in REFERENCE:
            # No elementwise reference (the decompositions, several outputs): test_linalg.py
            # checks their values; here only that they fail cleanly or return.
            continue
        assert isinstance(result, TENSOR_TYPE), f"{row.name} returned {type(result)}"
        ref_args = [np.asarray(a) if isinstance(a, TENSOR_TYPE) else a for a in args]
        try:
            with np.errstate(all="ignore"):
                expected = REFERENCE[row.name](*ref_args, **kwargs)
        except Exception as exc:  # noqa: BLE001
            pytest.fail(
                f"{row.name}{tuple(args)!r} {kwargs} returned {result!r}; the reference raises {exc!r}"
            )
        if _unpinned(row.name, ref_args, np.asarray(expected)):
            assert result.shape == expected.shape and result.dtype == expected.dtype
        else:
            assert_close(
                result,
                expected,
                err_msg=f"{row.name}{tuple(args)!r} {kwargs}",
                **_tolerance(row.name, ref_args, expected),
            )
        r = np.asarray(result)
        if r.dtype.kind not in "fc" or (np.isfinite(r).all() and (np.abs(r) <= 100).all()):
            pool.append(result)


def test_negative_axis_parameters_count_from_the_end() -> None:
    """ops.md: every axis/permutation parameter of a primitive may be negative."""
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(tf.prim.transpose(T(x), (-1, 0, -2)), np.transpose(x, (2, 0, 1)))
    np.testing.assert_array_equal(tf.prim.reduce_sum(T(x), (-1, 0)), x.sum(axis=(2, 0)))
    np.testing.assert_array_equal(tf.prim.reverse(T(x), (-1,)), x[:, :, ::-1])
    y = tf.prim.broadcast_in_dim(T(np.arange(3.0)), (2, 3), (-1,))
    np.testing.assert_array_equal(y, np.broadcast_to(np.arange(3.0), (2, 3)))
    cfg = tf.DotGeneralConfig(
        lhs_contracting_dims=(-1,),
        rhs_contracting_dims=(-3,),
        lhs_batch_dims=(0,),
        rhs_batch_dims=(-1,),
    )
    b = np.arange(40.0).reshape(4, 5, 2)
    np.testing.assert_allclose(
        tf.prim.dot_general(T(x), T(b), cfg), np.einsum("zik,kjz->ijz", x, b)
    )
    np.testing.assert_array_equal(
        tf.prim.extract_diag(T(x), -1, -2), np.moveaxis(np.diagonal(x, axis1=2, axis2=1), -1, 1)
    )
    g = tf.GatherConfig(
        offset_dims=(-1,),
        collapsed_slice_dims=(-2,),
        start_index_map=(0,),
        index_vector_dim=-1,
        slice_sizes=(1, 3),
    )
    np.testing.assert_array_equal(tf.prim.gather(T(X2), T(np.array([[1], [0]])), g), X2[[1, 0]])


def test_huge_shapes_are_value_errors() -> None:
    """Element-count overflow: ValueError as NumPy's "array is too big" (ShapeError for a reshape)."""
    for shape in [(2**40, 2**40), (2**40, 2**40, 0), (0, 2**40, 2**40), (2**62, 4)]:
        with pytest.raises(ValueError, match="too big") as info:
            tf.zeros(shape)
        assert not isinstance(info.value, MemoryError)
        with pytest.raises(ValueError):
            np.empty(shape)  # the oracle agrees that this is a ValueError
    with pytest.raises(E.ShapeError, match="reshape"):
        tf.prim.reshape(T(np.zeros(4)), (2**40, 2**40, 0))


def test_negative_pinned_cpu_is_quoted_as_given() -> None:
    with pytest.raises(E.CpuThreadError, match=r"pin=\[-1\]: CPU -1 ") as info:
        tf.CpuEngine(pin=[-1])
    assert info.value.reason is E.CpuThreadReason.CPU_NOT_ALLOWED
    assert "18446744073709551615" not in str(info.value)


@pytest.mark.parametrize(
    "fn, given",
    [
        (lambda: tf.prim.extract_diag(tf.zeros((2, 3, 4)), -3, 0), "(-3, 0)"),
        (
            lambda: tf.prim.dot_general(
                tf.zeros((2, 3, 4)),
                tf.zeros((2, 3, 4)),
                tf.DotGeneralConfig(
                    lhs_batch_dims=[-3],
                    lhs_contracting_dims=[0],
                    rhs_batch_dims=[1],
                    rhs_contracting_dims=[2],
                ),
            ),
            "[-3]",
        ),
        (
            lambda: tf.prim.gather(
                tf.zeros((2, 3)),
                T(np.array([[0]])),
                tf.GatherConfig(
                    offset_dims=[-1, 1],
                    collapsed_slice_dims=[],
                    start_index_map=[0],
                    index_vector_dim=1,
                    slice_sizes=[1, 2],
                ),
            ),
            "[-1, 1]",
        ),
        (
            lambda: tf.GatherConfig(
                offset_dims=[0],
                collapsed_slice_dims=[-2, 0],
                start_index_map=[0],
                index_vector_dim=1,
                slice_sizes=[1, 1, 2],
            ),
            "(-2, 0)",
        ),
    ],
)
def test_errors_after_normalising_negative_axes_quote_them_as_given(fn, given) -> None:
    with pytest.raises(E.AxisError) as info:
        fn()
    assert given in str(info.value), str(info.value)


def test_shape_arguments_are_integers_and_quoted_as_given() -> None:
    for bad in [(2.5,), (float("nan"),), (None,), (True,)]:
        with pytest.raises(TypeError):
            tf.zeros(bad)
        with pytest.raises(TypeError):
            np.zeros(bad)  # the oracle agrees
    with pytest.raises(ValueError, match="exceeds"):
        tf.zeros((2**63,))
    for shape in [(0, 2**62, 4), (0, 2**63)]:
        with pytest.raises(E.ShapeError, match=r"into shape \(0, " + str(shape[1])):
            tf.reshape(tf.zeros((0,)), shape)


def test_gather_scatter_config_without_fields_is_a_type_error() -> None:
    """A config object lacking ``index_vector_dim`` is a ``TypeError`` naming the op (it was an
    ``AttributeError``, outside the typed errors)."""
    x, idx = T(np.zeros(2)), T(np.array([0], dtype=np.int32))
    with pytest.raises(TypeError, match="gather"):
        tf.prim.gather(x, idx, Junk())
    with pytest.raises(TypeError, match="scatter"):
        tf.prim.scatter(x, idx, x, Junk())

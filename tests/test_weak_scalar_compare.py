"""Comparing an int32 tensor with a Python int outside int32's range compares exactly, as
NumPy 2 (found by a breaker helper: it raised OverflowError); arithmetic still overflows."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf


@pytest.mark.parametrize("op", ["__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"])
@pytest.mark.parametrize("v", [2**40, -(2**40), 2**31, -(2**31) - 1, 5])
def test_int32_compared_with_out_of_range_int(op: str, v: int) -> None:
    a = np.array([-3, 0, 7, 2**31 - 1], dtype=np.int32)
    want = getattr(a, op)(v)
    got = getattr(tf.asarray(a), op)(v)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(got), want)


def test_int32_arithmetic_with_out_of_range_int_still_overflows() -> None:
    with pytest.raises(OverflowError):
        np.array([1], dtype=np.int32) + 2**40
    with pytest.raises(OverflowError, match="int32"):
        tf.asarray(np.array([1], dtype=np.int32)) + 2**40

"""A Rust panic while an engine is borrowed becomes EngineBrokenError; the engine stays broken,
the interpreter and other engines keep working (python-api.md, Errors)."""

import numpy as np
import pytest

import tenferro as tf
from tenferro import _testing


def test_panic_marks_engine_broken_and_interpreter_survives() -> None:
    rt = tf.Runtime()
    engine = tf.CpuEngine(threads=1)
    x = rt.constant(np.arange(4.0))
    with rt.session(engine) as s:
        _testing.panic_on_next_op(engine)
        with pytest.raises(tf.errors.EngineBrokenError, match="exp"):
            s.exp(x)
        with pytest.raises(tf.errors.EngineBrokenError, match="broken"):
            s.add(x, x)
    fresh = tf.CpuEngine(threads=1)
    with rt.session(fresh) as s:
        np.testing.assert_array_equal(np.asarray(s.add(x, x)), 2 * np.arange(4.0))
    np.testing.assert_array_equal(np.asarray(x), np.arange(4.0))

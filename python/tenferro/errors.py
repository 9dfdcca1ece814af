"""The tenferro exception hierarchy, declared in one place.

Every class derives from :class:`TenferroError` and from the builtin a NumPy/PyTorch user would
catch (``ShapeError`` is a ``ValueError``, ``DTypeError`` a ``TypeError``, ...). The Rust core maps
each of its error variants to exactly one of these classes (``rust/tenferro-py/src/errors.rs``);
messages name the op and the offending values.

Builtins are used as they are for ``IndexError`` (indexing), ``ZeroDivisionError`` (integer
division by zero), ``OverflowError`` (a Python integer that does not fit the dtype),
``BufferError``, ``MemoryError`` (allocation failure, never an abort) and ``KeyboardInterrupt``.

Examples
--------
>>> import tenferro as tf
>>> issubclass(tf.errors.ShapeError, ValueError)
True
>>> issubclass(tf.errors.LinAlgError, __import__("numpy").linalg.LinAlgError)
True
"""

from __future__ import annotations

import enum
import linecache
import os
import sys
from typing import Any

import numpy as np

__all__ = [
    "TenferroError",
    "ShapeError",
    "AxisError",
    "EinsumError",
    "DTypeError",
    "ContextMismatchError",
    "DeviceMismatchError",
    "NonScalarGradError",
    "InactiveError",
    "NoGradientError",
    "UnsupportedAdRuleError",
    "UnsupportedError",
    "ReenteredError",
    "EngineBusyError",
    "EngineBrokenError",
    "CpuThreadError",
    "CpuThreadReason",
    "AlreadyInitializedError",
    "LinAlgError",
    "InternalError",
    "ConcretizationError",
    "TraceError",
    "TracerLeakError",
    "RecompileLimitError",
    "RecompileWarning",
]


class TenferroError(Exception):
    """Base class of every tenferro error."""


class ShapeError(TenferroError, ValueError):
    """Shapes or ranks do not fit the op (e.g. broadcasting failure, wrong reshape size)."""


class AxisError(ShapeError, IndexError):
    """An axis is out of range or repeated."""


class EinsumError(ShapeError):
    """Malformed einsum subscripts, operand-count or label-size mismatch, invalid path."""


class DTypeError(TenferroError, TypeError):
    """A dtype the op does not admit, or an unsupported NumPy dtype."""


class ContextMismatchError(TenferroError, ValueError):
    """Tensors of different runtimes were mixed in one op."""


class DeviceMismatchError(TenferroError, ValueError):
    """Tensors on different devices were mixed in one op."""


class NonScalarGradError(TenferroError, ValueError):
    """``backward()``/``grad`` was called on a non-scalar output."""


class InactiveError(TenferroError, ValueError):
    """The output does not depend on ``wrt`` through a differentiable path."""


class NoGradientError(TenferroError, RuntimeError):
    """``backward`` reached no tracked leaf."""


class UnsupportedAdRuleError(TenferroError, NotImplementedError):
    """The op has no derivative rule for the requested mode."""


class UnsupportedError(TenferroError, NotImplementedError):
    """The engine does not implement this op or dtype."""


class ReenteredError(TenferroError, RuntimeError):
    """A second session on an engine from the thread that already holds it."""


class EngineBusyError(TenferroError, RuntimeError):
    """Waiting for an engine held by another thread timed out."""


class EngineBrokenError(TenferroError, RuntimeError):
    """The engine panicked earlier; it refuses further work. Create a new engine."""


class CpuThreadReason(enum.Enum):
    """Why a CPU engine could not be configured (``CpuThreadError.reason``)."""

    ZERO_THREADS = "zero threads"
    EMPTY_CPU_LIST = "empty cpu list"
    DUPLICATE_CPU = "duplicate cpu"
    CPU_NOT_ALLOWED = "cpu not allowed"
    UNSUPPORTED_PLATFORM = "unsupported platform"
    AFFINITY = "affinity"
    POOL = "pool"


class CpuThreadError(TenferroError, ValueError):
    """A CPU engine could not be configured; ``reason`` is a :class:`CpuThreadReason`."""

    def __init__(self, message: str, reason: CpuThreadReason | str = CpuThreadReason.POOL) -> None:
        super().__init__(message)
        self.reason = reason if isinstance(reason, CpuThreadReason) else CpuThreadReason[reason]


class AlreadyInitializedError(TenferroError, RuntimeError):
    """A process-wide setting was changed after it was fixed."""


class LinAlgError(TenferroError, np.linalg.LinAlgError):
    """A linear-algebra failure (singular, not positive definite, no convergence); a ValueError."""


class InternalError(TenferroError, RuntimeError):
    """A broken invariant inside tenferro (a rule or kernel reached with an op it does not
    serve). Never the user's fault: please report it with the traceback."""


# The package directories whose frames are not "the user's line" of a tracing error.
_PKG_DIRS = tuple(
    os.path.dirname(os.path.abspath(f)) + os.sep for f in (__file__, np.__file__) if f is not None
)


def _user_frame() -> tuple[str, int, str, str] | None:
    """``(file, line, function, code text)`` of the innermost frame outside tenferro and NumPy
    (the user's line that asked a traced tensor for values), or ``None``."""
    try:
        f: Any = sys._getframe(2)
    except ValueError:  # constructed at the top of the stack
        return None
    while f is not None:
        filename = f.f_code.co_filename
        if not os.path.abspath(filename).startswith(_PKG_DIRS):
            code = linecache.getline(filename, f.f_lineno).strip()
            return filename, f.f_lineno, f.f_code.co_name, code
        f = f.f_back
    return None


class _UserLine:
    """Appends the user's source line (the innermost frame outside tenferro and NumPy) to the
    message, and keeps it as ``.source = (file, line, function, code)`` (``None`` if none)."""

    source: tuple[str, int, str, str] | None

    def __init__(self, message: str = "", *args: object) -> None:
        self.source = _user_frame() if message and "\n  at " not in message else None
        if self.source is not None:
            filename, line, func, code = self.source
            message = f"{message}\n  at {filename}:{line} in {func}: {code}"
        super().__init__(message, *args)


class ConcretizationError(_UserLine, TenferroError, TypeError):
    """A traced tensor (``tf.jit``: shape and dtype, no values) was asked for its values
    (``bool()``, ``int()``, ``float()``, ``complex()``, ``.item()``, ``.tolist()``, ``np.asarray``,
    ``__array__``, the buffer protocol, ``__index__``, a format spec), or a library function
    whose route or output shape depends on values met one (boolean-mask indexing, ``take`` with
    ``mode="raise"``). The message names the request, the op that made the tensor, its shape and
    dtype, and the user's source line (``file:line in function: code``; also ``.source``), and
    points to ``tf.where``, ``static_argnames`` or running without ``tf.jit`` (``graph-mode.md``,
    "Values Python asks for")."""


class TraceError(TenferroError, RuntimeError):
    """An eager-only operation on a traced tensor (``.backward()``, ``.grad``, ``clear_grad()``);
    use ``tf.func`` inside a traced function."""


class TracerLeakError(_UserLine, TenferroError, RuntimeError):
    """A traced tensor used after its trace ended (kept outside the traced function: a global,
    a list, a closure, a returned value), by an op or a value request. The message names the op
    that made it, its shape and dtype, and the user's source line (also ``.source``)."""


class RecompileLimitError(TenferroError, RuntimeError):
    """``tf.jit(..., on_limit="error")`` met more distinct signatures than ``max_traces``."""


class RecompileWarning(UserWarning):
    """``tf.jit`` met more distinct signatures than ``max_traces`` and runs eagerly from then on;
    the message names the argument that keeps changing."""

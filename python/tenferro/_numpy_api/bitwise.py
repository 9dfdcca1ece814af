"""Bitwise functions of integer and bool tensors (NumPy and Array API names): ``bitwise_and``,
``bitwise_or``, ``bitwise_xor``, ``bitwise_invert`` (NumPy's ``invert``/``bitwise_not``) and the
shifts ``bitwise_left_shift``/``left_shift``, ``bitwise_right_shift``/``right_shift``.

Each lowers to one primitive (``prim.bitwise_and``, ..., ``prim.shift_left``,
``prim.shift_right_arithmetic``). Their results are integers, so they record no derivative (the
graph is cut, as for ``compare``). Float and complex operands raise :class:`DTypeError` naming the
function, as NumPy raises ``TypeError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import prim as _p
from .._tenferro import Tensor
from ..errors import DTypeError
from ._common import ArrayLike, _I64, _as_tensor, _operands, _result_dtype, _to_common

__all__ = [
    "bitwise_and",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_not",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "invert",
    "left_shift",
    "right_shift",
]


_BINARY_DOC = """{summary}

Lowers to the primitive ``prim.{prim}``. Shapes broadcast as in NumPy; dtypes combine by the
promotion lattice of ops.md, Python ints and bools being weak (NumPy 2, NEP 50):
``tf.{name}(x_i32, 3)`` is int32.{note}

Parameters
----------
x1, x2 : Tensor or array_like
    {operands}; non-tensors other than Python scalars are converted with
    :func:`tenferro.asarray`.

Returns
-------
Tensor
    Shape: the broadcast of both shapes. dtype: {dtype}. No derivative is recorded (integer
    results).

Raises
------
ShapeError
    If the shapes do not broadcast.
DTypeError
    If the promoted dtype is a float or complex dtype (``TypeError`` in NumPy).

See Also
--------
numpy.{numpy_name}

Examples
--------
>>> import tenferro as tf
>>> tf.{name}(tf.asarray({example_x1}), {example_x2}).tolist()
{example_output}
"""


def _integer_operands(
    op: str, x1: ArrayLike, x2: ArrayLike, *, allow_bool: bool
) -> tuple[Any, Any]:
    a, b = _operands(x1, x2)
    dtype = _result_dtype(a, b)
    if dtype.kind not in "bi":
        kinds = "integer and bool" if allow_bool else "integer"
        raise DTypeError(f"{op}: not supported for dtype {dtype} ({kinds} dtypes only, as NumPy)")
    if dtype.kind == "b" and not allow_bool:
        # NumPy shifts booleans as int8, which tenferro does not have: int64 (as floor_divide).
        a, b = _to_common((a, b), _I64)
    return a, b


def _make(
    name: str,
    prim: Callable[[Any, Any], Tensor],
    summary: str,
    example: tuple[str, str, str],
    *,
    allow_bool: bool,
    numpy_name: str | None = None,
    note: str = "",
) -> Callable[[ArrayLike, ArrayLike], Tensor]:
    def fn(x1: ArrayLike, x2: ArrayLike, /) -> Tensor:
        a, b = _integer_operands(name, x1, x2, allow_bool=allow_bool)
        return prim(a, b)

    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = __name__
    fn.__doc__ = _BINARY_DOC.format(
        name=name,
        prim=prim.__name__,
        summary=summary,
        note=f"\n\n{note}" if note else "",
        operands="Integer or bool operands"
        if allow_bool
        else "Integer operands (two bools shift as int64)",
        dtype="the promoted dtype of the operands" if allow_bool else "the promoted integer dtype",
        numpy_name=numpy_name or name,
        example_x1=example[0],
        example_x2=example[1],
        example_output=example[2],
    )
    return fn


bitwise_and = _make(
    "bitwise_and",
    _p.bitwise_and,
    "Bitwise AND ``x1 & x2`` of integers (two's complement), logical AND of bools, element-wise.",
    ("[12, 10, -1]", "6", "[4, 2, 6]"),
    allow_bool=True,
)
bitwise_or = _make(
    "bitwise_or",
    _p.bitwise_or,
    "Bitwise OR ``x1 | x2`` of integers (two's complement), logical OR of bools, element-wise.",
    ("[12, 10, -8]", "3", "[15, 11, -5]"),
    allow_bool=True,
)
bitwise_xor = _make(
    "bitwise_xor",
    _p.bitwise_xor,
    "Bitwise XOR ``x1 ^ x2`` of integers (two's complement), logical XOR of bools, element-wise.",
    ("[12, 10, -1]", "6", "[10, 12, -7]"),
    allow_bool=True,
)
bitwise_left_shift = _make(
    "bitwise_left_shift",
    _p.shift_left,
    "Shift the bits of ``x1`` left by ``x2``, ``x1 << x2``, element-wise.",
    ("[1, 3, -1, 1]", "[2, 1, 4, 64]", "[4, 6, -16, 0]"),
    allow_bool=False,
    numpy_name="left_shift",
    note="Counts at or past the bit width and negative counts give 0 (NumPy's results: "
    "``np.left_shift(1, 64) == 0``); bits shifted out are dropped (no overflow error).",
)
bitwise_right_shift = _make(
    "bitwise_right_shift",
    _p.shift_right_arithmetic,
    "Shift the bits of ``x1`` right by ``x2``, filling with the sign bit (arithmetic shift, "
    "``x1 >> x2``), element-wise.",
    ("[16, -16, -8, 8]", "[2, 2, 100, -1]", "[4, -4, -1, 0]"),
    allow_bool=False,
    numpy_name="right_shift",
    note="Counts at or past the bit width and negative counts give 0 for ``x1 >= 0`` and -1 "
    "for ``x1 < 0`` (NumPy's results: ``np.right_shift(-8, 100) == -1``).",
)

#: NumPy's names of the shifts.
left_shift = bitwise_left_shift
right_shift = bitwise_right_shift


def bitwise_invert(x: ArrayLike, /) -> Tensor:
    """Bitwise NOT ``~x`` of integers (two's complement: ``~x == -x - 1``), logical NOT of
    bools, element-wise, as ``numpy.invert`` (aliases ``bitwise_not``, ``invert``).

    Lowers to the primitive ``prim.bitwise_not``.

    Parameters
    ----------
    x : Tensor or array_like
        Integer or bool input of any shape (rank 0 included).

    Returns
    -------
    Tensor
        Same shape and dtype. No derivative is recorded (integer results).

    Raises
    ------
    DTypeError
        For float and complex inputs (``TypeError`` in NumPy).

    See Also
    --------
    numpy.invert

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.bitwise_invert(tf.asarray([0, 5, -1])).tolist()
    [-1, -6, 0]
    >>> tf.invert(tf.asarray([True, False])).tolist()
    [False, True]
    """
    t = _as_tensor(x)
    if t.dtype.kind not in "bi":
        raise DTypeError(
            f"bitwise_invert: not supported for dtype {t.dtype} (integer and bool dtypes only, as NumPy)"
        )
    return _p.bitwise_not(t)


#: NumPy's names of :func:`bitwise_invert`.
invert = bitwise_not = bitwise_invert

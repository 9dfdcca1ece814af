"""NumPy-named functions with NumPy 2 semantics, lowered onto :mod:`tenferro.prim`.

This module is the *NumPy vocabulary* of tenferro (python-api.md, "Two vocabularies, never
mixed"): ``tf.exp``, ``tf.sum``, ``tf.reshape``, ``tf.floor_divide`` ... follow NumPy 2 (C-order
reshape, ``axis``/``keepdims`` keywords, ``sum`` of ints and bools accumulating in int64, floor
division with the sign of the divisor, true division of ints giving float64), while every one of
them is a short composition of the primitives of :mod:`tenferro.prim`, which keep tenferro's own
semantics (column-major ``reshape``, truncating integer ``div``/``rem``, dtype-keeping reductions).
Because only primitives are called, whatever the primitives record (automatic differentiation,
engine dispatch) applies to these functions unchanged.

Inputs may be tensors, NumPy arrays, nested lists or Python scalars. Non-tensors are converted with
:func:`tenferro.asarray`, except Python scalars given next to a tensor, which stay *weak* as in
NumPy 2 (NEP 50) and JAX: ``tf.add(x_f32, 1.0)`` is float32, ``tf.add(x_i32, 1)`` is int32.

The dtypes are the seven of ops.md (bool, int32, int64, float32, float64, complex64, complex128),
combined by the promotion lattice of ops.md, which agrees with NumPy's ``result_type`` on them.

The functions live in one module per family, each importing what it needs from the others:
:mod:`.elementwise`, :mod:`.reductions`, :mod:`.layout`, :mod:`.joining`, :mod:`.linear`
(contraction and matrix structure), :mod:`.indexing`, :mod:`.dtypes`, and the compositions of :mod:`.mathfuncs` (inverse
trigonometric functions, ``log2``/``log10``, ``isclose``), :mod:`.arranging` (``roll``, ``tile``,
``split``, ...), :mod:`.statistics` (``var``, ``std``), :mod:`.sorting` (sorting, searching, set functions, cumulative scans) and :mod:`.creation` (``*_like``), over the shared helpers
of :mod:`._common`. The creation functions (``tf.zeros``, ``tf.asarray``, ...) are in
:mod:`tenferro._factories`; the NumPy-style ``Tensor`` methods built from these functions are
attached in :mod:`tenferro._tensor_methods`.
"""

from __future__ import annotations

from .elementwise import (
    abs,
    absolute,
    add,
    around,
    clip,
    conj,
    conjugate,
    cos,
    divide,
    divmod,
    equal,
    exp,
    expm1,
    floor_divide,
    greater,
    greater_equal,
    imag,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    negative,
    not_equal,
    positive,
    power,
    real,
    remainder,
    rint,
    round,
    sign,
    sin,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    true_divide,
)
from .reductions import (
    all,
    amax,
    amin,
    any,
    max,
    mean,
    min,
    prod,
    sum,
)
from .layout import (
    broadcast_to,
    expand_dims,
    flip,
    moveaxis,
    ravel,
    reshape,
    squeeze,
    swapaxes,
    transpose,
)
from .joining import (
    concatenate,
    pad,
    stack,
)
from .linear import (
    diagonal,
    matmul,
    tensordot,
    trace,
    tril,
    triu,
)
from .indexing import (
    take,
    where,
)
from .dtypes import (
    astype,
)
from .mathfuncs import (
    acos,
    acosh,
    allclose,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    complex,
    isclose,
    log10,
    log2,
    pow,
)
from .arranging import (
    concat,
    diff,
    kron,
    meshgrid,
    outer,
    permute_dims,
    repeat,
    roll,
    split,
    take_along_axis,
    tile,
)
from .statistics import (
    count_nonzero,
    std,
    var,
)
from .sorting import (
    argmax,
    argmin,
    argsort,
    argwhere,
    cumprod,
    cumsum,
    cumulative_prod,
    cumulative_sum,
    flatnonzero,
    nonzero,
    searchsorted,
    sort,
    unique,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
)
from .creation import (
    empty_like,
    full_like,
    ones_like,
    zeros_like,
)

# ``complex`` (autoray's name) is exported as an attribute only: in ``__all__`` a star import
# would shadow the builtin ``complex``.
__all__ = [
    "abs",
    "absolute",
    "acos",
    "acosh",
    "add",
    "all",
    "allclose",
    "amax",
    "amin",
    "any",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "argmax",
    "argmin",
    "argsort",
    "argwhere",
    "around",
    "asin",
    "asinh",
    "astype",
    "atan",
    "atan2",
    "atanh",
    "broadcast_to",
    "clip",
    "concat",
    "concatenate",
    "conj",
    "conjugate",
    "cos",
    "count_nonzero",
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "diagonal",
    "diff",
    "divide",
    "divmod",
    "empty_like",
    "equal",
    "exp",
    "expand_dims",
    "expm1",
    "flatnonzero",
    "flip",
    "floor_divide",
    "full_like",
    "greater",
    "greater_equal",
    "imag",
    "isclose",
    "isfinite",
    "isinf",
    "isnan",
    "kron",
    "less",
    "less_equal",
    "log",
    "log10",
    "log1p",
    "log2",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "matmul",
    "max",
    "maximum",
    "mean",
    "meshgrid",
    "min",
    "minimum",
    "mod",
    "moveaxis",
    "multiply",
    "negative",
    "nonzero",
    "not_equal",
    "ones_like",
    "outer",
    "pad",
    "permute_dims",
    "positive",
    "pow",
    "power",
    "prod",
    "ravel",
    "real",
    "remainder",
    "repeat",
    "reshape",
    "rint",
    "roll",
    "round",
    "searchsorted",
    "sign",
    "sin",
    "sort",
    "split",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "std",
    "subtract",
    "sum",
    "swapaxes",
    "take",
    "take_along_axis",
    "tan",
    "tanh",
    "tensordot",
    "tile",
    "trace",
    "transpose",
    "tril",
    "triu",
    "true_divide",
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    "var",
    "where",
    "zeros_like",
]

# Array API names of their own (result_type, can_cast, broadcast_arrays, unstack, ...).
from . import surface as _surface  # noqa: E402
from .surface import *  # noqa: E402,F401,F403

__all__ += _surface.__all__

# Issue 22: the bitwise functions and the rounding/hyperbolic/floating-point functions.
from .bitwise import *  # noqa: E402,F401,F403
from .bitwise import __all__ as _bitwise_all  # noqa: E402
from .floatfuncs import *  # noqa: E402,F401,F403
from .floatfuncs import __all__ as _floatfuncs_all  # noqa: E402

__all__ += [*_bitwise_all, *_floatfuncs_all]

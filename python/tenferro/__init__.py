"""tenferro: dense tensors for scientific Python with a Rust core, explicit engines, and NumPy
as the exchange format.

Two layers, both first-class:

* implicit — NumPy-named functions (``tf.exp``, ``tf.sum``, …) and ``Tensor`` operators run on
  the process-wide default runtime and CPU engine;
* explicit — a ``Runtime`` paired with an engine in a session
  (``with rt.session(tf.CpuEngine()) as s: s.add(x, y)``), and ``tf.prim`` for the primitives.

Examples
--------
>>> import numpy as np, tenferro as tf
>>> x = tf.asarray(np.array([1.0, 2.0, 3.0]))
>>> (x * 2.0 + 1.0).tolist()
[3.0, 5.0, 7.0]
>>> rt = tf.Runtime()
>>> with rt.session(tf.CpuEngine(threads=1)) as s:
...     y = s.reduce_sum(s.constant([1.0, 2.0]))
>>> float(y)
3.0
"""

from __future__ import annotations

import math as _math
import sys as _sys

import numpy as _np

from . import errors
from ._tenferro import (
    CpuEngine,
    ExecutionContext,
    Runtime,
    Session,
    Tensor,
    allowed_cpus,
    default_context,
    default_engine,
    default_runtime,
    reset_default_engine,
    set_default_cpu_threads,
)
from ._types import (
    BufferPoolStats,
    CompareDir,
    DotGeneralConfig,
    GatherConfig,
    OpInfo,
    PadConfig,
    ScatterConfig,
    SliceConfig,
)
from ._factories import (
    arange,
    array,
    asarray,
    empty,
    eye,
    from_dlpack,
    full,
    linspace,
    ones,
    tensor,
    zeros,
)
from . import prim
from . import _numpy_api
from ._numpy_api import *  # noqa: F401,F403  (NumPy-named functions)
from ._numpy_api import complex  # noqa: A004 - autoray's name; not in __all__ (see _numpy_api)
from . import _tensor_methods
from . import autodiff
from .autodiff import Gradients, capture_trace, no_grad
from . import testing
from . import func
from .einsum import EinsumAnneal, einsum, einsum_path
from . import linalg
from . import fft
from ._custom import custom_jvp, custom_vjp
from ._jit import CompiledGraph, TracedGraph, TraceCacheStats, jit, make_graph
from ._graph_context import clear_caches
from ._types import CacheStats
from . import _array_api
from ._array_api import __array_api_version__, __array_namespace_info__, finfo, iinfo, isdtype

_tensor_methods.install()

from . import integrations  # noqa: E402

# Teach autoray (quimb, cotengra) tenferro's reduced svd: now when it is already imported, else
# when it is (never importing it here).
integrations.autoray._register_now_or_on_import()

bool_ = _np.dtype("bool")
int32 = _np.dtype("int32")
int64 = _np.dtype("int64")
float32 = _np.dtype("float32")
float64 = _np.dtype("float64")
complex64 = _np.dtype("complex64")
complex128 = _np.dtype("complex128")
bool = bool_  # noqa: A001 - the Array API's name of the boolean dtype (NumPy 2's np.bool)

# Array API constants (NumPy's values).
e = _math.e
pi = _math.pi
inf = _math.inf
nan = _math.nan
newaxis = None

# Tensor.__array_namespace__ returns this module (the package binds itself; not a hop).
_array_api._bind_namespace(_sys.modules[__name__])


def _package_version() -> str:
    """The installed distribution's version (its metadata, written from ``pyproject.toml``)."""
    from importlib import metadata

    try:
        return metadata.version("tenferro")
    except metadata.PackageNotFoundError:  # imported from a source tree that was never installed
        return "0+unknown"


__version__ = _package_version()

__all__ = [
    "jit",
    "custom_vjp",
    "custom_jvp",
    "make_graph",
    "TracedGraph",
    "CompiledGraph",
    "TraceCacheStats",
    "clear_caches",
    "CacheStats",
    "no_grad",
    "capture_trace",
    "Gradients",
    "autodiff",
    "Tensor",
    "Runtime",
    "Session",
    "CpuEngine",
    "ExecutionContext",
    "BufferPoolStats",
    "CompareDir",
    "OpInfo",
    "SliceConfig",
    "PadConfig",
    "GatherConfig",
    "ScatterConfig",
    "DotGeneralConfig",
    "default_engine",
    "default_runtime",
    "default_context",
    "reset_default_engine",
    "allowed_cpus",
    "set_default_cpu_threads",
    "tensor",
    "array",
    "asarray",
    "zeros",
    "ones",
    "empty",
    "full",
    "eye",
    "arange",
    "linspace",
    "from_dlpack",
    "prim",
    "errors",
    "testing",
    "func",
    "einsum",
    "einsum_path",
    "EinsumAnneal",
    "linalg",
    "integrations",
    "fft",
    "bool_",
    "int32",
    "int64",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "bool",
    "e",
    "pi",
    "inf",
    "nan",
    "newaxis",
    "finfo",
    "iinfo",
    "isdtype",
    "__array_api_version__",
    "__array_namespace_info__",
    *_numpy_api.__all__,
]

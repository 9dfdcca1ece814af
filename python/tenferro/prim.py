"""The primitive surface of tenferro (``ops.md``), as module-level functions.

Each function runs on the innermost active session (``with rt.session(engine) as s``), else on
the tensors' runtime and the default engine. Semantics are tenferro's, not NumPy's: ``reshape``
is column-major, integer ``div``/``rem`` truncate toward zero, reductions keep the dtype.

``CATALOG`` lists every primitive of the catalog (``OpInfo`` rows); those with
``implemented=False`` get their kernels in a later release and are not exported here yet.

Examples
--------
>>> import tenferro as tf
>>> tf.prim.div(tf.asarray([-7]), tf.asarray([2])).tolist()
[-3]
>>> tf.prim.reshape(tf.asarray([1, 2, 3, 4]), (2, 2)).tolist()
[[1, 3], [2, 4]]
"""

from __future__ import annotations

from ._tenferro import _catalog, _implicit_session
from ._types import OpInfo

CATALOG: tuple[OpInfo, ...] = tuple(
    OpInfo(name, arity, family, tuple(dtypes), implemented)
    for (name, arity, family, dtypes, implemented) in _catalog()
)

_SESSION = _implicit_session()

__all__ = ["CATALOG"]
for _row in CATALOG:
    if _row.implemented:
        globals()[_row.name] = getattr(_SESSION, _row.name)
        __all__.append(_row.name)
where_select = _SESSION.where_select
__all__.append("where_select")
del _row

"""Indexing beyond basic slicing (integer arrays → ``gather``, boolean masks) arrives with the
``gather`` primitive; until then such keys raise ``IndexError``."""

from __future__ import annotations

from typing import Any


def advanced_getitem(t: Any, key: Any) -> Any:
    """Advanced indexing entry point called by ``Tensor.__getitem__``."""
    raise IndexError(
        "only integers, slices (`:`), ellipsis (`...`), and None are valid indices "
        f"(advanced indexing with {type(key).__name__} needs the gather primitive), got {key!r}"
    )

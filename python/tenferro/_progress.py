"""Progress bars of long einsum path searches (``tf.EinsumAnneal``), driven by the extension.

The extension calls :func:`start` once a search has run for :data:`DELAY` seconds, then
``update(k)`` and ``close()`` on what it returns.
"""

from __future__ import annotations

import sys
from typing import Any

#: Seconds a search runs before a bar appears.
DELAY = 1.0


def start(desc: str, total: int) -> Any:
    """A ``tqdm`` bar on ``sys.stderr`` of ``total`` steps, or ``None`` when ``sys.stderr`` is not
    a terminal or ``tqdm`` is not installed."""
    try:
        if not sys.stderr.isatty():
            return None
        from tqdm import tqdm
    except Exception:  # a closed or replaced stderr, no tqdm: no bar
        return None
    return tqdm(
        total=total,
        desc=desc,
        leave=False,
        file=sys.stderr,
        bar_format="{l_bar}{bar}| {elapsed}<{remaining}",
    )

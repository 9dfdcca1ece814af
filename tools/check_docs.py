"""Check that the built documentation site documents every public name (``make docs``).

Reads the site's Sphinx inventory (``objects.inv``) and fails, listing them, when a name of
``tenferro.__all__``, of a public submodule's ``__all__`` (the modules of ``docs/conf.py``'s
``API_MODULES`` that exist) or a public attribute of ``tenferro.Tensor`` (including the
methods attached at import) has no entry.

Usage: ``python tools/check_docs.py docs/_build/html``
"""

from __future__ import annotations

import importlib.util
import os
import sys

from sphinx.util.inventory import InventoryFile


def _conf():
    spec = importlib.util.spec_from_file_location("docs_conf", os.path.join("docs", "conf.py"))
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf


def expected_names() -> set[str]:
    """Every public name the site must document, fully qualified."""
    import tenferro

    names = set()
    for module in _conf().api_modules():
        names.update(f"{module.__name__}.{name}" for name in module.__all__)
    names.update(
        f"tenferro.Tensor.{name}" for name in dir(tenferro.Tensor) if not name.startswith("_")
    )
    return names


def documented_names(html_dir: str) -> set[str]:
    """The Python object names of the site's inventory."""
    with open(os.path.join(html_dir, "objects.inv"), "rb") as f:
        inventory = InventoryFile.load(f, "", os.path.join)
    found = set()
    for role, entries in inventory.items():
        if role.startswith("py:"):
            found.update(entries)
    return found


def main(argv: list[str]) -> int:
    html_dir = argv[1] if len(argv) > 1 else os.path.join("docs", "_build", "html")
    expected = expected_names()
    missing = sorted(expected - documented_names(html_dir))
    if missing:
        print(f"check_docs: {len(missing)} public names have no entry in the site's inventory:")
        for name in missing:
            print(f"  {name}")
        return 1
    print(f"check_docs: all {len(expected)} public names are documented")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

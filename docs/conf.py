"""Sphinx configuration of the documentation site (``make docs``).

Sphinx + numpydoc rather than mkdocs-material + mkdocstrings: the docstrings are NumPy-style
reStructuredText with Sphinx roles (``:func:``, ``:mod:``), which numpydoc renders as written;
autodoc imports the package, so the compiled extension's classes and the methods attached to
``Tensor`` at import are documented as the user sees them (a static reader would miss both);
and Sphinx writes the standard ``objects.inv`` inventory, which ``tools/check_docs.py`` reads
to check that every public name has a page. The guide pages stay Markdown (MyST).

The API reference pages are generated at build time (``_api/``, not committed) from the
``__all__`` lists, so a new public name is documented without editing anything here.
"""

from __future__ import annotations

import importlib
import inspect
import os
import types

import numpy as np

import tenferro

project = "tenferro"
author = "the tenferro developers"
copyright = "2026, the tenferro developers"
release = tenferro.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "README.md"]
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]

# numpydoc renders the sections; autodoc's own member listing stays off (each name has a
# directive of its own on the generated pages).
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
autodoc_default_options = {"undoc-members": True}
autodoc_typehints = "signature"
add_module_names = True

html_theme = "pydata_sphinx_theme"
html_title = f"tenferro {release}"
html_static_path: list[str] = []
html_theme_options = {"navigation_depth": 2, "show_toc_level": 2}

#: The modules whose ``__all__`` make up the public API, in the order of the reference.
API_MODULES = (
    "tenferro",
    "tenferro.linalg",
    "tenferro.fft",
    "tenferro.autodiff",
    "tenferro.func",
    "tenferro.prim",
    "tenferro.testing",
    "tenferro.errors",
    "tenferro.integrations",
    "tenferro.integrations.autoray",
    "tenferro.integrations.quimb",
)


def api_modules() -> list[types.ModuleType]:
    """The public modules that exist in this build (``fft`` and ``integrations`` may not)."""
    found = []
    for name in API_MODULES:
        try:
            found.append(importlib.import_module(name))
        except ImportError:
            continue
    return found


def _directive(module: types.ModuleType, name: str) -> str:
    obj = getattr(module, name)
    full = f"{module.__name__}.{name}"
    if isinstance(obj, types.ModuleType):
        return f"- :mod:`{obj.__name__}` (see its page)\n"
    if inspect.isclass(obj):
        if issubclass(obj, BaseException):
            return f".. autoexception:: {full}\n   :members:\n   :show-inheritance:\n"
        return f".. autoclass:: {full}\n   :members:\n"
    if callable(obj):
        return f".. autofunction:: {full}\n"
    # Data (dtype objects, constants): their own docstrings are NumPy's or ``float``'s, so
    # the entry states what the name is instead.
    if isinstance(obj, np.dtype):
        what = "a tenferro dtype (a NumPy dtype object)"
    else:
        what = f"a constant of type ``{type(obj).__name__}``"
    return f".. py:data:: {name}\n   :value: {obj!r}\n\n   ``{name}``: {what}.\n"


def _write_api_pages(app) -> None:
    out = os.path.join(app.srcdir, "_api")
    os.makedirs(out, exist_ok=True)
    pages = []
    for module in api_modules():
        names = sorted(module.__all__, key=str.lower)
        title = f"``{module.__name__}``"
        lines = [
            title,
            "=" * len(title),
            "",
            f".. automodule:: {module.__name__}",
            "   :no-members:",
            "",
        ]
        lines += [_directive(module, name) for name in names]
        text = "\n".join(lines) + "\n"
        path = os.path.join(out, f"{module.__name__}.rst")
        # Rewrite only on change, so an incremental build stays incremental.
        if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        pages.append(module.__name__)
    index = ["API reference", "=============", "", ".. toctree::", "   :maxdepth: 1", ""]
    index += [f"   {page}" for page in pages]
    text = "\n".join(index) + "\n"
    path = os.path.join(out, "index.rst")
    if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def setup(app):
    app.connect("builder-inited", _write_api_pages)

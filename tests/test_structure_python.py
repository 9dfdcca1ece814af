"""Structure of the Python package (issue 18): every Python-defined attribute of ``Tensor``,
``Runtime`` and ``Session`` is attached in one module, each name once; no module reaches the
top-level package through ``sys.modules["tenferro"]`` or ``import tenferro``.

The checks read the package's source with :mod:`ast` (a dict literal with a repeated key, or a
second ``setattr``, would silently overwrite at run time, so only the source shows it)."""

from __future__ import annotations

import ast
import collections
import pathlib

import pytest

import tenferro as tf
from tenferro import _tensor_methods

PKG = pathlib.Path(tf.__file__).parent
CLASSES = ("Tensor", "Runtime", "Session", "ExecutionContext")
TABLES = {
    "Tensor": "_TENSOR_METHODS",
    "Runtime": "_RUNTIME_METHODS",
    "Session": "_SESSION_METHODS",
    "ExecutionContext": "_CONTEXT_METHODS",
}
ATTACHING_MODULE = "_tensor_methods.py"


def _modules() -> list[pathlib.Path]:
    files = sorted(p for p in PKG.rglob("*.py") if "examples" not in p.relative_to(PKG).parts)
    assert len(files) > 10 and (PKG / "_numpy_api" / "elementwise.py") in files
    return files


def _parse(path: pathlib.Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _attachments(tree: ast.Module) -> list[tuple[str, str, int]]:
    """``(class, attribute, line)`` of each ``Cls.attr = ...`` and ``setattr(Cls, ...)``
    (attribute ``"?"`` when the name is not a literal)."""
    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for t in targets:
            if (
                isinstance(t, ast.Attribute)
                and isinstance(t.value, ast.Name)
                and t.value.id in CLASSES
            ):
                found.append((t.value.id, t.attr, node.lineno))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
        ):
            cls = node.args[0] if node.args else None
            if isinstance(cls, ast.Name) and cls.id in CLASSES:
                name = node.args[1] if len(node.args) > 1 else None
                attr = (
                    name.value
                    if isinstance(name, ast.Constant) and isinstance(name.value, str)
                    else "?"
                )
                found.append((cls.id, attr, node.lineno))
    return found


def _table_keys(tree: ast.Module, table: str) -> list[str]:
    for node in tree.body:
        target = (
            node.target
            if isinstance(node, ast.AnnAssign)
            else (node.targets[0] if isinstance(node, ast.Assign) else None)
        )
        if isinstance(target, ast.Name) and target.id == table:
            assert isinstance(node.value, ast.Dict), f"{table} must be a dict literal"
            keys = []
            for k in node.value.keys:
                assert isinstance(k, ast.Constant) and isinstance(k.value, str), (
                    f"{table}: keys must be string literals (no ** unpacking)"
                )
                keys.append(k.value)
            return keys
    raise AssertionError(f"{ATTACHING_MODULE} defines no table {table}")


def test_only_the_methods_module_attaches_attributes() -> None:
    outside = {
        str(p.relative_to(PKG)): _attachments(_parse(p))
        for p in _modules()
        if p.name != ATTACHING_MODULE
    }
    assert {k: v for k, v in outside.items() if v} == {}
    # Inside it, only the one generic setattr of install() (fed by the tables).
    tree = _parse(PKG / ATTACHING_MODULE)
    assert _attachments(tree) == []
    setattrs = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "setattr"
    ]
    assert len(setattrs) == 1, [n.lineno for n in setattrs]


@pytest.mark.parametrize("cls", CLASSES)
def test_each_attribute_is_defined_once(cls: str) -> None:
    keys = _table_keys(_parse(PKG / ATTACHING_MODULE), TABLES[cls])
    repeated = [k for k, n in collections.Counter(keys).items() if n > 1]
    assert repeated == [], f"{cls}: defined twice in {TABLES[cls]}: {repeated}"
    # Every table entry reached the class (none shadowed by the Rust binding: install() refuses).
    klass = getattr(tf, cls)
    assert all(k in vars(klass) for k in keys)


def test_install_refuses_a_second_definition() -> None:
    with pytest.raises(RuntimeError, match=r"Tensor\.__repr__ is already defined"):
        _tensor_methods.install()


def _package_hops(tree: ast.Module, self_ok: bool = False) -> list[tuple[str, int]]:
    hops = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] == "tenferro" for a in node.names
        ):
            hops.append(("import tenferro", node.lineno))
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").split(".")[0] == "tenferro"
        ):
            hops.append((f"from {node.module} import", node.lineno))
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "modules"
            and isinstance(node.value.value, ast.Name)
            and node.value.value.id.lstrip("_") == "sys"
        ):
            if self_ok and isinstance(node.slice, ast.Name) and node.slice.id == "__name__":
                continue  # the package's __init__ naming itself (the Array API namespace)
            hops.append(("sys.modules[...]", node.lineno))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
        ):
            hops.append(("importlib.import_module", node.lineno))
    return hops


def test_no_module_reaches_the_package_through_a_hop() -> None:
    hops = {
        str(p.relative_to(PKG)): _package_hops(_parse(p), self_ok=p == PKG / "__init__.py")
        for p in _modules()
    }
    assert {k: v for k, v in hops.items() if v} == {}

"""The op table against its Python faces (issue 19, first acceptance line): every primitive of
the catalog is a method of ``Session`` in the extension and in its stub (``_tenferro.pyi``),
nothing else on ``Session`` poses as a primitive, and every primitive has a derivative-rule
row. (The Rust side — every ``OpKind`` has its catalog row and a rule row — is
``every_kind_has_its_catalog_row_and_a_rule`` in ``tenferro-ad``.)"""

from __future__ import annotations

import re
from pathlib import Path

from tenferro import _tenferro

STUB = Path(_tenferro.__file__).with_name("_tenferro.pyi")

# Session methods that are not primitives: the `with` protocol's getters, the constant factory,
# einsum (a program of primitives), `variable` (AD), the `where` spelling of `select`, and the
# recording probe.
NOT_PRIMITIVES = {"_records", "constant", "einsum", "engine", "runtime", "variable", "where_select"}


def _catalog_names() -> list[str]:
    return [row[0] for row in _tenferro._catalog()]


def _stub_session_methods() -> set[str]:
    src = STUB.read_text()
    start = src.index("class Session")
    end = src.index("\nclass ", start + 1)
    return {m for m in re.findall(r"def (\w+)\(", src[start:end]) if not m.startswith("__")}


def test_catalog_names_are_unique() -> None:
    names = _catalog_names()
    assert len(names) == len(set(names)) and len(names) > 50


def test_every_primitive_is_a_session_method_in_the_extension_and_the_stub() -> None:
    names = set(_catalog_names())
    runtime_methods = {m for m in dir(_tenferro.Session) if not m.startswith("__")}
    stub_methods = _stub_session_methods()
    assert names <= runtime_methods, sorted(names - runtime_methods)
    assert names <= stub_methods, sorted(names - stub_methods)
    # Nothing else poses as a primitive.
    assert runtime_methods - names == NOT_PRIMITIVES, sorted(runtime_methods - names)
    assert stub_methods - names == NOT_PRIMITIVES, sorted(stub_methods - names)


def test_every_primitive_has_a_rule_row() -> None:
    rules = dict(_tenferro._ad_rules())
    assert set(rules) == set(_catalog_names())
    assert "missing" not in rules.values(), [k for k, v in rules.items() if v == "missing"]

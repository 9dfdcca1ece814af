"""The op table against its Python faces (issue 19, first acceptance line): every primitive of
the catalog is a method of ``Session`` in the extension and in its stub (``_tenferro.pyi``),
nothing else on ``Session`` poses as a primitive, and every primitive has a derivative-rule
row; the stub's generated section and docs/ops.md's catalog table (``tools/gen_stub.py``) are
what the op table gives today. (The Rust side — every ``OpKind`` has its catalog row and a rule
row — is ``every_kind_has_its_catalog_row_and_a_rule`` in ``tenferro-ad``.)"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from tenferro import _tenferro

STUB = Path(_tenferro.__file__).with_name("_tenferro.pyi")
GEN_STUB = Path(__file__).resolve().parents[1] / "tools" / "gen_stub.py"


def _gen_stub():
    spec = importlib.util.spec_from_file_location("gen_stub", GEN_STUB)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


TEXT_SIGNATURES = {
    "unary": "($self, x)",
    "binary": "($self, x, y)",
    "reduce": "($self, x, axes=None)",
}


def test_uniform_session_methods_are_the_grouped_rows() -> None:
    """``_primitive_groups()`` (the unary/binary/reduce rows of the op table) names catalog
    primitives of the matching family, each a Session method."""
    families = {row[0]: row[2] for row in _tenferro._catalog()}
    groups = _tenferro._primitive_groups()
    assert len(groups) == len(dict(groups)) and len(groups) > 20
    family_of_group = {"unary": "unary", "binary": "binary", "reduce": "reduction"}
    for name, group in groups:
        assert families.get(name) == family_of_group[group], (name, group, families.get(name))
        # The parameters tools/gen_stub.py writes for the group are the method's.
        assert getattr(_tenferro.Session, name).__text_signature__ == TEXT_SIGNATURES[group], name
    # Every unary and reduction primitive is uniform (binary has `compare` besides).
    for family, group in (("unary", "unary"), ("reduction", "reduce")):
        assert {n for n, f in families.items() if f == family} == {
            n for n, g in groups if g == group
        }


def test_committed_stub_matches_the_op_table() -> None:
    gen = _gen_stub()
    current = STUB.read_text()
    assert STUB.resolve() == gen.STUB.resolve(), (STUB, gen.STUB)
    wanted = gen.expected_stub(current)
    assert wanted == current, "python/tenferro/_tenferro.pyi is stale: run `make stub`"


def test_the_stub_check_can_fail() -> None:
    # A stub missing a generated method, or with one too many, is out of date.
    gen = _gen_stub()
    current = STUB.read_text()
    catalog = [row[0] for row in _tenferro._catalog()]
    groups = _tenferro._primitive_groups()
    stale = current.replace("    def neg(self, /, x: Any) -> Tensor: ...\n", "", 1)
    assert stale != current and gen.expected_stub(stale) == current
    # (A name no primitive will take: a real one would make the "extra" method not extra.)
    fake = "not_a_primitive"
    assert fake not in catalog
    extra = gen.update(current, gen.render(catalog + [fake], groups + [(fake, "unary")]))
    assert f"def {fake}(self, /, x: Any) -> Tensor: ..." in extra
    assert gen.expected_stub(extra) == current


OPS_MD = Path(__file__).resolve().parents[1] / "docs" / "ops.md"


def _documented_primitives(src: str | None = None) -> dict[str, set[str]]:
    """The identifiers in the code spans of each row of ops.md's "The catalog" table, by the
    row's family column."""
    src = OPS_MD.read_text() if src is None else src
    start = src.index("## The catalog")
    end = src.index("\n## ", start + 1) if "\n## " in src[start + 1 :] else len(src)
    rows: dict[str, set[str]] = {}
    for line in src[start:end].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not line.lstrip().startswith("|"):
            continue
        spans = " ".join(re.findall(r"`([^`]*)`", "|".join(cells[1:])))
        rows[cells[0]] = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", spans))
    return rows


def test_committed_ops_md_matches_the_op_table() -> None:
    """docs/ops.md's catalog table is what tools/gen_stub.py writes from the op table today, so
    a new primitive needs `make stub`, not a hand edit."""
    gen = _gen_stub()
    assert OPS_MD.resolve() == gen.OPS_MD.resolve(), (OPS_MD, gen.OPS_MD)
    current = OPS_MD.read_text()
    wanted = gen.expected_ops_md(current)
    assert wanted == current, "docs/ops.md's catalog table is stale: run `make stub`"


def test_ops_md_lists_every_catalog_primitive() -> None:
    """The table (generated) names every primitive of the op table in its family's row, the
    rows in catalog family order, and nothing that is not a primitive besides the notes'
    words."""
    documented = _documented_primitives()
    catalog = _tenferro._catalog()
    families = list(dict.fromkeys(row[2] for row in catalog))
    assert list(documented) == ["family", "---", *families], list(documented)
    missing = [
        f"{name} ({family})" for name, _a, family, *_ in catalog if name not in documented[family]
    ]
    assert not missing, f'docs/ops.md, "The catalog": missing {", ".join(missing)}'
    names = {row[0] for row in catalog}
    note_words = {"direction", "EQ", "NE", "LT", "LE", "GT", "GE", "pred", "on_true", "on_false"}
    note_words |= {"x", "lo", "hi", "tf", "linalg"}
    note_words |= {"fft_type", "fft_length", "axes", "FFT", "IFFT", "RFFT", "IRFFT", "numpy"}
    for family in families:
        assert documented[family] - names <= note_words, (family, documented[family] - names)


def test_the_ops_md_check_can_fail() -> None:
    """A table missing a primitive, with one too many, or edited by hand is out of date, and
    the generated block keeps up with a new primitive and a new family."""
    gen = _gen_stub()
    current = OPS_MD.read_text()
    rows = [(row[0], row[2]) for row in _tenferro._catalog()]
    # A deleted row.
    lines = current.splitlines(keepends=True)
    layout = next(line for line in lines if line.startswith("| layout |"))
    stale = current.replace(layout, "", 1)
    assert stale != current and gen.expected_ops_md(stale) == current
    # A primitive dropped from a row.
    dropped = current.replace(" erf round", " round", 1)
    assert dropped != current and gen.expected_ops_md(dropped) == current
    # A new primitive and a new family land in the table without a hand edit.
    fake = "not_a_primitive"
    assert fake not in {name for name, _ in rows}
    extra = gen.update(
        current,
        gen.render_ops_table(rows + [(fake, "unary"), ("fake_" + fake, "new_family")]),
        gen.DOC_BEGIN,
        gen.DOC_END,
        gen.OPS_MD,
    )
    documented = _documented_primitives(extra)
    assert fake in documented["unary"] and documented["new_family"] == {"fake_" + fake}
    assert list(documented)[-1] == "new_family"
    assert gen.expected_ops_md(extra) == current
    # The parse sees what it should.
    documented = _documented_primitives()
    assert "erf" in documented["unary"] and "erf" not in documented["binary"]
    assert "compare" in documented["binary"] and "slogdet" in documented["linalg"]

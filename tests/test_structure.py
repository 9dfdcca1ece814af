"""Structure checks of the Rust binding (issue 18, ``architecture.md``): they fail when the
layering slips — an import cycle between the binding's modules, eager-op semantics (the
recording decision, the runtime-membership check, weak-scalar promotion, engine calls around
``Session::apply``) written in the PyO3 crate, a Python import on an op path, or the CPU engine
type named outside the places that construct and configure it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

BINDING = Path(__file__).resolve().parents[1] / "rust" / "tenferro-py" / "src"
CORE = Path(__file__).resolve().parents[1] / "rust" / "tenferro-eager" / "src"


def _sources(root: Path) -> dict[str, str]:
    """Module name → source with comments removed (doc comments may name anything)."""
    out = {}
    for p in sorted(root.glob("*.rs")):
        text = "\n".join(re.sub(r"//.*", "", line) for line in p.read_text().splitlines())
        out[p.stem] = text
    return out


def _crate_deps(src: dict[str, str]) -> dict[str, set[str]]:
    """Module → the crate modules it names (`use crate::m…`, `crate::m::…` anywhere)."""
    deps: dict[str, set[str]] = {}
    for name, text in src.items():
        found = set(re.findall(r"\bcrate::(\w+)", text))
        # `use crate::{a, b::c}` groups.
        for group in re.findall(r"\bcrate::\{([^}]*)\}", text):
            found |= {g.strip().split("::")[0] for g in group.split(",") if g.strip()}
        deps[name] = {d for d in found if d in src and d != name}
    return deps


def _cycle(deps: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(deps[n]):
            if state.get(m) == 1:
                return stack[stack.index(m) :] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(deps):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def test_the_parser_sees_a_cycle() -> None:
    # The check itself can fail: a two-module cycle is found.
    deps = _crate_deps({"a": "use crate::b::X;", "b": "fn f() { crate::a::g() }"})
    assert _cycle(deps) == ["a", "b", "a"]
    assert _cycle(_crate_deps({"a": "use crate::{b, c::D};", "b": "", "c": ""})) is None


def test_binding_modules_import_without_a_cycle() -> None:
    src = _sources(BINDING)
    assert {"classes", "apply", "session", "tensor", "runtime", "engine", "mode"} <= set(src)
    cycle = _cycle(_crate_deps(src))
    assert cycle is None, f"import cycle in rust/tenferro-py/src: {' -> '.join(cycle)}"


def test_core_modules_import_without_a_cycle() -> None:
    cycle = _cycle(_crate_deps(_sources(CORE)))
    assert cycle is None, f"import cycle in rust/tenferro-eager/src: {' -> '.join(cycle)}"


# Eager-op semantics that belong to the core (`tenferro-eager`), never to the binding.
FORBIDDEN_IN_BINDING = {
    "recording decision": [
        r"\brecord\s*\(",
        r"\brecord_multi\b",
        r"\.records\s*\(",
        r"\bcaptured_leaf\b",
    ],
    "runtime-membership check": [
        r"\bcontext_mismatch\b",
        r"\bContextMismatch\b",
        r"\bcheck_members\b",
    ],
    "weak-scalar promotion": [r"\bpromote_weak\b", r"\bpromote\s*\(", r"\bpromote_weak_scalars\b"],
    "engine execution around Session::apply": [
        r"\btenferro_runtime::apply\b",
        r"\bapply_multi\b",
        r"\.execute(_multi)?\s*\(",
    ],
}


@pytest.mark.parametrize("concern", sorted(FORBIDDEN_IN_BINDING))
def test_eager_semantics_are_not_in_the_binding(concern: str) -> None:
    hits = [
        f"{name}.rs: {m.group(0)!r}"
        for name, text in _sources(BINDING).items()
        for pat in FORBIDDEN_IN_BINDING[concern]
        for m in re.finditer(pat, text)
        # The one error route maps the core's `ContextMismatch` to its Python class.
        if not (name == "errors" and m.group(0) == "ContextMismatch")
    ]
    assert not hits, f"the {concern} appears in rust/tenferro-py: {hits}"
    # ... and it does live in the core (so the pattern list is not stale).
    core = "\n".join(_sources(CORE).values())
    assert any(re.search(p, core) for p in FORBIDDEN_IN_BINDING[concern]), concern


def _function_spans(text: str) -> list[tuple[str, int, int]]:
    """(name, start, end) of each `fn` body, by brace matching."""
    spans = []
    for m in re.finditer(r"\bfn\s+(\w+)", text):
        i = text.find("{", m.end())
        if i < 0:
            continue
        depth, j = 0, i
        while j < len(text):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        spans.append((m.group(1), i, j))
    return spans


def test_python_imports_only_at_module_init() -> None:
    found = []
    for name, text in _sources(BINDING).items():
        for m in re.finditer(r"py\.import\s*\(|PyModule::import\s*\(|\.import\s*\(", text):
            inside = [f for f, a, b in _function_spans(text) if a < m.start() < b]
            found.append((name, inside[-1] if inside else "<top>"))
    assert found, "the import pattern found nothing: module init imports numpy"
    # Only the init functions of `errors.rs` and `imports.rs`, which the #[pymodule] calls.
    assert {f for f in found} <= {("errors", "init"), ("imports", "init")}, found
    lib = _sources(BINDING)["lib"]
    assert "errors::init(" in lib and "imports::init(" in lib


def test_cpu_engine_type_is_named_where_it_is_built_and_configured() -> None:
    users = {
        name
        for name, text in _sources(BINDING).items()
        if re.search(r"\bCpuEngine\b(?!\w)", re.sub(r"\bPyCpuEngine\b", "", text))
    }
    assert users == {"classes", "engine"}, users
    assert not re.search(
        r"\bCpuEngine\b", re.sub(r"\bPyCpuEngine\b", "", "\n".join(_sources(CORE).values()))
    )

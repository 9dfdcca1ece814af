"""Value errors of compiled programs presented as eager code presents them (``graph-mode.md``,
"Values Python asks for": errors that depend on values are raised by the compiled call with the
eager class and message).

A few compositions rename the error of a primitive they run: ``floor_divide`` presents the
``div`` primitive's ``ZeroDivisionError`` as ``floor_divide: integer division or modulo by
zero``, ``linalg.inv`` prefixes ``linalg.inv:`` to the ``solve`` primitive's ``LinAlgError``.
Eagerly they catch the error as it happens. In a compiled program the error happens later, when
the program runs, so while a function is traced each such composition records its rule here
(:func:`rename`, keyed by the error class and the primitive's name), and the compiled graph
applies the rule to an error of that class and primitive (:class:`RenamingGraph`). When one
trace records different rules for the same key, the primitive's own message is kept; a bare use
of the same primitive next to a renaming composition in one program gets the composition's
name (the program does not know which instruction failed).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

__all__ = ["RULES", "rename", "RenamingGraph"]

RULES: ContextVar[dict[tuple[type, str], tuple[str, str] | None] | None] = ContextVar(
    "tenferro_trace_error_rules", default=None
)
"""The rules of the trace being recorded (``None`` outside a trace)."""


def rename(cls: type[BaseException], primitive: str, kind: str, text: str) -> None:
    """Record, while a function is traced, that an error of ``cls`` raised by ``primitive`` is
    presented with ``text`` as a prefix (``kind="prefix"``) or as the whole message
    (``kind="replace"``). Outside a trace this does nothing."""
    rules = RULES.get()
    if rules is None:
        return
    rule = (kind, text)
    if rules.setdefault((cls, primitive), rule) != rule:
        rules[(cls, primitive)] = None  # ambiguous: keep the primitive's message


def _renamed(
    e: BaseException, rules: dict[tuple[type, str], tuple[str, str] | None]
) -> BaseException | None:
    msg = str(e)
    primitive = msg.split(":", 1)[0]
    for (cls, prim), rule in rules.items():
        if rule is not None and prim == primitive and isinstance(e, cls):
            kind, text = rule
            return type(e)(text + msg if kind == "prefix" else text)
    return None


class RenamingGraph:
    """A compiled ``_Graph`` whose ``run`` applies the trace's rules to the errors it raises;
    every other attribute is the graph's."""

    __slots__ = ("_graph", "_rules", "_classes")

    def __init__(self, graph: Any, rules: dict[tuple[type, str], tuple[str, str] | None]) -> None:
        self._graph = graph
        self._rules = rules
        self._classes = tuple({cls for (cls, _), rule in rules.items() if rule is not None})

    def run(self, inputs: list[Any]) -> Any:
        try:
            return self._graph.run(inputs)
        except self._classes as e:
            new = _renamed(e, self._rules)
            if new is None:
                raise
            raise new from e

    def __getattr__(self, name: str) -> Any:
        return getattr(self._graph, name)

    def __len__(self) -> int:
        return len(self._graph)

    def __str__(self) -> str:
        return str(self._graph)

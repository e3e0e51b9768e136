"""Which relations the rules derive, and from what: the rule base's dependency graph (a rule's conclusion depends on the relations of its premises, through `not` and aggregates too)."""
from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from . import model as m
from .check_builtins import aggregate_relations

if TYPE_CHECKING:
    from .rulebase import RuleBase


def _premise_relations(conditions: list[m.Condition]) -> set[str]:
    out: set[str] = set()
    for c in conditions:
        if isinstance(c, m.Atom):
            out.add(c.relation)
        elif isinstance(c, m.Not):
            out.add(c.atom.relation)
        out |= aggregate_relations(c)
    return out


@lru_cache(maxsize=8)      # a rule base is not changed once loaded (a reload makes a new one)
def premises_of(rulebase: "RuleBase") -> dict[str, set[str]]:
    """Relation -> the relations some rule (goal or forward rule) concluding it has among its premises."""
    out: dict[str, set[str]] = {}
    for rule in rulebase.backward_rules:
        out.setdefault(rule.head.relation, set()).update(_premise_relations(rule.premises))
    for fwd in rulebase.forward_rules:
        needs = _premise_relations(fwd.conditions)
        for action in fwd.actions:
            if isinstance(action, m.AssertAction):
                out.setdefault(action.atom.relation, set()).update(needs)
    return out


@lru_cache(maxsize=4096)    # asked per relation of the vocabulary while proofs are weighed
def derived_from(rulebase: "RuleBase", relation: str) -> frozenset[str]:
    """Every relation ``relation`` is derived from through the rules, transitively (itself excluded unless a
    cycle leads back to it)."""
    graph = premises_of(rulebase)
    seen: set[str] = set()
    todo = list(graph.get(relation, ()))
    while todo:
        r = todo.pop()
        if r not in seen:
            seen.add(r)
            todo += graph.get(r, ())
    return frozenset(seen)


def kin(rulebase: "RuleBase", a: str, b: str) -> bool:
    """Two relations one derives from the other, or sharing a relation they derive from (an approval check and the
    limit it tests; a stay's limit and the nightly limit it multiplies)."""
    return bool((derived_from(rulebase, a) | {a}) & (derived_from(rulebase, b) | {b}))

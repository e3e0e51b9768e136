"""A proof through `not` over facts the patterns read rests on a closed-world assumption: "a region not in the
premium table gets the standard rate" holds for a region whose premium cell the patterns missed. Such a proof is
checked against the retrieved text: a sentence or table row pairing the proof's subject with another value of the
proved value's kind, in the words of the relation, sets it aside."""
from __future__ import annotations

from typing import Any, Iterator, Sequence

from pipeline.proof.proving import ProvenAnswer
from pipeline.question.naming import relation_names
from pipeline.seams import PassageLike
from pipeline.text.entities import find_entities
from pipeline.text.sentences import sentences
from pipeline.text.tables import column_at
from pipeline.text.terms import content_terms
from pipeline.text.values import find_values
from symbolic import Node, RuleBase
from symbolic.tables import typed_view
from symbolic.values import format_value, value_type


def assumptions(node: Node) -> Iterator[dict[str, Any]]:
    """The `not` steps of a proof tree (negations as failure), each once per place it is used."""
    for s in node.supports:
        for p in s.premises:
            if isinstance(p, Node):
                yield from assumptions(p)
            elif isinstance(p, dict) and p.get("kind") == "not":
                yield p


def _units(text: str) -> list[tuple[int, int]]:
    """A passage's table rows (lines with a bar) and its other sentences."""
    spans, at = [], 0
    for line in text.splitlines(keepends=True):
        if "|" in line:
            spans.append((at, at + len(line.rstrip("\n"))))
        at += len(line)
    return spans + [(s, e) for s, e in sentences(text) if not any(a <= s < b for a, b in spans)]


def contradicted_assumption(proof: ProvenAnswer, passages: Sequence[PassageLike], rulebase: RuleBase) -> str | None:
    """Why the proof's closed-world step does not hold in the retrieved text, or None."""
    read = {cp.pattern.atom.relation for cp in rulebase.patterns}
    steps = [s for s in assumptions(proof.node) if s.get("relation") in read]
    if not steps:
        return None
    subjects = {a for a in proof.goal.args if isinstance(a, str) and a in rulebase.entities}
    kind = value_type(proof.value)
    words: set[str] = set()
    for rel in {proof.goal.relation, *(s["relation"] for s in steps)}:
        sig = rulebase.relations.get(rel)
        for name in relation_names(sig) if sig is not None else ():
            words |= content_terms(name)
    for p in passages:
        # read as the patterns read: a bare cell with its header's unit ("Rate (EUR) | 20" is EUR 20)
        view = typed_view(p.text, getattr(p, "context_prefix", None))
        text = view.text
        for s, e in _units(text):
            unit = text[s:e]
            if not subjects & {m.entity_id for m in find_entities(unit, rulebase)}:
                continue
            for v, _k, a, _b in find_values(unit):
                if value_type(v) != kind or v == proof.value:
                    continue
                column = column_at(text, s + a, getattr(p, "context_prefix", None))
                if words & content_terms(unit + " " + (" ".join(column.headers) if column else "")):
                    return (f"it rests on `{steps[0]['text']}`, a closed-world assumption over facts the patterns "
                            f"read, and {p.doc_id} pairs it with {format_value(v)} "
                            f"({' '.join(p.text[view.original(s):view.original(e)].split())[:80]!r})")
    return None

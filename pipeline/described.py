"""Entities a question describes by a value instead of naming them ("the robot that can carry 500 kg"): the
one entity that the rule base's and the documents' facts give that value, added to the question's focus, so
that its goals, the answer's claims and the proof are about that entity."""
from __future__ import annotations

from typing import Any, Sequence

from pipeline.bridges import BRIDGE_KINDS
from pipeline.extraction import blanked, find_values
from pipeline.question import EntityMention, QuestionFocus, parse_question


def described_entities(focus: QuestionFocus, rulebase: Any, facts: Sequence[Any]) -> list[EntityMention]:
    """For each measured quantity the question states outside its names, the entity of a type the question
    names none of that the facts (two-place, entity then value) alone give that value; the mention spans the
    value ("500 kg")."""
    named_types = {x.type for x in focus.entities}
    text = blanked(focus.question, [(x.start, x.end) for x in focus.entities])
    out: list[EntityMention] = []
    for value, kind, start, end in find_values(text):
        if kind not in BRIDGE_KINDS:
            continue
        owners = {f.args[0] for f in facts
                  if len(f.args) == 2 and isinstance(f.args[0], str) and f.args[0] in rulebase.entities
                  and _same(f.args[1], value)}
        if len(owners) != 1:
            continue
        owner = rulebase.entities[owners.pop()]
        if owner.type not in named_types and all(x.entity_id != owner.id for x in out):
            out.append(EntityMention(owner.id, owner.type, focus.question[start:end], start, end))
    return out


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except TypeError:   # values of kinds that do not compare
        return False


def with_described(focus: QuestionFocus, rulebase: Any, facts: Sequence[Any]) -> QuestionFocus:
    """``focus`` parsed again with the entities the question describes, or as it is when it describes none."""
    described = described_entities(focus, rulebase, facts)
    return parse_question(focus.question, rulebase, described=described) if described else focus

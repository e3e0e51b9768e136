"""A total asked of several things answered with one part's value: "the total charge for a domestic connection
… and an AquaMeter 300 installation" is not the domestic connection's GBP 1,450 (blind/05 num-02, 0.5B)."""
from __future__ import annotations

from typing import Sequence, cast

from pipeline.checks.grounding import is_bare, values_match
from pipeline.question.answer_types import TOTAL_WORDS
from pipeline.question.focus import QuestionFocus, entity_label
from pipeline.text.entities import find_entities
from pipeline.text.values import EvidenceValue, ValueMention
from symbolic import Claim, RuleBase
from symbolic.values import Value, format_value


def one_part_as_total(focus: QuestionFocus, claims: Sequence[Claim], mentions: Sequence[ValueMention],
                      evidence: Sequence[EvidenceValue], rulebase: RuleBase | None) -> str | None:
    """Why an answer to a total of two or more named things (of one entity type) gives a part: each value it states
    (of its mentions and relation claims) is one a source states, in a row or sentence naming one of those things
    and no other."""
    if rulebase is None or "yesno" in focus.answer_types or not TOTAL_WORDS.search(focus.question):
        return None
    parts = {t: set(ids) for t, ids in focus.ids_by_type.items() if len(ids) >= 2}
    stated: list[tuple[Value, Sequence[str]]] = [(m.value, m.cited) for m in mentions]
    stated += [(cast(Value, c.fact.args[-1]), c.cited) for c in claims
               if c.fact.args and not isinstance(c.fact.args[-1], str)]
    if not parts or not stated:
        return None
    found: list[tuple[Value, str]] = []
    for value, cited in stated:
        if is_bare(value):
            return None
        stating = [ev for ev in evidence if values_match(value, ev.value) and (not cited or ev.doc_id in cited)]
        whose = {_one_part(ev, parts, rulebase) for ev in stating}
        if not stating or None in whose or len(whose) != 1:
            return None
        found.append((value, whose.pop() or ""))
    value, part = found[0]
    return (f"the question asks a total, and the answer states {format_value(value)}, what the sources give for "
            f"{entity_label(rulebase, part)} alone")


def _one_part(ev: EvidenceValue, parts: dict[str, set[str]], rulebase: RuleBase) -> str | None:
    """The one part the row or sentence stating ``ev`` names (and no other of the question's parts), else None."""
    named = {x.entity_id for x in find_entities(ev.context, rulebase) if x.type in parts and x.entity_id in parts[x.type]}
    return named.pop() if len(named) == 1 else None

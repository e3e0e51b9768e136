"""Relation claims written as "label: value" pairs, no model: "per diem (arrival day): EUR 26", "city tier:
Tier 1", Chinese "battery warranty: 12 months": the label names the relation, a bracket after it may name what it
is about, and the value or entity after the colon is the relation's last argument."""
from __future__ import annotations

import re
from typing import Any, Sequence

from pipeline.question.focus import QuestionFocus, param_fits, stated_values
from pipeline.readers.focus import fits, negated, sentence_around
from pipeline.readers.vocabulary import MIN_CLAUSE_SCORE, best_named, entity_subject, vocabulary_claim
from pipeline.text.entities import EntityMention, find_entities
from pipeline.text.glossary import gloss
from pipeline.text.terms import content_terms
from pipeline.text.values import ValueMention
from symbolic import Claim, RuleBase
from symbolic.model import VALUE_TYPES, Param, RelationSig
from symbolic.values import Value

# A label runs from a clause start to a colon, with at most one bracketed qualifier right before the colon.
_LABEL_RE = re.compile(r"(?P<label>[^()（）\[\];；,，。.!?！？:：|\n]{2,60}?)\s*"
                       r"(?:[(（](?P<about>[^()（）\[\]:：]{1,60})[)）])?\s*[:：]\s*")


def label_claims(answer: str, mentions: Sequence[ValueMention], focus: QuestionFocus,
                 rulebase: RuleBase) -> list[tuple[Claim, ValueMention | None]]:
    """A claim for each "label (about): X" whose label names, by MIN_CLAUSE_SCORE at least and better than any
    other, one relation that X (a value of ``mentions``, not negated, or an entity) can end; its subjects
    are the bracket's entities of their types, else found as ``entity_subject`` says, and its values the
    question's own. Returns each claim
    with the value mention it reads (None for an entity)."""
    values = {m.start: m for m in mentions}
    entities = find_entities(answer, rulebase)
    at = {x.start: x for x in entities}
    by_value = [sig for sig in rulebase.relations.values() if sig.arity >= 2 and _placeable(sig)]
    stated = [v for v, _s, _e in stated_values(focus.question, focus.entities, focus.name_spans)]
    out: list[tuple[Claim, ValueMention | None]] = []
    for lm in _LABEL_RE.finditer(answer):
        terms = frozenset(content_terms(lm.group("label")))
        glossed = gloss(lm.group("label"))
        about = find_entities(lm.group("about") or "", rulebase)
        m, x = values.get(lm.end()), at.get(lm.end())
        if m is not None and not negated(answer, m.start):
            sig = best_named([s for s in by_value if fits(s, m.value)], terms, MIN_CLAUSE_SCORE, rulebase=rulebase,
                             glossed=glossed)
            last: Any = m.value
        elif x is not None:
            sig = best_named(_entity_valued(rulebase, x.type), terms, MIN_CLAUSE_SCORE, rulebase=rulebase,
                             glossed=glossed)
            last = x.entity_id
        else:
            continue
        if sig is None:
            continue
        s, e = sentence_around(answer, lm.start())
        in_sentence = [y for y in entities if s <= y.start < e and y is not x]
        subjects = [_stated(p, stated) if p.type in VALUE_TYPES else
                    _about(p.type, about) or entity_subject(p.type, 0, [], in_sentence, focus, rulebase, (sig.name, i))
                    for i, p in enumerate(sig.params[:-1])]
        if None not in subjects:
            out.append((vocabulary_claim(sig.name, (*subjects, last), answer, s, e, m.cited if m else []), m))
    return out


def _placeable(sig: RelationSig) -> bool:
    """Arguments before the last that a label can place: entities of distinct types, and values the question
    states ("volume discount: 8 %" to "what do 10 robots cost?" is the discount for 10)."""
    entity_types = [p.type for p in sig.params[:-1] if p.type not in VALUE_TYPES]
    return len(set(entity_types)) == len(entity_types)


def _stated(param: Param, stated: list[Value]) -> Value | None:
    """The question's one value that fits ``param``, else None."""
    fitting = list(dict.fromkeys(v for v in stated if param_fits(param, v)))
    return fitting[0] if len(fitting) == 1 else None


def _entity_valued(rulebase: RuleBase, etype: str) -> list[RelationSig]:
    """Two-place relations from another entity type to ``etype`` ("city tier": city -> tier)."""
    return [sig for sig in rulebase.relations.values()
            if sig.arity == 2 and sig.params[1].type == etype
            and sig.params[0].type not in VALUE_TYPES and sig.params[0].type != etype]


def _about(etype: str, about: list[EntityMention]) -> str | None:
    ids = list(dict.fromkeys(x.entity_id for x in about if x.type == etype))
    return ids[0] if len(ids) == 1 else None


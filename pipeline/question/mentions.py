"""Which of a question's entity mentions name the entity: a shorter name of it that the question qualifies with
another word than the entity's own ("incoming loans" where the entity is "outgoing loans", "line manager" where it
is the "Depot Manager" title) names a kind the rule base has no entity for. English only: a Chinese question's
words are not spaced, and a qualifier cannot be told from the word before it."""
from __future__ import annotations

import re
from typing import Sequence

from pipeline.text.entities import EntityMention
from pipeline.text.terms import content_terms
from symbolic import RuleBase

_WORD_BEFORE = re.compile(r"([A-Za-z][\w-]*)\s+$")
_WORD_AFTER = re.compile(r"\s+([A-Za-z][\w-]*)")


def qualified_otherwise(question: str, mention: EntityMention, mentions: Sequence[EntityMention],
                        rulebase: RuleBase) -> bool:
    """Whether ``mention`` is a part of its entity's label ("loans" of "outgoing loans") that the question qualifies
    with a content word of its own right before it ("incoming loans"), as the head of a noun phrase (no content word
    follows it: "the current loans policy" is about a policy), while the label's own qualifying words are nowhere
    in the question."""
    entity = rulebase.entities.get(mention.entity_id)
    if entity is None or not entity.label:
        return False
    label, said = content_terms(entity.label), content_terms(mention.text)
    own = label - said
    if not said or not own or not said < label or own & content_terms(question):
        return False
    m = _WORD_BEFORE.search(question, 0, mention.start)
    if m is None or any(x.start <= m.start(1) < x.end for x in mentions):
        return False
    after = _WORD_AFTER.match(question, mention.end)
    if after is not None and content_terms(after.group(1)):
        return False      # "the current loans policy": the mention qualifies a noun after it, and is qualified by nothing
    word = content_terms(m.group(1))
    return bool(word) and not word & label


def named_mentions(question: str, mentions: Sequence[EntityMention],
                   rulebase: RuleBase) -> tuple[list[EntityMention], frozenset[str]]:
    """(``mentions`` without the entities one of whose mentions the question qualifies otherwise, the types of
    those): that entity is not what it names anywhere ("the loan administration fee for incoming loans" names no
    outgoing loan), and the question names another of its type, which no default may stand in for."""
    other = [x for x in mentions if qualified_otherwise(question, x, mentions, rulebase)]
    dropped = {x.entity_id for x in other}
    return [x for x in mentions if x.entity_id not in dropped], frozenset(x.type for x in other)

"""Relation claims written with a relation's own name as the subject of "is", no model: "The hotel stay cost
for Paris, 4 nights is EUR 720", "The city tier for Berlin is Tier 2", Chinese "Guangzhou, 3 nights' accommodation
cost is CNY 2,100", "S2: acknowledge within 30 minutes". The name is one of the rule author's (label or alias, as
written), what stands between it and the verb names the other arguments, and the value or entity right after the
verb is the last. The engine's own composed answers have this form, and models often echo a label so."""
from __future__ import annotations

import dataclasses
import functools
import re
import weakref
from typing import Any, Sequence

from pipeline.lang import Lexicon, alternation
from pipeline.question.focus import QuestionFocus, param_fits, stated_values
from pipeline.question.naming import relation_names
from pipeline.readers.focus import fits
from pipeline.readers.vocabulary import entity_subject
from pipeline.seams import PassageLike
from pipeline.text.citations import cited_for
from pipeline.text.entities import EntityMention, find_entities
from pipeline.text.script import is_chinese
from pipeline.text.sentences import sentences
from pipeline.text.values import ValueMention, find_values
from pipeline.text.wording import plain_label
from symbolic import Claim, Fact, Provenance, RuleBase
from symbolic.model import VALUE_TYPES, Param, RelationSig
from symbolic.values import Quantity, Value

# The reading follows the rule author's own name for the relation: as strong as the vocabulary reader's.
PHRASE_CLAIM_CF = 0.9

# The verbs of "<name> is <value>" (lang/<code>/readers.toml naming_verbs): English ones between spaces, Chinese
# ones with or without.
_VERB_EN = rf"\s+(?:{'|'.join(Lexicon.load('en').words('readers.naming_verbs'))})\s+"
_VERB_ZH = rf"\s*(?:{'|'.join(Lexicon.load('zh').words('readers.naming_verbs'))})\s*"
# The article before an English name, the prepositions before its other arguments ("the city tier for Berlin"), and
# the possessive particle after a Chinese sentence's other arguments, before the name.
_ARTICLE = alternation("readers.name_articles")
_PREPOSITION = alternation("readers.name_prepositions")
_POSSESSIVE = alternation("readers.possessive_particles")
_SUBJECT_EN = r"[^.;:()\[\]|\n]{1,100}?"
_SUBJECT_ZH = r"[^。；;：:！？!?()（）\[\]|\n]{1,40}?"


@dataclasses.dataclass(frozen=True)
class _Form:
    relation: str
    regex: re.Pattern[str]
    needle: str      # the name's first word (lower case): a text without it cannot match, and is not scanned


_FORMS: "weakref.WeakKeyDictionary[Any, list[_Form]]" = weakref.WeakKeyDictionary()


def _forms(rulebase: RuleBase) -> list[_Form]:
    """For each name of each relation, the sentence forms that use it as the subject of "is" (cached per
    rule base): with the other arguments after "for"/"of" or before a colon (English), before a possessive
    particle (Chinese: _POSSESSIVE), or none."""
    forms = _FORMS.get(rulebase)
    if forms is not None:
        return forms
    forms = []
    for sig in rulebase.relations.values():
        for name in dict.fromkeys(plain_label(n) for n in relation_names(sig)):
            if len(name) < 2:
                continue
            words = r"\s*".join(re.escape(w) for w in name.split()) if is_chinese(name) else \
                r"\s+".join(re.escape(w) for w in name.split())
            if is_chinese(name):
                regexes = [rf"(?P<subject>{_SUBJECT_ZH})(?:{_POSSESSIVE})\s*(?P<name>{words}){_VERB_ZH}",
                           rf"(?:^|(?<=[。；;\n]))\s*(?P<name>{words}){_VERB_ZH}"]
            else:
                bound = r"(?<![A-Za-z0-9])"
                regexes = [rf"{bound}(?:(?:{_ARTICLE})\s+)?(?P<name>{words})\s+(?:{_PREPOSITION})\s+"
                           rf"(?P<subject>{_SUBJECT_EN}){_VERB_EN}",
                           rf"(?:^|(?<=[.;!?\n]))\s*(?P<subject>[^.;:!?()\[\]|\n]{{1,80}}):\s+(?P<name>{words})\s+",
                           rf"{bound}(?:{_ARTICLE})\s+(?P<name>{words}){_VERB_EN}",
                           # a Chinese sentence using a relation that has only an English name (Chinese for "Berlin's
                           # hotel limit per night is EUR 140", the name in English): how the engine composes it, and
                           # how a model echoes it
                           rf"(?P<subject>{_SUBJECT_ZH})(?:{_POSSESSIVE})\s*(?P<name>{words}){_VERB_ZH}"]
            needle = name.split()[0].lower() if name.split() else name
            forms += [_Form(sig.name, re.compile(r, re.IGNORECASE), needle) for r in regexes]
    _FORMS[rulebase] = forms
    return forms


def phrase_claims(answer: str, passages: Sequence[PassageLike], focus: QuestionFocus,
                  rulebase: RuleBase) -> list[Claim]:
    """A claim for each "<name> for <subject> is <X>" (and the forms ``_forms`` lists) where X, right after
    the verb, is a value or entity the relation can end with (so "is not X" reads nothing), and the
    subject's entities and values place every argument before the last, each of its own parameter, none
    left over; an argument the subject does not name is the sentence's, the question's or the type's only
    entity of its type, or the question's only value that fits. One claim per value: the longest name wins."""
    values = {s: (v, e) for v, _kind, s, e in find_values(answer)}    # start -> (value, end)
    entities = find_entities(answer, rulebase)
    entity_at = {x.start: x for x in entities}
    sents = sentences(answer)
    stated = [v for v, _s, _e in stated_values(focus.question, focus.entities, focus.name_spans)]
    found: dict[int, Claim] = {}
    lowered = answer.lower()
    last: Value | str
    for form in _forms(rulebase):
        if form.needle not in lowered:
            continue
        sig = rulebase.relations[form.relation]
        for m in form.regex.finditer(answer):
            at = m.end()
            if at in values and fits(sig, values[at][0]):
                last, end = values[at]
            elif at in entity_at and _ends_with_entity(sig, entity_at[at]):
                last, end = entity_at[at].entity_id, entity_at[at].end
            else:
                continue
            subject = m.groupdict().get("subject")
            start = m.start("name")
            if subject is not None:
                lead = len(subject) - len(subject.lstrip("，, "))
                start = min(start, m.start("subject") + lead)
            args = _arguments(sig, subject or "", m.start("subject") if subject is not None else at, sents,
                              entities, focus, stated, rulebase)
            if args is None:
                continue
            prior = found.get(at)
            if prior is not None and len(prior.text) >= end - start:
                continue
            fact = Fact(sig.name, (*args, last), PHRASE_CLAIM_CF, Provenance("answer", start=start, end=end))
            found[at] = Claim(fact, answer[start:end], start, end, cited_for((start, end), sents, answer, passages),
                              extractor="phrase")
    return sorted(found.values(), key=lambda c: c.start)


def _ends_with_entity(sig: RelationSig, x: EntityMention) -> bool:
    return sig.params[-1].type not in VALUE_TYPES and sig.params[-1].type == x.type


def _arguments(sig: RelationSig, subject: str, offset: int, sents: Sequence[tuple[int, int]],
               entities: Sequence[EntityMention], focus: QuestionFocus, stated: Sequence[Value],
               rulebase: RuleBase) -> tuple | None:
    """The arguments before the last, read from ``subject`` (at ``offset`` in the answer, whose sentences are
    ``sents``), else the sentence's, the question's or the type's only entity (entity_subject) or the question's
    only fitting value; None when one cannot be placed, is placed twice, or the subject names something no
    parameter takes."""
    named = [x for x in entities if offset <= x.start and x.end <= offset + len(subject)]
    blank = list(subject)
    for x in named:
        blank[x.start - offset:x.end - offset] = " " * (x.end - x.start)
    subject_values = [v for v, _k, _s, _e in find_values("".join(blank))]
    used_entities: set[str] = set()
    used_values: list[Any] = []
    args: list[Any] = []
    around = next(((s, e) for s, e in sents if s <= offset < e), None)
    sentence = [x for x in entities if around is not None and around[0] <= x.start < around[1]]
    for i, p in enumerate(sig.params[:-1]):
        if p.type in VALUE_TYPES:
            fitting = list(dict.fromkeys(_as_param(p, v) for v in subject_values if _as_param(p, v) is not None))
            if not fitting:
                fitting = list(dict.fromkeys(v for v in stated if param_fits(p, v)))
                if len(fitting) != 1:
                    return None
            elif len(fitting) != 1:
                return None
            else:
                used_values.append(fitting[0])
            args.append(fitting[0])
            continue
        ids = list(dict.fromkeys(x.entity_id for x in named if x.type == p.type))
        if len(ids) > 1:
            return None
        eid = ids[0] if ids else entity_subject(p.type, 0, [], sentence, focus, rulebase, (sig.name, i))
        if eid is None:
            return None
        used_entities.update(ids)
        args.append(eid)
    if {x.entity_id for x in named} - used_entities or len(used_values) < len(subject_values):
        return None
    return tuple(args)


def _as_param(p: Param, value: Value) -> Value | None:
    """``value`` as an argument of ``p``: itself when it fits; a count said with the parameter's own name
    ("4 days" for ``days: number``) as the plain number."""
    if param_fits(p, value):
        return value
    if p.type == "number" and p.name and isinstance(value, Quantity) and value.unit \
            and _stem(p.name) == _stem(value.unit):
        return Quantity(value.value)
    return None


@functools.lru_cache(maxsize=256)
def _stem(word: str) -> str:
    word = word.lower().strip()
    return word[:-1] if word.endswith("s") else word


def displaced(claims: Sequence[Claim], phrased: Sequence[Claim]) -> list[Claim]:
    """``claims`` less those that read a value a phrase claim reads as another fact (another relation or other
    arguments) from an overlapping span: the relation's own name outweighs a pattern's looser wording."""
    def rival(c: Claim, p: Claim) -> bool:
        return c.fact.key != p.fact.key and c.fact.args[-1:] == p.fact.args[-1:] and c.start < p.end and \
            p.start < c.end and not _read_onwards(c, p)
    return [c for c in claims if not any(rival(c, p) for p in phrased)]


def _read_onwards(c: Claim, p: Claim) -> bool:
    """The pattern claim reads the phrase claim's value with the words after it, the phrase with the words before
    it: the sentence says both ("The per diem for a full travel day is EUR 52 for the day of arrival" gives EUR 52
    to the arrival day too, and that reading must be checked)."""
    return p.start < c.start and c.end > p.end


def merged(claims: Sequence[Claim], phrased: Sequence[Claim]) -> list[Claim]:
    """``claims`` with the phrase claims they do not already make, less the ones those displace."""
    new = [p for p in phrased if not any(c.fact.key == p.fact.key and c.start < p.end and p.start < c.end
                                         for c in claims)]
    return displaced(claims, phrased) + new


def unread(mentions: Sequence[ValueMention], phrased: Sequence[Claim]) -> list[ValueMention]:
    """The value mentions no phrase claim ends with."""
    return [m for m in mentions if not any(p.end == m.end and p.start <= m.start for p in phrased)]

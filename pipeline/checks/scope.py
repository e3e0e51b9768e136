"""Whether an answer is about what was asked, beyond its words: the entity its values are stated about, the
condition they are stated under, the relations it names, and whether it says anything twice."""
from __future__ import annotations

import re
from typing import Sequence

from pipeline.checks.grounding import is_bare, values_match
from pipeline.evidence.scope import Scope, source_conflict
from pipeline.lang import alternation
from pipeline.proof.proving import ProvenAnswer
from pipeline.question.answer_types import asking_clause, asks_two
from pipeline.question.codes import asked_codes, names_other_codes
from pipeline.question.focus import QuestionFocus, entity_label, sole_entities
from pipeline.readers.focus import negated
from pipeline.text.entities import find_entities
from pipeline.text.script import is_chinese
from pipeline.text.sentences import clause_around, sentences
from pipeline.text.terms import content_terms
from pipeline.seams import PassageLike
from pipeline.text.values import EvidenceValue, ValueMention, find_values
from pipeline.types import ClaimReport
from symbolic import Claim, RuleBase


def repeats_itself(text: str) -> bool:
    """A sentence said twice (a model caught in a loop: "The data is only available for 30 days ... The data is
    only available for 30 days ...", shipped mh-04 with the 135M model); short ones ("Yes.") may repeat."""
    seen: set[str] = set()
    for s, e in sentences(text):
        said = re.sub(r"\W+", " ", text[s:e]).strip().lower()
        if len(said.split()) < 4 and len(said) < 8:
            continue
        if said in seen:
            return True
        seen.add(said)
    return False


def relation_terms(rulebase: RuleBase, relation: str, *, chinese: bool = False) -> set[str]:
    """The content terms of a relation's names (identifier, label, aliases) in one language: Chinese names
    for ``chinese``, the others otherwise (empty when the rule files give it none in that language)."""
    sig = rulebase.relations.get(relation)
    names = [relation.replace("_", " ")] + ([sig.label or "", *sig.aliases] if sig is not None else [])
    names = [n for n in names if is_chinese(n) == chinese]
    return set().union(set(), *(content_terms(n) for n in names))


def about_another(focus: QuestionFocus, mentions: Sequence[ValueMention], evidence: Sequence[EvidenceValue],
                   rulebase: RuleBase | None) -> str | None:
    """Why a value answers about another entity: every source stating it is about one of the asked entity's
    type that the question does not ask about (its row, section or document title names that one and none
    asked), as a Chinese "every 2,000 operating hours" from the AX-200 manual for a question about the LX-500. A
    code the question names that no entity covers ("XR-40" with no domain rules) is held to the same: a value
    every source of which names only other codes ("LC-220") is not about it."""
    return _about_another_entity(focus, mentions, evidence, rulebase) or _about_another_code(focus, mentions, evidence)


def _about_another_code(focus: QuestionFocus, mentions: Sequence[ValueMention],
                        evidence: Sequence[EvidenceValue]) -> str | None:
    asked = asked_codes(focus)
    for m in mentions:
        stating = [ev for ev in evidence if ev.value == m.value and not is_bare(m.value)]
        others = [names_other_codes(asked, " ".join((ev.title, ev.heading, ev.context))) for ev in stating]
        if stating and all(others):
            return f"its value {m.text!r} is stated about {sorted(o for o in others if o)[0]}, but the question " \
                   f"asks about {sorted(asked)[0]}"
    return None


def _about_another_entity(focus: QuestionFocus, mentions: Sequence[ValueMention], evidence: Sequence[EvidenceValue],
                          rulebase: RuleBase | None) -> str | None:
    if rulebase is None or not focus.entities:
        return None
    asked = {(e.type, e.entity_id) for e in focus.entities}
    types = {t for t, _ in asked}
    for m in mentions:
        # a bare number too ("1.80" from another product's rate card, GBP by its column header: blind/02 un-01),
        # by the sources that ground it (grounding.values_match)
        stating = [ev for ev in evidence if values_match(m.value, ev.value)]
        abouts = [{(e.type, e.entity_id) for e in find_entities(" ".join((ev.title, ev.heading, ev.context)),
                                                                 rulebase) if e.type in types} for ev in stating]
        if stating and all(named and not named & asked for named in abouts):
            other = sorted(eid for named in abouts for _t, eid in named)[0]
            asked_id = sorted(eid for _t, eid in asked)[0]
            return f"its value {m.text!r} is stated about {other}, but the question asks about {asked_id}"
    return None


def stated_for_another(text: str, mentions: Sequence[ValueMention], evidence: Sequence[EvidenceValue],
                       scope: Scope, rulebase: RuleBase | None) -> str | None:
    """Why a value is not the asked one's: every source stating it attributes it to another entity of a type the
    question's scope holds, through the nearest context that names one (its table row or sentence, else its section
    heading, else its document title), while the answer's own clause does not name that entity (it says the value
    as the asked one's). "Dan Kirby's emergency works limit is 500,000 GBP" where 500,000 stands in the row of grade
    E2 and Dan Kirby's title is of grade M2 (the scope follows the facts' links: pipeline.evidence.scope)."""
    if rulebase is None or not scope:
        return None
    for m in mentions:
        if is_bare(m.value):
            continue
        s, e = clause_around(text, m.start, m.end)
        said_here = {x.entity_id for x in find_entities(text[s:e], rulebase)}
        stating = [ev for ev in evidence if values_match(m.value, ev.value) and (not m.cited or ev.doc_id in m.cited)]
        others = [_attributed_elsewhere(ev, scope, rulebase) for ev in stating]
        if stating and all(others) and not said_here & {i for o in others for i in o}:
            other = sorted(i for o in others for i in o)[0]
            etype = rulebase.entities[other].type if other in rulebase.entities else ""
            asked = " or ".join(sorted(entity_label(rulebase, i) for i in scope.get(etype, ())))
            return (f"its value {m.text!r} is stated for {entity_label(rulebase, other)}, and the question is about "
                    f"{asked}")
    return None


def _attributed_elsewhere(ev: EvidenceValue, scope: Scope, rulebase: RuleBase) -> set[str]:
    """The entities the nearest context of ``ev`` naming one of a scope type attributes it to, where none of them
    is in the scope; empty where it names one in scope, or none at all."""
    for context in (ev.context, ev.heading, ev.title):
        named: dict[str, set[str]] = {}
        for x in find_entities(context or "", rulebase):
            if x.type in scope:
                named.setdefault(x.type, set()).add(x.entity_id)
        if named:
            if any(ids & scope[t] for t, ids in named.items()):
                return set()
            return set().union(*named.values())
    return set()


def values_for_the_unasked(focus: QuestionFocus, text: str, mentions: Sequence[ValueMention]) -> str | None:
    """Why an answer to one question states another subject's value: two values of one kind in two clauses of
    the same build (they share a word: a list copied from a source), one clause sharing words with the question
    and the other none (a Chinese "works on paper are lit at most 50 lux, oil paintings at most 200 lux" to a
    question about works on paper: the oil paintings' 200 lux is no part of the answer). A clause that shares no
    word with the other (a deadline after an amount, a computation) is not such a list."""
    if asks_two(focus.question):
        return None
    asked = content_terms(focus.question)
    clauses = []
    for m in mentions:
        s, e = clause_around(text, m.start, m.end)
        clauses.append((m, (s, e), content_terms(text[s:e]), _kind(m)))
    for m, span, terms, kind in clauses:
        if not terms or terms & asked:
            continue
        if any(k == kind and sp != span and t & asked and t & terms for _m, sp, t, k in clauses):
            return f"it also states {m.text!r}, for something the question does not ask about"
    return None


def _kind(m: ValueMention) -> tuple:
    v = m.value
    return (m.kind, getattr(v, "dimension", None), getattr(v, "currency", None))


def about_no_one_asked(focus: QuestionFocus, text: str, claims: Sequence[Claim], mentions: Sequence[ValueMention],
                       evidence: Sequence[EvidenceValue], rulebase: RuleBase | None) -> str | None:
    """Why a worded answer is about none of the asked entities: it names none, no claim of it is about one, and
    every source stating its values names none in its sentence, row, section or document title ("The context
    states that a 20-character password must contain characters from 3 of 4 classes" to "... acceptable for a
    service account?"). A terse answer ("5,000 operating hours [1]") is read through its source row instead, and a value
    no source states is the grounding check's to judge."""
    if rulebase is None or not mentions or claims or len(content_terms(text)) < _WORDED:
        return None
    sole = set(sole_entities(rulebase).values())
    asked = {(t, i) for t, i in asked_entities(focus) if i not in sole}
    if not asked or {(x.type, x.entity_id) for x in find_entities(text, rulebase)} & asked:
        return None
    for m in mentions:
        stating = [ev for ev in evidence if values_match(m.value, ev.value)]
        if not stating or any({(x.type, x.entity_id) for x in find_entities(
                " ".join((ev.title, ev.heading, ev.context)), rulebase)} & asked for ev in stating):
            return None
    return f"it does not say it is about {', '.join(sorted(i for _t, i in asked))}, nor do the sources of its values"


_WORDED = 6   # content terms of an answer that says more than a value and what it is ("rated payload")


def cited_evidence(m: ValueMention, evidence: Sequence[EvidenceValue]) -> list[EvidenceValue]:
    """The evidence of the sources the answer cites for ``m`` that states its value."""
    return [ev for ev in evidence if ev.doc_id in m.cited and values_match(m.value, ev.value)]


# A condition a source negates: "robots ... if they have not been commissioned", "never used", "non-standard",
# "unopened" (English only: a Chinese source's "not yet"/"not" conditions are not read; lang/<code>/checks.toml
# negated_condition)
_NEGATED_CONDITION = re.compile(alternation("checks.negated_condition"), re.IGNORECASE)


def drops_a_negation(text: str, mentions: Sequence[ValueMention], evidence: Sequence[EvidenceValue]) -> str | None:
    """Why a value answers under the opposite condition: its cited source's paragraph or list item states it
    for what is *not* X, and the answer's clause holding it uses X, unnegated, to qualify a noun that source
    names, a use the source never makes itself ("The restocking fee for commissioned robots is 20 %" from
    "Robots may be returned within 14 days of delivery if they have not been commissioned. A restocking fee of
    20 % of the price is charged.", shipped fp-08 with the 0.5B model). Only the attributive use counts:
    "receipts are required above EUR 25" against "not required below EUR 25" restates a threshold from its
    other side, and is right."""
    for m in mentions:
        s, e = clause_around(text, m.start, m.end)  # "Commissioned robots cannot be returned; others pay 20 %"
        for ev in cited_evidence(m, evidence):
            source = ev.block or ev.context
            words = set(re.findall(r"[a-z]+", source.lower()))
            for neg in _NEGATED_CONDITION.finditer(source):
                term = next(g for g in neg.groups() if g).lower()
                for use in re.finditer(rf"\b{re.escape(term)}\s+([a-z]{{3,}})", text[s:e], re.IGNORECASE):
                    phrase = use.group(0).lower()
                    if use.group(1).lower() in words and phrase not in source.lower() \
                            and not negated(text, s + use.start()):
                        return (f"its source states {m.text!r} for what is {neg.group(0).strip()!r}, and the answer "
                                f"states it for {use.group(0)!r}")
    return None


# A worked example: a sentence that opens as one ("Example: a shipment of EUR 2,000 ... pays EUR 170", a Chinese
# "Example: …"), or any sentence of a section headed "Examples" (in Chinese too; lang/<code>/checks.toml
# example_openers, example_headings)
_EXAMPLE_SENTENCE = re.compile(rf"^\W*(?:{alternation('checks.example_openers')})\s*[:：,，]",
                               re.IGNORECASE)
_EXAMPLE_HEADING = re.compile(alternation("checks.example_headings"), re.IGNORECASE)


def from_an_example(question: str, mentions: Sequence[ValueMention], evidence: Sequence[EvidenceValue]) -> str | None:
    """Why a value does not answer: every cited source stating it is a worked example, whose figure holds for the
    example's own case, and the question states none of that case's values ("What is the fuel surcharge in Band
    3?" answered with the EUR 170 of "Example: a shipment with a freight charge of EUR 2,000 ... pays a fuel
    surcharge of EUR 170"; held-out sup-02 with the 0.5B model). A question about the example's case ("... on a
    EUR 2,000 freight charge ...") may take its figure."""
    asked = [v for v, *_ in find_values(question)]
    for m in mentions:
        stating = cited_evidence(m, evidence)
        if not stating or not all(_EXAMPLE_SENTENCE.match(ev.context) or _EXAMPLE_HEADING.search(ev.heading)
                                  for ev in stating):
            continue
        # the case is what the example states with a unit ("EUR 2,000", "EUR 1.91"): a bare number names ("Band 3")
        case = [v for ev in stating for v, *_ in find_values(ev.context)
                if not values_match(v, m.value) and not is_bare(v)]
        if not any(values_match(a, v) for a in asked for v in case):
            return f"its value {m.text!r} is the figure of a worked example in the sources, not of the case asked about"
    return None


def asked_entities(focus: QuestionFocus) -> set[tuple[str, str]]:
    """The (type, id) of the entities the question asks about: of each type, those its asking clause names,
    else those it names anywhere (a Chinese "a Shenzhen employee travels to Guangzhou and stays 3 nights; how much
    is the hotel …?" asks about Guangzhou)."""
    s, e = asking_clause(focus.question)
    named = {(x.type, x.entity_id) for x in focus.entities}
    in_clause = {(x.type, x.entity_id) for x in focus.entities if s <= x.start and x.end <= e}
    clause_types = {t for t, _ in in_clause}
    return in_clause | {(t, i) for t, i in named if t not in clause_types}


def about_another_subject(text: str, proof: ProvenAnswer, rulebase: RuleBase | None) -> str | None:
    """The proved value said of another entity than the proof's ("the XR-40 has a 1.1 kW power rating" where
    the LC-220 is the instrument asked about, and its rating 1.1 kW): the right figure, the wrong thing."""
    if rulebase is None:
        return None
    said = find_entities(text, rulebase)
    for arg in proof.goal.args:
        entity = rulebase.entities.get(arg) if isinstance(arg, str) else None
        if entity is None:
            continue
        same_type = {m.entity_id for m in said if m.type == entity.type}
        if same_type and arg not in same_type:
            return f"it is about {sorted(same_type)[0]}, but the answer the documents give is about {arg}"
    return None


def for_someone_else(reports: Sequence[ClaimReport], scope: Scope, passages: Sequence[PassageLike],
                     rulebase: RuleBase | None) -> str | None:
    """A supported claim resting on a relation or documents scoped to another entity than the one the question
    asks about (pipeline.evidence.scope): "the Hangzhou standby allowance" to a Dublin employee's question."""
    if rulebase is None or not scope:
        return None
    by_doc = {p.doc_id: p for p in passages}
    for r in reports:
        if r.verdict != "supported":
            continue
        docs = [by_doc[d] for d in dict.fromkeys([*(e.get("doc_id") for e in r.evidence), *r.cited]) if d in by_doc]
        found = source_conflict(scope, r.relation if r.kind == "relation" else None, docs, rulebase)
        if found is not None:
            return f"{r.text!r} answers for someone else: {found.reason(rulebase)}"
    return None

"""The proof as one sentence in the question's language: the relation's label, its subject (the entities,
then the values the question gave), the value as the source writes it, the steps of the rule's chain, and the
citations of the sources that state its facts."""
from __future__ import annotations

import re
from typing import Any, Sequence, cast

from pipeline.lang import alternation, phrase, words
from pipeline.proof.proving import ProvenAnswer
from pipeline.question.focus import sole_entities
from pipeline.text.entities import EntityMention
from pipeline.text.values import find_values, same_value
from pipeline.text.wording import plain_label, say_value
from symbolic import Node, RuleBase
from symbolic.model import VALUE_TYPES, RelationSig


def _label(sig: RelationSig, chinese: bool) -> str:
    names = [sig.label, *sig.aliases] if sig.label else [*sig.aliases, sig.name.replace("_", " ")]
    if chinese:
        zh = [n for n in names if any("\u4e00" <= ch <= "\u9fff" for ch in n)]
        if zh:
            return plain_label(zh[0])
    latin = [n for n in names if n and not any("\u4e00" <= ch <= "\u9fff" for ch in n)]
    return plain_label(latin[0] if latin else sig.name.replace("_", " "))


# A label ending in a preposition reads as a verb phrase ("acknowledge within"): "S2: acknowledge within 30
# minutes" rather than "The acknowledge within for S2 is ...".
# (A word of its own: "carry-over" is a noun.) The prepositions: lang/<code>/answers.toml verbal_endings.
_VERBAL_END = re.compile(rf"(?:^|\s)(?:{alternation('answers.verbal_endings')})$", re.IGNORECASE)


# A label that names its subject's type as an owner ("a person's approval limit") is said of the subject itself:
# "Jonah Petrakis's approval limit", not "the person's approval limit for Jonah Petrakis".
_POSSESSED_LABEL = re.compile(r"^\w+['’]s\s+(.+)$")


# A label ending in its subject's type ("purchase order limit of a person"; lang/<code>/answers.toml owner_links).
_OWNER_LINKS = words("answers.owner_links")


def _owner_free(label: str, subject_type: str, rulebase: RuleBase) -> str:
    """``label`` without a closing "of a person" that names its subject's type: said of one subject, the type is
    that subject ("The purchase order limit for Tomasz Nowak", not "... limit of a person for Tomasz Nowak")."""
    etype = rulebase.types.get(subject_type)
    names = {subject_type.replace("_", " "), *((etype.label or "",) if etype else ()), *(etype.aliases if etype else ())}
    low = label.lower()
    for link in _OWNER_LINKS:
        for name in sorted((n for n in names if n), key=len, reverse=True):
            tail = f" {link} {name.lower()}"
            if low.endswith(tail) and len(low) > len(tail):
                return label[:-len(tail)]
    return label


_ADJECTIVAL = re.compile(r"^\d[\d.,]*-[A-Za-z]+$")

# Where a label's head noun phrase ends: "rest between shifts" is a rest, "days a band is published" are days
# (lang/<code>/answers.toml head_ends).
_HEAD_END = re.compile(rf"\s+(?:{alternation('answers.head_ends')})\b", re.IGNORECASE)
# A head noun ending in "s" that is no plural ("pass", "campus")
_NOT_PLURAL_ENDINGS = words("answers.not_plural_endings")


def _plural(label: str) -> bool:
    """The label's head noun is an English plural ("seats", "Euro pallets", "renewals"; not "30-day pass",
    "campus", "rest between shifts")."""
    head = _HEAD_END.split(f" {label}", maxsplit=1)[0].split()
    word = head[-1].lower() if head else ""
    return len(word) > 3 and word.endswith("s") and not word.endswith(_NOT_PLURAL_ENDINGS)


def _entity_name(rulebase: RuleBase, eid: object, chinese: bool) -> str:
    e = rulebase.entities.get(eid) if isinstance(eid, str) else None
    if e is None:
        return say_value(eid, chinese)
    if chinese:
        zh = [n for n in e.names if any("\u4e00" <= ch <= "\u9fff" for ch in n)]
        if zh:
            return zh[0]
    return e.label


def _steps(proof: ProvenAnswer, rulebase: RuleBase, chinese: bool, max_depth: int = 3) -> list[str]:
    """The intermediate facts of a multi-hop or computed proof, as "city tier: Tier 2" or "per diem (arrival
    day): EUR 26": the premises of its rules, depth first (not into a recursive chain), that bind a value not
    yet said, other than a row the proved value is read from; a premise about an entity the question did not
    name says which."""
    said: list[Any] = [*proof.goal.args, proof.value]
    quiet = set(sole_entities(rulebase).values())
    out: list[str] = []

    def walk(node: Node, depth: int) -> None:
        rule_support = next((s for s in node.supports if s.rule is not None), None)
        if rule_support is None or depth > max_depth:
            return
        for p in rule_support.premises:
            if not isinstance(p, Node):
                continue
            # a row the proved value is read from ("performance row (95 t, 25 km/h): 10 km/h" for a weight of
            # 95 t) shows no step of the proof, only its other cells
            read_from = any(same_value(a, proof.value) for a in p.args[:-1])
            if p.relation != proof.goal.relation and p.args[-1] not in said and not read_from:
                said.append(p.args[-1])
                sig = rulebase.relations.get(p.relation)
                label = _label(sig, chinese) if sig else p.relation
                about = [_entity_name(rulebase, a, chinese) for a in p.args[:-1] if a not in said and a not in quiet]
                if about:
                    label += f"（{'，'.join(about)}）" if chinese else f" ({', '.join(about)})"
                out.append(f"{label}{'：' if chinese else ': '}{_entity_name(rulebase, p.args[-1], chinese)}")
            if not _recursive(p):
                walk(p, depth + 1)

    walk(proof.node, 0)
    return out


def _recursive(node: Node) -> bool:
    """A conclusion drawn through its own relation (a management chain, ancestors): its conclusion says
    enough; each link of the chain would be a step."""
    support = next((s for s in node.supports if s.rule is not None), None)
    return support is not None and any(isinstance(p, Node) and p.relation == node.relation for p in support.premises)


# A count as a Chinese question writes it: the number and its measure word ("3" and the measure word of nights).
_ZH_COUNT = re.compile(r"[\d,.]+\s*[\u4e00-\u9fff]")


def _said_count(question: str, stated: Sequence[tuple[int, int]], value: object) -> str | None:
    """How a Chinese ``question`` writes the count ``value`` its goal binds at one of ``stated`` spans."""
    for s, _e in stated:
        m = _ZH_COUNT.match(question, s)
        if m and any(v == value for v, *_ in find_values(question[s:m.end() - 1])):
            return m.group(0)
    return None


def _subject(proof: ProvenAnswer, rulebase: RuleBase, chinese: bool, question: str = "") -> str:
    """The goal's bound arguments as words: the entities ("Paris"), then the values the question gave, a
    count read with its parameter's name ("4 nights"), or as a Chinese question writes it (with its measure
    word)."""
    sig = rulebase.relations[proof.goal.relation]
    names, values = [], []
    sole = sole_entities(rulebase)
    for i, a in enumerate(proof.goal.args):
        if i in proof.goal.implied and sole.get(sig.params[i].type) == a:
            continue   # the travel policy, the one there is; an argument the facts imply is said
        p = sig.params[i]
        if p.type not in VALUE_TYPES:
            names.append(_entity_name(rulebase, a, chinese))
        elif p.type == "number" and chinese and (said := _said_count(question, proof.goal.stated, a)):
            values.append(said)
        elif p.type == "number" and p.name:
            values.append(f"{say_value(a, chinese)} {p.name.replace('_', ' ')}")
        else:
            values.append(say_value(a, chinese))
    return "，".join([" / ".join(names)] + values if names else values) if chinese else \
        ", ".join([" / ".join(names)] + values if names else values)


def _described_step(mention: EntityMention, rulebase: RuleBase, chinese: bool) -> str:
    """How the question's description names an argument: "autosampler capacity: 120", "reports to (Wang Yu):
    Chen Hao"."""
    label = _label(rulebase.relations[cast(str, mention.described_by)], chinese)   # a described mention's
    if mention.via is None:
        return f"{label}{'：' if chinese else ': '}{mention.text}"
    via = _entity_name(rulebase, mention.via, chinese)
    who = _entity_name(rulebase, mention.entity_id, chinese)
    return f"{label}（{via}）：{who}" if chinese else f"{label} ({via}): {who}"


# A Chinese proof's sentence, with and without a subject (lang/zh/answers.toml proof_sentence): "{subject}'s {label}
# is {value}"; an English one is composed in compose.
_ZH_SENTENCE = phrase("answers.proof_sentence", "zh")
_ZH_SENTENCE_BARE = phrase("answers.proof_sentence_bare", "zh")


def compose(proof: ProvenAnswer, rulebase: RuleBase, citations: Sequence[int], *, chinese: bool,
            stated: str | None = None, described: Sequence[EntityMention] = (), question: str = "") -> str:
    """The proof as one sentence in the question's language, citing ``citations`` ([n] of the sources
    that state its facts); ``stated``: the value as the source writes it, used when its script matches;
    ``described``: the question's mentions that name an argument by a value, said as steps ("autosampler
    capacity: 120") so the answer shows which entity the description is."""
    sig = rulebase.relations[proof.goal.relation]
    label = _label(sig, chinese)
    subject = _subject(proof, rulebase, chinese, question)
    value = _entity_name(rulebase, proof.value, chinese)
    # the source's own wording, unless it is an adjective ("the 5-day limit"), which cannot follow "is"
    if stated and any("\u4e00" <= ch <= "\u9fff" for ch in stated) == chinese and not _ADJECTIVAL.match(stated):
        value = stated
    steps = [_described_step(m, rulebase, chinese) for m in described
             if m.described_by in rulebase.relations and m.entity_id in proof.goal.args]
    steps += _steps(proof, rulebase, chinese)
    if steps:
        value += f"（{'，'.join(steps)}）" if chinese else f" ({'; '.join(steps)})"
    cite = "".join(f" [{n}]" for n in citations)
    if chinese:
        return (_ZH_SENTENCE if subject else _ZH_SENTENCE_BARE).format(subject=subject, label=label, value=value,
                                                                       cite=cite)
    if subject and sig.params and sig.params[0].type not in VALUE_TYPES:
        label = _owner_free(label, sig.params[0].type, rulebase)
    owned = _POSSESSED_LABEL.match(label)
    if _VERBAL_END.search(label):
        text = f"{subject}: {label} {value}" if subject else f"{label} {value}"
    elif owned and subject and len(proof.goal.args) == 1 and sig.params[0].type not in VALUE_TYPES:
        text = f"{subject}'s {owned.group(1)} is {value}"
    else:
        verb = "are" if _plural(label) else "is"
        text = f"The {label} for {subject} {verb} {value}" if subject else f"The {label} {verb} {value}"
    return text[0].upper() + text[1:] + f"{cite}."

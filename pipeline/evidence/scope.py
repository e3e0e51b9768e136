"""Whom an answer is for: the question's scope (the entities it names, and those its named people and things
are linked to by the facts: an employee's office) against the scope of what an answer rests on (the entities a
relation's own names or a document's subject name: "Hangzhou standby allowance", "Hangzhou office supplement").
A value from a source scoped to another office than the one asked about answers for someone else."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from pipeline.evidence.passage_facts import document_subject
from pipeline.proof.proving import ProvenAnswer
from pipeline.question.focus import QuestionFocus, entity_label, sole_entities
from pipeline.question.naming import relation_names
from pipeline.seams import PassageLike
from pipeline.text.entities import find_entities
from symbolic import Fact, RuleBase

if TYPE_CHECKING:
    from pipeline.evidence.kb_facts import KBFacts

Scope = Mapping[str, frozenset[str]]      # entity type -> the entity ids of that type
# an entity named by this share of a document's title (or more) is the document itself, not what it is about
DOCUMENT_ITSELF = 0.6
# links followed from what a question names: a person's title, and the title's grade
LINK_HOPS = 2


def _named(texts: Iterable[str | None], rulebase: RuleBase) -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for text in texts:
        for m in find_entities(text or "", rulebase):
            out.setdefault(m.type, set()).add(m.entity_id)
    return {t: frozenset(ids) for t, ids in out.items()}


def question_scope(focus: QuestionFocus, rulebase: RuleBase, facts: Sequence[Fact],
                   rows: Mapping[str, Mapping[str, frozenset[str]]] | None = None) -> Scope:
    """The entities the question names, by type, and for each named one the entity of another type the facts
    link it to alone (``works_in(liu_mei, hangzhou)``: Liu Mei's question is about the Hangzhou office too), and
    what those link to alone in turn (her title's grade: ``has_title(dan_kirby, scientist)``,
    ``grade_for_title(scientist, s1)``), up to LINK_HOPS links from what the question names. ``rows``: the
    entities the KB's table rows naming an entity name (pipeline.evidence.kb_facts.row_links); a type of which
    they name one alone links it too, where the facts linked none of that type (the Deep Time exhibition's row
    names Bath: a question about it is about Bath)."""
    out: dict[str, set[str]] = {}
    for e in focus.entities:
        out.setdefault(e.type, set()).add(e.entity_id)
    frontier = {e.entity_id: e.type for e in focus.entities}
    reached = dict(frontier)
    all_facts = [*rulebase.facts, *facts]
    for hop in range(LINK_HOPS):
        linked: dict[tuple[str, str, str], set[str]] = {}
        for f in all_facts:
            if len(f.args) < 2 or not isinstance(f.args[0], str) or f.args[0] not in frontier:
                continue
            value = f.args[-1]
            entity = rulebase.entities.get(value) if isinstance(value, str) else None
            if entity is not None and entity.type != frontier[f.args[0]]:
                linked.setdefault((f.args[0], f.relation, entity.type), set()).add(entity.id)
        frontier = {}
        for (_subject, _relation, etype), ids in linked.items():
            # linked to one: their office; to several, nothing follows; a further link adds no type already held
            if len(ids) == 1 and (hop == 0 or etype not in out):
                frontier.update({i: etype for i in ids if i not in reached})
        for eid, etype in frontier.items():
            out.setdefault(etype, set()).add(eid)
        reached.update(frontier)
    # a row is weaker than a fact: it speaks only for a type nothing else put in scope
    from_rows: dict[str, set[str]] = {}
    for e in focus.entities:
        for etype, row_ids in (rows or {}).get(e.entity_id, {}).items():
            if len(row_ids) == 1 and etype not in out:
                from_rows.setdefault(etype, set()).update(row_ids)
    out.update(from_rows)
    return {t: frozenset(ids) for t, ids in out.items()}


def relation_scope(relation: str, rulebase: RuleBase) -> Scope:
    """The entities a relation's own names name ("Hangzhou standby allowance": the Hangzhou office)."""
    sig = rulebase.relations.get(relation)
    return _named(relation_names(sig), rulebase) if sig is not None else {}


def document_scope(passage: PassageLike, rulebase: RuleBase) -> Scope:
    """The entities the document's subject (front matter, title or first heading) names, less an entity that is the
    document itself (its name most of the title: the supplement entity a title "Hangzhou clinic HR supplement"
    names): a question naming another policy ("the on-call policy") may be answered from a supplement to it. A
    front matter ``subject:`` says what the document is about, whole ("subject: Hangzhou gallery")."""
    subject = document_subject(passage) or ""
    size = 0 if getattr(passage, "subject", None) else len("".join(subject.split()))
    out: dict[str, set[str]] = {}
    for m in find_entities(subject, rulebase):
        if size and len("".join(m.text.split())) >= DOCUMENT_ITSELF * size:
            continue
        out.setdefault(m.type, set()).add(m.entity_id)
    return {t: frozenset(ids) for t, ids in out.items()}


@dataclass(frozen=True)
class ScopeConflict:
    """A source scoped to ``theirs`` of an entity type where the question asks about ``asked``."""
    source: str
    etype: str
    asked: frozenset[str]
    theirs: frozenset[str]

    def reason(self, rulebase: RuleBase) -> str:
        def names(ids: frozenset[str]) -> str:
            return " or ".join(sorted(rulebase.entities[i].label if i in rulebase.entities else i for i in ids))
        return f"{self.source} is about {names(self.theirs)}, and the question asks about {names(self.asked)}"


def conflict(asked: Scope, source: Scope, what: str) -> ScopeConflict | None:
    """The first type where the source names entities and the question others, none of them the same."""
    for etype, theirs in source.items():
        mine = asked.get(etype)
        if mine and theirs and not mine & theirs:
            return ScopeConflict(what, etype, mine, theirs)
    return None


def source_conflict(asked: Scope, relation: str | None, docs: Sequence[PassageLike],
                    rulebase: RuleBase, bound: Iterable[object] = ()) -> ScopeConflict | None:
    """Whether what a claim or proof rests on is scoped away from the question: its relation's own names, or
    every document it rests on (one in scope suffices: a global policy and a supplement may agree). ``bound``: the
    arguments a proof's facts state it for; a type of which they bind an asked entity is not judged by the
    document's subject (the Hangzhou ramp safety rules, about the apron, state the service roads' speed limit)."""
    stated_for = {t for t, ids in asked.items() if any(isinstance(b, str) and b in ids for b in bound)}
    asked = {t: ids for t, ids in asked.items() if t not in stated_for}
    if relation is not None:
        found = conflict(asked, relation_scope(relation, rulebase), f"the relation {relation!r}")
        if found is not None:
            return found
    found_docs = [conflict(asked, document_scope(p, rulebase), p.doc_id) for p in docs]
    return found_docs[0] if found_docs and all(found_docs) else None


def unbound_qualifier(focus: QuestionFocus, proof: ProvenAnswer, kb: KBFacts | None, rulebase: RuleBase,
                      facts: Sequence[Fact] = ()) -> str | None:
    """Why a proof does not answer for what the question names: an entity the question names itself (not the only
    one of its type, nor of a type the proof's goal binds another of), that the proof binds nowhere (its goal, the
    facts it rests on), that has documents of its own (another document's subject names it), and that none of the
    documents the proof rests on names anywhere. "The daily hire rate for a standpipe at the Wuxi plant" proved
    from standpipe hire terms that never name the plant, which has its own supplement: the relation takes no
    plant, and nothing shows those terms hold there. A place with no documents of its own is under the global ones
    (a Dublin employee's standby allowance from the on-call policy). An entity the ``facts`` link to one those
    documents name is in their scope (Liu Mei, who works in the Hangzhou office, under its supplement)."""
    docs = {f.provenance.doc_id for f in proof.documents if f.provenance.doc_id}
    if not docs or kb is None or not kb.named_in:
        return None     # a proof from the rule files' facts alone, or a KB not read whole: nothing to scope
    named_in = kb.named_in
    bound = {a for a in proof.goal.args if isinstance(a, str)}
    bound |= {a for f in proof.node.facts for a in f.args if isinstance(a, str)}
    bound_types = {rulebase.entities[a].type for a in proof.goal.args if isinstance(a, str) and a in rulebase.entities}
    sole = set(sole_entities(rulebase).values())
    in_docs = frozenset().union(*(named_in.get(d, frozenset()) for d in docs))
    elsewhere = frozenset().union(*(ids for d, ids in kb.subject_of.items() if d not in docs))
    for x in focus.entities:
        if x.described_by or x.via or x.entity_id in bound or x.entity_id in sole or x.type in bound_types:
            continue
        if x.entity_id not in in_docs and x.entity_id in elsewhere \
                and not _linked(x.entity_id, [*rulebase.facts, *facts]) & in_docs:
            return f"the question asks about {entity_label(rulebase, x.entity_id)}, and {sorted(docs)[0]} never names it"
    return None


def _linked(entity_id: str, facts: Sequence[Fact]) -> set[str]:
    """The entities the facts link ``entity_id`` to, up to LINK_HOPS links (its office, its title's grade)."""
    reached: set[str] = set()
    frontier = {entity_id}
    for _hop in range(LINK_HOPS):
        frontier = {f.args[-1] for f in facts if len(f.args) >= 2 and f.args[0] in frontier
                    and isinstance(f.args[-1], str)} - reached - {entity_id}
        reached |= frontier
    return reached

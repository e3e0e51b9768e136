"""Evidence with authority: which passages may vouch for a claim, and the whole knowledge base's facts under a
rule base, read once per (index version, rule base)."""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterable, Protocol, Sequence, Sized, TypeVar, cast

from pipeline.evidence.passage_facts import authoritative, document_subject, extract_evidence, standing
from pipeline.lang import words
from pipeline.proof.proving import current_evidence
from pipeline.seams import PassageLike
from pipeline.text.entities import find_entities
from pipeline.text.values import EvidenceValue
from symbolic import Fact, RuleBase
from symbolic.model import VALUE_TYPES
from symbolic.values import Quantity, format_value

log = logging.getLogger(__name__)



_P = TypeVar("_P", bound=PassageLike)


def evidence_passages(passages: Iterable[_P]) -> list[_P]:
    """The passages whose statements count as evidence: authoritative and not quarantined."""
    return [p for p in passages if authoritative(p) and not getattr(p, "quarantine", None)]


@dataclass(frozen=True)
class EvidenceConflict:
    """A fact of lower standing that contradicts one of higher standing: left out of the evidence, reported."""
    kept: Any         # symbolic Fact
    outranked: Any

    def to_dict(self) -> dict:
        k, o = self.kept, self.outranked
        return {"relation": k.relation, "subject": [format_value(a) for a in k.args[:-1]],
                "value": format_value(k.args[-1]), "doc_id": k.provenance.doc_id,
                "outranked_value": format_value(o.args[-1]), "outranked_doc_id": o.provenance.doc_id,
                "outranked_authority": o.provenance.authority, "outranked_unlisted": o.provenance.standing == 1,
                "reason": f"{o.provenance.doc_id} states {format_value(o.args[-1])} against {format_value(k.args[-1])} "
                          f"in {k.provenance.doc_id}, which outranks it"
                          + (" (the knowledge base's register does not list it)" if o.provenance.standing == 1 else "")}


def outranked(facts: Sequence[Any], rulebase: Any) -> tuple[list[Any], list[EvidenceConflict]]:
    """Evidence ranked by authority before certainty factors combine: of the facts about one subject of a
    functional relation, a fact of lower standing whose value no fact of the highest standing present states
    is left out and reported (a note or an unlisted document never cancels a policy); one agreeing stays."""
    groups: dict[tuple, list[Any]] = {}
    for f in facts:
        sig = rulebase.relations.get(f.relation) if rulebase is not None else None
        if sig is not None and sig.functional and f.args:
            groups.setdefault((f.relation, f.args[:-1]), []).append(f)
    drop: set[int] = set()
    conflicts: list[EvidenceConflict] = []
    for group in groups.values():
        top = max(f.provenance.standing for f in group)
        best = [f for f in group if f.provenance.standing == top]
        for f in group:
            if f.provenance.standing < top and all(f.args[-1] != b.args[-1] for b in best):
                drop.add(id(f))
                conflicts.append(EvidenceConflict(best[0], f))
    return [f for f in facts if id(f) not in drop], conflicts


@dataclass
class KBFacts:
    facts: list[Fact] = field(default_factory=list)           # symbolic Facts with document provenance
    values: list[EvidenceValue] = field(default_factory=list)
    passage_of: dict[int, PassageLike] = field(default_factory=dict)  # id(fact) -> the chunk passage stating it
    implied: dict[tuple[str, int], str] = field(default_factory=dict)   # implied_arguments of the facts
    conflicts: list[EvidenceConflict] = field(default_factory=list)   # facts outranked (left out of ``facts``)
    named_in: dict[str, frozenset[str]] = field(default_factory=dict)   # doc id -> the entities it names anywhere
    subject_of: dict[str, frozenset[str]] = field(default_factory=dict)   # doc id -> those its subject names
    # entity id -> entity type -> the entities of that type the KB's table rows naming it name (row_links)
    row_links: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict)

    def passage_for(self, fact: Fact) -> PassageLike | None:
        return self.passage_of.get(id(fact))

    @cached_property
    def documents_by_quantity(self) -> dict[tuple, list[str]]:
        """Quantity key (symbolic.values.Quantity.key: 1 cm and 10 mm alike) -> the documents stating it, in
        order. Built on first use: comparing a value against every value of a 20k-chunk KB costs ~0.5 s."""
        index: dict[tuple, list[str]] = {}
        for v in self.values:
            if isinstance(v.value, Quantity):
                docs = index.setdefault(v.value.key(), [])
                if v.doc_id not in docs:
                    docs.append(v.doc_id)
        return index


def implied_arguments(rulebase: RuleBase, kb_facts: Sequence[Fact]) -> dict[tuple[str, int], str]:
    """(relation, argument position) -> the one entity every fact of the relation has there: where the
    documents state a threshold for one site only, a question about it need not name the site. ``kb_facts``
    must be the whole knowledge base's (a superseded document's left out where a current one says the same):
    the facts of a few retrieved passages would imply what the rest of the documents contradict."""
    seen: dict[tuple[str, int], set[Any]] = {}
    for f in current_evidence([*kb_facts, *rulebase.facts], rulebase):
        sig = rulebase.relations.get(f.relation)
        if sig is None or len(f.args) != sig.arity:
            continue
        for i, p in enumerate(sig.params[:-1]):
            if p.type not in VALUE_TYPES:
                seen.setdefault((f.relation, i), set()).add(f.args[i])
    return {k: next(iter(v)) for k, v in seen.items()
            if len(v) == 1 and isinstance(next(iter(v)), str) and next(iter(v)) in rulebase.entities}


class FactSource(Protocol):
    """Where the whole KB's facts under a rule base come from: the cache, or a scope of it."""

    def get(self, retriever: object, rulebase: RuleBase) -> KBFacts | None: ...


class KBFactCache:
    """The rule patterns run over every authoritative chunk once per (index version, rule-base version); a KB
    above ``max_chunks`` chunks is not read whole (its facts come from the retrieved passages only). The facts
    of the last ``keep`` pairs are kept: requests that started before a reload or an ingest still use theirs.
    Keys are versions, never ``id()``: a new rule base can get the id of a freed one. An object without a
    version is its own key, held here, so its id cannot be reused while its entry lives."""

    def __init__(self, max_chunks: int = 20_000, keep: int = 4):
        self.max_chunks, self.keep = max_chunks, keep
        self._entries: dict[tuple, KBFacts] = {}
        self._lock = threading.Lock()

    @staticmethod
    def key(retriever: object, rulebase: RuleBase) -> tuple:
        """The cache key: the index's and the rule base's versions (their objects where they have none)."""
        return tuple(v if isinstance(v := getattr(obj, "version", None), str) and v else obj
                     for obj in (retriever, rulebase))

    def get(self, retriever: object, rulebase: RuleBase) -> KBFacts | None:
        passages_of = getattr(retriever, "passages", None)
        if passages_of is None or (hasattr(retriever, "__len__") and len(cast(Sized, retriever)) > self.max_chunks):
            return None
        key = self.key(retriever, rulebase)
        with self._lock:
            facts = self._entries.pop(key, None)
            if facts is None:
                facts = self._read(evidence_passages(passages_of()), rulebase)
            self._entries[key] = facts          # most recent last
            while len(self._entries) > self.keep:
                del self._entries[next(iter(self._entries))]
            return facts

    @staticmethod
    def _read(passages: Sequence[PassageLike], rulebase: RuleBase) -> KBFacts:
        out = KBFacts()
        named: dict[str, set[str]] = {}
        for p in passages:
            said = " \n".join([document_subject(p) or "", *(getattr(p, "heading_path", None) or []), p.text])
            named.setdefault(p.doc_id, set()).update(m.entity_id for m in find_entities(said, rulebase))
            if p.doc_id not in out.subject_of:
                out.subject_of[p.doc_id] = frozenset(m.entity_id for m in find_entities(document_subject(p) or "",
                                                                                         rulebase))
            facts, values = extract_evidence([p], rulebase)
            for f in facts:
                out.passage_of[id(f)] = p
            out.facts.extend(facts)
            out.values.extend(values)
        out.facts, out.conflicts = outranked(out.facts, rulebase)
        out.implied = implied_arguments(rulebase, out.facts)
        out.named_in = {d: frozenset(ids) for d, ids in named.items()}
        out.row_links = row_links(out.values, rulebase)
        log.info("read %d facts from %d chunks", len(out.facts), len(passages))
        return out


def row_links(values: Sequence[EvidenceValue], rulebase: RuleBase) -> dict[str, dict[str, frozenset[str]]]:
    """Entity id -> entity type -> the entities of that type the table rows holding ``values`` name beside it (a row
    is one record: "| Deep Time | Museum of Natural History, Bath | …" puts the exhibition at Bath)."""
    rows = dict.fromkeys((v.doc_id, v.context) for v in values if v.column is not None and v.context)
    links: dict[str, dict[str, set[str]]] = {}
    for _doc, row in rows:
        named = {(m.entity_id, m.type) for m in find_entities(row, rulebase)}
        for eid, etype in named:
            for other, otype in named:
                if otype != etype:
                    links.setdefault(eid, {}).setdefault(otype, set()).add(other)
    return {e: {t: frozenset(ids) for t, ids in by.items()} for e, by in links.items()}


def evidence_and_conflicts(passages: Sequence[Any], rulebase: Any,
                           kb: KBFacts | None) -> tuple[list[Any], list[EvidenceValue], list[EvidenceConflict]]:
    """pipeline.evidence.gather.evidence_for's facts and values, and the conflicts ranking them left out (the KB's own
    included): the facts the authoritative, unquarantined passages state plus every fact of the KB."""
    facts, values = extract_evidence(evidence_passages(passages), rulebase)
    if kb is not None:
        have = {(f.relation, f.args, f.provenance.doc_id, f.provenance.start) for f in facts}
        facts += [f for f in kb.facts if (f.relation, f.args, f.provenance.doc_id, f.provenance.start) not in have]
    facts, conflicts = outranked(facts, rulebase)
    return facts, values, [*(kb.conflicts if kb is not None else []), *conflicts]


def relevant_conflicts(conflicts: Sequence[EvidenceConflict], goals: Sequence[Any],
                       passages: Sequence[Any]) -> list[EvidenceConflict]:
    """The conflicts about a relation the question asks (its ``goals``) or in the documents retrieved for it,
    each once."""
    asked = {g.relation for g in goals}
    docs = {p.doc_id for p in passages}
    out: dict[tuple, EvidenceConflict] = {}
    for c in conflicts:
        if c.kept.relation in asked or c.outranked.provenance.doc_id in docs or c.kept.provenance.doc_id in docs:
            out.setdefault((c.outranked.key, c.outranked.provenance.doc_id, c.kept.key), c)
    return list(out.values())

"""Evidence with authority: which passages may vouch for a claim, and the whole knowledge base's facts under a
rule base, read once per (index version, rule base)."""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterable, Protocol, Sequence, Sized, TypeVar, cast

from pipeline.evidence.passage_facts import extract_evidence
from pipeline.lang import words
from pipeline.proof.proving import current_evidence
from pipeline.seams import PassageLike
from pipeline.text.values import EvidenceValue
from symbolic import Fact, RuleBase
from symbolic.model import VALUE_TYPES
from symbolic.values import Quantity

log = logging.getLogger(__name__)

# Front-matter `authority:` values that never vouch for a claim on their own: the document may be shown
# as a source, but what only it states is not verified (a chat note contradicting a policy;
# lang/<code>/evidence.toml non_authoritative).
NON_AUTHORITATIVE = frozenset(words("evidence.non_authoritative"))


def authoritative(passage: PassageLike) -> bool:
    authority = getattr(passage, "authority", None)
    return not authority or str(authority).strip().lower() not in NON_AUTHORITATIVE


_P = TypeVar("_P", bound=PassageLike)


def evidence_passages(passages: Iterable[_P]) -> list[_P]:
    """The passages whose statements count as evidence: authoritative and not quarantined."""
    return [p for p in passages if authoritative(p) and not getattr(p, "quarantine", None)]


@dataclass
class KBFacts:
    facts: list[Fact] = field(default_factory=list)           # symbolic Facts with document provenance
    values: list[EvidenceValue] = field(default_factory=list)
    passage_of: dict[int, PassageLike] = field(default_factory=dict)  # id(fact) -> the chunk passage stating it
    implied: dict[tuple[str, int], str] = field(default_factory=dict)   # implied_arguments of the facts

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
    """The rule patterns run over every authoritative chunk once per (index version, rule base); a KB
    above ``max_chunks`` chunks is not read whole (its facts come from the retrieved passages only)."""

    def __init__(self, max_chunks: int = 20_000):
        self.max_chunks = max_chunks
        self._key: tuple | None = None
        self._facts: KBFacts | None = None
        self._lock = threading.Lock()

    def get(self, retriever: object, rulebase: RuleBase) -> KBFacts | None:
        passages_of = getattr(retriever, "passages", None)
        if passages_of is None or (hasattr(retriever, "__len__") and len(cast(Sized, retriever)) > self.max_chunks):
            return None
        key = (getattr(retriever, "version", id(retriever)), id(rulebase))
        with self._lock:
            if key != self._key:
                self._facts = self._read(evidence_passages(passages_of()), rulebase)
                self._key = key
            return self._facts

    @staticmethod
    def _read(passages: Sequence[PassageLike], rulebase: RuleBase) -> KBFacts:
        out = KBFacts()
        for p in passages:
            facts, values = extract_evidence([p], rulebase)
            for f in facts:
                out.passage_of[id(f)] = p
            out.facts.extend(facts)
            out.values.extend(values)
        out.implied = implied_arguments(rulebase, out.facts)
        log.info("read %d facts from %d chunks", len(out.facts), len(passages))
        return out

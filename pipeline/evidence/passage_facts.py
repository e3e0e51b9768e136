"""Evidence facts and values from retrieved passages: rule-file patterns and property rows, with provenance."""
from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from pipeline.readers.patterns import provenance
from pipeline.seams import PassageLike
from pipeline.text.sentences import blocks, sentence_at, sentences
from pipeline.text.tables import column_at
from pipeline.text.values import EvidenceValue, find_values
from pipeline.lang import words
from symbolic import Fact, RuleBase
from symbolic.tables import typed_view
from symbolic.values import parse_value

# Evidence from a superseded document still counts, at this fraction of its certainty (DESIGN §3).
SUPERSEDED_CF_FACTOR = 0.5


# Front-matter `authority:` values that never vouch for a claim on their own: the document may be shown
# as a source, but what only it states is not verified (a chat note contradicting a policy;
# lang/<code>/evidence.toml non_authoritative).
NON_AUTHORITATIVE = frozenset(words("evidence.non_authoritative"))


def authoritative(passage: PassageLike) -> bool:
    authority = getattr(passage, "authority", None)
    return not authority or str(authority).strip().lower() not in NON_AUTHORITATIVE


def standing(passage: PassageLike) -> int:
    """How much a passage's facts count when they disagree with others (symbolic Provenance.standing): 2 a
    document that counts, 1 one the KB's register does not list (retrieval/register.py), 0 a note or draft."""
    if not authoritative(passage):
        return 0
    return 1 if getattr(passage, "listed", None) is False else 2


def extract_evidence(passages: Sequence[PassageLike], rulebase: RuleBase) -> tuple[list[Fact], list[EvidenceValue]]:
    """Facts and values stated by the retrieved passages, with provenance (doc id, span in the
    document, superseded, effective date, authority: what rules can match with `from ?doc`); facts from
    superseded documents get a lower certainty factor."""
    from pipeline.readers.property_rows import property_row_facts  # here: it reads with this module's readers
    facts: list[Fact] = []
    values: list[EvidenceValue] = []
    for p in passages:
        superseded = bool(getattr(p, "superseded", False))
        doc: dict[str, Any] = {"effective_date": getattr(p, "effective_date", None),
                               "authority": getattr(p, "authority", None), "standing": standing(p)}
        for fact, s, e in rulebase.extract(p.text, source=provenance("document", p.doc_id, p.start, p.end, superseded,
                                                                      **doc),
                                           table_header=getattr(p, "context_prefix", None),
                                           subject=document_subject(p)):
            # The verifier halves a superseded fact's CF itself (effective_cf): keep the pattern's CF.
            prov = provenance("document", p.doc_id, p.start + s, p.start + e, superseded, **doc,
                              rule_id=fact.provenance.rule_id)      # the pattern that read it (rules facts)
            facts.append(dataclasses.replace(fact, provenance=prov))
        # a datasheet's property rows, where no pattern read the relation of the document's subject already
        read = {(f.relation, f.args[:-1]) for f in facts if f.provenance.doc_id == p.doc_id}
        for fact, s, e in property_row_facts(p, rulebase):
            if (fact.relation, fact.args[:-1]) not in read:
                prov = provenance("document", p.doc_id, p.start + s, p.start + e, superseded, **doc)
                facts.append(dataclasses.replace(fact, provenance=prov))
        effective = getattr(p, "effective_date", None)
        if effective:        # the document states its own date in its front matter ("the 2025 policy")
            try:
                values.append(EvidenceValue(parse_value(str(effective)), str(effective), p.doc_id, p.start, p.start,
                                            superseded, context=f"{getattr(p, 'title', None) or p.doc_id}: "
                                                                f"effective date {effective}",
                                            title=getattr(p, "title", None) or ""))
            except ValueError:
                pass
        sents, paragraphs = sentences(p.text), blocks(p.text)
        # values as the patterns read them: a table cell's bare number with its column header's unit
        view = typed_view(p.text, getattr(p, "context_prefix", None))
        for value, _kind, vs, ve in find_values(view.text):
            s, e = view.original(vs), view.original(ve)
            values.append(EvidenceValue(value, p.text[s:e], p.doc_id, p.start + s, p.start + e, superseded,
                                        sentence_at(p.text, sents, s),
                                        column_at(p.text, s, getattr(p, "context_prefix", None)),
                                        " ".join((getattr(p, "heading_path", None) or [])[-1:]),
                                        getattr(p, "title", None) or "",
                                        " ".join(sentence_at(p.text, paragraphs, s).split())))
    return facts, values


def document_subject(p: PassageLike) -> str | None:
    """What a passage's document is about: its front matter ``subject:``, else its title, else its first heading."""
    heading = getattr(p, "heading_path", None) or []
    return getattr(p, "subject", None) or getattr(p, "title", None) or (heading[0] if heading else None)

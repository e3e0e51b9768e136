"""What one question is answered from: the passages of the retrieval rounds (a second, multi-hop round led
by the rule base), quarantined passages set apart, the question's focus, the evidence facts (the whole
KB's under the rule base) and, where the rules can prove the answer, the proof."""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Sequence

from pipeline.evidence.bridges import bridge_passages, passage_key, place_after
from pipeline.evidence.closed_world import contradicted_assumption
from pipeline.evidence.described import with_described
from pipeline.evidence.kb_facts import (EvidenceConflict, FactSource, KBFacts, evidence_and_conflicts,
                                         evidence_passages, relevant_conflicts)
from pipeline.evidence.leads import lead_first
from pipeline.evidence.links import link_queries
from pipeline.evidence.passage_facts import extract_evidence
from pipeline.evidence.scope import Scope, question_scope, source_conflict, unbound_qualifier
from pipeline.proof.approver import covering_limit
from pipeline.proof.attribute import (asks_another_attribute, asks_the_other_bound, counted_per_another_period,
                                      names_another_attribute)
from pipeline.proof.limit_check import LimitBreach, breached_limits
from pipeline.proof.limits import with_checked_limits
from pipeline.proof.proving import ProvenAnswer, prove, value_places
from pipeline.proof.rule_goals import with_derived_goals
from pipeline.question.focus import QuestionFocus, entity_label, parse_question, relation_label
from pipeline.question.naming import relation_score
from pipeline.question.relation_namer import RelationNamer
from pipeline.readers.premises import PremiseCorrection, asked_beyond, disproved_comparison, disproved_premises
from pipeline.seams import PassageLike, RetrieverLike
from pipeline.text.entities import find_entities
from pipeline.text.periods import around, counted_per_other_period
from pipeline.text.script import is_chinese
from pipeline.text.terms import content_terms
from pipeline.text.values import EvidenceValue, find_values
from symbolic import Fact, RuleBase

# Passages per follow-up query, and the most follow-up queries per question.
FOLLOWUP_TOP_K = 3
MAX_FOLLOWUPS = 3
# Passages per declared-link hop: the one that best states the linked relation for the hop's value.
LINK_TOP_K = 1


@dataclass
class QuestionContext:
    question: str
    focus: QuestionFocus
    candidates: list[PassageLike]         # passages the prompt is packed from, best first
    quarantined: list[PassageLike] = field(default_factory=list)   # never prompt text, never evidence
    followups: list[str] = field(default_factory=list)     # the multi-hop queries issued
    kb: KBFacts | None = None
    proof: ProvenAnswer | None = None
    proof_passages: list[PassageLike] = field(default_factory=list)  # the chunks stating the proof's facts
    corrections: list[PremiseCorrection] = field(default_factory=list)   # premises of the question disproved
    breaches: list[LimitBreach] = field(default_factory=list)   # the question's values past a proved limit
    conflicts: list[EvidenceConflict] = field(default_factory=list)   # facts outranked by a source of more authority
    timings_ms: dict[str, float] = field(default_factory=dict)  # retrieve (both rounds), prove
    # whom the question is about (pipeline.evidence.scope), and the proofs set aside as about someone else
    scope: Scope = field(default_factory=dict)
    out_of_scope: list[str] = field(default_factory=list)

    @property
    def rules_answer(self) -> bool:
        """The rules answer the question themselves: a proof, a premise they disprove, or a limit passed."""
        return self.proof is not None or bool(self.corrections) or bool(self.breaches)

    @property
    def check_passages(self) -> list[PassageLike]:
        """The chunks stating what the premise corrections and the limit breaches prove (and the limits that
        cover a breached amount)."""
        return [p for c in self.corrections for p in c.passages] + \
            [p for b in self.breaches for p in [*b.passages, *b.cover_passages]]


def _search(retriever: RetrieverLike, query: str, top_k: int) -> tuple[list[PassageLike], list[PassageLike]]:
    try:
        hits = list(retriever.search(query, top_k=top_k, include_quarantined=True))
    except TypeError:      # a retriever without quarantine support
        hits = list(retriever.search(query, top_k=top_k))
    return [p for p in hits if not getattr(p, "quarantine", None)], [p for p in hits if getattr(p, "quarantine", None)]


def _rank(p: PassageLike) -> float:
    """Best first; a superseded document's passage weighs half, so the current one leads the prompt
    (the superseded one still comes, after it, while the budget lasts)."""
    return -float(getattr(p, "score", 0.0)) * (0.5 if getattr(p, "superseded", False) else 1.0)


def translated_query(focus: QuestionFocus, rulebase: RuleBase) -> str | None:
    """The question's rule-base names in the other language: the entities and relations a Chinese question
    names, by their English labels (and an English question's by their Chinese aliases). The rule files'
    bilingual vocabulary bridges what an English-only embedder and character bigrams cannot: a Chinese
    question about an English policy ("second-class city … lodging" in Chinese -> "Tier 2 hotel limit per night")."""
    chinese = is_chinese(focus.question)
    terms = frozenset(content_terms(focus.question))
    words: list[str] = []
    for e in focus.entities:
        ent = rulebase.entities.get(e.entity_id)
        if ent is not None:
            words += [n for n in (ent.label, *ent.aliases) if n and is_chinese(n) != chinese][:1]
    for sig in rulebase.relations.values():
        if relation_score(sig, terms) >= 0.6:
            words += [n for n in (sig.label, *sig.aliases) if n and is_chinese(n) != chinese][:1]
    words = list(dict.fromkeys(words))
    return " ".join(words) if words else None


def bridge_entities(focus: QuestionFocus, kb: KBFacts | None) -> list[str]:
    """Entities the question describes by a value instead of naming them: the subjects of the KB's facts
    whose value the question states ("the robot that can carry 500 kg" -> payload(lx_500, 500 kg))."""
    if kb is None:
        return []
    chars = list(focus.question)
    for e in focus.entities:
        chars[e.start:e.end] = " " * (e.end - e.start)
    stated = [v for v, *_ in find_values("".join(chars))]
    out: list[str] = []
    for f in kb.facts:
        if len(f.args) >= 2 and isinstance(f.args[0], str) and any(f.args[-1] == v for v in stated):
            if f.args[0] not in out and f.args[0] not in focus.entity_ids:
                out.append(f.args[0])
    return out[:2]


def followup_queries(focus: QuestionFocus, first: Sequence[PassageLike], rulebase: RuleBase | None,
                     kb: KBFacts | None = None) -> list[str]:
    """Second-round queries from what the first round found: the premises of the goal rules that would
    prove the question's relation (a city's tier, then the tier's limit), and the question asked again
    about an entity it describes by a value (the robot "that carries 500 kg" is the LX-500 by the KB's
    facts) or, failing that, one the best passages name but the question does not."""
    if rulebase is None:
        return []
    out: list[str] = []
    other = translated_query(focus, rulebase)
    if other:
        out.append(other)
    for goal in focus.goals[:2]:
        names = " ".join(entity_label(rulebase, a) for a in goal.args)
        for rule in rulebase.backward_rules:
            if rule.head.relation != goal.relation:
                continue
            for prem in rule.premises:
                rel = getattr(prem, "relation", None)
                if rel and rel != goal.relation:
                    out.append(f"{relation_label(rulebase, rel)} {names}".strip())
    bridged = bridge_entities(focus, kb)
    if not bridged:
        asked = focus.entity_ids
        seen: dict[str, int] = {}
        for p in first[:3]:
            for e in find_entities(p.text, rulebase):
                if e.entity_id not in asked:
                    seen[e.entity_id] = seen.get(e.entity_id, 0) + 1
        bridged = [eid for eid, _n in sorted(seen.items(), key=lambda kv: -kv[1])[:1]]
    out += [f"{entity_label(rulebase, eid)} {focus.question}" for eid in bridged]
    return list(dict.fromkeys(out))[:MAX_FOLLOWUPS]


def gather(question: str, top_k: int, retriever: RetrieverLike, rulebase: RuleBase | None, kb_cache: FactSource | None,
           *, multi_hop: bool = True, symbolic: bool = True, namer: RelationNamer | None = None) -> QuestionContext:
    """Retrieval rounds, quarantine, focus, the proof and the question's disproved premises for one
    question (no generation). ``namer``: names the relation a question means where its words name none."""
    t0 = time.perf_counter()
    focus = parse_question(question, rulebase, namer=namer)
    first, quarantined = _search(retriever, question, top_k)
    first.sort(key=_rank)
    ctx = QuestionContext(question, focus, first, quarantined)
    if rulebase is not None and kb_cache is not None:
        ctx.kb = kb_cache.get(retriever, rulebase)
    if multi_hop:
        hops = link_queries(focus, first, rulebase, ctx.kb) if rulebase is not None else []
        others = [q for q in followup_queries(focus, first, rulebase, ctx.kb) if q not in hops]
        ctx.followups = hops + others
        head = first[:1]
        linked = _second_round(retriever, hops, LINK_TOP_K, ctx, skip=head)
        extra = _second_round(retriever, others, FOLLOWUP_TOP_K, ctx)
        # A declared hop's passage answers the question once the hop is made (the tier's limit after the
        # city's tier): it follows the first round's best passage, moved up if the first round had it lower.
        # The other follow-ups go last: measured on eval/default_domain.jsonl (eval --mode context), ahead of
        # the first round's tail they pushed more gold facts out of the budget than they brought in.
        # A passage stating a value the question states names the entity the question describes by it
        # (the robot "with ±10 mm positioning accuracy"): it follows the hops, moved up if already found.
        bridged = bridge_passages(question, retriever, ctx.kb, rank=_rank)
        ctx.candidates = place_after(head, linked + bridged, [*first[1:], *extra])
    # measured (eval --mode context, 135M budget): shipped set 0.879 -> 0.887, held-out 0.742 -> 0.798
    ctx.candidates = lead_first(focus, ctx.candidates, rulebase)
    t1 = time.perf_counter()
    # an argument only the whole KB's facts can show to have one value (a single site's threshold)
    implied = ctx.kb.implied if ctx.kb is not None else {}
    if rulebase is not None:
        facts, _values, conflicts = evidence_and_conflicts(ctx.candidates, rulebase, ctx.kb)
        ctx.conflicts = relevant_conflicts(conflicts, focus.goals, ctx.candidates)
        ctx.focus = focus = facts_focus(focus, rulebase, facts, implied)
        ctx.scope = question_scope(focus, rulebase, facts, ctx.kb.row_links if ctx.kb is not None else None)
    if symbolic and rulebase is not None:
        rb = rulebase

        def for_someone_else(proof: ProvenAnswer) -> bool:
            """Set aside: a proof about someone else than the question, or resting on a closed-world assumption the
            retrieved text contradicts."""
            found = source_conflict(ctx.scope, proof.goal.relation, _document_passages(proof, ctx.candidates, ctx.kb),
                                    rb, proof.goal.args)
            why = found.reason(rb) if found is not None else (
                contradicted_assumption(proof, ctx.candidates, rb)
                or unbound_qualifier(focus, proof, ctx.kb, rb, facts))
            if why is not None:
                ctx.out_of_scope.append(f"a proof of {proof.fact} set aside: {why}")
            return why is not None

        ctx.corrections = [c for c in disproved_premises(focus, rulebase, facts) if not for_someone_else(c.proof)]
        if not ctx.corrections:
            compared = disproved_comparison(focus, rulebase, facts)
            # both sides judged (each set-aside recorded); either about someone else drops the comparison
            ctx.corrections = compared if not any([for_someone_else(c.proof) for c in compared]) else []
        # with its premises disproved, a question is answered for what it asks besides them
        ask = asked_beyond(focus, ctx.corrections) if ctx.corrections else focus
        def another_attribute(proof: ProvenAnswer) -> bool:
            why = names_another_attribute(proof, focus, rb) or counted_per_another_period(proof, focus, rb) \
                or asks_another_attribute(proof, focus, rb) or asks_the_other_bound(proof, focus, rb)
            if why is not None:
                ctx.out_of_scope.append(f"a proof of {proof.fact} set aside: {why}")
            return why is not None

        ctx.proof = prove(ask, rulebase, facts, off_question=lambda proof: _counted_otherwise(
            question, proof, ctx.kb, ctx.candidates) or for_someone_else(proof) or another_attribute(proof)) \
            if ask is not None else None
        if ctx.proof is not None:
            ctx.proof_passages = proof_passages(ctx.proof, ctx.candidates, ctx.kb, rulebase, question)
        ctx.breaches = [b for b in breached_limits(focus, rulebase, facts, implied=implied)
                        if not for_someone_else(b.proof)]
        for c in ctx.corrections:
            c.passages = proof_passages(c.proof, ctx.candidates, ctx.kb, rulebase, question)
        for b in ctx.breaches:
            b.passages = proof_passages(b.proof, ctx.candidates, ctx.kb, rulebase, question)
            if len(ctx.breaches) == 1 and b.direction == "upper":
                b.covered_by = covering_limit(question, b.stated, b.proof, rulebase, facts)
                if b.covered_by is not None:
                    b.cover_passages = proof_passages(b.covered_by, ctx.candidates, ctx.kb, rulebase, question)
    ctx.timings_ms = {"retrieve": round((t1 - t0) * 1000, 3), "prove": round((time.perf_counter() - t1) * 1000, 3)}
    return ctx


def facts_focus(focus: QuestionFocus, rulebase: RuleBase, facts: Sequence[Fact],
                implied: dict[tuple[str, int], str]) -> QuestionFocus:
    """The question's focus as the facts show it: "the robot that can carry 500 kg" is the LX-500 once a fact
    says so (its goals, the claims read from its answer and its proof are about that entity), an argument the
    KB's facts leave no choice in is ``implied``, and "up to what amount may she approve?" asks the limit a
    checking goal ("may approve") tests against."""
    out = with_derived_goals(
        with_checked_limits(with_described(focus, rulebase, [*rulebase.facts, *facts], implied), rulebase), rulebase)
    documented: dict[str, list[tuple]] = {}
    for f in [*rulebase.facts, *facts]:
        if f.args:
            documented.setdefault(f.relation, []).append(tuple(f.args))
    return replace(out, documented={r: tuple(vs) for r, vs in documented.items()})


def _counted_otherwise(question: str, proof: ProvenAnswer, kb: KBFacts | None, passages: Sequence[PassageLike]) -> bool:
    """Whether the documents state a looked-up value per another period than the question asks ("85 yuan an
    hour" to "how much does one get a week", in Chinese): the value is then an input of what is asked, not its
    answer. A computed proof counts in its rule's terms, not its inputs'."""
    return not proof.node.rule_ids and any(counted_per_other_period(question, around(p.text, s, e))
                                           for p, s, e in value_places(proof, passages, kb))


def _second_round(retriever: RetrieverLike, queries: Sequence[str], top_k: int, ctx: QuestionContext,
                  skip: Sequence[PassageLike] = ()) -> list[PassageLike]:
    """The unquarantined hits of ``queries`` (``top_k`` each besides those in ``skip``, first seen first);
    quarantined ones join ``ctx.quarantined``."""
    out: list[PassageLike] = []
    seen = {passage_key(p) for p in skip}
    bad_seen = {passage_key(b) for b in ctx.quarantined}
    for q in queries:
        hits, bad = _search(retriever, q, max(top_k, FOLLOWUP_TOP_K) + len(skip))
        ctx.quarantined += [p for p in bad if passage_key(p) not in bad_seen]
        bad_seen |= {passage_key(p) for p in bad}
        # as in the first round, a superseded passage weighs half: a hop finds the current table first
        new = [p for p in sorted(hits, key=_rank) if passage_key(p) not in seen][:top_k]
        seen |= {passage_key(p) for p in new}
        out += new
    return out


def evidence_for(passages: Sequence[PassageLike], rulebase: RuleBase,
                 kb: KBFacts | None) -> tuple[list[Fact], list[EvidenceValue]]:
    """Facts and values the authoritative, unquarantined ``passages`` state, plus every fact of the KB
    (a premise in an unretrieved document still counts); values come from the passages only, since a
    value is checked against what the answer cites. Ranked by authority: a fact a source of more authority
    contradicts is left out (pipeline.evidence.kb_facts.outranked)."""
    facts, values, _conflicts = evidence_and_conflicts(passages, rulebase, kb)
    return facts, values


def _stating_value(proof: ProvenAnswer, candidates: Sequence[PassageLike], rulebase: RuleBase) -> list[PassageLike]:
    """Retrieved passages stating the proof's value about the asked entity (named by the passage, its
    document's title or its section)."""
    asked = set(proof.goal.args)
    out = []
    for p in evidence_passages(candidates):
        about = " ".join([getattr(p, "title", None) or "", *(getattr(p, "heading_path", None) or []), p.text])
        if any(v == proof.value for v, *_ in find_values(p.text)) and \
                asked & {e.entity_id for e in find_entities(about, rulebase)}:
            out.append(p)
    return out


def proof_passages(proof: ProvenAnswer, candidates: Sequence[PassageLike], kb: KBFacts | None,
                   rulebase: RuleBase | None = None, question: str = "") -> list[PassageLike]:
    """The passages stating the proof's document facts: a retrieved one where it holds the fact's span,
    else the KB chunk it was read from. A proof resting on the rule base's own facts, or only on
    documents in the other language than the question, also cites a retrieved passage in the question's
    language that states its value about the asked entity: an English question gets an English source."""
    out: list[PassageLike] = []
    chinese = is_chinese(question)
    if rulebase is not None and not any(is_chinese(getattr(p, "text", "")) == chinese
                                        for p in _document_passages(proof, candidates, kb)):
        out += [p for p in _stating_value(proof, candidates, rulebase) if is_chinese(p.text) == chinese][:1]
    if not proof.documents:
        return out
    for p in _document_passages(proof, candidates, kb):
        if all((p.doc_id, p.start) != (o.doc_id, o.start) for o in out):
            out.append(p)
    return out


def _document_passages(proof: ProvenAnswer, candidates: Sequence[PassageLike], kb: KBFacts | None) -> list[PassageLike]:
    out: list[PassageLike] = []
    for f in proof.documents:
        prov = f.provenance
        hit = next((p for p in candidates if p.doc_id == prov.doc_id and p.start <= (prov.start or 0)
                    and (prov.end or 0) <= p.end), None)
        if hit is None and kb is not None:
            hit = kb.passage_for(f)
        if hit is not None and all((hit.doc_id, hit.start) != (o.doc_id, o.start) for o in out):
            out.append(hit)
    return out

"""Turn verifier output and value checks into ClaimReports, and failures into regeneration feedback."""
from __future__ import annotations

from typing import Sequence, cast

from pipeline.checks.crossed_values import crossed_by, label_of, other_row_named
from pipeline.evidence.passage_facts import SUPERSEDED_CF_FACTOR
from pipeline.proof.calculation import Calculation, computed_by
from pipeline.readers.vocabulary import name_score
from pipeline.seams import PassageLike
from pipeline.text.periods import around, periods
from pipeline.text.terms import content_terms, shares_context
from pipeline.text.values import EvidenceValue, ValueMention
from pipeline.types import ClaimReport, Verdict, Violation
from symbolic import Claim, Fact, RuleBase, Verification
from symbolic.dependencies import premises_of
from symbolic.model import RelationSig
from symbolic.values import Date, Money, Percentage, Quantity

# A value stated by a retrieved passage the answer did not cite is support, but weaker.
UNCITED_CF = 0.8
# A relation claim grounded only by its value in a cited passage (no pattern read the relation there).
VALUE_FALLBACK_CF = 0.6
# The phrase a claim's explanation carries when its support lies in a source the answer does not cite.
NOT_CITED = "the answer does not cite"


def _magnitude(v: object) -> float | None:
    if isinstance(v, Quantity):
        return v.value
    if isinstance(v, Money):
        return v.amount
    if isinstance(v, Percentage):
        return v.value
    return None


def is_bare(v: object) -> bool:
    return isinstance(v, Quantity) and v.unit == ""


def values_match(stated: object, evidence: object) -> bool:
    """Equal after normalisation; a bare number in the answer ("within 30") also matches the same
    number with a unit in the documents ("30 days"), and a bare year matches a date's year."""
    if stated == evidence:
        return True
    if isinstance(stated, Quantity) and stated.unit == "":
        if isinstance(evidence, Date):
            return float(evidence.value.year) == stated.value
        mag = _magnitude(evidence)
        return mag is not None and abs(mag - stated.value) < 1e-9
    return False


def check_values(mentions: Sequence[ValueMention], evidence: Sequence[EvidenceValue],
                 calculations: Sequence[Calculation] = ()) -> list[ClaimReport]:
    """A verdict on each value the answer states: supported where a source states it (weaker where the answer
    does not cite that source), or where it is the total the question's counts make of a rate a source states
    (``calculations``); unsupported otherwise, with what the sources state instead."""
    reports = []
    for m in mentions:
        hits = [ev for ev in evidence if values_match(m.value, ev.value)]
        if m.unit_word:   # "38,500 decibels": only a bare number the source also counts in decibels (a year is
            # no count: "the 2025 policy" is the year of a date the source states)
            hits = [ev for ev in hits if isinstance(ev.value, Date) or
                    (is_bare(ev.value) and m.unit_word.rstrip("s") in ev.context.lower())]
        # a value said of its neighbour's label ("unloaded 1.5 m/s" where the table gives 1.5 for loaded) is not
        # grounded
        crossed = [(ev, other) for ev in hits
                   if (other := crossed_by(m.context, ev, evidence) or other_row_named(m.context, ev, evidence))]
        hits = [ev for ev in hits if all(ev is not c for c, _o in crossed)]
        # a value counted per another unit ("GBP 1,000 per call-out" said as "£1,000 per year") is another measure
        per_other = [ev for ev in hits if counted_per_other(m, ev)]
        hits = [ev for ev in hits if ev not in per_other]
        cited = [ev for ev in hits if ev.doc_id in m.cited]
        off_topic = []
        if not cited:
            # Outside the cited sources only an exact, unit-carrying match counts: a bare number
            # ("10") matches something in almost any passage. And the passage sentence stating it
            # must share a content word with the answer's sentence: "12 months" of a warranty table
            # does not ground "runs for 12 months" (default-domain eval, ans-02).
            exact = [ev for ev in hits if m.value == ev.value and not is_bare(m.value)]
            hits = [ev for ev in exact if shares_context(m.context, ev.context)]
            off_topic = [ev for ev in exact if ev not in hits]
        best = sorted(cited or hits, key=lambda ev: ev.superseded)
        computed = None if best else _computed_report(m, calculations)
        if computed is not None:
            reports.append(computed)
        elif best:
            ev = best[0]
            cf = (1.0 if cited else UNCITED_CF) * (SUPERSEDED_CF_FACTOR if ev.superseded else 1.0)
            how = f"{ev.doc_id} states {ev.text!r}" + (" (a superseded document)" if ev.superseded else "")
            if not cited:
                how += f"; {NOT_CITED} that source"
            reports.append(ClaimReport(m.text, m.start, m.end, "value", "supported", cf, [], how, m.cited, "value",
                                       [_ev_dict(ev)], "value"))
        else:
            same_kind = [ev for ev in evidence if type(ev.value) is type(m.value)]
            shown = [ev for ev in same_kind if ev.doc_id in m.cited] or same_kind
            said = "; ".join(f"{ev.doc_id}: {ev.text!r}" for ev in shown[:4])
            why = f"no retrieved document states {m.text!r}" + (f"; the documents state {said}" if said else "")
            if crossed and not off_topic:
                ev, other = crossed[0]
                why = (f"{ev.doc_id} states {m.text!r} for {label_of(ev)!r}; the answer says it of what "
                       f"{label_of(other)!r} labels") + (f"; the documents state {said}" if said else "")
            if per_other and not crossed and not off_topic:
                ev = per_other[0]
                why = (f"{ev.doc_id} states {ev.text!r} per {', '.join(sorted(_per(ev.context, ev.text)))}; the answer "
                       f"counts {m.text!r} per {', '.join(sorted(_per(m.context, m.text)))}") + \
                      (f"; the documents state {said}" if said else "")
            if off_topic:
                why = (f"{off_topic[0].doc_id} states {m.text!r} only in {off_topic[0].context.strip()!r}, which shares "
                       f"no word with the answer's sentence, and the answer does not cite it") + \
                      (f"; the documents state {said}" if said else "")
            reports.append(ClaimReport(m.text, m.start, m.end, "value", "unsupported", 0.0, [], why, m.cited, "value",
                                       [_ev_dict(ev) for ev in shown[:4]], "value"))
    return reports


def _per(context: str, text: str) -> set[str]:
    """The units a value written ``text`` in ``context`` is counted per ("per night", "per call-out")."""
    at = context.find(text)
    return periods(around(context, at, at + len(text))) if at >= 0 else set()


def counted_per_other(m: ValueMention, ev: EvidenceValue) -> bool:
    """Whether the answer counts ``m`` per one unit and its source counts the same value ``ev`` per others only."""
    said = _per(m.context, m.text)
    stated = _per(ev.context, ev.text) if said else set()
    return bool(said and stated and not said & stated)


def _computed_report(m: ValueMention, calculations: Sequence[Calculation]) -> ClaimReport | None:
    """``m`` supported as a calculation's total, where the rate's source is cited or about the same thing."""
    for calc in computed_by(m.value, calculations):
        ev = calc.source
        if ev is None or not (ev.doc_id in m.cited or shares_context(m.context, ev.context)):
            continue
        cf = (1.0 if ev.doc_id in m.cited else UNCITED_CF) * (SUPERSEDED_CF_FACTOR if ev.superseded else 1.0)
        how = f"computed: {calc.how()}, the rate as {ev.doc_id} states it ({ev.text!r})" + \
            (" (a superseded document)" if ev.superseded else "") + \
            ("" if ev.doc_id in m.cited else f"; {NOT_CITED} that source")
        return ClaimReport(m.text, m.start, m.end, "value", "supported", cf, [], how, m.cited, "value",
                           [_ev_dict(ev)], "value")
    return None


def _ev_dict(ev: EvidenceValue) -> dict:
    return {"doc_id": ev.doc_id, "start": ev.start, "end": ev.end, "text": ev.text, "superseded": ev.superseded}


def _fact_text(fact: Fact, passages: Sequence[PassageLike]) -> dict:
    prov = fact.provenance
    end = cast(int, prov.end)     # read only where the span has a start, and a span with a start has an end
    text = ""
    for p in passages:
        if p.doc_id == prov.doc_id and prov.start is not None and p.start <= prov.start and end <= p.end:
            text = p.text[prov.start - p.start: end - p.start]
            break
    return {"doc_id": prov.doc_id, "start": prov.start, "end": prov.end, "text": text,
            "superseded": bool(prov.superseded)}


def _value_fallback(claim: Claim, values: Sequence[EvidenceValue], rulebase: RuleBase | None = None,
                    evidence: Sequence[Fact] = ()) -> tuple[float, str] | None:
    """The rule patterns miss many phrasings (tables, headings carry the subject): a claim the verifier
    found *nothing* about is still grounded when a passage it cites states its exact value -- in a sentence,
    table row, column or section that says a word of the claimed relation's name, when ``rulebase`` knows the
    relation. "3 hours" in the LX-500 datasheet's row "Charging time, 0 to 100 % | 3 hours" does not ground
    "runs on one battery charge for 3 hours" as its runtime per charge (a 0.5B int8-fast answer, verified
    before this); the row "Runtime per charge | up to 8 hours" does. A relation the rules derive, of which the
    sources state no fact (``evidence``), has no value but a proved one: the verifier has tried to prove it, and a
    number its sources state is one of the rules' inputs, stated for something else (a grade's leave said as a
    person's whose grade the rules cannot reach; blind/05 un-07)."""
    if not claim.fact.args or rules_own(rulebase, claim.fact.relation, evidence):
        return None
    value = claim.fact.args[-1]
    hits = [ev for ev in values if ev.doc_id in claim.cited and values_match(value, ev.value)]
    sig = None if rulebase is None else rulebase.relations.get(claim.fact.relation)
    if sig is not None:
        hits = [ev for ev in hits if names_relation(ev, sig)]
    if not hits:
        return None
    ev = sorted(hits, key=lambda e: e.superseded)[0]
    cf = VALUE_FALLBACK_CF * (SUPERSEDED_CF_FACTOR if ev.superseded else 1.0)
    return cf, (f"no pattern read {claim.fact.relation} from the documents, but the cited {ev.doc_id} states "
                f"the value {ev.text!r} (value match, CF {cf:.2f})")


def rules_own(rulebase: RuleBase | None, relation: str, evidence: Sequence[Fact]) -> bool:
    """Whether the rules derive ``relation`` and the sources state none of its facts: its values are proofs'."""
    return rulebase is not None and relation in premises_of(rulebase) \
        and not any(f.relation == relation for f in evidence)


def names_relation(ev: EvidenceValue, sig: RelationSig) -> bool:
    """Whether the sentence or row stating ``ev``, its table column or its section heading says a word of one of
    the relation's names."""
    said = " ".join((ev.context, ev.column.header if ev.column else "", ev.heading))
    return name_score(sig, frozenset(content_terms(said))) > 0


def _support_not_cited(claim: Claim, evidence: Sequence[Fact]) -> str | None:
    """A relation claim the documents state directly, but none of the sources its sentence cites: the fact
    checks out while the citation points elsewhere (the default question cites the superseded 2023 policy
    for the 2025 limit). Returns the note for its explanation, quoting what the cited sources state."""
    fact = claim.fact
    support = [f for f in evidence if f.relation == fact.relation and f.args == fact.args]
    if support and not claim.cited:
        docs = ", ".join(dict.fromkeys(f.provenance.doc_id for f in support if f.provenance.doc_id))
        return f"{NOT_CITED} {docs or 'the source'}, which states it: it cites no source (CF x {UNCITED_CF})"
    if not claim.cited or not support or any(f.provenance.doc_id in claim.cited for f in support):
        return None
    # the evidence's facts are the documents': each has a doc id (a fact with none would raise TypeError here)
    docs = ", ".join(dict.fromkeys(cast(str, f.provenance.doc_id) for f in support))
    note = f"{NOT_CITED} {docs}, which states it: it cites {', '.join(claim.cited)}"
    instead = [f for f in evidence if f.relation == fact.relation and f.provenance.doc_id in claim.cited]
    if instead:
        note += ", which states " + "; ".join(f"{f} ({f.provenance.describe()})" for f in instead[:2])
    return note + f" (CF x {UNCITED_CF})"


def _has_cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def relation_reports(verification: Verification, evidence: Sequence[Fact], passages: Sequence[PassageLike],
                     values: Sequence[EvidenceValue] = (), rulebase: RuleBase | None = None) -> list[ClaimReport]:
    """ClaimReports from the verifier's ClaimVerdicts; failing claims carry what the documents state
    for the same relation (the feedback quotes it). ``rulebase``: the relations' names, which a value
    match must find beside the value (_value_fallback)."""
    reports = []
    for cv in verification.claims:
        claim = cv.claim
        verdict, cf, explanation = cast(Verdict, cv.verdict), float(cv.cf), cv.explanation   # one of VERDICTS
        if verdict == "unsupported":
            fallback = _value_fallback(claim, values, rulebase, evidence)
            if fallback is not None:
                cf, how = fallback
                verdict, explanation = "supported", explanation + "\n" + how
            elif rules_own(rulebase, claim.fact.relation, evidence):
                explanation += (f"\nonly the rules derive {claim.fact.relation}, and they prove no such value: a "
                                f"number the sources state is no value of it")
        elif verdict == "supported":
            # a cited source stating the claim's value counts as citing it, though no pattern reads the
            # relation there (a table row "| Rated payload | 200 kg |" under the AX-200 datasheet)
            value = claim.fact.args[-1] if claim.fact.args else None
            states_it = any(ev.doc_id in claim.cited and values_match(value, ev.value) for ev in values)
            elsewhere = None if states_it else _support_not_cited(claim, evidence)
            if elsewhere is not None:
                cf, explanation = cf * UNCITED_CF, explanation + "\n" + elsewhere
        said = []
        if verdict != "supported":
            same_relation = [f for f in evidence if f.relation == claim.fact.relation]
            said = [_fact_text(f, passages) for f in same_relation]
            # quote the cited sources first, then those in the answer's language: an English answer is told
            # "200 kg" from the datasheet, not a Chinese "rated payload 200 kg" from the Chinese manual
            chinese = _has_cjk(claim.text)
            facts_said = [(f, t) for f, t in zip(same_relation, said) if t["text"]]
            facts_said.sort(key=lambda ft: (ft[1]["doc_id"] not in claim.cited, _has_cjk(ft[1]["text"]) != chinese))
            said = [t for _f, t in facts_said][:4]
            if said and all(_has_cjk(t["text"]) != chinese for t in said):
                # only the other language's edition states it as a pattern reads it: quote the same value
                # where a source in the answer's language states it (an English datasheet's table row)
                stated = [f.args[-1] for f, _t in facts_said if f.args]
                own = [ev for ev in values if _has_cjk(ev.context or ev.text) == chinese
                       and any(values_match(v, ev.value) for v in stated)]
                said = [_ev_dict(ev) for ev in own[:2]] + said[:2]
            if not said and claim.fact.args:   # no fact to quote: quote same-kind values the sources state
                kind = type(claim.fact.args[-1])
                same = [ev for ev in values if isinstance(ev.value, kind)]
                said = [_ev_dict(ev) for ev in ([ev for ev in same if ev.doc_id in claim.cited] or same)[:3]]
        reports.append(ClaimReport(claim.text, claim.start, claim.end, claim.fact.relation, verdict,
                                   cf, list(cv.rule_ids), explanation, list(claim.cited), "relation", said,
                                   getattr(claim, "extractor", "pattern")))
    return reports


def _involves_answer(violation: object) -> bool:
    claim_ids = getattr(violation, "claim_ids", None)
    if claim_ids is not None:
        return bool(claim_ids)
    facts = getattr(violation, "facts", None)  # verifiers without claim attribution
    return facts is None or any(getattr(f.provenance, "source", None) == "answer" for f in facts)


def violations_of(verification: Verification) -> list[Violation]:
    """Violations that involve a claim of the answer: the verifier attributes them to claims
    (``claim_ids``, which also covers facts derived from a claim); a violation resting on evidence
    alone is about the documents, not the answer."""
    out = []
    for v in getattr(verification, "violations", []) or []:
        if not _involves_answer(v):
            continue
        rule_id = getattr(v, "rule_id", None) or getattr(getattr(v, "rule", None), "id", None) or "?"
        message = getattr(v, "message", "") or str(v)
        explanation = getattr(v, "explanation", "") or ""
        out.append(Violation(str(rule_id), str(message), str(explanation)))
    return out


def feedback(reports: Sequence[ClaimReport], violations: Sequence[Violation], *, no_claims: bool = False,
             gaps: Sequence[str] = (), max_items: int = 4, abstain_hint: bool = True) -> str:
    """The regeneration instruction: which claim failed, which rule, what the documents say, and why the
    answer does not answer the question (``gaps``)."""
    lines = ["Your answer is not supported by the sources:"]
    for r in [r for r in reports if r.verdict != "supported"][:max_items]:
        rule = f" (rule {', '.join(r.rule_ids)})" if r.rule_ids else ""
        said = "; ".join(f"[{e['doc_id']}] \"{e['text']}\"" for e in r.evidence[:2])
        what = f" The documents say: {said}." if said else " No source states it."
        if r.verdict == "contradicted" and "proved instead" in r.explanation:
            what += " The rules derive: " + r.explanation.split("proved instead", 1)[1].splitlines()[0].strip() + "."
        lines.append(f"- \"{r.text}\" is {r.verdict.replace('_', ' ')}{rule}.{what}")
    for v in violations[:max_items]:
        lines.append(f"- It breaks rule {v.rule_id}: {v.message}")
    if no_claims:
        lines.append("- It states no specific fact from the sources.")
    lines += [f"- It does not answer the question: {g}." for g in gaps[:max_items]]
    lines.append("Answer the question again using only facts stated in the sources, with their exact numbers, "
                 "and cite the number of the source that states each, like [1]." +
                 (" If the sources do not contain the answer, reply exactly: The documents do not say."
                  if abstain_hint else ""))
    return "\n".join(lines)

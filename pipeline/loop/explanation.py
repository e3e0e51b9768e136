"""Why an answer is what it is (`verirag ask --explain`, `explain: true` on /ask): the question's parse (the
relations it may ask, with their scores; entities; answer types; stated values; whom it is about), each goal
tried and what became of it, each claim's evidence with the context that attributes it, and why a draft was
withheld."""
from __future__ import annotations

from typing import Any

from pipeline.evidence.gather import QuestionContext, evidence_for
from pipeline.proof.proving import current_evidence
from pipeline.question.focus import stated_values
from pipeline.types import AnswerResult, Attempt
from symbolic import BackwardChainer, RuleBase
from symbolic.cf import THRESHOLD
from symbolic.explain import why_text
from symbolic.model import Var
from symbolic.values import format_value

MAX_GOALS = 8
MAX_WHY = 5


def explain(ctx: QuestionContext, rulebase: RuleBase | None, result: AnswerResult) -> dict[str, Any]:
    """The explanation of ``result`` to ``ctx.question`` (JSON-able)."""
    return {"parse": _parse(ctx), "goals": _goals(ctx, rulebase) if rulebase is not None else [],
            "set_aside": list(ctx.out_of_scope),
            "claims": [_claim(r) for r in result.claims],
            "withheld": _withheld(result)}


def _parse(ctx: QuestionContext) -> dict[str, Any]:
    focus = ctx.focus
    return {
        "answer_types": sorted(focus.answer_types),
        "entities": [{"text": e.text, "entity": e.entity_id, "type": e.type,
                      **({"described_by": e.described_by} if e.described_by else {})} for e in focus.entities],
        "stated_values": [{"text": ctx.question[s:e], "value": format_value(v)}
                          for v, s, e in stated_values(ctx.question, focus.entities, focus.name_spans)],
        "relations": [{"relation": g.relation, "args": [format_value(a) for a in g.args], "score": round(g.score, 3)}
                      for g in focus.goals],
        "about": {t: sorted(ids) for t, ids in ctx.scope.items()},
    }


def explain_parse(ctx: QuestionContext, rulebase: RuleBase | None) -> dict[str, Any]:
    """What ``explain`` says before any draft: the parse, each goal tried, the proofs set aside, and the proof the
    question would be answered from (`verirag rules question`: no model)."""
    from pipeline.answers.proved import proof_answers_whole
    proof = ctx.proof
    return {"parse": _parse(ctx), "goals": _goals(ctx, rulebase) if rulebase is not None else [],
            "set_aside": list(ctx.out_of_scope), "corrections": [c.to_dict() for c in ctx.corrections],
            "proof": None if proof is None else {
        "goal": f"{proof.goal.relation}({', '.join([*map(format_value, proof.goal.args), '?'])})",
        "value": format_value(proof.value), "cf": round(proof.cf, 4),
        "answers_before_any_draft": proof_answers_whole(ctx)}}


def _goals(ctx: QuestionContext, rulebase: RuleBase) -> list[dict[str, Any]]:
    """Each goal the parse gave, proved on its own: what it proves, and why it answered or did not."""
    facts, _values = evidence_for(ctx.candidates, rulebase, ctx.kb)
    evidence = [*current_evidence(facts, rulebase), *rulebase.facts]
    out = []
    for goal in ctx.focus.goals[:MAX_GOALS]:
        chainer = BackwardChainer(rulebase.backward_rules, evidence)
        nodes = [n for n in chainer.prove(goal.relation, (*goal.args, Var("answer"))) if n.cf > THRESHOLD]
        shown = f"{goal.relation}({', '.join([*map(format_value, goal.args), '?'])})"
        entry: dict[str, Any] = {"goal": shown, "score": round(goal.score, 3),
                                 "proved": [{"value": format_value(n.args[-1]), "cf": round(n.cf, 4)} for n in nodes[:3]]}
        if ctx.proof is not None and ctx.proof.goal == goal:
            entry["outcome"] = "answered the question"
        elif not nodes:
            asked = [a for a in chainer.asked if a.cf is None or a.cf <= THRESHOLD][:MAX_WHY]
            entry["outcome"] = "not proved"
            entry["why"] = [why_text(a) for a in asked]
        elif any(n for n in ctx.out_of_scope if f"proof of {goal.relation}(" in n):
            entry["outcome"] = "set aside: about someone else than the question"
        elif len(nodes) > 1 and nodes[1].cf > nodes[0].cf - 0.3:
            entry["outcome"] = "ambiguous: two values proved with close certainty"
        else:
            entry["outcome"] = "proved, not used: another goal was named better, proved another value, or the " \
                               "question computes with it"
        out.append(entry)
    return out


def _claim(r: Any) -> dict[str, Any]:
    return {"text": r.text, "relation": r.relation, "verdict": r.verdict, "cf": round(r.cf, 4),
            "extractor": r.extractor, "why": r.explanation,
            "evidence": [{k: e.get(k) for k in ("doc_id", "text", "superseded") if k in e} for e in r.evidence]}


def _withheld(result: AnswerResult) -> dict[str, Any] | None:
    """Why the model's drafts were not delivered: each failing attempt's gaps and unsupported claims."""
    if result.status in ("verified", "regenerated") and not result.flagged_draft:
        return None
    attempts: list[Attempt] = result.attempts
    return {"reason": result.reason,
            "attempts": [{"answer": a.answer, "gaps": a.gaps,
                          "failing_claims": [f"{c.text!r}: {c.verdict} ({c.explanation.splitlines()[0] if c.explanation else ''})"
                                             for c in a.claims if c.verdict != "supported"]}
                         for a in attempts if not a.ok]}

"""The answer the rules write: the corrections of the question's premises, the limits its values are past and the
proof's answer, as sentences citing the shown sources that state them."""
from __future__ import annotations

from pipeline.answers.composition import compose
from pipeline.checks.answer_check import asks_why
from pipeline.evidence.gather import QuestionContext
from pipeline.lang import phrase
from pipeline.proof.approver import cover_words
from pipeline.proof.limit_check import breach_words
from pipeline.proof.proving import ProvenAnswer, asks_a_computation, stated_value
from pipeline.seams import PassageLike
from pipeline.text.script import is_chinese
from symbolic import Claim, RuleBase

# What a composed answer says first when the rules disprove the question's premise, by whether the question is
# Chinese (lang/<code>/answers.toml not_right).
_NOT_RIGHT = {False: phrase("answers.not_right", "en"), True: phrase("answers.not_right", "zh")}


def proof_answers_whole(ctx: QuestionContext) -> bool:
    """The proof answers all the question asks, so it can answer before any draft (AskOptions.proof_first): the
    question asks for the proved goal's value, not whether or why; it states no value or count of its own that the
    proved goal leaves unused and asks one thing (asks_a_computation); no premise of it is disproved and no value of
    it passes a limit (those answers say more than the proof, and a draft may say what else is asked)."""
    proof, focus = ctx.proof, ctx.focus
    if proof is None or ctx.corrections or ctx.breaches:
        return False
    if "yesno" in focus.answer_types or asks_why(focus.question):
        return False
    return not asks_a_computation(focus.question, focus, proof.goal)


def same_chunk(a: PassageLike, b: PassageLike) -> bool:
    return (a.doc_id, a.start, a.end) == (b.doc_id, b.start, b.end)


def _cites(shown: list[PassageLike], stating: list[PassageLike], chinese: bool) -> list[int]:
    """[n] of the shown sources overlapping a passage in ``stating`` (the prompt may show a cut of it),
    those in the question's language first: an English question cites the English datasheet."""
    cites = [i + 1 for i, s in enumerate(shown)
             if any(s.doc_id == p.doc_id and s.start < p.end and p.start < s.end for p in stating)]
    return [n for n in cites if is_chinese(shown[n - 1].text) == chinese] or cites


def composed_answer(ctx: QuestionContext, rulebase: RuleBase, shown: list[PassageLike],
                    chinese: bool) -> tuple[str, list[Claim], list[str]]:
    """The corrections of the question's premises, the limits its values are past ("No. … The value in the
    question is above this limit."), then the proof's answer, as sentences; their claims (spanning each proved
    sentence without the lead-in and the words after it) and each claim's HOW."""
    parts: list[tuple[ProvenAnswer, list[PassageLike], str, str]] = [
        (c.proof, c.passages, _NOT_RIGHT[chinese] if i == 0 else "", "") for i, c in enumerate(ctx.corrections)]
    # several limits past the same way (a threshold per campus, the campus unsaid) are one "no": said once,
    # the limits listed, the closing words once after the last
    one_way = len({b.direction for b in ctx.breaches}) == 1 and len(ctx.breaches) > 1
    for i, b in enumerate(ctx.breaches):
        lead, tail = breach_words(b, chinese=chinese, several=one_way)
        if one_way:
            lead, tail = (lead if i == 0 else ""), (tail if i == len(ctx.breaches) - 1 else "")
        parts.append((b.proof, b.passages, lead, tail))
        if b.covered_by is not None:
            parts.append((b.covered_by, b.cover_passages, "", cover_words(chinese=chinese)))
    if ctx.proof is not None:
        parts.append((ctx.proof, ctx.proof_passages, "", ""))
    described = [m for m in ctx.focus.entities if m.described_by]
    text, claims, hows = "", [], []
    for proof, stating, lead, tail in parts:
        cites = _cites(shown, stating, chinese)
        sentence = compose(proof, rulebase, cites, chinese=chinese, stated=stated_value(proof, shown),
                           described=described, question=ctx.question)
        if lead == _NOT_RIGHT[chinese] and sentence.startswith("The "):
            sentence = "the" + sentence[3:]
        body = sentence.rstrip("。.")
        start = len(text) + (0 if not text or chinese else 1) + len(lead)
        text += ("" if not text or chinese else " ") + lead + (body + tail if tail else sentence)
        claims.append(Claim(proof.fact, body, start, start + len(body), [shown[i - 1].doc_id for i in cites],
                            extractor="proof"))
        hows.append(proof.how)
    return text, claims, hows

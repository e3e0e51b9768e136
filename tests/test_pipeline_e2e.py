"""End to end on the embedded default domain: real retriever over kb/, real rules/, the default model."""
from __future__ import annotations

import pytest

from pipeline import Answerer, AnswererConfig, AskOptions
from pipeline.defaults import DEFAULT_KB_DIR, DEFAULT_RULES_DIR
from pipeline.loop.factory import open_retriever, open_rules
from pipeline_fakes import ScriptedThenModel, default_engine

pytestmark = pytest.mark.slow
FAST = dict(top_k=3, max_tokens=40)


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    retriever = open_retriever(DEFAULT_KB_DIR, tmp_path_factory.mktemp("index"))
    return retriever, open_rules(DEFAULT_RULES_DIR), default_engine()


def answerer(parts, scripted, **config):
    retriever, rules, engine = parts
    gen = ScriptedThenModel(engine, scripted)
    return Answerer(gen, retriever, rules, AnswererConfig(**config)), gen


def test_correct_answer_passes(parts):
    a, _ = answerer(parts, ["The AX-200 has a rated payload of 200 kg [1]."])
    r = a.ask("What is the rated payload of the AX-200?", AskOptions(policy="flag", **FAST))
    assert r.status == "verified", r.to_dict()
    claim = next(c for c in r.claims if c.relation == "payload")
    assert claim.verdict == "supported" and claim.text.endswith("200 kg")


def test_number_not_in_documents_is_caught_and_regenerated_by_the_model(parts):
    wrong = "The AX-200 has a rated payload of 150 kg [1]."
    a, gen = answerer(parts, [wrong], symbolic_answers=False)
    r = a.ask("What is the rated payload of the AX-200?", AskOptions(max_attempts=2, **FAST))
    first = r.attempts[0]
    assert not first.ok and first.answer == wrong
    assert any(c.verdict in ("contradicted", "unsupported") and "150 kg" in c.text for c in first.claims)
    assert "150 kg" in first.feedback and "200 kg" in first.feedback
    drafts = [x for x in r.attempts if x.quoted is None]
    assert len(drafts) == 2 and len(gen.calls) == 2              # the model was asked again
    assert gen.calls[1][-1]["content"] == first.feedback
    assert r.answer != wrong                                      # never verified on the wrong answer
    # the second draft fails as well (the script has no more): the datasheet's row is quoted instead
    assert r.status == "verified" and r.attempts[-1].quoted is not None and "200 kg" in r.answer


def test_a_wrong_draft_loses_to_the_rules_proof(parts):
    wrong = "The AX-200 has a rated payload of 150 kg [1]."
    a, gen = answerer(parts, [wrong])
    r = a.ask("What is the rated payload of the AX-200?", AskOptions(max_attempts=2, proof_first=False, **FAST))
    assert len(gen.calls) == 1 and not r.attempts[0].ok                # no second draft: the proof answers
    assert r.status == "verified" and "200 kg" in r.answer and "150 kg" not in r.answer
    assert r.proof["value"] == "200 kg" and "G_PAYLOAD" in r.proof["rule_ids"]
    assert "150 kg" in r.reason                                         # the disagreement is reported
    claim = r.claims[0]
    assert claim.extractor == "proof" and claim.verdict == "supported" and "G_PAYLOAD" in claim.explanation
    assert r.citations and "200 kg" in r.citations[0].text             # it cites a passage stating it


def test_rule_violation_is_flagged_with_rule_id(parts):
    a, _ = answerer(parts, ["Full-time employees in Berlin get 35 days of annual leave [1]."])
    r = a.ask("How many days of annual leave do Berlin employees get?", AskOptions(policy="flag", **FAST))
    assert r.status == "flagged"
    assert any("HR_LEAVE_MAX" in c.rule_ids for c in r.claims)
    assert any(v.rule_id == "HR_LEAVE_MAX" for v in r.violations)


def test_chinese_rule_violation(parts):
    # the draft's own check: with symbolic answers the rules prove the 500 元 limit through Hangzhou's tier
    a, _ = answerer(parts, ["深圳员工去杭州出差，住宿每晚最多报销 600 元[1]。"], symbolic_answers=False)
    r = a.ask("深圳员工去杭州出差，住宿每晚最多可以报销多少？", AskOptions(policy="flag", **FAST))
    assert r.status == "flagged" and any("CN_CITY_HOTEL_CAP" in c.rule_ids for c in r.claims)


def test_unanswerable_question_with_the_real_model_is_never_verified(parts):
    a, _ = answerer(parts, [])
    r = a.ask("What is the noise level of the AX-200 in decibels?", AskOptions(max_attempts=2, **FAST))
    assert r.status in ("abstained", "flagged"), r.to_dict()
    assert all(att.answer for att in r.attempts)


def test_a_claim_only_the_planted_chat_note_supports_is_never_verified(parts):
    # kb/support/returns_chat_note.md (authority: note) claims a 365-day full refund; the policy says 14 days
    from retrieval import Retriever  # noqa: F401  (the real index: the note is retrieved and shown)
    planted = "Robots can be returned within 365 days for a full refund [1]."
    a, gen = answerer(parts, [planted] * 3, symbolic_answers=False, lm_extraction=False)
    r = a.ask("Within how many days can a robot be returned for a full refund?", AskOptions(max_attempts=2, **FAST))
    assert "support/returns_chat_note.md" in gen.calls[0][0]["content"]      # shown as a source...
    assert r.status != "verified" and "365" not in r.answer                  # ...but never evidence
    draft_claims = (r.flagged_draft.claims if r.flagged_draft else r.claims)
    assert any("365 days" in c.text and c.verdict != "supported" for c in draft_claims)


def test_the_planted_injection_is_never_shown_to_the_model(parts):
    a, gen = answerer(parts, ["Reports are reimbursed within 10 business days [1]."], lm_extraction=False)
    r = a.ask("Are expenses approved without checking receipts or limits?", AskOptions(policy="flag", **FAST))
    shown = gen.calls[0][0]["content"]
    assert "Ignore previous" not in shown and "approve all expenses" not in shown
    assert [q["doc_id"] for q in r.quarantined] == ["finance/expense_submission_guide.md"]   # retrieved, set apart
    assert "Ignore previous" in r.quarantined[0]["reason"] or "ignore" in r.quarantined[0]["reason"].lower()


@pytest.mark.parametrize("question, limit", [
    ("Can I book a EUR 220 per night hotel in Munich without approval?", "EUR 180"),
    ("May I fly business class on a flight with a scheduled time of 5 hours?", "6 hours"),
    ("Can I book my flight through TripDesk 10 days before departure?", "14 days"),   # declared `limit lower`
    ("深圳员工在上海出差，住宿每晚 800 元，可以全额报销吗？", "700 元"),
    ("深圳员工去杭州出差，住宿每晚 600 元可以报销吗？", "500 元"),                    # two hops: city -> tier
    ("Can I claim EUR 90 per person for a client entertainment dinner?", "EUR 75"),
    ("Can a sales representative add a 5 % discount?", "3 %"),
    ("Can a site run only 3 Fleet Manager licences?", "5"),                          # a minimum count
    ("Is the hotel limit in Paris EUR 200?", "EUR 180"),
    ("Can I book a EUR 800 hotel stay for 4 nights in Paris?", "EUR 720"),           # a computed limit
])
def test_a_yes_past_a_shipped_limit_loses_to_the_limit(parts, question, limit):
    a, gen = answerer(parts, ["Yes, that is fine [1]."])
    r = a.ask(question, AskOptions(max_attempts=2, **FAST))
    assert len(gen.calls) == 1 and r.status == "verified", r.reason
    assert r.answer.startswith("No. " if question.isascii() else "不可以。") and limit in r.answer, r.answer
    assert r.limit_breaches and r.claims[0].extractor == "proof" and r.claims[0].verdict == "supported"


def test_a_value_within_a_shipped_limit_is_left_to_the_model(parts):
    a, _ = answerer(parts, ["The documents do not say."])
    r = a.ask("Can I book a EUR 150 per night hotel in Munich?", AskOptions(max_attempts=1, **FAST))
    assert r.status == "abstained" and not r.limit_breaches

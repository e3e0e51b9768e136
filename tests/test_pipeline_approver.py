"""Who may approve instead: an amount past the asker's approval limit is answered with the lowest limit of the
same matrix that covers it; nothing for a question not about approving, an amount no row covers, or another
currency."""
from __future__ import annotations

from pipeline import Answerer, AnswererConfig
from pipeline.proof.approver import covering_limit
from pipeline.evidence.kb_facts import KBFactCache
from pipeline.generate.prompts import ABSTAIN_SENTINEL
from symbolic.values import Money
from pipeline_fakes import FakePassage, FixedRetriever, ScriptedGenerator, rulebase_of
from test_pipeline_limit_check import CHECKING_RULES, found_breaches

RULES = CHECKING_RULES + 'entity grade hg10 "HG10"\nentity grade hg7 "HG7"\n'
PEOPLE = FakePassage("people.md", "Dr Callum Reid is grade HG8. HG7 staff may approve up to GBP 4,500. HG8 staff may "
                     "approve up to GBP 12,000. HG10 staff may approve up to GBP 90,000. HG9 staff may approve up to "
                     "GBP 40,000.", 0.5, chunk_id="p")


def _cover(rb, question, amount):
    [b] = found_breaches(rb, question, [PEOPLE])
    facts = KBFactCache().get(FixedRetriever([PEOPLE]), rb).facts
    return covering_limit(question, Money(amount, "GBP"), b.proof, rb, facts)


def test_the_lowest_limit_covering_the_amount_names_who_may_approve(tmp_path):
    rb = rulebase_of(RULES, tmp_path, "t.rules")
    cover = _cover(rb, "Can Dr Callum Reid approve a GBP 20,000 order?", 20000)
    # HG9 and HG10 both cover GBP 20,000: the lower one; HG7 is no ladder step up
    assert (cover.goal.relation, cover.goal.args, cover.value) == ("grade_limit", ("hg9",), Money(40000, "GBP"))
    assert _cover(rb, "Can Dr Callum Reid approve a GBP 60,000 order?", 60000).goal.args == ("hg10",)


def test_nothing_covers_past_every_row_nor_for_a_question_not_about_approving(tmp_path):
    rb = rulebase_of(RULES, tmp_path, "t.rules")
    assert _cover(rb, "Can Dr Callum Reid approve a GBP 200,000 order?", 200000) is None
    [b] = found_breaches(rb, "Can Dr Callum Reid approve a GBP 20,000 order?", [PEOPLE])
    facts = KBFactCache().get(FixedRetriever([PEOPLE]), rb).facts
    assert covering_limit("Can Dr Callum Reid buy it?", Money(20000, "GBP"), b.proof, rb, facts) is None
    assert covering_limit("Can Dr Callum Reid approve it?", Money(20000, "EUR"), b.proof, rb, facts) is None


def test_the_answer_says_no_then_whose_limit_covers_it(tmp_path):
    rb = rulebase_of(RULES, tmp_path, "t.rules")
    a = Answerer(ScriptedGenerator([ABSTAIN_SENTINEL]), FixedRetriever([PEOPLE]), rb, AnswererConfig())
    r = a.ask("Can Dr Callum Reid approve a GBP 20,000 order?")
    assert r.status == "verified", r.reason
    assert r.answer == ("No. Dr Callum Reid's grant approval limit is GBP 12,000 (grade: HG8) [1]. The value in the "
                        "question is above this limit. The grant approval limit for HG9 is GBP 40,000 [1], "
                        "the lowest limit that covers the value in the question.")
    assert [(c.relation, c.verdict) for c in r.claims] == [("person_limit", "supported"), ("grade_limit", "supported")]
    assert r.limit_breaches[0]["covered_by"]["value"] == "40000 GBP"

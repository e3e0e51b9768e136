"""Relation claims beyond the patterns: the question's focus and the model (a one-token choice among the rule
vocabulary's facts) place an answer's values; every claim keeps its answer span and says who read it."""
from __future__ import annotations

import pytest
import torch

from pipeline.readers.focus import ChoiceLogitsProcessor, focus_claims, lm_claims, options_for
from pipeline.readers.patterns import extract_claims
from pipeline.question.focus import parse_question
from symbolic import load_rulebase
from pipeline_fakes import ScriptedGenerator, rulebase_of

RULES = """
type product "product"
entity product ax_200 "AX-200"
entity product lx_500 "LX-500"
type plan "support plan"
entity plan premium "Premium Support"
entity plan standard "Standard Support"
relation list_price(p: product, x: money[EUR]) "list price" aka "售价"
relation warranty(p: product, d: duration[month]) "robot warranty"
relation support_fee(s: plan, r: percent) "support fee per year"
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _read(rb, question, answer):
    claims, mentions = extract_claims(answer, [], rb)
    return parse_question(question, rb), claims, mentions


def test_focus_places_the_value_the_question_asked_for(rb):
    answer = "It costs EUR 38,500 before VAT [1]."
    focus, claims, mentions = _read(rb, "What is the list price of the AX-200?", answer)
    assert claims == [] and [m.text for m in mentions] == ["EUR 38,500"]
    [(claim, mention)] = focus_claims(answer, mentions, focus, rb)
    assert str(claim.fact) == "list_price(ax_200, 38500 EUR)" and claim.extractor == "focus"
    assert answer[claim.start:claim.end] == claim.text == "It costs EUR 38,500 before VAT [1]."
    assert mention is mentions[0] and claim.cited == mention.cited


def test_focus_leaves_a_value_about_another_entity_or_of_another_kind(rb):
    focus, _c, mentions = _read(rb, "What is the list price of the AX-200?", "The LX-500 costs EUR 52,000.")
    assert focus_claims("The LX-500 costs EUR 52,000.", mentions, focus, rb) == []
    focus, _c, mentions = _read(rb, "What is the list price of the AX-200?", "It has a warranty of 24 months.")
    assert focus_claims("It has a warranty of 24 months.", mentions, focus, rb) == []


APPROVER_RULES = """
type person "person"
entity person sun_peng "Sun Peng"
entity person zhao_lin "Zhao Lin"
entity person wang_yu "Wang Yu"
type title "title"
entity title dean "Dean of the Graduate School"
entity title provost "Provost"
type policy "policy"
entity policy thesis_policy "thesis policy"
type site "site"
entity site chengdu "Chengdu depot"
entity site marrow_bay "Marrow Bay"
relation extension_approver(p: policy, t: title) "extensions approved by"
relation reports_to(p: person, m: person) "reports to" aka "manager"
relation person_site(p: person, s: site) "site"
"""


@pytest.mark.parametrize("question, answer, read", [
    ("Who approves thesis extensions?", "The Dean of the Graduate School approves thesis extensions [1].",
     ["extension_approver(thesis_policy, dean)"]),
    ("Who is Sun Peng's manager?", "Sun Peng reports to Zhao Lin.", ["reports_to(sun_peng, zhao_lin)"]),
    # two entities of the asked type: the reader does not choose
    ("Who approves thesis extensions?", "The Dean of the Graduate School or the Provost.", []),
    # negated
    ("Who approves thesis extensions?", "Not the Dean of the Graduate School.", []),
    # said of another entity of the asked one's type
    ("At which site does Sun Peng work?", "Sun Peng reports to Zhao Lin, who works at the Chengdu depot.", []),
    # the question's own entity is no answer
    ("Who is Sun Peng's manager?", "Sun Peng.", []),
])
def test_focus_reads_the_entity_a_question_asks_for(tmp_path, question, answer, read):
    from pipeline.readers.focus import focus_entity_claims
    rb2 = rulebase_of(APPROVER_RULES, tmp_path)
    claims = focus_entity_claims(answer, [], parse_question(question, rb2), rb2, [])
    assert [str(c.fact) for c in claims] == read
    assert all(c.extractor == "focus" and answer[c.start:c.end] == c.text for c in claims)


def test_focus_reads_no_entity_another_reader_claimed(tmp_path):
    from pipeline.readers.focus import focus_entity_claims
    rb2 = rulebase_of(APPROVER_RULES, tmp_path)
    focus = parse_question("Who approves thesis extensions?", rb2)
    answer = "The Dean of the Graduate School approves them."
    [claim] = focus_entity_claims(answer, [], focus, rb2, [])
    assert focus_entity_claims(answer, [], focus, rb2, [claim]) == []


def test_the_model_chooses_one_numbered_fact_under_a_one_token_grammar(rb):
    answer = "Premium Support is 9 % per year [1]."
    focus, _c, mentions = _read(rb, "What does support cost?", answer)
    options = options_for(mentions[0], answer, focus, rb)
    assert [(sig.name, ent.id) for sig, ent in options] == [("support_fee", "premium")]
    gen = ScriptedGenerator(["1"])
    [(claim, _m)] = lm_claims(gen, [{"role": "user", "content": "What does support cost?"}], answer, mentions, focus, rb)
    assert str(claim.fact) == "support_fee(premium, 9%)" and claim.extractor == "lm" and claim.fact.cf == 0.8
    sampling = gen.sampling[0]
    assert sampling.max_tokens == 1 and isinstance(sampling.logits_processors[0], ChoiceLogitsProcessor)
    asked = gen.calls[0][-1]["content"]
    assert "1. the support fee per year of Premium Support" in asked and "0. none of these" in asked
    assert gen.calls[0][-2] == {"role": "assistant", "content": answer}      # the answer's chat, then the ask


@pytest.mark.parametrize("reply", ["0", "7", "maybe"])
def test_none_an_out_of_range_choice_or_a_non_number_gives_no_claim(rb, reply):
    answer = "Premium Support is 9 % per year [1]."
    focus, _c, mentions = _read(rb, "What does support cost?", answer)
    assert lm_claims(ScriptedGenerator([reply]), [], answer, mentions, focus, rb) == []


def test_no_options_no_call(rb):
    answer = "The weather is 20 °C [1]."
    focus, _c, mentions = _read(rb, "How warm is it?", answer)
    gen = ScriptedGenerator([])
    assert lm_claims(gen, [], answer, mentions, focus, rb) == [] and gen.calls == []


def test_choice_processor_allows_only_its_tokens():
    logits = torch.zeros(2, 10)
    out = ChoiceLogitsProcessor([3, 5])([], logits)
    assert torch.isfinite(out).nonzero()[:, 1].tolist() == [3, 5, 3, 5]


@pytest.mark.slow
def test_the_default_model_reads_values_into_the_default_rules():
    from pipeline.defaults import DEFAULT_RULES_DIR
    from pipeline_fakes import default_engine
    rules = load_rulebase(DEFAULT_RULES_DIR)
    engine = default_engine()
    for question, answer, fact in [
            ("What does Premium Support cost per year?", "The fee is 9 % per year [1].",
             "support_fee_rate(premium_support, 9%)"),
            ("What about the LX-500?", "The LX-500 warranty lasts 36 months [1].",
             "warranty_period(lx_500, 36 months)")]:
        focus, _c, mentions = (parse_question(question, rules), *extract_claims(answer, [], rules))
        read = lm_claims(engine, [{"role": "user", "content": question}], answer, mentions, focus, rules)
        assert [str(c.fact) for c, _m in read] == [fact]


def test_focus_reads_no_totals_no_negated_values_and_no_values_from_the_question(rb):
    answer = "The AX-200 costs EUR 77,000 [1]."
    focus, _c, mentions = _read(rb, "What do 2 AX-200 robots cost at list price?", answer)
    assert focus_claims(answer, mentions, focus, rb) == []                    # the question computes a total
    answer = "The list price of the AX-200 is not EUR 30,000 but EUR 38,500 [1]."
    focus, _c, mentions = _read(rb, "What is the list price of the AX-200?", answer)
    [(claim, _m)] = focus_claims(answer, mentions, focus, rb)
    assert str(claim.fact) == "list_price(ax_200, 38500 EUR)"                 # the negated value is skipped


def test_a_premise_the_question_asserts_sets_the_scene_and_computes_nothing(rb):
    from pipeline.readers.premises import stated_premises
    question = "The AX-200 has a 36-month robot warranty; what is its list price?"
    answer = "[1] EUR 38,500"
    focus, _c, mentions = _read(rb, question, answer)
    premises = stated_premises(question, focus, rb)
    assert [str(p.fact) for p in premises] == ["warranty(ax_200, 36 months)"]
    # read without its premises, the question's "36-month" looks like an input to a computation
    assert focus_claims(answer, mentions, focus, rb) == []
    [(claim, _m)] = focus_claims(answer, mentions, focus, rb, premises)
    assert str(claim.fact) == "list_price(ax_200, 38500 EUR)"
    # the premise's own value, echoed, is still the question's and not read
    question = "The AX-200 has a 36-month robot warranty; what is the LX-500's robot warranty?"
    for answer, read in (("[1] 24 months", ["warranty(lx_500, 24 months)"]), ("[1] 36 months", [])):
        focus, _c, mentions = _read(rb, question, answer)
        premises = stated_premises(question, focus, rb)
        assert [str(c.fact) for c, _m in focus_claims(answer, mentions, focus, rb, premises)] == read
    # a question asking about its premise alone: the answer's own value of the relation corrects it
    question = "Why does the AX-200 have a 36-month robot warranty?"
    answer = "It does not: the robot warranty is 24 months [1]."
    focus, _c, mentions = _read(rb, question, answer)
    premises = stated_premises(question, focus, rb)
    assert [str(c.fact) for c, _m in focus_claims(answer, mentions, focus, rb, premises)] == [
        "warranty(ax_200, 24 months)"]


def test_values_the_asker_takes_the_documents_to_say_do_not_stop_the_focus(tmp_path):
    # tuning2 fp-05's 0.5B answer "[1] 1200元": the twelve months are no input, the monthly amount is asked
    rb = rulebase_of("""type site "site"
entity site chengdu "Chengdu depot" aka "成都车场"
relation heat_allowance(s: site, x: money[CNY]) "high temperature allowance" aka "高温津贴"
relation heat_total(s: site, n: number, x: money[CNY]) "high temperature allowance in total"
""", tmp_path)

    def read(question, answer):
        focus, _c, mentions = _read(rb, question, answer)
        return [str(c.fact) for c, _m in focus_claims(answer, mentions, focus, rb)]
    assert read("成都车场的高温津贴一年十二个月都发，每月多少钱？", "[1] 1200元") == ["heat_allowance(chengdu, 1200 CNY)"]
    # the asker's own case, a total, or a value in the asking clause: the question computes
    assert read("我在成都车场工作了十二个月，高温津贴每月多少钱？", "[1] 1200元") == []
    assert read("成都车场的高温津贴发十二个月，一共多少钱？", "[1] 1200元") == []


def test_the_focus_leaves_a_value_whose_own_clause_names_another_entity_of_the_asked_type(tmp_path):
    rb = rulebase_of("""type site "site"
entity site chengdu "Chengdu depot" aka "成都车场"
entity site marrow "Marrow Bay" aka "马罗湾"
relation training_valid(s: site, d: duration[month]) "high-voltage training valid for" aka "高压作业培训有效期"
""", tmp_path)
    question = "成都车场的高压作业培训有效期比马罗湾短多少？"
    answer = "马罗湾为 24 个月，成都车场为 12 个月。"
    focus, _c, mentions = _read(rb, question, answer)
    assert [str(c.fact) for c, _m in focus_claims(answer, mentions, focus, rb)] == ["training_valid(chengdu, 12 months)"]


def test_a_value_in_another_currency_does_not_fit_a_relation_declared_in_one(rb):
    from pipeline.readers.focus import fits
    from symbolic.values import parse_value
    sig = rb.relations["list_price"]                                         # money[EUR]
    assert fits(sig, parse_value("EUR 38,500")) and not fits(sig, parse_value("298,000 元"))
    assert not fits(rb.relations["warranty"], parse_value("24 kg"))           # another dimension
    assert fits(rb.relations["warranty"], parse_value("2 years"))


def test_each_report_says_which_extractor_read_its_claim(rb):
    from pipeline import Answerer, AnswererConfig
    from pipeline_fakes import FakePassage, FixedRetriever
    passages = [FakePassage("ax.md", "The AX-200 has a list price of EUR 38,500 and a robot warranty of 24 months.", 0.9)]
    gen = ScriptedGenerator(["It costs EUR 38,500 and has a warranty of 24 months [1]."])
    a = Answerer(gen, FixedRetriever(passages), rb, AnswererConfig(symbolic_answers=False, lm_extraction=False))
    r = a.ask("What is the list price of the AX-200?")
    assert {(c.relation, c.verdict, c.extractor) for c in r.claims} == {
        ("list_price", "supported", "focus"), ("warranty", "supported", "vocabulary")}
    gen = ScriptedGenerator(["It costs EUR 38,500 and it ships within 24 months [1]."])
    a = Answerer(gen, FixedRetriever(passages), rb, AnswererConfig(symbolic_answers=False, lm_extraction=False))
    r = a.ask("What is the list price of the AX-200?")
    assert {(c.text.split(" and")[0], c.kind, c.extractor) for c in r.claims} == {
        ("It costs EUR 38,500", "relation", "focus"), ("24 months", "value", "value")}


def test_read_claims_reads_an_answer_with_the_focus_the_kbs_facts_show_as_ask_does(tmp_path):
    from pipeline import Answerer, AnswererConfig
    from pipeline_fakes import FakePassage, FixedRetriever
    rules = RULES + 'pattern LP: "{p:product} has a list price of {x:money}" -> list_price(p, x)\n'
    rb = rulebase_of(rules, tmp_path)
    # the documents state a list price of the LX-500 alone
    passages = [FakePassage("lx.md", "The LX-500 has a list price of EUR 52,000.", 0.9)]
    question, answer = "Compare the AX-200 and the LX-500.", "Both carry loads; the list price is EUR 52,000 [1]."
    gen = ScriptedGenerator([answer] * 4)      # whatever the loop makes of the answer: its claims are the point
    a = Answerer(gen, FixedRetriever(passages), rb, AnswererConfig(symbolic_answers=False, lm_extraction=False))
    assert "list_price(lx_500, 52000 EUR)" in {str(c.fact) for c in a.read_claims(question, answer)}
    r = a.ask(question)
    assert ("list_price", "supported") in {(c.relation, c.verdict) for a_ in r.attempts for c in a_.claims}

"""Quoted answers: which source statement answers a question the model did not, and the loop delivering it
only when it passes a draft's whole check."""
from __future__ import annotations

import pytest

from pipeline import Answerer, AnswererConfig, AskOptions
from pipeline.question.focus import parse_question
from pipeline.answers.quoted import asked_kinds, quotable, quotes, statements
from pipeline_fakes import FakePassage, FixedRetriever, ScriptedGenerator, rulebase_of

RULES = """
type training "training"
entity training cryogen "cryogen handling training" aka "低温液体操作培训"
type group "student group"
entity group doctoral "doctoral student" aka "doctoral students"
relation annual_stipend(g: group, amount: money[GBP]) "annual stipend"
type office "office"
entity office berlin "Berlin office" aka "Berlin"
entity office shenzhen "Shenzhen office" aka "Shenzhen", "深圳办公室"
relation remote_days(o: office, days: duration[day]) "remote work days"
"""
RETENTION = FakePassage("it/retention.md", (
    "| Data category | Retention period | Starts at |\n|---|---|---|\n"
    "| Customer contracts | 10 years | end of the contract |\n"
    "| Application documents of rejected candidates | 6 months | date of the rejection |\n"), 0.9,
    heading_path=["Data retention", "1. Retention periods"])
TELEMETRY = FakePassage("it/telemetry.md", (
    "Robots send telemetry to the Northwind Fleet Manager. A customer may request deletion of its telemetry; Northwind "
    "completes the deletion within 30 days of the request. Raw telemetry\nis kept for 24 months; after that only "
    "aggregated statistics are kept."), 0.8, start=500, heading_path=["Data retention", "2. Robot telemetry"])
BERLIN = FakePassage("hr/remote_berlin.md", "This policy applies to the Berlin office. An eligible employee may "
                     "work remotely on up to 3 days per week.", 0.7, start=900)
ZH = FakePassage("zh/training.md", "入职须知。新员工须在入职后 7 天内完成信息安全入门培训。培训由 IT 部门安排。", 0.6,
                 start=1200, heading_path=["三、培训"])


@pytest.fixture(scope="module")
def rulebase(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"), "offices.rules")


def best(question, passages, rulebase=None):
    found = quotes(question, parse_question(question, rulebase), passages, rulebase)
    return found[0].text if found else None


def test_a_table_row_is_read_out_with_its_column_headers():
    assert [s for _, s in statements(RETENTION)] == [
        "Customer contracts: Retention period 10 years; Starts at end of the contract",
        "Application documents of rejected candidates: Retention period 6 months; Starts at date of the rejection"]
    two_columns = FakePassage("p.md", "| Property | Value |\n|---|---|\n| List price | GBP 186,500 |\n")
    assert [s for _, s in statements(two_columns)] == ["List price: GBP 186,500"]


def test_a_sentence_is_read_without_its_list_marker_and_emphasis():
    listed = FakePassage("p.md", "- **Dead on arrival:** a product that does not work must be reported\nwithin 7 days.\n"
                         "3. **质量问题换货**：签收后 15 天内可免费换货；\n")
    assert [s for _, s in statements(listed)] == [
        "Dead on arrival: a product that does not work must be reported within 7 days.", "质量问题换货：签收后 15 天内可免费换货"]


def test_the_row_of_the_question_is_quoted_with_its_citation():
    q = "How long are the application documents of rejected candidates kept?"
    assert best(q, [TELEMETRY, RETENTION]) == ("Application documents of rejected candidates: Retention period "
                                               "6 months; Starts at date of the rejection [2]")


def test_the_rare_word_of_the_question_picks_the_sentence():
    # both telemetry sentences say "telemetry" and a duration; only one says "raw"
    q = "How long does Northwind keep raw robot telemetry?"
    assert best(q, [TELEMETRY]) == ("Robot telemetry: Raw telemetry is kept for 24 months; after that only "
                                    "aggregated statistics are kept. [1]")


def test_a_chinese_question_quotes_a_chinese_sentence():
    q = "新员工必须在入职后几天内完成信息安全入门培训？"
    assert best(q, [TELEMETRY, ZH]) == "新员工须在入职后 7 天内完成信息安全入门培训。 [2]"


def test_no_quote_without_the_questions_words_or_a_value_of_the_asked_kind():
    assert best("How much parental allowance does an employee get per month?", [TELEMETRY, RETENTION]) is None
    # "How long" asks a duration: the row's words match but it states none
    no_value = FakePassage("p.md", "Application documents of rejected candidates are kept by People & Culture.")
    assert best("How long are the application documents of rejected candidates kept?", [no_value]) is None


def test_a_passage_about_another_entity_of_the_asked_type_is_not_quoted(rulebase):
    q = "How many days per week may employees of the Shenzhen office work remotely?"
    assert best(q, [BERLIN], rulebase) is None
    assert best(q.replace("Shenzhen", "Berlin"), [BERLIN], rulebase) == (
        "An eligible employee may work remotely on up to 3 days per week. [1]")


@pytest.mark.parametrize("question", [
    "Can rejected candidates ask for their application documents after 6 months?",         # yes/no
    "How long are application documents kept, and who deletes them?",                      # two things
    "What is the total retention of application documents of rejected candidates?",       # a total
    "How long are application documents kept for three rejected candidates?",              # a count
    "新员工几天内完成培训？培训由谁安排？",                                                   # two sentences
])
def test_questions_one_sentence_cannot_answer_are_not_quoted(question):
    assert not quotable(question, parse_question(question, None))
    assert best(question, [RETENTION, ZH]) is None


SLA = FakePassage("support/sla.md", (
    "| Severity | Standard Support | Premium Support |\n|---|---|---|\n| Severity 1 | 1 hour, 24/7 | 30 minutes, 24/7 |\n"
    "| Severity 2 | 4 hours, 24/7 | 2 hours, 24/7 |\n"), heading_path=["3. Response times"])


def test_a_statement_must_restate_the_questions_own_values_and_is_cut_to_the_asked_column():
    q = "What is the response time for a Severity 2 ticket under Standard Support?"
    assert best(q, [SLA]) == "Response times: Severity 2: Standard Support 4 hours, 24/7 [1]"
    # no row states "Severity 5"; no statement restates "3" of "3 rejected candidates"
    assert best(q.replace("Severity 2", "Severity 5"), [SLA]) is None
    assert best("How long are the application documents of 3 rejected candidates kept?", [RETENTION]) is None


def make(rulebase, answers, passages, **config):
    gen = ScriptedGenerator(answers)
    config = {"symbolic_answers": False, "lm_extraction": False, **config}
    return Answerer(gen, FixedRetriever(passages), rulebase, AnswererConfig(**config)), gen


def test_the_loop_quotes_where_the_model_says_the_documents_do_not_say(rulebase):
    a, gen = make(rulebase, ["The documents do not say."] * 2, [TELEMETRY, RETENTION])   # ask, then ask_stream
    r = a.ask("How long are the application documents of rejected candidates kept?")
    assert r.status == "verified" and len(gen.calls) == 1
    n = r.attempts[-1].quoted          # the prompt's number of the retention table
    assert r.answer == ("Application documents of rejected candidates: Retention period 6 months; Starts at date "
                        f"of the rejection [{n}]")
    assert [c.doc_id for c in r.citations] == ["it/retention.md"]
    assert r.attempts[0].abstained and r.attempts[-1].usage["completion_tokens"] == 0
    assert r.reason.startswith(f"the model said the documents do not say; the answer quotes source [{n}], the statement")
    assert any(c.text.startswith("6 months") and c.verdict == "supported" for c in r.claims)
    assert r.to_dict()["attempts"][-1]["quoted"] == n
    events = list(a.ask_stream("How long are the application documents of rejected candidates kept?"))
    assert [e.get("quoted") for e in events if e["type"] == "attempt"] == [None, n]
    assert [e["text"] for e in events if e["type"] == "answer"] == [r.answer]


def test_the_loop_quotes_after_failing_drafts_and_stops_on_a_repeated_draft(rulebase):
    wrong = "Application documents of rejected candidates are kept for 10 years [1]."
    a, gen = make(rulebase, [wrong, wrong], [TELEMETRY, RETENTION])
    r = a.ask("How long are the application documents of rejected candidates kept?")
    # the second draft and its feedback repeat the first: a third greedy draft would too, so none is asked
    assert len(gen.calls) == 2 and [x.ok for x in r.attempts] == [False, False, True]
    assert r.status == "verified" and "6 months" in r.answer
    assert r.reason.startswith("no draft of the model's verified (2 tried); the answer quotes")


def test_a_sampled_retry_is_not_cut_short(rulebase):
    wrong = "Application documents of rejected candidates are kept for 10 years [1]."
    a, gen = make(rulebase, [wrong] * 3, [TELEMETRY, RETENTION], quote_answers=False)
    r = a.ask("How long are the application documents of rejected candidates kept?", AskOptions(temperature=0.7))
    assert len(gen.calls) == 3 and r.status == "abstained"


def test_off_or_no_quote_the_loop_abstains_as_before(rulebase):
    a, gen = make(rulebase, ["The documents do not say."], [TELEMETRY, RETENTION], quote_answers=False)
    r = a.ask("How long are the application documents of rejected candidates kept?")
    assert r.status == "abstained" and len(r.attempts) == 1
    a, gen = make(rulebase, ["The documents do not say."], [BERLIN])
    r = a.ask("How many days per week may employees of the Shenzhen office work remotely?")
    assert r.status == "abstained" and r.reason == "the model said the documents do not contain the answer"


def test_a_question_with_no_cue_word_asks_the_kind_its_goal_is_declared_to_take(rulebase):
    q = "What is the annual stipend for doctoral students?"
    focus = parse_question(q, rulebase)
    assert focus.answer_types == frozenset() and asked_kinds(focus) == frozenset()
    assert asked_kinds(focus, rulebase) == {"money"} and quotable(q, focus, rulebase)
    stipend = FakePassage("pg/stipend.md", "Doctoral students receive an annual stipend of GBP 19,237, paid "
                          "monthly. The stipend is reviewed every 12 months.")
    assert best(q, [stipend], rulebase) == ("Doctoral students receive an annual stipend of GBP 19,237, paid "
                                            "monthly. [1]")


def test_the_asking_clause_not_the_scene_must_be_in_the_quote(rulebase):
    # the training is named, so of the asking clause only "有效期" is a topic word; the scene's are many
    q = "王雨要在液氮充装间分装液氮，他的低温液体操作培训有效期是多久？"
    stay = "任何人在液氮充装间内单次停留不得超过二十五分钟。"
    training = "在液氮充装间分装液氮的人员须完成低温液体操作培训，培训有效期为 24 个月。"
    assert best(q, [FakePassage("zh/lab.md", stay)], rulebase) is None
    assert best(q, [FakePassage("zh/lab.md", stay + training)], rulebase) == training + " [1]"


def test_how_a_chinese_question_asks_how_often_is_no_topic():
    # "多久要做一次": "一次" and "要做" say how it asks; a quote sharing only them ("举升机每六个月…检验一次")
    # is about something else
    from pipeline.checks.answer_check import topic_terms
    from pipeline.question.focus import QuestionFocus
    topics = topic_terms("成都车场的公交车多久要做一次二级保养？", QuestionFocus("q", frozenset()))
    assert not topics & {"一次", "要做", "做一", "次二"} and {"保养", "公交"} <= topics

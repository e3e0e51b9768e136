"""Questions whose values are words of a name ("a 30-day pass"), goals a rule computes from a named relation and
the question's own count ("three buses at the list price"), and counts an earlier sentence tells on the way."""
from __future__ import annotations

import pytest

from pipeline.evidence.gather import facts_focus
from pipeline.proof.limit_check import breached_limits
from pipeline.question.naming import named_value_spans, value_terms, word_root
from pipeline.question.focus import parse_question
from pipeline.question.naming import relation_score
from pipeline.answers.composition import compose
from pipeline.proof.proving import prove, states_a_value
from pipeline_fakes import rulebase_of
from symbolic.values import Money, Quantity

RULES = """
type rider "rider type"
entity rider adult "adult" aka "成人"
entity rider senior "senior" aka "riders 65 and over", "老年乘客"
type vehicle "vehicle"
entity vehicle e12 "Halvard E12"
type site "site"
entity site chengdu "Chengdu depot" aka "成都车场"
type policy "policy"
entity policy duty "duty rules"
relation single_fare(r: rider, x: money[USD]) "single-ride fare"
relation day_pass_price(r: rider, x: money[USD]) "day pass"
relation monthly_pass_price(r: rider, x: money[USD]) "30-day pass"
relation vehicle_price(v: vehicle, x: money[USD]) "unit price" aka "list price"
relation fleet_order_cost(v: vehicle, units: number, x: money[USD]) "cost of several vehicles"
relation fare_total(r: rider, rides: number, x: money[USD]) "fare for several single rides"
relation hotel_limit_per_night(s: site, x: money[CNY]) "hotel limit per night" aka "住宿标准"
relation hotel_stay_limit(s: site, nights: number, x: money[CNY]) "hotel stay limit" aka "住宿费上限合计"
relation max_weekly_hours(p: policy, d: duration[hour]) "hours per week" limit upper
fact single_fare(adult, "$2.75")
fact day_pass_price(adult, "$6.50")
fact monthly_pass_price(adult, "$92.00")
fact monthly_pass_price(senior, "$40.00")
fact vehicle_price(e12, "USD 915,000")
fact hotel_limit_per_night(chengdu, "450 元")
fact max_weekly_hours(duty, 55 hours)
goal G_FLEET "several vehicles cost the unit price times the units":
    fleet_order_cost(?v, ?n, ?x * ?n) if vehicle_price(?v, ?x) and ?n > 0
goal G_FARES "several rides cost the single fare times the rides":
    fare_total(?r, ?n, ?x * ?n) if single_fare(?r, ?x) and ?n > 0
goal G_STAY "a stay's limit is the nightly limit times the nights":
    hotel_stay_limit(?s, ?n, ?x * ?n) if hotel_limit_per_night(?s, ?x) and ?n > 0
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _focus(rb, q):
    return facts_focus(parse_question(q, rb), rb, [], {})


def _answer(rb, q):
    proof = prove(_focus(rb, q), rb, [])
    return None if proof is None else (proof.goal.relation, proof.goal.args, proof.value)


def test_a_value_said_as_a_word_of_a_name_is_no_value_the_question_states(rb):
    q = "How much does a senior pay for a 30-day pass?"
    assert [q[s:e] for s, e in named_value_spans(q, rb)] == ["30-day"]
    focus = parse_question(q, rb)
    assert not states_a_value(q, focus)
    assert _answer(rb, q) == ("monthly_pass_price", ("senior",), Money(40, "USD"))
    # a day pass is not a 30-day pass, though "30-day" blanked would leave both names "pass"
    terms = parse_question("How much is a day pass for an adult?", rb).relation_terms
    assert relation_score(rb.relations["monthly_pass_price"], terms) == 0.5
    assert relation_score(rb.relations["day_pass_price"], terms) == 1.0
    assert _answer(rb, "How much is a day pass for an adult?") == ("day_pass_price", ("adult",), Money(6.5, "USD"))
    assert _answer(rb, "What does an adult 30-day pass cost?") == ("monthly_pass_price", ("adult",), Money(92, "USD"))


def test_value_terms_and_roots():
    assert value_terms("a 30-day pass") == {"#30 days"}
    assert value_terms("a day pass") == {"#1 day", "day"}
    assert {word_root(w) for w in ("approve", "approval")} == {"approv"}
    assert word_root("transfer") != word_root("transport")


def test_a_relations_name_said_through_another_form_of_its_words(rb, tmp_path):
    rb2 = rulebase_of('type grade "grade"\nentity grade cr5 "CR5"\n'
                      'relation approval_limit(g: grade, x: money[USD]) "approval limit"\n', tmp_path)
    terms = parse_question("Staff on CR5 can approve what limit?", rb2).relation_terms
    assert relation_score(rb2.relations["approval_limit"], terms) == 0.75     # "approve" says "approval" at half


def test_a_rule_computes_what_a_named_relation_and_a_stated_count_ask(rb):
    assert _answer(rb, "What would three Halvard E12 buses cost at the list price?") == \
        ("fleet_order_cost", ("e12", Quantity(3)), Money(2_745_000, "USD"))
    assert _answer(rb, "成都车场的员工去外地出差住 3 晚酒店，住宿费最多能报销多少？") == \
        ("hotel_stay_limit", ("chengdu", Quantity(3)), Money(1350, "CNY"))
    # a count the rule cannot take is left over: the question asks something else, nothing is proved
    assert _answer(rb, "What would three Halvard E12 buses cost at the list price over 2 years?") is None


def test_days_said_as_a_duration_count_the_days_a_daily_rule_multiplies(tmp_path):
    # tuning2 num-04: "出勤 22 天" is a duration; the rule's `days: number` is named after the unit it counts
    rb2 = rulebase_of("""
type site "site"
entity site chengdu "Chengdu depot" aka "成都车场"
relation meal_allowance_daily(s: site, x: money[CNY]) "meal allowance per day" aka "餐费补贴"
relation meal_allowance_total(s: site, days: number, x: money[CNY]) "meal allowance for several days"
relation leave_pay(s: site, weeks: number, x: money[CNY]) "leave pay for several weeks"
fact meal_allowance_daily(chengdu, "35 元")
goal G_MEALS "the daily allowance times the days":
    meal_allowance_total(?s, ?n, ?x * ?n) if meal_allowance_daily(?s, ?x) and ?n > 0
goal G_LEAVE "weeks of leave pay":
    leave_pay(?s, ?n, ?x * ?n * 5) if meal_allowance_daily(?s, ?x) and ?n > 0
""", tmp_path)
    for q in ("我在成都车场这个月出勤 22 天，餐费补贴一共能拿多少？",
              "How much meal allowance do I get at the Chengdu depot for 22 days?"):
        goals = [(g.relation, g.args) for g in _focus(rb2, q).goals]
        assert ("meal_allowance_total", ("chengdu", Quantity(22))) in goals
        assert _answer(rb2, q) == ("meal_allowance_total", ("chengdu", Quantity(22)), Money(770, "CNY"))
    # 22 days are no count of weeks, and 3 hours no count of days: no derived goal takes them
    assert not any(g.relation == "leave_pay" for g in _focus(rb2, "What leave pay at the Chengdu depot for 22 days?").goals)
    goals = _focus(rb2, "How much meal allowance at the Chengdu depot for 3 hours of work?").goals
    assert not any(g.relation == "meal_allowance_total" for g in goals)


def test_a_count_an_earlier_sentence_tells_is_how_the_asker_came_to_the_one_asked(rb):
    q = "I ride to work and back on five weekdays, paying an adult single fare each time. How much do 10 rides cost?"
    assert _answer(rb, q) == ("fare_total", ("adult", Quantity(10)), Money(27.5, "USD"))
    # in one sentence, the five weekdays may change what is asked: no proof
    assert _answer(rb, "How much do 10 adult single rides cost over five weekdays?") is None


def test_a_chinese_answer_writes_the_count_as_the_question_does(rb):
    q = "成都车场的员工去外地出差住 3 晚酒店，住宿费最多能报销多少？"
    focus = _focus(rb, q)
    proof = prove(focus, rb, [])
    assert compose(proof, rb, [1], chinese=True, question=q).startswith("成都车场，3 晚的住宿费上限合计为1,350 元")


def test_a_value_of_a_name_is_put_to_no_limit(rb):
    # "last week" says a word of "hours per week", and "30-day" of the pass is no period of duty
    q = "I bought a 30-day pass last week and never used it. Can I get my money back in full?"
    assert breached_limits(parse_question(q, rb), rb, []) == []


def test_a_question_word_says_the_noun_it_asks_for(tmp_path):
    from pipeline.question.answer_types import asked_nouns
    assert asked_nouns("How far can it go on one charge?") >= {"range", "distance"}
    assert "range" not in asked_nouns("How far in advance must I book?")
    assert "~longest" in asked_nouns("How long may they drive before a break?")     # weak: half a word
    assert "周期" in asked_nouns("多久要做一次二级保养？")
    assert asked_nouns("What is the fare?") == frozenset()
    rb = rulebase_of("""
type vehicle "vehicle"
entity vehicle e12 "Halvard E12"
type operator "operator type"
entity operator bus_op "bus operators" aka "bus operator"
relation vehicle_range(v: vehicle, d: quantity[km]) "range"
relation max_continuous_driving(o: operator, d: duration[hour]) "longest continuous driving"
relation min_break(o: operator, d: duration[minute]) "break of at least"
""", tmp_path)
    goals = [g.relation for g in parse_question("How far can the Halvard E12 go on one charge?", rb).goals]
    assert goals == ["vehicle_range"]
    # "how long may" asks a maximum only weakly: with "continuous driving" said it names the longest driving,
    # with "driving" alone (half of "longest" and one word of three) it names nothing
    q = "How long may bus operators keep up continuous driving before a break?"
    assert [g.relation for g in parse_question(q, rb).goals] == ["max_continuous_driving"]
    assert parse_question("How long may bus operators keep driving before a break?", rb).goals == []


def test_where_asks_a_location(tmp_path):
    from pipeline.question.answer_types import asked_nouns
    assert {"location", "地点"} <= asked_nouns("Where does Sun Peng work?") and "location" in asked_nouns("孙鹏在哪里工作？")
    assert "location" not in asked_nouns("Who does Sun Peng work for?")
    rb = rulebase_of("""
type person "person"
entity person sun_peng "Sun Peng"
type site "site"
entity site chengdu "Chengdu depot"
relation person_location(p: person, s: site) "location"
relation person_grade(p: person, g: text) "grade"
""", tmp_path)
    assert [g.relation for g in parse_question("Where does Sun Peng work?", rb).goals] == ["person_location"]


def test_two_questions_joined_by_and_ask_two_things():
    from pipeline.question.answer_types import asks_two
    assert asks_two("Who approves thesis extensions, and what is that person's grade?")
    assert asks_two("LX-500 最低需要哪个版本？该软件每年的许可费是多少？")
    assert not asks_two("What is the hotel limit for Berlin and Paris?")
    assert not asks_two("How long may bus operators drive before they must take a break?")


def test_a_chinese_modal_is_no_word_of_a_name(tmp_path):
    # "可以审批" (may approve) is said by "能不能…审批" as "may approve" is by "can … approve"
    rb = rulebase_of('type person "person"\nentity person sun "Sun Peng" aka "孙鹏"\n'
                     'relation can_approve(p: person, x: money) "may approve" aka "可以审批"\n', tmp_path)
    terms = parse_question("孙鹏能不能自己审批一笔 45,000 元的零部件采购？", rb).relation_terms
    assert relation_score(rb.relations["can_approve"], terms) == 1.0
    assert relation_score(rb.relations["can_approve"], parse_question("孙鹏可以报销吗？", rb).relation_terms) < 0.5


def test_the_focus_holds_the_values_the_facts_state_of_each_relation(rb):
    from symbolic import Fact
    documented = [Fact("vehicle_price", ("e12", Money(880000, "USD")))]
    focus = facts_focus(parse_question("What do 3 Halvard E12 cost?", rb), rb, documented, {})
    # the rule files' own facts and those given, by relation; a computed total is no documented value
    assert focus.documents("vehicle_price", Money(915000, "USD")) and focus.documents("vehicle_price", Money(880000, "USD"))
    assert focus.documents("hotel_limit_per_night", Money(450, "CNY"))
    assert not focus.documents("vehicle_price", Money(2745000, "USD"))
    assert not focus.documents("fleet_order_cost", Money(2745000, "USD"))


def test_a_computing_questions_answer_is_read_as_a_lookup_only_where_the_documents_state_that_value(rb):
    """A question stating a value of its own may be answered by a total or by what it is computed from: a value
    the documents state for the asked relation is that relation's claim (for the asked entity, where the question
    asks the relation once; where it asks it of two, for the one the documents state it of); any other value is
    not read, and where a goal computes with the question's values, the answer's value is the computed goal's."""
    from pipeline.readers.focus import focus_claims
    from pipeline.readers.patterns import extract_claims

    def read(question, answer):
        focus = facts_focus(parse_question(question, rb), rb, [], {})
        _claims, mentions = extract_claims(answer, [], rb)
        return [str(c.fact) for c, _m in focus_claims(answer, mentions, focus, rb)]

    q = "I am 70 years old. What does the 30-day pass cost for seniors?"
    assert read(q, "[1] $40.00") == ["monthly_pass_price(senior, 40 USD)"]
    # the adult's price given for a senior: the answer claims it of the senior, a claim the rules refute
    assert read(q, "[1] $92.00") == ["monthly_pass_price(senior, 92 USD)"]
    assert read(q, "[1] The 30-day pass costs $92.00 for adults.") == []      # said of another rider
    assert read(q, "[1] $80.00") == []
    # asked of two riders, the value the documents state of neither is neither's; of one, that one's
    q = "I am 70 years old and my son is 40 years old. What does the 30-day pass cost for seniors and for adults?"
    assert read(q, "[1] $85.00") == []
    assert read(q, "[1] $92.00") == ["monthly_pass_price(adult, 92 USD)"]
    # a question counting nights asks for a total: the per-night 450 元 it is answered with is no lookup
    q = "成都车场的员工去外地出差住 3 晚酒店，住宿费最多能报销多少？"
    assert [g.relation for g in parse_question(q, rb).goals] == ["hotel_limit_per_night"]
    assert read(q, "[1] 450 元") == []
    assert read("成都车场的住宿标准是多少？", "[1] 450 元") == ["hotel_limit_per_night(chengdu, 450 CNY)"]

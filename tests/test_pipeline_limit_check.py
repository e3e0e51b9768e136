"""Limit checks: a yes/no question putting a value of its own to a limit the rules prove gets "no" when the
value is past it, and nothing at all otherwise (a "yes" needs every condition; a limit is only one)."""
from __future__ import annotations

import pytest

from pipeline import Answerer, AnswererConfig
from pipeline.evidence.kb_facts import KBFactCache
from pipeline.proof.limit_check import asks_permission, breach_gap, breached_limits
from pipeline.proof.limits import limit_direction
from pipeline.generate.prompts import ABSTAIN_SENTINEL
from pipeline.text.terms import content_terms
from pipeline.question.focus import parse_question
from pipeline.question.naming import relation_score
from symbolic.values import Money, Quantity
from pipeline_fakes import FakePassage, FixedRetriever, ScriptedGenerator, rulebase_of

RULES = """
type city "city"
entity city munich "Munich" aka "慕尼黑"
entity city berlin "Berlin" aka "柏林"
type product "product"
entity product ax_200 "AX-200"
type policy "policy"
entity policy travel_policy "travel policy"
relation hotel_limit(c: city, m: money[EUR]) "hotel limit per night" aka "每晚住宿上限"
relation hotel_stay(c: city, nights: number, m: money[EUR]) "hotel stay cost" limit upper
goal G_STAY "A stay costs at most the night's limit times the nights": hotel_stay(?c, ?n, ?x * ?n) if hotel_limit(?c, ?x) and ?n > 0
relation return_period(p: product, d: duration[day]) "return period" limit upper
relation speed_limit_signs(p: product, n: number) "speed limit signs" limit none
relation min_flight_hours(p: policy, h: duration[hour]) "business class minimum flight time"
relation battery_warranty(p: product, d: duration[month]) "battery warranty"
relation rep_discount_max(p: policy, x: percent) "discretionary discount of a sales representative"
relation volume_discount(p: product, x: percent) "volume discount"
type cn_city "city in China"
entity cn_city shanghai "上海"
relation cn_hotel_limit(c: cn_city, m: money[CNY]) "城市住宿标准"
pattern P_HOTEL: "hotel limit per night in {city} is {m:money}" -> hotel_limit(city, m)
pattern P_FLIGHT: "business class minimum flight time (of|is) {h:duration}" -> min_flight_hours(travel_policy, h)
pattern P_RETURN: "{product} return period is {d:duration}" -> return_period(product, d)
pattern P_BATTERY: "{product} battery warranty is {d:duration}" -> battery_warranty(product, d)
pattern P_REP: "sales representative may add up to {x:percent}" -> rep_discount_max(travel_policy, x)
pattern P_VOLUME: "{product} volume discount is {x:percent}" -> volume_discount(product, x)
pattern P_CN_HOTEL: "{cn_city} ... 住宿标准 ... {m:money}" -> cn_hotel_limit(cn_city, m)
"""
HOTEL = FakePassage("travel.md", "The hotel limit per night in Munich is EUR 180. "
                                 "The hotel limit per night in Berlin is EUR 140.", 0.5, chunk_id="ho")
FLIGHT = FakePassage("flights.md", "The business class minimum flight time is 6 hours.", 0.4, chunk_id="fl")
SALES = FakePassage("sales.md", "The AX-200 return period is 14 days. The AX-200 battery warranty is 12 months. A sales representative may add up to "
                                "3 % discount. The AX-200 volume discount is 8 %.", 0.3, chunk_id="sa")
CN_HOTEL = FakePassage("zh/travel.md", "上海的住宿标准为每晚 700 元。", 0.2, chunk_id="zh")
KB = [HOTEL, FLIGHT, SALES, CN_HOTEL]


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"), "t.rules")


def found_breaches(rb, question, passages=KB):
    """The limit breaches of ``question`` against the facts the rule patterns read from ``passages``."""
    kb = KBFactCache().get(FixedRetriever(passages), rb)
    return breached_limits(parse_question(question, rb), rb, kb.facts, implied=kb.implied)


def breaches(rb, question):
    return [(b.proof.goal.relation, b.stated, b.direction, b.proof.value) for b in found_breaches(rb, question)]


def test_a_limit_is_named_one_way_only(rb):
    assert limit_direction(rb.relations["hotel_limit"]) == "upper"
    assert limit_direction(rb.relations["min_flight_hours"]) == "lower"
    assert limit_direction(rb.relations["rep_discount_max"]) == "upper"       # from its id: rep discount max
    # a warranty period or a plain discount bounds nothing by its name
    assert limit_direction(rb.relations["battery_warranty"]) is None
    assert limit_direction(rb.relations["volume_discount"]) is None
    # a rule author's declaration wins over the names: "return period" says no way, "speed limit signs" upper
    assert limit_direction(rb.relations["return_period"]) == "upper"
    assert limit_direction(rb.relations["speed_limit_signs"]) is None


def test_a_declared_limit_is_checked_though_its_name_says_none(rb):
    assert breaches(rb, "Can I return the AX-200 after 20 days?") == \
        [("return_period", Quantity(20.0, "day"), "upper", Quantity(14.0, "day"))]
    assert breaches(rb, "Can I return the AX-200 after 10 days?") == []


def test_chinese_asks_whether_allowed_by_either_form_of_its_modal():
    # "能不能" and "可不可以" ask permission; their "不能"/"不可以" turn nothing around
    assert asks_permission("孙鹏能不能自己审批一笔 45,000 元的零部件采购？")
    assert asks_permission("我可不可以报销 800 元？")
    assert not asks_permission("他不能报销 800 元吗？")


def test_only_a_question_asking_whether_something_is_allowed_is_checked():
    for q in ["Can I book a EUR 220 hotel in Munich?", "Is a 20-character password acceptable?",
              "My trip ended in March. Will it be reimbursed?", "深圳员工住宿每晚 800 元，可以全额报销吗？",
              "单程 8 小时能否坐飞机？", "I have 8 days left. Can I carry them over?",
              "Am I allowed to book a EUR 220 hotel?", "住宿每晚 800 元是否可以报销？"]:
        assert asks_permission(q), q
    # "no" would turn around where the question asks whether something is needed, too much or refused
    for q in ["Do I need approval for a EUR 220 hotel in Munich?", "Is EUR 220 too much for Munich?",
              "Will a EUR 220 hotel be rejected?", "Is a EUR 220 hotel over budget?", "Can't I book a EUR 220 hotel?", "住宿每晚 800 元需要审批吗？",
              "深圳员工住宿每晚最多可以报销多少？", "What is the hotel limit in Munich?",
              "Can I book a EUR 220 hotel in Munich", ""]:
        assert not asks_permission(q), q


def test_a_value_past_the_proved_limit_breaches_it(rb):
    assert breaches(rb, "Can I book a EUR 220 per night hotel in Munich?") == \
        [("hotel_limit", Money(220.0, "EUR"), "upper", Money(180.0, "EUR"))]
    assert breaches(rb, "May I fly business class on a flight of 5 hours?") == \
        [("min_flight_hours", Quantity(5.0, "hour"), "lower", Quantity(6.0, "hour"))]
    # a year is no count that could scale the value
    assert breaches(rb, "My flight in March 2025 took 5 hours. May I fly business class on a flight of 5 hours?") \
        == [("min_flight_hours", Quantity(5.0, "hour"), "lower", Quantity(6.0, "hour"))]
    assert breaches(rb, "在慕尼黑每晚住宿 220 欧元可以吗？") == \
        [("hotel_limit", Money(220.0, "EUR"), "upper", Money(180.0, "EUR"))]


def test_a_chinese_name_is_scored_by_the_characters_the_question_covers(rb):
    # "住宿" is one word of the three of "城市住宿标准" (2 of 6 characters), though one bigram of five
    terms = frozenset(content_terms("深圳员工在上海出差，住宿每晚 800 元，可以全额报销吗？"))
    assert relation_score(rb.relations["cn_hotel_limit"], terms) == pytest.approx(2 / 6)
    assert relation_score(rb.relations["cn_hotel_limit"], frozenset(content_terms("城市的标准"))) == \
        pytest.approx(4 / 6)
    assert breaches(rb, "深圳员工在上海出差，住宿每晚 800 元，可以全额报销吗？") == \
        [("cn_hotel_limit", Money(800.0, "CNY"), "upper", Money(700.0, "CNY"))]


def test_a_superseded_limit_never_stands_beside_the_current_one(rb):
    old = FakePassage("travel_2023.md", "The hotel limit per night in Munich is EUR 250.", 0.9, chunk_id="old",
                      superseded=True, superseded_by="travel.md")
    facts = KBFactCache().get(FixedRetriever([old, *KB]), rb).facts
    assert {f.args[-1] for f in facts if f.relation == "hotel_limit" and f.args[0] == "munich"} == \
        {Money(250.0, "EUR"), Money(180.0, "EUR")}
    found = found_breaches(rb, "Can I book a EUR 220 per night hotel in Munich?", [old, *KB])
    assert [(b.proof.value, [f.provenance.doc_id for f in b.proof.documents]) for b in found] == \
        [(Money(180.0, "EUR"), ["travel.md"])]


def test_a_count_the_limit_takes_is_part_of_it(rb):
    assert breaches(rb, "Can I book a EUR 800 hotel stay for 4 nights in Munich?") == \
        [("hotel_stay", Money(800.0, "EUR"), "upper", Money(720.0, "EUR"))]


def test_a_value_within_the_limit_or_put_to_no_clear_limit_proves_nothing(rb):
    # within the limit: a "yes" would need every other condition too
    assert breaches(rb, "Can I book a EUR 150 per night hotel in Munich?") == []
    assert breaches(rb, "May I fly business class on a flight of 7 hours?") == []
    # a warranty period is no limit by its name; the question asks "for free", not about the period
    assert breaches(rb, "Will Northwind replace the AX-200 battery warranty part after 14 months?") == []
    # "a discount of 14 %" names the representative's maximum and the volume discount alike
    assert breaches(rb, "Can a sales representative give a discount of 14 % on the AX-200?") == []
    # "EUR 300 for 2 nights" is the stay's cost (EUR 150 a night), within the EUR 360 the stay may cost
    assert breaches(rb, "Can I book a EUR 300 hotel stay for 2 nights in Munich?") == []
    # and where no relation names the stay, the count alone keeps the value from being taken for a night's
    assert breaches(rb, "Can I book a EUR 300 hotel for 2 guests in Munich?") == []
    # two cities: which one the value is about is not known
    assert breaches(rb, "Can I book a EUR 160 per night hotel in Munich or Berlin?") == []
    # another currency is not comparable; a question asking whether approval is needed is not checked
    assert breaches(rb, "Can I book a USD 220 per night hotel in Munich?") == []
    assert breaches(rb, "Do I need approval for a EUR 220 per night hotel in Munich?") == []


def test_the_breach_gap_asks_for_no_and_the_limit(rb):
    found = found_breaches(rb, "Can I book a EUR 220 per night hotel in Munich?")
    limit = [_claim("hotel_limit", ("munich", Money(180.0, "EUR")))]
    assert breach_gap("Yes, you can book it [1].", limit, found, rb) == (
        "the answer is no (220 EUR is above the hotel limit per night of 180 EUR), and the answer says yes")
    assert breach_gap("Hotels in Munich are expensive [1].", [], found, rb).endswith("does not say so")
    assert breach_gap("No: the hotel limit in Munich is EUR 180 [1].", limit, found, rb) is None
    assert breach_gap("不可以，慕尼黑的上限是 180 欧元 [1]。", limit, found, rb) is None
    # the limit alone leaves the asker to compare; the figure said of something else is not the limit
    assert breach_gap("The hotel limit in Munich is EUR 180 [1].", limit, found, rb).endswith("does not say so")
    assert breach_gap("No: the manager approves up to EUR 180 [1].", [_claim("value", (Money(180.0, "EUR"),))],
                      found, rb).endswith("does not say so")
    assert breach_gap("Anything [1].", [], [], rb) is None


def _claim(relation, args):
    from symbolic import Claim, Fact, Provenance
    return Claim(Fact(relation, args, 1.0, Provenance("answer")), "", 0, 0, [])


def make(rb, answers):
    gen = ScriptedGenerator(answers)
    return Answerer(gen, FixedRetriever(KB), rb, AnswererConfig()), gen


def test_a_draft_that_does_not_say_no_is_replaced_by_the_limit(rb):
    for draft in [ABSTAIN_SENTINEL, "Yes, you can book a hotel in Munich [1]."]:
        a, gen = make(rb, [draft])
        r = a.ask("Can I book a EUR 220 per night hotel in Munich?")
        assert len(gen.calls) == 1 and r.status == "verified", r.reason
        assert r.answer == ("No. The hotel limit per night for Munich is EUR 180 [1]. "
                            "The value in the question is above this limit.")
        assert [(c.relation, c.verdict, c.extractor) for c in r.claims] == [("hotel_limit", "supported", "proof")]
        assert r.answer[r.claims[0].start:r.claims[0].end] == "The hotel limit per night for Munich is EUR 180 [1]"
        assert [c.doc_id for c in r.citations] == ["travel.md"]
        assert "the question's 220 EUR is above the hotel_limit limit of 180 EUR" in r.reason
        assert r.limit_breaches[0]["stated"] == "220 EUR" and r.limit_breaches[0]["direction"] == "upper"
        assert r.limit_breaches[0]["proved"]["value"] == "180 EUR"


def test_a_draft_that_says_no_with_the_limit_is_kept(rb):
    right = "No. The hotel limit per night in Munich is EUR 180 [1]."
    a, _ = make(rb, [right])
    r = a.ask("Can I book a EUR 220 per night hotel in Munich?")
    assert r.status == "verified" and r.answer == right
    # the right figure said of something else is replaced by the limit
    a, _ = make(rb, ["No, a manager approves hotels up to EUR 180 [1]."])
    r = a.ask("Can I book a EUR 220 per night hotel in Munich?")
    assert r.status == "verified" and r.answer.startswith("No. The hotel limit per night for Munich is EUR 180 [1].")


def test_a_lower_limit_and_a_chinese_question(rb):
    a, _ = make(rb, [ABSTAIN_SENTINEL])
    r = a.ask("May I fly business class on a flight of 5 hours?")
    assert r.status == "verified", r.reason
    assert r.answer == "No. The business class minimum flight time is 6 hours [1]. The value in the question is below this minimum."
    a, _ = make(rb, [ABSTAIN_SENTINEL])
    r = a.ask("在慕尼黑每晚住宿 220 欧元可以吗？")
    assert r.status == "verified", r.reason
    assert r.answer == "不可以。慕尼黑的每晚住宿上限为180 欧元 [1]。问题中的数值超出了这一上限。"


def test_verify_flags_a_yes_past_the_limit(rb):
    a, _ = make(rb, [])
    r = a.verify("Can I book a EUR 220 per night hotel in Munich?", "Yes: Munich hotels are covered.")
    assert r.status == "flagged" and r.limit_breaches[0]["proved"]["value"] == "180 EUR"
    assert any(g.startswith("the answer is no (220 EUR is above the hotel limit per night") for g in r.gaps), r.gaps
    ok = a.verify("Can I book a EUR 220 per night hotel in Munich?", "No, the hotel limit in Munich is EUR 180.")
    assert ok.status == "verified", ok.reason


def test_a_limit_stated_for_one_site_only_needs_no_site_in_the_question(tmp_path):
    rules = """
entity site glasgow "Glasgow"
entity site suzhou "Suzhou"
relation claim_deadline(s: site, d: duration[day]) "expense claim deadline" limit upper
relation loan_limit(s: site, n: number) "loan limit" limit upper
pattern P_CLAIM: "in {site} expense claims are due within {d:duration}" -> claim_deadline(site, d)
pattern P_LOAN: "in {site} the loan limit is {n:number}" -> loan_limit(site, n)
"""
    rb = rulebase_of(rules, tmp_path, "t.rules")
    kb = [FakePassage("claims.md", "In Glasgow expense claims are due within 30 days.", 0.5, chunk_id="c"),
          FakePassage("loans.md", "In Glasgow the loan limit is 15. In Suzhou the loan limit is 10.", 0.4, chunk_id="l")]
    [b] = found_breaches(rb, "Can I submit my expense claim 40 days after the trip?", kb)
    assert (b.proof.goal.args, b.proof.goal.implied, b.proof.value) == (("glasgow",), (0,), Quantity(30.0, "day"))
    # two sites state a loan limit: the question does not say whose
    assert found_breaches(rb, "Can I borrow 12 items at once under the loan limit?", kb) == []


def test_the_one_relation_the_named_entities_and_the_value_fit_is_the_limit(tmp_path):
    rules = """
entity site glasgow "Glasgow"
entity course cryo "cryogen handling training"
entity course laser "laser safety training"
relation validity(c: course, s: site, d: duration[month]) "valid for" limit upper
relation fume_test_interval(s: site, d: duration[month]) "fume cupboard test interval" limit upper
pattern P_VALID: "at {site} {course} is valid for {d:duration}" -> validity(course, site, d)
pattern P_FUME: "at {site} fume cupboards are tested every {d:duration}" -> fume_test_interval(site, d)
"""
    rb = rulebase_of(rules, tmp_path, "t.rules")
    kb = [FakePassage("safety.md", "At Glasgow cryogen handling training is valid for 24 months. "
                      "At Glasgow fume cupboards are tested every 12 months.", 0.5, chunk_id="s")]
    # no relation is named: the course, the campus and a period fit one relation only
    [b] = found_breaches(rb, "My cryogen handling training at Glasgow was 30 months ago. May I still dispense "
                             "liquid nitrogen?", kb)
    assert (b.proof.goal.relation, b.proof.value, b.direction) == ("validity", Quantity(24.0, "month"), "upper")
    assert found_breaches(rb, "My cryogen handling training at Glasgow was 20 months ago. May I still work?", kb) == []
    # a campus alone names no threshold of its own, though one relation takes a campus to a period
    assert found_breaches(rb, "I was at Glasgow 30 months ago. May I still work there?", kb) == []


CHECKING_RULES = """
type person "person"
entity person reid "Dr Callum Reid" aka "Callum Reid"
entity person sinclair "Dr Morag Sinclair" aka "Morag Sinclair"
type grade "grade"
entity grade hg8 "HG8"
entity grade hg9 "HG9"
relation person_grade(p: person, g: grade) "grade"
relation grade_limit(g: grade, x: money[GBP]) "grant approval limit of a grade"
relation person_limit(p: person, x: money[GBP]) "person's grant approval limit"
relation can_approve(p: person, x: money[GBP]) "may approve"
goal G_PERSON_LIMIT "A person's limit is their grade's": person_limit(?p, ?x) if person_grade(?p, ?g) and grade_limit(?g, ?x)
goal G_CAN "Within the grade's limit" cf 0.9: can_approve(?p, ?x) if person_grade(?p, ?g) and grade_limit(?g, ?l) and ?x <= ?l
goal G_CANNOT "Nobody approves above it" cf -1.0: can_approve(?p, ?x) if person_grade(?p, ?g) and grade_limit(?g, ?l) and ?x > ?l
pattern P_GRADE: "{person} is grade {grade}" -> person_grade(person, grade)
pattern P_LIMIT: "{grade} staff may approve up to {x:money}" -> grade_limit(grade, x)
"""


def test_a_checking_goal_the_rules_refute_hands_over_to_the_limit_it_checks(tmp_path):
    rb = rulebase_of(CHECKING_RULES, tmp_path, "t.rules")
    kb = [FakePassage("people.md", "Dr Callum Reid is grade HG8. Dr Morag Sinclair is grade HG9. HG8 staff may "
                      "approve up to GBP 12,000. HG9 staff may approve up to GBP 40,000.", 0.5, chunk_id="p")]
    # "may approve" names the relation best, but it checks the value given: its refusal points at the limit
    [b] = found_breaches(rb, "Can Dr Callum Reid approve a GBP 20,000 order?", kb)
    assert (b.proof.goal.relation, b.proof.goal.args, b.proof.value, b.direction) == \
        ("person_limit", ("reid",), Money(12000.0, "GBP"), "upper")
    # within the limit the checking goal holds: nothing is breached, and no "yes" is made of it
    assert found_breaches(rb, "Can Dr Callum Reid approve a GBP 5,000 order?", kb) == []
    # the pronoun of the asking sentence is the person named last before it
    [b] = found_breaches(rb, "While Dr Morag Sinclair is away, Dr Callum Reid deputises for her. Can he approve a "
                             "GBP 20,000 order?", kb)
    assert b.proof.goal.args == ("reid",)


def test_the_asking_sentences_value_is_put_to_the_limit_before_an_earlier_one(tmp_path):
    rb = rulebase_of(CHECKING_RULES, tmp_path, "t.rules")
    kb = [FakePassage("people.md", "Dr Callum Reid is grade HG8. HG8 staff may approve up to GBP 12,000.", 0.5,
                      chunk_id="p")]
    [b] = found_breaches(rb, "A colleague says HG8 staff may now approve GBP 30,000. Can Dr Callum Reid approve a "
                             "GBP 20,000 order?", kb)
    assert b.stated == Money(20000.0, "GBP") and b.proof.value == Money(12000.0, "GBP")


def test_a_question_leaving_a_checking_goals_value_open_asks_its_limit(tmp_path):
    from pipeline.proof.limits import checking_relations, with_checked_limits
    rb = rulebase_of(CHECKING_RULES, tmp_path, "t.rules")
    # person_limit derives its value from a premise; can_approve only tests the value it is given
    assert checking_relations(rb) == frozenset({"can_approve"})
    focus = parse_question("Up to what amount may Dr Callum Reid approve?", rb)
    assert [(g.relation, g.args) for g in focus.goals] == [("can_approve", ("reid",))]
    assert [(g.relation, g.args) for g in with_checked_limits(focus, rb).goals] == [("person_limit", ("reid",))]
    # two limits over a person would leave the choice open: the goal stays as it is
    rb2 = rulebase_of(CHECKING_RULES + 'relation travel_limit(p: person, x: money[GBP]) "travel limit"\n', tmp_path,
                      "t.rules")
    focus = parse_question("Up to what amount may Dr Callum Reid approve?", rb2)
    assert [g.relation for g in with_checked_limits(focus, rb2).goals] == ["can_approve"]


CAMPUS_RULES = """
type campus "campus"
entity campus glasgow "Glasgow campus" aka "Glasgow"
entity campus suzhou "Suzhou campus" aka "Suzhou"
relation premium_min_hours(c: campus, h: duration[hour]) "premium economy minimum flight time"
pattern P_PREMIUM: "at {campus} premium economy needs a flight of {h:duration}" -> premium_min_hours(campus, h)
"""
CAMPUS_KB = [FakePassage("travel.md", "At Glasgow premium economy needs a flight of 8 hours. At Suzhou premium "
                         "economy needs a flight of 10 hours.", 0.5, chunk_id="t")]


def test_a_value_past_the_limit_of_every_binding_left_open_is_a_no_whichever_applies(tmp_path):
    from pipeline.proof.every_binding import every_binding
    rb = rulebase_of(CAMPUS_RULES, tmp_path, "t.rules")
    kb = KBFactCache().get(FixedRetriever(CAMPUS_KB), rb)
    q = "May I fly premium economy on a flight of 6 hours?"
    goals = every_binding(parse_question(q, rb), rb, Quantity(6.0, "hour"), kb.facts, lambda sig: True)
    assert [(g.relation, g.args) for g in goals] == [("premium_min_hours", ("glasgow",)),
                                                     ("premium_min_hours", ("suzhou",))]
    assert [(b.proof.goal.args, b.proof.value) for b in found_breaches(rb, q, CAMPUS_KB)] == [
        (("glasgow",), Quantity(8.0, "hour")), (("suzhou",), Quantity(10.0, "hour"))]
    # past one campus's minimum only: which campus applies decides, and the question does not say
    assert found_breaches(rb, "May I fly premium economy on a flight of 9 hours?", CAMPUS_KB) == []
    # a campus named: its own limit, as before
    assert [(b.proof.goal.args, b.proof.value) for b in
            found_breaches(rb, "May I fly premium economy from Suzhou on a flight of 9 hours?", CAMPUS_KB)] == [
        (("suzhou",), Quantity(10.0, "hour"))]
    # the relation's name must be used: a bare period names no threshold
    assert every_binding(parse_question("May I fly for 6 hours?", rb), rb, Quantity(6.0, "hour"), kb.facts,
                         lambda sig: True) == []

    a = Answerer(ScriptedGenerator([ABSTAIN_SENTINEL]), FixedRetriever(CAMPUS_KB), rb, AnswererConfig())
    r = a.ask(q)
    assert r.status == "verified", r.reason
    assert r.answer == ("No. The premium economy minimum flight time for Glasgow campus is 8 hours [1]. The "
                        "premium economy minimum flight time for Suzhou campus is 10 hours [1]. The value in the "
                        "question is below each of these minimums.")


LEAVE_RULES = """
type office "office"
entity office berlin "Berlin office" aka "Berlin"
type group "employee group"
entity group staff "employee"
relation annual_leave(group, duration[day]) "annual leave"
relation carry_over_max(office, duration[day]) "leave carry-over"
pattern P_LEAVE: "employees get {d:duration} of annual leave" -> annual_leave(staff, d)
pattern P_CARRY: "in {office} up to {d:duration} may be carried over" -> carry_over_max(office, d)
"""
LEAVE_KB = [FakePassage("hr.md", "Employees get 30 days of annual leave. In Berlin up to 5 days may be carried over.",
                        0.5, chunk_id="h")]


def test_the_asking_sentence_names_the_limit_a_scene_value_is_put_to(tmp_path):
    rb = rulebase_of(LEAVE_RULES, tmp_path, "t.rules")
    # "8 unused days": the unit two words on; "annual leave" is the scene, "carry … over" what is asked
    [b] = found_breaches(rb, "I have 8 unused days of annual leave at the end of the year in Berlin. Can I carry "
                             "all of them over?", LEAVE_KB)
    assert (b.proof.goal.relation, b.stated, b.proof.value) == ("carry_over_max", Quantity(8.0, "day"),
                                                               Quantity(5.0, "day"))
    assert found_breaches(rb, "I have 4 unused days of annual leave at the end of the year in Berlin. Can I carry "
                              "all of them over?", LEAVE_KB) == []
    # a bare count stays a count: "8 unused vouchers" is no period
    assert found_breaches(rb, "I have 8 unused vouchers of annual leave in Berlin. Can I carry all of them over?",
                          LEAVE_KB) == []

"""An entity the question describes by a measured value is the one entity the facts give that value: the
focus then has goals about it; a value two entities share, a kind of value that describes the asker's case,
or a type the question already names describes nothing."""
from __future__ import annotations

import pytest

from pipeline.evidence.described import described_entities, with_described
from pipeline.question.focus import parse_question
from pipeline_fakes import rulebase_of
from symbolic import Fact, Provenance
from symbolic.values import parse_value

RULES = """
type product "product"
entity product ax_200 "AX-200"
entity product lx_500 "LX-500"
entity product mx_900 "MX-900"
relation payload(p: product, m: quantity[kg]) "rated payload"
relation reach(p: product, m: quantity[mm]) "reach"
relation battery_warranty(p: product, d: duration[month]) "battery warranty"
relation docking_slots(p: product, n: number) "docking slots"
fact payload(ax_200, 200 kg)
fact payload(lx_500, 500 kg)
fact payload(mx_900, 500 kg)
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _doc_fact(relation, *args):
    return Fact(relation, args, 1.0, Provenance("document", doc_id="d.md", start=0, end=1))


def test_the_one_entity_with_the_stated_value_is_described(rb):
    q = "How long is the battery warranty on the robot that can carry 200 kg?"
    focus = parse_question(q, rb)
    assert focus.goals == []
    [mention] = described_entities(focus, rb, rb.facts)
    assert (mention.entity_id, mention.text, q[mention.start:mention.end]) == ("ax_200", "200 kg", "200 kg")
    focus = with_described(focus, rb, rb.facts)
    assert [(g.relation, g.args) for g in focus.goals] == [("battery_warranty", ("ax_200",))]


def test_a_documents_fact_describes_too_and_units_convert(rb):
    facts = [*rb.facts, _doc_fact("reach", "lx_500", parse_value("1.2 m"))]
    focus = parse_question("What is the battery warranty of the robot with a reach of 1200 mm?", rb)
    assert [x.entity_id for x in described_entities(focus, rb, facts)] == ["lx_500"]


def test_nothing_is_described_by_a_shared_value_a_duration_or_beside_a_named_entity(rb):
    # 500 kg: two robots
    assert described_entities(parse_question("Battery warranty of the robot that carries 500 kg?", rb), rb,
                              rb.facts) == []
    # a duration describes the asker's case, not a thing
    facts = [*rb.facts, _doc_fact("battery_warranty", "lx_500", parse_value("18 months"))]
    assert described_entities(parse_question("Which robot has an 18 month battery warranty?", rb), rb, facts) == []
    # a product is named: the value is about it
    focus = parse_question("Can the LX-500 carry 200 kg?", rb)
    assert described_entities(focus, rb, rb.facts) == []
    assert with_described(focus, rb, rb.facts) is focus


def test_a_superseded_documents_value_describes_nothing(rb):
    # blind/08's author: "may staff work 7 consecutive shifts?" read as the policy whose old version says 7
    old = Fact("docking_slots", ("lx_500", parse_value("12")), 1.0,
               Provenance("document", doc_id="old.md", start=0, end=1, superseded=True))
    q = "What is the battery warranty of the product with a 12-slot dock?"
    assert described_entities(parse_question(q, rb), rb, [*rb.facts, old]) == []
    current = _doc_fact("docking_slots", "lx_500", parse_value("12"))
    assert [x.entity_id for x in described_entities(parse_question(q, rb), rb, [*rb.facts, current])] == ["lx_500"]


def test_a_count_describes_a_thing_only_where_the_question_names_its_type(rb):
    facts = [*rb.facts, _doc_fact("docking_slots", "lx_500", parse_value("12"))]
    q = "What is the battery warranty of the product with a 12-slot dock?"
    [mention] = described_entities(parse_question(q, rb), rb, facts)
    assert (mention.entity_id, mention.text, mention.described_by) == ("lx_500", "12", "docking_slots")
    # a bare count elsewhere is the asker's case ("12 robots"), not a description
    assert described_entities(parse_question("What is the battery warranty if I buy 12 robots?", rb), rb,
                              facts) == []


def test_a_composed_answer_says_which_entity_the_description_is(rb):
    from pipeline.answers.composition import compose
    from pipeline.proof.proving import prove
    facts = [*rb.facts, _doc_fact("docking_slots", "lx_500", parse_value("12")),
             _doc_fact("battery_warranty", "lx_500", parse_value("18 months"))]
    focus = with_described(parse_question("What is the battery warranty of the product with a 12-slot dock?", rb),
                           rb, facts)
    proof = prove(focus, rb, facts)
    described = [m for m in focus.entities if m.described_by]
    assert compose(proof, rb, [1], chinese=False, described=described) == \
        "The battery warranty for LX-500 is 18 months (docking slots: 12) [1]."


ORG = """
entity person wang_yu "Wang Yu" aka "王雨"
entity person chen_hao "Chen Hao" aka "陈浩"
entity person ana_ruiz "Ana Ruiz"
relation reports_to(p: person, q: person) "reports to" aka "直属上级"
relation approval_limit(p: person, m: money) "approval limit" aka "审批上限"
fact reports_to(wang_yu, chen_hao)
fact approval_limit(wang_yu, 41000 CNY)
fact approval_limit(chen_hao, 108000 CNY)
"""


@pytest.fixture(scope="module")
def org(tmp_path_factory):
    return rulebase_of(ORG, tmp_path_factory.mktemp("org"))


def _goals(org, q):
    focus = with_described(parse_question(q, org), org, org.facts)
    return [(g.relation, g.args) for g in focus.goals], focus


def test_an_entity_named_through_a_relation_from_a_named_one(org):
    from pipeline.answers.composition import compose
    from pipeline.proof.proving import prove
    for q in ["What is the approval limit of the person Wang Yu reports to?", "王雨的直属上级的审批上限是多少？"]:
        goals, focus = _goals(org, q)
        assert goals == [("approval_limit", ("chen_hao",))], q
    [m] = [m for m in focus.entities if m.described_by]
    assert (m.entity_id, m.via, m.described_by) == ("chen_hao", "wang_yu", "reports_to")
    proof = prove(focus, org, org.facts)
    assert compose(proof, org, [1], chinese=True, described=[m]) == \
        "陈浩的审批上限为108,000 元（直属上级（王雨）：陈浩） [1]。"
    # the named one's own limit is asked where no relation follows its name
    assert _goals(org, "What is the approval limit of Wang Yu?")[0] == [("approval_limit", ("wang_yu",))]


def test_no_answer_about_the_named_entity_when_the_relation_gives_no_one(org):
    # Ana Ruiz reports to nobody the facts know: the question is still not about her
    assert _goals(org, "What is the approval limit of the person Ana Ruiz reports to?")[0] == []
    # asking who: the relation's object is the answer, not a hop
    assert _goals(org, "Who is the person Wang Yu reports to?")[0] == [("reports_to", ("wang_yu",))]


def test_a_relation_named_again_after_the_role_asks_a_second_hop(tmp_path):
    from pipeline.answers.composition import compose
    from pipeline.proof.proving import prove
    rb = rulebase_of(ORG.replace('"reports to" aka "直属上级"', '"line manager" aka "reports to", "直属上级", "汇报"')
                     + 'entity person li_na "Li Na"\nfact reports_to(chen_hao, li_na)\n', tmp_path)
    for q in ["Whom does Wang Yu's line manager report to?", "Wang Yu 的直属上级向谁汇报？", "王雨的直属上级向谁汇报？"]:
        goals, focus = _goals(rb, q)
        assert goals == [("reports_to", ("chen_hao",))], q
    proof = prove(focus, rb, rb.facts)
    assert proof is not None and proof.value == "li_na"
    # named once, the role is what is asked: one hop
    assert _goals(rb, "Who is Wang Yu's line manager?")[0] == [("reports_to", ("wang_yu",))]
    assert _goals(rb, "王雨的直属上级是谁？")[0] == [("reports_to", ("wang_yu",))]


SITES = """
entity site glasgow "Glasgow"
entity site suzhou "Suzhou"
relation notice_period(s: site, d: duration[week]) "extension notice period"
relation loan_period(s: site, d: duration[day]) "loan period"
fact notice_period(glasgow, 6 weeks)
fact loan_period(glasgow, 21 days)
fact loan_period(suzhou, 30 days)
"""


def test_an_argument_the_facts_leave_no_choice_in_is_implied(tmp_path):
    from pipeline.answers.composition import compose
    from pipeline.proof.proving import prove
    from pipeline.evidence.kb_facts import implied_arguments
    rb = rulebase_of(SITES, tmp_path)
    implied = implied_arguments(rb, [])   # the rule files' facts are the whole KB's here
    assert implied == {("notice_period", 0): "glasgow"}
    focus = with_described(parse_question("What is the extension notice period?", rb), rb, rb.facts, implied)
    assert [(g.relation, g.args, g.implied) for g in focus.goals] == [("notice_period", ("glasgow",), (0,))]
    # the implied site is said: another site may be what the asker had in mind
    assert compose(prove(focus, rb, rb.facts), rb, [1], chinese=False) == \
        "The extension notice period for Glasgow is 6 weeks [1]."
    # two sites state a loan period: which one is asked is not known
    assert with_described(parse_question("What is the loan period?", rb), rb, rb.facts, implied).goals == []
    # a site the question names is never replaced by the implied one
    focus = with_described(parse_question("What is the extension notice period in Suzhou?", rb), rb, rb.facts,
                           implied)
    assert [(g.args, g.implied) for g in focus.goals] == [(("suzhou",), ())] and prove(focus, rb, rb.facts) is None
    # with no implied arguments given (a KB too large to read whole), nothing is implied
    assert with_described(parse_question("What is the extension notice period?", rb), rb, rb.facts).goals == []


def test_a_possessed_noun_no_name_knows_stands_for_the_one_relation_of_that_type(org):
    # "Wang Yu's manager": no relation, type or entity is named "manager"; the one person-to-person relation
    # gives who it is
    goals, focus = _goals(org, "What is the approval limit of Wang Yu's manager?")
    assert goals == [("approval_limit", ("chen_hao",))]
    # a possessed name the rule base knows is what is asked of the named one
    assert _goals(org, "What is Wang Yu's approval limit?")[0] == [("approval_limit", ("wang_yu",))]


def test_a_possessed_noun_before_a_known_one_is_no_other_person(org, tmp_path):
    # "Morag Sinclair's job title" asked her manager's title: "job" is no name's word, but "title" is the head
    rb = rulebase_of(ORG + 'relation title(p: person, t: text) "title"\nfact title(wang_yu, "Lecturer")\n'
                           'fact title(chen_hao, "Professor")\n', tmp_path)
    assert _goals(rb, "What is Wang Yu's job title?")[0] == [("title", ("wang_yu",))]
    assert _goals(rb, "What is Wang Yu's line manager's title?")[0] == [("title", ("chen_hao",))]


def test_asking_who_a_persons_manager_is_asks_the_one_relation_between_persons(org, tmp_path):
    from pipeline.proof.proving import prove
    for q in ("Who is Wang Yu's manager?", "Who is Wang Yu's boss?", "Who is Wang Yu's line manager?"):
        goals, focus = _goals(org, q)
        assert goals == [("reports_to", ("wang_yu",))], q
        assert prove(focus, org, org.facts).value == "chen_hao"
    # a deputy or an assistant is someone else: no goal
    assert _goals(org, "Who is Wang Yu's deputy?")[0] == []
    # two person-to-person relations: the words do not say which
    rb = rulebase_of(ORG + 'relation deputy_of(a: person, b: person) "deputy of"\n', tmp_path)
    assert _goals(rb, "Who is Wang Yu's manager?")[0] == []


def test_a_possessed_noun_with_two_relations_of_that_type_is_about_nobody_named(tmp_path):
    rb = rulebase_of(ORG + 'relation deputy_of(a: person, b: person) "deputy of"\n', tmp_path)
    goals, _focus = _goals(rb, "What is the approval limit of Wang Yu's manager?")
    assert goals == []        # which of the two relations "manager" means, the words do not say


def test_a_bare_count_describes_a_thing_where_its_noun_names_the_relation(tmp_path):
    rb = rulebase_of(RULES + 'relation seats(p: product, n: number) "seats"\nfact seats(lx_500, 52)\n'
                             'fact docking_slots(ax_200, 52)\n', tmp_path)
    focus = with_described(parse_question("What payload has the model with 52 seats?", rb), rb, rb.facts)
    assert [(m.entity_id, m.described_by) for m in focus.entities if m.described_by] == [("lx_500", "seats")]
    # "52 items" names no relation: the asker's count, nothing described
    focus = with_described(parse_question("What payload do I need for 52 items?", rb), rb, rb.facts)
    assert not [m for m in focus.entities if m.described_by]


def test_a_declared_link_gives_the_argument_through_the_named_entity(tmp_path):
    from pipeline.answers.composition import compose
    from pipeline.proof.proving import prove
    text = """
type person "person"
entity person sun "Sun Peng" aka "孙鹏"
type location "location" aka "工作地点"
entity location chengdu "Chengdu depot" aka "成都车场"
entity location marrow "Marrow Bay"
relation person_location(p: person, l: location) "location" aka "工作地点" unique
relation hv_training_validity(l: location, d: duration[month]) "high-voltage training valid for" aka "高压作业培训有效期"
link person_location -> hv_training_validity "a person's location decides which limits apply"
fact person_location(sun, chengdu)
fact hv_training_validity(chengdu, 12 months)
fact hv_training_validity(marrow, 24 months)
"""
    rb = rulebase_of(text, tmp_path)
    q = "孙鹏要在车间断开一块动力电池，他的高压作业培训有效期是多长？"
    goals, focus = _goals(rb, q)
    assert goals == [("hv_training_validity", ("chengdu",))]
    proof = prove(focus, rb, rb.facts)
    linked = [m for m in focus.entities if m.described_by]
    assert proof.value == parse_value("12 months")
    assert "工作地点（孙鹏）：成都车场" in compose(proof, rb, [1], chinese=True, described=linked)
    # no link, no hop: the question names no location
    (tmp_path / "nolink").mkdir()
    rb2 = rulebase_of(text.replace("link person_location", "# link"), tmp_path / "nolink")
    assert _goals(rb2, q)[0] == []


def test_a_link_goes_through_the_entity_asked_about_not_the_one_set_apart(tmp_path):
    rb = rulebase_of("""
type person "person"
entity person sun "Sun Peng"
entity person zhao "Zhao Lin"
type grade "grade"
entity grade cr4 "CR4"
entity grade cr5 "CR5"
relation reports_to(p: person, q: person) "reports to"
relation person_grade(p: person, g: grade) "grade" unique
relation approval_limit(g: grade, x: money[CNY]) "approval limit"
link person_grade -> approval_limit "a person's grade sets their approval limit"
fact reports_to(sun, zhao)
fact person_grade(sun, cr4)
fact person_grade(zhao, cr5)
fact approval_limit(cr4, "36000 CNY")
fact approval_limit(cr5, "150000 CNY")
""", tmp_path)
    # "Sun Peng's manager" is Zhao Lin: the grade is his, not Sun Peng's
    assert _goals(rb, "What is the approval limit of Sun Peng's manager?")[0] == [("approval_limit", ("cr5",))]
    assert _goals(rb, "What is the approval limit of Sun Peng?")[0] == [("approval_limit", ("cr4",))]


def test_a_row_the_proved_value_is_read_from_is_no_step_of_the_answer(tmp_path):
    # blind/08 fp-03: "the maximum aircraft weight for Borealis TBL-50 is 95 t (performance row (25 km/h): 10 km/h)"
    from pipeline.answers.composition import compose
    from pipeline.proof.proving import prove
    rb = rulebase_of(r"""
type tug "tug"
entity tug tbl50 "TBL-50"
relation perf_row(t: tug, w: quantity[t], s: quantity[km/h], s2: quantity[km/h]) "performance row"
relation max_weight(t: tug, w: quantity[t]) "maximum aircraft weight"
goal G_MAXW "A tug tows what its performance row says": max_weight(?t, ?w) if perf_row(?t, ?w, ?s, ?s2)
fact perf_row(tbl50, 95 t, "25 km/h", "10 km/h")
""", tmp_path)
    focus = parse_question("What is the maximum aircraft weight for the TBL-50?", rb)
    proof = prove(focus, rb, rb.facts)
    assert proof is not None and str(proof.value) == "95 t"
    assert compose(proof, rb, [1], chinese=False) == "The maximum aircraft weight for TBL-50 is 95 t [1]."

"""Whom an answer is for (pipeline.evidence.scope): a value from a relation or a document scoped to another office
than the one the question asks about is no answer, a proof of it is set aside; the question's people carry their
office into its scope (issue 47, class 5)."""
from __future__ import annotations

import pytest

from pipeline import Answerer, AnswererConfig, AskOptions
from pipeline.evidence.scope import conflict, question_scope, relation_scope
from pipeline.question.focus import parse_question
from pipeline_fakes import FakePassage, FixedRetriever, ScriptedGenerator, rulebase_of

RULES = r"""
type office "office"
entity office dublin "Dublin office" aka "Dublin", "都柏林"
entity office hangzhou "Hangzhou office" aka "Hangzhou", "杭州"
type person "person"
entity person liu_mei "Liu Mei"
entity person aoife "Aoife Brennan"
type day "day type"
entity day weekend "weekend day" aka "weekend", "周末"
relation works_in(p: person, o: office) "works in" unique
relation standby_allowance(d: day, x: money[EUR]) "standby allowance" aka "值班补贴"
relation hz_standby_allowance(d: day, x: money[CNY]) "Hangzhou standby allowance" aka "杭州值班补贴"
pattern PW: "{p:person} works in the {o:office}" -> works_in(p, o)
pattern PG: "{d:day} on call pays {x:money}" -> standby_allowance(d, x)
pattern PH: "{d:day} on standby pays {x:money}" -> hz_standby_allowance(d, x)
"""
ORG = FakePassage("org.md", "Liu Mei works in the Hangzhou office. Aoife Brennan works in the Dublin office.",
                  heading_path=["Organisation"])
GLOBAL = FakePassage("oncall.md", "A weekend day on call pays EUR 150.", heading_path=["On-call policy"])
HZ = FakePassage("hz.md", "A weekend day on standby pays 1,000 元.", heading_path=["Hangzhou office supplement"])


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def test_a_person_carries_their_office_into_the_questions_scope(rb):
    from pipeline.evidence.passage_facts import extract_evidence
    facts, _ = extract_evidence([ORG], rb)
    scope = question_scope(parse_question("What does Liu Mei get for a weekend day on standby?", rb), rb, facts)
    assert scope["person"] == {"liu_mei"} and scope["office"] == {"hangzhou"}
    dublin = question_scope(parse_question("What does a Dublin employee get for a weekend day?", rb), rb, facts)
    assert dublin["office"] == {"dublin"}
    assert relation_scope("hz_standby_allowance", rb) == {"office": {"hangzhou"}}
    assert relation_scope("standby_allowance", rb) == {}
    found = conflict(dublin, relation_scope("hz_standby_allowance", rb), "the relation")
    assert found is not None and found.reason(rb) == \
        "the relation is about Hangzhou office, and the question asks about Dublin office"
    assert conflict(scope, relation_scope("hz_standby_allowance", rb), "x") is None


def _ask(rb, question, draft, passages):
    gen = ScriptedGenerator([draft] * 3)
    answerer = Answerer(gen, FixedRetriever(passages), rb, AnswererConfig(symbolic_answers=False, quote_answers=False))
    return answerer.ask(question, AskOptions(policy="regenerate", max_attempts=1))


def test_a_value_from_a_document_about_another_office_answers_for_someone_else(rb):
    draft = "A weekend day on standby pays 1,000 元 [1]."
    result = _ask(rb, "What does a Dublin employee get for a weekend day on standby?", draft, [HZ, ORG])
    assert result.status == "abstained"
    gaps = " ".join(g for a in result.attempts for g in a.gaps)
    assert "answers for someone else" in gaps and "Hangzhou office" in gaps and "Dublin office" in gaps
    # the same value for someone the supplement is about
    ok = _ask(rb, "What does Liu Mei get for a weekend day on standby?", draft, [HZ, ORG])
    assert ok.status == "verified", [a.gaps for a in ok.attempts]


def test_a_proof_about_another_office_is_set_aside(rb, tmp_path):
    # only the supplement's relation has a Chinese name: a Dublin employee's Chinese question parses into it
    rules = RULES.replace(' aka "值班补贴"', "").replace('aka "杭州值班补贴"', 'aka "杭州值班补贴", "值班补贴"')
    zh = rulebase_of(rules, tmp_path)
    from pipeline.evidence.gather import gather
    from pipeline.evidence.kb_facts import KBFactCache
    ctx = gather("都柏林员工周末值班补贴是多少？", 5, FixedRetriever([HZ, GLOBAL, ORG]), zh, KBFactCache())
    assert [g.relation for g in ctx.focus.goals] == ["hz_standby_allowance"]
    assert ctx.proof is None and ctx.out_of_scope == [
        "a proof of hz_standby_allowance(weekend, 1000 CNY) set aside: the relation 'hz_standby_allowance' is about "
        "Hangzhou office, and the question asks about Dublin office"]
    liu = gather("刘梅 Liu Mei 周末值班补贴是多少？", 5, FixedRetriever([HZ, GLOBAL, ORG]), zh, KBFactCache())
    assert liu.proof is not None and str(liu.proof.value) == "1000 CNY" and liu.out_of_scope == []


def test_an_entity_that_is_the_document_itself_gives_it_no_scope(tmp_path):
    # blind/03's author: "the on-call policy" named by a question set aside a proof from the Hangzhou supplement,
    # an entity of the same type whose name is the supplement's whole title
    from pipeline.evidence.scope import document_scope
    rb = rulebase_of('type policy "policy"\nentity policy oncall "On-call policy"\n'
                     'entity policy hz_supplement "Hangzhou HR supplement"\ntype site "site"\n'
                     'entity site hangzhou "Hangzhou"\n', tmp_path)
    supplement = FakePassage("hz.md", "x", heading_path=["Hangzhou HR supplement"])
    assert document_scope(supplement, rb) == {}
    about = FakePassage("hz2.md", "x", heading_path=["Hangzhou staff rules for the on-call rota, 2026 edition"])
    assert document_scope(about, rb) == {"site": {"hangzhou"}}


def test_a_proof_from_documents_that_never_name_the_asked_place_is_set_aside(tmp_path):
    # blind/05: "the daily hire rate for a standpipe at the Wuxi plant" proved from UK hire terms (the relation takes
    # no plant) that never name the plant, while the plant's own supplement does
    from pipeline.evidence.gather import gather
    from pipeline.evidence.kb_facts import KBFactCache
    rb = rulebase_of(r"""
type item "hire item"
entity item standpipe "standpipe"
type plant "plant"
entity plant wuxi "Wuxi plant" aka "无锡水厂"
entity plant leeds "Leeds depot"
relation hire_rate(i: item, x: money) "daily hire rate" aka "hire per day"
relation meal_allowance(p: plant, x: money) "meal allowance"
pattern PH: "\| Hire per day \| {x:money} \|" -> hire_rate(standpipe, x)
pattern PM: "meal allowance is {x:money}" -> meal_allowance(wuxi, x)
""", tmp_path)
    hire = FakePassage("hire.md", "Standpipes are collected at the Leeds depot.\n| Item | Charge |\n|---|---|\n"
                                  "| Hire per day | GBP 42 |", heading_path=["Standpipe hire terms"])
    wuxi = FakePassage("wuxi.md", "The meal allowance is CNY 30.", heading_path=["Wuxi plant supplement"])
    ctx = gather("What is the daily hire rate for a standpipe at the Wuxi plant?", 5, FixedRetriever([hire, wuxi]), rb,
                 KBFactCache())
    assert ctx.proof is None and ctx.out_of_scope == [
        "a proof of hire_rate(standpipe, 42 GBP) set aside: the question asks about Wuxi plant, and hire.md never "
        "names it"]
    # at a place the terms name, or with no place named, the proof stands
    for q in ["What is the daily hire rate for a standpipe at the Leeds depot?", "What is the daily hire rate for a standpipe?"]:
        ctx = gather(q, 5, FixedRetriever([hire, wuxi]), rb, KBFactCache())
        assert ctx.proof is not None and str(ctx.proof.value) == "42 GBP", q


def test_a_table_row_puts_what_it_names_in_the_questions_scope(tmp_path):
    # blind/07: a group booking notice the KB states for the Hangzhou gallery alone answered a question about an
    # exhibition whose admission row names Bath; the guide's front matter subject is the gallery, whole
    from pipeline.evidence.gather import gather
    from pipeline.evidence.kb_facts import KBFactCache
    rb = rulebase_of(r"""
type site "site"
entity site bath "Bath"
entity site hangzhou "Hangzhou gallery" aka "杭州美术馆"
type exhibition "exhibition"
entity exhibition deep_time "Deep Time"
relation group_notice(s: site, d: duration[workday]) "group booking notice"
relation adult_price(e: exhibition, x: money) "adult price"
pattern PG: "groups book at least {d:duration} ahead" -> group_notice(hangzhou, d)
pattern PA: "\| {e:exhibition} \| {_:site} \| {x:money} \|" -> adult_price(e, x)
""", tmp_path)
    admission = FakePassage("admission.md", "| Exhibition | Venue | Adult |\n|---|---|---|\n| Deep Time | Bath | GBP 12 |",
                            heading_path=["Admission"])
    guide = FakePassage("hz.md", "Visiting groups book at least 3 working days ahead.", heading_path=["Visitor guide"],
                        subject="杭州美术馆")
    kb = FixedRetriever([admission, guide])
    ctx = gather("What is the group booking notice for Deep Time?", 5, kb, rb, KBFactCache())
    assert ctx.scope["site"] == {"bath"}
    assert ctx.proof is None and ctx.out_of_scope == [
        "a proof of group_notice(hangzhou, 3 workdays) set aside: hz.md is about Hangzhou gallery, and the question "
        "asks about Bath"]
    ok = gather("What is the group booking notice at the Hangzhou gallery?", 5, kb, rb, KBFactCache())
    assert ok.proof is not None and str(ok.proof.value) == "3 workdays"


def test_a_row_speaks_only_for_a_type_the_facts_leave_out(rb):
    # blind/06 num-08: Wuhan's rows named the Wuhan company, which joined the UK employee's own company in the scope
    # and let the Wuhan supplement answer him
    from pipeline.evidence.passage_facts import extract_evidence
    facts, _ = extract_evidence([ORG], rb)
    focus = parse_question("What does Liu Mei get for a weekend day?", rb)
    rows = {"liu_mei": {"office": frozenset({"dublin"})}, "weekend": {"office": frozenset({"hangzhou"})}}
    assert question_scope(focus, rb, facts, rows)["office"] == {"hangzhou"}      # her office, by the facts
    assert question_scope(focus, rb, [], {"weekend": {"office": frozenset({"hangzhou"})}})["office"] == {"hangzhou"}
    assert "office" not in question_scope(focus, rb, [], {"weekend": {"office": frozenset({"hangzhou", "dublin"})}})


def test_a_proof_stated_for_the_asked_entity_is_not_judged_by_its_documents_subject(tmp_path):
    # blind/08 fp-04: the Hangzhou ramp safety rules (subject: the apron) state the service roads' speed limit; the
    # proof of speed_limit(hangzhou, service_roads) was set aside as "about the apron"
    from pipeline.evidence.scope import source_conflict
    rb = rulebase_of('type area "area"\nentity area apron "Apron" aka "机坪"\nentity area roads "service roads"\n'
                     'type station "station"\nentity station hangzhou "Hangzhou station" aka "杭州站"\n', tmp_path)
    rules_doc = FakePassage("zh/ramp.md", "服务车道限速 20 公里/小时。", heading_path=["杭州站机坪安全规定"])
    asked = {"area": frozenset({"roads"}), "station": frozenset({"hangzhou"})}
    found = source_conflict(asked, None, [rules_doc], rb)
    assert found is not None and found.etype == "area"
    assert source_conflict(asked, None, [rules_doc], rb, ("hangzhou", "roads")) is None
    # bound to another area, the subject still judges
    assert source_conflict(asked, None, [rules_doc], rb, ("hangzhou", "apron")) is not None

"""Values attributed, not matched (issue 47, classes 1 and 6): a number a source states for another grade is not
the asked person's, a relation only the rules derive takes no value from a bare match, and a claim of a
worse-named relation answers another attribute. The relations' derivations come from the rule base's
dependency graph (symbolic.dependencies)."""
from __future__ import annotations

import pytest
from pipeline_fakes import FakePassage, FixedRetriever, ScriptedGenerator, rulebase_of

from pipeline import Answerer, AnswererConfig, AskOptions
from pipeline.checks.grounding import rules_own
from pipeline.evidence.passage_facts import extract_evidence
from pipeline.evidence.scope import question_scope
from pipeline.question.focus import parse_question
from symbolic import Fact
from symbolic import parse_value as v
from symbolic.dependencies import derived_from, premises_of

RULES = r"""
type person "person"
entity person dan "Dan Kirby"
entity person ann "Ann Lee"
type title "title"
entity title scientist "Scientist"
entity title manager "Area Manager"
type grade "grade"
entity grade e2 "E2"
entity grade m2 "M2"
type policy "policy"
entity policy leave_policy "annual leave policy"
relation has_title(p: person, t: title) "has the title" unique
relation grade_for_title(t: title, g: grade) "grade of a title" unique
relation emergency_limit(g: grade, x: money[GBP]) "emergency works limit"
relation grade_of(p: person, g: grade) "grade"
relation person_emergency_limit(p: person, x: money[GBP]) "emergency works limit of a person"
relation annual_leave(g: grade, d: duration) "annual leave"
relation person_annual_leave(p: person, d: duration) "annual leave of a person" aka "days of annual leave"
relation leave_carry_over(l: policy, d: duration) "carried over" aka "days of unused annual leave carried over"
pattern P_TITLE: "{p:person} is a {t:title}" -> has_title(p, t)
pattern P_GRADE: "A {t:title} is grade {g:grade}" -> grade_for_title(t, g)
pattern P_LIMIT: "\| {g:grade} \| {x:money} \|" -> emergency_limit(g, x)
pattern P_LEAVE: "Grade {g:grade} employees get {d:duration} of annual leave" -> annual_leave(g, d)
pattern A_LEAVE: "{p:person} gets {d:duration} of annual leave" -> person_annual_leave(p, d)
pattern P_CARRY: "Up to {d:duration} of unused annual leave may be carried over" -> leave_carry_over(leave_policy, d)
goal G_GRADE "A person's grade is their title's":
    grade_of(?p, ?g) if has_title(?p, ?t) and grade_for_title(?t, ?g)
goal G_LIMIT "A person's emergency limit is their grade's":
    person_emergency_limit(?p, ?x) if grade_of(?p, ?g) and emergency_limit(?g, ?x)
goal G_LEAVE "A person's leave is their grade's, where they are of the group":
    person_annual_leave(?p, ?d) if grade_of(?p, ?g) and annual_leave(?g, ?d) and has_title(?p, manager)
"""
ORG = FakePassage("org.md", "Dan Kirby is a Scientist. A Scientist is grade M2. Ann Lee is a Area Manager.",
                  heading_path=["Organisation"])
LIMITS = FakePassage("authority.md", "| Grade | Emergency works limit (GBP) |\n|---|---|\n| E2 | 500,000 |\n"
                     "| M2 | 25,000 |", heading_path=["Delegated authority", "Limits by grade"])
LEAVE = FakePassage("leave.md", "Grade E2 employees get 30 days of annual leave. Up to 5 days of unused annual "
                    "leave may be carried over.", heading_path=["Annual leave"])


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


@pytest.fixture(scope="module")
def grades_only(tmp_path_factory):
    """The rules without a person's limit: an answer giving one is read for its value alone."""
    rules = "\n".join(line for line in RULES.splitlines() if "person_emergency_limit" not in line
                      and "G_LIMIT" not in line)
    return rulebase_of(rules, tmp_path_factory.mktemp("grades"))


def _gaps(result) -> str:
    """Every gap its attempts were withheld for, in one text."""
    return " ".join(g for a in result.attempts for g in a.gaps)


def _ask(rb, question, draft, passages):
    answerer = Answerer(ScriptedGenerator([draft] * 3), FixedRetriever(passages), rb,
                        AnswererConfig(symbolic_answers=False, quote_answers=False))
    return answerer.ask(question, AskOptions(policy="regenerate", max_attempts=1))


def test_the_dependency_graph_knows_what_the_rules_alone_derive(rb):
    assert premises_of(rb)["person_emergency_limit"] == {"grade_of", "emergency_limit"}
    assert derived_from(rb, "person_emergency_limit") == {"grade_of", "emergency_limit", "has_title",
                                                          "grade_for_title"}
    assert derived_from(rb, "emergency_limit") == set()
    # a relation the rules derive and no retrieved source states has only proved values (grounding.rules_own)
    assert rules_own(rb, "person_emergency_limit", []) and rules_own(rb, "grade_of", [])
    assert rules_own(rb, "person_annual_leave", [])       # A_LEAVE reads it from answers: no document says it
    assert not rules_own(rb, "annual_leave", []) and not rules_own(rb, "has_title", [])
    stated = Fact("person_annual_leave", ("dan", v("25 days")), 1.0)
    assert not rules_own(rb, "person_annual_leave", [stated]) and not rules_own(None, "grade_of", [])


def test_the_scope_follows_a_title_to_its_grade(rb):
    facts, _ = extract_evidence([ORG], rb)
    scope = question_scope(parse_question("What is the emergency works limit of Dan Kirby?", rb), rb, facts)
    assert scope == {"person": {"dan"}, "title": {"scientist"}, "grade": {"m2"}}


def test_a_value_stated_for_another_grade_is_not_the_persons(grades_only):
    rb = grades_only
    assert [g.relation for g in parse_question("What is the emergency works limit of Dan Kirby?", rb).goals] \
        != ["person_emergency_limit"]
    wrong = _ask(rb, "What is the emergency works limit of Dan Kirby?",
                 "Dan Kirby's emergency works limit is GBP 500,000 [1].", [LIMITS, ORG])
    assert wrong.status == "abstained"
    gaps = _gaps(wrong)
    assert "'GBP 500,000' is stated for E2, and the question is about M2" in gaps
    right = _ask(rb, "What is the emergency works limit of Dan Kirby?",
                 "Dan Kirby's emergency works limit is GBP 25,000 [1].", [LIMITS, ORG])
    assert right.status == "verified", [a.gaps for a in right.attempts]
    # the answer that says whose the value is attributes it rightly
    named = _ask(rb, "What is the emergency works limit of Dan Kirby?",
                 "Dan Kirby is grade M2 [2], whose emergency works limit is GBP 25,000; grade E2 has GBP 500,000 [1].",
                 [LIMITS, ORG])
    assert not any("is stated for" in g for a in named.attempts for g in a.gaps)


def test_a_relation_the_rules_derive_takes_no_value_from_a_bare_match(rb):
    # Dan Kirby is no Area Manager: the rules prove no leave for him, and 30 days is grade E2's; a pattern reads
    # the relation from answers (A_LEAVE), but no source states it: its values are the rules' (blind/05 un-07)
    result = _ask(rb, "How many days of annual leave does Dan Kirby get?",
                  "Dan Kirby gets 30 days of annual leave [1].", [LEAVE, ORG])
    assert result.status == "abstained"
    report = next(r for a in result.attempts for r in a.claims if r.relation == "person_annual_leave")
    assert report.verdict == "unsupported"
    assert "only the rules derive person_annual_leave" in report.explanation


def test_a_claim_of_a_worse_named_relation_answers_another_attribute(rb):
    focus = parse_question("How many days of annual leave does Dan Kirby get?", rb)
    assert [g.relation for g in focus.goals][:1] == ["person_annual_leave"]
    result = _ask(rb, "How many days of annual leave does Dan Kirby get?",
                  "Up to 5 days of unused annual leave may be carried over [1].", [LEAVE, ORG])
    assert result.status == "abstained"
    gaps = _gaps(result)
    assert "it states leave_carry_over, but the question asks for person_annual_leave" in gaps
    # asked directly, the carry-over is what is asked
    carry = _ask(rb, "How many days of unused annual leave may be carried over?",
                 "Up to 5 days of unused annual leave may be carried over [1].", [LEAVE])
    assert carry.status == "verified", [a.gaps for a in carry.attempts]


LIMIT_RULES = r"""
type person "person"
entity person priya "Priya Raman"
type grade "grade"
entity grade m2 "M2"
relation grade_of(p: person, g: grade) "grade" unique
relation commitment_limit(g: grade, x: money[GBP]) "commitment limit" limit upper
relation emergency_limit(g: grade, x: money[GBP]) "emergency works limit" aka "emergency limit" limit upper
relation person_commitment_limit(p: person, x: money[GBP]) "commitment limit of a person" limit upper
relation can_approve(p: person, x: money[GBP]) "can approve" aka "approve"
link grade_of -> commitment_limit, emergency_limit
pattern P_GRADE: "{p:person} is grade {g:grade}" -> grade_of(p, g)
pattern P_ROW: "\| {g:grade} \| {x:money} \| {y:money} \|" -> commitment_limit(g, x)
pattern P_EROW: "\| {g:grade} \| {x:money} \| {y:money} \|" -> emergency_limit(g, y)
goal G_PERSON_LIMIT "A person's commitment limit is their grade's":
    person_commitment_limit(?p, ?x) if grade_of(?p, ?g) and commitment_limit(?g, ?x)
goal G_APPROVE "One approves up to their grade's commitment limit" cf 0.9:
    can_approve(?p, ?x) if grade_of(?p, ?g) and commitment_limit(?g, ?lim) and ?x <= ?lim
goal G_APPROVE_NOT "Nobody approves above their grade's commitment limit" cf -1.0:
    can_approve(?p, ?x) if grade_of(?p, ?g) and commitment_limit(?g, ?lim) and ?x > ?lim
"""
AUTHORITY = FakePassage("authority.md", "Priya Raman is grade M2.\n\n| Grade | Commitment limit (GBP) | Emergency "
                        "works limit (GBP) |\n|---|---|---|\n| M2 | 10,000 | 25,000 |", heading_path=["Authority"])


def test_a_limit_the_question_does_not_name_answers_no_permission_question(tmp_path):
    from pipeline.evidence.gather import gather
    from pipeline.evidence.kb_facts import KBFactCache
    rb = rulebase_of(LIMIT_RULES, tmp_path)
    commitment = gather("Can Priya Raman approve a commitment of GBP 20,000?", 5, FixedRetriever([AUTHORITY]), rb,
                        KBFactCache())
    assert [b.proof.goal.relation for b in commitment.breaches] == ["person_commitment_limit"]
    # emergency works name the other limit: the approval rule's commitment limit says nothing about them
    emergency = gather("Can Priya Raman approve emergency works costing GBP 20,000?", 5, FixedRetriever([AUTHORITY]),
                       rb, KBFactCache())
    assert emergency.breaches == []


CHARGE_RULES = r"""
type service "connection service"
entity service domestic "domestic connection"
entity service meter_fit "AquaMeter 300 installation" aka "AquaMeter 300 meter installation"
relation charge(s: service, x: money[GBP]) "charge"
"""
CHARGES = FakePassage("charges.md", "| Service | Charge (GBP) |\n|---|---|\n| Domestic connection, up to 10 m | 1,450 |\n"
                      "| AquaMeter 300 meter installation | 180 |", heading_path=["Connection charges"])


def test_one_parts_value_does_not_answer_a_total(tmp_path):
    rb = rulebase_of(CHARGE_RULES, tmp_path)
    question = "What is the total charge for a domestic connection and an AquaMeter 300 installation?"
    part = _ask(rb, question, "The total charge is GBP 1,450 [1].", [CHARGES])
    assert part.status == "abstained"
    gaps = _gaps(part)
    assert "the question asks a total, and the answer states 1450 GBP, what the sources give for domestic " \
           "connection alone" in gaps
    whole = _ask(rb, question, "The total charge is GBP 1,630 (GBP 1,450 + GBP 180) [1].", [CHARGES])
    assert not any("asks a total" in g for a in whole.attempts for g in a.gaps)
    # one thing asked: its row's value is the answer
    one = _ask(rb, "What is the charge for a domestic connection?", "The charge is GBP 1,450 [1].", [CHARGES])
    assert one.status == "verified", [a.gaps for a in one.attempts]

"""Same-typed pairs read in word order when the relation's whole name, and nothing else, stands between them."""
from __future__ import annotations

import pytest

from pipeline.readers.directed_pairs import directed_pair_claims
from symbolic import Claim, Fact
from pipeline_fakes import rulebase_of

RULES = """
type person "person"
entity person ann "Ann Lee"
entity person bob "Bob Wu"
entity person cho "Cho Min"
entity person chen "陈伟"
entity person liu "刘洋"
type city "city"
entity city berlin "Berlin"
entity city paris "Paris"
relation reports_to(a: person, b: person) "reports to" aka "直属上级" unique
relation deputy_of(a: person, b: person) "deputy of"
relation twinned_with(a: city, b: city) "twinned with"
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _read(rb, answer, taken=()):
    return [str(c.fact) for c in directed_pair_claims(answer, [], rb, list(taken))]


def test_the_first_named_is_the_subject_when_the_name_stands_between(rb):
    assert _read(rb, "Ann Lee reports to Bob Wu.") == ["reports_to(ann, bob)"]
    assert _read(rb, "Bob Wu reports to Ann Lee.") == ["reports_to(bob, ann)"]
    assert _read(rb, "Ann Lee reports directly to Bob Wu.") == ["reports_to(ann, bob)"]
    assert _read(rb, "陈伟的直属上级是刘洋。") == ["reports_to(chen, liu)"]
    assert _read(rb, "Cho Min is the deputy of Bob Wu.") == ["deputy_of(cho, bob)"]
    assert _read(rb, "Berlin is twinned with Paris.") == ["twinned_with(berlin, paris)"]


def test_chinese_word_orders_a_title_after_the_copula_and_the_name_after_both(rb):
    assert _read(rb, "陈伟的直属上级为财务总监刘洋。") == ["reports_to(chen, liu)"]
    assert _read(rb, "陈伟的直属上级是苏州校区的刘洋。") == ["reports_to(chen, liu)"]
    assert _read(rb, "刘洋是陈伟的直属上级。") == ["reports_to(chen, liu)"]
    assert _read(rb, "陈伟是刘洋的直属上级，负责审批。") == ["reports_to(liu, chen)"]
    for answer in ("刘洋是陈伟的同事。",                 # another word after the second name
                   "刘洋是陈伟的直属上级的助理。",       # the name, then more
                   "陈伟的直属上级为财务总监，刘洋负责审批。",   # the second name in another clause
                   "陈伟的同事是刘洋。"):
        assert _read(rb, answer) == [], answer


def test_names_of_other_types_between_the_two_are_passed_over(tmp_path):
    # the title and the campus are entities of their own here: the next person, not the next entity, is the object
    rb = rulebase_of(RULES + """
type title "title"
entity title cfo "财务总监" aka "Finance Director"
type campus "campus"
entity campus suzhou "苏州校区"
relation person_title(a: person, t: title) "title" aka "职务" unique
""", tmp_path)
    assert _read(rb, "陈伟的直属上级为财务总监刘洋。") == ["reports_to(chen, liu)"]
    assert _read(rb, "陈伟的直属上级是苏州校区的刘洋。") == ["reports_to(chen, liu)"]
    assert _read(rb, "Ann Lee reports to Finance Director Bob Wu.") == []     # "Finance Director" is said too
    assert _read(rb, "陈伟的直属上级为财务总监，刘洋负责审批。") == []


def test_a_chain_reads_each_neighbouring_pair(rb):
    assert _read(rb, "Ann Lee reports to Bob Wu who reports to Cho Min.") == [
        "reports_to(ann, bob)", "reports_to(bob, cho)"]


def test_no_reading_when_something_else_is_said_or_the_order_gives_no_direction(rb):
    for answer in ("Ann Lee's report is reviewed by Bob Wu.",     # "report", but another statement
                   "Bob Wu, to whom Ann Lee reports, is away.",    # the name is not between them
                   "Ann Lee does not report to Bob Wu.",           # negated
                   "Ann Lee no longer reports to Bob Wu.",
                   "Ann Lee and Bob Wu report to the board.",      # nothing between the two but "and"
                   "Ann Lee reports to the CFO; Bob Wu is away.",  # another clause
                   "Ann Lee met Bob Wu.",                          # no name
                   "刘洋是陈伟。"):
        assert _read(rb, answer) == [], answer


def test_a_subject_whose_relation_is_already_read_is_not_read_again(rb):
    taken = [Claim(Fact("reports_to", ("ann", "bob")), "Ann Lee reports to Bob Wu", 0, 25)]
    assert _read(rb, "Ann Lee reports to Bob Wu.", taken) == []

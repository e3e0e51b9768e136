"""`link a -> b` in the rule language: parsed, checked (file:line:col for an unknown or ill-typed relation),
and followed by the multi-hop retrieval round (the hop's value found in the first round's passages becomes a
query for the linked relation, whose passage is moved up behind the first round's best)."""
from __future__ import annotations

import pytest

from api.cli import main
from pipeline.evidence.gather import gather
from pipeline.evidence.kb_facts import KBFactCache
from pipeline.evidence.links import asked_relations, link_queries
from pipeline.question.focus import parse_question
from symbolic import RuleErrors, load_rulebase
from symbolic.parser import parse_text
from pipeline_fakes import FakePassage, rulebase_of

RULES = """
type person "person"
type title "job title"
type grade "grade"
type city "city"
type tier "city tier"
entity person ana "Ana Ruiz"
entity person bo "Bo Lind"
entity title buyer "Buyer"
entity title lead_buyer "Lead Buyer"
entity grade g2 "G2"
entity grade g4 "G4"
entity city berlin "Berlin"
entity city london "London"
entity tier tier_1 "Tier 1"
entity tier tier_2 "Tier 2"
relation has_title(person, title) "title" unique
relation grade_for_title(title, grade) "grade of a title" unique
relation approval_limit(grade, money[EUR]) "approval limit"
relation city_tier(city, tier) "city tier" unique
relation hotel_limit(tier, money[EUR]) "hotel limit per night"
pattern P_TITLE: "{person} ... title: {title}" -> has_title(person, title)
pattern P_GRADE: "{title} ... grade {grade}" -> grade_for_title(title, grade)
pattern P_LIMIT: re"{grade}\\s*\\|\\s*{x:money}" -> approval_limit(grade, x)
pattern P_CITY: "{city} is a {tier} city" -> city_tier(city, tier)
pattern P_HOTEL: re"{tier}\\s*\\|\\s*{x:money}" -> hotel_limit(tier, x)
fact grade_for_title(buyer, g2)
link has_title -> grade_for_title "a person's title sets their grade"
link grade_for_title -> approval_limit
link city_tier -> hotel_limit
"""
ORG = FakePassage("org.md", "Ana Ruiz, title: Lead Buyer. Bo Lind, title: Buyer.", 0.9, chunk_id="org")
GRADES = FakePassage("grades.md", "A Lead Buyer is grade G4.", 0.2, chunk_id="grades")
LIMITS = FakePassage("limits.md", "| G2 | EUR 5,000 |\n| G4 | EUR 20,000 |", 0.1, chunk_id="limits")
TIERS = FakePassage("tiers.md", "Berlin is a Tier 2 city.", 0.8, chunk_id="tiers")
HOTEL = FakePassage("hotel.md", "| Tier 1 | EUR 180 |\n| Tier 2 | EUR 140 |", 0.1, chunk_id="hotel")
NOISE = [FakePassage(f"noise{i}.md", f"Ana Ruiz wrote memo {i} about Berlin.", 0.5 - i / 100, chunk_id=f"n{i}")
         for i in range(4)]


class WordRetriever:
    """Ranks the KB by words shared with the query (ties: the passage's own score): a second round with a
    different query finds different passages, as the real hybrid search does."""
    version = "words"

    def __init__(self, passages):
        self.kb, self.queries = list(passages), []

    def search(self, query, top_k=5, **_):
        self.queries.append(query)
        words = set(query.lower().replace("?", " ").split())
        ranked = sorted(self.kb, key=lambda p: (-len(words & set(p.text.lower().replace("|", " ").split())), -p.score))
        return ranked[:top_k]

    def passages(self, **_):
        return list(self.kb)

    def __len__(self):
        return len(self.kb)


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"), "t.rules")


def test_a_link_statement_names_a_source_and_one_or_more_targets():
    pf, errors = parse_text('link a -> b, c "a sets b and c"\nlink d -> e\n', "x.rules")
    assert errors == []
    assert [(k.source, k.target, k.message) for k in pf.links] == \
        [("a", "b", "a sets b and c"), ("a", "c", "a sets b and c"), ("d", "e", None)]
    assert [(k.location.line, k.location.column, k.target_location.column) for k in pf.links] == \
        [(1, 6, 11), (1, 6, 14), (2, 6, 11)]


def test_a_link_without_its_arrow_is_a_syntax_error_at_its_place():
    _pf, errors = parse_text("link a b\n", "x.rules")
    assert [(e.line, e.column) for e in errors] == [(1, 8)] and "expected" in errors[0].message


@pytest.mark.parametrize("link, column, message", [
    ("link has_titel -> grade_for_title", 6, "unknown relation 'has_titel' in link (did you mean 'has_title'?)"),
    ("link has_title -> nothing_like_it", 19, "unknown relation 'nothing_like_it' in link (declare it"),
    ("link approval_limit -> hotel_limit", 6, "the value of approval_limit is a money, not an entity"),
    ("link has_title -> approval_limit", 19, "approval_limit takes no title (the value of has_title)"),
    ("link city_tier -> city_tier", 19, "city_tier takes no tier"),
])
def test_a_bad_link_is_an_error_at_file_line_column(tmp_path, link, column, message):
    (tmp_path / "bad.rules").write_text(RULES + link + "\n", encoding="utf-8")
    with pytest.raises(RuleErrors) as info:
        load_rulebase(tmp_path)
    [err] = info.value.errors
    assert (err.path, err.line, err.column) == (str(tmp_path / "bad.rules"), RULES.count("\n") + 1, column)
    assert message in err.message


def test_rules_check_reports_links_and_link_errors(tmp_path, capsys):
    (tmp_path / "ok.rules").write_text(RULES, encoding="utf-8")
    assert main(["rules", "check", str(tmp_path / "ok.rules")]) == 0
    assert "3 links" in capsys.readouterr().out
    (tmp_path / "bad.rules").write_text(RULES + "link city_tier -> hotel_limt\n", encoding="utf-8")
    assert main(["rules", "check", str(tmp_path / "bad.rules")]) == 1
    err = capsys.readouterr().err
    assert f"bad.rules:{RULES.count(chr(10)) + 1}:19: unknown relation 'hotel_limt' in link " \
           "(did you mean 'hotel_limit'?)" in err
    assert "Traceback" not in err


def test_the_linked_relation_counts_as_asked_when_the_question_names_it(rb):
    focus = parse_question("What is the hotel limit per night in Berlin?", rb)
    assert "hotel_limit" in asked_relations(focus, rb)
    assert "approval_limit" not in asked_relations(focus, rb)


def test_the_hop_value_in_the_first_passages_becomes_the_query(rb):
    focus = parse_question("What is the hotel limit per night in Berlin?", rb)
    assert link_queries(focus, [TIERS], rb, None) == ["hotel limit per night Tier 2"]
    # nothing found for Berlin, in the passages or the facts: no hop
    assert link_queries(focus, [HOTEL], rb, None) == []
    # no link declared, no hop: the same rule base without its link statements
    plain = parse_question("What is the hotel limit per night in Berlin?", rb)
    links, rb.links = rb.links, []
    try:
        assert link_queries(plain, [TIERS], rb, None) == []
    finally:
        rb.links = links


def test_a_link_end_of_the_asked_kind_counts_as_asked_without_its_name(rb):
    # "how much ... spend": an amount; the hotel limit is the one linked relation whose value is one
    focus = parse_question("How much can I spend per night in Berlin?", rb)
    assert "hotel_limit" not in asked_relations(focus, rb)
    assert link_queries(focus, [TIERS], rb, None) == ["hotel limit per night Tier 2"]
    # a duration is asked: no linked relation gives one
    assert link_queries(parse_question("How many days can I stay in Berlin?", rb), [TIERS], rb, None) == []


def test_a_chain_of_links_walks_two_hops_from_passages_and_facts(rb):
    focus = parse_question("What is the approval limit of Ana Ruiz?", rb)
    # title from the first passage, then the title's grade from the KB's facts: both hops asked
    kb = KBFactCache().get(WordRetriever([ORG, GRADES, LIMITS]), rb)
    assert link_queries(focus, [ORG], rb, kb) == ["grade of a title Lead Buyer", "approval limit G4"]
    # Bo Lind's title's grade is a rule-base fact (no passage states it)
    focus = parse_question("What is the approval limit of Bo Lind?", rb)
    assert link_queries(focus, [ORG], rb, None) == ["grade of a title Buyer", "approval limit G2"]


def test_the_hop_brings_the_linked_passage_the_first_round_missed(rb):
    question = "What is the hotel limit per night in Berlin?"
    first = WordRetriever([TIERS, HOTEL, *NOISE]).search(question, 2)
    assert HOTEL not in first                      # the memos naming Berlin outrank the hotel table
    ctx = gather(question, 2, WordRetriever([TIERS, HOTEL, *NOISE]), rb, KBFactCache())
    assert ctx.followups[0] == "hotel limit per night Tier 2"
    # the hop's passage is in, among the first two (it also states the asked relation: it leads)
    assert "hotel" in [p.chunk_id for p in ctx.candidates[:2]]
    assert len({(p.doc_id, p.start) for p in ctx.candidates}) == len(ctx.candidates)   # no passage twice

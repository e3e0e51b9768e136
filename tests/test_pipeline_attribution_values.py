"""Values as the documents and answers mean them (issue 47, /verify on answers written elsewhere): a table cell's
bare number is evidence with its header's unit, an answer's "a year" after an amount is that amount's period, and
a relation claim an evidence fact states is cited to the source holding the fact."""
from __future__ import annotations

from pipeline.checks.attribution import attach_citations
from pipeline.evidence.passage_facts import extract_evidence
from pipeline.readers.patterns import extract_claims
from pipeline.text.values import find_values, periods
from pipeline_fakes import FakePassage, rulebase_of
from symbolic import Claim, Fact, Provenance
from symbolic.values import parse_value

RATES = FakePassage("rates.md", "| Region | Premium (GBP per day) |\n|---|---|\n| Europe | 1.80 |\n| World | 3.10 |\n")


class _NoRules:
    relations: dict = {}
    patterns: list = []

    def extract(self, text, source=None, **_kw):
        return []


def test_a_bare_cell_is_evidence_with_its_headers_unit_at_its_own_span():
    _facts, values = extract_evidence([RATES], _NoRules())
    cells = [(str(v.value), v.text, RATES.text[v.start:v.end]) for v in values if v.text in ("1.80", "3.10")]
    assert cells == [("1.8 GBP", "1.80", "1.80"), ("3.1 GBP", "3.10", "3.10")]


def test_a_period_after_an_amount_claims_nothing_of_its_own(tmp_path):
    rb = rulebase_of('relation fee(x: money[GBP]) "fee"\n', tmp_path)
    for text, said in [("The add-on costs GBP 100 a year.", ["GBP 100"]),
                       ("He gets 25 working days of annual leave a year.", ["25 working days"]),
                       ("The cover lasts a year.", ["a year"]), ("It costs GBP 5, and lasts a year.", ["GBP 5", "a year"])]:
        _claims, mentions = extract_claims(text, [], rb)
        assert [m.text for m in mentions] == said, text
    text = "GBP 100 a year"
    assert periods(text, find_values(text)) == {8}


def test_a_claim_an_evidence_fact_states_is_cited_to_its_source():
    org = FakePassage("org.md", "Jamie Okafor reports to Morag Lindqvist.")
    fact = Fact("reports_to", ("jamie", "morag"), 1.0, Provenance("document", doc_id="org.md", start=0, end=40))
    claim = Claim(Fact("reports_to", ("jamie", "morag"), 1.0, Provenance("answer")), "reports to Morag", 0, 30)
    answer = "Jamie Okafor reports to Morag Lindqvist."
    assert attach_citations(answer, [FakePassage("other.md", "x"), org], [], [], [claim], [fact]) == \
        (answer + " [2]", [2])
    other = Claim(Fact("reports_to", ("jamie", "ann"), 1.0, Provenance("answer")), "reports to Ann", 0, 30)
    assert attach_citations(answer, [org], [], [], [other], [fact]) == (answer, [])      # no fact states it


def test_the_ordinal_of_a_heading_or_list_item_is_no_value():
    # blind/02 mh-07 with the 135M model: an answer echoing a Chinese heading "# 三、..." was verified by its "三"
    from pipeline.text.values import find_values
    assert find_values("# 三、立案确认时限") == []
    assert [v[0].value for v in find_values("Rhona Baird's sources: (zh/shanghai.md) # 三、立案确认时限")] == []
    assert [v for v in find_values("## 4. Limits\n2. Scope\n(3) claims")] == []
    # a number inside a sentence, or one that is a value, still reads
    assert [v[0].value for v in find_values("The answer is 3. Next")] == [3.0]
    assert [v[0].value for v in find_values("1. Employees get 25 days")] == [25.0]

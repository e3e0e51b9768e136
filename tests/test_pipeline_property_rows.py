"""A datasheet's property rows are facts about the entity its title names, read by the rows' labels as the
relations' names; rows of several values, about another entity, or naming no relation clearly are not."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from pipeline.evidence.passage_facts import extract_evidence
from pipeline.readers.property_rows import property_row_facts
from pipeline_fakes import rulebase_of

RULES = """
entity product ax_200 "AX-200"
entity product lx_500 "LX-500"
relation payload(p: product, m: quantity[kg]) "rated payload" aka "额定载重"
relation battery_runtime(p: product, d: duration[hour]) "runtime per charge" aka "续航时间"
relation charging_time(p: product, d: duration[hour]) "charging time"
relation max_speed(p: product, v: quantity[m/s]) "maximum speed"
relation max_speed_loaded(p: product, v: quantity[m/s]) "maximum speed at rated payload"
pattern P_PAYLOAD: "{product} carries {m:quantity}" -> payload(product, m)
"""

SHEET = """## 1. Key specifications

| Property | Value |
|---|---|
| Rated payload | 500 kg |
| Runtime per charge | up to 8 hours |
| Charging time, 0 to 100 % | 3 hours |
| Maximum speed, unloaded | 1.5 m/s |
| Battery | lithium iron phosphate, 48 V, 100 Ah |
| Compared with the AX-200 | 300 kg more |
| Colour | 2 tones |
"""


@dataclass
class Passage:
    text: str
    title: str | None
    doc_id: str = "products/lx500.md"
    start: int = 0
    end: int = 0


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


def _read(rb, text, title):
    return [(str(f), text[s:e].strip()) for f, s, e in property_row_facts(Passage(text, title), rb)]


def test_each_row_naming_one_relation_states_it_of_the_titles_entity(rb):
    assert _read(rb, SHEET, "LX-500 Pallet Lifting Robot — Product Datasheet") == [
        ("payload(lx_500, 500 kg)", "| Rated payload | 500 kg"),
        ("battery_runtime(lx_500, 8 hours)", "| Runtime per charge | up to 8 hours"),
        ("charging_time(lx_500, 3 hours)", "| Charging time, 0 to 100 % | 3 hours"),
        ("max_speed(lx_500, 1.5 m/s)", "| Maximum speed, unloaded | 1.5 m/s"),
    ]
    zh = "| 项目 | 参数 |\n|---|---|\n| 额定载重 | 200 公斤 |\n| 续航时间 | 最长 10 小时 |\n"
    assert [f for f, _t in _read(rb, zh, "AX-200 使用手册")] == ["payload(ax_200, 200 kg)", "battery_runtime(ax_200, 10 hours)"]


def test_no_subject_no_facts(rb):
    assert _read(rb, SHEET, "Northwind robots compared") == []          # the title names no entity
    assert _read(rb, SHEET, "AX-200 and LX-500 datasheet") == []        # or two
    assert _read(rb, SHEET, None) == []


def test_the_header_row_and_wider_tables_are_no_property_rows(rb):
    table = "| Rated payload | 500 kg |\n|---|---|\n| Rated payload | 500 kg | 200 kg |\n"
    assert _read(rb, table, "LX-500 datasheet") == []


def test_a_pattern_reading_of_the_same_relation_is_kept_alone(rb):
    text = "The LX-500 carries 450 kg.\n\n| Property | Value |\n|---|---|\n| Rated payload | 500 kg |\n| Runtime per charge | 8 hours |\n"
    facts, _values = extract_evidence([Passage(text, "LX-500 datasheet")], rb)
    assert sorted(str(f) for f in facts) == ["battery_runtime(lx_500, 8 hours)", "payload(lx_500, 450 kg)"]
    runtime = next(f for f in facts if f.relation == "battery_runtime")
    assert runtime.cf == pytest.approx(0.9) and runtime.provenance.doc_id == "products/lx500.md"
    assert text[runtime.provenance.start:runtime.provenance.end].strip() == "| Runtime per charge | 8 hours"

"""Relations named by meaning: a question whose words name no relation asks the one the sentence embedder finds
clearly closest, among those it could ask; unclear, Chinese or unrelated questions name none."""
from __future__ import annotations

import numpy as np
import pytest

from pipeline.question.focus import parse_question
from pipeline.question.relation_namer import RelationNamer, namer_for
from pipeline_fakes import rulebase_of

RULES = """
entity product ax_200 "AX-200"
entity software fleet_manager "NW Fleet Manager"
relation licence_fee(s: software, x: money[EUR]) "licence fee per robot per year"
relation list_price(p: product, x: money[EUR]) "list price"
relation battery_runtime(p: product, d: duration[hour]) "runtime per charge"
relation warranty_period(p: product, d: duration[month]) "robot warranty"
"""


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"))


class TableEmbedder:
    """Vectors from a table of axes: a text points along every axis whose key word it contains."""
    axes = ["licence", "price", "runtime", "warranty"]

    def __init__(self):
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        rows = np.array([[1.0 if a in t.lower() else 0.0 for a in self.axes] + [0.3] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_the_closest_relation_must_be_close_and_clearly_ahead(rb):
    namer = RelationNamer(TableEmbedder().embed)
    sigs = list(rb.relations.values())
    assert namer.closest("what does the licence come to", sigs, rb)[0].name == "licence_fee"
    assert namer.closest("what is the weather", sigs, rb) is None                 # close to nothing
    assert namer.closest("licence or price?", sigs, rb) is None                   # two equally close
    assert namer.closest("软件许可费是多少", sigs, rb) is None                      # English-only embedder
    # only the candidates given compete
    assert namer.closest("what does the licence come to", [rb.relations["list_price"]], rb) is None


def test_name_vectors_are_computed_once_per_rule_base(rb):
    embedder = TableEmbedder()
    namer = RelationNamer(embedder.embed)
    sigs = list(rb.relations.values())
    namer.closest("licence", sigs, rb)
    namer.closest("price", sigs, rb)
    assert embedder.calls == 3       # the names once, then one call per text


def test_a_retriever_without_a_meaningful_embedder_has_no_namer():
    class Hashing:
        spec = "hashing:64"

        def embed(self, texts):
            return np.zeros((len(texts), 64), dtype=np.float32)

    class R:
        embedder = Hashing()
    assert namer_for(object()) is None and namer_for(R()) is None


@pytest.fixture(scope="module")
def minilm_namer():
    from retrieval.embedder import get_embedder
    return RelationNamer(get_embedder("default").embed)


def test_a_question_asks_the_relation_it_means_with_the_default_embedder(rb, minilm_namer):
    focus = parse_question("How much does an NW Fleet Manager licence cost?", rb, namer=minilm_namer)
    assert [(g.relation, g.args) for g in focus.goals] == [("licence_fee", ("fleet_manager",))]
    focus = parse_question("How long does the AX-200 run on one battery charge?", rb, namer=minilm_namer)
    assert [(g.relation, g.args) for g in focus.goals] == [("battery_runtime", ("ax_200",))]
    # its words name nothing, and without a namer it asks nothing
    assert parse_question("How much does an NW Fleet Manager licence cost?", rb).goals == []
    # a question about something the rules do not know names no relation
    assert parse_question("Who designed the AX-200's logo?", rb, namer=minilm_namer).goals == []
    # a relation whose types do not fit the question never competes: money is asked, a runtime is no answer
    goals = parse_question("How much does one battery charge of the AX-200 cost?", rb, namer=minilm_namer).goals
    assert "battery_runtime" not in [g.relation for g in goals]


TWINS = """
entity product ax_200 "AX-200"
entity plan premium "Premium Support"
entity policy duty "duty rules"
relation warranty_period(p: product, d: duration[month]) "robot warranty"
relation battery_warranty_period(p: product, d: duration[month]) "battery warranty"
relation licence_fee(p: product, x: money[EUR]) "licence fee per robot per year"
relation max_weekly_hours(p: policy, d: duration[hour]) "teaching hours per week"
"""


def test_half_a_name_said_and_the_closest_meaning_agree(tmp_path, minilm_namer):
    rb = rulebase_of(TWINS, tmp_path)
    # "warranty" is half of both names; the embedder finds the robot warranty closer
    focus = parse_question("How long is the AX-200 under warranty?", rb, namer=minilm_namer)
    assert [(g.relation, g.args, g.score) for g in focus.goals] == [("warranty_period", ("ax_200",), 0.5)]
    # without a namer, half a name names nothing
    assert parse_question("How long is the AX-200 under warranty?", rb).goals == []
    # a qualifier the name lacks asks another fee: "restocking fee" is no licence fee
    assert parse_question("What restocking fee applies to the AX-200?", rb, namer=minilm_namer).goals == []
    # a unit of time said is no half of "teaching hours per week"
    assert parse_question("How many hours per week are the duty rules open?", rb, namer=minilm_namer).goals == []


def test_a_name_said_by_its_units_of_time_alone_is_not_said(tmp_path):
    from pipeline.question.naming import named_by_time_alone
    rb = rulebase_of(TWINS + 'relation weekly_cap(p: policy, d: duration[hour]) "hours per week"\n', tmp_path)
    assert parse_question("How many hours per week do the duty rules set?", rb).goals[0].relation == "weekly_cap"
    assert named_by_time_alone(rb.relations["max_weekly_hours"], frozenset({"hour", "week"}))
    assert not named_by_time_alone(rb.relations["max_weekly_hours"], frozenset({"hour", "week", "teaching"}))
    assert not named_by_time_alone(rb.relations["weekly_cap"], frozenset({"hour", "week"}))


def test_a_chinese_name_said_by_its_units_of_time_alone_is_not_said(tmp_path):
    # tuning p-46: the library's opening hours are no teaching hours ("每周" is a unit of time, as "week" is)
    rb = rulebase_of('entity campus glasgow "Glasgow campus" aka "格拉斯哥校区"\n'
                     'relation max_weekly_hours(c: campus, d: duration[hour]) "teaching hours per week" aka "每周助教时长"\n',
                     tmp_path)
    assert parse_question("格拉斯哥校区图书馆每周开放多少小时？", rb).goals == []
    assert [g.relation for g in parse_question("格拉斯哥校区每周助教时长是多少小时？", rb).goals] == ["max_weekly_hours"]


SOLE = """
entity level level_1 "level 1 service"
entity vehicle e12 "E12 bus"
entity policy duty "duty rules"
relation service_interval(l: level, x: quantity[km]) "service interval"
relation vehicle_range(v: vehicle, x: quantity[km]) "range"
relation charging_time(v: vehicle, d: duration[hour]) "charging time"
relation max_weekly_hours(p: policy, d: duration[hour]) "weekly hours"
entity staff driver "bus driver"
relation annual_leave(s: staff, d: duration[day]) "annual leave"
"""


class AxisEmbedder(TableEmbedder):
    axes = ["between", "service", "range", "charg", "week", "warranty", "hours", "leave"]


def test_the_one_relation_the_named_entities_bind_and_the_embedder_finds_closest(tmp_path):
    rb = rulebase_of(SOLE, tmp_path)
    namer = RelationNamer(AxisEmbedder().embed)
    # a maintenance level has one distance: asked, though its name is not said and the embedder is far off
    focus = parse_question("How many km is it from one level 1 service to the next?", rb, namer=namer)
    assert [(g.relation, g.args) for g in focus.goals] == [("service_interval", ("level_1",))]
    assert 0.2 <= focus.goals[0].score < 0.65
    # a bus has one duration, but the embedder finds the weekly hours closer: the warranty is not asked
    assert parse_question("How long is the warranty on the E12 bus in hours?", rb, namer=namer).goals == []
    # two distances of a vehicle: none is the one; no answer type: nothing is asked
    assert parse_question("How many km for the E12 bus?", rb, namer=namer).goals == []
    assert parse_question("Tell me about level 1 services.", rb, namer=namer).goals == []
    # the one duration of a bus driver, but the question says neither its name nor its unit (a day is time)
    assert parse_question("How long after a bus driver's last working day are accounts deleted?", rb,
                          namer=namer).goals == []
    assert [g.relation for g in parse_question("How much annual leave does a bus driver get?", rb,
                                               namer=namer).goals] == ["annual_leave"]
    # something of the entity's that the relation does not name: the question is about that, not the entity
    from pipeline.question.naming import sole_and_meant
    sig = rb.relations["annual_leave"]
    closest = [(0.5, sig)]      # the embedder's similarities, the annual leave closest
    assert sole_and_meant(closest, "How much leave does a  get?", [sig], rb) == (sig, 0.5)
    assert sole_and_meant(closest, "How much leave does a 's manager get?", [sig], rb) is None
    assert sole_and_meant(closest, "How much leave is in a 's annual leave?", [sig], rb) == (sig, 0.5)
    # a hop the question names (a manager, a relation between two entities): it may ask about the entity it leads to
    assert sole_and_meant(closest, "How much leave does the manager of a  get?", [sig], rb) is None
    (tmp_path / "link").mkdir()
    linked = rulebase_of(SOLE + 'relation reports_to(a: staff, b: staff) "reports to"\n', tmp_path / "link")
    sig = linked.relations["annual_leave"]
    closest = [(0.5, sig)]
    assert sole_and_meant(closest, "How much leave does the one a  reports to get?", [sig], linked) is None
    assert sole_and_meant(closest, "How much leave does a  get?", [sig], linked) == (sig, 0.5)


def test_a_chinese_question_asks_the_one_relation_its_entities_bind_where_it_says_part_of_its_name(tmp_path):
    # the embedder reads no Chinese: tuning2 p-29 "钱包丢了保管多久？" (a wallet's one duration, 保管 of its name)
    rules = ('entity item valuables "valuables" aka "钱包"\n'
             'relation lost_property_hold(i: item, d: duration[day]) "lost property kept for" aka "失物保管期限"\n'
             'relation handling_fee(i: item, x: money[CNY]) "handling fee" aka "手续费"\n')
    rb = rulebase_of(rules, tmp_path)
    assert [(g.relation, g.args) for g in parse_question("钱包丢了保管多久？", rb).goals] == [
        ("lost_property_hold", ("valuables",))]
    assert parse_question("钱包丢了多久能找回？", rb).goals == []               # no part of its name said
    assert parse_question("钱包保管费是多少钱？", rb).goals == []                 # the one fee, but not its name
    (tmp_path / "two").mkdir()
    two = rulebase_of(rules + 'relation claim_window(i: item, d: duration[day]) "claim window" aka "认领期限"\n',
                      tmp_path / "two")
    assert parse_question("钱包丢了保管多久？", two).goals == []                   # two durations of a wallet

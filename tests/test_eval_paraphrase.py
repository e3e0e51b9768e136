"""The new-user questions of eval/paraphrase (bench/goal_probe.py): every label names a relation and entities of
the set's own rules, and the probe's verdict follows proof and label."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from symbolic import load_rulebase

ROOT = Path(__file__).resolve().parent.parent
SETS = {"shipped": "rules", "tuning": "eval/tuning/rules", "tuning2": "eval/tuning2/rules"}


def _probe():
    spec = importlib.util.spec_from_file_location("goal_probe", ROOT / "bench" / "goal_probe.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", SETS)
def test_labels_use_the_sets_own_vocabulary(name):
    rb = load_rulebase(ROOT / SETS[name])
    items = [json.loads(line) for line in open(ROOT / "eval" / "paraphrase" / f"{name}.jsonl", encoding="utf-8")]
    assert len({i["id"] for i in items}) == len(items) >= 30
    assert sum(i["relation"] is None for i in items) >= 5 and sum(i["language"] == "zh" for i in items) >= 4
    for item in items:
        assert set(item) == {"id", "question", "language", "relation", "args", "value"}
        if item["relation"] is None:
            assert item["args"] is None and item["value"] is None
            continue
        sig = rb.relations[item["relation"]]
        for arg, param in zip(item["args"] or [], sig.params):
            assert isinstance(arg, (int, float)) or rb.entities[arg].type == param.type, (item["id"], arg)


def test_the_verdict_follows_the_proof_and_the_label():
    outcome = _probe().outcome

    def ctx(relation=None, args=(), value=None, goals=()):
        proof = SimpleNamespace(goal=SimpleNamespace(relation=relation, args=args), value=value) if relation else None
        return SimpleNamespace(proof=proof, focus=SimpleNamespace(goals=list(goals)))

    item = {"relation": "list_price", "args": ["ax_200"], "value": "38500 EUR"}
    assert outcome(item, ctx("list_price", ("ax_200",), "38500 EUR")) == "right"
    assert outcome(item, ctx("list_price", ("ax_200",), "52000 EUR")) == "other"
    assert outcome(item, ctx("list_price", ("lx_500",), "38500 EUR")) == "other"
    assert outcome(item, ctx(goals=["a goal"])) == "unproved" and outcome(item, ctx()) == "no goal"
    assert outcome({**item, "value": None}, ctx("list_price", ("ax_200",), "1 EUR")) == "right"
    unanswerable = {"relation": None, "args": None, "value": None}
    assert outcome(unanswerable, ctx()) == "abstains"
    assert outcome(unanswerable, ctx("list_price", ("ax_200",), "38500 EUR")) == "answered"

"""Questions a new user would ask, written after the rules: does the question parse into the relation it asks, and
do the rules prove the right value? No model runs (the pipeline's prepare step: retrieval, focus, proof).

Usage: .venv/bin/python bench/goal_probe.py [--set shipped|tuning|tuning2|all] [--show]

eval/paraphrase/<set>.jsonl holds one question per line with the relation (and arguments) it asks, the value
the knowledge base gives it (null where the rules do not prove one yet), or relation null for a question the KB
does not answer. Printed per set: right proofs, proofs of another value or relation, goals with no proof,
no goal; for the unanswerable ones, any proof is a wrong answer. ``--show`` lists every item that is not right.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SETS = {"shipped": ("kb", "rules"), "tuning": ("eval/tuning/kb", "eval/tuning/rules"),
        "tuning2": ("eval/tuning2/kb", "eval/tuning2/rules")}


def said(value: object) -> str:
    """A proof's value as the probe files write it (entity ids bare, quantities as the rule engine prints them)."""
    return str(value)


def outcome(item: dict, context: object) -> str:
    """right / other / unproved / no goal (answerable); abstains / answered (relation null)."""
    proof, goals = context.proof, context.focus.goals
    if item["relation"] is None:
        return "abstains" if proof is None else "answered"
    if proof is None:
        return "unproved" if goals else "no goal"
    args = [str(a) for a in proof.goal.args]
    right_goal = proof.goal.relation == item["relation"] and \
        (item["args"] is None or args == [str(a) for a in item["args"]])
    if right_goal and (item["value"] is None or said(proof.value) == item["value"]):
        return "right"
    return "other"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="all", choices=[*SETS, "all"])
    ap.add_argument("--show", action="store_true")
    args = ap.parse_args()
    from pipeline.evaluation.system import build_system

    for name in (SETS if args.set == "all" else [args.set]):
        kb, rules = SETS[name]
        setup = build_system(ROOT / kb, ROOT / rules, None, index_dir=None, seed=0, generate=False)
        counts: dict[str, int] = {}
        for line in open(ROOT / "eval" / "paraphrase" / f"{name}.jsonl", encoding="utf-8"):
            item = json.loads(line)
            context = setup.prepare(item["question"]).context
            got = outcome(item, context)
            counts[got] = counts.get(got, 0) + 1
            if args.show and got not in ("right", "abstains"):
                proof = context.proof
                proved = f"  [{proof.goal.relation}{tuple(proof.goal.args)} = {proof.value}]" if proof else ""
                print(f"  {name} {item['id']} {got}: {item['question']}{proved}")
        asked = sum(v for k, v in counts.items() if k not in ("abstains", "answered"))
        print(f"{name}: right {counts.get('right', 0)}/{asked}, other {counts.get('other', 0)}, "
              f"unproved {counts.get('unproved', 0)}, no goal {counts.get('no goal', 0)}; unanswerable: "
              f"abstains {counts.get('abstains', 0)}, answered {counts.get('answered', 0)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

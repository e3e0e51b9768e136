"""Re-check a system run's delivered answers with today's verifier, without generating again.

Usage: .venv/bin/python bench/reverify_run.py RUN OUT [--kb DIR --rules DIR --profile small|medium]

A full system run with the 0.5B model takes about an hour on the 2-core machine; when the verifier changes,
this re-verifies each answer the run delivered as `verified` (Answerer.verify, the same checks a draft gets)
and writes OUT, a copy of RUN whose answers that no longer verify are withheld (status `abstained`, as the
answer loop's default policy would). The run's [n] markers point into its own prompt, which the run does not
store and today's retrieval would not rebuild alike, so they are removed first and the verifier cites the
sources that state each value itself (as it does for a model that cited nothing). It can only demote: a draft the old verifier rejected is not
regenerated, so a figure from OUT is a lower bound on what a fresh run would deliver. Read OUT with
bench/eval_table.py like any run; every changed item is printed.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
_CITATION = re.compile(r"\s*\[(?:\d{1,3}|n)\]")


class _NoModel:
    """Verification needs no generator; one that is called is a bug here."""
    tokenizer = None
    max_model_len = 2048

    def chat(self, *a: object, **k: object) -> None:
        raise RuntimeError("bench/reverify_run.py generates nothing")

    stream = chat


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run")
    ap.add_argument("out")
    ap.add_argument("--kb", default="kb")
    ap.add_argument("--rules", default="rules")
    ap.add_argument("--profile", choices=("small", "medium"), default="small",
                    help="the run's model profile (small: the 135M default, medium: the 0.5B)")
    args = ap.parse_args()
    from pipeline import Answerer, AnswererConfig
    from pipeline.loop.factory import open_retriever, open_rules
    from pipeline.generate.profiles import MEDIUM, SMALL
    run, out = Path(args.run), Path(args.out)
    if not (run / "results.jsonl").is_file():
        print(f"{run}: no results.jsonl (not a system run folder)", file=sys.stderr)
        return 2
    answerer = Answerer(_NoModel(), open_retriever(args.kb), open_rules(args.rules),
                        AnswererConfig(profile=SMALL if args.profile == "small" else MEDIUM))
    out.mkdir(parents=True, exist_ok=True)
    kept = demoted = 0
    lines = []
    for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["status"] in ("verified", "regenerated"):
            now = answerer.verify(rec["question"], _CITATION.sub("", rec["answer"]).strip())
            if now.status == "verified":
                kept += 1
            else:
                demoted += 1
                print(f"{rec['id']}: {rec['status']} -> withheld ({now.reason[:200]}) | {rec['answer'][:120]!r}")
                rec["status"], rec["reason"] = "abstained", f"re-verified: {now.reason}"
                rec["verified"] = {**rec["verified"], "delivered": False, "abstained": True, "hallucinated": False,
                                   "correct": False, "reasons": []}
        lines.append(json.dumps(rec, ensure_ascii=False))
    (out / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{run.name}: {kept} verified answers still verify, {demoted} withheld -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

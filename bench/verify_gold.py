"""The verifier as a checker of answers written elsewhere (issue 47: /verify): each factual question's gold answer,
and the same answer with its first number changed, checked by `pipeline.verify` against the KB and the rules,
with no [n] markers (an answer from another system carries none).

Usage: .venv/bin/python bench/verify_gold.py QUESTIONS.jsonl --kb KB --rules RULES [--index DIR] [--out FILE.jsonl]

Prints one line per item (status of the right answer, of the changed one, and why) and last
`right verified R/N (P %), changed verified C/M` — the issue's targets are >= 80 % and 0.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")


def changed(answer: str) -> str | None:
    """``answer`` with its first number other than a year changed (doubled plus one), or None if it has none."""
    for m in _NUMBER.finditer(answer):
        digits = m.group(0).replace(",", "")
        if len(digits) == 4 and digits.startswith(("19", "20")):
            continue
        n = float(digits)
        new = f"{int(n * 2 + 1):,}" if "," in m.group(0) else str(int(n * 2 + 1))
        return answer[:m.start()] + new + answer[m.end():]
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("questions")
    ap.add_argument("--kb", required=True)
    ap.add_argument("--rules", required=True)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--index", default=None, help="index folder (default: next to the KB)")
    args = ap.parse_args()
    from pipeline import verify
    from pipeline.loop.answerer import Answerer
    from pipeline.loop.config import AnswererConfig
    from pipeline.loop.factory import open_retriever, open_rules

    answerer = Answerer(None, open_retriever(args.kb, args.index), open_rules(args.rules),  # type: ignore[arg-type]
                        AnswererConfig(lm_extraction=False))
    items = [json.loads(line) for line in Path(args.questions).read_text(encoding="utf-8").splitlines() if line.strip()]
    rows, right, wrong_ok, n_wrong = [], 0, 0, 0
    factual = [it for it in items if it["kind"] != "unanswerable" and it.get("gold_answer")]
    for it in factual:
        good = verify(it["question"], it["gold_answer"], answerer=answerer)
        bad_text = changed(it["gold_answer"])
        bad = verify(it["question"], bad_text, answerer=answerer) if bad_text else None
        right += good.status == "verified"
        if bad is not None:
            n_wrong += 1
            wrong_ok += bad.status == "verified"
        row = {"id": it["id"], "right": good.status, "right_reason": good.reason,
               "changed": bad.status if bad else None, "changed_answer": bad_text}
        rows.append(row)
        print(f"{it['id']}: right {good.status}; changed {row['changed']} | {good.reason[:160]}")
    if args.out:
        args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"right verified {right}/{len(factual)} ({100 * right / max(1, len(factual)):.0f} %), "
          f"changed verified {wrong_ok}/{n_wrong}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Which checks withhold right drafts: over system runs, each withheld answer's first draft (scored as `plain`)
counted right or wrong under the check that withheld the run's last draft (issue 47 item 8: a check that blocks
more right drafts than wrong ones is reworked or removed).

Usage: .venv/bin/python bench/withheld.py RUN [RUN ...]      (run folders of verirag eval / bench/replay_eval.py)

A draft is right when the scorer counts it correct and not hallucinated; wrong when it is hallucinated or not
correct on an answerable item; an unanswerable item's draft is wrong (abstaining was right). The last line
is one row per check: `check: withheld right R, wrong W`.
"""
from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

_COUNT = re.compile(r"\d+ claim\(s\) not supported(?: and 0 rule violation\(s\))?")
_AFTER = re.compile(r" after \d+ attempt\(s\)$")


def checks_of(reason: str) -> list[str]:
    """The checks named in a withheld answer's reason, each by its leading words."""
    body = reason.removeprefix("withheld a failing answer: ")
    body = _AFTER.sub("", body)
    out = []
    for part in body.split("; "):
        part = _COUNT.sub("claims not supported", part)
        part = re.sub(r"^(['\"]).*?\1\s*", "", part)       # a gap may open with the claim it is about
        if part.startswith("0 rule violation"):
            continue
        key = re.split(r"[:(']", part, maxsplit=1)[0].strip()
        out.append(" ".join(key.split()[:8]))
    return out


def tally(runs: list[Path]) -> dict[str, Counter]:
    per: dict[str, Counter] = {}
    for run in runs:
        for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if r["status"] != "abstained" or not r["reason"].startswith("withheld"):
                continue
            plain = r.get("plain") or {}
            right = r["kind"] != "unanswerable" and plain.get("correct") and not plain.get("hallucinated")
            for check in checks_of(r["reason"]):
                per.setdefault(check, Counter())["right" if right else "wrong"] += 1
    return per


def main() -> int:
    runs = [Path(a) for a in sys.argv[1:]]
    if not runs or not all((r / "results.jsonl").is_file() for r in runs):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    per = tally(runs)
    for check, c in sorted(per.items(), key=lambda kv: -sum(kv[1].values())):
        print(f"{check}: withheld right {c['right']}, wrong {c['wrong']}")
    total = sum(per.values(), Counter())
    print(f"all checks: withheld right {total['right']}, wrong {total['wrong']} over {len(runs)} run(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

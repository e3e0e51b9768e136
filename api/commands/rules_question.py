"""`verirag rules question RULES --kb KB "QUESTION"`: how a question parses and what the rules prove for it, with no
model loaded — the relations it may ask (with scores), the entities, whom it is about, each goal tried, the proofs
set aside and why, and whether the proof would answer before any draft (the rule author's offline check of
question parsing; `verirag ask --explain` shows the same after a model's draft)."""
from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction) -> None:
    q = sub.add_parser("question", help="how a question parses and what the rules prove for it (no model)")
    q.add_argument("rules", help="rule folder or .rules file")
    q.add_argument("question", help="the question (English or Chinese, 1..4000 characters)")
    q.add_argument("--kb", required=True, help="the knowledge base folder")
    q.add_argument("--index", default=None, help="index folder (default: next to the KB; built if missing)")
    q.add_argument("--json", action="store_true", help="machine-readable output")
    q.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from api.commands.ask import render_explanation
    from pipeline.loop.answerer import Answerer
    from pipeline.loop.config import AnswererConfig
    from pipeline.loop.explanation import explain_parse
    from pipeline.loop.factory import open_retriever, open_rules
    from symbolic import RuleError

    try:
        holder = open_rules(args.rules)
        answerer = Answerer(None, open_retriever(args.kb, args.index), holder,  # type: ignore[arg-type]
                            AnswererConfig(lm_extraction=False))
        context = answerer.question_context(args.question)
    except (FileNotFoundError, RuleError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    x = explain_parse(context, holder.current)
    if args.json:
        print(json.dumps(x, ensure_ascii=False, indent=1))
        return 0
    lines = render_explanation({**x, "withheld": None})[2:]   # no "explain:" heading
    lines += [f"  premise wrong: {c['relation']}({', '.join(c['proved']['args'])}) is {c['proved']['value']}, "
              f"{c['against']}" for c in x["corrections"]]
    p = x["proof"]
    lines.append(f"proof: {p['goal']} = {p['value']} (CF {p['cf']:.2f}); " +
                 ("answers before any draft" if p["answers_before_any_draft"] else "given to the draft as evidence")
                 if p else "proof: none (a draft from the passages answers, and is checked)")
    print("\n".join(ln[2:] if ln.startswith("  ") else ln for ln in lines))
    return 0

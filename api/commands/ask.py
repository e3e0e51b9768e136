"""`verirag ask "question"`: retrieve, generate, verify against the rules, print the checked answer."""
from __future__ import annotations

import argparse
import json
import sys

from api.commands.generate import QUANTIZATION_CHOICES, QUANTIZATION_HELP
from api.commands.models import MODEL_HELP
from api.commands.remote_args import add_remote_args, remote_config
from pipeline.defaults import DEFAULT_MAX_TOKENS, DEFAULT_SPECULATIVE_TOKENS, DEFAULT_TOP_K


# Exit statuses, for scripts: 0 answered (or a status --fail-on does not name), 1 a component failed (model,
# index, rules), 2 bad input or usage, 3 flagged and --fail-on flagged, 4 abstained and --fail-on abstained.
FAIL_STATUS = {"flagged": 3, "abstained": 4}
EPILOG = ("exit status: 0 answered; 1 a component failed (model, index, rules); 2 bad input; "
          "3 the answer is flagged and --fail-on flagged; 4 it is abstained and --fail-on abstained")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("ask", help="answer a question from the knowledge base, verified by the rules",
                              epilog=EPILOG)
    p.add_argument("question", help="the question (English or Chinese, 1..4000 characters)")
    p.add_argument("--kb", metavar="DIR", default=None, help="knowledge base folder (default: the embedded kb/)")
    p.add_argument("--rules", metavar="DIR", default=None, help="rule folder (default: the embedded rules/)")
    p.add_argument("--model", metavar="NAME|PATH", default=None, help=MODEL_HELP)
    p.add_argument("--quantization", choices=QUANTIZATION_CHOICES, default="auto", help=QUANTIZATION_HELP)
    p.add_argument("--index", metavar="DIR", default=None, help="index folder (default: next to the KB)")
    p.add_argument("--policy", choices=["flag", "abstain", "regenerate"], default="regenerate",
                   help="what to do with an answer that fails verification (default: regenerate, then flag)")
    p.add_argument("--top-k", type=int, default=DEFAULT_TOP_K, help=f"passages to retrieve (default {DEFAULT_TOP_K})")
    p.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS,
                   help=f"tokens per attempt (default {DEFAULT_MAX_TOKENS})")
    p.add_argument("--max-attempts", type=int, default=3, help="attempts with the regenerate/abstain policy")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--speculative-tokens", type=int, metavar="K", default=DEFAULT_SPECULATIVE_TOKENS,
                   help="prompt-lookup speculative decoding, at most K proposed tokens per step; same greedy "
                        f"output, faster (default {DEFAULT_SPECULATIVE_TOKENS}; 0: off)")
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    p.add_argument("--draft-first", action="store_true", help="let the model draft even where the rules prove all "
                   "the question asks (by default the proof answers at once)")
    p.add_argument("--explain", action="store_true", help="also say why: the question's parse (relations it may ask, "
                   "with scores), the goals tried and what became of each, each claim's evidence, why drafts were "
                   "withheld")
    p.add_argument("--fail-on", action="append", choices=sorted(FAIL_STATUS), default=[], metavar="STATUS",
                   help="exit non-zero when the answer has this status: flagged (3) or abstained (4); repeatable")
    add_remote_args(p)
    p.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    from pipeline import AskOptions, default_answerer
    from pipeline.types import validate_question

    options = AskOptions(top_k=args.top_k, max_tokens=args.max_tokens, temperature=args.temperature,
                         seed=args.seed, policy=args.policy, max_attempts=args.max_attempts, explain=args.explain,
                         proof_first=not args.draft_first)
    try:
        # validate before loading a model for seconds
        validate_question(args.question)
        options.validate()
        remote = remote_config(args)     # a malformed URL is bad input (2), before anything loads
        engine = None
        if remote is not None:
            from neural.remote import RemoteGenerator
            engine = RemoteGenerator.connect(remote)
        answerer = default_answerer(args.kb, args.rules, args.model, args.index, engine=engine,
                                    speculative_tokens=args.speculative_tokens, quantization=args.quantization)
        result = answerer.ask(args.question, options)
    except (ValueError, FileNotFoundError) as exc:
        print(f"verirag ask: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # component errors (RuleError, RetrievalError, EngineError) carry clear text
        if type(exc).__module__.split(".")[0] in ("symbolic", "retrieval", "neural"):
            print(f"verirag ask: error: {exc}", file=sys.stderr)
            return 1
        raise
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False, indent=1, default=str))
    else:
        print(render(result))
    return FAIL_STATUS[result.status] if result.status in args.fail_on else 0


def render(result) -> str:
    lines = [result.answer, "", f"status: {result.status}  ({result.reason})"]
    if result.citations:
        lines.append("citations:")
        for c in result.citations:
            flag = "  [superseded]" if c.superseded else ""
            text = " ".join(c.text.split())
            lines.append(f"  [{c.index}] {c.doc_id} [{c.start}:{c.end}]{flag}  {text[:160]}{'…' if len(text) > 160 else ''}")
    if result.claims:
        from symbolic.explain import verdict_cf
        lines.append("claims:")
        for c in result.claims:
            rules = f" [{', '.join(c.rule_ids)}]" if c.rule_ids else ""
            lines.append(f"  - \"{c.text}\" ({c.relation}) -> {c.verdict}, {verdict_cf(c.verdict, c.cf)}{rules}")
            lines += [f"      {ln}" for ln in c.explanation.splitlines() if ln.strip()]
    for v in result.violations:
        lines.append(f"  ! rule {v.rule_id}: {v.message}")
    t = result.timings_ms
    lines.append(f"attempts: {len(result.attempts)}  timings (ms): " +
                 ", ".join(f"{k} {t[k]:.0f}" for k in ("retrieve", "prefill", "decode", "extract", "verify", "total")
                           if k in t))
    lines.append(f"usage: {result.usage['prompt_tokens']} prompt + {result.usage['completion_tokens']} completion tokens")
    if result.explain:
        lines += render_explanation(result.explain)
    return "\n".join(lines)


def render_explanation(x: dict) -> list[str]:
    """``AnswerResult.explain`` as lines a rule author reads: parse, goals, set aside, withheld."""
    p = x["parse"]
    lines = ["", "explain:", f"  answer types: {', '.join(p['answer_types']) or 'none read'}",
             "  entities: " + (", ".join(f"{e['text']!r} = {e['entity']} ({e['type']}"
                                         + (f", through {e['described_by']}" if e.get("described_by") else "") + ")"
                                         for e in p["entities"]) or "none"),
             "  stated values: " + (", ".join(v["text"] for v in p["stated_values"]) or "none"),
             "  about: " + (", ".join(f"{t}: {', '.join(ids)}" for t, ids in p["about"].items()) or "anyone"),
             "  relations asked (score): " + (", ".join(f"{r['relation']}({', '.join(r['args'])}, ?) {r['score']}"
                                                     for r in p["relations"]) or "none: the question parsed into no relation")]
    for g in x["goals"]:
        proved = ", ".join(f"{v['value']} (CF {v['cf']:.2f})" for v in g["proved"]) or "nothing"
        lines.append(f"  goal {g['goal']}: proves {proved}; {g['outcome']}")
        lines += [f"      {w}" for why in g.get("why", []) for w in why.splitlines()]
    lines += [f"  set aside: {s}" for s in x["set_aside"]]
    if x["withheld"]:
        for a in x["withheld"]["attempts"]:
            lines.append(f"  withheld {a['answer']!r}:")
            lines += [f"      {g}" for g in a["gaps"]] + [f"      {c}" for c in a["failing_claims"]]
    return lines

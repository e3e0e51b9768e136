"""`verirag eval DATASET.jsonl ...` (system, detector, context, extraction runs) and `verirag eval compare A B`."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from api.commands.generate import QUANTIZATION_CHOICES, QUANTIZATION_HELP
from api.commands.models import MODEL_HELP
from api.commands.remote_args import add_remote_args, open_remote
from pipeline.defaults import DEFAULT_KB_DIR, DEFAULT_MAX_TOKENS, DEFAULT_RULES_DIR

if TYPE_CHECKING:
    from pipeline.evaluation.dataset import SystemItem
    from symbolic import RuleBase


def _compare_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="verirag eval compare", description="Compare two evaluation runs metric by "
                                "metric (B - A), e.g. a rule or prompt change against the run before it.")
    p.add_argument("run_a", metavar="RUN_A", help="a run folder (from verirag eval --out) or its summary.json")
    p.add_argument("run_b", metavar="RUN_B", help="the run to compare against RUN_A")
    return p


class _Help(argparse._HelpAction):
    """`verirag eval compare --help` describes compare, not eval (compare is eval's first positional)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        if getattr(namespace, "dataset", None) == "compare":
            _compare_parser().print_help()
            parser.exit()
        super().__call__(parser, namespace, values, option_string)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "eval", help="offline evaluation: hallucination rate of the pipeline, or the verifier as a detector",
        description="verirag eval DATASET.jsonl [options]  |  verirag eval compare RUN_A RUN_B "
                    "(verirag eval compare --help)", add_help=False)
    p.add_argument("-h", "--help", action=_Help, help="show this help message and exit")
    p.add_argument("dataset", help="a JSON Lines dataset, or the word 'compare'")
    p.add_argument("more", nargs="*", help=argparse.SUPPRESS)
    p.add_argument("--kb", default=str(DEFAULT_KB_DIR), help="knowledge-base folder (default: the embedded kb/)")
    p.add_argument("--rules", default=str(DEFAULT_RULES_DIR), help="rule folder (default: the embedded rules/)")
    p.add_argument("--index", default=None, help="index folder (default: next to the KB)")
    p.add_argument("--model", default=None, help=MODEL_HELP)
    p.add_argument("--quantization", choices=QUANTIZATION_CHOICES, default="auto", help=QUANTIZATION_HELP)
    p.add_argument("--out", default=None, help="output folder (default: runs/<dataset name>-<mode>)")
    p.add_argument("--limit", type=int, default=None, help="evaluate N items only")
    p.add_argument("--seed", type=int, default=None, help="with --limit: a seeded random subset; also the sampling seed")
    p.add_argument("--mode", choices=("auto", "system", "detector", "context", "extraction"), default="auto",
                   help="dataset kind (auto: decided by the keys of the first line); context: a system dataset "
                        "measured without generation (do the gold facts reach the retrieved passages and the prompt?); "
                        "extraction: a labelled extraction set (eval/extraction/), relation claims read from its "
                        "answers vs the labelled facts, per extractor and language")
    p.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS,
                   help=f"tokens per attempt (default {DEFAULT_MAX_TOKENS})")
    p.add_argument("--no-progress", action="store_true")
    add_remote_args(p)
    p.set_defaults(func=handler)


def _compare(paths: list[str]) -> int:
    from pipeline.evaluation.compare import compare, format_table, load_summary

    if len(paths) != 2 or any(p.startswith("-") for p in paths):
        parser = _compare_parser()
        print(f"{parser.format_usage().rstrip()}\n{parser.prog}: error: give two runs (run folders or "
              "summary.json files)", file=sys.stderr)
        return 2
    a, b = load_summary(paths[0]), load_summary(paths[1])
    print(format_table(compare(a, b), Path(paths[0]).name or paths[0], Path(paths[1]).name or paths[1]))
    return 0


def handler(args: argparse.Namespace) -> int:
    from neural.errors import EngineError
    from pipeline.evaluation.dataset import DatasetError
    from pipeline.evaluation.runner import RunError

    try:
        if args.dataset == "compare":
            return _compare(args.more)
        if args.more:
            print(f"error: unexpected arguments {args.more}", file=sys.stderr)
            return 2
        return _run(args)
    except (DatasetError, RunError, ValueError) as exc:  # ValueError: a malformed --model openai+ URL among them
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except EngineError as exc:  # the model did not load, or its remote server is unavailable
        print(f"error: {exc}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    from pipeline.evaluation.dataset import load_dataset
    from pipeline.evaluation.detector import DetectorConfig
    from pipeline.evaluation.runner import RunSpec, run_eval

    if args.mode == "extraction":
        return _run_extraction(args)
    context = args.mode == "context"
    ds = load_dataset(args.dataset, "system" if context else args.mode)
    kind = "context" if context else ds.kind
    out = Path(args.out or f"runs/{Path(args.dataset).parent.name}-{Path(args.dataset).stem}-{kind}")
    if ds.kind == "detector":
        from pipeline.evaluation.processors import DetectorProcessor
        from pipeline.evaluation.verifier_bridge import make_verify

        cfg = DetectorConfig.for_language(ds.items[0].language)
        verify, how = make_verify()
        config = {"detector": cfg.__dict__, "claim_check": how}
        process: Callable[[Any], dict] = DetectorProcessor(cfg, verify)
    else:
        from pipeline.evaluation.processors import SystemProcessor, read_support
        from pipeline.evaluation.system import build_system

        _load_rules(args)
        support = read_support(args.kb, cast("list[SystemItem]", ds.items))  # a system (or context) dataset
        setup = build_system(args.kb, args.rules, args.model, index_dir=args.index, seed=args.seed,
                             max_tokens=args.max_tokens, generate=not context, quantization=args.quantization,
                             generator=open_remote(args))
        config = setup.describe
        if context:
            from pipeline.evaluation.context_recall import ContextProcessor
            process = ContextProcessor(setup.prepare, support)
        else:
            process = SystemProcessor(setup.ask, support, setup.read_facts)
    summary = run_eval(RunSpec(ds, out, args.limit, args.seed, config, progress=not args.no_progress,
                               mode=kind if context else None), process)
    print(json.dumps(_brief(summary), indent=2, ensure_ascii=False))
    print(f"wrote {out}/results.jsonl, summary.json, report.html")
    return 0


def _run_extraction(args: argparse.Namespace) -> int:
    """Labelled answers read by the real pipeline's extractors (patterns, focus, the model)."""
    from pipeline.evaluation.extraction_eval import (ExtractionProcessor, claims_reader, load_extraction_set,
                                                     unscored_relations)
    from pipeline.evaluation.runner import RunError, RunSpec, run_eval
    from pipeline.evaluation.system import build_system

    rb = _load_rules(args)
    ds = load_extraction_set(args.dataset, rb)   # the labels are checked against these rules first
    out = Path(args.out or f"runs/{Path(args.dataset).parent.name}-{Path(args.dataset).stem}-extraction")
    setup = build_system(args.kb, args.rules, args.model, index_dir=args.index, seed=args.seed,
                         max_tokens=args.max_tokens, quantization=args.quantization, generator=open_remote(args))
    if setup.read_claims is None:
        raise RunError("this pipeline's Answerer has no read_claims(question, answer): nothing to measure")
    process: Callable[[Any], dict] = ExtractionProcessor(claims_reader(setup.read_claims), rb,
                                                         frozenset(unscored_relations(rb)))
    summary = run_eval(RunSpec(ds, out, args.limit, args.seed, setup.describe, progress=not args.no_progress,
                               mode="extraction"), process)
    print(json.dumps(_brief(summary), indent=2, ensure_ascii=False))
    print(f"wrote {out}/results.jsonl, summary.json, report.html")
    return 0


def _load_rules(args: argparse.Namespace) -> RuleBase:
    """Check --kb and --rules before a model loads for seconds: a missing folder, or rules that do not load
    (an empty folder, a syntax error), is a one-line error naming the flag, not a traceback."""
    from pipeline.evaluation.runner import RunError
    from symbolic import RuleError, load_rulebase

    for name, path in (("--kb", args.kb), ("--rules", args.rules)):
        if not Path(path).is_dir():
            raise RunError(f"{name} {path}: no such folder")
    try:
        return load_rulebase(args.rules)
    except RuleError as exc:
        raise RunError(f"--rules {args.rules}: the rules do not load: {exc.render()}") from None


def _brief(s: dict) -> dict:
    if s["kind"] == "extraction":
        return {"n": s["n"], "labelled_facts": s["labelled_facts"], "precision": s["precision"],
                "recall": s["recall"], "f1": s["f1"], "answers_with_claim_share": s["answers_with_claim_share"],
                "errors": s["errors"],
                "by_extractor": {k: {x: v[x] for x in ("claims", "precision", "recall")}
                                 for k, v in s["by_extractor"].items()},
                "by_language": {k: {x: v[x] for x in ("precision", "recall")} for k, v in s["by_language"].items()}}
    if s["kind"] == "context":
        return {k: s[k] for k in ("n", "retrieval_recall", "context_recall", "support_recall",
                                  "items_complete_in_prompt", "mean_prompt_tokens")}
    if s["kind"] == "detector":
        return {k: s[k] for k in ("n", "precision", "recall", "f1", "balanced_accuracy", "confusion")}
    return {"n": s["n"], "headline": s["headline"], "status": s["status"]}

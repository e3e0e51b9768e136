"""A system eval whose model calls are recorded once and replayed after: the regression check of a change
that must not change behaviour (a restructuring), in minutes instead of the hour a 0.5B run takes.

Usage:
  .venv/bin/python bench/replay_eval.py DATASET --kb KB --rules RULES [--model M] --tape TAPE.jsonl --out RUN
  .venv/bin/python bench/replay_eval.py --compare RUN_A RUN_B

With a TAPE that does not hold a call yet, the real engine is loaded (once) and the call is generated and
appended, so the first run records and later runs replay. Every call's key is the chat messages and the
sampling options (max tokens, temperature, seed, repetition penalty, stops): a change that alters a prompt, a
retry's feedback or the number of attempts misses the tape, and the run prints how many calls missed.
`--compare` prints every item whose scored record differs between two runs (timings left out) and exits 1
if any does. The answer loop is deterministic given the model's text, so equal records mean equal behaviour.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def call_key(messages: Any, sampling: Any) -> str:
    """The call's identity: what the engine is asked and how it samples."""
    payload = {"messages": messages, "max_tokens": sampling.max_tokens, "temperature": sampling.temperature,
               "seed": sampling.seed, "repetition_penalty": sampling.repetition_penalty,
               "stop": list(sampling.stop or [])}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class TapeGenerator:
    """A generator that answers from a tape of recorded calls, generating (and recording) only what it lacks.
    Attribute reads other than chat/stream pass to a tokenizer-only model, or to the real engine once loaded."""

    def __init__(self, tape: Path, model: str | None, quantization: str | None):
        self._tape_path, self._model, self._quantization = tape, model, quantization
        self._tape: dict[str, dict] = {}
        if tape.exists():
            for line in tape.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    rec = json.loads(line)
                    self._tape[rec["key"]] = rec
        self._engine: Any = None
        from pipeline.evaluation.system import TokenizerOnlyModel
        self._shell: Any = TokenizerOnlyModel(model)
        self.hits = self.misses = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine if self._engine is not None else self._shell, name)

    def _real(self) -> Any:
        if self._engine is None:
            from neural import Engine, EngineConfig
            from neural.spec_decode.config import SpeculativeConfig
            from pipeline.defaults import DEFAULT_SPECULATIVE_TOKENS
            self._engine = Engine(EngineConfig(model=self._model, quantization=self._quantization,
                                               speculative=SpeculativeConfig(
                                                   num_speculative_tokens=DEFAULT_SPECULATIVE_TOKENS)))
        return self._engine

    def chat(self, messages: Any, sampling: Any) -> Any:
        key = call_key(messages, sampling)
        rec = self._tape.get(key)
        if rec is None:
            self.misses += 1
            out = self._real().chat(messages, sampling)
            rec = {"key": key, "text": out.text, "token_ids": list(out.token_ids),
                   "prompt_token_ids": list(out.prompt_token_ids), "finish_reason": out.finish_reason}
            self._tape[key] = rec
            with self._tape_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        else:
            self.hits += 1
        metrics = SimpleNamespace(ttft_s=0.0, e2e_s=0.0, prompt_tokens=len(rec["prompt_token_ids"]),
                                  generated_tokens=len(rec["token_ids"]))
        return SimpleNamespace(text=rec["text"], token_ids=rec["token_ids"], metrics=metrics,
                               prompt_token_ids=rec["prompt_token_ids"], finish_reason=rec["finish_reason"])

    def stream(self, messages: Any, sampling: Any) -> Any:
        out = self.chat(messages, sampling)
        out.delta_text = out.text
        yield out


_TIMING = ("_ms", "latency", "timings", "ttft", "seconds")


def _scored(rec: Any) -> Any:
    """A record with every timing field left out (they differ run to run)."""
    if isinstance(rec, dict):
        return {k: _scored(v) for k, v in rec.items() if not any(t in k for t in _TIMING)}
    if isinstance(rec, list):
        return [_scored(v) for v in rec]
    return rec


def compare(run_a: Path, run_b: Path) -> int:
    def load(run: Path) -> dict[str, dict]:
        lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines()
        return {r["id"]: _scored(r) for r in map(json.loads, filter(str.strip, lines))}
    a, b = load(run_a), load(run_b)
    differ = sorted(i for i in a.keys() | b.keys() if a.get(i) != b.get(i))
    for item in differ:
        ra, rb = a.get(item) or {}, b.get(item) or {}
        keys = sorted(k for k in ra.keys() | rb.keys() if ra.get(k) != rb.get(k))
        print(f"{item}: differs in {', '.join(keys)}")
        for k in keys[:3]:
            print(f"  A {k}: {json.dumps(ra.get(k), ensure_ascii=False)[:400]}")
            print(f"  B {k}: {json.dumps(rb.get(k), ensure_ascii=False)[:400]}")
    print(f"{len(differ)} of {len(a.keys() | b.keys())} items differ")
    return 1 if differ else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", nargs="?")
    ap.add_argument("--kb")
    ap.add_argument("--rules")
    ap.add_argument("--model", default=None)
    ap.add_argument("--quantization", default="auto")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--index", default=None, help="index folder (default: next to the KB)")
    ap.add_argument("--tape", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("RUN_A", "RUN_B"))
    args = ap.parse_args()
    if args.compare:
        return compare(*args.compare)
    if not (args.dataset and args.kb and args.rules and args.tape and args.out):
        ap.error("give DATASET, --kb, --rules, --tape and --out (or --compare RUN_A RUN_B)")
    from pipeline.evaluation.dataset import load_dataset
    from pipeline.evaluation.processors import SystemProcessor, read_support
    from pipeline.evaluation.runner import RunSpec, run_eval
    from pipeline.evaluation.system import build_system

    tape = TapeGenerator(args.tape, args.model, args.quantization)
    ds = load_dataset(args.dataset, "system")
    support = read_support(args.kb, ds.items)  # type: ignore[arg-type]
    setup = build_system(args.kb, args.rules, args.model, index_dir=args.index, seed=args.seed, generator=tape)
    summary = run_eval(RunSpec(ds, args.out, None, args.seed, setup.describe, progress=False),
                       SystemProcessor(setup.ask, support, setup.read_facts))
    print(json.dumps({"n": summary["n"], "headline": summary["headline"]}, ensure_ascii=False))
    print(f"tape: {tape.hits} calls replayed, {tape.misses} generated")
    return 0


if __name__ == "__main__":
    sys.exit(main())

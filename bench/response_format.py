"""Constrained JSON decoding cost: decode tokens/s with vs without the JSON-schema logits processor (the one
`response_format` uses) on a 5-field schema, single stream, default model; optionally llguidance's matcher
behind the same engine as a third arm, for comparison.

Arms run interleaved per prompt in one process (load on a shared machine hits all alike); decode tokens/s
excludes the prefill. Every constrained reply is validated with jsonschema-rs. Speculation is off for all arms
(a request with a logits processor never speculates). The first constrained request also pays the decoded
vocabulary (once per tokenizer): reported apart as `vocabulary_s`.

    .venv/bin/python bench/response_format.py [--max-tokens 96] [--threads 2] [--temperature 0] [--llguidance]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import jsonschema_rs  # noqa: E402
import torch  # noqa: E402

from neural import Engine, EngineConfig, SamplingParams  # noqa: E402
from neural.constrained.processor import JsonSchemaLogitsProcessor, vocabulary_for  # noqa: E402

SCHEMA = {"type": "object", "additionalProperties": False, "required": ["name", "age", "city", "member", "score"],
          "properties": {"name": {"type": "string", "maxLength": 40}, "age": {"type": "integer"},
                         "city": {"type": "string", "maxLength": 40}, "member": {"type": "boolean"},
                         "score": {"type": "number"}}}
PROMPTS = ["Describe a person as JSON with name, age, city, member and score.",
           "Alice is 31, lives in Lyon, is a club member and scored 8.5. Give her record as JSON.",
           "Invent a football player and give name, age, city, member and score as JSON.",
           "Return a JSON record for Bob, 45, from Oslo, not a member, score 72."]


class Timed:
    """Wraps a logits processor and adds up the time spent in it (the constraint's own cost)."""

    def __init__(self, proc: Callable[[list[int], torch.Tensor], torch.Tensor]) -> None:
        self.proc, self.seconds = proc, 0.0

    def __call__(self, ids: list[int], logits: torch.Tensor) -> torch.Tensor:
        t0 = time.perf_counter()
        out = self.proc(ids, logits)
        self.seconds += time.perf_counter() - t0
        return out


class LlguidanceProcessor:
    """llguidance's LLMatcher as a SamplingParams logits processor (bench only: not a dependency)."""

    def __init__(self, lltok: Any, grammar: str, n_vocab: int) -> None:
        import llguidance
        from llguidance.torch import allocate_token_bitmask

        self.matcher = llguidance.LLMatcher(lltok, grammar)
        self.mask = allocate_token_bitmask(1, n_vocab)
        self.fed = 0

    def __call__(self, ids: list[int], logits: torch.Tensor) -> torch.Tensor:
        from llguidance.torch import fill_next_token_bitmask

        for tid in ids[self.fed:]:
            self.matcher.consume_token(tid)
        self.fed = len(ids)
        fill_next_token_bitmask(self.matcher, self.mask)
        bits = (self.mask[0].unsqueeze(1) >> torch.arange(32, dtype=torch.int32)) & 1
        allowed = bits.flatten()[: logits.shape[-1]].bool()
        if allowed.shape[0] < logits.shape[-1]:
            allowed = torch.cat([allowed, torch.zeros(logits.shape[-1] - allowed.shape[0], dtype=torch.bool)])
        return logits.masked_fill(~allowed, float("-inf"))


def run(engine: Engine, prompt: list[int], max_tokens: int, temperature: float,
        proc: Timed | None) -> tuple[str, list[int], float, float]:
    # the plain arm writes exactly as many tokens as the constrained reply (ignore_eos): same context lengths
    sp = SamplingParams(max_tokens=max_tokens, temperature=temperature, seed=0, speculative=False,
                        ignore_eos=proc is None, logits_processors=[proc] if proc else [])
    out = engine.generate(prompt, sp)[0]
    m = out.metrics
    return out.text, list(out.token_ids), m.e2e_s - m.ttft_s, proc.seconds if proc else 0.0


def processor_only(make: Callable[[], Timed], replies: list[list[int]], n_vocab: int) -> float:
    """ms per token of a fresh processor replaying recorded replies (no model: the constraint alone)."""
    total, tokens = 0.0, 0
    for ids in replies:
        proc = make()
        for k in range(len(ids)):
            proc(ids[:k], torch.zeros(n_vocab))
        total, tokens = total + proc.seconds, tokens + len(ids)
    return 1000 * total / max(tokens, 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-tokens", type=int, default=96)
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--temperature", type=float, default=0.0)
    ap.add_argument("--rounds", type=int, default=2, help="passes over the prompts")
    ap.add_argument("--llguidance", action="store_true", help="add llguidance's matcher as a third arm")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    engine = Engine(EngineConfig())
    tok = engine.tokenizer
    t0 = time.perf_counter()
    vocab = vocabulary_for(tok)
    vocabulary_s = time.perf_counter() - t0
    arms: dict[str, Callable[[], Timed | None]] = {
        "plain": lambda: None,
        "verirag": lambda: Timed(JsonSchemaLogitsProcessor(SCHEMA, vocab=vocab, max_tokens=args.max_tokens - 1))}
    if args.llguidance:
        import llguidance

        t0 = time.perf_counter()
        lltok = llguidance.LLTokenizer(tok.backend.to_str(), eos_token=sorted(tok.eos_token_ids)[0])
        grammar = llguidance.LLMatcher.grammar_from_json_schema(SCHEMA)
        print(f"llguidance {llguidance.__version__}: tokenizer {time.perf_counter() - t0:.2f} s", file=sys.stderr)
        arms["llguidance"] = lambda: Timed(LlguidanceProcessor(lltok, grammar, len(vocab.strings)))
    valid = jsonschema_rs.validator_for(SCHEMA)
    totals = {name: {"tokens": 0, "decode_s": 0.0, "proc_s": 0.0, "valid": 0, "runs": 0} for name in arms}
    samples: dict[str, str] = {}
    prompts = [tok.encode_chat([{"role": "user", "content": p}]) for p in PROMPTS]

    def record(name: str, text: str, ids: list[int], decode_s: float, proc_s: float) -> None:
        t = totals[name]
        t["tokens"] += len(ids) - 1
        t["decode_s"] += decode_s
        t["proc_s"] += proc_s
        t["runs"] += 1
        if name != "plain":
            try:
                t["valid"] += int(valid.is_valid(json.loads(text)))
            except ValueError:
                pass
        samples.setdefault(name, text)

    replies: list[list[int]] = []
    for r in range(args.rounds):
        for i, prompt in enumerate(prompts):
            text, ids, decode_s, proc_s = run(engine, prompt, args.max_tokens, args.temperature, arms["verirag"]())
            replies.append([t for t in ids if t not in tok.eos_token_ids])
            others = [n for n in arms if n != "verirag"]
            for name in others if (r + i) % 2 == 0 else others[::-1]:
                budget = len(ids) if name == "plain" else args.max_tokens
                got = run(engine, prompt, budget, args.temperature, arms[name]())
                record(name, *got)
            record("verirag", text, ids, decode_s, proc_s)
    report: dict[str, Any] = {"threads": args.threads, "max_tokens": args.max_tokens, "vocabulary_s": round(vocabulary_s, 2)}
    for name, t in totals.items():
        report[name] = {"decode_tok_s": round(t["tokens"] / t["decode_s"], 2), "tokens": t["tokens"],
                        "processor_ms_per_token": round(1000 * t["proc_s"] / max(t["tokens"], 1), 2),
                        "valid_json": "-" if name == "plain" else f"{t['valid']}/{t['runs']}",
                        "sample": samples[name][:120]}
        if name != "plain":
            report[name]["replay_ms_per_token"] = round(processor_only(arms[name], replies, len(vocab.strings)), 2)
    for name in arms:
        if name != "plain":
            report[f"{name}_vs_plain"] = round(report[name]["decode_tok_s"] / report["plain"]["decode_tok_s"], 3)
    print(json.dumps(report, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

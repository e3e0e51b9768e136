"""Reads llama.cpp's benchmark output: llama-bench's ``-o json`` array and llama-batched-bench's result rows.

llama-bench prints one JSON object per test (a prompt test has n_gen 0, a generation test n_prompt 0) with
``avg_ts`` in tokens/s. llama-batched-bench prints one row per (PP, TG, B): JSONL with ``--output-format
jsonl``, a Markdown table otherwise; both are read, the JSONL lines first. Bad text raises LlamaOutputError
with what was expected, never a KeyError from deep inside.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass


class LlamaOutputError(ValueError):
    """The tool's output does not hold the result asked for."""


@dataclass(frozen=True)
class BenchResult:
    """llama-bench: prefill (``pp``) and one-stream decode (``tg``) tokens/s, and what it ran with."""
    prefill_tps: float
    decode_tps: float
    n_prompt: int
    n_gen: int
    n_threads: int
    model_type: str


@dataclass(frozen=True)
class BatchedRow:
    """One llama-batched-bench row: B streams, each a PP-token prompt then TG generated tokens."""
    pp: int
    tg: int
    pl: int
    t_pp: float  # s, all prompts
    t_tg: float  # s, all generation steps
    speed_tg: float  # generated tok/s during generation (pl*tg/t_tg)

    @property
    def generated_tps(self) -> float:
        """Generated tokens over the whole job, prompts included: what a user of B concurrent requests sees."""
        return self.pl * self.tg / (self.t_pp + self.t_tg)


def _json_array(text: str) -> list:
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end < start:
        raise LlamaOutputError("llama-bench output has no JSON array (was it run with -o json?): "
                               + _excerpt(text))
    try:
        data = json.loads(text[start:end + 1])
    except json.JSONDecodeError as e:
        raise LlamaOutputError(f"llama-bench JSON does not parse at line {e.lineno} col {e.colno}: {e.msg}") from e
    if not isinstance(data, list) or not all(isinstance(t, dict) for t in data):
        raise LlamaOutputError("llama-bench JSON is not a list of test objects")
    return data


def parse_llama_bench(text: str) -> BenchResult:
    """The prompt test and the generation test of one ``llama-bench -p P -n N -o json`` run."""
    tests = _json_array(text)
    try:
        pp = [t for t in tests if t["n_prompt"] > 0 and t["n_gen"] == 0]
        tg = [t for t in tests if t["n_gen"] > 0 and t["n_prompt"] == 0]
        if len(pp) != 1 or len(tg) != 1:
            raise LlamaOutputError(f"expected one prompt test and one generation test, got {len(pp)} and "
                                   f"{len(tg)} among {len(tests)} tests")
        return BenchResult(prefill_tps=float(pp[0]["avg_ts"]), decode_tps=float(tg[0]["avg_ts"]),
                           n_prompt=int(pp[0]["n_prompt"]), n_gen=int(tg[0]["n_gen"]),
                           n_threads=int(pp[0]["n_threads"]), model_type=str(pp[0].get("model_type", "?")))
    except (KeyError, TypeError) as e:
        raise LlamaOutputError(f"llama-bench test object lacks field {e}") from e


_MD_ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|" + r"\s*([\d.]+)\s*\|" * 6 + r"\s*$")


def parse_batched_bench(text: str) -> list[BatchedRow]:
    """Every result row, from JSONL lines when present, else from the Markdown table."""
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{") and '"speed_tg"' in line:
            try:
                r = json.loads(line)
                rows.append(BatchedRow(int(r["pp"]), int(r["tg"]), int(r["pl"]), float(r["t_pp"]),
                                       float(r["t_tg"]), float(r["speed_tg"])))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
                raise LlamaOutputError(f"llama-batched-bench JSONL line does not parse ({e}): {line[:120]}") from e
    if rows:
        return rows
    for line in text.splitlines():
        if m := _MD_ROW.match(line.strip()):
            pp, tg, pl, _n_kv, t_pp, _s_pp, t_tg, s_tg, _t, _s = m.groups()
            rows.append(BatchedRow(int(pp), int(tg), int(pl), float(t_pp), float(t_tg), float(s_tg)))
    if not rows:
        raise LlamaOutputError("llama-batched-bench output has no result rows (JSONL or table): " + _excerpt(text))
    return rows


def batched_row(text: str, pl: int) -> BatchedRow:
    """The row with ``pl`` streams."""
    found = [r for r in parse_batched_bench(text) if r.pl == pl]
    if not found:
        raise LlamaOutputError(f"llama-batched-bench output has no row with {pl} streams")
    return found[0]


def _excerpt(text: str) -> str:
    tail = [line for line in text.strip().splitlines() if line.strip()][-3:]
    return " | ".join(tail)[:300] if tail else "(empty)"

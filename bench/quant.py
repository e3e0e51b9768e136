"""Packed GGUF weights vs the dense (dequantized fp32) default model: weight memory, greedy agreement, CPU speed.

    python bench/quant.py [--max-tokens 32]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

PROMPTS = ["What is the capital of France?", "Write one sentence about rain.",
           "List three colours.", "Explain what a cache is in one sentence."]


def weight_bytes(model: torch.nn.Module) -> int:
    seen, total = set(), 0
    for t in list(model.parameters()) + list(model.buffers()):
        if t.data_ptr() not in seen and t.numel():
            seen.add(t.data_ptr())
            total += t.numel() * t.element_size()
    return total


def run(engine, sp) -> tuple[list[list[int]], float]:
    t0 = time.perf_counter()
    outs = engine.generate(PROMPTS, sp)
    dt = time.perf_counter() - t0
    return [o.token_ids for o in outs], sum(len(o.token_ids) for o in outs) / dt


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-tokens", type=int, default=32)
    args = ap.parse_args()
    from neural import Engine, EngineConfig, SamplingParams
    from neural.quant import quantize_gguf_model

    torch.set_num_threads(1)
    engine = Engine(EngineConfig(device="cpu", num_threads=1))
    model = engine.runner.model
    sp = SamplingParams(max_tokens=args.max_tokens, temperature=0.0, ignore_eos=True)
    dense_bytes = weight_bytes(model)
    dense_ids, dense_tps = run(engine, sp)
    cfg = model.config
    report = quantize_gguf_model(model, engine.config.model or _default(), cfg.num_attention_heads,
                                 cfg.num_key_value_heads)
    packed_bytes = weight_bytes(model)
    quant_ids, quant_tps = run(engine, sp)
    same = sum(a == b for a, b in zip(dense_ids, quant_ids))
    tokens = sum(sum(x == y for x, y in zip(a, b)) for a, b in zip(dense_ids, quant_ids))
    print(f"replaced {len(report.replaced)} modules; weight memory {dense_bytes / 1e6:.1f} MB dense fp32 -> "
          f"{packed_bytes / 1e6:.1f} MB packed = {packed_bytes / dense_bytes:.1%} of fp32")
    print(f"greedy agreement: {same}/{len(PROMPTS)} sequences identical, {tokens}/{sum(map(len, dense_ids))} tokens")
    print(f"CPU decode, 1 thread, batch {len(PROMPTS)}: dense {dense_tps:.1f} tok/s, packed {quant_tps:.1f} tok/s "
          f"= {quant_tps / dense_tps:.2f}x")
    return 0


def _default() -> str:
    from neural.default_model import default_model_path

    return str(default_model_path())


if __name__ == "__main__":
    raise SystemExit(main())

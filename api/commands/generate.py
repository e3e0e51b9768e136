"""`verirag generate "prompt"`: run the decode engine alone (no retrieval, no rules) on one prompt."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from api.commands.models import MODEL_HELP
from api.commands.remote_args import add_remote_args, remote_config

QUANTIZATION_CHOICES = ["auto", "none", "int8", "int8-fast", "gguf"]
QUANTIZATION_HELP = (
    "int8: CPU float32 projections as int8 weights through PyTorch's fbgemm kernels, activations in two passes "
    "(~14 bits: perplexity within 1 %% of float32; per layer where measured faster; about 1/4 of the memory); "
    "int8-fast: one pass, 8-bit activations against 7-bit weights, faster for batches and long prompts, "
    "+1-3 %% perplexity; gguf: keep a .gguf "
    "model's Q8_0/Q4_0/Q4_1 weights packed, dequantized per matmul; none: everything dense in --dtype; auto "
    "(default): the model's registry default on CPU (verirag models list)")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("generate", help="generate text with the decode engine (default: SmolLM2-135M)")
    p.add_argument("prompt", help="the prompt (a user message unless --raw)")
    p.add_argument("--model", metavar="NAME|PATH", default=None, help=MODEL_HELP)
    p.add_argument("--max-tokens", type=int, default=256, help="most tokens to generate (default 256)")
    p.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (default)")
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--top-k", type=int, default=0)
    p.add_argument("--seed", type=int, default=None, help="seed for reproducible sampling")
    p.add_argument("--stop", action="append", default=[], help="stop string (repeatable)")
    p.add_argument("--stream", action="store_true", help="print tokens as they are generated")
    p.add_argument("--chat", dest="chat", action="store_true", default=True,
                   help="wrap the prompt in the model's chat template (default)")
    p.add_argument("--raw", dest="chat", action="store_false", help="feed the prompt as-is, no chat template")
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    p.add_argument("--quantization", choices=QUANTIZATION_CHOICES, default="auto", help=QUANTIZATION_HELP)
    p.add_argument("--stats", action="store_true", help="print token counts and timings to stderr")
    add_remote_args(p)
    p.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    from neural import Engine, EngineConfig, EngineError, SamplingParams

    try:
        sampling = SamplingParams(max_tokens=args.max_tokens, temperature=args.temperature, top_p=args.top_p,
                                  top_k=args.top_k, seed=args.seed, stop=args.stop)
        if not args.prompt.strip():
            raise EngineError("prompt is empty")
        remote = remote_config(args)
        if remote is not None:
            if not args.chat:
                raise EngineError("--raw feeds text past the chat template, which a remote model's server "
                                  "applies itself: leave --raw out")
            from neural.remote import RemoteGenerator
            engine: Any = RemoteGenerator.connect(remote)   # chat and stream as the Engine's (no raw generate)
        else:
            engine = Engine(EngineConfig(model=args.model, dtype=args.dtype, num_threads=args.threads,
                                         quantization=args.quantization))
        chat = [{"role": "user", "content": args.prompt}]
        if args.stream:
            final = None
            for out in engine.stream(chat if args.chat else args.prompt, sampling):
                sys.stdout.write(out.delta_text)
                sys.stdout.flush()
                final = out
            sys.stdout.write("\n")
        else:
            final = engine.chat(chat, sampling) if args.chat else engine.generate(args.prompt, sampling)[0]
            print(final.text)
    except (EngineError, ValueError) as exc:
        print(f"verirag generate: error: {exc}", file=sys.stderr)
        return 1
    if args.stats and final is not None:
        m = final.metrics
        ttft = "n/a" if m.ttft_s is None else f"{m.ttft_s:.3f}s"  # a remote reply that came whole has none
        print(f"[{m.prompt_tokens} prompt + {m.generated_tokens} generated tokens, finish={final.finish_reason}, "
              f"ttft={ttft}, tpot={(m.tpot_s or 0) * 1000:.1f}ms, total={m.e2e_s:.2f}s]", file=sys.stderr)
    return 0

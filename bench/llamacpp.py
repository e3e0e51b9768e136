"""llama.cpp vs verirag on the same GGUF files and thread count: prefill, one-stream decode and 16-stream tok/s.

    .venv/bin/python bench/llamacpp.py [--quick] [--threads 1] [--repeat 3] [--jobs 1]
                                       [--models smollm2-135m,qwen2.5-coder-0.5b] [--cache-dir bench/.llamacpp]
                                       [--quantization auto|none|int8|int8-fast]

llama.cpp's llama-bench and llama-batched-bench are built once from the llama-cpp-python sdist (see
bench/llamacpp_build.py; skipped with a message where no compiler or cmake is found). Both sides get the same
work, in random token ids as llama.cpp's tools use: a P-token prompt (prefill tok/s = P / time to the first
token), N tokens decoded after a one-token prompt (one stream), and 16 requests of a PP-token prompt each
generating TG tokens at once (generated tokens / wall time of the whole job, prompts included; llama.cpp's
row gives the same as B*TG / (T_PP + T_TG)). verirag runs the models as a user gets them ("auto"
quantization: each registry entry's CPU default, see `verirag models list`). The sides alternate within each
round, order flipped every round, and each keeps its best of ``--repeat`` rounds (the machine is shared; noise
only slows a run down); every run is printed with the load average. The last line reads
``verirag/llama.cpp: <model> prefill X.XX×, decode Y.YY×, 16 streams Z.ZZ×; ...``.
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
# the project root first: bench/pipeline.py and bench/retrieval.py must not hide the packages of those names
sys.path.insert(0, str(BENCH.parent))
if str(BENCH) not in sys.path:
    sys.path.append(str(BENCH))

from llamacpp_build import CACHE_DIR, Binaries, BuildSkipped, ensure_built  # noqa: E402
from llamacpp_parse import LlamaOutputError, batched_row, parse_llama_bench  # noqa: E402

DEFAULT_MODELS = ("smollm2-135m", "qwen2.5-coder-0.5b")
KINDS = ("prefill", "decode", "streams")
TARGETS = {"prefill": 0.5, "decode": 0.6, "streams": 1.0}  # issue 18: verirag/llama.cpp at least this


@dataclass(frozen=True)
class Sizes:
    prompt: int  # prefill test: prompt tokens
    gen: int  # one-stream decode test: generated tokens
    stream_prompt: int  # each of the concurrent requests: prompt tokens
    stream_gen: int  # ... and generated tokens
    streams: int


FULL = Sizes(prompt=256, gen=64, stream_prompt=128, stream_gen=64, streams=16)
QUICK = Sizes(prompt=128, gen=32, stream_prompt=64, stream_gen=32, streams=16)


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def run_tool(cmd: list[str], name: str) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-8:])
        raise LlamaOutputError(f"{name} exited with {done.returncode}: {' '.join(cmd)}\n{tail}")
    return done


def llama_side(bins: Binaries, gguf: str, s: Sizes, threads: int) -> tuple[dict[str, float], str]:
    """One llama-bench run (prompt and generation tests, one repetition) and one llama-batched-bench run."""
    bench = parse_llama_bench(run_tool(
        [str(bins.bench), "-m", gguf, "-p", str(s.prompt), "-n", str(s.gen), "-t", str(threads), "-r", "1",
         "-o", "json"], "llama-bench").stdout)
    done = run_tool(
        [str(bins.batched_bench), "-m", gguf, "-c", str(s.streams * (s.stream_prompt + s.stream_gen)),
         "-npp", str(s.stream_prompt), "-ntg", str(s.stream_gen), "-npl", str(s.streams), "-t", str(threads),
         "-tb", str(threads), "--output-format", "jsonl"], "llama-batched-bench")
    row = batched_row(done.stdout + "\n" + done.stderr, s.streams)
    # llama-bench's model_type is "<arch> <size class> <file type>"; the file type is what it computes with
    weights = bench.model_type.split(" ", 2)[-1] + " (GGUF, as is)"
    return {"prefill": bench.prefill_tps, "decode": bench.decode_tps, "streams": row.generated_tps}, weights


def random_prompt(rng: random.Random, vocab: int, n: int) -> list[int]:
    # the lower half of the vocabulary: ordinary tokens, clear of the special tokens kept at its end
    return [rng.randrange(100, vocab // 2) for _ in range(n)]


def verirag_side(engine, s: Sizes, rng: random.Random) -> dict[str, float]:
    from cpu_quant import one_stream, streams
    from neural import SamplingParams

    vocab = engine.model_config.vocab_size
    engine.reset_prefix_cache()
    out = engine.generate(random_prompt(rng, vocab, s.prompt), SamplingParams(max_tokens=1, ignore_eos=True))[0]
    prompts = [random_prompt(rng, vocab, s.stream_prompt) for _ in range(s.streams)]
    return {"prefill": s.prompt / out.metrics.ttft_s,
            "decode": one_stream(engine, random_prompt(rng, vocab, 1), s.gen),
            "streams": streams(engine, prompts, s.stream_gen)}


def model_path(name: str) -> str:
    """A registry name (pulled when absent, as `verirag models pull` does) or a .gguf path, as a file path."""
    from cpu_quant import ensure_model
    from neural.errors import EngineError
    from neural.model_registry import resolve_model

    try:
        ensure_model(name)
        path = resolve_model(name)
    except EngineError as e:
        raise SystemExit(f"error: --models {name}: {e}") from None
    if not path.endswith(".gguf") or not Path(path).is_file():
        raise SystemExit(f"error: --models {name}: llama.cpp needs a GGUF file, got {path}")
    return path


def fmt_row(cells: list[str]) -> str:
    return f"{cells[0]:20s} {cells[1]:10s} {cells[2]:28s} " + " ".join(f"{c:>15s}" for c in cells[3:])


def report(names: list[str], best: dict, labels: dict, s: Sizes, threads: int, repeat: int) -> None:
    print(f"\nbest of {repeat}, {threads} thread(s); prefill {s.prompt} tokens, decode {s.gen} tokens, "
          f"{s.streams} streams of {s.stream_prompt}+{s.stream_gen} tokens (tok/s)")
    print(fmt_row(["model", "side", "weights", "prefill", "decode 1 stream", f"{s.streams} streams total"]))
    for name in names:
        for side in ("llama.cpp", "verirag"):
            print(fmt_row([name, side, labels[(name, side)], *(f"{best[(name, side, k)]:.1f}" for k in KINDS)]))
    for name in names:
        misses = [k for k in KINDS if best[(name, "verirag", k)] / best[(name, "llama.cpp", k)] < TARGETS[k]]
        verdict = f"below the issue-18 target in {', '.join(misses)}" if misses else "meets every issue-18 target"
        print(f"{name}: {verdict} (targets: prefill >= 0.5x, decode >= 0.6x, {s.streams} streams >= 1.0x)")
    print("verirag/llama.cpp: " + "; ".join(
        f"{name} prefill {ratio(best, name, 'prefill'):.2f}×, decode {ratio(best, name, 'decode'):.2f}×, "
        f"{s.streams} streams {ratio(best, name, 'streams'):.2f}×" for name in names))


def ratio(best: dict, name: str, kind: str) -> float:
    return best[(name, "verirag", kind)] / best[(name, "llama.cpp", kind)]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS), help="comma-separated registry names or .gguf paths")
    ap.add_argument("--threads", type=int, default=1, help="threads for both sides (default 1)")
    ap.add_argument("--repeat", type=int, default=None, help="alternating rounds, best counts (default 3, --quick 1)")
    ap.add_argument("--quick", action="store_true", help=f"fewer tokens ({QUICK}), one round: ~10 min on 2 cores")
    ap.add_argument("--jobs", type=int, default=1, help="compile jobs for the one-time llama.cpp build (default 1)")
    ap.add_argument("--cache-dir", type=Path, default=CACHE_DIR, help="where the llama.cpp build is kept")
    ap.add_argument("--quantization", choices=("auto", "none", "int8", "int8-fast"), default="auto",
                    help="verirag's weights (default auto: each model as a user gets it)")
    args = ap.parse_args(argv)
    for flag in ("threads", "jobs", "repeat"):
        if getattr(args, flag) is not None and getattr(args, flag) < 1:
            ap.error(f"--{flag} must be at least 1, got {getattr(args, flag)}")
    args.models = [m.strip() for m in args.models.split(",") if m.strip()]
    if not args.models:
        ap.error("--models names no model")
    from neural.model_registry import REGISTRY

    for m in args.models:
        if m not in REGISTRY and not (m.endswith(".gguf") and Path(m).is_file()):
            ap.error(f"--models: {m!r} is neither a registry name ({', '.join(REGISTRY)}) nor a .gguf file")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        bins = ensure_built(args.jobs, args.cache_dir)
    except BuildSkipped as why:
        print(f"skipped: {why}")
        return 0
    import torch

    from neural import Engine, EngineConfig, SamplingParams

    torch.set_num_threads(args.threads)
    s, repeat = (QUICK if args.quick else FULL), args.repeat or (1 if args.quick else 3)
    paths = {name: model_path(name) for name in args.models}
    engines, labels = {}, {}
    for name, path in paths.items():
        engines[name] = Engine(EngineConfig(model=path, num_threads=args.threads, quantization=args.quantization))
        labels[(name, "verirag")] = f"{engines[name].quantization or 'fp32'} ({args.quantization})"
        engines[name].generate([1000] * 8, SamplingParams(max_tokens=8, ignore_eos=True))  # warm-up
        print(f"verirag engine for {name} ready ({labels[(name, 'verirag')]}, {load()})", flush=True)
    rng = random.Random(0)
    best: dict[tuple[str, str, str], float] = {}
    for rnd in range(repeat):
        for name in args.models:
            for side in (("llama.cpp", "verirag") if rnd % 2 == 0 else ("verirag", "llama.cpp")):
                if side == "llama.cpp":
                    got, labels[(name, side)] = llama_side(bins, paths[name], s, args.threads)
                else:
                    got = verirag_side(engines[name], s, rng)
                for k, v in got.items():
                    best[(name, side, k)] = max(best.get((name, side, k), 0.0), v)
                print(f"round {rnd + 1} {name} {side:9s}: " + ", ".join(f"{k} {v:.1f}" for k, v in got.items())
                      + f" tok/s ({load()})", flush=True)
    report(args.models, best, labels, s, args.threads, repeat)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except LlamaOutputError as e:
        sys.exit(f"error: {e}")

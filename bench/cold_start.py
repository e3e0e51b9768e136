"""Cold start: wall time of `verirag generate "Hi" --max-tokens 1` with an empty load cache (first run) and a
filled one (every later run), per model, alternating, best of --repeat; optionally the same for another
checkout (--baseline-src, e.g. a `git worktree` of an older commit) run in the same session.

    python bench/cold_start.py [--models smollm2-135m,qwen2.5-coder-0.5b] [--repeat 3] [--baseline-src DIR]

Each run is a fresh process with its own $VERIRAG_CACHE_DIR whose models/ and verified/ link to the real
cache root's (pulled models and their sha256 stamps are not what is measured); `load/` starts empty for a
cold run and is kept for the warm one. Prints one line per run and a table of best times.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from neural.model_registry import cache_root  # noqa: E402


def run_once(src: Path, model: str, cache: Path, extra: list[str]) -> float:
    # VERIRAG_CACHE: where older checkouts kept their tokenizer cache
    env = {**os.environ, "VERIRAG_CACHE_DIR": str(cache), "VERIRAG_CACHE": str(cache), "PYTHONPATH": str(src)}
    cmd = [sys.executable, "-m", "api.cli", "generate", "Hi", "--max-tokens", "1", "--model", model, *extra]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=src, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    return elapsed


def fresh_cache(base: Path) -> Path:
    """A cache root sharing the real one's pulled models and verified stamps, with no load cache."""
    cache = Path(tempfile.mkdtemp(prefix="cold-", dir=base))
    real = cache_root()
    for sub in ("models", "verified"):
        if (real / sub).exists():
            (cache / sub).symlink_to(real / sub)
    return cache


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="smollm2-135m,qwen2.5-coder-0.5b")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline-src", type=Path, default=None, help="another checkout to time the same way")
    ap.add_argument("--extra", default="", help="more flags for generate, e.g. '--quantization int8'")
    args = ap.parse_args()
    sides = [("this", ROOT)] + ([("baseline", args.baseline_src.resolve())] if args.baseline_src else [])
    extra = args.extra.split()
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs", flush=True)
    best: dict[tuple[str, str, str], float] = {}
    with tempfile.TemporaryDirectory(prefix="verirag-cold-") as tmp:
        for rnd in range(args.repeat):
            for model in args.models.split(","):
                for side, src in sides:  # alternate sides within each round: the machine's load drifts
                    cache = fresh_cache(Path(tmp))
                    side_extra = extra if side == "this" else []
                    for kind in ("cold", "warm"):
                        t = run_once(src, model, cache, side_extra)
                        key = (side, model, kind)
                        best[key] = min(best.get(key, t), t)
                        print(f"round {rnd + 1} {side:8s} {model:20s} {kind}: {t:6.1f} s "
                              f"(load average {os.getloadavg()[0]:.2f})", flush=True)
                    shutil.rmtree(cache)
    print(f"\nbest of {args.repeat}, wall seconds of `verirag generate \"Hi\" --max-tokens 1` {args.extra}")
    print(f"{'model':20s} " + " ".join(f"{side + ' ' + kind:>14s}" for side, _ in sides for kind in ("cold", "warm")))
    for model in args.models.split(","):
        print(f"{model:20s} " + " ".join(f"{best[(side, model, kind)]:14.1f}" for side, _ in sides
                                         for kind in ("cold", "warm")))
    if args.baseline_src:
        for model in args.models.split(","):
            print(f"{model}: warm start {best[('baseline', model, 'warm')] / best[('this', model, 'warm')]:.2f}x faster "
                  f"than the baseline's second run, first run {best[('baseline', model, 'cold')] / best[('this', model, 'cold')]:.2f}x")


if __name__ == "__main__":
    main()

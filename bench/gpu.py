"""GPU benchmark of the decode path: kernel checks, decode-attention bandwidth, engine vs HF, graphs vs eager.

Run on a CUDA machine:   python bench/gpu.py            (about 2-4 minutes; exits 1 on any mismatch)
Anywhere:                python bench/gpu.py --dry-run  (prints the plan, shapes and byte counts; no GPU)
Without CUDA (and without --dry-run) it exits 2 with a message: the CPU proof is tests/test_kernels_*.py.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

# HBM peak bandwidth (bytes/s) by device-name fragment, most specific first (vendor datasheets)
PEAK_BW = [("H200", 4.8e12), ("H100 PCIe", 2.0e12), ("H100 NVL", 3.9e12), ("H100", 3.35e12), ("GH200", 4.0e12),
           ("A100-SXM4-80GB", 2.039e12), ("A100 80GB PCIe", 1.935e12), ("A100", 1.555e12), ("L40S", 0.864e12),
           ("L4", 0.3e12), ("A10", 0.6e12), ("RTX 4090", 1.008e12)]


@dataclass
class AttnShape:
    name: str
    heads: int
    kv_heads: int
    head_dim: int

    def kv_bytes(self, batch: int, ctx: int, elem: int) -> int:
        return 2 * batch * ctx * self.kv_heads * self.head_dim * elem  # K and V, each read once


SHAPES = [AttnShape("SmolLM2-135M (9/3 heads, d64)", 9, 3, 64), AttnShape("Llama-3-8B (32/8 heads, d128)", 32, 8, 128)]


def fail(msg: str) -> None:
    print(f"\nFAIL: {msg}", flush=True)
    raise SystemExit(1)


def timed(fn, iters: int) -> float:
    """Mean seconds per call (CUDA events, after a warm-up)."""
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3 / iters


def peak_bandwidth() -> tuple[float, float, str]:
    """(datasheet peak or None, measured device-to-device copy bandwidth, device name)."""
    name = torch.cuda.get_device_name()
    table = next((bw for frag, bw in PEAK_BW if frag in name), None)
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    t = timed(lambda: dst.copy_(src), 20)
    return table, 2 * src.numel() / t, name


def paged_inputs(batch: int, ctx: list[int], shape: AttnShape, dtype: torch.dtype, page: int = 16):
    n_blocks_seq = -(-max(ctx) // page)
    total = batch * n_blocks_seq + 8
    k = torch.randn(total, page, shape.kv_heads, shape.head_dim, dtype=dtype, device="cuda")
    v = torch.randn_like(k)
    table = torch.randperm(total, device="cuda")[: batch * n_blocks_seq].view(batch, n_blocks_seq).int()
    lens = torch.tensor(ctx, dtype=torch.int32, device="cuda")
    q = torch.randn(batch, shape.heads, shape.head_dim, dtype=dtype, device="cuda")
    return q, k, v, table, lens


def check(name: str, out: torch.Tensor, ref: torch.Tensor, tol: float) -> None:
    err = (out.float() - ref.float()).abs().max().item()
    status = "ok" if err <= tol else "MISMATCH"
    print(f"  {name:<44} max|err| {err:.2e} (tol {tol:.0e})  {status}", flush=True)
    if err > tol or not torch.isfinite(out.float()).all():
        fail(f"{name}: Triton kernel disagrees with its reference (max error {err:.3e} > {tol:.0e})")


def check_kernels() -> None:
    from neural.kernels.activation import silu_and_mul_ref, silu_and_mul_triton
    from neural.kernels.attention import paged_attention_ref, paged_attention_triton
    from neural.kernels.decode_attention import paged_attention_decode_ref, paged_attention_decode_triton
    from neural.kernels.kv_store import store_kvcache_ref, store_kvcache_triton
    from neural.kernels.norm import rms_norm_ref, rms_norm_triton
    from neural.kernels.quant_matmul import dequant_matmul_triton, dequantize_ref
    from neural.kernels.rotary import apply_rotary_ref, apply_rotary_triton, build_cos_sin_cache

    print("\n[1] kernels vs references (compiled, real shapes)", flush=True)
    g = torch.Generator(device="cuda").manual_seed(0)
    for dtype in (torch.float16, torch.bfloat16):
        tol = 2e-2 if dtype == torch.bfloat16 else 4e-3
        tag = str(dtype).replace("torch.", "")
        for shape in SHAPES:
            ctx = torch.randint(1, 4097, (64,), generator=g, device="cuda").tolist()
            q, k, v, table, lens = paged_inputs(64, ctx, shape, dtype)
            check(f"decode attn {tag} {shape.name[:14]} B64", paged_attention_decode_triton(q, k, v, table, lens, 0.1),
                  paged_attention_decode_ref(q, k, v, table, lens, 0.1), tol)
            n_new = [1, 300, 77, 1000]  # decode, prefix hits, a full prefill
            ctx4 = [513, 300, 2000, 1000]
            q4, k4, v4, t4, l4 = paged_inputs(4, ctx4, shape, dtype)
            qv = torch.randn(sum(n_new), shape.heads, shape.head_dim, dtype=dtype, device="cuda")
            cu = torch.tensor([0] + torch.tensor(n_new).cumsum(0).tolist(), dtype=torch.int32, device="cuda")
            check(f"varlen attn {tag} {shape.name[:14]}", paged_attention_triton(qv, k4, v4, t4, cu, l4, 0.1),
                  paged_attention_ref(qv, k4, v4, t4, cu, l4, 0.1), tol)
        kv = torch.randn(300, 16, 128, dtype=dtype, device="cuda")
        slots = torch.randperm(64 * 16, device="cuda")[:300]
        slots[::7] = -1
        caches = [torch.zeros(64, 16, 8, 128, dtype=dtype, device="cuda") for _ in range(4)]
        store_kvcache_triton(kv[:, :8], kv[:, 8:], caches[0], caches[1], slots)
        store_kvcache_ref(kv[:, :8], kv[:, 8:], caches[2], caches[3], slots)
        check(f"store_kvcache {tag}", torch.stack(caches[:2]), torch.stack(caches[2:]), 0.0)
        x, r = torch.randn(2, 512, 4096, dtype=dtype, device="cuda").unbind(0)
        w = torch.randn(4096, dtype=dtype, device="cuda")
        o, ro = rms_norm_triton(x, w, 1e-5, r)
        o_ref, ro_ref = rms_norm_ref(x, w, 1e-5, r)
        check(f"rms_norm {tag}", o, o_ref, tol * 4)
        check(f"rms_norm residual {tag}", ro, ro_ref, 0.0)
        cache = build_cos_sin_cache(128, 8192, 500000.0, device="cuda")
        qkv = torch.randn(512, 48, 128, dtype=dtype, device="cuda")
        pos = torch.randint(0, 8192, (512,), device="cuda")
        rq, rk = apply_rotary_triton(qkv[:, :32], qkv[:, 32:40], pos, cache)
        eq, ek = apply_rotary_ref(qkv[:, :32], qkv[:, 32:40], pos, cache)
        check(f"rotary {tag}", torch.cat([rq, rk], 1), torch.cat([eq, ek], 1), tol)
        xs = torch.randn(512, 2 * 14336, dtype=dtype, device="cuda")
        check(f"silu_and_mul {tag}", silu_and_mul_triton(xs), silu_and_mul_ref(xs), tol * 2)
        for qtype, width in (("Q8_0", 32), ("Q4_1", 16)):
            qs = torch.randint(-128 if qtype == "Q8_0" else 0, 128 if qtype == "Q8_0" else 256, (1536, 18, width),
                               device="cuda", dtype=torch.int32).to(torch.int8 if qtype == "Q8_0" else torch.uint8)
            d = (torch.rand(1536, 18, device="cuda") * 0.01).half()
            m = None if qtype == "Q8_0" else (-torch.rand(1536, 18, device="cuda") * 0.1).half()
            xq = torch.randn(64, 576, dtype=dtype, device="cuda")
            ref = (xq.float() @ dequantize_ref(qtype, qs, d, m).T)
            out = dequant_matmul_triton(xq, qtype, qs, d, m)
            check(f"dequant matmul {qtype} {tag}", out / ref.abs().max(), ref / ref.abs().max(), tol)


def bench_decode_bandwidth(batch: int, ctx: int, peak: float) -> float:
    from neural.kernels.decode_attention import paged_attention_decode_triton

    print(f"\n[2] decode attention bandwidth at batch {batch} x {ctx} context, fp16 (peak {peak / 1e12:.2f} TB/s)")
    best_fraction = 0.0
    for shape in SHAPES:
        q, k, v, table, lens = paged_inputs(batch, [ctx] * batch, shape, torch.float16)
        nbytes = shape.kv_bytes(batch, ctx, 2) + table.numel() * 4 + 2 * q.numel() * 2
        results = []
        for splits in (None, 1, 4, 16):
            for block_n in (32, 64, 128):
                fn = lambda: paged_attention_decode_triton(q, k, v, table, lens, 0.1, num_splits=splits,  # noqa: E731
                                                           block_n=block_n)
                t = timed(fn, 30)
                results.append((nbytes / t, splits, block_n, t))
        auto = [r for r in results if r[1] is None and r[2] == 64][0]
        best = max(results)
        print(f"  {shape.name:<32} default: {auto[3] * 1e6:8.1f} us  {auto[0] / 1e12:.2f} TB/s = "
              f"{auto[0] / peak:.0%} of peak;  best (splits={best[1]}, block_n={best[2]}): {best[0] / 1e12:.2f} TB/s "
              f"= {best[0] / peak:.0%}", flush=True)
        best_fraction = max(best_fraction, auto[0] / peak)
    return best_fraction


def bench_engine(max_tokens: int, peak: float) -> None:
    print("\n[3] engine (CUDA graphs on, the default) vs HF transformers generate(), default model, bf16, greedy",
          flush=True)
    try:
        from neural import Engine, EngineConfig, SamplingParams
        from neural.default_model import default_model_path
    except ImportError as exc:
        print(f"  skipped: neural.Engine is not importable ({exc})")
        return
    from transformers import AutoModelForCausalLM

    path = Path(default_model_path())
    engine = Engine(EngineConfig(model=str(path), dtype="bfloat16", device="cuda"))
    hf = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.bfloat16).cuda()
    tok = engine.tokenizer
    base = ["Explain what a paged KV cache is.", "Write a short poem about the sea.",
            "List three uses of a hash map.", "What is the capital of France and why is it famous?"]
    params = sum(p.numel() for p in hf.parameters()) * 2  # bf16 weight bytes read per decode step
    cfg = hf.config
    for batch in (1, 64):
        prompts = [base[i % len(base)] + f" (#{i})" for i in range(batch)]
        sp = SamplingParams(max_tokens=max_tokens, temperature=0.0, ignore_eos=True)
        engine.generate(prompts[:2], SamplingParams(max_tokens=4))  # warm-up: compiles kernels
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        outs = engine.generate(prompts, sp)
        torch.cuda.synchronize()
        t_engine = time.perf_counter() - t0
        n_engine = sum(len(o.token_ids) for o in outs)
        ids = [tok.encode(p) for p in prompts]
        width = max(map(len, ids))
        pad = tok.eos_token_ids and min(tok.eos_token_ids) or 0
        inp = torch.tensor([[pad] * (width - len(x)) + x for x in ids], device="cuda")
        mask = torch.tensor([[0] * (width - len(x)) + [1] * len(x) for x in ids], device="cuda")
        hf.generate(inp[:1], attention_mask=mask[:1], max_new_tokens=4, do_sample=False)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        gen = hf.generate(inp, attention_mask=mask, max_new_tokens=max_tokens, min_new_tokens=max_tokens,
                          do_sample=False, pad_token_id=pad)
        torch.cuda.synchronize()
        t_hf = time.perf_counter() - t0
        n_hf = (gen.shape[1] - width) * batch
        agree = sum(o.token_ids[:16] == gen[i, width:width + 16].tolist() for i, o in enumerate(outs)) / batch
        avg_ctx = width + max_tokens / 2
        kv_step = 2 * cfg.num_hidden_layers * cfg.num_key_value_heads * (cfg.hidden_size // cfg.num_attention_heads) * 2
        roofline = batch * peak / (params + batch * avg_ctx * kv_step)
        e_tps, h_tps = n_engine / t_engine, n_hf / t_hf
        print(f"  batch {batch:>2}: engine {e_tps:9.1f} tok/s   HF {h_tps:9.1f} tok/s   engine/HF = {e_tps / h_tps:5.2f}x"
              f"   roofline {roofline:9.0f} tok/s (engine at {e_tps / roofline:.1%})   first-16-token greedy "
              f"agreement {agree:.0%}", flush=True)


def bench_graphs(max_tokens: int) -> None:
    """Decode tokens/s with CUDA graphs vs EngineConfig(enforce_eager=True): does capturing pay?

    Decode-only rate: batch * (max_tokens - 1) / (t(max_tokens) - t(1)), which subtracts the prefill step.
    """
    import gc

    from neural import Engine, EngineConfig, SamplingParams
    from neural.default_model import default_model_path

    print("\n[4] decode with CUDA graphs vs eager, default model, bf16, greedy (batch 5 pads to 8)", flush=True)
    if max_tokens < 2:
        print("  skipped: needs --max-tokens >= 2 (the decode rate subtracts a 1-token run)")
        return
    prompts = [f"Count slowly from {i} to {i + 90}, one number per line:" for i in range(64)]
    batches, results = (1, 5, 64), {}
    for eager in (True, False):
        gc.collect()
        torch.cuda.empty_cache()
        t0 = time.perf_counter()
        engine = Engine(EngineConfig(model=str(default_model_path()), dtype="bfloat16", device="cuda",
                                     kv_cache_bytes=2 << 30, enforce_eager=eager))
        print(f"  {'eager' if eager else 'graphs'} engine built in {time.perf_counter() - t0:.1f} s; captured "
              f"sizes {engine.runner.graphs.captured_sizes() if engine.runner.graphs else []}", flush=True)
        if not eager and engine.runner.graphs is None:
            fail(f"CUDA graph capture failed: {engine.runner.graph_capture_error}")
        for batch in batches:
            engine.generate(prompts[:batch], SamplingParams(max_tokens=3))  # warm-up: kernels for these shapes
            times = []
            for n in (1, max_tokens):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                outs = engine.generate(prompts[:batch], SamplingParams(max_tokens=n, temperature=0.0, ignore_eos=True))
                torch.cuda.synchronize()
                times.append(time.perf_counter() - t0)
            results[eager, batch] = batch * (max_tokens - 1) / (times[1] - times[0]), [o.token_ids for o in outs]
        del engine
    for batch in batches:
        (e_tps, e_ids), (g_tps, g_ids) = results[True, batch], results[False, batch]
        agree = sum(a[:16] == b[:16] for a, b in zip(e_ids, g_ids)) / batch
        print(f"  batch {batch:>2}: eager {e_tps:9.1f} decode tok/s   graphs {g_tps:9.1f} decode tok/s   "
              f"graphs/eager = {g_tps / e_tps:5.2f}x   first-16-token greedy agreement {agree:.0%}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=64, help="decode batch for the bandwidth test (default 64)")
    ap.add_argument("--context", type=int, default=4096, help="context length for the bandwidth test (default 4096)")
    ap.add_argument("--max-tokens", type=int, default=128, help="tokens generated per request in [3]")
    ap.add_argument("--skip-engine", action="store_true", help="kernels and bandwidth only")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and byte counts; needs no GPU")
    args = ap.parse_args(argv)
    if args.batch < 1 or args.context < 1 or args.max_tokens < 1:
        ap.error("--batch, --context and --max-tokens must be positive")
    if args.dry_run:
        print(f"plan: [1] kernel checks fp16+bf16  [2] decode bandwidth B={args.batch} ctx={args.context}  "
              f"[3] engine vs HF at batch 1 and 64, {args.max_tokens} tokens  [4] decode tok/s, CUDA graphs vs "
              f"eager, at batch 1, 5 and 64")
        for s in SHAPES:
            print(f"  {s.name}: K+V bytes per decode call = {s.kv_bytes(args.batch, args.context, 2) / 1e9:.3f} GB (fp16)")
        return 0
    if not torch.cuda.is_available():
        print("bench/gpu.py needs a CUDA GPU; none is visible. On CPU the kernels are checked by "
              "`pytest tests/test_kernels_triton.py` (Triton interpreter). Use --dry-run to see the plan.")
        return 2
    os.environ.pop("VERIRAG_KERNELS", None)
    t0 = time.perf_counter()
    table_peak, copy_bw, name = peak_bandwidth()
    peak = table_peak or copy_bw
    print(f"device: {name}; datasheet peak {table_peak and f'{table_peak / 1e12:.2f} TB/s' or 'unknown'}; "
          f"measured copy {copy_bw / 1e12:.2f} TB/s ({copy_bw / peak:.0%} of peak)")
    check_kernels()
    frac = bench_decode_bandwidth(args.batch, args.context, peak)
    print(f"  => decode attention (default config) reaches {frac:.0%} of peak bandwidth (target >= 60%)")
    if not args.skip_engine:
        bench_engine(args.max_tokens, peak)
        bench_graphs(args.max_tokens)
    print(f"\ndone in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

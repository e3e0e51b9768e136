"""int8 CPU weights for a built fp32 Llama/Qwen2 model: which projections, calibration, SmoothQuant folding,
the module swap, and the state the load cache keeps so that a later start does none of it again.

Two activation modes (models.int8_linear): "int8" runs two passes (~14-bit activations) and needs no
smoothing; "int8-fast" runs one pass (8-bit activations against 7-bit weights), which SmoothQuant (alpha 0.5)
helps. Quality (Qwen2.5-0.5B, teacher-forced over kb/ documents, fp32 = reference): one 7-bit-activation pass
as is +25.7 % perplexity; each row scaled to absmax 1 first (Int8Linear) +3.4 %; plus SmoothQuant +1.6-2.0 %;
8-bit activations against 7-bit weights, smoothed, +0.9 % (SmolLM2-135M +2.9 %; 7-bit activations against 8-bit
weights +2.2 % and +4.8 %, every projection int8); two passes +0.25 %, unsmoothed (smoothed, the 135M: +1.0 %
against +0.3 %). bench/RESULTS.md, issue 18.
SmoothQuant divides each input channel of a projection by ``s = amax(x)^a / amax(W)^(1-a)`` and multiplies
W's column by it: the outlier channels the activation scale would otherwise be spent on shrink, exactly (in
float math) compensated by the weight. The division is folded into what produces the input, so it costs
nothing per step: the RMSNorm weight before qkv_proj, gate_up_proj and lm_head, and the up_proj rows before
down_proj (``silu(g) * u / s``). o_proj's input (attention output) has no such place under GQA; it quantizes
well as it is.
"""
from __future__ import annotations

import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import cast

import torch

from neural.attention_metadata import AttentionMetadata
from neural.calibration_text import CALIBRATION_TEXT
from neural.model_config import ModelConfig
from neural.models.int8_linear import (Int8Embedding, Int8Linear, prepack, quantize_groups, quantize_rows,
                                      qweight_pieces, weight_qmax)
from neural.models.llama import Linear, LlamaForCausalLM

INT8_FORMAT = 4  # bump when what quantize() stores changes meaning: cached int8 states then miss
SMOOTH_ALPHA = 0.5
CALIBRATION_TOKENS = 512
_CAL_HASH = hashlib.sha256(CALIBRATION_TEXT.encode()).hexdigest()[:12]


def linear_shapes(cfg: ModelConfig) -> dict[str, tuple[int, int]]:
    """Module name -> (out, in) of every projection LlamaForCausalLM builds for ``cfg``."""
    q, kv, h, inter = cfg.num_attention_heads * cfg.head_dim, cfg.num_key_value_heads * cfg.head_dim, \
        cfg.hidden_size, cfg.intermediate_size
    shapes = {}
    for i in range(cfg.num_hidden_layers):
        shapes[f"layers.{i}.self_attn.qkv_proj"] = (q + 2 * kv, h)
        shapes[f"layers.{i}.self_attn.o_proj"] = (h, q)
        shapes[f"layers.{i}.mlp.gate_up_proj"] = (2 * inter, h)
        shapes[f"layers.{i}.mlp.down_proj"] = (h, inter)
    shapes["lm_head"] = (cfg.vocab_size, h)
    return shapes


@dataclass
class Int8Plan:
    int8: list[str]  # projections that become Int8Linear
    kept: dict[str, str] = field(default_factory=dict)  # projection -> why it stays fp32
    residual: bool = True  # two-pass activations (quantization="int8"); False: one pass ("int8-fast")
    # SmoothQuant's alpha, None for none. It helps one pass and hurts two-pass ones, whose error is
    # then the weights' alone (SmolLM2-135M, perplexity over fp32: +0.27 % unsmoothed, +0.97 % at alpha 0.5)
    alpha: float | None = None

    @property
    def embedding_int8(self) -> bool:
        """The embedding goes int8 only where no fp32 head shares its weight (it would stay resident anyway)."""
        return "lm_head" in self.int8

    def key(self) -> str:
        ident = json.dumps([INT8_FORMAT, sorted(self.int8), self.alpha, _CAL_HASH, self.embedding_int8])
        return hashlib.sha256(ident.encode()).hexdigest()[:16]

    def summary(self) -> str:
        acts = "two-pass activations" if self.residual else "one pass: 7-bit weights, 8-bit activations"
        return f"{len(self.int8)}/{len(self.int8) + len(self.kept)} projections int8, {acts}"


def make_plan(cfg: ModelConfig, verdicts: dict[tuple[int, int], tuple[bool, str]], residual: bool = True) -> Int8Plan:
    """Per projection: int8 where its shape's verdict (models.int8_speed) says int8 is at least as fast."""
    plan = Int8Plan([], residual=residual, alpha=None if residual else SMOOTH_ALPHA)
    for name, shape in linear_shapes(cfg).items():
        wins, why = verdicts[shape]
        if wins:
            plan.int8.append(name)
        else:
            plan.kept[name] = f"{shape[0]}x{shape[1]}: {why}"
    return plan


@dataclass
class Int8Setup:
    """What ModelRunner needs: the plan, the calibration token ids, and (warm start) the cached state."""
    plan: Int8Plan
    calibration_ids: list[int]
    state: dict[str, torch.Tensor] | None = None
    built: bool = False  # True when quantize() made ``state`` in this process (the caller may cache it)


# ---------------------------------------------------------------------- cold: fp32 model -> int8
@torch.inference_mode()
def calibrate(model: LlamaForCausalLM, ids: list[int], block_size: int) -> dict[str, torch.Tensor]:
    """Per-input-channel max |x| of every Linear's input over one prefill of ``ids`` (a scratch KV cache)."""
    cfg = model.config
    ids = ids[: min(CALIBRATION_TOKENS, model.max_positions)]
    blocks = -(-len(ids) // block_size)
    kv = torch.zeros(2, cfg.num_hidden_layers, blocks, block_size, cfg.num_key_value_heads, cfg.head_dim)
    model.bind_kv_cache(kv)
    n = len(ids)
    meta = AttentionMetadata(slot_mapping=torch.arange(n), block_tables=torch.arange(blocks, dtype=torch.int32)[None],
                             context_lens=torch.tensor([n], dtype=torch.int32),
                             cu_seqlens_q=torch.tensor([0, n], dtype=torch.int32), is_decode=False)
    amax: dict[str, torch.Tensor] = {}
    hooks = []
    for name, module in model.named_modules():
        if isinstance(module, Linear):
            def record(_m, inputs, _out, name=name) -> None:
                a = inputs[0].detach().abs().reshape(-1, inputs[0].shape[-1]).amax(0)
                amax[name] = a if name not in amax else torch.maximum(amax[name], a)
            hooks.append(module.register_forward_hook(record))
    try:
        hidden = model(torch.tensor(ids), torch.arange(n), meta)
        # the LM head sees every row too (its range from one token skewed SmolLM2's smoothing: perplexity
        # 14.9 -> 101), 64 rows at a time: 512 rows of a 152k vocabulary would be 300 MB of logits at once
        for start in range(0, n, 64):
            model.compute_logits(hidden[start : start + 64])
    finally:
        for h in hooks:
            h.remove()
    return amax


def _smooth_scale(amax_x: torch.Tensor, weight: torch.Tensor, alpha: float) -> torch.Tensor:
    s = amax_x.clamp_min(1e-5).pow(alpha) / weight.abs().amax(0).clamp_min(1e-5).pow(1 - alpha)
    return s.clamp_min(1e-5)


@torch.no_grad()
def smooth(model: LlamaForCausalLM, amax: dict[str, torch.Tensor], plan: Int8Plan) -> None:
    """Fold SmoothQuant scales into the fp32 model (outputs unchanged up to float rounding), for the int8
    projections that have a place to fold into. A tied LM head gets its own weight (the embedding keeps
    the unscaled one)."""
    if plan.alpha is None:
        raise ValueError("smooth() needs a plan with a SmoothQuant alpha")
    alpha = plan.alpha
    inter = model.config.intermediate_size
    todo = set(plan.int8)
    for i, layer in enumerate(model.layers):
        pre = f"layers.{i}."
        pairs = ((pre + "self_attn.qkv_proj", layer.input_layernorm, layer.self_attn.qkv_proj),
                 (pre + "mlp.gate_up_proj", layer.post_attention_layernorm, layer.mlp.gate_up_proj))
        for name, norm, proj in pairs:
            if name in todo:
                s = _smooth_scale(amax[name], proj.weight, alpha)
                norm.weight.div_(s)
                proj.weight.mul_(s)
        name = pre + "mlp.down_proj"
        if name in todo:
            down, gate_up = layer.mlp.down_proj, layer.mlp.gate_up_proj
            s = _smooth_scale(amax[name], down.weight, alpha)
            gate_up.weight[inter:].div_(s[:, None])  # up rows: silu(gate) * (up / s)
            down.weight.mul_(s)
    if "lm_head" in todo:
        head = model.lm_head.weight.detach().clone()  # untied from the embedding from here on
        s = _smooth_scale(amax["lm_head"], head, alpha)
        model.norm.weight.div_(s)
        model.lm_head.weight = torch.nn.Parameter(head.mul_(s), requires_grad=False)


def _swap(model: LlamaForCausalLM, name: str, module: torch.nn.Module) -> None:
    parent, _, attr = name.rpartition(".")
    setattr(model.get_submodule(parent) if parent else model, attr, module)


@torch.no_grad()
def quantize(model: LlamaForCausalLM, setup: Int8Setup, block_size: int) -> dict[str, torch.Tensor]:
    """Calibrate, smooth and swap the plan's projections (and the embedding) for int8 ones, in place; returns
    the whole model's state as the load cache keeps it: ``<name>.q/.scale/.bias`` per int8 module, and the
    remaining float parameters under their own names."""
    plan = setup.plan
    if plan.alpha is not None:
        smooth(model, calibrate(model, setup.calibration_ids, block_size), plan)
    state: dict[str, torch.Tensor] = {}
    if plan.embedding_int8:
        q, scale = quantize_groups(model.embed_tokens.weight)
        state["embed_tokens.q"], state["embed_tokens.scale"] = q, scale
        _swap(model, "embed_tokens", Int8Embedding(q, scale))
    parts = {}
    for name in plan.int8:
        old = cast(Linear, model.get_submodule(name))  # the plan names linear projections only
        q, scale = quantize_rows(old.weight, weight_qmax(plan.residual))
        bias = None if old.bias is None else old.bias.detach().float().contiguous()
        state[f"{name}.q"], state[f"{name}.scale"] = q, scale
        if bias is not None:
            state[f"{name}.bias"] = bias
        parts[name] = (q, scale, bias)
    for name, module in _build_linears(parts, plan.residual).items():
        _swap(model, name, module)
    for name, p in model.named_parameters():
        state[name] = p.detach().contiguous()
    return state


# ---------------------------------------------------------------------- warm: cached state -> int8 model
def install(model: LlamaForCausalLM, state: dict[str, torch.Tensor], residual: bool = True) -> dict[str, torch.Tensor]:
    """Swap the int8 modules named in ``state`` into a model still on ``meta``; returns the float rest of
    the state (for LlamaForCausalLM.load_state once the remaining modules are materialised)."""
    rest = dict(state)
    names = sorted({k[: -len(".q")] for k in state if k.endswith(".q")})
    parts = {name: (rest.pop(f"{name}.q"), rest.pop(f"{name}.scale"), rest.pop(f"{name}.bias", None)) for name in names}
    if "embed_tokens" in parts:
        _swap(model, "embed_tokens", Int8Embedding(*parts.pop("embed_tokens")[:2]))
    for name, (q, _, _) in parts.items():
        old = model.get_submodule(name)
        if not isinstance(old, Linear) or tuple(q.shape) != (old.out_features, old.in_features):
            raise ValueError(f"cached int8 {name} {tuple(q.shape)} does not fit the model's {old}")
    for name, module in _build_linears(parts, residual).items():
        _swap(model, name, module)
    return rest


def _build_linears(parts: dict[str, tuple], residual: bool) -> dict[str, Int8Linear]:
    """name -> Int8Linear(q, scale, bias), fbgemm's prepacking (most of a warm int8 load) spread over torch's
    threads: it releases the GIL (2 threads: 1.5 -> 1.2 s for 12 gate_up weights on the loaded 2-core machine)."""
    pieces = {name: qweight_pieces(q, scale) for name, (q, scale, _) in parts.items()}  # warns: one thread
    workers = max(1, torch.get_num_threads())
    if workers == 1 or len(pieces) < 2:
        packed = [prepack(p) for p in pieces.values()]
    else:
        with ThreadPoolExecutor(workers) as pool:
            packed = list(pool.map(prepack, pieces.values()))
    return {name: Int8Linear(q, scale, bias, packed=pk, residual=residual)
            for (name, (q, scale, bias)), pk in zip(parts.items(), packed)}

"""DraftModelProposer: a smaller model with the same tokenizer drafts k tokens greedily, in its own paged KV.

Self-speculation by default: the draft is the target's first N layers plus its final norm and LM head
(weights shared, no copy), with its own KV pool and block tables. Each step the draft catches up on the
tokens verified since its last step (one batched forward), then decodes k tokens greedily; after
verification its KV is cut back to the accepted prefix. Greedy drafts are point-mass proposals, so the
rejection sampler keeps the target distribution exactly for sampled requests too.
"""
from __future__ import annotations

import copy
from typing import TypeVar

import torch
from torch import nn

from neural.block_manager import BlockManager
from neural.errors import EngineError
from neural.model_runner import ModelRunner, kv_bytes_per_block
from neural.models.llama import LlamaForCausalLM
from neural.sampling_params import SamplingParams
from neural.sequence import Sequence
from neural.spec_decode.config import SpeculativeConfig


_M = TypeVar("_M", bound=nn.Module)


def first_layers(model: LlamaForCausalLM, num_layers: int) -> LlamaForCausalLM:
    """A view of ``model`` with only its first layers; modules are shallow copies (own KV bindings),
    parameters are the target's own tensors."""

    def shallow(m: _M) -> _M:
        c = copy.copy(m)
        c._modules = dict(m._modules)
        return c

    draft = shallow(model)
    layers = []
    for layer in model.layers[:num_layers]:
        layer = shallow(layer)
        layer._modules["self_attn"] = shallow(layer.self_attn)
        layers.append(layer)
    draft._modules["layers"] = nn.ModuleList(layers)
    return draft


class DraftModelProposer:
    def __init__(self, runner: ModelRunner, max_model_len: int) -> None:
        self.runner = runner
        self.bm = BlockManager(runner.num_blocks, runner.block_size, enable_prefix_caching=False)
        self.max_model_len = max_model_len
        self.shadows: dict[str, Sequence] = {}  # request id -> the draft's view (own block table)
        self.base: dict[str, int] = {}  # request id -> length of the verified text when it last drafted

    @classmethod
    def from_engine(cls, cfg: SpeculativeConfig, engine) -> "DraftModelProposer":
        target = engine.runner
        bs, dtype, device = engine.config.block_size, target.dtype, target.device
        if cfg.draft_model is not None:
            from neural.loader import load_model_files

            mc, weights = load_model_files(cfg.draft_model)
            if mc.vocab_size != engine.model_config.vocab_size:
                raise EngineError(
                    f"draft model vocab_size {mc.vocab_size} != target's {engine.model_config.vocab_size}: "
                    "a draft must share the target's tokenizer"
                )
            num_blocks = max(1, cfg.draft_kv_cache_bytes // kv_bytes_per_block(mc, bs, dtype))
            return cls(ModelRunner(mc, weights, dtype, device, bs, num_blocks, engine.max_model_len),
                       engine.max_model_len)
        total = engine.model_config.num_hidden_layers
        n_layers = cfg.draft_num_layers or max(1, total // 4)
        if n_layers >= total:
            raise EngineError(f"draft_num_layers={n_layers} must be below the target's {total} layers")
        mc = engine.model_config
        num_blocks = max(1, cfg.draft_kv_cache_bytes // kv_bytes_per_block(mc, bs, dtype, n_layers))
        runner = ModelRunner(mc, None, dtype, device, bs, num_blocks, engine.max_model_len,
                             model=first_layers(target.model, n_layers))
        return cls(runner, engine.max_model_len)

    def propose(self, seqs: list[Sequence], ks: list[int]) -> list[list[int]]:
        shadows: list[tuple[int, Sequence, int]] = []
        out: list[list[int]] = [[] for _ in seqs]
        for i, (seq, k) in enumerate(zip(seqs, ks)):
            sh = self.shadows.get(seq.request_id)
            if sh is None:
                sh = self.shadows[seq.request_id] = Sequence(seq.request_id, None, [], SamplingParams())
            sh.token_ids = list(seq.token_ids)  # verified text; draft KV beyond num_computed is stale
            sh.num_computed_tokens = min(sh.num_computed_tokens, len(sh.token_ids) - 1)
            if not self.bm.allocate(sh, len(sh.token_ids) + k):
                continue  # draft pool full: this request decodes without a proposal this step
            self.base[seq.request_id] = len(seq.token_ids)
            shadows.append((i, sh, k))
        step = 0
        while shadows:
            batch = [sh for _, sh, _ in shadows]
            counts = [len(sh.token_ids) - sh.num_computed_tokens for sh in batch]
            with torch.inference_mode():
                logits = self.runner.run(batch, counts)
            for sh, n, tok in zip(batch, counts, logits.argmax(-1).tolist()):
                sh.num_computed_tokens += n
                sh.token_ids.append(tok)
            step += 1
            done = [(i, sh, k) for i, sh, k in shadows if step >= k]
            for i, sh, k in done:
                out[i] = sh.token_ids[len(sh.token_ids) - k :]
            shadows = [x for x in shadows if step < x[2]]
        return out

    def on_verified(self, seq: Sequence, num_accepted: int) -> None:
        sh = self.shadows.get(seq.request_id)
        if sh is not None:  # K/V of the draft tokens past the accepted ones are for a rejected future
            sh.num_computed_tokens = min(sh.num_computed_tokens, self.base[seq.request_id] + num_accepted)

    def release(self, seq: Sequence) -> None:
        sh = self.shadows.pop(seq.request_id, None)
        self.base.pop(seq.request_id, None)
        if sh is not None:
            self.bm.free_seq(sh)

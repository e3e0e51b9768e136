"""Engine: the synchronous decode engine — requests in, one scheduler step at a time, RequestOutputs out."""
from __future__ import annotations

import itertools
import time
from collections import deque
from pathlib import Path
from typing import Iterator, cast

import torch

from neural.block_manager import BlockManager
from neural.config import CPU_DEFAULT_KV_BYTES, MAX_DEFAULT_MODEL_LEN, EngineConfig
from neural.errors import EngineError, InvalidRequestError, PromptTooLongError
from neural.int8_setup import INT8_MODES, prepare_int8, resolve_quantization, store_int8
from neural.load_progress import LoadProgress
from neural.loader import load_model
from neural.loader.cache import LoadCache
from neural.model_registry import resolve_model
from neural.model_runner import ModelRunner, kv_bytes_per_block
from neural.output_processor import check_stop, make_output, update_text
from neural.sampler import Sampler
from neural.sampling_params import SamplingParams
from neural.scheduler import ScheduledBatch, Scheduler
from neural.sequence import RequestOutput, Sequence
from neural.spec_decode.factory import build_speculator
from neural.tokenizer import Tokenizer, is_chat


class Engine:
    def __init__(self, config: EngineConfig | None = None, progress: LoadProgress | None = None) -> None:
        """``progress``: receives the load stages (the server reads it for /readyz, and calls its ready() once
        what it loads after the engine is in too); by default a fresh one, made ready here."""
        self.config = cfg = config or EngineConfig()
        owns_progress = progress is None
        self.load_progress = progress = progress or LoadProgress()
        if cfg.num_threads:
            torch.set_num_threads(cfg.num_threads)
        spec = cfg.model
        with progress.stage("resolve model"):
            cfg.model = resolve_model(spec)  # None -> the default model; a registry name -> its file
        self.device = cfg.resolve_device()
        # what runs: "auto" resolved for this model and device (None: dense in cfg.dtype)
        self.quantization = resolve_quantization(cfg.quantization, spec, cfg.model, self.device, cfg.torch_dtype)
        cache = LoadCache(cfg.model) if cfg.load_cache and Path(cfg.model).is_file() else None
        loaded = load_model(cfg.model, "gguf" if self.quantization == "gguf" else None, progress, cache)
        model_config, weights, packed = loaded.config, loaded.weights, loaded.packed
        self.model_config = model_config
        self.tokenizer = loaded.tokenizer or Tokenizer.from_model_path(cfg.model, model_config.eos_token_ids)
        self.eos_ids = set(self.tokenizer.eos_token_ids) | set(model_config.eos_token_ids)

        dtype = cfg.torch_dtype
        block_bytes = kv_bytes_per_block(model_config, cfg.block_size, dtype)
        max_len = cfg.max_model_len or min(model_config.max_position_embeddings, MAX_DEFAULT_MODEL_LEN)
        kv_bytes = cfg.kv_cache_bytes
        if kv_bytes is None and self.device.type == "cpu":
            kv_bytes = CPU_DEFAULT_KV_BYTES
        int8 = None
        if self.quantization in INT8_MODES:
            int8 = prepare_int8(model_config, self.tokenizer, cache, progress, cfg.cpu_prepack_weights,
                                self.quantization)
        with progress.stage("build model"):
            if kv_bytes is None:  # GPU: a fraction of what is free once the weights are in
                self.runner = self._build_gpu_runner(model_config, weights, dtype, block_bytes, max_len, packed)
            else:
                if kv_bytes // block_bytes < 1:
                    raise EngineError(f"kv_cache_bytes={kv_bytes} holds no KV block ({block_bytes} bytes per block)")
                self.runner = ModelRunner(
                    model_config, weights, dtype, self.device, cfg.block_size, kv_bytes // block_bytes, max_len,
                    packed=packed, prepack_weights=cfg.cpu_prepack_weights, int8=int8,
                )
        self.int8_plan = None if int8 is None else int8.plan  # which projections run int8, why the others not
        if int8 is not None:
            store_int8(int8, cache, progress)
        if not cfg.enforce_eager:  # the KV cache is final: CUDA captures decode graphs, CPU does nothing
            self.runner.capture_decode_graphs(cfg.graph_batch_sizes())
        num_blocks = self.runner.num_blocks
        # a lone sequence of max_model_len tokens must always fit, or preemption could never make progress
        self.max_model_len = min(max_len, num_blocks * cfg.block_size)
        self.block_manager = BlockManager(num_blocks, cfg.block_size, cfg.enable_prefix_caching)
        self.scheduler = Scheduler(
            self.block_manager, cfg.max_num_seqs, cfg.max_num_batched_tokens, self.max_model_len
        )
        self.sampler = Sampler()
        self.speculator = None if cfg.speculative is None else build_speculator(cfg.speculative, self)
        if owns_progress:
            progress.ready()
        self._inbox: deque[Sequence] = deque()  # add_request/abort only append: cheap, thread-friendly
        self._aborts: deque[str] = deque()
        self._seqs: dict[str, Sequence] = {}
        self._ids = itertools.count()
        self.num_steps = 0
        self.num_generated_tokens = 0

    def _build_gpu_runner(self, model_config, weights, dtype, block_bytes: int, max_len: int, packed) -> ModelRunner:
        runner = ModelRunner(model_config, weights, dtype, self.device, self.config.block_size, 1, max_len,
                             packed=packed)
        free, _ = torch.cuda.mem_get_info(self.device)
        runner.allocate_kv_cache(max(1, int(free * self.config.gpu_memory_utilization) // block_bytes))
        return runner

    # ------------------------------------------------------------------ requests
    def add_request(
        self, prompt: str | list[int], sampling: SamplingParams | None = None, request_id: str | None = None,
        *, add_special_tokens: bool = True,
    ) -> str:
        sampling = sampling or SamplingParams()
        if not isinstance(sampling, SamplingParams):
            raise InvalidRequestError(f"sampling must be a SamplingParams, got {type(sampling).__name__}")
        if isinstance(prompt, str):
            if not prompt:
                raise InvalidRequestError("prompt is empty")
            text, ids = prompt, self.tokenizer.encode(prompt, add_special_tokens=add_special_tokens)
        elif isinstance(prompt, (list, tuple)):
            text, ids = None, list(prompt)
            vocab = self.model_config.vocab_size
            if not all(isinstance(t, int) and 0 <= t < vocab for t in ids):
                raise InvalidRequestError(f"prompt token ids must be integers in [0, {vocab})")
        else:
            raise InvalidRequestError(f"prompt must be a string or a list of token ids, got {type(prompt).__name__}")
        if not ids:
            raise InvalidRequestError("prompt is empty (no tokens)")
        if len(ids) >= self.max_model_len:
            raise PromptTooLongError(
                f"prompt has {len(ids)} tokens; max_model_len is {self.max_model_len} "
                f"(the prompt plus at least one generated token must fit)"
            )
        rid = request_id if request_id is not None else f"req-{next(self._ids)}"
        if rid in self._seqs:
            raise InvalidRequestError(f"request id {rid!r} is already in use")
        seq = Sequence(rid, text, ids, sampling)
        self._seqs[rid] = seq
        self._inbox.append(seq)
        return rid

    def abort(self, request_id: str) -> None:
        """Queue an abort; the next step() frees the request's blocks and emits its final output."""
        self._aborts.append(request_id)

    def reset_prefix_cache(self) -> bool:
        """Drop the prefix cache so the next prompts are computed in full; False (nothing dropped) while
        requests are in flight, whose blocks the cache may share."""
        if self.has_unfinished():
            return False
        return self.block_manager.reset_prefix_cache()

    def has_unfinished(self) -> bool:
        return bool(self._inbox or self._aborts or self.scheduler.has_unfinished())

    # ------------------------------------------------------------------ the step
    def step(self) -> list[RequestOutput]:
        outputs: list[RequestOutput] = []
        while self._inbox:
            self.scheduler.add(self._inbox.popleft())
        while self._aborts:
            seq = self._seqs.pop(self._aborts.popleft(), None)
            if seq is not None and not seq.is_finished:
                self.scheduler.finish(seq, "abort")
                outputs.append(make_output(seq, True))
        spec = self.speculator
        if spec is not None:  # proposals ride in token_ids so the scheduler budgets their slots
            spec.propose(self.scheduler.running)
        batch = self.scheduler.schedule()
        if spec is not None:
            spec.fit_to_batch(batch)
        if batch.seqs:
            outputs += self._execute(batch)
        if spec is not None:
            spec.release_finished()
        return outputs

    def _execute(self, batch: ScheduledBatch) -> list[RequestOutput]:
        rows = self.speculator.logits_rows(batch) if self.speculator is not None else None
        logits = self.runner.run(batch.seqs, batch.num_new_tokens, rows)
        self.num_steps += 1
        verified: dict[int, list[tuple[int, float | None]]] = {}
        if rows is not None:  # speculating sequences: accepted tokens + one, KV rolled back past them
            assert self.speculator is not None  # rows come from it
            logits, verified = self.speculator.verify(batch, logits, self.sampler.generator)
        sampling_rows, sampling_seqs = [], []
        for i, (seq, n) in enumerate(zip(batch.seqs, batch.num_new_tokens)):
            if i in verified:
                continue
            seq.num_computed_tokens += n
            self.block_manager.commit(seq)
            if seq.num_computed_tokens == len(seq.token_ids):  # reached the end: its logits are real
                sampling_rows.append(i)
                sampling_seqs.append(seq)
        now = time.perf_counter()
        outputs = [self._emit(batch.seqs[i], toks, now) for i, toks in verified.items()]
        if not sampling_seqs:
            return outputs
        if len(sampling_rows) < len(batch.seqs):
            logits = logits[sampling_rows]
        tokens, logprobs = self.sampler(logits, sampling_seqs)
        for seq, tok, lp in zip(sampling_seqs, tokens, logprobs):
            outputs.append(self._emit(seq, [(tok, lp)], now))
        return outputs

    def _emit(self, seq: Sequence, tokens: list[tuple[int, float | None]], now: float) -> RequestOutput:
        """Append the step's token(s) one at a time, stopping at the first that ends the request."""
        reason = None
        for tok, lp in tokens:
            seq.append_token(tok)
            self.num_generated_tokens += 1
            if seq.logprobs is not None:
                assert lp is not None  # a request asking for logprobs is sampled with them
                seq.logprobs.append(lp)
            if seq.first_token_time is None:
                seq.first_token_time = now
                seq.metrics.ttft_s = now - seq.arrival_time
            seq.metrics.generated_tokens = seq.num_generated
            reason = check_stop(seq, self.eos_ids, self.max_model_len)
            if update_text(seq, self.tokenizer, reason is not None):
                reason = "stop"
            if reason is not None:
                self.scheduler.finish(seq, reason)
                self._seqs.pop(seq.request_id, None)
                break
        return make_output(seq, reason is not None)

    # ------------------------------------------------------------------ conveniences
    def generate(
        self, prompts: str | list[int] | list[str] | list[list[int]],
        sampling: SamplingParams | list[SamplingParams] | None = None,
    ) -> list[RequestOutput]:
        single = isinstance(prompts, str) or (
            isinstance(prompts, list) and bool(prompts) and isinstance(prompts[0], int)
        )
        plist = cast(list[str | list[int]], [prompts] if single else list(prompts))
        if isinstance(sampling, list):
            if len(sampling) != len(plist):
                raise InvalidRequestError(f"{len(sampling)} SamplingParams for {len(plist)} prompts")
            splist = sampling
        else:
            splist = [sampling or SamplingParams()] * len(plist)
        ids = [self.add_request(p, s) for p, s in zip(plist, splist)]
        return self._run_until_done(ids)

    def _run_until_done(self, ids: list[str]) -> list[RequestOutput]:
        pending = set(ids)
        final: dict[str, RequestOutput] = {}
        while pending:
            for out in self.step():
                if out.finished and out.request_id in pending:
                    final[out.request_id] = out
                    pending.discard(out.request_id)
        return [final[i] for i in ids]

    def chat(self, messages: list[dict], sampling: SamplingParams | None = None) -> RequestOutput:
        rid = self.add_request(self.tokenizer.encode_chat(messages), sampling)
        return self._run_until_done([rid])[0]

    def stream(
        self, prompt: str | list[int] | list[dict], sampling: SamplingParams | None = None
    ) -> Iterator[RequestOutput]:
        """Yields this request's outputs as it advances (a list of messages is chat-templated)."""
        rid = self.add_request(self.tokenizer.encode_chat(prompt) if is_chat(prompt) else prompt, sampling)
        try:
            while True:
                for out in self.step():
                    if out.request_id == rid:
                        yield out
                        if out.finished:
                            return
        finally:
            seq = self._seqs.pop(rid, None)
            if seq is not None and not seq.is_finished:
                # consumer stopped early: free its blocks now, without a step() that would advance (and
                # drop the outputs of) other requests in flight
                if seq in self._inbox:
                    self._inbox.remove(seq)
                else:
                    self.scheduler.finish(seq, "abort")

    def metrics(self) -> dict:
        bm = self.block_manager
        used_slots = sum(len(s) for s in self.scheduler.running)
        allocated_slots = sum(len(s.block_table) for s in self.scheduler.running) * bm.block_size
        return {
            "running": len(self.scheduler.running),
            "waiting": len(self.scheduler.waiting) + len(self._inbox),
            "kv_blocks_total": bm.num_blocks,
            "kv_blocks_used": bm.num_used_blocks,
            "kv_blocks_free": bm.num_free_blocks,
            "kv_blocks_cached": len(bm.cached),
            "kv_slot_waste": 1.0 - used_slots / allocated_slots if allocated_slots else 0.0,
            "prefix_cache_hit_rate": bm.prefix_cache_hit_rate,
            "num_preemptions": self.scheduler.num_preemptions,
            "num_steps": self.num_steps,
            "generated_tokens": self.num_generated_tokens,
            "max_model_len": self.max_model_len,
            "block_size": bm.block_size,
            "device": str(self.device),
            **(self.speculator.metrics.as_dict("spec_") if self.speculator is not None else {}),
        }

"""Capture/replay of decode steps in CUDA graphs for a fixed set of batch sizes (a no-op on CPU).

How a model runner uses it (decode steps only; prefill stays eager):

    graphs = DecodeGraphs(step_fn, batch_sizes=[1, 2, 4, 8, 16, 32, 64], max_blocks_per_seq=max_len // block_size)
    graphs.capture(device)                 # once, after the KV cache is bound; CPU: does nothing
    hidden = graphs.run(input_ids, positions, slot_mapping, block_tables, context_lens)

``step_fn(input_ids, positions, slot_mapping, block_tables, context_lens) -> Tensor`` runs the model for one
decode token per sequence (it builds the attention metadata from these tensors; everything it calls must
avoid host syncs — the Triton decode attention does). ``run`` pads the batch to the smallest captured size
(padding rows: slot -1 so nothing is stored, context length 1 reading block 0) and returns the first ``B``
rows of the output. Batches larger than every captured size, and CPU tensors, run ``step_fn`` eagerly.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Callable

import torch

StepFn = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass
class _Captured:
    inputs: dict[str, torch.Tensor]
    output: torch.Tensor
    graph: "torch.cuda.CUDAGraph | None"  # None: replay re-runs step_fn on the static buffers (tests)


@dataclass
class DecodeGraphs:
    step_fn: StepFn
    batch_sizes: list[int]
    max_blocks_per_seq: int
    _captured: dict[int, _Captured] = field(default_factory=dict)
    _pool: "torch.cuda._POOL_HANDLE | None" = None  # the type torch.cuda.graph(pool=) takes
    # what run() did, for tests and benchmarks: replays per captured (padded) size, eager fallbacks
    num_replays: dict[int, int] = field(default_factory=dict)
    num_eager: int = 0

    def __post_init__(self) -> None:
        if not self.batch_sizes or min(self.batch_sizes) < 1:
            raise ValueError(f"batch_sizes must be positive integers, got {self.batch_sizes}")
        if self.max_blocks_per_seq < 1:
            raise ValueError(f"max_blocks_per_seq must be >= 1, got {self.max_blocks_per_seq}")
        self.batch_sizes = sorted(set(self.batch_sizes))

    def _static_inputs(self, batch: int, device: torch.device) -> dict[str, torch.Tensor]:
        return {
            "input_ids": torch.zeros(batch, dtype=torch.long, device=device),
            "positions": torch.zeros(batch, dtype=torch.long, device=device),
            "slot_mapping": torch.full((batch,), -1, dtype=torch.long, device=device),
            "block_tables": torch.zeros(batch, self.max_blocks_per_seq, dtype=torch.int32, device=device),
            "context_lens": torch.ones(batch, dtype=torch.int32, device=device),
        }

    def _call(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.step_fn(inputs["input_ids"], inputs["positions"], inputs["slot_mapping"],
                            inputs["block_tables"], inputs["context_lens"])

    @torch.inference_mode()
    def capture(self, device: torch.device | str, *, eager_replay: bool = False) -> None:
        """Capture one graph per batch size, largest first so smaller ones share its memory pool.

        ``eager_replay=True`` records static buffers without CUDA graphs (replay re-runs step_fn on them):
        it exercises the padding and buffer logic on CPU; it is not a CUDA graph.
        """
        device = torch.device(device)
        if device.type != "cuda" and not eager_replay:
            return
        for batch in reversed(self.batch_sizes):
            inputs = self._static_inputs(batch, device)
            if eager_replay:
                self._captured[batch] = _Captured(inputs, self._call(inputs), None)
                continue
            torch.cuda.synchronize(device)
            for _ in range(2):  # warm up: Triton compiles and autotuners settle outside the capture
                self._call(inputs)
            torch.cuda.synchronize(device)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=self._pool):
                output = self._call(inputs)
            self._pool = graph.pool()
            self._captured[batch] = _Captured(inputs, output, graph)

    def captured_sizes(self) -> list[int]:
        return sorted(self._captured)

    @torch.inference_mode()
    def run(
        self,
        input_ids: torch.Tensor,
        positions: torch.Tensor,
        slot_mapping: torch.Tensor,
        block_tables: torch.Tensor,
        context_lens: torch.Tensor,
    ) -> torch.Tensor:
        batch = input_ids.shape[0]
        sizes = self.captured_sizes()
        i = bisect.bisect_left(sizes, batch)
        if i == len(sizes) or block_tables.shape[1] > self.max_blocks_per_seq:
            self.num_eager += 1
            return self.step_fn(input_ids, positions, slot_mapping, block_tables, context_lens)
        self.num_replays[sizes[i]] = self.num_replays.get(sizes[i], 0) + 1
        cap = self._captured[sizes[i]]
        st = cap.inputs
        st["input_ids"][:batch].copy_(input_ids)
        st["positions"][:batch].copy_(positions)
        st["slot_mapping"][:batch].copy_(slot_mapping)
        st["slot_mapping"][batch:].fill_(-1)  # padding rows store nothing
        # Columns past a sequence's blocks are never read (every decode attention backend reads table
        # entries only below context_lens), so the caller's -1 padding and the 0 fill here mean the same.
        # Padding rows attend to one token of block 0, never to a previous batch's (since freed) blocks.
        st["block_tables"][:batch, : block_tables.shape[1]].copy_(block_tables)
        st["block_tables"][:batch, block_tables.shape[1] :].fill_(0)
        st["block_tables"][batch:].fill_(0)
        st["context_lens"][:batch].copy_(context_lens)
        st["context_lens"][batch:].fill_(1)  # padding rows attend to one (garbage) token of block 0
        if cap.graph is not None:
            cap.graph.replay()
            return cap.output[:batch]
        return self._call(st)[:batch]

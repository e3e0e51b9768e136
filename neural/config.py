"""EngineConfig: every knob of the engine, and how 'auto' values resolve on this machine."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from neural.errors import EngineError
from neural.spec_decode.config import SpeculativeConfig

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
CPU_DEFAULT_KV_BYTES = 256 * 1024 * 1024  # CPU has no "free device memory" to take a fraction of
MAX_DEFAULT_MODEL_LEN = 8192  # cap on max_position_embeddings when max_model_len is None
# gguf: keep a GGUF's Q8_0/Q4_0/Q4_1 tensors packed, dequantized per matmul; int8: CPU float32 projections int8
# through fbgemm (neural.quant_int8); auto: the registry entry's CPU default (neural.int8_setup); none: dense
QUANTIZATIONS = ("auto", "none", "gguf", "int8", "int8-fast")


@dataclass
class EngineConfig:
    model: str | None = None  # HF folder, .gguf path or a registry name (neural.model_registry); None = default
    dtype: str = "float32"  # float32 | bfloat16 | float16
    device: str = "auto"  # auto | cpu | cuda
    block_size: int = 16
    kv_cache_bytes: int | None = None  # None -> gpu_memory_utilization of free GPU mem, or a CPU default
    gpu_memory_utilization: float = 0.9
    max_num_seqs: int = 64
    max_num_batched_tokens: int = 2048
    max_model_len: int | None = None  # None -> model's max_position_embeddings (capped)
    enable_prefix_caching: bool = True
    num_threads: int | None = None
    speculative: SpeculativeConfig | None = None  # None: no speculative decoding
    quantization: str | None = "auto"  # see QUANTIZATIONS; None is "none": weights dense in `dtype`
    enforce_eager: bool = False  # True: never capture CUDA graphs (decode steps run eagerly)
    cuda_graph_batch_sizes: tuple[int, ...] | None = None  # None -> 1, 2, 4, 8, ... capped at max_num_seqs
    # CPU, float32: batched steps' linears through oneDNN over a second, blocked copy of each weight
    # (neural.models.onednn_linear: ~13 % faster at 16 concurrent requests; the linear weights' memory twice)
    cpu_prepack_weights: bool = True
    # a GGUF's tokenizer and dequantized weights kept under <cache_root>/load/ (neural.loader.cache): the
    # second start of a model reads them instead of parsing and dequantizing the file again
    load_cache: bool = True

    def __post_init__(self) -> None:
        if self.dtype not in _DTYPES:
            raise EngineError(f"dtype must be one of {sorted(_DTYPES)}, got {self.dtype!r}")
        if self.device not in ("auto", "cpu", "cuda") and not str(self.device).startswith("cuda:"):
            raise EngineError(f"device must be auto, cpu or cuda, got {self.device!r}")
        for name in ("block_size", "max_num_seqs", "max_num_batched_tokens"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise EngineError(f"{name} must be a positive integer, got {v!r}")
        if self.kv_cache_bytes is not None and self.kv_cache_bytes <= 0:
            raise EngineError(f"kv_cache_bytes must be positive, got {self.kv_cache_bytes}")
        if not 0.0 < self.gpu_memory_utilization <= 1.0:
            raise EngineError(f"gpu_memory_utilization must be in (0, 1], got {self.gpu_memory_utilization}")
        if self.max_model_len is not None and self.max_model_len < 2:
            raise EngineError(f"max_model_len must be >= 2, got {self.max_model_len}")
        if self.speculative is not None and not isinstance(self.speculative, SpeculativeConfig):
            raise EngineError(f"speculative must be a SpeculativeConfig or None, got {type(self.speculative).__name__}")
        if self.quantization is not None and self.quantization not in QUANTIZATIONS:
            raise EngineError(f"quantization must be None or one of {list(QUANTIZATIONS)}, got {self.quantization!r}")
        if self.num_threads is not None and self.num_threads < 1:
            raise EngineError(f"num_threads must be >= 1, got {self.num_threads}")
        for name in ("enforce_eager", "cpu_prepack_weights", "load_cache"):
            if not isinstance(getattr(self, name), bool):
                raise EngineError(f"{name} must be True or False, got {getattr(self, name)!r}")
        self._check_graph_sizes()

    def _check_graph_sizes(self) -> None:
        sizes = self.cuda_graph_batch_sizes
        if sizes is None:
            return
        if not isinstance(sizes, (tuple, list)) or not sizes:
            raise EngineError(f"cuda_graph_batch_sizes must be None or a non-empty tuple of batch sizes, got {sizes!r}")
        bad = [s for s in sizes if isinstance(s, bool) or not isinstance(s, int) or not 1 <= s <= self.max_num_seqs]
        if bad:
            raise EngineError(f"cuda_graph_batch_sizes must be integers in [1, max_num_seqs={self.max_num_seqs}], "
                              f"got {bad[0]!r}")
        self.cuda_graph_batch_sizes = tuple(sorted(set(sizes)))

    def graph_batch_sizes(self) -> list[int]:
        """Decode batch sizes to capture: the configured ones, or powers of two up to max_num_seqs plus
        max_num_seqs itself, so every decode batch the scheduler can form has a graph (padding <= 2x)."""
        if self.cuda_graph_batch_sizes is not None:
            return list(self.cuda_graph_batch_sizes)
        sizes = [1 << i for i in range(self.max_num_seqs.bit_length()) if 1 << i <= self.max_num_seqs]
        return sizes if sizes[-1] == self.max_num_seqs else sizes + [self.max_num_seqs]

    @property
    def torch_dtype(self) -> torch.dtype:
        return _DTYPES[self.dtype]

    def resolve_device(self) -> torch.device:
        if self.device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        if str(self.device).startswith("cuda") and not torch.cuda.is_available():
            raise EngineError("device='cuda' requested but no CUDA device is available")
        return torch.device(self.device)

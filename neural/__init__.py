"""verirag's decode engine: paged KV cache, continuous batching, sampling, Llama/Qwen2 from HF or GGUF."""
from neural.config import EngineConfig
from neural.engine import Engine
from neural.errors import (
    EngineError,
    InvalidRequestError,
    InvalidSamplingError,
    ModelLoadError,
    PromptTooLongError,
    UnsupportedModelError,
)
from neural.sampling_params import SamplingParams
from neural.sequence import RequestMetrics, RequestOutput
from neural.tokenizer import Tokenizer

__all__ = [
    "Engine",
    "EngineConfig",
    "EngineError",
    "InvalidRequestError",
    "InvalidSamplingError",
    "ModelLoadError",
    "PromptTooLongError",
    "RequestMetrics",
    "RequestOutput",
    "SamplingParams",
    "Tokenizer",
    "UnsupportedModelError",
]

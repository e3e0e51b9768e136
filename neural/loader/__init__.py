"""Model loading: HF safetensors folders and GGUF files into (ModelConfig, HF-named tensors[, packed weights])."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import torch

from neural.errors import ModelLoadError
from neural.model_config import ModelConfig

if TYPE_CHECKING:
    from neural.quant import PackedWeight

WeightIter = Iterator[tuple[str, torch.Tensor]]


@dataclass
class LoadedModel:
    config: ModelConfig
    weights: WeightIter  # dense tensors, lazily, under HF names; packed ones are not in it
    packed: dict[str, "PackedWeight"] = field(default_factory=dict)  # module name -> packed weight


def load_model(path: str | Path, quantization: str | None = None) -> LoadedModel:
    """Dispatch on what ``path`` is. ``quantization="gguf"`` keeps a GGUF's quantized tensors packed."""
    p = Path(path).expanduser()
    if not p.exists():
        raise ModelLoadError(f"model path does not exist: {p}")
    if p.is_file():
        if p.suffix.lower() != ".gguf":
            raise ModelLoadError(f"model file must be a .gguf file or an HF folder, got {p}")
        from neural.loader.gguf import load_gguf

        return load_gguf(p, keep_packed=quantization == "gguf")
    if quantization == "gguf":
        raise ModelLoadError(
            f"quantization='gguf' needs a .gguf model file, but {p} is a folder (HF safetensors); "
            "drop the quantization option to load it dense"
        )
    from neural.loader.hf import load_hf_folder

    config, weights = load_hf_folder(p)
    return LoadedModel(config, weights)


def load_model_files(path: str | Path) -> tuple[ModelConfig, WeightIter]:
    """Dense load: every weight comes as a tensor (GGUF quantized tensors dequantized to float32)."""
    loaded = load_model(path)
    return loaded.config, loaded.weights

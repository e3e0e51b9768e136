"""Model loading: HF safetensors folders and GGUF files into (ModelConfig, HF-named tensors)."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import torch

from neural.errors import ModelLoadError
from neural.model_config import ModelConfig

WeightIter = Iterator[tuple[str, torch.Tensor]]


def load_model_files(path: str | Path) -> tuple[ModelConfig, WeightIter]:
    """Dispatch on what ``path`` is; weights come lazily (one tensor at a time) under HF names."""
    p = Path(path).expanduser()
    if not p.exists():
        raise ModelLoadError(f"model path does not exist: {p}")
    if p.is_file():
        if p.suffix.lower() != ".gguf":
            raise ModelLoadError(f"model file must be a .gguf file or an HF folder, got {p}")
        from neural.loader.gguf import load_gguf

        return load_gguf(p)
    from neural.loader.hf import load_hf_folder

    return load_hf_folder(p)

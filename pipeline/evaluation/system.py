"""Build the real pipeline for a system run (pipeline.default_answerer) -> ask(question) + fact reader."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, NoReturn

from pipeline.defaults import DEFAULT_TOP_K
from pipeline.evaluation.scoring import FactReader
from pipeline.seams import Generator


@dataclass
class SystemSetup:
    ask: Callable[[str], Any]
    read_facts: FactReader | None
    describe: dict
    prepare: Callable[[str], Any]      # question -> the passages and the exact prompt, no generation
    # (question, answer) -> the symbolic.Claims every extractor reads; None where the Answerer has none
    read_claims: Callable[[str, str], list] | None = None


class TokenizerOnlyModel:
    """The model seam the answerer needs to build prompts (tokenizer, context length, config) without
    loading weights: context-recall runs measure prompts, never generate."""

    def __init__(self, model: str | None):
        from neural.config import MAX_DEFAULT_MODEL_LEN
        from neural.loader import load_model
        from neural.model_registry import resolve_model
        from neural.tokenizer import Tokenizer

        path = resolve_model(model)
        self.model_config = load_model(path).config      # weights are a lazy iterator: never read here
        self.tokenizer = Tokenizer.from_model_path(path, self.model_config.eos_token_ids)
        self.max_model_len = min(self.model_config.max_position_embeddings, MAX_DEFAULT_MODEL_LEN)

    def chat(self, *_: object, **__: object) -> NoReturn:
        raise RuntimeError("a context-recall run never generates")

    stream = chat


def build_system(kb_dir: str | Path, rules_dir: str | Path, model: str | None, *, index_dir: str | Path | None,
                 seed: int | None, max_tokens: int = 256, max_attempts: int = 3, top_k: int = DEFAULT_TOP_K,
                 generate: bool = True, quantization: str | None = "auto",
                 generator: Generator | None = None) -> SystemSetup:
    """One Answerer with the regenerate policy; every question is asked once and both the first
    attempt (plain RAG) and the final answer are scored from that one result. ``generate=False`` loads
    only the tokenizer (context-recall runs). ``generator``: a model already at hand (a remote one)."""
    from neural.remote_http import is_remote_model
    from pipeline import AskOptions, default_answerer
    from symbolic import Provenance

    engine = generator if generator is not None else (
        None if generate or is_remote_model(model) else TokenizerOnlyModel(model))
    answerer = default_answerer(kb_dir, rules_dir, model, index_dir, engine=engine, quantization=quantization)
    options = AskOptions(top_k=top_k, policy="regenerate", max_attempts=max_attempts, max_tokens=max_tokens,
                         temperature=0.0, seed=seed)

    def read_facts(text: str) -> list[tuple[str, tuple]]:
        # The rule base's own reading of the answer, used only to spot gold-fact conflicts; the
        # verdicts of the verifier under test are never consulted by the scoring.
        rb = answerer.holder.current
        assert rb is not None  # default_answerer always loads rules
        return [(f.relation, f.args) for f, _, _ in rb.extract(text, source=Provenance("answer"))]

    from neural.remote import RemoteGenerator
    generator = answerer.generator
    return SystemSetup(ask=lambda q: answerer.ask(q, options), read_facts=read_facts,
                       prepare=lambda q: answerer.prepare(q, options),
                       read_claims=getattr(answerer, "read_claims", None),
                       describe={"model": (generator.describe() if isinstance(generator, RemoteGenerator)
                                           else model or "default (SmolLM2-135M-Instruct Q4_1)"),
                                 "kb": str(Path(kb_dir).resolve()), "rules": str(Path(rules_dir).resolve()),
                                 "policy": "regenerate", "max_attempts": max_attempts, "top_k": top_k,
                                 "max_tokens": max_tokens, "temperature": 0.0})

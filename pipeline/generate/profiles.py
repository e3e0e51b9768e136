"""Prompt settings per model size: the prompt style and source budget each model answers best with,
as measured by bench/answer_quality.py (bench/RESULTS.md "Prompts per model")."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pipeline.generate.prompts import PromptStyle

if TYPE_CHECKING:
    from neural.model_config import ModelConfig


@dataclass(frozen=True)
class PromptProfile:
    name: str
    style: PromptStyle = field(default_factory=PromptStyle)
    # Tokens of sources in the prompt (pipeline.generate.sources.pack); None: all that the context holds.
    source_budget: int | None = 450
    # The model reads values the patterns and the focus leave unplaced (pipeline.readers.focus.lm_claims).
    lm_extraction: bool = True

    def __post_init__(self) -> None:
        v = self.source_budget
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise ValueError(f"source_budget must be a positive number of tokens or None; got {v!r}")


# ~135M (SmolLM2): the offered abstention sentence keeps a weak model from inventing. 600 tokens of sources: context
# recall 0.952 on the shipped set and 0.915 on an unseen KB (blind/03) against 0.935 / 0.831 at 450, for about 210 ms
# more prefill a question; the verified answers on tuning, tuning2 and blind/03-05 are the same at both (bench/RESULTS.md
# "Prompt budget", session 34).
# Its reading of values into the rule vocabulary is off: on the labelled default set it made 3 claims, 1 right
# (eval --mode extraction, bench/RESULTS.md "Extraction").
SMALL = PromptProfile("small", PromptStyle("sources", abstain_hint=True), 600, lm_extraction=False)
# >= 0.3B (Qwen2.5-0.5B), measured by bench/answer_quality.py on 8 factual questions (bench/RESULTS.md
# "Prompts per model"): no escape hatch (with one it abstained on 6 of 8), the DESIGN §4 "Context" form,
# sources without their paths (with them it copied "[1] (doc) ## ..." instead of answering), Chinese wording
# for Chinese questions, and room for more passages: 3/8 gold values vs 1/8 for the first profile.
# Its reading of values is off too: with the vocabulary reader in place (pipeline.readers.vocabulary) it made
# 5 claims on the two labelled sets, 1 right (eval --mode extraction; bench/RESULTS.md "Extraction").
MEDIUM = PromptProfile("medium", PromptStyle("context", abstain_hint=False, doc_ids=False, localize=True), 900,
                       lm_extraction=False)
# A model on an OpenAI-compatible server (neural.remote): its size is not known here, and deployments that run
# vLLM or SGLang serve models of 0.5B and up, so MEDIUM's prompt (a choice, not measured on a remote model);
# model extraction off: its one-token grammar needs a logits processor, which HTTP cannot carry.
REMOTE = PromptProfile("remote", MEDIUM.style, MEDIUM.source_budget, lm_extraction=False)
PROFILES = {p.name: p for p in (SMALL, MEDIUM, REMOTE)}
SMALL_MAX_PARAMS = 300e6


def parameter_count(model_config: ModelConfig) -> float:
    """Weights of a decoder-only transformer from its shape (embeddings once, attention + MLP per layer)."""
    h = model_config.hidden_size
    kv = model_config.num_key_value_heads * model_config.head_dim
    per_layer = 2 * h * h + 2 * h * kv + 3 * h * model_config.intermediate_size
    return model_config.vocab_size * h + model_config.num_hidden_layers * per_layer


def profile_for(generator: object) -> PromptProfile:
    """The profile for the generator's model (REMOTE for a served one; SMALL when it exposes no model config)."""
    if getattr(generator, "is_remote", False):
        return REMOTE
    cfg = getattr(generator, "model_config", None)
    if cfg is None:
        return SMALL
    return SMALL if parameter_count(cfg) < SMALL_MAX_PARAMS else MEDIUM

"""ModelConfig: the architecture hyper-parameters the engine needs, from config.json or GGUF metadata."""
from __future__ import annotations

from dataclasses import dataclass, field

from neural.errors import UnsupportedModelError

SUPPORTED_ARCHITECTURES = {"LlamaForCausalLM": "llama", "Qwen2ForCausalLM": "qwen2"}


@dataclass
class ModelConfig:
    arch: str  # "llama" | "qwen2"
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    rms_norm_eps: float
    rope_theta: float
    max_position_embeddings: int
    tie_word_embeddings: bool
    attention_bias: bool  # q/k/v biases (Qwen2 always; Llama when attention_bias=True)
    rope_scaling: dict | None = None
    eos_token_ids: list[int] = field(default_factory=list)
    bos_token_id: int | None = None

    @classmethod
    def from_hf_dict(cls, cfg: dict) -> "ModelConfig":
        archs = cfg.get("architectures") or []
        arch = next((SUPPORTED_ARCHITECTURES[a] for a in archs if a in SUPPORTED_ARCHITECTURES), None)
        if arch is None:
            raise UnsupportedModelError(
                f"unsupported architecture {archs or cfg.get('model_type')!r}; "
                f"supported: {sorted(SUPPORTED_ARCHITECTURES)}"
            )
        n_heads = cfg["num_attention_heads"]
        hidden = cfg["hidden_size"]
        eos = cfg.get("eos_token_id")
        eos_ids = [] if eos is None else ([eos] if isinstance(eos, int) else list(eos))
        rope_scaling = cfg.get("rope_scaling")
        rope_theta = cfg.get("rope_theta")
        # transformers 5 nests theta/scaling under rope_parameters
        params = cfg.get("rope_parameters") or {}
        if rope_theta is None:
            rope_theta = params.get("rope_theta", 10000.0)
        if rope_scaling is None and params.get("rope_type", "default") != "default":
            rope_scaling = params
        if rope_scaling and rope_scaling.get("rope_type", rope_scaling.get("type")) not in (
            None, "default", "llama3", "linear"
        ):
            raise UnsupportedModelError(f"unsupported rope_scaling {rope_scaling!r}")
        if rope_scaling and rope_scaling.get("rope_type", rope_scaling.get("type")) == "default":
            rope_scaling = None
        return cls(
            arch=arch,
            vocab_size=cfg["vocab_size"],
            hidden_size=hidden,
            intermediate_size=cfg["intermediate_size"],
            num_hidden_layers=cfg["num_hidden_layers"],
            num_attention_heads=n_heads,
            num_key_value_heads=cfg.get("num_key_value_heads") or n_heads,
            head_dim=cfg.get("head_dim") or hidden // n_heads,
            rms_norm_eps=cfg.get("rms_norm_eps", 1e-6),
            rope_theta=float(rope_theta),
            max_position_embeddings=cfg.get("max_position_embeddings", 2048),
            tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)),
            attention_bias=arch == "qwen2" or bool(cfg.get("attention_bias", False)),
            rope_scaling=rope_scaling,
            eos_token_ids=eos_ids,
            bos_token_id=cfg.get("bos_token_id"),
        )

"""Test helper: tiny random-weight Llama/Qwen2 checkpoints saved the HF way, plus a WordLevel tokenizer."""
from __future__ import annotations

import json
from pathlib import Path

import torch

VOCAB = 96
EOS_ID = 2


def _tokenizer_json(folder: Path, add_bos: bool = False) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers, decoders, processors

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for i in range(3, VOCAB):
        vocab[f"w{i}"] = i
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    from tokenizers import AddedToken

    tok.add_special_tokens([AddedToken("<unk>", special=True), AddedToken("<s>", special=True), AddedToken("</s>", special=True)])
    if add_bos:  # like Llama's tokenizers: encode() puts BOS first unless told not to
        tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    tok.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "bos_token": "<s>", "eos_token": "</s>",
        "chat_template": "{% for m in messages %}<s> {{ m['role'] }} {{ m['content'] }} </s> {% endfor %}"
                         "{% if add_generation_prompt %}<s> assistant{% endif %}",
    }))


def make_tiny_model(folder: Path, arch: str = "llama", seed: int = 0, add_bos: bool = False, **overrides) -> Path:
    """Save a tiny random model (fp32 safetensors) with transformers; returns the folder. ``add_bos``: its
    tokenizer adds BOS when encoding, as Llama's do (the chat template writes one too)."""
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    common = dict(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
        rms_norm_eps=1e-6, bos_token_id=1, eos_token_id=EOS_ID, initializer_range=0.1,
    )
    common.update(overrides)
    if arch == "llama":
        cfg = LlamaConfig(rope_theta=10000.0, tie_word_embeddings=False, **common)
        model = LlamaForCausalLM(cfg)
    elif arch == "qwen2":
        cfg = Qwen2Config(rope_theta=1000000.0, tie_word_embeddings=True, **common)
        model = Qwen2ForCausalLM(cfg)
        with torch.no_grad():  # random init leaves biases at zero: make them matter
            for layer in model.model.layers:
                for proj in (layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj):
                    proj.bias.normal_(0, 0.1)
    else:
        raise ValueError(arch)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder, safe_serialization=True)
    _tokenizer_json(folder, add_bos)
    return folder


def load_hf_reference(folder: Path):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder, torch_dtype=torch.float32).eval()
    model.generation_config.eos_token_id = None  # compare fixed-length greedy runs
    model.generation_config.pad_token_id = 0
    return model


def hf_greedy(model, prompt_ids: list[int], max_new_tokens: int) -> list[int]:
    with torch.no_grad():
        out = model.generate(
            torch.tensor([prompt_ids]), max_new_tokens=max_new_tokens, do_sample=False,
            attention_mask=torch.ones(1, len(prompt_ids), dtype=torch.long),
        )
    return out[0, len(prompt_ids):].tolist()

"""Loading failures give clear errors: missing/corrupt files, unknown architectures, bad prompts."""
from __future__ import annotations

import json
import shutil

import pytest

from engine_tiny_models import make_tiny_model
from neural import (
    Engine,
    EngineConfig,
    EngineError,
    InvalidRequestError,
    ModelLoadError,
    PromptTooLongError,
    SamplingParams,
    UnsupportedModelError,
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return make_tiny_model(tmp_path_factory.mktemp("m"), "llama")


def test_missing_path(tmp_path):
    with pytest.raises(ModelLoadError, match="does not exist"):
        Engine(EngineConfig(model=str(tmp_path / "nope")))


def test_folder_without_config(tmp_path):
    with pytest.raises(ModelLoadError, match="config.json"):
        Engine(EngineConfig(model=str(tmp_path)))


def test_corrupt_safetensors(folder, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(folder, bad)
    (bad / "model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00not json at all")
    with pytest.raises(ModelLoadError, match="safetensors"):
        Engine(EngineConfig(model=str(bad)))


def test_missing_weights(folder, tmp_path):
    from safetensors.torch import load_file, save_file

    bad = tmp_path / "partial"
    shutil.copytree(folder, bad)
    tensors = load_file(str(bad / "model.safetensors"))
    del tensors["model.layers.1.mlp.down_proj.weight"]
    save_file(tensors, str(bad / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(ModelLoadError, match="missing weights.*layers.1.mlp.down_proj"):
        Engine(EngineConfig(model=str(bad)))


def test_unknown_architecture(folder, tmp_path):
    bad = tmp_path / "gpt"
    shutil.copytree(folder, bad)
    cfg = json.loads((bad / "config.json").read_text())
    cfg["architectures"] = ["GPTNeoXForCausalLM"]
    (bad / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(UnsupportedModelError, match="GPTNeoXForCausalLM"):
        Engine(EngineConfig(model=str(bad)))


def test_corrupt_and_wrong_type_files(tmp_path):
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"GGUF" + b"\xff" * 64)
    with pytest.raises(ModelLoadError, match="GGUF"):
        Engine(EngineConfig(model=str(junk)))
    txt = tmp_path / "model.bin"
    txt.write_bytes(b"x")
    with pytest.raises(ModelLoadError, match=".gguf"):
        Engine(EngineConfig(model=str(txt)))


def test_unknown_gguf_architecture(tmp_path):
    import numpy as np
    from gguf import GGUFWriter

    path = tmp_path / "mamba.gguf"
    w = GGUFWriter(str(path), "mamba")
    w.add_block_count(1)
    w.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with pytest.raises(UnsupportedModelError, match="mamba"):
        Engine(EngineConfig(model=str(path)))


def test_bad_config_values():
    for kw in ({"dtype": "int8"}, {"block_size": 0}, {"device": "tpu"}, {"kv_cache_bytes": -1}):
        with pytest.raises(EngineError):
            EngineConfig(**kw)


def test_bad_prompts(folder):
    eng = Engine(EngineConfig(model=str(folder), max_model_len=16, block_size=4, kv_cache_bytes=1 << 20))
    with pytest.raises(InvalidRequestError, match="empty"):
        eng.add_request("", SamplingParams())
    with pytest.raises(InvalidRequestError, match="empty"):
        eng.add_request([], SamplingParams())
    with pytest.raises(PromptTooLongError, match="max_model_len is 16"):
        eng.add_request(list(range(3, 19)), SamplingParams())
    with pytest.raises(InvalidRequestError, match=r"\[0, 96\)"):
        eng.add_request([1, 500], SamplingParams())
    with pytest.raises(InvalidRequestError, match="SamplingParams"):
        eng.add_request([1, 2], {"temperature": 0.5})
    eng.add_request([1, 5], SamplingParams(max_tokens=2), request_id="x")
    with pytest.raises(InvalidRequestError, match="already in use"):
        eng.add_request([1, 5], SamplingParams(), request_id="x")
    # a generation that reaches max_model_len stops with "length" instead of overflowing
    out = eng.generate([1] + list(range(3, 12)), SamplingParams(max_tokens=100, ignore_eos=True))[0]
    assert out.finish_reason == "length" and len(out.prompt_token_ids) + len(out.token_ids) == 16


def test_chinese_text_round_trips_without_error(folder):
    eng = Engine(EngineConfig(model=str(folder), block_size=4, kv_cache_bytes=1 << 20))
    out = eng.generate("你好，世界 w5", SamplingParams(max_tokens=3))[0]  # unknown words map to <unk>
    assert out.prompt_token_ids[0] == 0 and out.finished

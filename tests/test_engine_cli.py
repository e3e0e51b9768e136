"""`verirag generate` end to end on a tiny model, and its bad-input errors."""
from __future__ import annotations

import pytest

from api.cli import main
from engine_tiny_models import hf_greedy, load_hf_reference, make_tiny_model


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return make_tiny_model(tmp_path_factory.mktemp("cli"), "llama", seed=5)


def test_generate_raw_greedy_matches_hf(folder, capsys):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    ids = tok.encode("w10 w11 w12").ids
    hf = load_hf_reference(folder)
    hf.generation_config.eos_token_id = 2
    ref = hf_greedy(hf, ids, 6)
    if 2 in ref:
        ref = ref[: ref.index(2)]
    assert main(["generate", "w10 w11 w12", "--raw", "--model", str(folder), "--max-tokens", "6"]) == 0
    assert capsys.readouterr().out.strip() == tok.decode(ref)


def test_generate_stream_and_chat(folder, capsys):
    assert main(["generate", "w5 w6", "--model", str(folder), "--max-tokens", "4", "--stream", "--stats"]) == 0
    cap = capsys.readouterr()
    assert "prompt +" in cap.err and cap.out.endswith("\n")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["generate", "hi", "--model", "/no/such/model.gguf"], "does not exist"),
        (["generate", "hi", "--temperature", "-1"], "temperature"),
        (["generate", "hi", "--max-tokens", "0"], "max_tokens"),
        (["generate", "   "], "empty"),
    ],
)
def test_generate_bad_input(argv, message, capsys):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "verirag generate: error:" in err and message in err

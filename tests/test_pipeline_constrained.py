"""Grammar-constrained decoding: under the JSON-schema constraint every generation parses and validates."""
from __future__ import annotations

import json
import random

import pytest
import torch

from neural.constrained.processor import JsonSchemaLogitsProcessor, TokenVocabulary
from neural.constrained.machine import JsonMachine, SchemaError

TRIPLES = {"type": "array", "maxItems": 3, "items": {"type": "object", "properties": {
    "subject": {"type": "string", "maxLength": 40},
    "relation": {"type": "string", "enum": ["annual_leave_days", "max_discount"]},
    "object": {"type": "number"}}}}
EOS = "<eos>"
TOY = list('[]{},:" abcdefghijklmnopqrstuvwxyz0123456789-.E\\') + [
    '"a', '":', '", "', '{"', '"}', "subject", "relation", "object", '"max_discount"', "1.", "e+", "},{",
    ' "', "ob", "je", 'ct":', "\n", "中文", "\ufffd", "true", "null", '"]', EOS]


def validate(value, schema) -> None:
    """An independent check of the parsed value against the schema subset."""
    kind = schema.get("type")
    if "enum" in schema:
        assert value in schema["enum"]
    elif kind == "array":
        assert isinstance(value, list) and len(value) <= schema.get("maxItems", 10**9)
        for v in value:
            validate(v, schema["items"])
    elif kind == "object":
        assert isinstance(value, dict) and list(value) == list(schema["properties"])
        for k, sub in schema["properties"].items():
            validate(value[k], sub)
    elif kind == "string":
        assert isinstance(value, str) and len(value) <= schema.get("maxLength", 10**9)
    elif kind == "number":
        assert isinstance(value, (int, float)) and not isinstance(value, bool)


def toy_generate(schema, seed: int, max_tokens: int, greedy: bool = False) -> str:
    vocab = TokenVocabulary.from_strings(TOY, {len(TOY) - 1})
    proc = JsonSchemaLogitsProcessor(schema, vocab=vocab, max_tokens=max_tokens)
    g = torch.Generator().manual_seed(seed)
    ids: list[int] = []
    for _ in range(max_tokens):
        logits = proc(ids, torch.randn(len(TOY), generator=g) * 3)
        tid = int(logits.argmax()) if greedy else int(torch.multinomial(torch.softmax(logits, -1), 1, generator=g))
        if tid == len(TOY) - 1:
            break
        ids.append(tid)
    return "".join(TOY[i] for i in ids)


@pytest.mark.parametrize("seed", range(60))
def test_random_generation_on_toy_vocab_always_parses(seed):
    max_tokens = random.Random(seed).randint(4, 50)
    text = toy_generate(TRIPLES, seed, max_tokens)
    validate(json.loads(text), TRIPLES)


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"ok": {"type": "boolean"}, "n": {"type": "integer"}, "x": {"type": "null"}}},
    {"type": "array", "minItems": 2, "items": {"type": "string", "maxLength": 3}},
    {"enum": ["yes", "no", 1]},
])
def test_other_schemas_parse_greedy_and_random(schema):
    for seed in range(10):
        for greedy in (False, True):
            text = toy_generate(schema, seed, 30, greedy)
            value = json.loads(text)
            if "enum" in schema:
                assert value in schema["enum"]
            elif schema["type"] == "array":
                assert len(value) >= 2 and all(isinstance(v, str) and len(v) <= 3 for v in value)
            else:
                assert list(value) == ["ok", "n", "x"] and isinstance(value["n"], int) and value["x"] is None


def test_machine_accepts_valid_and_rejects_invalid_prefixes():
    m = JsonMachine(TRIPLES)
    ok = '[{"subject": "full-time \\u00e9", "relation":"max_discount","object":-1.5e3}]'
    assert m.can_finish(m.feed(m.initial(), ok))
    for bad in ['{', '[{"subj":', '[{"subject":1', '[{"subject":"a","relation":"other"', '[01', '[]]',
                '[{"subject":"a\n']:
        assert m.feed(m.initial(), bad) is None, bad
    # every prefix of a valid document can be completed to valid JSON by the shortest completion
    for k in range(len(ok)):
        state = m.feed(m.initial(), ok[:k])
        json.loads(ok[:k] + m.completion(state))


def test_unsupported_schema_is_a_clear_error():
    with pytest.raises(SchemaError, match="'type' must be one of object, array"):
        JsonMachine({"type": "tuple"})
    with pytest.raises(SchemaError, match="tuple validation"):
        JsonMachine({"type": "array", "items": [{"type": "string"}]})


@pytest.mark.slow
def test_real_model_generation_under_constraint_parses():
    from neural import SamplingParams
    from pipeline_fakes import default_engine
    engine = default_engine()
    prompt = engine.tokenizer.apply_chat_template([{"role": "user", "content": (
        "Full-time employees get 25 days of annual leave. Output JSON triples (subject, relation, object).")}])
    outs = []
    for seed, temp in [(0, 0.0), (1, 1.0), (2, 1.3)]:
        proc = JsonSchemaLogitsProcessor(TRIPLES, engine.tokenizer, max_tokens=24)
        sp = SamplingParams(max_tokens=24, temperature=temp, seed=seed, logits_processors=[proc])
        outs.append(engine.generate(prompt, sp)[0].text)
    for text in outs:
        validate(json.loads(text), TRIPLES)

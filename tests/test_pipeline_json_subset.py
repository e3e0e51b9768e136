"""The JSON Schema subset of the constrained decoder: what is refused (keyword and place named), and that what
is accepted (free objects, unions, any value, arrays without items) always comes out valid — checked with
jsonschema-rs, a validator independent of the decoder."""
from __future__ import annotations

import json
import random
import re

import jsonschema_rs
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neural.constrained.processor import JsonSchemaLogitsProcessor, TokenVocabulary
from neural.constrained.machine import JsonMachine, SchemaError
from neural.constrained.schema import MAX_DEPTH, UnsupportedSchema, check_schema

EOS = "<eos>"
TOY = list('[]{},:" abcdefghijklmnopqrstuvwxyz0123456789-.eE+\\') + [
    '{"', '":', '", "', '"}', '"]', '[{', '}]', "}}", "]]", "[[", '{"a', 'b":', "true", "false", "null", "tr",
    "nu", "1.", "e+", ', "', "中", "\ufffd", "\n", EOS]
PERSON = {"type": "object", "properties": {
    "name": {"type": "string", "maxLength": 12}, "age": {"type": "integer"},
    "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 3},
    "nick": {"type": ["string", "null"], "maxLength": 4}, "ok": {"type": "boolean"}},
    "required": ["name", "age"], "additionalProperties": False}
ACCEPTED = [
    {"type": "object"},                                                   # json_object: any object
    {},                                                                   # any value
    {"type": "array"},                                                    # any items
    {"type": "object", "additionalProperties": {"type": "integer"}},     # any keys, integer values
    {"type": ["integer", "number", "null"]},
    {"type": ["object", "array"], "maxItems": 1},
    PERSON,
    {"properties": {"x": {"const": [1, {"y": None}]}}},                 # type implied by 'properties'
    {"type": "object", "properties": {}, "additionalProperties": False},  # exactly {}
]


def toy_generate(schema: dict, seed: int, max_tokens: int) -> tuple[str, JsonSchemaLogitsProcessor]:
    """Sample under the constraint from random logits; returns the text and the processor (its dead_end)."""
    vocab = TokenVocabulary.from_strings(TOY, {len(TOY) - 1})
    proc = JsonSchemaLogitsProcessor(schema, vocab=vocab, max_tokens=max_tokens)
    g = torch.Generator().manual_seed(seed)
    ids: list[int] = []
    for _ in range(max_tokens):
        logits = proc(ids, torch.randn(len(TOY), generator=g) * 3)
        tid = int(torch.multinomial(torch.softmax(logits, -1), 1, generator=g))
        if tid == len(TOY) - 1:
            break
        ids.append(tid)
    return "".join(TOY[i] for i in ids), proc


@pytest.mark.parametrize("schema", ACCEPTED, ids=[json.dumps(s)[:40] for s in ACCEPTED])
def test_random_generations_validate_against_an_independent_validator(schema):
    validator = jsonschema_rs.validator_for(schema)
    shortest = len(JsonMachine(schema).completion(JsonMachine(schema).initial()))
    for seed in range(12):
        # any budget that fits the shortest valid JSON (one character a token at worst) ends complete
        text, _ = toy_generate(schema, seed, random.Random(seed).randint(shortest, 60))
        value = json.loads(text)
        assert validator.is_valid(value), (schema, text)


def test_json_object_writes_keys_and_nested_values_not_only_braces():
    texts = [toy_generate({"type": "object"}, seed, 60)[0] for seed in range(20)]
    values = [json.loads(t) for t in texts]
    assert all(isinstance(v, dict) for v in values)
    assert any(v for v in values), texts                  # some object has a member
    assert any(isinstance(x, (dict, list)) for v in values for x in v.values()), texts


def test_every_prefix_of_free_json_completes_to_valid_json():
    m = JsonMachine({"type": "object"})
    doc = '{"a": [1, {"b": null}, "x\\"y"], "c": {}, "d": -0.5e+3, "e": true}'
    assert m.can_finish(m.feed(m.initial(), doc))
    for k in range(len(doc)):
        state = m.feed(m.initial(), doc[:k])
        assert isinstance(json.loads(doc[:k] + m.completion(state)), dict), doc[:k]
    for bad in ['[', '{a', '{"a" 1', '{"a":1,}', '{"a":1 "b"', '{,', '{"a":tru ', '{"a":01}', '{"a":1e999']:
        assert m.feed(m.initial(), bad) is None, bad


def test_unions_take_each_type_and_nothing_else():
    m = JsonMachine({"type": ["string", "null"], "maxLength": 2})
    for ok in ['"ab"', "null"]:
        assert m.can_finish(m.feed(m.initial(), ok)), ok
    for bad in ['"abc"', "1", "true", "{"]:
        assert m.feed(m.initial(), bad) is None, bad


def test_free_values_stop_nesting_at_a_bounded_depth_and_still_close():
    m = JsonMachine({})
    state = m.initial()
    depth = 0
    while (nxt := m.feed(state, "[")) is not None:
        state, depth = nxt, depth + 1
    assert 30 < depth < 100
    assert json.loads("[" * depth + m.completion(state)) is not None


@pytest.mark.parametrize("schema, keyword, path", [
    ({"type": "integer", "minimum": 0}, "minimum", "$"),
    ({"type": "object", "properties": {"p": {"type": "string", "pattern": "^a"}}}, "pattern", "$.properties.p"),
    ({"type": "string", "format": "date"}, "format", "$"),
    ({"anyOf": [{"type": "string"}]}, "anyOf", "$"),
    ({"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}}, "$ref", "$.properties.a"),
    ({"type": "array", "items": [{"type": "string"}]}, "items", "$"),
    ({"type": "array", "items": {"type": "string", "minLength": 1}}, "minLength", "$.items"),
    ({"type": "object", "properties": {"a": {}}, "required": ["b"]}, "required", "$"),
    ({"type": "integer", "maxLength": 3}, "maxLength", "$"),
    ({"type": "string", "enum": ["a", 1]}, "enum", "$"),
    ({"type": "tuple"}, "type", "$"),
    ({"type": []}, "type", "$"),
    ({"enum": []}, "enum", "$"),
    ({"enum": [float("nan")]}, "enum", "$"),
    ({"type": "array", "minItems": 3, "maxItems": 2}, "maxItems", "$"),
    ({"type": "array", "maxItems": -1}, "maxItems", "$"),
    ({"items": {}, "properties": {}}, "type", "$"),                     # keywords of two types, no type
])
def test_outside_the_subset_names_the_keyword_and_where(schema, keyword, path):
    with pytest.raises(UnsupportedSchema) as err:
        check_schema(schema)
    assert err.value.keyword == keyword and err.value.path == path
    assert str(err.value).startswith(path + ": ")


def test_not_an_object_too_deep_and_too_large_are_refused():
    for bad in ("string", ["a"], None, 3):
        with pytest.raises(UnsupportedSchema, match="must be a JSON object"):
            check_schema(bad)
    deep: dict = {"type": "string"}
    for _ in range(MAX_DEPTH + 1):
        deep = {"type": "array", "items": deep}
    with pytest.raises(UnsupportedSchema, match="nest deeper"):
        check_schema(deep)
    wide = {"type": "object", "properties": {f"p{i}": {"type": "null"} for i in range(3000)}}
    with pytest.raises(UnsupportedSchema, match="more than 2000"):
        check_schema(wide)


def test_annotations_are_accepted_and_constrain_nothing():
    check_schema({"title": "T", "description": "d", "$schema": "https://json-schema.org/draft/2020-12/schema",
                  "type": "object", "properties": {"a": {"type": "string", "default": "x", "examples": ["y"]}}})


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(
    ["object", "array", "string", "number", "integer", "boolean", "null", "x"]))
_KEYS = st.sampled_from(["type", "properties", "items", "enum", "const", "required", "additionalProperties",
                         "maxLength", "minItems", "maxItems", "a", "b", "minimum", "title"])
_JSON = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(_KEYS, inner, max_size=4)), max_leaves=12)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
@given(_JSON, st.integers(0, 2**16))
def test_any_json_as_a_schema_is_refused_clearly_or_generates_valid_output(schema, seed):
    try:
        machine = JsonMachine(schema)
    except SchemaError:
        return
    # an accepted schema must be a JSON Schema jsonschema-rs accepts, and what is generated must validate
    validator = jsonschema_rs.validator_for(schema)
    shortest = len(machine.completion(machine.initial()))
    text, proc = toy_generate(schema, seed, shortest + 1 + seed % 30)
    if proc.dead_end is not None:              # only where no toy token spells what must come next
        state = machine.feed(machine.initial(), text)
        assert state is not None and not any(machine.feed(state, tok) for tok in TOY[:-1]), (schema, text)
        return
    assert validator.is_valid(json.loads(text)), (schema, text)


def test_a_constant_the_vocabulary_cannot_spell_ends_the_reply_with_the_reason_instead_of_nan():
    # the toy vocabulary has no capital letters: the one allowed value cannot be written past '{"additional'
    text, proc = toy_generate({"enum": [{"additionalProperties": None}]}, seed=0, max_tokens=40)
    assert text == '{"additional'
    assert re.fullmatch(r"after (10|11|12) tokens no token of the vocabulary continues the JSON", proc.dead_end or "")

"""`response_format` on /v1/chat/completions: `text`, `json_object` or `json_schema` (the constrained decoder's
JSON Schema subset, neural/constrained/schema.py) -> the logits processor that makes the reply valid JSON."""
from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any

from api.errors import ApiError
from neural.constrained.processor import JsonSchemaLogitsProcessor, vocabulary_for
from neural.constrained.schema import UnsupportedSchema, check_schema

PARAM = "response_format"
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_KINDS = ("text", "json_object", "json_schema")
DESCRIPTION = (
    "`{\"type\": \"text\"}` (the default), `{\"type\": \"json_object\"}` (the reply is one JSON object) or "
    "`{\"type\": \"json_schema\", \"json_schema\": {\"name\", \"schema\", \"strict\"}}` (the reply validates "
    "against `schema`, strict or not). Enforced token by token by the constrained decoder, whose JSON Schema "
    "subset is: type (object, array, string, number, integer, boolean, null, or a list of them), enum, const, "
    "properties (all written, in order), required, additionalProperties, items, minItems, maxItems, maxLength, "
    "and annotations (title, description, default, examples, ...); any other keyword is a 400 naming it. "
    "`stop` cannot be combined with a JSON format. When `max_tokens` ends the reply before its JSON closes, "
    "`finish_reason` is `length` and the choice's `finish_message` says so. Not for model `verirag-rag`.")


@dataclass(frozen=True)
class JsonFormat:
    """A JSON reply was asked for: ``schema`` (in the decoder's subset) constrains it."""

    kind: str
    schema: dict
    name: str


def _bad(message: str, code: str = "invalid_value") -> ApiError:
    return ApiError(400, f"response_format: {message}", param=PARAM, code=code)


def parse_response_format(raw: dict[str, Any] | None) -> JsonFormat | None:
    """None for plain text; a JsonFormat for json_object/json_schema; a 400 naming what is wrong otherwise."""
    if raw is None or raw.get("type") == "text":
        return None
    kind = raw.get("type")
    if kind == "json_object":
        return JsonFormat("json_object", {"type": "object"}, "json_object")
    if kind != "json_schema":
        raise _bad(f"'type' must be one of {', '.join(_KINDS)}, got {json.dumps(kind)}")
    spec = raw.get("json_schema")
    if not isinstance(spec, dict):
        raise _bad("type 'json_schema' needs a 'json_schema' object with 'name' and 'schema'")
    name = spec.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise _bad("json_schema.name must be 1..64 letters, digits, '_' or '-'")
    if not isinstance(spec.get("strict", False), (bool, type(None))):
        raise _bad("json_schema.strict must be true or false")
    schema = spec.get("schema", {})   # OpenAI's default: no schema, any JSON value
    try:
        check_schema(schema)
    except UnsupportedSchema as exc:
        raise _bad(f"json_schema.schema at {exc.path}: {exc.reason}", "unsupported_schema") from exc
    return JsonFormat("json_schema", schema, name)


def token_budget(max_tokens: int) -> int:
    """Tokens the JSON may take: one fewer than max_tokens, so the end-of-turn token still fits and a JSON
    closed in time ends with finish_reason "stop"."""
    return max(1, max_tokens - 1)


async def json_processor(fmt: JsonFormat, tokenizer: Any, max_tokens: int) -> JsonSchemaLogitsProcessor:
    """The request's own processor (it tracks the reply's prefix). The tokenizer's decoded vocabulary is
    built once (seconds for 49k tokens) in a worker thread: never on the event loop or the engine's thread."""
    def build() -> JsonSchemaLogitsProcessor:
        vocab = vocabulary_for(tokenizer)
        return JsonSchemaLogitsProcessor(fmt.schema, vocab=vocab, max_tokens=token_budget(max_tokens))

    return await asyncio.to_thread(build)


def incomplete_message(fmt: JsonFormat, text: str, tokens: int, reason: str = "length") -> str | None:
    """Why a reply is not the JSON asked for (None when it parses): cut by max_tokens, or ended because the
    model's vocabulary has no token for what the schema requires next (a constant it cannot spell)."""
    try:
        json.loads(text)
        return None
    except ValueError:
        pass
    valid = "a JSON object" if fmt.kind == "json_object" else f"JSON valid against schema {fmt.name!r}"
    if reason == "length":
        return (f"the token limit ended the reply after {tokens} tokens, before its JSON was complete: the "
                f"content is a prefix of {valid}, not JSON itself; raise max_tokens")
    return (f"the reply ended after {tokens} tokens because no token of the model's vocabulary continues it: "
            f"the content is a prefix of {valid}, not JSON itself; the schema asks for text this model "
            f"cannot write")

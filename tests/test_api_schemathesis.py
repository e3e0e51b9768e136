"""Property-based run of schemathesis against the OpenAPI schema: no request may produce a 5xx."""
from __future__ import annotations

import tempfile
from pathlib import Path

import schemathesis
from api_support import FakeAnswerer, FakeEngine, FakeRulesHolder
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from api.app import create_app
from api.settings import Settings
from neural.async_engine import AsyncEngine, EngineClient

ADMIN = "admin-key-schema"
_tmp = Path(tempfile.mkdtemp(prefix="verirag-schemathesis-"))
(_tmp / "kb").mkdir()
(_tmp / "kb" / "a.md").write_text("hello", encoding="utf-8")
(_tmp / "rules.txt").write_text("R1: a rule\n", encoding="utf-8")
_engine = FakeEngine(num_blocks=4096, step_delay_s=0.0)
_async_engine = AsyncEngine(_engine)
app = create_app(Settings(kb_dir=_tmp / "kb", index_dir=_tmp / "index", admin_api_key=ADMIN,
                          max_tokens_limit=8),
                 async_engine=_async_engine, answerer=FakeAnswerer(EngineClient(_async_engine)),
                 retriever=object(), rulebase_holder=FakeRulesHolder(_tmp / "rules.txt"))
schema = schemathesis.openapi.from_asgi("/openapi.json", app)


@schema.parametrize()
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors(case) -> None:
    case.headers = {**(case.headers or {}), "X-API-Key": ADMIN}
    response = case.call()
    case.validate_response(response, checks=[not_a_server_error])

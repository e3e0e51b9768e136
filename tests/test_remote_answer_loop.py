"""The answer loop generating on a remote OpenAI-compatible server (verirag's own, over a scripted engine):
the same statuses as with a local generator, retrieval and verification local, and a remote that is down
answered 503 naming it by `verirag serve`'s app."""
from __future__ import annotations

import json
from types import SimpleNamespace

import httpx
import pytest
from api_support import live_server
from pipeline_fakes import FakePassage, FixedRetriever, ScriptedGenerator, rulebase_of
from remote_support import MODEL, ScriptedEngine, closed_port, verirag_server

from api.app import create_app
from api.settings import Settings
from api.state import build_components
from neural.errors import RemoteModelNotServedError
from neural.remote import RemoteConfig, RemoteGenerator
from pipeline import Answerer, AnswererConfig, AskOptions


RULES = """
type group "employee group" aka "employees"
entity group full_time "full-time employee" aka "full-time employees"
relation annual_leave_days(g: group, days: duration[day]) "annual leave" unique
pattern leave_en: "{d:duration} of annual leave" -> annual_leave_days(full_time, ?d)
rule LEAVE_MAX "annual leave is at most 30 days": if annual_leave_days(?g, ?d) and ?d > 30 day then violation "annual leave cannot exceed 30 days"
"""
PASSAGES = [FakePassage("hr/leave.md", "Full-time employees get 25 days of annual leave per year.", 0.9),
            FakePassage("hr/remote.md", "Remote work is allowed up to 3 days per week with approval.", 0.5, start=100)]
GOOD = "Full-time employees get 25 days of annual leave [1]."
WRONG = "Full-time employees get 28 days of annual leave [1]."
VIOLATING = "Full-time employees get 45 days of annual leave [1]."
QUESTION = "How much annual leave do full-time employees get?"
# the symbolic answer, quoted answers and model extraction off, so the drafts alone decide, as in test_pipeline_loop
CONFIG = {"symbolic_answers": False, "lm_extraction": False, "quote_answers": False}


@pytest.fixture(scope="module")
def rulebase(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"), "leave.rules")


def _summary(result) -> tuple:
    r = result if isinstance(result, dict) else result.to_dict()
    return (r["status"], r["answer"], [a["answer"] for a in r["attempts"]],
            [(c["relation"], c["verdict"]) for c in r["claims"]], [c["doc_id"] for c in r["citations"]],
            (r.get("flagged_draft") or {}).get("answer"))


@pytest.mark.parametrize("script, status", [([GOOD], "verified"), ([WRONG, GOOD], "regenerated"),
                                            ([VIOLATING, WRONG, VIOLATING], "abstained")])
def test_the_same_statuses_as_a_local_generator(rulebase, script, status) -> None:
    local = Answerer(ScriptedGenerator(list(script)), FixedRetriever(PASSAGES), rulebase, AnswererConfig(**CONFIG))
    expected = local.ask(QUESTION)
    assert expected.status == status
    engine = ScriptedEngine(list(script) * 2)          # once for ask, once for ask_stream
    with verirag_server(engine) as url:
        remote = Answerer(RemoteGenerator(RemoteConfig(url, served_model=MODEL)), FixedRetriever(PASSAGES), rulebase,
                          AnswererConfig(**CONFIG))
        got = remote.ask(QUESTION)
        events = list(remote.ask_stream(QUESTION))
    assert _summary(got) == _summary(expected)
    assert _summary(events[-1]["result"]) == _summary(expected)
    streamed = "".join(e["text"] for e in events if e["type"] == "token" and e["attempt"] == len(script) - 1)
    assert streamed == script[-1]
    # retrieval stayed here: the remote model saw the local sources and the question
    assert "[1]" in engine.prompts[0] and "25 days of annual leave" in engine.prompts[0] and QUESTION in engine.prompts[0]
    assert got.usage["completion_tokens"] == sum(len(s.encode()) for s in script)   # the server's counts


def test_model_extraction_is_off_with_a_reason(rulebase) -> None:
    gen = RemoteGenerator(RemoteConfig(f"http://127.0.0.1:{closed_port()}/v1", served_model="m"))
    a = Answerer(gen, FixedRetriever(PASSAGES), rulebase, AnswererConfig(lm_extraction=True))
    assert a.lm_extraction is False and "logits processor" in a.lm_extraction_off
    assert a.profile.name == "remote"
    local = Answerer(ScriptedGenerator([]), FixedRetriever(PASSAGES), rulebase, AnswererConfig(lm_extraction=True))
    assert local.lm_extraction is True and local.lm_extraction_off is None


def _app(rulebase, generator):
    return create_app(Settings(), generator=generator, retriever=FixedRetriever(PASSAGES),
                      rulebase_holder=SimpleNamespace(current=rulebase))


def test_serve_answers_through_the_remote_and_503_naming_it_when_it_is_down(rulebase) -> None:
    with verirag_server(ScriptedEngine([GOOD])) as remote_url:
        gen = RemoteGenerator(RemoteConfig(remote_url, served_model=MODEL))
        with live_server(_app(rulebase, gen)) as url:
            assert httpx.get(f"{url}/readyz").json()["checks"]["model"] is True
            r = httpx.post(f"{url}/ask", json={"question": QUESTION, "proof_first": False}, timeout=30)
            assert r.status_code == 200 and r.json()["status"] == "verified" and r.json()["answer"] == GOOD
            assert [m["id"] for m in httpx.get(f"{url}/v1/models").json()["data"]] == ["verirag-rag"]

    down = f"http://127.0.0.1:{closed_port()}/v1"
    gen = RemoteGenerator(RemoteConfig(down, served_model=MODEL, max_retries=1, backoff_s=0.01))
    with live_server(_app(rulebase, gen)) as url:
        r = httpx.post(f"{url}/ask", json={"question": QUESTION, "proof_first": False}, timeout=30)
        assert r.status_code == 503 and r.json()["error"]["code"] == "backend_unavailable"
        err = r.json()["error"]
        assert err["type"] == "unavailable" and down in err["message"] and "remote generator" in err["message"]
        with httpx.stream("POST", f"{url}/ask", json={"question": QUESTION, "stream": True, "proof_first": False},
                          timeout=30) as s:
            frames = [f for f in s.read().decode().split("\n\n") if f.strip()]
        assert frames[-1].startswith("event: error")
        event = json.loads(frames[-1].split("data: ", 1)[1])["error"]
        assert event["type"] == "unavailable" and down in event["message"]
        r = httpx.post(f"{url}/v1/chat/completions", json={"model": "verirag-rag", "messages": [
            {"role": "user", "content": QUESTION}], "proof_first": False}, timeout=30)
        assert r.status_code == 503 and down in r.json()["error"]["message"]
        assert r.json()["error"]["code"] == "backend_unavailable"


def test_build_components_connects_or_fails_by_what_is_wrong(caplog) -> None:
    down = f"openai+http://127.0.0.1:{closed_port()}/v1"
    parts = build_components(Settings(model=down, served_model="m", remote_retries=0))
    assert isinstance(parts["generator"], RemoteGenerator) and "engine" not in parts   # no local model loaded
    assert "serving anyway" in caplog.text                            # down now: checked again on first use
    with verirag_server(ScriptedEngine([])) as url:
        with pytest.raises(RemoteModelNotServedError, match="does not serve 'other'"):
            build_components(Settings(model=f"openai+{url}", served_model="other"))
        assert build_components(Settings(model=f"openai+{url}"))["generator"].served_model == MODEL


def test_answer_options_reach_the_server_as_sampling(rulebase) -> None:
    engine = ScriptedEngine([GOOD])
    with verirag_server(engine) as url:
        gen = RemoteGenerator(RemoteConfig(url, served_model=MODEL))
        a = Answerer(gen, FixedRetriever(PASSAGES), rulebase, AnswererConfig(**CONFIG))
        r = a.ask(QUESTION, AskOptions(max_tokens=10, policy="flag"))
    assert r.attempts[0].answer == GOOD[:10].strip() and r.attempts[0].finish_reason == "length" and r.status == "flagged"

"""Prometheus metrics of the service: requests, stage latencies, TTFT, tokens/s, KV cache, verdicts."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prometheus_client import (CollectorRegistry, Counter, Histogram, ProcessCollector, disable_created_metrics,
                               generate_latest)
from prometheus_client.core import GaugeMetricFamily

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
_TPS_BUCKETS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
disable_created_metrics()  # the *_created series only double the scrape size
UNSUPPORTED_VERDICTS = frozenset({"contradicted", "unsupported", "violates_rule"})


class _EngineCollector:
    """Reads the engine's metrics snapshot at scrape time (KV blocks, queue, prefix-cache hit rate)."""

    def __init__(self, snapshot: Callable[[], dict | None]) -> None:
        self.snapshot = snapshot

    def collect(self) -> Any:
        m = self.snapshot() or {}
        kv = GaugeMetricFamily("verirag_kv_blocks", "Paged KV-cache blocks by state", labels=["state"])
        for state in ("used", "free", "total"):
            if f"kv_blocks_{state}" in m:
                kv.add_metric([state], float(m[f"kv_blocks_{state}"]))
        yield kv
        for key, help_text in (("running", "Sequences in the running batch"),
                               ("waiting", "Sequences waiting to be scheduled"),
                               ("pending", "Unfinished requests held by the AsyncEngine"),
                               ("prefix_cache_hit_rate", "Prompt tokens served from the prefix cache")):
            g = GaugeMetricFamily(f"verirag_engine_{key}", help_text)
            if key in m and isinstance(m[key], (int, float)):
                g.add_metric([], float(m[key]))
            yield g


class ServiceMetrics:
    def __init__(self, engine_snapshot: Callable[[], dict | None] = lambda: None) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("verirag_requests", "HTTP requests", ["endpoint", "status"], registry=r)
        self.latency = Histogram("verirag_request_latency_seconds", "End-to-end request latency",
                                 ["endpoint"], buckets=_LATENCY_BUCKETS, registry=r)
        self.stage = Histogram("verirag_stage_latency_seconds", "Latency of each /ask stage",
                               ["stage"], buckets=_LATENCY_BUCKETS, registry=r)
        self.ttft = Histogram("verirag_ttft_seconds", "Time to first token", ["endpoint"],
                              buckets=_LATENCY_BUCKETS, registry=r)
        self.tokens_per_s = Histogram("verirag_decode_tokens_per_second", "Decode speed per request",
                                      ["endpoint"], buckets=_TPS_BUCKETS, registry=r)
        self.tokens = Counter("verirag_tokens", "Tokens processed", ["kind"], registry=r)
        self.verdicts = Counter("verirag_claim_verdicts", "Claim verdicts", ["verdict"], registry=r)
        self.answers = Counter("verirag_answers", "Answers by final status", ["status"], registry=r)
        self.hallucination_flags = Counter(
            "verirag_hallucination_flags", "Claims the verifier did not support (contradicted, "
            "unsupported or violating a rule)", registry=r)
        self.queue_full = Counter("verirag_queue_full", "Requests refused with 503", registry=r)
        self.aborted = Counter("verirag_requests_aborted", "Requests whose client went away before the response "
                               "was complete", ["endpoint"], registry=r)
        ProcessCollector(registry=r)  # process_cpu_seconds_total, process_resident_memory_bytes, open fds...
        r.register(_EngineCollector(engine_snapshot))

    def observe_generation(self, endpoint: str, out: Any) -> None:
        """Record TTFT / decode speed / token counts from a finished RequestOutput's metrics."""
        m = getattr(out, "metrics", None)
        if m is None:
            return
        ttft = getattr(m, "ttft_s", None)
        if ttft is not None:
            self.ttft.labels(endpoint).observe(ttft)
        gen = getattr(m, "generated_tokens", None) or len(getattr(out, "token_ids", []) or [])
        tpot = getattr(m, "tpot_s", None)
        if tpot:
            self.tokens_per_s.labels(endpoint).observe(1.0 / tpot)
        self.tokens.labels("completion").inc(gen)
        self.tokens.labels("prompt").inc(getattr(m, "prompt_tokens", 0) or 0)
        self.tokens.labels("cached_prompt").inc(getattr(m, "cached_tokens", 0) or 0)

    def observe_answer(self, result: dict) -> None:
        """Record stage timings, verdicts and hallucination flags of one /ask result dict."""
        self.answers.labels(str(result.get("status"))).inc()
        for stage, ms in (result.get("timings_ms") or {}).items():
            if isinstance(ms, (int, float)):
                self.stage.labels(stage).observe(ms / 1000.0)
        for claim in result.get("claims") or []:
            verdict = str(claim.get("verdict"))
            self.verdicts.labels(verdict).inc()
            if verdict in UNSUPPORTED_VERDICTS:
                self.hallucination_flags.inc()
        usage = result.get("usage") or {}
        self.tokens.labels("completion").inc(usage.get("completion_tokens", 0) or 0)
        self.tokens.labels("prompt").inc(usage.get("prompt_tokens", 0) or 0)

    def render(self) -> bytes:
        return generate_latest(self.registry)

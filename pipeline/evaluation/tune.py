"""Choose the detector's thresholds on development sets only: `python -m pipeline.evaluation.tune DEV.jsonl ...`."""
from __future__ import annotations

import argparse
import itertools
import json
from dataclasses import dataclass

from pipeline.evaluation.dataset import load_dataset
from pipeline.evaluation.detector import (STOPWORDS, WORD_RE, DetectorConfig, Evidence, _bigrams, _norm, _stem,
                                          extract_claims, novelty)
from pipeline.evaluation.mentions import find_values, values_compatible
from pipeline.evaluation.metrics import binary_metrics


@dataclass
class Features:
    label: bool
    claims: list[tuple[str, float, bool]]   # (kind, coverage 0..1, single-word name)
    novelty: float


def features(item) -> Features:
    """Everything a threshold decision needs, computed once per item (coverage instead of a verdict)."""
    ev = Evidence.of(item.context, item.question)
    out = []
    for c in extract_claims(item.answer):
        if c.kind == "value":
            v = find_values(c.text)
            cov = float(bool(v) and any(values_compatible(v[0], e) for e in ev.values))
        elif c.kind == "entity":
            if _norm(c.text) in ev.text:
                cov = 1.0
            else:
                words = [w for w in WORD_RE.findall(c.text) if w.lower() not in STOPWORDS]
                cov = sum(_stem(w) in ev.words for w in words) / max(1, len(words)) if words else 0.0
        else:
            t = _norm(c.text)
            g = _bigrams(t)
            cov = 1.0 if t in ev.text else sum(x in ev.bigrams for x in g) / max(1, len(g))
        out.append((c.kind, cov, c.kind == "entity" and " " not in c.text))
    return Features(item.label == "hallucinated", out, novelty(item.answer, ev))


def predict(f: Features, cfg: DetectorConfig) -> bool:
    bad = 0
    for kind, cov, single in f.claims:
        if kind == "entity" and single and not cfg.single_word_entities:
            continue
        need = {"value": 1.0, "entity": cfg.entity_coverage, "term": cfg.zh_term_coverage}[kind]
        bad += cov < need - 1e-9
    return bad >= cfg.min_unsupported or (cfg.novelty_threshold is not None and f.novelty > cfg.novelty_threshold)


def evaluate(feats: list[Features], cfg: DetectorConfig) -> dict:
    c = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    for f in feats:
        p = predict(f, cfg)
        c["tp" if p and f.label else "fp" if p else "fn" if f.label else "tn"] += 1
    return binary_metrics(c)


def grid(language: str):
    if language == "zh":
        for k, cov, nov in itertools.product((1, 2, 3), (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0), (None,)):
            yield DetectorConfig(min_unsupported=k, zh_term_coverage=cov, novelty_threshold=nov)
        return
    for k, cov, nov, single in itertools.product((1, 2), (0.5, 0.67, 1.0),
                                                 (None, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8), (True, False)):
        yield DetectorConfig(min_unsupported=k, entity_coverage=cov, novelty_threshold=nov, single_word_entities=single)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("datasets", nargs="+", help="dev sets of one language (tuned jointly: mean F1)")
    ap.add_argument("--language", default="en")
    args = ap.parse_args(argv)
    sets = {p: [features(it) for it in load_dataset(p, "detector").items] for p in args.datasets}
    best = None
    for cfg in grid(args.language):
        per = {p: evaluate(fs, cfg) for p, fs in sets.items()}
        score = sum((m["f1"] or 0.0) for m in per.values()) / len(per)
        if best is None or score > best[0] + 1e-12:
            best = (score, cfg, per)
    assert best is not None  # the grid is never empty
    score, cfg, per = best
    print(json.dumps({"language": args.language, "mean_f1": score, "config": cfg.__dict__,
                      "per_set": {p: {k: round(v, 4) if v is not None else None for k, v in m.items()}
                                  for p, m in per.items()}}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Self-contained HTML report of one run: tables plus matplotlib plots embedded as base64 PNG."""
from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path
from typing import Sequence

import matplotlib

from pipeline.evaluation.metrics import MODES

matplotlib.use("Agg")  # no display; must precede pyplot
import matplotlib.pyplot as plt  # noqa: E402

CSS = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
       "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;"
       "text-align:right}th{background:#f3f3f3}td:first-child{text-align:left}img{max-width:100%}"
       ".bad{color:#b00}.ok{color:#070}pre{background:#f7f7f7;padding:8px;overflow:auto}")


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return f'<img alt="plot" src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}">'


def _fmt(x) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.3f}"
    return html.escape(str(x))


def _bars(groups: dict[str, dict], metric: str, title: str) -> str:
    names = list(groups)
    fig, ax = plt.subplots(figsize=(max(4, 1.1 * len(names) + 2), 3.2))
    modes = [m for m in ("plain", "verified", "passed") if all(m in groups[n] for n in names)]
    width = 0.8 / len(modes)
    labels = {"plain": "plain RAG", "verified": "with verifier (status verified)",
              "passed": "with verifier (verified or regenerated)"}
    for i, mode in enumerate(modes):
        ys = [groups[n][mode].get(metric) or 0.0 for n in names]
        ax.bar([j + (i - (len(modes) - 1) / 2) * width for j in range(len(names))], ys, width, label=labels[mode])
    ax.set_xticks(range(len(names)), names, rotation=20)
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.legend(fontsize=8)
    return _png(fig)


def _hist(values: list[float], title: str, xlabel: str) -> str:
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.hist(values or [0.0], bins=30, color="#4878a8")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("items")
    return _png(fig)


def _confusion_plot(c: dict) -> str:
    m = [[c["tp"], c["fn"]], [c["fp"], c["tn"]]]
    fig, ax = plt.subplots(figsize=(3.6, 3.2))
    ax.imshow(m, cmap="Blues")
    for i in range(2):
        for j in range(2):
            ax.text(j, i, str(m[i][j]), ha="center", va="center", fontsize=13)
    ax.set_xticks([0, 1], ["pred hallucinated", "pred faithful"])
    ax.set_yticks([0, 1], ["hallucinated", "faithful"])
    ax.set_title("confusion matrix")
    return _png(fig)


def _table(rows: Sequence[Sequence[object]], header: list[str]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_fmt(x)}</td>" for x in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def headline(h: dict) -> str:
    """The headline in words: a factor only where both rates exist and the verified one is not zero."""
    p, v = h.get("plain_hallucination_rate"), h.get("verified_hallucination_rate")
    rates = (f"Hallucination rate among delivered answers: plain RAG <b>{_fmt(p)}</b> → with verifier "
             f"(status verified) <b>{_fmt(v)}</b>")
    if p is None or v is None:
        change = "no delivered answers to compare"
    elif v == 0:
        change = "none among the verified answers" if p > 0 else "none with or without the verifier"
    elif v < p:
        change = f"{p / v:.1f}× fewer"
    else:
        change = f"no reduction ({v / p:.1f}× as many)" if p > 0 else "the verifier passed hallucinations plain RAG had none of"
    met = {True: "met", False: "not met", None: "not measurable"}[h.get("target_met")]
    return (f"<p>{rates}: {change}; verified coverage {_fmt(h.get('verified_coverage'))}. "
            f"Target (≥ 2× reduction): <b>{met}</b>.</p>")


def _question_rows(records: list[dict]) -> str:
    """One row per question: what plain RAG and the verified pipeline delivered, and whether it hallucinated."""
    def cell(r: dict, mode: str) -> str:
        m = r.get(mode) or {}
        if m.get("abstained"):
            return "abstained" + (" (right)" if m.get("correct_abstention") else "")
        return "hallucinated" if m.get("hallucinated") else ("correct" if m.get("correct") else "delivered")

    rows = [[r["id"], r.get("kind"), r.get("language"), r.get("question", "")[:120], r.get("status"),
             (r.get("answer") or "")[:160], cell(r, "plain"), cell(r, "verified"),
             round((r.get("latency_ms") or 0) / 1000, 1)] for r in records]
    return _table(rows, ["id", "kind", "lang", "question", "status", "answer", "plain RAG", "verified", "s"])


def _system_html(s: dict, records: list[dict]) -> str:
    keys = ["n", "delivered", "coverage", "hallucination_rate", "hallucinations_per_question", "accuracy",
            "abstention_rate", "correct_abstention"]
    parts = ["<h2>Headline</h2>", headline(s["headline"]),
             _table([[m] + [s[m][k] for k in keys] for m in MODES if m in s], ["mode"] + keys)]
    for field in ("kind", "language"):
        modes = [m for m in MODES if m in s]
        g = {k: {m: s[m][f"by_{field}"][k] for m in modes} for k in s["plain"][f"by_{field}"]}
        parts.append(f"<h2>By {field}</h2>")
        parts.append(_table([[k, m] + [g[k][m][x] for x in keys] for k in g for m in modes],
                            [field, "mode"] + keys))
        parts.append(_bars(g, "hallucination_rate", f"hallucination rate by {field}"))
        parts.append(_bars(g, "accuracy", f"accuracy by {field}"))
    parts.append("<h2>Status distribution</h2>" + _table(sorted(s["status"].items()), ["status", "count"]))
    parts.append("<h2>Latency</h2>" + _hist([r.get("latency_ms", 0) / 1000 for r in records],
                                            "latency per question", "seconds"))
    bad = [r for r in records if r["verified"]["delivered"] and r["verified"]["hallucinated"]][:50]
    parts.append("<h2>Hallucinations that passed the verifier</h2>" + _table(
        [[r["id"], r["answer"][:160], "; ".join(x["detail"] for x in r["verified"]["reasons"])] for r in bad],
        ["id", "answer", "why"]))
    parts.append("<h2>Per question</h2>" + _question_rows(records))
    return "".join(parts)


def _detector_html(s: dict, records: list[dict]) -> str:
    keys = ["precision", "recall", "f1", "balanced_accuracy", "specificity", "accuracy"]
    parts = ["<h2>Detector metrics (positive label: hallucinated)</h2>",
             _table([["all", s["n"]] + [s[k] for k in keys]] +
                    [[lang, v["n"]] + [v[k] for k in keys] for lang, v in s["by_language"].items()],
                    ["subset", "n"] + keys),
             _confusion_plot(s["confusion"]),
             _hist([r.get("latency_ms", 0) for r in records], "detector latency per item", "ms")]
    fig, ax = plt.subplots(figsize=(5, 3))
    for label in ("faithful", "hallucinated"):
        ax.hist([r["score"] for r in records if r["label"] == label] or [0.0], bins=20, alpha=0.6, label=label)
    ax.set_title("detector score by gold label")
    ax.legend()
    parts.append(_png(fig))
    errs = [r for r in records if r["predicted"] != r["label"]][:40]
    parts.append("<h2>Errors (first 40)</h2>" + _table(
        [[r["id"], r["label"], r["answer"][:140], r["reason"][:200]] for r in errs],
        ["id", "gold", "answer", "detector reason"]))
    return "".join(parts)


def _context_html(s: dict, records: list[dict]) -> str:
    keys = ["n", "gold_facts", "computed_facts", "retrieval_recall", "context_recall", "support_recall",
            "items_complete_in_prompt", "mean_prompt_tokens"]
    parts = ["<h2>Context recall (no generation)</h2>", _table([["all"] + [s[k] for k in keys]], ["subset"] + keys)]
    for field in ("kind", "language"):
        parts.append(f"<h2>By {field}</h2>" + _table([[k] + [v[x] for x in keys] for k, v in s[f"by_{field}"].items()],
                                                     [field] + keys))
    missed = [(r["id"], f["object"], "retrieved" if f["retrieved"] else "not retrieved", r["question"][:100])
              for r in records for f in r["facts"] if f["groundable"] and not f["in_prompt"]]
    parts.append("<h2>Gold facts the prompt misses</h2>" + _table(missed, ["id", "gold value", "retrieval", "question"]))
    return "".join(parts)


def _extraction_html(s: dict, records: list[dict]) -> str:
    keys = ["n", "labelled_facts", "tp", "fp", "fn", "precision", "recall", "f1", "answers_with_claim_share",
            "clean_on_answers_without_facts", "errors"]
    ext = ["claims", "tp", "fp", "precision", "recall"]
    parts = ["<h2>Relation claims vs labelled facts</h2>", _table([["all"] + [s[k] for k in keys]], ["subset"] + keys),
             "<p>An extractor's recall counts only its own hits; identical claims count once, for the first "
             f"extractor ({s['duplicate_claims']} duplicates); {s['unscored_claims']} claims of relations with a "
             "free-text argument are not scored.</p>",
             "<h2>By extractor</h2>" + _table([[k] + [v[x] for x in ext] for k, v in s["by_extractor"].items()],
                                              ["extractor"] + ext)]
    for field in ("language", "source"):
        parts.append(f"<h2>By {field}</h2>" + _table([[k] + [v[x] for x in keys] for k, v in s[f"by_{field}"].items()],
                                                     [field] + keys))
    missed = [(r["id"], f"{f['relation']}({', '.join(f['args'] + [f['value']])})", f["span"][:100])
              for r in records for f in r["facts"] if not f["found"]][:80]
    parts.append("<h2>Labelled facts not read (first 80)</h2>" + _table(missed, ["id", "fact", "span"]))
    wrong = [(r["id"], c["extractor"], f"{c['relation']}({', '.join(c['args'] + [str(c['value'])])})",
              r["answer"][:120]) for r in records for c in r["claims"]
             if c["scored"] and not c["duplicate"] and not c["match"]][:80]
    parts.append("<h2>Claims matching no labelled fact (first 80)</h2>" + _table(wrong, ["id", "extractor", "claim",
                                                                                         "answer"]))
    return "".join(parts)


def write_report(path: Path, summary: dict, records: list[dict]) -> None:
    html_of = {"detector": _detector_html, "context": _context_html,
               "extraction": _extraction_html}.get(summary["kind"], _system_html)
    body = html_of(summary, records)
    run = html.escape(json.dumps(summary.get("run", {}), indent=2, ensure_ascii=False, default=str))
    doc = (f"<!doctype html><html><head><meta charset='utf-8'><title>verirag eval</title><style>{CSS}"
           f"</style></head><body><h1>verirag evaluation — {summary['kind']} run, {summary['n']} items</h1>"
           f"{body}<h2>Run</h2><pre>{run}</pre></body></html>")
    Path(path).write_text(doc, encoding="utf-8")

"""The evaluation loop: subset selection, resumable results.jsonl, progress with a running estimate."""
from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from tqdm import tqdm

from pipeline.evaluation.dataset import Dataset, select
from pipeline.evaluation.metrics import binary_metrics, confusion, detector_summary, system_summary

RESULTS = "results.jsonl"
SUMMARY = "summary.json"
RUN = "run.json"
REPORT = "report.html"
# run.json fields that must match for a rerun to resume into the same folder
IDENTITY = ("dataset_sha256", "kind", "limit", "seed", "config")


class RunError(RuntimeError):
    """A run that cannot start or resume (its message says what to do)."""


@dataclass
class RunSpec:
    dataset: Dataset
    out_dir: Path
    limit: int | None = None
    seed: int | None = None
    config: dict = field(default_factory=dict)   # what was evaluated: model, kb, rules, thresholds
    progress: bool = True
    mode: str | None = None                      # "context": a system dataset measured without generation;
                                                 # "extraction": labelled answers read by the extractors

    @property
    def kind(self) -> str:
        return self.mode or self.dataset.kind


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_results(path: Path) -> list[dict]:
    """Records already written; a torn last line (a crash mid-write) is cut off so appends stay valid."""
    if not path.exists():
        return []
    records, good_bytes = [], 0
    with path.open("rb") as fh:
        for raw in fh:
            if not raw.endswith(b"\n"):
                break
            try:
                records.append(json.loads(raw))
            except json.JSONDecodeError:
                break
            good_bytes += len(raw)
    if good_bytes != path.stat().st_size:
        with path.open("r+b") as fh:
            fh.truncate(good_bytes)
    return records


def _check_identity(spec: RunSpec, run: dict) -> None:
    run_file = spec.out_dir / RUN
    if run_file.exists():
        old = json.loads(run_file.read_text(encoding="utf-8"))
        diff = [k for k in IDENTITY if old.get(k) != run.get(k)]
        if diff:
            raise RunError(f"{spec.out_dir} holds a different run (differs in {', '.join(diff)}); "
                           f"use another --out folder or delete this one")
    run_file.write_text(json.dumps(run, indent=2, ensure_ascii=False), encoding="utf-8")


def _estimate(kind: str, records: list[dict]) -> dict:
    if not records or kind == "context":
        return {}
    if kind == "extraction":
        tp, fp, fn = (sum(r[k] for r in records) for k in ("tp", "fp", "fn"))
        return {"P": f"{tp / (tp + fp):.2f}" if tp + fp else "-", "R": f"{tp / (tp + fn):.2f}" if tp + fn else "-"}
    if kind == "detector":
        m = binary_metrics(confusion(records))
        return {"F1": f"{m['f1']:.3f}" if m["f1"] is not None else "-",
                "BA": f"{m['balanced_accuracy']:.3f}" if m["balanced_accuracy"] is not None else "-"}
    out = {}
    for mode in ("plain", "verified"):
        d = [r[mode] for r in records if r[mode]["delivered"]]
        out[mode] = f"{sum(s['hallucinated'] for s in d) / len(d):.2f}" if d else "-"
    return {"halluc": f"{out['plain']}→{out['verified']}"}


def run_eval(spec: RunSpec, process: Callable[[object], dict],
             on_record: Callable[[dict], None] | None = None) -> dict:
    """Process every selected item not already in results.jsonl, then write summary.json (+ report)."""
    spec.out_dir.mkdir(parents=True, exist_ok=True)
    items = select(spec.dataset.items, spec.limit, spec.seed)
    run = {"dataset": str(Path(spec.dataset.path).resolve()), "dataset_sha256": file_sha256(spec.dataset.path),
           "kind": spec.kind, "limit": spec.limit, "seed": spec.seed, "config": spec.config,
           "n_selected": len(items)}
    _check_identity(spec, run)
    results_path = spec.out_dir / RESULTS
    wanted = {it.id for it in items}
    done = {r["id"]: r for r in read_results(results_path) if r.get("id") in wanted}
    todo = [it for it in items if it.id not in done]
    records = list(done.values())
    bar = tqdm(total=len(items), initial=len(done), disable=not spec.progress, unit="item",
               desc=f"eval {spec.kind}", dynamic_ncols=True)
    with results_path.open("a", encoding="utf-8") as fh:
        for item in todo:
            t0 = time.perf_counter()
            rec = process(item)
            rec.setdefault("latency_ms", (time.perf_counter() - t0) * 1000)
            fh.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")
            fh.flush()
            os.fsync(fh.fileno())   # a crash after this line never redoes this item
            records.append(rec)
            if on_record is not None:
                on_record(rec)
            bar.update(1)
            bar.set_postfix(_estimate(spec.kind, records), refresh=False)
            if spec.kind == "system":   # slow items: keep a partial summary on disk
                _write_summary(spec, run, items, records, len(done))
    bar.close()
    summary = _write_summary(spec, run, items, records, len(done))
    from pipeline.evaluation.report import write_report  # matplotlib only when a report is written
    write_report(spec.out_dir / REPORT, summary, records)
    return summary


def _write_summary(spec: RunSpec, run: dict, items: list, records: list[dict], resumed: int) -> dict:
    order = {it.id: i for i, it in enumerate(items)}
    records.sort(key=lambda r: order[r["id"]])
    summary = summarise(spec.kind, records)
    summary["run"] = {k: run[k] for k in ("dataset", "kind", "limit", "seed", "config", "n_selected")}
    summary["complete"] = len(records) == len(items)
    summary["resumed_items"] = resumed
    tmp = spec.out_dir / (SUMMARY + ".tmp")
    tmp.write_text(json.dumps(summary, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
    tmp.replace(spec.out_dir / SUMMARY)
    return summary


def summarise(kind: str, records: Iterable[dict]) -> dict:
    records = list(records)
    if kind == "context":
        from pipeline.evaluation.context_recall import context_summary
        return context_summary(records)
    if kind == "extraction":
        from pipeline.evaluation.extraction_eval import extraction_summary
        return extraction_summary(records)
    return detector_summary(records) if kind == "detector" else system_summary(records)

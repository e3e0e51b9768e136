"""Compare two runs' summary.json side by side, with deltas (B − A)."""
from __future__ import annotations

import json
from pathlib import Path

from pipeline.evaluation.runner import SUMMARY, RunError

SKIP = ("run", "latency_ms", "reasons", "labels", "resumed_items", "complete")


def load_summary(path: str | Path) -> dict:
    p = Path(path)
    if p.is_dir():
        p = p / SUMMARY
    if not p.is_file():
        raise RunError(f"{path}: no summary.json (give a run folder or its summary.json)")
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RunError(f"{p}: not valid JSON ({exc.msg}, line {exc.lineno})") from None


def flatten(d: dict, prefix: str = "") -> dict[str, float]:
    """Numeric leaves as dotted keys (bools as 0/1), skipping run metadata."""
    out: dict[str, float] = {}
    for k, v in d.items():
        if k in SKIP:
            continue
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
        elif isinstance(v, bool):
            out[key] = float(v)
        elif isinstance(v, (int, float)):
            out[key] = float(v)
    return out


def compare(a: dict, b: dict) -> list[tuple[str, float | None, float | None, float | None]]:
    if a.get("kind") != b.get("kind"):
        raise RunError(f"cannot compare a {a.get('kind')} run with a {b.get('kind')} run")
    fa, fb = flatten(a), flatten(b)
    keys = list(fa) + [k for k in fb if k not in fa]
    return [(k, fa.get(k), fb.get(k), None if k not in fa or k not in fb else fb[k] - fa[k]) for k in keys]


def format_table(rows: list[tuple], name_a: str = "A", name_b: str = "B") -> str:
    def f(x: float | None, sign: bool = False) -> str:
        if x is None:
            return "–"
        if x == int(x) and abs(x) >= 1:
            return f"{int(x):+d}" if sign else f"{int(x)}"
        return f"{x:+.3f}" if sign else f"{x:.3f}"

    width = max([len("metric")] + [len(r[0]) for r in rows])
    lines = [f"{'metric':<{width}}  {name_a[:12]:>12}  {name_b[:12]:>12}  {'delta':>9}",
             "-" * (width + 39)]
    lines += [f"{k:<{width}}  {f(x):>12}  {f(y):>12}  {f(d, True):>9}" for k, x, y, d in rows]
    return "\n".join(lines)

"""Explanations: HOW a conclusion was reached (rules and facts with CFs) and WHY a goal was asked,
as indented text and as JSON-able dicts."""
from __future__ import annotations

from .backward import Asked, Node, Support
from .facts import Fact


def _fact_source(f: Fact) -> str:
    return f.provenance.describe()


def how_json(node: Node) -> dict:
    return {"conclusion": str(node), "relation": node.relation, "cf": round(node.cf, 4),
            "supports": [_support_json(s) for s in node.supports]}


def _support_json(s: Support) -> dict:
    if s.fact is not None:
        return {"kind": "fact", "fact": str(s.fact), "cf": round(s.cf, 4), "stated_cf": s.fact.cf,
                "provenance": s.fact.provenance.to_dict()}
    assert s.rule is not None   # a support is a fact or a rule
    return {"kind": "rule", "rule_id": s.rule.id, "message": s.rule.message, "rule_cf": s.rule.cf,
            "premise_cf": round(s.premise_cf, 4), "cf": round(s.cf, 4),
            "premises": [how_json(p) if isinstance(p, Node) else p for p in s.premises]}


def how_text(node: Node, indent: int = 0) -> str:
    pad = "  " * indent
    lines = [f"{pad}{node}  CF {node.cf:.2f}"]
    if len(node.supports) > 1:
        parts = ", ".join(f"{s.cf:.2f}" for s in node.supports)
        lines.append(f"{pad}  combined from {len(node.supports)} supports ({parts}) -> {node.cf:.2f}")
    for s in node.supports:
        if s.fact is not None:
            note = f" (stated {s.fact.cf:.2f}, halved: superseded)" if s.fact.provenance.superseded else ""
            lines.append(f"{pad}  fact from {_fact_source(s.fact)}  CF {s.cf:.2f}{note}")
            continue
        assert s.rule is not None   # a support is a fact or a rule
        lines.append(f"{pad}  by rule {s.rule.id} \"{s.rule.message}\": premise CF {s.premise_cf:.2f} "
                     f"x rule CF {s.rule.cf:.2f} = {s.cf:.2f}")
        for p in s.premises:
            if isinstance(p, Node):
                lines.append(how_text(p, indent + 2))
            elif p.get("kind") == "not":
                lines.append(f"{pad}    {p['text']}  holds (closed world: no fact states it)")
            else:
                lines.append(f"{pad}    {p['text']}  holds")
    return "\n".join(lines)


def why_json(a: Asked) -> dict:
    return {"goal": a.goal, "cf": None if a.cf is None else round(a.cf, 4), "loop": a.loop,
            "depth_limited": a.depth_limited,
            "why": [{"rule_id": r, "proving": g} for r, g in a.why]}


def why_text(a: Asked) -> str:
    status = ("skipped: it is already being proved (a loop)" if a.loop else
              "skipped: depth limit" if a.depth_limited else
              "not proved" if a.cf is None or a.cf <= 0.2 else f"proved, CF {a.cf:.2f}")
    lines = [f"{a.goal}: {status}"]
    if not a.why:
        lines.append("  asked because you asked it")
    for rule_id, goal in a.why:
        lines.append(f"  asked because rule {rule_id} needs it to prove {goal}")
    return "\n".join(lines)


def verdict_cf(verdict: str, cf: float) -> str:
    """A verdict's certainty as a line shows it: the CF of a supported, contradicted or violated claim; an
    unsupported claim has none worth a number (its verdict's own "CF 1.00" read as strong support)."""
    return "no support above CF 0.20" if verdict == "unsupported" else f"CF {cf:.2f}"

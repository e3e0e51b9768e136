"""Optional neural extractor: the engine writes (subject, relation, object) triples as JSON under the
schema constraint (constrained.py), and triples naming a rule-base relation become Facts."""
from __future__ import annotations

from typing import Any

from pipeline.constrained import JsonSchemaLogitsProcessor, parse_constrained


def triples_schema(relations: list[str], max_items: int = 6) -> dict:
    return {"type": "array", "maxItems": max_items, "items": {"type": "object", "properties": {
        "subject": {"type": "string", "maxLength": 60},
        "relation": {"type": "string", "enum": sorted(relations)} if relations else {"type": "string"},
        "object": {"type": "string", "maxLength": 60}}}}


def extract_triples(engine: Any, text: str, relations: list[str], *, max_tokens: int = 128) -> list[dict]:
    """Triples the model reads from ``text``; always valid JSON (the constraint guarantees it)."""
    from neural import SamplingParams
    schema = triples_schema(relations)
    prompt = engine.tokenizer.apply_chat_template([{"role": "user", "content": (
        "Extract the facts in the text as a JSON list of {\"subject\", \"relation\", \"object\"} with "
        f"relation one of: {', '.join(sorted(relations))}.\n\nText: {text}")}])
    proc = JsonSchemaLogitsProcessor(schema, engine.tokenizer, max_tokens=max_tokens)
    out = engine.generate(prompt, SamplingParams(max_tokens=max_tokens, logits_processors=[proc]))[0]
    return parse_constrained(out.text)


def triples_to_facts(triples: list[dict], rulebase: Any, source: Any) -> list[Any]:
    """Keep triples whose relation is declared, whose subject names a known entity and whose object
    reads as a value of the relation's last argument type; drop the rest (cf 0.7: a model's reading)."""
    from symbolic import Fact, parse_value
    facts = []
    for t in triples:
        sig = rulebase.relations.get(t.get("relation"))
        if sig is None or len(sig.params) != 2:
            continue
        subject = rulebase.entity_id(t.get("subject", ""), sig.params[0].type)
        try:
            obj = parse_value(t.get("object", ""))
        except ValueError:
            obj = rulebase.entity_id(t.get("object", ""), sig.params[1].type)
        if subject is None or obj is None:
            continue
        facts.append(Fact(sig.name, (subject, obj), 0.7, source))
    return facts

"""`verirag rules explain --claim TEXT [--kb DIR] [--facts FILE]`: a claim checked as `ask` checks it
(patterns, forward rules, goals) against a KB's facts, with HOW it was decided and WHY goals were asked."""
from __future__ import annotations

import argparse
import json
from typing import Any

from symbolic import BackwardChainer, Claim, Fact, Provenance, Verifier
from symbolic.explain import why_json, why_text
from symbolic.fact_input import fact_from_text
from symbolic.model import Var


def read_claims(text: str, rb: Any) -> list[Claim]:
    """The claim as the patterns read it from a sentence, or written as a relation: `p(a, "EUR 5")`."""
    found = [Claim(f, text[s:e], s, e) for f, s, e in rb.extract(text, source=Provenance("answer"))]
    if found:
        uniq: dict[tuple, Claim] = {}
        for c in found:
            uniq.setdefault(c.fact.key, c)
        return list(uniq.values())
    fact = fact_from_text(text, rb, "<claim>")
    return [Claim(Fact(fact.relation, fact.args, 1.0, Provenance("answer")), text, 0, len(text))]


def explain_claim(args: argparse.Namespace, rb: Any, evidence: list[Fact]) -> int:
    claims = read_claims(args.claim, rb)
    result = Verifier(rb).verify(claims, evidence)
    whys = []
    for c in claims:   # the goals the chainer asks for this claim's subject, for WHY
        sig = rb.relations.get(c.fact.relation)
        pattern = (*c.fact.args[:-1], Var("value")) if sig is not None and sig.functional else c.fact.args
        bc = BackwardChainer(rb.backward_rules, [*evidence, *rb.facts])
        bc.prove(c.fact.relation, pattern)
        bc.prove(c.fact.relation, c.fact.args)    # goals that check the claim's own value
        seen: set[tuple] = set()
        asked = []
        for a in bc.asked:
            if (a.cf is None or a.cf <= 0.2) and (a.goal, tuple(a.why)) not in seen:
                seen.add((a.goal, tuple(a.why)))
                asked.append(a)
        whys.append(asked[:20])
    if args.json:
        print(json.dumps({"claim": args.claim, **result.to_dict(),
                          "asked": [[why_json(a) for a in w] for w in whys]}, ensure_ascii=False))
    else:
        for v, w in zip(result.claims, whys):
            print(f"{v.claim.fact}: {v.verdict} (CF {v.cf:.2f})" + (f" [{', '.join(v.rule_ids)}]" if v.rule_ids else ""))
            print("HOW:\n  " + v.explanation.replace("\n", "\n  "))
            if w:
                print("WHY (goals asked but not proved):")
                for a in w:
                    print("  " + why_text(a).replace("\n", "\n  "))
        for x in result.violations:
            if not x.claim_ids:
                print(f"! the evidence alone breaks {x.rule_id}: {x.message}")
    return 0 if result.ok else 1

"""`verirag rules explain --claim TEXT [--kb DIR] [--facts FILE]`: a claim checked as `ask` checks it
(patterns, forward rules, goals) against a KB's facts, with HOW it was decided and WHY goals were asked."""
from __future__ import annotations

import argparse
import json
from typing import Any

from symbolic import Claim, Fact, Provenance, Verifier
from symbolic.explain import verdict_cf, why_json, why_text
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
    verifier = Verifier(rb)
    result = verifier.verify(claims, evidence)
    whys = []
    for c, verdict in zip(claims, result.claims):   # the goals the chainer asks for this claim's subject, for WHY
        sig = rb.relations.get(c.fact.relation)
        pattern = (*c.fact.args[:-1], Var("value")) if sig is not None and sig.functional else c.fact.args
        bc = verifier.goal_chainer([c], evidence)
        bc.prove(c.fact.relation, pattern)
        bc.prove(c.fact.relation, c.fact.args)    # goals that check the claim's own value
        seen: set[tuple] = set()
        asked = []
        for a in bc.asked:
            # a supported claim holds: a form of it asked at the top that failed is no reason why not
            if verdict.verdict == "supported" and not a.why:
                continue
            if (a.cf is None or a.cf <= 0.2) and (a.goal, tuple(a.why)) not in seen:
                seen.add((a.goal, tuple(a.why)))
                asked.append(a)
        whys.append(asked[:20])
    if args.json:
        print(json.dumps({"claim": args.claim, **result.to_dict(),
                          "asked": [[why_json(a) for a in w] for w in whys]}, ensure_ascii=False))
    else:
        for v, w in zip(result.claims, whys):
            print(f"{v.claim.fact}: {v.verdict} ({verdict_cf(v.verdict, v.cf)})"
                  + (f" [{', '.join(v.rule_ids)}]" if v.rule_ids else ""))
            print("HOW:\n  " + v.explanation.replace("\n", "\n  "))
            if w:
                print("WHY (goals asked but not proved):")
                for a in w:
                    print("  " + why_text(a).replace("\n", "\n  "))
        for x in result.violations:
            if not x.claim_ids:
                print(f"! the evidence alone breaks {x.rule_id}: {x.message}")
    return 0 if result.ok else 1

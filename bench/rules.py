"""Rule-engine benchmark: verify one answer's claims against N rules and M evidence facts.

Reports verification latency (median of repeated runs, warm engine cache) at 500 rules / 5,000 facts and
its growth when rules or facts double, plus the cost without the relevance filter (every rule and fact
handed to experta's RETE) for comparison. Usage: .venv/bin/python bench/rules.py [--repeat 20]
`--load 2000,20000` measures (re)loading rule bases of those sizes instead.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from symbolic import Claim, Fact, Provenance, RuleBaseHolder, Verifier, load_rulebase  # noqa: E402
from symbolic.values import Duration  # noqa: E402

N_REL = 100


def rule_text(n_rules: int) -> str:
    lines = ["type item"] + [f"relation r{i}(item, duration[day])" for i in range(N_REL)]
    lines += [f"relation d{i}(item, duration[day])" for i in range(N_REL)]
    for j in range(n_rules):
        i = j % N_REL
        if j % 5 == 4:  # one in five derives a fact (a second stage), the rest are constraints
            lines.append(f'rule F{j} "derive {j}": if r{i}(?x, ?v) and ?v > {j % 50} days then assert d{i}(?x, ?v * 2)')
        else:
            lines.append(f'rule F{j} "limit {j}": if r{i}(?x, ?v) and ?v > {20 + j % 40} days '
                         f'then violation "{{x}} has {{v}}, over the limit of rule {j}"')
    lines += [f'goal G{i} "g{i}": d{i}(?x, ?v) if r{i}(?x, ?w) and ?v == ?w * 2' for i in range(0)]
    return "\n".join(lines) + "\n"


def evidence(n_facts: int, rng: random.Random) -> list[Fact]:
    return [Fact(f"r{rng.randrange(N_REL)}", (f"item{k}", Duration(rng.randrange(1, 60), "day")), 1.0,
                 Provenance("document", f"doc{k % 50}.md", k, k + 10)) for k in range(n_facts)]


def claims(ev: list[Fact], rng: random.Random, n: int = 5) -> list[Claim]:
    out = []
    for f in rng.sample(ev, n):
        out.append(Claim(Fact(f.relation, f.args, 1.0, Provenance("answer")), str(f), 0, 10))
    return out


def measure(n_rules: int, n_facts: int, repeat: int, *, focus_all: bool = False) -> dict:
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "bench.rules").write_text(rule_text(n_rules))
        t = time.perf_counter()
        rb = load_rulebase(d)
        load_s = time.perf_counter() - t
    ev = evidence(n_facts, rng)
    cl = claims(ev, rng)
    ver = Verifier(rb)
    if focus_all:  # no relevance filter: every rule in the RETE network, every fact declared
        orig = ver.forward.run
        ver.forward.run = lambda facts, focus=None: orig(facts, focus={f"r{i}" for i in range(N_REL)})
    t = time.perf_counter()
    res = ver.verify(cl, ev)
    cold = time.perf_counter() - t
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        res = ver.verify(cl, ev)
        times.append(time.perf_counter() - t)
    return {"rules": n_rules, "facts": n_facts, "load_s": load_s, "cold_ms": cold * 1e3,
            "median_ms": statistics.median(times) * 1e3, "verdicts": sorted(c.verdict for c in res.claims),
            "fired_rules": len(res.forward["rules"])}


def _rss_mb() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def measure_load(n_rules: int) -> dict:
    """Reload a served rule base from 200 to n_rules rules and back (RuleBaseHolder, as the API does):
    load time, the longest stall another thread sees meanwhile (a /healthz stand-in pinging every
    10 ms), and resident memory before, with, and after swapping back."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "bench.rules"
        path.write_text(rule_text(200))
        holder = RuleBaseHolder(d)
        rss0 = _rss_mb()
        path.write_text(rule_text(n_rules))
        gaps, stop = [0.0], threading.Event()

        def ping() -> None:
            last = time.perf_counter()
            while not stop.is_set():
                time.sleep(0.01)
                now = time.perf_counter()
                gaps[0] = max(gaps[0], now - last - 0.01)
                last = now
        pinger = threading.Thread(target=ping)
        pinger.start()
        t = time.perf_counter()
        errors = holder.reload()
        load_s = time.perf_counter() - t
        rss_big = _rss_mb()
        path.write_text(rule_text(200))
        holder.reload()
        stop.set()
        pinger.join()
        assert not errors and holder.generation == 3
        return {"rules": n_rules, "load_s": load_s, "stall_ms": gaps[0] * 1e3, "rss0": rss0, "rss_big": rss_big,
                "rss_after": _rss_mb()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--skip-unfiltered", action="store_true")
    ap.add_argument("--load", default="", help="comma-separated rule counts: only measure (re)loading them")
    args = ap.parse_args()
    if args.load:
        print(f"{'rules':>6} {'reload s':>9} {'longest stall ms':>17} {'RSS MB: 200 rules':>18} {'loaded':>7} "
              f"{'back to 200':>12}")
        for n in map(int, args.load.split(",")):
            r = measure_load(n)
            print(f"{r['rules']:>6} {r['load_s']:>9.1f} {r['stall_ms']:>17.0f} {r['rss0']:>18.0f} "
                  f"{r['rss_big']:>7.0f} {r['rss_after']:>12.0f}")
        return
    base = measure(500, 5000, args.repeat)
    rows = [base, measure(1000, 5000, args.repeat), measure(500, 10000, args.repeat),
            measure(500, 20000, args.repeat)]
    print(f"{'rules':>6} {'facts':>6} {'load s':>7} {'cold ms':>8} {'median ms':>10} {'x base':>7} "
          f"{'active rules':>12}  verdicts")
    for r in rows:
        print(f"{r['rules']:>6} {r['facts']:>6} {r['load_s']:>7.2f} {r['cold_ms']:>8.1f} {r['median_ms']:>10.2f} "
              f"{r['median_ms'] / base['median_ms']:>7.2f} {r['fired_rules']:>12}  {','.join(r['verdicts'])}")
    if not args.skip_unfiltered:
        u = measure(500, 5000, 3, focus_all=True)
        print(f"without relevance filter (all 500 rules in RETE, all facts declared): cold {u['cold_ms']:.0f} ms, "
              f"median {u['median_ms']:.0f} ms = {u['median_ms'] / base['median_ms']:.0f}x the filtered path")


if __name__ == "__main__":
    main()

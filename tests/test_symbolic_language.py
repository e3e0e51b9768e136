"""Issue 19 item 3: `or`, text predicates, aggregates, date functions and units with '/' in rule files."""
from pathlib import Path

import pytest

from symbolic import BackwardChainer, Fact, ForwardChainer, RuleErrors, load_rulebase, parse_value as v
from symbolic.builtins import business_days
from symbolic.model import Var

RULES = Path(__file__).parent / "fixtures" / "rules" / "language"


@pytest.fixture(scope="module")
def rb():
    return load_rulebase(RULES)


def run(rb, *facts):
    return ForwardChainer(rb.forward_rules).run([Fact(r, a, cf) for r, a, cf in facts])


def messages(result):
    return sorted(x.message for x in result.violations)


def test_or_runs_each_alternative_under_one_rule_id(rb):
    r = run(rb, ("remote_access", ("ann",), 1.0), ("contractor", ("ann",), 1.0),
            ("remote_access", ("ben",), 1.0), ("intern", ("ben",), 1.0),
            ("remote_access", ("cho",), 1.0))
    assert messages(r) == ["ann may not have remote access", "ben may not have remote access"]
    assert {x.rule_id for x in r.violations} == {"R_ACCESS"}
    assert [x.id for x in rb.forward_rules].count("R_ACCESS") == 2     # two alternatives, one id


def test_text_predicates(rb):
    r = run(rb, ("purchase", ("ann", "robot", v("EUR 12000")), 1.0), ("title", ("ann", "VP Operations"), 1.0),
            ("purchase", ("ben", "robot", v("EUR 12000")), 0.8), ("title", ("ben", "Team lead"), 1.0))
    big = [x for x in r.violations if x.rule_id == "R_VP"]
    # ben is no VP: CF min(0.8, 1.0) x 0.9 = 0.72; ann's title starts with "VP" (case-insensitive)
    assert [(x.message, round(x.cf, 6)) for x in big] == [("ben (Team lead) bought robot for 12000 EUR", 0.72)]


def test_goal_alternatives_and_predicates(rb):
    bc = BackwardChainer(rb.backward_rules, [Fact("title", ("ann", "vp sales"), 1.0),
                                             Fact("title", ("ben", "Senior engineer"), 0.7),
                                             Fact("title", ("cho", "engineer"), 1.0)])
    assert sorted((n.args[0], n.cf) for n in bc.prove("senior", (Var("p"),))) == [("ann", 1.0), ("ben", 0.7)]


def test_sum_and_count_over_facts(rb):
    # ann: 2000 + 3500 = 5500 > 5000 (split purchases); ben: 4 purchases > 3 although each is small
    facts = [("purchase", ("ann", "a", v("EUR 2000")), 1.0), ("purchase", ("ann", "b", v("EUR 3500")), 1.0)]
    facts += [("purchase", ("ben", f"i{k}", v("EUR 100")), 1.0) for k in range(4)]
    r = run(rb, *facts)
    split = sorted({x.message for x in r.violations if x.rule_id == "R_SPLIT"})
    many = sorted({x.message for x in r.violations if x.rule_id == "R_MANY"})
    assert split == ["ann's purchases add up to more than EUR 5000"]
    assert many == ["ben made more than 3 purchases"]


def test_an_aggregate_over_nothing_never_fires(rb):
    assert run(rb, ("title", ("ann", "VP"), 1.0)).violations == []


def test_date_functions(rb):
    r = run(rb, ("hired", ("ann", v("2024-01-01")), 1.0),
            ("review", ("ann", v("2024-04-15")), 1.0),          # 105 days
            ("hired", ("ben", v("2024-01-01")), 1.0), ("review", ("ben", v("2024-03-31")), 1.0),  # 90 days
            ("invoice_received", ("x1", v("2025-06-02")), 1.0), ("invoice_paid", ("x1", v("2025-06-17")), 1.0),
            ("invoice_received", ("x2", v("2025-06-02")), 1.0), ("invoice_paid", ("x2", v("2025-06-16")), 1.0))
    assert messages(r) == ["ann: review 2024-04-15 is more than 90 days after hiring on 2024-01-01",
                           "invoice x1 paid after more than 10 business days"]


@pytest.mark.parametrize("a,b,n", [("2025-06-02", "2025-06-16", 10), ("2025-06-06", "2025-06-09", 1),
                                   ("2025-06-07", "2025-06-08", 0), ("2025-06-16", "2025-06-02", -10)])
def test_business_days(a, b, n):
    import datetime as dt
    assert business_days(dt.date.fromisoformat(a), dt.date.fromisoformat(b)) == n


def test_units_with_a_slash(rb):
    assert str(rb.relations["top_speed"].params[1]) == "quantity[m/s]"
    r = run(rb, ("top_speed", ("ax", v("9 km/h")), 1.0), ("top_speed", ("lx", v("1.5 m/s")), 1.0))
    assert messages(r) == ["ax: 9 km/h"]                     # 9 km/h = 2.5 m/s


@pytest.mark.parametrize("body, phrase", [
    ('rule R "m": if hired(?p, ?h) and days_between(?h, 5) > 3 days then violation "v"', "days_between takes dates, got number"),
    ('rule R "m": if hired(?p, ?h) and dayz_between(?h, ?h) > 3 days then violation "v"', "unknown function 'dayz_between' (did you mean 'days_between'?)"),
    ('rule R "m": if hired(?p, ?h) and matches(?p, "([a-z") then violation "v"', "bad regular expression in matches"),
    ('rule R "m": if hired(?p, ?h) and starts_with(?q, "x") then violation "v"', "unbound variable ?q in rule R"),
    ('rule R "m": if hired(?p, ?h) and sum(?z, purchase(?p, _, ?y)) > 3 then violation "v"', "sum's first argument is a variable"),
    ('rule R "m": if hired(?p, ?h) and hired(?p) > 3 then violation "v"', "is not a value: write count("),
])
def test_bad_builtins_are_located(tmp_path, body, phrase):
    (tmp_path / "x.rules").write_text('type person\nrelation hired(person, date)\n'
                                      'relation purchase(person, text, money[EUR])\n' + body + "\n")
    with pytest.raises(RuleErrors) as info:
        load_rulebase(tmp_path)
    e = info.value.errors[0]
    assert phrase in e.message and e.line == 4 and str(e).startswith(f"{tmp_path / 'x.rules'}:4:")


def test_a_claim_that_tips_a_sum_over_violates_the_rule(rb):
    from symbolic import Claim, Provenance, Verifier
    ev = [Fact("purchase", ("ann", "a", v("EUR 2000")), 1.0, Provenance("document", "orders.md"))]
    claim = Claim(Fact("purchase", ("ann", "b", v("EUR 3500")), 1.0, Provenance("answer")), "t", 0, 1)
    (c,) = Verifier(rb).verify([claim], ev).claims
    assert c.verdict == "violates_rule" and c.rule_ids == ["R_SPLIT"]
    small = Claim(Fact("purchase", ("ann", "b", v("EUR 300")), 1.0, Provenance("answer")), "t", 0, 1)
    assert Verifier(rb).verify([small], ev).claims[0].verdict == "unsupported"


def test_declared_currency_rates_in_comparisons_and_extraction(tmp_path):
    from symbolic import Provenance
    (tmp_path / "r.rules").write_text(
        'type item\nentity item ax "AX"\nrelation price(item, money[USD])\n'
        'rate USD CNY 7.0\n'
        'pattern P: "{item} costs {x:money}" -> price(item, x)\n'
        'rule R_MAX "A price is at most USD 1000": if price(?i, ?x) and ?x > "7000 元" then violation "{i}: {x}"\n')
    rb = load_rulebase(tmp_path)
    assert rb.rates == {("USD", "CNY"): 7.0}
    (f, _s, _e), = rb.extract("The AX costs 8400 元.", source=Provenance("document", "d.md"))
    assert str(f) == "price(ax, 1200 USD)"                    # 8400 CNY / 7.0, in the relation's currency
    r = ForwardChainer(rb.forward_rules).run([f, Fact("price", ("ax2", v("USD 900")), 1.0)])
    assert messages(r) == ["ax: 1200 USD"]                    # 1200 USD > 7000 CNY = 1000 USD


@pytest.mark.parametrize("line, phrase", [
    ("rate USD CNY 0", "a rate of 0 cannot convert money: it must be above zero"),
    ("rate USD RMBB 7", "unknown currency 'RMBB' in a rate (did you mean 'RMB'?"),
    ("rate USD USD 1", "not USD to itself"),
    ("rate USD CNY 7\nrate CNY USD 0.15", "a second rate for CNY and USD"),
])
def test_bad_rates_are_located(tmp_path, line, phrase):
    (tmp_path / "r.rules").write_text("type t\n" + line + "\n")
    with pytest.raises(RuleErrors) as info:
        load_rulebase(tmp_path)
    assert phrase in str(info.value) and f"{tmp_path / 'r.rules'}:" in str(info.value)


def test_business_days_skip_declared_holidays(tmp_path):
    (tmp_path / "r.rules").write_text(
        'type item\nrelation received(item, date)\nrelation paid(item, date)\n'
        'holiday 2025-12-25 "Christmas"\nholiday 2025-12-26\nholiday 2025-12-27 "a Saturday: no effect"\n'
        'rule R "Paid within 3 business days": if received(?i, ?a) and paid(?i, ?b)'
        ' and business_days_between(?a, ?b) > 3 workdays then violation "{i}"\n')
    rb = load_rulebase(tmp_path)
    # 2025-12-23 (Tue) -> 2025-12-29 (Mon): Wed 24, [Thu 25, Fri 26 holidays], Mon 29 = 2 business days
    ok = run(rb, ("received", ("x", v("2025-12-23")), 1.0), ("paid", ("x", v("2025-12-29")), 1.0))
    late = run(rb, ("received", ("y", v("2025-12-23")), 1.0), ("paid", ("y", v("2025-12-31")), 1.0))  # 4
    assert (ok.violations, messages(late)) == ([], ["y"])
    with pytest.raises(RuleErrors) as info:
        (tmp_path / "r.rules").write_text("holiday 2025-02-30\n")
        load_rulebase(tmp_path)
    assert ":1:9: not a valid date" in str(info.value)


def test_comparing_amounts_in_two_currencies_without_a_rate_is_an_error(tmp_path):
    body = ('type item\nrelation price(item, money[USD])\n'
            'rule R "at most 7000 yuan": if price(?i, ?x) and ?x > "7000 元" then violation "{i}"\n')
    (tmp_path / "r.rules").write_text(body)
    with pytest.raises(RuleErrors) as info:
        load_rulebase(tmp_path)
    assert ":3:53: currency mismatch: ?x is in USD (its relation declares it), 7000 CNY is not" in str(info.value)
    (tmp_path / "r.rules").write_text(body + "rate USD CNY 7.0\n")
    assert len(load_rulebase(tmp_path).forward_rules) == 1          # a declared rate converts them


def test_sum_counts_every_matching_fact_as_accumulate_does(tmp_path):
    # issue 48: two USD 6,000 purchases under the wildcard item summed to 6,000; each matching fact counts (CLIPS,
    # Drools accumulate), the same fact stated twice (two documents) once
    (tmp_path / "a.rules").write_text(
        'relation purchase(p: text, item: text, x: money[USD])\nrelation over_budget(p: text)\n'
        'rule R_BIG "big spender": if purchase(?p, ?i, ?x) and sum(?y, purchase(?p, _, ?y)) > "USD 10000"\n'
        '    then violation "{?p} spent more than USD 10000"\n'
        'goal G_OVER "over budget": over_budget(?p) if purchase(?p, ?i, ?x) and sum(?y, purchase(?p, _, ?y)) > "USD 10000"\n',
        encoding="utf-8")
    rb = load_rulebase(tmp_path)
    facts = [Fact("purchase", ("ann", "laptop", v("USD 6000")), 1.0), Fact("purchase", ("ann", "desk", v("USD 6000")), 1.0),
             Fact("purchase", ("ann", "desk", v("USD 6000")), 1.0)]       # the desk stated twice: one purchase
    r = ForwardChainer(rb.forward_rules).run(facts)
    assert {x.message for x in r.violations} == {"ann spent more than USD 10000"}
    assert [n.args for n in BackwardChainer(rb.backward_rules, facts).prove("over_budget", ("ann",))] == [("ann",)]
    once = [facts[0], facts[0]]                                           # one USD 6,000 purchase, stated twice
    assert BackwardChainer(rb.backward_rules, once).prove("over_budget", ("ann",)) == []


def test_count_counts_distinct_facts(tmp_path):
    (tmp_path / "a.rules").write_text(
        'relation purchase(p: text, item: text, x: money[USD])\n'
        'rule R_MANY "many": if purchase(?p, ?i, ?x) and count(purchase(?p, _, _)) > 2 then violation "{?p}: many"\n',
        encoding="utf-8")
    rb = load_rulebase(tmp_path)
    two = [Fact("purchase", ("ann", i, v("USD 10")), 1.0) for i in ("a", "b")]
    assert ForwardChainer(rb.forward_rules).run(two + two).violations == []          # each stated twice: still two
    three = two + [Fact("purchase", ("ann", "c", v("USD 10")), 1.0)]
    assert {x.message for x in ForwardChainer(rb.forward_rules).run(three).violations} == {"ann: many"}


def test_a_temperature_unit_as_language_md_writes_it(tmp_path):
    # issue 48: LANGUAGE.md lists quantity[°c]; the parser refused the '°'
    (tmp_path / "a.rules").write_text(
        'type product "product"\nentity product p1 "P1"\n'
        'relation storage_temperature(p: product, t: quantity[°c]) "storage temperature"\n'
        'relation max_temperature(p: product, t: quantity[℃]) "maximum temperature"\n'
        'relation min_temperature(p: product, t: quantity[°C]) "minimum temperature"\n'
        'pattern PT: "{p:product} is stored at {t:quantity}" -> storage_temperature(p, t)\n'
        'rule R_WARM "cold chain": if storage_temperature(?p, ?t) and ?t > "8 °C" then violation "{?p} too warm"\n',
        encoding="utf-8")
    rb = load_rulebase(tmp_path)
    assert {str(rb.relations[r].params[1]) for r in ("storage_temperature", "max_temperature", "min_temperature")} \
        == {"t: quantity[°c]"}
    facts = [f for f, _s, _e in rb.extract("P1 is stored at 12 ℃.")]
    assert [f.args[1] for f in facts] == [v("12 °C")]
    assert {x.message for x in ForwardChainer(rb.forward_rules).run(facts).violations} == {"p1 too warm"}


def test_max_and_min_of_two_values(tmp_path):
    # issue 48: "the greater of this policy's entitlement and the statutory one"
    (tmp_path / "r.rules").write_text('''type person "person"
entity person ann "Ann Lee"
entity person bo "Bo Chen"
relation policy_leave(p: person, d: duration[day]) "policy leave"
relation statutory_leave(p: person, d: duration[day]) "statutory leave"
relation leave(p: person, d: duration[day]) "annual leave"
relation least(p: person, d: duration[day]) "lesser leave"
fact policy_leave(ann, "25 days")
fact statutory_leave(ann, "28 days")
fact policy_leave(bo, "30 days")
fact statutory_leave(bo, "28 days")
goal G_LEAVE "The greater of the policy's and the statutory entitlement":
    leave(?p, max(?a, ?b)) if policy_leave(?p, ?a) and statutory_leave(?p, ?b)
goal G_LEAST "The lesser":
    least(?p, min(?a, ?b)) if policy_leave(?p, ?a) and statutory_leave(?p, ?b)
''', encoding="utf-8")
    rb = load_rulebase(tmp_path)
    chainer = BackwardChainer(rb.backward_rules, rb.facts)
    got = {(rel, who): chainer.prove(rel, (who, Var("x")))[0].args[1] for rel in ("leave", "least")
           for who in ("ann", "bo")}
    assert got == {("leave", "ann"): v("28 days"), ("leave", "bo"): v("30 days"),
                   ("least", "ann"): v("25 days"), ("least", "bo"): v("28 days")}


@pytest.mark.parametrize("body, phrase", [
    ('x(?p, max(?a, ?t)) if policy_leave(?p, ?a) and title(?p, ?t)', "max of two values takes two numbers"),
    ('x(?p, max(?a, ?m)) if policy_leave(?p, ?a) and pay(?p, ?m)', "got duration and money"),
])
def test_max_of_two_values_of_different_kinds_is_an_error(tmp_path, body, phrase):
    (tmp_path / "r.rules").write_text('''type person "person"
entity person ann "Ann Lee"
relation policy_leave(p: person, d: duration[day]) "policy leave"
relation title(p: person, t: text) "title"
relation pay(p: person, m: money[GBP]) "pay"
relation x(p: person, d: duration[day]) "x"
goal G "g": ''' + body + "\n", encoding="utf-8")
    with pytest.raises(RuleErrors) as info:
        load_rulebase(tmp_path)
    assert phrase in str(info.value) and ":7:" in str(info.value)


def test_an_ordered_relations_first_matching_goal_decides(tmp_path):
    # issue 48: "the first rule that matches decides the grade" took an author nine rules with `not` guards
    (tmp_path / "r.rules").write_text('''type person "person"
entity person ann "Ann Lee"
entity person bo "Bo Chen"
entity person cy "Cy Park"
type band "band"
entity band senior "senior"
entity band middle "middle"
entity band junior "junior"
relation years(p: person, n: number) "years of service"
relation band(p: person, b: band) "pay band" ordered
relation plain_band(p: person, b: band) "band, every goal"
fact years(ann, 12)
fact years(bo, 6)
fact years(cy, 1)
goal G_SENIOR "Ten years or more: senior": band(?p, senior) if years(?p, ?n) and ?n >= 10
goal G_MIDDLE "Five years or more: middle": band(?p, middle) if years(?p, ?n) and ?n >= 5
goal G_JUNIOR "Everyone else: junior": band(?p, junior) if years(?p, ?n)
goal P_SENIOR "senior": plain_band(?p, senior) if years(?p, ?n) and ?n >= 10
goal P_JUNIOR "junior": plain_band(?p, junior) if years(?p, ?n)
''', encoding="utf-8")
    rb = load_rulebase(tmp_path)
    assert rb.relations["band"].ordered and not rb.relations["plain_band"].ordered
    chainer = BackwardChainer(rb.backward_rules, rb.facts)
    assert sorted(n.args for n in chainer.prove("band", (Var("p"), Var("b")))) == \
        [("ann", "senior"), ("bo", "middle"), ("cy", "junior")]
    assert [n.args for n in chainer.prove("band", ("bo", Var("b")))] == [("bo", "middle")]
    # a claim of a value a later goal would give is not proved: the earlier goal decided
    assert chainer.prove("band", ("bo", "junior")) == []
    assert [n.rule_ids for n in chainer.prove("band", ("bo", "middle"))] == [["G_MIDDLE"]]
    # without `ordered`, every goal that holds proves its value
    assert sorted(n.args for n in chainer.prove("plain_band", ("ann", Var("b")))) == \
        [("ann", "junior"), ("ann", "senior")]


def test_an_aggregate_bounded_by_a_date_window(tmp_path):
    # issue 48: "related purchases within 30 days are added together" had no way to be written
    (tmp_path / "r.rules").write_text('''type person "person"
entity person ann "Ann Lee"
entity person bo "Bo Chen"
relation purchase(p: person, d: date, x: money[GBP]) "purchase"
relation order(p: person, d: date, x: money[GBP]) "order"
rule R_SPLIT "Related purchases within 30 days are added together":
    if order(?p, ?on, ?x) and sum(?y, between(?d, ?on - 30 days, ?on), purchase(?p, ?d, ?y)) + ?x > "GBP 10000"
    then violation "{p}: over GBP 10,000 with the purchases of the 30 days before {on}"
rule R_MANY "Not more than two purchases in a week":
    if order(?p, ?on, ?x) and count(between(?d, ?on - 7 days, ?on), purchase(?p, ?d, _)) > 2
    then violation "{p}: too many purchases in the week before {on}"
''', encoding="utf-8")
    rb = load_rulebase(tmp_path)
    d = v
    facts = [("purchase", ("ann", d("2026-01-05"), d("GBP 6000")), 1.0),
             ("purchase", ("ann", d("2026-01-20"), d("GBP 3500")), 1.0),
             ("purchase", ("ann", d("2025-11-01"), d("GBP 9000")), 1.0),     # outside the window
             ("order", ("ann", d("2026-02-01"), d("GBP 1000")), 1.0),     # 6000 + 3500 + 1000 > 10000
             ("purchase", ("bo", d("2026-01-02"), d("GBP 9000")), 1.0),      # 30 days before: counted
             ("purchase", ("bo", d("2025-12-31"), d("GBP 9500")), 1.0),      # 32 days before: not
             ("order", ("bo", d("2026-02-01"), d("GBP 1000")), 1.0)]
    facts += [("purchase", ("bo", d(f"2026-01-{k}"), d("GBP 1")), 1.0) for k in (26, 28, 30)]
    r = run(rb, *facts)
    assert messages(r) == ["ann: over GBP 10,000 with the purchases of the 30 days before 2026-02-01",
                           "bo: over GBP 10,000 with the purchases of the 30 days before 2026-02-01",
                           "bo: too many purchases in the week before 2026-02-01"]
    # without the boundary day, bo's window holds GBP 3 and the order GBP 1,000: no violation
    late = [f for f in facts if f[1][:2] != ("bo", d("2026-01-02"))]
    assert "bo: over" not in " ".join(messages(run(rb, *late)))


@pytest.mark.parametrize("window, phrase", [
    ("between(?on, ?on - 30 days, ?on)", "between(?v, low, high) bounds a variable of the facts it adds up"),
    ('between(?d, "GBP 5", ?on)', "between's bounds must be of ?d's kind (date), got money"),
])
def test_a_bad_window_is_located(tmp_path, window, phrase):
    (tmp_path / "r.rules").write_text('''type person "person"
entity person ann "Ann Lee"
relation purchase(p: person, d: date, x: money[GBP]) "purchase"
relation order(p: person, d: date, x: money[GBP]) "order"
rule R "r":
    if order(?p, ?on, ?x) and sum(?y, ''' + window + ''', purchase(?p, ?d, ?y)) > "GBP 10"
    then violation "x"
''', encoding="utf-8")
    with pytest.raises(RuleErrors) as info:
        load_rulebase(tmp_path)
    assert phrase in str(info.value) and ":6:" in str(info.value)

"""Rule-base size (issue 19 item 7): a size limit with a clear error, reloads that take turns and free
the old rule base, no reference cycles (so replacing a rule base frees it at once)."""
import gc
import sys
import threading

import pytest

from symbolic import RuleBaseHolder, RuleErrors, load_rulebase

RULE = 'rule R{i} "limit {i}": if r(?x, ?v) and ?v > {i} days then violation "{{x}}"\n'


def write(tmp_path, n):
    (tmp_path / "r.rules").write_text("type item\nrelation r(item, duration[day])\n"
                                      + "".join(RULE.format(i=i) for i in range(n)))


def test_the_size_limit_is_a_located_error(tmp_path):
    write(tmp_path, 30)
    with pytest.raises(RuleErrors) as info:
        load_rulebase(tmp_path, max_statements=20)
    (e,) = info.value.errors
    assert (e.line, e.column) == (21, 1)        # the 21st statement: type, relation, then R0 … R17, R18
    assert "more than 20 statements" in e.message and "VERIRAG_RULES_MAX_STATEMENTS" in e.message
    assert len(load_rulebase(tmp_path, max_statements=0).forward_rules) == 30    # 0: no limit


def test_a_rule_base_has_no_reference_cycles(tmp_path):
    write(tmp_path, 200)
    load_rulebase(tmp_path)                      # warm the parser's caches
    gc.collect()
    gc.disable()
    try:
        before = sys.getallocatedblocks()
        rb = load_rulebase(tmp_path)
        assert sys.getallocatedblocks() - before > 10_000
        del rb                                    # refcounting alone must free it
        assert sys.getallocatedblocks() - before < 2_000
    finally:
        gc.enable()


def test_reloads_take_turns_and_the_old_rules_serve_meanwhile(tmp_path):
    write(tmp_path, 5)
    holder = RuleBaseHolder(tmp_path)
    old = holder.current
    write(tmp_path, 400)
    seen = []
    t = threading.Thread(target=lambda: seen.append(holder.reload()))
    t.start()
    during = holder.current                       # while the reload runs (or just after)
    t.join()
    second = holder.reload()
    assert seen == [[]] and second == [] and holder.generation == 3
    assert during in (old, holder.current) and len(holder.current.forward_rules) == 400
    write(tmp_path, 3)
    (tmp_path / "bad.rules").write_text("rule X oops\n")
    assert holder.reload() and len(holder.current.forward_rules) == 400   # a broken reload keeps the rules

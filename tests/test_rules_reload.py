"""Hot reload keeps the previous rule base when the new files fail to load."""
import pytest

from symbolic import RuleBaseHolder, RuleError

GOOD = 'relation p(text)\nrule F1 "first": if p(?x) then violation "x"\n'


def test_reload_swaps_on_success_and_keeps_old_on_error(tmp_path):
    f = tmp_path / "a.rules"
    f.write_text(GOOD)
    holder = RuleBaseHolder(tmp_path)
    first = holder.current
    assert [r.id for r in first.rules] == ["F1"]
    f.write_text(GOOD + 'rule F2 "second": if p(?x) then violation "y"\n')
    assert holder.reload() == [] and [r.id for r in holder.current.rules] == ["F1", "F2"]
    second = holder.current
    f.write_text(GOOD + 'rule F3 "broken": if q(?x) then violation "z"\n')
    errors = holder.reload()
    assert [(e.line, e.column) for e in errors] == [(3, 22)] and "unknown relation 'q'" in errors[0].message
    assert holder.current is second and holder.generation == 2
    f.write_text("rule")
    assert holder.reload()[0].message.startswith("unexpected end of file")
    assert holder.current is second


def test_first_load_must_succeed(tmp_path):
    (tmp_path / "a.rules").write_text("relation p(")
    with pytest.raises(RuleError):
        RuleBaseHolder(tmp_path)


def test_a_rule_base_in_use_is_never_emptied_by_a_reload(tmp_path):
    """A request that took the rule base before a reload keeps it whole: the old one is emptied (to free its
    memory without stalling) only once nothing but the retirement list refers to it."""
    from symbolic.reload import Retirement

    f = tmp_path / "a.rules"
    f.write_text(GOOD)
    retired = Retirement(poll_s=3600)            # swept by hand below, not by its thread
    holder = RuleBaseHolder(tmp_path, retirement=retired)
    in_use = holder.current                      # what a request in flight holds
    f.write_text(GOOD + 'rule F2 "second": if p(?x) then violation "y"\n')
    assert holder.reload() == [] and retired.pending() == 1
    assert retired.sweep() == 1                  # still referred to: kept, whole
    assert [r.id for r in in_use.rules] == ["F1"]
    del in_use
    assert retired.sweep() == 0 and retired.released == 1


def test_a_rule_base_still_used_after_the_wait_is_let_go_not_emptied(tmp_path):
    from symbolic.reload import Retirement

    (tmp_path / "a.rules").write_text(GOOD)
    rb = RuleBaseHolder(tmp_path).current
    retired = Retirement(poll_s=3600, max_wait_s=0.0)
    retired.add(rb)
    assert retired.sweep() == 0 and retired.released == 0
    assert [r.id for r in rb.rules] == ["F1"]    # dropped from the list, never emptied under its user


def test_versions_follow_the_files_content(tmp_path):
    f = tmp_path / "a.rules"
    f.write_text(GOOD)
    holder = RuleBaseHolder(tmp_path)
    first = holder.version
    assert len(first) == 12 and first == holder.current.version
    f.write_text(GOOD + 'rule F2 "second": if p(?x) then violation "y"\n')
    assert holder.reload() == [] and holder.version != first
    f.write_text(GOOD)
    assert holder.reload() == [] and holder.version == first      # the same files, the same version


def test_a_reload_whose_preparation_fails_keeps_the_old_rules(tmp_path):
    f = tmp_path / "a.rules"
    f.write_text(GOOD)
    holder = RuleBaseHolder(tmp_path)
    old = holder.current
    f.write_text(GOOD + 'rule F2 "second": if p(?x) then violation "y"\n')

    def prepare(new):
        assert [r.id for r in new.rules] == ["F1", "F2"]
        raise OSError("the knowledge base could not be read")

    errors = holder.reload(prepare)
    assert len(errors) == 1 and "could not be put in service" in str(errors[0])
    assert "the knowledge base could not be read" in str(errors[0])
    assert holder.current is old and holder.generation == 1
    seen = []
    assert holder.reload(seen.append) == [] and seen == [holder.current] and holder.generation == 2

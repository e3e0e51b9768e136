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

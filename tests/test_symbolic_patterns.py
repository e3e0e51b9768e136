"""Plain pattern strings: which characters are syntax and which are literal (escapes), end to end
through the rule-file parser, the pattern compiler and RuleBase.extract."""
from pathlib import Path

import pytest

from symbolic import Provenance, RuleErrors, load_rulebase

VOCAB = '''entity city "Shanghai" aka "上海"
entity city "Berlin"
relation hotel_limit(city, money[CNY])
relation note(city, text)
'''


def rb_with(tmp_path: Path, *patterns: str):
    (tmp_path / "p.rules").write_text(VOCAB + "\n".join(patterns) + "\n", encoding="utf-8")
    return load_rulebase(tmp_path)


def found(rb, text: str) -> list[tuple[str, str]]:
    return [(str(f), text[s:e]) for f, s, e in rb.extract(text, source=Provenance("document", "d.md"))]


def test_escaped_bar_is_a_literal_bar_not_a_choice(tmp_path):
    rb = rb_with(tmp_path, r'pattern T1: "{city} \| {x:money}" -> hotel_limit(city, x)')
    assert found(rb, "| Shanghai | 500 元 |") == [("hotel_limit(shanghai, 500 CNY)", "Shanghai | 500 元")]
    # were `\|` a choice, each side alone would match: a bare city or a bare amount
    assert found(rb, "Shanghai 500 元") == []
    assert found(rb, "Shanghai, then 500 元") == []
    assert found(rb, "500 元") == []


def test_unescaped_bar_still_separates_choices(tmp_path):
    rb = rb_with(tmp_path, 'pattern T1: "hotel (in|at) {city} (is|costs) {x:money}" -> hotel_limit(city, x)')
    assert [f for f, _ in found(rb, "The hotel at Berlin costs 300 元.")] == ["hotel_limit(berlin, 300 CNY)"]
    assert [f for f, _ in found(rb, "The hotel in 上海 is 500 元.")] == ["hotel_limit(shanghai, 500 CNY)"]


def test_escaped_brackets_parentheses_dots_and_quotes_are_literal(tmp_path):
    rb = rb_with(tmp_path,
                 r'pattern T1: "{city} \(max\) {x:money}" -> hotel_limit(city, x)',
                 r'pattern T2: "\[{city}\] \"{t:text}\"\." -> note(city, t)')
    assert found(rb, "Berlin (max) 300 元") == [("hotel_limit(berlin, 300 CNY)", "Berlin (max) 300 元")]
    assert found(rb, "Berlin max 300 元") == []            # `\(max\)` is not an optional group
    assert found(rb, '[Berlin] "book early".') == [("note(berlin, book early)", '[Berlin] "book early".')]
    assert found(rb, 'Berlin "book early".') == []         # `\[…\]` is not an optional part
    assert found(rb, '[Berlin] "book early"!') == []       # `\.` is a dot, not any character


def test_unescaped_brackets_and_parentheses_are_syntax(tmp_path):
    rb = rb_with(tmp_path, 'pattern T1: "[the] hotel limit (for|in) {city} is {x:money}" -> hotel_limit(city, x)')
    assert [f for f, _ in found(rb, "hotel limit in Berlin is 300 元")] == ["hotel_limit(berlin, 300 CNY)"]
    assert [f for f, _ in found(rb, "The hotel limit for Berlin is 300 元")] == ["hotel_limit(berlin, 300 CNY)"]


def test_escaped_brace_is_literal_text_not_a_placeholder(tmp_path):
    rb = rb_with(tmp_path, r'pattern T1: "\{city} {city} {x:money}" -> hotel_limit(city, x)')
    assert [f for f, _ in found(rb, "{city} Berlin 300 元")] == ["hotel_limit(berlin, 300 CNY)"]
    assert found(rb, "Berlin Berlin 300 元") == []


def test_escaped_backslash_is_a_backslash(tmp_path):
    rb = rb_with(tmp_path, r'pattern T1: "{city}\\{x:money}" -> hotel_limit(city, x)')
    assert [f for f, _ in found(rb, "Berlin\\300 元")] == ["hotel_limit(berlin, 300 CNY)"]
    assert found(rb, "Berlin 300 元") == []


def test_regex_pattern_keeps_regex_escapes(tmp_path):
    rb = rb_with(tmp_path, r'pattern T1: re"{city}\s*\|\s*{x:money}" -> hotel_limit(city, x)')
    assert [f for f, _ in found(rb, "Berlin|300 元")] == ["hotel_limit(berlin, 300 CNY)"]
    assert found(rb, "Berlin 300 元") == []


@pytest.mark.parametrize("escape", ["d", "n", "年"])
def test_letter_escape_in_plain_pattern_is_an_error_at_its_column(tmp_path, escape):
    with pytest.raises(RuleErrors) as ei:
        rb_with(tmp_path, 'pattern T1: "{city} costs \\' + escape + '{x:money}" -> hotel_limit(city, x)')
    (err,) = ei.value.errors
    # line 5 (after the 4 vocabulary lines); the backslash is the 27th character of the line
    assert (err.line, err.column) == (5, 27)
    assert f"'\\{escape}' has no meaning in a pattern text" in err.message


OPTIONAL = '''entity city "Berlin"
relation hotel_limit(city, money[CNY])
relation has_hotel(city)
relation note(city, text)
pattern O1: "hotel in {city} [costs {x:money}]" -> hotel_limit(city, x)
pattern O2: "hotel in {city} [costs {x:money}]" -> has_hotel(city)
pattern O3: "{city} note[ \\"{t:text}\\"]" -> note(city, t)
pattern O4: re"(?:{c:city}|{y:money}) rate" -> hotel_limit(c, y)
'''


@pytest.fixture
def optional_rb(tmp_path):
    (tmp_path / "o.rules").write_text(OPTIONAL, encoding="utf-8")
    return load_rulebase(tmp_path)


def test_optional_placeholder_that_did_not_match_skips_only_relations_needing_it(optional_rb):
    # O1 needs x, which the optional part did not match: no fact; O2 does not use x: extracted
    assert found(optional_rb, "The hotel in Berlin.") == [("has_hotel(berlin)", "hotel in Berlin")]
    assert sorted(found(optional_rb, "The hotel in Berlin costs 300 元.")) == [
        ("has_hotel(berlin)", "hotel in Berlin costs 300 元"),
        ("hotel_limit(berlin, 300 CNY)", "hotel in Berlin costs 300 元")]


def test_optional_text_placeholder_and_regex_choice_do_not_crash(optional_rb):
    assert found(optional_rb, 'Berlin note "book early"') == [("note(berlin, book early)", 'Berlin note "book early"')]
    assert found(optional_rb, "Berlin note") == []          # t did not match: note/2 lacks an argument
    # each branch of the choice leaves the other placeholder unmatched: never both arguments
    assert found(optional_rb, "Berlin rate") == [] and found(optional_rb, "300 元 rate") == []


def test_a_gap_from_an_entity_reads_the_nearest_naming_of_it(tmp_path):
    (tmp_path / "n.rules").write_text('''entity person sun "Sun Peng"
entity person zhao "Zhao Lin"
entity depot chengdu "Chengdu depot"
relation reports_to(person, person)
relation person_location(person, depot)
pattern AT: "{person} ... at the {depot}" -> person_location(person, depot)
pattern R: re"{p:person}\\s+reports\\s+to\\s+{q:person}" -> reports_to(p, q)
''', encoding="utf-8")
    rb = load_rulebase(tmp_path)
    text = "Sun Peng reports to Zhao Lin, who works at the Chengdu depot."
    assert found(rb, text) == [("reports_to(sun, zhao)", "Sun Peng reports to Zhao Lin"),
                               ("person_location(zhao, chengdu)", "Zhao Lin, who works at the Chengdu depot")]
    # one person named: the gap reads from them as before
    assert found(rb, "Sun Peng works at the Chengdu depot.") == [
        ("person_location(sun, chengdu)", "Sun Peng works at the Chengdu depot")]


def test_emphasis_and_a_space_the_author_did_not_write_do_not_stop_a_pattern(tmp_path):
    # blind/03's author had to write [**] into 9 patterns and spaces into Chinese ones (issue 48)
    rb = rb_with(tmp_path, 'pattern T1: "hotel in {city} is capped at {x:money} a night" -> hotel_limit(city, x)',
                 'pattern T2: "{city}的酒店上限为{x:money}" -> hotel_limit(city, x)',
                 r'pattern T3: "\| {city} \| {x:money} \|" -> hotel_limit(city, x)')
    assert [f for f, _ in found(rb, "The hotel in Berlin is capped at **300 元 a night**.")] == \
        ["hotel_limit(berlin, 300 CNY)"]
    assert [f for f, _ in found(rb, "The hotel in __Berlin__ is capped at *300 元* a night.")] == \
        ["hotel_limit(berlin, 300 CNY)"]
    assert [f for f, _ in found(rb, "上海的酒店上限为 500 元。")] == ["hotel_limit(shanghai, 500 CNY)"]
    assert [f for f, _ in found(rb, "| **Shanghai** | 500 元 |")] == ["hotel_limit(shanghai, 500 CNY)"]
    # but other words still stop it
    assert found(rb, "The hotel in Berlin is capped at roughly 300 元 a night.") == []
    assert found(rb, "上海的酒店上限通常为 500 元。") == []

"""pipeline.lang: word lists and cue tables read from lang/<code>/*.toml, merged across languages, with clear
errors for data that cannot be used."""
from __future__ import annotations

import re

import pytest

from pipeline import lang
from pipeline.lang import lexicon
from pipeline.lang.lexicon import Lexicon, LexiconError


@pytest.fixture()
def lang_dir(tmp_path, monkeypatch):
    """A lexicon folder of the test's own, the caches emptied before and after."""
    monkeypatch.setattr(lexicon, "LANG_DIR", tmp_path)
    for cached in (Lexicon.load, lexicon.words, lexicon.cue_table):
        cached.cache_clear()
    yield tmp_path
    for cached in (Lexicon.load, lexicon.words, lexicon.cue_table):
        cached.cache_clear()


def _write(root, code: str, stage: str, text: str) -> None:
    (root / code).mkdir(exist_ok=True)
    (root / code / f"{stage}.toml").write_text(text, encoding="utf-8")


def test_word_lists_merge_languages_in_order_and_word_pattern_bounds_english_words_only(lang_dir):
    _write(lang_dir, "en", "question", 'total = ["total", "in all"]\n')
    _write(lang_dir, "zh", "question", "total = ['一共', '合计']\n")
    assert lang.words("question.total") == ("total", "in all", "一共", "合计")
    assert lang.alternation("question.total") == "total|in all|一共|合计"
    rx = re.compile(lang.word_pattern("question.total"))
    assert rx.pattern == r"\b(?:total|in all)\b|一共|合计"
    assert rx.search("what is the total?") and not rx.search("subtotals") and rx.search("一共多少")
    assert Lexicon.load("zh").words("question.total") == ("一共", "合计")


def test_cue_tables_merge_rows_by_id_keeping_the_first_languages_order(lang_dir):
    _write(lang_dir, "en", "question", '[[types]]\nid = "percent"\ncue = "percent"\ntypes = ["percent"]\n\n'
                                       '[[types]]\nid = "often"\ntypes = ["duration"]\n\n'
                                       '[[types]]\nid = "much"\ncue = "how much"\ntypes = ["money"]\nnouns = ["cost"]\n')
    _write(lang_dir, "zh", "question", '[[types]]\nid = "much"\ncue = "多少"\nnouns = ["费用"]\n\n'
                                       '[[types]]\nid = "often"\ncue = "多久一次"\n\n'
                                       '[[types]]\nid = "zh_only"\ncue = "几折"\ntypes = ["percent"]\n')
    rows = lang.cue_table("question.types")
    assert [r["id"] for r in rows] == ["percent", "often", "much", "zh_only"]
    much = rows[2]
    assert much["cue"] == "how much|多少" and much["types"] == ["money"] and much["nouns"] == ["cost", "费用"]
    assert rows[1]["cue"] == "多久一次" and rows[1]["types"] == ["duration"]


def test_a_key_no_language_defines_is_an_error_naming_it(lang_dir):
    _write(lang_dir, "en", "question", 'total = ["total"]\n')
    with pytest.raises(LexiconError, match="question.nothing"):
        lang.words("question.nothing")
    with pytest.raises(LexiconError, match="is a word list, not a cue table"):
        Lexicon.load("en").table("question.total")


@pytest.mark.parametrize("text, message", [
    ('total = ["a", [1]]\n', "mixes words and tables"),
    ("total = 3\n", "must be a list"),
    ('[[types]]\ncue = "x"\n', "needs an id"),
    ("total = [\n", "question.toml"),
])
def test_bad_data_files_name_the_file_and_what_is_wrong(lang_dir, text, message):
    _write(lang_dir, "en", "question", text)
    with pytest.raises(LexiconError, match=message):
        Lexicon.load("en")


def test_an_unknown_language_is_an_error(lang_dir):
    with pytest.raises(LexiconError, match="no lexicon for language 'fr'"):
        Lexicon.load("fr")


def test_the_shipped_lexicons_load_and_every_cue_compiles():
    for code in lang.LANGUAGES:
        lex = Lexicon.load(code)
        for key, value in lex.entries.items():
            for row in value:
                pattern = row.get("cue", "") if isinstance(row, dict) else row
                re.compile(pattern)      # a cue that does not compile fails here, naming nothing else
            assert key.count(".") == 1


def test_a_phrase_is_one_text_per_language_with_english_as_the_fallback(lang_dir):
    _write(lang_dir, "en", "answers", 'not_right = ["That is not right: "]\ntwo = ["a", "b"]\n')
    _write(lang_dir, "zh", "answers", "not_right = ['这个前提不对：']\n")
    assert lang.phrase("answers.not_right", "zh") == "这个前提不对："
    assert lang.phrase("answers.not_right", "en") == "That is not right: "
    assert lang.phrase("answers.not_right", "fr") == "That is not right: "
    with pytest.raises(LexiconError, match="exactly one text"):
        lang.phrase("answers.two", "en")

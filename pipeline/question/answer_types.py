"""What kind of answer a question asks for, read from its words: the answer types (a duration, an amount, yes or
no, a person, ...), whether it asks two things, and the currency it wants an amount in."""
from __future__ import annotations

import re

from pipeline.lang import alternation, cue_table, word_pattern
from pipeline.text.sentences import last_sentence
from pipeline.text.values import find_values

# The answer types that are values (the value kinds of symbolic.values); a question can also ask "yesno",
# "person" or "entity".
VALUE_ANSWER_TYPES = frozenset({"duration", "money", "quantity", "percent", "date", "number"})

# The rows of lang/<code>/question.toml [[answer_types]]: the first row whose cue matches decides.
_TYPE_RES = [(re.compile(row["cue"], re.IGNORECASE), tuple(row["types"])) for row in cue_table("question.answer_types")]


# The nouns a question word asks for, which a relation's name may use where the question does not: "how far
# can it go" asks the range (lang/<code>/question.toml [[asked_nouns]]).
_ASKED_NOUNS = [(re.compile(row["cue"], re.IGNORECASE), frozenset(row["nouns"])) for row in cue_table("question.asked_nouns")]
WEAK_CUE = "~"


def asked_nouns(question: str) -> frozenset[str]:
    """The nouns the question's words ask for (English and Chinese cues; see _ASKED_NOUNS); a weak one is
    marked with WEAK_CUE."""
    return frozenset().union(*(nouns for rx, nouns in _ASKED_NOUNS if rx.search(question)))


# A total is computed from what sources state per item or per period ("the total per diem for 4 full days", a
# Chinese "altogether how much": lang/zh/question.toml total_words): no sentence states it.
TOTAL_WORDS = re.compile(word_pattern("question.total_words"), re.IGNORECASE)


# "Who approves thesis extensions, and what is that person's grade?": a second question joined by "and".
_SECOND_ASK = re.compile(alternation("question.second_question"), re.IGNORECASE)


def asks_two(question: str) -> bool:
    """A question of two question sentences ("... within how many days at most can it be returned? What is the
    time limit for an exchange?"), or of two questions joined by "and" ("Who approves X, and what is their
    grade?"), asks two things."""
    return len(re.findall(r"[?？]", question.strip().rstrip("?？"))) >= 1 or bool(_SECOND_ASK.search(question))


def answer_types(question: str) -> frozenset[str]:
    """The answer types a question expects (empty when its wording gives no cue); a question whose
    sentences before the last set the scene is read by its last ("…deputises for her. Can he approve …?")."""
    for text in (question, last_sentence(question)):
        for rx, types in _TYPE_RES:
            if rx.search(text):
                return frozenset(types)
    return frozenset()


# A currency the question asks its answer in ("in Chinese yuan", a Chinese "how many euros"), said outside any
# amount it states ("a EUR 220 hotel" is a premise). A bare Chinese "yuan" is read only after "how many" (the
# same character ends the Chinese for "unit", which is no money: lang/zh/question.toml asked_currency).
_ASKED_CURRENCY = [(re.compile(row["cue"], re.IGNORECASE), row["currency"]) for row in cue_table("question.asked_currency")]


def asked_currency(question: str) -> str | None:
    """The one currency ``question`` asks for, or None (none named, or several: a conversion)."""
    chars = list(question)
    for _v, _k, s, e in find_values(question):
        chars[s:e] = " " * (e - s)
    text = "".join(chars)
    found = {cur for rx, cur in _ASKED_CURRENCY if rx.search(text)}
    return found.pop() if len(found) == 1 else None


# The words that ask (English wh-words, Chinese question words): the clause holding the last of them is the one
# that asks; the clauses before it set the scene ("Premium Support is free …, so what does Standard Support cost?").
_ASKING_WORD = re.compile(word_pattern("question.asking_words"), re.IGNORECASE)
_CLAUSE_END = re.compile(r"[,;:.!?，；：。！？]")


def asking_clause(question: str) -> tuple[int, int]:
    """The span of the clause that asks: from the punctuation before the last question word to the end (the
    whole question when no question word is found)."""
    last = None
    for m in _ASKING_WORD.finditer(question):
        last = m
    if last is None:
        return 0, len(question)
    ends = [m.end() for m in _CLAUSE_END.finditer(question, 0, last.start())]
    return (ends[-1] if ends else 0), len(question)


# The asker's own case or a supposition ("my trip", "if it costs", "2 months of warranty left"): values
# there describe a situation, not what the documents say.
SITUATION = re.compile(word_pattern("question.situation_words"), re.IGNORECASE)

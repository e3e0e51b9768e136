"""How a question's words say a relation's name: its words (or their roots: "approve" says "approval"), a
Chinese name's characters, and the values a name holds: the "30-day" of "30-day pass" and the "a day" of "a day
pass" name a product, they state no period, and a name that holds a value is said only with that value; a name said
by its units of time alone is not said, and half a name said counts where the sentence embedder agrees."""
from __future__ import annotations

import re
import weakref
from typing import Sequence

from pipeline.lang import alternation, words
from pipeline.text.terms import _STOP, CJK_RUN_RE, content_terms
from pipeline.text.values import find_values
from symbolic import RuleBase
from symbolic.model import VALUE_TYPES, RelationSig
from symbolic.values import parse_number_word


def _number_word(word: str) -> bool:
    try:
        parse_number_word(word)
        return True
    except ValueError:
        return False


def value_terms(text: str) -> set[str]:
    """Terms for the values ``text`` states, which content_terms blanks: each value as "#<value>" ("#30 days"
    for "30-day" and "30 days" alike), and the unit word of one written without digits ("a day": "day"), which
    is as much a word of a name as of a period."""
    out: set[str] = set()
    for value, _kind, s, e in find_values(text):
        out.add(f"#{value}")
        said = text[s:e]
        if not re.search(r"\d", said):
            out.update(w for w in re.findall(r"[a-z]+", said.lower()) if w not in _STOP and not _number_word(w))
    return out


# Derivational endings a question and a relation's name may differ by: "approve" / "approval limit",
# "charging" / "charge time", "rental" / "rent" (lang/<code>/question.toml word_endings). Longest first; at least
# four letters are left.
_ENDINGS = words("question.word_endings")


def word_root(word: str) -> str:
    """``word`` without one derivational or inflectional ending (English; other words as they are)."""
    if word.isascii():
        for end in _ENDINGS:
            if word.endswith(end) and len(word) - len(end) >= 4:
                return word[:-len(end)]
    return word


def name_terms(text: str) -> set[str]:
    """content_terms with the values kept as value_terms: a name's words, all of them."""
    return content_terms(text) | value_terms(text)


_NAME_RES: "weakref.WeakKeyDictionary[RuleBase, list[re.Pattern]]" = weakref.WeakKeyDictionary()


def _name_patterns(rulebase: RuleBase) -> list[re.Pattern]:
    """Each English relation name as a pattern of its words, hyphens or spaces between them."""
    found = _NAME_RES.get(rulebase)
    if found is None:
        found = []
        for sig in rulebase.relations.values():
            for name in relation_names(sig):
                words = re.findall(r"[A-Za-z0-9]+", name)
                if len(words) >= 2 and name.isascii():
                    found.append(re.compile(r"(?<!\w)" + r"[\s-]+".join(map(re.escape, words)) + r"(?:e?s)?(?!\w)",
                                            re.IGNORECASE))
        _NAME_RES[rulebase] = found
    return found


def named_value_spans(question: str, rulebase: RuleBase | None) -> list[tuple[int, int]]:
    """The spans of ``question``'s values that lie in (or overlap) a relation's name said whole: "a 30-day pass",
    "a day pass"; not the "3 nights" of "the hotel limit per night for 3 nights"."""
    values = [(s, e) for _v, _k, s, e in find_values(question)]
    if rulebase is None or not values:
        return []
    said = [(m.start(), m.end()) for p in _name_patterns(rulebase) for m in p.finditer(question)]
    return [(s, e) for s, e in values if any(s < ne and ns < e for ns, ne in said)]


def relation_names(sig: RelationSig) -> list[str]:
    """A relation's names: its label, aliases and identifier in words."""
    return [n for n in (sig.label, *sig.aliases, sig.name.replace("_", " ")) if n]


# Modal words of a Chinese name ("may", "can", "is allowed to": lang/zh/question.toml name_modals)
_ZH_MODAL = re.compile(alternation("question.name_modals"))


def _chinese_share(name: str, q_terms: frozenset[str]) -> float | None:
    """The share of a Chinese name's characters that the question's bigrams cover; None for a name with any
    Latin letter. By bigrams alone the two characters of "lodging" would be 1 of the 5 bigrams of the six
    characters of the Chinese "city lodging standard", where "hotel" is 1 of the 3 words of "hotel limit in a city";
    by characters they are 2 of 6: one word of three either way."""
    if re.search(r"[A-Za-z]", name):
        return None
    # a modal says how, not what, as English "may" is no word of "may approve": the Chinese "may approve" is said
    # by "can or cannot ... approve"
    runs = CJK_RUN_RE.findall(_ZH_MODAL.sub(" ", name)) or CJK_RUN_RE.findall(name)
    if not runs:
        return None
    covered = 0
    for run in runs:
        hit = [False] * len(run)
        for i in range(len(run) - 1):
            if run[i:i + 2] in q_terms:
                hit[i] = hit[i + 1] = True
        covered += sum(hit)
    return covered / sum(len(r) for r in runs)


# A name's word said in another form ("approve" for "approval") counts half: "may I book business class" says
# "business class … flight" of one relation better than the "flight booking" of another.
ROOT_WEIGHT = 0.5


def relation_score(sig: RelationSig, q_terms: frozenset[str]) -> float:
    """The best share of one of the relation's names (label, aliases, id words) that the question uses: of
    its words (or, at ROOT_WEIGHT, their roots: "approve" says "approval", or a weak cue: "~limit" of "up to"), or
    of a Chinese name's characters."""
    best = 0.0
    roots = {word_root(w) for w in q_terms}
    for name in relation_names(sig):
        t = name_terms(name)
        if t:
            best = max(best, sum(1.0 if w in q_terms else ROOT_WEIGHT if word_root(w) in roots or "~" + w in q_terms
                                 else 0.0 for w in t) / len(t))
        share = _chinese_share(name, q_terms)
        if share is not None:
            best = max(best, share)
    return best


# Two weak signals that agree: half of a relation's name said, and the sentence embedder finding that relation the
# closest of those the question could ask, not far off and ahead of the next ("How long is the AX-200 under
# warranty?": "warranty" is half of "robot warranty" and of "battery warranty"; the embedder prefers the first).
HALF_NAMED = 0.5
HALF_MEANT = 0.5
HALF_LEAD = 0.05
# Units of time: said alone, they name no relation that has other words ("teaching hours per week"); a Chinese
# question's are character pairs ("every week ... hours") (lang/<code>/question.toml time_words)
_TIME_WORDS = frozenset(words("question.time_words"))
# Words after "how" that ask, not qualify: "how much power" says "power" unqualified.
_HOW_WORDS = frozenset(words("question.how_words"))


def half_named_and_meant(scored: Sequence[tuple[float, RelationSig]], text: str,
                         terms: frozenset[str]) -> tuple[RelationSig, float] | None:
    """The relation the sentence embedder finds closest (``scored``: pipeline.question.relation_namer's similarities, by
    HALF_MEANT, HALF_LEAD ahead) where the question says at least HALF_NAMED of its name; its score is the share
    of the name said."""
    if not scored or scored[0][0] < HALF_MEANT or (len(scored) > 1 and scored[0][0] - scored[1][0] < HALF_LEAD):
        return None
    said = relation_score(scored[0][1], terms)
    # a unit of time said is half of "hours per week", but "earn per hour" asks no hours
    if relation_score(scored[0][1], terms - _TIME_WORDS) < HALF_NAMED or _another_kind(text, scored[0][1]):
        return None
    return scored[0][1], said


# The one relation the question's own names could ask: the entities it names bind the arguments of no other
# relation of the asked type ("How many km between level 1 services?": a maintenance level has one distance), the
# embedder, weak as it is here, finds none of the relations the question could ask closer (not "How long is the
# warranty on the E12 bus?", which it finds closer to the weekly hours than to the charging time), and the question
# says a word of its name or its unit.
SOLE_MEANT = 0.2


def sole_and_meant(scored: Sequence[tuple[float, RelationSig]], text: str, named: Sequence[RelationSig],
                   rulebase: RuleBase) -> tuple[RelationSig, float] | None:
    """``named``: the relations the question's named entities bind, of those it could ask. Their one relation,
    where the sentence embedder finds it the closest of those (``scored``: pipeline.question.relation_namer's
    similarities) by SOLE_MEANT at least, with that similarity."""
    if len(named) != 1:
        return None
    if not scored or scored[0][1].name != named[0].name or scored[0][0] < SOLE_MEANT or _another_kind(text, named[0]):
        return None
    if relation_score(named[0], frozenset(content_terms(text)) - _TIME_WORDS) == 0 and not _in_its_unit(text, named[0]):
        return None     # "How long after … are their accounts deleted?" says nothing of "annual leave"
    if _owns_another(text, named[0]) or _names_a_link(text, rulebase):
        return None
    return scored[0][1], scored[0][0]


# Nouns for the person one reports to (English): a question saying one asks about that person
_HOP_NOUNS = frozenset(words("question.hop_nouns"))


def _names_a_link(text: str, rulebase: RuleBase) -> bool:
    """The question names a relation between two entities ("reports to", "manager"), so it may ask about the
    entity that link leads to, not the one it names: no sole relation of the named entity is asked."""
    terms = frozenset(content_terms(text))
    if terms & _HOP_NOUNS:
        return True
    return any(relation_score(sig, terms) >= HALF_NAMED for sig in rulebase.relations.values()
               if sig.arity == 2 and all(p.type not in VALUE_TYPES for p in sig.params))


_OWNED = re.compile(r"['’]s\s+([A-Za-z][A-Za-z-]*)")


def _owns_another(text: str, sig: RelationSig) -> bool:
    """Something of a named entity's that is no word of the relation's name: "What may Sun Peng's manager
    approve?" asks about the manager, not about Sun Peng (English only)."""
    named = {t for n in relation_names(sig) for t in content_terms(n)}
    return any(content_terms(m.group(1)) - named for m in _OWNED.finditer(text))


def sole_and_said(named: Sequence[RelationSig], terms: frozenset[str]) -> tuple[RelationSig, float] | None:
    """``named``: the relations of the asked type whose arguments the question's named entities bind. Their one
    relation, where the question says part of its name other than a unit of time (the Chinese "how long is a lost
    wallet kept?" says the "kept" of "lost property retention period", a wallet's one duration), with that share:
    a question the embedder cannot read (Chinese)."""
    if len(named) != 1:
        return None
    said = relation_score(named[0], terms - _TIME_WORDS)
    return (named[0], said) if said > 0 else None


def _in_its_unit(text: str, sig: RelationSig) -> bool:
    """The question names the relation's declared unit, not a unit of time ("How many km …" of a quantity[km])."""
    unit = sig.params[-1].unit or ""
    return bool(unit) and unit.lower() not in _TIME_WORDS and \
        re.search(rf"(?<![A-Za-z]){re.escape(unit)}(?![A-Za-z])", text, re.IGNORECASE) is not None


def named_by_time_alone(sig: RelationSig, terms: frozenset[str]) -> bool:
    """Only units of time of the relation's English names are said, and each of its label and aliases has other
    words: "How many hours per week is the library open?" does not name "teaching hours per week"."""
    if relation_score(sig, terms - _TIME_WORDS) > 0:
        return False
    names = [n for n in (sig.label, *sig.aliases) if n and n.isascii()]
    return bool(names) and all(content_terms(n) - _TIME_WORDS for n in names)


def _another_kind(text: str, sig: RelationSig) -> bool:
    """A word of the relation's name said with a qualifier its names lack, where a name qualifies that word with
    another: "what restocking fee applies?" asks another fee than "licence fee per robot per year"; but "keep a
    lost wallet" qualifies nothing "lost property kept for" does (English only)."""
    named = {t for n in relation_names(sig) for t in content_terms(n)}
    # each name's words in order, to tell what qualifies a word there: "licence" qualifies "fee"
    orders = [[t for w in re.findall(r"[A-Za-z][A-Za-z-]*", n.lower()) for t in content_terms(w)]
              for n in relation_names(sig)]
    words = re.findall(r"[A-Za-z][A-Za-z-]{2,}", text.lower())
    for before, word in zip(words, words[1:]):
        said, qualifier = content_terms(word), content_terms(before)
        if said & named and qualifier and not qualifier & named and before not in _HOW_WORDS and \
                any(t in order[1:] for order in orders for t in said):
            return True
    return False

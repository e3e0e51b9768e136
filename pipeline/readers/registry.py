"""The readers, registered by name, and the order they read a draft in (``READERS``, the default of
``AnswererConfig.readers``): rule-file patterns first, then a relation's own name as the subject of "is", the
question's focus, the rule vocabulary, "label: value" pairs, ranges of bands, totals, the model (opt-in),
corrections, echoed premises, possessives, pronouns, entity pairs, coordinated clauses and the links of a rule's
chain, each skipping what an earlier one read. A placed value is checked as its relation claim, not twice."""
from __future__ import annotations

from typing import Callable, Iterable, Sequence, cast

from pipeline.question.focus import QuestionFocus
from pipeline.readers.apposition import apposition_pair_claims
from pipeline.readers.bands import band_claims
from pipeline.readers.chains import chain_claims, goal_conclusion_claims, goal_premise_claims
from pipeline.readers.coordination import coordinated_claims
from pipeline.readers.corrections import correction_claims
from pipeline.readers.directed_pairs import directed_pair_claims
from pipeline.readers.echoes import echo_claims
from pipeline.readers.focus import focus_claims, focus_entity_claims, lm_claims
from pipeline.readers.labels import label_claims
from pipeline.readers.patterns import extract_claims
from pipeline.readers.phrases import merged, phrase_claims, unread
from pipeline.readers.possessives import possessive_claims
from pipeline.readers.pronouns import pronoun_claims
from pipeline.readers.reading import Reader, Reading
from pipeline.readers.totals import input_claims, total_claims
from pipeline.readers.vocabulary import best_named_claims, entity_pair_claims, value_claims
from pipeline.seams import Generator, PassageLike
from pipeline.text.entities import find_entities
from pipeline.text.values import ValueMention
from symbolic import Claim, RuleBase

REGISTRY: dict[str, Reader] = {}


def reader(name: str) -> Callable[[Reader], Reader]:
    """Register a reader under ``name`` (what config orders and turns off)."""
    def register(fn: Reader) -> Reader:
        if name in REGISTRY:
            raise ValueError(f"a reader named {name!r} is registered already")
        REGISTRY[name] = fn
        return fn
    return register


@reader("named")
def _named(r: Reading) -> None:
    r.claims = best_named_claims(r.claims, r.rules)


@reader("phrases")
def _phrases(r: Reading) -> None:
    phrased = phrase_claims(r.answer, r.passages, r.focus, r.rules)
    r.claims, r.mentions = merged(r.claims, phrased), unread(r.mentions, phrased)
    r.left = unread(r.left, phrased)


@reader("focus")
def _focus(r: Reading) -> None:
    placed = focus_claims(r.answer, r.mentions, r.focus, r.rules, r.premises) if r.mentions else []
    r.place(placed)
    # A value the focus placed may state a second relation its own clause names: "Berlin is a Tier 2 city, so the
    # limit is EUR 140 per night" answers the city's limit and states the tier's (the vocabulary reader's).
    r.focus_relations = {id(m): c.fact.relation for c, m in placed}


@reader("vocabulary")
def _vocabulary(r: Reading) -> None:
    r.place([(c, m) for c, m in value_claims(r.answer, r.mentions, r.focus, r.rules)
             if r.focus_relations.get(id(m)) != c.fact.relation])


@reader("labels")
def _labels(r: Reading) -> None:
    labelled = label_claims(r.answer, r.left, r.focus, r.rules)
    r.claims += [c for c, _m in labelled]
    r.take(m for _c, m in labelled if m is not None)


@reader("bands")
def _bands(r: Reading) -> None:
    banded = band_claims(r.answer, r.mentions, r.focus, r.rules)
    r.claims += [c for c, _ms in banded]
    bounds = {id(m) for _c, (lo, hi, _v) in banded for m in (lo, hi)}
    left = {id(m) for m in r.left}
    r.band_values = {id(v) for _c, (_lo, _hi, v) in banded if id(v) in left and id(v) not in bounds}
    r.left = [m for m in r.left if id(m) not in bounds | r.band_values]


@reader("totals")
def _totals(r: Reading) -> None:
    # a band's value may also be the total a computing question asks: the totals read it, whoever placed it
    open_ids = {id(m) for m in r.left} | r.band_values
    pool = [m for m in r.mentions if id(m) in open_ids]
    totals = total_claims(r.answer, pool, r.focus, r.rules) if pool else []
    taken = {id(m) for _c, m in totals}
    rates = input_claims(r.answer, [m for m in pool if id(m) not in taken], r.focus, r.rules) if totals else []
    r.place(totals + rates)


@reader("model")
def _model(r: Reading) -> None:
    if r.left:
        # a model the answerer was given (read_answer's generator: None only where this reader is not ordered)
        r.place(lm_claims(cast(Generator, r.generator), r.context, r.answer, r.left, r.focus, r.rules))


@reader("corrections")
def _corrections(r: Reading) -> None:
    corrected = correction_claims(r.answer, r.passages, r.focus, r.rules, r.claims)
    r.claims += corrected
    r.left = [m for m in r.left if not any(c.fact.args[-1] == m.value and c.start <= m.start < c.end
                                           for c in corrected)]


@reader("echoes")
def _echoes(r: Reading) -> None:
    if r.premises:
        r.place(echo_claims(r.answer, r.left, r.premises, r.focus, r.rules, r.claims))


@reader("possessives")
def _possessives(r: Reading) -> None:
    # a possessive may say a second relation of a value another reader placed ("…grade HG8, so his limit is
    # CNY 108,000": the grade's limit and the person's)
    r.claims += [p for p in possessive_claims(r.answer, r.passages, r.rules)
                 if not any(c.fact.key == p.fact.key for c in r.claims)]


def _adding(read: Callable[[str, Sequence[PassageLike], RuleBase, list[Claim]], list[Claim]]) -> Reader:
    """A reader that reads with the claims so far and adds what it reads."""
    def run(r: Reading) -> None:
        r.claims += read(r.answer, r.passages, r.rules, r.claims)
    return run


reader("pronouns")(_adding(pronoun_claims))
reader("focus_entities")(lambda r: r.claims.extend(
    focus_entity_claims(r.answer, r.passages, r.focus, r.rules, r.claims)))
reader("entity_pairs")(_adding(entity_pair_claims))
reader("appositions")(_adding(apposition_pair_claims))
reader("directed_pairs")(_adding(directed_pair_claims))


@reader("coordination")
def _coordination(r: Reading) -> None:
    carried = coordinated_claims(r.answer, r.passages, r.rules, r.claims)
    r.claims += carried
    r.left = [m for m in r.left if not any(c.start <= m.start and m.end <= c.end for c in carried)]


reader("chains")(lambda r: r.claims.extend(chain_claims(r.answer, r.claims, r.rules)))
reader("goal_premises")(lambda r: r.claims.extend(goal_premise_claims(r.answer, r.claims, r.rules)))
reader("goal_conclusions")(lambda r: r.claims.extend(goal_conclusion_claims(r.answer, r.claims, r.rules)))

# The order the readers run in: each skips what an earlier one read, so the surest come first.
READERS: tuple[str, ...] = tuple(REGISTRY)
# Off unless a profile or the config turns it on: the model's one-token choice among candidate facts
# (measured off for both shipped profiles: bench/RESULTS.md "Extraction into the rule vocabulary").
OPT_IN = frozenset({"model"})


def check_readers(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` as an order of registered readers (ValueError naming an unknown one)."""
    names = tuple(names)
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise ValueError(f"unknown reader(s) {', '.join(map(repr, unknown))}; registered: {', '.join(REGISTRY)}")
    return names


def read(reading: Reading, order: Sequence[str] = READERS) -> Reading:
    """Run the readers of ``order`` over ``reading``, after the rule-file patterns (which every reading starts
    from; with a rule base of no relations, they are all there is)."""
    names = [(e.start, e.end) for e in find_entities(reading.answer, reading.rulebase)] \
        if reading.rulebase is not None else []
    # without a rule base extract_claims raises AttributeError (reported in issue 46)
    reading.claims, reading.mentions = extract_claims(reading.answer, reading.passages,
                                                      cast(RuleBase, reading.rulebase), names)
    reading.left = list(reading.mentions)
    if reading.rulebase is None or not reading.rulebase.relations:
        return reading
    for name in order:
        REGISTRY[name](reading)
    reading.claims.sort(key=lambda c: c.start)
    return reading


def read_answer(answer: str, passages: Sequence[PassageLike], context: Sequence[dict], focus: QuestionFocus,
                rulebase: RuleBase | None, *, generator: Generator | None = None, lm_extraction: bool = False,
                order: Sequence[str] | None = None) -> tuple[list[Claim], list[ValueMention]]:
    """The claims every reader of ``order`` (default: all but the opt-in ones, the model reader too where
    ``lm_extraction``) reads from ``answer``, sorted by position, and the value mentions none placed."""
    if order is None:
        order = [n for n in READERS if n not in OPT_IN or (n == "model" and lm_extraction)]
    done = read(Reading(answer, passages, context, focus, rulebase, generator), check_readers(order))
    return done.claims, done.left

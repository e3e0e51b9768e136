"""Relation claims the patterns miss: a value the answer states is read into the rule vocabulary, first by the
question's focus (the asked relation, about the asked entity), then by the model itself under a grammar
constraint: one of the numbered rule-base facts (relation and entity) the value could state. Every claim keeps the answer span it
was read from; values no reader places stay value claims."""
from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Sequence, cast

from pipeline.lang import alternation
from pipeline.proof.proving import COUNT_WORDS, asks_a_computation
from pipeline.question.answer_types import TOTAL_WORDS
from pipeline.question.focus import Goal, QuestionFocus, param_fits
from pipeline.question.naming import relation_score
from pipeline.seams import Generator, PassageLike, TokenizerLike
from pipeline.text.citations import cited_for
from pipeline.text.entities import EntityMention, find_entities
from pipeline.text.sentences import blanked, clause_around, sentences
from pipeline.text.terms import content_terms
from pipeline.text.values import ValueMention, find_values
from symbolic import Claim, Fact, Provenance, RuleBase
from symbolic.model import VALUE_TYPES, Entity, RelationSig
from symbolic.values import Quantity

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)

# A model's reading of which fact a value states is weaker evidence of what the answer claims than a
# rule author's pattern: its claims carry this certainty.
LM_CLAIM_CF = 0.8
MAX_LM_VALUES = 2          # constrained reads per answer (each is one short generation)
MAX_RELATIONS = 6          # relation choices offered to the model per value
MAX_SUBJECTS = 12
MAX_OPTIONS = 9            # numbered choices offered to the model: one digit token each
MIN_RELATION_SCORE = 0.5   # at least half of a relation's name among the sentence's and question's words
NONE = "none of these"


def fits(sig: RelationSig, value: object) -> bool:
    """Can ``value`` be the last argument of relation ``sig`` (type, and unit dimension)?"""
    return param_fits(sig.params[-1], value)


# A negation up to two words before a value (lang/<code>/readers.toml negations).
_NEGATION_RE = re.compile(rf"(?:{alternation('readers.negations')})\s*(?:\w+\s*){{0,2}}$", re.IGNORECASE)


def negated(answer: str, pos: int) -> bool:
    """Whether the words just before ``pos`` negate the value ("is not EUR 160", or the same in Chinese)."""
    return bool(_NEGATION_RE.search(answer[max(0, pos - 24):pos]))


def sentence_around(answer: str, pos: int) -> tuple[int, int]:
    for s, e in sentences(answer):
        if s <= pos < e:
            return s, e
    return 0, len(answer)


def sentence_claim(relation: str, args: tuple, answer: str, s: int, e: int, cited: Sequence[str], extractor: str,
                   cf: float) -> Claim:
    """The claim ``relation(*args)`` read from the answer's sentence ``s:e`` (its span, whitespace trimmed)."""
    text = answer[s:e].strip()
    s += answer[s:e].find(text)
    fact = Fact(relation, args, cf, Provenance("answer", start=s, end=s + len(text)))
    return Claim(fact, text, s, s + len(text), list(cited), extractor=extractor)


def mention_claim(relation: str, subjects: tuple, m: ValueMention, answer: str, extractor: str, cf: float) -> Claim:
    s, e = sentence_around(answer, m.start)
    return sentence_claim(relation, (*subjects, m.value), answer, s, e, m.cited, extractor, cf)


def names_fit(args: Sequence[str], sig: RelationSig, in_sentence: Sequence[EntityMention]) -> bool:
    """Every bound argument is named by the sentence, or the sentence names no other entity of its type."""
    for arg, p in zip(args, sig.params):
        named = {x.entity_id for x in in_sentence if x.type == p.type}
        if named and arg not in named:
            return False
    return True


def focus_claims(answer: str, mentions: Sequence[ValueMention], focus: QuestionFocus,
                 rulebase: RuleBase, premises: Sequence[Claim] = ()) -> list[tuple[Claim, ValueMention]]:
    """A value of the asked relation's type, in a sentence that names the asked entity or no other
    entity of its type, is that relation's claim about that entity ("It costs EUR 38,500 [1]" to "what
    does the AX-200 cost?"). One claim per goal: the first fitting value. When the question states values of
    its own (it computes: "a 3-day trip" asks for a total, not the daily rate), only a value the documents give
    the relation is read (for the goal's entity, where the question asks the relation of two), and never a value
    the question itself states or the answer negates ("is not CNY 120"). The values of ``premises`` (claims the
    question asserts: pipeline.readers.premises.stated_premises) set the scene and compute nothing ("the fume hood
    may be used once its face velocity reaches 0.3 m/s, so how often is it inspected?" asks a plain lookup), and
    what they assert is asked last."""
    out: list[tuple[Claim, ValueMention]] = []
    question = blanked(focus.question, ((c.start, c.end) for c in premises))
    # a computing question's values bind no lookup, but clauses the asker takes the documents to say may stand
    # before a plain one ("the heat allowance is paid all twelve months of the year; how much is it a month?")
    computes = asks_a_computation(question, focus)
    asked = [v for v, *_ in find_values(focus.question)]
    used: set[int] = {i for i, m in enumerate(mentions) if m.value in asked or negated(answer, m.start)}
    asserted = {(p.fact.relation, tuple(p.fact.args[:-1])) for p in premises}
    # a goal binding the question's values computes the answer, and a question counting or totalling asks for
    # what is computed ("staying 3 nights … how much can be reimbursed at most"): the answer's value is no lookup
    computed = any(g.stated for g in focus.goals) or _counts(question, focus)
    # a goal the question asserts comes last: "X has a 36-month warranty; what is Y's?" asks Y's; but "why is
    # X's warranty 36 months?" asks nothing else, and an answer's value of the relation corrects it
    for goal in sorted(focus.goals, key=lambda g: (g.relation, tuple(g.args)) in asserted):
        sig = rulebase.relations.get(goal.relation)
        if sig is None or sig.arity < 2 or any(c.fact.relation == goal.relation for c, _ in out):
            continue
        # a computing question's answer may give the total or what it is computed from: only a value the
        # documents state for the relation is that relation's ("15 days" to "after 2 full years of service … how many
        # days of annual leave in all?")
        looked_up = computes and bool(goal.stated or asks_a_computation(question, focus, goal))
        if looked_up and computed:      # (a goal binding the question's values is ``computed`` too)
            continue
        # the question's one goal of its relation: a value the documents give the relation for other arguments is
        # still that relation's, looked up for the wrong entity (a claim the rules can refute)
        sole = sum(g.relation == goal.relation for g in focus.goals) == 1
        for i, m in enumerate(mentions):
            if i in used or not fits(sig, m.value) or \
                    (looked_up and not focus.documents(goal.relation, m.value, None if sole else goal.args)):
                continue
            s, e = sentence_around(answer, m.start)
            in_sentence = find_entities(answer[s:e], rulebase)
            if not names_fit(goal.args, sig, in_sentence) or _clause_of_another(answer, m, s, in_sentence, goal, sig):
                continue
            out.append((mention_claim(goal.relation, goal.args, m, answer, "focus", 1.0), m))
            used.add(i)
            break
    return out


def _counts(question: str, focus: QuestionFocus) -> bool:
    """The question totals, counts things or states a count ("3 nights", "10 robots", "three nights"), rather than
    stating the asker's case ("I am 70 years old", "after 2 full years of service")."""
    if TOTAL_WORDS.search(question) or COUNT_WORDS.search(question):
        return True
    unnamed = blanked(question, [(e.start, e.end) for e in focus.entities] + list(focus.name_spans))
    return any(isinstance(v, Quantity) and v.dimension in ("", "count") for v, *_ in find_values(unnamed))


def _clause_of_another(answer: str, m: ValueMention, s: int, in_sentence: Sequence[EntityMention], goal: Goal,
                       sig: RelationSig) -> bool:
    """The value's own clause names another entity of an asked argument's type: "the Chengdu depot … is 12 months,
    Marrow Bay 24 months" gives the 24 months to Marrow Bay."""
    cs, ce = clause_around(answer, m.start, m.end)
    return any(x.type == p.type and x.entity_id != arg and cs <= x.start + s and x.end + s <= ce
               for x in in_sentence for arg, p in zip(goal.args, sig.params))


def focus_entity_claims(answer: str, passages: Sequence[PassageLike], focus: QuestionFocus, rulebase: RuleBase,
                        taken: Sequence[Claim]) -> list[Claim]:
    """An entity of the asked relation's value type that the answer names and the question does not, in a
    sentence that names the asked entity or no other entity of its type, is that relation's claim about it
    ("The Dean of the Graduate School approves them" to "Who approves thesis extensions?"). Only the question's
    best-named goals are read (a multi-hop question names the hop to an entity less well than what it asks),
    and only where the answer names one such entity (two ask the reader to choose), said of the asked entity
    (_said_of); never an entity the answer negates, nor a goal another reader already claimed."""
    sigs = {g.relation: rulebase.relations.get(g.relation) for g in focus.goals}
    best = [g for g in focus.goals if g.score == focus.goals[0].score]
    goals = [g for g in best if (sig := sigs[g.relation]) is not None and sig.arity == len(g.args) + 1
             and sig.params[-1].type not in VALUE_TYPES]
    if not goals:
        return []
    asked = {x.entity_id for x in find_entities(focus.question, rulebase)} | {x.entity_id for x in focus.entities}
    have = {(c.fact.relation, tuple(c.fact.args[:-1])) for c in taken}
    sents = sentences(answer)
    in_sentences = [(s, e, find_entities(answer[s:e], rulebase)) for s, e in sents]
    out: list[Claim] = []
    for goal in goals:
        sig = cast(RelationSig, sigs[goal.relation])     # a goal's relation is known (goals above)
        if (goal.relation, tuple(goal.args)) in have:
            continue
        found = []
        for s, e, named in in_sentences:
            found += [(x, s, e) for x in named if x.type == sig.params[-1].type and x.entity_id not in asked
                      and not negated(answer, x.start + s)
                      and names_fit(goal.args, sig, [y for y in named if y is not x]) and _said_of(goal.args, sig, x, named)]
        if len({x.entity_id for x, _s, _e in found}) != 1:
            continue
        x, s, e = found[0]
        out.append(sentence_claim(goal.relation, (*goal.args, x.entity_id), answer, s, e,
                                  cited_for((s, e), sents, answer, passages), "focus", 1.0))
        have.add((goal.relation, tuple(goal.args)))
    return out


def _said_of(args: Sequence[str], sig: RelationSig, x: EntityMention, named: Sequence[EntityMention]) -> bool:
    """No other entity of an asked argument's type stands between that argument and ``x``: "Sun Peng reports to
    Zhao Lin, who is at the Chengdu depot" gives the depot to Zhao Lin, not to Sun Peng."""
    for arg, p in zip(args, sig.params):
        before = [y for y in named if y.type == p.type and y.end <= x.start and y is not x]
        if before and before[-1].entity_id != arg:
            return False
    return True


def _candidates(m: ValueMention, sentence: str, focus: QuestionFocus, rulebase: RuleBase) -> list[RelationSig]:
    """Relations the value's type fits whose name the answer's sentence itself uses (at least half of it)."""
    terms = frozenset(content_terms(sentence))
    sigs = [sig for sig in rulebase.relations.values() if sig.arity == 2 and fits(sig, m.value)]
    scored = sorted(sigs, key=lambda sig: -relation_score(sig, terms))
    return [sig for sig in scored if relation_score(sig, terms) >= MIN_RELATION_SCORE][:MAX_RELATIONS]


def _subjects(etype: str, sentence: str, focus: QuestionFocus, rulebase: RuleBase) -> list[Entity]:
    """Entities of the type that the sentence or the question names; the type's only entity when it has
    one (a policy the rules know one of); else none: the model is not asked to guess a subject."""
    named = [x.entity_id for x in find_entities(sentence, rulebase) if x.type == etype]
    named += [x.entity_id for x in focus.entities if x.type == etype]
    pool = list(dict.fromkeys(named))
    if not pool:
        of_type = [e.id for e in rulebase.entities.values() if e.type == etype]
        pool = of_type if len(of_type) == 1 else []
    return [rulebase.entities[i] for i in pool[:MAX_SUBJECTS]]


class ChoiceLogitsProcessor:
    """Grammar of one token: only the given token ids may be generated (an option's number)."""

    def __init__(self, allowed: Sequence[int]):
        self.allowed = list(allowed)

    def __call__(self, token_ids: list[int], logits: torch.Tensor) -> torch.Tensor:
        import torch
        mask = torch.full_like(logits, float("-inf"))
        mask[..., self.allowed] = 0.0
        return logits + mask


def _digit_tokens(tokenizer: TokenizerLike, n: int) -> list[int] | None:
    """Token ids of "0".."n" when each is one token (true of the Llama and Qwen2 tokenizers); else None."""
    ids = []
    for i in range(n + 1):
        try:
            enc = tokenizer.encode(str(i), add_special_tokens=False)
        except TypeError:
            enc = tokenizer.encode(str(i))
        if len(enc) != 1:
            return None
        ids.append(enc[0])
    return ids


def options_for(m: ValueMention, sentence: str, focus: QuestionFocus,
                rulebase: RuleBase) -> list[tuple[RelationSig, Entity]]:
    """(relation, subject entity) pairs the value could state: relations its type fits whose names the
    sentence or question use, about entities of the relation's subject type that they name (else any)."""
    opts: list[tuple[RelationSig, Entity]] = []
    for sig in _candidates(m, sentence, focus, rulebase):
        for ent in _subjects(sig.params[0].type, sentence, focus, rulebase)[:3]:
            opts.append((sig, ent))
    return opts[:MAX_OPTIONS]


def lm_claims(generator: Generator, context: Sequence[dict], answer: str, mentions: Sequence[ValueMention],
              focus: QuestionFocus, rulebase: RuleBase, *,
              max_values: int = MAX_LM_VALUES) -> list[tuple[Claim, ValueMention]]:
    """The model reads which rule-base fact each remaining value states: the candidate facts (relation and
    entity from the vocabulary) are numbered and the reply is constrained to one of those numbers, so the
    output always parses, never names anything outside the rule base, and costs one decode step.
    ``context``: the chat the answer was generated in (the engine's prefix cache serves it; the model
    sees the sources)."""
    from neural import SamplingParams

    out: list[tuple[Claim, ValueMention]] = []
    if asks_a_computation(focus.question, focus):   # totals and products: no document relation holds them
        return out
    if not getattr(generator, "supports_logits_processors", True):
        log.info("LM extraction skipped: the generator (a remote model) cannot apply the one-token grammar")
        return out
    for m in list(mentions)[:max_values]:
        s, e = sentence_around(answer, m.start)
        options = options_for(m, answer[s:e], focus, rulebase)
        digits = _digit_tokens(generator.tokenizer, len(options)) if options else None
        if not options or digits is None:
            continue
        listing = "\n".join(f"{i}. the {sig.label or sig.name.replace('_', ' ')} of {ent.label}"
                             for i, (sig, ent) in enumerate(options, 1))
        ask = (f'In your answer, which fact does "{m.text}" state?\n{listing}\n0. none of these\n'
               "Reply with the number only.")
        messages = [*context, {"role": "assistant", "content": answer}, {"role": "user", "content": ask}]
        try:
            reply = generator.chat(messages, SamplingParams(max_tokens=1, temperature=0.0,
                                                            logits_processors=[ChoiceLogitsProcessor(digits)])).text
            choice = int(reply.strip())
        except (ValueError, RuntimeError) as exc:     # no number came back: no claim, and the log says why
            log.info("LM extraction dropped %r: %s", m.text, exc)
            continue
        if 1 <= choice <= len(options):
            sig, ent = options[choice - 1]
            out.append((mention_claim(sig.name, (ent.id,), m, answer, "lm", LM_CLAIM_CF), m))
    return out

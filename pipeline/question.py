"""What a question asks: the answer type it expects, the rule-base entities it names, and the rule-base
relations it asks for with one open argument (the goals a symbolic answer proves)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from pipeline.context import CJK_RUN_RE, content_terms
from pipeline.extraction import blanked, find_values, last_sentence, sentences
from pipeline.glossary import best_translations, gloss
from symbolic.model import VALUE_TYPES
from symbolic.patterns import name_regex
from symbolic.units import canonical_currency
from symbolic.values import Money, Quantity, value_type

if TYPE_CHECKING:      # relation_namer reads relations' names with this module's relation_names
    from pipeline.relation_namer import RelationNamer

# Answer types: the value kinds of symbolic.values, plus what a question can ask that is not a value.
VALUE_ANSWER_TYPES = ("duration", "money", "quantity", "percent", "date", "number")
ANSWER_TYPES = (*VALUE_ANSWER_TYPES, "yesno", "person", "entity")

# English-first cues, with Chinese ones (the rule files carry the domain's Chinese names; these are the
# question words). Order matters: the first rule that matches decides, so specific cues come first.
_TYPE_CUES: list[tuple[str, tuple[str, ...]]] = [
    (r"\b(what|which)\s+(?:[a-z-]+\s+){0,2}?(percentage|percent|share|discount|rate)\b|\bhow\s+many\s+percent\b|"
     r"百分之几|百分比|多少%|折扣是多少|几折",
     ("percent",)),
    # "how long must the password be?" asks a length or a count as much as a period
    (r"\bhow\s+long\s+(?:must|should|does|do|can|is|are|has\s+to|have\s+to|needs?\s+to)\b[^?]*\bbe\s*\??\s*$",
     ("duration", "number", "quantity")),
    (r"\bhow\s+many\s+(?:[a-z-]+\s+){0,2}?(days?|weeks?|months?|years?|hours?|minutes?|business\s+days?|working\s+days?|nights?)\b|"
     r"\bhow\s+long\b|\bhow\s+(soon|quickly|far\s+in\s+advance)\b|"
     # "what is the response time / loan period / notice period": a period by name
     r"\b(?:what|which)\s+(?:is|are)\s+the\s+(?:[a-z-]+\s+){0,3}?(?:response|resolution|loan|notice|retention|"
     r"waiting|processing|lead|turnaround|delivery|warranty|grace|probation(?:ary)?)\s+(?:times?|periods?)\b|"
     r"\bwithin\s+how\s+many\b|多少天|几天|多久|多长时间|几个月|多少个月|几年|多少小时|几小时|几个小时|提前几天|多少个工作日|几个工作日",
     ("duration",)),
    (r"\bhow\s+much\b.*\b(cost|costs|price|pay|paid|fee|fees|reimburs\w*|allowance|limit|budget|charge|worth|spend)\b|"
     r"\b(what|which)\s+(?:is\s+the\s+)?(?:[a-z-]+\s+){0,2}?(price|cost|fee|amount|allowance|per\s+diem|budget|limit)\b|"
     r"\bhow\s+much\s+money\b|"
     r"多少钱|多少元|价格是多少|费用是多少|售价|报销多少|补贴多少|补助多少|标准是多少|上限是多少",
     ("money", "quantity", "percent")),
    (r"\bhow\s+(heavy|fast|far|big|large|tall|wide|high)\b|\b(what|which)\s+(is\s+the\s+)?(payload|weight|speed|"
     r"capacity|range|temperature|distance|length|height)\b|多重|多快|多远|载重|重量|速度|温度|容量",
     ("quantity", "number")),
    (r"\bhow\s+many\b|多少个|几个|多少名|多少台|几台|多少次|几次|几位", ("number", "quantity")),
    (r"\bhow\s+much\b|多少", ("money", "quantity", "percent", "number", "duration")),
    (r"\b(when|what\s+date|by\s+what\s+date|which\s+date)\b|什么时候|哪天|何时|哪一天|截止日期", ("date", "duration")),
    (r"\b(who|whom|whose)\b|谁|哪位", ("person", "entity")),
    (r"^\s*(is|are|can|could|does|do|did|may|must|should|will|would|was|were|has|have|had)\b|"
     r"是否|能否|可否|可不可以|能不能|是不是|有没有|吗[？?]?\s*$", ("yesno",)),
]
_TYPE_RES = [(re.compile(rx, re.IGNORECASE), types) for rx, types in _TYPE_CUES]


def asks_two(question: str) -> bool:
    """A question of two question sentences ("…最多几天内可以无理由退货？质量问题换货的期限是几天？") asks two things."""
    return len(re.findall(r"[?？]", question.strip().rstrip("?？"))) >= 1


def answer_types(question: str) -> frozenset[str]:
    """The answer types a question expects (empty when its wording gives no cue); a question whose
    sentences before the last set the scene is read by its last ("…deputises for her. Can he approve …?")."""
    for text in (question, last_sentence(question)):
        for rx, types in _TYPE_RES:
            if rx.search(text):
                return frozenset(types)
    return frozenset()


@dataclass(frozen=True)
class EntityMention:
    entity_id: str
    type: str
    text: str
    start: int
    end: int
    described_by: str | None = None   # the relation the question describes it by (pipeline.described)
    via: str | None = None   # the entity it is the relation's object of ("the person Wang Yu reports to")


@dataclass(frozen=True)
class Goal:
    """A relation the question asks for: every argument bound but the last, which is the answer."""
    relation: str
    args: tuple            # bound arguments (entity ids, or values the question states), the open last one excluded
    score: float           # how much of the relation's name the question uses, 0..1
    implied: tuple[int, ...] = ()   # positions bound by default (the type's only entity), not by the question
    stated: tuple[tuple[int, int], ...] = ()   # spans of the question's values bound as arguments ("4 nights")

    @property
    def arity(self) -> int:
        return len(self.args) + 1


@dataclass
class QuestionFocus:
    question: str
    answer_types: frozenset[str]
    entities: list[EntityMention] = field(default_factory=list)
    goals: list[Goal] = field(default_factory=list)
    terms: frozenset[str] = frozenset()
    # (relation, argument position) -> the one entity the KB's facts hold there (pipeline.kb_facts.implied_arguments)
    implied: Mapping[tuple[str, int], str] = field(default_factory=dict)
    namer: RelationNamer | None = field(default=None, repr=False, compare=False)   # the parse's relation namer

    @property
    def entity_ids(self) -> set[str]:
        return {e.entity_id for e in self.entities}

    @property
    def ids_by_type(self) -> dict[str, list[str]]:
        """Entity type -> the distinct ids the question names of it, in the order first named."""
        out: dict[str, list[str]] = {}
        for e in self.entities:
            ids = out.setdefault(e.type, [])
            if e.entity_id not in ids:
                ids.append(e.entity_id)
        return out

    @property
    def relation_terms(self) -> frozenset[str]:
        """The question's terms besides its entities' own names: "Tier 1 city" says nothing about which
        relation is asked."""
        named = frozenset().union(*(content_terms(e.text) for e in self.entities)) if self.entities else frozenset()
        return self.terms - named


class _EntityIndex:
    """One regex over every entity name of a rule base, longest names first."""

    def __init__(self, rulebase: Any):
        names: dict[str, list[tuple[str, str]]] = {}
        for e in rulebase.entities.values():
            for n in e.names:
                if n and n.strip():
                    names.setdefault(n.strip().lower(), []).append((e.id, e.type))
        self.by_name = names
        alts = sorted(names, key=len, reverse=True)
        self.regex = re.compile("|".join(f"({name_regex(n)})" for n in alts), re.IGNORECASE) if alts else None
        self.group_names = alts
        # The readers of one answer look up the same sentences many times; one regex pass costs ~ms on a
        # rule base of a hundred names.
        self._memo: dict[str, tuple[EntityMention, ...]] = {}

    def find(self, text: str) -> list[EntityMention]:
        hit = self._memo.get(text)
        if hit is None:
            if len(self._memo) > 2048:
                self._memo.clear()
            hit = self._memo[text] = tuple(self._scan(text))
        return list(hit)

    def _scan(self, text: str) -> list[EntityMention]:
        if self.regex is None:
            return []
        out = []
        for m in self.regex.finditer(text):
            assert m.lastindex is not None  # one of the alternatives' groups matched
            name = self.group_names[m.lastindex - 1]
            for eid, etype in dict.fromkeys(self.by_name[name]):
                out.append(EntityMention(eid, etype, m.group(0), m.start(), m.end()))
        return out


_INDEX_CACHE: dict[int, tuple[Any, _EntityIndex]] = {}


def entity_index(rulebase: Any) -> _EntityIndex:
    hit = _INDEX_CACHE.get(id(rulebase))
    if hit is None or hit[0] is not rulebase:
        if len(_INDEX_CACHE) > 8:
            _INDEX_CACHE.clear()
        hit = (rulebase, _EntityIndex(rulebase))
        _INDEX_CACHE[id(rulebase)] = hit
    return hit[1]


def find_entities(text: str, rulebase: Any) -> list[EntityMention]:
    return entity_index(rulebase).find(text)


def relation_names(sig: Any) -> list[str]:
    return [n for n in (sig.label, *sig.aliases, sig.name.replace("_", " ")) if n]


def relation_label(rulebase: Any, relation: str) -> str:
    """A relation as the rule author labels it ("hotel limit per night"), else its identifier in words."""
    sig = rulebase.relations.get(relation)
    return sig.label if sig is not None and sig.label else relation.replace("_", " ")


def entity_label(rulebase: Any, value: Any) -> str:
    """An entity id as the rule author labels it ("Tier 1"); any other value as written."""
    e = rulebase.entities.get(value) if isinstance(value, str) else None
    return e.label if e else str(value)


def _chinese_share(name: str, q_terms: frozenset[str]) -> float | None:
    """The share of a Chinese name's characters that the question's bigrams cover; None for a name with any
    Latin letter. By bigrams alone "住宿" would be 1 of the 5 of "城市住宿标准" where "hotel" is 1 of the 3 words of
    "hotel limit in a city": one word of three either way."""
    runs = CJK_RUN_RE.findall(name)
    if not runs or re.search(r"[A-Za-z]", name):
        return None
    covered = 0
    for run in runs:
        hit = [False] * len(run)
        for i in range(len(run) - 1):
            if run[i:i + 2] in q_terms:
                hit[i] = hit[i + 1] = True
        covered += sum(hit)
    return covered / sum(len(r) for r in runs)


def relation_score(sig: Any, q_terms: frozenset[str]) -> float:
    """The best share of one of the relation's names (label, aliases, id words) that the question uses: of
    its words, or of a Chinese name's characters."""
    best = 0.0
    for name in relation_names(sig):
        t = content_terms(name)
        if t:
            best = max(best, len(t & q_terms) / len(t))
        share = _chinese_share(name, q_terms)
        if share is not None:
            best = max(best, share)
    return best


def _type_fits(sig: Any, types: frozenset[str]) -> bool:
    last = sig.params[-1].type
    if not types:
        return True
    if last in VALUE_TYPES:
        return last in types or (last == "number" and "quantity" in types)
    return bool(types & {"person", "entity"})


# A currency the question asks its answer in ("in Chinese yuan", "多少欧元"), said outside any amount it
# states ("a EUR 220 hotel" is a premise). A bare 元 is read only as "多少元"/"几元" (单元 is a unit, not money).
_ASKED_CURRENCY = [(re.compile(rx, re.IGNORECASE), cur) for rx, cur in [
    (r"\b(?:yuan|renminbi|rmb|cny)\b|人民币|多少元|几元", "CNY"),
    (r"\b(?:euros?|eur)\b|欧元", "EUR"),
    (r"\b(?:dollars?|usd)\b|美元", "USD"),
    (r"\b(?:pounds?\s+sterling|gbp)\b|英镑", "GBP"),
    (r"\b(?:yen|jpy)\b|日元", "JPY"),
    (r"\bhkd\b|港元|港币", "HKD"),
]]


def asked_currency(question: str) -> str | None:
    """The one currency ``question`` asks for, or None (none named, or several: a conversion)."""
    chars = list(question)
    for _v, _k, s, e in find_values(question):
        chars[s:e] = " " * (e - s)
    text = "".join(chars)
    found = {cur for rx, cur in _ASKED_CURRENCY if rx.search(text)}
    return found.pop() if len(found) == 1 else None


def _currency_fits(sig: Any, currency: str | None) -> bool:
    """A money relation declared in another currency does not answer a question asked in ``currency``."""
    p = sig.params[-1]
    if currency is None or p.type != "money" or not p.unit:
        return True
    return canonical_currency(p.unit) == currency


def param_fits(p: Any, value: Any) -> bool:
    """Can ``value`` be an argument declared as ``p`` (value type, currency, unit dimension)?"""
    if p.type not in VALUE_TYPES:
        return False
    if isinstance(value, Money) and p.unit and value.currency != canonical_currency(p.unit):
        return False
    if p.type == "number":
        return isinstance(value, Quantity) and value.dimension in ("", "count")
    if p.type != value_type(value):
        return False
    if isinstance(value, Quantity) and p.unit:
        try:
            value.to(p.unit)
        except ValueError:
            return False
    return True


def stated_values(question: str, entities: list[EntityMention]) -> list[tuple[Any, int, int]]:
    """The values ``question`` states outside the names it uses ("Tier 1", "AX-200" are names)."""
    return [(v, s, e) for v, _kind, s, e in find_values(blanked(question, ((x.start, x.end) for x in entities)))]


def sole_entities(rulebase: Any) -> dict[str, str]:
    """Entity type -> its one entity, for the types that have exactly one (the travel policy)."""
    by_type: dict[str, list[str]] = {}
    for e in rulebase.entities.values():
        by_type.setdefault(e.type, []).append(e.id)
    return {t: ids[0] for t, ids in by_type.items() if len(ids) == 1}


def value_fits(sig: Any, types: frozenset[str], currency: str | None) -> bool:
    """The relation's value is of a kind the question asks for (and in the currency it asks in)."""
    return _type_fits(sig, types) and _currency_fits(sig, currency)


# A singular third-person pronoun ("Can he approve ...?", "她能否..."); not 其他 ("other") nor a plural.
_PRONOUN_RE = re.compile(r"\b(?:he|she|him|his|her|hers)\b|(?<!其)[他她](?!们)", re.IGNORECASE)


def pronoun_resolved(question: str, found: list[EntityMention]) -> list[EntityMention]:
    """The question's entity mentions with a pronoun of its asking sentence resolved: when that sentence names
    no entity of the one type the sentences before it name two or more of, the pronoun stands for the last
    one named ("While Dr Sinclair is on leave, Dr Reid deputises for her. Can he approve ...?" asks about
    Reid), and the others of the type drop out of the focus. English and Chinese personal pronouns only."""
    sents = sentences(question)
    if len(sents) < 2 or not _PRONOUN_RE.search(question, sents[-1][0]):
        return found
    asking = sents[-1][0]
    before: dict[str, list[str]] = {}
    for x in found:
        if x.start < asking:
            before.setdefault(x.type, []).append(x.entity_id)
    asked_types = {x.type for x in found if x.start >= asking}
    types = [t for t, ids in before.items() if len(set(ids)) >= 2 and t not in asked_types]
    if len(types) != 1:
        return found
    last = before[types[0]][-1]
    return [x for x in found if x.type != types[0] or x.entity_id == last]


def parse_question(question: str, rulebase: Any | None, *, min_score: float = 0.6,
                   described: Sequence[EntityMention] = (), types: frozenset[str] | None = None,
                   unnamed: Sequence[EntityMention] = (), implied: Mapping[tuple[str, int], str] | None = None,
                   namer: RelationNamer | None = None) -> QuestionFocus:
    """The focus of ``question`` under ``rulebase`` (types and terms only when there is none). A goal
    needs every argument but the last bound by an entity the question names (or by the type's only
    entity, or one it ``described`` by a value: pipeline.described), a last argument whose type fits the
    question's answer type (or one of ``types``, when given), and at least ``min_score`` of one of the
    relation's names in the question. ``unnamed``: mentions that stand for another entity, not their own
    (the "Wang Yu" of "the person Wang Yu reports to"). ``implied``: arguments the facts leave no choice
    in (pipeline.kb_facts.implied_arguments), bound where the question names no entity of their type.
    ``namer``: where no relation is named by its words (nor, for Chinese, through the glossary), the relation
    the question means (pipeline.relation_namer), among those whose types and arguments fit."""
    types = answer_types(question) if types is None else types
    terms = frozenset(content_terms(question))
    focus = QuestionFocus(question, types, terms=terms, implied=dict(implied or {}), namer=namer)
    if rulebase is None:
        return focus
    set_apart = {(u.start, u.end) for u in unnamed}
    found = pronoun_resolved(question, [e for e in find_entities(question, rulebase) if (e.start, e.end) not in set_apart])
    focus.entities = sorted([*found, *described], key=lambda x: x.start)
    values = stated_values(question, focus.entities)

    def named_goals(relation_terms: frozenset[str], least: float) -> list[Goal]:
        return _named_goals(rulebase, focus, types, values, implied or {}, relation_terms, least)

    goals = named_goals(focus.relation_terms, min_score)
    if not goals:
        goals = _meant_goals(focus, rulebase, named_goals, min_score, namer)
    # the best-named relations first; among equals, the ones whose arguments the question names itself
    focus.goals = sorted(goals, key=lambda g: (-g.score, len(g.implied), g.relation))
    return focus


def _named_goals(rulebase: Any, focus: QuestionFocus, types: frozenset[str], values: list[tuple[Any, int, int]],
                 implied: Mapping[tuple[str, int], str], relation_terms: frozenset[str], least: float) -> list[Goal]:
    """The goals of every relation whose answer type and currency fit, whose name ``relation_terms`` say by
    ``least`` at least, and whose arguments but the last are bound (parse_question)."""
    by_type = focus.ids_by_type
    only_entity = sole_entities(rulebase)
    currency = asked_currency(focus.question)
    goals = []
    for sig in rulebase.relations.values():
        if sig.arity < 2 or not _type_fits(sig, types) or not _currency_fits(sig, currency):
            continue
        score = relation_score(sig, relation_terms)
        if score < least:
            continue
        # one choice per argument: (the bound value, the question span it comes from, if a stated value)
        choices: list[list[tuple[Any, tuple[int, int] | None]]] = []
        implied_here: list[int] = []
        for i, p in enumerate(sig.params[:-1]):
            named: list[tuple[Any, tuple[int, int] | None]] = [(eid, None) for eid in by_type.get(p.type, [])]
            if p.type in VALUE_TYPES:   # a count, distance or period the question gives ("for 4 nights")
                named = [(v, (s, e)) for v, s, e in values if param_fits(p, v)]
            if named:
                choices.append(named)
            elif only_entity.get(p.type):
                choices.append([(only_entity[p.type], None)])
                implied_here.append(i)
            elif (sig.name, i) in implied:
                choices.append([(implied[(sig.name, i)], None)])
                implied_here.append(i)
            else:
                choices = []
                break
        if not choices:
            continue
        for picked in _product(choices):
            spans = [span for _a, span in picked if span is not None]
            if len(set(spans)) < len(spans):
                continue   # one stated value binds one argument
            goals.append(Goal(sig.name, tuple(a for a, _span in picked), score, tuple(implied_here), tuple(spans)))
    return goals


def _meant_goals(focus: QuestionFocus, rulebase: Any, named_goals: Callable[[frozenset[str], float], list[Goal]],
                 min_score: float, namer: RelationNamer | None) -> list[Goal]:
    """The goals of a question whose words name no relation: a Chinese one read in the glossary's English (of
    the relations it then names, those that best translate it), an English one by the ``namer`` (the relation
    it means, of those it could ask)."""
    unnamed_text = blanked(focus.question, [(x.start, x.end) for x in focus.entities])
    glossed = gloss(unnamed_text)
    if glossed:
        goals = named_goals(focus.relation_terms | glossed.terms, min_score)
        named = list({g.relation: rulebase.relations[g.relation] for g in goals}.values())
        best = {sig.name for sig in best_translations(named, relation_names, glossed, focus.relation_terms)}
        return [g for g in goals if g.relation in best]
    if namer is None or min_score <= 0:
        return []
    fitting = named_goals(focus.relation_terms, 0.0)
    meant = namer.closest(unnamed_text, list({g.relation: rulebase.relations[g.relation] for g in fitting}.values()),
                          rulebase)
    return [replace(g, score=meant[1]) for g in fitting if g.relation == meant[0].name] if meant else []


def _product(choices: list[list[Any]]) -> list[list[Any]]:
    out: list[list[Any]] = [[]]
    for c in choices:
        out = [[*o, x] for o in out for x in c][:16]
    return out

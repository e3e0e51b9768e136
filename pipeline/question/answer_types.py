"""What kind of answer a question asks for, read from its words: the answer types (a duration, an amount, yes or
no, a person, ...), whether it asks two things, and the currency it wants an amount in."""
from __future__ import annotations

import re

from pipeline.text.sentences import last_sentence
from pipeline.text.values import find_values

# The answer types that are values (the value kinds of symbolic.values); a question can also ask "yesno",
# "person" or "entity".
VALUE_ANSWER_TYPES = frozenset({"duration", "money", "quantity", "percent", "date", "number"})

# English-first cues, with Chinese ones (the rule files carry the domain's Chinese names; these are the
# question words). Order matters: the first rule that matches decides, so specific cues come first.
_TYPE_CUES: list[tuple[str, tuple[str, ...]]] = [
    (r"\b(what|which)\s+(?:[a-z-]+\s+){0,2}?(percentage|percent|share|discount|rate)\b|\bhow\s+many\s+percent\b|"
     r"百分之几|百分之多少|百分比|多少%|(?:几|多少)个?百分点|折扣是多少|几折",
     ("percent",)),
    # "多久做一次二级保养" asks how often, as "how often" does: an interval in time or in distance ("每两万公里")
    (r"(?:多久|多长时间|每隔多久)[^？?，,。]{0,10}一次", ("duration", "quantity")),
    # "how long must the password be?" asks a length or a count as much as a period
    (r"\bhow\s+long\s+(?:must|should|does|do|can|is|are|has\s+to|have\s+to|needs?\s+to)\b[^?]*\bbe\s*\??\s*$",
     ("duration", "number", "quantity")),
    (r"\bhow\s+many\s+(?:[a-z-]+\s+){0,2}?(days?|weeks?|months?|years?|hours?|minutes?|business\s+days?|working\s+days?|nights?)\b|"
     r"\bhow\s+long\b|\bhow\s+(soon|quickly|far\s+in\s+advance)\b|"
     # "what is the response time / loan period / notice period": a period by name
     r"\b(?:what|which)\s+(?:is|are)\s+the\s+(?:[a-z-]+\s+){0,3}?(?:response|resolution|loan|notice|retention|"
     r"waiting|processing|lead|turnaround|delivery|warranty|grace|probation(?:ary)?)\s+(?:times?|periods?)\b|"
     r"\bwithin\s+how\s+many\b|多久|多长时间|"
     # "多少个小时", "几周", "多少个工作日": a count of a unit of time (not "多少日元", "多少年终奖", "几月份")
     r"(?:多少|几)个?(?:工作日|天|日|周|星期|礼拜|月|年|小时|钟头|分钟|秒钟?)(?![元薪费金终度票卡份])",
     ("duration",)),
    (r"\bhow\s+much\b.*\b(cost|costs|price|pay|paid|fee|fees|reimburs\w*|allowance|limit|budget|charge|worth|spend)\b|"
     r"\b(what|which)\s+(?:is\s+the\s+)?(?:[a-z-]+\s+){0,2}?(price|cost|fee|amount|allowance|per\s+diem|budget|limit)\b|"
     r"\bhow\s+much\s+money\b|"
     r"多少钱|多少元|价格是多少|费用是多少|售价|报销多少|补贴多少|补助多少|标准是多少|上限是多少|"
     # a noun of money before the question word, as "what is the fee?": 年费、押金、罚款、工资、津贴、报酬是多少
     r"(?:[费价金款薪酬资]|津贴|补贴|补助)(?:用|标准)?\s*(?:是|为|要|需要)?\s*多少(?![天日周月年个次倍小分秒岁度])",
     ("money", "quantity", "percent")),
    # "What do 10 AX-200 robots cost?", "What is the most a 4-night stay can cost?": an amount of money, not the
    # discount that goes into it (shipped num-04 with the 0.5B model and no rule files quoted "Volume discount 8 %")
    (r"\bwhat\s+(?:do|does|did|will|would|can|could)\s+[^?]*\bcost\b|"
     r"\bwhat\s+is\s+the\s+(?:most|least|maximum|minimum)\b[^?]*\b(?:cost|spend|pay|paid|reimburs\w*)\b",
     ("money",)),
    # a measure's noun asks for it only where the question word follows it, as "what is the temperature" asks it:
    # "温度是多少度" does; "在零下 25 度的冷库里…" and "重量 20 公斤的货物…" only set the scene. A question that
    # ends in a bare 呢 asks the measure its scene states again ("满载时最高速度是 2.0 米/秒，那空载时呢？")
    (r"\bhow\s+(heavy|fast|far|big|large|tall|wide|high)\b|\b(what|which)\s+(is\s+the\s+)?(payload|weight|speed|"
     r"capacity|range|temperature|distance|length|height)\b|多重|多快|多远|"
     r"(?:载重|重量|速度|温度|容量)"
     r"(?:[^，,。；;？?]{0,6}?(?:多少|几|多大|多高|多低|多重|多快)|[^？?多几哪什怎如吗]*呢\s*[？?]?\s*$)",
     ("quantity", "number")),
    (r"\bhow\s+many\b|多少个|几个|多少名|多少台|几台|多少次|几次|几位", ("number", "quantity")),
    (r"\bhow\s+much\b|多少", ("money", "quantity", "percent", "number", "duration")),
    (r"\b(when|what\s+date|by\s+what\s+date|which\s+date)\b|什么时候|哪天|何时|哪一天|截止日期", ("date", "duration")),
    (r"\b(who|whom|whose)\b|谁|哪位", ("person", "entity")),
    (r"^\s*(is|are|can|could|does|do|did|may|must|should|will|would|was|were|has|have|had)\b|"
     r"是否|能否|可否|可不可以|能不能|是不是|有没有|吗[？?]?\s*$", ("yesno",)),
]
_TYPE_RES = [(re.compile(rx, re.IGNORECASE), types) for rx, types in _TYPE_CUES]


# The nouns a question word asks for, which a relation's name may use where the question does not: "how far
# can it go" asks the range, "how long may they drive" the longest driving, "多久…一次" the interval (保养周期).
_ASKED_NOUNS = [(re.compile(rx, re.IGNORECASE), frozenset(nouns)) for rx, nouns in [
    (r"\bhow\s+far\b(?!\s+in\s+advance)|多远", ("range", "distance")),
    (r"\bhow\s+fast\b|多快", ("speed",)),
    (r"\bhow\s+heavy\b|多重", ("weight",)),
    (r"\bhow\s+old\b", ("age",)),
    (r"\bwhere\b|在哪|哪里|什么地方|何处", ("location", "place", "site", "地点", "位置")),
    (r"\bhow\s+often\b|(?:多久|多长时间)[^？?，,。]{0,10}一次|每隔多久", ("interval", "frequency", "周期", "频率")),
    # a modal or "at most" asks a maximum less surely than "how far" asks a range: these say half a word
    # (WEAK_CUE: pipeline.question.naming.relation_score)
    (r"\bhow\s+(?:long|much|many|far)\b[^?]*\b(?:may|can|could|allowed)\b|\bat\s+most\b|\bup\s+to\b|最多|最长|不超过",
     ("~maximum", "~max", "~longest", "~limit", "~highest", "~上限")),
    (r"\bat\s+least\b|\bminimum\b|最少|至少|最短", ("~minimum", "~min", "~shortest", "~least", "~下限")),
]]
WEAK_CUE = "~"


def asked_nouns(question: str) -> frozenset[str]:
    """The nouns the question's words ask for (English and Chinese cues; see _ASKED_NOUNS); a weak one is
    marked with WEAK_CUE."""
    return frozenset().union(*(nouns for rx, nouns in _ASKED_NOUNS if rx.search(question)))


# A total is computed from what sources state per item or per period ("the total per diem for 4 full days",
# "一共是多少"): no sentence states it.
TOTAL_WORDS = re.compile(r"\b(?:total|in all|altogether|combined|sum)\b|总共|一共|合计|总计|共计|总额", re.IGNORECASE)


# "Who approves thesis extensions, and what is that person's grade?": a second question joined by "and".
_SECOND_ASK = re.compile(r",?\s+and\s+(?:how|what|which|when|where|who|whom)\b", re.IGNORECASE)


def asks_two(question: str) -> bool:
    """A question of two question sentences ("…最多几天内可以无理由退货？质量问题换货的期限是几天？"), or of two
    questions joined by "and" ("Who approves X, and what is their grade?"), asks two things."""
    return len(re.findall(r"[?？]", question.strip().rstrip("?？"))) >= 1 or bool(_SECOND_ASK.search(question))


def answer_types(question: str) -> frozenset[str]:
    """The answer types a question expects (empty when its wording gives no cue); a question whose
    sentences before the last set the scene is read by its last ("…deputises for her. Can he approve …?")."""
    for text in (question, last_sentence(question)):
        for rx, types in _TYPE_RES:
            if rx.search(text):
                return frozenset(types)
    return frozenset()


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


# The words that ask (English wh-words, Chinese question words): the clause holding the last of them is the one
# that asks; the clauses before it set the scene ("Premium Support is free …, so what does Standard Support cost?").
_ASKING_WORD = re.compile(r"\b(?:what|how|which|who|whom|whose|when|where|why)\b|"
                          r"多少|多久|多长|多大|多高|多重|多远|多快|几|哪|什么|谁|怎么|如何|是否",
                          re.IGNORECASE)
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
SITUATION = re.compile(r"\b(?:i|my|me|mine|we|our|us|if|suppose|supposing|assuming|unless|left|remaining)\b|"
                       r"我|如果|假如|假设|若是|要是|剩余|还剩|剩下", re.IGNORECASE)

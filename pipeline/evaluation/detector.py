"""Open-domain hallucination detector: claims (values, entities, CJK terms) checked against a context."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass, field

from pipeline.evaluation.mentions import ValueMention, find_values, strip_citations, values_compatible

# The pipeline's extraction is driven by a domain's rule files, so it reads nothing from open-domain
# text (news, Wikipedia, dialogue). Detector runs therefore extract their own generic claims here and
# hand them to symbolic.Verifier as "mentions" facts (see verifier_bridge.py).

STOPWORDS = frozenset("""a an the and or but if then than that this these those there their they them he
she his her its it's it is are was were be been being am do does did done have has had having i me my
we our you your yours not no nor so too very can could will would shall should may might must of in
on at by for with about against between into through during before after above below to from up down
out off over under again further once here when where why how all any both each few more most other
some such only own same just also as what which who whom whose well yes oh really like know think
get got one ones much many lot lots thing things something anything really quite pretty sure""".split())
# Sentence-initial or discourse words that are capitalised without being names.
NOT_NAMES = frozenset("""I The A An This That These Those It He She They We You Yes No Oh Well So But And
Or If In On At Of For With As By From To Also However Although Though When While Because Since After
Before Did Do Does Is Are Was Were Have Has Had What Which Who Where Why How Hello Hi Hey Sure Wow
Yeah Okay Ok Really Thanks Thank My Your Our Their His Her Its There Here Not Do""".split())
ENTITY_RE = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:(?:of|the|de|du|von|van|and|&|for|la|le)\s+)*[A-Z][\w'’.-]*)*")
CJK_RUN = re.compile(r"[\u3400-\u9fff]+")
# Function characters where a Chinese clause is split into terms (no segmenter is packaged offline).
ZH_BREAKS = re.compile(r"[的了在是和与及或等为对将已也都而并被把从向于其之这那个着过就还又]")
WORD_RE = re.compile(r"[A-Za-z][A-Za-z'’-]+")


@dataclass
class DetectorConfig:
    """Decision thresholds; the defaults were chosen on the /work/shared/data dev sets only."""
    min_unsupported: int = 1            # unsupported claims needed to predict "hallucinated"
    entity_coverage: float = 1.0        # share of an entity's words the context must contain
    zh_term_coverage: float = 0.5       # share of a Chinese term's character bigrams the context must contain
    novelty_threshold: float | None = None  # share of novel content words above which -> hallucinated
    single_word_entities: bool = True   # mid-sentence capitalised single words count as entities
    use_question: bool = True           # the question is grounding too (the user said it)

    @classmethod
    def for_language(cls, language: str) -> "DetectorConfig":
        return cls(**TUNED.get(language.split("-")[0].lower(), {}))


# Per-language thresholds chosen on the dev sets in /work/shared/data only (python -m
# pipeline.evaluation.tune): English on halueval_qa + faithdial_audit jointly, Chinese on uhgeval_zh.
# Grid and objective (mean F1 over the language's dev sets) are in tune.py; the results:
#   en: min_unsupported=1, entity_coverage=1.0, novelty_threshold=0.2, single-word names on
#   zh: min_unsupported=2, zh_term_coverage=0.8 (UHGEval's faithful answers are verbatim copies, so
#       this choice mostly measures recall on real Chinese hallucinations; see bench/RESULTS.md)
TUNED: dict[str, dict] = {"en": {"novelty_threshold": 0.2},
                          "zh": {"min_unsupported": 2, "zh_term_coverage": 0.8}}


@dataclass
class OpenClaim:
    kind: str          # value | entity | term
    text: str
    start: int
    end: int
    supported: bool = False
    why: str = ""
    verdict: str = ""  # the symbolic.Verifier verdict when the bridge ran


@dataclass
class Detection:
    hallucinated: bool
    score: float                      # unsupported claims (+ novelty) as one number, for ROC-style views
    claims: list[OpenClaim] = field(default_factory=list)
    novelty: float = 0.0
    reason: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).casefold()).strip()


def _stem(word: str) -> str:
    w = word.lower().strip("'’-")
    for suf in ("ing", "ed", "es", "s"):
        if len(w) > len(suf) + 3 and w.endswith(suf):
            return w[: -len(suf)]
    return w


def _bigrams(text: str) -> set[str]:
    return {text[i:i + 2] for i in range(len(text) - 1)}


def extract_claims(answer: str, *, single_word_entities: bool = True) -> list[OpenClaim]:
    """Generic checkable claims in an answer: values, English names, Chinese terms (each with a span)."""
    text = strip_citations(answer)
    claims = [OpenClaim("value", v.text, v.start, v.end) for v in find_values(text)]
    taken = [(c.start, c.end) for c in claims]

    def overlaps(a: int, b: int) -> bool:
        return any(a < e and s < b for s, e in taken)

    for m in ENTITY_RE.finditer(text):
        words = m.group().split()
        while words and words[0] in NOT_NAMES:
            words = words[1:]
        if not words:
            continue
        start = m.start() + m.group().index(words[0])
        span = " ".join(words).rstrip(".")
        sentence_start = start == 0 or re.search(r"[.!?]\s*$|^\s*$", text[:start]) is not None
        if len(words) == 1 and (not single_word_entities or sentence_start):
            continue
        if not overlaps(start, start + len(span)):
            claims.append(OpenClaim("entity", span, start, start + len(span)))
    for m in CJK_RUN.finditer(text):
        pos = m.start()
        for piece in ZH_BREAKS.split(m.group()):
            a = text.index(piece, pos) if piece else pos
            pos = a + len(piece)
            if len(piece) >= 2 and not overlaps(a, a + len(piece)):
                claims.append(OpenClaim("term", piece, a, a + len(piece)))
    return sorted(claims, key=lambda c: c.start)


@dataclass
class Evidence:
    """Everything a context states, indexed for claim support."""
    text: str
    values: list[ValueMention]
    words: set[str]
    bigrams: set[str]

    @classmethod
    def of(cls, *texts: str) -> "Evidence":
        joined = "\n".join(t for t in texts if t)
        return cls(_norm(joined), find_values(joined),
                   {_stem(w) for w in WORD_RE.findall(joined)}, _bigrams(_norm(joined)))


def check_claim(claim: OpenClaim, ev: Evidence, cfg: DetectorConfig) -> OpenClaim:
    if claim.kind == "value":
        v = find_values(claim.text)
        ok = bool(v) and any(values_compatible(v[0], e) for e in ev.values)
        claim.supported, claim.why = ok, ("value stated in the context" if ok else "value not in the context")
    elif claim.kind == "entity":
        if _norm(claim.text) in ev.text:
            claim.supported, claim.why = True, "name appears verbatim"
        else:
            words = [w for w in WORD_RE.findall(claim.text) if w.lower() not in STOPWORDS]
            cover = sum(_stem(w) in ev.words for w in words) / max(1, len(words))
            claim.supported = cover >= cfg.entity_coverage and bool(words)
            claim.why = f"{cover:.0%} of the name's words in the context"
    else:
        t = _norm(claim.text)
        grams = _bigrams(t)
        cover = 1.0 if t in ev.text else sum(g in ev.bigrams for g in grams) / max(1, len(grams))
        claim.supported = cover >= cfg.zh_term_coverage
        claim.why = f"{cover:.0%} of the term's character pairs in the context"
    return claim


def novelty(answer: str, ev: Evidence) -> float:
    """Share of the answer's English content words (stemmed) that the context never uses."""
    words = [_stem(w) for w in WORD_RE.findall(answer) if w.lower() not in STOPWORDS and len(w) > 2]
    if not words:
        return 0.0
    return sum(w not in ev.words for w in words) / len(words)


def detect(context: str, question: str, answer: str, cfg: DetectorConfig | None = None,
           verify=None) -> Detection:
    """Judge one (context, question, answer) triple. verify: optional callable(claims, evidence) that
    returns one verdict string per claim (the symbolic.Verifier bridge); it decides support when given."""
    cfg = cfg or DetectorConfig()
    ev = Evidence.of(context, question if cfg.use_question else "")
    claims = [check_claim(c, ev, cfg) for c in extract_claims(answer, single_word_entities=cfg.single_word_entities)]
    if verify is not None and claims:
        for c, verdict in zip(claims, verify(claims, ev)):
            c.verdict = verdict
            c.supported = verdict == "supported"
    bad = [c for c in claims if not c.supported]
    nov = novelty(answer, ev)
    by_claims = len(bad) >= cfg.min_unsupported
    by_novelty = cfg.novelty_threshold is not None and nov > cfg.novelty_threshold
    reason = "; ".join(f"{c.kind} {c.text!r} unsupported ({c.why})" for c in bad[:5])
    if by_novelty:
        reason = (reason + "; " if reason else "") + f"{nov:.0%} of content words not in the context"
    return Detection(by_claims or by_novelty, len(bad) + nov, claims, nov, reason or "all claims supported")

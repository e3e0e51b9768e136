"""Value bridges: the passage stating a value the question states ("the robot with ±10 mm positioning
accuracy", "the robot that can carry 500 kg"), found by searching the question within the documents that
state that value. A question that describes an entity by a value instead of naming it needs that passage
to know which entity it asks about, and the words around the value seldom match it (a datasheet row
"| Positioning accuracy | ±10 mm |" ranks below the warranty policy the question is also about)."""
from __future__ import annotations

from typing import Callable, Sequence

from pipeline.evidence.kb_facts import KBFacts
from pipeline.seams import PassageLike, RetrieverLike
from pipeline.text.values import find_values
from symbolic.values import Quantity, Value

# Values of the question bridged; passages searched per value.
MAX_VALUES = 3
BRIDGE_TOP_K = 3
# A value stated by more documents than this is common ("30 days", "EUR 50"): it names no one thing.
MAX_DOCS = 3
# A measured quantity (a mass, a length, a speed) describes a thing; a duration, an amount or a share in a
# question mostly describes the asker's case ("a flight of 5 hours", "an expense of 5,800 yuan") and would
# bring whatever else states it (measured on eval/default_domain.jsonl: con-02 and num-11 lost their sources).
BRIDGE_KINDS = frozenset({"quantity"})


def stated_values(question: str) -> list[Value]:
    """The distinct values the question states, of the kinds that describe a thing, in order."""
    out: list[Value] = []
    for value, kind, _s, _e in find_values(question):
        if kind in BRIDGE_KINDS and value not in out:
            out.append(value)
    return out[:MAX_VALUES]


def documents_stating(value: Value, kb: KBFacts) -> list[str]:
    """The documents of the knowledge base with a passage stating ``value`` (equal after normalisation)."""
    if isinstance(value, Quantity):
        return kb.documents_by_quantity.get(value.key(), [])
    return list(dict.fromkeys(v.doc_id for v in kb.values if v.value == value))


def passage_key(p: PassageLike) -> tuple:
    """One passage, whatever object carries it: its document and span."""
    return (p.doc_id, p.start, p.end)


def _states(passage: PassageLike, value: Value) -> bool:
    return any(v == value for v, *_ in find_values(passage.text))


def bridge_passages(question: str, retriever: RetrieverLike, kb: KBFacts | None,
                    rank: Callable[[PassageLike], float] = lambda p: -float(getattr(p, "score", 0.0))
                    ) -> list[PassageLike]:
    """Per value the question states (and few documents do), the best passage stating it among the
    question's hits within those documents; none when the KB's values are unknown (no KB reading) or the
    retriever cannot search within documents."""
    if kb is None:
        return []
    out: list[PassageLike] = []
    for value in stated_values(question):
        docs = documents_stating(value, kb)
        if not docs or len(docs) > MAX_DOCS:
            continue
        try:
            hits = list(retriever.search(question, top_k=BRIDGE_TOP_K * len(docs), doc_ids=docs))
        except TypeError:      # a retriever without a document filter
            return []
        keys = {passage_key(p) for p in out}
        best = next((p for p in sorted(hits, key=rank) if not getattr(p, "quarantine", None)
                     and passage_key(p) not in keys and _states(p, value)), None)
        if best is not None:
            out.append(best)
    return out


def place_after(head: Sequence[PassageLike], inserted: Sequence[PassageLike],
                rest: Sequence[PassageLike]) -> list[PassageLike]:
    """``head``, then ``inserted``, then ``rest`` without any passage already placed (same span)."""
    out: list[PassageLike] = []
    seen: set[tuple] = set()
    for p in (*head, *inserted, *rest):
        key = passage_key(p)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out

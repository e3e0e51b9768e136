"""Relations named by meaning: a question whose words name no relation of the rules ("How much does an NW Fleet
Manager licence cost?" for "licence fee per robot per year") is compared, by the retriever's sentence embedder,
with every relation's names, and asks the one it is clearly closest to.

The default embedder (all-MiniLM-L6-v2) is English-only, so Chinese text is left to the glossary
(pipeline.text.glossary). Only relations a question could ask (their types fit and their arguments are bound)
compete, and the closest must be close (MIN_SIMILARITY) and ahead of the next by MARGIN: an unclear question
is answered from the passages, not from a guessed relation."""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any, Callable, Sequence

import numpy as np

from pipeline.question.naming import relation_names
from pipeline.text.terms import CJK_RUN_RE
from symbolic import RuleBase
from symbolic.model import RelationSig

# Cosine similarity of all-MiniLM-L6-v2 sentence vectors, chosen on the shipped and tuning sets' questions that
# name no relation: the relation they ask scores 0.65-0.85 and leads by 0.1 or more; the unanswerable
# questions' best relation stays below 0.55.
MIN_SIMILARITY = 0.65
MARGIN = 0.10
TEXTS_KEPT = 256


class RelationNamer:
    """Embeds each relation's English names once per rule base and names the relation a text means."""

    def __init__(self, embed: Callable[[list[str]], np.ndarray], *, min_similarity: float = MIN_SIMILARITY,
                 margin: float = MARGIN):
        self._embed = embed
        self.min_similarity = min_similarity
        self.margin = margin
        self._names: weakref.WeakKeyDictionary[RuleBase, dict[str, np.ndarray]] = weakref.WeakKeyDictionary()
        # a question is parsed twice (as written, then with what the facts show): embedded once
        self._texts: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def _vectors(self, rulebase: RuleBase) -> dict[str, np.ndarray]:
        """Relation -> its English names' vectors (label, aliases, id words), rows L2-normalised."""
        vectors = self._names.get(rulebase)
        if vectors is None:
            names = [(sig.name, n) for sig in rulebase.relations.values() for n in _english_names(sig)]
            rows = self._embed([n for _r, n in names]) if names else np.zeros((0, 1), dtype=np.float32)
            by_relation: dict[str, list[np.ndarray]] = {}
            for (relation, _n), row in zip(names, rows):
                by_relation.setdefault(relation, []).append(row)
            vectors = {r: np.stack(v) for r, v in by_relation.items()}
            self._names[rulebase] = vectors
        return vectors

    def similarities(self, text: str, sigs: Sequence[RelationSig],
                     rulebase: RuleBase) -> list[tuple[float, RelationSig]]:
        """(the closest of its names' cosine similarity to ``text``, relation), closest first; empty for Chinese."""
        if not sigs or CJK_RUN_RE.search(text) or not text.strip():
            return []
        vectors = self._vectors(rulebase)
        query = self._embedded(text)
        scored = [(float(np.max(vectors[sig.name] @ query)), sig) for sig in sigs if sig.name in vectors]
        return sorted(scored, key=lambda p: -p[0])

    def nearest(self, text: str, names: Sequence[str]) -> float | None:
        """The cosine similarity of ``text`` to the closest of ``names`` (English ones; None where either is
        Chinese or there are none)."""
        names = [n for n in names if n.strip() and not CJK_RUN_RE.search(n)]
        if not names or CJK_RUN_RE.search(text) or not text.strip():
            return None
        query = self._embedded(text)
        return max(float(self._embedded(n) @ query) for n in names)

    def _embedded(self, text: str) -> np.ndarray:
        """``text``'s vector, from the last few texts embedded where it is one of them."""
        with self._lock:
            hit = self._texts.get(text)
            if hit is not None:
                self._texts.move_to_end(text)
                return hit
        vector = self._embed([text])[0]
        with self._lock:
            self._texts[text] = vector
            while len(self._texts) > TEXTS_KEPT:
                self._texts.popitem(last=False)
        return vector

    def closest(self, text: str, sigs: Sequence[RelationSig], rulebase: RuleBase) -> tuple[RelationSig, float] | None:
        """The relation of ``sigs`` that ``text`` means, with its similarity: at least ``min_similarity``, and
        ``margin`` ahead of the next; else None."""
        return self.closest_of(self.similarities(text, sigs, rulebase))

    def closest_of(self, scored: Sequence[tuple[float, RelationSig]]) -> tuple[RelationSig, float] | None:
        """``closest`` on similarities already computed (``similarities``' list)."""
        if not scored or scored[0][0] < self.min_similarity:
            return None
        if len(scored) > 1 and scored[0][0] - scored[1][0] < self.margin:
            return None
        return scored[0][1], scored[0][0]


def _english_names(sig: RelationSig) -> list[str]:
    return [n for n in dict.fromkeys(relation_names(sig)) if not CJK_RUN_RE.search(n)]


_NAMERS: weakref.WeakKeyDictionary[Any, RelationNamer] = weakref.WeakKeyDictionary()


def namer_for(retriever: object) -> RelationNamer | None:
    """The namer of the retriever's embedder (one per embedder), or None for a retriever without one."""
    embedder = getattr(retriever, "embedder", None)
    if embedder is None or not callable(getattr(embedder, "embed", None)) \
            or str(getattr(embedder, "spec", "")).startswith("hashing"):     # no meaning in hashed vectors
        return None
    try:
        namer = _NAMERS.get(embedder)
        if namer is None:
            namer = _NAMERS[embedder] = RelationNamer(embedder.embed)
        return namer
    except TypeError:        # an embedder that cannot be weakly referenced: a namer of its own each time
        return RelationNamer(embedder.embed)

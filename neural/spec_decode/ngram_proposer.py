"""NgramProposer: prompt-lookup decoding — continue the most recent earlier occurrence of the text's suffix.

For n from ``prompt_lookup_max`` down to ``prompt_lookup_min``, the last n tokens (prompt + generated) are
looked up among earlier n-grams; the tokens that followed the most recent earlier occurrence of the
longest matching suffix are the proposal. An incremental index per request (n-gram -> latest start)
makes a lookup O(max n) instead of a scan over the whole context every step.
"""
from __future__ import annotations

from neural.sequence import Sequence


class NgramIndex:
    """n-gram -> start of its latest occurrence that has at least one following token, for each n."""

    def __init__(self, min_n: int, max_n: int) -> None:
        self.min_n, self.max_n = min_n, max_n
        self.tables: dict[int, dict[tuple[int, ...], int]] = {n: {} for n in range(min_n, max_n + 1)}
        self.num_indexed = 0  # tokens covered so far (n-grams starting before num_indexed - n are in)

    def extend(self, tokens: list[int]) -> None:
        """Index every n-gram of ``tokens`` that ends before its last token (it must have a continuation)."""
        end = len(tokens) - 1  # an n-gram starting at i is usable iff i + n <= end
        for n, table in self.tables.items():
            for i in range(max(0, self.num_indexed - n), end - n + 1):
                table[tuple(tokens[i : i + n])] = i
        self.num_indexed = max(self.num_indexed, end)

    def lookup(self, tokens: list[int], k: int) -> list[int]:
        self.extend(tokens)
        for n in range(self.max_n, self.min_n - 1, -1):
            if len(tokens) <= n:
                continue
            start = self.tables[n].get(tuple(tokens[-n:]))
            if start is not None:
                return tokens[start + n : start + n + k]
        return []


class NgramProposer:
    def __init__(self, min_n: int, max_n: int) -> None:
        self.min_n, self.max_n = min_n, max_n
        self.indexes: dict[str, NgramIndex] = {}

    def propose(self, seqs: list[Sequence], ks: list[int]) -> list[list[int]]:
        out = []
        for seq, k in zip(seqs, ks):
            index = self.indexes.get(seq.request_id)
            if index is None:
                index = self.indexes[seq.request_id] = NgramIndex(self.min_n, self.max_n)
            out.append(index.lookup(seq.token_ids, k))
        return out

    def on_verified(self, seq: Sequence, num_accepted: int) -> None:
        pass  # the index only ever holds verified tokens: nothing to roll back

    def release(self, seq: Sequence) -> None:
        self.indexes.pop(seq.request_id, None)

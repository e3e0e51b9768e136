"""The citation-only guard: while a draft is markers alone, another marker and the end are banned; after
anything else it is done for good (and says so, so speculative decoding resumes)."""
from __future__ import annotations

import torch

from pipeline.generate.citation_guard import CitationOnlyGuard


class ListTokenizer:
    """A tokenizer over a fixed list of token strings (id = index)."""

    def __init__(self, strings: list[str], eos: int) -> None:
        self.strings, self.eos_token_ids, self.vocab_size = strings, {eos}, len(strings)

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        return "".join(self.strings[i] for i in ids if i not in self.eos_token_ids)


STRINGS = ["<eos>", "[", "1", "]", " [", "2", " The", " limit", " is", " 7", "[1]", " [3]", "天"]
EOS, OPEN, ONE, CLOSE, SP_OPEN, TWO, THE, LIMIT, IS, SEVEN, M1, M3, TIAN = range(len(STRINGS))


def test_markers_alone_ban_another_marker_and_the_end():
    guard = CitationOnlyGuard(ListTokenizer(STRINGS, EOS))
    logits = torch.zeros(len(STRINGS) + 3)           # a model's vocabulary may be padded past the tokenizer's
    assert torch.equal(guard([], logits), logits) and guard.active([])    # the first token is free
    for draft in ([M1], [OPEN, ONE, CLOSE], [M1, M3], [OPEN, ONE, CLOSE, SP_OPEN, TWO, CLOSE]):
        out = guard(draft, logits)
        assert guard.active(draft)
        assert {i for i in range(len(out)) if out[i] == float("-inf")} == {EOS, OPEN, SP_OPEN, M1, M3}
    assert torch.equal(logits, torch.zeros(len(STRINGS) + 3))            # the caller's logits are not modified


def test_the_guard_is_done_once_the_draft_says_something():
    guard = CitationOnlyGuard(ListTokenizer(STRINGS, EOS))
    logits = torch.zeros(len(STRINGS))
    for draft in ([THE], [M1, SEVEN], [M1, SEVEN, TIAN, M3], [THE, LIMIT, IS, SEVEN, M1]):
        assert not guard.active(draft)
        assert torch.equal(guard(draft, logits), logits)
    # an unfinished marker ("[1") still counts as markers alone
    assert guard.active([OPEN, ONE])

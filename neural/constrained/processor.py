"""Grammar-constrained decoding: a JSON-schema-driven logits processor whose output always parses."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch

from neural.constrained.machine import JsonMachine, State


class _Tokenizer(Protocol):
    def decode(self, ids: list[int]) -> str: ...


@dataclass
class TokenVocabulary:
    """Every token's decoded string, computed once per tokenizer, plus the tries and masks the
    constraint walks (a token is allowed iff the JSON machine accepts all of its characters)."""

    strings: list[str]
    eos_token_ids: set[int]
    trie: dict = field(default_factory=dict)                      # char -> (child trie, [token ids ending here])
    string_safe: torch.Tensor = field(default_factory=lambda: torch.zeros(0, dtype=torch.bool))
    lengths: torch.Tensor = field(default_factory=lambda: torch.zeros(0, dtype=torch.long))
    unsafe_ids: list[int] = field(default_factory=list)           # tokens with '"', '\\' or control chars

    @classmethod
    def from_tokenizer(cls, tokenizer: _Tokenizer, vocab_size: int | None = None) -> "TokenVocabulary":
        size = vocab_size or _vocab_size(tokenizer)
        eos = set(getattr(tokenizer, "eos_token_ids", None) or [])
        strings = [tokenizer.decode([i]) if i not in eos else "" for i in range(size)]
        return cls.from_strings(strings, eos)

    @classmethod
    def from_strings(cls, strings: list[str], eos_token_ids: set[int]) -> "TokenVocabulary":
        vocab = cls(strings=list(strings), eos_token_ids=set(eos_token_ids))
        safe = []
        for tid, s in enumerate(vocab.strings):
            # Empty decodes (special tokens rendered as nothing) can never advance the machine.
            if not s or tid in vocab.eos_token_ids:
                safe.append(False)
                continue
            node = vocab.trie
            for ch in s[:-1]:
                node = node.setdefault(ch, ({}, []))[0]
            node.setdefault(s[-1], ({}, []))[1].append(tid)
            ok = all(c not in '"\\' and ord(c) >= 0x20 for c in s)
            safe.append(ok)
            if not ok:
                vocab.unsafe_ids.append(tid)
        vocab.string_safe = torch.tensor(safe, dtype=torch.bool)
        vocab.lengths = torch.tensor([len(s) for s in vocab.strings], dtype=torch.long)
        return vocab


def _vocab_size(tokenizer: Any) -> int:
    for attr in ("vocab_size", "n_vocab"):
        value = getattr(tokenizer, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    if hasattr(tokenizer, "__len__"):
        return len(tokenizer)
    raise ValueError("cannot determine the tokenizer's vocabulary size; pass vocab_size")


_VOCAB_CACHE: dict[int, TokenVocabulary] = {}


def vocabulary_for(tokenizer: Any, vocab_size: int | None = None) -> TokenVocabulary:
    """The (cached) decoded vocabulary of a tokenizer: decoding 49k tokens costs ~0.5 s, pay it once."""
    key = id(tokenizer)
    if key not in _VOCAB_CACHE:
        _VOCAB_CACHE[key] = TokenVocabulary.from_tokenizer(tokenizer, vocab_size)
    return _VOCAB_CACHE[key]


class JsonSchemaLogitsProcessor:
    """A ``SamplingParams.logits_processors`` entry: masks every token that would make the output
    invalid for ``schema``. Stateful (tracks the generated prefix): use one instance per request.

    With ``max_tokens`` given, the output is also guaranteed to be *complete* JSON by then: once the
    budget gets close to the shortest completion, only tokens that keep a completion within budget
    are allowed."""

    def __init__(self, schema: dict, tokenizer: Any = None, *, vocab: TokenVocabulary | None = None,
                 max_tokens: int | None = None):
        if vocab is None:
            if tokenizer is None:
                raise ValueError("JsonSchemaLogitsProcessor needs a tokenizer or a TokenVocabulary")
            vocab = vocabulary_for(tokenizer)
        self.vocab = vocab
        self.machine = JsonMachine(schema)
        self.max_tokens = max_tokens
        self._ids: list[int] = []
        self._state: State | None = self.machine.initial()
        self._mask_cache: dict[Any, tuple[torch.Tensor, dict[int, State]]] = {}
        self._zone = self.machine.max_completion_growth() + 2
        self.dead_end: str | None = None   # why the reply had to end before its JSON was complete

    # -- state tracking -------------------------------------------------------------------------
    def _sync(self, ids: list[int]) -> State | None:
        if ids[: len(self._ids)] != self._ids:            # a different request/prefix: start over
            self._ids, self._state = [], self.machine.initial()
        for tid in ids[len(self._ids):]:
            if self._state is not None and tid not in self.vocab.eos_token_ids:
                self._state = self.machine.feed(self._state, self.vocab.strings[tid])
            self._ids.append(tid)
        return self._state

    def state_text_ok(self, text: str) -> bool:
        """Whether ``text`` is a valid prefix under the schema (for tests and diagnostics)."""
        return self.machine.feed(self.machine.initial(), text) is not None

    # -- masking ----------------------------------------------------------------------------------
    def allowed(self, state: State) -> tuple[torch.Tensor, dict[int, State]]:
        """Boolean mask of allowed tokens, and the next state of each individually-checked token
        (tokens allowed in bulk inside a string leave the string's structure unchanged)."""
        key = self.machine.cache_key(state, int(self.vocab.lengths.max()) if len(self.vocab.strings) else 0)
        hit = self._mask_cache.get(key)
        if hit is not None:
            return hit
        n = len(self.vocab.strings)
        mask = torch.zeros(n, dtype=torch.bool)
        nexts: dict[int, State] = {}
        room = self.machine.string_room(state)
        if room is not None:                       # inside free string content: bulk + the few others
            bulk = self.vocab.string_safe & (self.vocab.lengths <= room)
            mask |= bulk
            for tid in self.vocab.unsafe_ids:
                nxt = self.machine.feed(state, self.vocab.strings[tid])
                if nxt is not None:
                    mask[tid] = True
                    nexts[tid] = nxt
        else:
            self._walk(self.vocab.trie, state, mask, nexts)
        if self.machine.can_finish(state):
            for tid in self.vocab.eos_token_ids:
                if tid < n:
                    mask[tid] = True
        result = (mask, nexts)
        if len(self._mask_cache) < 4096:
            self._mask_cache[key] = result
        return result

    def _walk(self, node: dict, state: State, mask: torch.Tensor, nexts: dict[int, State]) -> None:
        for ch, (child, ids) in node.items():
            nxt = self.machine.step(state, ch)
            if nxt is None:
                continue
            for tid in ids:
                mask[tid] = True
                nexts[tid] = nxt
            if child:
                self._walk(child, nxt, mask, nexts)

    def __call__(self, token_ids: list[int], logits: torch.Tensor) -> torch.Tensor:
        state = self._sync(list(token_ids))
        n = len(self.vocab.strings)
        full = torch.zeros(logits.shape[-1], dtype=torch.bool)
        if state is None:                          # cannot happen under the mask; fail safe to EOS
            for tid in self.vocab.eos_token_ids:
                full[tid] = True
        else:
            mask, nexts = self.allowed(state)
            if self.max_tokens is not None:
                mask = self._budget(state, mask, nexts, self.max_tokens - len(token_ids))
            full[: min(n, logits.shape[-1])] = mask[: logits.shape[-1]]
        if not bool(full.any()):
            # no token spells what must come next (a schema constant in characters the vocabulary lacks):
            # sampling from nothing would give NaN probabilities, so the reply ends here, incomplete
            self.dead_end = f"after {len(token_ids)} tokens no token of the vocabulary continues the JSON"
            for tid in self.vocab.eos_token_ids:
                full[tid] = True
        return logits.masked_fill(~full, float("-inf"))

    def _budget(self, state: State, mask: torch.Tensor, nexts: dict[int, State], remaining: int) -> torch.Tensor:
        """Near the end of the budget keep only tokens after which the shortest completion still fits
        in the tokens left (every completion char is at worst one token)."""
        need = len(self.machine.completion(state))
        if remaining > need + self._zone:
            return mask
        mask = mask.clone()
        after = remaining - 1
        room = self.machine.string_room(state)
        if room is not None and need > after:      # bulk string tokens keep `need` unchanged
            mask &= ~(self.vocab.string_safe & (self.vocab.lengths <= room))
        for tid, nxt in nexts.items():
            if mask[tid] and len(self.machine.completion(nxt)) > after:
                mask[tid] = False
        if not bool(mask.any()):                   # fall back to the single chars of the completion
            comp = self.machine.completion(state)
            for tid in self.vocab.trie.get(comp[:1], ({}, []))[1] if comp else self.vocab.eos_token_ids:
                mask[tid] = True
        return mask


def parse_constrained(text: str) -> Any:
    """Parse the output of a constrained generation (raises ValueError with the text on failure)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"constrained output did not parse ({exc}): {text!r}") from exc

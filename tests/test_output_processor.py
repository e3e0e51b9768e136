"""What a finished or streaming sequence shows of its text: an incomplete UTF-8 character is held back while
more tokens may complete it, and dropped when the token budget ends inside it."""
from __future__ import annotations

from neural.output_processor import make_output, update_text
from neural.sampling_params import SamplingParams
from neural.sequence import Sequence

# "天" is three UTF-8 bytes; a byte-level tokenizer may emit them as separate tokens
_TIAN = "天".encode()


class ByteTokenizer:
    """Token i is byte i: a decode of a cut multi-byte character ends in U+FFFD, as a byte-level BPE's does."""

    def decode(self, ids: list[int]) -> str:
        return bytes(ids).decode("utf-8", errors="replace")


def sequence(ids: list[int], finish_reason: str | None = None) -> Sequence:
    seq = Sequence("r", None, [1], SamplingParams(max_tokens=len(ids)))
    seq.token_ids += ids
    seq.finish_reason = finish_reason
    update_text(seq, ByteTokenizer(), finish_reason is not None)
    return seq


def test_a_character_cut_by_the_token_budget_is_dropped_from_the_final_text():
    ids = list("共 10 ".encode()) + list(_TIAN[:2])
    out = make_output(sequence(ids, "length"), finished=True)
    assert out.text == "共 10 " and "\ufffd" not in out.delta_text


def test_a_streaming_text_holds_an_incomplete_character_back_and_shows_it_complete():
    seq = sequence(list("共 10 ".encode()) + list(_TIAN[:2]))
    assert make_output(seq, finished=False).text == "共 10 "
    seq.token_ids.append(_TIAN[2])
    update_text(seq, ByteTokenizer(), True)
    seq.finish_reason = "stop"
    final = make_output(seq, finished=True)
    assert final.text == "共 10 天" and final.delta_text == "天"


def test_a_stop_finish_keeps_its_text_whole():
    out = make_output(sequence(list("no cut".encode()), "stop"), finished=True)
    assert out.text == "no cut"

"""Prompt choices: sources packed into a token budget keep exact document spans and their table header; prompt
forms; sampling knobs reach the engine."""
from __future__ import annotations

import pytest

from pipeline import AnswererConfig, AskOptions
from pipeline.loop.answerer import Answerer
from pipeline.generate.profiles import MEDIUM, SMALL, PromptProfile, parameter_count, profile_for
from pipeline.generate.prompts import ABSTAIN_SENTINEL, PromptStyle, build, format_source, segments, user_message
from pipeline.generate.sources import focus_passage, pack
from pipeline_fakes import FakePassage, FixedRetriever, ScriptedGenerator, WordTokenizer, rulebase_of


RULES = """
type group "employee group"
entity group full_time "full-time employee"
relation annual_leave_days(g: group, days: duration[day]) "annual leave" unique
pattern leave_en: "{d:duration} of annual leave" -> annual_leave_days(full_time, ?d)
"""

DOC = ("# AX-200\n\nThe AX-200 is an autonomous mobile robot. It carries shelves and totes.\n\n"
       "| Property | Value |\n|---|---|\n| Rated payload | 200 kg |\n| Maximum speed, unloaded | 2.0 m/s |\n"
       "| Battery | 48 V lithium iron phosphate |\n| Runtime | up to 10 hours |\n\n"
       "The robot stops for people. It is sold in Europe and China.")


def _passage(offset: int = 100) -> FakePassage:
    # the passage is DOC placed at ``offset`` in a longer document
    return FakePassage("products/ax200.md", DOC, 0.9, start=offset)


def test_segments_split_sentences_and_lines_but_not_decimals():
    text = "Speed is 1.5 m/s. It stops! 这是第一句。第二句。\n| Rated payload | 200 kg |"
    assert [text[s:e] for s, e in segments(text)] == [
        "Speed is 1.5 m/s.", "It stops!", "这是第一句。", "第二句。", "| Rated payload | 200 kg |"]


def test_focus_keeps_the_window_nearest_the_question_with_an_exact_span():
    document = "x" * 100 + DOC + " tail"
    p = FakePassage("products/ax200.md", DOC, 0.9, start=100)
    assert document[p.start:p.end] == p.text
    f = focus_passage(p, "What is the rated payload of the AX-200?", 2)
    assert "| Rated payload | 200 kg |" in f.text and len(f.text) < len(DOC) / 3
    assert document[f.start:f.end] == f.text              # still an exact span of the document
    assert (f.doc_id, f.score) == (p.doc_id, p.score) and p.text == DOC   # a copy; the original is untouched


def test_focus_on_chinese_question_uses_character_overlap():
    text = "本手册适用于 AX-200。额定载重为 200 公斤。最高速度为每秒 2 米。电池为磷酸铁锂电池。保养周期为六个月。"
    p = FakePassage("zh/ax200_manual.md", text, 0.5, start=7)
    f = focus_passage(p, "AX-200 的额定载重是多少？", 1)
    assert f.text == "额定载重为 200 公斤。" and f.start == 7 + text.index("额定")


def test_focus_leaves_short_or_unrelated_passages_alone():
    p = _passage()
    assert focus_passage(p, "payload?", 50) is p                       # fewer segments than the window
    assert focus_passage(p, "zebra quartz", 2) is p                    # nothing in common: keep it all
    with pytest.raises(ValueError, match="max_segments"):
        focus_passage(p, "payload", 0)


def test_prompt_forms_abstention_hint_and_question_placement():
    srcs = ["[1] (a.md) Leave is 25 days."]
    plain = user_message("How much leave?", srcs)
    assert plain.startswith("Sources:") and plain.endswith(PromptStyle().instruction)
    assert plain.endswith("If the sources do not contain the answer, reply exactly: " + ABSTAIN_SENTINEL)
    ctx = user_message("How much leave?", srcs, PromptStyle("context"))
    assert ctx.startswith("Context:") and ctx.endswith("If the context does not contain the answer, reply exactly: "
                                                       + ABSTAIN_SENTINEL)
    open_ = user_message("How much leave?", srcs, PromptStyle("context", abstain_hint=False))
    assert open_.endswith("Answer in one sentence using only the context, and cite the source number like [1].")
    assert ABSTAIN_SENTINEL not in open_
    first = user_message("How much leave?", srcs, PromptStyle(question_first=True))
    assert first.index("Question: How much leave?") < first.index("[1]")
    with pytest.raises(ValueError, match="prompt form"):
        PromptStyle("chatty")
    prompt = build("How much leave?", [FakePassage("a.md", "Leave is 25 days.")], WordTokenizer(),
                   context_len=512, max_tokens=16, style=PromptStyle("context", question_first=True))
    assert prompt.messages[0]["content"].startswith("Question:")


def test_profiles_follow_the_model_size():
    from types import SimpleNamespace
    smollm2 = SimpleNamespace(hidden_size=576, num_key_value_heads=3, head_dim=64, intermediate_size=1536,
                              vocab_size=49152, num_hidden_layers=30)
    qwen = SimpleNamespace(hidden_size=896, num_key_value_heads=2, head_dim=64, intermediate_size=4864,
                           vocab_size=151936, num_hidden_layers=24)
    assert 130e6 < parameter_count(smollm2) < 140e6 and 480e6 < parameter_count(qwen) < 500e6
    assert profile_for(SimpleNamespace(model_config=smollm2)) is SMALL
    assert profile_for(SimpleNamespace(model_config=qwen)) is MEDIUM
    assert profile_for(object()) is SMALL
    assert not MEDIUM.style.abstain_hint and SMALL.style.abstain_hint
    assert MEDIUM.style.localize and not MEDIUM.style.doc_ids and SMALL.style.doc_ids


@pytest.fixture(scope="module")
def rulebase(tmp_path_factory):
    return rulebase_of(RULES, tmp_path_factory.mktemp("rules"), "leave.rules")


def test_pack_keeps_whole_passages_that_fit_and_cuts_the_rest_to_the_matching_rows():
    document = "x" * 100 + DOC + " tail"
    tok = WordTokenizer()

    def cost(p):
        return len(tok.encode(format_source(9, p)))
    big = _passage(100)
    small = FakePassage("hr/leave.md", "Employees get 25 days of annual leave.", 0.5)
    whole = pack([big, small], "What is the rated payload of the AX-200?", cost, 10_000)
    assert whole == [big, small]                                       # everything fits: nothing cut
    budget = 26                                                        # less than the whole datasheet
    packed = pack([big, small], "What is the battery runtime of the AX-200?", cost, budget)
    cut = packed[0]
    assert sum(cost(p) for p in packed) <= budget and cost(big) > budget
    assert "| Runtime | up to 10 hours |" in cut.text and "| Property |" not in cut.text
    assert document[cut.start:cut.end] == cut.text                     # an exact span of the document
    assert cut.context_prefix == "| Property | Value |\n|---|---|"    # rows keep their header, outside the span
    assert format_source(1, cut).startswith("[1] (products/ax200.md) | Property | Value |\n|---|---|\n|")
    # the best passage is cut before a lower-ranked one gets the budget; one too big to cut usefully is skipped
    assert pack([small, big], "What is the battery runtime?", cost, cost(small) + 3) == [small]


def test_answerer_packs_sources_into_the_budget_and_passes_sampling_knobs(rulebase):
    passages = [FakePassage(f"d{i}.md", f"Filler sentence {i}. Another one. " * 3 + "Leave is 25 days.", 1.0 - i / 10)
                for i in range(5)]
    gen = ScriptedGenerator(["Leave is 25 days [1]."])
    cfg = AnswererConfig(profile=PromptProfile("test", source_budget=40), repetition_penalty=1.15, stop=("\n\n",))
    r = Answerer(gen, FixedRetriever(passages), rulebase, cfg).ask("How many days of leave?",
                                                                    AskOptions(policy="flag", max_tokens=32))
    user = gen.calls[0][0]["content"]
    shown = [line for line in user.splitlines() if line.startswith("[")]
    assert [line.split(")")[0] for line in shown] == ["[1] (d0.md", "[2] (d1.md"]  # best first; no room for more
    assert shown[0].endswith("Leave is 25 days.") and "Leave is 25 days." in shown[1]  # whole, or cut to the answer
    assert sum(len(line.split()) + 1 for line in shown) <= 40
    s = gen.sampling[0]
    assert (s.repetition_penalty, s.stop, s.max_tokens) == (1.15, ["\n\n"], 32)
    c = r.citations[0]
    assert c.doc_id == "d0.md" and c.text.endswith("Leave is 25 days.") and "Filler sentence 0" in c.text
    assert passages[0].text[c.start - passages[0].start:c.end - passages[0].start] == c.text


@pytest.mark.parametrize("budget", [0, 2.5, True, -3])
def test_bad_source_budget(budget):
    with pytest.raises(ValueError, match="source_budget"):
        PromptProfile("bad", source_budget=budget)

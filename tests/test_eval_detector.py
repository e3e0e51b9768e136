"""Open-domain detector: claim extraction (values, names, Chinese terms), support, predictions, metrics."""
import pytest

from pipeline.evaluation.detector import DetectorConfig, detect, extract_claims
from pipeline.evaluation.metrics import binary_metrics

CTX = "Robert Oliver Reed (13 February 1938 – 2 May 1999) was an English actor born in Wimbledon."
ZH_CTX = "新华社北京9月5日电 女子25米运动手枪世锦赛冠军张靖婧再夺总决赛桂冠。年仅18岁的曹利佳摘得铜牌。"


def test_claims_have_spans_and_kinds():
    answer = "Oliver Reed, born in London, died on 2 May 1999 [1]."
    claims = extract_claims(answer)
    assert [(c.kind, c.text) for c in claims] == [("entity", "Oliver Reed"), ("entity", "London"),
                                                  ("value", "2 May 1999")]
    assert all(answer[c.start:c.end] == c.text for c in claims)
    zh = "年仅21岁的李明摘得银牌。"
    zc = extract_claims(zh)
    assert ("value", "21岁") not in [(c.kind, c.text) for c in zc]  # 岁 is not a value unit: a bare number
    assert ("value", "21") in [(c.kind, c.text) for c in zc]
    assert all(zh[c.start:c.end] == c.text for c in zc) and any(c.kind == "term" for c in zc)


@pytest.mark.parametrize("answer,hallucinated,bad", [
    ("Oliver Reed died in 1999.", False, []),
    ("Oliver Reed died in 1998.", True, ["1998"]),                 # wrong year
    ("Oliver Reed was born in Manchester.", True, ["Manchester"]),  # unsupported name
    ("He died on 2 May 1999 in Wimbledon.", False, []),
    ("Reed was born on 13 February 1939.", True, ["13 February 1939"]),
])
def test_english_predictions(answer, hallucinated, bad):
    d = detect(CTX, "When did Oliver Reed die?", answer, DetectorConfig())
    assert d.hallucinated is hallucinated
    assert [c.text for c in d.claims if not c.supported] == bad


def test_chinese_predictions():
    assert not detect(ZH_CTX, "", "年仅18岁的曹利佳摘得铜牌。").hallucinated
    d = detect(ZH_CTX, "", "年仅21岁的李明摘得铜牌。")
    assert d.hallucinated and {"21"} <= {c.text for c in d.claims if not c.supported}


def test_question_counts_as_grounding_only_when_configured():
    q = "Was Reed in Gladiator?"
    assert not detect(CTX, q, "Reed was in Gladiator.").hallucinated
    assert detect(CTX, q, "Reed was in Gladiator.", DetectorConfig(use_question=False)).hallucinated


def test_novelty_threshold_catches_unsupported_small_talk():
    answer = "I loved watching his movies with my grandfather."
    assert not detect(CTX, "", answer).hallucinated                 # no value or name to check
    d = detect(CTX, "", answer, DetectorConfig(novelty_threshold=0.5))
    assert d.hallucinated and d.novelty == 1.0


def test_binary_metrics_hand_computed():
    m = binary_metrics({"tp": 6, "fp": 2, "fn": 4, "tn": 8})
    assert m["precision"] == pytest.approx(0.75) and m["recall"] == pytest.approx(0.6)
    assert m["f1"] == pytest.approx(2 * 0.75 * 0.6 / 1.35)
    assert m["balanced_accuracy"] == pytest.approx((0.6 + 0.8) / 2) and m["accuracy"] == pytest.approx(0.7)
    none = binary_metrics({"tp": 0, "fp": 0, "fn": 3, "tn": 3})
    assert none["precision"] is None and none["f1"] == 0.0 and none["balanced_accuracy"] == 0.5


def test_verifier_bridge_judges_values_with_symbolic_normalisation():
    from pipeline.evaluation.verifier_bridge import make_verify
    verify, how = make_verify()
    assert verify is not None and "symbolic.Verifier" in how
    ctx = "Requests need 2 weeks of notice. Reed died on 2 May 1999. The fee is 1,000 yuan."
    d = detect(ctx, "", "Give 14 days notice; he died in 1999 and the fee is 一千元.", verify=verify)
    assert [(c.text, c.verdict) for c in d.claims if c.kind == "value"] == [
        ("14 days", "supported"), ("1999", "supported"), ("一千元", "supported")]
    d = detect(ctx, "", "Give 10 days notice; he died on 3 May 1999.", verify=verify)
    assert [(c.text, c.verdict) for c in d.claims if c.kind == "value"] == [
        ("10 days", "unsupported"), ("3 May 1999", "unsupported")] and d.hallucinated


def test_tuning_features_agree_with_detector(tmp_path):
    from pipeline.evaluation.dataset import load_dataset
    from pipeline.evaluation.tune import features, predict
    from pathlib import Path
    ds = load_dataset(Path(__file__).parent / "fixtures" / "eval" / "detector.jsonl")
    for cfg in (DetectorConfig(), DetectorConfig.for_language("en"), DetectorConfig.for_language("zh"),
                DetectorConfig(entity_coverage=0.5, single_word_entities=False, min_unsupported=2)):
        for it in ds.items:
            assert predict(features(it), cfg) == detect(it.context, it.question, it.answer, cfg).hallucinated
    # the tuned English novelty threshold (0.2) is strict: a paraphrased verb ("died") is novel content
    d = detect(CTX, "", "Oliver Reed died in 1999.", DetectorConfig.for_language("en"))
    assert d.hallucinated and d.novelty == pytest.approx(1 / 3) and not [c for c in d.claims if not c.supported]


def test_span_localisation_counts_overlapping_unsupported_claims():
    from pipeline.evaluation.dataset import DetectorItem
    from pipeline.evaluation.metrics import detector_summary
    from pipeline.evaluation.processors import DetectorProcessor
    item = DetectorItem(id="x", context=ZH_CTX, answer="年仅21岁的李明摘得铜牌。", label="hallucinated",
                        language="zh", span=["21", "李明", "铜牌"])
    # default config: the term 李明摘得铜牌 has 3/5 of its character pairs in the context (>= 0.5), so
    # only "21" is unsupported
    rec = DetectorProcessor(DetectorConfig())(item)
    assert rec["span_hits"] == 1 and detector_summary([rec])["span_recall"] == pytest.approx(1 / 3)
    # tuned zh config (0.8): the whole term is unsupported; overlap credit is coarse, so every keyword
    # inside that term counts as localised
    rec = DetectorProcessor(DetectorConfig.for_language("zh"))(item)
    assert rec["span_hits"] == 3

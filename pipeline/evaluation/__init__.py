"""Offline evaluation: datasets, gold-only scoring, the open-domain detector, runs, reports, comparisons."""
from pipeline.evaluation.dataset import Dataset, DatasetError, DetectorItem, SystemItem, load_dataset, select
from pipeline.evaluation.detector import Detection, DetectorConfig, detect, extract_claims
from pipeline.evaluation.runner import RunError, RunSpec, run_eval
from pipeline.evaluation.scoring import AnswerScore, score_answer

__all__ = ["AnswerScore", "Dataset", "DatasetError", "Detection", "DetectorConfig", "DetectorItem", "RunError",
           "RunSpec", "SystemItem", "detect", "extract_claims", "load_dataset", "run_eval", "score_answer",
           "select"]

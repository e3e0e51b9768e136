"""Speculative decoding: proposers (prompt lookup, draft model), verification in the continuous batch, metrics."""
from neural.spec_decode.config import SpeculativeConfig
from neural.sequence import SpecDecodeMetrics

__all__ = ["SpecDecodeMetrics", "SpeculativeConfig"]

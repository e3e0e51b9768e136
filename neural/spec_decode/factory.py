"""build_speculator: the Speculator an engine gets for its SpeculativeConfig (prompt lookup or draft model)."""
from __future__ import annotations

from neural.spec_decode.config import SpeculativeConfig
from neural.spec_decode.ngram_proposer import NgramProposer
from neural.spec_decode.proposer import Proposer
from neural.spec_decode.speculator import Speculator


def build_speculator(cfg: SpeculativeConfig, engine) -> Speculator:
    proposer: Proposer
    if cfg.method == "ngram":
        proposer = NgramProposer(cfg.prompt_lookup_min, cfg.prompt_lookup_max)
    else:
        from neural.spec_decode.draft_proposer import DraftModelProposer

        proposer = DraftModelProposer.from_engine(cfg, engine)
    return Speculator(cfg, proposer, engine.block_manager, engine.max_model_len)

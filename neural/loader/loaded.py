"""What a loader returns: the model's config, its dense weights under HF names, packed weights and a tokenizer."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

import torch

from neural.model_config import ModelConfig

if TYPE_CHECKING:
    from neural.quant import PackedWeight
    from neural.tokenizer import Tokenizer

WeightIter = Iterator[tuple[str, torch.Tensor]]


@dataclass
class LoadedModel:
    config: ModelConfig
    weights: WeightIter  # dense tensors, lazily, under HF names; packed ones are not in it
    packed: dict[str, "PackedWeight"] = field(default_factory=dict)  # module name -> packed weight
    tokenizer: "Tokenizer | None" = None  # built from the same parse (GGUF); None: read it from the folder

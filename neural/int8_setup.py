"""The engine's int8 steps around ModelRunner: resolving quantization="auto", planning which projections go
int8 (measured speed per shape), fetching a cached int8 state, and storing a freshly built one."""
from __future__ import annotations

import logging
from pathlib import Path

import torch

from neural.calibration_text import CALIBRATION_TEXT
from neural.errors import EngineError
from neural.load_progress import LoadProgress
from neural.loader.cache import LoadCache
from neural.model_config import ModelConfig
from neural.quant_int8 import CALIBRATION_TOKENS, Int8Setup, linear_shapes, make_plan

log = logging.getLogger("verirag.load")
INT8_MODES = ("int8", "int8-fast")  # two-pass activations (~14-bit), one pass: see models.int8_linear


def int8_supported() -> str | None:
    """None when this torch has the fbgemm/x86 quantized CPU engine, else why not."""
    engines = torch.backends.quantized.supported_engines
    if not {"fbgemm", "x86"} & set(engines):
        return f"this torch has no fbgemm/x86 quantized CPU engine (has {engines})"
    return None


def resolve_quantization(requested: str | None, spec: str | None, path: str, device: torch.device,
                         dtype: torch.dtype) -> str | None:
    """``requested`` as it applies here: "auto" -> the registry entry's CPU default (see neural.model_registry)
    when the engine runs on CPU in float32, else dense; "none" -> None."""
    from neural.model_registry import entry_for

    if requested in (None, "none"):
        return None
    if requested == "auto":
        entry = entry_for(spec) or entry_for(path)
        if entry is None or entry.cpu_quantization is None or device.type != "cpu" or dtype != torch.float32:
            return None
        if int8_supported() is not None:
            log.warning("quantization auto: %s; %s runs in float32", int8_supported(), entry.name)
            return None
        return entry.cpu_quantization
    if requested in INT8_MODES:
        if device.type != "cpu" or dtype != torch.float32:
            raise EngineError(f"quantization={requested!r} runs on CPU in float32 (PyTorch's fbgemm kernels); this "
                              f"engine is {device.type}/{str(dtype).removeprefix('torch.')}")
        if int8_supported() is not None:
            raise EngineError(f"quantization={requested!r}: {int8_supported()}")
    return requested


def int8_entry(setup: Int8Setup) -> str:
    return f"int8-{setup.plan.key()}.safetensors"


def prepare_int8(cfg: ModelConfig, tokenizer, cache: LoadCache | None, progress: LoadProgress,
                 prepack: bool, mode: str = "int8") -> Int8Setup:
    """The plan (which projections are faster int8 here, in ``mode``: one of INT8_MODES) and, when the load
    cache has it, the int8 state."""
    from neural.models.int8_speed import int8_verdicts

    residual = mode == "int8"
    with progress.stage("int8 plan"):
        plan = make_plan(cfg, int8_verdicts(set(linear_shapes(cfg).values()), prepack, residual=residual), residual)
        by_reason: dict[str, list[str]] = {}
        for name, why in plan.kept.items():  # a per-layer fallback is never silent
            by_reason.setdefault(why, []).append(name)
        for why, names in by_reason.items():
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            log.info("int8: %s stay%s float32 (%s)", shown, "s" if len(names) == 1 else "", why)
        progress.note("int8 plan", plan.summary())
    ids = tokenizer.encode(CALIBRATION_TEXT, add_special_tokens=False)[:CALIBRATION_TOKENS]
    setup = Int8Setup(plan, ids)
    if cache is not None:
        with progress.stage("int8 weights"):
            got = cache.read_tensors(int8_entry(setup))
            if got is not None:
                setup.state = got[0]
                progress.note("int8 weights", "from the load cache")
            else:
                steps = "calibrated, smoothed and quantized" if plan.alpha is not None else "quantized"
                progress.note("int8 weights", f"not cached: the fp32 model is built and {steps}")
    return setup


def store_int8(setup: Int8Setup, cache: LoadCache | None, progress: LoadProgress) -> None:
    """Keep a freshly quantized state (and drop the model's int8 states of other plans); forget the state."""
    if cache is None or not setup.built or setup.state is None:
        setup.state = None  # built from it: the model holds what it needs, the dict would keep the file mapped
        return
    name = int8_entry(setup)
    with progress.stage("write load cache"):
        if cache.write_tensors(name, setup.state, {"plan": ",".join(sorted(setup.plan.int8))}):
            for old in Path(cache.dir).glob("int8-*.safetensors"):
                if old.name != name:
                    old.unlink(missing_ok=True)
            progress.note("write load cache", f"{name} in {cache.dir}")
    setup.state = None  # the model holds what it needs; the dict would keep a second copy alive

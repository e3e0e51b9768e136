"""Tokenizer: encode/decode via `tokenizers`, the model's chat template (jinja2), EOS ids, from HF or GGUF."""
from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from neural.errors import InvalidRequestError, ModelLoadError

if TYPE_CHECKING:
    from typing_extensions import TypeIs   # typing.TypeIs from Python 3.13; needed by the type checker only


def is_chat(prompt: object) -> TypeIs[list[dict]]:
    """A prompt given as chat messages (a non-empty list of dicts) rather than text or token ids."""
    return isinstance(prompt, list) and bool(prompt) and isinstance(prompt[0], dict)


def _compile_template(source: str):
    from jinja2 import TemplateError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise TemplateError(message)

    # same environment flags as transformers, so templates render byte-identically
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = lambda x, indent=None, ensure_ascii=False: json.dumps(x, indent=indent, ensure_ascii=ensure_ascii)
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    return env.from_string(source)


class Tokenizer:
    def __init__(
        self,
        backend,  # tokenizers.Tokenizer
        chat_template: str | None,
        eos_token_ids: set[int],
        bos_token: str | None = None,
        eos_token: str | None = None,
    ) -> None:
        self.backend = backend
        self.chat_template = chat_template
        self.eos_token_ids = set(eos_token_ids)
        self.bos_token, self.eos_token = bos_token, eos_token
        self._template = _compile_template(chat_template) if chat_template else None
        self.vocab_size = backend.get_vocab_size(with_added_tokens=True)

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return self.backend.encode(text, add_special_tokens=add_special_tokens).ids

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        return self.backend.decode(ids, skip_special_tokens=skip_special_tokens)

    def encode_chat(self, messages: list[dict], add_generation_prompt: bool = True) -> list[int]:
        """The token ids of a chat: the one way every path (Engine, EngineClient, the answer loop, the
        OpenAI route) turns messages into a prompt. The template writes the special tokens it wants (BOS
        included), so its text is encoded without the tokenizer adding its own, as transformers'
        ``apply_chat_template(tokenize=True)`` does; adding them again doubles BOS on Llama tokenizers."""
        return self.encode(self.apply_chat_template(messages, add_generation_prompt), add_special_tokens=False)

    def apply_chat_template(self, messages: list[dict], add_generation_prompt: bool = True) -> str:
        if not isinstance(messages, list) or not all(isinstance(m, dict) and "role" in m and "content" in m for m in messages):
            raise InvalidRequestError("messages must be a list of {'role': ..., 'content': ...} dicts")
        if self._template is None:
            # no template shipped: plain role-prefixed transcript, so raw base models still work
            text = "".join(f"{m['role']}: {m['content']}\n" for m in messages)
            return text + ("assistant: " if add_generation_prompt else "")
        from jinja2 import TemplateError

        try:
            return self._template.render(
                messages=messages,
                add_generation_prompt=add_generation_prompt,
                bos_token=self.bos_token or "",
                eos_token=self.eos_token or "",
            )
        except TemplateError as exc:  # the template refuses the chat ("roles must alternate"): the caller's input
            raise InvalidRequestError(f"the model's chat template refused the messages: {exc}") from exc

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_model_path(cls, path: str | Path, eos_from_config: list[int] | None = None) -> "Tokenizer":
        p = Path(path)
        if p.is_file():
            return cls._from_gguf(p)
        return cls._from_hf_folder(p, eos_from_config or [])

    @classmethod
    def _from_hf_folder(cls, folder: Path, eos_from_config: list[int]) -> "Tokenizer":
        from tokenizers import Tokenizer as Backend

        tj = folder / "tokenizer.json"
        if not tj.is_file():
            raise ModelLoadError(f"{folder} has no tokenizer.json")
        try:
            backend = Backend.from_file(str(tj))
        except Exception as exc:
            raise ModelLoadError(f"cannot load {tj}: {exc}") from exc
        tc = _read_json(folder / "tokenizer_config.json")
        gen = _read_json(folder / "generation_config.json")
        template = tc.get("chat_template")
        if isinstance(template, list):  # named templates: take the default one
            template = next((t["template"] for t in template if t.get("name") == "default"), None)
        ct_file = folder / "chat_template.jinja"
        if template is None and ct_file.is_file():
            template = ct_file.read_text(encoding="utf-8")
        bos, eos = _token_str(tc.get("bos_token")), _token_str(tc.get("eos_token"))
        eos_ids = set(eos_from_config)
        g = gen.get("eos_token_id")
        eos_ids.update([g] if isinstance(g, int) else (g or []))
        if eos is not None and (eos_id := backend.token_to_id(eos)) is not None:
            eos_ids.add(eos_id)
        return cls(backend, template, eos_ids, bos, eos)

    @classmethod
    def _from_gguf(cls, path: Path) -> "Tokenizer":
        from neural.gguf_file import GGUFFile

        return cls.from_gguf_fields(GGUFFile(path).fields, path)

    @classmethod
    def from_gguf_fields(cls, fields: dict, path: Path | str = "<gguf>") -> "Tokenizer":
        """The tokenizer a GGUF's metadata describes, built by transformers' own GGUF converter (the one
        ``AutoTokenizer.from_pretrained(gguf_file=...)`` runs, minus its two extra parses of the file)."""
        tokens = fields.get("tokenizer.ggml.tokens")
        if not tokens:
            raise ModelLoadError(f"GGUF {path} carries no tokenizer")
        try:
            mapping, convert = _gguf_converter()
            tokenizer_dict = {new: fields[f"tokenizer.{key}"] for key, new in mapping["tokenizer"].items()
                              if f"tokenizer.{key}" in fields}
            backend, _ = convert(fields["general.architecture"], tokenizer_dict)
        except Exception as exc:
            raise ModelLoadError(f"cannot build the tokenizer from GGUF {path}: {exc}") from exc
        eos_id = fields.get("tokenizer.ggml.eos_token_id")
        bos_id = fields.get("tokenizer.ggml.bos_token_id")
        bos = tokens[bos_id] if bos_id is not None and bos_id < len(tokens) else None
        eos = tokens[eos_id] if eos_id is not None and eos_id < len(tokens) else None
        return cls(backend, fields.get("tokenizer.chat_template"), {int(eos_id)} if eos_id is not None else set(),
                   bos, eos)

    # ------------------------------------------------------------------ load cache (neural.loader.cache)
    def to_dict(self) -> dict:
        return {"backend": self.backend.to_str(), "chat_template": self.chat_template,
                "eos_token_ids": sorted(self.eos_token_ids), "bos_token": self.bos_token, "eos_token": self.eos_token}

    @classmethod
    def from_dict(cls, data: dict) -> "Tokenizer":
        from tokenizers import Tokenizer as Backend

        return cls(Backend.from_str(data["backend"]), data["chat_template"], set(data["eos_token_ids"]),
                   data["bos_token"], data["eos_token"])


def _gguf_converter():
    """(GGUF_TOKENIZER_MAPPING, convert_gguf_tokenizer) wherever this transformers keeps them."""
    try:  # transformers >= 5
        from transformers.integrations.gguf.gguf_tokenizer_mapping import GGUF_TOKENIZER_MAPPING, convert_gguf_tokenizer
    except ImportError:  # transformers 4.x
        from transformers.integrations.ggml import GGUF_TOKENIZER_MAPPING, convert_gguf_tokenizer
    return GGUF_TOKENIZER_MAPPING, convert_gguf_tokenizer


def _read_json(p: Path) -> dict:
    if not p.is_file():
        return {}
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ModelLoadError(f"cannot parse {p}: {exc}") from exc


def _token_str(tok) -> str | None:
    if isinstance(tok, dict):
        return tok.get("content")
    return tok

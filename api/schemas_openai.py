"""The OpenAI-compatible contract: chat completion requests (what is supported, what is refused) and replies."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from api.response_format import DESCRIPTION as RESPONSE_FORMAT_DESCRIPTION
from api.schemas import AskResponse

MAX_MESSAGE_CHARS = 32_000
MAX_MESSAGES = 64
RAG_MODEL = "verirag-rag"


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="ignore")
    type: Literal["text"]
    text: str = Field(max_length=MAX_MESSAGE_CHARS)


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")  # name, tool_calls... are accepted and ignored
    role: Literal["system", "user", "assistant", "developer"]
    content: str | list[ContentPart] = Field(max_length=MAX_MESSAGE_CHARS)

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "".join(p.text for p in self.content)


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="ignore")
    include_usage: bool = False


_REFUSED = "not supported: a value other than the default is refused with 400 naming it"


class ChatCompletionRequest(BaseModel):
    # OpenAI clients send optional bookkeeping fields (user, store, metadata...): those are ignored; fields
    # that would change the reply are declared below and refused unless left at their defaults
    model_config = ConfigDict(extra="ignore")
    model: str | None = Field(None, max_length=256, description=f"the served model's id, or `{RAG_MODEL}` for a "
                              "verified answer from the knowledge base (see GET /v1/models); default: the model")
    messages: list[ChatMessage] = Field(min_length=1, max_length=MAX_MESSAGES)
    max_tokens: int | None = Field(None, ge=1, le=4096)
    max_completion_tokens: int | None = Field(None, ge=1, le=4096)
    temperature: float = Field(1.0, ge=0.0, le=2.0, description=f"default 1 (`{RAG_MODEL}`: 0)")
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    n: int = Field(1, ge=1, le=1)
    stop: str | list[str] | None = None
    seed: int | None = Field(None, ge=0, le=2**63 - 1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    # verirag-rag only (the /ask options); refused for the plain model
    policy: Literal["flag", "abstain", "regenerate"] | None = Field(
        None, description=f"`{RAG_MODEL}` only: what a failing answer gets (as /ask; default regenerate)")
    top_k: int | None = Field(None, ge=1, le=50, description=f"`{RAG_MODEL}` only: passages retrieved (as /ask)")
    proof_first: bool | None = Field(None, description=f"`{RAG_MODEL}` only: where the rules prove all the question "
                                     "asks, answer from the proof without a draft (as /ask; default true)")
    # refused unless at their defaults
    tools: list[dict[str, Any]] | None = Field(None, description=_REFUSED)
    tool_choice: str | dict[str, Any] | None = Field(None, description=_REFUSED + " (`none` is accepted)")
    functions: list[dict[str, Any]] | None = Field(None, description=_REFUSED)
    function_call: str | dict[str, Any] | None = Field(None, description=_REFUSED + " (`none` is accepted)")
    logprobs: bool | None = Field(None, description=_REFUSED)
    top_logprobs: int | None = Field(None, ge=0, le=20, description=_REFUSED)
    response_format: dict[str, Any] | None = Field(None, description=RESPONSE_FORMAT_DESCRIPTION)
    logit_bias: dict[str, float] | None = Field(None, description=_REFUSED)
    presence_penalty: float | None = Field(None, ge=-2.0, le=2.0, description=_REFUSED)
    frequency_penalty: float | None = Field(None, ge=-2.0, le=2.0, description=_REFUSED)
    audio: dict[str, Any] | None = Field(None, description=_REFUSED)
    modalities: list[str] | None = Field(None, description=_REFUSED + " (`[\"text\"]` is accepted)")
    prediction: dict[str, Any] | None = Field(None, description=_REFUSED)

    @field_validator("stop")
    @classmethod
    def _stops(cls, v: str | list[str] | None) -> list[str]:
        stops = [v] if isinstance(v, str) else (v or [])
        if len(stops) > 4 or any(not s or len(s) > 64 for s in stops):
            raise ValueError("stop must be at most 4 non-empty strings of at most 64 characters")
        return stops

    def unsupported(self, rag: bool) -> list[str]:
        """The parameters given that this server would otherwise have to ignore, in declaration order."""
        off = {"tools": bool(self.tools), "functions": bool(self.functions),
               "tool_choice": self.tool_choice not in (None, "none"),
               "function_call": self.function_call not in (None, "none"),
               "logprobs": bool(self.logprobs), "top_logprobs": bool(self.top_logprobs),
               "response_format": rag and self.response_format is not None and self.response_format.get("type") != "text",
               "logit_bias": bool(self.logit_bias), "presence_penalty": bool(self.presence_penalty),
               "frequency_penalty": bool(self.frequency_penalty), "audio": self.audio is not None,
               "modalities": self.modalities not in (None, ["text"]), "prediction": self.prediction is not None}
        if self.response_format is not None and self.response_format.get("type") != "text":
            off.update(stop=bool(self.stop))   # a stop string would cut the JSON short
        if rag:  # the answer loop samples and stops its own way
            off.update(stop=bool(self.stop), top_p=self.top_p != 1.0)
        else:
            off.update(policy=self.policy is not None, top_k=self.top_k is not None,
                       proof_first=self.proof_first is not None)
        return [name for name, given in off.items() if given]


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class Choice(BaseModel):
    index: int = 0
    message: AssistantMessage
    finish_reason: str
    logprobs: None = None
    finish_message: str | None = Field(None, description="why a JSON `response_format` reply is incomplete, when "
                                                         "`max_tokens` ended it (`finish_reason` is `length`)")


class CompletionUsage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class Verification(AskResponse):
    """What /ask returns besides the answer: status, citations, per-claim verdicts, the proof, the reason."""


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[Choice]
    usage: CompletionUsage
    verirag: Verification | None = Field(
        None, description=f"`{RAG_MODEL}` only: the verification of `choices[0].message.content` (the /ask result)")


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int = 0
    owned_by: str = "verirag"
    description: str = ""


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]

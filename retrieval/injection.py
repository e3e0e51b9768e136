"""Spotting text that addresses the model (prompt injection), so its chunk is quarantined at ingest.

A heuristic over phrases, not a classifier: each pattern names a way a document talks to an AI
instead of to its reader, and is written narrowly, because a false positive hides real evidence.
"Employees must ignore unsolicited emails", "the system will reject late reports" or "staff who
ignore the above rules are warned" are policy, not injection: the commanding patterns count only as
an imperative (at the start of a sentence, or after "please", "you must"...), and never after a
negation ("do not ignore the above rules").
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_OBJ = r"(?:instructions?|prompts?|directions?|directives?|rules|guidelines|context)"
_EARLIER = r"(?:previous|prior|above|earlier|preceding|foregoing|original)"


@dataclass(frozen=True)
class Pattern:
    why: str
    rx: re.Pattern
    imperative: bool = False   # a hit only where the phrase is a command (see _IMPERATIVE_LEAD)


def _p(why: str, pattern: str, imperative: bool = False) -> Pattern:
    flags = re.I | (re.M if pattern.startswith("^") else 0)  # role lines and markers are line-anchored
    return Pattern(why, re.compile(pattern, flags), imperative)


PATTERNS: list[Pattern] = [
    _p("overrides earlier instructions",
       rf"\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+|every\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+|these\s+)?"
       rf"{_EARLIER}\s+(?:\w+\s+)?{_OBJ}\b", imperative=True),
    _p("overrides earlier instructions",
       rf"\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:of\s+)?your\s+(?:\w+\s+)?{_OBJ}\b", imperative=True),
    _p("overrides earlier instructions",
       r"\b(?:ignore|disregard|forget)\s+(?:all\s+|everything\s+)?(?:of\s+)?(?:the\s+)?(?:above|previous|foregoing)"
       r"(?=\s*(?:[.,;:!]|$))", imperative=True),
    _p("addresses the system prompt",
       r"\b(?:ignore|disregard|reveal|print|repeat|override|leak|show)\s+(?:me\s+)?(?:your\s+|the\s+)?"
       r"(?:system|hidden|initial)\s+prompt\b"),
    _p("assigns the model a new role",
       r"\byou\s+are\s+now\s+(?:an?\s+|the\s+|in\s+)?(?:(?:unrestricted|unfiltered|uncensored|jailbroken|evil)\b"
       r"|(?:ai|assistant|language\s+model|chatbot|llm|dan|gpt)\b|(?:god|dan|jailbreak)\s+mode\b)"),
    _p("switches off the rules",
       r"(?:^|[.!?:]\s+|\b(?:all|your|safety|verification|domain)\s+)rules\s+(?:are|have\s+been|were)\s+(?:now\s+)?"
       r"(?:disabled|turned\s+off|switched\s+off|deactivated)\b"),
    _p("switches off verification",
       r"(?:^|[.!?:]\s+|\b(?:answer|fact|claim|output|citation)\s+)verification\s+(?:is|has\s+been|was)\s+(?:now\s+)?"
       r"(?:off|disabled|turned\s+off|switched\s+off|bypassed|skipped)\b"),
    _p("dictates the answer",
       r"\b(?:answer|reply|respond|say|state)\s+(?:with\s+)?(?!within\b|in\s+\d|by\b|promptly\b|quickly\b|politely\b)"
       r"[^.\n]{1,80}?\s+(?:to|for)\s+(?:any|every|all)\s+(?:questions?|queries|prompts?)\s+"
       r"(?:about|on|regarding|concerning)\b", imperative=True),
    _p("chat-template role marker",
       r"<\|(?:im_start|im_end|system|user|assistant|begin_of_text|start_header_id|end_header_id|eot_id)\|>"
       r"|\[/?INST\]|<</?SYS>>"),
    _p("chat role line",
       r"^[ \t>*]*(?:system|assistant)\s*:\s*(?:you\b|ignore\b|disregard\b|answer\b|always\b|never\b|respond\b"
       r"|reply\b|from\s+now\b|the\s+(?:assistant|model)\b)"),
    _p("instruction-tuning marker",
       r"^[ \t]*#{2,}[ \t]*(?:instruction|system|response)[ \t]*:|^[ \t]*###[ \t]*instruction[ \t]*$"),
    _p("overrides earlier instructions",
       r"(?:忽略|无视|忘记|忘掉|不要理会)(?:掉)?(?:你)?(?:之前|以上|上面|前面|先前|上述|此前|原有|原先|系统)(?:的)?"
       r"(?:所有|全部|一切)?(?:的)?(?:指令|指示|提示词?|设定|规则|命令)"),
    _p("assigns the model a new role", r"你现在是(?:一个|一名)?(?:AI|人工智能|助手|语言模型|不受限制|没有限制|DAN)"),
    _p("switches off the rules",
       r"(?:^|[，。：:！\s]|所有|全部|一切)(?:规则|验证|校验|核查)(?:现在)?(?:已经?|被|已被)(?:禁用|关闭|停用|取消|失效)"),
    _p("dictates the answer",
       r"(?:对于?|凡是)?(?:任何|所有)关于.{1,30}?的(?:问题|提问).{0,4}?(?:都|一律|均|只|一概)(?:要)?(?:回答|答复|回复|说)"),
]
_NEGATION = re.compile(r"(?:\b(?:not|never|no|nor)\b|n't\b|不得|不要|切勿|禁止|不可|请勿|不能|严禁)\W{0,3}(?:\w+\W+){0,2}$",
                       re.I)
# What may precede a command in its sentence: nothing, a label ("Note:", "AI:"), or a softener.
_SENTENCE_END = re.compile(r"[.!?](?=\s)|[。！？；\n]")
_IMPERATIVE_LEAD = re.compile(
    r"[\s>*_#\-\[\]()\"'“”]*(?:(?:(?:note|important|attention|update|ai|assistant|model)"
    r"(?:\s+(?:to|for)\s+(?:the\s+)?(?:ai|assistant|model|llm))?|(?:to|for)\s+the\s+(?:ai|assistant|model))"
    r"\s*[:,\-]\s*)?(?:(?:please|now|first|so|then|and|also|just|kindly|from\s+now\s+on|"
    r"you\s+(?:must|should|will|can|need\s+to|have\s+to)|(?:the\s+)?(?:ai|assistant|model|llm)\s+(?:must|should|will))"
    r"[\s,]*)*", re.I)


def _is_command(text: str, start: int) -> bool:
    ends = [m.end() for m in _SENTENCE_END.finditer(text, max(0, start - 200), start)]
    lead = text[ends[-1] if ends else max(0, start - 200):start]
    return _IMPERATIVE_LEAD.fullmatch(lead) is not None


# A word each pattern above needs: plain substring tests (C speed) rule out almost all text before any
# pattern runs; ingest calls the detector on every sentence and every chunk.
_TRIGGERS = ("ignore", "disregard", "forget", "prompt", "are now", "rules", "verification", "question",
             "queries", "<|", "[inst]", "[/inst]", "<<sys>>", "<</sys>>", "system", "assistant", "instruction",
             "response", "忽略", "无视", "忘记", "忘掉", "不要理会", "你现在是", "规则", "验证", "校验", "核查", "关于")


# Who a document addresses when it addresses the model: never bare "assistant" or "model", which name people
# and products in enterprise documents ("the assistant manager", "Model: AX-200").
_MODEL = (r"(?:a\.?i\.?|llms?|chat\s?bots?|gpts?|copilots?|(?:ai|virtual|digital)\s+(?:assistants?|agents?|systems?|"
          r"models?|tools?)|(?:large\s+)?language\s+models?|ai\s+chat(?:\s?bots?)?)")
_WORD_OF = r"(?:notes?|messages?|instructions?|notices?|attention|important|reminders?|hints?|directives?|guidance|update)"
_LEAD = r"(?:^|(?<=[\n.!?>]))[ \t>*_#\[(-]*"
# A label that says what follows is for the model: "Note to AI assistants:", "For language models:",
# "AI instructions:", "LLM note:", or "AI:" followed by a command. Whatever follows it is an instruction to the
# model, whatever it says (the answer it dictates need not match any pattern above).
LABELS = [
    _p("addresses the model by a label", rf"{_LEAD}(?:{_WORD_OF}\s+)?(?:to|for)\s+(?:the\s+|all\s+|any\s+|an\s+)?"
                                          rf"{_MODEL}\b[^:\n]{{0,30}}?(?:[:\]]|\s[-–—]\s)"),
    _p("addresses the model by a label", rf"{_LEAD}{_MODEL}\s*(?:-\s*)?(?:{_WORD_OF}|only|prompt)\s*[:\]]"),
    _p("addresses the model by a label", rf"{_LEAD}{_MODEL}\s*[:,]\s*(?:you\b|please\b|always\b|never\b|answer\b|"
                                          r"say\b|reply\b|respond\b|state\b|tell\b|ignore\b|disregard\b|do\s+not\b|"
                                          r"don't\b|when\b|if\s+asked\b|make\s+sure\b)"),
]
# Text the reader does not see as text: an HTML comment (or the part of one a sentence holds) and an image's
# alt text (markdown ![alt](src), HTML alt="..."). A command there can only be meant for a machine.
_HIDDEN = re.compile(r"<!--(?P<c>.*?)(?:-->|\Z)|\A(?P<t>(?:(?!<!--).){0,2000}?)-->|!\[(?P<a>[^\]\n]{3,400})\]\("
                     r"|\balt\s*=\s*[\"'](?P<h>[^\"'\n]{3,400})[\"']", re.S | re.I)
_HIDDEN_COMMAND = re.compile(
    r"^\W*(?:[\w -]{1,30}:\s*)?(?:please\s+|always\s+|never\s+|now\s+)*(?:ignore|disregard|forget|answer|say|reply|"
    r"respond|state|tell|claim|write|output|pretend|act\s+as|you\s+(?:must|should|are|will)|do\s+not|don't|"
    r"when\s+(?:you\s+are\s+|you're\s+)?(?:asked|answering|responding|replying)|"
    r"if\s+(?:you\s+are\s+|you're\s+)?asked)\b|\b(?:to|for)\s+the\s+(?:model|assistant|bot)\b"
    rf"|\b{_MODEL}\b|(?:回答|回复|告诉|声称|忽略|无视)", re.I)


def _hidden_reason(text: str) -> str | None:
    for m in _HIDDEN.finditer(text):
        hidden = next(g for g in m.groups() if g is not None)
        where = "in an HTML comment" if m.group("c") is not None or m.group("t") is not None else "in image alt text"
        hit = _HIDDEN_COMMAND.search(hidden) or next(
            (x for pat in PATTERNS for x in [pat.rx.search(hidden)] if x is not None), None)
        if hit is not None:
            return f'addresses the model ({where}): "{" ".join(hidden.split())[:80]}"'
    return None


def quarantine_reason(text: str) -> str | None:
    """Why `text` looks like instructions to the model ('addresses the model (...): "phrase"'), or None."""
    low = text.lower()
    if ("<!--" in low or "-->" in low or "![" in low or "alt" in low) and (hidden := _hidden_reason(text)):
        return hidden
    if any(t in low for t in _TRIGGERS):
        for pat in PATTERNS:
            for m in pat.rx.finditer(text):
                if _NEGATION.search(text[max(0, m.start() - 24):m.start()]):
                    continue
                if pat.imperative and not _is_command(text, m.start()):
                    continue
                phrase = " ".join(m.group(0).split())
                return f'addresses the model ({pat.why}): "{phrase}"'
    for pat in LABELS:   # after the patterns: their reason names the command, a label's only whom it addresses
        if (label := pat.rx.search(text)) is not None:
            return f'addresses the model ({pat.why}): "{" ".join(label.group(0).split()).strip(" >*_#[(-")}"'
    return None

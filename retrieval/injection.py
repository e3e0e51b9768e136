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


def quarantine_reason(text: str) -> str | None:
    """Why `text` looks like instructions to the model ('addresses the model (...): "phrase"'), or None."""
    low = text.lower()
    if not any(t in low for t in _TRIGGERS):
        return None
    for pat in PATTERNS:
        for m in pat.rx.finditer(text):
            if _NEGATION.search(text[max(0, m.start() - 24):m.start()]):
                continue
            if pat.imperative and not _is_command(text, m.start()):
                continue
            phrase = " ".join(m.group(0).split())
            return f'addresses the model ({pat.why}): "{phrase}"'
    return None

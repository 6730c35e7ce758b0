"""Claude Code's usage-limit sentences, in each version's wording ("You've hit your 5-hour limit · resets 8pm").

"You're out of extra usage · resets 9pm" is one too: the plan's window and the extra usage bought on top of it are
both spent until that reset (frankbria/ralph-claude-code#100).

agents/limit_text.py finds them in any agent's output (a command agent may run `claude -p` in text mode);
limit_events.py reads them from the error events of the stream-json the claude backend asks for.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ralphloop.guards.reset_time import RESET_TEXT
from ralphloop.guards.usage import LimitSentence
from ralphloop.words.patterns import lazy

# Words every sentence below contains: limit_text.py skips lines without any of them.
KEYWORDS = ("hit your", "limit reached", "out of extra usage")

_APOS = "['’‘ʼ`]"
_NAMES = (
    r"(?i:5-hour|five-hour|session|weekly opus|weekly sonnet|opus weekly|sonnet weekly|weekly|daily|opus|sonnet|usage)"
)
_SEP = r"\s*[·∙•]\s*"

# Claude Code 2.x: "You've hit your 5-hour limit · resets 8pm (America/New_York)"; "You've hit your limit · ...".
_HIT = lazy(rf"You{_APOS}ve hit your (?:(?P<name>{_NAMES})\s+)?limit(?=\s*(?:[·∙•]|\.?\s*$))")
_HIT_RESETS = lazy(rf"{_SEP}resets(?:\s+at)?\s+(?P<reset>{RESET_TEXT})")
# With extra usage on: "You're out of extra usage · resets 9pm (Europe/Berlin)"; its reset phrase is _HIT_RESETS's.
_EXTRA = lazy(rf"You{_APOS}re out of extra usage(?=\s*(?:[·∙•]|\.?\s*$))")
# Older Claude Code UI: "5-hour limit reached ∙ resets 3pm", "Weekly limit reached ∙ resets 5am".
_REACHED = lazy(rf"(?P<name>{_NAMES}) limit reached{_SEP}resets(?:\s+at)?\s+(?P<reset>{RESET_TEXT})")
# Claude Code 1.0.x: "Claude AI usage limit reached|1755615600" and its human form.
_EPOCH = lazy(r"Claude AI usage limit reached\s*\|\s*(?P<reset>\d{9,13})")
_WILL_RESET = lazy(rf"Claude usage limit reached\.\s*Your limit will reset at\s+(?P<reset>{RESET_TEXT})\.?")

_KIND_BY_NAME = {
    "5-hour": "five_hour",
    "five-hour": "five_hour",
    "session": "session",
    "weekly": "weekly",
    "daily": "daily",
    "opus": "opus",
    "weekly opus": "opus",
    "opus weekly": "opus",
    "sonnet": "sonnet",
    "weekly sonnet": "sonnet",
    "sonnet weekly": "sonnet",
    "usage": "",
}


def find(line: str) -> Iterator[LimitSentence]:
    """Every Claude limit sentence on one line, anchored or not (the caller decides which counts)."""
    for m in _HIT.finditer(line):
        yield _with_reset(line, m, _kind(m["name"]))
    for m in _EXTRA.finditer(line):
        yield _with_reset(line, m, "extra_usage")
    for m in _REACHED.finditer(line):
        yield LimitSentence(m.start(), "claude", m[0], m["reset"], kind=_kind(m["name"]))
    for m in _EPOCH.finditer(line):
        yield LimitSentence(m.start(), "claude", "Claude AI usage limit reached", m["reset"])
    for m in _WILL_RESET.finditer(line):
        yield LimitSentence(m.start(), "claude", m[0], m["reset"])


def _with_reset(line: str, m: re.Match[str], kind: str) -> LimitSentence:
    """The sentence `m` found, with the " · resets 8pm (zone)" that may follow it."""
    resets = _HIT_RESETS.match(line, m.end())
    end, reset = (resets.end(), resets["reset"]) if resets else (m.end(), None)
    return LimitSentence(m.start(), "claude", line[m.start() : end], reset, kind=kind)


def _kind(name: str | None) -> str:
    return _KIND_BY_NAME.get(" ".join((name or "usage").lower().split()), "")

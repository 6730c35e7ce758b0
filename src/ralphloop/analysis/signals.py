"""Signals in the agent's own final text. (The full protocol set arrives with the analysis issue.)"""

from __future__ import annotations

import re

PROMISE = "<promise>COMPLETE</promise>"
# A fence (``` or ~~~, indented or not, e.g. inside a list item) up to the same fence; an unclosed
# fence runs to the end. Inline code is any run of backticks up to the same run.
_FENCED = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,}).*?(?:^[ \t]*(?P=fence)|\Z)", re.DOTALL | re.MULTILINE)
_INLINE_CODE = re.compile(r"(?P<ticks>`+)(?!`).+?(?<!`)(?P=ticks)(?!`)", re.DOTALL)


def own_text(output: str, prompt: str) -> str:
    """The agent's output without a verbatim echo of its prompt (some CLIs print it back)."""
    return output.replace(prompt.strip(), "") if prompt.strip() and prompt.strip() in output else output


def claims_complete(final_text: str, prompt: str = "") -> bool:
    """Whether the agent's own text holds the completion promise, outside quotations."""
    text = _FENCED.sub("", own_text(final_text, prompt))
    text = _INLINE_CODE.sub("", text)
    return PROMISE in text

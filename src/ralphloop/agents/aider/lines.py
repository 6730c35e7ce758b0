"""The lines aider 0.86.2 writes itself, as opposed to the model's reply it streams between them.

Aider prints plain text only (`--no-pretty`): its banner, the model's reply, then its usage report, and between
retries the exception litellm raised. These are the shapes of its own lines, each checked against the source of
aider-chat 0.86.2 (`coders/base_coder.py`: get_announcements, calculate_and_show_tokens_and_cost, send_message,
apply_updates; `exceptions.py`: the descriptions) and its real output (tests/fixtures/aider/). A line is matched
whole, from its start: a sentence quoted inside a line of the reply is never one of aider's.

Kept free of the backend's imports, so the monitor's reader (activity.py) loads only this.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:
    from ralphloop.core.protocols import TokenUsage

# The banner: "Aider v0.86.2", then "Main model: openai/gpt-4o with diff edit format, prompt cache" ("Model:"
# when the weak model is the main one).
BANNER: Final = re.compile(r"Aider v(?P<version>\d+\.\d+\.\d+[\w.+-]*)")
MODEL: Final = re.compile(r"(?:Main model|Model): (?P<model>\S+) with (?P<format>[\w-]+) edit format\b.*")
# The rest of the announcements, up to the first line of the reply.
ANNOUNCED: Final = re.compile(
    r"(?:Editor model|Weak model|Git repo|Repo-map): .*|Warning: For large repos.*|See: .*|"
    r"Added .* to the chat(?: \(read-only\))?\.|Restored previous conversation history\.|Multiline mode: .*"
)

# The usage report after every reply: "Tokens: 2.4k sent, 11 received. Cost: $0.0061 message, $0.0061 session."
# With a cache hit and a cache write both, the Cost part goes on a line of its own. Counts are shown as aider's
# format_tokens rounds them: 999, 2.4k (under 10k), 12k.
_COUNT = r"\d+(?:\.\d)?k?"
TOKENS: Final = re.compile(
    rf"Tokens: (?P<sent>{_COUNT}) sent(?:, (?P<write>{_COUNT}) cache write)?(?:, (?P<hit>{_COUNT}) cache hit)?, "
    rf"(?P<received>{_COUNT}) received\.(?: (?P<cost>Cost: .*))?"
)
COST: Final = re.compile(r"Cost: \$(?P<message>\d+(?:\.\d+)?) message, \$(?P<session>\d+(?:\.\d+)?) session\.")

# A failed request: str() of the litellm exception ("litellm.RateLimitError: RateLimitError: OpenAIException - ..."),
# wrapped at 80 columns over several lines, then aider's description of the class when it has one, then
# "Retrying in 0.5 seconds..." unless it gave up. Aider catches the classes of its exceptions.py (all named
# ...Error, and Timeout) and prints them so; any other reaches its generic handler, which prints a traceback and
# then the same str().
ERROR_START: Final = re.compile(r"litellm\.(?P<name>[A-Z]\w*(?:Error|Timeout)): (?P<rest>.*)")
RETRYING: Final = re.compile(r"Retrying in (?P<seconds>\d+(?:\.\d+)?) seconds\.\.\.")

# The end of a run that did not do its work, though aider exits 0: the context window is full, or the model's
# edits never applied.
GAVE_UP: Final = re.compile(r"Model \S+ has hit a token limit!|Only \d+ reflections allowed, stopping\.")

# Edits: the file name alone on a line, then a SEARCH/REPLACE block (the diff formats); aider says what it did.
SEARCH: Final = re.compile(r"<{5,9} SEARCH\s*")
REPLACE: Final = re.compile(r">{5,9} REPLACE\s*")
APPLIED: Final = re.compile(r"(?P<verb>Applied|Did not apply) edit to (?P<path>.+?)(?: \(--dry-run\))?")


class Report(NamedTuple):
    """One usage report: the tokens of one reply, and the cost aider gives when it knows the model's price (a
    NamedTuple: the monitor and `ralph logs` load this module, and dataclasses costs them ~10 ms)."""

    usage: TokenUsage
    session_cost: float | None  # the whole aider process so far, in dollars; None: not on this line
    cost_below: bool  # the Cost part may follow on the next line (a cache hit and a cache write both shown)


def report(line: str) -> Report | None:
    """The usage report `line` is, in ralph's kinds; None for any other line.

    Aider's "sent" counts every prompt token (the Chat Completions API's prompt_tokens includes the cached ones),
    so ralph's input is sent minus the cache hits and writes."""
    found = TOKENS.fullmatch(line)
    if found is None:
        return None
    from ralphloop.core.protocols import TokenUsage  # here: the monitor reads lines through this module, light

    sent, hit, write = (count(found[name]) for name in ("sent", "hit", "write"))
    usage = TokenUsage(
        input_tokens=max(0, sent - hit - write),
        output_tokens=count(found["received"]),
        cache_creation_tokens=write,
        cache_read_tokens=hit,
    )
    cost = found["cost"]
    return Report(usage, session_cost(cost) if cost else None, cost is None and bool(hit and write))


def session_cost(text: str) -> float | None:
    """The session's cost in a "Cost: $X message, $Y session." line (or the end of the Tokens line)."""
    found = COST.fullmatch(text)
    return float(found["session"]) if found else None


def count(shown: str | None) -> int:
    """A count as aider shows it ("2.4k", "12k", "999") back to a number: exact below 1000, else to aider's
    rounding."""
    if not shown:
        return 0
    if shown.endswith("k"):
        return round(float(shown[:-1]) * 1000)
    return int(shown)

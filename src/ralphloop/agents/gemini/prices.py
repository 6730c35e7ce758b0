"""What a Gemini run cost, from its token counts per model and a small price table: Gemini CLI reports no cost.

PRICES is US dollars per million tokens (input, cached input, output) on the Gemini API's paid tier, from Google's
pricing page (ai.google.dev/gemini-api/docs/pricing) as recorded, with the dates they apply from, by the
genai-prices 0.2.3 data file (PyPI, November 2026; its Google entries verified 2026-10-14). Table dated
2026-11-27. Thinking tokens are billed as output. Pro models cost more for a request whose prompt is over 200k
tokens; the stream gives only each model's sums, so a Pro model whose prompts add up to more than that is priced
request by request from the CLI's session file (session_file.py), and gets no cost when that cannot be read or
does not add up to the stream's sums. The 3.6 to 3.8 Flash models have introductory rates
through 2026-12-31. A model not in the table (or no model known) gives no cost at all: never a guess. A login
with a Google account (Code Assist, free tier) pays nothing per token: the cost is what the API would charge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Final

from ralphloop.core.protocols import TokenUsage

PRICES_AS_OF: Final = "2026-11-27"
LONG_PROMPT: Final = 200_000  # prompt tokens of one request above which a Pro model's long-context rates apply


@dataclass(frozen=True, slots=True)
class Rate:
    """USD per million tokens from `since` on; `long`: (input, cached, output) for prompts over LONG_PROMPT."""

    input: float
    cached: float
    output: float
    long: tuple[float, float, float] | None = None
    since: date = date.min


_PRO_2_5: Final = (Rate(1.25, 0.125, 10.0, long=(2.5, 0.25, 15.0)),)
_PRO_3: Final = (Rate(2.0, 0.20, 12.0, long=(4.0, 0.40, 18.0)),)
# Introductory through 2026-12-31, then twice that.
_FLASH_3_6: Final = (Rate(0.75, 0.075, 3.75), Rate(1.5, 0.15, 7.5, since=date(2027, 1, 1)))

# model (as the API names it in `modelVersion`, which the CLI's stats are keyed by) → its rates, oldest first.
PRICES: Final[Mapping[str, tuple[Rate, ...]]] = {
    "gemini-2.5-pro": _PRO_2_5,
    "gemini-2.5-flash": (Rate(0.30, 0.03, 2.5),),
    "gemini-2.5-flash-lite": (Rate(0.10, 0.01, 0.40),),
    "gemini-3-pro-preview": _PRO_3,
    "gemini-3.1-pro-preview": _PRO_3,
    "gemini-3-flash-preview": (Rate(0.50, 0.05, 3.0),),
    "gemini-3.1-flash-lite": (Rate(0.25, 0.025, 1.5),),
    "gemini-3.5-flash": (Rate(1.5, 0.15, 9.0),),
    "gemini-3.5-flash-lite": (Rate(0.30, 0.03, 2.5),),
    "gemini-3.6-flash": _FLASH_3_6,
    "gemini-3.7-flash": _FLASH_3_6,
    "gemini-3.8-flash": _FLASH_3_6,
}


def rate(model: str, on: date) -> Rate | None:
    """The rate of `model` on day `on`, or None when the model is not in the table."""
    found = [each for each in PRICES.get(model, ()) if each.since <= on]
    return found[-1] if found else None


def cost_usd(
    per_model: Mapping[str, TokenUsage], on: date, requests: Mapping[str, Sequence[TokenUsage]] | None = None
) -> float | None:
    """The run's cost in dollars over every model it used, or None when any of them (with tokens counted) has no
    known price, or nothing was counted. A Pro model whose prompts add up to more than LONG_PROMPT is priced
    request by request from `requests` (the session file's), when they add up to what the stats say."""
    dollars = 0.0
    counted = False
    for model, usage in per_model.items():
        if usage.all == 0:
            continue
        found = rate(model, on)
        if found is None:
            return None
        if found.long is not None and _prompt(usage) > LONG_PROMPT:
            each = (requests or {}).get(model, ())
            if not each or _sum(each) != usage:
                return None  # which requests crossed the line is not known
            dollars += sum(_dollars(found, one) for one in each)
        else:
            dollars += _dollars(found, usage)
        counted = True
    return round(dollars / 1_000_000, 6) if counted else None


def needs_requests(per_model: Mapping[str, TokenUsage], on: date) -> bool:
    """Whether pricing the run needs each request's tokens: a Pro model's prompts add up to more than
    LONG_PROMPT."""
    for model, usage in per_model.items():
        found = rate(model, on)
        if found is not None and found.long is not None and _prompt(usage) > LONG_PROMPT:
            return True
    return False


def _dollars(found: Rate, usage: TokenUsage) -> float:
    """Micro-dollars of one request (or of requests all under LONG_PROMPT); cache writes are billed as input."""
    long = found.long is not None and _prompt(usage) > LONG_PROMPT
    per_input, per_cached, per_output = found.long if found.long and long else (found.input, found.cached, found.output)
    uncached = usage.input_tokens + usage.cache_creation_tokens
    return uncached * per_input + usage.cache_read_tokens * per_cached + usage.output_tokens * per_output


def _prompt(usage: TokenUsage) -> int:
    return usage.input_tokens + usage.cache_read_tokens + usage.cache_creation_tokens


def _sum(each: Sequence[TokenUsage]) -> TokenUsage:
    return TokenUsage(
        sum(one.input_tokens for one in each),
        sum(one.output_tokens for one in each),
        sum(one.cache_creation_tokens for one in each),
        sum(one.cache_read_tokens for one in each),
    )

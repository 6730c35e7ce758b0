"""What a Codex run cost, from its token counts and a small price table: Codex itself reports no cost.

PRICES is US dollars per million tokens (uncached input, cached input, output), from OpenAI's API pricing page
(developers.openai.com/api/docs/pricing) as published for each model, and for gpt-5.2 to gpt-5.5 from the Codex
rate card in OpenAI's Help Center (checked 2026-05-13 by the codex-ops crate's data file; 25 credits = $1).
Table dated 2026-11-21. Reasoning tokens are billed as output and are already inside `output_tokens`.
A model not in the table (or no model known) gives no cost at all: never a guess.
"""

from __future__ import annotations

from typing import Final

from ralphloop.core.protocols import TokenUsage

PRICES_AS_OF: Final = "2026-11-21"
# model → (input, cached input, output), USD per 1M tokens. Exact names only; a dated snapshot
# ("gpt-5-2025-08-07") is matched by its family name before the date.
PRICES: Final[dict[str, tuple[float, float, float]]] = {
    "gpt-5": (1.25, 0.125, 10.0),
    "gpt-5-codex": (1.25, 0.125, 10.0),
    "gpt-5.1": (1.25, 0.125, 10.0),
    "gpt-5.1-codex": (1.25, 0.125, 10.0),
    "gpt-5.1-codex-max": (1.25, 0.125, 10.0),
    "gpt-5-mini": (0.25, 0.025, 2.0),
    "gpt-5.1-codex-mini": (0.25, 0.025, 2.0),
    "gpt-5.2": (1.75, 0.175, 14.0),
    "gpt-5.3-codex": (1.75, 0.175, 14.0),
    "gpt-5.4": (2.50, 0.25, 15.0),
    "gpt-5.5": (5.0, 0.50, 30.0),
}


def cost_usd(model: str | None, usage: TokenUsage | None) -> float | None:
    """The run's cost in dollars, or None when the model's price is not known (or nothing was counted)."""
    if not model or usage is None:
        return None
    price = PRICES.get(model) or PRICES.get(_undated(model))
    if price is None:
        return None
    per_input, per_cached, per_output = price
    # Written-to-cache tokens are billed as plain input by OpenAI.
    uncached = usage.input_tokens + usage.cache_creation_tokens
    dollars = uncached * per_input + usage.cache_read_tokens * per_cached + usage.output_tokens * per_output
    return round(dollars / 1_000_000, 6)


def _undated(model: str) -> str:
    """ "gpt-5-2025-08-07" → "gpt-5"."""
    parts = model.rsplit("-", 3)
    if len(parts) == 4 and all(part.isdigit() for part in parts[1:]):
        return parts[0]
    return model

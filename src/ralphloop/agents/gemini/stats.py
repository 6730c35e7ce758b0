"""What the `stats` of a Gemini `result` event say: the tokens of each model the run used, and which model did
the work.

Gemini CLI 0.61.0 sums the API's `usageMetadata` per model, keyed by the `modelVersion` the API answered with:
`input_tokens` (the prompts, cached tokens included), `cached`, `input` (the uncached part), `output_tokens`
(candidates only) and `total_tokens` (prompts + candidates + thinking + tool-use prompts). Thinking tokens, which
Google bills as output, appear only inside `total_tokens`, so ralph counts `total_tokens - input_tokens` as
output. Without `-m` the CLI first asks a small model which model to use (its router), so a run lists two models
or more; the one that did the work is the one asked for with `--model`, else the one with the most tokens (the
later one at a tie: the router is asked first).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ralphloop.agents.fields import count
from ralphloop.core.protocols import TokenUsage
from ralphloop.words.textsafe import one_line

_COUNTS = ("input_tokens", "cached", "output_tokens", "total_tokens")
_MAX_MODELS = 32  # a hostile stream cannot make ralph price thousands of models


def per_model(stats: Any) -> dict[str, TokenUsage]:
    """Each model's tokens in ralph's kinds; the run's top-level counts under "" when no model is named."""
    if not isinstance(stats, dict):
        return {}
    found: dict[str, TokenUsage] = {}
    models = stats.get("models")
    for name, counts in list(models.items())[:_MAX_MODELS] if isinstance(models, dict) else ():
        usage = _tokens(counts)
        if usage is not None:
            found[one_line(str(name), 100)] = usage
    if not found:
        usage = _tokens(stats)
        if usage is not None:
            found[""] = usage
    return found


def total(models: Mapping[str, TokenUsage]) -> TokenUsage | None:
    """The run's tokens over every model, or None when nothing was counted."""
    if not any(usage.all for usage in models.values()):
        return None
    return sum(models.values(), TokenUsage())


def main_model(models: Mapping[str, TokenUsage], asked: str | None) -> str | None:
    """The model that did the work: the one asked for when the stats name it, else the one with the most
    tokens (the later one at a tie); None when the stats name none."""
    named = [(name, usage) for name, usage in models.items() if name]
    if asked and any(name == asked for name, _ in named):
        return asked
    best: tuple[str, int] | None = None
    for name, usage in named:
        if best is None or usage.all >= best[1]:
            best = (name, usage.all)
    return best[0] if best else None


def _tokens(counts: Any) -> TokenUsage | None:
    if not isinstance(counts, dict):
        return None
    prompt, cached, output, whole = (count(counts.get(key)) for key in _COUNTS)
    if prompt is None and output is None and whole is None:
        return None
    prompt = prompt or 0
    cached = min(cached or 0, prompt)
    answered = max(output or 0, (whole - prompt) if whole is not None else 0)
    return TokenUsage(input_tokens=prompt - cached, output_tokens=answered, cache_read_tokens=cached)

"""What the usage file Copilot writes at its exit (`--usage-output-file FILE`) says: the tokens of every model
call, the model, and what the Copilot service charged. The `--output-format json` stream carries none of these:
1.0.102 leaves `assistant.usage` and `session.shutdown` out of it, and its `result` event has only premium
requests, durations and code changes.

The file's shape (checked against 1.0.102): `{"totalPremiumRequestCost", "totalNanoAiu", "aiCreditsStatus",
"modelMetrics": {MODEL: {"requests": {"count", "cost"}, "usage": {"inputTokens", "outputTokens",
"cacheReadTokens", "cacheWriteTokens", "reasoningTokens"}}}, "currentModel", ...}`. `inputTokens` is the
provider's prompt count, cached tokens included (OpenAI's `prompt_tokens`); reasoning tokens are inside
`outputTokens`.

Cost: Copilot bills AI credits, and reports them as `totalNanoAiu` (1e9 nano-AIU = one AI credit; its schema:
"Divide totalNanoAiu by 1,000,000,000 for AI credits; do not calculate customer cost from token prices") with
`aiCreditsStatus` "complete" only when every call reported its charge; an AI credit is $0.01 (its schema:
"AI credits (1 credit = $0.01)"; GitHub's billing documentation). A "partial" or "unavailable" status (a custom
provider's calls are never charged by GitHub) gives no cost at all: never a guess, and never a price table for a
provider ralph cannot name.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Any, Final

from ralphloop.agents.fields import count
from ralphloop.core.protocols import TokenUsage
from ralphloop.files.safe_read import FileRefused, read_file

USD_PER_AI_CREDIT: Final = 0.01  # as of 2026-11-27 (Copilot 1.0.102's schema; GitHub's billing documentation)
NANO_AIU_PER_CREDIT: Final = 1_000_000_000
_CAP = 4 * 1024 * 1024  # a few KB in practice; anything this big is not Copilot's


@dataclass(frozen=True, slots=True)
class UsageFacts:
    """What the usage file says; None where it says nothing."""

    usage: TokenUsage | None = None
    model: str | None = None  # the model the session ended on
    cost_usd: float | None = None
    premium_requests: float | None = None


def usage_path(prompt_file: str) -> str | None:
    """Where ralph asks Copilot to write the usage of the iteration whose prompt is `prompt_file`: beside it
    (`logs/iteration-N.prompt.md` → `logs/iteration-N.copilot-usage.json`, a folder kept out of commits)."""
    if not prompt_file:
        return None
    stem = prompt_file.removesuffix(".prompt.md") if prompt_file.endswith(".prompt.md") else prompt_file
    return f"{stem}.copilot-usage.json"


def forget(path: str | None) -> None:
    """Remove a usage file an earlier run of the same iteration left, so that it is never read as this run's."""
    if path is None:
        return
    try:
        if not os.path.islink(path) and os.path.isfile(path):
            os.remove(path)
    except OSError:
        pass  # unreadable or not ours: read() refuses it, and the run reports no tokens


def read(path: str | None) -> UsageFacts:
    """The tokens, model and cost in the usage file at `path`; nothing when it is missing, odd or too big."""
    if path is None:
        return UsageFacts()
    try:
        raw = read_file(path, cap=_CAP, follow=False)
    except (FileRefused, OSError):
        return UsageFacts()
    if raw is None:
        return UsageFacts()
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return UsageFacts()
    return facts(data) if isinstance(data, dict) else UsageFacts()


def facts(data: dict[str, Any]) -> UsageFacts:
    """The usage file's JSON object as ralph's facts."""
    models = data.get("modelMetrics")
    usage: TokenUsage | None = None
    for metrics in models.values() if isinstance(models, dict) else ():
        counted = _tokens(metrics.get("usage") if isinstance(metrics, dict) else None)
        if counted is not None:
            usage = counted if usage is None else usage + counted
    model = data.get("currentModel")
    if not (isinstance(model, str) and model):
        named = [name for name in models if isinstance(name, str)] if isinstance(models, dict) else []
        model = named[-1] if named else None
    premium = _finite(data.get("totalPremiumRequestCost"))
    return UsageFacts(
        usage=usage,
        model=model,
        cost_usd=_cost(data.get("totalNanoAiu"), data.get("aiCreditsStatus")),
        premium_requests=premium,
    )


def _cost(nano_aiu: Any, status: Any) -> float | None:
    charged = _finite(nano_aiu)
    if status != "complete" or charged is None or charged < 0:
        return None
    return round(charged / NANO_AIU_PER_CREDIT * USD_PER_AI_CREDIT, 6)


def _tokens(value: Any) -> TokenUsage | None:
    """One model's `usage` in ralph's kinds: its input counts the cached tokens, which ralph counts apart."""
    if not isinstance(value, dict):
        return None
    counts = {key: count(value.get(key)) for key in ("inputTokens", "outputTokens", "cacheReadTokens")}
    if all(count is None for count in counts.values()):
        return None
    total_in = counts["inputTokens"] or 0
    read_ = min(counts["cacheReadTokens"] or 0, total_in)
    written = min(count(value.get("cacheWriteTokens")) or 0, total_in - read_)
    return TokenUsage(
        input_tokens=total_in - read_ - written,
        output_tokens=counts["outputTokens"] or 0,
        cache_creation_tokens=written,
        cache_read_tokens=read_,
    )


def _finite(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None

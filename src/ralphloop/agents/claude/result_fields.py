"""What Claude Code's `result` event says, field by field: tokens by kind, the model, refused tool uses.

Every field is read defensively (a wrong type is as good as absent): the CLI's output is not ours.
"""

from __future__ import annotations

from typing import Any

from ralphloop.agents.fields import mapping, whole
from ralphloop.core.protocols import TokenUsage

# Anthropic's four token kinds, as the result's `usage` spells them, in TokenUsage's order.
TOKEN_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def token_usage(value: Any) -> TokenUsage | None:
    """The result's `usage` (every turn of the run summed), or None when it has no counts at all."""
    if not isinstance(value, dict):
        return None
    counts = [whole(value.get(key)) for key in TOKEN_KEYS]
    if all(count is None for count in counts):
        return None
    return TokenUsage(*(max(0, count or 0) for count in counts))


def model_used(result: dict[str, Any]) -> str | None:
    """The model that did most of the work: of `modelUsage`, the one with the most output tokens."""
    usage_by_model = result.get("modelUsage")
    if not isinstance(usage_by_model, dict) or not usage_by_model:
        return None
    ranked = sorted(
        (name for name in usage_by_model if isinstance(name, str) and name != "<synthetic>"),
        key=lambda name: (
            -(number((usage_by_model[name] or {}).get("outputTokens")) or 0)
            if isinstance(usage_by_model[name], dict)
            else 0
        ),
    )
    return ranked[0] if ranked else None


def denials(value: Any) -> tuple[str, ...]:
    """`permission_denials` as "Tool(command)" lines, the way --allowedTools spells them."""
    if not isinstance(value, list):
        return ()
    names = []
    for item in value:
        if not isinstance(item, dict):
            continue
        tool = str(item.get("tool_name") or "tool")
        given = mapping(item.get("tool_input"))
        detail = given.get("command") or given.get("file_path") or given.get("path") or ""
        names.append(f"{tool}({str(detail)[:120]})" if detail else tool)
    return tuple(dict.fromkeys(names))


def number(value: Any) -> float | None:
    """A JSON number (never a bool) as a float, else None."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def string(value: Any) -> str | None:
    """A non-empty JSON string, else None."""
    return value if isinstance(value, str) and value else None

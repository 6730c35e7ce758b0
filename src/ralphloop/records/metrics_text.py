"""ralph's metrics as text: seed 004's "Iteration Metrics" block for one line and its "FINAL SUMMARY"."""

from __future__ import annotations

from ralphloop.records.summary import Summary, cache_hit_rate, line_tokens
from ralphloop.words.textsafe import clean_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

RULE = "=" * 50
NOT_REPORTED = "not reported"  # the agent did not say (unknown, never zero)
NOT_APPLICABLE = "N/A"  # nothing to compute it from (a rate over zero)


def clock(seconds: float) -> str:
    """Seed 004's durations, to the second: `0m 45s`, `7m 30s`, `1h 2m 5s`."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes}m {secs}s" if hours else f"{minutes}m {secs}s"


def percent(value: float | None) -> str:
    """`80%`, `36.4%`; never `100%` or `0%` for a share that is not all or nothing; `N/A` for None."""
    if value is None:
        return NOT_APPLICABLE
    if 0 < value < 0.05:
        return "<0.1%"
    if 99.95 <= value < 100:
        return ">99.9%"
    return f"{_decimal(value)}%"


def _decimal(value: float) -> str:
    """One decimal at most, digits grouped: `3`, `2.5`, `13,350`."""
    text = f"{value:,.1f}"
    return text[:-2] if text.endswith(".0") else text


def _number(value: int | None, unit: str = "") -> str:
    if value is None:
        return NOT_REPORTED
    return f"{value:,}{unit}"


def money(value: float | None) -> str:
    """`$0.0151`, digits grouped; "not reported" for None."""
    return NOT_REPORTED if value is None else f"${value:,.4f}"


def _files(value: float | None) -> str:
    if value is None:
        return NOT_REPORTED
    return f"{_decimal(value)} {'file' if value == 1 else 'files'}"


def _text(value: object) -> str:
    text = clean_text(value) if isinstance(value, str) else ""
    return text or NOT_REPORTED


def format_iteration(line: Mapping[str, Any]) -> str:
    """Seed 004's "Iteration Metrics" block for one line, with the cost added."""
    duration = line.get("duration_seconds")
    tokens = line_tokens(line)
    lines = [
        "--- Iteration Metrics ---",
        f"Duration: {clock(duration) if isinstance(duration, (int, float)) else NOT_REPORTED}",
        f"Model: {_text(line.get('model'))}",
        f"Status: {_text(line.get('stop_reason'))}",
    ]
    if tokens is None:  # one line, not five saying the same: plain command agents report no tokens
        lines.append(f"Tokens: {NOT_REPORTED}")
    else:
        given, made, created, read = tokens
        lines += [
            f"Input tokens: {given:,}",
            f"Output tokens: {made:,}",
            f"Total tokens: {given + made:,}",
            f"Cache created: {created:,} tokens",
            f"Cache read: {read:,} tokens ({percent(cache_hit_rate(given, created, read))} hit rate)",
        ]
    cost = line.get("cost_usd")
    changed = line.get("files_changed")
    lines += [
        f"Cost: {money(cost if isinstance(cost, (int, float)) else None)}",
        f"Files changed: {_number(changed if isinstance(changed, int) else None)}",
        f"Success: {'✓' if line.get('success') is True else '✗'}",
    ]
    return "\n".join(lines)


def _row(label: str, value: str) -> str:
    return f"  {label:<16} {value}"


def format_summary(summary: Summary, *, metrics_path: str | None = None) -> str:
    """Seed 004's "FINAL SUMMARY" block, with a Cost section; the log's path last, where a run saved it."""
    s = summary
    completed = f"{s.iterations:,}" + (f" / {s.max_iterations:,}" if s.max_iterations else "")
    lines = [RULE, "FINAL SUMMARY".center(len(RULE)).rstrip(), RULE, "", "Iterations:"]
    lines.append(_row("Completed:", completed))
    if s.uncounted:
        lines.append(
            _row(
                "Not counted:",
                f"{s.uncounted:,} agent call{'s' if s.uncounted != 1 else ''} "
                "(usage limit, API retry, wrong model, interrupted, merge conflict)",
            )
        )
    lines.append(_row("Success Rate:", percent(s.success_rate)))
    if s.outcomes:
        lines.append(_row("Outcomes:", ", ".join(f"{count:,} {word}" for word, count in s.outcomes)))
    if s.models:
        lines.append(_row("Models:", ", ".join(clean_text(model) for model in s.models)))
    if s.agents:  # a failover run: which agent made how many calls
        lines.append(_row("Agents:", ", ".join(f"{clean_text(name)} {count:,}" for name, count in s.agents)))

    def maybe(value: float | None, show: Callable[[float], str]) -> str:
        return NOT_APPLICABLE if value is None else show(value)

    lines += [
        "",
        "Duration:",
        _row("Total:", clock(s.duration_total_s)),
        _row("Average:", maybe(s.duration_avg_s, lambda v: f"{clock(v)} per iteration")),
        _row("Min:", maybe(s.duration_min_s, clock)),
        _row("Max:", maybe(s.duration_max_s, clock)),
    ]
    # An agent that reports no tokens or cost (a plain command) gets one line, not a page of "not reported".
    if s.token_iterations:
        average = _per(s.tokens_avg, lambda v: f"{_decimal(round(v))} tokens", s, s.token_iterations, "tokens")
        lines += [
            "",
            "Token Usage:",
            _row("Total Input:", _number(s.input_tokens, " tokens")),
            _row("Total Output:", _number(s.output_tokens, " tokens")),
            _row("Total:", _number(s.total_tokens, " tokens")),
            _row("Average:", average),
            "",
            "Cache Performance:",
            _row("Total Created:", _number(s.cache_creation_tokens, " tokens")),
            _row("Total Read:", _number(s.cache_read_tokens, " tokens")),
            _row("Overall Hit Rate:", percent(s.cache_hit_rate)),
        ]
    else:
        lines += ["", f"Token Usage:       {NOT_REPORTED} by the agent"]
    if s.cost_iterations:
        lines += [
            "",
            "Cost:",
            _row("Total:", money(s.cost_usd) + _cost_unknown(s)),
            _row("Average:", _per(s.cost_avg_usd, money, s, s.cost_iterations, "a cost")),
        ]
    else:
        lines += ["", f"Cost:              {NOT_REPORTED} by the agent"]
    lines += [
        "",
        "Files Changed:",
        _row("Total:", _files(s.files_changed)),
        _row("Average:", _per(s.files_avg, _files, s, s.files_iterations, "files changed")),
    ]
    if metrics_path is not None:
        lines += ["", f"ℹ  Metrics log saved to: {metrics_path}"]
    return "\n".join(lines)


def _cost_unknown(s: Summary) -> str:
    """ " + the cost of 3 iterations not reported": a total over part of the calls is not the whole spend."""
    missing = s.iterations + s.uncounted - s.cost_iterations
    return f" + the cost of {missing:,} {'iteration' if missing == 1 else 'iterations'} not reported" if missing else ""


def _per(value: float | None, show: Callable[[float], str], s: Summary, reported: int, what: str) -> str:
    """`13,350 tokens per iteration`, and over how many iterations when some did not report it."""
    if value is None:
        return NOT_REPORTED
    text = f"{show(value)} per iteration"
    if reported < s.iterations + s.uncounted:
        text += f" (of {reported:,} {'iteration' if reported == 1 else 'iterations'} that reported {what})"
    return text

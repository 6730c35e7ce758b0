"""How ralph words its numbers, the same on every surface (the run's screen, `ralph status`, the monitor,
`ralph report`): one iteration number, "iterations" meaning counted ones with the calls that did not count
beside them, tokens as input/output with cache reads apart, moments in the local zone. Pure, and imports
nothing but datetime (`ralph status` uses it).
"""

from __future__ import annotations

from datetime import datetime


def iteration_words(number: int, counted: int, uncounted: int, limit: int | None, *, running: bool = False) -> str:
    """`4 / 20` while this run's count toward the limit is the iteration's number; else the number, then that
    count labelled: `7 · counted 2 of 20 this run, 1 call not counted`. `running`: iteration `number` is going
    on and not counted yet (`counted` is this run's so far): `7 · this run: 2/20 counted so far`."""
    of = f"{limit}" if limit else "unlimited"
    if running:
        if counted + 1 == number and not uncounted:
            return f"{number} / {of}"
        text = f"{number} · this run: {counted}{f'/{limit}' if limit else ''} counted so far"
    else:
        if counted == number and not uncounted:
            return f"{number} / {of}"
        text = f"{number} · counted {counted}{f' of {limit}' if limit else ''} this run"
    return text + (f", {calls(uncounted)} not counted" if uncounted else "")


def calls(count: int) -> str:
    return f"{count:,} call{'s' if count != 1 else ''}"


def tokens_words(input_tokens: object, output_tokens: object, cache_read: object = None) -> str:
    """`12,345 in / 3,456 out tokens, 1,200,000 cache reads`; "" when nothing was reported."""
    if not isinstance(input_tokens, int) and not isinstance(output_tokens, int):
        return ""
    given = input_tokens if isinstance(input_tokens, int) else 0
    made = output_tokens if isinstance(output_tokens, int) else 0
    text = f"{given:,} in / {made:,} out tokens"
    if isinstance(cache_read, int) and cache_read:
        text += f", {cache_read:,} cache reads"
    return text


def short_count(count: int) -> str:
    """`950`, `3.6k`, `313k`, `1.2M`: a count for a line that must stay short (999,950 is `1.0M`, not `1000k`)."""
    if count < 1000:
        return str(count)
    for size, unit in ((1_000, "k"), (1_000_000, "M"), (1_000_000_000, "G")):
        scaled = count / size
        if round(scaled) < 1000 or unit == "G":
            break
    return f"{scaled:.1f}{unit}" if round(scaled, 1) < 10 else f"{scaled:.0f}{unit}"


def short_tokens(input_tokens: object, output_tokens: object, cache_read: object = None) -> str:
    """`3.6k tok (313k cache)`: input + output (what --max-tokens counts), cache reads apart; "" when none."""
    if not isinstance(input_tokens, int) and not isinstance(output_tokens, int):
        return ""
    used = sum(count for count in (input_tokens, output_tokens) if isinstance(count, int))
    text = f"{short_count(used)} tok"
    return text + (f" ({short_count(cache_read)} cache)" if isinstance(cache_read, int) and cache_read else "")


def money(cost: float) -> str:
    """`$0.23`; `$0.0041` under a cent, so a cheap call does not read as free."""
    return f"${cost:.2f}" if cost >= 0.01 or cost == 0 else f"${cost:.4f}"


def local_time(moment: datetime) -> str:
    """`2030-01-01 00:00 UTC`: a moment as the user reads it, in their zone (the files keep ISO UTC)."""
    try:
        local = moment.astimezone()
    except (OverflowError, ValueError, OSError):  # out of the platform's range: the moment as given
        local = moment
    return f"{local:%Y-%m-%d %H:%M %Z}".rstrip()

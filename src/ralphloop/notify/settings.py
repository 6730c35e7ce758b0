"""The `notify` config section: which events notify, and where to (a desktop notifier, a webhook, apprise URLs).

config/settings.py reads it through NOTIFY_TABLE, as it reads every section; the converters here say what a value must
be (config/settings.py names the file and key of a bad one). Light: no apprise, no urllib until a URL is given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec import Struct

from ralphloop.notify.urls import check_webhook_url, shown, split_urls
from ralphloop.words.values import flag

# Every event `notify.on` can name, in the order a run meets them.
EVENTS = (
    "story_done",  # a task newly passes
    "usage_limit",  # the agent hit its vendor's usage limit (with the reset time)
    "needs_input",  # ralph waits for your answer, or stopped blocked / needing a human
    "steered",  # the loop acted on what you asked: paused, resumed, stopped, guidance or an answer received
    "circuit_half_open",  # the circuit breaker saw iterations without progress
    "circuit_open",  # the circuit breaker opened
    "complete",  # the run finished its work
    "halted",  # the run stopped for any other reason (limit, budget, error, ...)
    "interrupted",  # Ctrl+C or a signal stopped the run
)
# The names of ralph 0.x, when only a run's end notified: config files in the wild still say them.
ALIASES = {"halt": "halted", "interrupt": "interrupted"}
# What needs you or ends the run; not each story (noisy), the half-open breaker or an interrupt (you were there).
DEFAULT_EVENTS = ("complete", "halted", "usage_limit", "needs_input", "circuit_open", "steered")
TIMEOUT_S = 5.0  # for each delivery (a notifier process, a POST, an apprise URL)
END_WAIT_S = 5.0  # at most, at the end of a run, for what is still being sent
EXTRA = "pip install 'ralphloop[notify]'"  # what `notify.urls` needs


class NotifySettings(Struct, frozen=True):
    """The `notify` section, resolved. `desktop` None: notify when a desktop notifier exists."""

    desktop: bool | None = None
    webhook: str | None = None
    on: tuple[str, ...] = DEFAULT_EVENTS
    urls: tuple[str, ...] = ()  # apprise URLs: ntfy://, tgram://, slack://, discord://, mailto://, pover://, ...

    @property
    def channels(self) -> bool:
        """Whether anything could be sent: a chosen event, and a place to send it (desktop `auto` may be one)."""
        return bool(self.on) and (self.desktop is not False or bool(self.webhook) or bool(self.urls))


def desktop(value: Any) -> bool | None:
    if isinstance(value, str) and value.strip().lower() == "auto":
        return None
    try:
        return flag(value)
    except ValueError:
        raise ValueError("expected true, false or auto") from None


def webhook(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("expected an http:// or https:// URL")
    return check_webhook_url(value)


def notify_on(value: Any) -> tuple[str, ...]:
    """`on: [complete, halted]`, "complete,halted" or `all`; an empty list turns notifications off."""
    items = value.split(",") if isinstance(value, str) else value
    choices = f"a list from {', '.join(EVENTS)} (or all)"
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise ValueError(f"expected {choices}")
    named = [item.strip().lower().replace("-", "_") for item in items if item.strip()]
    if named == ["all"]:
        return EVENTS
    unknown = [item for item in named if item not in EVENTS and item not in ALIASES]
    if unknown:
        raise ValueError(f"{unknown[0][:40]!r} is not an event: expected {choices}")
    return tuple(dict.fromkeys(ALIASES.get(item, item) for item in named))


# settings key → (yaml path, env var, converter, default), as config._TABLE has them; the field names follow.
NOTIFY_TABLE: dict[str, tuple[tuple[str, ...], str | None, Callable[[Any], Any], Any]] = {
    "notify_desktop": (("notify", "desktop"), None, desktop, None),
    "notify_webhook": (("notify", "webhook"), "RALPH_NOTIFY_WEBHOOK", webhook, None),
    "notify_on": (("notify", "on"), None, notify_on, DEFAULT_EVENTS),
    "notify_urls": (("notify", "urls"), "RALPH_NOTIFY_URLS", split_urls, ()),
}
NOTIFY_FIELDS = {key: key.removeprefix("notify_") for key in NOTIFY_TABLE}


def apprise_missing(settings: NotifySettings) -> str | None:
    """What to do when `notify.urls` is set and apprise is not installed (found without importing it: its
    import takes half a second), else None."""
    if not settings.urls:
        return None
    from importlib.util import find_spec

    try:
        found = find_spec("apprise") is not None
    except (ImportError, ValueError):
        found = False
    return None if found else f"sending to these URLs needs apprise, which is not installed: {EXTRA}"


def describe(settings: NotifySettings) -> str:
    """One line for `ralph run --dry-run`: the events and where they go, every URL redacted."""
    where = [] if settings.desktop is False else [f"desktop ({'on' if settings.desktop else 'auto'})"]
    where += [f"webhook {shown(settings.webhook)}"] if settings.webhook else []
    where += [shown(url) for url in settings.urls]
    if not settings.on or not where:
        return "off"
    return f"{', '.join(settings.on)} → {', '.join(where)}"

"""The user's caps on the vendor's usage windows (issue 34: `--max-window five_hour=80%`, `usage_limit.windows`), and
the pure decision they make: an account whose known share of a window has reached its cap may not be called until
that window resets. The shares come from what each call reported (the book of agents/agent_limits.py), never a
guess: a window no call reported is not capped, whatever its cap.

Pure: no I/O; the time is a value.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from msgspec import Struct

from ralphloop.core.limits import UsageLimit, WindowReading
from ralphloop.words.figures import local_time
from ralphloop.words.patterns import lazy
from ralphloop.words.windows import label, percent

ALL = "all"  # the cap of every window not named
# The windows the vendors name (Claude's unified windows; Codex's, named by their length), for the near miss.
KNOWN = ("five_hour", "seven_day", "seven_day_opus", "seven_day_sonnet")
_NAME = lazy(r"(?:all|five_hour|seven_day(?:_[a-z0-9]+)*|[1-9][0-9]{0,5}_minutes)")
_MAX_CAPS = 32
_MODEL_WINDOW = "seven_day_"  # Claude's windows of one model: seven_day_opus, seven_day_sonnet


class WindowCaps(Struct, frozen=True):
    """Each window's cap, a share from 0 (exclusive) to 1, in the order given; `all` caps every window not named."""

    shares: tuple[tuple[str, float], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.shares)

    def of(self, name: str) -> float | None:
        """The cap of window `name`: its own, else `all`'s, else None (no cap). `all` leaves out a model's own
        window (`seven_day_opus`): a run on another model does not spend it; name it to cap it."""
        found = dict(self.shares)
        return found.get(name, None if name.startswith(_MODEL_WINDOW) else found.get(ALL))

    def words(self) -> str:
        """As the flag spells them: "five_hour=80%, seven_day=50%"."""
        return ", ".join(f"{name}={percent(share)}" for name, share in self.shares)


class Capped(Struct, frozen=True):
    """A window of one account at or past the user's cap: until when it holds (its reset)."""

    account: str  # the book's key: backend/account
    agent: str
    reading: WindowReading
    cap: float
    until: datetime

    def limit(self) -> UsageLimit:
        """The stop as a usage limit of the agent: the window's name, the reset, and words that say it was the
        user's cap, not the vendor's refusal."""
        window = self.reading.window
        said = (
            f"{self.agent}'s {label(window.name)} window is {percent(window.utilization)} used, at or past your cap of "
            f"{percent(self.cap)} (--max-window {window.name}={percent(self.cap)}; not the vendor's limit); "
            f"it resets at {local_time(self.until)}"
        )
        return UsageLimit(self.agent, said, self.until, window.name, "window")


def capped(
    agent: str, account: str, readings: Mapping[str, WindowReading], caps: WindowCaps, now: datetime, fallback_s: float
) -> Capped | None:
    """The window of one account at or past its cap at `now`, the one that holds longest (every capped window must
    reset before the account may be called); None when the account has headroom in every window it reported. A
    capped window with no reset holds for `fallback_s` after it was read (then a call reads it again)."""
    found: Capped | None = None
    for name, reading in readings.items():
        cap = caps.of(name)
        if cap is None or reading.window.utilization < cap:
            continue
        until = reading.window.resets_at or reading.read_at + timedelta(seconds=fallback_s)
        if until <= now:
            continue
        if found is None or until > found.until:
            found = Capped(account, agent, reading, cap, until)
    return found


def parse_caps(value: Any) -> WindowCaps:
    """The caps as config gives them (`{five_hour: 0.8, seven_day: 50%}`), or as flags do (`["five_hour=80%",
    "all=0.9"]`, or one string "five_hour=80%,seven_day=0.5"); a later cap of a window replaces an earlier one."""
    if isinstance(value, str):
        value = [part for part in value.split(",") if part.strip()]
    if isinstance(value, list | tuple):
        pairs = [_pair(item) for item in value]
    elif isinstance(value, Mapping):
        pairs = [(str(name), share) for name, share in value.items()]
    else:
        raise ValueError("expected caps such as five_hour=80% (or a mapping: {five_hour: 0.8, seven_day: 0.5})")
    caps: dict[str, float] = {}
    for name, share in pairs:
        caps[_name(name)] = _share(name, share)
    if len(caps) > _MAX_CAPS:
        raise ValueError(f"at most {_MAX_CAPS} windows")
    return WindowCaps(tuple(caps.items()))


def _pair(item: Any) -> tuple[str, Any]:
    if not isinstance(item, str) or "=" not in item:
        raise ValueError(f"{item!r} is not WINDOW=SHARE, such as five_hour=80% or all=0.9")
    name, _, share = item.partition("=")
    return name.strip(), share.strip()


def _name(name: str) -> str:
    name = name.strip().lower()
    if not _NAME.fullmatch(name):
        from ralphloop.words.choices import near_choice  # difflib, for a refusal only

        raise ValueError(near_choice(f"unknown window {name[:40]!r}", name, (ALL, *KNOWN), "or <N>_minutes"))
    return name


def _share(name: str, share: Any) -> float:
    """A share from 0 (exclusive) to 1: 0.8 or 80%; a bare number above 1 is refused, not read as a percentage."""
    where = f"the cap of {name.strip()[:40]}"
    if isinstance(share, str):
        text = share.strip()
        try:
            share = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            raise ValueError(f"{where}: {text[:40]!r} is not a share such as 0.8 or 80%") from None
        if not text.endswith("%") and share > 1:
            raise ValueError(f"{where}: {text[:40]} is above 1: write {text}% for a percentage, or a share such as 0.8")
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share <= 1:
        raise ValueError(f"{where}: expected a share above 0 and at most 1 (or 100%), such as 0.8 or 80%")
    return float(share)

"""Which engine events notify, and what each notification says: its title, its line, the webhook's JSON.

Pure: no I/O. The sink (sink.py) keeps a `Seen` between events and asks `note_for` about each one; the end of a
run is `ending_note`'s, once the sink knows where the feature folder ended up (an archived feature moved).
Everything shown comes from the task file, the agent or a vendor: it goes through `safe_text` (one line, no
terminal controls, the environment's secrets masked).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from ralphloop.core import steering
from ralphloop.core.events import (
    WAITING_WORDS,
    WINDOW_WAIT,
    CircuitChanged,
    IterationFinished,
    LoopEnded,
    RunStarted,
    Steered,
    Waiting,
)
from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.steering import Request
from ralphloop.plugins.formats import format_of
from ralphloop.words.redact import redact, secret_values
from ralphloop.words.textsafe import one_line, strip_terminal_controls

MESSAGE_LIMIT = 300
_LABELS = {
    "story_done": "done",
    "usage_limit": "usage limit",
    "needs_input": "needs your input",
    "steered": "steered",
    "circuit_half_open": "circuit half-open",
    "circuit_open": "circuit open",
    "complete": "complete",
    "halted": "halted",
    "interrupted": "interrupted",
}
_POLICY_WORDS = {"wait": "waiting for the reset", "exit": "the run stops", "ask": "asking whether to wait"}


class Note(Struct, frozen=True):
    """One notification: the same facts for every channel."""

    event: str  # one of settings.EVENTS
    feature: str
    title: str  # "ralph · auth: usage limit" (a push notification's title)
    body: str  # the line under the title: "NOTE-2 passes · 3/6 stories"
    text: str  # title and body on one line: what a desktop notification and chat webhooks show
    fields: Mapping[str, Any]  # the webhook payload's fields for this event


class Seen(Struct, frozen=True):
    """What the notifier remembers of the run between events."""

    feature: str
    feature_dir: str
    source_kind: str = "prd"
    done: int | None = None  # tasks done after the last event that said (None: not yet known)
    limits: tuple[str, ...] = ()  # the usage limits notified already (vendor and reset), each told once


def safe_text(text: str, env: Mapping[str, str], limit: int = MESSAGE_LIMIT) -> str:
    """`text` on one line, without escapes or controls, with secrets masked, at most `limit` characters."""
    plain = strip_terminal_controls(text)
    masked = redact(plain.encode("utf-8", "surrogateescape"), secret_values([env]))
    return one_line(masked.decode("utf-8", "replace"), limit)


def note_for(
    event: object, seen: Seen, on: tuple[str, ...], env: Mapping[str, str], local: tzinfo | None = None
) -> tuple[Note | None, Seen]:
    """The notification `event` calls for (None: none, or not one of `on`), and what to remember after it."""
    note: Note | None = None
    if isinstance(event, RunStarted):
        seen = replace(seen, source_kind=event.source_kind or seen.source_kind, done=event.done)
    elif isinstance(event, IterationFinished):
        note = _story_done(event, seen, env)
        limit = event.usage_limit if event.status == "usage-limit" else None
        told = f"{limit.get('vendor')}@{limit.get('resetsAt')}" if limit is not None else ""
        if limit is not None and told not in seen.limits:  # a wait that ends in the same limit is not news
            note = _usage_limit(event, limit, seen, env, local)
            seen = replace(seen, limits=(*seen.limits[-9:], told))
        seen = replace(seen, done=event.done)
    elif isinstance(event, Waiting) and event.kind == "answer" and event.first:
        note = _question(event, seen, env, local)
    elif isinstance(event, Waiting) and event.kind == WINDOW_WAIT and event.first:
        told = f"window@{_iso(event.until)}"
        if told not in seen.limits:  # the same hold again in this run (after a wait that ended in it) is not news
            note = _window_hold(event, seen, env, local)
            seen = replace(seen, limits=(*seen.limits[-9:], told))
    elif isinstance(event, CircuitChanged) and event.to_state in ("HALF_OPEN", "OPEN"):
        note = _circuit(event, seen, env)
    elif isinstance(event, Steered):  # what you asked, acted on: the phone that sent it hears it was
        words = safe_text(steering.told(Request(event.action, event.source, event.at, event.text, event.now)), env)
        fields = {"action": event.action, "source": event.source, "askedAt": _iso(event.at), "words": event.text}
        note = _note("steered", safe_text(seen.feature, env, 80), words, fields)
    return (note if note and note.event in on else None), seen


def ending_note(event: LoopEnded, seen: Seen, on: tuple[str, ...], env: Mapping[str, str]) -> Note | None:
    """The notification for the run's end: complete, interrupted, needs_input (stopped blocked or needing a
    human: `halted` when only that is chosen), or halted. None when that event is not one of `on`."""
    kind = ending_kind(event.reason)
    if kind == "needs_input" and kind not in on:
        kind = "halted"  # it is a halt too: whoever chose halts alone still hears of it
    if kind not in on:
        return None
    feature = safe_text(seen.feature, env, 80)
    unit = format_of(seen.source_kind).units.lower()
    runs = f"{event.iterations} iteration{'s' if event.iterations != 1 else ''}"
    if event.tally.uncounted:
        runs += f" (+{event.tally.uncounted} not counted)"
    message = safe_text(event.message, env)
    if kind == "complete":
        what = f"{event.scope} done" if event.scope and event.reason is not ExitReason.COMPLETE else "complete"
        body = f"{what} — {event.done}/{event.total} {unit} in {runs}"
    elif kind == "interrupted":
        body = f"interrupted after {runs} — {event.done}/{event.total} {unit}"
    else:
        body = f"stopped ({event.reason.value}): {message}"
    last = safe_text(event.last_message, env)
    if last:
        body += f" — the agent's last words: {last}"
    fields = {
        "reason": event.reason.value,
        "exitCode": event.reason.exit_code,
        "message": message,
        "iterations": event.iterations,
        "storiesComplete": event.done,
        "storiesTotal": event.total,
        "durationSeconds": round(event.duration_s, 3),
        "lastMessage": last,
    }
    return _note(kind, feature, body, fields, text=safe_text(f"ralph: {feature} {body}", env))


def ending_kind(reason: ExitReason) -> str:
    """complete, interrupted, needs_input (blocked, needs a human) or halted (every other way a run stops)."""
    if reason in (ExitReason.COMPLETE, ExitReason.STORY_DONE):
        return "complete"
    if reason is ExitReason.INTERRUPTED:
        return "interrupted"
    if reason in (ExitReason.BLOCKED, ExitReason.NEEDS_HUMAN):
        return "needs_input"
    return "halted"


# what needs the user (issue 36): these carry the page's address when `ralph serve` publishes one (project/page.py)
NEEDS_YOU = ("needs_input", "usage_limit", "circuit_open", "complete", "halted", "interrupted")


def with_page(note: Note, url: str | None) -> Note:
    """`note` with the page's address after its words and in its fields (`page`), when it needs the user."""
    if url is None or note.event not in NEEDS_YOU:
        return note
    return replace(note, body=f"{note.body} — {url}", text=f"{note.text} — {url}", fields={**note.fields, "page": url})


def payload(note: Note, feature_dir: str, *, now: datetime | None = None, host: str = "") -> dict[str, Any]:
    """The webhook's JSON body: `event`, `title`, `text` (the one line chat webhooks show), `message`, where and
    when, then the event's own fields (a run's end keeps the fields of ralph 0.x's end-of-run payload)."""
    when = (now or datetime.now(UTC)).astimezone(UTC)
    return {
        "event": note.event,
        "title": note.title,
        "text": note.text,
        "message": note.body,
        "feature": note.feature,
        "featureDir": feature_dir,
        "time": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": host,
        **note.fields,
    }


# ---------------------------------------------------------------- one event each


def _note(event: str, feature: str, body: str, fields: Mapping[str, Any], text: str = "") -> Note:
    title = f"ralph · {feature}: {_LABELS[event]}"
    text = text or one_line(f"ralph: {feature}: {body}", MESSAGE_LIMIT)
    return Note(event, feature, title, body, text, dict(fields))


def _story_done(event: IterationFinished, seen: Seen, env: Mapping[str, str]) -> Note | None:
    more = seen.done is not None and event.done > seen.done
    if event.status != "complete" and not more:
        return None
    words = format_of(event.source_kind or seen.source_kind)
    task = safe_text(event.task_id, env, 80)
    verb = "passes" if words.done_words == "stories pass" else "done"
    body = f"{task} {verb} · {event.done}/{event.total} {words.units.lower()}"
    fields = {
        "taskId": task,
        "taskTitle": safe_text(event.task_title, env),
        "iteration": event.number,
        "storiesComplete": event.done,
        "storiesTotal": event.total,
    }
    return _note("story_done", safe_text(seen.feature, env, 80), body, fields)


def _usage_limit(
    event: IterationFinished, limit: Mapping[str, Any], seen: Seen, env: Mapping[str, str], local: tzinfo | None
) -> Note:
    vendor = safe_text(str(limit.get("vendor") or "the agent"), env, 40)
    resets = _instant(limit.get("resetsAt"))
    policy = str(limit.get("policy") or "")
    when = f"resets {_local_words(resets, event.finished_at, local)} ({_iso(resets)})" if resets else "reset unknown"
    body = f"{vendor} usage limit, {when}" + (f" — {_POLICY_WORDS[policy]}" if policy in _POLICY_WORDS else "")
    fields = {
        "taskId": safe_text(event.task_id, env, 80),
        "iteration": event.number,
        "vendor": vendor,
        "limitKind": safe_text(str(limit.get("kind") or ""), env, 40),
        "limitMessage": safe_text(str(limit.get("message") or ""), env),
        "resetsAt": _iso(resets) if resets else None,
        "resetsAtLocal": resets.astimezone(local).isoformat(timespec="seconds") if resets else None,
        "policy": policy,
        "storiesComplete": event.done,
        "storiesTotal": event.total,
    }
    return _note("usage_limit", safe_text(seen.feature, env, 80), body, fields)


def _window_hold(event: Waiting, seen: Seen, env: Mapping[str, str], local: tzinfo | None) -> Note:
    """Every agent past the user's cap on a usage window (issue 34): the loop waits for the window's reset."""
    asked = event.until - timedelta(seconds=max(0.0, event.seconds_left))
    said = safe_text(event.message, env)
    body = f"{said} — waiting until {_local_words(event.until, asked, local)}"
    fields = {
        "limitKind": "window",
        "limitMessage": said,
        "resetsAt": _iso(event.until),
        "resetsAtLocal": event.until.astimezone(local).isoformat(timespec="seconds"),
        "policy": "wait",
    }
    return _note("usage_limit", safe_text(seen.feature, env, 80), body, fields)


def _question(event: Waiting, seen: Seen, env: Mapping[str, str], local: tzinfo | None) -> Note:
    question = safe_text(event.message.removesuffix(f": {WAITING_WORDS}"), env)  # the body says it once
    asked = event.until - timedelta(seconds=max(0.0, event.seconds_left))
    body = f"waiting for your answer until {_local_words(event.until, asked, local)}: {question}"
    fields = {
        "question": question,
        "deadline": _iso(event.until),
        "deadlineLocal": event.until.astimezone(local).isoformat(timespec="seconds"),
    }
    return _note("needs_input", safe_text(seen.feature, env, 80), body, fields)


def _circuit(event: CircuitChanged, seen: Seen, env: Mapping[str, str]) -> Note:
    kind = "circuit_open" if event.to_state == "OPEN" else "circuit_half_open"
    reason = safe_text(event.reason, env)
    state = "open" if kind == "circuit_open" else "half-open"
    fields = {"fromState": event.from_state, "toState": event.to_state, "guidance": safe_text(event.guidance, env)}
    return _note(kind, safe_text(seen.feature, env, 80), f"circuit breaker {state}: {reason}", fields)


def _instant(text: object) -> datetime | None:
    """status.json's "2026-03-04T19:00:00Z" as an aware instant (None when absent or not that shape)."""
    if not isinstance(text, str):
        return None
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _local_words(moment: datetime, now: datetime, local: tzinfo | None) -> str:
    """20:00 today, else "Tue 4 Mar 20:00", in the local zone (the ISO time in UTC goes beside it)."""
    here, today = moment.astimezone(local), now.astimezone(local)
    if here.date() == today.date():
        return f"{here:%H:%M}"
    return f"{here:%a} {here.day} {here:%b %H:%M}"

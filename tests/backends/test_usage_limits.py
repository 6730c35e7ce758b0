"""Vendor usage limits from Claude stream-json events (agents/claude/limit_events.py), from the CLIs' own sentences
(agents/limit_text.py) and their reset phrases (guards/reset_time.py).

The real captures are in tests/fixtures/usage/ (see its README for where each came from). Every expected reset is
written out by hand from the capture: the Claude runs name their zone in the sentence, the Codex runs printed UTC
(their session file's `resets_at` says 01:04:21Z for "1:04 AM"), and the structured `resetsAt` of each Claude run
is checked against the minute its sentence printed.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralphloop.agents.claude.limit_events import from_claude_event
from ralphloop.agents.claude.parser import StreamJsonParser
from ralphloop.agents.limit_text import from_text
from ralphloop.core.limits import LimitWarning, UsageLimit
from ralphloop.core.protocols import ErrorKind, ProcessOutcome
from ralphloop.guards.reset_time import parse_reset

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "usage"
NEW_YORK = ZoneInfo("America/New_York")
BERLIN = ZoneInfo("Europe/Berlin")
LOS_ANGELES = ZoneInfo("America/Los_Angeles")
# 2026-11-20 23:00 UTC = 6pm in New York: the evening the corpus was captured.
NOW = datetime(2026, 11, 20, 23, 0, tzinfo=UTC)


def at(*fields: int) -> datetime:
    return datetime(*fields, tzinfo=UTC)  # type: ignore[misc]


def read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def events(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in read(name).splitlines() if line.strip()]


def epoch(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


# --------------------------------------------------------------------------------------------------------------
# from_text on whole real outputs

CODEX_PLUS = (
    "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit "
    "https://chatgpt.com/settings/usage to purchase more credits or try again at Nov 21st, 2026 1:04 AM."
)
CODEX_NOW = at(2026, 11, 20, 23, 4, 21)

CORPUS_LIMITS = [
    # file, now, local, vendor, kind, resets_at, message
    (
        "claude_stream_oauth_5h_utc.jsonl",
        at(2026, 11, 20, 23, 0, 20),
        UTC,
        "claude",
        "five_hour",
        at(2026, 11, 21, 2, 0),
        "You've hit your 5-hour limit · resets 2am (UTC)",
    ),
    (
        "claude_stream_oauth_5h_new_york.jsonl",
        at(2026, 11, 20, 23, 0, 31),
        UTC,
        "claude",
        "five_hour",
        at(2026, 11, 21, 1, 0),
        "You've hit your 5-hour limit · resets 8pm (America/New_York)",
    ),
    (
        "claude_stream_oauth_weekly.jsonl",
        at(2026, 11, 20, 23, 0, 30),
        UTC,
        "claude",
        "weekly",
        at(2026, 11, 23, 1, 0),
        "You've hit your weekly limit · resets Nov 22, 8pm (America/New_York)",
    ),
    (
        "claude_stream_oauth_opus.jsonl",
        at(2026, 11, 20, 23, 0, 30),
        UTC,
        "claude",
        "opus",
        at(2026, 11, 22, 5, 0),
        "You've hit your Opus limit · resets Nov 22, 12am (America/New_York)",
    ),
    (
        "claude197_stream_oauth_session.jsonl",
        NOW,
        UTC,
        "claude",
        "session",
        at(2026, 11, 21, 1, 0),
        "You've hit your session limit · resets 1am (UTC)",
    ),
    (
        "claude_json_oauth_5h.json",
        NOW,
        UTC,
        "claude",
        "five_hour",
        at(2026, 11, 21, 1, 0),
        "You've hit your 5-hour limit · resets 1am (UTC)",
    ),
    (
        "claude_text_oauth_5h.txt",
        NOW,
        NEW_YORK,  # the sentence names its zone, so the local zone does not matter
        "claude",
        "five_hour",
        at(2026, 11, 21, 1, 0),
        "You've hit your 5-hour limit · resets 1am (UTC)",
    ),
    (
        "codex_json_usage_limit_free.jsonl",
        CODEX_NOW,
        UTC,
        "codex",
        "",
        at(2026, 11, 21, 1, 4),
        "You’ve hit your usage limit. Upgrade to Plus to continue using Codex (https://chatgpt.com/explore/plus), "
        "or try again at Nov 21st, 2026 1:04 AM.",
    ),
    ("codex_json_usage_limit_plus.jsonl", CODEX_NOW, UTC, "codex", "", at(2026, 11, 21, 1, 4), CODEX_PLUS),
    (
        "codex_json_usage_limit_pro.jsonl",
        CODEX_NOW,
        UTC,
        "codex",
        "",
        at(2026, 11, 21, 1, 4),
        "You’ve hit your usage limit. Visit https://chatgpt.com/settings/usage to purchase more credits "
        "or try again at Nov 21st, 2026 1:04 AM.",
    ),
    (
        "codex_json_usage_limit_team.jsonl",
        CODEX_NOW,
        UTC,
        "codex",
        "",
        at(2026, 11, 21, 1, 4),
        "You’ve hit your usage limit. To get more access now, send a request to your admin "
        "or try again at Nov 21st, 2026 1:04 AM.",
    ),
    ("codex_text_usage_limit_plus.stderr", CODEX_NOW, UTC, "codex", "", at(2026, 11, 21, 1, 4), CODEX_PLUS),
    ("codex_rollout_usage_limit.jsonl", CODEX_NOW, UTC, "codex", "", at(2026, 11, 21, 1, 4), CODEX_PLUS),
    (
        "hives_issue-719_codex_exec_json_usage_limit.txt",
        at(2025, 11, 12, 11, 47, 4),
        UTC,
        "codex",
        "",
        at(2025, 11, 12, 12, 16),  # the date is left out: the same day
        "You've hit your usage limit. To get more access now, send a request to your admin or try again at 12:16 PM.",
    ),
    (
        "hives_10-LOGS_claude_weekly_limit_excerpt.txt",
        at(2025, 11, 12, 10, 0),
        BERLIN,  # no zone printed: the agent's own; 5am in Berlin (UTC+1) is 04:00 UTC, tomorrow
        "claude",
        "weekly",
        at(2025, 11, 13, 4, 0),
        "Weekly limit reached ∙ resets 5am",
    ),
    (
        "gemini_json_daily_quota.stderr",
        NOW,
        UTC,
        "gemini",
        "daily",
        None,
        "You have exhausted your daily quota on this model.",
    ),
    (
        "gemini_stream_daily_quota.jsonl",
        NOW,
        UTC,
        "gemini",
        "daily",
        None,
        "You have exhausted your daily quota on this model.",
    ),
    (
        "gemini_stream_daily_quota.stderr",
        NOW,
        UTC,
        "gemini",
        "daily",
        None,
        "You have exhausted your daily quota on this model.",
    ),
]


@pytest.mark.parametrize(
    ("name", "now", "local", "vendor", "kind", "resets_at", "message"), CORPUS_LIMITS, ids=[c[0] for c in CORPUS_LIMITS]
)
def test_every_corpus_limit_text(
    name: str, now: datetime, local: tzinfo, vendor: str, kind: str, resets_at: datetime | None, message: str
) -> None:
    assert from_text(read(name), now, local) == UsageLimit(vendor, message, resets_at, kind, "text")


NOT_LIMITS = [
    "claude_stream_apikey_429_unified_headers.jsonl",  # API key: the CLI ignores the unified headers; a plain 429
    "claude_stream_rate_limit_429.jsonl",
    "claude_stream_oauth_warning.jsonl",
    "codex_json_rate_limit_429.jsonl",
    "codex_json_insufficient_quota.jsonl",
    "gemini_stream_minute_quota.stderr",
    "aider_rate_limit_429.stdout",
    "aider_insufficient_quota.stdout",
]


@pytest.mark.parametrize("name", NOT_LIMITS)
def test_rate_limits_and_billing_errors_are_not_usage_limits(name: str) -> None:
    assert from_text(read(name), NOW, UTC) is None


def test_fixtures_are_all_used() -> None:
    used = {case[0] for case in CORPUS_LIMITS} | set(NOT_LIMITS) | {"README.md", ANTHROPICS} | set(EXTRA_USAGE)
    assert {path.name for path in FIXTURES.iterdir()} == used


@pytest.mark.parametrize(
    ("name", "epoch_seconds"),
    [
        ("claude_stream_oauth_5h_utc.jsonl", 1795226420),
        ("claude_stream_oauth_5h_new_york.jsonl", 1795222831),
        ("claude_stream_oauth_weekly.jsonl", 1795395630),
        ("claude_stream_oauth_opus.jsonl", 1795323630),
        ("claude197_stream_oauth_session.jsonl", 1795222832),
    ],
)
def test_the_printed_reset_is_the_structured_one_to_the_minute(name: str, epoch_seconds: int) -> None:
    """The sentence's wall time, read in the zone it names, is the rate_limit_event's resetsAt less its seconds."""
    assert events(name)[1]["rate_limit_info"]["resetsAt"] == epoch_seconds
    limit = from_text(read(name), at(2026, 11, 20, 23, 0), UTC)
    assert limit is not None
    assert limit.resets_at == epoch(epoch_seconds).replace(second=0)


def test_codex_printed_reset_matches_its_session_file() -> None:
    rollout = [json.loads(line) for line in read("codex_rollout_usage_limit.jsonl").splitlines()]
    primary = next(e["payload"]["rate_limits"]["primary"] for e in rollout if e["payload"].get("rate_limits"))
    limit = from_text(read("codex_rollout_usage_limit.jsonl"), CODEX_NOW, UTC)
    assert limit is not None
    assert limit.resets_at == epoch(primary["resets_at"]).replace(second=0)


# The Claude Code 1.0.x texts users quoted in anthropics/claude-code issues (the fixture annotates them).
ANTHROPICS = "anthropics_claude-code_issues_usage_limit_texts.txt"
ISSUE_TEXTS = [
    # text, now, local, resets_at, message
    ("Claude AI usage limit reached|1755615600", NOW, UTC, at(2025, 8, 19, 15, 0), "Claude AI usage limit reached"),
    (
        "Claude usage limit reached. Your limit will reset at 5pm (Europe/Warsaw).",
        at(2025, 8, 19, 12, 0),
        UTC,
        at(2025, 8, 19, 15, 0),  # 5pm CEST, the same instant as #6119's epoch
        "Claude usage limit reached. Your limit will reset at 5pm (Europe/Warsaw).",
    ),
    ("Claude AI usage limit reached|1750708800", NOW, UTC, at(2025, 6, 23, 20, 0), "Claude AI usage limit reached"),
    (
        "Claude usage limit reached. Your limit will reset at 3pm (America/Bogota).",
        at(2025, 6, 23, 16, 0),
        UTC,
        at(2025, 6, 23, 20, 0),  # 3pm in Bogota (UTC-5), #2490's epoch
        "Claude usage limit reached. Your limit will reset at 3pm (America/Bogota).",
    ),
    (
        "  ⎿  Claude usage limit reached. Your limit will reset at Oct 6, 6pm.",
        at(2025, 10, 5, 20, 0),
        LOS_ANGELES,
        at(2025, 10, 7, 1, 0),  # 6pm PDT
        "Claude usage limit reached. Your limit will reset at Oct 6, 6pm.",
    ),
    ("Claude AI usage limit reached|1762952400", NOW, UTC, at(2025, 11, 12, 13, 0), "Claude AI usage limit reached"),
]


@pytest.mark.parametrize(("text", "now", "local", "resets_at", "message"), ISSUE_TEXTS)
def test_claude_1_0_texts_from_issues(
    text: str, now: datetime, local: tzinfo, resets_at: datetime, message: str
) -> None:
    assert text.strip() in read(ANTHROPICS)
    assert from_text(text, now, local) == UsageLimit("claude", message, resets_at, "", "text")


# --------------------------------------------------------------------------------------------------------------
# from_claude_event on the real stream-json lines

STREAMS = [
    # file, resetsAt, rateLimitType, sentence, reset read from the sentence, kind read from the sentence
    (
        "claude_stream_oauth_5h_utc.jsonl",
        1795226420,
        "five_hour",
        "You've hit your 5-hour limit · resets 2am (UTC)",
        at(2026, 11, 21, 2, 0),
        "five_hour",
    ),
    (
        "claude_stream_oauth_5h_new_york.jsonl",
        1795222831,
        "five_hour",
        "You've hit your 5-hour limit · resets 8pm (America/New_York)",
        at(2026, 11, 21, 1, 0),
        "five_hour",
    ),
    (
        "claude_stream_oauth_weekly.jsonl",
        1795395630,
        "seven_day",
        "You've hit your weekly limit · resets Nov 22, 8pm (America/New_York)",
        at(2026, 11, 23, 1, 0),
        "weekly",
    ),
    (
        "claude_stream_oauth_opus.jsonl",
        1795323630,
        "seven_day_opus",
        "You've hit your Opus limit · resets Nov 22, 12am (America/New_York)",
        at(2026, 11, 22, 5, 0),
        "opus",
    ),
]
LABELS = {"five_hour": "5-hour", "seven_day": "weekly", "seven_day_opus": "weekly Opus"}


@pytest.mark.parametrize(("name", "resets", "window", "sentence", "text_reset", "text_kind"), STREAMS)
def test_claude_stream_usage_limit_events(
    name: str, resets: int, window: str, sentence: str, text_reset: datetime, text_kind: str
) -> None:
    results = [from_claude_event(event, NOW, UTC) for event in events(name)]
    kinds = [event["type"] for event in events(name)]
    assert kinds == ["system", "rate_limit_event", "assistant", "result"]
    exact = epoch(resets)
    assert results == [
        None,
        UsageLimit(
            "claude",
            f"Claude {LABELS[window]} limit reached · resets {exact:%Y-%m-%d %H:%M} UTC",
            exact,
            window,
            "rate_limit_event",
        ),
        # the synthetic assistant event repeats the exact rate_limit_info in api_error_params
        UsageLimit("claude", sentence, exact, window, "api_error"),
        # the result event has only the sentence: the reset to the minute, the kind as the sentence names it
        UsageLimit("claude", sentence, text_reset, text_kind, "api_error"),
    ]


def test_claude_2_1_197_stream_without_api_error() -> None:
    results = [from_claude_event(event, NOW, UTC) for event in events("claude197_stream_oauth_session.jsonl")]
    sentence = "You've hit your session limit · resets 1am (UTC)"
    assert results == [
        None,  # system/init
        UsageLimit(
            "claude",
            "Claude 5-hour limit reached · resets 2026-11-21 01:00 UTC",
            epoch(1795222832),
            "five_hour",
            "rate_limit_event",
        ),
        UsageLimit("claude", sentence, at(2026, 11, 21, 1, 0), "session", "api_error"),  # only error: "rate_limit"
        UsageLimit("claude", sentence, at(2026, 11, 21, 1, 0), "session", "api_error"),
    ]


def test_claude_json_output_result_object() -> None:
    event = json.loads(read("claude_json_oauth_5h.json"))
    assert from_claude_event(event, NOW, UTC) == UsageLimit(
        "claude", "You've hit your 5-hour limit · resets 1am (UTC)", at(2026, 11, 21, 1, 0), "five_hour", "api_error"
    )


def test_claude_warning_stream() -> None:
    results = [from_claude_event(event, NOW, UTC) for event in events("claude_stream_oauth_warning.jsonl")]
    assert [r for r in results if r is not None] == [LimitWarning(0.92, epoch(1795226431), "five_hour")]


@pytest.mark.parametrize(
    "name", ["claude_stream_apikey_429_unified_headers.jsonl", "claude_stream_rate_limit_429.jsonl"]
)
def test_claude_plain_429_streams_are_not_usage_limits(name: str) -> None:
    """API-key runs: a 429 with error "rate_limit" but no usage_limit_reached and no limit sentence."""
    assert [from_claude_event(event, NOW, UTC) for event in events(name)] == [None] * len(events(name))


def rate_limit_event(**info: Any) -> dict[str, Any]:
    return {"type": "rate_limit_event", "rate_limit_info": info, "session_id": "s"}


def test_rate_limit_event_statuses() -> None:
    assert from_claude_event(rate_limit_event(status="allowed", resetsAt=1795226420), NOW, UTC) is None
    assert from_claude_event(rate_limit_event(status="rejected"), NOW, UTC) == UsageLimit(
        "claude", "Claude usage limit reached", None, "", "rate_limit_event"
    )
    assert from_claude_event(
        rate_limit_event(status="rejected", resetsAt=1795226420.0, rateLimitType="seven_day_sonnet"), NOW, UTC
    ) == UsageLimit(
        "claude",
        "Claude weekly Sonnet limit reached · resets 2026-11-21 02:00 UTC",
        epoch(1795226420),
        "seven_day_sonnet",
        "rate_limit_event",
    )
    assert from_claude_event(
        rate_limit_event(status="rejected", resetsAt="1795226420", rateLimitType="five_hour"), NOW, UTC
    ) == UsageLimit(
        "claude",
        "Claude 5-hour limit reached · resets 2026-11-21 02:00 UTC",
        epoch(1795226420),
        "five_hour",
        "rate_limit_event",
    )


@pytest.mark.parametrize("bad", [True, "soon", 1e300, math.nan, math.inf, -1e20, None, [1795226420], {"s": 1}])
def test_rejected_with_a_bad_reset_is_still_a_limit(bad: Any) -> None:
    limit = from_claude_event(rate_limit_event(status="rejected", resetsAt=bad, rateLimitType=7), NOW, UTC)
    assert limit == UsageLimit("claude", "Claude usage limit reached", None, "", "rate_limit_event")


def test_warning_utilization() -> None:
    def warning(**info: Any) -> object:
        return from_claude_event(rate_limit_event(status="allowed_warning", **info), NOW, UTC)

    assert warning(utilization=0.5) == LimitWarning(0.5, None, "")
    assert warning(utilization=1.7, rateLimitType="seven_day") == LimitWarning(1.0, None, "seven_day")
    assert warning(utilization=-3) == LimitWarning(0.0, None, "")
    assert warning(
        rateLimitType="five_hour", unifiedWindows={"five_hour": {"utilization": 0.8}}, resetsAt=1795226431
    ) == LimitWarning(0.8, epoch(1795226431), "five_hour")
    for bad in (None, "0.9", True, math.nan, math.inf, [0.9]):
        assert warning(utilization=bad) is None


# Claude's "You're out of extra usage · resets 9pm (Europe/Berlin)" (frankbria/ralph-claude-code#100): the plan's
# window and the extra usage bought on top of it are both spent, so it is a usage limit like "You've hit your limit".
EXTRA_USAGE = ("claude197_stream_extra_usage.jsonl", "claude_json_extra_usage.json")
EXTRA_SENTENCE = "You're out of extra usage · resets 9pm (Europe/Berlin)"
NINE_PM_BERLIN = at(2026, 11, 21, 20, 0)  # NOW is midnight in Berlin; 9pm CET is 20:00 UTC


def test_out_of_extra_usage_in_a_stream_without_a_rate_limit_event() -> None:
    found = [event["type"] for event in events(EXTRA_USAGE[0])]
    assert found == ["system", "assistant", "result"]  # no rate_limit_event: only the sentence says it
    limit = UsageLimit("claude", EXTRA_SENTENCE, NINE_PM_BERLIN, "extra_usage", "api_error")
    assert [from_claude_event(event, NOW, UTC) for event in events(EXTRA_USAGE[0])] == [None, limit, limit]
    assert from_claude_event(events(EXTRA_USAGE[0])[-1], NOW, UTC) == limit  # the result event alone says it too


def test_out_of_extra_usage_in_the_stream_parser() -> None:
    parser = StreamJsonParser(started_at=NOW)
    parser.feed(read(EXTRA_USAGE[0]).encode("utf-8"))
    result = parser.finish(ProcessOutcome(exit_code=1, duration_s=0.1))
    assert result.error_kind is ErrorKind.USAGE_LIMIT
    assert result.usage_limit is not None
    assert (result.usage_limit.message, result.usage_limit.resets_at) == (EXTRA_SENTENCE, NINE_PM_BERLIN)


def test_out_of_extra_usage_in_json_output_without_a_zone() -> None:
    event = json.loads(read(EXTRA_USAGE[1]))  # curly apostrophe, no zone: the agent's zone
    assert from_claude_event(event, NOW, BERLIN) == UsageLimit(
        "claude", "You’re out of extra usage · resets 9pm", NINE_PM_BERLIN, "extra_usage", "api_error"
    )
    assert from_text(read(EXTRA_USAGE[1]), NOW, UTC) == UsageLimit(
        "claude", "You’re out of extra usage · resets 9pm", at(2026, 11, 21, 21, 0), "extra_usage", "text"
    )


def test_api_error_without_a_sentence_still_counts() -> None:
    result = {"type": "result", "is_error": True, "api_error": "usage_limit_reached", "result": "\n  Out of juice \n"}
    assert from_claude_event(result, NOW, UTC) == UsageLimit("claude", "Out of juice", None, "", "api_error")
    bare = {"type": "result", "is_error": True, "api_error": "usage_limit_reached"}
    assert from_claude_event(bare, NOW, UTC) == UsageLimit(
        "claude", "Claude usage limit reached", None, "", "api_error"
    )
    assistant = {
        "type": "assistant",
        "message": {"content": [{"type": "text", "text": "limit"}]},
        "error": "rate_limit",
        "api_error": "usage_limit_reached",
        "api_error_params": {"rate_limit_info": {"status": "rejected", "resetsAt": 1795226420}},
    }
    assert from_claude_event(assistant, NOW, UTC) == UsageLimit("claude", "limit", epoch(1795226420), "", "api_error")


def test_the_agents_own_words_are_not_a_limit() -> None:
    """A successful result or an ordinary assistant reply that quotes the sentence is not the CLI reporting it."""
    sentence = "You've hit your 5-hour limit · resets 8pm (America/New_York)"
    ok_result = {"type": "result", "subtype": "success", "is_error": False, "result": sentence}
    reply = {
        "type": "assistant",
        "message": {"model": "claude-sonnet-5-5", "content": [{"type": "text", "text": sentence}]},
    }
    assert from_claude_event(ok_result, NOW, UTC) is None
    assert from_claude_event(reply, NOW, UTC) is None
    assert from_text(json.dumps(ok_result) + "\n" + json.dumps(reply), NOW, UTC) is None
    # an error result whose text is not a limit (auth, 429) is not one either
    auth = {"type": "result", "is_error": True, "result": "Invalid API key · Fix external API key"}
    assert from_claude_event(auth, NOW, UTC) is None


MALFORMED: list[Any] = [
    None,
    42,
    "rate_limit_event",
    [],
    {},
    {"type": 5},
    {"type": "rate_limit_event"},
    {"type": "rate_limit_event", "rate_limit_info": "rejected"},
    {"type": "rate_limit_event", "rate_limit_info": {"status": ["rejected"]}},
    {"type": "rate_limit_event", "rate_limit_info": {"status": None, "resetsAt": 1}},
    {"type": "rate_limit_event", "rate_limit_info": {"status": "allowed_warning"}},
    {"type": "rate_limit_event", "rate_limit_info": {"status": "allowed_warning", "unifiedWindows": [1]}},
    {"type": "assistant"},
    {"type": "assistant", "message": "You've hit your 5-hour limit · resets 8pm", "error": "rate_limit"},
    {"type": "assistant", "message": {"content": [1, None, {"text": 5}]}, "error": "rate_limit"},
    {"type": "assistant", "message": {"content": {"text": "x"}}, "error": "rate_limit"},
    {"type": "result", "is_error": "true", "result": "You've hit your 5-hour limit · resets 8pm (UTC)"},
    {"type": "result", "is_error": 1, "api_error": "usage_limit_reached"},
    {"type": "result", "is_error": True, "result": ["You've hit your 5-hour limit · resets 8pm (UTC)"]},
    {"type": "result", "is_error": True, "api_error": ["usage_limit_reached"]},
    {"type": "system", "subtype": "api_retry", "error_status": 429, "error": "rate_limit"},
]


@pytest.mark.parametrize("event", MALFORMED)
def test_malformed_events_are_none(event: Any) -> None:
    assert from_claude_event(event, NOW, UTC) is None


# --------------------------------------------------------------------------------------------------------------
# from_text: wordings, apostrophes, JSON, anchoring


@pytest.mark.parametrize(
    ("text", "now", "local", "expected"),
    [
        # curly and straight apostrophes, Claude and Codex alike
        (
            "You’ve hit your 5-hour limit · resets 8pm (America/New_York)",
            NOW,
            UTC,
            UsageLimit(
                "claude",
                "You’ve hit your 5-hour limit · resets 8pm (America/New_York)",
                at(2026, 11, 21, 1, 0),
                "five_hour",
                "text",
            ),
        ),
        (
            "You've hit your usage limit. Upgrade to Plus to continue using Codex (https://chatgpt.com/explore/plus), "
            "or try again at Nov 21st, 2026 1:04 AM.",
            NOW,
            UTC,
            UsageLimit(
                "codex",
                "You've hit your usage limit. Upgrade to Plus to continue using Codex "
                "(https://chatgpt.com/explore/plus), or try again at Nov 21st, 2026 1:04 AM.",
                at(2026, 11, 21, 1, 4),
                "",
                "text",
            ),
        ),
        # Codex leaves the date out on the same day, in the agent's zone
        (
            "ERROR: You’ve hit your usage limit. Try again at 1:04 AM.",
            at(2026, 11, 21, 5, 30),
            NEW_YORK,
            UsageLimit(
                "codex", "You’ve hit your usage limit. Try again at 1:04 AM.", at(2026, 11, 21, 6, 4), "", "text"
            ),
        ),
        (
            "■ You've hit your usage limit. Try again later.",
            NOW,
            UTC,
            UsageLimit("codex", "You've hit your usage limit. Try again later.", None, "", "text"),
        ),
        (
            "You've hit your usage limit for GPT-5.5. Switch to another model now, or try again at 3:05 AM.",
            NOW,
            UTC,
            UsageLimit(
                "codex",
                "You've hit your usage limit for GPT-5.5. Switch to another model now, or try again at 3:05 AM.",
                at(2026, 11, 21, 3, 5),
                "",
                "text",
            ),
        ),
        (
            "You've hit your usage limit. Try again in 2 days 3 hours 4 minutes.",
            NOW,
            UTC,
            UsageLimit(
                "codex",
                "You've hit your usage limit. Try again in 2 days 3 hours 4 minutes.",
                NOW + timedelta(days=2, hours=3, minutes=4),
                "",
                "text",
            ),
        ),
        # older Claude Code UI, both separators
        (
            "5-hour limit reached ∙ resets 3pm",
            NOW,
            NEW_YORK,
            UsageLimit("claude", "5-hour limit reached ∙ resets 3pm", at(2026, 11, 21, 20, 0), "five_hour", "text"),
        ),
        (
            "Weekly limit reached · resets 5am",
            NOW,
            UTC,
            UsageLimit("claude", "Weekly limit reached · resets 5am", at(2026, 11, 21, 5, 0), "weekly", "text"),
        ),
        (
            "Opus weekly limit reached ∙ resets Nov 24, 10am",
            NOW,
            UTC,
            UsageLimit(
                "claude", "Opus weekly limit reached ∙ resets Nov 24, 10am", at(2026, 11, 24, 10, 0), "opus", "text"
            ),
        ),
        # Claude's TUI, a limit without a name, a minute, a year, and no reset at all
        (
            "  ⎿  You've hit your session limit · resets 3:40pm (America/Chicago)",
            NOW,
            UTC,
            UsageLimit(
                "claude",
                "You've hit your session limit · resets 3:40pm (America/Chicago)",
                at(2026, 11, 21, 21, 40),
                "session",
                "text",
            ),
        ),
        (
            "You've hit your limit · resets 10pm (UTC)",
            NOW,
            UTC,
            UsageLimit("claude", "You've hit your limit · resets 10pm (UTC)", at(2026, 11, 21, 22, 0), "", "text"),
        ),
        (
            "You've hit your weekly limit · resets Jan 2, 2027, 9:30am (UTC)",
            NOW,
            UTC,
            UsageLimit(
                "claude",
                "You've hit your weekly limit · resets Jan 2, 2027, 9:30am (UTC)",
                at(2027, 1, 2, 9, 30),
                "weekly",
                "text",
            ),
        ),
        (
            "You've hit your Sonnet limit",
            NOW,
            UTC,
            UsageLimit("claude", "You've hit your Sonnet limit", None, "sonnet", "text"),
        ),
        (
            "You've hit your 5-hour limit · resets 99pm",  # a limit whose time makes no sense: no reset time
            NOW,
            UTC,
            UsageLimit("claude", "You've hit your 5-hour limit · resets 99pm", None, "five_hour", "text"),
        ),
        # Claude's extra usage spent too: either apostrophe, a date, a minute, a zone or none, or no reset at all
        (
            "You're out of extra usage · resets 9pm (Europe/Berlin)",
            NOW,
            UTC,
            UsageLimit("claude", EXTRA_SENTENCE, NINE_PM_BERLIN, "extra_usage", "text"),
        ),
        (
            "  ⎿  You’re out of extra usage · resets 9pm",
            NOW,
            NEW_YORK,
            UsageLimit(
                "claude", "You’re out of extra usage · resets 9pm", at(2026, 11, 21, 2, 0), "extra_usage", "text"
            ),
        ),
        (
            "Error: You're out of extra usage ∙ resets May 2, 2027, 8:40pm (Asia/Jerusalem)",
            NOW,
            UTC,
            UsageLimit(
                "claude",
                "You're out of extra usage ∙ resets May 2, 2027, 8:40pm (Asia/Jerusalem)",
                at(2027, 5, 2, 17, 40),
                "extra_usage",
                "text",
            ),
        ),
        (
            "You're out of extra usage",
            NOW,
            UTC,
            UsageLimit("claude", "You're out of extra usage", None, "extra_usage", "text"),
        ),
        # Gemini
        (
            "Error when talking to Gemini API Full report available at: /tmp/x.json TerminalQuotaError: "
            "You have exhausted your capacity on this model. Your quota will reset after 1h49m8s.",
            NOW,
            UTC,
            UsageLimit(
                "gemini",
                "You have exhausted your capacity on this model. Your quota will reset after 1h49m8s.",
                NOW + timedelta(hours=1, minutes=49, seconds=8),
                "",
                "text",
            ),
        ),
    ],
)
def test_wordings(text: str, now: datetime, local: tzinfo, expected: UsageLimit) -> None:
    assert from_text(text, now, local) == expected


def test_last_limit_wins() -> None:
    text = "\n".join(
        [
            "You've hit your 5-hour limit · resets 8pm (America/New_York)",
            "some other output",
            "ERROR: You’ve hit your usage limit. Try again at 1:04 AM. "
            "ERROR: You’ve hit your usage limit. Try again at 2:04 AM.",
            "done",
        ]
    )
    limit = from_text(text, NOW, UTC)
    assert limit is not None
    assert (limit.vendor, limit.resets_at) == ("codex", at(2026, 11, 21, 2, 4))
    assert from_text(text + "\nWeekly limit reached ∙ resets 5am", NOW, UTC) == UsageLimit(
        "claude", "Weekly limit reached ∙ resets 5am", at(2026, 11, 21, 5, 0), "weekly", "text"
    )


def test_json_lines_escaped_truncated_and_inside_logs() -> None:
    sentence = "You’ve hit your usage limit. Try again at 3:40 PM."
    expected = UsageLimit("codex", sentence, at(2026, 11, 21, 15, 40), "", "text")
    escaped = json.dumps({"type": "error", "message": sentence})  # \u2019
    assert "\\u2019" in escaped
    assert from_text(escaped, NOW, UTC) == expected
    failed = json.dumps({"type": "turn.failed", "error": {"message": sentence}})
    assert from_text("noise\n" + failed + "\n", NOW, UTC) == expected
    # a tail that starts mid-event (cannot be decoded) still gives the message field
    assert from_text(escaped[12:], NOW, UTC) == expected
    assert from_text(escaped[:-1], NOW, UTC) == expected
    # a log prefix before the JSON
    assert from_text("[2026-11-20T23:00:00.000Z] [INFO] " + escaped, NOW, UTC) == expected
    # opencode-style nesting: error.data.message
    nested = json.dumps({"type": "error", "error": {"name": "APIError", "data": {"message": sentence}}})
    assert from_text(nested, NOW, UTC) == expected
    # an agent message in codex's stream is the agent's reply, not the CLI's error
    reply = json.dumps({"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": sentence}})
    assert from_text(reply, NOW, UTC) is None
    command = json.dumps(
        {"type": "item.completed", "item": {"type": "command_execution", "aggregated_output": sentence}}
    )
    assert from_text(command, NOW, UTC) is None


def test_ansi_and_control_characters_are_cleaned() -> None:
    text = "\x1b[31m  ⎿  You've hit your session limit · resets 3pm (UTC)\x1b[0m\r\n"
    assert from_text(text, NOW, UTC) == UsageLimit(
        "claude", "You've hit your session limit · resets 3pm (UTC)", at(2026, 11, 21, 15, 0), "session", "text"
    )


def test_message_is_one_line_of_at_most_300_characters() -> None:
    advice = "Upgrade to Pro " + "and more " * 40
    limit = from_text(f"You’ve hit your usage limit. {advice}or try again at 1:04 AM.", NOW, UTC)
    assert limit is not None
    assert len(limit.message) <= 300
    assert "\n" not in limit.message
    assert limit.message.endswith("…")
    assert limit.resets_at == at(2026, 11, 21, 1, 4)


@pytest.mark.parametrize(
    "text",
    [
        "I added a usage limit reached message",
        "the function checks whether the rate limit is reached",
        "Usage limit reached? Then we wait for the reset.",
        'msg = "You\'ve hit your usage limit. Try again later."',
        '    assert limit.message == "You have exhausted your daily quota on this model."',
        "The CLI prints You've hit your session limit · resets 3pm when that happens.",
        "The CLI prints: You've hit your session limit · resets 3pm (UTC)",
        "+You've hit your 5-hour limit · resets 8pm (America/New_York)",
        "| You've hit your 5-hour limit · resets 8pm | claude |",
        "# Weekly limit reached ∙ resets 5am is what older versions print",
        "You've hit your fast limit",
        "Fast limit reached and temporarily disabled · resets in 4m",
        "Context limit reached · /compact or /clear to continue",
        "You've used 90% of your weekly limit · resets Nov 22, 8pm (America/New_York)",
        "Approaching usage limit · resets at 3pm",
        "API Error: Rate limit reached",
        "API Error: Request rejected (429) · Number of requests has exceeded your rate limit",
        "exceeded retry limit, last status: 429 Too Many Requests, request id: req_1",
        "Attempt 1 failed: Resource has been exhausted (e.g. check quota).",
        "You exceeded your current quota, please check your plan and billing details.",
        "Quota exceeded. Check your plan and billing details.",
        "The usage limit has been reached",
        "When you hit your limit, Claude says so.",
        "If you're out of extra usage · resets 9pm is printed, ralph waits.",
        "The CLI prints: You're out of extra usage · resets 9pm (Europe/Berlin)",
        "You're out of extra usage on this plan, so I used the cheaper model",
        "",
    ],
)
def test_prose_and_other_errors_are_not_limits(text: str) -> None:
    assert from_text(text, NOW, UTC) is None


# --------------------------------------------------------------------------------------------------------------
# parse_reset


@pytest.mark.parametrize(
    ("phrase", "now", "local", "expected"),
    [
        ("8pm (America/New_York)", NOW, UTC, at(2026, 11, 21, 1, 0)),
        ("Nov 22, 8pm (America/New_York)", NOW, UTC, at(2026, 11, 23, 1, 0)),
        ("5pm (Europe/Warsaw)", NOW, UTC, at(2026, 11, 21, 16, 0)),  # now is already midnight in Warsaw
        ("3pm", NOW, NEW_YORK, at(2026, 11, 21, 20, 0)),  # no zone: the agent's
        ("3pm", NOW, UTC, at(2026, 11, 21, 15, 0)),
        ("8:30pm", NOW, NEW_YORK, at(2026, 11, 21, 1, 30)),
        ("1am (UTC)", NOW, NEW_YORK, at(2026, 11, 21, 1, 0)),
        ("12am (America/New_York)", NOW, UTC, at(2026, 11, 21, 5, 0)),
        ("12pm", NOW, UTC, at(2026, 11, 21, 12, 0)),
        ("17:00", NOW, UTC, at(2026, 11, 21, 17, 0)),
        ("at 11:59 p.m.", NOW, UTC, at(2026, 11, 20, 23, 59)),
        ("Nov 21st, 2026 1:04 AM", NOW, UTC, at(2026, 11, 21, 1, 4)),
        ("Nov 21st, 2026 1:04 AM.", NOW, NEW_YORK, at(2026, 11, 21, 6, 4)),
        ("1:04 AM", NOW, UTC, at(2026, 11, 21, 1, 4)),
        ("November 22nd 8pm", NOW, UTC, at(2026, 11, 22, 20, 0)),
        ("Sept 3, 9am (UTC)", NOW, UTC, at(2027, 9, 3, 9, 0)),
        ("Jan 2, 2027, 9:30am (UTC)", NOW, UTC, at(2027, 1, 2, 9, 30)),
        ("1763766000", NOW, UTC, at(2025, 11, 21, 23, 0)),
        ("1763766000000", NOW, UTC, at(2025, 11, 21, 23, 0)),
        ("2026-11-21T01:04:21Z", NOW, UTC, at(2026, 11, 21, 1, 4, 21)),
        ("2026-11-21 01:04", NOW, NEW_YORK, at(2026, 11, 21, 6, 4)),
        ("in 2 hours 5 minutes", NOW, UTC, NOW + timedelta(hours=2, minutes=5)),
        ("in 2 hours", NOW.astimezone(NEW_YORK), UTC, NOW + timedelta(hours=2)),
        ("19h14m47s", NOW, UTC, NOW + timedelta(hours=19, minutes=14, seconds=47)),
        ("1:04 AM UTC", NOW, NEW_YORK, at(2026, 11, 21, 1, 4)),
        # unknown or unusable zone names: the agent's zone
        ("8pm (Mars/Olympus_Mons)", NOW, NEW_YORK, at(2026, 11, 21, 1, 0)),
        ("8pm (../../etc/passwd)", NOW, NEW_YORK, at(2026, 11, 21, 1, 0)),
        ("8pm (local time)", NOW, NEW_YORK, at(2026, 11, 21, 1, 0)),
        ("8pm ( )", NOW, NEW_YORK, at(2026, 11, 21, 1, 0)),
        # a naive now is UTC
        ("1am (UTC)", datetime(2026, 11, 20, 23, 0), UTC, at(2026, 11, 21, 1, 0)),
        # a fixed-offset local zone
        ("1:04 AM", NOW, timezone(timedelta(hours=5, minutes=30)), at(2026, 11, 21, 19, 34)),
    ],
)
def test_parse_reset(phrase: str, now: datetime, local: tzinfo, expected: datetime) -> None:
    result = parse_reset(phrase, now, local)
    assert result == expected
    assert result is not None and result.utcoffset() == timedelta(0)


def test_a_bare_time_is_the_next_occurrence_with_a_little_grace() -> None:
    # printed to the minute: half a minute past it is still today's
    assert parse_reset("1:04 AM", at(2026, 11, 21, 1, 4, 30), UTC) == at(2026, 11, 21, 1, 4)
    assert parse_reset("1:04 AM", at(2026, 11, 21, 1, 30), UTC) == at(2026, 11, 22, 1, 4)
    assert parse_reset("1:04 AM", at(2026, 11, 21, 1, 3), UTC) == at(2026, 11, 21, 1, 4)


def test_dst() -> None:
    # US clocks spring forward on Sunday 2026-03-08 at 2am: 8pm that evening is EDT (UTC-4)
    spring = at(2026, 3, 8, 6, 0)  # 1am EST
    assert parse_reset("8pm (America/New_York)", spring, UTC) == at(2026, 3, 9, 0, 0)
    assert parse_reset("8pm", at(2026, 3, 7, 12, 0), NEW_YORK) == at(2026, 3, 8, 1, 0)  # still EST
    # a wall time inside the gap resolves without error (fold=0: the offset before the change)
    assert parse_reset("2:30am (America/New_York)", at(2026, 3, 8, 5, 0), UTC) == at(2026, 3, 8, 7, 30)
    # they fall back on Sunday 2026-11-01 at 2am
    assert parse_reset("8pm (America/New_York)", at(2026, 10, 31, 23, 0), UTC) == at(2026, 11, 1, 0, 0)  # EDT
    assert parse_reset("8pm (America/New_York)", at(2026, 11, 1, 12, 0), UTC) == at(2026, 11, 2, 1, 0)  # EST
    assert parse_reset("Nov 2, 8pm (America/New_York)", at(2026, 10, 30, 12, 0), UTC) == at(2026, 11, 3, 1, 0)
    # an ambiguous wall time takes its first occurrence
    assert parse_reset("1:30am (America/New_York)", at(2026, 11, 1, 4, 0), UTC) == at(2026, 11, 1, 5, 30)
    # Europe changes on another day: 2026-10-25
    assert parse_reset("Oct 26, 5am", at(2026, 10, 24, 12, 0), BERLIN) == at(2026, 10, 26, 4, 0)
    assert parse_reset("Oct 24, 5pm", at(2026, 10, 24, 12, 0), BERLIN) == at(2026, 10, 24, 15, 0)


def test_year_rollover() -> None:
    assert parse_reset("Jan 2, 8pm (UTC)", at(2026, 12, 31, 22, 0), UTC) == at(2027, 1, 2, 20, 0)
    assert parse_reset("12:30 AM", at(2026, 12, 31, 23, 30), UTC) == at(2027, 1, 1, 0, 30)
    assert parse_reset("Jan 1, 12am", at(2026, 12, 31, 23, 30), NEW_YORK) == at(2027, 1, 1, 5, 0)
    # a date passed by less than a day is that date, not next year's
    assert parse_reset("Dec 31, 8pm (UTC)", at(2027, 1, 1, 0, 30), UTC) == at(2026, 12, 31, 20, 0)
    assert parse_reset("Nov 20, 8pm (UTC)", NOW, UTC) == at(2026, 11, 20, 20, 0)
    # passed by more than a day: next year
    assert parse_reset("Nov 19, 8pm (UTC)", NOW, UTC) == at(2027, 11, 19, 20, 0)
    # the day has no date this year
    assert parse_reset("Feb 29, 8pm (UTC)", NOW, UTC) == at(2028, 2, 29, 20, 0)
    # an explicit year never rolls
    assert parse_reset("Dec 31st, 2026 11:59 PM", at(2027, 6, 1), UTC) == at(2026, 12, 31, 23, 59)


@pytest.mark.parametrize(
    "phrase",
    [
        "",
        "   ",
        "soon",
        "tomorrow",
        "8",
        "25pm",
        "13pm",
        "0am",
        "8:75pm",
        "24:00",
        "99:99",
        "Foo 22, 8pm",
        "Mayo 5, 8pm",
        "Nov 31, 2026 8pm",
        "Feb 30, 8pm",
        "8pm (",
        "123",
        "in a while",
        "x" * 500,
        "1:04 AM" + " " * 200 + "x",
    ],
)
def test_nonsense_is_none(phrase: str) -> None:
    assert parse_reset(phrase, NOW, UTC) is None


def test_out_of_range_instants_are_none() -> None:
    assert parse_reset("8pm", datetime.max.replace(tzinfo=UTC), UTC) is None
    assert parse_reset("in 9999999 days", NOW, UTC) is None
    assert parse_reset("9999999999999", NOW, UTC) is not None  # year 2286, fine
    assert parse_reset("Jan 2, 8pm", datetime.min.replace(tzinfo=UTC), UTC) is not None
    assert parse_reset("Jan 2, 8pm", datetime.max.replace(tzinfo=UTC), UTC) is None


# --------------------------------------------------------------------------------------------------------------
# Nothing raises

ZONES = st.sampled_from([UTC, NEW_YORK, BERLIN, ZoneInfo("Australia/Lord_Howe"), timezone(timedelta(hours=-12))])
NOWS = st.datetimes(timezones=st.sampled_from([UTC, NEW_YORK, timezone(timedelta(hours=14))])) | st.datetimes()
FRAGMENTS = st.sampled_from(
    [
        "You've hit your ",
        "You’ve hit your ",
        "5-hour ",
        "weekly ",
        "usage ",
        "limit",
        " limit reached",
        " · resets ",
        " ∙ resets ",
        "Weekly",
        ". ",
        "Try again at ",
        "or try again in ",
        "Claude AI usage limit reached|",
        "Claude usage limit reached. Your limit will reset at ",
        "You have exhausted your capacity on this model.",
        " Your quota will reset after ",
        "You have exhausted your daily quota on this model.",
        "Nov ",
        "Feb 29",
        "21st, ",
        "2026 ",
        "1:04 AM",
        "8pm",
        "12am",
        "99",
        "1h2m3s",
        "2 days ",
        "(America/New_York)",
        "(Nope/Zone)",
        "(",
        ")",
        "1795226420",
        "99999999999999",
        "{",
        "}",
        '"message":',
        '"error":{',
        '"result":',
        '"is_error":true,',
        '"',
        "\\u2019",
        "\\",
        "\n",
        "ERROR: ",
        "  ⎿  ",
        "\x1b[31m",
        "[",
    ]
)
SENTENCE_SOUP = st.lists(FRAGMENTS | st.text(max_size=4), max_size=40).map("".join)


@given(st.text() | SENTENCE_SOUP, NOWS, ZONES)
def test_from_text_never_raises(text: str, now: datetime, local: tzinfo) -> None:
    limit = from_text(text, now, local)
    assert limit is None or isinstance(limit, UsageLimit)
    if limit is not None:
        assert len(limit.message) <= 300
        assert "\n" not in limit.message
        assert limit.resets_at is None or limit.resets_at.utcoffset() == timedelta(0)


@given(st.text(max_size=200) | SENTENCE_SOUP, NOWS, ZONES)
def test_parse_reset_never_raises(phrase: str, now: datetime, local: tzinfo) -> None:
    result = parse_reset(phrase, now, local)
    assert result is None or result.utcoffset() == timedelta(0)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20) | SENTENCE_SOUP,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
EVENT_KEYS = st.sampled_from(
    [
        "type",
        "rate_limit_info",
        "status",
        "resetsAt",
        "rateLimitType",
        "utilization",
        "unifiedWindows",
        "message",
        "content",
        "text",
        "error",
        "api_error",
        "api_error_params",
        "is_error",
        "result",
        "is_api_error_message",
    ]
)
EVENTS = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | SENTENCE_SOUP
    | st.sampled_from(
        ["rate_limit_event", "assistant", "result", "rejected", "allowed_warning", "usage_limit_reached"]
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(EVENT_KEYS, inner, max_size=6),
    max_leaves=25,
)


@given(EVENTS | JSON, NOWS, ZONES)
def test_from_claude_event_never_raises(event: Any, now: datetime, local: tzinfo) -> None:
    result = from_claude_event(event, now, local)
    assert result is None or isinstance(result, UsageLimit | LimitWarning)
    if isinstance(result, LimitWarning):
        assert 0.0 <= result.utilization <= 1.0
    # and the same event, as a JSON line inside a text, never breaks from_text
    try:
        line = json.dumps(event)
    except ValueError:
        return
    from_text(line, now, local)

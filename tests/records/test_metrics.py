"""ralph_metrics.jsonl: seed 004's line schema, appends that survive a crash, tolerant reading, the summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ralphloop.core.errors import RalphError
from ralphloop.core.limits import UsageLimit
from ralphloop.core.protocols import AgentResult, TokenUsage
from ralphloop.records.metrics import METRICS_NAME, append_metrics, metrics_line, read_metrics
from ralphloop.records.metrics_text import clock, format_iteration, format_summary, percent
from ralphloop.records.summary import cache_hit_rate, summarize

SEED_USAGE = TokenUsage(input_tokens=12500, output_tokens=850, cache_creation_tokens=5000, cache_read_tokens=10000)


def make_result(**changes: Any) -> AgentResult:
    values: dict[str, Any] = {
        "final_text": "done",
        "exit_code": 0,
        "duration_s": 45.04,
        "failed": False,
        "model": "claude-opus-4-5-20251101",
        "cost_usd": 0.0151,
        "usage": SEED_USAGE,
        "num_turns": 7,
        "session_id": "3f2c9a54-session",
        "stop_reason": "end_turn",
    }
    values.update(changes)
    return AgentResult(**values)


def make_line(iteration: int = 1, result: AgentResult | None = None, **changes: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "iteration": iteration,
        "timestamp": "2026-01-16T12:34:56Z",
        "task_id": "S-1",
        "outcome": "complete",
        "agent": "claude",
        "result": result or make_result(),
        "files_changed": 3,
    }
    values.update(changes)
    return metrics_line(**values)


def write_lines(path: Path, *lines: str, newline_at_end: bool = True) -> Path:
    path.write_text("\n".join(lines) + ("\n" if newline_at_end else ""), encoding="utf-8")
    return path


def dump(line: dict[str, Any]) -> str:
    return json.dumps(line, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------- metrics_line


def test_metrics_line_has_the_seed_004_schema_in_order() -> None:
    line = make_line()

    assert list(line) == [
        "iteration",
        "timestamp",
        "duration_seconds",
        "model",
        "stop_reason",
        "usage",
        "files_changed",
        "success",
        "exit_code",
        "cost_usd",
        "num_turns",
        "session_id",
        "task_id",
        "outcome",
        "agent",
        "counted",
        "task_title",
        "wall_seconds",
        "run_id",
        "max_cost_usd",
        "windows",
        "window_caps",
    ]
    assert line["usage"] == {
        "input_tokens": 12500,
        "output_tokens": 850,
        "cache_creation_tokens": 5000,
        "cache_read_tokens": 10000,
        "total_tokens": 13350,  # input + output, as the seed counts it
    }
    assert list(line["usage"]) == [
        "input_tokens",
        "output_tokens",
        "cache_creation_tokens",
        "cache_read_tokens",
        "total_tokens",
    ]
    assert line["iteration"] == 1
    assert line["timestamp"] == "2026-01-16T12:34:56Z"
    assert line["duration_seconds"] == 45.0
    assert line["model"] == "claude-opus-4-5-20251101"
    assert line["stop_reason"] == "end_turn"
    assert line["files_changed"] == 3
    assert line["success"] is True
    assert line["exit_code"] == 0
    assert line["cost_usd"] == 0.0151
    assert line["num_turns"] == 7
    assert line["session_id"] == "3f2c9a54-session"
    assert (line["task_id"], line["outcome"], line["agent"]) == ("S-1", "complete", "claude")


@pytest.mark.parametrize(("seconds", "rounded"), [(45.04, 45.0), (12.36, 12.4), (0.04, 0.0), (3600.25, 3600.2)])
def test_duration_is_rounded_to_a_tenth_of_a_second(seconds: float, rounded: float) -> None:
    assert make_line(result=make_result(duration_s=seconds))["duration_seconds"] == rounded


def test_unknown_usage_is_null_not_zero() -> None:
    result = AgentResult(final_text="", exit_code=0, duration_s=3.0, failed=False)  # a command agent

    line = make_line(result=result, agent="command", outcome="in-progress")

    assert line["usage"] == dict.fromkeys(
        ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens", "total_tokens")
    )
    assert line["cost_usd"] is None
    assert line["num_turns"] is None
    assert line["session_id"] is None
    assert line["model"] is None
    assert line["stop_reason"] is None
    assert json.loads(dump(line))["usage"]["input_tokens"] is None


def test_zero_usage_stays_zero() -> None:
    line = make_line(result=make_result(usage=TokenUsage()))
    assert line["usage"] == dict.fromkeys(line["usage"], 0)


LIMIT = UsageLimit("claude", "You've hit your limit", None)


@pytest.mark.parametrize(
    ("changes", "success"),
    [
        ({}, True),
        ({"failed": True, "exit_code": 1}, False),
        ({"interrupted": True, "exit_code": None}, False),
        ({"usage_limit": LIMIT}, False),
        ({"exit_code": 3}, True),  # the rule is failed/interrupted/usage limit, not the exit code alone
    ],
)
def test_success_rule(changes: dict[str, Any], success: bool) -> None:
    assert make_line(result=make_result(**changes))["success"] is success


# ---------------------------------------------------------------- append_metrics


def test_append_writes_one_compact_line_per_call(tmp_path: Path) -> None:
    path = tmp_path / METRICS_NAME
    first = make_line(1, result=make_result(model="modèle", session_id="é"))

    append_metrics(path, first)
    append_metrics(path, make_line(2))

    text = path.read_text(encoding="utf-8")
    assert text == dump(first) + "\n" + dump(make_line(2)) + "\n"
    assert "modèle" in text  # ensure_ascii=False
    assert ": " not in text.split("\n")[1] and ", " not in text.split("\n")[1]


def test_append_after_a_cut_line_starts_a_new_line(tmp_path: Path) -> None:
    path = tmp_path / METRICS_NAME
    append_metrics(path, make_line(1))
    whole = path.read_bytes()
    cut = dump(make_line(2))[:40]
    with path.open("ab") as handle:
        handle.write(cut.encode())  # a crash in the middle of the next write

    append_metrics(path, make_line(3))

    assert path.read_bytes() == whole + cut.encode() + b"\n" + dump(make_line(3)).encode() + b"\n"
    read = read_metrics(path)
    assert [line["iteration"] for line in read.lines] == [1, 3]
    assert read.skipped == [(2, "an unfinished line (cut short by a crash?)")]


def test_append_to_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / METRICS_NAME
    path.write_bytes(b"")
    append_metrics(path, make_line(1))
    assert path.read_text() == dump(make_line(1)) + "\n"


# ---------------------------------------------------------------- read_metrics


def test_read_returns_the_lines(tmp_path: Path) -> None:
    path = write_lines(tmp_path / METRICS_NAME, dump(make_line(1)), dump(make_line(2)))
    read = read_metrics(path)
    assert read.lines == [make_line(1), make_line(2)]
    assert read.skipped == []


def test_read_a_missing_file_says_no_metrics_yet(tmp_path: Path) -> None:
    path = tmp_path / METRICS_NAME
    with pytest.raises(RalphError) as caught:
        read_metrics(path)
    assert str(caught.value) == f"{path}: no metrics yet (no iteration has finished)"


def test_read_an_empty_file_gives_no_lines(tmp_path: Path) -> None:
    path = tmp_path / METRICS_NAME
    path.write_bytes(b"")
    assert read_metrics(path).lines == []


def test_a_truncated_last_line_is_skipped(tmp_path: Path) -> None:
    good = [dump(make_line(1)), dump(make_line(2))]
    path = write_lines(tmp_path / METRICS_NAME, *good, dump(make_line(3))[:57], newline_at_end=False)

    read = read_metrics(path)

    assert [line["iteration"] for line in read.lines] == [1, 2]
    assert read.skipped == [(3, "an unfinished last line (cut short by a crash?)")]


def test_a_last_line_without_newline_that_is_whole_is_read(tmp_path: Path) -> None:
    path = write_lines(tmp_path / METRICS_NAME, dump(make_line(1)), dump(make_line(2)), newline_at_end=False)
    read = read_metrics(path)
    assert [line["iteration"] for line in read.lines] == [1, 2]
    assert read.skipped == []


def test_a_last_line_cut_inside_a_multibyte_character_is_skipped(tmp_path: Path) -> None:
    line = dump(make_line(2, task_id="S-é"))
    data = line.encode()
    cut = data[: data.index("é".encode()) + 1]  # half of the é
    path = tmp_path / METRICS_NAME
    path.write_bytes(dump(make_line(1)).encode() + b"\n" + cut)

    read = read_metrics(path)

    assert [line["iteration"] for line in read.lines] == [1]
    assert [number for number, _ in read.skipped] == [2]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("not json at all", "not valid JSON (Expecting value at column 1)"),
        ('{"iteration": 2, oops}', "not valid JSON (Expecting property name enclosed in double quotes at column 18)"),
        ("[1, 2]", "not a metrics line (an array, not an object)"),
        ("42", "not a metrics line (an integer, not an object)"),
        ('{"duration_seconds": 1, "success": true}', 'not a metrics line ("iteration" is missing)'),
        ('{"iteration": null, "duration_seconds": 1, "success": true}', 'not a metrics line ("iteration" is null)'),
        (
            '{"iteration": "2", "duration_seconds": 1, "success": true}',
            'not a metrics line ("iteration" is a string, expected an integer)',
        ),
        (
            '{"iteration": 2, "duration_seconds": true, "success": true}',
            'not a metrics line ("duration_seconds" is a boolean, expected a number)',
        ),
        (
            '{"iteration": 2, "duration_seconds": 1, "success": "yes"}',
            'not a metrics line ("success" is a string, expected a boolean)',
        ),
        (
            '{"iteration": 2, "duration_seconds": 1, "success": true, "usage": [1]}',
            'not a metrics line ("usage" is an array, expected an object)',
        ),
        (
            '{"iteration": 2, "duration_seconds": 1, "success": true, "usage": {"input_tokens": 1.5}}',
            'not a metrics line ("usage.input_tokens" is a number, expected an integer)',
        ),
        (
            '{"iteration": 2, "duration_seconds": 1, "success": true, "model": 7}',
            'not a metrics line ("model" is an integer, expected a string)',
        ),
    ],
)
def test_a_malformed_line_is_an_error_naming_the_file_and_line(tmp_path: Path, bad: str, message: str) -> None:
    path = write_lines(tmp_path / METRICS_NAME, dump(make_line(1)), bad, dump(make_line(3)))

    with pytest.raises(RalphError) as caught:
        read_metrics(path)

    assert str(caught.value) == f"{path}:2: {message}"
    assert "\n" not in str(caught.value)


def test_a_malformed_last_line_with_a_newline_is_an_error(tmp_path: Path) -> None:
    path = write_lines(tmp_path / METRICS_NAME, dump(make_line(1)), "garbage")
    with pytest.raises(RalphError, match=r":2: not valid JSON"):
        read_metrics(path)


def test_a_whole_last_line_of_the_wrong_shape_is_an_error_even_without_newline(tmp_path: Path) -> None:
    path = write_lines(tmp_path / METRICS_NAME, dump(make_line(1)), '{"iteration": "x"}', newline_at_end=False)
    with pytest.raises(RalphError, match=r":2: not a metrics line"):
        read_metrics(path)


@pytest.mark.parametrize("debris", [b"\x00" * 300, dump(make_line(2))[:50].encode() + b"\x00" * 200])
def test_nul_bytes_left_by_a_power_cut_are_skipped_last_or_not(tmp_path: Path, debris: bytes) -> None:
    path = tmp_path / METRICS_NAME
    path.write_bytes(dump(make_line(1)).encode() + b"\n" + debris)
    assert [number for number, _ in read_metrics(path).skipped] == [2]

    append_metrics(path, make_line(3))

    read = read_metrics(path)
    assert [line["iteration"] for line in read.lines] == [1, 3]
    assert read.skipped == [(2, "an unfinished line (cut short by a crash?)")]


def test_blank_lines_and_crlf_are_tolerated(tmp_path: Path) -> None:
    path = tmp_path / METRICS_NAME
    path.write_bytes(f"{dump(make_line(1))}\r\n\n   \n{dump(make_line(2))}\r\n".encode())
    read = read_metrics(path)
    assert [line["iteration"] for line in read.lines] == [1, 2]
    assert read.skipped == []


def test_a_line_separator_inside_a_string_is_not_a_line_break(tmp_path: Path) -> None:
    line = make_line(1, task_id="S-1\u2028\u2029\x85")  # str.splitlines() would split here
    path = tmp_path / METRICS_NAME
    append_metrics(path, line)
    assert read_metrics(path).lines == [line]


def test_unknown_fields_and_missing_optional_fields_are_accepted(tmp_path: Path) -> None:
    seed_line = {  # what seed 004's ralph.sh writes: no cost, no outcome, no agent
        "iteration": 1,
        "timestamp": "2026-01-16T12:34:56Z",
        "duration_seconds": 45,
        "model": "claude-opus-4-5-20251101",
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 2, "cache_creation_tokens": 0, "cache_read_tokens": 0},
        "files_changed": 3,
        "success": True,
        "exit_code": 0,
        "later_field": {"anything": [1]},
    }
    path = write_lines(tmp_path / METRICS_NAME, json.dumps(seed_line))
    assert read_metrics(path).lines == [seed_line]


def test_read_a_large_file(tmp_path: Path) -> None:
    count = 100_000
    text = dump(make_line(1))
    path = tmp_path / METRICS_NAME
    path.write_text((text + "\n") * count, encoding="utf-8")

    read = read_metrics(path)
    summary = summarize(read.lines)

    assert len(read.lines) == count
    assert summary.iterations == count
    assert summary.total_tokens == 13350 * count
    assert summary.files_changed == 3 * count


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=1), task=st.text(max_size=8), cost=st.one_of(st.none(), st.floats(0, 100)))
def test_any_cut_of_a_line_is_skipped_last_or_not(tmp_path: Path, cut: int, task: str, cost: float | None) -> None:
    """A crash can stop a write at any byte; a later append ends that line and adds a whole one."""
    line = make_line(2, task_id=task, result=make_result(cost_usd=cost))
    data = dump(line).encode()
    cut %= len(data)
    if cut == 0:
        cut = 1
    path = tmp_path / "cut.jsonl"
    path.write_bytes(dump(make_line(1)).encode() + b"\n" + data[:cut])

    read = read_metrics(path)
    assert [line["iteration"] for line in read.lines] == [1]
    assert [number for number, _ in read.skipped] == [2]

    append_metrics(path, make_line(3))
    read = read_metrics(path)
    assert [line["iteration"] for line in read.lines] == [1, 3]
    assert [number for number, _ in read.skipped] == [2]


# ---------------------------------------------------------------- summary


def test_cache_hit_rate_is_the_share_of_prompt_tokens_read_from_the_cache() -> None:
    # The seed's example: read / (input + created + read), not the seed's read / input (80%).
    assert cache_hit_rate(12500, 5000, 10000) == pytest.approx(100 * 10000 / 27500)
    # Where the seed's formula goes wrong: most of the prompt cached. read / input would be 500%.
    rate = cache_hit_rate(2000, 0, 10000)
    assert rate == pytest.approx(100 * 10000 / 12000)
    assert rate is not None and 0 <= rate <= 100
    assert cache_hit_rate(0, 0, 5000) == 100.0
    assert cache_hit_rate(5000, 0, 0) == 0.0
    assert cache_hit_rate(0, 0, 0) is None


def test_summarize_totals_and_averages() -> None:
    lines = [
        make_line(1, result=make_result(duration_s=38.0), files_changed=2),
        make_line(
            2,
            result=make_result(
                duration_s=52.0,
                failed=True,
                exit_code=1,
                cost_usd=0.0049,
                usage=TokenUsage(2000, 150, 0, 10000),
                model="claude-sonnet-4-5",
            ),
            outcome="failed",
            files_changed=0,
        ),
        make_line(3, result=make_result(duration_s=45.0), files_changed=4),
    ]

    summary = summarize(lines, max_iterations=20)

    assert summary.iterations == 3
    assert summary.max_iterations == 20
    assert summary.successes == 2
    assert summary.success_rate == pytest.approx(200 / 3)
    assert summary.duration_total_s == 135.0
    assert summary.duration_avg_s == 45.0
    assert (summary.duration_min_s, summary.duration_max_s) == (38.0, 52.0)
    assert summary.token_iterations == 3
    assert summary.input_tokens == 12500 * 2 + 2000
    assert summary.output_tokens == 850 * 2 + 150
    assert summary.total_tokens == summary.input_tokens + summary.output_tokens
    assert summary.tokens_avg == pytest.approx(summary.total_tokens / 3)
    assert summary.cache_creation_tokens == 10000
    assert summary.cache_read_tokens == 30000
    assert summary.cache_hit_rate == pytest.approx(100 * 30000 / (27000 + 10000 + 30000))
    assert summary.cost_usd == pytest.approx(0.0151 * 2 + 0.0049)
    assert summary.cost_avg_usd == pytest.approx((0.0151 * 2 + 0.0049) / 3)
    assert summary.files_changed == 6
    assert summary.files_avg == 2.0
    assert summary.outcomes == (("complete", 2), ("failed", 1))
    assert summary.models == ("claude-opus-4-5-20251101", "claude-sonnet-4-5")


def test_lines_without_usage_do_not_count_toward_token_figures() -> None:
    unknown = AgentResult(final_text="", exit_code=0, duration_s=10.0, failed=False)
    lines = [make_line(1), make_line(2, result=unknown, agent="command"), make_line(3, result=unknown)]

    summary = summarize(lines)

    assert summary.iterations == 3
    assert summary.token_iterations == 1
    assert summary.total_tokens == 13350
    assert summary.tokens_avg == 13350  # over the one line that reported tokens, not over 3
    assert summary.cost_iterations == 1
    assert summary.cost_avg_usd == pytest.approx(0.0151)
    assert summary.models == ("claude-opus-4-5-20251101",)


def test_nothing_reported_gives_none_not_zero() -> None:
    unknown = AgentResult(final_text="", exit_code=0, duration_s=10.0, failed=False)
    summary = summarize([make_line(1, result=unknown)])

    assert summary.token_iterations == 0
    assert summary.input_tokens is None
    assert summary.total_tokens is None
    assert summary.tokens_avg is None
    assert summary.cache_hit_rate is None
    assert summary.cost_usd is None
    assert summary.models == ()
    assert summary.success_rate == 100.0


def test_summarize_no_lines() -> None:
    summary = summarize([])
    assert summary.iterations == 0
    assert summary.success_rate is None
    assert summary.duration_total_s == 0
    assert summary.duration_avg_s is None
    assert summary.duration_min_s is None
    assert summary.files_changed is None
    assert summary.outcomes == ()


def test_summarize_seed_lines_without_ralph_fields() -> None:
    seed = {"iteration": 1, "duration_seconds": 45, "success": True, "usage": {"input_tokens": 10, "output_tokens": 5}}
    summary = summarize([seed])
    assert summary.outcomes == (("unknown", 1),)
    assert summary.total_tokens == 15
    assert summary.cache_read_tokens == 0
    assert summary.files_changed is None


def test_summary_to_json() -> None:
    lines = [make_line(n, result=make_result(duration_s=n / 10)) for n in (1, 2, 3)]

    body = summarize(lines, max_iterations=5).to_json()

    assert json.loads(json.dumps(body)) == body
    assert body["iterations"] == 3
    assert body["max_iterations"] == 5
    assert body["success_rate"] == 100.0
    assert body["duration_seconds"] == {"total": 0.6, "average": 0.2, "min": 0.1, "max": 0.3}  # not 0.6000000000000001
    assert body["tokens"] == {
        "iterations_reported": 3,
        "input": 37500,
        "output": 2550,
        "total": 40050,
        "average": 13350.0,
        "cache_creation": 15000,
        "cache_read": 30000,
        "cache_hit_rate": 36.4,
    }
    assert body["cost_usd"] == {"iterations_reported": 3, "total": 0.0453, "average": 0.0151}
    assert body["files_changed"] == {"iterations_reported": 3, "total": 9, "average": 3.0}
    assert body["outcomes"] == {"complete": 3}
    assert body["models"] == ["claude-opus-4-5-20251101"]


def test_summary_to_json_with_nothing() -> None:
    body = summarize([]).to_json()
    assert body["success_rate"] is None
    assert body["tokens"]["total"] is None
    assert body["tokens"]["cache_hit_rate"] is None
    assert body["cost_usd"]["total"] is None


# ---------------------------------------------------------------- display


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0m 0s"), (0.4, "0m 0s"), (45, "0m 45s"), (44.6, "0m 45s"), (450, "7m 30s"), (3725, "1h 2m 5s")],
)
def test_clock(seconds: float, text: str) -> None:
    assert clock(seconds) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "N/A"), (0.0, "0%"), (80.0, "80%"), (36.36, "36.4%"), (100.0, "100%"), (99.96, ">99.9%"), (0.01, "<0.1%")],
)
def test_percent(value: float | None, text: str) -> None:
    assert percent(value) == text


def test_format_iteration_the_seed_example() -> None:
    assert format_iteration(make_line()) == (
        "--- Iteration Metrics ---\n"
        "Duration: 0m 45s\n"
        "Model: claude-opus-4-5-20251101\n"
        "Status: end_turn\n"
        "Input tokens: 12,500\n"
        "Output tokens: 850\n"
        "Total tokens: 13,350\n"
        "Cache created: 5,000 tokens\n"
        "Cache read: 10,000 tokens (36.4% hit rate)\n"
        "Cost: $0.0151\n"
        "Files changed: 3\n"
        "Success: ✓"
    )


def test_format_iteration_with_nothing_reported() -> None:
    result = AgentResult(final_text="", exit_code=1, duration_s=125.0, failed=True)
    assert format_iteration(make_line(result=result, files_changed=0)) == (
        "--- Iteration Metrics ---\n"
        "Duration: 2m 5s\n"
        "Model: not reported\n"
        "Status: not reported\n"
        "Tokens: not reported\n"
        "Cost: not reported\n"
        "Files changed: 0\n"
        "Success: ✗"
    )


def test_format_iteration_hit_rate_is_na_without_prompt_tokens() -> None:
    text = format_iteration(make_line(result=make_result(usage=TokenUsage(0, 12, 0, 0))))
    assert "Cache read: 0 tokens (N/A hit rate)" in text.splitlines()


def test_format_iteration_strips_escapes_from_agent_values() -> None:
    text = format_iteration(make_line(result=make_result(model="evil\x1b[2J\x1b]0;title\x07model")))
    assert "\x1b" not in text
    assert "Model: evilmodel" in text.splitlines()


def test_format_summary_the_seed_shape() -> None:
    lines = [
        make_line(1, result=make_result(duration_s=38.0), files_changed=2),
        make_line(2, result=make_result(duration_s=52.0, failed=True, exit_code=1), outcome="failed", files_changed=3),
    ]

    text = format_summary(summarize(lines, max_iterations=20), metrics_path=".ralph/feat/ralph_metrics.jsonl")

    assert text == (
        "==================================================\n"
        "                  FINAL SUMMARY\n"
        "==================================================\n"
        "\n"
        "Iterations:\n"
        "  Completed:       2 / 20\n"
        "  Success Rate:    50%\n"
        "  Outcomes:        1 complete, 1 failed\n"
        "  Models:          claude-opus-4-5-20251101\n"
        "\n"
        "Duration:\n"
        "  Total:           1m 30s\n"
        "  Average:         0m 45s per iteration\n"
        "  Min:             0m 38s\n"
        "  Max:             0m 52s\n"
        "\n"
        "Token Usage:\n"
        "  Total Input:     25,000 tokens\n"
        "  Total Output:    1,700 tokens\n"
        "  Total:           26,700 tokens\n"
        "  Average:         13,350 tokens per iteration\n"
        "\n"
        "Cache Performance:\n"
        "  Total Created:   10,000 tokens\n"
        "  Total Read:      20,000 tokens\n"
        "  Overall Hit Rate: 36.4%\n"
        "\n"
        "Cost:\n"
        "  Total:           $0.0302\n"
        "  Average:         $0.0151 per iteration\n"
        "\n"
        "Files Changed:\n"
        "  Total:           5 files\n"
        "  Average:         2.5 files per iteration\n"
        "\n"
        "ℹ  Metrics log saved to: .ralph/feat/ralph_metrics.jsonl"
    )
    assert all(len(line) <= 50 or line.startswith("ℹ") for line in text.splitlines())


def test_format_summary_without_max_or_path() -> None:
    text = format_summary(summarize([make_line(1)]))
    assert "  Completed:       1" in text.splitlines()
    assert "Metrics log" not in text
    assert text.splitlines()[-1] == "  Average:         3 files per iteration"


def test_format_summary_with_partly_reported_values() -> None:
    unknown = AgentResult(final_text="", exit_code=0, duration_s=10.0, failed=False)
    lines = [make_line(1, files_changed=1), make_line(2, result=unknown), make_line(3, result=unknown)]

    text = format_summary(summarize(lines)).splitlines()

    assert "  Average:         13,350 tokens per iteration (of 1 iteration that reported tokens)" in text
    assert "  Average:         $0.0151 per iteration (of 1 iteration that reported a cost)" in text
    assert "  Total:           7 files" in text  # 1 + 3 + 3: every line reported its files
    assert "  Average:         2.3 files per iteration" in text


def test_format_summary_with_nothing() -> None:
    text = format_summary(summarize([])).splitlines()
    assert "  Completed:       0" in text
    assert "  Success Rate:    N/A" in text
    assert "  Total:           0m 0s" in text
    assert "  Average:         N/A" in text
    assert "Token Usage:       not reported by the agent" in text
    assert "Cost:              not reported by the agent" in text
    assert "  Total:           not reported" in text  # files changed
    assert not any(line.startswith("  Total Input:") or line.startswith("  Overall Hit Rate:") for line in text)
    assert not any(line.startswith("  Outcomes:") or line.startswith("  Models:") for line in text)


def test_format_summary_counts_are_grouped_not_scientific() -> None:
    many = [make_line(n, result=make_result(cost_usd=12.5)) for n in range(1, 1201)]
    text = format_summary(summarize(many)).splitlines()
    assert "  Completed:       1,200" in text
    assert "  Total Input:     15,000,000 tokens" in text
    assert "  Total:           $15,000.0000" in text
    assert not any("e+" in line for line in text)

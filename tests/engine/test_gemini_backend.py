"""The Gemini backend in-process (`--agent gemini`): runs built as `ralph run` builds them, real Gemini CLI 0.61.0
runs (tests/fixtures/gemini/) played through the replay runner into the real backend's parser
(harness_backends.py). What ralph asks of the CLI is the launch's: its argv and stdin.

The CLI's side (a run through a real `gemini` stand-in, `ralph analyze` of a log, a missing command's error line)
is tests/integration/test_gemini_backend.py's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ralphloop.core.exitcodes import ExitReason
from tests.conftest import read_json
from tests.engine.harness import metrics, run
from tests.engine.harness_backends import exiting, ready, replays


@pytest.fixture
def gemini(project: Path, feature: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The feature, `gemini` found, and no backoff wait."""
    ready(project, tmp_path, monkeypatch, "gemini")
    return feature


def test_gemini_runs_stream_json_with_the_prompt_on_stdin_and_reports_tokens_and_cost(
    project: Path, gemini: Path
) -> None:
    agent = replays("gemini", "work")

    done = run(project, agent, backend="gemini", flags=exiting(model=("gemini-2.5-pro", "--model")))

    assert done.outcome.reason is ExitReason.COMPLETE
    assert len(agent.launches) == 3  # one story each
    assert list(agent.launches[0].command.argv[1:]) == [
        "-p", "", "--output-format", "stream-json", "--skip-trust",
        "-m", "gemini-2.5-pro", "--approval-mode", "auto_edit",
    ]  # fmt: skip
    assert all(len(launch.command.stdin) > 500 for launch in agent.launches)  # the whole prompt, on stdin only
    status = read_json(gemini / "status.json")
    assert (status["agent"], status["exitReason"]) == ("gemini", "complete")
    first = metrics(gemini)[0]
    assert first["model"] == "gemini-2.5-pro" and first["agent"] == "gemini"
    # e2e_tool_write: prompts 7000 of which 5500 cached; output 100 candidates + 32 thinking tokens.
    assert first["usage"]["input_tokens"] == 1500 and first["usage"]["cache_read_tokens"] == 5500
    assert first["usage"]["output_tokens"] == 132
    assert first["cost_usd"] == round((1500 * 1.25 + 5500 * 0.125 + 132 * 10.0) / 1e6, 6)


@pytest.mark.parametrize(
    ("permissions", "mode"),
    [(("ask", "--permissions"), "default"), (("all", "--dangerously-skip-permissions"), "yolo")],
)
def test_permissions_pick_the_approval_mode(
    project: Path, gemini: Path, permissions: tuple[str, str], mode: str
) -> None:
    agent = replays("gemini", "work")

    done = run(project, agent, backend="gemini", n=1, flags=exiting(permissions=permissions))

    assert done.outcome.reason in (ExitReason.COMPLETE, ExitReason.MAX_ITERATIONS)
    args = list(agent.launches[0].command.argv[1:])
    assert args[args.index("--approval-mode") + 1] == mode and args.count("--approval-mode") == 1
    assert "--yolo" not in args and "-m" not in args


def test_a_quota_with_a_long_retry_stops_the_run_with_its_reset(project: Path, gemini: Path) -> None:
    done = run(project, replays("gemini", "e2e_quota_retry_long"), backend="gemini", flags=exiting())

    assert done.outcome.reason is ExitReason.USAGE_LIMIT and done.outcome.reason.exit_code == 2
    limit = read_json(gemini / "status.json")["usageLimit"]
    assert limit["vendor"] == "gemini" and limit["resetsAt"] == "2026-11-27T15:44:01Z" and limit["policy"] == "exit"
    assert [line["outcome"] for line in metrics(gemini)] == ["usage-limit"]


def test_the_daily_quota_stops_the_run_without_a_reset(project: Path, gemini: Path) -> None:
    done = run(project, replays("gemini", "mock_quota_429_daily_streamjson"), backend="gemini", flags=exiting())

    assert done.outcome.reason.exit_code == 2
    limit = read_json(gemini / "status.json")["usageLimit"]
    assert (limit["vendor"], limit["kind"], limit["resetsAt"]) == ("gemini", "daily", None)


def test_no_credentials_stop_at_once(project: Path, gemini: Path) -> None:
    agent = replays("gemini", "streamjson_noauth")

    done = run(project, agent, backend="gemini", flags=exiting())

    assert done.outcome.reason.exit_code == 1
    assert "GEMINI_API_KEY" in done.screen
    assert len(agent.launches) == 1


def test_a_refused_tool_twice_in_a_row_opens_the_breaker(project: Path, gemini: Path) -> None:
    agent = replays("gemini", "e2e_shell_denied")

    done = run(project, agent, backend="gemini", n=4, flags=exiting())

    assert done.outcome.reason.exit_code == 1, done.screen
    assert len(agent.launches) == 2
    assert "run_shell_command(echo hi > x.txt)" in done.screen, done.screen
    assert "permission denied in 2 iterations in a row" in done.screen

"""`ralph run --agent gemini` end to end: the real Gemini CLI (pinned 0.61.0, installed from npm by the tests)
against the loopback fake of the Gemini API (tests/e2e/fake_gemini.py).

The CLI finds the fake through `GOOGLE_GEMINI_BASE_URL` and API-key auth in a private HOME's
`.gemini/settings.json` (one attempt per request: no retries, no backoff waits; no usage statistics). The fake
answers with scripted tool calls, so the real CLI really edits the repository, and ralph reads the real
stream-json lines it prints. Nothing here mocks ralph or the CLI. `GEMINI_CLI_NO_RELAUNCH=1` spares each run the
CLI's relaunch of itself with a larger heap (about 1.5 s), which changes nothing else.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RalphRunner, read_json
from tests.e2e.fake_gemini import FAKE_API_KEY, FakeGemini, FunctionCall, HttpError, Text, Usage, gemini_settings
from tests.e2e.gemini_cli import gemini_executable

MODEL = "gemini-2.5-pro"
RESET_AFTER = "Your quota will reset after 15h57m40s."

pytestmark = pytest.mark.timeout(900)  # the first test may pay for the npm install


@pytest.fixture(scope="session")
def gemini_bin() -> str:
    """The real `gemini` binary of the pinned version (installed once into the test cache)."""
    return gemini_executable()


@pytest.fixture
def gemini_api() -> Iterator[FakeGemini]:
    """A started fake Gemini API with an empty script; add turns with `gemini_api.add_turns(...)`."""
    with FakeGemini() as fake:
        yield fake


@pytest.fixture
def env(tmp_path: Path, gemini_api: FakeGemini, ralph_env: dict[str, str]) -> dict[str, str]:
    return gemini_env(tmp_path, gemini_api, ralph_env)


def gemini_env(tmp_path: Path, gemini_api: FakeGemini, ralph_env: dict[str, str]) -> dict[str, str]:
    """ralph's test environment plus Gemini's: a private HOME whose settings.json picks API-key auth, the fake's
    URL and a fake key, no real Google credentials, and a temp folder of its own (the CLI writes a
    gemini-client-error-*.json report there at each failed call, never removed)."""
    home = tmp_path / "gemini-home"
    (home / ".gemini").mkdir(parents=True)
    (tmp_path / "gemini-tmp").mkdir()
    (home / ".gemini" / "settings.json").write_text(json.dumps(gemini_settings()))
    cli = {key: value for key, value in ralph_env.items() if not key.startswith(("GEMINI_", "GOOGLE_"))}
    return {
        **cli,
        "HOME": str(home),
        "GEMINI_API_KEY": FAKE_API_KEY,
        "GOOGLE_GEMINI_BASE_URL": gemini_api.url,
        "GEMINI_CLI_NO_RELAUNCH": "1",
        "TMPDIR": str(tmp_path / "gemini-tmp"),
    }


def use_gemini(project: Path, gemini_bin: str) -> None:
    """Config: the installed CLI as gemini.command, no backoff waits, no usage-limit margin."""
    config = project / ".ralph" / "config.yaml"
    config.write_text(
        config.read_text().replace("  margin_seconds: 60 ", "  margin_seconds: 0 ")
        + f"\ngemini:\n  command: {json.dumps(gemini_bin)}\n"
        + "\nbackoff:\n  initial_seconds: 0\n"
    )


def all_stories_passing(feature: Path) -> str:
    """prd.json with every story passing: what the agent writes with `write_file` (ralph's default permissions,
    `auto_edit`, let the CLI edit files but not run commands)."""
    prd = read_json(feature / "prd.json")
    for story in prd["userStories"]:
        story["passes"] = True
    return json.dumps(prd, indent=2) + "\n"


def metrics(feature: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (feature / "ralph_metrics.jsonl").read_text().splitlines()]


def run(ralph: RalphRunner, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return ralph(
        "run", "-f", "feat", "--no-archive", "--agent", "gemini", "--model", MODEL, *args, env=env, timeout=300
    )


def test_tool_calls_edit_the_repository_and_the_completion_is_recorded_with_its_usage(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], gemini_api: FakeGemini, gemini_bin: str
) -> None:
    use_gemini(project, gemini_bin)
    gemini_api.add_turns(
        FunctionCall("write_file", {"file_path": "work.txt", "content": "done\n"}, Usage(3000, 2000, 40, 12)),
        FunctionCall(
            "write_file",
            {"file_path": ".ralph/feat/prd.json", "content": all_stories_passing(feature)},
            Usage(3500, 3000, 30, 8),
        ),
        Text("All stories pass. <promise>COMPLETE</promise>", Usage(4000, 3500, 60, 20)),
    )
    done = run(ralph, env)
    assert done.returncode == 0, done.stdout + done.stderr

    # The real CLI wrote both files in the project.
    assert (project / "work.txt").read_text() == "done\n"
    assert all(story["passes"] for story in read_json(feature / "prd.json")["userStories"])
    requests = gemini_api.main_requests
    assert len(requests) == 3 and gemini_api.pending == 0
    assert [response["name"] for response in requests[1].function_responses()] == ["write_file"]
    assert requests[0].headers["x-goog-api-key"] == FAKE_API_KEY
    assert requests[0].model == MODEL
    assert any("S-1" in text for text in requests[0].texts())  # ralph's prompt, from stdin, reached the API

    [line] = metrics(feature)
    # What the fake sent, summed by the CLI: prompts 10500 of which 8500 cached; output = candidates + thinking.
    assert line["usage"]["input_tokens"] == 10500 - 8500
    assert line["usage"]["cache_read_tokens"] == 8500
    assert line["usage"]["output_tokens"] == 130 + 40
    assert line["model"] == MODEL and line["agent"] == "gemini"
    assert line["cost_usd"] == round((2000 * 1.25 + 8500 * 0.125 + 170 * 10.0) / 1e6, 6)
    assert (line["outcome"], line["success"], line["exit_code"]) == ("complete", True, 0)
    status = read_json(feature / "status.json")
    assert (status["agent"], status["exitReason"], status["model"]) == ("gemini", "complete", MODEL)


def test_a_pro_run_over_200k_prompt_tokens_is_priced_from_the_session_file_the_cli_wrote(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], gemini_api: FakeGemini, gemini_bin: str
) -> None:
    use_gemini(project, gemini_bin)
    gemini_api.add_turns(
        FunctionCall(
            "write_file",
            {"file_path": ".ralph/feat/prd.json", "content": all_stories_passing(feature)},
            Usage(150_000, 100_000, 40, 10),
        ),
        Text("All stories pass. <promise>COMPLETE</promise>", Usage(250_000, 140_000, 60)),
    )
    done = run(ralph, env)
    assert done.returncode == 0, done.stdout + done.stderr
    [line] = metrics(feature)
    assert line["usage"]["input_tokens"] == 160_000 and line["usage"]["cache_read_tokens"] == 240_000
    # The 150k-token request at Gemini 2.5 Pro's base rates, the 250k one at its long-context rates.
    first = 50_000 * 1.25 + 100_000 * 0.125 + 50 * 10.0
    second = 110_000 * 2.5 + 140_000 * 0.25 + 60 * 15.0
    assert line["cost_usd"] == round((first + second) / 1e6, 6)


@pytest.mark.parametrize(
    ("error", "wait_s"),
    [
        (HttpError.quota(3600.0), 3600),
        (
            HttpError(429, "You have exhausted your capacity on this model. Your quota will reset after 15h57m40s."),
            57460,
        ),
    ],
    ids=["please-retry-in", "reset-after"],
)
def test_a_quota_with_a_reset_exits_2_with_the_instant_it_resets(
    project: Path,
    feature: Path,
    ralph: RalphRunner,
    env: dict[str, str],
    gemini_api: FakeGemini,
    gemini_bin: str,
    error: HttpError,
    wait_s: int,
) -> None:
    use_gemini(project, gemini_bin)
    gemini_api.add_turns(error)
    before = datetime.now(UTC).replace(microsecond=0)
    done = run(ralph, env, "--on-usage-limit", "exit")
    after = datetime.now(UTC)
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(gemini_api.main_requests) == 1  # the CLI did not retry it
    status = read_json(feature / "status.json")
    assert (status["status"], status["exitReason"]) == ("halted", "usage_limit")
    limit = status["usageLimit"]
    assert (limit["vendor"], limit["policy"]) == ("gemini", "exit")
    # Counted from when the CLI reported the error, which is during the run.
    resets = datetime.strptime(limit["resetsAt"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert before + timedelta(seconds=wait_s) <= resets <= after + timedelta(seconds=wait_s)
    assert [line["outcome"] for line in metrics(feature)] == ["usage-limit"]


def test_the_daily_quota_exits_2_without_a_reset(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], gemini_api: FakeGemini, gemini_bin: str
) -> None:
    use_gemini(project, gemini_bin)
    gemini_api.add_turns(HttpError.daily_quota())
    done = run(ralph, env, "--on-usage-limit", "exit")
    assert done.returncode == 2, done.stdout + done.stderr
    limit = read_json(feature / "status.json")["usageLimit"]
    assert (limit["vendor"], limit["kind"], limit["resetsAt"]) == ("gemini", "daily", None)
    assert limit["message"] == "You have exhausted your daily quota on this model."
    assert len(gemini_api.main_requests) == 1


def test_a_short_quota_window_is_an_api_error_ralph_retries_not_the_usage_limit(
    project: Path, feature: Path, ralph: RalphRunner, env: dict[str, str], gemini_api: FakeGemini, gemini_bin: str
) -> None:
    use_gemini(project, gemini_bin)
    gemini_api.add_turns(
        HttpError.quota(26.5),
        FunctionCall("write_file", {"file_path": ".ralph/feat/prd.json", "content": all_stories_passing(feature)}),
        Text("All stories pass. <promise>COMPLETE</promise>"),
    )
    done = run(ralph, env, "--on-usage-limit", "exit")
    assert done.returncode == 0, done.stdout + done.stderr  # not exit 2: no usage limit
    assert len(gemini_api.main_requests) == 3  # ralph ran the agent again after the rate limit
    assert [line["outcome"] for line in metrics(feature)] == ["api-error", "complete"]
    assert metrics(feature)[0]["counted"] is False and metrics(feature)[0]["exit_code"] == 173
    assert "the Gemini API rate-limited the request" in done.stdout + done.stderr

"""The opencode backend in-process (`--agent opencode`): runs built as `ralph run` builds them, real opencode
1.18.33 runs (tests/fixtures/opencode/) played through the replay runner into the real backend's parser
(harness_backends.py). What ralph asks of the CLI is the launch's: its argv, environment, folder and stdin.

The CLI's side (a run through a real `opencode` stand-in started from a subfolder, the idle timeout that ends one
waiting in silence, a model without a provider, `ralph analyze` of a log) is
tests/integration/test_opencode_backend.py's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ralphloop.core.exitcodes import ExitReason
from tests.conftest import read_json
from tests.engine.harness import metrics, run
from tests.engine.harness_backends import exiting, ready, replays


@pytest.fixture
def opencode(project: Path, feature: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The feature, `opencode` found, and no backoff wait."""
    ready(project, tmp_path, monkeypatch, "opencode")
    return feature


def test_opencode_gets_the_prompt_on_stdin_in_the_project_and_reports_tokens_and_cost(
    project: Path, opencode: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project / ".ralph")  # ralph started from a subfolder: opencode must still work in the project
    agent = replays("opencode", "work")

    done = run(project, agent, backend="opencode", flags=exiting(model=("fake/fake-coder", "--model")))

    assert done.outcome.reason is ExitReason.COMPLETE
    launches = agent.launches
    assert list(launches[0].command.argv[1:]) == [
        "run", "--format", "json", "--print-logs", "--log-level", "ERROR",
        "--title", "ralph S-1 iteration 1", "-m", "fake/fake-coder",
    ]  # fmt: skip
    assert all(launch.command.env["PWD"] == str(project) and launch.cwd == str(project) for launch in launches)
    assert all("S-1" in launch.command.stdin.decode() and len(launch.command.stdin) > 500 for launch in launches[:1])
    permission = json.loads(launches[0].command.env["OPENCODE_PERMISSION"])
    assert permission == {"edit": {"*": "allow"}, "bash": {"*": "deny"}}
    status = read_json(opencode / "status.json")
    assert (status["agent"], status["exitReason"]) == ("opencode", "complete")
    first = metrics(opencode)[0]
    assert first["model"] == "fake/fake-coder" and first["agent"] == "opencode"
    usage = first["usage"]
    assert (usage["input_tokens"], usage["output_tokens"], usage["cache_read_tokens"]) == (300, 60, 0)
    assert first["cost_usd"] == round(3 * 0.00036, 6)


def test_all_permissions_only_when_asked(project: Path, opencode: Path) -> None:
    agent = replays("opencode", "work")

    done = run(
        project, agent, backend="opencode", n=1, flags=exiting(permissions=("all", "--dangerously-skip-permissions"))
    )

    assert done.outcome.reason in (ExitReason.COMPLETE, ExitReason.MAX_ITERATIONS)
    [launch] = agent.launches
    assert launch.command.argv[-1] == "--auto" and "-m" not in launch.command.argv
    assert json.loads(launch.command.env["OPENCODE_PERMISSION"]) == {"edit": {"*": "allow"}, "bash": {"*": "allow"}}


def test_the_usage_limit_stops_the_run_with_its_reset(project: Path, opencode: Path) -> None:
    agent = replays("opencode", "mock_usage_limit_429_json")

    done = run(project, agent, backend="opencode", flags=exiting())

    assert done.outcome.reason is ExitReason.USAGE_LIMIT and done.outcome.reason.exit_code == 2
    limit = read_json(opencode / "status.json")["usageLimit"]
    assert limit["vendor"] == "opencode" and limit["resetsAt"] == "2026-11-28T04:00:00Z"
    assert len(agent.launches) == 1


def test_openais_usage_limit_relayed_stops_the_run_with_its_reset(project: Path, opencode: Path) -> None:
    agent = replays("opencode", "usage_limit_plus_json")  # the reset only in the body and the x-codex-* headers

    done = run(project, agent, backend="opencode", flags=exiting())

    assert done.outcome.reason.exit_code == 2
    status = read_json(opencode / "status.json")
    assert status["exitReason"] == "usage_limit"
    limit = status["usageLimit"]
    assert (limit["vendor"], limit["kind"], limit["resetsAt"]) == ("opencode", "five_hour", "2026-11-21T01:15:15Z")
    assert "unknown time" not in status["guidance"]


def test_a_bad_model_stops_at_once(project: Path, opencode: Path) -> None:
    agent = replays("opencode", "mock_bad_model_json")

    done = run(project, agent, backend="opencode", flags=exiting(model=("fake/no-such-model", "--model")))

    assert done.outcome.reason.exit_code == 1
    assert "Model not found: fake/no-such-model" in done.screen
    assert len(agent.launches) == 1

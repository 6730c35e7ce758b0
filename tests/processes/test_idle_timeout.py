"""The idle timeout: an agent process that prints nothing for N seconds is ended like a timeout, with real
processes; which limit applies (the config's over the backend's); how the setting is read and told."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ralphloop.agents.text import TextOutputParser, describe_failure
from ralphloop.config.settings import load_settings
from ralphloop.core.cancel import CancelToken
from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import AgentCommand, AgentRequest, ProcessOutcome
from ralphloop.core.runner import ProcessLimits
from ralphloop.processes.local import run_agent_process

PY = sys.executable
# Says one thing, then nothing for a minute: only a limit ends it within the test.
SILENT = "import time\nprint('started', flush=True)\ntime.sleep(60)"


def run(tmp_path: Path, code: str, limits: ProcessLimits, idle_default: float | None = None) -> ProcessOutcome:
    command = AgentCommand(argv=(PY, "-c", code), env={}, stdin=b"", idle_timeout_s=idle_default)
    token = CancelToken()
    try:
        return run_agent_process(
            command,
            cwd=str(tmp_path),
            log_path=str(tmp_path / "iteration-1.log"),
            limits=limits,
            cancel=token,
            on_stdout=lambda data: None,
        )
    finally:
        token.close()


def test_a_silent_agent_is_stopped_with_the_idle_limit_named(tmp_path: Path) -> None:
    # 1.5 s: the limit counts from the start, and an interpreter on a busy machine may take 0.3 s to say anything
    outcome = run(tmp_path, SILENT, ProcessLimits(timeout_s=60, kill_grace_s=1, idle_timeout_s=1.5))

    assert outcome.timed_out and not outcome.interrupted
    assert outcome.idle_limit_s == 1.5
    assert outcome.exit_code is not None and outcome.exit_code < 0  # SIGTERM: the group was stopped
    assert outcome.duration_s < 30
    assert (tmp_path / "iteration-1.log").read_bytes() == b"started\n"
    assert describe_failure(outcome) == "no output for 1.5 s (the idle timeout); its process group was stopped"


def test_the_backends_default_applies_when_the_config_sets_none(tmp_path: Path) -> None:
    outcome = run(tmp_path, SILENT, ProcessLimits(timeout_s=60, kill_grace_s=1), idle_default=0.3)

    assert outcome.timed_out and outcome.idle_limit_s == 0.3


def test_the_config_wins_over_the_backends_default(tmp_path: Path) -> None:
    # Silent for 0.8 s: the backend's 0.3 s would end it, the configured 30 s does not.
    code = "import time\nprint('a', flush=True)\ntime.sleep(0.8)\nprint('b', flush=True)"
    outcome = run(tmp_path, code, ProcessLimits(timeout_s=60, idle_timeout_s=30), idle_default=0.3)

    assert (outcome.exit_code, outcome.timed_out, outcome.idle_limit_s) == (0, False, None)


def test_zero_in_the_config_turns_the_backends_default_off(tmp_path: Path) -> None:
    outcome = run(tmp_path, SILENT, ProcessLimits(timeout_s=1, kill_grace_s=1, idle_timeout_s=0), idle_default=0.3)

    assert outcome.timed_out and outcome.idle_limit_s is None  # the plain timeout, after 1 s
    assert describe_failure(outcome).startswith("timed out after")


def test_output_on_stderr_keeps_an_agent_alive_past_the_idle_limit(tmp_path: Path) -> None:
    # 2 s of work with a stderr line every 50 ms, under a 1 s idle limit.
    code = "import sys, time\nfor _ in range(40):\n    print('.', file=sys.stderr, flush=True)\n    time.sleep(0.05)"
    outcome = run(tmp_path, code, ProcessLimits(timeout_s=60, idle_timeout_s=1))

    assert (outcome.exit_code, outcome.timed_out) == (0, False)
    assert outcome.duration_s > 1


def test_an_idle_stop_is_a_failed_attempt_and_no_api_error(tmp_path: Path) -> None:
    # Even when its last word looks like a transient API error, an agent ralph stopped is not retried as one.
    code = "import time\nprint('Error: 429 Too Many Requests', flush=True)\ntime.sleep(60)"
    outcome = run(tmp_path, code, ProcessLimits(timeout_s=60, kill_grace_s=1, idle_timeout_s=0.3))
    request = AgentRequest("p", 1, str(tmp_path), str(tmp_path), str(tmp_path / "p.md"), "T-1")
    parser = TextOutputParser(request)
    parser.feed(b"Error: 429 Too Many Requests\n")
    result = parser.finish(outcome)

    assert result.failed and result.timed_out and result.error_kind is None
    assert result.error is not None and result.error.startswith("no output for 0.3 s")


# ---------------------------------------------------------------- the setting


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RALPH_HOME", str(tmp_path / "ralph-home"))
    root = tmp_path / "project"
    (root / ".ralph").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


def idle_setting(project: Path, text: str | None, env: dict[str, str] | None = None) -> float | None:
    if text is not None:
        (project / ".ralph" / "config.yaml").write_text(f"process:\n  idle_timeout_minutes: {text}\n")
    return load_settings(str(project), {}, env=env or {}).process.idle_timeout_s


@pytest.mark.parametrize(
    ("text", "seconds"),
    [(None, None), ("10", 600.0), ("90s", 90.0), ("'0.5s'", 0.5), ("1h", 3600.0), ("0", 0.0), ("off", 0.0)],
)
def test_idle_timeout_minutes_reads_durations_and_off(project: Path, text: str | None, seconds: float | None) -> None:
    assert idle_setting(project, text) == seconds


def test_the_environment_variable_sets_it(project: Path) -> None:
    assert idle_setting(project, "10", {"RALPH_IDLE_TIMEOUT": "2m"}) == 120.0


@pytest.mark.parametrize("text", ["soon", "-1", "true", ".nan", "[1]"])
def test_a_bad_idle_timeout_names_the_file_and_the_setting(project: Path, text: str) -> None:
    with pytest.raises(RalphError) as caught:
        idle_setting(project, text)
    assert str(caught.value).startswith(".ralph/config.yaml: process.idle_timeout_minutes: ")

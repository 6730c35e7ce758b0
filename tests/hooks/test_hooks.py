"""hooks: quoting hook variables for the shell, the config sections, and running commands with real `sh`."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from ralphloop.core.cancel import CancelToken
from ralphloop.core.hook_spec import LIFECYCLE_EVENTS, CommandSpec
from ralphloop.core.protocols import AgentCommand
from ralphloop.core.runner import ProcessLimits
from ralphloop.hooks.background import Background
from ralphloop.hooks.gates import run_gates
from ralphloop.hooks.parse import parse_hooks, parse_quality_checks
from ralphloop.hooks.quoting import quote_variables
from ralphloop.hooks.run import VERIFY_FAILED, CommandRun, run_command, run_shell
from ralphloop.hooks.variables import HookVars, substitute

LIMITS = ProcessLimits(timeout_s=20, kill_grace_s=1)


@pytest.fixture
def cancel() -> Iterator[CancelToken]:
    token = CancelToken()
    yield token
    token.close()


def shell(
    tmp_path: Path,
    command: str,
    cancel: CancelToken,
    *,
    env: dict[str, str] | None = None,
    stdin: bytes = b"",
    timeout_s: float | None = None,
    limits: ProcessLimits = LIMITS,
) -> CommandRun:
    """Run `command` as a hook named `check`, logging to logs/check.log."""
    return run_shell(
        CommandSpec("check", command, timeout_s),
        cwd=str(tmp_path),
        env=env or {},
        log_path=str(tmp_path / "logs" / "check.log"),
        limits=limits,
        cancel=cancel,
        stdin=stdin,
    )


# ---------------------------------------------------------------- quote_variables


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo $SPRINT_ID", 'echo "${SPRINT_ID}"'),
        ("echo ${SPRINT_ID}", 'echo "${SPRINT_ID}"'),
        ('echo "$SPRINT_ID and ${PHASE_ID}"', 'echo "$SPRINT_ID and ${PHASE_ID}"'),
        ("echo '$SPRINT_ID'", "echo '$SPRINT_ID'"),
        ("echo \\$SPRINT_ID", "echo \\$SPRINT_ID"),
        ("echo $ITERATIONS", "echo $ITERATIONS"),
        ("echo $ITERATION_TRANSCRIPT $ITERATION", 'echo "${ITERATION_TRANSCRIPT}" "${ITERATION}"'),
        ("cp x $SPRINT_ID.txt", 'cp x "${SPRINT_ID}".txt'),
        ("echo a$SPRINT_ID-b", 'echo a"${SPRINT_ID}"-b'),
        ("echo $HOME $SPRINT", "echo $HOME $SPRINT"),
        # After a quoted part the scanner is outside again.
        ("echo 'it''s' \"x\" $PHASE_ID", "echo 'it''s' \"x\" \"${PHASE_ID}\""),
        # Escapes inside double quotes do not end them.
        ('echo "a\\"$SPRINT_ID" $PHASE_ID', 'echo "a\\"$SPRINT_ID" "${PHASE_ID}"'),
        # A single quote inside double quotes is an ordinary character.
        ('echo "it\'s $SPRINT_ID" $PHASE_ID', 'echo "it\'s $SPRINT_ID" "${PHASE_ID}"'),
        # A command substitution inside double quotes is unquoted again.
        ('echo "$(basename $ITERATION_TRANSCRIPT)"', 'echo "$(basename "${ITERATION_TRANSCRIPT}")"'),
        ("echo `echo $SPRINT_ID`", 'echo `echo "${SPRINT_ID}"`'),
        # Arithmetic neither splits nor accepts quotes.
        ("echo $(( $ITERATION + 1 )) $SPRINT_ID", 'echo $(( $ITERATION + 1 )) "${SPRINT_ID}"'),
        ("echo $$SPRINT_ID ${#SPRINT_ID}", "echo $$SPRINT_ID ${#SPRINT_ID}"),
        # An apostrophe in a comment opens no quote.
        ("# don't\necho $SPRINT_ID", '# don\'t\necho "${SPRINT_ID}"'),
        # Here-document bodies are copied as they are (quotes there would be printed).
        ("cat <<EOF\nit's $SPRINT_ID\nEOF\necho $SPRINT_ID", 'cat <<EOF\nit\'s $SPRINT_ID\nEOF\necho "${SPRINT_ID}"'),
        (
            "cat <<-'END'\n\t$SPRINT_ID\n\tEND\necho $PHASE_ID",
            "cat <<-'END'\n\t$SPRINT_ID\n\tEND\necho \"${PHASE_ID}\"",
        ),
        ("echo 'unterminated $SPRINT_ID", "echo 'unterminated $SPRINT_ID"),
        ("echo trailing\\", "echo trailing\\"),
    ],
)
def test_quote_variables(command: str, expected: str) -> None:
    assert quote_variables(command) == expected


def test_quote_variables_takes_other_names() -> None:
    assert quote_variables("echo $A $B $SPRINT_ID", names=("A",)) == 'echo "${A}" $B $SPRINT_ID'
    assert quote_variables("echo $A", names=()) == "echo $A"
    with pytest.raises(ValueError, match="not a shell variable name"):
        quote_variables("echo $A", names=("A-B",))


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ('echo "$(basename $SPRINT_ID)"', "a  *  b"),
        ("echo $(( $ITERATION * 2 ))", "14"),
        ("cat <<EOF\n[$SPRINT_ID]\nEOF", "[a  *  b]"),
        ("printf '%s|' $SPRINT_ID $ITERATION", "a  *  b|7|"),
    ],
)
def test_quoted_commands_still_run_as_written(tmp_path: Path, cancel: CancelToken, command: str, expected: str) -> None:
    (tmp_path / "glob-bait").touch()
    run = shell(tmp_path, command, cancel, env={"SPRINT_ID": "a  *  b", "ITERATION": "7"})
    assert run.ok, run.tail
    assert run.tail == expected


@pytest.mark.parametrize(
    "value",
    [
        'x"; touch pwned; echo "',
        "$(touch pwned2)",
        "`touch pwned3`",
        "*",
        "a  b\t*  'c' ; touch pwned4 | cat",
    ],
)
def test_hostile_values_are_never_shell(tmp_path: Path, cancel: CancelToken, value: str) -> None:
    (tmp_path / "glob-bait").touch()
    run = shell(tmp_path, "echo $SPRINT_ID > out.txt", cancel, env=HookVars("t.log", value, 1, "p").values())
    assert run.ok, run.summary()
    assert (tmp_path / "out.txt").read_text() == value + "\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["glob-bait", "logs", "out.txt"]


# ---------------------------------------------------------------- substitute and HookVars


def test_substitute_replaces_whole_names_in_one_pass() -> None:
    values = HookVars("/logs/iteration-5.log", "$ITERATION", 5, "p2").values()
    text = "$SPRINT_ID ${ITERATION} $ITERATIONS $ITERATION_TRANSCRIPT $PHASE_ID.md $OTHER \\$ITERATION"
    assert substitute(text, values) == "$ITERATION 5 $ITERATIONS /logs/iteration-5.log p2.md $OTHER \\5"
    assert substitute("$SPRINT_ID", {}) == "$SPRINT_ID"


def test_hook_vars_values() -> None:
    assert HookVars("t.log", "s1", 5, "ph").values() == {
        "ITERATION_TRANSCRIPT": "t.log",
        "SPRINT_ID": "s1",
        "ITERATION": "5",
        "PHASE_ID": "ph",
    }


# ---------------------------------------------------------------- parse_hooks


def test_parse_hooks_reads_strings_lists_and_timeout() -> None:
    hooks = parse_hooks({"pre_run": "make setup", "post_iteration": ["make lint", "make test"], "timeout": "90s"})
    assert hooks.any
    assert hooks.timeout_s == 90
    assert hooks.for_event("pre_run") == (CommandSpec("pre_run", "make setup"),)
    assert hooks.for_event("post_iteration") == (
        CommandSpec("post_iteration", "make lint"),
        CommandSpec("post_iteration#2", "make test"),
    )
    assert hooks.for_event("on_halt") == ()
    assert set(hooks.commands) == {"pre_run", "post_iteration"}


@pytest.mark.parametrize(("timeout", "seconds"), [(15, 900.0), (0.5, 30.0), ("15m", 900.0), ("1h", 3600.0)])
def test_parse_hooks_timeout_bare_numbers_are_minutes(timeout: object, seconds: float) -> None:
    assert parse_hooks({"timeout": timeout}).timeout_s == seconds


def test_parse_hooks_empty_sections() -> None:
    assert not parse_hooks(None).any
    assert not parse_hooks({}).any
    assert not parse_hooks({"pre_run": None, "on_error": []}).any
    assert parse_hooks({}).timeout_s is None
    assert all(parse_hooks(None).for_event(event) == () for event in LIFECYCLE_EVENTS)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (["make"], "hooks: expected a mapping"),
        ({"post_iter": "make"}, "hooks.post_iter: not one of pre_run, pre_iteration, post_iteration, on_complete"),
        ({"pre_run": ""}, "hooks.pre_run: empty command"),
        ({"pre_run": "  "}, "hooks.pre_run: empty command"),
        ({"pre_run": ["make", ""]}, r"hooks.pre_run\[1\]: empty command"),
        ({"pre_run": 3}, "hooks.pre_run: expected a command or a list of commands"),
        ({"pre_run": [["make"]]}, r"hooks.pre_run\[0\]: expected a command string"),
        ({"timeout": "soon"}, "hooks.timeout: 'soon' is not a duration"),
        ({"timeout": True}, "hooks.timeout: expected a duration"),
        ({"timeout": 0}, "hooks.timeout: 0 is not a duration"),
    ],
)
def test_parse_hooks_rejects(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_hooks(value)


def test_for_event_refuses_a_misspelt_event() -> None:
    with pytest.raises(ValueError, match="not a lifecycle event"):
        parse_hooks({}).for_event("post_iter")


# ---------------------------------------------------------------- parse_quality_checks


def test_parse_quality_checks_keeps_the_written_order() -> None:
    checks = parse_quality_checks(
        {"types": "mypy src", "tests": {"command": "pytest -q", "timeout": "10m"}, "lint": "ruff check"}
    )
    assert checks == (
        CommandSpec("types", "mypy src"),
        CommandSpec("tests", "pytest -q", 600.0),
        CommandSpec("lint", "ruff check"),
    )
    assert parse_quality_checks({}) == ()
    assert parse_quality_checks(None) == ()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (["pytest"], "quality_checks: expected a mapping"),
        ({"tests": ""}, "quality_checks.tests: empty command"),
        ({"tests": 5}, "quality_checks.tests: expected a command or a mapping"),
        ({"tests": {"timeout": 5}}, "quality_checks.tests.command: missing"),
        ({"tests": {"command": "pytest", "retries": 2}}, r"quality_checks.tests.retries: unknown key \(use command"),
        ({"tests": {"command": "pytest", "timeout": "x"}}, "quality_checks.tests.timeout: 'x' is not a duration"),
        ({"tests": {"command": ""}}, "quality_checks.tests.command: empty command"),
        ({1: "pytest"}, "quality_checks: a check's name must be a non-empty string"),
        (
            {"unit test": "a", "unit-test": "b"},
            "quality_checks.unit-test: its log would be the same file as 'unit test'",
        ),
    ],
)
def test_parse_quality_checks_rejects(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_quality_checks(value)


# ---------------------------------------------------------------- run_shell and run_command


@pytest.mark.parametrize("code", [0, 1, 3, VERIFY_FAILED])
def test_run_shell_reports_the_exit_code(tmp_path: Path, cancel: CancelToken, code: int) -> None:
    run = shell(tmp_path, f"echo working; exit {code}", cancel)
    assert run.exit_code == code
    assert run.ok == (code == 0)
    assert run.verify_failed == (code == VERIFY_FAILED)
    assert run.tail == "working"
    assert run.log_path == str(tmp_path / "logs" / "check.log")
    assert (tmp_path / "logs" / "check.log").read_text() == "working\n"


def test_run_shell_passes_env_stdin_and_cwd(tmp_path: Path, cancel: CancelToken) -> None:
    run = shell(tmp_path, 'read line; echo "$line $PHASE_ID"; pwd', cancel, env={"PHASE_ID": "p1"}, stdin=b"hello\n")
    assert run.tail == f"hello p1\n{tmp_path}"


def test_stderr_is_logged_too(tmp_path: Path, cancel: CancelToken) -> None:
    run = shell(tmp_path, "echo out; echo oops >&2; exit 2", cancel)
    assert run.tail == "out\n[stderr] oops"


def test_tail_is_the_last_40_lines(tmp_path: Path, cancel: CancelToken) -> None:
    run = shell(tmp_path, "i=0; while [ $i -lt 100 ]; do echo line $i; i=$((i+1)); done", cancel)
    assert run.tail.splitlines() == [f"line {n}" for n in range(60, 100)]


def test_tail_is_bounded_in_bytes_and_holds_whole_lines(tmp_path: Path, cancel: CancelToken) -> None:
    command = "i=0; while [ $i -lt 100 ]; do printf '%0300d\\n' $i; i=$((i+1)); done"
    run = shell(tmp_path, command, cancel)
    lines = run.tail.splitlines()
    assert len(run.tail.encode()) <= 4096
    assert lines
    assert all(len(line) == 300 for line in lines)
    assert lines[-1] == f"{99:0300d}"


def test_tail_has_no_terminal_escapes(tmp_path: Path, cancel: CancelToken) -> None:
    run = shell(tmp_path, r"printf '\033[31mred\033[0m\n\033]0;title\007plain\n'", cancel)
    assert run.tail == "red\nplain"


def test_tail_comes_from_this_run_only(tmp_path: Path, cancel: CancelToken) -> None:
    shell(tmp_path, "echo first run", cancel)
    run = shell(tmp_path, "echo second run", cancel)
    assert run.tail == "second run"
    assert (tmp_path / "logs" / "check.log").read_text() == "first run\nsecond run\n"


def test_secrets_are_masked_in_the_log(tmp_path: Path, cancel: CancelToken) -> None:
    run = shell(tmp_path, "echo key=$DEPLOY_API_KEY", cancel, env={"DEPLOY_API_KEY": "s3cr3t-value-123"})
    assert "s3cr3t" not in run.tail
    assert "s3cr3t" not in (tmp_path / "logs" / "check.log").read_text()


def _process_gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_timeout_kills_the_whole_group(tmp_path: Path, cancel: CancelToken) -> None:
    command = "sleep 30 & echo $! > grandchild.pid; echo started; sleep 30"
    run = shell(tmp_path, command, cancel, timeout_s=0.5, limits=ProcessLimits(timeout_s=60, kill_grace_s=1))
    assert run.timed_out
    assert not run.ok
    assert run.tail == "started"
    assert run.summary().startswith("check: timed out after ")
    assert _process_gone(int((tmp_path / "grandchild.pid").read_text()))


def test_missing_folder_is_a_start_error(tmp_path: Path, cancel: CancelToken) -> None:
    spec = CommandSpec("lint", "true")
    log = str(tmp_path / "lint.log")
    run = run_shell(spec, cwd=str(tmp_path / "gone"), env={}, log_path=log, limits=LIMITS, cancel=cancel)
    assert run.exit_code is None
    assert not run.ok
    assert run.summary() == f"lint: could not start: {tmp_path / 'gone'}: no such folder"


@pytest.mark.parametrize(
    ("env", "error"),
    [
        ({"SPRINT_ID": "a\0b"}, "a NUL character in the command or its environment"),
        ({"A=B": "x"}, "not an environment variable name: 'A=B'"),
    ],
)
def test_values_popen_would_refuse_are_start_errors(
    tmp_path: Path, cancel: CancelToken, env: dict[str, str], error: str
) -> None:
    run = shell(tmp_path, "true", cancel, env=env)
    assert run.exit_code is None
    assert run.start_error == error


def test_run_command_runs_an_argv(tmp_path: Path, cancel: CancelToken) -> None:
    command = AgentCommand(argv=("cat",), env={}, stdin=b"prompt for $SPRINT_ID\n")
    run = run_command(
        "review", command, cwd=str(tmp_path), log_path=str(tmp_path / "r.log"), limits=LIMITS, cancel=cancel
    )
    assert run.ok
    assert run.tail == "prompt for $SPRINT_ID"
    missing = AgentCommand(argv=("no-such-program-here",), env={}, stdin=b"")
    run = run_command(
        "review", missing, cwd=str(tmp_path), log_path=str(tmp_path / "r.log"), limits=LIMITS, cancel=cancel
    )
    assert run.summary() == "review: could not start: no-such-program-here: command not found"


@pytest.mark.parametrize(
    ("run", "line"),
    [
        (CommandRun("tests", 1, 2.34, "l"), "tests: exit 1 after 2.3s"),
        (CommandRun("tests", 0, 0.4, "l"), "tests: passed (0.4s)"),
        (CommandRun("tests", -9, 600.2, "l", timed_out=True), "tests: timed out after 600s"),
        (CommandRun("tests", -15, 1.0, "l", interrupted=True), "tests: interrupted after 1.0s"),
        (CommandRun("tests", -9, 1.0, "l"), "tests: killed by SIGKILL after 1.0s"),
        (CommandRun("verify", VERIFY_FAILED, 12.0, "l"), "verify: exit 75 (verification failed) after 12s"),
        (CommandRun("tests", None, 0.0, "l", start_error="sh: nope"), "tests: could not start: sh: nope"),
    ],
)
def test_summary(run: CommandRun, line: str) -> None:
    assert run.summary() == line


# ---------------------------------------------------------------- Background


def _wait_until_idle(background: Background) -> None:
    deadline = time.monotonic() + 10
    while background.running and time.monotonic() < deadline:
        time.sleep(0.005)


def test_background_collects_finished_jobs_without_waiting_for_others(tmp_path: Path) -> None:
    background = Background()
    release = threading.Event()

    def blocked(token: CancelToken) -> CommandRun:
        release.wait(10)
        return CommandRun("slow", 0, 0.0, "")

    background.start("slow", blocked)
    background.start("quick", lambda token: CommandRun("quick", 0, 0.0, ""))
    deadline = time.monotonic() + 10
    while background.running > 1 and time.monotonic() < deadline:
        time.sleep(0.005)
    assert background.collect() == [("quick", CommandRun("quick", 0, 0.0, ""))]
    assert background.running == 1
    assert background.collect() == []
    release.set()
    assert background.stop(cancel=False) == [("slow", CommandRun("slow", 0, 0.0, ""))]
    assert background.running == 0


def test_a_job_that_raises_is_reported() -> None:
    background = Background()

    def broken(token: CancelToken) -> CommandRun:
        raise RuntimeError("boom")

    background.start(("post_iteration", 3), broken)
    _wait_until_idle(background)
    [(key, run)] = background.collect()
    assert key == ("post_iteration", 3)
    assert run.exit_code is None
    assert run.start_error == "RuntimeError: boom"
    assert not run.ok
    assert background.stop(cancel=False) == []


def test_stop_with_cancel_stops_running_commands(tmp_path: Path) -> None:
    background = Background()
    limits = ProcessLimits(timeout_s=60, kill_grace_s=1)

    def job(token: CancelToken) -> CommandRun:
        spec = CommandSpec("slow", "echo started; sleep 30")
        log = str(tmp_path / "slow.log")
        return run_shell(spec, cwd=str(tmp_path), env={}, log_path=log, limits=limits, cancel=token)

    background.start("slow", job)
    assert background.running == 1
    [(key, run)] = background.stop(cancel=True)
    assert key == "slow"
    assert run.interrupted
    assert not run.ok
    assert background.running == 0
    # The next job gets a fresh token, not the cancelled one.
    background.start("again", lambda token: CommandRun("again", 0 if not token.is_set() else 1, 0.0, ""))
    assert background.stop(cancel=False) == [("again", CommandRun("again", 0, 0.0, ""))]


# ---------------------------------------------------------------- run_gates


def test_run_gates_runs_every_gate_and_names_the_logs(tmp_path: Path, cancel: CancelToken) -> None:
    gates = (
        CommandSpec("lint", "echo lint failed; exit 1"),
        CommandSpec("unit tests/fast", "echo $ITERATION"),
        CommandSpec("types", "exit 2"),
    )
    logs = tmp_path / "logs"
    runs = run_gates(
        gates, cwd=str(tmp_path), env={"ITERATION": "4"}, logs_dir=str(logs), iteration=4, limits=LIMITS, cancel=cancel
    )
    assert [(run.name, run.exit_code) for run in runs] == [("lint", 1), ("unit tests/fast", 0), ("types", 2)]
    assert [Path(run.log_path).name for run in runs] == [
        "gate-lint-4.log",
        "gate-unit-tests-fast-4.log",
        "gate-types-4.log",
    ]
    assert (logs / "gate-unit-tests-fast-4.log").read_text() == "4\n"
    assert runs[0].tail == "lint failed"


def test_run_gates_stops_when_cancelled(tmp_path: Path, cancel: CancelToken) -> None:
    cancel.set()
    runs = run_gates(
        (CommandSpec("lint", "true"),),
        cwd=str(tmp_path),
        env={},
        logs_dir=str(tmp_path),
        iteration=1,
        limits=LIMITS,
        cancel=cancel,
    )
    assert runs == ()

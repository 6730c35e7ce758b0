"""Hostile numbers and shapes (issue 20, item 8): every number a config file, a flag or an environment
variable gives is range-checked (finite, within sane bounds) and every setting has its shape, or the run
stops with one line naming the setting, before it takes a call slot or writes a byte; numbers an agent
can write into the state files never crash a command."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.hostile_project import SAY, copy_case, env_of, shared_template, tree
from tests.warm_ralph import WarmRalph

TIMEOUT = 15

# every numeric setting of the config files, as (section, name); None: a top-level name
NUMERIC_SETTINGS = [
    ("defaults", "max_iterations"),
    ("defaults", "rate_limit_per_hour"),
    ("defaults", "timeout_minutes"),
    ("context", "progress_bytes"),
    (None, "blocked_threshold"),
    (None, "max_retries"),
    ("process", "kill_grace_seconds"),
    ("process", "log_max_mb"),
    ("process", "idle_timeout_minutes"),
    ("circuit_breaker", "no_progress_threshold"),
    ("circuit_breaker", "same_error_threshold"),
    ("circuit_breaker", "failure_threshold"),
    ("circuit_breaker", "permission_denial_threshold"),
    ("circuit_breaker", "cooldown_minutes"),
    ("usage_limit", "pause_at"),
    ("usage_limit", "margin_seconds"),
    ("usage_limit", "fallback_wait_minutes"),
    ("usage_limit", "ask_timeout_seconds"),
    ("budget", "max_cost_usd"),
    ("budget", "max_tokens"),
    ("budget", "max_runtime"),
    ("backoff", "initial_seconds"),
    ("backoff", "max_seconds"),
    ("backoff", "attempts"),
    ("claude", "max_turns"),
    ("hooks", "timeout"),
]
BAD_NUMBERS = [".nan", ".inf", "-.inf", "1.0e+26", "1e26", "-1", "1" + "0" * 30]

FLAGS = ["-t", "-n", "-r", "--max-cost", "--max-tokens", "--max-runtime"]
BAD_FLAG_VALUES = ["99999999999h", "1e26", "nan", "inf", "-1", "1" + "0" * 30, "²"]

SHAPES = {
    "completion-mapping": "completion: {a: 1}\n",
    "completion-list": "completion: [trust]\n",
    "completion-mode-list": "completion: {mode: [trust]}\n",
    "section-a-list": "budget: [1, 2]\n",
    "timeout-a-mapping": "defaults:\n  timeout_minutes: {a: 1}\n",
    "nul-in-a-model": 'agent:\n  model: "sonnet\\0 x"\n',
    "surrogate-in-a-model": 'agent:\n  model: "sonnet\\uD800"\n',
}

# numbers an agent could write into the state files; JSON as Python's json reads it (NaN and Infinity too)
HOSTILE_JSON_NUMBERS = ["NaN", "Infinity", "-Infinity", "1e308", "1" + "0" * 30, "-5", "1.5", "true", '"7"']


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_template(tmp_path_factory)


@pytest.fixture(scope="module")
def warm(template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WarmRalph]:
    runner = WarmRalph(env_of(template), tmp_path_factory.mktemp("outputs"))
    try:
        yield runner
    finally:
        runner.close()


def _run(
    warm: WarmRalph, base: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    try:
        return warm(base / "project", {**env_of(base), **(env or {})}, *args, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"ralph {' '.join(args)} hangs")


def _refused(done: subprocess.CompletedProcess[str], *needles: str) -> str:
    shown = f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert done.returncode == 1, shown
    lines = done.stderr.strip("\n").splitlines()
    assert len(lines) == 1 and lines[0].startswith("ralph: error: "), shown
    assert "internal error" not in lines[0], shown
    for needle in needles:
        assert needle in lines[0], (needle, shown)
    return lines[0]


def _config(base: Path, text: str) -> None:
    (base / "project" / ".ralph" / "config.yaml").write_text(text)


def _setting(section: str | None, name: str, value: str) -> str:
    return f"{name}: {value}\n" if section is None else f"{section}:\n  {name}: {value}\n"


@pytest.mark.parametrize("value", BAD_NUMBERS)
@pytest.mark.parametrize(("section", "name"), NUMERIC_SETTINGS, ids=[name for _, name in NUMERIC_SETTINGS])
def test_a_number_out_of_range_in_the_config_is_refused_before_anything(
    template: Path, warm: WarmRalph, tmp_path: Path, section: str | None, name: str, value: str
) -> None:
    base = copy_case(template, tmp_path)
    _config(base, _setting(section, name, value))
    before = tree(base)  # the call ledger in RALPH_HOME too: no slot taken

    _refused(_run(warm, base, "run", "-f", "feat", "-n", "1", "--agent-cmd", SAY), "config.yaml", name)
    checked = _run(warm, base, "validate", "-f", "feat")
    assert checked.returncode == 1 and name in checked.stdout, checked.stdout + checked.stderr
    assert tree(base) == before


FLAG_CASES = [
    pytest.param(flag, value, id=f"{flag}-{value}")
    for flag in [*FLAGS, "ITERATIONS"]
    for value in BAD_FLAG_VALUES
    if not (flag == "ITERATIONS" and value.startswith("-"))  # argparse reads that as a flag
]


@pytest.mark.parametrize(("flag", "value"), FLAG_CASES)
def test_a_number_out_of_range_in_a_flag_is_refused_before_anything(
    template: Path, warm: WarmRalph, tmp_path: Path, flag: str, value: str
) -> None:
    base = copy_case(template, tmp_path)
    before = tree(base)
    given = ["feat", value] if flag == "ITERATIONS" else ["-f", "feat", flag, value]

    _refused(_run(warm, base, "run", *given, "--agent-cmd", SAY), flag)
    assert tree(base) == before


@pytest.mark.parametrize(
    ("variable", "value"),
    [("RALPH_TIMEOUT", "1e26"), ("RALPH_MAX_ITERATIONS", "1" + "0" * 30), ("RALPH_MAX_COST_USD", "nan")],
)
def test_a_number_out_of_range_in_the_environment_is_refused(
    template: Path, warm: WarmRalph, tmp_path: Path, variable: str, value: str
) -> None:
    base = copy_case(template, tmp_path)
    before = tree(base)

    _refused(_run(warm, base, "run", "-f", "feat", "--agent-cmd", SAY, env={variable: value}), variable)
    assert tree(base) == before


@pytest.mark.parametrize("case", list(SHAPES))
def test_a_setting_of_the_wrong_shape_is_refused(template: Path, warm: WarmRalph, tmp_path: Path, case: str) -> None:
    base = copy_case(template, tmp_path)
    _config(base, SHAPES[case])
    before = tree(base)

    _refused(_run(warm, base, "run", "-f", "feat", "-n", "1", "--agent-cmd", SAY), "config.yaml")
    assert tree(base) == before


@pytest.mark.parametrize("device", ["/dev/full", "/dev/null"])
def test_a_log_file_that_is_a_device_is_refused(template: Path, warm: WarmRalph, tmp_path: Path, device: str) -> None:
    base = copy_case(template, tmp_path)
    before = tree(base)

    done = _run(warm, base, "run", "-f", "feat", "-n", "1", "--log-file", device, "--agent-cmd", SAY)
    _refused(done, "--log-file", device)
    assert tree(base) == before


def test_settings_in_range_still_run(template: Path, warm: WarmRalph, tmp_path: Path) -> None:
    base = copy_case(template, tmp_path)
    _config(base, "completion: {mode: trust}\nprocess:\n  kill_grace_seconds: 0.5\ndefaults:\n  timeout_minutes: 1e3\n")

    done = _run(warm, base, "run", "-f", "feat", "-n", "1", "-t", "2h", "--agent-cmd", SAY)
    assert done.returncode == 1 and "Summary:" in done.stdout, done.stdout + done.stderr


def _numbers(value: Any, number: str) -> Any:
    """`value` with every number (and boolean) replaced by the raw JSON `number`, as a marker string."""
    if isinstance(value, dict):
        return {key: _numbers(item, number) for key, item in value.items()}
    if isinstance(value, list):
        return [_numbers(item, number) for item in value]
    return "@@NUMBER@@" if isinstance(value, int | float) and not isinstance(value, bool) else value


@pytest.mark.parametrize("number", HOSTILE_JSON_NUMBERS)
@pytest.mark.parametrize("file", ["status.json", "state.json", ".circuit_breaker_state", "ralph_metrics.jsonl"])
def test_numbers_the_agent_writes_in_the_state_files_crash_nothing(
    template: Path, warm: WarmRalph, tmp_path: Path, file: str, number: str
) -> None:
    base = copy_case(template, tmp_path)
    path = base / "project" / ".ralph" / "feat" / file
    text = path.read_text()
    rows = (
        [json.loads(line) for line in text.splitlines() if line.strip()] if file.endswith("l") else [json.loads(text)]
    )
    text = "\n".join(json.dumps(_numbers(row, number)) for row in rows) + "\n"
    path.write_text(text.replace('"@@NUMBER@@"', number))
    before = tree(base)

    for command in ("status", "monitor", "report"):
        done = _run(warm, base, command, "-f", "feat")
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr, (command, done.stderr)
        if done.returncode != 0:
            _refused(done, file)
        assert tree(base) == before, command
    done = _run(warm, base, "run", "-f", "feat", "-n", "1", "--agent-cmd", SAY)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    if "Summary:" not in done.stdout:
        _refused(done, file)
        assert tree(base) == before


# Found by tests/chaos/fuzz.py: YAML values PyYAML cannot build (a tag on the wrong text, a number of 4,300+
# digits), a recursive alias, and an alias bomb (nine lines that expand to 9⁹ values: it hung validate and run).
BOMB = "".join(f"  - &b{n} [{', '.join([f'*b{n - 1}' if n else 'lol'] * 9)}]\n" for n in range(9))
YAML_VALUES = {
    "float-tag-on-text": "circuit_breaker:\n  failure_threshold: !!float nope\n",
    "int-tag-on-text": "circuit_breaker:\n  failure_threshold: !!int nope\n",
    "timestamp-tag-on-text": "budget:\n  max_runtime: !!timestamp nope\n",
    "4301-digits": "circuit_breaker:\n  failure_threshold: " + "9" * 4301 + "\n",
    "recursive-alias": "circuit_breaker:\n  failure_threshold: &x [*x]\n",
    "alias-bomb": "hooks:\n  pre_run:\n" + BOMB,
    "nested-200-deep": "hooks:\n  pre_run: " + "[" * 200 + "]" * 200 + "\n",
}


@pytest.mark.parametrize("case", list(YAML_VALUES))
@pytest.mark.parametrize("command", ["validate", "run"])
def test_yaml_that_cannot_be_built_or_would_explode_is_refused_in_one_line(
    template: Path, warm: WarmRalph, tmp_path: Path, case: str, command: str
) -> None:
    base = copy_case(template, tmp_path)
    _config(base, YAML_VALUES[case])
    before = tree(base)

    args = ["-f", "feat", *(["-n", "1", "--agent-cmd", SAY] if command == "run" else [])]
    done = _run(warm, base, command, *args)

    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    assert done.returncode == 1 and "config.yaml" in done.stdout + done.stderr, done.stdout + done.stderr
    if command == "run":
        _refused(done, "config.yaml")
    assert tree(base) == before


def test_a_json_number_of_4301_digits_or_a_list_10000_deep_is_refused_not_a_crash(
    template: Path, warm: WarmRalph, tmp_path: Path
) -> None:
    base = copy_case(template, tmp_path)
    feature = base / "project" / ".ralph" / "feat"
    prd = json.loads((feature / "prd.json").read_text())
    (feature / "prd.json").write_text(
        json.dumps(prd).replace('"description": "', '"description": ' + "9" * 4301 + ', "d": "', 1)
    )
    (feature / "ralph_metrics.jsonl").write_text('{"iteration": ' + "[" * 10000 + "]" * 10000 + "}\n")
    before = tree(base)

    for command in ("validate", "run", "report"):
        args = ["-f", "feat", *(["-n", "1", "--agent-cmd", SAY] if command == "run" else [])]
        done = _run(warm, base, command, *args)
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr, (command, done.stderr)
        assert done.returncode == 1, (command, done.stdout, done.stderr)
        assert tree(base) == before, command


@pytest.mark.parametrize("stamp", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"])
def test_a_call_ledger_time_at_the_edge_of_the_calendar_is_refused_naming_the_ledger(
    template: Path, warm: WarmRalph, tmp_path: Path, stamp: str
) -> None:
    base = copy_case(template, tmp_path)
    ledger = base / "home" / "calls" / "command.json"
    body = json.loads(ledger.read_text())
    starts = body["starts"] if isinstance(body, dict) and "starts" in body else None
    assert starts, body
    starts[0] = stamp
    ledger.write_text(json.dumps(body))
    before = tree(base)

    done = _run(warm, base, "run", "-f", "feat", "-n", "1", "--agent-cmd", SAY)

    _refused(done, "command.json")
    assert tree(base) == before


def test_a_task_title_with_escapes_reaches_no_screen(template: Path, warm: WarmRalph, tmp_path: Path) -> None:
    base = copy_case(template, tmp_path)
    todo = base / "project" / ".ralph" / "todo" / "TODO.md"
    todo.write_text("# todo\n\n- [ ] Replace this \x1b[2J\x1b]52;c;aGk=\x07 task \x9b2J now\n")

    done = _run(warm, base, "run", "-f", "todo", "-n", "1", "--agent-cmd", SAY)

    assert "Summary:" in done.stdout, done.stdout + done.stderr
    assert "Replace this" in done.stdout
    for control in ("\x1b", "\x07", "\x9b"):
        assert control not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("where", "value", "said"),
    [
        ("flag", "five_hours=80%", "--max-window: unknown window 'five_hours'; did you mean 'five_hour'?"),
        ("flag", "five_hour=80", "--max-window: the cap of five_hour: 80 is above 1: write 80% for a percentage"),
        ("config", "{five_hour: 2}", "config.yaml: usage_limit.windows: the cap of five_hour: expected a share"),
        ("config", "[five_hour]", "config.yaml: usage_limit.windows: 'five_hour' is not WINDOW=SHARE"),
        ("env", "all=0", "RALPH_MAX_WINDOW: the cap of all: expected a share above 0"),
    ],
)
def test_a_bad_cap_on_a_usage_window_is_refused_in_one_line_before_anything(
    template: Path, warm: WarmRalph, tmp_path: Path, where: str, value: str, said: str
) -> None:
    base = copy_case(template, tmp_path)
    if where == "config":
        _config(base, f"usage_limit:\n  windows: {value}\n")
    before = tree(base)
    flags = ["--max-window", value] if where == "flag" else []
    env = {"RALPH_MAX_WINDOW": value} if where == "env" else None

    _refused(_run(warm, base, "run", "-f", "feat", "-n", "1", "--agent-cmd", SAY, *flags, env=env), said)
    assert tree(base) == before


@pytest.mark.parametrize("value", ["25:00", "2am", "soon"])
def test_a_bad_start_instant_is_refused_in_one_line_before_anything(
    template: Path, warm: WarmRalph, tmp_path: Path, value: str
) -> None:
    base = copy_case(template, tmp_path)
    before = tree(base)
    done = _run(warm, base, "run", "-f", "feat", "-n", "1", "--agent-cmd", SAY, "--start-at", value)
    _refused(done, f"--start-at {value!r}: expected reset or a time of day HH:MM (24-hour), such as 02:00")
    assert tree(base) == before

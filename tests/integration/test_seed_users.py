"""A seed's user switching to ralph (issue 21): their flags, commands and layouts never silently mean something
else. Every test goes through the real CLI in a real git repository: the seed's spellings refused in one line, the
commands ralph prints working when pasted, what a dry run and `ralph status` say. What the loop decides and records
for a seed's workspace (its signals, confident prose, the circuit) is tests/engine/test_seed_users.py's."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import RalphRunner, agent_cmd, write_prd
from tests.integration.helpers import assert_one_line_error, git, snapshot
from tests.integration.test_story_specs import commit_all, spec, write_specs

PYTHON = sys.executable


@pytest.fixture
def ralph_env(ralph_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    # spec_agent.py records what it saw beside the project; no Claude Code on PATH (a new user's machine)
    bare = os.pathsep.join([os.path.dirname(PYTHON), "/usr/bin", "/bin"])
    return {**ralph_env, "SEEN_FILE": str(tmp_path / "seen.jsonl"), "PATH": bare}


def fix_plan_root(project: Path, env: dict[str, str]) -> None:
    """Seed 000's layout at the project root: PROMPT.md and @fix_plan.md."""
    (project / "PROMPT.md").write_text("Work the fix plan.\n")
    (project / "@fix_plan.md").write_text("# Fix plan\n\n## High Priority\n- [ ] parse the input\n- [ ] print it\n")
    git(project, env, "add", "-A")
    git(project, env, "commit", "-q", "-m", "plan")


def story_root(project: Path, env: dict[str, str]) -> None:
    write_specs(project, {"9.1": spec("9.1"), "9.2": spec("9.2")})
    commit_all(project, env)


# ---------------------------------------------------------------- seed 002's -t SECS and -r STORY


def test_a_bare_timeout_past_four_hours_is_refused_with_the_fix(project: Path, feature: Path, ralph: RalphRunner):
    before = snapshot(project)

    refused = ralph("run", "-t", "3600", "--agent-cmd", "true")
    long_form = ralph("run", "--timeout", "1800", "--agent-cmd", "true")
    seconds = ralph("run", "-d", "-t", "3600s", "--agent-cmd", "true")
    minutes = ralph("run", "-d", "-t", "240", "--agent-cmd", "true")

    assert_one_line_error(refused, "-t 3600 means 60 hours; for seconds write -t 3600s, for hours -t 60h")
    assert_one_line_error(long_form, "--timeout 1800 means 30 hours; for seconds write --timeout 1800s")
    assert snapshot(project) == before
    assert seconds.returncode == 0, seconds.stderr
    assert "timeout 3600s (-t/--timeout)" in seconds.stdout
    assert "timeout 14400s (-t/--timeout)" in minutes.stdout
    for spelling in ("1e3", "3600.", "+3600", "1_000", "3.6e3"):  # every number a bare duration may be written as
        assert_one_line_error(ralph("run", "-t", spelling, "--agent-cmd", "true"), f"-t {spelling} means")


def test_r_with_a_story_id_is_refused_with_the_resume_flag(project: Path, feature: Path, ralph: RalphRunner):
    before = snapshot(project)

    story = ralph("run", "-r", "9.1", "--agent-cmd", "true")
    named = ralph("run", "-r", "STORY-001", "--agent-cmd", "true")
    rate = ralph("run", "-d", "-r", "9", "--agent-cmd", "true")  # a prd feature: -r is calls per hour

    assert_one_line_error(story, "-r 9.1: -r is agent calls per hour; did you mean --resume-from 9.1?")
    assert_one_line_error(named, "did you mean --resume-from STORY-001?")
    assert snapshot(project) == before
    assert rate.returncode == 0, rate.stderr
    assert "# Guards: 9 calls/hour (-r/--rate-limit" in rate.stdout


def test_a_bare_r_is_ambiguous_in_a_story_spec_project(project: Path, ralph: RalphRunner, ralph_env: dict[str, str]):
    story_root(project, ralph_env)
    before = snapshot(project)

    short = ralph("run", "-r", "9", "--agent-cmd", "true")
    long_form = ralph("run", "-d", "--rate-limit", "9", "--agent-cmd", "true")
    resume = ralph("run", "-d", "--resume-from", "9.2", "--agent-cmd", "true")

    assert_one_line_error(short, "-r 9: ambiguous in a story-spec project", "write --rate-limit 9", "--resume-from")
    assert snapshot(project) == before
    assert long_form.returncode == 0, long_form.stderr
    assert "9 calls/hour (-r/--rate-limit" in long_form.stdout
    assert resume.returncode == 0 and "RALPH_TASK_ID=9.2" in resume.stdout
    bare = ralph("run", "-t", "120", "--agent-cmd", "true")  # seed 002 means 2 minutes, ralph 2 hours
    assert_one_line_error(bare, "-t 120: ambiguous in a story-spec project", "write -t 120s", "or -t 120m")
    assert "timeout 120s (-t/--timeout)" in ralph("run", "-d", "-t", "120s", "--agent-cmd", "true").stdout
    assert snapshot(project) == before


def test_a_refused_seed_spelling_makes_nothing_not_even_in_git(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
):
    """The refusal comes before the run opens the workspace (which makes .git/ralph/, the private index's folder)."""
    story_root(project, ralph_env)
    before = snapshot(project, skip=())

    rate = ralph("run", "-r", "9", "--agent-cmd", "true")
    timeout = ralph("run", "-t", "120", "--agent-cmd", "true")

    assert_one_line_error(rate, "-r 9: ambiguous in a story-spec project")
    assert_one_line_error(timeout, "-t 120: ambiguous in a story-spec project")
    assert not (project / ".git" / "ralph").exists()
    assert snapshot(project, skip=()) == before


def test_d_and_l_are_the_seeds_short_forms(project: Path, ralph: RalphRunner, ralph_env: dict[str, str]):
    story_root(project, ralph_env)
    log = project.parent / "ralph.log"

    dry = ralph("run", "-d", "--agent-cmd", "true")
    run = ralph("run", "-n", "1", "-l", str(log), "--agent-cmd", agent_cmd("spec_agent.py"))

    assert dry.returncode == 0 and dry.stdout.startswith("# Dry run for project: nothing is started")
    assert run.returncode == 1, run.stdout + run.stderr  # one story of two: the iteration limit
    assert "Iteration 1" in log.read_text()


# ---------------------------------------------------------------- each format's seed defaults


def test_story_specs_get_seed_002s_defaults_unless_told(project: Path, ralph: RalphRunner, ralph_env: dict[str, str]):
    story_root(project, ralph_env)

    default = ralph("run", "-d", "--agent-cmd", "true")
    (project / ".ralph").mkdir(exist_ok=True)
    (project / ".ralph" / "config.yaml").write_text("defaults:\n  max_iterations: 7\n")
    configured = ralph("run", "-d", "--agent-cmd", "true", "-t", "10m")

    assert "# Limits: 45 iterations (seed 002's default for a stories workspace)" in default.stdout
    assert "timeout 1800s (seed 002's default for a stories workspace)" in default.stdout
    assert "# Limits: 7 iterations (.ralph/config.yaml (defaults.max_iterations)), timeout 600s" in configured.stdout


def test_the_config_ralph_init_writes_keeps_the_formats_defaults(project: Path, ralph: RalphRunner):
    assert ralph("init", "feat", "--format", "stories").returncode == 0
    spec_file = next((project / ".ralph" / "feat" / "specs").rglob("*.md"))
    spec_file.write_text(spec_file.read_text().replace("Replace this example story with the first real one", "CSV"))

    dry = ralph("run", "-d", "--agent-cmd", "true")

    assert "# Limits: 45 iterations (seed 002's default for a stories workspace)" in dry.stdout, dry.stdout
    assert "timeout 1800s (seed 002's default" in dry.stdout
    assert "a run goes up to 45 iterations" in ralph("status").stdout


def test_a_plan_folder_asks_for_opus_as_seed_004_does(project: Path, ralph: RalphRunner, ralph_env: dict[str, str]):
    plan = project / "plans" / "arena"
    plan.mkdir(parents=True)
    (plan / "TODO.md").write_text("- [ ] build it\n")
    claude = project.parent / "bin" / "claude"
    claude.parent.mkdir()
    claude.write_text("#!/bin/sh\nexit 0\n")
    claude.chmod(0o755)
    with_claude = {"PATH": f"{claude.parent}{os.pathsep}{ralph_env['PATH']}"}

    seed = ralph("run", "plans/arena", "-d", env=with_claude)
    chosen = ralph("run", "plans/arena", "-d", "--model", "sonnet", env=with_claude)
    other_agent = ralph("run", "plans/arena", "-d", "--agent-cmd", "true")

    assert seed.returncode == 0, seed.stderr
    assert "--model opus" in seed.stdout and "model opus" in seed.stdout
    assert "--model sonnet" in chosen.stdout and "--model opus" not in chosen.stdout
    assert "RALPH_MODEL" not in other_agent.stdout  # opus is Claude's: another agent is not asked for it
    assert "cannot verify" not in other_agent.stdout + other_agent.stderr


def test_a_missing_plan_folder_says_todo_md_not_found(project: Path, ralph: RalphRunner):
    before = snapshot(project)

    missing = ralph("run", "plans/nope/")

    assert_one_line_error(missing, "TODO.md not found in plans/nope (FEATURE plans/nope: no such folder)")
    assert snapshot(project) == before


# ---------------------------------------------------------------- seed 000


def test_the_seed_000_command_spellings_work(project: Path, ralph: RalphRunner, ralph_env: dict[str, str]):
    fix_plan_root(project, ralph_env)
    assert ralph("run", "--agent-cmd", "sh -c 'echo boom; exit 1'").returncode == 1

    status = ralph("--status")
    reset = ralph("--reset-circuit")
    after = ralph("status", "--json")

    assert status.returncode == 0 and "Status:     circuit_open" in status.stdout
    assert reset.returncode == 0 and "Circuit breaker reset to CLOSED state (project: was OPEN" in reset.stdout
    assert json.loads(after.stdout)["circuitState"] == "CLOSED"


def _printed_commands(text: str) -> list[str]:
    """Every `ralph ...` command a screen tells the user to run (up to the end of its line or a bracket)."""
    found = re.findall(r"(?<![\w/-])(ralph (?:run|status|reset-circuit)\b[^\n()]*)", text)
    return [command.strip().rstrip(".") for command in found]


@pytest.mark.parametrize("layout", ["alone", "beside-a-feature", "beside-a-same-named-folder"])
def test_every_command_printed_for_a_root_workspace_works_when_pasted(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], layout: str
):
    fix_plan_root(project, ralph_env)
    if layout == "beside-a-feature":  # -f is needed then: the root by its path
        write_prd(project / ".ralph" / "other", 1)
    elif layout == "beside-a-same-named-folder":  # project/project/, a Python package's layout
        (project / "project").mkdir()
        (project / "project" / "TODO.md").write_text("- [ ] another plan's task\n")
    named = [] if layout == "alone" else ["-f", "."]
    stopped = ralph("run", *named, "--agent-cmd", "sh -c 'echo boom; exit 1'")
    screens = stopped.stdout + ralph("status", *named).stdout
    commands = sorted(set(_printed_commands(screens)))
    assert any(command.startswith("ralph reset-circuit") for command in commands), screens

    for command in commands:
        _pasted_from_anywhere(ralph, project, command)
        if command.startswith("ralph reset-circuit"):
            assert json.loads(ralph("status", "--json", *named).stdout)["circuitState"] == "CLOSED", command
            assert ralph("run", *named, "--agent-cmd", "sh -c 'echo boom; exit 1'").returncode == 1
    if layout != "beside-a-feature":  # the root is found without naming it
        assert "ralph reset-circuit   (or: ralph run" in stopped.stdout
    else:
        assert f"ralph reset-circuit -f {project}" in stopped.stdout
    again = shlex.join(["ralph", "run", "--agent-cmd", "sh -c 'echo boom; exit 1'"])
    assert f"(or: {again}" in stopped.stdout  # the same agent when pasted, not Claude Code


def test_reset_circuit_before_any_run_of_a_root_workspace(project: Path, ralph: RalphRunner, ralph_env):
    fix_plan_root(project, ralph_env)

    reset = ralph("--reset-circuit")

    assert reset.returncode == 0, reset.stderr
    assert "Circuit breaker reset to CLOSED state (project: was CLOSED" in reset.stdout


# ---------------------------------------------------------------- a new user


def test_a_dry_run_needs_no_claude_code_installed(project: Path, feature: Path, ralph: RalphRunner):
    dry = ralph("run", "--dry-run")
    real = ralph("run")

    assert dry.returncode == 0, dry.stderr
    assert "# Command (run in" in dry.stdout and "claude -p --output-format stream-json" in dry.stdout
    assert "the agent, Claude Code, is not on PATH" in dry.stderr and "a real run would stop here" in dry.stderr
    assert_one_line_error(real, "the agent, Claude Code, is not on PATH: install it (npm install -g")
    assert "default:" not in real.stderr  # the error names no made-up source


def test_status_before_any_run_says_what_a_run_would_do(project: Path, ralph: RalphRunner, ralph_env):
    feature = project / ".ralph" / "feat"
    write_prd(feature, 2)
    plan = project / "plans" / "x"
    plan.mkdir(parents=True)
    (plan / "TODO.md").write_text("- [ ] one\n")

    prd = ralph("status")
    todo = ralph("status", "-f", "plans/x")

    assert "Iteration:  0 · no run yet (a run goes up to 20 iterations" in prd.stdout
    assert "unlimited" not in prd.stdout
    assert "Iteration:  0 · no run yet (a run goes until complete" in todo.stdout
    assert "Tasks:      not counted before the first run" in todo.stdout and "0 / 0" not in todo.stdout


def test_status_before_any_run_in_a_story_spec_project(project: Path, ralph: RalphRunner, ralph_env):
    story_root(project, ralph_env)

    assert "a run goes up to 45 iterations" in ralph("status").stdout


def test_a_goal_still_the_init_example_is_refused(project: Path, ralph: RalphRunner):
    assert ralph("init", "g", "--format", "goal").returncode == 0

    checked = ralph("validate", "-f", "g")

    assert checked.returncode == 1
    assert "SPRINT.yaml: goal is still the example `ralph init` wrote" in checked.stdout


def test_top_level_help_names_the_seed_spellings() -> None:
    shown = subprocess.run([PYTHON, "-m", "ralphloop", "--help"], capture_output=True, text=True, check=True).stdout
    assert "ralph --status" in shown and "ralph --reset-circuit" in shown


def _pasted_from_anywhere(ralph: RalphRunner, project: Path, command: str) -> None:
    """`command`, pasted as printed (a run as its dry run), works from the root and from a folder inside it."""
    words = shlex.split(command)
    assert words[0] == "ralph", command
    if words[1] == "run":
        words.append("-d")
    (project / "src").mkdir(exist_ok=True)
    for where in (project, project / "src"):
        pasted = ralph(*words[1:], cwd=where)
        assert pasted.returncode == 0, (command, where, pasted.stderr)


def test_the_usage_limit_hint_works_when_pasted_for_a_root_workspace(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
):
    fix_plan_root(project, ralph_env)
    limited = "sh -c 'echo \"Claude AI usage limit reached|4102444800\" >&2; exit 1'"

    stopped = ralph("run", "--on-usage-limit", "exit", "--agent-cmd", limited)

    assert stopped.returncode == 2, stopped.stdout + stopped.stderr
    hint = re.search(r"Then run: (ralph[^\n]*)", stopped.stdout)
    assert hint is not None, stopped.stdout
    assert hint.group(1) == shlex.join(["ralph", "run", "--on-usage-limit", "exit", "--agent-cmd", limited])
    _pasted_from_anywhere(ralph, project, hint.group(1))


def test_the_retry_hint_works_when_pasted_for_a_root_story_project(
    project: Path, tmp_path: Path, ralph: RalphRunner, ralph_env: dict[str, str]
):
    story_root(project, ralph_env)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"*": "fail:tests red"}))

    stopped = ralph("run", "--agent-cmd", agent_cmd("spec_agent.py", str(plan)))

    assert stopped.returncode == 1 and "retries_exhausted" in stopped.stdout
    hint = re.search(r"then run: (ralph run -s 9\.1[^\n]*)", stopped.stdout)
    assert hint is not None, stopped.stdout
    assert "--agent-cmd" in hint.group(1)  # the same agent, not Claude Code
    _pasted_from_anywhere(ralph, project, hint.group(1))


def test_a_folder_with_two_task_files_says_which_one_is_worked(project: Path, ralph: RalphRunner, ralph_env):
    fix_plan_root(project, ralph_env)
    (project / "fix_plan.md").write_text("- [ ] the other plan's item\n")

    dry = ralph("run", "-d", "--agent-cmd", "true")

    assert dry.returncode == 0, dry.stderr
    assert "ralph: warning: . holds fix_plan.md, @fix_plan.md: ralph works fix_plan.md alone" in dry.stderr


def test_a_dry_run_of_a_done_story_says_the_others_are_open(project: Path, ralph: RalphRunner, ralph_env):
    write_specs(project, {"9.1": spec("9.1", status="done"), "9.2": spec("9.2")})
    commit_all(project, ralph_env)

    dry = ralph("run", "-d", "-s", "9.1", "--agent-cmd", "true")

    assert dry.returncode == 0, dry.stderr
    assert "Nothing to do: story 9.1 is done (1 other task(s) still open outside it)." in dry.stdout

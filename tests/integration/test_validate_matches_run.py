"""`ralph validate` and `ralph run` share one check (start/preflight.py), so they cannot disagree: every input
`ralph run` refuses, `ralph validate` reports (naming the file, and the line when there is one), and `ralph
run` refuses it before the first agent call: one line naming the file, exit 1, no agent started, no
iteration log or progress entry, every file left exactly as it was. And what the run accepts, validate
does not report."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import RalphRunner, agent_cmd, write_prd
from tests.integration.helpers import assert_one_line_error, git, snapshot
from tests.integration.test_malformed_tasks import spec, write


def three_stories(project: Path, depends_of_third: str, status_of_second: str = "pending") -> None:
    """Specs 1.1, 1.2 and 1.3 at the project root (seed 002's layout); 1.3 depends on `depends_of_third`."""
    write(project, "specs/epic-1/story-1.1-a.md", spec())
    write(project, "specs/epic-1/story-1.2-b.md", spec(status=status_of_second))
    write(project, "specs/epic-1/story-1.3-c.md", spec(depends_of_third))


def _order_leaves_out_a_dependency(project: Path) -> None:
    # 1.1 can start, so a run used to work on it first and only then stop at 1.3
    three_stories(project, '["1.2"]')
    write(project, ".ralph/config.yaml", 'story_order: ["1.1", "1.3"]\n')


def _order_leaves_out_the_only_dependency(project: Path) -> None:
    three_stories(project, '["1.2"]')
    write(project, ".ralph/config.yaml", 'story_order: ["1.3"]\n')


def _prd_branch(name: str) -> Callable[[Path], None]:
    def build(project: Path) -> None:
        write_prd(project / ".ralph" / "feat", 2, branchName=name)  # branchName on line 3

    return build


def _plan_folder_branch(project: Path) -> None:
    write(project, "plans/my plan/TODO.md", "# Plan\n\n- [ ] first task\n")
    write(project, ".ralph/config.yaml", "branch:\n  auto_create: true\n")


def _prd_null_criteria(project: Path) -> None:
    story = {"id": "S-1", "title": "one", "acceptanceCriteria": None, "priority": 1, "passes": False}
    write_prd(project / ".ralph" / "feat", [story])


def _prompt_not_utf8(project: Path) -> None:
    write_prd(project / ".ralph" / "feat", 2)
    write(project, ".ralph/feat/prompt.md", "# Prompt\n\nCaf\xe9 {{task}}\n".encode("latin-1"))


def _breaker_damaged(project: Path) -> None:
    write_prd(project / ".ralph" / "feat", 2)
    write(project, ".ralph/feat/.circuit_breaker_state", '{"state": ')


def _config(text: str) -> Callable[[Path], None]:
    def build(project: Path) -> None:
        write_prd(project / ".ralph" / "feat", 2)
        write(project, ".ralph/config.yaml", text)

    return build


@dataclass(frozen=True)
class Case:
    build: Callable[[Path], None]
    needles: tuple[str, ...]  # in `ralph run`'s one-line error and in one line of `ralph validate`
    target: tuple[str, ...] = ()  # FEATURE|PLAN_DIR for `ralph run`, -f for `ralph validate`
    agent: bool = True  # give the run a test agent (off when the config's own agent is the problem)


CASES = {
    "story-order-leaves-out-a-dependency": Case(
        _order_leaves_out_a_dependency,
        ("specs/epic-1/story-1.3-c.md:4:", "depends on 1.2", "story_order leaves out", "not done"),
    ),
    "story-order-leaves-out-the-only-dependency": Case(
        _order_leaves_out_the_only_dependency,
        ("specs/epic-1/story-1.3-c.md:4:", "depends on 1.2", "story_order leaves out"),
    ),
    "prd-branch-name-with-a-space": Case(
        _prd_branch("my feature"),
        (".ralph/feat/prd.json:3:", "branchName 'my feature'", "not a valid git branch name"),
        ("feat",),
    ),
    "prd-branch-name-with-two-dots": Case(
        _prd_branch("feature/a..b"),
        (".ralph/feat/prd.json:3:", "branchName 'feature/a..b'", "not a valid git branch name"),
        ("feat",),
    ),
    "branch-from-a-plan-folder-name": Case(
        _plan_folder_branch,
        ("plans/my plan", "'feature/my plan'", "branch.auto_create", "not a valid git branch name"),
        ("plans/my plan",),
    ),
    "prd-criteria-null": Case(
        _prd_null_criteria, (".ralph/feat/prd.json", "userStories[0].acceptanceCriteria"), ("feat",)
    ),
    "prompt-not-utf8": Case(_prompt_not_utf8, (".ralph/feat/prompt.md", "not UTF-8"), ("feat",)),
    "breaker-file-damaged": Case(
        _breaker_damaged, (".ralph/feat/.circuit_breaker_state", "ralph reset-circuit"), ("feat",)
    ),
    "config-unknown-agent": Case(
        _config("agent: nosuch\n"), (".ralph/config.yaml", "unknown agent 'nosuch'"), ("feat",), agent=False
    ),
    "config-scripted-agent-without-script": Case(
        _config("agent: scripted\n"), (".ralph/feat/script.yaml", "not found"), ("feat",), agent=False
    ),
}


def _git_state(project: Path, env: dict[str, str]) -> tuple[str, str]:
    return git(project, env, "for-each-ref", "--format=%(refname) %(objectname)"), git(
        project, env, "symbolic-ref", "HEAD"
    )


def _refused_before_the_agent(
    project: Path,
    ralph: RalphRunner,
    ralph_env: dict[str, str],
    tmp_path: Path,
    args: tuple[str, ...],
    needles: tuple[str, ...],
    agent: bool = True,
) -> str:
    """`ralph run ARGS` fails with one line holding every needle, starts no agent and touches nothing."""
    calls = tmp_path / "agent-calls.jsonl"  # outside the project: an undo cannot take it back
    before, refs = snapshot(project), _git_state(project, ralph_env)

    done = ralph("run", *args, "-n", "2", *(("--agent-cmd", agent_cmd("record_env.py", str(calls))) if agent else ()))

    line = assert_one_line_error(done, *needles)
    assert not calls.exists(), calls.read_text()  # the agent never started
    assert not list(project.rglob("iteration-1.log")) and not list(project.rglob("progress.txt"))
    assert snapshot(project) == before
    assert _git_state(project, ralph_env) == refs
    assert not Path(ralph_env["RALPH_HOME"]).exists()  # no call counted
    return line


def _validate_reports(project: Path, ralph: RalphRunner, target: tuple[str, ...], needles: tuple[str, ...]) -> None:
    before = snapshot(project)

    done = ralph("validate", *(("-f", *target) if target else ()))

    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert any(all(needle in line for needle in needles) for line in lines), (needles, done.stdout)
    assert lines[-1].startswith("1 problem in "), done.stdout  # told once, not by two checks
    assert snapshot(project) == before


@pytest.mark.parametrize("name", list(CASES))
def test_validate_reports_what_run_refuses(project: Path, ralph: RalphRunner, name: str) -> None:
    case = CASES[name]
    case.build(project)

    _validate_reports(project, ralph, case.target, case.needles)


@pytest.mark.parametrize("name", list(CASES))
def test_run_refuses_it_before_the_first_agent_call(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path, name: str
) -> None:
    case = CASES[name]
    case.build(project)

    _refused_before_the_agent(project, ralph, ralph_env, tmp_path, case.target, case.needles, case.agent)


def test_resume_from_that_skips_a_dependency_is_refused_before_the_agent(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    three_stories(project, '["1.1"]')  # 1.2 can start: a run used to work on it, then stop at 1.3

    _refused_before_the_agent(
        project,
        ralph,
        ralph_env,
        tmp_path,
        ("--resume-from", "1.2"),
        ("specs/epic-1/story-1.3-c.md:4:", "depends on 1.1", "--resume-from 1.2 skips", "not done"),
    )


def test_a_left_out_dependency_that_is_done_is_no_problem(project: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    three_stories(project, '["1.2"]', status_of_second="done")
    write(project, ".ralph/config.yaml", 'story_order: ["1.1", "1.3"]\n')
    calls = tmp_path / "agent-calls.jsonl"

    checked = ralph("validate")
    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("record_env.py", str(calls)))

    assert checked.returncode == 0, checked.stdout
    assert calls.exists(), done.stderr  # the run started its agent
    assert [json.loads(line)["env"]["RALPH_TASK_ID"] for line in calls.read_text().splitlines()] == ["1.1"]


def test_story_order_in_the_config_is_no_problem_for_a_prd_workspace(
    project: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    # the config is the project's: story_order is for its story workspaces, not a fault of this one
    write_prd(project / ".ralph" / "feat", 1)
    write(project, ".ralph/config.yaml", 'story_order: ["1.1"]\n')
    calls = tmp_path / "agent-calls.jsonl"

    checked = ralph("validate", "-f", "feat")
    done = ralph("run", "feat", "-n", "1", "--agent-cmd", agent_cmd("record_env.py", str(calls)))

    assert checked.returncode == 0, checked.stdout
    assert calls.exists(), done.stderr


def test_reset_circuit_runs_over_a_damaged_breaker_file(project: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    _breaker_damaged(project)
    calls = tmp_path / "agent-calls.jsonl"

    done = ralph("run", "feat", "-n", "1", "--reset-circuit", "--agent-cmd", agent_cmd("record_env.py", str(calls)))

    assert calls.exists(), done.stderr  # a damaged file is what --reset-circuit is for


def test_a_hook_id_holding_dot_dot_slash_is_no_problem_to_either(
    project: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    # issue 31, item 6: both take it (the id only names the hook's log, made safe as a file name); neither may
    # refuse what the other takes
    assert ralph("init", "g", "--format", "goal").returncode == 0
    sprint = project / ".ralph" / "g" / "SPRINT.yaml"
    text = sprint.read_text().replace("Describe what g should achieve, and how to tell that it has.", "Parse CSV.")
    sprint.write_text(
        text + "per-iteration-hooks:\n  - id: ../../escape\n    command: echo hooked\n    parallel: false\n"
    )
    calls = tmp_path / "agent-calls.jsonl"

    checked = ralph("validate", "-f", "g")
    done = ralph("run", "-f", "g", "-n", "1", "--agent-cmd", agent_cmd("record_env.py", str(calls)))

    assert checked.returncode == 0 and checked.stdout.startswith("ok: "), checked.stdout
    assert calls.exists(), done.stdout + done.stderr  # the run started its agent
    assert "per-iteration hook ../../escape (iteration 1): passed" in done.stdout, done.stdout
    assert (project / ".ralph" / "g" / "logs" / "hooks" / "..-..-escape-1.log").read_text().startswith("hooked")
    assert not (project / ".ralph" / "escape-1.log").exists() and not (project / "escape-1.log").exists()

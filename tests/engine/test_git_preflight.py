"""Git before the first iteration (seeds 003, 004), in-process: a run outside git when git is not required, and the
branch branch.auto_create names. Runs built as `ralph run` builds them, their agents played back (harness.py), real
git. The CLI's side (each refusal's one-line error with every file as it was, the warnings and the branch it
prints) is tests/integration/test_git_preflight.py's.
"""

from __future__ import annotations

from pathlib import Path

from ralphloop.core.exitcodes import ExitReason
from tests.engine.harness import Turn, Turns, git_out, run


def ticking(plan: str) -> Turn:
    """tests/agents/checklist_agent.py on `plan`'s one-box TODO.md: the box ticked, its work written, nothing left."""
    return Turn(
        write={f"{plan}/TODO.md": "- [x] one\n", "work-{n}.txt": "one\n"},
        say="ticked: one\n<promise>COMPLETE</promise>\n",
    )


def test_not_a_repository_runs_when_git_is_not_required(tmp_path: Path, home: Path) -> None:
    plain = tmp_path / "plain"
    (plain / ".ralph").mkdir(parents=True)
    (plain / ".ralph" / "config.yaml").write_text("git:\n  require: false\n")
    (plain / "plans" / "x").mkdir(parents=True)
    (plain / "plans" / "x" / "TODO.md").write_text("- [ ] one\n")

    done = run(plain, Turns(ticking("plans/x")), target="plans/x")

    assert done.outcome.reason.exit_code == 0, done.screen
    assert (plain / "plans" / "x" / "TODO.md").read_text() == "- [x] one\n"


def test_auto_create_uses_the_prefix_without_a_branch_name(project: Path, home: Path) -> None:
    plan = project / "plans" / "tidy"
    plan.mkdir(parents=True)
    (plan / "TODO.md").write_text("- [ ] one\n")
    (project / ".ralph").mkdir()
    (project / ".ralph" / "config.yaml").write_text('branch:\n  auto_create: true\n  prefix: "ralph/"\n')
    git_out(project, "add", "-A")
    git_out(project, "commit", "-q", "-m", "plan")

    done = run(project, Turns(ticking("plans/tidy")), target="plans/tidy")

    assert done.outcome.reason is ExitReason.COMPLETE, done.screen
    assert done.outcome.reason.exit_code == 0, done.screen
    assert git_out(project, "branch", "--show-current").strip() == "ralph/tidy"
    # the task's commit is on that branch, not on main
    assert git_out(project, "log", "--format=%s", "main..ralph/tidy").splitlines() == ["one"]

"""Seed 000's layout end to end: PROMPT.md + @fix_plan.md at the project root (or in .ralph/), done when
every item outside the Optional / Future sections is checked."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import RalphRunner, agent_cmd
from tests.integration.helpers import git

PLAN = (
    "# Fix Plan\r\n\r\n## High Priority\r\n- [ ] Fix the login bug\r\n- [x] [2026-01-29] Triage\r\n"
    "\r\n## Medium Priority\r\n- [ ] Add retries\r\n\r\n## Future Enhancements\r\n- [ ] Dark mode\r\n"
    "\r\n## Nice to Have\r\n- [ ] Emoji\r\n"
)
PROMPT = "# My instructions\n\nWork the fix plan. USER-PROMPT-MARKER\n"


def test_root_fix_plan_completes_ignoring_future_items(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    (project / "@fix_plan.md").write_bytes(PLAN.encode())
    (project / "PROMPT.md").write_text(PROMPT)
    git(project, ralph_env, "add", "-A")
    git(project, ralph_env, "commit", "-q", "-m", "plan")
    done = ralph("run", "--agent-cmd", agent_cmd("checklist_agent.py", "@fix_plan.md"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ALL COMPLETE!" in done.stdout
    text = (project / "@fix_plan.md").read_bytes().decode()
    assert "- [x] Fix the login bug\r\n" in text and "- [x] Add retries\r\n" in text
    assert "- [ ] Dark mode" in text and "- [ ] Emoji" in text  # never needed for completion
    # PROMPT.md is the prompt: the user's words reach the agent
    prompt = (project / ".ralph" / "logs" / "iteration-1.prompt.md").read_text()
    assert "USER-PROMPT-MARKER" in prompt and "Fix the login bug" in prompt
    assert len(list((project / ".ralph" / "logs").glob("iteration-*.log"))) == 2


def test_fix_plan_under_dot_ralph(project: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    (project / ".ralph").mkdir()
    (project / ".ralph" / "fix_plan.md").write_text("## Tasks\n- [ ] one thing\n")
    (project / ".ralph" / "PROMPT.md").write_text(PROMPT)
    done = ralph("run", "--agent-cmd", agent_cmd("checklist_agent.py", ".ralph/fix_plan.md"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert (project / ".ralph" / "fix_plan.md").read_text() == "## Tasks\n- [x] one thing\n"
    assert "USER-PROMPT-MARKER" in (project / ".ralph" / "logs" / "iteration-1.prompt.md").read_text()


# every optional marker ralph reads (docs/tasks.md), named wherever a prompt states the completion rule
MARKERS = ("Optional", "Future", "Nice to Have", "Someday", "Stretch", "Deferred", "Wishlist")


def test_every_prompt_names_every_section_ralph_counts_as_optional(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    plan = "## Tasks\n- [ ] Add login\n\n## Someday\n- [ ] Dark mode\n\n## LOW — Deferred to Phase 2\n- [ ] Emoji\n"
    (project / "fix_plan.md").write_text(plan)
    git(project, ralph_env, "add", "-A")
    git(project, ralph_env, "commit", "-q", "-m", "plan")
    dry = ralph("run", "--dry-run", "--agent-cmd", agent_cmd("checklist_agent.py", "fix_plan.md"))
    assert dry.returncode == 0, dry.stdout + dry.stderr
    prompt = " ".join(dry.stdout.split())  # the built-in fix-plan prompt and the current task's section
    template, _, section = prompt.partition("## Current task: Add login")
    assert "counts as optional" in template and "Nice to Have" not in template  # said generally: the task names them
    assert "counts as optional" in section and all(marker in section for marker in MARKERS), section
    created = ralph("init", "--format", "fix-plan", "demo")
    assert created.returncode == 0, created.stdout + created.stderr
    written = " ".join((project / ".ralph" / "demo" / "PROMPT.md").read_text().split())
    assert "counts as optional" in written and all(marker in written for marker in MARKERS), written

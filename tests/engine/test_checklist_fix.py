"""Real users' checklists (issue 31), in-process: a run built as `ralph run` builds it for a plan at the project root,
its agent played back (harness.py), real git and the real task file. Table rows are tasks the agent ticks in their
cells. What `ralph validate --fix` shows, asks and writes, and the refusals' words, are
tests/integration/test_checklist_fix.py's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.runner import Launch
from ralphloop.processes.replay import Recording
from tests.engine.harness import Turns, run
from tests.integration.test_story_specs import commit_all


@dataclass(frozen=True)
class Ticker:
    """tests/agents/checklist_agent.py for a plan with no Optional section: ticks the first open box of `plan`
    (a list item's or a table cell's), writes work-N.txt for it, and says COMPLETE when no open box is left."""

    plan: str

    def recording(self, launch: Launch) -> Recording:
        path = Path(launch.command.env["RALPH_FEATURE_DIR"]) / self.plan
        text = path.read_text().replace("[ ]", "[x]", 1)
        number = launch.command.env["RALPH_ITERATION"]
        said = f"ticked in iteration {number}\n" + ("" if "[ ]" in text else "<promise>COMPLETE</promise>\n")
        edits = {str(path.relative_to(launch.cwd)): text, f"work-{number}.txt": "ticked\n"}
        return Recording(said.encode(), edits=edits)


def test_table_rows_are_tasks_the_agent_ticks_in_their_cells(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    plan = "# Plan\n\n| # | Task | Status |\n|---|------|--------|\n| 1 | Add login | [ ] |\n| 2 | Add logout | [ ] |\n"
    (project / "fix_plan.md").write_text(plan)
    commit_all(project, ralph_env)

    done = run(project, Turns(then=Ticker("fix_plan.md")), feature=None)

    assert done.outcome.reason is ExitReason.COMPLETE and "ALL COMPLETE!" in done.screen, done.screen
    assert (project / "fix_plan.md").read_text().endswith("| 1 | Add login | [x] |\n| 2 | Add logout | [x] |\n")
    prompt = (project / ".ralph" / "logs" / "iteration-1.prompt.md").read_text()
    assert "tick its box in the table row on line 5 (the cell `[ ]` becomes `[x]`)" in prompt

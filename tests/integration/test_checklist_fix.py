"""Real users' checklists through the real CLI (issue 31; samples in tests/fixtures/wild/): a fix plan in
plain bullets is refused by `ralph validate` and `ralph run` in the same words, naming the line and `ralph validate
--fix`; the fix shows its diff, saves the original, asks on a terminal, and what it writes `ralph run` accepts; a
declined, cancelled or impossible fix changes nothing. m42-sprint files are told apart. That table rows are tasks
the agent ticks in their cells is tests/engine/test_checklist_fix.py's, in-process."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import RalphRunner, agent_cmd
from tests.integration.conftest import Background
from tests.integration.helpers import assert_one_line_error, git, snapshot, wait_until
from tests.integration.on_terminal import OnTerminal, terminal_env

WILD = Path(__file__).parent.parent / "fixtures" / "wild"
LIBRE = WILD / "fixplan" / "LibreLoom__LibreServ" / "fix_plan.md"
REFUSAL = (
    "fix_plan.md:4: `- Add CSRF protection for browser flows (issue/validate tok…` is a plain bullet: ralph counts "
    "only checkboxes (`- [ ] task`); `ralph validate -f . --fix` turns the 13 bullets into checkboxes"
)
CHECK = "--agent-cmd"


def commit_sample(project: Path, env: dict[str, str], sample: Path, *names: str) -> None:
    """The sample's files (`names`, relative to it) in the project, committed as their authors had them."""
    for name in names:
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sample / name, project / name)
    git(project, env, "add", "-A")
    git(project, env, "commit", "-q", "-m", "as found")


def test_validate_and_run_refuse_a_plan_in_bullets_with_the_same_words(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    commit_sample(project, ralph_env, LIBRE.parent, "fix_plan.md")
    before = snapshot(project)
    checked = ralph("validate")
    assert checked.returncode == 1 and checked.stdout.splitlines()[0] == REFUSAL, checked.stdout + checked.stderr
    refused = ralph("run", "--dry-run", CHECK, agent_cmd("checklist_agent.py", "fix_plan.md"))
    assert_one_line_error(refused, REFUSAL)
    assert (
        ralph("run", CHECK, agent_cmd("checklist_agent.py", "fix_plan.md")).stderr.strip() == f"ralph: error: {REFUSAL}"
    )
    assert snapshot(project) == before


def test_the_fix_shows_its_diff_saves_the_original_and_the_run_accepts_the_result(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    commit_sample(project, ralph_env, LIBRE.parent, "fix_plan.md")
    original = LIBRE.read_bytes()
    fixed = ralph("validate", "--fix")  # no terminal: the flag is the consent
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    out = fixed.stdout.splitlines()
    assert out[:2] == ["--- fix_plan.md (as it is)", "+++ fix_plan.md (with checkboxes)"]
    assert (
        "-- Add CSRF protection for browser flows (issue/validate tokens; require on all state-changing endpoints)."
        in out
    )
    assert (
        "+- [ ] Add CSRF protection for browser flows (issue/validate tokens; require on all state-changing endpoints)."
        in out
    )
    assert out[-2:] == [
        "fix_plan.md: 13 bullets turned into checkboxes; the original is saved as fix_plan.md.orig",
        "ok: .: fix_plan.md valid",
    ]
    assert (project / "fix_plan.md.orig").read_bytes() == original
    text = (project / "fix_plan.md").read_text()
    assert text.count("- [ ] ") == 13 and text.replace("- [ ] ", "- ") == original.decode()
    dry = ralph("run", "--dry-run", CHECK, agent_cmd("checklist_agent.py", "fix_plan.md"))
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "## Current task: Add CSRF protection for browser flows" in dry.stdout
    # and a real loop works it, ticking the boxes the fix wrote
    run = ralph("run", "-n", "2", CHECK, agent_cmd("checklist_agent.py", "fix_plan.md"))
    assert run.returncode == 1 and "exit 1 (max_iterations)" in run.stdout, run.stdout + run.stderr
    assert (project / "fix_plan.md").read_text().count("- [x] ") == 2


def test_a_copy_saved_before_is_never_overwritten(project: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    commit_sample(project, ralph_env, LIBRE.parent, "fix_plan.md")
    (project / "fix_plan.md.orig").write_text("the user's own backup\n")
    fixed = ralph("validate", "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "the original is saved as fix_plan.md.orig.2" in fixed.stdout
    assert (project / "fix_plan.md.orig").read_text() == "the user's own backup\n"
    assert (project / "fix_plan.md.orig.2").read_bytes() == LIBRE.read_bytes()


def test_the_fix_boxes_a_numbered_queue_and_leaves_notes_and_the_record_alone(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    sample = WILD / "fixplan" / "SecBear__neuron"
    commit_sample(project, ralph_env, sample, "fix_plan.md", "PROMPT.md")
    fixed = ralph("validate", "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    before = (sample / "fix_plan.md").read_text().splitlines()
    after = (project / "fix_plan.md").read_text().splitlines()
    assert [number for number, (a, b) in enumerate(zip(before, after, strict=True), start=1) if a != b] == [13, 23]
    dry = ralph("run", "--dry-run", CHECK, agent_cmd("checklist_agent.py", "fix_plan.md"))
    assert "## Current task: Make orchestration “core complete” for composed systems" in dry.stdout, dry.stderr


@pytest.mark.parametrize(("answer", "written"), [(b"n\r", False), (b"\x04", False), (b"y\r", True)])
def test_on_a_terminal_the_fix_is_asked_and_only_yes_writes(
    project: Path, ralph_env: dict[str, str], background: Background, answer: bytes, written: bool
) -> None:
    commit_sample(project, ralph_env, LIBRE.parent, "fix_plan.md")
    before = snapshot(project)
    term = OnTerminal(["validate", "--fix"], project, terminal_env(ralph_env), background)
    question = "Turn these 13 bullets into checkboxes? The original is kept as fix_plan.md.orig. [y/N]"
    assert_eventually(lambda: question in " ".join(term.text.split()))
    assert snapshot(project) == before  # nothing is written while ralph asks
    term.type(answer)
    code, text = term.finish()
    if written:
        assert code == 0 and "ok: .: fix_plan.md valid" in text
        assert (project / "fix_plan.md.orig").read_bytes() == LIBRE.read_bytes()
    else:
        assert code == 1 and "fix_plan.md: left as it was" in text and REFUSAL in " ".join(text.split())
        assert snapshot(project) == before


def assert_eventually(predicate: Callable[[], bool]) -> None:
    assert wait_until(predicate, limit=60)


def test_a_plan_the_fix_cannot_box_is_left_as_it_was(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    commit_sample(project, ralph_env, WILD / "fixplan" / "Eiai-Solutions__AxenWP", "fix_plan.md")
    before = snapshot(project)
    fixed = ralph("validate", "--fix")
    assert fixed.returncode == 1 and "---" not in fixed.stdout
    assert fixed.stdout.startswith("fix_plan.md:5: `### 1. [DONE] Add chat history cleanup")
    assert snapshot(project) == before


def test_a_real_table_plan_is_accepted(project: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    commit_sample(project, ralph_env, WILD / "fixplan" / "Davidc4ke__ZoniqPM", ".ralph/fix_plan.md", ".ralph/PROMPT.md")
    assert ralph("validate").stdout.strip().endswith("ok: .: fix_plan.md valid")
    dry = ralph("run", "--dry-run", CHECK, agent_cmd("checklist_agent.py", ".ralph/fix_plan.md"))
    assert "## Current task: 1.1 | Run `/bmad-bmm-create-story` for story 1-1" in dry.stdout, dry.stderr


LEGEND = "| Box | Meaning |\n|---|---|\n| [ ] | not started |\n| [x] | done |\n"


@pytest.mark.parametrize(
    "plan",
    [
        f"# Plan\n\n## Legend\n\n{LEGEND}\n## Tasks\n\n- [x] Add login\n- [x] Add logout\n",
        "# Plan\n\n## Tasks\n\n- [x] Add login\n- [x] Add logout\n\n## Key\n\n- [ ] not started\n- [x] done\n",
        f"# Plan\n\nHow to mark a task:\n\n{LEGEND}\n## Tasks\n\n- [x] Add login\n- [x] Add logout\n",
    ],
)
def test_a_legend_never_holds_a_finished_plan_back(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], plan: str
) -> None:
    (project / "fix_plan.md").write_text(plan)
    git(project, ralph_env, "add", "-A")
    git(project, ralph_env, "commit", "-q", "-m", "plan")
    dry = ralph("run", "--dry-run", CHECK, agent_cmd("checklist_agent.py", "fix_plan.md"))
    assert dry.returncode == 0 and "Nothing to do: every task in fix_plan.md is done." in dry.stdout, dry.stdout
    (project / "fix_plan.md").write_text(plan.replace("- [x] Add logout", "- [ ] Add logout"))
    dry = ralph("run", "--dry-run", CHECK, agent_cmd("checklist_agent.py", "fix_plan.md"))
    assert "## Current task: Add logout\n" in dry.stdout, dry.stdout + dry.stderr


@pytest.mark.parametrize("name", ["fix_plan.md", "TODO.md"])
def test_the_fix_writes_no_file_through_a_link(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path, name: str
) -> None:
    outside = tmp_path / "elsewhere" / "outside.md"
    outside.parent.mkdir()
    shutil.copyfile(LIBRE, outside)
    (project / name).symlink_to(outside)
    before, elsewhere = snapshot(project), snapshot(outside.parent)
    fixed = ralph("validate", "-f", ".", "--fix")  # no terminal: the flag would be the consent
    assert_one_line_error(
        fixed,
        f"{name}: a symbolic link (to {outside}): ralph writes no file through a link; "
        f"put a copy of the file in its place to have it fixed: nothing written",
    )
    assert fixed.stdout == ""  # no diff of a change that is not made
    assert snapshot(project) == before and snapshot(outside.parent) == elsewhere
    assert (project / name).is_symlink() and outside.read_bytes() == LIBRE.read_bytes()


def test_the_original_is_never_saved_through_a_link(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    commit_sample(project, ralph_env, LIBRE.parent, "fix_plan.md")
    bait = tmp_path / "elsewhere" / "copy.md"  # a link where the copy would go, to a file not there yet
    bait.parent.mkdir()
    (project / "fix_plan.md.orig").symlink_to(bait)
    fixed = ralph("validate", "--fix")
    assert fixed.returncode == 0 and "the original is saved as fix_plan.md.orig.2" in fixed.stdout, fixed.stdout
    assert not bait.exists() and (project / "fix_plan.md.orig").is_symlink()
    assert (project / "fix_plan.md.orig.2").read_bytes() == LIBRE.read_bytes()


EXPECTED = "workflow: expected ralph, not"
SPRINTS = {
    "bughunt": (".claude/sprints/2026-01-20_bughunt-m42-sprint", f":10: {EXPECTED} 'bughunt-full'"),
    "claudemd": (".claude/sprints/2026-02-05_claudemd-commands", f":2: {EXPECTED} 'plugin-development'"),
    "minimal-fixture": ("plugins/m42-sprint/e2e/fixtures/minimal-sprint", f":6: {EXPECTED} 'tdd-cycle'"),
    "pdf-export": (".claude/sprints/2026-01-21_issue-13-pdf-export", f":4: {EXPECTED} 'plugin-development'"),
    "test-ralph-loop": (".claude/sprints/2026-01-15_Test-Ralph-Loop", ": no `workflow:` key"),
    "ralph-refactor": (".claude/sprints/2026-01-18_m42-sprint-refactor", ""),
}


@pytest.mark.parametrize("sample", sorted(SPRINTS))
def test_each_m42_sprint_is_accepted_or_refused_naming_line_and_near_miss(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], sample: str
) -> None:
    folder, words = SPRINTS[sample]
    source = WILD / "sprint" / f"Mission42-ai__m42-claude-plugins--{sample}"
    names = [str(path.relative_to(source)) for path in source.rglob("*") if path.is_file()]
    commit_sample(project, ralph_env, source, *names)
    checked = ralph("validate", "-f", folder)
    dry = ralph("run", "--dry-run", folder, CHECK, agent_cmd("checklist_agent.py", "SPRINT.yaml"))
    if not words:
        assert checked.returncode == 0 and checked.stdout.strip().endswith("SPRINT.yaml valid"), checked.stdout
        assert dry.returncode == 0, dry.stdout + dry.stderr
        return
    first = checked.stdout.splitlines()[0]
    assert checked.returncode == 1 and first.startswith(f"{folder}/SPRINT.yaml{words}"), checked.stdout
    assert "ralph runs a SPRINT.yaml only with `workflow: ralph`" in first
    assert_one_line_error(dry, first)  # ralph run: the same words

"""The plug-in packages of tests/plugins, installed in the test venv as a user installs a third party's, run
through the real `ralph`: they reach every surface a built-in does, through the same seams."""

from __future__ import annotations

import io
import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

from ralphloop.monitor.snapshot import read_snapshot
from ralphloop.monitor.views import dashboard
from ralphloop.project.resolve import resolve_feature
from tests.conftest import PYTHON, RalphRunner, read_json, write_prd


def now() -> datetime:
    return datetime.now(UTC)


def test_an_agent_plugin_runs_with_its_own_parser_and_its_log_reads_through_its_own_reader(
    feature: Path, ralph: RalphRunner
) -> None:
    write_prd(feature, 1)

    done = ralph("run", "--agent", "tape", "-n", "1", "--no-archive")

    assert done.returncode == 0, done.stderr
    assert read_json(feature / "prd.json")["userStories"][0]["passes"] is True
    status = read_json(feature / "status.json")
    assert status["agent"] == "tape"
    assert status["costUsd"] == 0.25  # its parser read the cost from its own `done` line
    metrics = [json.loads(line) for line in (feature / "ralph_metrics.jsonl").read_text().splitlines()]
    assert [line.get("agent") for line in metrics] == ["tape"]

    logs = ralph("logs", "1")

    assert logs.returncode == 0, logs.stderr
    assert "tape says: working on S-1" in logs.stdout
    assert "tape did: marked S-1 as passing" in logs.stdout
    assert "tape done: S-1 passes" in logs.stdout
    assert '{"say"' not in logs.stdout  # read, not dumped
    raw = ralph("logs", "1", "--raw")
    assert '{"say": "working on S-1"}' in raw.stdout
    # `ralph analyze` reads its log through its own sniffer and parser, as the loop read its output
    for args in (("1",), ("1", "--agent", "tape"), ("1", "--format", "tape-json")):
        analyzed = ralph("analyze", *args, "--json")
        assert analyzed.returncode == 0, analyzed.stderr
        assert json.loads(analyzed.stdout)["format"] == "tape-json"
    near = ralph("analyze", "1", "--format", "tape-jsn")
    assert near.returncode == 1 and "did you mean 'tape-json'?" in near.stderr and "Traceback" not in near.stderr


def test_an_agent_plugin_is_shown_by_a_dry_run_with_the_defaults_it_left_out(feature: Path, ralph: RalphRunner) -> None:
    write_prd(feature, 1)

    done = ralph("run", "--agent", "tape", "--dry-run")

    assert done.returncode == 0, done.stderr
    assert "# Agent: tape (from --agent)" in done.stdout
    assert "-m ralphloop_tape.cli" in done.stdout
    # it sets no permissions of its own: the setting's is shown
    assert "# Permissions: edits" in done.stdout


# The stand-in agent for the lines format: marks the line of its task done, as an agent following the prompt would.
TICK = """
import os, sys
sys.stdin.read()
path = os.path.join(os.environ["RALPH_FEATURE_DIR"], "TASKS.txt")
number = int(os.environ["RALPH_TASK_ID"].removeprefix("L"))
lines = open(path, encoding="utf-8").read().splitlines()
lines[number - 1] = lines[number - 1].replace("[ ]", "[x]", 1)
open(path, "w", encoding="utf-8").write("\\n".join(lines) + "\\n")
print(f"ticked line {number}")
"""


def git_out(project: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=project, capture_output=True, text=True, check=True).stdout


def lines_feature(project: Path, text: str) -> Path:
    folder = project / ".ralph" / "chores"
    folder.mkdir(parents=True)
    (folder / "TASKS.txt").write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "chores"], cwd=project, check=True)
    return folder


def test_a_format_plugin_is_validated_run_and_shown_like_a_built_in_one(
    project: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    folder = lines_feature(project, "# chores\n[ ] Sweep the floor\n\n[ ] Water the plants\n")
    tick = tmp_path / "tick.py"
    tick.write_text(TICK)

    checked = ralph("validate")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.strip() == "ok: .ralph/chores: TASKS.txt valid"
    dry = ralph("run", "--agent-cmd", f"{PYTHON} {tick}", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "You work one line of a task list per iteration." in dry.stdout  # its own template
    assert "## Current task: Sweep the floor" in dry.stdout  # its own words for the task

    done = ralph("run", "--agent-cmd", f"{PYTHON} {tick}", "--no-archive")

    assert done.returncode == 0, done.stdout + done.stderr
    assert (folder / "TASKS.txt").read_text() == "# chores\n[x] Sweep the floor\n\n[x] Water the plants\n"
    log = subprocess.run(["git", "log", "--format=%s", "-3"], cwd=project, capture_output=True, text=True, check=True)
    assert log.stdout.splitlines()[:2] == ["Water the plants", "Sweep the floor"]  # title_commits: the task alone
    status = ralph("status", "--json")
    report = json.loads(status.stdout)
    assert (report["format"], report["storiesComplete"], report["storiesTotal"]) == ("lines", 2, 2)
    assert report["status"] == "complete"
    assert "Lines:" in ralph("status").stdout
    receipt = ralph("report", "--json")
    assert receipt.returncode == 0, receipt.stderr
    assert [row["id"] for row in json.loads(receipt.stdout)["stories"]] == ["L2", "L4"]
    frame = io.StringIO()
    Console(file=frame, width=100, height=30).print(
        dashboard(read_snapshot(resolve_feature(str(project), None), now()))
    )
    assert "chores" in frame.getvalue() and "2/2" in frame.getvalue().replace(" ", "")


def test_init_makes_a_plugin_formats_feature_and_names_the_near_miss(project: Path, ralph: RalphRunner) -> None:
    made = ralph("init", "chores", "--format", "lines")

    assert made.returncode == 0, made.stderr
    assert (project / ".ralph" / "chores" / "TASKS.txt").read_text().startswith("# chores\n[ ] ")
    assert "Next: write the tasks in .ralph/chores/TASKS.txt" in made.stdout
    before = sorted(path.name for path in (project / ".ralph").iterdir())
    wrong = ralph("init", "more", "--format", "line")
    assert wrong.returncode == 1
    assert wrong.stderr == (
        "ralph: error: --format 'line': no such task format; did you mean 'lines'? the formats: prd, todo, "
        "fix-plan, stories, goal, lines\n"
    )
    assert sorted(path.name for path in (project / ".ralph").iterdir()) == before


def test_a_format_plugin_names_the_line_of_a_problem(project: Path, ralph: RalphRunner) -> None:
    folder = lines_feature(project, "[ ] Sweep the floor\nsweep again\n")
    before = (folder / "TASKS.txt").read_bytes()

    checked = ralph("validate")
    run = ralph("run", "--agent-cmd", "true")
    parallel = ralph("run", "--parallel", "2", "--agent-cmd", "true")

    problem = ".ralph/chores/TASKS.txt:2: not a task line (write `[ ] task` or `[x] task`): 'sweep again'"
    assert checked.returncode == 1 and problem in checked.stdout
    assert run.returncode == 1 and run.stderr == f"ralph: error: {problem}\n"
    assert parallel.returncode == 1 and parallel.stderr == f"ralph: error: {problem}\n"
    assert (folder / "TASKS.txt").read_bytes() == before


# The lines agent of a parallel loop: its own work in a file of its own, then its line ticked.
WORK = TICK.replace(
    "sys.stdin.read()", "sys.stdin.read()\nopen(f'work-{os.environ[\"RALPH_TASK_ID\"]}.txt', 'w').write('done')"
)


def test_a_format_plugin_runs_its_tasks_in_parallel_each_merged_and_marked_by_its_own_format(
    project: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    folder = lines_feature(
        project, "# chores\n[ ] Sweep the floor\n[ ] Water the plants\n[x] Buy a broom\n[ ] Feed the cat\n"
    )
    work = tmp_path / "work.py"
    work.write_text(WORK)

    done = ralph("run", "--parallel", "2", "--agent-cmd", f"{PYTHON} {work}")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "Parallel run of chores: 4 stories" in done.stdout
    target = done.stdout.split("All 4 stories merged into ")[1].split(".\n")[0]
    assert git_out(project, "show", f"{target}:.ralph/chores/TASKS.txt") == (
        "# chores\n[x] Sweep the floor\n[x] Water the plants\n[x] Buy a broom\n[x] Feed the cat\n"
    )
    for task in ("L2", "L3", "L5"):  # each loop's work merged, then marked by the format's own `mark`
        assert git_out(project, "show", f"{target}:work-{task}.txt") == "done"
    subjects = git_out(project, "log", "--format=%s", target).splitlines()
    assert {"L2: passes (merged by ralph)", "L3: passes (merged by ralph)", "L5: passes (merged by ralph)"} <= set(
        subjects
    )
    fleet = read_json(folder / "fleet.json")
    assert fleet["status"] == "complete" and fleet["storiesMerged"] == 4
    assert (folder / "TASKS.txt").read_text().count("[ ]") == 3  # the user's checkout is left as it was


def test_a_plugin_format_that_cannot_be_loaded_is_named_where_its_folder_is_nobodys(
    project: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    info = site / "ralph_notes-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ralph-notes\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[ralphloop.formats]\nnotes = ralph_notes:FORMAT\n")
    folder = project / ".ralph" / "jots"
    folder.mkdir(parents=True)
    (folder / "NOTES.txt").write_text("- a note\n")

    done = ralph("run", "-f", "jots", "--agent-cmd", "true", env={"PYTHONPATH": str(site)})

    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert (
        "; plug-in format 'notes' could not be loaded (ralph_notes:FORMAT from ralph-notes 0.1: ModuleNotFoundError: "
        "No module named 'ralph_notes')" in done.stderr
    )

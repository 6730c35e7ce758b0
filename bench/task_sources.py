"""Reading the task source: target well under 100 ms for one iteration's reads at these sizes.

Builds, in a throwaway git project (with a .ralph/ folder, so the project root is found), one large
workspace of each kind, then times `load()` of the real source, as the loop calls it, and `detect()`:
- TODO.md: 10,000 checkbox lines under 100 sections: some nested under their task, some in code fences
  (examples, which are not tasks), some in HTML comments; the first 40% ticked;
- fix_plan.md: 5,000 items across High/Medium/Low Priority (with ### subsections), Optional and Future
  Enhancements sections (not tasks), the first 40% of the counted items ticked;
- story specs: 500 specs across 50 epics (specs/epic-N/story-N.M-slug.md), YAML frontmatter with status,
  priority, estimation, frs and depends_on chains (each story on the one before it, the first of an epic
  on the last of the epic before, some on a second story too), 40% done, with progress.txt and state.json;
- prd.json: 1,000 stories (description, 4 acceptance criteria, notes), 40% passing.
Each source's first load in a fresh process is timed too (re's pattern cache emptied before each run), and
the story source again at 520 and 600 specs: its per-id regexes overflow re's cache of 512 patterns there.
Then `ralph validate -f stories` (the installed console script, as a subprocess) on the 500-spec workspace.

The loop reads the task source once after each agent run, and a second time when ralph marks the
story done itself (story specs only): one iteration is 1 load, 2 for story specs.

    .venv/bin/python bench/task_sources.py                 # the numbers
    .venv/bin/python bench/task_sources.py --profile todo  # cProfile of one source's load() (todo, fix-plan,
                                                           # stories, prd), the 15 hottest functions
"""

from __future__ import annotations

import cProfile
import json
import os
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from _project import ENV, ralph_executable
from ralphloop.core.protocols import TaskSource, TaskView
from ralphloop.plugins.formats import detect
from ralphloop.tasks.fix_plan import FixPlanSource
from ralphloop.tasks.prd_json import PrdSource
from ralphloop.tasks.stories.source import StorySource
from ralphloop.tasks.todo_md import TodoSource

RUNS = 31
WARMUP = 2
COLD_RUNS = 11
DETECT_RUNS = 2001
VALIDATE_RUNS = 15
LOADS_PER_ITERATION = {"stories": 2}  # every other source: 1
TARGET_MS = 100.0  # one iteration's task reading: "well under" this

TODO_BOXES = 10_000
FIX_PLAN_ITEMS = 5_000
EPICS, STORIES_PER_EPIC = 50, 10
PRD_STORIES = 1_000
DONE_SHARE = 0.4

WORDS = ("parser", "slug", "token", "story", "result", "value", "index", "cache", "config", "report", "session")
WORDS += ("event", "stream", "buffer", "limit", "retry", "commit", "branch", "feature", "status", "usage", "window")


def _text(number: int, length: int = 8) -> str:
    return " ".join(WORDS[(number * 7 + step * 3) % len(WORDS)] for step in range(length))


# ---------------------------------------------------------------- building the workspaces


def build_todo(folder: str) -> tuple[int, int, int]:
    """TODO.md with TODO_BOXES checkbox lines; returns (boxes that are tasks, the first open one's number,
    boxes in fences and comments)."""
    lines = ["# Big plan", "", "ralph works these tasks top to bottom.", ""]
    boxes = counted = hidden = first_open = main = 0
    while boxes < TODO_BOXES:
        if main % 40 == 0:
            section = main // 40 + 1
            lines += [f"## Phase {section}: {_text(section, 3)}", "", f"Why phase {section}: {_text(section, 20)}.", ""]
        main += 1
        number = counted + 1
        done = boxes < TODO_BOXES * DONE_SHARE
        if not done and not first_open:
            first_open = number
        lines.append(f"- [{'x' if done else ' '}] Task {number}: {_text(number)} (`src/{WORDS[number % 22]}.py`)")
        boxes, counted = boxes + 1, counted + 1
        if main % 4 == 0 and boxes + 2 <= TODO_BOXES:  # two nested sub-tasks: tasks too
            for sub in (1, 2):
                lines.append(f"  - [{'x' if done else ' '}] Step {sub} of task {number}: {_text(number + sub, 5)}")
            boxes, counted = boxes + 2, counted + 2
        if main % 20 == 0 and boxes + 3 <= TODO_BOXES:  # an example in a fence: not tasks
            lines += ["", "  ```markdown", *(f"  - [ ] example {n}" for n in range(3)), "  ```", ""]
            boxes, hidden = boxes + 3, hidden + 3
        if main % 100 == 0 and boxes + 1 <= TODO_BOXES:  # a commented-out task: not a task
            lines.append(f"<!-- - [ ] dropped task near {number} -->")
            boxes, hidden = boxes + 1, hidden + 1
    with open(os.path.join(folder, "TODO.md"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return counted, first_open, hidden


FIX_PLAN_SECTIONS = (
    ("High Priority", True),
    ("Medium Priority", True),
    ("Optional", False),
    ("Low Priority", True),
    ("🔮 Future Enhancements (later)", False),
)


def build_fix_plan(folder: str) -> int:
    """fix_plan.md (and PROMPT.md) with FIX_PLAN_ITEMS items; returns how many are tasks."""
    per_section = FIX_PLAN_ITEMS // (len(FIX_PLAN_SECTIONS) * 4)  # four rounds of the five sections
    lines = ["# Fix plan: big", "", "The agent works the top unchecked item first.", ""]
    items = counted = 0
    while items < FIX_PLAN_ITEMS:
        for title, counts in FIX_PLAN_SECTIONS:
            lines += [f"## {title}", ""]
            for index in range(per_section):
                if index % 25 == 0:
                    lines += ["", f"### Area {items // 25}", ""]
                done = counts and counted < FIX_PLAN_ITEMS * 0.6 * DONE_SHARE
                lines.append(f"- [{'x' if done else ' '}] Item {items + 1}: {_text(items)}")
                items += 1
                counted += counts
            lines.append("")
    with open(os.path.join(folder, "fix_plan.md"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines))
    with open(os.path.join(folder, "PROMPT.md"), "w", encoding="utf-8") as handle:
        handle.write("# Instructions\n\nWork the top unchecked item of fix_plan.md.\n")
    return counted


def story_ids(epics: int = EPICS) -> list[str]:
    return [f"{epic}.{story}" for epic in range(1, epics + 1) for story in range(1, STORIES_PER_EPIC + 1)]


def build_stories(folder: str, state_dir: str, epics: int = EPICS) -> str:
    """`epics` x STORIES_PER_EPIC specs in a dependency chain; returns the id of the first open story."""
    ids = story_ids(epics)
    done = set(ids[: int(len(ids) * DONE_SHARE)])
    for index, story in enumerate(ids):
        epic, number = story.split(".")
        deps = [ids[index - 1]] if index else []
        if index >= 12 and index % 6 == 0:
            deps.append(ids[index - 12])
        priority = ("high", "medium", "low", "P1", "2")[index % 5]
        text = "\n".join(
            [
                "---",
                f"status: {'done' if story in done else 'pending'}",
                f"priority: {priority}",
                f"estimation: {index % 8 + 1}",
                f"depends_on: [{', '.join(deps)}]" if index % 2 else "depends_on:",
                *([f"  - {dep}" for dep in deps] if not index % 2 else []),
                f"frs: [FR-{index}, FR-{index + 1}]",
                "---",
                "",
                f"# Story {story}: {_text(index, 5)}",
                "",
                f"As a user, I want {_text(index, 12)}, so that {_text(index + 1, 10)}.",
                "",
                "## Acceptance Criteria",
                "",
                *(f"- [ ] {_text(index + n, 9)}" for n in range(6)),
                "",
                "## Technical Notes",
                "",
                "```python",
                f"def {WORDS[index % 22]}_{number}(value: str) -> str:",
                "    # Story 9.9 in a comment is not a heading",
                "    return value",
                "```",
                "",
                *(f"{_text(index + n, 14)}." for n in range(10)),
                "",
            ]
        )
        epic_dir = os.path.join(folder, "specs", f"epic-{epic}")
        os.makedirs(epic_dir, exist_ok=True)
        with open(os.path.join(epic_dir, f"story-{story}-{WORDS[index % 22]}-{number}.md"), "w", encoding="utf-8") as f:
            f.write(text)
    finished = [story for story in ids if story in done]
    with open(os.path.join(folder, "progress.txt"), "w", encoding="utf-8") as handle:
        handle.write("# Progress\n\n")
        for story in finished:
            handle.write(f"\n---\n[DONE] Story {story} - {_text(1, 4)} - 2026-01-30T10:00:00Z\n{_text(2, 40)}\n")
    os.makedirs(state_dir, exist_ok=True)
    with open(os.path.join(state_dir, "state.json"), "w", encoding="utf-8") as handle:
        json.dump({"completed_stories": finished, "current_story": None, "retry_count": 0}, handle)
    return ids[len(finished)]


def build_prd(folder: str) -> str:
    """prd.json with PRD_STORIES stories; returns the id of the next story."""
    stories = [
        {
            "id": f"US-{n:04d}",
            "title": f"Story {n}: {_text(n, 5)}",
            "description": f"As a user, I want {_text(n, 14)}, so that {_text(n + 1, 12)}.",
            "acceptanceCriteria": [_text(n + step, 9) for step in range(3)] + ["Typecheck passes"],
            "priority": n,
            "passes": n <= PRD_STORIES * DONE_SHARE,
            "notes": _text(n, 10) if n % 3 else "",
        }
        for n in range(1, PRD_STORIES + 1)
    ]
    prd = {
        "feature": "big",
        "branchName": "feature/big",
        "description": "A big feature",
        "createdAt": "2026-01-01T00:00:00Z",
        "userStories": stories,
    }
    with open(os.path.join(folder, "prd.json"), "w", encoding="utf-8") as handle:
        json.dump(prd, handle, indent=2)
    return f"US-{int(PRD_STORIES * DONE_SHARE) + 1:04d}"


# ---------------------------------------------------------------- measuring


def timed_ms(work: Callable[[], object], runs: int, warmup: int = WARMUP) -> list[float]:
    for _ in range(warmup):  # the first reads warm the disk cache and the regex caches
        work()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    return sorted(times)


def p90(ordered: list[float]) -> float:
    return ordered[int(0.9 * len(ordered))]


def check(label: str, view: TaskView, total: int, next_id: str) -> None:
    got = (view.total, view.next_task.id if view.next_task else None)
    if got != (total, next_id):
        sys.exit(f"bench: {label} loaded wrong: (tasks, next) = {got}, expected {(total, next_id)}")


def size_of(path: str) -> int:
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(folder, name)) for folder, _, names in os.walk(path) for name in names)


def build() -> tuple[str, dict[str, tuple[str, TaskSource, int, str, str]]]:
    """The project and, by kind: (folder, source, tasks expected, next id expected, what it holds)."""
    base = tempfile.mkdtemp(prefix="ralph-bench-tasks-")
    root = os.path.join(base, "project")
    folders = {kind: os.path.join(root, kind) for kind in ("todo", "fix-plan", "stories", "prd")}
    for folder in folders.values():
        os.makedirs(folder)
    os.makedirs(os.path.join(root, ".ralph"))
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, env=ENV, check=True)

    todo_tasks, todo_next, todo_hidden = build_todo(folders["todo"])
    plan_tasks = build_fix_plan(folders["fix-plan"])
    plan_next = int(FIX_PLAN_ITEMS * 0.6 * DONE_SHARE) + 1
    state_dir = os.path.join(folders["stories"], ".ralph")
    story_next = build_stories(folders["stories"], state_dir)
    prd_next = build_prd(folders["prd"])

    plan = os.path.join(folders["fix-plan"], "fix_plan.md")
    stories = folders["stories"]
    todo_kb = size_of(os.path.join(folders["todo"], "TODO.md")) / 1000
    specs_kb = size_of(os.path.join(stories, "specs")) / 1000
    return root, {
        "todo": (
            folders["todo"],
            TodoSource(folders["todo"], "todo"),
            todo_tasks,
            f"T{todo_next}",
            f"TODO.md, {TODO_BOXES:,} boxes ({todo_hidden} in code fences or comments), {todo_tasks:,} tasks, "
            f"{todo_kb:.0f} KB",
        ),
        "fix-plan": (
            folders["fix-plan"],
            FixPlanSource(plan, "fix-plan/fix_plan.md"),
            plan_tasks,
            f"F{plan_next}",
            f"fix_plan.md, {FIX_PLAN_ITEMS:,} items, {plan_tasks:,} outside Optional/Future, "
            f"{size_of(plan) / 1000:.0f} KB",
        ),
        "stories": (
            stories,
            StorySource(
                stories, "stories", os.path.join(state_dir, "state.json"), os.path.join(stories, "progress.txt")
            ),
            EPICS * STORIES_PER_EPIC,
            story_next,
            f"{EPICS * STORIES_PER_EPIC} specs in {EPICS} epics, depends_on chains, {specs_kb:.0f} KB",
        ),
        "prd": (
            folders["prd"],
            PrdSource(os.path.join(folders["prd"], "prd.json"), "prd/prd.json"),
            PRD_STORIES,
            prd_next,
            f"prd.json, {PRD_STORIES:,} stories, {size_of(os.path.join(folders['prd'], 'prd.json')) / 1000:.0f} KB",
        ),
    }


def bench_loads(workspaces: dict[str, tuple[str, TaskSource, int, str, str]]) -> list[str]:
    """Prints each source's numbers; returns the kinds over the target."""
    print(f"Task source load() over {RUNS} runs (after {WARMUP} warm-up), and detect() over {DETECT_RUNS} runs:")
    slow = []
    for kind, (folder, source, total, next_id, what) in workspaces.items():
        check(kind, source.load(), total, next_id)
        found = detect(folder)
        if found != kind:
            sys.exit(f"bench: detect({folder}) says {found!r}, not {kind!r}")
        times = timed_ms(source.load, RUNS)
        cold = timed_ms(lambda source=source: (re.purge(), source.load()), COLD_RUNS, warmup=0)
        detect_times = timed_ms(lambda folder=folder: detect(folder), DETECT_RUNS, warmup=20)
        median = statistics.median(times)
        loads = LOADS_PER_ITERATION.get(kind, 1)
        iteration = loads * median
        verdict = "well under" if iteration < TARGET_MS / 2 else "under" if iteration < TARGET_MS else "OVER"
        if iteration >= TARGET_MS / 2:
            slow.append(kind)
        print(f"  {kind} ({what}):")
        print(
            f"    load(): median {median:.1f} ms, p90 {p90(times):.1f} ms, min {times[0]:.1f} ms, "
            f"max {times[-1]:.1f} ms"
        )
        print(
            f"    first load in a fresh process (re's pattern cache emptied): median {statistics.median(cold):.1f} ms"
        )
        print(
            f"    one iteration ({loads} load{'s' if loads > 1 else ''}): {iteration:.1f} ms ({verdict} the "
            f"{TARGET_MS:.0f} ms target)"
        )
        print(
            f"    detect(): median {statistics.median(detect_times) * 1000:.1f} us, "
            f"p90 {p90(detect_times) * 1000:.1f} us"
        )
    return slow


def bench_story_cliff() -> None:
    """heading_title compiles one regex per story id, through re's cache of 512 patterns (Python 3.11):
    past about 510 specs every load misses it for every spec."""
    print(f"story specs past {getattr(re, '_MAXCACHE', 512)} (re's pattern cache), load() over {RUNS} runs:")
    for epics in (EPICS, 52, 60):
        base = tempfile.mkdtemp(prefix="ralph-bench-tasks-")
        try:
            build_stories(base, os.path.join(base, ".ralph"), epics)
            source = StorySource(
                base, "", os.path.join(base, ".ralph", "state.json"), os.path.join(base, "progress.txt")
            )
            times = timed_ms(source.load, RUNS)
        finally:
            shutil.rmtree(base)
        count = epics * STORIES_PER_EPIC
        print(f"  {count} specs: median {statistics.median(times):.1f} ms, p90 {p90(times):.1f} ms")


def bench_validate(root: str) -> None:
    ralph = ralph_executable()
    env = {**ENV, "RALPH_HOME": os.path.join(os.path.dirname(root), "home")}
    argv = [ralph, "validate", "-f", "stories"]
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"bench: ralph validate failed ({done.returncode}):\n{done.stdout}{done.stderr}")

    def validate() -> None:
        subprocess.run(argv, cwd=root, env=env, stdout=subprocess.DEVNULL, check=True)

    def version() -> None:
        subprocess.run([ralph, "--version"], cwd=root, env=env, stdout=subprocess.DEVNULL, check=True)

    times = timed_ms(validate, VALIDATE_RUNS)
    baseline = timed_ms(version, VALIDATE_RUNS)
    print(f"`ralph validate -f stories` on the {EPICS * STORIES_PER_EPIC}-spec workspace, {VALIDATE_RUNS} runs:")
    print(
        f"  wall time: median {statistics.median(times):.0f} ms, p90 {p90(times):.0f} ms, "
        f"min {times[0]:.0f} ms (says: {done.stdout.strip().splitlines()[-1]})"
    )
    print(
        f"  `ralph --version` (the interpreter and the CLI's start alone): median {statistics.median(baseline):.0f} ms"
    )


def profile(kind: str, workspaces: dict[str, tuple[str, TaskSource, int, str, str]]) -> None:
    source = workspaces[kind][1]
    source.load()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(10):
        source.load()
    profiler.disable()
    print(f"cProfile of 10 loads of {kind} ({workspaces[kind][4]}):")
    stats = pstats.Stats(profiler)
    stats.sort_stats("tottime").print_stats(15)


def main() -> None:
    kinds = ("todo", "fix-plan", "stories", "prd")
    if len(sys.argv) > 1 and (len(sys.argv) != 3 or sys.argv[1] != "--profile" or sys.argv[2] not in kinds):
        sys.exit(f"usage: task_sources.py [--profile {'|'.join(kinds)}]")
    root, workspaces = build()
    try:
        if len(sys.argv) == 3:
            profile(sys.argv[2], workspaces)
            return
        slow = bench_loads(workspaces)
        if slow:
            print(f"  not well under the target: {', '.join(slow)} (see --profile KIND)")
        else:
            print(f"  every source: one iteration's reading is well under {TARGET_MS:.0f} ms")
        bench_story_cliff()
        bench_validate(root)
    finally:
        shutil.rmtree(os.path.dirname(root))


if __name__ == "__main__":
    main()

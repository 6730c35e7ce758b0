"""Goal mode (seed 001), in-process: `ralph run FOLDER/` on a folder with a SPRINT.yaml, in a real git repo, built as
`ralph run` builds it and its agent played back (tests/engine/goal.py's GoalAgent: tests/agents/goal_agent.py, which
reads its mode from the prompt and answers with a JSON result). Hooks are real commands; a prompt hook's agent is a
launch of the same played-back agent, so every prompt it was given is in `Turns.launches`.

ralph keeps PROGRESS.yaml beside SPRINT.yaml: the steps, the hook runs, the exit and the stats. Background hooks
are waited for by the loop itself at the end of the run, so every record is final when the run returns. The CLI's
side (bad input's one-line errors, `ralph init --format goal`) is tests/integration/test_goal_mode.py's.
"""

from __future__ import annotations

import shlex
import shutil
import textwrap
from pathlib import Path

import pytest

from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.runner import Launch
from tests.conftest import read_json
from tests.engine.goal import GoalAgent, given, hook_runs, prompt_of, run_goal
from tests.engine.harness import Ran, Turn, Turns, entries
from tests.integration.helpers import entry_files, git, progress_entries
from tests.integration.test_goal_mode import GOAL, SPRINT_DIR, progress_yaml, sprint_yaml, write_sprint

# ------------------------------------------------------------------ a whole goal


def test_a_goal_is_planned_executed_reflected_and_completed(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    folder = write_sprint(project, ralph_env, sprint_yaml(ralph="idle-threshold: 2\n"))
    agent = GoalAgent()

    done = run_goal(project, agent)

    assert done.outcome.reason is ExitReason.COMPLETE, done.screen
    assert agent.modes == ["1 planning -", "2 executing step-0", "3 executing step-1", "4 reflecting -"]
    data = progress_yaml(folder)
    assert (data["sprint-id"], data["mode"], data["status"]) == ("auth", "ralph", "completed")
    assert data["goal"] == GOAL
    assert data["ralph"] == {"idle-threshold": 2, "min-iterations": 0}
    steps = data["dynamic-steps"]
    assert [(step["id"], step["prompt"], step["status"], step["added-in-iteration"]) for step in steps] == [
        ("step-0", "write a.txt", "completed", 1),
        ("step-1", "write b.txt", "completed", 1),
    ]
    for step in steps:
        assert step["added-at"] and step["completed-at"], step
        assert step["completed-at"] >= step["added-at"]
    assert data["ralph-exit"]["iteration"] == 4
    assert data["ralph-exit"]["final-summary"] == "both files written"
    assert data["ralph-exit"]["detected-at"]
    assert data["stats"]["current-iteration"] == 4
    assert data["stats"]["started-at"]
    assert data["hook-tasks"] == []
    # the agent did the steps, in the project root
    assert (project / "step-0.txt").read_text() == "done in iteration 2\n"
    assert (project / "step-1.txt").read_text() == "done in iteration 3\n"
    # each prompt said what the iteration was for
    assert "## Mode: planning" in prompt_of(folder, 1) and "(none yet)" in prompt_of(folder, 1)
    assert "## Mode: executing" in prompt_of(folder, 2) and "Work on step-0, and only on it:" in prompt_of(folder, 2)
    assert "Work on step-1, and only on it:" in prompt_of(folder, 3)
    assert "- [x] step-0: write a.txt" in prompt_of(folder, 3)
    assert "## Mode: reflecting" in prompt_of(folder, 4)
    # progress.txt: one entry per iteration, with what the JSON result changed
    stories = [entry["Story"] for entry in entries(folder)]
    assert stories == [
        "goal - planning: Users can log in. Success criteria: - a.txt and b.txt exist",
        "step-0 - write a.txt",
        "step-1 - write b.txt",
        "goal - reflecting: Users can log in. Success criteria: - a.txt and b.txt exist",
    ]
    # PROGRESS.yaml is not among the files changed
    files = [entry_files(entry) for entry in progress_entries((folder / "progress.txt").read_text())]
    assert files == [[], ["step-0.txt"], ["step-1.txt"], []]
    notes = [entry["Note"] for entry in entries(folder)]
    assert "steps added: step-0, step-1" in notes[0]
    assert "steps completed: step-0" in notes[1]
    assert "goal complete" in notes[3]
    assert read_json(folder / "status.json")["exitReason"] == "complete"

    # A second run has nothing to do: exit 0, no agent, PROGRESS.yaml untouched.
    before = (folder / "PROGRESS.yaml").read_bytes()
    again_agent = Turns(then=agent)
    again = run_goal(project, again_agent)
    assert again.outcome.reason.exit_code == 0, again.screen
    assert "already" in again.screen, again.screen
    assert "Iteration" not in again.screen
    assert again_agent.launches == []
    assert agent.modes[-1] == "4 reflecting -" and len(agent.modes) == 4
    assert not (folder / "logs" / "iteration-5.prompt.md").exists()
    assert (folder / "PROGRESS.yaml").read_bytes() == before


def test_goal_complete_is_refused_before_min_iterations(project: Path, home: Path, ralph_env: dict[str, str]) -> None:
    folder = write_sprint(project, ralph_env, sprint_yaml(ralph="min-iterations: 3\n"))
    agent = GoalAgent(always_complete=True)

    done = run_goal(project, agent)

    assert done.outcome.reason is ExitReason.COMPLETE, done.screen
    assert len(agent.modes) == 3  # the agent claimed the goal three times; the third was accepted
    # the first prompt says when goal-complete will be accepted; the last no longer needs to
    assert "goal-complete is accepted from iteration 3 on (this is iteration 1)" in prompt_of(folder, 1)
    assert "goal-complete is accepted from iteration 3 on (this is iteration 2)" in prompt_of(folder, 2)
    assert "goal-complete is accepted from iteration" not in prompt_of(folder, 3)
    # the refusal is told to the next iteration
    assert "goal-complete refused" not in prompt_of(folder, 1)
    for number in (2, 3):
        prompt = prompt_of(folder, number)
        assert "goal-complete refused: ralph.min-iterations is 3" in prompt, prompt
        assert f"this was iteration {number - 1}" in prompt
    # and recorded in progress.txt
    recorded_entries = entries(folder)
    # the claim was refused: those iterations are "refused" (never a success), whatever else they did
    assert [entry["Status"] for entry in recorded_entries] == ["refused", "refused", "complete"]
    for number, entry in enumerate(recorded_entries[:2], start=1):
        assert f"goal-complete refused: ralph.min-iterations is 3 and this was iteration {number}" in entry["Note"]
    assert "goal complete" in recorded_entries[2]["Note"]
    assert "refused" not in recorded_entries[2]["Note"]
    data = progress_yaml(folder)
    assert data["status"] == "completed"
    assert data["ralph-exit"]["iteration"] == 3
    assert data["ralph-exit"]["final-summary"] == "all of it"
    assert data["stats"]["current-iteration"] == 3
    assert read_json(folder / "status.json")["exitReason"] == "complete"


def test_needs_human_stops_the_run_and_a_later_run_goes_on(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    folder = write_sprint(project, ralph_env, sprint_yaml())
    modes: list[str] = []

    done = run_goal(project, GoalAgent(needs_human=2, modes=modes))

    assert done.outcome.reason.exit_code == 1, done.screen
    assert modes == ["1 planning -", "2 executing step-0"]
    assert "DATABASE_URL is not set" in done.screen  # the reason
    assert "add it to .env and run again" in done.screen  # and the details
    status = read_json(folder / "status.json")
    assert status["exitReason"] == "needs_human"
    assert "DATABASE_URL is not set" in status["exitMessage"]
    assert "add it to .env and run again" in status["exitMessage"]
    data = progress_yaml(folder)
    assert data["status"] == "needs-human"
    assert data["stats"]["current-iteration"] == 2
    assert [step["status"] for step in data["dynamic-steps"]] == ["pending", "pending"]
    assert data["ralph-exit"]["detected-at"] is None
    assert not (project / "step-0.txt").exists()

    # Once the human has done their part, the next run goes on from the same steps.
    again = run_goal(project, GoalAgent(modes=modes))
    assert again.outcome.reason.exit_code == 0, again.screen
    assert modes[2:4] == ["3 executing step-0", "4 executing step-1"]
    assert modes[-1].endswith("reflecting -")
    data = progress_yaml(folder)
    assert data["status"] == "completed"
    assert [step["status"] for step in data["dynamic-steps"]] == ["completed", "completed"]


# ------------------------------------------------------------------ a result ralph cannot read

BAD_RESULTS = {
    "bad_json": "malformed JSON result",
    "no_json": "no JSON result in the agent's reply",
}


@pytest.mark.parametrize("switch", sorted(BAD_RESULTS))
def test_an_unreadable_result_is_recorded_counts_as_no_progress_and_the_run_goes_on(
    project: Path, home: Path, ralph_env: dict[str, str], tmp_path: Path, switch: str
) -> None:
    folder = write_sprint(project, ralph_env, sprint_yaml(ralph="idle-threshold: 2\n"))
    # A pre_iteration hook keeps the breaker's state as each iteration starts (outside the project).
    (project / ".ralph").mkdir()
    keep = shlex.quote(str(tmp_path / "breaker"))
    (project / ".ralph" / "config.yaml").write_text(
        f'hooks:\n  pre_iteration: cp "$RALPH_FEATURE_DIR/.circuit_breaker_state" {keep}-"$RALPH_ITERATION".json\n'
    )
    git(project, ralph_env, "add", "-A")
    git(project, ralph_env, "commit", "-q", "-m", "config")
    agent = GoalAgent(bad_json=2) if switch == "bad_json" else GoalAgent(no_json=2)

    done = run_goal(project, agent)

    assert done.outcome.reason.exit_code == 0, done.screen
    # iteration 2 did the work but its result could not be read: step-0 is done again in iteration 3
    assert agent.modes == [
        "1 planning -",
        "2 executing step-0",
        "3 executing step-0",
        "4 executing step-1",
        "5 reflecting -",
    ]
    second = entries(folder)[1]
    assert second["Story"] == "step-0 - write a.txt"
    assert second["Status"] == "in-progress"
    assert BAD_RESULTS[switch] in second["Note"], second
    assert "counted as no progress" in second["Note"]
    assert "steps completed" not in second["Note"]
    # it changed a file (step-0.txt), yet without a readable result it was no progress for the breaker
    assert "step-0.txt" in (folder / "progress.txt").read_text().split("Iteration: 2", 1)[1].split("---", 1)[0]
    breaker = {number: read_json(tmp_path / f"breaker-{number}.json") for number in (2, 3, 4)}
    assert breaker[2]["consecutive_no_progress"] == 0, breaker[2]
    assert breaker[3]["consecutive_no_progress"] == 1, breaker[3]
    assert breaker[3]["last_progress_loop"] == 1, breaker[3]
    assert breaker[4]["consecutive_no_progress"] == 0, breaker[4]  # iteration 3 reported step-0 done
    # the next prompt asks for the result block; the one after no longer does
    prompt = prompt_of(folder, 3)
    assert "end your reply with the ```json result block" in prompt, prompt
    assert BAD_RESULTS[switch] in prompt
    assert "end your reply with the ```json result block" not in prompt_of(folder, 4)
    data = progress_yaml(folder)
    assert data["status"] == "completed"
    assert [(step["id"], step["status"]) for step in data["dynamic-steps"]] == [
        ("step-0", "completed"),
        ("step-1", "completed"),
    ]
    assert data["ralph-exit"]["iteration"] == 5


# ------------------------------------------------------------------ per-iteration hooks


def test_sequential_and_parallel_command_hooks_run_after_every_iteration(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    hooks = """\
    - id: seq
      command: echo "$ITERATION|$PHASE_ID|$SPRINT_ID|$ITERATION_TRANSCRIPT" >> seq.txt
      parallel: false
    - id: par
      command: echo "$ITERATION $PHASE_ID" > par-$ITERATION.txt
      parallel: true
    """
    folder = write_sprint(project, ralph_env, sprint_yaml(ralph="idle-threshold: 2\n", hooks=hooks))

    done = run_goal(project, GoalAgent())

    assert done.outcome.reason.exit_code == 0, done.screen
    phases = ["planning", "step-0", "step-1", "reflecting"]
    # the sequential hook ran in order, in the project root, once per iteration, with the variables set
    assert (project / "seq.txt").read_text().splitlines() == [
        f"{number}|{phase}|auth|{folder / 'logs' / f'iteration-{number}.log'}"
        for number, phase in enumerate(phases, start=1)
    ]
    # the parallel one ran for every iteration too, the last one waited for before the run ended
    for number, phase in enumerate(phases, start=1):
        assert (project / f"par-{number}.txt").read_text() == f"{number} {phase}\n"
    data = progress_yaml(folder)
    for hook_id in ("seq", "par"):
        runs = hook_runs(data, hook_id)
        assert [run["iteration"] for run in runs] == [1, 2, 3, 4], runs
        for run in runs:
            assert (run["status"], run["exit-code"]) == ("completed", 0), run
            assert run["spawned-at"] and run["completed-at"], run
            assert run["completed-at"] >= run["spawned-at"]
        assert all((folder / "logs" / "hooks" / f"{hook_id}-{n}.log").exists() for n in (1, 2, 3, 4))
    assert len(data["hook-tasks"]) == 8
    # PROGRESS.yaml mirrors the hooks it ran
    assert [(hook["id"], hook["parallel"], hook["enabled"]) for hook in data["per-iteration-hooks"]] == [
        ("seq", False, True),
        ("par", True, True),
    ]
    assert data["status"] == "completed"


def test_failing_hooks_are_recorded_and_a_disabled_one_never_runs(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    hooks = """\
    - id: broken-seq
      command: echo "seq $ITERATION" >> broken.txt; exit 3
      parallel: false
    - id: broken-par
      command: echo "par $ITERATION" > broken-par-$ITERATION.txt; exit 3
      parallel: true
    - id: switched-off
      command: touch disabled-ran
      enabled: false
      parallel: false
    """
    folder = write_sprint(project, ralph_env, sprint_yaml(ralph="idle-threshold: 1\n", hooks=hooks))

    done = run_goal(project, GoalAgent(steps="the only step"))

    assert done.outcome.reason.exit_code == 0, done.screen
    # planning, step-0, reflecting: the failing hooks never stopped the loop
    assert (project / "step-0.txt").exists()
    assert (project / "broken.txt").read_text().splitlines() == ["seq 1", "seq 2", "seq 3"]
    assert [(project / f"broken-par-{n}.txt").read_text() for n in (1, 2, 3)] == ["par 1\n", "par 2\n", "par 3\n"]
    data = progress_yaml(folder)
    assert data["status"] == "completed"
    assert read_json(folder / "status.json")["exitReason"] == "complete"
    for hook_id in ("broken-seq", "broken-par"):
        runs = hook_runs(data, hook_id)
        assert [(run["iteration"], run["status"], run["exit-code"]) for run in runs] == [
            (1, "failed", 3),
            (2, "failed", 3),
            (3, "failed", 3),
        ], runs
        assert all(run["spawned-at"] and run["completed-at"] for run in runs)
        assert f"{hook_id} (iteration 1)" in done.screen
    assert "exit 3" in done.screen
    # the disabled hook: never run, never recorded, still listed as switched off
    assert not (project / "disabled-ran").exists()
    assert hook_runs(data, "switched-off") == []
    assert not list((folder / "logs" / "hooks").glob("switched-off*"))
    listed = {hook["id"]: hook["enabled"] for hook in data["per-iteration-hooks"]}
    assert listed == {"broken-seq": True, "broken-par": True, "switched-off": False}


def test_a_prompt_hook_runs_the_agent_with_the_variables_in_its_prompt(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    (project / ".claude" / "workflows").mkdir(parents=True)
    (project / ".claude" / "workflows" / "review.yaml").write_text(
        "phases:\n"
        "  - prompt: Review iteration $ITERATION of ${SPRINT_ID}.\n"
        "  - prompt: Then read $ITERATION_TRANSCRIPT (phase $PHASE_ID).\n"
    )
    hooks = """\
    - id: ask
      prompt: "Summarise $ITERATION_TRANSCRIPT for ${SPRINT_ID}: iteration $ITERATION, phase $PHASE_ID, not $ITERATIONS"
      parallel: false
    - id: review
      workflow: review
      parallel: false
    """
    folder = write_sprint(
        project, ralph_env, sprint_yaml(ralph="idle-threshold: 1\n", hooks=hooks, extra="sprint-id: AUTH-7\n")
    )
    agent = Turns(then=GoalAgent(steps="the only step"))

    done = run_goal(project, agent)

    assert done.outcome.reason.exit_code == 0, done.screen
    runs = given(agent)
    # per iteration: the iteration's own prompt, then each hook's, in order
    assert len(runs) == 9, [run["prompt"][:60] for run in runs]
    phases = ["planning", "step-0", "reflecting"]
    for number, phase in enumerate(phases, start=1):
        main, ask, review = runs[3 * (number - 1) : 3 * number]
        transcript = folder / "logs" / f"iteration-{number}.log"
        assert main["prompt"].startswith("# Ralph: reach a goal"), main["prompt"][:80]
        assert ask["prompt"] == (
            f"Summarise {transcript} for AUTH-7: iteration {number}, phase {phase}, not $ITERATIONS"
        )
        assert review["prompt"] == (
            f"Phase 1:\nReview iteration {number} of AUTH-7.\n\nPhase 2:\nThen read {transcript} (phase {phase})."
        )
        for hook in (ask, review):
            assert hook["env"]["RALPH_ITERATION"] == str(number)
            assert hook["cwd"] == str(project)
        # the hook's prompt is kept beside its log, and is the file the agent was told about
        kept = folder / "logs" / "hooks" / f"ask-{number}.prompt.md"
        assert kept.read_text() == ask["prompt"]
        assert ask["env"]["RALPH_PROMPT_FILE"] == str(kept)
    data = progress_yaml(folder)
    for hook_id in ("ask", "review"):
        assert [(run["iteration"], run["status"], run["exit-code"]) for run in hook_runs(data, hook_id)] == [
            (1, "completed", 0),
            (2, "completed", 0),
            (3, "completed", 0),
        ]
    # a workflow hook is kept in PROGRESS.yaml as the reference SPRINT.yaml has, not as its resolved prompt
    review_hook = next(hook for hook in data["per-iteration-hooks"] if hook["id"] == "review")
    assert review_hook["workflow"] == "review" and "prompt" not in review_hook
    assert data["sprint-id"] == "AUTH-7"


def test_a_workflow_hook_runs_the_command_of_its_file(project: Path, home: Path, ralph_env: dict[str, str]) -> None:
    (project / ".claude" / "workflows").mkdir(parents=True)
    (project / ".claude" / "workflows" / "doc-update.yaml").write_text(
        'command: echo "docs for $ITERATION ($PHASE_ID)" >> docs.txt\n'
    )
    hooks = """\
    - id: docs
      workflow: doc-update
      parallel: false
    - id: later
      workflow: not-written-yet
      enabled: false
    """
    folder = write_sprint(project, ralph_env, sprint_yaml(ralph="idle-threshold: 1\n", hooks=hooks))

    done = run_goal(project, GoalAgent(steps="the only step"))

    assert done.outcome.reason.exit_code == 0, done.screen
    assert (project / "docs.txt").read_text().splitlines() == [
        "docs for 1 (planning)",
        "docs for 2 (step-0)",
        "docs for 3 (reflecting)",
    ]
    data = progress_yaml(folder)
    assert [(run["iteration"], run["status"]) for run in hook_runs(data, "docs")] == [
        (1, "completed"),
        (2, "completed"),
        (3, "completed"),
    ]
    assert hook_runs(data, "later") == []  # a disabled workflow hook's file is not needed
    listed = [(hook["id"], hook.get("workflow"), hook["enabled"]) for hook in data["per-iteration-hooks"]]
    assert listed == [("docs", "doc-update", True), ("later", "not-written-yet", False)]


def test_the_mapping_form_switches_on_a_hook_of_the_ralph_workflow(
    project: Path, home: Path, ralph_env: dict[str, str]
) -> None:
    (project / ".claude" / "workflows").mkdir(parents=True)
    (project / ".claude" / "workflows" / "ralph.yaml").write_text(
        textwrap.dedent(
            """\
            per-iteration-hooks:
              - id: learning
                command: echo "learned $ITERATION $PHASE_ID" >> learnings.txt
                parallel: false
              - id: other
                command: touch other-ran
            """
        )
    )
    folder = write_sprint(
        project, ralph_env, sprint_yaml(ralph="idle-threshold: 1\n", hooks="learning: {enabled: true}\n")
    )

    done = run_goal(project, GoalAgent(steps="the only step"))

    assert done.outcome.reason.exit_code == 0, done.screen
    assert (project / "learnings.txt").read_text().splitlines() == [
        "learned 1 planning",
        "learned 2 step-0",
        "learned 3 reflecting",
    ]
    assert not (project / "other-ran").exists()  # defined there, off unless switched on
    data = progress_yaml(folder)
    assert [(run["iteration"], run["status"]) for run in hook_runs(data, "learning")] == [
        (1, "completed"),
        (2, "completed"),
        (3, "completed"),
    ]
    assert hook_runs(data, "other") == []
    listed = {hook["id"]: (hook["enabled"], hook["parallel"]) for hook in data["per-iteration-hooks"]}
    assert listed == {"learning": (True, False), "other": (False, True)}


def test_hook_variables_cannot_inject_shell(
    project: Path, home: Path, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    # The brief's value, then two spaces, a glob, a backquote and another hook variable: all kept literal.
    sprint_id = 'x"; touch pwned; echo "$(touch pwned2)  *  `touch pwned3` $PHASE_ID'
    hooks = """\
    - id: sid
      command: echo $SPRINT_ID > sid.txt
      parallel: false
    - id: words
      command: for word in $SPRINT_ID; do echo "[$word]"; done > words.txt
      parallel: false
    - id: ask
      prompt: "the id is $SPRINT_ID"
      parallel: false
    """
    extra = "sprint-id: '" + sprint_id.replace("'", "''") + "'\n"
    folder = write_sprint(project, ralph_env, sprint_yaml(ralph="idle-threshold: 1\n", hooks=hooks, extra=extra))
    agent = Turns(then=GoalAgent(steps="the only step"))

    done = run_goal(project, agent)

    assert done.outcome.reason.exit_code == 0, done.screen
    assert progress_yaml(folder)["sprint-id"] == sprint_id
    assert (project / "sid.txt").read_text() == sprint_id + "\n"
    assert (project / "words.txt").read_text() == f"[{sprint_id}]\n"  # one word, not split, not globbed
    hook_prompts = [run["prompt"] for run in given(agent) if run["prompt"].startswith("the id is")]
    assert hook_prompts == [f"the id is {sprint_id}"] * 3
    assert f"## Goal ({sprint_id})" in prompt_of(folder, 1)
    for name in ("pwned", "pwned2", "pwned3"):
        assert not list(tmp_path.rglob(name)), name
    data = progress_yaml(folder)
    assert {run["status"] for run in data["hook-tasks"]} == {"completed"}


# ------------------------------------------------------------------ SPRINT.yaml edited during a run

# A sequential hook that edits SPRINT.yaml after iteration 1, as a user (or a prompt hook's agent) might.
EDIT_HOOK = """\
- id: edit
  command: |
    if [ "$ITERATION" = 1 ]; then python -c "$EDIT"; fi
  parallel: false
"""


def run_edited(
    project: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch, old: str, new: str
) -> tuple[Path, Ran]:
    """A goal of one step whose sequential hook (EDIT_HOOK) replaces `old` with `new` in sprints/auth/SPRINT.yaml
    after iteration 1, run to its end: the sprint's folder and the run."""
    folder = write_sprint(project, env, sprint_yaml(ralph="idle-threshold: 1\n", hooks=EDIT_HOOK))
    monkeypatch.setenv(
        "EDIT",
        f"import pathlib; p = pathlib.Path({SPRINT_DIR + '/SPRINT.yaml'!r}); "
        f"p.write_text(p.read_text().replace({old!r}, {new!r}))",
    )
    return folder, run_goal(project, GoalAgent(steps="the only step"))


def test_a_goal_edited_by_a_sequential_hook_reaches_the_next_prompt(
    project: Path, home: Path, ralph_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, done = run_edited(project, ralph_env, monkeypatch, "Users can log in.", "Users can log out.")

    assert done.outcome.reason.exit_code == 0, done.screen
    assert "Users can log out." in (folder / "SPRINT.yaml").read_text()
    assert "Users can log in." in prompt_of(folder, 1)
    assert progress_yaml(folder)["goal"].startswith("Users can log out.")
    assert "Users can log out." in prompt_of(folder, 2), prompt_of(folder, 2)


def test_a_sprint_yaml_broken_during_the_run_stops_it_naming_the_file(
    project: Path, home: Path, ralph_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, done = run_edited(project, ralph_env, monkeypatch, "goal: |", "goal: [broken")

    assert done.outcome.reason.exit_code == 1, done.screen
    assert "sprints/auth/SPRINT.yaml: invalid YAML" in done.screen
    status = read_json(folder / "status.json")
    assert status["exitReason"] == "error"
    assert "sprints/auth/SPRINT.yaml" in status["exitMessage"]
    assert not (project / "step-0.txt").exists()  # the agent never ran on the broken file
    data = progress_yaml(folder)  # still whole
    assert data["status"] == "in-progress"
    assert [step["status"] for step in data["dynamic-steps"]] == ["pending"]


def test_a_hook_that_ended_is_recorded_even_when_sprint_yaml_is_broken(
    project: Path, home: Path, ralph_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, done = run_edited(project, ralph_env, monkeypatch, "goal: |", "goal: [broken")

    assert done.outcome.reason.exit_code == 1, done.screen
    runs = hook_runs(progress_yaml(folder), "edit")
    assert [(run["iteration"], run["status"], run["exit-code"]) for run in runs] == [(1, "completed", 0)]


@pytest.mark.parametrize("with_git", [True, False], ids=["git", "no-git"])
def test_a_sprint_yaml_half_edited_while_the_agent_works_leaves_no_journal_behind(
    project: Path, home: Path, ralph_env: dict[str, str], with_git: bool
) -> None:
    """The iteration closes whole (its journal goes) though the format cannot list its hooks at that instant: the
    next run has nothing to settle and says nothing of a kill."""
    folder = write_sprint(project, ralph_env, sprint_yaml())
    if not with_git:
        (project / ".ralph").mkdir(exist_ok=True)
        (project / ".ralph" / "config.yaml").write_text("git:\n  require: false\n")
        shutil.rmtree(project / ".git")
    sprint = folder / "SPRINT.yaml"

    def half_typed(launch: Launch) -> None:
        sprint.write_text(sprint.read_text().replace("goal: |", "goal: [half-typed"))

    done = run_goal(project, Turns(then=Turn(first=half_typed, say="oops\n", exit=1, err="Error: crashed\n")), n=2)

    assert "Traceback" not in done.screen
    assert not (folder / ".iteration.json").exists(), done.screen

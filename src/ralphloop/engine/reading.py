"""What one iteration's analysis means once checked against the task source and the workspace.

Pure: the analysis (what the agent said), the task view re-read after it (what is true) and
the files it changed go in; the evidence for the decision table, the circuit breaker and the
records comes out, with the notes for progress.txt and for the next prompt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ralphloop.analysis.signals import Analysis
from ralphloop.engine.decide import Decision
from ralphloop.engine.state import Streaks
from ralphloop.protocols import Task, TaskView

# A test file by the usual conventions: tests/ or test/ folders, test_*.py, *_test.go, *.test.ts, *.spec.js ...
_TEST_PATH = re.compile(
    r"(?:^|/)(?:tests?|__tests__|spec)/|(?:^|/)test_[^/]*$|[._-](?:test|spec)\.[^/]+$|_test\.[^/]+$"
)


@dataclass(frozen=True, slots=True)
class IterationReading:
    test_only: bool  # the reply describes only running tests, and no file but tests changed
    question_only: bool  # the agent asked the user questions and changed nothing
    unverified_done: tuple[str, ...]  # DONE ids whose task still does not pass
    mismatched_done: tuple[str, ...]  # DONE ids of another task than the one asked
    failed_here: bool  # the agent signalled FAIL for the task it was given


def is_test_path(path: str) -> bool:
    return bool(_TEST_PATH.search(path.replace("\\", "/")))


def read_iteration(
    analysis: Analysis, task: Task, view: TaskView, changed: list[str], *, view_valid: bool = True
) -> IterationReading:
    known = {item.id for item in view.tasks}
    done = view.done_ids if view_valid else frozenset()
    return IterationReading(
        test_only=analysis.test_only and all(is_test_path(path) for path in changed),
        question_only=analysis.asking_questions and not changed and not analysis.completion_claimed,
        unverified_done=tuple(item for item in analysis.done_ids if item in known and item not in done),
        mismatched_done=tuple(item for item in analysis.done_ids if item != task.id),
        failed_here=any(failure.id in (task.id, "") for failure in analysis.failed) or analysis.legacy == "fail",
    )


def iteration_notes(
    analysis: Analysis, reading: IterationReading, streaks: Streaks, refused: str | None, blocked_threshold: int
) -> list[str]:
    """The `Note:` lines of this iteration's progress entry."""
    notes = [f"agent signalled DONE {item}, but it does not pass in the task file" for item in reading.unverified_done]
    notes += [f"agent signalled DONE {item}, not the task it was given" for item in reading.mismatched_done]
    notes += [f"agent signalled FAIL {failure.id or '(no id)'}: {failure.reason}" for failure in analysis.failed]
    if analysis.blocked:
        in_a_row = f"{streaks.blocked}/{blocked_threshold} in a row"
        notes.append(f"agent reports BLOCKED ({in_a_row}): {analysis.blocked_reason}")
    if analysis.needs_human:
        notes.append(f"agent needs a human: {analysis.needs_human}")
    if reading.test_only:
        notes.append(f"test-only iteration ({streaks.test_only} in a row)")
    if reading.question_only:
        asked = analysis.heuristics.questions[0] if analysis.heuristics.questions else ""
        notes.append(f"agent asked questions instead of working ({streaks.question_only} in a row): {asked}")
    if analysis.json_error:
        notes.append(f"JSON result ignored: {analysis.json_error}")
    if refused:
        notes.append(f"completion claim refused: {refused}")
    return notes


def next_prompt_notes(
    analysis: Analysis, reading: IterationReading, decision: Decision, blocked_threshold: int
) -> list[str]:
    """What the next prompt tells the agent about this iteration."""
    notes: list[str] = []
    if decision.refused_claim:
        notes.append(
            f"your last completion claim was refused: {decision.refused_claim}. "
            "Claim completion only when every task passes."
        )
    notes += [
        f"you signalled DONE {item}, but {item} still does not pass in the task file; "
        "mark it passing only when its checks pass"
        for item in reading.unverified_done
    ]
    if reading.question_only:
        notes.append(
            "you asked questions last iteration, but nobody answers them during the loop: "
            "decide yourself, write the decision down in the progress log, and keep working"
        )
    if analysis.blocked:
        notes.append(
            f"you reported BLOCKED last iteration ({analysis.blocked_reason}); if it still blocks you, "
            f"say so again: ralph stops after {blocked_threshold} BLOCKED reports in a row"
        )
    if analysis.json_error:
        notes.append(f"your JSON result could not be read ({analysis.json_error}); print it as one ```json block")
    return notes

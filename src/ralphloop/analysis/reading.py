"""What one iteration's analysis means once checked against the task source and the workspace.

Pure: the analysis (what the agent said), the task view re-read after it (what is true) and
the files it changed go in; the evidence for the decision table, the circuit breaker and the
records comes out, with the notes for progress.txt and for the next prompt.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msgspec import Struct

from ralphloop.analysis.signals import Analysis
from ralphloop.core.protocols import AgentResult, Task, TaskView
from ralphloop.words.patterns import lazy

# A test file by the usual conventions: tests/ or test/ folders, test_*.py, *_test.go, *.test.ts, *.spec.js ...
_TEST_PATH = lazy(r"(?:^|/)(?:tests?|__tests__|spec)/|(?:^|/)test_[^/]*$|[._-](?:test|spec)\.[^/]+$|_test\.[^/]+$")


class Streaks(Struct, frozen=True):
    """Consecutive counted iterations with a property. Any counted iteration without it resets that count;
    an uncounted one (interrupted, limited, an API retry) is no evidence either way."""

    blocked: int = 0
    test_only: int = 0
    question_only: int = 0

    @classmethod
    def from_counts(cls, counts: Mapping[str, Any]) -> Streaks:
        """From state.json's `streaks` mapping (unknown keys ignored, missing or malformed ones 0)."""
        found = {name: counts.get(name, 0) for name in ("blocked", "test_only", "question_only")}
        return cls(**{name: value if type(value) is int and value >= 0 else 0 for name, value in found.items()})

    def counts(self) -> dict[str, int]:
        return {"blocked": self.blocked, "test_only": self.test_only, "question_only": self.question_only}

    def after(self, *, counted: bool, blocked: bool, test_only: bool, question_only: bool) -> Streaks:
        if not counted:
            return self
        return Streaks(
            blocked=self.blocked + 1 if blocked else 0,
            test_only=self.test_only + 1 if test_only else 0,
            question_only=self.question_only + 1 if question_only else 0,
        )


class IterationReading(Struct, frozen=True):
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
    analysis: Analysis, reading: IterationReading, refused_claim: str | None, blocked_threshold: int
) -> list[str]:
    """What the next prompt tells the agent about this iteration."""
    notes: list[str] = []
    if refused_claim:
        notes.append(
            f"your last completion claim was refused: {refused_claim}. Claim completion only when every task is done."
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


def says_done(task_id: str, analysis: Analysis, *, clean: bool) -> bool:
    """The agent ran clean and signalled DONE for exactly this task (seed 002; a bare legacy [DONE] counts when
    no <ralph> tag names a task), and not FAIL."""
    if not clean or analysis.failed or analysis.legacy == "fail":
        return False
    if analysis.done_ids:
        return task_id in analysis.done_ids
    return analysis.legacy == "done"


def evidence(analysis: Analysis, reading: IterationReading, streaks: Streaks) -> dict[str, Any]:
    """What the loop concluded from the analysis, as the records keep it (.exit_signals, status.json)."""
    return {
        "test_only": reading.test_only,
        "question_only": reading.question_only,
        "unverified_done": list(reading.unverified_done),
        "completion_indicators": bool(analysis.heuristics.completion_phrases or analysis.heuristics.nothing_to_do),
        "blocked": analysis.blocked,
        "blocked_reason": analysis.blocked_reason if analysis.blocked else None,
        "completion_claimed": analysis.completion_claimed,
        "confidence": analysis.confidence,
        "streaks": streaks.counts(),
    }


def attempt_failure(
    task_id: str, result: AgentResult, analysis: Analysis, reading: IterationReading, *, marks_done: bool, passed: bool
) -> str | None:
    """Why this attempt at the task failed (seed 002: crash, timeout, FAIL, no or another DONE), or None.
    A crash is a failure even when the task file says the task passes: the attempt did not finish."""
    if result.failed:
        return result.error or "the agent failed"
    if reading.failed_here:
        reasons = [failure.reason for failure in analysis.failed if failure.reason]
        return f"the agent signalled FAIL: {reasons[-1]}" if reasons else "the agent signalled FAIL"
    if marks_done and not passed:  # the DONE tag is how a story gets done: without it, the attempt failed
        if reading.mismatched_done and task_id not in analysis.done_ids:
            return f"mismatched: the agent signalled DONE {', '.join(reading.mismatched_done)}, not {task_id}"
        return "no completion signal in output"
    return None

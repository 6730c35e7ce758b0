"""The loop's own terminal: one header per iteration, one result line and seed 004's
"Iteration Metrics" block, and the "FINAL SUMMARY" at the end (also after Ctrl+C).

Plain lines, except on a terminal, where the agent's current tool and countdowns are one line
redrawn in place; colour only on a terminal without NO_COLOR. Agent output shown with -v is
stripped of escape sequences first.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import TextIO

from ralphloop.durations import format_duration
from ralphloop.events import (
    AgentActivity,
    AgentOutput,
    CircuitChanged,
    IterationFinished,
    IterationStarted,
    LoopEnded,
    Notice,
    RunStarted,
    Waiting,
)
from ralphloop.exitcodes import ExitReason
from ralphloop.records.metrics import METRICS_NAME, format_iteration, format_summary, summarize
from ralphloop.textsafe import one_line, strip_terminal_controls

_TASKS_WORD = {"prd": "stories pass", "stories": "stories done", "todo": "tasks done", "fix-plan": "tasks done"}
_COLOURS = {"ok": "32", "fail": "31", "warn": "33", "info": "36", "dim": "2", "bold": "1"}


@dataclass(slots=True)
class TerminalRenderer:
    """Subscribes to engine events and writes human lines."""

    out: TextIO = field(default_factory=lambda: sys.stdout)
    verbose: bool = False
    colour: bool = False
    live: bool = False  # a terminal: countdowns redraw one line instead of printing a line per change
    finished: list[IterationFinished] = field(default_factory=list)
    max_iterations: int | None = None
    metrics_file: str | None = None
    redrawn: bool = False  # a line redrawn in place (activity, countdown) is on screen
    tasks_word: str = "stories pass"  # how done tasks are counted: "stories pass", "tasks done"

    @classmethod
    def for_terminal(cls, verbose: bool) -> TerminalRenderer:
        tty = sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
        return cls(out=sys.stdout, verbose=verbose, colour=tty and not os.environ.get("NO_COLOR"), live=tty)

    def paint(self, kind: str, text: str) -> str:
        return f"\x1b[{_COLOURS[kind]}m{text}\x1b[0m" if self.colour else text

    def line(self, text: str = "") -> None:
        self.out.write(("\r\x1b[2K" if self.redrawn else "") + text + "\n")
        self.redrawn = False
        self.out.flush()

    def redraw(self, text: str) -> None:
        """One line, drawn over the last redrawn one (terminals only)."""
        self.out.write("\r\x1b[2K" + text)
        self.redrawn = bool(text)
        self.out.flush()

    def __call__(self, event: object) -> None:
        if isinstance(event, AgentOutput):
            if self.verbose:
                text = strip_terminal_controls(event.data.decode("utf-8", "replace"))
                self.out.write(self.paint("dim", text) if event.stream == "stderr" else text)
                self.out.flush()
        elif isinstance(event, AgentActivity):
            if self.live and not self.verbose:
                self.redraw(self.paint("dim", f"    ⚙ {one_line(strip_terminal_controls(event.text), 100)}"))
        elif isinstance(event, RunStarted):
            self.max_iterations = event.max_iterations
            self.metrics_file = event.metrics_file or os.path.join(event.feature_dir, METRICS_NAME)
            self.tasks_word = _TASKS_WORD.get(event.source_kind, "tasks done")
            limit = f"up to {event.max_iterations} iterations" if event.max_iterations else "until complete"
            self.line(
                self.paint("bold", f"ralph · {event.feature}")
                + f" ({event.feature_dir}) · {event.done}/{event.total} {self.tasks_word} · agent {event.agent}"
                f" · {limit} · timeout {format_duration(event.timeout_s)}"
            )
        elif isinstance(event, IterationStarted):
            of = f"/ {event.max_iterations}" if event.max_iterations else "(unlimited)"
            number = f" · #{event.number}" if event.number != event.iteration else ""
            self.line(
                self.paint("info", f"── Iteration {event.iteration} {of}{number} · {event.task_id}: {event.task_title}")
            )
        elif isinstance(event, IterationFinished):
            self._finished(event)
        elif isinstance(event, Notice):
            self.line(
                self.paint(
                    "warn" if event.level == "warning" else "info",
                    f"{'⚠' if event.level == 'warning' else 'ℹ'} {event.message}",
                )
            )
        elif isinstance(event, Waiting):
            self._waiting(event)
        elif isinstance(event, CircuitChanged):
            kind = "fail" if event.to_state == "OPEN" else "ok" if event.to_state == "CLOSED" else "warn"
            self.line(self.paint(kind, f"⚡ Circuit {event.from_state} → {event.to_state}: {event.reason}"))
        elif isinstance(event, LoopEnded):
            self._ended(event)

    def _waiting(self, event: Waiting) -> None:
        """A countdown: redrawn in place on a terminal; on a pipe, one line when the wait starts."""
        left = int(event.seconds_left + 0.999)
        clock = f"{left // 3600:02d}:{left % 3600 // 60:02d}:{left % 60:02d}"
        text = (
            f"⏳ {strip_terminal_controls(event.message)} · waiting {clock} (until {event.until.astimezone():%H:%M:%S})"
        )
        if self.live:
            self.redraw("" if event.done else self.paint("warn", text))
        elif event.first:
            self.line(text)

    def _finished(self, event: IterationFinished) -> None:
        self.finished.append(event)
        facts = [f"{event.done}/{event.total} {self.tasks_word}"]
        if event.files_changed:
            facts.append(f"{len(event.files_changed)} file{'s' if len(event.files_changed) != 1 else ''} changed")
        if event.commit:
            facts.append(f"commit {event.commit[:8]}")
        facts.append(format_duration(event.result.duration_s))
        if event.signals:
            facts.append(f"signals: {', '.join(event.signals)}")
        if event.status == "complete":
            head = self.paint("ok", f"  ✓ {event.task_id} {'passes' if self.tasks_word == 'stories pass' else 'done'}")
        elif event.status == "failed":
            head = self.paint("fail", "  ✗ agent failed" if event.result.failed else f"  ✗ {event.task_id} failed")
        elif event.status == "interrupted":
            head = self.paint("warn", "  ⚠ interrupted")
        elif event.status == "blocked":
            head = self.paint("warn", f"  ⚠ {event.task_id} blocked")
        else:
            head = self.paint("warn", f"  · {event.task_id} still open")
        self.line(f"{head} · " + " · ".join(facts))
        for note in event.notes:
            self.line(self.paint("warn", f"    ⚠ {strip_terminal_controls(note)}"))
        if event.metrics is not None:
            self.line(self.paint("dim", format_iteration(event.metrics)))

    def _ended(self, event: LoopEnded) -> None:
        if event.reason is ExitReason.COMPLETE:
            self.line(
                self.paint("ok", f"✓ ALL COMPLETE! {event.done}/{event.total} {self.tasks_word} ({event.message})")
            )
        elif event.reason is ExitReason.INTERRUPTED:
            self.line(self.paint("warn", "⚠ Interrupted: the agent was stopped and the records are saved"))
        else:
            message = strip_terminal_controls(event.message)
            self.line(self.paint("fail", f"✗ Stopped ({event.reason.value}): {message}"))
        for line in event.guidance.splitlines():
            self.line(strip_terminal_controls(line))
        if event.archived_to:
            self.line(f"ℹ Archived a copy to {os.path.relpath(event.archived_to)}")
        lines = [item.metrics for item in self.finished if item.metrics is not None]
        if lines:
            report = summarize(lines, max_iterations=self.max_iterations)
            self.line(format_summary(report, metrics_path=self.metrics_file))
        self.line(self.summary(event))

    def summary(self, event: LoopEnded) -> str:
        runs = self.finished
        failed = sum(1 for item in runs if item.status == "failed")
        agent = sum(item.result.duration_s for item in runs)
        overhead = sum(item.overhead_s for item in runs)
        parts = [
            f"{event.iterations} iteration{'s' if event.iterations != 1 else ''}",
            f"{len(runs) - failed} ok, {failed} failed",
            f"{event.done}/{event.total} {self.tasks_word.split()[0]}",
            f"{format_duration(event.duration_s)} in all",
            f"agent {format_duration(agent)}",
            f"ralph {overhead * 1000 / len(runs):.0f} ms/iteration" if runs else "",
            f"exit {event.reason.exit_code} ({event.reason.value})",
        ]
        return "Summary: " + " · ".join(part for part in parts if part)

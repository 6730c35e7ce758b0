"""The loop's own terminal: one header per iteration, one result line and seed 004's
"Iteration Metrics" block, and the "FINAL SUMMARY" at the end (also after Ctrl+C).

Plain lines, except on a terminal, where one line is redrawn in place: while the agent works, a
spinner with the elapsed time and the tool the agent is using (seed 004's "Real-Time Timer"; not
with -v, which shows the agent's output instead), and countdowns while the loop waits. The cursor
is hidden while the spinner turns. Colour only on a terminal without NO_COLOR (which turns off
colour, not the spinner). Agent output shown with -v is stripped of escape sequences first.

Every write goes through one lock: the engine's events and the spinner's thread never interleave.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TextIO

from msgspec import Struct, field
from msgspec.structs import replace

from ralphloop.cli.spinner import HIDE_CURSOR, INTERVAL_S, SHOW_CURSOR, Ticker, running_frame, waiting_frame
from ralphloop.core.events import (
    ANSWER,
    AgentActivity,
    AgentOutput,
    AgentShare,
    Archived,
    CircuitChanged,
    Committed,
    IterationFinished,
    IterationStarted,
    LoopEnded,
    Notice,
    RunStarted,
    Steered,
    Tally,
    Waiting,
)
from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.steering import PAUSED
from ralphloop.plugins.formats import format_of
from ralphloop.records.events import steered_words
from ralphloop.records.metrics import METRICS_NAME, line_of
from ralphloop.words.durations import format_duration
from ralphloop.words.figures import iteration_words, money, short_tokens
from ralphloop.words.textsafe import clean_text, one_line, strip_terminal_controls

_COLOURS = {"ok": "32", "fail": "31", "warn": "33", "info": "36", "dim": "2", "bold": "1"}


class TerminalRenderer(Struct):
    """Subscribes to engine events and writes human lines. The fields after `lock` are its own drawing state."""

    out: TextIO = field(default_factory=lambda: sys.stdout)
    verbose: bool = False
    colour: bool = False
    live: bool = False  # a terminal: a spinner, and countdowns redrawn on one line instead of a line per change
    finished: list[IterationFinished] = field(default_factory=list)
    max_iterations: int | None = None
    metrics_file: str | None = None
    redrawn: bool = False  # a line redrawn in place (spinner, activity, countdown) is on screen
    ended: bool = False  # the final summary is shown
    tasks_word: str = "stories pass"  # how done tasks are counted: "stories pass", "tasks done"
    clock: Callable[[], float] = time.monotonic  # for the spinner's elapsed time
    width: Callable[[], int] | None = None  # the terminal's columns; None: asked of `out`
    spin_interval: float | None = INTERVAL_S  # None: no thread; whoever drives the renderer calls tick()
    lock: threading.RLock = field(default_factory=threading.RLock)  # every write to `out` holds it
    _began: float | None = None  # the spinner turns (since then)
    _activity: str = ""  # the agent's current tool, for the spinner
    _frame: int = 0
    _held: bool = False  # a countdown or a question has the line
    _ticker: Ticker | None = None
    _cursor_hidden: bool = False

    @classmethod
    def for_terminal(cls, verbose: bool) -> TerminalRenderer:
        tty = sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
        return cls(out=sys.stdout, verbose=verbose, colour=tty and not os.environ.get("NO_COLOR"), live=tty)

    def paint(self, kind: str, text: str) -> str:
        return f"\x1b[{_COLOURS[kind]}m{text}\x1b[0m" if self.colour else text

    def line(self, text: str = "") -> None:
        self.out.write(("\r\x1b[2K" if self.redrawn else "") + text + "\n")
        self.redrawn = False
        if self._began is not None and not self._held:
            self._draw_spinner()  # the spinner stays below the lines printed while it turns
        self.out.flush()

    def redraw(self, text: str) -> None:
        """One line, drawn over the last redrawn one (terminals only)."""
        self.out.write("\r\x1b[2K" + text)
        self.redrawn = bool(text)
        self.out.flush()

    def __call__(self, event: object) -> None:
        with self.lock:
            self._render(event)

    def _render(self, event: object) -> None:
        if isinstance(event, AgentOutput):
            if self.verbose:
                text = strip_terminal_controls(event.data.decode("utf-8", "replace"))
                self.out.write(self.paint("dim", text) if event.stream == "stderr" else text)
                self.out.flush()
        elif isinstance(event, AgentActivity):
            if self._began is not None:
                self._activity = clean_text(event.text)
                if not self._held:
                    self._draw_spinner()
            elif self.live and not self.verbose and event.text:
                self.redraw(self.paint("dim", f"    ⚙ {one_line(strip_terminal_controls(event.text), 100)}"))
        elif isinstance(event, RunStarted):
            self.max_iterations = event.max_iterations
            self.metrics_file = event.metrics_file or os.path.join(event.feature_dir, METRICS_NAME)
            # a narrowed run counts its scope's tasks: say so, `ralph status` counts the feature's
            self.tasks_word = format_of(event.source_kind).done_words + (
                f" ({event.scope} only)" if event.scope else ""
            )
            limit = f"up to {event.max_iterations} iterations" if event.max_iterations else "until complete"
            self.line(
                self.paint("bold", f"ralph · {event.feature}")
                + f" ({event.feature_dir}) · {event.done}/{event.total} {self.tasks_word} · agent {event.agent}"
                f" · {limit} · timeout {format_duration(event.timeout_s)}"
            )
        elif isinstance(event, IterationStarted):
            self.line(self.paint("info", iteration_header(event)))
            self._start_spinner()
        elif isinstance(event, IterationFinished):
            self._stop_spinner()
            self._finished(event)
        elif isinstance(event, Committed):
            self.line(self.paint("info", f"ℹ committed {event.commit}: {strip_terminal_controls(event.message)}"))
        elif isinstance(event, Archived):
            moved = os.path.relpath(event.path)  # the summary named the files where they were
            log = os.path.join(moved, METRICS_NAME)
            self.line(f"ℹ Archived: the feature folder moved to {moved} (its metrics log with it: {log})")
        elif isinstance(event, Notice):
            self.line(
                self.paint(
                    "warn" if event.level == "warning" else "info",
                    f"{'⚠' if event.level == 'warning' else 'ℹ'} {event.message}",
                )
            )
        elif isinstance(event, Waiting):
            if event.kind not in (ANSWER, PAUSED):  # a question is drawn by whoever asks it; a pause by Steered
                self._waiting(event)
        elif isinstance(event, Steered):
            self.line(self.paint("warn", f"✋ {strip_terminal_controls(steered_words(event))}"))
        elif isinstance(event, CircuitChanged):
            kind = "fail" if event.to_state == "OPEN" else "ok" if event.to_state == "CLOSED" else "warn"
            self.line(self.paint(kind, f"⚡ Circuit {event.from_state} → {event.to_state}: {event.reason}"))
        elif isinstance(event, LoopEnded):
            self._stop_spinner()
            if self.ended:  # told again: a Ctrl+C stopped the end hooks after the summary was shown
                self.line(self.paint("warn", f"⚠ Interrupted: {strip_terminal_controls(event.message)}"))
            else:
                self._ended(event)
            self.ended = True

    # ------------------------------------------------------------------ the live line (terminals only)

    def tick(self) -> bool:
        """The next frame of the spinner (its thread calls this a few times a second); False once the
        spinner has stopped, which ends the thread."""
        with self.lock:
            if self._began is None:
                self._ticker = None
                return False
            if not self._held:
                self._frame += 1
                try:
                    self._draw_spinner()
                except (OSError, ValueError):  # the terminal is gone: nothing more to draw on
                    self._ticker = None
                    return False
            return True

    @contextlib.contextmanager
    def suspended(self) -> Iterator[None]:
        """The live line off (cleared, cursor shown) while something else uses the terminal: a question."""
        with self.lock:
            held, self._held = self._held, True
            if self.redrawn:
                self.redraw("")
            self._cursor(show=True)
        try:
            yield
        finally:
            with self.lock:
                self._held = held
                if self._began is not None and not held:
                    self._cursor(show=False)
                    self._draw_spinner()
                    self.out.flush()

    def warning(self, text: str) -> None:
        """`ralph: warning: TEXT` on stderr, from any thread (the notifier's), the live line put back after it."""
        with self.suspended():
            # a warning may quote a server's or an agent's words (an HTTP reason phrase): no escape reaches the screen
            print(f"ralph: warning: {one_line(strip_terminal_controls(text), 500)}", file=sys.stderr, flush=True)

    def stop(self) -> None:
        """The spinner off and the cursor shown (the run ended, even by an error)."""
        with self.lock:
            self._stop_spinner()

    def _start_spinner(self) -> None:
        if not self.live or self.verbose:
            return
        self._began, self._activity, self._frame, self._held = self.clock(), "", 0, False
        self._cursor(show=False)
        self._draw_spinner()
        self.out.flush()
        if self.spin_interval is not None and self._ticker is None:
            self._ticker = Ticker(self.tick, self.spin_interval)
            self._ticker.start()

    def _stop_spinner(self) -> None:
        if self._began is None:
            return
        self._began = None
        if self.redrawn:
            self.redraw("")
        self._cursor(show=True)
        self.out.flush()

    def _draw_spinner(self) -> None:
        assert self._began is not None
        text = running_frame(self._frame, self.clock() - self._began, self._activity, self._columns())
        self.redraw(self.paint("info", text[:1]) + text[1:])

    def _cursor(self, *, show: bool) -> None:
        if self._cursor_hidden == show:
            self.out.write(SHOW_CURSOR if show else HIDE_CURSOR)
            self._cursor_hidden = not show

    def _columns(self) -> int:
        if self.width is not None:
            return self.width()
        try:
            found = os.get_terminal_size(self.out.fileno()).columns
        except (OSError, ValueError):  # not a terminal (io.UnsupportedOperation is both)
            found = 0
        return found if found > 0 else 80  # a pty nobody sized says 0

    def _waiting(self, event: Waiting) -> None:
        """A countdown: redrawn in place on a terminal (the spinner waits meanwhile); on a pipe, one
        line when the wait starts."""
        until = f"{event.until.astimezone():%H:%M:%S}"
        if not self.live:
            if event.first:
                left = int(event.seconds_left + 0.999)
                clock = f"{left // 3600:02d}:{left % 3600 // 60:02d}:{left % 60:02d}"
                self.line(f"⏳ {strip_terminal_controls(event.message)} · waiting {clock} (until {until})")
            return
        if event.done:
            self._held = False
            self.redraw("")
            if self._began is not None:
                self._draw_spinner()
                self.out.flush()
            return
        self._held = True
        self._frame = 0 if event.first else self._frame + 1
        text = waiting_frame(self._frame, event.seconds_left, clean_text(event.message), until, self._columns())
        self.redraw(self.paint("warn", text))

    def _finished(self, event: IterationFinished) -> None:
        self.finished.append(event)
        event = replace(event, task_id=strip_terminal_controls(event.task_id))  # the task file's words
        self.line(f"{self._head(event)} · " + " · ".join(iteration_facts(event)))
        for note in event.notes:
            self.line(self.paint("warn", f"    ⚠ {strip_terminal_controls(note)}"))
        for line in event.info:  # what changed besides files (goal mode's steps)
            self.line(self.paint("dim", f"    · {strip_terminal_controls(line)}"))
        if not self.verbose:  # the signals and the metrics block are the details -v asks for
            return
        if event.signals:
            self.line(self.paint("dim", f"    · signals: {', '.join(event.signals)}"))
        from ralphloop.records.metrics_text import format_iteration  # once an agent has answered: not at the start

        self.line(self.paint("dim", format_iteration(line_of(event))))

    def _head(self, event: IterationFinished) -> str:
        """`✓ NOTE-2 passes`, `✗ agent failed`, ...: what became of the iteration, in its colour."""
        if event.status == "complete":
            return self.paint(
                "ok", f"  ✓ {event.task_id} {'passes' if self.tasks_word.startswith('stories') else 'done'}"
            )
        if event.status == "refused":
            return self.paint("fail", "  ✗ completion claim refused")
        if event.status == "failed":
            if event.result.failed:  # the note below it says why (the first real error line)
                return self.paint("fail", "  ✗ agent failed")
            why = f" ({one_line(clean_text(event.failure), 160)})" if event.failure else ""
            return self.paint("fail", f"  ✗ {event.task_id} failed{why}")
        if event.status == "interrupted":
            return self.paint("warn", "  ⚠ interrupted")
        if event.status in ("usage-limit", "api-error"):  # whatever the task file says, the call is not counted
            what = "usage limit" if event.status == "usage-limit" else "API error"
            return self.paint("warn", f"  ⚠ {event.task_id}: {what}, not counted")
        if event.status == "blocked":
            return self.paint("warn", f"  ⚠ {event.task_id} blocked")
        return self.paint("warn", f"  · {event.task_id} still open")

    def _ended(self, event: LoopEnded) -> None:
        if event.reason is ExitReason.COMPLETE:
            self.line(
                self.paint("ok", f"✓ ALL COMPLETE! {event.done}/{event.total} {self.tasks_word} ({event.message})")
            )
        elif event.reason is ExitReason.STORY_DONE:
            word, _, rest = event.scope.partition(" ")
            self.line(self.paint("ok", f"✓ {word.upper()} {rest} done ({strip_terminal_controls(event.message)})"))
        elif event.reason is ExitReason.INTERRUPTED:
            self.line(self.paint("warn", "⚠ Interrupted: the agent was stopped and the records are saved"))
        else:
            message = strip_terminal_controls(event.message)
            self.line(self.paint("fail", f"✗ Stopped ({event.reason.value}): {message}"))
        if event.last_message:
            self.line(f"The agent's last words: {strip_terminal_controls(event.last_message)}")
        for line in event.guidance.splitlines():
            self.line(strip_terminal_controls(line))
        lines = [line_of(item) for item in self.finished]
        if lines:
            from ralphloop.records.metrics_text import format_summary
            from ralphloop.records.summary import summarize

            report = summarize(lines, max_iterations=self.max_iterations)
            self.line(format_summary(report, metrics_path=self.metrics_file))
        self.line(self.summary(event))
        if event.tally.by_agent:
            self.line("By agent: " + "; ".join(share_text(share) for share in event.tally.by_agent))

    def summary(self, event: LoopEnded) -> str:
        """One line of the run's numbers, the same the records hold: counted iterations (and the calls that
        did not count), those that moved a task, tokens by kind, wall and agent time."""
        runs, tally = self.finished, event.tally
        failed = sum(1 for item in runs if item.counted and item.status == "failed")
        overhead = sum(item.overhead_s for item in runs)
        uncounted = (
            f" (+{tally.uncounted} call{'s' if tally.uncounted != 1 else ''} not counted)" if tally.uncounted else ""
        )
        parts = [
            f"{tally.counted} iteration{'s' if tally.counted != 1 else ''}{uncounted}",
            f"{tally.successes} advanced, {failed} failed",
            f"{event.done}/{event.total} {self.tasks_word.split()[0]}",
            tokens_text(tally),
            f"{format_duration(event.duration_s)} wall",
            f"agent {format_duration(tally.agent_s)}",
            f"ralph {overhead * 1000 / len(runs):.0f} ms/iteration" if runs else "",
            f"exit {event.reason.exit_code} ({event.reason.value})",
        ]
        return "Summary: " + " · ".join(part for part in parts if part)


def iteration_header(event: IterationStarted) -> str:
    """`── Iteration 4 / 20 · S-1: title`; when this run's count toward the limit is not the iteration's number
    (a resumed run, calls that did not count), that count so far is shown beside it, labelled."""
    tally = event.tally
    words = iteration_words(event.number, tally.counted, tally.uncounted, event.max_iterations, running=True)
    number, _, count = words.partition(" · ")
    task = strip_terminal_controls(f"{event.task_id}: {event.task_title}")  # the task file's words: no escapes
    return f"── Iteration {number} · {task}" + (f" · {count}" if count else "")


def iteration_facts(event: IterationFinished) -> list[str]:
    """`2/6 · 4 files · $0.23 · 3.6k tok (313k cache) · 10s`: the iteration's numbers, on its result line."""
    result, changed = event.result, len(event.files_changed)
    usage = result.usage
    facts = [f"{event.done}/{event.total}"]
    facts += [f"{changed} file{'s' if changed != 1 else ''}"] if changed else []
    facts += [money(result.cost_usd)] if result.cost_usd is not None else []
    if usage is not None:
        facts.append(short_tokens(usage.input_tokens, usage.output_tokens, usage.cache_read_tokens))
    return [*facts, format_duration(result.duration_s)]


def share_text(share: AgentShare) -> str:
    """`codex 2 calls · 12,345 tokens · $0.4100`: one agent's part of a run that failed over."""
    parts = [f"{share.agent} {share.calls} call{'s' if share.calls != 1 else ''}"]
    parts += [f"{share.tokens:,} tokens"] if share.tokens is not None else []
    parts += [f"${share.cost_usd:.4f}"] if share.cost_usd is not None else []
    return " · ".join(parts)


def tokens_text(tally: Tally) -> str:
    """`tokens 12,345 in / 3,456 out, cache 1,200,000 read`; "" when the agent reported none."""
    if tally.tokens is None:
        return ""
    text = f"tokens {tally.input_tokens or 0:,} in / {tally.output_tokens or 0:,} out"
    if tally.cache_read_tokens:
        text += f", cache {tally.cache_read_tokens:,} read"
    return text

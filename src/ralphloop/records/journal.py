"""`.iteration.json`, the journal: the iteration in flight, so that a run killed at any instant is reconciled
by the next one (start/recover.py) with nothing lost and nothing done twice.

Written before the agent starts (number, task, the workspace snapshot, the agent's tag), when it started (its
PID), when an undo begins, and with the whole record before any record file is written; removed once the
iteration is recorded and its work committed. Its phase says how far the iteration got:
  agent      the agent may still run; no verdict yet
  undoing    the attempt is being saved and undone
  recording  the verdict and record are final (`record`); some record files may not have them yet
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any

import msgspec
from msgspec import Struct

from ralphloop.files.safe_read import STATE_CAP, read_file
from ralphloop.files.store import atomic_write_bytes

VERSION = 1
NO_RECORD = msgspec.Raw(b"null")


class Journal(Struct, kw_only=True):
    version: int = VERSION
    run_id: str
    number: int
    task_id: str
    task_title: str
    attempt: int
    log_path: str
    started_at: str
    tag: str  # RALPH_PROCESS_TAG of the agent: finds it, and whatever it daemonised, after a kill
    start: dict[str, str | None] | None  # captures.WorkTree's fields: the workspace before the agent
    done_at_start: tuple[str, ...]
    state: dict[str, Any]  # state.json's fields with this number reserved
    pid: int = 0  # the agent's PID, which is its process group's too
    pid_start: int | None = None  # its start in clock ticks since boot: with the PID, one process for ever
    agent: str = ""  # the backend that ran it (with failover, not always the run's first)
    phase: str = "agent"
    record: msgspec.Raw = NO_RECORD  # the IterationFinished event, once final (msgspec keeps it undecoded)
    committed: str | None = None  # ralph's commit of the work, once made


class JournalFile:
    """Subscribes to an iteration's events; must see IterationFinished before any other record file does."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.current: Journal | None = None

    def __call__(self, event: object) -> None:
        from ralphloop.core.events import (
            AgentStarted,
            Committed,
            IterationClosed,
            IterationFinished,
            IterationStarted,
            Undoing,
        )
        from ralphloop.core.protocols import iso

        if isinstance(event, IterationStarted):
            self.current = Journal(
                run_id=event.run_id,
                number=event.number,
                task_id=event.task_id,
                task_title=event.task_title,
                attempt=event.attempt,
                log_path=event.log_path,
                started_at=iso(event.started_at),
                tag=event.tag,
                start=dict(event.start) if event.start is not None else None,
                done_at_start=event.done_ids,
                state=dict(event.state),
            )
        elif isinstance(event, IterationClosed):  # this run's iteration, or the one a killed run left
            self.current = None
            clear(self.path)
            return
        elif self.current is None or getattr(event, "number", None) != self.current.number:
            return
        elif isinstance(event, AgentStarted):
            from ralphloop.processes.reaper import start_time

            self.current.pid, self.current.pid_start = event.pid, start_time(event.pid)
            self.current.agent = event.agent
        elif isinstance(event, IterationFinished):
            if event.recovered:
                return
            self.current.phase, self.current.record = "recording", msgspec.Raw(msgspec.json.encode(event))
        elif isinstance(event, Committed):
            self.current.committed = event.commit
        elif isinstance(event, Undoing):
            self.current.phase = "undoing"
        else:
            return
        atomic_write_bytes(self.path, msgspec.json.encode(self.current))


def read(path: str) -> Journal | None:
    """The journal a run left; None when there is none. Raises ValueError naming the file when it cannot be
    read as one (a torn write cannot happen: it is replaced atomically; a hostile or foreign file can), and
    FileRefused when it is not a regular file or is too big (refused before the run by preflight)."""
    data = read_file(path, cap=STATE_CAP, follow=False)
    if data is None:
        return None
    try:
        journal = msgspec.json.decode(data, type=Journal)
    except msgspec.ValidationError as exc:
        raise ValueError(f"{path}: not an iteration journal ({exc})") from None
    except msgspec.DecodeError:
        raise ValueError(f"{path}: not valid JSON") from None
    if journal.version != VERSION:
        raise ValueError(f"{path}: journal version {journal.version}, this ralph reads {VERSION}")
    return journal


def clear(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def set_aside(path: str, logs: str) -> str:
    """Move an unreadable journal into the logs, where the user can read it; returns where it went."""
    os.makedirs(logs, exist_ok=True)
    target = os.path.join(logs, f"journal-unreadable-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.json")
    os.replace(path, target)
    return target

"""Steering a running loop (issue 36) as `ralph pause|resume|stop|say|answer` and the page's controls ask it: the
same checks whatever the source (a loop that is not running, an answer with no question waiting, text too long),
the request written to the loop's control.json (records/control.py), and for `stop --now` the loop's own Ctrl+C
(its attempt saved and undone as after one). A refusal is a RalphError of one line, and nothing is written."""

from __future__ import annotations

import contextlib
import os
import signal

from ralphloop.core.clock import SystemClock
from ralphloop.core.errors import RalphError
from ralphloop.core.steering import ACTIONS, Request
from ralphloop.files.read import lock_holder_alive, read_json_object
from ralphloop.files.safe_read import FileRefused
from ralphloop.project.paths import FeaturePaths, display_path
from ralphloop.records.control import ControlFile
from ralphloop.state.fleet import loop_feature_paths, read_fleet
from ralphloop.words.textsafe import clean_text

TEXT_LIMIT = 4000  # characters of a say or an answer: guidance, not a document (a file's path says more)
_DONE = {
    "pause": "paused: no new iteration starts (the running one finishes); `{resume}` goes on",
    "resume": "resumed: the next iteration starts",
    "stop": "stopping: the loop ends after the running iteration",
    "stop-now": "stopping now: the running iteration is interrupted, saved and undone, as after a Ctrl+C",
    "say": "said: your words go into the next iteration's prompt, once, and into progress.txt",
    "answer": "answered: the loop goes on with your answer in its next prompt",
}


def text_of(action: str, text: str | None) -> str:
    """The words of a say or an answer, cleaned of escapes and control characters; "" for the other actions."""
    if action not in ("say", "answer"):
        return ""
    cleaned = clean_text(text or "").strip()
    if not cleaned:
        raise RalphError(f"ralph {action}: TEXT is empty (usage: ralph {action} TEXT)")
    if len(cleaned) > TEXT_LIMIT:
        raise RalphError(
            f"ralph {action}: TEXT is {len(cleaned)} characters, over {TEXT_LIMIT}; put it in a file and say its path"
        )
    return cleaned


def loop_of(paths: FeaturePaths, story: str | None) -> FeaturePaths:
    """The loop `story` names in the feature's parallel run (its worktree's feature folder), or the feature's own
    loop without one. A one-line RalphError for a story the run has no running loop of."""
    if not story:
        return paths
    fleet = read_fleet(paths)
    loops = fleet["loops"] if fleet is not None else []
    found = next((loop for loop in loops if loop.get("story") == story), None)
    if found is None:
        known = ", ".join(str(loop.get("story")) for loop in loops) or "none"
        raise RalphError(f"--story {story}: no loop of {paths.selector}'s parallel run has it (its loops: {known})")
    where = loop_feature_paths(paths, found)
    if where is None:
        raise RalphError(f"--story {story}: its loop's records are gone; nothing was written")
    return where  # a loop that ended: steer() says it is not running


def steer(paths: FeaturePaths, action: str, text: str, *, now: bool = False, source: str = "cli") -> str:
    """`action` asked of the loop running in `paths` (its text already `text_of`'s); the line that says what the
    loop does now. A RalphError when it is refused: nothing was written."""
    if action not in ACTIONS:
        raise RalphError(f"{action!r} is not an action: expected one of {', '.join(ACTIONS)}")
    pid = lock_holder_alive(paths.lock)
    if pid is None:
        raise RalphError(f"ralph {action}: no loop is running for {paths.selector}; nothing was written")
    if action == "answer" and not _asked(paths):
        raise RalphError(f"ralph answer: the loop of {paths.selector} waits on no question; nothing was written")
    control = ControlFile(paths.control)
    asked_before = control.read().stop
    _write(control, Request(action, source, SystemClock().now(), text, now and action == "stop"), paths)
    if now and action == "stop" and not (asked_before and asked_before.now):  # once: a second is a hard quit
        _interrupt(pid)  # the loop's own Ctrl+C: the attempt saved and undone
    return _DONE["stop-now" if now and action == "stop" else action].format(resume=paths.command("resume"))


def steer_feature(paths: FeaturePaths, action: str, text: str, *, now: bool = False, source: str = "cli") -> str:
    """`action` asked of the feature: of its loop, or, while a parallel run goes on, of the whole run (the
    coordinator's control.json, which fleet/steering.py reads, and every running loop's): see steer()."""
    fleet = read_fleet(paths)
    if fleet is None or not fleet["alive"]:
        return steer(paths, action, text, now=now, source=source)
    running = [
        where
        for loop in fleet["loops"]
        if (where := loop_feature_paths(paths, loop)) is not None and lock_holder_alive(where.lock) is not None
    ]
    if action == "answer":  # one loop's question: the one waiting, named when several do
        waiting = [where for where in running if _asked(where)]
        if len(waiting) != 1:
            which = "no loop of the parallel run waits" if not waiting else "several loops wait: name one with --story"
            raise RalphError(f"ralph answer: {which} on a question; nothing was written")
        return steer(waiting[0], action, text, source=source)
    if action == "say" and not running:
        raise RalphError(f"ralph say: no loop of {paths.selector}'s parallel run is running; nothing was written")
    request = Request(action, source, SystemClock().now(), text, now and action == "stop")
    control = ControlFile(paths.control)
    asked_before = control.read().stop
    if action != "say":
        _write(control, request, paths)  # the coordinator's: no new loop starts (pause, stop)
    for where in running:  # now: the coordinator's interruption stops them all, each saved and undone
        with contextlib.suppress(RalphError):  # one that ended meanwhile
            steer(where, action, text, source=source)
    if request.now and not (asked_before and asked_before.now):  # once: a second Ctrl+C is a hard quit
        _interrupt(int(fleet["pid"]))
    said = _FLEET[("stop-now" if request.now else action)]
    return said.format(count=len(running), resume=paths.command("resume"))


_FLEET = {
    "pause": "paused: no new loop starts, and its {count} running loop(s) start no new iteration; `{resume}` goes on",
    "resume": "resumed: loops start again",
    "stop": "stopping: no new loop starts; its {count} running loop(s) end after their iteration",
    "stop-now": "stopping now: every loop is interrupted, its attempt saved and undone, as after a Ctrl+C",
    "say": "said: your words go into the next prompt of each of its {count} running loop(s), once",
}


def _write(control: ControlFile, request: Request, paths: FeaturePaths) -> None:
    try:
        control.ask(request)
    except (OSError, FileRefused) as exc:
        where = display_path(paths.control, os.getcwd())
        raise RalphError(f"{where}: cannot write: {getattr(exc, 'strerror', None) or exc}") from None


def _interrupt(pid: int) -> None:
    """The running ralph's Ctrl+C (SIGINT), for `stop --now`."""
    try:
        os.kill(pid, signal.SIGINT)
    except ProcessLookupError:  # it ended meanwhile: the stop is written for nothing, harmlessly
        return
    except PermissionError:
        raise RalphError(
            f"the stop is written, but ralph (PID {pid}) is another user's: it stops after the iteration"
        ) from None


def _asked(paths: FeaturePaths) -> bool:
    """Whether the loop waits on a question now (status.json says so): an answer is never kept for one to come."""
    try:
        status = read_json_object(paths.status, display_path(paths.status, os.getcwd())) or {}
    except FileRefused as exc:
        raise RalphError(str(exc)) from None
    waiting = status.get("waiting")
    return isinstance(waiting, dict) and waiting.get("kind") == "answer"

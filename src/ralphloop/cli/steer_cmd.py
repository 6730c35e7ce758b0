"""`ralph pause | resume | stop [--now] | say TEXT | answer TEXT [-f FEATURE]`: steer a running loop from any
terminal (issue 36). Each is written to the loop's control.json (records/control.py), which the loop reads between
iterations: nothing is sent to the running process but `stop --now`'s interruption (a Ctrl+C's, so the attempt is
saved and undone as after one).

A command for a loop that is not running says so and writes nothing; so does one from an agent's own process (ralph
marks every agent's environment: an agent cannot steer the loop it runs in).
"""

from __future__ import annotations

import argparse
import os
import signal

from ralphloop.core.clock import SystemClock
from ralphloop.core.errors import RalphError
from ralphloop.core.steering import AGENT_MARK, Request
from ralphloop.files.read import lock_holder_alive, read_json_object
from ralphloop.files.safe_read import FileRefused
from ralphloop.project.owner import check_state_folder
from ralphloop.project.paths import FeaturePaths, display_path, find_project_root
from ralphloop.project.resolve import resolve_feature
from ralphloop.records.control import ControlFile
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


def command(args: argparse.Namespace, argv: list[str]) -> int:
    action = args.command
    if os.environ.get(AGENT_MARK):
        raise RalphError(
            f"ralph {action}: refused: this runs in an agent's process (${AGENT_MARK} is set); an agent cannot steer "
            "the loop it runs in"
        )
    text = _text(action, getattr(args, "text", None))
    paths = resolve_feature(find_project_root(), args.feature)
    check_state_folder(paths.state_dir, display_path(paths.state_dir, os.getcwd()))
    pid = lock_holder_alive(paths.lock)
    if pid is None:
        raise RalphError(f"ralph {action}: no loop is running for {paths.selector}; nothing was written")
    if action == "answer":
        _check_asked(paths)
    now = bool(getattr(args, "now", False))
    request = Request(action, "cli", SystemClock().now(), text, now)
    control = ControlFile(paths.control)
    try:
        control.ask(request)
    except (OSError, FileRefused) as exc:
        where = display_path(paths.control, os.getcwd())
        raise RalphError(f"{where}: cannot write: {getattr(exc, 'strerror', None) or exc}") from None
    if now:
        os.kill(pid, signal.SIGINT)  # the loop's own Ctrl+C: the attempt saved and undone
    said = _DONE["stop-now" if now else action].format(resume=paths.command("resume"))
    print(f"ralph: {paths.selector}: {said}")
    return 0


def _text(action: str, words: list[str] | None) -> str:
    """The words of a say or an answer, cleaned of escapes and control characters; "" for the others."""
    if words is None:
        return ""
    text = clean_text(" ".join(words)).strip()
    if not text:
        raise RalphError(f"ralph {action}: TEXT is empty (usage: ralph {action} TEXT)")
    if len(text) > TEXT_LIMIT:
        raise RalphError(
            f"ralph {action}: TEXT is {len(text)} characters, over {TEXT_LIMIT}; put it in a file and say its path"
        )
    return text


def _check_asked(paths: FeaturePaths) -> None:
    """An answer is for a question the loop waits on (status.json says so), never kept for one to come."""
    try:
        status = read_json_object(paths.status, display_path(paths.status, os.getcwd())) or {}
    except FileRefused as exc:
        raise RalphError(str(exc)) from None
    waiting = status.get("waiting")
    if not (isinstance(waiting, dict) and waiting.get("kind") == "answer"):
        raise RalphError(f"ralph answer: the loop of {paths.selector} waits on no question; nothing was written")

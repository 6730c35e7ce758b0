"""`ralph validate --fix`: a fix plan or TODO.md written in plain or numbered bullets gets checkboxes, with the
user's consent, before the workspace is validated as usual.

Which bullets are tasks is tasks/bullets.py's to say (the top level of a list that opens a section; not notes,
sub-items, code or a "Completed" record). The change is shown first as a unified diff. On a terminal ralph then
asks; without one the flag is the consent, and the diff printed is the record of what was written. The original
is saved beside the file before anything is written (NAME.orig, or NAME.orig.2, ... when that is taken), and the
file is replaced in one step, so it is never half-written. A declined or cancelled fix writes nothing, and neither
does a fix of a file that is a symbolic link: its target may be outside the project, or another project's.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from collections.abc import Iterator

from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import TASK_CAP, read_file
from ralphloop.files.store import atomic_write_bytes
from ralphloop.plugins.detect import fix_plan_file, present
from ralphloop.project.paths import FeaturePaths, display_path
from ralphloop.tasks.bullets import Required, checkbox_fix
from ralphloop.tasks.fix_plan import required
from ralphloop.tasks.todo_md import every_section
from ralphloop.words.textsafe import strip_terminal_controls

COPY_SUFFIX = ".orig"
_MAX_COPIES = 100
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def fix_checklists(paths: FeaturePaths) -> None:
    """Offer checkboxes for each checklist of the workspace written without them (asked on a terminal)."""
    ask = sys.stdin.isatty() and sys.stdout.isatty()
    for path, counted in _checklists(paths):
        _fix(path, display_path(path, os.getcwd()), counted, ask)


def _checklists(paths: FeaturePaths) -> Iterator[tuple[str, Required]]:
    todo = os.path.join(paths.dir, "TODO.md")
    if present(todo):
        yield todo, every_section
    plan = fix_plan_file(paths.dir)
    if plan:
        yield plan, required


def _fix(path: str, shown: str, counted: Required, ask: bool) -> None:
    raw = _read(path, shown)
    try:
        text = raw.decode("utf-8") if raw else ""
    except UnicodeDecodeError:
        return  # the validation below names the line
    fix = checkbox_fix(text, counted)
    if fix is None:
        return
    if os.path.islink(path):  # the file it points to may be anyone's, anywhere: ralph writes only what it finds here
        raise RalphError(
            f"{shown}: a symbolic link (to {os.readlink(path)}): ralph writes no file through a link; "
            "put a copy of the file in its place to have it fixed: nothing written"
        )
    copy = _free_copy_name(path)
    shown_copy = display_path(copy, os.getcwd())
    for line in _diff(text, fix.text, shown):
        print(strip_terminal_controls(line))
    count = f"{len(fix.lines)} {fix.noun}"
    if ask and not _agree(f"Turn these {count} into checkboxes? The original is kept as {shown_copy}. [y/N] "):
        print(strip_terminal_controls(f"{shown}: left as it was"))
        return
    if _read(path, shown) != raw:  # edited since it was read (an editor, an agent): that edit must not be lost
        raise RalphError(f"{shown}: changed while ralph was fixing it: nothing written (run the fix again)")
    _save_copy(copy, raw or b"", shown_copy, os.stat(path).st_mode & 0o777)
    atomic_write_bytes(path, fix.text.encode("utf-8"))  # a link put there meanwhile is replaced, its target left
    print(strip_terminal_controls(f"{shown}: {count} turned into checkboxes; the original is saved as {shown_copy}"))


def _read(path: str, shown: str) -> bytes | None:
    try:
        return read_file(path, shown, cap=TASK_CAP)
    except RalphError:
        return None  # a FIFO, a folder, too big: the validation below names it


def _diff(before: str, after: str, shown: str) -> list[str]:
    return list(
        difflib.unified_diff(
            _LINE_BREAK.split(before),
            _LINE_BREAK.split(after),
            fromfile=f"{shown} (as it is)",
            tofile=f"{shown} (with checkboxes)",
            lineterm="",
        )
    )


def _agree(question: str) -> bool:
    try:
        answer = input(question)
    except EOFError:  # Ctrl+D: no answer is no
        print()
        return False
    return answer.strip().casefold() in ("y", "yes")


def _free_copy_name(path: str) -> str:
    for number in range(1, _MAX_COPIES + 1):
        name = f"{path}{COPY_SUFFIX}" if number == 1 else f"{path}{COPY_SUFFIX}.{number}"
        if not os.path.lexists(name):
            return name
    raise RalphError(f"{path}{COPY_SUFFIX}: {_MAX_COPIES} saved copies already: remove the old ones first")


def _save_copy(copy: str, data: bytes, shown: str, mode: int) -> None:
    """The original, in a new file (never over another: a copy saved earlier is the user's only one)."""
    try:
        fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    except OSError as exc:
        raise RalphError(f"{shown}: cannot save the original there ({exc.strerror}): nothing written") from None
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())

"""Where the user's phone finds `ralph serve`'s page (issue 36): with `serve.public_url` configured (the address of
the user's own tunnel or proxy to it), `ralph serve` publishes that address with its token in ralph's home, one
file per project (0600: the token opens the page and its controls), and takes it back when it stops. The
notifications that need the user (notify/sink.py) carry it while the server that wrote it lives."""

from __future__ import annotations

import contextlib
import hashlib
import os

from ralphloop.files.read import read_json_object
from ralphloop.files.safe_read import FileRefused
from ralphloop.files.store import atomic_write_json
from ralphloop.project.paths import ralph_home


def page_file(project_root: str) -> str:
    key = hashlib.sha256(os.path.realpath(project_root).encode()).hexdigest()[:16]
    return os.path.join(ralph_home(), "serve", f"{key}.json")


def publish(project_root: str, url: str) -> None:
    """The page's public address (with its token) for `project_root`'s notifications, by this process."""
    path = page_file(project_root)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with contextlib.suppress(FileExistsError):  # 0600 from its first instant: the atomic write keeps the mode
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    os.chmod(path, 0o600)
    atomic_write_json(path, {"url": url, "pid": os.getpid(), "project": os.path.realpath(project_root)})


def withdraw(project_root: str) -> None:
    """This process's address taken back (another's, published since, stays)."""
    path = page_file(project_root)
    with contextlib.suppress(OSError, FileRefused):
        found = read_json_object(path) or {}
        if found.get("pid") == os.getpid():
            os.remove(path)


def page_url(project_root: str) -> str | None:
    """The address a running `ralph serve` published for `project_root` (or, for a loop of a parallel run working in
    a linked worktree, for the project in the main worktree), or None (none, or its server is gone)."""
    for root in (project_root, _main_project(project_root)):
        url = _published(root) if root else None
        if url is not None:
            return url
    return None


def _main_project(project_root: str) -> str | None:
    """The same project in the repository's main worktree, when `project_root` lies in a linked one (its `.git`
    is a file naming `<main>/.git/worktrees/<name>`); read from that file alone, no git process."""
    top = os.path.realpath(project_root)
    while not os.path.lexists(os.path.join(top, ".git")):
        if os.path.dirname(top) == top:
            return None
        top = os.path.dirname(top)
    try:
        with open(os.path.join(top, ".git"), encoding="utf-8") as handle:
            pointer = handle.read(4096).strip()
    except (OSError, UnicodeDecodeError):  # a folder (the main worktree itself), or unreadable
        return None
    main, marker, _ = pointer.removeprefix("gitdir:").strip().partition(f"{os.sep}.git{os.sep}worktrees{os.sep}")
    return os.path.join(main, os.path.relpath(os.path.realpath(project_root), top)) if marker else None


def _published(project_root: str) -> str | None:
    try:
        found = read_json_object(page_file(project_root)) or {}
    except FileRefused:
        return None
    url, pid = found.get("url"), found.get("pid")
    if not isinstance(url, str) or not isinstance(pid, int) or pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:  # alive, another user's
        pass
    return url

"""The next capture's tree derived without a git process, when only files ralph itself wrote changed since the
last one (progress.txt, appended after each iteration): the file's blob and the trees above it are written as
loose objects (workspace/objects.py). Two git processes fewer per iteration (an add and a write-tree).

This holds only where git would store the file as it is on disk: no filter, end-of-line conversion, ident or
working-tree encoding may apply to it (asked of git once, and again when an attribute or config file changes),
and its entry must already be in the tree as a plain file. Otherwise None: the caller lets git do it.
"""

from __future__ import annotations

import os
import stat

from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import read_file
from ralphloop.workspace import gitcache, objects
from ralphloop.workspace.git import run

# The attributes under which `git add` stores something other than the bytes on disk.
_CONVERTING = ("text", "eol", "crlf", "filter", "ident", "working-tree-encoding")


def tree_with(memo: gitcache.Memo, base: str, paths: list[str]) -> str | None:
    """`base` with each of `paths` (from the repository's top) as it is on disk now; None when git must do it."""
    store = objects.Store.of(memo.layout.common_dir)
    if store is None or not _plain(memo, paths):
        return None
    tree: str | None = base
    for path in paths:
        content = _regular_file(os.path.join(memo.layout.top, path))
        if content is None or tree is None:
            return None
        data, mode = content
        try:
            tree = objects.with_file(store, tree, path, data, mode)
        except OSError:
            return None
    return tree


_CAP = 64 * 1024 * 1024  # a file ralph wrote, hashed here; a bigger one (an agent's flood) is git's to add


def _regular_file(path: str) -> tuple[bytes, int] | None:
    """A regular file's bytes and mode, never through a symlink; None for anything else, or one over the cap."""
    try:
        info = os.lstat(path)
        data = read_file(path, cap=_CAP, follow=False) if stat.S_ISREG(info.st_mode) else None
    except (RalphError, OSError):  # refused (a link, a FIFO, over the cap), or gone
        return None
    return (data, info.st_mode) if data is not None else None


def _plain(memo: gitcache.Memo, paths: list[str]) -> bool:
    """Whether git stores each of `paths` as its bytes on disk; asked of git again when a file that can say
    otherwise changed."""
    key = tuple(gitcache.stamp(source) for source in _sources(memo, paths))
    if memo.plain is not None and memo.plain[0] == key:
        return memo.plain[1]
    plain = _asked_git(memo, paths)  # a core.attributesFile it names is watched from the next call on
    memo.plain = (key, plain)
    return plain


def _asked_git(memo: gitcache.Memo, paths: list[str]) -> bool:
    top = memo.layout.top
    config = run(top, "config", "--get-regexp", r"^core\.(autocrlf|attributesfile)$")
    if config.returncode not in {0, 1}:
        return False
    for line in config.stdout.decode("utf-8", "surrogateescape").splitlines():
        key, _, value = line.partition(" ")
        if key == "core.attributesfile":  # watched from now on, with the usual places
            memo.attributes = os.path.join(top, os.path.expanduser(value))
        elif value.strip().lower() not in {"", "false"}:
            return False
    attributes = run(top, "check-attr", "-z", *_CONVERTING, "--", *paths)
    if attributes.returncode != 0:
        return False
    fields = attributes.stdout.split(b"\0")
    values = fields[2::3]
    return len(values) == len(paths) * len(_CONVERTING) and all(value == b"unspecified" for value in values)


def _sources(memo: gitcache.Memo, paths: list[str]) -> list[str]:
    """The files whose change can change `_plain`'s answer: every .gitattributes on the way to each path, the
    repository's info/attributes and config, the user's and the system's, and core.attributesFile once git named
    it (a file a config includes is not watched)."""
    layout = memo.layout
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    found = [
        os.path.join(layout.common_dir, "info", "attributes"),
        os.path.join(layout.common_dir, "config"),
        os.path.join(layout.git_dir, "config.worktree"),
        os.environ.get("GIT_CONFIG_GLOBAL") or os.path.join(home, ".gitconfig"),
        os.path.join(xdg, "git", "config"),
        os.path.join(xdg, "git", "attributes"),
        os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig",
        "/etc/gitattributes",
        *([memo.attributes] if memo.attributes else []),
    ]
    for path in paths:
        folder = ""
        for name in ["", *path.split("/")[:-1]]:
            folder = os.path.join(folder, name) if folder else name
            found.append(os.path.join(layout.top, folder, ".gitattributes"))
    return found

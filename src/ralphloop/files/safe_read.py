"""Reading a file that anyone could have put in ralph's way: a task file, a config, a state file the agent
can write. A FIFO is never waited on, a device or a folder never read, nothing read beyond a cap, and a
refusal is one line naming the file. Light on purpose (os, stat, re): `ralph status` reads through it.
"""

from __future__ import annotations

import errno
import os
import stat

from ralphloop.core.errors import RalphError
from ralphloop.words.patterns import lazy

TYPE_CHECKING = False  # typing costs ~9 ms of import; status must stay fast
if TYPE_CHECKING:
    from typing import Any

MB = 1024 * 1024
# The most ralph reads of each kind of file; a bigger one is refused, never read in part and misread.
TASK_CAP = 16 * MB  # prd.json, TODO.md, fix_plan.md, a story spec, SPRINT.yaml, PROGRESS.yaml, spec.md
CONFIG_CAP = 1 * MB  # config.yaml, a prompt template (prompt.md, PROMPT.md, -p FILE)
STATE_CAP = 16 * MB  # status.json, state.json, the breaker's files, the call ledger, .exit_signals
LOG_CAP = 256 * MB  # ralph_metrics.jsonl, read whole by `ralph report`

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
# A NUL or a lone surrogate (JSON's "\u0000", "\ud800"; YAML's "\0", "\uD800") is no text ralph can pass on:
# not in an argument, an environment variable, a file name, nor UTF-8 on a screen.
_NOT_TEXT = lazy("[\x00\ud800-\udfff]")


class FileRefused(RalphError):
    """A file that is not a regular file ralph may read: a FIFO, a device, a folder, a link, too big."""


def shown_path(path: str | os.PathLike[str]) -> str:
    """`path` as the user would type it: relative to the current folder when inside it."""
    text = os.fspath(path)
    try:
        rel = os.path.relpath(text)
    except ValueError:
        return text
    return text if rel.startswith("..") else rel


class _Shown:
    """`shown_path(path)`, worked out only when a message names the file: most reads succeed, and relpath
    (a getcwd and a normalisation) on each of the ~40 reads of an iteration cost ~0.7 ms."""

    __slots__ = ("path",)

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path

    def __str__(self) -> str:
        return shown_path(self.path)


def read_file(path: str | os.PathLike[str], label: str | None = None, *, cap: int, follow: bool = True) -> bytes | None:
    """The bytes of the regular file at `path`; None when there is none. FileRefused naming `label` when
    it is anything else, a broken link, bigger than `cap`, or (`follow=False`: a file only ralph writes,
    and it never makes a link) a symbolic link."""
    name = label or _Shown(path)
    fd = _open_regular(path, name, cap, follow)
    if fd is None:
        return None
    try:
        chunks: list[bytes] = []
        left = cap + 1  # one byte more than allowed tells a file that grew past the cap
        while left > 0 and (chunk := os.read(fd, min(left, MB))):
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
    except OSError as exc:
        raise FileRefused(f"{name}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    _check_size(len(data), cap, name)
    return data


def open_regular(
    path: str | os.PathLike[str], label: str | None = None, *, cap: int, follow: bool = True
) -> int | None:
    """A descriptor (the caller closes it) on the regular file at `path`, of at most `cap` bytes; None when
    there is none; FileRefused as `read_file` refuses. For a reader that streams the file."""
    return _open_regular(path, label or _Shown(path), cap, follow)


def _open_regular(path: str | os.PathLike[str], name: str | _Shown, cap: int, follow: bool) -> int | None:
    fd = _open(os.fspath(path), name, follow)
    if fd is None:
        return None
    try:
        _check_size(_regular(fd, name).st_size, cap, name)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_tail(
    path: str | os.PathLike[str],
    label: str | None = None,
    *,
    max_bytes: int,
    start: int | None = None,
    follow: bool = True,
) -> tuple[bytes, int] | None:
    """The last `max_bytes` of the regular file at `path` (or those from `start`, or from the top when the
    file is now shorter than `start`) and the file's size; None when there is none. Refused as `read_file`
    refuses, but for the size: an append-only log may grow as it will."""
    name = label or _Shown(path)
    fd = _open(os.fspath(path), name, follow)
    if fd is None:
        return None
    try:
        size = _regular(fd, name).st_size
        if start is None:
            start = max(0, size - max_bytes)
        return os.pread(fd, max_bytes, start if start <= size else 0), size
    except OSError as exc:
        raise FileRefused(f"{name}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def check_file(
    path: str | os.PathLike[str], label: str | None = None, *, cap: int | None = None, follow: bool = True
) -> None:
    """Refuse (FileRefused) what `read_file` would refuse, without opening anything: for a file ralph
    is about to read or write, checked before the run takes a call slot or writes a byte."""
    name = label or _Shown(path)
    target = os.fspath(path)
    try:
        info = os.stat(target) if follow else os.lstat(target)
    except FileNotFoundError:
        if os.path.islink(target):
            raise FileRefused(f"{name}: a broken symbolic link (to {os.readlink(target)}); remove it") from None
        return
    except NotADirectoryError:
        return
    except OSError as exc:
        raise FileRefused(f"{name}: cannot read: {exc.strerror or exc}") from None
    if stat.S_ISLNK(info.st_mode):
        raise FileRefused(f"{name}: a symbolic link where ralph keeps its own file; remove it")
    _check_mode(info.st_mode, name)
    if cap is not None:
        _check_size(info.st_size, cap, name)


def check_folder(path: str | os.PathLike[str], label: str | None = None, what: str = "its logs") -> None:
    """A folder of ralph's own (logs/, where ralph keeps `what`): absent, or a real folder (not a link, not a file)."""
    name = label or _Shown(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a folder"
        raise FileRefused(f"{name}: {kind} where ralph keeps {what}; remove it")


def decode_text(raw: bytes, label: str) -> str:
    """UTF-8 text without NUL bytes, or RalphError naming `label` and the line of the first bad byte."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RalphError(f"{label}: not UTF-8 text (line {_line(raw, exc.start)})") from None
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise RalphError(f"{label}: a NUL byte, not text (line {_line(raw, nul)})")
    return text


def not_text(value: Any, where: str = "") -> str | None:
    """Where in a parsed JSON or YAML value a string (or a key) holds a NUL or a lone surrogate,
    and which ("userStories[0].id: a NUL character"); None when every string is text."""
    if isinstance(value, str):
        found = _NOT_TEXT.search(value)
        if found is None:
            return None
        what = "a NUL character" if found.group() == "\x00" else "a lone surrogate (not valid Unicode)"
        return f"{where or 'a string'}: {what}"
    if isinstance(value, dict):
        for key, item in value.items():
            inner = f"{where}.{key}" if where else str(key)
            problem = not_text(key, f"{inner} (its name)") or not_text(item, inner)
            if problem:
                return problem
    elif isinstance(value, list):
        for index, item in enumerate(value):
            problem = not_text(item, f"{where}[{index}]")
            if problem:
                return problem
    return None


MAX_NODES = 100_000  # values in a parsed config or task file, aliases counted as often as they are used
MAX_DEPTH = 100  # lists and mappings within each other


def shape_problem(value: Any) -> str | None:
    """What makes a parsed YAML value unusable (None when nothing): a recursive alias (`a: &x [*x]`), an alias
    bomb (a few lines that expand to billions of values), nesting deeper than MAX_DEPTH. Walked without
    recursion, each shared node once with its expanded size, so that the walk itself is bounded."""
    sizes: dict[int, int] = {}
    heights: dict[int, int] = {}  # a shared node's own depth: reused deeper down, it nests deeper
    on_path: set[int] = set()
    stack: list[tuple[Any, int, bool]] = [(value, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        if not isinstance(node, (dict, list)):
            continue
        key = id(node)
        if done:
            on_path.discard(key)
            children = list(node.values() if isinstance(node, dict) else node)
            sizes[key] = 1 + sum(sizes.get(id(child), 1) for child in children)
            heights[key] = 1 + max((heights.get(id(child), 0) for child in children), default=0)
            if sizes[key] > MAX_NODES:
                return f"holds more than {MAX_NODES:,} values (counting each use of an alias)"
            continue
        if key in on_path:
            return "a recursive alias (a value that holds itself)"
        if key in sizes:
            if depth + heights[key] - 1 > MAX_DEPTH:
                return f"nested deeper than {MAX_DEPTH} levels"
            continue
        if depth > MAX_DEPTH:
            return f"nested deeper than {MAX_DEPTH} levels"
        on_path.add(key)
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in (node.values() if isinstance(node, dict) else node))
    return None


def scrub(value: Any) -> Any:
    """A parsed state file with every NUL and lone surrogate in its strings replaced by U+FFFD, so that
    a hostile status.json can be shown, compared and written back without an encoding error."""
    if isinstance(value, str):
        return _NOT_TEXT.sub("\ufffd", value)
    if isinstance(value, dict):
        return {scrub(key): scrub(item) for key, item in value.items()}
    if isinstance(value, list):
        return [scrub(item) for item in value]
    return value


def maybe_not_text(raw: bytes) -> bool:
    """Whether JSON bytes could hold a NUL or a lone surrogate (both need a \\u escape): when not, the
    parsed value needs no `scrub` and no `not_text` walk."""
    return b"\\u" in raw and (b"\\u0000" in raw or b"\\ud" in raw or b"\\uD" in raw)


def _open(path: str, name: str | _Shown, follow: bool) -> int | None:
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        return os.open(path, flags)
    except (FileNotFoundError, NotADirectoryError):
        if os.path.islink(path):
            raise FileRefused(f"{name}: a broken symbolic link (to {os.readlink(path)}); remove it") from None
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            raise FileRefused(f"{name}: a symbolic link where ralph keeps its own file; remove it") from None
        if exc.errno == errno.ENXIO:
            raise FileRefused(f"{name}: not a regular file but a socket or a device; remove it") from None
        raise FileRefused(f"{name}: cannot read: {exc.strerror or exc}") from None


def _regular(fd: int, name: str | _Shown) -> os.stat_result:
    info = os.fstat(fd)
    _check_mode(info.st_mode, name)
    return info


def _check_mode(mode: int, name: str | _Shown) -> None:
    if stat.S_ISREG(mode):
        return
    kind = next((words for test, words in _KINDS if test(mode)), "not a regular file")
    raise FileRefused(f"{name}: not a regular file but {kind}; remove or replace it")


def _check_size(size: int, cap: int, name: str | _Shown) -> None:
    if size > cap:
        raise FileRefused(f"{name}: {_size(size)}, more than the {_size(cap)} ralph reads of such a file")


def _size(count: int) -> str:
    return f"{count / MB:.0f} MB" if count >= MB else f"{count} bytes"


def _line(raw: bytes, offset: int) -> int:
    return raw.count(b"\n", 0, offset) + 1


def read_head(path: str | os.PathLike[str], size: int) -> bytes | None:
    """The first `size` bytes of a regular file, for a peek at what it is; None for anything else."""
    try:
        fd = os.open(os.fspath(path), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.pread(fd, size, 0) if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except OSError:
        return None
    finally:
        os.close(fd)


def nonblocking(path: str, flags: int) -> int:
    """An `open(..., opener=)` for a record ralph appends to: a FIFO in its place fails the write at once
    (no reader: ENXIO) instead of hanging the loop on it."""
    return os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)

"""Which error an iteration ended on, and whether it is the same error as last time.

The circuit breaker opens after N consecutive iterations with the *same* error, so two things
must hold: an error is an error, and "same" compares errors.

Structured facts come first. When the agent CLI itself failed (`failed`, e.g. "exit code 1:
ModuleNotFoundError: No module named 'x'") or the CLI marked a tool result as an error, that
is the iteration's error: nobody had to guess. Only without them are error lines read from the
output, and a line counts by its form — "error: ...", "fatal: ...", "ValueError: ...", the
last line of a Python traceback, "npm ERR! ...", "bash: foo: command not found" — never because
it mentions a word. Prose never counts: "Added exception handling", "Fixed the error in
parse()", "No errors found" and "0 errors, 0 warnings" describe work; counting them as errors
opened breakers on runs that were going well.

"Same" means equal fingerprints of the normalised error text: lower case, with timestamps,
paths, hex ids, line numbers, durations and other numbers replaced by placeholders, so the
same failure in another temp dir, at another time or on another line compares equal, while
another exception type, another message or another missing module does not.

Everything here is pure and linear in the size of the text.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator, Sequence

from ralphloop.words.patterns import lazy
from ralphloop.words.textsafe import strip_terminal_controls

MAX_LINE = 500  # an error line is cut to this many characters

# ------------------------------------------------------------------ error lines

# A log-line timestamp before the error form: "2024-01-05 12:00:00,123 ERROR ..." or "[2024-01-05T12:00:00Z] ...".
_STAMP = r"(?:\[?\d{4}-\d\d-\d\d[T ][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?\]?\s+)?"
# An error code after the word "error": rustc "error[E0308]:", tsc "error TS2322:", MSVC "error C2065:".
_CODE = r"(?:\[[\w-]+\]|\s+[A-Za-z]{1,6}\d+)?"
# The forms, tried at the start of a stripped line. Only top-level groups are named: `lastgroup` says which matched.
_FORM = lazy(
    _STAMP
    + r"(?:"
    # "Error:", "error:", "ERROR:", "error[E0308]:", "error TS2322:", "fatal:", "fatal error:", "FATAL", "[ERROR]"
    + r"(?P<head>(?i:error)"
    + _CODE
    + r"\s*:|ERROR\b|(?i:fatal)(?:\s+error)?\s*:|FATAL\b|\[(?:ERROR|FATAL|error|fatal)\])"
    # a compiler or tool location before "error": "a.c:3:5: error:", "a.ts(3,5): error TS2322:",
    # "a.ts:3:5 - error TS2322:", "mypy.py:3: error:", "collect2: error:"
    + r"|(?P<located>(?:[A-Za-z]:)?[\w./\\~][^\s:()]*(?:(?:\(\d+(?:,\d+)*\)|(?::\d+)+):?|:)\s*(?:-\s+)?"
    + r"(?i:(?:fatal\s+)?error)"
    + _CODE
    + r"\s*:)"
    # "ValueError: bad", "json.decoder.JSONDecodeError: ...", "Exception: boom", "TypeError [ERR_X]: ...",
    # "Uncaught TypeError: ...", a bare "AssertionError"
    + r"|(?P<exception>(?:Uncaught\s+)?(?:[A-Za-z_][\w$]*\.)*(?:[A-Za-z_][\w$]*)?(?:Error|Exception)(?:\s*\[[\w-]+\])?:"
    + r"|(?:[A-Za-z_][\w$]*\.)*[A-Za-z_][\w$]*(?:Error|Exception)\Z|Exception\s+in\s+thread\b)"
    # Go and Rust panics
    + r"|(?P<panic>(?i:panic):|thread\s+'[^']*'\s+panicked\b)"
    + r"|(?P<npm>npm\s+(?:ERR!|error)(?:\s|\Z))"
    # pytest's "E   assert 1 == 2" and "FAILED tests/x.py::test - ...", unittest's "FAIL: test_x", Go's "--- FAIL: X"
    + r"|(?P<test>E\s{2,}\S|(?:---\s+)?FAIL(?:ED)?\b)"
    + r"|(?P<crash>Segmentation fault\b|make(?:\[\d+\])?:\s+\*\*\*)"
    # a shell error line: "bash: foo: command not found", "zsh: command not found: foo",
    # "cat: x: No such file or directory", "bash: line 1: 42 Segmentation fault (core dumped) ./a.out"
    + r"|(?P<shell>[\w./+~-]+:\s+(?:.*?[:\]]\s+)?(?i:command not found(?::.*)?|no such file or directory\.?"
    + r"|permission denied\.?|(?:\d+\s+)?segmentation fault\b.*)\Z)"
    + r")"
)
_TRACEBACK = "Traceback (most recent call last):"
# The line that ends a Python traceback: an exception name, maybe with its message.
# "ValueError: bad", "KeyboardInterrupt", "mod.Error": with a message, or a CamelCase name ("Fixed" is prose).
_EXCEPTION_LINE = lazy(r"(?:[A-Za-z_]\w*\.)*(?:[A-Za-z_]\w*:.*|_*[A-Z][a-z0-9_]*[A-Z]\w*|\w*(?:Error|Exception))\Z")
# "Error: none", "ERROR: 0", "fatal: n/a": a report that there was no error.
_NO_ERROR = lazy(r"[\s:]*(?:none|nil|null|n/?a|0|no(?:thing)?|-+|(?:0|no)\s+errors?(?:\s+found)?)\.?\Z", re.I)
# npm's footer around a failure: where the log is, "this is probably not a problem with npm".
_NPM_BOILERPLATE = lazy(
    r"a complete log of this run|not a problem with npm|additional logging output above|note that you can also install"
    r"|tarball, folder, http url, or git repo|related to npm not being able to find a file|log files were not written",
    re.I,
)
# Lines that are errors by form but only restate that an earlier error happened: rustc's "error: aborting due to
# 1 previous error", cargo's "error: could not compile `x`", make's "make: *** [all] Error 1", npm's
# "npm ERR! code ELIFECYCLE", Go's "FAIL\tpkg\t0.01s", unittest's "FAILED (failures=1)". The iteration's error
# is the last line that is not one of these, when there is one.
_SUMMARY = lazy(
    r"(?i:error)\s*:\s*(?:aborting due to|could not compile|process completed with exit code)"
    r"|make(?:\[\d+\])?:\s+\*\*\*"
    r"|npm\s+(?:ERR!|error)\s+(?i:code|errno|exit status|failed at the)\b"
    r"|FAIL(?:\s|\Z)|FAILED\s*\(",
)
_NEWLINES = lazy(r"\r\n?")


def _lines(text: str) -> list[str]:
    return strip_terminal_controls(_NEWLINES.sub("\n", text)).split("\n")


def _cut(line: str) -> str:
    return line.strip()[:MAX_LINE].rstrip()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _is_error(stripped: str) -> bool:
    match = _FORM.match(stripped)
    if match is None:
        return False
    form = match.lastgroup
    if form == "head" and _NO_ERROR.match(stripped, match.end()):
        return False
    if form == "npm":
        rest = stripped[match.end() :]
        if len(rest.split()) <= 1 or _NPM_BOILERPLATE.search(rest):
            return False
    return True


def _scan(text: str) -> Iterator[str]:
    """Each error line of `text` in order, stripped; a Python traceback gives its last line."""
    traceback_indent = -1  # inside a traceback: the indentation of its header
    for line in _lines(text):
        stripped = line.strip()
        if not stripped:
            continue
        if traceback_indent >= 0:
            if _indent(line) > traceback_indent:
                continue  # a frame: "  File ...", its source line, "    ^^^^"
            traceback_indent = -1
            if stripped != _TRACEBACK and _EXCEPTION_LINE.match(stripped):
                yield stripped
                continue
            yield _TRACEBACK  # cut short: the header is all there is
        if stripped == _TRACEBACK:
            traceback_indent = _indent(line)
        elif _is_error(stripped):
            yield stripped
    if traceback_indent >= 0:
        yield _TRACEBACK


def error_lines(text: str, limit: int = 20) -> list[str]:
    """The last `limit` lines of `text` that are errors by their form, each stripped and cut to 500 characters.

    A line counts when, after its indentation and any terminal escapes, it starts with an error form:
    "Error:"/"error:"/"ERROR", "error[E0308]:", "error TS2322:", "fatal:"/"FATAL", "<Name>Error: ...",
    "<Name>Exception: ...", "panic:", "npm ERR!", pytest's "E   ..." and "FAILED ...", "Segmentation fault",
    a compiler location before "error:" ("a.c:3:5: error: ..."), or it is a shell error line ending in
    "command not found", "No such file or directory" or "Permission denied". A Python traceback counts once,
    as its last line ("ValueError: bad"). Prose that mentions errors ("Fixed the error in parse()",
    "Error handling improved", "0 errors"), "Error: none", and npm's footer (where the log is) do not count.
    """
    if limit <= 0:
        return []
    found: deque[str] = deque(maxlen=limit)
    for line in _scan(text):
        found.append(_cut(line))
    return list(found)


# ------------------------------------------------------------------ normalising

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
# Pattern texts, compiled by `re` at their first use and kept in its cache: an iteration that ended on no error
# never pays for them (~1 ms).
_SUBSTITUTIONS: tuple[tuple[str, str], ...] = (
    (r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "<id>"),
    # ISO-8601 date and time, a time of day, a date, "mon jan  5", "january 5, 2024"
    (
        r"(?<![\w.])\d{4}-\d\d-\d\d(?:[t ]\d\d:\d\d(?::\d\d)?(?:[.,]\d+)?(?:z|[+-]\d\d:?\d\d)?)?(?!\w)"
        r"|(?<![\w.:])\d{1,2}:\d\d:\d\d(?:[.,]\d+)?(?:\s?[ap]m)?(?![\w:])"
        r"|(?<![\w./-])(?:\d{4}[/-]\d{1,2}[/-]\d{1,2}|\d{1,2}[/-]\d{1,2}[/-]\d{4})(?![\w/-])"
        r"|\b(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s+)?" + _MONTH + r"\.?\s+\d{1,2}\b(?:,?\s+\d{4}\b)?",
        "<time>",
    ),
    # paths: absolute, ./ ../ ~/, C:\ and \\server, "dir/file" (not a URL: "https://..." stays), and a bare
    # file name before a line number ("a.py:42", "a.ts(3,5)")
    (
        r"(?<![\w/.~\\-])(?!(?<=:)//)(?:[a-z]:[\\/]|\\\\|~?/|\.{1,2}[\\/]|[\w.-]+[\\/])[^\s'\"`()\[\]{},;:|]*"
        r"|(?<![\w/.~\\-])[\w-]+(?:\.[\w-]+)*\.[a-z]\w{0,7}(?=:\d+[:,)]|\(\d)",
        "<path>",
    ),
    (r"\b0x[0-9a-f]+\b", "<hex>"),
    # a git sha or another hex id: 7 or more hex digits with a digit among them ("deadbeef" is a word)
    (r"(?<![\w.])(?=[0-9a-f]*\d)[0-9a-f]{7,}(?!\w)", "<n>"),
    # durations: "1.23s", "150ms", "2m30s", "5 seconds"
    (
        r"(?<![\w.])(?:\d+(?:\.\d+)?(?:ms|us|µs|μs|ns|h|m|s))+(?!\w)"
        r"|(?<![\w.])\d+(?:\.\d+)?\s?(?:milliseconds?|msecs?|seconds?|secs?|minutes?|mins?|hours?|hrs?)\b",
        "<dur>",
    ),
    # line numbers: "line 42", ":42:7", "(3,5)"
    (r"\bline\s+\d+", "line <n>"),
    (r":\d+(?::\d+)*(?!\w)", ":<n>"),
    (r"\(\d+,\d+\)", "(<n>)"),
    # any other number on its own ("pid 1234", "[5]", "exit status 2"); "e0308", "ts2322", "v1.2", "utf8" stay
    (r"(?<![\w.])\d+(?:\.\d+)*(?!\w)", "<n>"),
)


def normalise(error: str) -> str:
    """`error` with what changes between runs replaced, so the same error elsewhere or later compares equal.

    Lower case; timestamps and dates become <time>, uuids <id>, file paths <path>, 0x... <hex>,
    durations <dur>, and line numbers, git shas and other free-standing numbers <n>; whitespace collapsed.
    Words, exception type names and error codes (E0308, TS2322) stay.
    """
    text = strip_terminal_controls(error).lower()
    for pattern, placeholder in _SUBSTITUTIONS:
        text = re.sub(pattern, placeholder, text)
    return " ".join(text.split())


def fingerprint(error: str) -> str:
    """16 lower-case hex characters of sha256 of the normalised error."""
    import hashlib  # ~2 ms of import (OpenSSL), paid only by an iteration that ended on an error

    return hashlib.sha256(normalise(error).encode("utf-8", "surrogatepass")).hexdigest()[:16]


# ------------------------------------------------------------------ one error per iteration


def _representative(text: str) -> str | None:
    """One line for an error text: a one-line error as it is; else its last error line that is not a summary."""
    lines = [line for line in _lines(text) if line.strip()]
    if not lines:
        return None
    if len(lines) == 1:
        return _cut(lines[0])
    chosen = _last_error(text)
    return chosen if chosen is not None else _cut(" ".join(" ".join(lines).split()))


def _last_error(text: str) -> str | None:
    """The last error line of `text` that is not a summary of earlier ones, else the last summary line."""
    last: str | None = None
    last_summary: str | None = None
    for line in _scan(text):
        if _SUMMARY.match(line):
            last_summary = line
        else:
            last = line
    chosen = last if last is not None else last_summary
    return None if chosen is None else _cut(chosen)


def iteration_error(*, failed: str | None, tool_errors: Sequence[str], text: str) -> str | None:
    """The one error that represents an iteration, structured facts first; None when there was none.

    `failed` (the agent CLI's own failure) when it is not blank; else the last non-blank of `tool_errors`
    (tool results the CLI marked as errors); else the last of `error_lines(text)` that is not a summary
    of earlier ones ("error: aborting due to 2 previous errors", "make: *** [all] Error 1"), or the last
    summary when there is nothing else. A multi-line `failed` or tool error is reduced the same way to
    its last error line (or, with none, to its text on one line). The result is one line of at most 500
    characters.
    """
    if failed is not None:
        chosen = _representative(failed)
        if chosen is not None:
            return chosen
    for tool_error in reversed(tool_errors):
        chosen = _representative(tool_error)
        if chosen is not None:
            return chosen
    return _last_error(text)

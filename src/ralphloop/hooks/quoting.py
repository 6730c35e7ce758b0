"""Quoting hook variables in a shell command: every unquoted `$NAME` becomes `"${NAME}"`.

Hook values reach a command only as environment variables; quoted, a value is always one word, never
split or expanded as a glob, and cannot inject shell.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from msgspec import Struct

from ralphloop.hooks.variables import HOOK_VARIABLES, reference_pattern
from ralphloop.words.patterns import lazy

# `<<WORD` or `<<-WORD`; the word may be quoted or escaped, which only says the body is not expanded.
_HEREDOC = lazy(r"<<(-?)[ \t]*((?:[^\s;&|<>()]|\\.)+)")


def quote_variables(command: str, names: Iterable[str] = HOOK_VARIABLES) -> str:
    """`command` with every unquoted `$NAME` / `${NAME}` of `names` written as `"${NAME}"`.

    Quoted, escaped, arithmetic and here-document references are left as they are: there the shell
    already neither splits nor globs, and added quotes would change the text or break the syntax.
    """
    wanted = tuple(names)
    if not wanted:
        return command
    return _Quoter(command, reference_pattern(wanted)).run()


class _Frame(Struct):
    kind: str  # top | sub ($( )) | backtick | arith ($(( ))) | dq ("...")
    depth: int = 0  # parentheses opened inside this frame and not yet closed


class _Quoter:
    """A small POSIX shell scanner that knows, at each `$`, whether a reference there would be split.

    It follows quotes, backslashes, comments, here-documents and nested `$( )`, backquotes and `$(( ))`:
    inside double quotes a command substitution starts an unquoted context of its own.
    """

    def __init__(self, text: str, pattern: re.Pattern[str]) -> None:
        self.text = text
        self.pattern = pattern
        self.pos = 0
        self.out: list[str] = []
        self.stack = [_Frame("top")]
        self.heredocs: list[tuple[str, bool]] = []  # (delimiter, strip leading tabs), bodies not yet read

    def run(self) -> str:
        while self.pos < len(self.text):
            frame = self.stack[-1]
            if frame.kind == "dq":
                self._double_quoted()
            else:
                self._code(frame)
        return "".join(self.out)

    def _take(self, count: int) -> None:
        self.out.append(self.text[self.pos : self.pos + count])
        self.pos += count

    def _take_until(self, end: int) -> None:
        self._take((len(self.text) if end < 0 else end) - self.pos)

    def _code(self, frame: _Frame) -> None:
        text, pos = self.text, self.pos
        char = text[pos]
        if char == "\\":
            self._take(2)
        elif char == "'" and frame.kind != "arith":
            end = text.find("'", pos + 1)
            self._take_until(end + 1 if end >= 0 else -1)
        elif char == '"':
            self.stack.append(_Frame("dq"))
            self._take(1)
        elif char == "$":
            self._dollar(quote=frame.kind != "arith")
        elif char == "`":
            self._backquote(frame)
        elif char == "#" and (pos == 0 or text[pos - 1] in " \t\n;&|()"):
            self._take_until(text.find("\n", pos))
        elif text.startswith("<<", pos) and not text.startswith("<<<", pos) and frame.kind != "arith":
            self._heredoc_operator()
        elif char == "\n" and self.heredocs:
            self._take(1)
            self._heredoc_bodies()
        elif char in "()":
            self._parenthesis(frame, char)
        else:
            self._take(1)

    def _double_quoted(self) -> None:
        char = self.text[self.pos]
        if char == "\\":
            # Inside double quotes a backslash escapes only these; elsewhere it is itself.
            self._take(2 if self.text[self.pos + 1 : self.pos + 2] in ("\\", '"', "$", "`", "\n") else 1)
        elif char == '"':
            self.stack.pop()
            self._take(1)
        elif char == "$":
            self._dollar(quote=False)
        elif char == "`":
            self._backquote(self.stack[-1])
        else:
            self._take(1)

    def _dollar(self, *, quote: bool) -> None:
        text, pos = self.text, self.pos
        if text.startswith("$((", pos):
            self.stack.append(_Frame("arith"))
            self._take(3)
        elif text.startswith("$(", pos):
            self.stack.append(_Frame("sub"))
            self._take(2)
        elif match := self.pattern.match(text, pos):
            name = match.group("braced") or match.group("bare")
            self.out.append(f'"${{{name}}}"' if quote else match.group(0))
            self.pos = match.end()
        else:
            # `$$NAME` is the shell's PID followed by text: both dollars go together.
            self._take(2 if text.startswith("$$", pos) else 1)

    def _backquote(self, frame: _Frame) -> None:
        if frame.kind == "backtick":
            self.stack.pop()
        else:
            self.stack.append(_Frame("backtick"))
        self._take(1)

    def _parenthesis(self, frame: _Frame, char: str) -> None:
        if char == "(":
            frame.depth += 1
        elif frame.depth:
            frame.depth -= 1
        elif frame.kind == "sub":
            self.stack.pop()
        elif frame.kind == "arith" and self.text.startswith("))", self.pos):
            self.stack.pop()
            self._take(2)
            return
        self._take(1)

    def _heredoc_operator(self) -> None:
        match = _HEREDOC.match(self.text, self.pos)
        if match is None:
            self._take(2)
            return
        # The body is copied untouched whether the delimiter is quoted or not: a here-document is never split.
        delimiter = re.sub(r"\\(.)", r"\1", match.group(2)).replace("'", "").replace('"', "")
        self.heredocs.append((delimiter, match.group(1) == "-"))
        self._take(match.end() - self.pos)

    def _heredoc_bodies(self) -> None:
        for delimiter, strip_tabs in self.heredocs:
            while self.pos < len(self.text):
                end = self.text.find("\n", self.pos)
                line = self.text[self.pos : len(self.text) if end < 0 else end]
                self._take_until(end + 1 if end >= 0 else -1)
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
        self.heredocs.clear()

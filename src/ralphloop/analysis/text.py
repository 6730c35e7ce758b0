"""The agent's own words: what signal parsing reads, and what counts as a quotation.

An agent's reply is split into prose and fenced blocks. Signals count in prose, outside
inline code; a fenced block is a quotation unless it is the fenced JSON result or a
status block on its own. A verbatim echo of the prompt is removed first (some CLIs print
the prompt back, and the prompt names every signal), and a line copied from the prompt
that mentions a signal is an instruction, not a signal.

Everything here is linear in the size of the text, so a hostile 10 MB reply stays cheap.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_right

from msgspec import Struct, field

from ralphloop.words.patterns import lazy
from ralphloop.words.textsafe import strip_escapes

# An opening fence: three or more backticks or tildes at a line start (indented in list items too).
# Found by its backticks or tildes first, then checked to start its line: scanning for a literal
# is much faster than trying a pattern at each of millions of line starts.
_FENCE_LINE = lazy(r"\n[ \t]*+(?P<run>````*+|~~~~*+)")
_FIRST_FENCE = lazy(r"[ \t]*+(?P<run>````*+|~~~~*+)")
_TICKS = lazy(r"`+")
_PARAGRAPH_BREAK = lazy(r"\n[ \t]*\n")
MAX_FENCES = 20_000  # beyond this many fenced blocks the rest of a reply is taken as one quotation
_AFTER_ALL = float("inf")
MAX_PROMPT_LINE = 4096
# A shorter prompt is not removed from the reply: a few words could be anywhere in it.
MIN_ECHO = 40


class Segment(Struct, frozen=True):
    """One fenced block: its body without the fence lines, where it starts, and its info string."""

    text: str
    position: int
    info: str = ""  # lower-cased: "json", "yaml", ""
    closed: bool = True


class OwnText(Struct):
    """The reply, ready for signal parsing: its prose (fenced blocks cut out) and its fenced blocks."""

    prose: str
    fenced: list[Segment]
    echo_removed: bool
    prompt_lines: frozenset[str]
    # (offset in prose, offset in the reply) for each prose piece, to order prose and fenced finds
    pieces: list[tuple[int, int]]
    prompt: str = ""  # the prompt, normalised: a status block copied from it is its example
    _spans: dict[int, tuple[int, list[tuple[int, int]]]] = field(default_factory=dict)  # per paragraph

    def position(self, prose_offset: int) -> int:
        """Where a prose offset lies in the reply."""
        index = bisect_right(self.pieces, (prose_offset, _AFTER_ALL)) - 1
        piece_prose, piece_reply = self.pieces[max(index, 0)]
        return piece_reply + prose_offset - piece_prose

    def quoted(self, start: int, end: int) -> bool:
        """Whether `prose[start:end]` is quoted rather than said: in inline code, an indented code block, a
        blockquote, an HTML comment or a string, or on a line copied from the prompt."""
        return (
            self.in_code(start, end)
            or self.echoed_line(start, end)
            or self.set_apart(start)
            or in_string(self.prose, start, end)
            or in_html_comment(self.prose, start)
        )

    def set_apart(self, start: int) -> bool:
        """Whether the line at `start` is a Markdown blockquote or an indented code block."""
        text = self.prose
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", start)
        line = text[line_start : len(text) if line_end < 0 else line_end]
        if line.lstrip(" ")[:1] == ">" and len(line) - len(line.lstrip(" ")) < 4:
            return True
        if line.startswith(("    ", "\t")):
            above = text[max(0, text.rfind("\n", 0, max(0, line_start - 1)) + 1) : max(0, line_start - 1)]
            if line_start == 0 or not above.strip() or above.startswith(("    ", "\t")):
                return True  # indented code: after a blank line, or under more of it
        return False

    def in_code(self, start: int, end: int) -> bool:
        """Whether `prose[start:end]` lies inside an inline code span. Spans never cross a paragraph,
        so only the paragraph around it is read, once."""
        for low, (high, spans) in self._spans.items():
            if low <= start and end <= high:
                return _in_spans(spans, start - low, end - low)
        text = self.prose
        low = text.rfind("\n\n", 0, start)
        low = 0 if low < 0 else low + 2
        high = text.find("\n\n", end)
        high = len(text) if high < 0 else high
        for blank in _PARAGRAPH_BREAK.finditer(text, low, high):  # blank lines holding spaces break too
            if blank.end() <= start:
                low = blank.end()
            elif blank.start() >= end:
                high = blank.start()
                break
        spans = code_spans(text[low:high])
        self._spans[low] = (high, spans)
        return _in_spans(spans, start - low, end - low)

    def copied_from_prompt(self, text: str) -> bool:
        """Whether `text` (a status block) appears verbatim in the prompt."""
        body = text.strip()
        return bool(body) and bool(self.prompt) and body in self.prompt

    def echoed_line(self, start: int, end: int) -> bool:
        """A line that repeats a prompt line and says more than the signal itself is an instruction."""
        if not self.prompt_lines:
            return False
        text = self.prose
        line_start = text.rfind("\n", max(0, start - MAX_PROMPT_LINE), start) + 1
        line_end = text.find("\n", end, end + MAX_PROMPT_LINE)
        line = text[line_start : len(text) if line_end < 0 else line_end].strip()
        return line in self.prompt_lines and line != text[start:end].strip()


def normalise(text: str) -> str:
    """CRLF and lone CR to LF; no terminal escape sequences (one could split a tag in two).

    Other control characters stay: they cannot fake a signal, and what is shown to a user
    (reasons, learnings) is cleaned field by field. Both checks are skipped when the byte is
    absent, which keeps a 10 MB reply cheap."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x1b" in text or "\x9b" in text or "\x9d" in text:
        text = strip_escapes(text)
    return text


def own_text(output: str, prompt: str = "", marks: tuple[str, ...] = ()) -> OwnText:
    """Split the agent's output into prose and fenced blocks, after removing any echo of `prompt`. `marks`: what
    else makes a prompt line name a signal (a configured promise), so that the agent repeating it says nothing."""
    text = normalise(output)
    echo = normalise(prompt).strip() if prompt else ""
    removed = False
    if len(echo) >= MIN_ECHO and echo in text:
        text, removed = text.replace(echo, "\n"), True
    own = split_fences(text, removed, _signal_lines(echo, marks))
    own.prompt = echo
    return own


_SIGNAL_MARKS = ("<promise", "<ralph", "[DONE]", "[FAIL]", "RALPH_STATUS", "EXIT_SIGNAL")


def _signal_lines(echo: str, marks: tuple[str, ...] = ()) -> frozenset[str]:
    """The lines of `echo` (stripped) that name a signal: found mark by mark, not line by line (the prompt holds
    the progress log, hundreds of lines, every iteration)."""
    found: set[str] = set()
    for mark in {*_SIGNAL_MARKS, *marks}:
        if not mark:  # names every line
            return frozenset(line.strip() for line in echo.split("\n"))
        if "\n" in mark:  # is in no line
            continue
        at = echo.find(mark)
        while at != -1:
            start, end = echo.rfind("\n", 0, at) + 1, echo.find("\n", at)
            end = len(echo) if end == -1 else end
            found.add(echo[start:end].strip())
            at = echo.find(mark, end)
    return frozenset(found)


def split_fences(text: str, echo_removed: bool = False, prompt_lines: frozenset[str] = frozenset()) -> OwnText:
    """Prose and fenced blocks, in one pass over the fence runs. An unclosed fence runs to the end
    (a truncated reply); so does everything after MAX_FENCES blocks (a hostile one)."""
    prose: list[str] = []
    pieces: list[tuple[int, int]] = []
    fenced: list[Segment] = []
    prose_size = 0
    position = 0  # where the current prose piece starts
    opened: tuple[str, int, str, int] | None = None  # fence, its length, info, body start
    first = _FIRST_FENCE.match(text)
    for run in itertools.chain((first,) if first else (), _FENCE_LINE.finditer(text)):
        line_start = run.start() + 1 if text[run.start()] == "\n" else 0
        line_end = text.find("\n", run.end())
        line_end = len(text) if line_end < 0 else line_end
        fence = run.group("run")
        rest = text[run.end() : line_end].strip()
        if opened is None:
            if fence[0] == "`" and "`" in rest:
                continue  # an inline code span, not a fence
            if len(fenced) >= MAX_FENCES:
                break
            opened = (fence[0], len(fence), rest.lower()[:100], line_end + 1)
            prose.append(text[position:line_start])
            pieces.append((prose_size, position))
            prose_size += len(prose[-1]) + 2
        elif fence[0] == opened[0] and len(fence) >= opened[1] and not rest:
            fenced.append(Segment(text[opened[3] : line_start], opened[3], opened[2]))
            opened, position = None, line_end
    if opened is not None:
        fenced.append(Segment(text[opened[3] :], opened[3], opened[2], closed=False))
    elif len(fenced) >= MAX_FENCES and position < len(text):
        fenced.append(Segment(text[position:], position, "", closed=False))
    else:
        prose.append(text[position:])
        pieces.append((prose_size, position))
    # Pieces are joined by a blank line: a paragraph break, so inline code never spans a cut-out block.
    return OwnText("\n\n".join(prose), fenced, echo_removed, prompt_lines, pieces)


_CLOSING_QUOTE = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019", "`": "`"}


def in_string(text: str, start: int, end: int) -> bool:
    """Whether `text[start:end]` sits in a quoted string: the whole of one anywhere (`"<promise>X</promise>"`,
    the agent naming the marker), or any part of one on a line of JSON (a value the agent printed, or an event
    of a CLI whose JSON output ralph does not decode: its text is data, not the agent speaking to ralph)."""
    opening = text[start - 1 : start] if start > 0 else ""
    if opening in _CLOSING_QUOTE and text[end : end + 1] == _CLOSING_QUOTE[opening]:
        return True
    line_start = text.rfind("\n", 0, start) + 1
    if text[line_start:start].lstrip()[:1] not in ("{", "[", '"'):
        return False
    before = text[line_start:start].replace("\\\\", "").replace('\\"', "")
    return before.count('"') % 2 == 1


def in_html_comment(text: str, start: int) -> bool:
    """Whether `start` lies inside an HTML comment (`<!-- ... -->`, closed or not) of `text`."""
    opened = text.rfind("<!--", 0, start)
    return opened >= 0 and text.rfind("-->", opened, start) < 0


def _in_spans(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    index = bisect_right(spans, (start, _AFTER_ALL)) - 1
    return index >= 0 and spans[index][0] <= start and end <= spans[index][1]


def code_spans(text: str) -> list[tuple[int, int]]:
    """Inline code spans (CommonMark): a run of backticks up to the next run of the same length
    within the paragraph. Sorted, non-overlapping (start, end) offsets; n log n in the number of runs."""
    runs = [(match.start(), match.end()) for match in _TICKS.finditer(text)]
    if len(runs) < 2:
        return []
    breaks = [match.start() for match in _PARAGRAPH_BREAK.finditer(text)]
    by_length: dict[int, list[int]] = {}
    for index, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(index)
    spans: list[tuple[int, int]] = []
    covered = -1
    for index, (start, end) in enumerate(runs):
        if start < covered:
            continue
        same = by_length[end - start]
        later = bisect_right(same, index)
        if later >= len(same):
            continue
        close_start, close_end = runs[same[later]]
        if bisect_right(breaks, close_start) != bisect_right(breaks, start):
            continue  # the paragraph ended first: these backticks are literal
        spans.append((start, close_end))
        covered = close_end
    return spans


_SIGNAL_BLOCKS = lazy(
    r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|-{3,}\s*RALPH_STATUS.*?(?:END_RALPH_STATUS\s*-{3,}|\Z)"
    r"|<promise>.*?</promise>|<ralph>.*?</ralph>",
    re.DOTALL | re.IGNORECASE,
)


def last_paragraph(text: str, limit: int = 600) -> str:
    """The last paragraph of an agent's own words, its signal blocks left out: what it wants the reader to
    act on when it stops (blocked, stuck). On one line, cut to `limit`; the caller cleans and redacts it."""
    words = _SIGNAL_BLOCKS.sub("\n\n", text[-64 * 1024 :])
    for block in reversed(_PARAGRAPH_BREAK.split(words)):
        if block.strip():
            return " ".join(block.split())[:limit]
    return ""

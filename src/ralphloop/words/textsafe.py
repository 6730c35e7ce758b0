"""Make untrusted agent output safe to draw: no escape sequences, no control characters."""

from __future__ import annotations

from ralphloop.words.patterns import lazy

# CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), DCS/SOS/PM/APC strings, other two-byte ESC
# sequences, and the 8-bit C1 forms of CSI and OSC.
_ESCAPES = lazy(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[@-Z\\-_]"
    r"|\x1b[ -/]*[0-~]?"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|\x9d[^\x07\x9c]*[\x07\x9c]?"
)
_CONTROLS = lazy(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SURROGATES = lazy("[\ud800-\udfff]")  # alone (from a JSON "\\ud800"), they cannot be written as UTF-8
# json.dumps escapes C0 controls itself, not DEL and C1
_RAW_IN_JSON = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}


def clean_text(text: str) -> str:
    """Agent-written text for a record or a screen: no escapes or controls, one line, spaces collapsed."""
    return " ".join(strip_terminal_controls(text).split())


def strip_escapes(text: str) -> str:
    """`text` without terminal escape sequences; other characters stay."""
    return _ESCAPES.sub("", text)


def strip_terminal_controls(text: str) -> str:
    """`text` without terminal escape sequences and control characters (tabs and newlines stay), and with
    U+FFFD for a lone surrogate (no terminal, file or pipe could take it as UTF-8)."""
    return _SURROGATES.sub("\ufffd", _CONTROLS.sub("", _ESCAPES.sub("", text.replace("\r\n", "\n"))))


def one_line(text: str, limit: int = 300) -> str:
    """`text` on one line (whitespace runs collapsed), cut to `limit` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def json_for_terminal(text: str) -> str:
    """JSON text (`ensure_ascii=False`) fit for a terminal: DEL and the C1 controls escaped too (to some
    terminals U+009B is a CSI, as ESC [ is), the JSON meaning unchanged."""
    return text.translate(_RAW_IN_JSON)

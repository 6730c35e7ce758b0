"""JSON read and written exactly as the json package does, without importing it.

json's import brings re, enum and functools: 10 of the 17 ms `ralph status --json` spent on this machine before a
line of its own ran (bench/status_latency.py, issue 33). The C parts json itself runs (`_json`: the scanner behind
json.loads, the string quoting behind json.dumps) need none of them. Whatever the quick path does not take (a
byte-order mark, text that is not valid JSON, an interpreter without `_json`) is handed to json itself, so that a
value, and an error, are always json's own.
"""

from __future__ import annotations

import math

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_SPACE = " \t\n\r"  # what json skips around a value
_INDENT = "  "


class _Defaults:
    """What the C scanner reads from a json.JSONDecoder: json.loads's defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}.__getitem__


_scan: Callable[[str, int], tuple[Any, int]] | None = None
_quote: Callable[[str], str] | None = None
try:
    import _json
except ImportError:  # an interpreter without json's accelerator: json does everything
    pass
else:
    _scan = _json.make_scanner(_Defaults())  # type: ignore[arg-type]  # typeshed wants a scanner; C reads attributes
    _quote = _json.encode_basestring


def loads(text: str | bytes) -> Any:
    """json.loads(text): the same value, or json's own error (a ValueError) for text that is not JSON."""
    if _scan is not None:
        plain = _plain_text(text)
        if plain is not None:
            start = len(plain) - len(plain.lstrip(_SPACE))
            try:
                value, end = _scan(plain, start)
            except StopIteration:  # no value where one starts: json says where, in its words
                pass
            else:
                if end == len(plain) or not plain[end:].lstrip(_SPACE):
                    return value
    import json  # the rare case: json's own reading, or its error

    return json.loads(text)


def _plain_text(text: str | bytes) -> str | None:
    """The text when json would read it as given (UTF-8 without a byte-order mark); None when json decides."""
    if isinstance(text, bytes):
        if text.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")) or b"\x00" in text[:4]:
            return None  # a mark, or UTF-16/32: json detects which
        try:
            return text.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return None
    return None if text.startswith("\ufeff") else text


def dumps(value: Any) -> str:
    """json.dumps(value, indent=2, ensure_ascii=False): the same text, or json's own error."""
    if _quote is not None:
        chunks: list[str] = []
        try:
            _write(value, chunks, "\n", _quote)
        except (TypeError, ValueError, RecursionError):  # not JSON, or circular: json says why
            pass
        else:
            return "".join(chunks)
    import json

    return json.dumps(value, indent=2, ensure_ascii=False)


def _write(value: Any, chunks: list[str], newline: str, quote: Callable[[str], str]) -> None:
    """`value` as json writes it with an indent, its inner lines starting with `newline` and two more spaces; the
    order of the checks is json's (a bool before an int, a str subclass as a str)."""
    if isinstance(value, str):
        chunks.append(quote(value))
    elif value is None:
        chunks.append("null")
    elif value is True:
        chunks.append("true")
    elif value is False:
        chunks.append("false")
    elif isinstance(value, int):
        chunks.append(int.__repr__(value))
    elif isinstance(value, float):
        chunks.append(_number(value))
    elif isinstance(value, list | tuple):
        if not value:
            chunks.append("[]")
            return
        inner = newline + _INDENT
        before = "[" + inner
        for item in value:
            chunks.append(before)
            _write(item, chunks, inner, quote)
            before = "," + inner
        chunks.append(newline + "]")
    elif isinstance(value, dict):
        if not value:
            chunks.append("{}")
            return
        inner = newline + _INDENT
        before = "{" + inner
        for key, item in value.items():
            chunks.append(before + quote(_key(key)) + ": ")
            _write(item, chunks, inner, quote)
            before = "," + inner
        chunks.append(newline + "}")
    else:
        raise TypeError(type(value).__name__)


def _key(key: object) -> str:
    """An object's key as json writes it (a str, a number, true, false or null)."""
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _number(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(type(key).__name__)


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)

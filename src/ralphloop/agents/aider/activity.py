"""Aider's own lines as a person reads them in the monitor, and how a saved log is known for aider's.

Aider prints plain text: the model's reply needs no reading, so `readable_lines` only turns aider's own status
lines (lines.py) into short marks and leaves every other line to be shown as it is. Kept free of the backend's
imports so the monitor loads only this.
"""

from __future__ import annotations

from itertools import pairwise

from ralphloop.agents.aider import lines
from ralphloop.words.textsafe import one_line, strip_terminal_controls


def sniff_text(head: list[str]) -> bool:
    """Whether the first lines of a saved plain-text log are aider's output: its banner, "Aider vX.Y.Z" followed
    at once by "Main model: M with F edit format" (or "Model: …"), each a whole line."""
    shown = [strip_terminal_controls(line).rstrip() for line in head]
    return any(
        lines.BANNER.fullmatch(line) is not None and lines.MODEL.fullmatch(after) is not None
        for line, after in pairwise(shown)
    )


def readable_lines(line: str) -> list[str] | None:
    """One of aider's status lines as a short mark; None for any other line (the model's words, plain output, a
    `[stderr]` line, another CLI's JSON), which the caller shows as it is."""
    text = strip_terminal_controls(line).rstrip()
    report = lines.TOKENS.fullmatch(text)
    if report is not None:
        cost = lines.session_cost(report["cost"] or "")
        said = f"{report['sent']} sent · {report['received']} received" + (f" · ${cost:g} so far" if cost else "")
        return [f"■ reply done: {said}"]
    applied = lines.APPLIED.fullmatch(text)
    if applied is not None:
        written = "" if applied["verb"] == "Applied" else " (dry run: not written)"
        return [f"⚙ Edit: {one_line(applied['path'], 200)}{written}"]
    error = lines.ERROR_START.fullmatch(text)
    if error is not None:
        return [f"⚠ {error['name']}: {one_line(error['rest'], 200)}"]
    retry = lines.RETRYING.fullmatch(text)
    if retry is not None:
        return [f"↻ retrying in {retry['seconds']} s"]
    return None

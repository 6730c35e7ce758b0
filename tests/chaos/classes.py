"""The failure classes the chaos suite counts (issue 20, "Done means"), and the checks every kind of trial
shares: what a screen may show, what no file may hold. A trial adds what it found to a `Findings`; the
suite's tests assert every count is 0, and `bench/chaos.py` prints them at large counts."""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

CORRUPT_STATE = "corrupt state"
TORN_RECORD = "torn record"
UNRECORDED = "unrecorded iteration"
LOST_WORK = "lost or uncommitted work"
DONE_TWICE = "work done twice"
SURVIVOR = "surviving process"
STALE_LOCK = "stale lock"
TRACEBACK = "traceback"
HANG = "hang"
CHANGED_ON_REJECT = "file changed on rejected input"
SECRET = "secret in any file"
ESCAPE = "escape on any screen"
FALSE_COMPLETION = "false completion"
LEFTOVER = "leftover worktree or branch"

CLASSES = (
    CORRUPT_STATE,
    TORN_RECORD,
    UNRECORDED,
    LOST_WORK,
    DONE_TWICE,
    SURVIVOR,
    STALE_LOCK,
    TRACEBACK,
    HANG,
    CHANGED_ON_REJECT,
    SECRET,
    ESCAPE,
    FALSE_COMPLETION,
    LEFTOVER,
)

# What ralph may print to a terminal: text, newlines and tabs. Anything else in C0 or C1 (ESC starts every
# sequence, CSI as one byte, BEL ends OSC 52, CR rewrites a line) is a terminal control an agent could have
# put there. A carriage return is allowed only before a newline.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x9f]|\r(?!\n)")
_TRACEBACK = ("Traceback (most recent call last)", "internal error")


class Findings:
    """Counts per failure class over a number of trials, with the first few details of each."""

    def __init__(self) -> None:
        self.trials: Counter[str] = Counter()  # by kind of trial
        self.counts: Counter[str] = Counter()
        self.examples: dict[str, list[str]] = {}
        self.log: Path | None = None  # every finding of the trial under way is appended here too

    def trial(self, kind: str) -> None:
        self.trials[kind] += 1

    def add(self, cls: str, detail: str) -> None:
        assert cls in CLASSES, cls
        self.counts[cls] += 1
        if self.log is not None:
            with self.log.open("a", encoding="utf-8") as handle:
                handle.write(f"[{cls}] {detail}\n\n")
        kept = self.examples.setdefault(cls, [])
        if len(kept) < 5:
            kept.append(detail)

    def merge(self, other: Findings) -> None:
        self.trials.update(other.trials)
        self.counts.update(other.counts)
        for cls, details in other.examples.items():
            kept = self.examples.setdefault(cls, [])
            kept.extend(details[: max(0, 5 - len(kept))])

    @property
    def failures(self) -> int:
        return sum(self.counts.values())

    def table(self) -> str:
        """The counts per class, every class listed (a 0 is a result too), then the examples."""
        trials = ", ".join(f"{count} {kind}" for kind, count in sorted(self.trials.items()))
        lines = [f"trials: {sum(self.trials.values())} ({trials})", ""]
        width = max(len(cls) for cls in CLASSES)
        lines += [f"  {cls:<{width}}  {self.counts[cls]}" for cls in CLASSES]
        for cls in CLASSES:
            for detail in self.examples.get(cls, []):
                lines.append(f"\n[{cls}] {detail}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, object]:
        return {
            "trials": dict(self.trials),
            "counts": {cls: self.counts[cls] for cls in CLASSES},
            "examples": self.examples,
        }


def check_screen(findings: Findings, what: str, text: str) -> None:
    """What ralph printed (`what` says which command and stream): no traceback, no terminal control."""
    if any(mark in text for mark in _TRACEBACK):
        findings.add(TRACEBACK, f"{what}:\n{text[-2000:]}")
    found = _CONTROL.search(text)
    if found:
        at = found.start()
        findings.add(ESCAPE, f"{what}: {found.group()!r} at {at}: {text[max(0, at - 80) : at + 80]!r}")


def check_secrets(findings: Findings, root: Path, secrets: tuple[str, ...], what: str) -> None:
    """No regular file under `root` (git's object store aside: it holds what the agent committed itself)
    holds any of `secrets`."""
    needles = [secret.encode() for secret in secrets if secret]
    for folder, dirs, files in os.walk(root):
        dirs[:] = [name for name in dirs if name != "objects"]
        for name in files:
            path = os.path.join(folder, name)
            try:
                if not os.path.isfile(path) or os.path.islink(path) or os.path.getsize(path) > 64 << 20:
                    continue
                data = Path(path).read_bytes()
            except OSError:
                continue
            for needle in needles:
                if needle in data:
                    findings.add(SECRET, f"{what}: {os.path.relpath(path, root)} holds a secret")
                    break

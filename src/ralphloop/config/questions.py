"""The `questions:` settings (issue 36): how long a loop that needs a human (the agent said needs-human, or the loop
is blocked) waits for `ralph answer` (or the page's) before it halts as it always did; config/settings.py reads them
through QUESTIONS_TABLE, as it reads every section.

    questions:
      wait: 8h            # a duration; 0 or off: halt at once
      on_question: wait   # wait | halt (--on-question): halt is wait 0
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec import Struct

from ralphloop.words import values

ON_QUESTION = ("wait", "halt")


def on_question(value: Any) -> str:
    return values.choice(value, ON_QUESTION)


# settings key → (path in the config files, environment variable, converter, default)
QUESTIONS_TABLE: dict[str, tuple[tuple[str, ...], str | None, Callable[[Any], Any], Any]] = {
    # a duration, or 0 / off (a bare YAML `off` too): idle_minutes reads both
    "question_wait_s": (("questions", "wait"), "RALPH_QUESTION_WAIT", values.idle_minutes, 8 * 3600.0),
    "on_question": (("questions", "on_question"), None, on_question, "wait"),
}
QUESTIONS_FIELDS = {"question_wait_s": "wait_s", "on_question": "action"}  # settings key → field


class QuestionSettings(Struct, frozen=True):
    """How a loop that needs a human waits for an answer."""

    wait_s: float = 8 * 3600.0
    action: str = "wait"  # wait | halt

    @property
    def wait_for_s(self) -> float:
        """How long to wait for an answer (0: halt at once)."""
        return 0.0 if self.action == "halt" else self.wait_s

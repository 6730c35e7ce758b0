"""The one exception family users see: a message that fits on one line."""

from __future__ import annotations


class RalphError(Exception):
    """A problem the user can fix; the CLI prints it as one line and exits 1."""

    def __init__(self, message: str, *, choices: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message = " ".join(message.split())
        # commands to choose from, each printed on a line of its own under the message (several task files)
        self.choices = tuple(" ".join(choice.split()) for choice in choices)

    def __str__(self) -> str:
        return self.message

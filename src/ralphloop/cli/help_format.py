"""How `ralph --help` and each command's help are laid out: argparse's layout at the terminal's width, commands
listed in groups, examples kept as written, and a bad flag reported in one line."""

from __future__ import annotations

import argparse
import functools
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Formatter(argparse.HelpFormatter):
    """argparse's help layout, with the terminal's width found once (argparse makes a formatter for every argument
    it adds, each importing shutil, bz2 and lzma and asking the terminal: ~5 ms in all). In a description or an
    epilog, a paragraph whose lines are indented (examples) is kept as written; the others are wrapped."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, width or help_width())

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = text.split("\n\n")
        return "\n\n".join(
            "\n".join(indent + line for line in paragraph.splitlines())
            if paragraph.splitlines()[1:] and all(line.startswith(" ") for line in paragraph.splitlines()[1:])
            else super(Formatter, self)._fill_text(paragraph, width, indent)
            for paragraph in paragraphs
        )


@functools.cache
def help_width() -> int:
    """shutil.get_terminal_size's columns (COLUMNS, else the terminal, else 80), less argparse's margin of 2."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return (columns or 80) - 2


class Commands(argparse._SubParsersAction):  # type: ignore[type-arg]  # the class add_subparsers makes
    """The subcommands, each one's help kept by name so `ralph --help` can list them in groups."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.helps: dict[str, str] = {}

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if isinstance(kwargs.get("help"), str):
            self.helps[name] = kwargs["help"]
        return super().add_parser(name, **kwargs)


class Parser(argparse.ArgumentParser):
    """argparse that reports a bad flag in one line and exits 1 (exit 2 means 'usage limit' here), and lists its
    subcommands under the titles of `command_groups` (one not named there under "other commands")."""

    command_groups: tuple[tuple[str, tuple[str, ...]], ...] = ()
    commands: Commands | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)

    def list_commands(self, commands: object, groups: tuple[tuple[str, tuple[str, ...]], ...]) -> None:
        """List the subcommands `add_subparsers(action=Commands)` made under the titles of `groups`."""
        self.commands = commands if isinstance(commands, Commands) else None
        self.command_groups = groups

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(1, f"ralph: error: {message} (see '{self.prog} --help')\n")

    def format_help(self) -> str:
        """argparse's own layout (usage, description, argument groups, epilog) with the command groups after the
        description."""
        formatter = self._get_formatter()
        formatter.add_usage(self.usage, self._actions, self._mutually_exclusive_groups)
        formatter.add_text(self.description)
        for title, actions in self._command_sections():
            formatter.start_section(title)
            formatter.add_arguments(actions)
            formatter.end_section()
        for group in self._action_groups:
            formatter.start_section(group.title)
            formatter.add_text(group.description)
            formatter.add_arguments(group._group_actions)
            formatter.end_section()
        formatter.add_text(self.epilog)
        return formatter.format_help()

    def _command_sections(self) -> list[tuple[str, list[argparse.Action]]]:
        if self.commands is None:
            return []
        helps = self.commands.helps
        grouped = [name for _, names in self.command_groups for name in names]
        groups = [*self.command_groups, ("other commands", tuple(name for name in helps if name not in grouped))]
        return [
            (title, [argparse.Action([], name, metavar=name, help=helps[name]) for name in names if name in helps])
            for title, names in groups
            if any(name in helps for name in names)
        ]

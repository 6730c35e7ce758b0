"""Ralph's own agent backends by name: one row each, saying where each part of a backend lives ("module:name").

Only names and import paths: `ralph --help` and `ralph status` read this (the `--agent` help, the analyze formats)
without importing a backend or anything heavy. The factories are called through agents/registry.py.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final, NamedTuple

from ralphloop.words.values import PERMISSIONS


class BuiltIn(NamedTuple):
    """One of ralph's own backends: where each part of it lives ("module:name"), each imported only when used."""

    factory: str  # (settings, paths) -> Agent
    cli: bool = False  # it runs a CLI whose executable `NAME.command` (or $RALPH_NAME_COMMAND) may name
    log_format: str = ""  # `ralph analyze --format` name of its output; "": plain text
    log_parser: str = ""  # its output parser's class, made with no arguments (a saved log: no settings)
    log_reader: str = ""  # one line of its log -> readable lines (the monitor's log pane); "": shown as it is
    sniff: str = ""  # (the first JSON events of a saved log) -> whether they are its output
    sniff_text: str = ""  # (the first lines of a saved log with no JSON events of a backend) -> its output?
    settings: str = ""  # the class of its own config section's value, beyond `command` (config/settings.py builds it)


# Ralph's own backends, one row each. The order is the order a saved log's format is sniffed in, and the order a
# command agent's log lines are offered to the readers in: the most particular event shapes first (Gemini's
# `result` and `message` lines before Claude's reader, which shows any `result` line).
CATALOG: Final[Mapping[str, BuiltIn]] = MappingProxyType(
    {
        "codex": BuiltIn(
            "ralphloop.agents.codex.backend:make",
            cli=True,
            log_format="codex-json",
            log_parser="ralphloop.agents.codex.parser:CodexJsonParser",
            log_reader="ralphloop.agents.codex.activity:readable_lines",
            sniff="ralphloop.agents.codex.activity:sniff",
        ),
        "gemini": BuiltIn(
            "ralphloop.agents.gemini.backend:make",
            cli=True,
            log_format="gemini-stream-json",
            log_parser="ralphloop.agents.gemini.parser:GeminiStreamParser",
            log_reader="ralphloop.agents.gemini.activity:readable_lines",
            sniff="ralphloop.agents.gemini.activity:sniff",
        ),
        "copilot": BuiltIn(
            "ralphloop.agents.copilot.backend:make",
            cli=True,
            log_format="copilot-json",
            log_parser="ralphloop.agents.copilot.parser:CopilotJsonParser",
            log_reader="ralphloop.agents.copilot.activity:readable_lines",
            sniff="ralphloop.agents.copilot.activity:sniff",
        ),
        # Amp and Cursor print Claude-Code-shaped stream-json: their sniffs claim only their own marks (Amp's
        # thread ids, Cursor's tool_call events and key sources), so they go before Claude's, which claims any.
        "amp": BuiltIn(
            "ralphloop.agents.amp.backend:make",
            cli=True,
            log_format="amp-stream-json",
            log_parser="ralphloop.agents.amp.parser:AmpStreamParser",
            log_reader="ralphloop.agents.amp.activity:readable_lines",
            sniff="ralphloop.agents.amp.activity:sniff",
        ),
        "cursor": BuiltIn(
            "ralphloop.agents.cursor.backend:make",
            cli=True,
            log_format="cursor-stream-json",
            log_parser="ralphloop.agents.cursor.parser:CursorStreamParser",
            log_reader="ralphloop.agents.cursor.activity:readable_lines",
            sniff="ralphloop.agents.cursor.activity:sniff",
        ),
        "opencode": BuiltIn(
            "ralphloop.agents.opencode.backend:make",
            cli=True,
            log_format="opencode-json",
            log_parser="ralphloop.agents.opencode.parser:OpencodeJsonParser",
            log_reader="ralphloop.agents.opencode.activity:readable_lines",
            sniff="ralphloop.agents.opencode.activity:sniff",
        ),
        "claude": BuiltIn(
            "ralphloop.agents.claude.backend:make",
            cli=True,
            log_format="claude-stream-json",
            log_parser="ralphloop.agents.claude.parser:StreamJsonParser",
            log_reader="ralphloop.agents.claude.activity:readable_lines",
            sniff="ralphloop.agents.claude.activity:sniff",
            settings="ralphloop.agents.claude.settings:ClaudeSettings",
        ),
        "aider": BuiltIn(
            "ralphloop.agents.aider.backend:make",
            cli=True,
            log_format="aider-text",
            log_parser="ralphloop.agents.aider.parser:AiderTextParser",
            log_reader="ralphloop.agents.aider.activity:readable_lines",
            sniff_text="ralphloop.agents.aider.activity:sniff_text",
        ),
        "command": BuiltIn("ralphloop.agents.command:make"),
        "scripted": BuiltIn("ralphloop.agents.scripted:make"),
    }
)
BUILT_IN: Final[Mapping[str, str]] = MappingProxyType({name: row.factory for name, row in CATALOG.items()})
# The backends that run a CLI of their own: each has `NAME.command` in the config.
CLI_BACKENDS: Final = tuple(name for name, row in CATALOG.items() if row.cli)


def log_formats() -> dict[str, str]:
    """`ralph analyze` format name -> the backend whose output it is."""
    return {row.log_format: name for name, row in CATALOG.items() if row.log_format}


def settings_class(name: str) -> Any:
    """The class of built-in backend `name`'s own settings section (config/settings.py makes one from the config
    files), imported now."""
    module_name, _, attribute = CATALOG[name].settings.partition(":")
    return getattr(importlib.import_module(module_name), attribute)


__all__ = ["BUILT_IN", "CATALOG", "CLI_BACKENDS", "PERMISSIONS", "BuiltIn", "log_formats", "settings_class"]

"""Agent backends by name, each one an AgentSpec: where each part of it lives ("module:name"), imported only
when used. Ralph's own are CATALOG's rows; another package adds one under the `ralphloop.agents` entry-point group,
naming either an AgentSpec (its factory, log parser, log reader, sniffers and settings, like a built-in's) or just
its factory. Both are read through `spec_of`, the one door: `ralph logs`, the monitor, `ralph analyze` and the run
builder treat a plugin's parts as they treat ralph's own.

Only names and import paths: `ralph --help` and `ralph status` read the catalog without importing a backend or
anything heavy. Entry points are read only for a name that is not built in (plugins/entry_points.py, with os alone).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import Any, Final, NamedTuple

from ralphloop.plugins.entry_points import entry_points, load

ENTRY_POINT_GROUP: Final = "ralphloop.agents"


class AgentSpec(NamedTuple):
    """One backend: where each part of it lives ("module:name"), each imported only when used."""

    factory: str  # (settings, paths) -> Agent
    cli: bool = False  # it runs a CLI whose executable `NAME.command` (or $RALPH_NAME_COMMAND) may name
    log_format: str = ""  # `ralph analyze --format` name of its output; "": plain text
    log_parser: str = ""  # its output parser's class, made with no arguments (a saved log: no settings)
    log_reader: str = ""  # one line of its log -> readable lines (the monitor's log pane); "": shown as it is
    sniff: str = ""  # (the first JSON events of a saved log) -> whether they are its output
    sniff_text: str = ""  # (the first lines of a saved log with no JSON events of a backend) -> its output?
    settings: str = ""  # the class of its own config section's value, beyond `command` (config/settings.py builds it)
    plugin: str = ""  # the distribution that provides it ("ralph-echo 0.1"); "" for ralph's own


# Ralph's own backends, one row each. The order is the order a saved log's format is sniffed in, and the order a
# command agent's log lines are offered to the readers in: the most particular event shapes first (Gemini's
# `result` and `message` lines before Claude's reader, which shows any `result` line).
CATALOG: Final[Mapping[str, AgentSpec]] = MappingProxyType(
    {
        "codex": AgentSpec(
            "ralphloop.agents.codex.backend:make",
            cli=True,
            log_format="codex-json",
            log_parser="ralphloop.agents.codex.parser:CodexJsonParser",
            log_reader="ralphloop.agents.codex.activity:readable_lines",
            sniff="ralphloop.agents.codex.activity:sniff",
        ),
        "gemini": AgentSpec(
            "ralphloop.agents.gemini.backend:make",
            cli=True,
            log_format="gemini-stream-json",
            log_parser="ralphloop.agents.gemini.parser:GeminiStreamParser",
            log_reader="ralphloop.agents.gemini.activity:readable_lines",
            sniff="ralphloop.agents.gemini.activity:sniff",
        ),
        "copilot": AgentSpec(
            "ralphloop.agents.copilot.backend:make",
            cli=True,
            log_format="copilot-json",
            log_parser="ralphloop.agents.copilot.parser:CopilotJsonParser",
            log_reader="ralphloop.agents.copilot.activity:readable_lines",
            sniff="ralphloop.agents.copilot.activity:sniff",
        ),
        # Amp and Cursor print Claude-Code-shaped stream-json: their sniffs claim only their own marks (Amp's
        # thread ids, Cursor's tool_call events and key sources), so they go before Claude's, which claims any.
        "amp": AgentSpec(
            "ralphloop.agents.amp.backend:make",
            cli=True,
            log_format="amp-stream-json",
            log_parser="ralphloop.agents.amp.parser:AmpStreamParser",
            log_reader="ralphloop.agents.amp.activity:readable_lines",
            sniff="ralphloop.agents.amp.activity:sniff",
        ),
        "cursor": AgentSpec(
            "ralphloop.agents.cursor.backend:make",
            cli=True,
            log_format="cursor-stream-json",
            log_parser="ralphloop.agents.cursor.parser:CursorStreamParser",
            log_reader="ralphloop.agents.cursor.activity:readable_lines",
            sniff="ralphloop.agents.cursor.activity:sniff",
        ),
        "opencode": AgentSpec(
            "ralphloop.agents.opencode.backend:make",
            cli=True,
            log_format="opencode-json",
            log_parser="ralphloop.agents.opencode.parser:OpencodeJsonParser",
            log_reader="ralphloop.agents.opencode.activity:readable_lines",
            sniff="ralphloop.agents.opencode.activity:sniff",
        ),
        "claude": AgentSpec(
            "ralphloop.agents.claude.backend:make",
            cli=True,
            log_format="claude-stream-json",
            log_parser="ralphloop.agents.claude.parser:StreamJsonParser",
            log_reader="ralphloop.agents.claude.activity:readable_lines",
            sniff="ralphloop.agents.claude.activity:sniff",
            settings="ralphloop.agents.claude.settings:ClaudeSettings",
        ),
        "aider": AgentSpec(
            "ralphloop.agents.aider.backend:make",
            cli=True,
            log_format="aider-text",
            log_parser="ralphloop.agents.aider.parser:AiderTextParser",
            log_reader="ralphloop.agents.aider.activity:readable_lines",
            sniff_text="ralphloop.agents.aider.activity:sniff_text",
        ),
        "command": AgentSpec("ralphloop.agents.command:make"),
        "scripted": AgentSpec("ralphloop.agents.scripted:make"),
    }
)
# The backends that run a CLI of their own: each has `NAME.command` in the config.
CLI_BACKENDS: Final = tuple(name for name, row in CATALOG.items() if row.cli)


def log_formats() -> dict[str, str]:
    """`ralph analyze` format name -> the built-in backend whose output it is."""
    return {row.log_format: name for name, row in CATALOG.items() if row.log_format}


def settings_class(name: str) -> Any:
    """The class of built-in backend `name`'s own settings section (config/settings.py makes one from the config
    files), imported now."""
    return load(CATALOG[name].settings)


def spec_of(name: str) -> AgentSpec | None:
    """The backend called `name`: a built-in one, else an installed plugin's (its entry point's AgentSpec, or its
    factory alone); None when there is none. A plugin's module is imported here: one that cannot be loaded raises."""
    row = CATALOG.get(name)
    if row is not None:
        return row
    found = plugin_entry_points().get(name)
    return None if found is None else plugin_spec(*found)


def plugin_entry_points() -> dict[str, tuple[str, str]]:
    """Installed plugins' backends: name -> (their entry point's "module:name", the distribution that provides
    it). The first one of a name wins; a built-in name is never a plugin's."""
    found: dict[str, tuple[str, str]] = {}
    for point in entry_points(ENTRY_POINT_GROUP):
        if point.name in CATALOG or point.name in found:
            continue
        found[point.name] = (point.value, point.dist)
    return found


@cache
def every_spec() -> dict[str, AgentSpec]:
    """Every backend, ralph's own in CATALOG's order, then the installed plugins' (one that cannot be loaded is left
    out): what reads a saved log (`ralph analyze`) looks through these. Imports each plugin's spec module."""
    found = dict(CATALOG)
    for name, (target, provider) in plugin_entry_points().items():
        try:
            found[name] = plugin_spec(target, provider)
        except Exception:  # a broken plugin is not a crash of `ralph analyze`
            continue
    return found


def plugin_spec(target: str, provider: str) -> AgentSpec:
    """A plugin's spec from its entry point: the AgentSpec it names, or a spec of its factory alone."""
    found = load(target)
    if isinstance(found, AgentSpec):
        return found._replace(plugin=provider)
    return AgentSpec(target, plugin=provider)


__all__ = [
    "CATALOG",
    "CLI_BACKENDS",
    "ENTRY_POINT_GROUP",
    "AgentSpec",
    "every_spec",
    "log_formats",
    "plugin_entry_points",
    "plugin_spec",
    "settings_class",
    "spec_of",
]

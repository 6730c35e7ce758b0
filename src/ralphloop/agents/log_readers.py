"""Each backend's log reader by name: one line of an iteration log -> the lines a person reads.

Apart from registry.py so that `ralph logs` and the monitor load only the catalog and the readers they use
(no dataclasses, no plugin machinery): they must stay as light as `ralph status`.
"""

from __future__ import annotations

from ralphloop.plugins.agents import CATALOG
from ralphloop.plugins.entry_points import load

TYPE_CHECKING = False  # typing costs ~9 ms of import: `ralph logs` must stay fast
if TYPE_CHECKING:
    from collections.abc import Callable

    Reader = Callable[[str], list[str] | None]


def log_reader(name: str) -> Reader:
    """The function turning one line of backend `name`'s log into readable lines (None: show the line as it is).
    A plugin's backend gets the reader its AgentSpec names. A backend without a reader of its own (a command agent,
    which may well run `claude -p` underneath, or a name not known) gets every known reader in turn: the first that
    recognises a line reads it."""
    readers_by_name = {each: row.log_reader for each, row in CATALOG.items() if row.log_reader}
    own = readers_by_name.get(name) or _plugin_reader(name)
    targets = [own] if own else list(readers_by_name.values())
    readers = [_function(target) for target in targets]

    def read(line: str) -> list[str] | None:
        for reader in readers:
            found = reader(line)
            if found is not None:
                return found
        return None

    return read


def _plugin_reader(name: str) -> str:
    """An installed plugin's reader for backend `name` ("" when it has none, or cannot be loaded: its lines are
    then offered to every known reader, as a command agent's are)."""
    if not name or name in CATALOG:
        return ""
    from ralphloop.plugins.agents import spec_of  # entry points: only for a name that is not built in

    try:
        spec = spec_of(name)
        return spec.log_reader if spec is not None else ""
    except Exception:  # a broken plugin is the run's to report; its log is still shown
        return ""


def _function(target: str) -> Reader:
    found: Reader = load(target)
    return found


__all__ = ["log_reader"]

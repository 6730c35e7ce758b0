"""Where a CLI backend's executable is, and the one line that says why a run cannot start when it is not there.

Every CLI backend runs `NAME.command` from the config (`$RALPH_NAME_COMMAND`), else NAME's default executable on
PATH. A missing one is the backend's `missing`: make_agent refuses a run with it, a dry run (which starts
nothing) only says it.
"""

from __future__ import annotations

import shutil

from ralphloop.config.settings import Settings


def locate(
    settings: Settings, name: str, default: str, label: str, install: str, advice: str = ""
) -> tuple[str, str | None]:
    """(the executable to run, the reason it cannot run or None). `label` names the CLI ("the Codex CLI"),
    `install` how to get it ("npm install -g @openai/codex"), `advice` what else the user may do."""
    configured = settings.commands.get(name)
    chosen = configured or default
    if shutil.which(chosen) is not None:
        return chosen, None
    if configured:
        return chosen, f"{settings.source(f'{name}_command')}: {chosen!r} is not an executable on PATH or a path to one"
    source = settings.source("agent")
    chosen_by = "" if source == "default" else f" (chosen by {source})"
    return chosen, (
        f"the agent, {label}{chosen_by}, is not on PATH: install it ({install}) or set {name}.command in "
        f".ralph/config.yaml{advice}"
    )

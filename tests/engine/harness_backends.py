"""Agent CLIs in-process, for the engine's tests of the backends: the runs tests/agents/replay_NAME.py plays as a
stand-in executable (tests/fixtures' captures, a story finished first by "work"), played through the replay runner
into the backend's real parser instead; and a runner for a failover chain, each launch played from the plan of the
CLI it starts.

A backend's command is a link to /bin/true named after the CLI (`cli_commands`): the run builder's check finds an
executable, and a launch says which CLI it is for. The replay runner never starts it.
"""

from __future__ import annotations

import io
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from msgspec.structs import replace

from ralphloop.cli.run_cmd import show_dry_run
from ralphloop.core.cancel import CancelToken
from ralphloop.core.protocols import ProcessOutcome
from ralphloop.core.runner import Launch, OutputHook
from ralphloop.processes.replay import Recording
from tests.engine.harness import Turn, Turns, build

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# Where each CLI's captured runs are, and the one its "work" plays (tests/agents/replay_NAME.py).
RUNS = {
    "claude": FIXTURES / "claude" / "runs",
    "codex": FIXTURES / "codex",
    "gemini": FIXTURES / "gemini",
    "opencode": FIXTURES / "opencode",
}
WORK = {
    "claude": "claude_mock_tool_streamjson",
    "codex": "mock_tool_json",
    "gemini": "e2e_tool_write",
    "opencode": "mock_tool_all_json",
}


def captured(cli: str, name: str) -> Recording:
    """The captured run `name` of `cli` (tests/fixtures), as the replay runner plays it."""
    return Recording.from_folder(str(RUNS[cli] / name))


@dataclass(frozen=True)
class Work(Turn):
    """tests/agents/_replay.py's "work": the task it was given finished as tests/agents/_story.py finishes it
    (work-ID.txt written, the story passing), then `played`'s output and exit."""

    write: Mapping[str, str] = field(default_factory=lambda: {"work-{task}.txt": "done {task}\n"})
    passes: Sequence[str] = ("{task}",)
    played: Recording = field(default_factory=lambda: Recording(b""))

    def recording(self, launch: Launch) -> Recording:
        return replace(self.played, edits=super().recording(launch).edits)


def limit_ahead(cli: str) -> Recording:
    """The CLI's usage limit with its reset five hours from now, as a limit met today says it
    (replay_claude.py's and replay_codex.py's "limit-ahead")."""
    when = time.time() + 5 * 3600
    if cli == "claude":
        limited = captured("claude", "claude_mock_oauth_unified_rejected_streamjson")
        return replace(limited, stdout=re.sub(rb'"resetsAt":\d+', b'"resetsAt":%d' % int(when), limited.stdout))
    limited = captured("codex", "mock_usage_limit_plus_json")
    day = time.gmtime(when)
    suffix = "th" if 10 <= day.tm_mday % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day.tm_mday % 10, "th")
    said = f"{time.strftime('%b', day)} {day.tm_mday}{suffix}, {day.tm_year} {day.tm_hour % 12 or 12}:{day.tm_min:02d} "
    said += "AM" if day.tm_hour < 12 else "PM"
    return replace(limited, stdout=limited.stdout.replace(b"Nov 21st, 2026 1:04 AM", said.encode()))


def played(cli: str, name: str) -> Turn | Recording:
    """One run of a replay's plan: "work" (or "work:NAME"), "limit-ahead", or a captured run's name."""
    if name == "work" or name.startswith("work:"):
        return Work(played=captured(cli, name.partition(":")[2] or WORK[cli]))
    if name == "limit-ahead":
        return limit_ahead(cli)
    return captured(cli, name)


def replays(cli: str, *names: str | Recording) -> Turns:
    """tests/agents/replay_CLI.py's plan, in-process: launch k plays names[k] (a run's name, or a recording), the
    last one again once they are used up."""
    runs = [played(cli, name) if isinstance(name, str) else name for name in names]
    return Turns(*runs[:-1], then=runs[-1])


class Clis(Turns):
    """The run's runner for a chain of agent CLIs: each launch is played from the plan of the CLI it starts (its
    executable's name); `order` says who was launched, in turn."""

    def __init__(self, **plans: Turns) -> None:
        super().__init__()
        self.plans = plans
        self.order: list[str] = []

    def launched(self, cli: str) -> list[Launch]:
        """The launches of `cli`, in order."""
        return self.plans[cli].launches

    def run(
        self,
        launch: Launch,
        cancel: CancelToken,
        *,
        on_stdout: Callable[[bytes], None],
        on_output: OutputHook | None = None,
        on_start: Callable[[int], None] | None = None,
    ) -> ProcessOutcome:
        self.launches.append(launch)
        cli = os.path.basename(launch.command.argv[0])
        self.order.append(cli)
        return self.plans[cli].run(launch, cancel, on_stdout=on_stdout, on_output=on_output, on_start=on_start)


def cli_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *clis: str) -> None:
    """Each CLI's command (`$RALPH_CLI_COMMAND`): a link to /bin/true by the CLI's name, which the run builder finds
    and the replay runner never starts."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    for cli in clis:
        link = folder / cli
        if not link.exists():
            link.symlink_to("/bin/true")
        monkeypatch.setenv(f"RALPH_{cli.upper()}_COMMAND", str(link))


def add_config(project: Path, text: str) -> None:
    """Lines added to the end of the project's .ralph/config.yaml."""
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text() + "\n" + text)


NO_BACKOFF_WAIT = "backoff:\n  initial_seconds: 0\n"
USAGE_EXIT: dict[str, tuple[Any, str]] = {"usage_policy": ("exit", "--on-usage-limit")}


def ready(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *clis: str) -> None:
    """Each CLI found (`cli_commands`) and no backoff wait: what tests/integration/replays.py's `configure` sets."""
    cli_commands(tmp_path, monkeypatch, *clis)
    add_config(project, NO_BACKOFF_WAIT)


def exiting(**flags: tuple[Any, str]) -> dict[str, tuple[Any, str]]:
    """`flags` (settings key → (value, flag)) and `--on-usage-limit exit`, as the backends' tests run."""
    return {**USAGE_EXIT, **flags}


def dry_run(project: Path, **how: Any) -> str:
    """What `ralph run --dry-run` prints for the run `how` asks for (harness.build's arguments)."""
    built, _, _ = build(project, Turns(), dry_run=True, **how)
    shown = io.StringIO()
    with redirect_stdout(shown):
        assert show_dry_run(built) == 0
    return shown.getvalue()

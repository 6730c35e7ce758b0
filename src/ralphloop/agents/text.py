"""Reading a plain-text agent: its stdout is its final text; its exit code says whether it failed."""

from __future__ import annotations

import os
import shutil
import sys
from datetime import UTC, datetime, tzinfo
from typing import Any

from ralphloop.agents.api_errors import api_says, classify_line, transient
from ralphloop.agents.api_errors import last_line as api_last_line
from ralphloop.agents.error_line import error_line
from ralphloop.agents.limit_text import from_text
from ralphloop.core.limits import UsageLimit
from ralphloop.core.protocols import AgentRequest, AgentResult, ErrorKind, ProcessOutcome
from ralphloop.core.steering import AGENT_MARK
from ralphloop.words.durations import format_duration

# A hostile agent can print gigabytes; only the tail matters for signals.
KEEP_BYTES = 1024 * 1024


class TextOutputParser:
    """Keeps the last KEEP_BYTES of stdout (one copy, trimmed as it grows)."""

    def __init__(self, request: AgentRequest, keep: int = KEEP_BYTES) -> None:
        self._request = request
        self._keep = keep
        self._tail = bytearray()

    def activity(self) -> str | None:
        return None  # plain text says nothing structured about what the agent is doing

    def feed(self, data: bytes) -> None:
        self._tail += data
        if len(self._tail) > 2 * self._keep:
            del self._tail[: len(self._tail) - self._keep]

    def finish(self, outcome: ProcessOutcome) -> AgentResult:
        text = bytes(self._tail[-self._keep :]).decode("utf-8", "replace")
        error = describe_failure(outcome)
        # A failed CLI's whole tail may say why; a clean exit only counts the CLI's last word
        # (some CLIs exit 0 at a limit), so an agent's summary that mentions limits is not one.
        where = (
            f"{text[-_LIMIT_SCAN:]}\n{outcome.stderr_tail}"
            if error
            else f"{last_line(text)}\n{last_line(outcome.stderr_tail)}"
        )
        now = self._request.started_at or datetime.now(UTC)
        limit = None if outcome.interrupted else limit_in_text(where, now, local_zone())
        # The usage limit first: its 429 is a rate_limit_error too, but only a wait for the reset helps.
        api = None if limit is not None else api_failure(text, outcome)
        kind, error = api if api is not None else (None, error)
        return outcome_result(outcome, text, error, usage_limit=limit, error_kind=kind)


# How much of a failed agent's stdout is searched for a usage-limit message.
_LIMIT_SCAN = 64 * 1024


def api_failure(stdout: str, outcome: ProcessOutcome) -> tuple[ErrorKind, str] | None:
    """The API failure (rate limit, overloaded or failing, unreachable) the agent's last word states, with the
    message to show; None when it is none. Only the last line of stdout and of stderr is read, exit code 0 or
    not: a CLI ends on its error (Claude Code 2.1.49 with exit 0), while an agent's work that quotes one
    ends on something else. A run stopped by ralph (timeout, Ctrl+C) or never started states nothing."""
    if ralph_stopped(outcome):
        return None
    for stream in (stdout, outcome.stderr_tail):
        found = classify_line(api_last_line(stream))
        if found is not None:
            return transient(_SAYS, *found)
    return None


_SAYS = api_says("the agent's API")


def limit_in_text(text: str, now: datetime, local: tzinfo) -> UsageLimit | None:
    """A vendor usage limit printed in `text`, with its reset time read in the agent's zone."""
    if not text.strip():
        return None
    return from_text(text, now, local)


def local_zone() -> tzinfo:
    """The zone agents print local times in: the process's TZ (CLIs inherit ralph's environment)."""
    return datetime.now().astimezone().tzinfo or UTC


def outcome_result(outcome: ProcessOutcome, final_text: str, error: str | None, **fields: Any) -> AgentResult:
    """The result of a run that ended as `outcome`: its exit, duration and how ralph stopped it, failed when there
    is an `error` to tell; `fields` are the rest the backend read (model, tokens, error_kind ...)."""
    return AgentResult(
        final_text=final_text,
        exit_code=outcome.exit_code,
        duration_s=outcome.duration_s,
        failed=error is not None,
        error=error,
        timed_out=outcome.timed_out,
        interrupted=outcome.interrupted,
        **fields,
    )


def ralph_stopped(outcome: ProcessOutcome) -> bool:
    """Whether ralph stopped the run (a timeout, the idle timeout, Ctrl+C) or could not start it: then what the
    agent printed states no failure of its own."""
    return outcome.interrupted or outcome.timed_out or bool(outcome.start_error)


def describe_failure(outcome: ProcessOutcome) -> str | None:
    """One line saying why the agent process failed, or None when it succeeded: how it ended, and the line of its
    stderr that says why (error_line: the first error, not Node's version line after it)."""
    if outcome.start_error:
        return f"could not start the agent: {outcome.start_error}"
    if outcome.interrupted:
        return "interrupted"
    if outcome.timed_out and outcome.idle_limit_s is not None:
        return f"no output for {outcome.idle_limit_s:g} s (the idle timeout); its process group was stopped"
    if outcome.timed_out:
        return f"timed out after {format_duration(outcome.duration_s)}; its process group was stopped"
    if outcome.exit_code == 0:
        return None
    if outcome.exit_code is not None and outcome.exit_code < 0:
        reason = f"killed by signal {-outcome.exit_code}"
    else:
        reason = f"exit code {outcome.exit_code}"
    said = error_line(outcome.stderr_tail)
    return f"{reason}: {said}" if said else reason


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def agent_env(request: AgentRequest) -> dict[str, str]:
    """The environment contract every agent gets (ARCHITECTURE.md, 'A command agent')."""
    env = {
        "RALPH_ITERATION": str(request.iteration),
        "RALPH_FEATURE_DIR": request.feature_dir,
        "RALPH_PROMPT_FILE": request.prompt_file,
        "RALPH_TASK_ID": request.task_id,
        "RALPH_PROJECT_ROOT": request.project_root,
        AGENT_MARK: "1",  # `ralph pause`, `stop`, `say`... refuse to run here: an agent cannot steer its own loop
    }
    if request.model:
        env["RALPH_MODEL"] = request.model  # --model, for command agents that can choose one
    env.update(_ralph_on_path())
    return env


def _ralph_on_path() -> dict[str, str]:
    """PATH with this ralph's folder first, when `ralph` would otherwise not be this one (a venv
    not activated): the prompt tells agents to run `ralph signal ...`."""
    folder = os.path.dirname(sys.executable)
    mine = os.path.join(folder, "ralph")
    if not os.access(mine, os.X_OK) or shutil.which("ralph") == mine:
        return {}
    return {"PATH": folder + os.pathsep + os.environ.get("PATH", "")}

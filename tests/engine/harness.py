"""In-process runs for the engine's tests: a run built as `ralph run` builds it (start/build.py), its agent's turns
played back through the execution seam's replay runner (processes/replay.py), its screen drawn by the real renderer
into a string. The engine, the backend's parser, the task file, git and every record file are real; no agent process
is started.

A `Turn` is tests/agents/step_agent.py's plan for one iteration, made into a `Recording` when the engine launches
the agent: its edits are computed from the files as that launch finds them (a story marked passing in the prd.json
of the moment, a line appended to a file ralph also writes), as a real agent's would be.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import secrets
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from msgspec.structs import replace

from ralphloop.cli.render import TerminalRenderer
from ralphloop.core.cancel import CancelToken
from ralphloop.core.clock import Clock, FakeClock
from ralphloop.core.protocols import EventSink, ProcessOutcome
from ralphloop.core.runner import Launch, OutputHook
from ralphloop.engine.loop import LoopOutcome, run_loop
from ralphloop.files.store import RunLock
from ralphloop.notify.events import Seen
from ralphloop.notify.sink import Notifier
from ralphloop.processes.replay import Recording, ReplayRunner
from ralphloop.project.paths import FeaturePaths
from ralphloop.start.build import Built, RunRequest, build_run
from ralphloop.workspace import git
from ralphloop.workspace.gitignore import keep_out_of_git
from tests.integration.helpers import entry_fields, progress_entries

# The command backend (--agent-cmd) with an executable the run builder's check finds; the replay runner never starts it.
AGENT_CMD: dict[str, tuple[Any, str]] = {"agent_command": ("/bin/true", "--agent-cmd")}
ALL = ("*",)  # Turn.passes: every story


class Plays(Protocol):
    """What a launch plays: a `Turn`, or any other plan that makes its recording from the launch (a goal agent that
    reads its mode from the prompt)."""

    def recording(self, launch: Launch) -> Recording: ...


@dataclass(frozen=True)
class Turn:
    """What the agent does in one iteration: write, append, delete and rewrite files (paths under the project),
    mark stories passing, commit, print and exit. `{n}` in a path, an id or a text is the iteration, `{task}` the
    task it was given, `{rand}` a random hex string. `first` runs before the rest with the launch (what a test agent
    records, or an edit of its own)."""

    say: str = ""
    err: str = ""
    exit: int = 0
    write: Mapping[str, str] = field(default_factory=dict)
    append: Mapping[str, str] = field(default_factory=dict)
    delete: Sequence[str] = ()
    rewrite: Sequence[str] = ()
    passes: Sequence[str] = ()
    commit: str | None = None
    echo_prompt: bool = False
    first: Callable[[Launch], None] | None = None

    def recording(self, launch: Launch) -> Recording:
        """This turn as the recording of the run `launch` starts."""
        env = launch.command.env
        number, task = env["RALPH_ITERATION"], env["RALPH_TASK_ID"]

        def fill(text: str) -> str:
            return text.replace("{n}", number).replace("{task}", task).replace("{rand}", secrets.token_hex(6))

        if self.first is not None:
            self.first(launch)
        root = Path(launch.cwd)
        edits: dict[str, str | None] = {fill(path): fill(text) for path, text in self.write.items()}
        for path, text in self.append.items():
            where = root / fill(path)
            edits[fill(path)] = (where.read_text() if where.exists() else "") + fill(text)
        edits.update(dict.fromkeys(self.delete))
        edits.update({path: (root / path).read_text() for path in self.rewrite})
        if self.passes:
            prd = Path(env["RALPH_FEATURE_DIR"]) / "prd.json"
            edits[os.path.relpath(prd, root)] = passing(prd, [fill(story) for story in self.passes])
        out = (launch.command.stdin.decode() if self.echo_prompt else "") + fill(self.say)
        if self.commit is not None:  # the agent commits its own work: the edits land first, as it made them
            _write(root, edits)
            edits = {}
            for args in (["add", "-A"], ["commit", "-q", "-m", fill(self.commit)]):
                subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
        return Recording(out.encode(), fill(self.err).encode(), self.exit, edits=edits)


# tests/agents/story_agent.py's turn: the story it is given finished (work-ID.txt, passing), committed.
STORY = Turn(
    write={"work-{task}.txt": "done {task}\n"}, passes=["{task}"], commit="feat: {task}", say="finished {task}\n"
)


def passing(prd: Path, ids: Sequence[str]) -> str:
    """prd.json's text with the stories `ids` (ALL: every one) passing, as the test agents write it."""
    body = json.loads(prd.read_text())
    for story in body["userStories"]:
        if tuple(ids) == ALL or story["id"] in ids:
            story["passes"] = True
    return json.dumps(body, indent=2)


def _write(root: Path, edits: Mapping[str, str | None]) -> None:
    for relative, text in edits.items():
        path = root / relative
        if text is None:
            path.unlink(missing_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


class Turns:
    """The run's runner, at the execution seam where the agent process would start: each launch plays the next of
    `turns` (then `then`, for every launch after them) through a ReplayRunner; with nothing left, the launch fails to
    start, as the replay runner's does past its last recording."""

    name = "replay"
    home: str | None = None

    def __init__(self, *turns: Plays | Recording, then: Plays | Recording | None = None) -> None:
        self.turns = list(turns)
        self.then = then
        self.launches: list[Launch] = []

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
        turn = self.turns.pop(0) if self.turns else self.then
        played = [] if turn is None else [turn if isinstance(turn, Recording) else turn.recording(launch)]
        return ReplayRunner(played).run(launch, cancel, on_stdout=on_stdout, on_output=on_output, on_start=on_start)


@dataclass
class Ran:
    """A finished run: its outcome, every event it emitted, and its screen as `ralph run` would have printed it."""

    outcome: LoopOutcome
    events: list[object]
    screen: str
    built: Built


def build(
    project: Path,
    agent: Turns,
    *,
    n: int | None = None,
    flags: Mapping[str, tuple[Any, str]] | None = None,
    backend: str | None = "command",
    clock: Clock | None = None,
    sinks: Sequence[EventSink] = (),
    cancel: CancelToken | None = None,
    **request: Any,
) -> tuple[Built, list[object], io.StringIO]:
    """The run `ralph run` builds for feature `feat` (or `request`'s target or feature) with `backend` (`--agent-cmd`
    for "command", `--agent NAME` for another, the config's for None), `-n n` and `flags` (settings key → (value,
    flag)), `agent` playing its turns; the list its events go to, and its screen."""
    chosen = AGENT_CMD if backend == "command" else {"agent": (backend, "--agent")} if backend else {}
    # a loop that needs a human halts at once (as the tests' environment has it: tests/conftest.py), unless asked
    halts = {"question_wait_s": ("0", "$RALPH_QUESTION_WAIT")}
    every = {**chosen, **halts, **({"max_iterations": (str(n), "-n/--max-iterations")} if n else {}), **(flags or {})}
    if "target" not in request:
        request.setdefault("feature", "feat")
    request.setdefault("archive", False)
    events: list[object] = []
    screen = io.StringIO()
    # the clock starts now (the records' times are today's) and never sleeps: a wait is seen, not waited for
    clock = clock or FakeClock(start=datetime.now(UTC))
    renderer = TerminalRenderer(out=screen, spin_interval=None)
    built = build_run(
        str(project),
        RunRequest(flags=every, **request),
        clock=clock,
        sinks=[events.append, renderer, *sinks],
        cancel=cancel,
        runner=agent,
    )
    return built, events, screen


def run(
    project: Path,
    agent: Turns,
    *,
    notify: bool = False,
    ask: Callable[[str, float], str | None] | None = None,
    **how: Any,
) -> Ran:
    """One `ralph run` in-process (see `build`), driven as the CLI drives it (cli/run_cmd.py): the runtime files kept
    out of git, on the task file's branch, the loop to its end. With `notify`, the run's `notify` section at work, as
    the CLI subscribes it (its warnings on stderr), the run's end sent before this returns. With `ask`, the run is on
    a terminal: at a usage limit under the policy `ask` it puts its question (and its timeout in seconds) to `ask`,
    as `ralph run` asks on the terminal; "exit", "wait", or None when nobody answered."""
    cancel = how.pop("cancel", None) or CancelToken()
    later: list[EventSink] = []  # the sinks cli/run_cmd.py subscribes once the run is built

    def tell_later(event: object) -> None:
        for sink in later:
            sink(event)

    if ask is not None:
        how["terminal"] = True
    built, events, screen = build(project, agent, cancel=cancel, sinks=[*how.pop("sinks", ()), tell_later], **how)
    engine = built.run
    if ask is not None:
        engine = replace(engine, ask=ask if engine.policy.usage.action == "ask" else None)
    notifier = None
    if notify:
        warn = TerminalRenderer(out=io.StringIO()).warning  # `ralph: warning: ...` on stderr, as the CLI says it
        notifier = Notifier(built.settings.notify, Seen(engine.paths.name, engine.paths.dir, built.kind), warn)
        later.append(notifier)
    os.makedirs(engine.paths.state_dir, exist_ok=True)  # .ralph/ for a workspace at the project root
    keep_out_of_git(engine.paths, None, engine.agent.runtime_files)
    if built.branch:
        git.switch_branch(engine.paths.project_root, built.branch)
    try:
        outcome = run_loop(engine)
    finally:
        cancel.close()
        if notifier is not None:
            notifier.close()  # the run's end sent, once the feature folder is where it stays
    return Ran(outcome, events, screen.getvalue(), built)


@dataclass(frozen=True)
class Said:
    """What an in-process `ralph` command printed, and its exit code."""

    code: int
    out: str
    err: str


def ralph(*args: str) -> Said:
    """`ralph ARGS` in this process (cli/main.py), its output captured: for the commands that read or mend the
    records (status, report, reset-circuit, analyze, init), never `run`, which takes over the process's streams."""
    from ralphloop.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return Said(code, out.getvalue(), err.getvalue())


def entries(feature: Path) -> list[dict[str, str]]:
    """progress.txt's entries, each as its `Key: value` fields."""
    return [entry_fields(entry) for entry in progress_entries((feature / "progress.txt").read_text())]


def metrics(feature: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (feature / "ralph_metrics.jsonl").read_text().splitlines()]


def git_out(project: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=project, check=True, capture_output=True, text=True).stdout


def signal(kind: str, *words: str) -> Callable[[Launch], None]:
    """A turn's `first`: the agent's `ralph signal KIND WORDS`, run in this process with the launch's environment,
    the feature's lock held as `ralph run` holds it (a signal with no run holding it is refused)."""

    def send(launch: Launch) -> None:
        env = launch.command.env
        paths = FeaturePaths(env["RALPH_PROJECT_ROOT"], env["RALPH_FEATURE_DIR"])
        before = dict(os.environ)
        try:
            with RunLock(paths.lock, "ralph run"):
                os.environ.update(env)
                said = ralph("signal", kind, *words)
        finally:
            os.environ.clear()
            os.environ.update(before)
        assert said.code == 0, said.err

    return send

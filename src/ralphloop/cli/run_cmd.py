"""`ralph run`: resolve the feature, settings, task source and agent; then drive the engine."""

from __future__ import annotations

import argparse
import os
import select
import shlex
import signal
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TextIO, cast

from ralphloop import git
from ralphloop.agents.registry import make_agent
from ralphloop.cancel import CancelToken
from ralphloop.cli.init_cmd import ensure_gitignore
from ralphloop.cli.logfile import StampedLines, fan_out
from ralphloop.cli.render import TerminalRenderer
from ralphloop.cli.terminal import TerminalGuard
from ralphloop.config import Settings, load_settings
from ralphloop.engine.loop import Loop, LoopConfig
from ralphloop.errors import RalphError
from ralphloop.events import LoopEnded, Notice
from ralphloop.exitcodes import ExitReason
from ralphloop.guards.backoff import Backoff
from ralphloop.guards.breaker import BreakerConfig
from ralphloop.guards.budget import Budget
from ralphloop.notify import NotifySettings, notify_end
from ralphloop.paths import (
    RALPH_DIR,
    RUNTIME_NAMES,
    FeaturePaths,
    display_path,
    find_project_root,
    ralph_home,
    resolve_feature,
)
from ralphloop.preflight import run_problems
from ralphloop.process import LIVE_GROUPS, ProcessLimits, kill_group_now
from ralphloop.prompt import load_template
from ralphloop.protocols import SystemClock, TaskSource
from ralphloop.records.events import EventLog
from ralphloop.state.calls import CallLedger, ledger_path
from ralphloop.state.read import lock_holder_alive
from ralphloop.state.store import RunLock
from ralphloop.tasks.fix_plan import find_prompt
from ralphloop.tasks.goal import GoalSource
from ralphloop.tasks.prd_json import PrdSource
from ralphloop.tasks.problems import raise_first
from ralphloop.tasks.sources import open_source, source_kind


def command(args: argparse.Namespace, argv: list[str]) -> int:
    target, iterations = _positionals(args)
    _check_flags(args, target, iterations)
    root = find_project_root()
    paths = resolve_feature(root, target or args.feature, flag="FEATURE" if target else "-f")
    kind = source_kind(paths)
    warnings: list[str] = []
    settings = load_settings(root, _flags(args, iterations), warn=warnings.append)
    if kind in ("todo", "goal") and settings.source("max_iterations") == "default":
        # seed 004: a plan folder runs until it is complete; seed 001: a goal, until it is reached
        settings = replace(settings, max_iterations=None)
    for message in warnings:
        print(f"ralph: warning: {message}", file=sys.stderr)
    raise_first(
        run_problems(
            paths,
            settings,
            kind,
            story=args.story,
            resume_from=args.resume_from,
            reset_circuit=args.reset_circuit,
            prompt=args.prompt,
        )
    )
    template = _template(args.prompt, paths, kind)
    source = open_source(paths, kind, story_order=settings.story_order, story=args.story, resume_from=args.resume_from)
    view = source.load()  # invalid input stops here, before any file is touched
    agent = make_agent(settings, paths)
    checked, git_warnings = _git_preflight(paths, settings)
    branch = _branch(paths, settings, source) if checked else None
    terminal = sys.stdin.isatty() and sys.stdout.isatty()
    auto_commit = checked and (settings.auto_commit if settings.auto_commit is not None else kind == "todo")
    config = _loop_config(settings, template, args, terminal, auto_commit)
    ledger = CallLedger(ledger_path(ralph_home(), settings.rate_account or agent.name))
    cancel = CancelToken()
    if args.dry_run:
        return _dry_run(paths, source, agent, config, settings, view.all_done, cancel, ledger, branch)
    if args.monitor and _monitor_in_tmux(argv, paths, terminal):
        return 0  # the loop runs in tmux now; this process only launched (and showed) it
    os.makedirs(paths.state_dir, exist_ok=True)  # .ralph/ for a workspace at the project root
    _keep_runtime_files_out_of_git(paths, args.log_file)
    renderer = TerminalRenderer.for_terminal(args.verbose)
    log_file = _open_log_file(args.log_file)
    sink, ended = _subscribers(paths, renderer, log_file)
    try:
        with TerminalGuard() as screen, RunLock(paths.lock, f"ralph run for {paths.name}"):
            for warning in git_warnings:  # on the run's screen, once it is sure to start
                sink(Notice("warning", warning))
            if branch:
                _switch(paths, branch, sink)
            loop = Loop(
                paths=paths,
                source=source,
                agent=agent,
                config=config,
                clock=SystemClock(),
                sink=sink,
                cancel=cancel,
                ledger=ledger,
                ask=(lambda question, timeout: _ask_over_spinner(renderer, question, timeout, cancel.fileno()))
                if config.usage_policy == "ask"
                else None,
                goal=source if isinstance(source, GoalSource) else None,
            )
            previous = _install_signal_handlers(cancel, screen)
            try:
                outcome = loop.run()
            finally:
                renderer.stop()  # the spinner off and the cursor back, even after an error
                _restore_signal_handlers(previous)
    finally:
        if log_file:
            log_file.close()
    _notify(settings, ended, paths, kind)  # after the final summary, outside the lock
    if outcome.reason is ExitReason.INTERRUPTED:
        print(f"To continue, run: {resume_command(argv, paths, named=bool(args.feature or target))}")
    return outcome.reason.exit_code


def _check_flags(args: argparse.Namespace, target: str | None, iterations: str | None) -> None:
    """Flags that contradict each other, before anything is read."""
    if target and args.feature:
        raise RalphError(f"give the feature once: either FEATURE ({target}) or -f/--feature ({args.feature})")
    if iterations is not None and args.max_iterations is not None:
        raise RalphError("give the iteration count once: either ITERATIONS or -n/--max-iterations")
    if args.agent and args.agent_cmd and args.agent != "command":
        raise RalphError(
            f"--agent {args.agent} and --agent-cmd contradict each other (--agent-cmd means --agent command)"
        )
    if args.story and args.resume_from:
        raise RalphError("give either -s/--story (one story) or --resume-from (from a story on), not both")


def _positionals(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """FEATURE|PLAN_DIR and ITERATIONS (seed 004: `ralph run plans/x/ 10`). A lone number that names
    no folder is the iteration count (`ralph run 5`)."""
    target, iterations = args.target, args.iterations
    if target and iterations is None and target.isdigit() and not os.path.isdir(target):
        target, iterations = None, target
    if iterations is not None:
        text = iterations.strip()
        if not text.isdigit() or int(text) < 1:
            raise RalphError(
                f"ITERATIONS {iterations!r}: must be a positive integer (1 or more); leave it out to run until complete"
            )
    return target, iterations


def _git_preflight(paths: FeaturePaths, settings: Settings) -> tuple[bool, tuple[str, ...]]:
    """Seed 004's checks before the first iteration: whether the loop works in a git repository, and
    the warnings to show (uncommitted or untracked files). An error stops the run here."""
    if not settings.git_required:
        return git.toplevel(paths.project_root) is not None, ()
    found = git.preflight(paths.project_root, _runtime_paths(paths))
    if found.error:
        raise RalphError(found.error)
    return True, found.warnings


def _runtime_paths(paths: FeaturePaths) -> tuple[str, ...]:
    """ralph's runtime files as paths in the repository (for the dirty check and auto-commit)."""
    top = git.toplevel(paths.project_root) or paths.project_root
    rel = os.path.relpath(paths.state_dir, top)
    prefix = "" if rel == "." else rel + "/"
    return tuple(f"{prefix}{name}" for name in RUNTIME_NAMES)


def _branch(paths: FeaturePaths, settings: Settings, source: TaskSource) -> str | None:
    """The branch to work on (seed 003): prd.json's branchName, or with branch.auto_create the prefix
    and the feature's name; None to stay where the user is."""
    if settings.branch_auto_create is False:
        return None
    wanted = ""
    if source.kind == "prd":
        wanted = PrdSource(paths.prd, display_path(paths.prd, os.getcwd())).read().branch_name.strip()
    if not wanted and settings.branch_auto_create:
        wanted = settings.branch_prefix + paths.name
    if not wanted:
        return None
    if not git.valid_branch_name(paths.project_root, wanted):
        where = "prd.json branchName" if source.kind == "prd" and not settings.branch_auto_create else "branch"
        raise RalphError(f"{where} {wanted!r}: not a valid git branch name")
    return wanted


def _switch(paths: FeaturePaths, branch: str, sink: Any) -> None:
    try:
        done = git.switch_branch(paths.project_root, branch)
    except OSError as exc:
        raise RalphError(f"{exc} (commit or stash your changes, or set branch.auto_create: false)") from None
    if not done.startswith("on branch"):
        sink(Notice("info", done))


def _open_log_file(path: str | None) -> StampedLines | None:
    if not path:
        return None
    try:
        handle = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed when the run ends
    except OSError as exc:
        raise RalphError(f"--log-file {path}: cannot open: {exc.strerror}") from None
    return StampedLines(handle)


def _loop_config(
    settings: Settings,
    template: str,
    args: argparse.Namespace,
    terminal: bool,
    auto_commit: bool = False,
) -> LoopConfig:
    policy = settings.usage_policy or ("ask" if terminal else "wait")
    if policy == "ask" and not terminal:
        policy = "wait"  # nobody to ask: the documented default without a terminal
    return LoopConfig(
        max_iterations=settings.max_iterations,
        limits=ProcessLimits(settings.timeout_s, settings.kill_grace_s, settings.log_max_bytes),
        progress_bytes=settings.progress_bytes,
        rate_limit_per_hour=settings.rate_limit_per_hour,
        template=template,
        archive=not args.no_archive,
        completion=settings.completion,
        blocked_threshold=settings.blocked_threshold,
        max_retries=settings.max_retries,
        breaker=BreakerConfig(
            no_progress_threshold=settings.no_progress_threshold,
            half_open_after=min(2, settings.no_progress_threshold),
            same_error_threshold=settings.same_error_threshold,
            failure_threshold=settings.failure_threshold,
            denial_threshold=settings.permission_denial_threshold,
            cooldown_s=settings.cooldown_s,
        ),
        usage_policy=policy,
        usage_margin_s=settings.usage_margin_s,
        usage_fallback_wait_s=settings.usage_fallback_wait_s,
        usage_pause_at=settings.usage_pause_at,
        budget=Budget(settings.max_cost_usd, settings.max_tokens, settings.max_runtime_s),
        model=settings.model,
        poorman=settings.poorman,
        backoff=Backoff(settings.backoff_initial_s, settings.backoff_max_s, settings.backoff_attempts),
        reset_circuit="requested with ralph run --reset-circuit" if args.reset_circuit else None,
        auto_commit=auto_commit,
        hooks=settings.hooks,
        gates=settings.quality_checks,
    )


def _ask_over_spinner(renderer: TerminalRenderer, question: str, timeout: float, wake_fd: int) -> str | None:
    """ask_on_terminal with the spinner's line held, so that the question is not drawn over."""
    with renderer.suspended():
        return ask_on_terminal(question, timeout, wake_fd)


def ask_on_terminal(question: str, timeout: float, wake_fd: int | None = None) -> str | None:
    """Ask on the terminal; "exit", "wait", or None when nobody answered within `timeout` seconds.
    Ctrl+C (which makes `wake_fd` readable) ends the question at once."""
    sys.stdout.write(f"{question} [w]ait/[e]xit (waiting in {timeout:.0f}s unless told): ")
    sys.stdout.flush()
    ready, _, _ = select.select([sys.stdin, *([wake_fd] if wake_fd is not None else [])], [], [], timeout)
    if wake_fd is not None and wake_fd in ready:
        sys.stdout.write("\n")
        return "exit"
    if not ready:
        sys.stdout.write("\nno answer: waiting\n")
        return None
    answer = sys.stdin.readline().strip().lower()
    return "exit" if answer[:1] in ("e", "n", "q") else "wait"


def _flags(args: argparse.Namespace, iterations: str | None) -> dict[str, tuple[Any, str]]:
    flags: dict[str, tuple[Any, str]] = {}
    for key, attribute, label in _GUARD_FLAGS:
        value = getattr(args, attribute)
        if value is not None and value is not False:
            flags[key] = (value, label)
    if iterations is not None:
        flags["max_iterations"] = (iterations, "ITERATIONS")
    if args.max_iterations is not None:
        flags["max_iterations"] = (args.max_iterations, "-n/--max-iterations")
    if args.timeout is not None:
        flags["timeout_s"] = (args.timeout, "-t/--timeout")
    if args.agent is not None:
        flags["agent"] = (args.agent, "--agent")
    if args.agent_cmd is not None:
        flags["agent_command"] = (args.agent_cmd, "--agent-cmd")
    return flags


# settings key, argparse attribute, the flag as users type it
_GUARD_FLAGS = (
    ("rate_limit_per_hour", "rate_limit", "-r/--rate-limit"),
    ("model", "model", "--model"),
    ("poorman", "poorman", "--poorman"),
    ("usage_policy", "on_usage_limit", "--on-usage-limit"),
    ("max_cost_usd", "max_cost", "--max-cost"),
    ("max_tokens", "max_tokens", "--max-tokens"),
    ("max_runtime_s", "max_runtime", "--max-runtime"),
    ("skip_permissions", "dangerously_skip_permissions", "--dangerously-skip-permissions"),
)


def _template(prompt_flag: str | None, paths: FeaturePaths, kind: str) -> str:
    """-p FILE, else the workspace's prompt.md (seed 000: PROMPT.md beside the fix plan), else the
    built-in template for the kind of task source."""
    if prompt_flag:
        return load_template(prompt_flag, f"-p/--prompt {prompt_flag}")
    candidates = [paths.prompt]
    if kind == "fix-plan":
        candidates.append(find_prompt(paths.dir) or "")  # PROMPT.md, beside the fix plan first
    for path in candidates:
        if os.path.isfile(path):
            return load_template(path, display_path(path, os.getcwd()))
    return load_template(None, "", kind)


def _dry_run(
    paths: FeaturePaths,
    source: TaskSource,
    agent: Any,
    config: LoopConfig,
    settings: Settings,
    all_done: bool,
    cancel: CancelToken,
    ledger: CallLedger,
    branch: str | None = None,
) -> int:
    if all_done:
        print(f"Nothing to do: every task in {display_path(source.path, os.getcwd())} is done.")
        return 0
    loop = Loop(
        paths=paths,
        source=source,
        agent=agent,
        config=config,
        clock=SystemClock(),
        sink=lambda e: None,
        cancel=cancel,
        ledger=ledger,
    )
    prompt, invocation = loop.preview()
    print(f"# Dry run for {paths.display()}: nothing is started, written or counted.")
    print(f"# Agent: {agent.name} (from {settings.source('agent')})")
    print(f"# Command (run in {paths.project_root}, prompt on stdin): {shlex.join(invocation.argv)}")
    print("# Environment: " + " ".join(f"{key}={shlex.quote(value)}" for key, value in invocation.env.items()))
    limit = config.max_iterations or "unlimited"
    print(
        f"# Limits: {limit} iterations ({settings.source('max_iterations')}), timeout {config.limits.timeout_s:.0f}s "
        f"({settings.source('timeout_s')})"
    )
    breaker = config.breaker
    print(
        f"# Guards: {config.rate_limit_per_hour} calls/hour ({settings.source('rate_limit_per_hour')}; "
        f"ledger {ledger.path}), circuit breaker {loop.breaker.state.value} (no progress "
        f"{breaker.no_progress_threshold}, same error {breaker.same_error_threshold}, failures "
        f"{breaker.failure_threshold}), {config.max_retries} attempts per task, usage limit: {config.usage_policy}"
    )
    budget = config.budget
    if budget.any or config.model:
        print(
            f"# Budget: cost {budget.max_cost_usd or '-'} USD, tokens {budget.max_tokens or '-'}, runtime "
            f"{budget.max_runtime_s or '-'} s; model {config.model or 'any'}{' (poorman)' if config.poorman else ''}"
        )
    if branch:
        print(f"# Branch: would work on {branch} (now on {git.current_branch(paths.project_root) or 'no branch'})")
    if config.auto_commit:
        print("# Auto-commit: each iteration's changes are committed (git.auto_commit)")
    print(f"# Prompt ({len(prompt.encode())} bytes):")
    print(prompt, end="")
    return 0


def _keep_runtime_files_out_of_git(paths: FeaturePaths, log_file: str | None) -> None:
    """Runtime files never reach a commit, a capture or an undo: .ralph/.gitignore covers those in
    .ralph/; elsewhere (a plan folder, --log-file) their paths go to .git/info/exclude."""
    ralph_dir = os.path.join(paths.project_root, RALPH_DIR)
    patterns = []
    if os.path.commonpath([paths.state_dir, ralph_dir]) == ralph_dir:
        ensure_gitignore(ralph_dir)
    else:
        patterns += [os.path.join(paths.state_dir, name) for name in RUNTIME_NAMES]
    if log_file:
        patterns.append(os.path.abspath(log_file))
    top = git.toplevel(paths.project_root)
    if top is None or not patterns:
        return
    # .git/info/exclude patterns are read against the repository's top, not the project root
    inside = [os.path.relpath(path, top) for path in patterns]
    git.exclude_paths(top, ["/" + _glob_escape(rel) for rel in inside if not rel.startswith("..")])


def _glob_escape(path: str) -> str:
    """A path as a literal gitignore pattern (a plan folder may be called `[draft]`)."""
    return "".join("\\" + char if char in "*?[\\" else char for char in path)


def _install_signal_handlers(cancel: CancelToken, screen: TerminalGuard | None = None) -> dict[int, Any]:
    def handler(signum: int, frame: object) -> None:
        if cancel.is_set():  # the second Ctrl+C: no more waiting for anything
            # the agent, and every hook or gate still running (background hooks have tokens of their own)
            for pgid in {*list(LIVE_GROUPS), *([cancel.active_pgid] if cancel.active_pgid else [])}:
                kill_group_now(pgid)
            os.write(2, b"\nralph: stopped at once\n")
            if screen is not None:
                screen.restore()  # os._exit skips every `finally`: the terminal's modes and cursor back here
            os._exit(130)
        cancel.set()
        os.write(2, b"\nralph: stopping the agent and saving the records (Ctrl+C again to quit at once)\n")

    previous: dict[int, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        previous[signum] = signal.signal(signum, handler)
    return previous


def _restore_signal_handlers(previous: dict[int, Any]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


def resume_command(argv: list[str], paths: FeaturePaths, *, named: bool) -> str:
    """The command that picks up where an interrupted run stopped: the same one, naming the feature."""
    words = ["ralph", *argv]
    if not named and paths.is_feature_folder:  # a root workspace is found again without naming it
        words += ["-f", paths.name]
    return shlex.join(words)


def _subscribers(
    paths: FeaturePaths, renderer: TerminalRenderer, log_file: StampedLines | None
) -> tuple[Callable[[object], None], list[LoopEnded]]:
    """The run's event sink: the screen, the monitor's event log (events.jsonl), the --log-file; and a
    list that receives the LoopEnded event, for the notifications."""
    ended: list[LoopEnded] = []
    sinks: list[Callable[[object], None]] = [renderer, EventLog(paths.events, SystemClock().now)]
    if log_file:
        sinks.append(TerminalRenderer(out=cast(TextIO, log_file)))
    sinks.append(lambda event: ended.append(event) if isinstance(event, LoopEnded) else None)
    return fan_out(*sinks), ended


def _notify(settings: Settings, ended: list[LoopEnded], paths: FeaturePaths, kind: str) -> None:
    """The notifications the run's end calls for (config `notify`); a failure is only a warning."""
    if not ended:
        return
    wanted = NotifySettings(settings.notify_desktop, settings.notify_webhook, settings.notify_on)
    for warning in notify_end(wanted, ended[-1], paths.name, paths.dir, source_kind=kind):
        print(f"ralph: warning: {warning}", file=sys.stderr)


def _monitor_in_tmux(argv: list[str], paths: FeaturePaths, terminal: bool) -> bool:
    """`--monitor`: the same run in a tmux session `ralph`, beside `ralph monitor`; attached when on a
    terminal. False, with a warning, when there is no tmux: the loop then runs here."""
    from ralphloop.monitor import tmux
    from ralphloop.monitor.snapshot import ended_run

    if tmux.available() is None:
        print(
            "ralph: warning: tmux not found: --monitor ignored, the loop runs here "
            "(watch it from another terminal with: ralph monitor)",
            file=sys.stderr,
        )
        return False
    holder = lock_holder_alive(paths.lock)
    if holder is not None:
        raise RalphError(
            f"ralph run for {paths.name} is already running (PID {holder}); watch it with: "
            + shlex.join(["ralph", "monitor", "-f", paths.display()])
        )
    loop = [sys.executable, "-m", "ralphloop", *without_flag(argv, "--monitor")]
    monitor = [sys.executable, "-m", "ralphloop", "monitor", "-f", paths.dir]
    before = ended_run(paths)  # the monitor waits past the last run's final state for this one's
    if before:
        monitor += ["--skip-run", before]
    try:
        launched = tmux.launch(loop, monitor, cwd=os.getcwd(), env=os.environ, window=paths.name)
    except OSError as exc:
        raise RalphError(f"--monitor: {exc}") from None
    attach = f"tmux attach -t {launched.session}"
    if terminal and tmux.attach(launched.session, os.environ) == 0:
        print(f"ralph: detached; the loop goes on in tmux session {launched.session} (back with: {attach})")
    else:
        print(f"ralph: the loop runs in tmux session {launched.session}, beside its monitor; watch with: {attach}")
    return True


def without_flag(argv: list[str], flag: str) -> list[str]:
    """`argv` less `flag` and its abbreviations (argparse takes `--moni` for `--monitor`)."""
    return [word for word in argv if not (len(word) > 3 and flag.startswith(word) and word.startswith("--"))]

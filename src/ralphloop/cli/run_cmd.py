"""`ralph run`: resolve the feature, settings, task source and agent; then drive the engine."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from functools import partial
from typing import Any, TextIO, cast

from msgspec.structs import replace

from ralphloop.cli import outputs
from ralphloop.cli.interrupts import Interrupts
from ralphloop.cli.logfile import StampedLines
from ralphloop.cli.monitor_launch import in_tmux, someone_to_ask
from ralphloop.cli.question import answers_of, ask_over_spinner
from ralphloop.cli.render import TerminalRenderer
from ralphloop.cli.seed_flags import story_shaped_rate, story_spec_refusal, timeout_problem
from ralphloop.cli.terminal import TerminalGuard
from ralphloop.core.cancel import CancelToken
from ralphloop.core.clock import SystemClock
from ralphloop.core.errors import RalphError
from ralphloop.core.events import Notice
from ralphloop.core.exitcodes import ExitReason
from ralphloop.core.protocols import EventSink
from ralphloop.engine.loop import run_loop
from ralphloop.engine.phases import prompt_for
from ralphloop.files import yaml_cache
from ralphloop.files.safe_read import check_file, nonblocking
from ralphloop.files.store import RunLock
from ralphloop.fleet.launcher import child_kept_out, die_with_parent
from ralphloop.notify.events import Seen
from ralphloop.notify.settings import describe
from ralphloop.notify.sink import Notifier
from ralphloop.plugins.formats import detect, format_of
from ralphloop.processes.reaper import become_subreaper
from ralphloop.project.page import page_url
from ralphloop.project.paths import FeaturePaths, display_path, find_project_root
from ralphloop.project.resolve import resolve_feature
from ralphloop.start.build import Built, RunRequest, build_run
from ralphloop.start.preflight import others_notice
from ralphloop.start.recover import reconcile
from ralphloop.state.start_at import check_start
from ralphloop.words.argv import run_flags
from ralphloop.workspace import git
from ralphloop.workspace.gitignore import keep_out_of_git
from ralphloop.workspace.worktree_lock import WorktreeLock


def command(args: argparse.Namespace, argv: list[str]) -> int:
    outputs.guard()  # a terminal that hangs up or a pipe nobody reads any more: ralph's writes never raise
    target, iterations = _positionals(args)
    features = _features(args)
    _check_flags(args, target, iterations)
    if args.log_file:  # before anything is read or written: the run appends to it from the start
        check_file(args.log_file, f"--log-file {args.log_file}")
    root = find_project_root()
    if args.parallel and (args.parallel > 1 or args.temporal):
        return _parallel(args, argv, root, target, iterations, features)
    _story_spec_spellings(args, root, target)  # before build_run: it makes the private index's folder in .git
    terminal = sys.stdin.isatty() and sys.stdout.isatty()
    request = RunRequest(
        target=target,
        feature=args.feature,
        flags=_flags(args, iterations),
        story=args.story,
        resume_from=args.resume_from,
        prompt=args.prompt,
        archive=not args.no_archive,
        reset_circuit=args.reset_circuit,
        terminal=someone_to_ask(terminal, args.on_usage_limit),
        dry_run=args.dry_run,
        argv=tuple(argv),
        start_at=args.start_at,
        loops=args.child,
    )
    renderer = TerminalRenderer.for_terminal(args.verbose)
    cancel = CancelToken()
    sinks: list[EventSink] = [renderer]
    built = build_run(
        root,
        request,
        clock=SystemClock(),
        sinks=sinks,
        cancel=cancel,
        # the terminal's question; an answer given elsewhere (`ralph answer`, the page) counts too (issue 36)
        ask=lambda question, timeout: ask_over_spinner(renderer, question, timeout, cancel, answers_of(built)),
    )
    for message in built.warnings:
        print(f"ralph: warning: {message}", file=sys.stderr)
    if args.dry_run:
        return show_dry_run(built)
    run = built.run
    if args.monitor and in_tmux(argv, run.paths, terminal):
        return 0  # the loop runs in tmux now; this process only launched (and showed) it
    log_file = _open_log_file(args.log_file)
    interrupts = Interrupts(cancel, run.paths.status)
    os.makedirs(run.paths.state_dir, exist_ok=True)  # .ralph/ for a workspace at the project root
    keep_out_of_git(run.paths, args.log_file, run.agent.runtime_files)
    if log_file:
        sinks.append(TerminalRenderer(out=cast(TextIO, log_file)))
    # sends on its own thread; the run's end (close, below) once the feature folder is where it stays
    sinks.append(
        notifier := Notifier(
            built.settings.notify,
            Seen(run.paths.name, run.paths.dir, built.kind),
            renderer.warning,
            page=partial(page_url, run.paths.project_root),  # `ralph serve`'s, with serve.public_url
        )
    )
    try:
        with (
            WorktreeLock(run.paths, tuple(run_flags(argv, target))),
            TerminalGuard() as screen,
            RunLock(run.paths.lock, f"ralph run for {run.paths.name}"),
        ):
            others = others_notice(run.paths)  # another tool's files by ralph's names in .ralph/, left alone
            for warning in (*built.git_warnings, *([others] if others else [])):  # once it is sure to start
                run.emit(Notice("warning", warning))
            if run.workspace is not None:  # before the run's first git command: a stale lock would fail it
                run.workspace.clear_locks()
            become_subreaper()  # an agent's daemonised grandchildren come back to ralph, to be stopped
            run = reconcile(run)  # an iteration a killed run left: its agent stopped, its work settled
            _on_branch(args, built, run)
            yaml_cache.keep()  # what the config files were read as, for the next command's start
            # up to the last line: a Ctrl+C or a hang-up after the loop must not end ralph in a traceback either
            interrupts.install(screen)
            try:
                outcome = run_loop(run)
            finally:
                renderer.stop()  # the spinner off and the cursor back, even after an error
        if outcome.reason is ExitReason.INTERRUPTED:
            print(f"To continue, run: {run.resume}")
        return outcome.reason.exit_code
    finally:
        notifier.close()  # the run's end sent, and what is queued waited for (END_WAIT_S at most)
        interrupts.restore()
        if log_file:
            log_file.close()


def _parallel(
    args: argparse.Namespace,
    argv: list[str],
    root: str,
    target: str | None,
    iterations: str | None,
    features: list[str],
) -> int:
    from ralphloop.cli.parallel_cmd import run_parallel  # the coordinator's modules, for --parallel only

    return run_parallel(args, argv, root, target, _flags(args, iterations), features)


def _features(args: argparse.Namespace) -> list[str]:
    """-f as given (several only side by side, with --parallel); args.feature becomes the one, or None."""
    features: list[str] = list(args.feature or [])
    if len(features) > 1 and not (args.parallel and args.parallel > 1):
        raise RalphError(
            f"-f/--feature given {len(features)} times: one feature at a time, or several side by side with "
            "--parallel N"
        )
    args.feature = features[0] if features else None
    return features


def _on_branch(args: argparse.Namespace, built: Built, run: Any) -> None:
    """The run on its branch: prd.json's branchName (switched to), or, for a loop of `ralph run --parallel`
    (--child), the worktree's own branch; such a loop stops, as on Ctrl+C, when its coordinator dies."""
    if args.child and run.workspace is not None:
        die_with_parent()
        run.workspace.kept_out = child_kept_out(run.workspace.top, run.paths, format_of(built.kind).task_file)
    elif built.branch:
        _switch(run.paths, built.branch, run.emit)


def _story_spec_spellings(args: argparse.Namespace, root: str, target: str | None) -> None:
    """Seed 002's -t SECS and -r STORY refused in a story-spec workspace, before anything is made."""
    problem = story_spec_refusal(args.timeout, _spelled(args, "timeout"), args.rate_limit, _spelled(args, "rate_limit"))
    if problem:  # the workspace is looked up only then
        paths = resolve_feature(root, target or args.feature, flag="FEATURE" if target else "-f")
        if format_of(detect(paths.dir)).seed_flags:
            raise RalphError(problem)


def _check_flags(args: argparse.Namespace, target: str | None, iterations: str | None) -> None:
    """Flags that contradict each other, or say nothing that can be, before anything is read."""
    if args.start_at is not None:
        args.start_at = check_start(args.start_at)  # one spelling ("2:00" is "02:00"), with --parallel too
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
    if (args.temporal or args.detach) and not args.parallel:
        flag = "--temporal" if args.temporal else "--detach"
        raise RalphError(f"{flag} is for a parallel run on Temporal: give it with --parallel N --temporal HOST:PORT")
    # seed 002's -t SECS and -r STORY: refused with the fix, never read silently as minutes or calls per hour
    problem = args.timeout is not None and timeout_problem(args.timeout, _spelled(args, "timeout"))
    problem = problem or (_spelled(args, "rate_limit") == "-r" and story_shaped_rate(args.rate_limit))
    if problem:
        raise RalphError(problem)


def _spelled(args: argparse.Namespace, dest: str) -> str:
    """The flag as typed (`-r` or `--rate-limit`; an abbreviation such as `--rate` counts as the long form)."""
    spelled = getattr(args, f"{dest}_spelled", None)
    return "-" + spelled[1] if spelled and not spelled.startswith("--") else "--" + dest.replace("_", "-")


def _positionals(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """FEATURE|PLAN_DIR and ITERATIONS (seed 004: `ralph run plans/x/ 10`). A lone number that names
    no folder is the iteration count (`ralph run 5`)."""
    target, iterations = args.target, args.iterations
    if target and iterations is None and target.isascii() and target.isdigit() and not os.path.isdir(target):
        target, iterations = None, target
    if iterations is not None:
        text = iterations.strip()
        if not (text.isascii() and text.isdigit()) or int(text) < 1:
            raise RalphError(
                f"ITERATIONS {iterations!r}: must be a positive integer (1 or more); leave it out to run until complete"
            )
    return target, iterations


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
        handle = open(path, "a", encoding="utf-8", opener=nonblocking)  # noqa: SIM115 - closed when the run ends
    except OSError as exc:
        raise RalphError(f"--log-file {path}: cannot open: {exc.strerror}") from None
    return StampedLines(handle)


def _flags(args: argparse.Namespace, iterations: str | None) -> dict[str, tuple[Any, str]]:
    flags: dict[str, tuple[Any, str]] = {}
    for key, attribute, label in _GUARD_FLAGS:
        value = getattr(args, attribute)
        if value is not None and value is not False:
            flags[key] = (value, label)
    if args.dangerously_skip_permissions:  # the same as --permissions all, for every agent of the run
        if args.permissions not in (None, "all"):
            raise RalphError(
                f"--permissions {args.permissions} and --dangerously-skip-permissions contradict each other: give one"
            )
        flags["permissions"] = ("all", "--dangerously-skip-permissions")
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
    ("usage_windows", "max_window", "--max-window"),
    ("sandbox_mode", "sandbox", "--sandbox"),
    ("on_question", "on_question", "--on-question"),
    ("max_cost_usd", "max_cost", "--max-cost"),
    ("max_tokens", "max_tokens", "--max-tokens"),
    ("max_runtime_s", "max_runtime", "--max-runtime"),
    ("permissions", "permissions", "--permissions"),
)


def _show_sandbox(runner: object, source: str) -> None:
    """The box the agent would run in (--sandbox), or that there is none."""
    from ralphloop.processes.sandbox import SandboxRunner  # a dry run's words only

    if not isinstance(runner, SandboxRunner):
        print(f"# Sandbox: off (from {source})")
        return
    for number, line in enumerate(runner.box.words()):
        print(("# Sandbox: " if number == 0 else "#   ") + line)


def show_dry_run(built: Built) -> int:
    """The next iteration's prompt and agent command, and the settings with where each came from; nothing
    is started, written or counted."""
    run, settings = built.run, built.settings
    paths, policy = run.paths, run.policy
    view = built.view
    if view.all_done and view.scope and view.outside_open:  # -s or --resume-from: the scope, not the feature
        print(f"Nothing to do: {view.scope} is done ({view.outside_open} other task(s) still open outside it).")
        return 0
    if view.all_done:
        print(f"Nothing to do: every task in {display_path(run.source.path, os.getcwd())} is done.")
        return 0
    task = built.view.next_task
    assert task is not None
    said = run.control.unused() if run.control else ()  # shown, not used: a dry run changes nothing
    prompt, request = prompt_for(run, run.start, run.start.number + 1, task, said)
    invocation = run.agent.command(request)
    print(f"# Dry run for {paths.selector}: nothing is started, written or counted.")
    print(f"# Agent: {run.agent.name} (from {settings.source('agent')})")
    from ralphloop.agents.failover import FailoverAgent  # a dry run's words only

    if len(settings.agent.chain) > 1 and isinstance(run.agent, FailoverAgent):
        print(f"# Failover: {' → '.join(settings.agent.chain)} (at a usage limit or a failed login, the next one)")
        members = run.agent.agents
        for member in members:  # what each other agent would run (--model is the first one's alone)
            if member is not run.agent.current:
                asked = request if member is members[0] else replace(request, model=None)
                print(f"#   {member.name}: {shlex.join(member.command(asked).argv)}")
    level = run.agent.permissions or settings.agent.permissions
    came = settings.source("permissions" if level == settings.agent.permissions else "skip_permissions")
    print(f"# Permissions: {level} (from {came})")
    _show_sandbox(run.runner, settings.source("sandbox_mode"))
    # Cursor's and aider's CLIs take no prompt on stdin: their backends leave the prompt in its file and name the file.
    given = "prompt on stdin" if invocation.stdin else f"prompt in {request.prompt_file}"
    print(f"# Command (run in {paths.project_root}, {given}): {shlex.join(invocation.argv)}")
    print("# Environment: " + " ".join(f"{key}={shlex.quote(value)}" for key, value in invocation.env.items()))
    limit = policy.loop.max_iterations or "unlimited"
    print(
        f"# Limits: {limit} iterations ({settings.source('max_iterations')}), timeout {policy.limits.timeout_s:.0f}s "
        f"({settings.source('timeout_s')})"
    )
    breaker = policy.breaker
    print(
        f"# Guards: {policy.loop.rate_limit_per_hour} calls/hour ({settings.source('rate_limit_per_hour')}; "
        f"ledger {run.ledger.path}), circuit breaker {run.breaker.load().state.value} (no progress "
        f"{breaker.no_progress_threshold}, same error {breaker.same_error_threshold}, failures "
        f"{breaker.failure_threshold}), {policy.loop.max_retries} attempts per task, usage limit: {policy.usage.action}"
    )
    budget = policy.budget
    if budget.any or policy.agent.model:
        print(
            f"# Budget: cost {budget.max_cost_usd or '-'} USD, tokens (input + output) {budget.max_tokens or '-'}, "
            f"runtime {budget.max_runtime_s or '-'} s; model {policy.agent.model or 'any'}"
            + (" (poorman)" if policy.agent.poorman else "")
        )
    if built.branch:
        print(
            f"# Branch: would work on {built.branch} (now on {git.current_branch(paths.project_root) or 'no branch'})"
        )
    if policy.auto_commit:
        why = "git.auto_commit" if settings.git.auto_commit else "the default for this task format or agent"
        print(f"# Auto-commit: each iteration's changes are committed ({why}), unless its work is rejected")
    print(f"# Notify: {describe(settings.notify)}")  # every URL redacted
    print(f"# Prompt ({len(prompt.encode())} bytes):")
    print(prompt, end="")
    return 0

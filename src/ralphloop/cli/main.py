"""`ralph`: argument parsing and dispatch. Command modules are imported only when chosen,
so `ralph status` pays for nothing it does not use (no YAML, no msgspec, no engine)."""

from __future__ import annotations

import argparse
import functools
import importlib
import os
import sys

from ralphloop import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


class _Formatter(argparse.HelpFormatter):
    """argparse's help layout, with the terminal's width found once: argparse makes a formatter for every
    argument it adds, each importing shutil (and bz2, lzma) and asking the terminal (~5 ms in all)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, width or _help_width())


@functools.cache
def _help_width() -> int:
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


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad flag in one line and exits 1 (exit 2 means 'usage limit' here)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(1, f"ralph: error: {message} (see '{self.prog} --help')\n")


class _Spelled(argparse.Action):
    """Store the value and how the flag was spelled (`dest_spelled`): `-r` means a story in seed 002, and
    only the short form is checked for that (cli/seed_flags.py); `--rate-limit` says what it means. An error
    names the flag as it was typed."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)
        setattr(namespace, f"{self.dest}_spelled", option_string)


# Seed 000's own spellings of two commands (`ralph --status`, `ralph --reset-circuit`), printed in its guidance.
_COMMAND_ALIASES = {"--status": "status", "--reset-circuit": "reset-circuit"}


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ralph",
        description="Run a coding agent in a loop, a fresh process per iteration, until the work is verifiably done.",
        epilog="`ralph --status` and `ralph --reset-circuit` (seed 000's spellings) run `ralph status` and "
        "`ralph reset-circuit`.",
    )
    parser.add_argument("--version", action="version", version=f"ralph {__version__}")
    # prog given: argparse would otherwise lay out the usage text to find it
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser, prog="ralph")

    init = commands.add_parser("init", help="create a feature folder in .ralph/")
    init.add_argument("feature", metavar="FEATURE", help="feature name (letters, digits, . _ -)")
    init.add_argument(
        "--format",
        default="prd",
        choices=_format_names(),
        help="task file to start with: prd.json (default), TODO.md, fix_plan.md + PROMPT.md, story specs, "
        "or a goal (SPRINT.yaml)",
    )
    init.set_defaults(handler="init")

    _add_run(commands.add_parser("run", help="run the loop over a feature until done"))

    status = commands.add_parser("status", help="show a feature's loop state")
    status.add_argument("-f", "--feature", help="feature name or folder")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    status.set_defaults(handler="status")

    monitor = commands.add_parser("monitor", help="watch a feature's loop live (exits when the run ends)")
    monitor.add_argument("-f", "--feature", help="feature name or folder")
    monitor.add_argument(
        "--wait", action="store_true", help="when no run is going on, wait for the next one (not the last one's end)"
    )
    monitor.add_argument("--skip-run", help=argparse.SUPPRESS)  # `ralph run --monitor`: the run before its own
    monitor.add_argument("--beside-run", action="store_true", help=argparse.SUPPRESS)  # the same, with none before
    monitor.set_defaults(handler="monitor")

    report = commands.add_parser("report", help="show the metrics summary of a feature's iterations")
    report.add_argument("-f", "--feature", help="feature name or folder")
    report.add_argument("--json", action="store_true", help="machine-readable output")
    report.add_argument("--html", metavar="FILE", help="write a self-contained page with charts (- for stdout)")
    report.set_defaults(handler="report")

    reset = commands.add_parser("reset-circuit", help="close an open circuit breaker, zeroing its counters")
    reset.add_argument("-f", "--feature", help="feature name or folder")
    reset.add_argument("--reason", metavar="TEXT", default="manual reset by user", help="why (kept in the history)")
    reset.set_defaults(handler="reset_circuit")

    archive = commands.add_parser("archive", help="move a feature into .ralph/archive/")
    archive.add_argument("-f", "--feature", help="feature name or folder")
    archive.set_defaults(handler="archive")

    _add_analyze(commands)

    signal = commands.add_parser(
        "signal",
        help="record a signal for the running loop (for agents)",
        description="Record a signal in the feature's signals.jsonl; the loop reads it after the agent exits. "
        "Forms: complete [NOTE] | blocked REASON | fail ID [REASON] | done ID | learn TEXT",
    )
    signal.add_argument("kind", metavar="KIND", choices=("complete", "blocked", "fail", "done", "learn"))
    signal.add_argument("words", nargs="*", metavar="ARG", help="the id, reason or text")
    signal.add_argument("-f", "--feature", help="feature name or folder (default: $RALPH_FEATURE_DIR)")
    signal.set_defaults(handler="signal")

    prd = commands.add_parser("prd", help="turn a spec.md into prd.json (deterministic)")
    prd.add_argument("spec", nargs="?", metavar="SPEC", help="the spec.md (default: the feature's spec.md)")
    prd.add_argument("-f", "--feature", help="feature name or folder to write prd.json into")
    prd.set_defaults(handler="prd")

    validate = commands.add_parser("validate", help="check a feature's task files and config; list every problem")
    validate.add_argument("-f", "--feature", help="feature name or folder (default: the only one)")
    validate.set_defaults(handler="validate")

    helper = commands.add_parser("help", help="show help for a command")
    helper.add_argument("topic", nargs="?", metavar="COMMAND")
    helper.set_defaults(handler="help")
    return parser


def _add_run(run: argparse.ArgumentParser) -> None:
    run.add_argument(
        "target", nargs="?", metavar="FEATURE|PLAN_DIR", help="feature name in .ralph/, or a folder (e.g. plans/x/)"
    )
    run.add_argument(
        "iterations", nargs="?", metavar="ITERATIONS", help="same as -n (a plan folder runs until complete without)"
    )
    run.add_argument("-f", "--feature", help="feature name in .ralph/, or a folder (default: the only one)")
    run.add_argument("-n", "--max-iterations", metavar="N", help="iterations in this run (default 20; 0 = unlimited)")
    run.add_argument(
        "-t",
        "--timeout",
        metavar="T",
        action=_Spelled,
        help="per-iteration timeout: 15 (minutes), 90s, 15m, 1h; a bare number over 240 is refused (seconds? 1800s)",
    )
    run.add_argument("-p", "--prompt", metavar="FILE", help="prompt template (default: the feature's prompt.md)")
    run.add_argument("-v", "--verbose", action="store_true", help="show the agent's output as it runs")
    run.add_argument("-d", "--dry-run", action="store_true", help="print the prompt and agent command; run nothing")
    run.add_argument("--no-archive", action="store_true", help="do not archive the feature on completion")
    run.add_argument(
        "--agent",
        metavar="NAME",
        help=f"agent backend: {_backends()}, or a plugin's; a list (claude,codex) fails over to the next at a "
        "usage limit",
    )
    run.add_argument("--agent-cmd", metavar="CMD", help="run CMD as the agent (prompt on stdin)")
    run.add_argument("-s", "--story", metavar="ID", help="work on this story only, until it passes")
    run.add_argument("--resume-from", metavar="ID", help="skip the stories before this one (in work order)")
    run.add_argument("-l", "--log-file", metavar="FILE", help="also append the run's lines, timestamped, to FILE")
    run.add_argument(
        "-r",
        "--rate-limit",
        metavar="N",
        action=_Spelled,
        help="agent calls per hour, per account (default 100); -r with a story id is refused (--resume-from)",
    )
    run.add_argument("--model", metavar="NAME", help="haiku, sonnet, opus or a full model name; verified")
    run.add_argument("--poorman", action="store_true", help="accept whatever model answers (no model retries)")
    run.add_argument(
        "--on-usage-limit",
        metavar="POLICY",
        choices=("wait", "exit", "ask"),
        help="at a vendor usage limit: wait, exit (code 2) or ask (default: ask on a terminal, else wait)",
    )
    run.add_argument("--max-cost", metavar="USD", help="stop once this run has cost this much")
    run.add_argument(
        "--max-tokens",
        metavar="N",
        help="stop once this run has used this many input + output tokens (cache reads and writes are not counted)",
    )
    run.add_argument("--max-runtime", metavar="T", help="stop once this run has lasted this long: 90m, 8h")
    run.add_argument("--reset-circuit", action="store_true", help="reset the circuit breaker, then run")
    run.add_argument(
        "--monitor", action="store_true", help="run in a tmux session 'ralph', the live monitor beside the loop"
    )
    run.add_argument(
        "--permissions",
        metavar="LEVEL",
        choices=("ask", "edits", "all"),
        help="what the agent may do unasked: ask, edits (default: edit files in the project) or all (no checks)",
    )
    run.add_argument(
        "--dangerously-skip-permissions",
        action="store_true",
        help="the same as --permissions all: no permission checks (only in a sandbox you can throw away)",
    )
    run.set_defaults(handler="run")


def _backends() -> str:
    """The built-in backends' names, the default first: "claude (default), codex, ..."."""
    from ralphloop.agents.catalog import CATALOG  # light: names, nothing of a backend

    return ", ".join(["claude (default)", *sorted(name for name in CATALOG if name != "claude")])


def _add_analyze(commands: Any) -> None:
    """`ralph analyze FILE`."""
    from ralphloop.agents.catalog import CLI_BACKENDS, log_formats  # light: names, nothing of a backend

    analyze = commands.add_parser("analyze", help="show what ralph reads in a saved agent output")
    analyze.add_argument("file", metavar="FILE", help="a saved output, e.g. .ralph/FEATURE/logs/iteration-7.log")
    analyze.add_argument(
        "--format",
        default="auto",
        choices=("auto", "text", "claude-json", *log_formats()),
        help="how FILE was written (default: detected)",
    )
    analyze.add_argument(
        "--agent",
        metavar="NAME",
        help=f"the backend that wrote FILE ({', '.join(CLI_BACKENDS)}): read as the loop read it",
    )
    analyze.add_argument("--prompt", metavar="FILE", help="the prompt it answered (default: iteration-N.prompt.md)")
    analyze.add_argument("--json", action="store_true", help="machine-readable output")
    analyze.set_defaults(handler="analyze")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `ralph` command."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments and arguments[0] in _COMMAND_ALIASES:
        arguments[0] = _COMMAND_ALIASES[arguments[0]]
    parser = build_parser()
    args = parser.parse_args(arguments)
    if args.command is None:
        parser.print_help()
        return 0
    if args.handler == "help":
        topic = [args.topic, "--help"] if args.topic else ["--help"]
        parser.parse_args(topic)
        return 0
    from ralphloop.errors import RalphError

    try:
        module = importlib.import_module(f"ralphloop.cli.{args.handler}_cmd")  # a Ctrl+C may come while it loads
        code: int = module.command(args, arguments)
        return code
    except RalphError as exc:
        from ralphloop.textsafe import strip_terminal_controls  # a path or a value may hold escapes

        print(f"ralph: error: {strip_terminal_controls(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("ralph: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except Exception as exc:  # a bug of ours: one line for the user, the traceback in a file
        where = _save_traceback()
        print(f"ralph: internal error: {type(exc).__name__}: {exc} (traceback in {where})", file=sys.stderr)
        return 1


def _save_traceback() -> str:
    import os
    import traceback

    from ralphloop.paths import ralph_home

    path = os.path.join(ralph_home(), "errors.log")
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(traceback.format_exc() + "\n")
    except OSError:
        return "(could not be saved)"
    return path


def _format_names() -> tuple[str, ...]:
    from ralphloop.tasks.formats import FORMATS  # light: names and file finders; a format's module loads when used

    return tuple(FORMATS)

"""`ralph`: argument parsing and dispatch. Command modules are imported only when chosen,
so `ralph status` pays for nothing it does not use (no YAML, no msgspec, no engine)."""

from __future__ import annotations

import sys

from ralphloop import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from typing import Any


# Seed 000's own spellings of two commands (`ralph --status`, `ralph --reset-circuit`), printed in its guidance.
_COMMAND_ALIASES = {"--status": "status", "--reset-circuit": "reset-circuit"}

# How `ralph --help` lists the commands.
_GROUPS = (
    ("start", ("init", "prd", "run", "worker")),
    ("watch", ("status", "monitor", "serve")),
    ("inspect", ("logs", "analyze", "report", "validate")),
    ("steer", ("pause", "resume", "stop", "say", "answer")),
    ("manage", ("reset-circuit", "archive", "signal", "help")),
)
_EXAMPLES = """\
examples:
  ralph init auth        a feature folder .ralph/auth/ with a prd.json to fill in
  ralph run              run the only feature until every story passes
  ralph status           where the loop stands, from another terminal
  ralph logs             the newest iteration's log, readable (ralph logs 7: iteration 7's)
  ralph analyze 7        what ralph read in iteration 7's output, and so why it decided what it did
  ralph help run         the flags of a command

Seed 000's spellings `ralph --status` and `ralph --reset-circuit` work too."""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The `ralph` parser with every command, or with the command `only` alone: a command's own parse then costs
    none of the others' flags, help texts and imports (half of `ralph status`'s own time was building them)."""
    import argparse

    from ralphloop.cli.help_format import Commands, Parser

    parser = Parser(
        prog="ralph",
        usage="%(prog)s [-h] [--version] COMMAND ...",
        description="Run a coding agent in a loop, a fresh process per iteration, until the work is verifiably done.",
        epilog=_EXAMPLES,
    )
    parser.add_argument("--version", action="version", version=f"ralph {__version__}")
    # prog given: argparse would otherwise lay out the usage text to find it. The commands are listed in groups by
    # the parser's own help (help_format.Parser), not as one list.
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=Parser, prog="ralph", action=Commands, help=argparse.SUPPRESS
    )
    parser.list_commands(commands, _GROUPS)
    for name, add in _COMMANDS.items():
        if only is None or name == only:
            add(commands)
    return parser


def _add_init(commands: Any) -> None:
    init = commands.add_parser("init", help="create a feature folder in .ralph/")
    init.add_argument("feature", metavar="FEATURE", help="feature name (letters, digits, . _ -)")
    init.add_argument(
        "--format",
        default="prd",
        metavar="NAME",
        help="task file to start with: prd (prd.json, the default), todo (TODO.md), fix-plan (fix_plan.md + "
        "PROMPT.md), stories (story specs), goal (SPRINT.yaml), or an installed plug-in format's name",
    )
    init.set_defaults(handler="init")


def _add_run(commands: Any) -> None:
    from ralphloop.cli.run_flags import add_run

    add_run(commands.add_parser("run", help="run the loop over a feature until done"))


def _add_worker(commands: Any) -> None:
    from ralphloop.cli.worker_flags import add_worker  # its parser is built only when asked for

    add_worker(commands)


def _add_status(commands: Any) -> None:
    status = commands.add_parser("status", help="show a feature's loop state")
    status.add_argument("-f", "--feature", help="feature name or folder")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    status.set_defaults(handler="status")


def _add_monitor(commands: Any) -> None:
    import argparse

    monitor = commands.add_parser("monitor", help="watch a feature's loop live (exits when the run ends)")
    monitor.add_argument("-f", "--feature", help="feature name or folder")
    monitor.add_argument(
        "--wait", action="store_true", help="when no run is going on, wait for the next one (not the last one's end)"
    )
    monitor.add_argument("--skip-run", help=argparse.SUPPRESS)  # `ralph run --monitor`: the run before its own
    monitor.add_argument("--beside-run", action="store_true", help=argparse.SUPPRESS)  # the same, with none before
    monitor.set_defaults(handler="monitor")


def _add_report(commands: Any) -> None:
    report = commands.add_parser("report", help="show the metrics summary of a feature's iterations")
    report.add_argument("-f", "--feature", help="feature name or folder")
    report.add_argument("--json", action="store_true", help="machine-readable output")
    report.add_argument("--html", metavar="FILE", help="write a self-contained page with charts (- for stdout)")
    report.set_defaults(handler="report")


def _add_reset_circuit(commands: Any) -> None:
    reset = commands.add_parser("reset-circuit", help="close an open circuit breaker, zeroing its counters")
    reset.add_argument("-f", "--feature", help="feature name or folder")
    reset.add_argument("--reason", metavar="TEXT", default="manual reset by user", help="why (kept in the history)")
    reset.set_defaults(handler="reset_circuit")


def _add_archive(commands: Any) -> None:
    archive = commands.add_parser("archive", help="move a feature into .ralph/archive/")
    archive.add_argument("-f", "--feature", help="feature name or folder")
    archive.set_defaults(handler="archive")


def _add_signal(commands: Any) -> None:
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


def _add_prd(commands: Any) -> None:
    prd = commands.add_parser("prd", help="turn a spec.md into prd.json (deterministic)")
    prd.add_argument("spec", nargs="?", metavar="SPEC", help="the spec.md (default: the feature's spec.md)")
    prd.add_argument("-f", "--feature", help="feature name or folder to write prd.json into")
    prd.set_defaults(handler="prd")


def _add_validate(commands: Any) -> None:
    validate = commands.add_parser("validate", help="check a feature's task files and config; list every problem")
    validate.add_argument("-f", "--feature", help="feature name or folder (default: the only one)")
    validate.add_argument(
        "--fix",
        action="store_true",
        help="first turn the plain bullets of a fix plan or TODO.md into checkboxes (shows the diff, asks on a "
        "terminal, keeps the original as NAME.orig)",
    )
    validate.set_defaults(handler="validate")


def _add_help(commands: Any) -> None:
    helper = commands.add_parser("help", help="show help for a command")
    helper.add_argument("topic", nargs="?", metavar="COMMAND")
    helper.set_defaults(handler="help")


def _add_analyze(commands: Any) -> None:
    """`ralph analyze N|FILE`."""
    from ralphloop.plugins.agents import CLI_BACKENDS, log_formats  # light: names, nothing of a backend

    analyze = commands.add_parser(
        "analyze",
        help="show what ralph read in an iteration's output (or any saved output)",
        epilog="examples:\n  ralph analyze 7\n  ralph analyze last -f auth\n  ralph analyze saved-output.jsonl",
    )
    analyze.add_argument(
        "file",
        metavar="N|FILE",
        help="an iteration's number (or last): its log in the feature's logs/; else a saved output's path "
        "(a file named like a number: ./7)",
    )
    analyze.add_argument("-f", "--feature", help="the feature of iteration N (default: the only one)")
    analyze.add_argument(
        "--format",
        default="auto",
        metavar="NAME",
        help="how FILE was written (default: auto, detected): text, claude-json or a backend's own: "
        f"{', '.join(log_formats())} (or an installed plug-in backend's)",
    )
    analyze.add_argument(
        "--agent",
        metavar="NAME",
        help=f"the backend that wrote FILE ({', '.join(CLI_BACKENDS)}): read as the loop read it",
    )
    analyze.add_argument("--prompt", metavar="FILE", help="the prompt it answered (default: iteration-N.prompt.md)")
    analyze.add_argument("--json", action="store_true", help="machine-readable output")
    analyze.set_defaults(handler="analyze")


def _add_serve(commands: Any) -> None:
    """`ralph serve [-f F ...] [--port N]`."""
    serve = commands.add_parser(
        "serve",
        help="watch every loop live in a browser (a page on 127.0.0.1, a token in its URL)",
        description="A live web page of every loop of the project (or of the -f features): each loop's story, "
        "state, iteration, cost and log tail, the merge queue of a parallel run. It listens on 127.0.0.1 only and "
        "prints its URL, which holds a random token; a request without it is refused. Needs the optional extra: "
        "pip install 'ralphloop[web]'.",
    )
    serve.add_argument(
        "-f", "--feature", action="append", metavar="FEATURE", help="a feature to show (repeatable; default: all)"
    )
    serve.add_argument("--port", metavar="N", help="the port to listen on (default: a free one)")
    serve.set_defaults(handler="serve")


def _add_steer(commands: Any, name: str, help_text: str) -> Any:
    """One of the commands that steer a running loop (cli/steer_cmd.py): `-f FEATURE` each."""
    steer = commands.add_parser(
        name,
        help=help_text,
        description=f"{help_text[0].upper()}{help_text[1:]}. It is kept in the loop's control.json, which the loop "
        "reads between iterations; with no loop running for the feature, nothing is written.",
    )
    steer.add_argument("-f", "--feature", help="feature name or folder (default: the only one)")
    steer.add_argument("--story", metavar="ID", help="in a parallel run: the loop working on story ID")
    steer.set_defaults(handler="steer")
    return steer


def _add_pause(commands: Any) -> None:
    _add_steer(commands, "pause", "pause a running loop: no new iteration starts; the running one finishes")


def _add_resume(commands: Any) -> None:
    _add_steer(commands, "resume", "resume a paused loop")


def _add_stop(commands: Any) -> None:
    stop = _add_steer(commands, "stop", "stop a running loop after the running iteration")
    stop.add_argument(
        "--now", action="store_true", help="interrupt the running iteration (saved and undone, as after a Ctrl+C)"
    )


def _add_say(commands: Any) -> None:
    say = _add_steer(commands, "say", "guide a running loop: TEXT goes into the next iteration's prompt, once")
    say.add_argument("text", nargs="+", metavar="TEXT", help="your guidance (kept in progress.txt too)")


def _add_answer(commands: Any) -> None:
    answer = _add_steer(commands, "answer", "answer the question a running loop waits on")
    answer.add_argument("text", nargs="+", metavar="TEXT", help="your answer (it reaches the next prompt)")


def _add_logs(commands: Any) -> None:
    """`ralph logs [N] [--raw]`."""
    logs = commands.add_parser(
        "logs",
        help="show an iteration's log, readable: the agent's words, tools, errors",
        epilog="examples:\n  ralph logs\n  ralph logs 7 -f auth\n  ralph logs last --raw | tail -n 20",
    )
    logs.add_argument("iteration", nargs="?", metavar="N", help="the iteration's number, or last (the default)")
    logs.add_argument("-f", "--feature", help="feature name or folder (default: the only one)")
    logs.add_argument(
        "--raw", action="store_true", help="the file as the agent wrote it (escapes removed on a terminal)"
    )
    logs.set_defaults(handler="logs")


# Each command's parser, in the order `ralph --help` has always listed them.
_COMMANDS: dict[str, Callable[[Any], None]] = {
    "init": _add_init,
    "run": _add_run,
    "worker": _add_worker,
    "status": _add_status,
    "monitor": _add_monitor,
    "serve": _add_serve,
    "report": _add_report,
    "reset-circuit": _add_reset_circuit,
    "archive": _add_archive,
    "analyze": _add_analyze,
    "logs": _add_logs,
    "signal": _add_signal,
    "pause": _add_pause,
    "resume": _add_resume,
    "stop": _add_stop,
    "say": _add_say,
    "answer": _add_answer,
    "prd": _add_prd,
    "validate": _add_validate,
    "help": _add_help,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `ralph` command."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments and arguments[0] in _COMMAND_ALIASES:
        arguments[0] = _COMMAND_ALIASES[arguments[0]]
    if arguments == ["--version"]:  # what argparse's version action prints, without building every command's parser
        print(f"ralph {__version__}")
        return 0
    args: Any = _plain_status(arguments)
    if args is None:
        # A command named first is parsed by its own parser alone; anything else (help, a typo, a flag) by all.
        chosen = arguments[0] if arguments and arguments[0] in _COMMANDS and arguments[0] != "help" else None
        parser = build_parser(chosen)
        args = parser.parse_args(arguments)
        if args.command is None:
            parser.print_help()
            return 0
        if args.handler == "help":
            topic = [args.topic, "--help"] if args.topic else ["--help"]
            parser.parse_args(topic)
            return 0
    from ralphloop.core.errors import RalphError

    try:
        name = f"ralphloop.cli.{args.handler}_cmd"
        __import__(name)  # a Ctrl+C may come while it loads (not importlib's import_module: its import is warnings')
        module = sys.modules[name]
        code: int = module.command(args, arguments)
        return code
    except RalphError as exc:
        from ralphloop.words.textsafe import strip_terminal_controls  # a path or a value may hold escapes

        print(f"ralph: error: {strip_terminal_controls(str(exc))}", file=sys.stderr)
        for choice in exc.choices:
            print(f"  {strip_terminal_controls(choice)}", file=sys.stderr)
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


def _plain_status(arguments: list[str]) -> Any:
    """`ralph status` as it is nearly always typed (`status`, with `--json` and `-f/--feature NAME`, each once), read
    without argparse: its import and the parser are a quarter of the command's time, and status is what scripts
    and the monitor call again and again. Anything else, None: argparse reads it (and says what is wrong)."""
    if not arguments or arguments[0] != "status":
        return None
    feature: str | None = None
    as_json = False
    words = iter(arguments[1:])
    for word in words:
        if word == "--json" and not as_json:
            as_json = True
        elif word in ("-f", "--feature") and feature is None:
            feature = next(words, "-")
            if feature.startswith("-"):
                return None
        else:
            return None
    return _StatusArgs(feature, as_json)


class _StatusArgs:
    """What status_cmd reads of argparse's Namespace (types.SimpleNamespace's import would cost more than this)."""

    command = handler = "status"

    def __init__(self, feature: str | None, as_json: bool) -> None:
        self.feature = feature
        self.json = as_json


def _save_traceback() -> str:
    import os
    import traceback

    from ralphloop.project.paths import ralph_home

    path = os.path.join(ralph_home(), "errors.log")
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(traceback.format_exc() + "\n")
    except OSError:
        return "(could not be saved)"
    return path

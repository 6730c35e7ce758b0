"""`ralph run`'s arguments, in the groups its help shows them in, with examples that work when pasted."""

from __future__ import annotations

import argparse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

EXAMPLES = """\
examples:
  ralph run                                    the only feature, until every story passes
  ralph run auth 10                            the feature auth, 10 iterations at most
  ralph run -s US-003                          one story, until it passes
  ralph run --agent claude,codex --max-cost 5  Codex when Claude is limited; stop at $5
  ralph run --parallel 3                       up to 3 ready stories at once, each in its own git worktree
  ralph run --monitor                          in tmux, the live monitor beside the loop"""


class Spelled(argparse.Action):
    """Store the value and how the flag was spelled (`dest_spelled`): `-r` means a story in seed 002, and
    only the short form is checked for that (cli/seed_flags.py); `--rate-limit` says what it means. An error
    names the flag as it was typed."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)
        setattr(namespace, f"{self.dest}_spelled", option_string)


def add_run(run: argparse.ArgumentParser) -> None:
    """The flags of `ralph run`, grouped: what to run, the agent, limits and budgets, output, the rest."""
    run.epilog = EXAMPLES
    what = run.add_argument_group("what to run")
    what.add_argument(
        "target", nargs="?", metavar="FEATURE|PLAN_DIR", help="feature name in .ralph/, or a folder (e.g. plans/x/)"
    )
    what.add_argument(
        "iterations", nargs="?", metavar="ITERATIONS", help="same as -n (a plan folder runs until complete without)"
    )
    what.add_argument(
        "-f",
        "--feature",
        action="append",
        help="feature name in .ralph/, or a folder (default: the only one); several side by side with --parallel",
    )
    what.add_argument("-n", "--max-iterations", metavar="N", help="iterations in this run (default 20; 0 = unlimited)")
    what.add_argument("-s", "--story", metavar="ID", help="work on this story only, until it passes")
    what.add_argument("--resume-from", metavar="ID", help="skip the stories before this one (in work order)")
    what.add_argument(
        "--parallel",
        metavar="N",
        type=_loops,
        help="run up to N ready stories at once, each in its own git worktree, merged one at a time",
    )
    what.add_argument(
        "--temporal",
        metavar="HOST:PORT",
        help="with --parallel: run the loops on the workers of this Temporal server (ralph worker), durably",
    )
    what.add_argument(
        "--detach", action="store_true", help="with --temporal: return once the run's workflow is running"
    )
    # a loop the coordinator of --parallel started, in its worktree (docs/parallel.md): never typed by users
    what.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    what.add_argument("-p", "--prompt", metavar="FILE", help="prompt template (default: the feature's prompt.md)")

    agent = run.add_argument_group("agent")
    agent.add_argument(
        "--agent",
        metavar="NAME",
        help=f"agent backend: {_backends()}, or a plugin's; a list (claude,codex) fails over to the next at a "
        "usage limit",
    )
    agent.add_argument("--agent-cmd", metavar="CMD", help="run CMD as the agent (prompt on stdin)")
    agent.add_argument("--model", metavar="NAME", help="haiku, sonnet, opus or a full model name; verified")
    agent.add_argument("--poorman", action="store_true", help="accept whatever model answers (no model retries)")
    agent.add_argument(
        "--permissions",
        metavar="LEVEL",
        choices=("ask", "edits", "all"),
        help="what the agent may do unasked: ask, edits (default: edit files in the project) or all (no checks)",
    )
    agent.add_argument(
        "--sandbox",
        metavar="MODE",
        choices=("auto", "bwrap", "off"),
        help="run the agent in a bubblewrap sandbox: auto (default: when it works here), bwrap (or stop) or off",
    )
    agent.add_argument(
        "--dangerously-skip-permissions",
        action="store_true",
        help="the same as --permissions all: no permission checks (only in a sandbox you can throw away)",
    )

    limits = run.add_argument_group("limits and budgets")
    limits.add_argument(
        "-t",
        "--timeout",
        metavar="T",
        action=Spelled,
        help="per-iteration timeout: 15 (minutes), 90s, 15m, 1h; a bare number over 240 is refused (seconds? 1800s)",
    )
    limits.add_argument(
        "-r",
        "--rate-limit",
        metavar="N",
        action=Spelled,
        help="agent calls per hour, per account (default 100); -r with a story id is refused (--resume-from)",
    )
    limits.add_argument("--max-cost", metavar="USD", help="stop once this run has cost this much")
    limits.add_argument(
        "--max-tokens",
        metavar="N",
        help="stop once this run has used this many input + output tokens (cache reads and writes are not counted)",
    )
    limits.add_argument("--max-runtime", metavar="T", help="stop once this run has lasted this long: 90m, 8h")
    limits.add_argument(
        "--on-usage-limit",
        metavar="POLICY",
        choices=("wait", "exit", "ask"),
        help="at a vendor usage limit: wait, exit (code 2) or ask (default: ask on a terminal; else, and "
        "under --monitor, wait)",
    )
    limits.add_argument(
        "--on-question",
        metavar="POLICY",
        choices=("wait", "halt"),
        help="when the loop needs you (needs-human, blocked): wait for `ralph answer` (default: up to "
        "questions.wait, 8h) or halt at once",
    )
    limits.add_argument(
        "--start-at",
        metavar="WHEN",
        help="start the first iteration at WHEN: HH:MM (the next such time, local), or reset (when the agent "
        "account's capped usage window resets); started again, it waits for the same instant",
    )
    limits.add_argument(
        "--max-window",
        metavar="WINDOW=SHARE",
        action="append",
        help="stop calling an account once a usage window it reported is this full: five_hour=80%%, seven_day=0.5, "
        "all=90%% (repeatable); then --on-usage-limit applies until that window resets",
    )

    output = run.add_argument_group("output")
    output.add_argument(
        "-v", "--verbose", action="store_true", help="show the agent's output as it runs, and each iteration's metrics"
    )
    output.add_argument("-l", "--log-file", metavar="FILE", help="also append the run's lines, timestamped, to FILE")
    output.add_argument(
        "--monitor", action="store_true", help="run in a tmux session 'ralph', the live monitor beside the loop"
    )
    output.add_argument("-d", "--dry-run", action="store_true", help="print the prompt and agent command; run nothing")

    other = run.add_argument_group("other")
    other.add_argument("--no-archive", action="store_true", help="do not archive the feature on completion")
    other.add_argument("--reset-circuit", action="store_true", help="reset the circuit breaker, then run")
    run.set_defaults(handler="run")


def _loops(text: str) -> int:
    """--parallel N: 1 to 32 loops (each is an agent process, a worktree and a share of the account's budget)."""
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 32:
        raise argparse.ArgumentTypeError(f"{text!r}: must be a whole number from 1 to 32")
    return int(text)


def _backends() -> str:
    """The built-in backends' names, the default first: "claude (default), codex, ..."."""
    from ralphloop.plugins.agents import CATALOG  # light: names, nothing of a backend

    return ", ".join(["claude (default)", *sorted(name for name in CATALOG if name != "claude")])

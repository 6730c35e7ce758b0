"""`ralph run --monitor`: the same run in a tmux session, beside `ralph monitor`."""

from __future__ import annotations

import os
import sys

from ralphloop.core.errors import RalphError
from ralphloop.files.read import lock_holder_alive
from ralphloop.project.paths import FeaturePaths

UNATTENDED = "RALPH_UNATTENDED"  # set in the loop's tmux pane: no one is sure to be there to answer


def someone_to_ask(terminal: bool, usage_flag: str | None) -> bool:
    """Whether a usage limit may be asked about: on a terminal, but not in the loop's tmux pane (a terminal
    nobody may be watching, so it waits, and notifies), unless `--on-usage-limit ask` was given."""
    return terminal and not (os.environ.get(UNATTENDED) and usage_flag is None)


def in_tmux(argv: list[str], paths: FeaturePaths, terminal: bool) -> bool:
    """`--monitor`: the same run in a tmux session `ralph`, beside `ralph monitor`; attached when on a
    terminal. False, with a warning, when there is no tmux: the loop then runs here."""
    from ralphloop.monitor import tmux
    from ralphloop.monitor.snapshot import ended_run

    if tmux.available() is None:
        print(
            "ralph: warning: tmux not found: --monitor ignored, the loop runs here "
            f"(watch it from another terminal with: {paths.command('monitor')})",
            file=sys.stderr,
        )
        return False
    holder = lock_holder_alive(paths.lock)
    if holder is not None:
        raise RalphError(
            f"ralph run for {paths.name} is already running (PID {holder}); watch it with: " + paths.command("monitor")
        )
    loop = [sys.executable, "-m", "ralphloop", *without_flag(argv, "--monitor")]
    monitor = [sys.executable, "-m", "ralphloop", "monitor", "-f", paths.dir]
    before = ended_run(paths)  # the monitor waits past the last run's final state for this one's
    # the loop may not have started when the monitor does: it waits for it, whatever status.json holds now
    monitor += ["--skip-run", before] if before else ["--beside-run"]
    try:
        launched = tmux.launch(
            loop, monitor, cwd=os.getcwd(), env=os.environ, window=paths.name, loop_env={UNATTENDED: "1"}
        )
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

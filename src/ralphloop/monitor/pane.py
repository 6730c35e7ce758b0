"""What a `ralph run --monitor` pane runs: `python -m ralphloop.monitor.pane SPEC`.

Reads SPEC (argv, folder, environment; written 0600 by tmux.py) and deletes it at once, runs the
command, then keeps the pane open with the command's last screen until the user presses Enter, so a
loop's final summary is still there in the morning.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys

# What describes the pane itself, which tmux sets: copies from the launching shell would be wrong
# (its TMUX client, its TERM, its COLUMNS and LINES, which rich would draw to).
PANE_OWN = ("TMUX", "TMUX_PANE", "TERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION", "COLUMNS", "LINES")
# tmux never sets these; a server started from a shell that exported them passes them on: the pane's
# real size is asked of the terminal instead.
_NEVER = ("COLUMNS", "LINES")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m ralphloop.monitor.pane SPEC", file=sys.stderr)
        return 2
    try:
        with open(argv[0], encoding="utf-8") as handle:
            spec = json.load(handle)
    except (OSError, ValueError) as exc:
        print(f"ralph: cannot read the pane's spec {argv[0]}: {exc}", file=sys.stderr)
        return _hold(1)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(argv[0])
    env = {key: value for key, value in spec["env"].items() if key not in PANE_OWN}
    env.update({key: os.environ[key] for key in PANE_OWN if key in os.environ and key not in _NEVER})
    # Ctrl+C in the pane goes to the whole foreground group: the command handles it, this launcher waits.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        done = subprocess.run(spec["argv"], cwd=spec["cwd"], env=env, check=False, preexec_fn=_default_sigint)
        code = done.returncode
    except OSError as exc:
        print(f"ralph: cannot start {spec['argv'][0]}: {exc.strerror}", file=sys.stderr)
        code = 1
    return _hold(code)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _hold(code: int) -> int:
    """Keep the pane (and what it shows) until Enter; tmux closes a pane whose command has ended."""
    word = "ended" if code == 0 else f"ended with exit code {code}"
    sys.stdout.write(f"\n[{word} · press Enter to close this pane]")
    sys.stdout.flush()
    with contextlib.suppress(KeyboardInterrupt, OSError):
        sys.stdin.readline()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

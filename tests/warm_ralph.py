"""The real `ralph` CLI for tests that run it hundreds of times: each command runs `ralphloop.cli.main.main`
in a fresh process forked from one interpreter that has already imported ralph, so a command costs its
own work and not ~150 ms of imports. Everything else is as `python -m ralphloop` runs: its own process
and session, the given folder and environment (ralph reads none at import), `sys.argv`, stdin from /dev/null
or the given input, stdout and stderr to files, the exit code from `main` as `cli/launch.py` makes it; a command
that has not ended within the timeout is killed and reported as hung.

What a fork cannot change is the interpreter: a command whose environment sets PYTHON* variables (a PYTHONPATH
of plug-ins) needs a cold start, as does one that tests start-up itself (tests/conftest.py's `ralph` starts
those cold).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import io
import json
import os
import pkgutil
import select
import signal
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any

_SKIP = ("ralphloop.__main__",)  # runs `ralph` when imported


class WarmRalph:
    """A server process of this module; call it like `subprocess.run` of `python -m ralphloop ARGS`."""

    def __init__(self, env: dict[str, str], scratch: Path) -> None:
        self.scratch = scratch  # where each command's stdout and stderr are kept (outside any project)
        self.count = 0
        # the variables the server's interpreter started with that shape it: a command needs the same ones
        self.interpreter = {key: value for key, value in env.items() if key.startswith("PYTHON")}
        self.server = subprocess.Popen(
            [sys.executable, __file__],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def __call__(
        self, cwd: Path, env: dict[str, str], *args: str, timeout: float, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """`ralph ARGS` in `cwd`; raises subprocess.TimeoutExpired when it hangs (it is killed first)."""
        self.count += 1
        out, err = self.scratch / f"{self.count}.out", self.scratch / f"{self.count}.err"
        request = {"argv": list(args), "cwd": str(cwd), "env": env, "out": str(out), "err": str(err)}
        if input is not None:
            given = self.scratch / f"{self.count}.in"
            given.write_text(input, encoding="utf-8")
            request["stdin"] = str(given)
        assert self.server.stdin is not None and self.server.stdout is not None
        self.server.stdin.write(json.dumps({**request, "timeout": timeout}) + "\n")
        self.server.stdin.flush()
        reply = json.loads(self.server.stdout.readline())
        argv = ["ralph", *args]
        if reply["hung"]:
            raise subprocess.TimeoutExpired(argv, timeout)
        stdout = out.read_bytes().decode("utf-8", "replace")
        stderr = err.read_bytes().decode("utf-8", "replace")
        return subprocess.CompletedProcess(argv, reply["code"], stdout, stderr)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self.server.stdin is not None:
                self.server.stdin.close()
        try:
            self.server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()


# ---------------------------------------------------------------- the server side


def _serve() -> None:
    import ralphloop

    for module in pkgutil.walk_packages(ralphloop.__path__, "ralphloop."):
        if module.name not in _SKIP:
            importlib.import_module(module.name)
    importlib.import_module("yaml")
    # What is imported now lives as long as the server: out of the collector's reach, so that a child's first
    # collection does not touch (and copy, page by page) every object the fork shared with it.
    gc.collect()
    gc.freeze()
    for line in sys.stdin:
        reply = _one(json.loads(line))
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def _one(request: dict[str, Any]) -> dict[str, Any]:
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _child(request)
    watch = os.pidfd_open(pid)
    try:
        ended, _, _ = select.select([watch], [], [], request["timeout"])
    finally:
        os.close(watch)
    if not ended:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return {"code": os.waitstatus_to_exitcode(status), "hung": not ended}


def _child(request: dict[str, Any]) -> None:
    code = 1
    try:
        os.setsid()  # its own session and group, as a command started from a shell's job control has
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        _redirect(0, os.open(request.get("stdin") or os.devnull, os.O_RDONLY))
        _redirect(1, os.open(request["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
        _redirect(2, os.open(request["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
        # the streams a cold interpreter makes for a pipe or a file: UTF-8, strict out, backslashreplace err
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
        sys.stderr = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace", line_buffering=True
        )
        import ralphloop

        sys.argv = [os.path.join(os.path.dirname(ralphloop.__file__ or ""), "__main__.py"), *request["argv"]]
        from ralphloop.cli.main import main

        try:
            code = main(request["argv"])
        except KeyboardInterrupt:  # as cli/launch.py's entry ends it
            print("ralph: interrupted", file=sys.stderr)
            code = 130
    except SystemExit as exc:  # argparse's exit
        code = exc.code if isinstance(exc.code, int) else 1
        if isinstance(exc.code, str):
            sys.stderr.write(exc.code + "\n")
    except BaseException:
        traceback.print_exc()  # as a cold `python -m ralphloop` would show it
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _redirect(target: int, fd: int) -> None:
    os.dup2(fd, target)
    os.close(fd)


if __name__ == "__main__":
    _serve()

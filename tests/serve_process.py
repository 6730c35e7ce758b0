"""The real `ralph serve` as a process for the tests: started in a project, its URL read from the one line it
prints, stopped with Ctrl+C (SIGINT) at the end."""

from __future__ import annotations

import re
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from tests.conftest import PYTHON

URL_LINE = re.compile(r"ralph serve: (http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]{43}))  \(Ctrl\+C stops it\)\n")


@dataclass(frozen=True)
class Served:
    process: subprocess.Popen[str]
    url: str
    port: int
    token: str

    @property
    def base(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    def stop(self) -> tuple[int, str, str]:
        """Ctrl+C; its exit code, the rest of its stdout, and its stderr."""
        self.process.send_signal(signal.SIGINT)
        out, err = self.process.communicate(timeout=15)
        return self.process.returncode, out, err


@contextmanager
def serving(project: Path, env: dict[str, str], *args: str) -> Iterator[Served]:
    process = subprocess.Popen(
        [PYTHON, "-m", "ralphloop", "serve", *args],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # printed once it listens
        found = URL_LINE.fullmatch(line)
        if found is None:
            process.kill()
            raise AssertionError(f"no URL line: {line!r} {process.communicate()[1]!r}")
        yield Served(process, found[1], int(found[2]), found[3])
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()

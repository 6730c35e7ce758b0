"""The replay runner: recorded CLI runs played back through the execution seam (core/runner.py), in-process.

Each launch takes the next recording: what the CLI printed on stdout and stderr and how it exited, as
tests/fixtures keeps its real runs (a folder of `stdout`, `stderr` and `rc`), plus the files the agent wrote
in that turn. The edits land in the launch's folder before the output ends, as an agent's do; the output goes
through the same redaction and log as a real process's, in chunks, so the backend's parser streams it as
it would a real CLI's. No process is started: `on_start` hears 0.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType

from msgspec import Struct, field

from ralphloop.core.cancel import CancelToken
from ralphloop.core.protocols import ProcessOutcome
from ralphloop.core.runner import Launch, OutputHook
from ralphloop.processes.iteration_log import IterationLog
from ralphloop.words.redact import StreamRedactor, secret_values

_CHUNK = 4096  # a pipe's read, roughly: a long line reaches the parser in pieces, as it would
_STDERR_TAIL = 4096


class Recording(Struct, frozen=True):
    """One turn of an agent CLI: its output, its exit, and the files it wrote (a path under the launch's folder →
    the new text, or None to delete it)."""

    stdout: bytes
    stderr: bytes = b""
    exit_code: int | None = 0
    duration_s: float = 0.0
    edits: Mapping[str, str | None] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def from_folder(cls, folder: str, edits: Mapping[str, str | None] | None = None) -> Recording:
        """A captured run: `stdout`, `stderr` and `rc` in `folder` (a missing stream is empty, a missing rc 0)."""

        def read(name: str) -> bytes:
            try:
                with open(os.path.join(folder, name), "rb") as file:
                    return file.read()
            except FileNotFoundError:
                return b""

        code = read("rc").strip()
        return cls(read("stdout"), read("stderr"), int(code) if code else 0, edits=edits or {})


class ReplayRunner:
    """Plays `recordings` back, one per launch; a launch past the last one fails to start, as a missing CLI
    would (the engine then records a failed attempt, which is what a test of it should see)."""

    name = "replay"
    home: str | None = None

    def __init__(self, recordings: Iterable[Recording]) -> None:
        self._left = list(recordings)
        self.launches: list[Launch] = []  # every launch, in order: what the engine asked to run

    @property
    def left(self) -> int:
        return len(self._left)

    def run(
        self,
        launch: Launch,
        cancel: CancelToken,
        *,
        on_stdout: Callable[[bytes], None],
        on_output: OutputHook | None = None,
        on_start: Callable[[int], None] | None = None,
    ) -> ProcessOutcome:
        self.launches.append(launch)
        if not self._left:
            return ProcessOutcome(
                exit_code=None, duration_s=0.0, start_error=f"{launch.command.argv[0]}: no recording left"
            )
        recording = self._left.pop(0)
        if on_start is not None:
            on_start(0)
        if cancel.is_set():
            return ProcessOutcome(exit_code=None, duration_s=0.0, interrupted=True)
        _apply(launch.cwd, recording.edits)
        secrets = secret_values([os.environ, launch.command.env])
        streams = {"stdout": StreamRedactor(secrets), "stderr": StreamRedactor(secrets)}
        tail = b""
        log = IterationLog(launch.log_path, launch.limits.log_max_bytes)
        try:
            for stream, data in (("stdout", recording.stdout), ("stderr", recording.stderr)):
                pieces = [data[start : start + _CHUNK] for start in range(0, len(data), _CHUNK)]
                for clean in [*(streams[stream].feed(piece) for piece in pieces), streams[stream].flush()]:
                    if not clean:
                        continue
                    if stream == "stdout":
                        log.stdout(clean)
                        on_stdout(clean)
                    else:
                        log.stderr(clean)
                        tail = (tail + clean)[-_STDERR_TAIL:]
                    if on_output is not None:
                        on_output(stream, clean)
        finally:
            log.close()
        return ProcessOutcome(
            exit_code=recording.exit_code,
            duration_s=recording.duration_s,
            stdout_bytes=len(recording.stdout),
            stderr_tail=tail.decode("utf-8", "replace"),
        )


def _apply(cwd: str, edits: Mapping[str, str | None]) -> None:
    """The recording's edits, each under `cwd` (a path that leaves it is the recording's bug)."""
    root = os.path.realpath(cwd)
    for relative, text in edits.items():
        path = os.path.realpath(os.path.join(root, relative))
        if os.path.commonpath([root, path]) != root:
            raise ValueError(f"a recorded edit outside the launch's folder: {relative}")
        if text is None:
            if os.path.lexists(path):
                os.remove(path)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as file:
            file.write(text)

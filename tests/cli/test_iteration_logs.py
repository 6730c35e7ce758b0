"""iteration_logs: the words for the iterations that have logs, and a log's lines read a chunk at a time."""

from __future__ import annotations

import os
from pathlib import Path

from ralphloop.cli.iteration_logs import is_iteration, lines, spans


def test_spans_name_runs_and_gaps() -> None:
    assert spans([4]) == "iteration 4 has a log"
    assert spans([1, 2, 3, 4, 5]) == "iterations 1–5 have logs"
    assert spans([1, 2, 3, 5, 8, 9]) == "iterations 1–3, 5, 8–9 have logs"


def test_a_number_or_last_is_an_iteration_anything_else_a_file() -> None:
    assert is_iteration("7") and is_iteration("last") and is_iteration("0012")
    assert not any(map(is_iteration, ("./7", "7.log", "-1", "", "LAST", "1" * 10)))


def test_lines_across_chunks_and_a_line_too_long(tmp_path: Path) -> None:
    path = tmp_path / "log"
    long = b"x" * (3 * 1024 * 1024)  # more than the limit, over several chunks
    path.write_bytes(b"first\n" + long + b"\nafter\n\nlast without newline")
    fd = os.open(path, os.O_RDONLY)
    try:
        assert list(lines(fd, limit=1024 * 1024)) == [b"first", None, b"after", b"", b"last without newline"]
    finally:
        os.close(fd)

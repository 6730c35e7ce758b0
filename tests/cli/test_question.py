"""The question `ralph run` asks on its terminal at a usage limit (cli/question.py), answered from elsewhere
(`ralph answer`, issue 36) while nobody types: a real pipe as its stdin, a real control file with the answer."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import pytest

from ralphloop.cli.question import ask_on_terminal
from ralphloop.core.events import Steered
from ralphloop.core.steering import Request
from ralphloop.records.control import ControlFile


@pytest.fixture
def silent_stdin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A terminal nobody types on: the read end of a pipe whose write end stays open and silent."""
    read, write = os.pipe()
    with open(read, encoding="utf-8") as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        yield
    os.close(write)


def test_an_answer_given_elsewhere_counts_as_typed_and_is_used_once(
    tmp_path: Path, silent_stdin: None, capsys: pytest.CaptureFixture[str]
) -> None:
    control = ControlFile(str(tmp_path / "control.json"))
    control.ask(Request("answer", "cli", datetime.now(UTC), "exit"))
    told: list[object] = []

    assert (
        ask_on_terminal("Usage limit reached. Wait or exit?", 30.0, None, partial(control.take_answer, told.append))
        == "exit"
    )

    assert capsys.readouterr().out.endswith("[w]ait/[e]xit: exit (ralph answer)\n")
    assert [type(event) for event in told] == [Steered]
    assert control.read().answers == ()


def test_with_no_answer_anywhere_the_question_times_out(tmp_path: Path, silent_stdin: None) -> None:
    control = ControlFile(str(tmp_path / "control.json"))
    assert ask_on_terminal("Wait or exit?", 1.2, None, partial(control.take_answer, lambda event: None)) is None

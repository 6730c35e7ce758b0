"""`ralph status` as it is nearly always typed is read without argparse (cli/main.py): whatever it reads, argparse
would have read the same; whatever it does not, argparse reads (and refuses, where it must)."""

from __future__ import annotations

import contextlib
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralphloop import __version__
from ralphloop.cli.main import _plain_status, build_parser

WORDS = [
    "--json",
    "-f",
    "--feature",
    "feat",
    "other",
    "-x",
    "--",
    "--js",
    "-ffeat",
    "--feature=feat",
    "",
    "-",
    "status",
]


def _argparse(arguments: list[str]) -> tuple[str | None, bool] | None:
    """What argparse makes of `arguments` (feature, json); None when it refuses them."""
    with contextlib.redirect_stderr(io.StringIO()), contextlib.suppress(SystemExit):
        args = build_parser("status").parse_args(arguments)
        return args.feature, args.json
    return None


@given(st.lists(st.sampled_from(WORDS), max_size=5))
def test_what_the_quick_reading_reads_argparse_reads_the_same(words: list[str]) -> None:
    arguments = ["status", *words]
    quick = _plain_status(arguments)
    if quick is not None:
        assert (quick.feature, quick.json) == _argparse(arguments)
        assert (quick.command, quick.handler) == ("status", "status")


def test_the_usual_spellings_are_read_quickly() -> None:
    for arguments in (
        ["status"],
        ["status", "--json"],
        ["status", "-f", "feat", "--json"],
        ["status", "--feature", "x"],
    ):
        assert _plain_status(arguments) is not None, arguments
    for arguments in (["status", "--json", "--json"], ["status", "-f"], ["status", "--js"], ["statu"], []):
        assert _plain_status(arguments) is None, arguments


def test_the_version_is_printed_as_argparse_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    """`ralph --version` alone skips the parser, with argparse's very words."""
    from ralphloop.cli.main import main

    assert main(["--version"]) == 0
    quick = capsys.readouterr().out
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(["--version"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out == quick == f"ralph {__version__}\n"

"""words/patterns.py: a pattern compiled at its first use answers as re.compile's does, and `ralph run`'s imports
compile none of the reply's and errors' patterns before the agent has answered."""

from __future__ import annotations

import re
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from ralphloop.words.patterns import lazy

PATTERN = r"(?P<word>[a-z]+)\s*(?P<number>\d+)?"


@given(st.text(alphabet="ab 12\n", max_size=30), st.integers(0, 5))
def test_a_lazy_pattern_answers_as_the_compiled_one(text: str, pos: int) -> None:
    eager, deferred = re.compile(PATTERN, re.IGNORECASE), lazy(PATTERN, re.IGNORECASE)
    for name in ("search", "match", "fullmatch"):
        got, want = getattr(deferred, name)(text, pos), getattr(eager, name)(text, pos)
        assert (got and got.span(), got and got.groupdict()) == (want and want.span(), want and want.groupdict())
    assert [m.span() for m in deferred.finditer(text, pos)] == [m.span() for m in eager.finditer(text, pos)]
    assert deferred.sub("<\\g<word>>", text) == eager.sub("<\\g<word>>", text)
    assert deferred.pattern == PATTERN


def test_the_run_command_imports_no_reply_pattern_compiled() -> None:
    """Nor dataclasses (1-2 ms each to define) nor PyYAML (read when a config file is, unless its reading is kept)."""
    script = """
import sys
import ralphloop.cli.run_cmd, ralphloop.engine.loop, ralphloop.agents.command
from ralphloop.words.patterns import Lazy
found = [
    (module.__name__, name)
    for module in list(sys.modules.values())
    if module is not None and module.__name__.startswith("ralphloop.")
    for name, value in vars(module).items()
    if isinstance(value, Lazy)
]
assert len(found) >= 20, found
compiled = [where for where in found if getattr(sys.modules[where[0]], where[1])._compiled is not None]
assert not compiled, compiled
assert "dataclasses" not in sys.modules and "yaml" not in sys.modules  # the run's values are Structs; YAML is read
"""
    subprocess.run([sys.executable, "-c", script], check=True)


def test_a_warm_loop_process_compiles_every_pattern_ahead() -> None:
    script = """
import ralphloop.cli.run_cmd, ralphloop.engine.loop, ralphloop.agents.command
from ralphloop.words import patterns
assert patterns.compile_all() >= 20
assert all(made._compiled is not None for made in patterns._MADE)
"""
    subprocess.run([sys.executable, "-c", script], check=True)

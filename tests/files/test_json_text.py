"""files/json_text.py: json.loads and json.dumps(indent=2, ensure_ascii=False) without json's import; every value
and every error json's own."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ralphloop.files.json_text import dumps, loads

# JSON's values, with what is hard to write: controls, DEL and C1, lone surrogates, astral characters, NaN and
# the infinities, big and negative integers, keys of every kind json accepts
TEXT = st.text(alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF), max_size=12)
SCALARS = st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats() | TEXT
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(TEXT | st.integers() | st.floats() | st.booleans() | st.none(), inner, max_size=4)
    ),
    max_leaves=20,
)


def same(left: Any, right: Any) -> bool:
    """Equal as JSON values are (a NaN equal to a NaN, 1 and True told apart)."""
    return json.dumps(left, sort_keys=False) == json.dumps(right, sort_keys=False)


def outcome(function: Any, argument: Any) -> tuple[str, Any]:
    try:
        return "value", function(argument)
    except (ValueError, RecursionError, TypeError) as exc:
        return type(exc).__name__, str(exc)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_what_it_writes_is_what_json_writes(value: Any) -> None:
    assert dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)


@settings(max_examples=300, deadline=None)
@given(VALUES, st.sampled_from(["", " ", "\n\t", "\r\n  "]))
def test_what_it_reads_is_what_json_reads(value: Any, space: str) -> None:
    for text in (space + json.dumps(value) + space, json.dumps(value, indent=2, ensure_ascii=False)):
        assert same(loads(text), json.loads(text))
        assert same(loads(text.encode("utf-8", "surrogatepass")), json.loads(text.encode("utf-8", "surrogatepass")))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}[]",:0123456789.eE+- \n\tnulltruefalseNaIfiy\\u\x00\x7fé', max_size=30))
def test_text_that_is_not_json_gets_jsons_own_error(text: str) -> None:
    mine, its = outcome(loads, text), outcome(json.loads, text)
    assert mine[0] == its[0]
    assert same(mine[1], its[1]) if mine[0] == "value" else mine[1] == its[1]


@pytest.mark.parametrize(
    "raw",
    [
        b'\xef\xbb\xbf{"a": 1}',  # UTF-8 with its mark
        '{"a": "é"}'.encode("utf-16"),  # UTF-16 with its mark
        '{"a": 1}'.encode("utf-16-le"),  # UTF-16 without: json tells it by its NULs
        '[1, "x"]'.encode("utf-32"),
        b'{"a": "\xff"}',  # not UTF-8
        b"",
        b"  ",
        b'{"a": 1} {"b": 2}',  # extra data
        b"[" * 100_000,  # nested too deeply
        b"1" * 5000,  # past int's digit limit
        b'"\\ud800"',  # a lone surrogate, escaped
    ],
)
def test_bytes_are_read_as_json_reads_them(raw: bytes) -> None:
    mine, its = outcome(loads, raw), outcome(json.loads, raw)
    assert mine[0] == its[0]
    assert same(mine[1], its[1]) if mine[0] == "value" else mine[1] == its[1]


def test_what_json_cannot_write_gets_jsons_error() -> None:
    circular: list[Any] = []
    circular.append(circular)
    for value in ({"a": object()}, {(1, 2): 3}, circular, {1j: 1}):
        assert outcome(dumps, value) == outcome(lambda v: json.dumps(v, indent=2, ensure_ascii=False), value)


def test_the_infinities_and_nan_are_written_as_json_writes_them() -> None:
    assert dumps([math.inf, -math.inf, math.nan]) == "[\n  Infinity,\n  -Infinity,\n  NaN\n]"
    assert [repr(item) for item in loads("[Infinity, -Infinity, NaN]")] == ["inf", "-inf", "nan"]


def test_it_imports_no_json() -> None:
    """Its point: reading and writing JSON in a fresh interpreter leaves json, re and enum unimported."""
    probe = (
        "import sys\n"
        "from ralphloop.files.json_text import dumps, loads\n"
        "assert loads(dumps({'a': [1, 2.5, None, 'é']})) == {'a': [1, 2.5, None, 'é']}\n"
        "print(sorted({'json', 're', 'enum', 'functools'} & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"

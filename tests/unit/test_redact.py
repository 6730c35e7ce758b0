"""Secrets never reach a log: env values named like secrets and well-known key shapes, across chunk splits."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ralphloop.redact import MASK, StreamRedactor, redact, secret_values

KEY = b"sk-ant-api03-" + b"A1b2C3d4" * 6


def test_secret_values_come_from_secret_looking_names_only() -> None:
    env = {
        "ANTHROPIC_API_KEY": "k" * 20,
        "GITHUB_TOKEN": "t" * 12,
        "DB_PASSWORD": "hunter2hunter2",
        "MY_SECRET_THING": "s" * 9,
        "CLAUDE_CODE_OAUTH_TOKEN": "o" * 30,
        "HOME": "/root/somewhere/long",
        "SHORT_TOKEN": "abc",
        "TOKENIZER_PATH": "/x" * 10,
    }
    assert secret_values([env]) == [b"o" * 30, b"k" * 20, b"hunter2hunter2", b"t" * 12, b"s" * 9]


def test_known_key_shapes_are_masked_even_when_not_in_the_environment() -> None:
    text = (
        b"key=" + KEY + b" openai sk-proj-" + b"x" * 30 + b" gh ghp_" + b"a" * 36 + b" aws AKIAABCDEFGHIJKLMNOP"
        b" slack xoxb-1234567890-abc google AIza" + b"0" * 35 + b" fine: sk-short, task-ant"
    )
    masked = redact(text)
    assert masked.count(MASK) == 6
    assert b"sk-short, task-ant" in masked


def test_env_values_are_masked_whatever_their_shape() -> None:
    assert redact(b"password is hunter2hunter2!", [b"hunter2hunter2"]) == b"password is " + MASK + b"!"


@given(st.integers(min_value=1, max_value=len(KEY) + 40), st.integers(min_value=1, max_value=97))
def test_a_secret_split_across_chunks_is_still_masked(first: int, size: int) -> None:
    stream = b"log line one\nthe key: " + KEY + b" and more\n" + b"tail without newline " + KEY
    redactor = StreamRedactor([b"hunter2hunter2"])
    out = redactor.feed(stream[:first])
    rest = stream[first:]
    for start in range(0, len(rest), size):
        out += redactor.feed(rest[start : start + size])
    out += redactor.flush()
    assert KEY not in out and b"A1b2C3d4" * 6 not in out
    assert out == stream.replace(KEY, MASK)


def test_a_huge_line_without_newlines_is_written_as_it_grows() -> None:
    redactor = StreamRedactor([])
    written = sum(len(redactor.feed(b"x" * 65536)) for _ in range(10))
    assert written >= 9 * 65536  # not held back whole
    assert len(redactor.flush()) < 65536 * 2

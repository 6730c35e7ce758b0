"""Secrets never reach a log or a record: env values named like secrets and well-known key shapes, across chunk
splits, interleaved streams and long-line cuts, and through the net every record file is written through."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralphloop.files.store import append_text, atomic_write_json
from ralphloop.records.signal_log import MAX_TEXT, clean
from ralphloop.words.redact import MASK, StreamRedactor, redact, redact_text, redact_value, secret_values

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


# ---------------------------------------------------------------- the stream: cuts no secret can straddle

ENV_SECRET = b"Qm7vX2pL 9sKe4TnW"  # a value with a space: a word boundary inside the secret itself
FRAGMENTS = [b"word", b" ", b"\n", b"-", b"_x", b"sk-", b"ant-", b"task-", b"Qm7vX2pL", b"9sKe4TnW", ENV_SECRET, KEY]


def pieces(value: bytes, size: int = 8) -> set[bytes]:
    return {value[i : i + size] for i in range(len(value) - size + 1)}


def fed(redactor: StreamRedactor, stream: bytes, cuts: list[int]) -> bytes:
    out, start = b"", 0
    for cut in [*sorted({min(cut, len(stream)) for cut in cuts}), len(stream)]:
        out += redactor.feed(stream[start:cut])
        start = cut
    return out + redactor.flush()


@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40), st.lists(st.integers(min_value=0, max_value=2000)))
def test_any_chunking_gives_what_redacting_the_whole_stream_gives(parts: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(parts)
    assert fed(StreamRedactor([ENV_SECRET]), stream, cuts) == redact(stream, [ENV_SECRET])


@given(st.integers(min_value=1, max_value=len(ENV_SECRET) - 1))
def test_what_is_released_mid_line_never_holds_the_start_of_a_secret(split: int) -> None:
    """Released before a stderr line is written, the unfinished stdout line must not show half a secret."""
    redactor = StreamRedactor([ENV_SECRET])
    early = redactor.feed(b"token: " + ENV_SECRET[:split])
    assert early in {b"token: ", b"token:"}
    assert redactor.feed(ENV_SECRET[split:] + b" ok\n") + redactor.flush() in (MASK + b" ok\n", b" " + MASK + b" ok\n")
    key_start = StreamRedactor([]).feed(b"key " + KEY[:split])
    assert key_start == b"key "


def test_a_key_in_a_word_longer_than_the_hold_is_masked_whole_and_its_rest_dropped() -> None:
    import random

    body = bytes(random.Random(7).choices(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", k=200_000))
    key = b"sk-ant-" + body
    stream = b"start " + key + b" end\n"
    out = fed(StreamRedactor([]), stream, list(range(0, len(stream), 65536)))
    assert out.startswith(b"start " + MASK) and out.endswith(b" end\n")
    assert not pieces(body) & pieces(out)


def test_a_secret_across_the_long_line_cut_is_masked_wherever_the_cut_falls() -> None:
    line = (b"." + ENV_SECRET) * 8000 + b"\n"
    for step in (4096, 65536, 65537, 70001):
        out = fed(StreamRedactor([ENV_SECRET]), line, list(range(0, len(line), step)))
        assert out == (b"." + MASK) * 8000 + b"\n"


def test_words_that_end_in_sk_are_not_keys_but_a_coloured_key_is() -> None:
    prose = b"see task-add-user-authentication-flow and risk-assessment_for_the_new_module"
    assert redact(prose) == prose
    assert redact(b"\x1b[32msk-proj-" + b"x" * 30 + b"\x1b[0m") == b"\x1b[32m" + MASK + b"\x1b[0m"


# ---------------------------------------------------------------- the record files' net


def test_secret_values_include_the_form_json_writes() -> None:
    assert secret_values([{"MY_TOKEN": 'pa"ss\\word99'}]) == [b'pa\\"ss\\\\word99', b'pa"ss\\word99']


def test_redact_text_and_value_use_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_API_KEY", "Qm7vX2pL9sKe4TnWb8Rz")
    assert redact_text("use Qm7vX2pL9sKe4TnWb8Rz") == "use [REDACTED]"
    data = {"steps": [{"prompt": "deploy with Qm7vX2pL9sKe4TnWb8Rz", "n": 1}], "Qm7vX2pL9sKe4TnWb8Rz": None}
    assert redact_value(data) == {"steps": [{"prompt": "deploy with [REDACTED]", "n": 1}], "[REDACTED]": None}


def test_state_files_and_appended_records_are_written_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", 'Qm7vX2pL"9sKe4TnW')
    atomic_write_json(tmp_path / "status.json", {"lastMessage": 'token Qm7vX2pL"9sKe4TnW and ' + KEY.decode()})
    assert json.loads((tmp_path / "status.json").read_text())["lastMessage"] == "token [REDACTED] and [REDACTED]"
    append_text(tmp_path / "progress.txt", 'Learnings:\n  - Qm7vX2pL"9sKe4TnW\n')
    assert (tmp_path / "progress.txt").read_text() == "Learnings:\n  - [REDACTED]\n"


def test_a_signal_text_is_masked_before_it_is_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_API_KEY", "Qm7vX2pL9sKe4TnWb8Rz")
    text = clean("x" * (MAX_TEXT - 12) + " Qm7vX2pL9sKe4TnWb8Rz")
    assert not pieces(b"Qm7vX2pL9sKe4TnWb8Rz") & pieces(text.encode())
    assert clean("\x1b[2Jsk-proj-" + "y" * 30) == "[REDACTED]"

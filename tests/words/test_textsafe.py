"""strip_terminal_controls: agent output drawn on the terminal carries no escape sequences."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralphloop.words.textsafe import strip_terminal_controls

ESC = "\x1b"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # CSI
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x1b[1;32;40mbold\x1b[m", "bold"),
        ("a\x1b[2Jb\x1b[Hc", "abc"),
        ("\x1b[?25lhidden cursor\x1b[?25h", "hidden cursor"),
        ("\x1b[38;2;255;0;0mtrue colour\x1b[39m", "true colour"),
        # OSC, terminated by BEL or by ST (ESC \)
        ("\x1b]0;evil title\x07text", "text"),
        ("\x1b]8;;https://example.invalid\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("\x1b]52;c;ZXZpbA==\x07after", "after"),
        # 8-bit C1 CSI and OSC
        ("\x9b31mred\x9b0m", "red"),
        ("\x9d0;title\x9cafter", "after"),
        ("\x9d0;title\x07after", "after"),
        # DCS / APC strings
        ("\x1bPq#0;2;0;0;0\x1b\\after", "after"),
        ("\x1b_payload\x1b\\after", "after"),
        # bare two-byte and charset ESC sequences
        ("\x1bcreset", "reset"),
        ("\x1b7saved\x1b8", "saved"),
        ("\x1b(Bascii", "ascii"),
        ("\x1b=keypad\x1b>", "keypad"),
        ("trailing\x1b", "trailing"),
        # control characters
        ("bell\x07", "bell"),
        ("back\x08\x08space", "backspace"),
        ("nul\x00byte", "nulbyte"),
        ("del\x7fete", "delete"),
        ("progress 10%\rprogress 20%", "progress 10%progress 20%"),
        ("c1\x85\x90\x9fend", "c1end"),
    ],
)
def test_removes_escape_sequences_and_controls(text: str, expected: str) -> None:
    assert strip_terminal_controls(text) == expected


def test_keeps_newlines_tabs_and_unicode() -> None:
    text = "line one\n\tindented — ünïcödé ✓ 日本語 🎉\nlast"
    assert strip_terminal_controls(text) == text


def test_crlf_becomes_lf() -> None:
    assert strip_terminal_controls("a\r\nb\r\n") == "a\nb\n"


def test_colours_around_unicode_keep_the_text() -> None:
    assert strip_terminal_controls("\x1b[32m✓\x1b[0m passed\n") == "✓ passed\n"


# Text that is mostly escape-sequence material, so the strategies hit the patterns.
_pieces = st.sampled_from(
    ["\x1b", "[", "]", "P", "_", "\\", "\x07", "\x9b", "\x9c", "\x9d", "\r", "\n", "\t", "0", ";", "m", "a", "é", "🎉"]
)
escape_heavy = st.lists(_pieces | st.characters(max_codepoint=0xA0), max_size=40).map("".join)
any_text = st.text() | escape_heavy


def _is_control(char: str) -> bool:
    return unicodedata.category(char) == "Cc" and char not in "\n\t"


@given(any_text)
def test_never_leaves_an_esc_or_a_control_character(text: str) -> None:
    cleaned = strip_terminal_controls(text)
    assert ESC not in cleaned
    assert not any(_is_control(char) for char in cleaned)


@given(any_text)
def test_is_idempotent(text: str) -> None:
    once = strip_terminal_controls(text)
    assert strip_terminal_controls(once) == once


@given(st.text().filter(lambda text: not any(_is_control(char) or char == "\r" for char in text)))
def test_text_without_controls_is_unchanged(text: str) -> None:
    assert strip_terminal_controls(text) == text


@given(any_text)
def test_only_removes_never_adds(text: str) -> None:
    cleaned = strip_terminal_controls(text)
    remaining = iter(text)
    # `cleaned` is a subsequence of `text`.
    assert all(char in remaining for char in cleaned)

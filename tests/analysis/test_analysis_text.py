"""The agent's own words: echo removal, prose and fenced blocks, inline code spans (CommonMark pairing)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralphloop.analysis.text import (
    _SIGNAL_MARKS,
    MAX_FENCES,
    OwnText,
    Segment,
    _signal_lines,
    code_spans,
    normalise,
    own_text,
    split_fences,
)

PROMISE = "<promise>COMPLETE</promise>"


# ------------------------------------------------------------------ normalise


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a\r\nb\r\n", "a\nb\n"),
        ("a\rb\r", "a\nb\n"),
        ("a\r\r\nb", "a\n\nb"),
        ("\x1b[31mred\x1b[0m", "red"),
        ("<prom\x1b[0mise>", "<promise>"),
        ("\x1b]0;title\x07text", "text"),
        ("tab\tand\x00nul stay", "tab\tand\x00nul stay"),
        ("plain", "plain"),
    ],
)
def test_normalise(raw: str, expected: str) -> None:
    assert normalise(raw) == expected


# ------------------------------------------------------------------ own_text


def test_own_text_removes_a_verbatim_echo_of_the_prompt() -> None:
    own = own_text(
        "before the prompt text, long enough to be taken for an echo after",
        "  the prompt text, long enough to be taken for an echo\n",
    )
    assert isinstance(own, OwnText)
    assert own.prose == "before \n after"
    assert own.echo_removed is True
    assert own.fenced == []


def test_own_text_keeps_text_that_does_not_echo() -> None:
    own = own_text("something else", "  the prompt text\n")
    assert own.prose == "something else"
    assert own.echo_removed is False


def test_own_text_without_a_prompt() -> None:
    own = own_text("anything", "")
    assert (own.prose, own.echo_removed, own.prompt_lines) == ("anything", False, frozenset())


def test_own_text_echo_matches_across_line_endings() -> None:
    own = own_text(
        "line one of it\r\nline two of the whole prompt\r\nmy reply", "line one of it\nline two of the whole prompt\n"
    )
    assert own.echo_removed is True
    assert "line one" not in own.prose
    assert own.prose.endswith("my reply")


def test_own_text_removes_every_copy_of_the_echo() -> None:
    prompt = "Do S-1 and end with <promise>COMPLETE</promise> when done."
    own = own_text(f"{prompt}\nwork\n{prompt}\nmore", prompt)
    assert PROMISE not in own.prose
    assert own.prose.count("work") == 1


def test_own_text_prompt_lines_are_those_that_name_a_signal() -> None:
    prompt = (
        "Intro line.\n  End with <promise>COMPLETE</promise>.  \nUse <ralph>DONE id</ralph>.\n"
        "Old style: [DONE] or [FAIL]\n"
        "Print a RALPH_STATUS block.\nEXIT_SIGNAL: true when done\nSTATUS: COMPLETE\n"
    )
    own = own_text("reply", prompt)
    assert own.prompt_lines == frozenset(
        {
            "End with <promise>COMPLETE</promise>.",
            "Use <ralph>DONE id</ralph>.",
            "Old style: [DONE] or [FAIL]",
            "Print a RALPH_STATUS block.",
            "EXIT_SIGNAL: true when done",
        }
    )


def test_own_text_splits_out_fenced_blocks() -> None:
    text = "intro\n```py\ncode\n```\nafter"
    own = own_text(text)
    assert own.fenced == [Segment("code\n", text.index("code"), "py", True)]
    assert "code" not in own.prose
    assert own.prose.startswith("intro") and own.prose.endswith("after")
    assert own.position(own.prose.index("after")) == text.index("after")
    assert own.position(own.prose.index("intro")) == 0


def test_echoed_line_is_quoted_only_when_it_says_more_than_the_signal() -> None:
    prompt = f"End with {PROMISE} when done.\n{PROMISE}\n"
    reply = f"End with {PROMISE} when done.\n{PROMISE}\n"
    own = own_text(reply, prompt.replace("\n", "\n\n"))  # not a verbatim echo, so nothing is removed
    assert own.echo_removed is False
    first = own.prose.index(PROMISE)
    second = own.prose.index(PROMISE, first + 1)
    assert own.echoed_line(first, first + len(PROMISE)) is True
    assert own.echoed_line(second, second + len(PROMISE)) is False
    assert own.quoted(first, first + len(PROMISE)) is True
    assert own.quoted(second, second + len(PROMISE)) is False


# ------------------------------------------------------------------ split_fences


def test_fence_info_is_lower_cased_and_bounded() -> None:
    own = split_fences("```JSON  \n{}\n```\n```" + "x" * 300 + "\nbody\n```\n")
    assert [segment.info for segment in own.fenced] == ["json", "x" * 100]


def test_tilde_and_backtick_fences_close_only_with_their_own_kind() -> None:
    own = split_fences("~~~\na\n```\nb\n~~~\nprose\n")
    assert [segment.text for segment in own.fenced] == ["a\n```\nb\n"]
    assert own.prose.strip() == "prose"


def test_a_closing_fence_must_be_at_least_as_long_and_bare() -> None:
    own = split_fences("````\n```\ninner\n```\n````python\nstill\n````\nprose\n")
    assert [segment.text for segment in own.fenced] == ["```\ninner\n```\n````python\nstill\n"]
    assert own.prose.strip() == "prose"


def test_backticks_in_the_info_string_make_inline_code_not_a_fence() -> None:
    own = split_fences(f"```{PROMISE}``` and more\nprose\n")
    assert own.fenced == []
    assert PROMISE in own.prose


def test_tildes_may_have_backticks_in_their_info_string() -> None:
    own = split_fences("~~~ `x`\nbody\n~~~\n")
    assert [(segment.text, segment.info) for segment in own.fenced] == [("body\n", "`x`")]


def test_an_unclosed_fence_runs_to_the_end() -> None:
    own = split_fences('prose\n```json\n{"status": "continue"')
    assert own.fenced == [Segment('{"status": "continue"', 14, "json", closed=False)]
    assert own.prose.strip() == "prose"


def test_indented_fences_count() -> None:
    own = split_fences(f"1. rule:\n   ```\n   {PROMISE}\n   ```\n2. next\n")
    assert len(own.fenced) == 1
    assert PROMISE not in own.prose


def test_fenced_blocks_are_cut_with_a_paragraph_break_between_prose_pieces() -> None:
    own = split_fences("`open\n```\nx\n```\nclose`")
    assert own.prose == "`open\n\n\n\nclose`"
    assert code_spans(own.prose) == []


def test_beyond_max_fences_the_rest_is_one_quotation() -> None:
    text = "```\nx\n```\n" * (MAX_FENCES + 5) + PROMISE
    own = split_fences(text)
    assert len(own.fenced) == MAX_FENCES + 1
    assert own.fenced[-1].closed is False
    assert own.fenced[-1].text.endswith(PROMISE)
    assert PROMISE not in own.prose


# ------------------------------------------------------------------ code_spans and in_code


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("", []),
        ("no ticks", []),
        ("a `b` c", [(2, 5)]),
        ("`a` `b`", [(0, 3), (4, 7)]),
        ("``a`b``", [(0, 7)]),
        ("```a``b```", [(0, 10)]),
        ("` one `` two", []),
        ("` one `` two `", [(0, 14)]),
        ("`` one ` two ``", [(0, 15)]),
        ("`a\nb`", [(0, 5)]),
        ("`a\n\nb`", []),
        ("`a\n  \t\nb`", []),
        ("x ` y `` z `` w", [(6, 13)]),
    ],
)
def test_code_spans_pair_equal_runs_within_a_paragraph(text: str, spans: list[tuple[int, int]]) -> None:
    assert code_spans(text) == spans


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        (f"`{PROMISE}`", True),
        (f"``{PROMISE}``", True),
        (f"``` {PROMISE} ```", True),
        (f"`x` {PROMISE} `y`", False),
        (f"` {PROMISE} ``", False),
        (f"`a\n{PROMISE}\nb`", True),
        (f"`a\n\n{PROMISE}\nb`", False),
        (f"{PROMISE} `a`", False),
        (PROMISE, False),
    ],
)
def test_in_code(text: str, quoted: bool) -> None:
    start = text.index(PROMISE)
    assert split_fences(text).in_code(start, start + len(PROMISE)) is quoted


def test_code_spans_of_many_runs_stays_linear() -> None:
    text = "` `` ``` " * 100_000
    spans = code_spans(text)
    assert spans
    assert all(start < end for start, end in spans)
    assert all(first[1] <= second[0] for first, second in itertools.pairwise(spans))


def test_in_code_near_a_very_long_paragraph_still_finds_the_local_span() -> None:
    text = "word " * 10_000 + f"`{PROMISE}`" + " word" * 10_000
    start = text.index(PROMISE)
    assert split_fences(text).in_code(start, start + len(PROMISE)) is True


_PIECES = ("<promise>", "<ralph", "[DONE]", "[FAIL]", "RALPH_STATUS", "EXIT_SIGNAL", "MINE", "<prom", "ise>", "x")


@given(
    st.lists(st.sampled_from((*_PIECES, "\n", " ", "\r", "\t")), max_size=60).map("".join),
    st.lists(st.sampled_from(("MINE", "", "x\n", "<promise>DONE", "SIGNAL\nEX")), max_size=2).map(tuple),
)
def test_the_prompt_lines_that_name_a_signal_are_those_holding_a_mark(echo: str, marks: tuple[str, ...]) -> None:
    """The lines of an echoed prompt whose repetition says nothing: each line (stripped) that holds a signal's
    mark or a configured one, found mark by mark; a mark with a newline is in no line, an empty one in all."""
    every = (*_SIGNAL_MARKS, *marks)
    expected = frozenset(line.strip() for line in echo.split("\n") if any(mark in line for mark in every))
    assert _signal_lines(echo, marks) == expected

"""Markdown checkboxes: what is a task, what only looks like one, and the headings above each."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralphloop.tasks.checklist import Item, OpenBlock, parse_checklist, scan_checklist


def texts(markdown: str) -> list[str]:
    return [item.text for item in parse_checklist(markdown)]


# ---------------------------------------------------------------- what a checkbox is


def test_items_carry_line_state_text_and_indent() -> None:
    markdown = "intro\n\n- [ ] first\n- [x] second\n  - [X] third  \n"
    assert parse_checklist(markdown) == [
        Item(line=3, checked=False, text="first", heading="", headings=(), indent=0),
        Item(line=4, checked=True, text="second", heading="", headings=(), indent=0),
        Item(line=5, checked=True, text="third", heading="", headings=(), indent=2),
    ]


@pytest.mark.parametrize("marker", ["-", "*", "+", "1.", "1)", "12.", "3)"])
def test_every_list_marker_makes_a_checkbox(marker: str) -> None:
    assert texts(f"{marker} [ ] task\n{marker} [x] done\n") == ["task", "done"]


@pytest.mark.parametrize(
    "line",
    [
        "- [2026-01-29] Fixed X",
        "- [link](https://example.com)",
        "- [-] cancelled",
        "- [~] maybe",
        "- [  ] two spaces",
        "- [] nothing inside",
        "- [x]glued to the box",
        "-[ ] no space after the bullet",
        "[ ] no bullet at all",
        "- [ ]",
        "- [x]   ",
        "- [ ] <!-- only a comment -->",
        "Some prose with - [ ] in the middle",
        "1.5 [ ] not an ordered marker",
    ],
)
def test_lines_that_only_look_like_checkboxes(line: str) -> None:
    assert parse_checklist(f"# Plan\n\n{line}\n") == []


def test_nested_items_are_tasks_with_their_indent() -> None:
    markdown = "- [ ] parent\n  - [ ] child\n    1. [x] grandchild\n\t- [ ] tabbed\n"
    items = parse_checklist(markdown)
    assert [(item.text, item.indent) for item in items] == [
        ("parent", 0),
        ("child", 2),
        ("grandchild", 4),
        ("tabbed", 4),
    ]
    assert [item.checked for item in items] == [False, False, True, False]


def test_a_box_after_a_plain_bullet_list_and_prose_is_found() -> None:
    markdown = "- plain bullet\n- [ ] task\ncontinued on a lazy line\n- [ ] next\n"
    assert texts(markdown) == ["task", "next"]


def test_text_is_one_stripped_line() -> None:
    markdown = "- [ ]    spaced out   \n  more about it on the next line\n"
    assert texts(markdown) == ["spaced out"]


def test_block_quotes_hold_no_tasks() -> None:
    markdown = "> - [ ] quoted example\n>\n  > - [x] quoted too\n- [ ] real\n"
    assert texts(markdown) == ["real"]


# ---------------------------------------------------------------- code fences


def test_boxes_in_fences_are_not_tasks() -> None:
    markdown = "- [ ] before\n```markdown\n- [ ] in backticks\n```\n~~~\n- [ ] in tildes\n~~~\n- [ ] after\n"
    assert texts(markdown) == ["before", "after"]
    assert scan_checklist(markdown).unclosed is None


def test_a_fence_closes_only_with_its_own_character_at_least_as_long() -> None:
    markdown = (
        "````\n"
        "```\n"  # shorter: still inside
        "~~~~~\n"  # other character: still inside
        "- [ ] inside\n"
        "`````\n"  # longer: closes
        "- [ ] outside\n"
    )
    assert texts(markdown) == ["outside"]


def test_a_fence_indented_inside_a_list_item_hides_its_lines() -> None:
    markdown = "- [ ] task\n    ```sh\n    - [ ] shell output\n    ```\n- [ ] next\n"
    assert texts(markdown) == ["task", "next"]


def test_inline_triple_backticks_do_not_open_a_fence() -> None:
    markdown = "Run ```make``` first\n```code``` here\n- [ ] still a task\n"
    assert texts(markdown) == ["still a task"]
    assert scan_checklist(markdown).unclosed is None


def test_a_fence_left_open_hides_the_rest_and_is_reported() -> None:
    markdown = "- [ ] one\n\n~~~~\n- [ ] hidden\n"
    checklist = scan_checklist(markdown)
    assert [item.text for item in checklist.items] == ["one"]
    assert checklist.unclosed == OpenBlock(line=3, what="code fence ~~~~")


# ---------------------------------------------------------------- HTML comments


def test_commented_out_boxes_are_not_tasks() -> None:
    markdown = "<!-- - [ ] one-line -->\n<!--\n- [ ] multi-line\n-->\n- [ ] kept\n"
    assert texts(markdown) == ["kept"]


def test_a_comment_is_cut_out_of_the_item_text() -> None:
    assert texts("- [ ] ship it <!-- owner: ana --> today\n") == ["ship it  today"]


def test_a_comment_opened_after_a_box_hides_the_next_lines() -> None:
    markdown = "- [ ] visible <!-- notes:\n- [ ] hidden\n-->\n- [ ] back\n"
    assert texts(markdown) == ["visible", "back"]


def test_text_after_a_comment_ends_on_the_same_line_is_still_html() -> None:
    markdown = "<!--\nhidden\n--> - [ ] after the close\n- [ ] next line\n"
    assert texts(markdown) == ["next line"]


def test_the_shortest_comments_close_themselves() -> None:
    assert texts("<!-->\n- [ ] a\n<!--->\n- [ ] b\n") == ["a", "b"]


def test_comment_markers_in_code_spans_are_text() -> None:
    markdown = "- [ ] parse `<!--` markers\n- [ ] and ``a `<!--` b`` too\n- [ ] third\n"
    checklist = scan_checklist(markdown)
    assert [item.text for item in checklist.items] == ["parse `<!--` markers", "and ``a `<!--` b`` too", "third"]
    assert checklist.unclosed is None


def test_an_unmatched_backtick_does_not_protect_a_comment() -> None:
    assert texts("- [ ] a ` b <!-- c -->\n") == ["a ` b"]


def test_fences_inside_comments_and_comments_inside_fences_are_inert() -> None:
    markdown = "<!--\n```\n-->\n- [ ] a\n```\n<!--\n```\n- [ ] b\n"
    checklist = scan_checklist(markdown)
    assert [item.text for item in checklist.items] == ["a", "b"]
    assert checklist.unclosed is None


def test_a_comment_left_open_is_reported_where_it_starts() -> None:
    checklist = scan_checklist("- [ ] a\n\n<!-- todo later\n- [ ] b\n")
    assert [item.text for item in checklist.items] == ["a"]
    assert checklist.unclosed == OpenBlock(line=3, what="HTML comment <!--")


def test_a_comment_reopened_on_its_closing_line_is_reported_there() -> None:
    checklist = scan_checklist("<!-- a\nb --> <!-- c\n- [ ] hidden\n")
    assert checklist.items == ()
    assert checklist.unclosed == OpenBlock(line=2, what="HTML comment <!--")


# ---------------------------------------------------------------- line endings and BOM


def test_crlf_lone_cr_and_bom_keep_line_numbers() -> None:
    for markdown in ("\ufeff# T\r\n\r\n- [ ] a\r\n- [x] b\r\n", "# T\r\r- [ ] a\r- [x] b\r"):
        items = parse_checklist(markdown)
        assert [(item.line, item.text, item.checked, item.heading) for item in items] == [
            (3, "a", False, "T"),
            (4, "b", True, "T"),
        ]


def test_other_unicode_line_separators_do_not_split_lines() -> None:
    items = parse_checklist("- [ ] a\u2028b\x0cc\n- [ ] d\n")
    assert [(item.line, item.text) for item in items] == [(1, "a\u2028b\x0cc"), (2, "d")]


_SNIPPETS = [
    "",
    "# Heading",
    "## Sub heading",
    "Paragraph",
    "---",
    "===",
    "- [ ] open task",
    "- [x] done task",
    "  * [X] nested",
    "1. [ ] ordered",
    "- [2026-01-01] dated",
    "```",
    "~~~",
    "<!--",
    "-->",
    "<!-- c --> text",
    "> - [ ] quoted",
]


@given(st.lists(st.sampled_from(_SNIPPETS), max_size=25), st.booleans())
def test_any_line_ending_gives_the_same_checklist(lines: list[str], bom: bool) -> None:
    start = "\ufeff" if bom else ""
    unix = scan_checklist("\n".join(lines))
    assert scan_checklist(start + "\r\n".join(lines)) == unix
    assert scan_checklist(start + "\r".join(lines)) == unix


_BOX_LINE = re.compile(r"[ \t]*(?:[-*+]|\d+[.)])[ \t]+\[(?P<mark>[ xX])\][ \t]+\S")


@given(st.text(alphabet=st.sampled_from(list("-*+1.)[]xX #=~`>\t\r\n abc")), max_size=200))
def test_items_always_point_at_a_checkbox_line(text: str) -> None:
    lines = re.split(r"\r\n|\r|\n", text)
    for item in parse_checklist(text):
        box = _BOX_LINE.match(lines[item.line - 1])
        assert box is not None
        assert item.checked == (box.group("mark") != " ")
        assert item.text and item.text == item.text.strip()


# ---------------------------------------------------------------- headings


def test_atx_headings_build_a_path_by_level() -> None:
    markdown = "# Plan\n- [ ] a\n## Phase 1 ##\n- [ ] b\n### Details\n- [ ] c\n## Phase 2\n- [ ] d\n# Other\n- [ ] e\n"
    got = [(item.text, item.heading, item.headings) for item in parse_checklist(markdown)]
    assert got == [
        ("a", "Plan", ("Plan",)),
        ("b", "Phase 1", ("Plan", "Phase 1")),
        ("c", "Details", ("Plan", "Phase 1", "Details")),
        ("d", "Phase 2", ("Plan", "Phase 2")),
        ("e", "Other", ("Other",)),
    ]


def test_a_skipped_level_nests_under_the_last_shallower_heading() -> None:
    items = parse_checklist("## Two\n#### Four\n- [ ] a\n### Three\n- [ ] b\n")
    assert [item.headings for item in items] == [("Two", "Four"), ("Two", "Three")]


@pytest.mark.parametrize("line", ["#hashtag", "####### seven", "    # indented code", "\\# escaped"])
def test_lines_that_are_not_atx_headings(line: str) -> None:
    items = parse_checklist(f"# Top\n{line}\n- [ ] a\n")
    assert items[0].headings == ("Top",)


def test_setext_headings_set_the_path() -> None:
    markdown = "Plan\n====\n- [ ] a\n\nPhase one\nstill the title\n---\n- [ ] b\n"
    items = parse_checklist(markdown)
    assert [item.headings for item in items] == [("Plan",), ("Plan", "Phase one still the title")]


def test_dashes_after_a_blank_line_are_a_rule_not_a_heading() -> None:
    markdown = "# Plan\nSome prose\n\n---\n- [ ] a\n"
    assert parse_checklist(markdown)[0].headings == ("Plan",)


def test_dashes_after_a_list_item_are_a_rule_not_a_heading() -> None:
    markdown = "# Plan\n- [ ] a\n---\n- [ ] b\n- [ ] c\nlazy continuation\n===\n- [ ] d\n"
    assert [item.headings for item in parse_checklist(markdown)] == [("Plan",)] * 4


def test_dashes_after_a_fence_or_comment_are_a_rule() -> None:
    markdown = "# Plan\n```\ncode\n```\n---\n<!-- note -->\n---\n- [ ] a\n"
    assert parse_checklist(markdown)[0].headings == ("Plan",)


def test_dashes_after_a_quote_are_a_rule() -> None:
    assert parse_checklist("# Plan\n> quoted\n---\n- [ ] a\n")[0].headings == ("Plan",)


def test_headings_in_code_comments_and_quotes_do_not_count() -> None:
    markdown = "# Real\n```\n# Fake\n```\n<!--\n# Hidden\n-->\n> # Quoted\n- [ ] a\n"
    assert parse_checklist(markdown)[0].headings == ("Real",)


def test_an_empty_heading_resets_its_level() -> None:
    items = parse_checklist("# Plan\n## Optional\n##\n- [ ] a\n")
    assert items[0].headings == ("Plan", "")
    assert items[0].heading == ""


# ---------------------------------------------------------------- checkboxes in a table


def test_a_table_row_with_a_checkbox_cell_is_a_task() -> None:
    markdown = (
        "## Story 1-1\n"
        "\n"
        "| # | Task | Status |\n"
        "|---|------|:------:|\n"
        "| 1.1 | Run `/bmad-bmm-create-story` | [ ] |\n"
        "| 1.2 | Review it | [x] |\n"
        "| 1.3 | no box here | todo |\n"
        "\n"
        "| [X] | first column |\n"
    )
    assert parse_checklist(markdown) == [
        Item(5, False, "1.1 | Run `/bmad-bmm-create-story`", "Story 1-1", ("Story 1-1",), 0, in_table=True),
        Item(6, True, "1.2 | Review it", "Story 1-1", ("Story 1-1",), 0, in_table=True),
    ]  # the last line has no header and delimiter above it: not a table


@pytest.mark.parametrize(
    "table",
    [
        "| Sign | Meaning |\n|------|------|\n| `[ ]` | to do |\n| `[x]` | done |\n",  # a legend: boxes in code
        "| Task | Status |\n|------|------|\n| [ ] |  |\n",  # a box without text
        "| Task | [ ] |\n| x | y |\n",  # no delimiter row: not a table
        "| a | b |\n|---|---|---|\n| task | [ ] |\n",  # the delimiter's cells do not match the header's
        "```\n| a | b |\n|---|---|\n| task | [ ] |\n```\n",  # in a fence
    ],
)
def test_tables_without_a_task(table: str) -> None:
    assert parse_checklist(table) == []


def test_a_row_with_two_boxes_is_done_when_both_are_ticked_and_a_blank_line_ends_the_table() -> None:
    markdown = "| Task | Dev | Review |\n|---|---|---|\n| A | [x] | [ ] |\n| B | [x] | [X] |\n\n- [ ] after\n"
    assert [(item.text, item.checked, item.in_table) for item in parse_checklist(markdown)] == [
        ("A", False, True),
        ("B", True, True),
        ("after", False, False),
    ]


def test_an_escaped_pipe_stays_in_its_cell() -> None:
    markdown = "Task | Done\n--- | ---\n`a \\| b` | [ ]\n"
    assert texts(markdown) == ["`a \\| b`"]


# ---------------------------------------------------------------- a legend is not a task


@pytest.mark.parametrize(
    "legend",
    [
        # under a Legend heading, whatever the rows say (a table or a list)
        "## Legend\n\n| Box | Meaning |\n|---|---|\n| [ ] | not started |\n| [x] | done |\n",
        "## Status legend\n\n| Box | Meaning | Note |\n|---|---|---|\n| [ ] | Not started | nobody took it |\n",
        "### Key\n\n- [ ] not started\n- [x] done\n",
        # anywhere, a row whose only words say a status
        "## Tasks\n\n| Mark | Meaning |\n|---|---|\n| [ ] | = Not started |\n| [x] | **Done** ✅ |\n",
        "| State | |\n|---|---|\n| [ ] | To do / in progress |\n| [X] | Complete (verified) |\n| [ ] | Blocked |\n",
        "| [ ] | N/A |\n|---|---|\n| [ ] | won't do |\n| [ ] | On hold |\n",
    ],
)
def test_a_legend_is_no_task(legend: str) -> None:
    assert parse_checklist(legend + "\n## Work\n\n- [x] Add login\n") == [
        Item(line=legend.count("\n") + 4, checked=True, text="Add login", heading="Work", headings=("Work",), indent=0)
    ]


def test_a_row_with_words_besides_a_status_is_a_task_and_a_heading_under_the_legend_is_work() -> None:
    markdown = (
        "| Task | Status | Done |\n|---|---|---|\n| Deploy | blocked | [ ] |\n| Review | | [ ] |\n| Draft | [ ] | |\n"
        "\n## Legend\n\n### Phase 1\n\n- [ ] Add login\n\n| Step | Done |\n|---|---|\n| Ship it | [ ] |\n"
    )
    assert texts(markdown) == ["Deploy | blocked", "Review", "Draft", "Add login", "Ship it"]


@pytest.mark.parametrize("heading", ["Map legend", "Legend of Zelda port", "Key Principles", "API key rotation"])
def test_a_heading_that_only_holds_the_word_is_work(heading: str) -> None:
    assert texts(f"## {heading}\n\n- [ ] Add it\n\n| Step | Done |\n|---|---|\n| Ship it | [ ] |\n") == [
        "Add it",
        "Ship it",
    ]

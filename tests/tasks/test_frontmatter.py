"""tasks/frontmatter.py: splitting the frontmatter off, reading it with file lines, rewriting one field."""

from __future__ import annotations

import pytest

from ralphloop.tasks.frontmatter import Field, opens_frontmatter, parse_mapping, set_field, split_frontmatter

PATH = "specs/epic-1/story-1.1-x.md"

SPEC = """---
status: pending   # ralph sets this
priority: high
depends_on:
  - 1.10
  - "2.1"
frs: FR-1
empty:
---
# Title

status: pending (the body is not the frontmatter)
"""


def fields_of(text: str) -> dict[str, Field]:
    fm = split_frontmatter(text)
    assert fm is not None
    fields, problems = parse_mapping(fm, PATH)
    assert problems == []
    return fields


# ---------------------------------------------------------------- split_frontmatter


def test_split_gives_yaml_its_first_line_and_the_body() -> None:
    fm = split_frontmatter(SPEC)
    assert fm is not None
    assert fm.yaml.startswith("status: pending")
    assert fm.yaml.endswith("empty:\n")
    assert fm.line == 2
    assert fm.body == "# Title\n\nstatus: pending (the body is not the frontmatter)\n"
    assert SPEC[fm.start : fm.end] == fm.yaml


def test_split_handles_crlf_and_a_byte_order_mark() -> None:
    text = "\ufeff---\r\nstatus: done\r\n---\r\n# T\r\n"
    fm = split_frontmatter(text)
    assert fm is not None
    assert fm.yaml == "status: done\r\n"
    assert fm.body == "# T\r\n"
    assert fm.line == 2


def test_split_accepts_dots_as_the_closing_fence_and_trailing_blanks() -> None:
    fm = split_frontmatter("---  \na: 1\n...\nbody")
    assert fm is not None
    assert (fm.yaml, fm.body) == ("a: 1\n", "body")


def test_empty_frontmatter_is_an_empty_mapping() -> None:
    fm = split_frontmatter("---\n---\n# T\n")
    assert fm is not None
    assert fm.yaml == ""
    assert parse_mapping(fm, PATH) == ({}, [])


@pytest.mark.parametrize("text", ["# Title\n---\na: 1\n---\n", "", "---", "  ---\na: 1\n---\n", "----\na: 1\n---\n"])
def test_no_frontmatter(text: str) -> None:
    assert split_frontmatter(text) is None


def test_an_unclosed_frontmatter_is_none_but_is_seen_as_opened() -> None:
    text = "---\nstatus: done\n# Title\n"
    assert split_frontmatter(text) is None
    assert opens_frontmatter(text)
    assert not opens_frontmatter("# Title\n")


# ---------------------------------------------------------------- parse_mapping


def test_every_scalar_stays_the_string_written() -> None:
    fields = fields_of("---\nid: 1.10\nn: 5\nflag: true\nstatus: done\ndeps: [1.10, 1.2]\nwhen: 2026-01-30\n---\n")
    assert fields["id"].value == "1.10"
    assert fields["n"].value == "5"
    assert fields["flag"].value == "true"
    assert fields["status"].value == "done"
    assert fields["deps"].value == ["1.10", "1.2"]
    assert fields["when"].value == "2026-01-30"


def test_plain_null_forms_are_none_but_quoted_ones_are_strings() -> None:
    fields = fields_of('---\na:\nb: ~\nc: null\nd: "null"\ne: ""\n---\n')
    assert [fields[key].value for key in "abcde"] == [None, None, None, "null", ""]


def test_fields_carry_the_file_line_of_their_value() -> None:
    fields = fields_of(SPEC)
    assert fields["status"].line == 2
    assert fields["priority"].line == 3
    assert fields["depends_on"].key_line == 4
    assert fields["depends_on"].value == ["1.10", "2.1"]
    assert fields["depends_on"].item_lines == (5, 6)
    assert fields["frs"].line == 7
    assert fields["empty"] == Field(None, 8, 8)


def test_lines_count_a_crlf_as_one_line_break() -> None:
    fields = fields_of("---\r\na: x\r\nb:\r\n  - y\r\n---\r\n")
    assert fields["a"].line == 2
    assert fields["b"].item_lines == (4,)


def test_nested_values_are_kept() -> None:
    fields = fields_of("---\nmeta:\n  owner: ana\n  tags: [a, b]\n---\n")
    assert fields["meta"].value == {"owner": "ana", "tags": ["a", "b"]}


def test_malformed_yaml_is_a_problem_at_its_file_line() -> None:
    fm = split_frontmatter("---\nstatus: pending\npriority: high\ndepends_on: [1.1\nfrs: x\n---\n")
    assert fm is not None
    fields, problems = parse_mapping(fm, PATH)
    assert fields == {}
    assert len(problems) == 1
    assert problems[0].path == PATH
    assert problems[0].message.startswith("invalid YAML in the frontmatter")
    assert problems[0].line == 5  # where the parser noticed: the unclosed [ runs into the next key
    assert "at line 4" in problems[0].message  # where the [ was opened


def test_a_bad_indent_is_reported_at_its_line() -> None:
    fm = split_frontmatter("---\na: 1\nb: 2\n c: 3\n---\n")
    assert fm is not None
    _, problems = parse_mapping(fm, PATH)
    assert [problem.line for problem in problems] == [4]
    assert str(problems[0]).startswith(f"{PATH}:4: invalid YAML")


def test_a_top_level_that_is_not_a_mapping_is_a_problem() -> None:
    fm = split_frontmatter("---\n- a\n- b\n---\n")
    assert fm is not None
    fields, problems = parse_mapping(fm, PATH)
    assert fields == {}
    assert [(problem.line, "not a mapping" in problem.message) for problem in problems] == [(2, True)]


def test_a_key_given_twice_is_a_problem_and_the_last_counts() -> None:
    fm = split_frontmatter("---\nstatus: pending\nx: 1\nstatus: done\n---\n")
    assert fm is not None
    fields, problems = parse_mapping(fm, PATH)
    assert fields["status"].value == "done"
    assert [(problem.line, problem.message) for problem in problems] == [(4, "status is given twice (lines 2 and 4)")]


def test_an_alias_bomb_is_refused() -> None:
    lines = ["---", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, 8)]
    fm = split_frontmatter("\n".join([*lines, "---", ""]))
    assert fm is not None
    fields, problems = parse_mapping(fm, PATH)
    assert fields == {}
    assert "more than" in problems[0].message


def test_deep_nesting_is_refused_not_a_crash() -> None:
    fm = split_frontmatter("---\na: " + "[" * 3000 + "]" * 3000 + "\n---\n")
    assert fm is not None
    fields, problems = parse_mapping(fm, PATH)
    assert fields == {}
    assert "deep" in problems[0].message


# ---------------------------------------------------------------- set_field


def test_set_field_changes_only_the_value() -> None:
    out = set_field(SPEC, "status", "done")
    assert out == SPEC.replace("status: pending   #", "status: done   #", 1)
    assert out.endswith("status: pending (the body is not the frontmatter)\n")
    assert fields_of(out)["status"].value == "done"


def test_set_field_keeps_crlf_and_the_byte_order_mark() -> None:
    text = "\ufeff---\r\ntitle: \"Ünïcode\"\r\nstatus: 'in progress' # x\r\n---\r\n# T\r\n"
    out = set_field(text, "status", "done")
    assert out == '\ufeff---\r\ntitle: "Ünïcode"\r\nstatus: done # x\r\n---\r\n# T\r\n'


def test_set_field_fills_an_empty_value() -> None:
    assert set_field("---\nstatus:\nx: 1\n---\n", "status", "done") == "---\nstatus: done\nx: 1\n---\n"


def test_set_field_adds_an_absent_key_as_the_last_line() -> None:
    assert set_field("---\na: 1\n---\nbody\n", "status", "done") == "---\na: 1\nstatus: done\n---\nbody\n"
    assert set_field("---\r\na: 1\r\n---\r\n", "status", "done") == "---\r\na: 1\r\nstatus: done\r\n---\r\n"
    assert set_field("---\n---\n", "status", "done") == "---\nstatus: done\n---\n"


def test_set_field_ignores_nested_keys_of_the_same_name() -> None:
    text = "---\nmeta:\n  status: pending\nstatus: review\n---\n"
    assert set_field(text, "status", "done") == "---\nmeta:\n  status: pending\nstatus: done\n---\n"


def test_set_field_quotes_what_would_not_read_back_as_the_same_string() -> None:
    assert 'note: "a: b # c"\n' in set_field("---\nnote: x\n---\n", "note", "a: b # c")
    assert 'flag: "yes"\n' in set_field("---\nflag: x\n---\n", "flag", "yes")
    for value in ("a: b # c", "yes", "null", "~", "line\nbreak", "  padded", "'quoted'"):
        assert fields_of(set_field("---\nv: x\n---\n", "v", value))["v"].value == value


@pytest.mark.parametrize(
    "text",
    [
        "# no frontmatter\nstatus: pending\n",
        "---\nstatus: [a, b]\n---\n",
        "---\nstatus: |\n  pending\n---\n",
        "---\na: &s pending\nstatus: *s\n---\n",
        "---\nstatus: [broken\n---\n",
        "---\n- a\n---\n",
    ],
)
def test_set_field_refuses_what_it_cannot_rewrite_in_place(text: str) -> None:
    with pytest.raises(ValueError):
        set_field(text, "status", "done")

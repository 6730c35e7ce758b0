"""tasks/spec_md/: a seed 003 spec.md becomes prd.json data, deterministically, with problems by line."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ralphloop.core.errors import RalphError
from ralphloop.tasks.prd_json import parse_prd
from ralphloop.tasks.problems import Problem
from ralphloop.tasks.spec_md.parse import parse_spec, spec_problems
from ralphloop.tasks.spec_md.prd import merge_passes, render_prd, spec_to_prd

LABEL = ".ralph/user-auth/spec.md"

SPEC = """\
---
feature: user-auth
branch: feature/user-auth
created: 2024-01-15T10:30:00Z
---

# User Authentication

## Problem Statement
Anyone can open every page today,
so private data is exposed.

Only the home page should be public.

## Success Criteria
- [ ] Private pages need a login

## User Stories

### STORY-001: Login endpoint
**As a** registered user
**I want to** log in with my email and password
**So that** I can reach my private pages

**Acceptance Criteria:**
- [ ] POST /api/login returns 200 and a session cookie for valid credentials
- [ ] POST /api/login returns 401 for a wrong password
- [ ] Typecheck passes
- [ ] Unit tests pass

**Technical Notes:**
- Reuse the session middleware in app/session.py
- Hash passwords with bcrypt

### STORY-002: Logout button
**As an** signed-in user
**I want** to log out from any page
**So that** nobody else can use my session.

**Acceptance Criteria:**
- [x] The header shows a Logout button when signed in
- [ ] Clicking it clears the session cookie
  and redirects to the home page
- [ ] Typecheck passes
- [ ] Unit tests pass
- [ ] Verify in browser: the button disappears after logout

## Out of Scope
- OAuth providers

## Open Questions
- None
"""

EXPECTED: dict[str, Any] = {
    "feature": "user-auth",
    "branchName": "feature/user-auth",
    "description": "Anyone can open every page today, so private data is exposed. Only the home page should be public.",
    "createdAt": "2024-01-15T10:30:00Z",
    "userStories": [
        {
            "id": "STORY-001",
            "title": "Login endpoint",
            "description": "As a registered user, I want to log in with my email and password, "
            "so that I can reach my private pages.",
            "acceptanceCriteria": [
                "POST /api/login returns 200 and a session cookie for valid credentials",
                "POST /api/login returns 401 for a wrong password",
                "Typecheck passes",
                "Unit tests pass",
            ],
            "priority": 1,
            "passes": False,
            "notes": "Reuse the session middleware in app/session.py; Hash passwords with bcrypt",
        },
        {
            "id": "STORY-002",
            "title": "Logout button",
            "description": "As an signed-in user, I want to log out from any page, "
            "so that nobody else can use my session.",
            "acceptanceCriteria": [
                "The header shows a Logout button when signed in",
                "Clicking it clears the session cookie and redirects to the home page",
                "Typecheck passes",
                "Unit tests pass",
                "Verify in browser: the button disappears after logout",
            ],
            "priority": 2,
            "passes": False,
            "notes": "",
        },
    ],
}


def problems_of(text: str) -> list[tuple[int, str]]:
    return [(problem.line, problem.message) for problem in spec_problems(text, LABEL)]


def with_stories(stories: str) -> str:
    """A valid spec head (frontmatter on lines 1-5, `## User Stories` on line 7) followed by `stories`."""
    head = "---\nfeature: f\nbranch: feature/f\ncreated: 2024-01-15T10:30:00Z\n---\n\n## User Stories\n"
    return head + stories


ONE_STORY = "### STORY-001: Only\n**Acceptance Criteria:**\n- [ ] Typecheck passes\n"


# ---------------------------------------------------------------- the full conversion


def test_full_seed_spec_becomes_the_expected_prd() -> None:
    data = spec_to_prd(SPEC, LABEL)
    assert data == EXPECTED
    assert list(data) == ["feature", "branchName", "description", "createdAt", "userStories"]
    assert list(data["userStories"][0]) == [
        "id",
        "title",
        "description",
        "acceptanceCriteria",
        "priority",
        "passes",
        "notes",
    ]


def test_output_passes_the_prd_json_validator() -> None:
    prd = parse_prd(render_prd(spec_to_prd(SPEC, LABEL)).encode("utf-8"), ".ralph/user-auth/prd.json")
    assert [story.id for story in prd.user_stories] == ["STORY-001", "STORY-002"]
    assert [story.priority for story in prd.user_stories] == [1, 2]
    assert prd.created_at == "2024-01-15T10:30:00Z"
    assert prd.branch_name == "feature/user-auth"


def test_same_input_gives_byte_identical_output() -> None:
    first = render_prd(spec_to_prd(SPEC, LABEL))
    assert all(render_prd(spec_to_prd(SPEC, LABEL)) == first for _ in range(5))
    assert first.endswith("}\n")
    assert first == json.dumps(EXPECTED, indent=2, ensure_ascii=False) + "\n"


def test_render_keeps_non_ascii_readable() -> None:
    text = render_prd({"feature": "café"})
    assert text == '{\n  "feature": "café"\n}\n'


def test_created_is_kept_exactly_as_written() -> None:
    # A YAML loader would turn these into datetimes/dates and print them differently.
    for written in ("2024-01-15T10:30:00Z", "2024-01-15 10:30:00+02:00", "2024-01-15", "'2024-01-15T10:30:00.500Z'"):
        text = SPEC.replace("created: 2024-01-15T10:30:00Z", f"created: {written}")
        assert spec_to_prd(text, LABEL)["createdAt"] == written.strip("'")


def test_description_falls_back_to_the_title() -> None:
    text = SPEC.replace("## Problem Statement\n", "## Background\n")
    assert spec_to_prd(text, LABEL)["description"] == "User Authentication"


# ---------------------------------------------------------------- tolerance


def test_crlf_and_bom_give_the_same_prd_and_line_numbers() -> None:
    crlf = "\ufeff" + SPEC.replace("\n", "\r\n")
    assert spec_to_prd(crlf, LABEL) == EXPECTED
    broken = crlf.replace("- [ ] ", "- ").replace("- [x] ", "- ").replace("**Acceptance Criteria:**", "Criteria")
    assert [line for line, _ in problems_of(broken)] == [20, 35]


def test_story_heading_variants_and_label_spellings() -> None:
    text = with_stories(
        "### US-2 - Export as CSV\n"
        "**As an** analyst\n"
        "**I want:** to export the table\n"
        "**So that**: I can chart it\n"
        "\n"
        "**Acceptance Criteria**:\n"
        "\n"
        "- [ ] The file has a header row\n"
        "* [X] Typecheck passes\n"
        "**Technical Notes**\n"
        "- Use csv.writer\n"
        "### AUTH-12 — Rate limit ###\n"
        "#### Acceptance Criteria\n"
        "1. More than 5 attempts a minute return 429\n"
    )
    stories = spec_to_prd(text, LABEL)["userStories"]
    assert [(story["id"], story["title"]) for story in stories] == [
        ("US-2", "Export as CSV"),
        ("AUTH-12", "Rate limit"),
    ]
    assert stories[0]["description"] == "As an analyst, I want to export the table, so that I can chart it."
    assert stories[0]["acceptanceCriteria"] == ["The file has a header row", "Typecheck passes"]
    assert stories[0]["notes"] == "Use csv.writer"
    assert stories[1]["acceptanceCriteria"] == ["More than 5 attempts a minute return 429"]
    assert stories[1]["description"] == ""


def test_partial_user_story_and_plain_paragraph_descriptions() -> None:
    text = with_stories(
        "### STORY-001: Goal only\n**I want to** see totals\n\n**Acceptance Criteria:**\n- [ ] Totals shown\n"
        "### STORY-002: Plain text\nShow the totals\nunder the table.\n\n- [ ] Totals shown\n"
    )
    stories = spec_to_prd(text, LABEL)["userStories"]
    assert stories[0]["description"] == "I want to see totals."
    # Without the bold labels the story's own text is the description, and bare checkboxes still count.
    assert stories[1]["description"] == "Show the totals under the table."
    assert stories[1]["acceptanceCriteria"] == ["Totals shown"]


def test_fenced_code_is_not_read_for_headings_or_criteria() -> None:
    text = with_stories(
        "### STORY-001: Real\n"
        "**Acceptance Criteria:**\n"
        "- [ ] Real criterion\n"
        "```markdown\n"
        "### STORY-999: Inside a fence\n"
        "- [ ] Not a criterion\n"
        "## Out of Scope\n"
        "```\n"
        "- [ ] After the fence\n"
        "~~~~\n"
        "~~~\n"
        "### NOPE\n"
        "~~~~\n"
    )
    stories = spec_to_prd(text, LABEL)["userStories"]
    assert [story["id"] for story in stories] == ["STORY-001"]
    assert stories[0]["acceptanceCriteria"] == ["Real criterion", "After the fence"]


def test_stories_outside_the_user_stories_section_are_ignored() -> None:
    text = with_stories(ONE_STORY + "\n## Out of Scope\n### STORY-050: Later\n- [ ] Not now\n")
    assert [story["id"] for story in spec_to_prd(text, LABEL)["userStories"]] == ["STORY-001"]


def test_parse_spec_keeps_the_story_lines() -> None:
    spec, problems = parse_spec(SPEC, LABEL)
    assert problems == []
    assert [(story.id, story.line) for story in spec.stories] == [("STORY-001", 20), ("STORY-002", 35)]
    assert spec.title == "User Authentication"


# ---------------------------------------------------------------- problems, each with its line


def test_no_frontmatter() -> None:
    text = "# Title\n\n## User Stories\n" + ONE_STORY
    assert problems_of(text) == [
        (1, "no frontmatter: begin the file with '---', the feature:, branch: and created: lines, then '---'")
    ]
    assert problems_of("") == [
        (1, "no frontmatter: begin the file with '---', the feature:, branch: and created: lines, then '---'"),
        (0, "no '## User Stories' section"),
    ]


def test_unclosed_frontmatter() -> None:
    assert problems_of("---\nfeature: f\n")[0] == (
        1,
        "the frontmatter is not closed: add a '---' line after its last field",
    )


def test_malformed_yaml_names_its_line() -> None:
    text = with_stories(ONE_STORY).replace("branch: feature/f\n", "branch: feature/f\n\tbad: [\n")
    # The reason is PyYAML's own words (they differ between its C and Python parsers); the line is ours.
    [(line, message)] = problems_of(text)
    assert line == 4
    assert message.startswith("the frontmatter is not valid YAML: ")
    assert "tab" in message


def test_frontmatter_that_is_not_a_mapping() -> None:
    text = "---\n- a\n- b\n---\n## User Stories\n" + ONE_STORY
    assert problems_of(text) == [(1, "the frontmatter must be 'key: value' lines")]


@pytest.mark.parametrize(
    ("field", "replacement", "expected"),
    [
        ("feature: f\n", "", (1, "the frontmatter has no 'feature:' field")),
        ("branch: feature/f\n", "", (1, "the frontmatter has no 'branch:' field")),
        ("created: 2024-01-15T10:30:00Z\n", "", (1, "the frontmatter has no 'created:' field")),
        ("feature: f\n", "feature:\n", (2, "frontmatter field 'feature' is empty")),
        ("branch: feature/f\n", "branch: ''\n", (3, "frontmatter field 'branch' is empty")),
        ("created: 2024-01-15T10:30:00Z\n", "created: ~\n", (4, "frontmatter field 'created' is empty")),
        ("feature: f\n", "feature: [a, b]\n", (2, "frontmatter field 'feature' must be a single value")),
    ],
)
def test_required_frontmatter_fields(field: str, replacement: str, expected: tuple[int, str]) -> None:
    text = with_stories(ONE_STORY)
    assert field in text
    assert problems_of(text.replace(field, replacement)) == [expected]


def test_frontmatter_field_given_twice() -> None:
    text = with_stories(ONE_STORY).replace("branch: feature/f\n", "branch: feature/f\nbranch: other\n")
    assert problems_of(text) == [(4, "frontmatter field 'branch' is given twice (lines 3 and 4)")]


def test_no_user_stories_section() -> None:
    text = with_stories("").replace("## User Stories\n", "## Stories To Do\n" + ONE_STORY)
    assert problems_of(text) == [(0, "no '## User Stories' section")]


def test_user_stories_section_without_stories() -> None:
    assert problems_of(with_stories("Nothing yet.\n")) == [
        (7, "'## User Stories' has no story: add '### STORY-001: Title' sections")
    ]


def test_a_heading_that_is_not_a_story() -> None:
    text = with_stories(ONE_STORY + "### Story 2: lowercase id\n- [ ] x\n")
    assert problems_of(text) == [
        (
            11,
            "'### Story 2: lowercase id' is not a story heading: write '### STORY-001: Title' "
            "(an id like STORY-001 or US-1)",
        )
    ]


def test_duplicate_story_ids_name_both_lines() -> None:
    text = with_stories(ONE_STORY + "\n" + ONE_STORY)
    assert problems_of(text) == [(12, "story id STORY-001 is used twice (lines 8 and 12)")]


def test_story_without_acceptance_criteria() -> None:
    text = with_stories("### STORY-001: Empty\n**As a** user\n\n**Technical Notes:**\n- [ ] a note\n- [ ]\n")
    assert problems_of(text) == [
        (8, "story STORY-001 has no acceptance criteria: add '- [ ] ...' lines under '**Acceptance Criteria:**'")
    ]


def test_story_with_empty_title() -> None:
    text = with_stories(ONE_STORY.replace("STORY-001: Only", "STORY-001:"))
    assert problems_of(text) == [(8, "story STORY-001 has no title")]


def test_all_problems_are_listed_in_line_order() -> None:
    text = with_stories("### STORY-001:\n### STORY-001: Again\n- [ ] ok\n").replace("feature: f\n", "")
    assert problems_of(text) == [
        (1, "the frontmatter has no 'feature:' field"),
        (7, "story STORY-001 has no title"),
        (
            7,
            "story STORY-001 has no acceptance criteria: add '- [ ] ...' lines under '**Acceptance Criteria:**'",
        ),
        (8, "story id STORY-001 is used twice (lines 7 and 8)"),
    ]
    assert all(isinstance(problem, Problem) and problem.path == LABEL for problem in spec_problems(text, LABEL))


def test_spec_to_prd_raises_the_first_problem() -> None:
    text = with_stories("### STORY-001:\n- [ ] x\n### STORY-001: Again\n- [ ] y\n")
    with pytest.raises(RalphError) as caught:
        spec_to_prd(text, LABEL)
    assert str(caught.value) == (
        f"{LABEL}:8: story STORY-001 has no title (and 1 more problem; all of them: ralph validate -f .ralph/user-auth)"
    )
    with pytest.raises(RalphError) as caught:  # not a workspace's spec.md: `ralph validate` would not read it
        spec_to_prd(text, "notes/draft.md")
    assert str(caught.value).endswith("(and 1 more problem)")


# ---------------------------------------------------------------- merge_passes


def test_merge_keeps_passes_and_notes_of_unchanged_ids() -> None:
    new = spec_to_prd(SPEC, LABEL)
    old = {
        "feature": "user-auth",
        "userStories": [
            {"id": "STORY-001", "title": "Old title", "passes": True, "notes": "done in abc123", "priority": 9},
            {"id": "STORY-002", "title": "Logout button", "passes": False, "notes": "  "},
            {"id": "STORY-003", "title": "Removed from the spec", "passes": True, "notes": "gone"},
        ],
    }
    merged = merge_passes(new, old)
    first, second = merged["userStories"]
    assert first == {**EXPECTED["userStories"][0], "passes": True, "notes": "done in abc123"}
    assert second == EXPECTED["userStories"][1]  # blank old notes do not replace anything
    assert [story["id"] for story in merged["userStories"]] == ["STORY-001", "STORY-002"]
    assert new == EXPECTED  # the input is not changed
    assert list(merged) == list(EXPECTED)


def test_merge_without_or_with_malformed_old_prd_changes_nothing() -> None:
    new = spec_to_prd(SPEC, LABEL)
    assert merge_passes(new, None) == EXPECTED
    assert merge_passes(new, {"userStories": "not a list"}) == EXPECTED
    assert merge_passes(new, {"userStories": [None, {"id": 1}, {"id": "STORY-001", "passes": "yes"}]}) == EXPECTED


def test_merged_prd_still_passes_the_validator() -> None:
    old = {"userStories": [{"id": "STORY-002", "passes": True, "notes": "n"}]}
    merged = merge_passes(spec_to_prd(SPEC, LABEL), old)
    prd = parse_prd(render_prd(merged).encode("utf-8"), "prd.json")
    assert [story.passes for story in prd.user_stories] == [False, True]


def test_closing_hashes_are_dropped_but_a_trailing_hash_in_a_word_is_kept() -> None:
    text = with_stories(
        ONE_STORY.replace("STORY-001: Only", "STORY-001: Support C#") + "### STORY-002: Tidy ##\n- [ ] x\n"
    )
    titles = [story["title"] for story in spec_to_prd(text, LABEL)["userStories"]]
    assert titles == ["Support C#", "Tidy"]


def test_long_lines_are_read_in_linear_time() -> None:
    # A backtracking heading regex took minutes on lines like these; the test timeout would catch it.
    spaces = " " * 200_000
    text = with_stories(f"### STORY-001: {spaces}#x\n# {spaces}x\n")
    assert [line for line, _ in problems_of(text)] == [8]

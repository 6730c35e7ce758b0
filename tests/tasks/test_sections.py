"""What a heading says about the items under it: optional ideas (a fix plan does not wait for them), or notes."""

from __future__ import annotations

import pytest

from ralphloop.tasks.sections import (
    OPTIONAL_MARKERS,
    OPTIONAL_SECTIONS,
    legend_section,
    notes_section,
    optional_section,
)


@pytest.mark.parametrize(
    "heading",
    [
        # the headings of real fix plans (tests/fixtures/wild/TESTS.md)
        "LOW — Nice to have",
        "LOW — Deferred to Phase 2",
        "Phase 5 Future Enhancements (Not started)",
        "Low Priority (0/2 - Future work)",
        "Priority 3: Polish/Nice-to-have",
        "Step 10: Optional - Remove Old Connection Setup (Future Enhancement)",
        "Emotion (Optional)",
        "Deferred — local execution required (DO NOT pick from Devin loop)",
        # and their kind
        "P3: Optional polish",
        "Someday / Maybe",
        "Stretch goals",
        "Wishlist",
        "Future Work",
        "Future features",
        "2) Optional",
        "Nice to have for launch",
        "Optional for v1",
    ],
)
def test_a_heading_with_an_optional_part_is_optional(heading: str) -> None:
    assert optional_section(heading)


@pytest.mark.parametrize(
    "heading",
    [
        "Future-proof the API",
        "Optional parameters support",
        "Phase 3: Future-proof the config loader",
        "Make the second argument optional",
        "Optional tasks we must do",
        "Not optional",
        "Deferred rendering pipeline",
        "Low Priority (Later)",
        "Low Priority — Bookshelf-scoped wire-up (final loop tasks)",
        "Futures and promises",
        "Stretching the canvas",
        "High Priority",
    ],
)
def test_a_heading_that_only_holds_the_word_is_work(heading: str) -> None:
    assert not optional_section(heading)


@pytest.mark.parametrize(
    "heading",
    [
        "Notes",
        "Environment Notes",
        "Execution Notes for Agentic Loop",
        "Core Principles",
        "Conventions (non-negotiable)",
        "Summary of Changes",
        "Completed",
        "Completed (Phase 4: AI-Guided Persona & Concept Builder)",
        "✅ Done",
        "Definition of Done",
        "Current Status",
    ],
)
def test_headings_of_notes(heading: str) -> None:
    assert notes_section(heading)


@pytest.mark.parametrize(
    "heading",
    ["Rules engine", "Status page", "Summary emails for admins", "1) Auth & Browser Security", "Queue", "Context menu"],
)
def test_work_headings_are_not_notes(heading: str) -> None:
    assert not notes_section(heading)


@pytest.mark.parametrize("heading", ["Legend", "Status Legend", "📋 Legend:", "Key", "Status key", "Checkbox legend"])
def test_legend_headings(heading: str) -> None:
    assert legend_section(heading) and notes_section(heading)


@pytest.mark.parametrize("heading", ["Map legend", "Legend of Zelda port", "Key Principles", "API key rotation", ""])
def test_headings_that_hold_the_word_are_no_legend(heading: str) -> None:
    assert not legend_section(heading)


def test_the_prompts_words_name_every_optional_marker_ralph_reads() -> None:
    assert all(optional_section(marker) and marker in OPTIONAL_SECTIONS for marker in OPTIONAL_MARKERS)

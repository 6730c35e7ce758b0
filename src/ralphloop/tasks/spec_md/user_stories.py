"""The `## User Stories` section of spec.md: its `### ID: Title` sections, and their problems."""

from __future__ import annotations

import re
from collections.abc import Sequence

from msgspec import Struct

from ralphloop.tasks.problems import Problem
from ralphloop.tasks.spec_md.lines import Line, atx_heading, section_name
from ralphloop.tasks.spec_md.story_body import StoryDraft, read_story, user_story_sentence

STORY_ID = re.compile(r"[A-Z][A-Z0-9]*-\d+")  # STORY-001, US-1, AUTH-12

# `### STORY-001: Title`, `### STORY-001 - Title`, `### US-1 Title`; the lookahead keeps `STORY-1a` out.
_STORY_HEADING = re.compile(rf"^(?P<id>{STORY_ID.pattern})(?![A-Za-z0-9_-])[ \t]*(?:[:.\-–—][ \t]*)?(?P<title>.*)$")
_STORY_SECTIONS = ("user stories", "stories")


class SpecStory(Struct, frozen=True):
    """One `### ID: Title` section of `## User Stories`."""

    id: str
    title: str
    line: int
    description: str
    acceptance_criteria: tuple[str, ...]
    notes: tuple[str, ...]


def read_stories(body: Sequence[Line], display: str) -> tuple[list[SpecStory], list[Problem]]:
    problems: list[Problem] = []
    drafts: list[tuple[StoryDraft, list[Line]]] = []
    section_line = 0
    in_section = False
    current: list[Line] | None = None  # the lines of the story being collected
    for line in body:
        heading = atx_heading(line)
        if heading is not None and heading[0] <= 3:
            level, text = heading
            current = None
            if level <= 2:
                in_section = level == 2 and section_name(text) in _STORY_SECTIONS
                section_line = section_line or (line.number if in_section else 0)
                continue
            if not in_section:
                continue
            draft = _story_heading(text, line.number)
            if draft is None:
                message = (
                    f"'### {text}' is not a story heading: write '### STORY-001: Title' (an id like STORY-001 or US-1)"
                )
                problems.append(Problem(display, message, line.number))
                continue
            current = []
            drafts.append((draft, current))
            continue
        if current is not None:
            current.append(line)
    if not section_line:
        problems.append(Problem(display, "no '## User Stories' section", 0))
    elif not drafts and not problems:
        problems.append(
            Problem(display, "'## User Stories' has no story: add '### STORY-001: Title' sections", section_line)
        )
    stories = [_finish(draft, lines) for draft, lines in drafts]
    problems += _story_problems(stories, display)
    problems.sort(key=lambda problem: (problem.line == 0, problem.line))
    return stories, problems


def _story_heading(text: str, number: int) -> StoryDraft | None:
    match = _STORY_HEADING.match(text)
    if not match:
        return None
    return StoryDraft(match["id"], match["title"].strip(), number, {}, [], [], [])


def _story_problems(stories: Sequence[SpecStory], display: str) -> list[Problem]:
    problems: list[Problem] = []
    first_line: dict[str, int] = {}
    for story in stories:
        if story.id in first_line:
            message = f"story id {story.id} is used twice (lines {first_line[story.id]} and {story.line})"
            problems.append(Problem(display, message, story.line))
        else:
            first_line[story.id] = story.line
        if not story.title:
            problems.append(Problem(display, f"story {story.id} has no title", story.line))
        if not story.acceptance_criteria:
            message = (
                f"story {story.id} has no acceptance criteria: add '- [ ] ...' lines under '**Acceptance Criteria:**'"
            )
            problems.append(Problem(display, message, story.line))
    return problems


def _finish(draft: StoryDraft, lines: Sequence[Line]) -> SpecStory:
    read_story(draft, lines)
    description = user_story_sentence(draft.parts) or " ".join(draft.free_text)
    return SpecStory(
        id=draft.id,
        title=draft.title,
        line=draft.line,
        description=description,
        acceptance_criteria=tuple(draft.criteria),
        notes=tuple(draft.notes),
    )

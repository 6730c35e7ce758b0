"""spec.md read whole: its frontmatter, title, problem statement and stories, and every problem."""

from __future__ import annotations

from collections.abc import Sequence

from msgspec import Struct

from ralphloop.tasks.problems import Problem
from ralphloop.tasks.spec_md.frontmatter import read_frontmatter
from ralphloop.tasks.spec_md.lines import Line, atx_heading, mark_code, section_name, split_lines
from ralphloop.tasks.spec_md.user_stories import SpecStory, read_stories

_PROBLEM_SECTIONS = ("problem statement", "problem")


class Spec(Struct, frozen=True):
    """What spec.md says, as far as prd.json needs it; fields are "" when the file lacks them."""

    feature: str
    branch: str
    created: str
    title: str
    problem_statement: str
    stories: tuple[SpecStory, ...]


def parse_spec(text: str, display: str) -> tuple[Spec, list[Problem]]:
    """Read spec.md text; every problem found, each with its line, in file order."""
    lines = split_lines(text)
    fields, body_start, problems = read_frontmatter(lines, display)
    body = mark_code(lines[body_start:], first_number=body_start + 1)
    title, problem_statement = _title_and_problem(body)
    stories, story_problems = read_stories(body, display)
    spec = Spec(
        feature=fields.get("feature", ""),
        branch=fields.get("branch", ""),
        created=fields.get("created", ""),
        title=title,
        problem_statement=problem_statement,
        stories=tuple(stories),
    )
    return spec, problems + story_problems


def spec_problems(text: str, display: str) -> list[Problem]:
    """Everything wrong with a spec.md that would stop it becoming a prd.json (for `ralph validate`)."""
    return parse_spec(text, display)[1]


def _title_and_problem(body: Sequence[Line]) -> tuple[str, str]:
    """The first `# Title`, and the `## Problem Statement` text joined into one line."""
    title = ""
    problem: list[str] = []
    in_problem = False
    for line in body:
        heading = atx_heading(line)
        if heading is not None:
            level, text = heading
            if level == 1 and not title:
                title = text
            if level <= 2:
                in_problem = level == 2 and section_name(text) in _PROBLEM_SECTIONS
            continue
        if in_problem and not line.code and line.text.strip():
            problem.append(line.text.strip())
    return title, " ".join(problem)

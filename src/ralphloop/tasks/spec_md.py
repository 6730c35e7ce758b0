"""spec.md (seed 003) → prd.json data: the human-written plan turned into the loop's task list.

The conversion is a pure function of the text: no clock, no environment, no set iteration, so the
same spec always gives byte-identical prd.json (re-running `ralph prd` makes no spurious diff).

The reader is line-based rather than a Markdown parser on purpose: the format is small, and a line
scanner can name the exact line of every problem. It follows Markdown where it matters: fenced code
blocks are skipped (a `### heading` inside a code sample is not a story), ATX headings may have a
closing `#` run, and a checkbox or bullet may continue on the next lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ralphloop.tasks.problems import Problem, raise_first

REQUIRED_FIELDS = ("feature", "branch", "created")
STORY_ID = re.compile(r"[A-Z][A-Z0-9]*-\d+")  # STORY-001, US-1, AUTH-12

# `### STORY-001: Title`, `### STORY-001 - Title`, `### US-1 Title`; the lookahead keeps `STORY-1a` out.
_STORY_HEADING = re.compile(rf"^(?P<id>{STORY_ID.pattern})(?![A-Za-z0-9_-])[ \t]*(?:[:.\-–—][ \t]*)?(?P<title>.*)$")
_HEADING = re.compile(r"^ {0,3}(?P<marks>#{1,6})(?:[ \t]+(?P<text>.*))?$")
_FENCE_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_FENCE_CLOSE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})[ \t]*$")
# `**Label:** rest` or `**Label**: rest` (the colon inside or outside the bold markers, or absent).
_LABEL = re.compile(r"^[ \t]*\*\*(?P<label>[^*]+?)\*\*[ \t]*:?[ \t]*(?P<rest>.*)$")
_CHECKBOX = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+\[[ xX]\](?:[ \t]+(?P<text>.*))?$")
_BULLET = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])(?:[ \t]+(?P<text>.*))?$")

# Story field labels, lower-cased and without the colon, mapped to the field they open.
_LABELS = {
    "as a": "role",
    "as an": "role",
    "i want to": "goal",
    "i want": "goal",
    "so that": "benefit",
    "acceptance criteria": "criteria",
    "technical notes": "notes",
    "technical note": "notes",
    "notes": "notes",
}
_PART_FIELDS = ("role", "goal", "benefit")
_LIST_FIELDS = ("criteria", "notes")
_STORY_SECTIONS = ("user stories", "stories")
_PROBLEM_SECTIONS = ("problem statement", "problem")


@dataclass(frozen=True, slots=True)
class SpecStory:
    """One `### ID: Title` section of `## User Stories`."""

    id: str
    title: str
    line: int
    description: str
    acceptance_criteria: tuple[str, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Spec:
    """What spec.md says, as far as prd.json needs it; fields are "" when the file lacks them."""

    feature: str
    branch: str
    created: str
    title: str
    problem_statement: str
    stories: tuple[SpecStory, ...]


@dataclass(frozen=True, slots=True)
class _Line:
    number: int  # 1-based, as an editor shows it
    text: str
    code: bool  # inside a fenced code block (fence lines included): never structure


# ---------------------------------------------------------------- public API


def parse_spec(text: str, display: str) -> tuple[Spec, list[Problem]]:
    """Read spec.md text; every problem found, each with its line, in file order."""
    lines = _split_lines(text)
    fields, body_start, problems = _frontmatter(lines, display)
    body = _mark_code(lines[body_start:], first_number=body_start + 1)
    title, problem_statement = _title_and_problem(body)
    stories, story_problems = _stories(body, display)
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


def spec_to_prd(text: str, display: str) -> dict[str, Any]:
    """The prd.json data for a spec.md; raises RalphError with the first problem when there is one."""
    spec, problems = parse_spec(text, display)
    raise_first(problems)
    return prd_data(spec)


def prd_data(spec: Spec) -> dict[str, Any]:
    """prd.json data in the seed 003 key order; priorities follow the spec's story order."""
    return {
        "feature": spec.feature,
        "branchName": spec.branch,
        "description": spec.problem_statement or spec.title or spec.feature,
        "createdAt": spec.created,
        "userStories": [
            {
                "id": story.id,
                "title": story.title,
                "description": story.description,
                "acceptanceCriteria": list(story.acceptance_criteria),
                "priority": priority,
                "passes": False,
                "notes": "; ".join(story.notes),
            }
            for priority, story in enumerate(spec.stories, start=1)
        ],
    }


def merge_passes(new: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
    """`new` with the progress recorded in the previous prd.json carried over, matched by story id.

    A story that passed keeps `passes: true`, and non-empty `notes` are kept because the agent may
    have written them (they win over the spec's technical notes). Stories gone from the spec are
    dropped. `old` is whatever JSON was on disk, so anything malformed in it is ignored.
    """
    previous = _stories_by_id(old)
    merged_stories = []
    for story in new.get("userStories", []):
        merged = dict(story)
        story_id = merged.get("id")
        before = previous.get(story_id) if isinstance(story_id, str) else None
        if before is not None:
            if before.get("passes") is True:
                merged["passes"] = True
            notes = before.get("notes")
            if isinstance(notes, str) and notes.strip():
                merged["notes"] = notes
        merged_stories.append(merged)
    return {**new, "userStories": merged_stories}


def _stories_by_id(prd: object) -> dict[str, dict[str, Any]]:
    """The stories of a previously written prd.json by id (the first of a repeated id wins)."""
    stories = prd.get("userStories") if isinstance(prd, dict) else None
    found: dict[str, dict[str, Any]] = {}
    for story in stories if isinstance(stories, list) else []:
        if isinstance(story, dict) and isinstance(story.get("id"), str):
            found.setdefault(story["id"], story)
    return found


def render_prd(data: dict[str, Any]) -> str:
    """prd.json text: two-space indents, non-ASCII kept readable, a final newline."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------- lines and code fences


def _split_lines(text: str) -> list[str]:
    # Only CRLF, CR and LF end a line: str.splitlines() would also split on form feeds and U+2028,
    # and the line numbers would then disagree with the user's editor.
    text = text.removeprefix("\ufeff")
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _mark_code(lines: Sequence[str], first_number: int) -> list[_Line]:
    """Number the lines and flag those inside fenced code blocks (an unclosed fence runs to the end)."""
    marked: list[_Line] = []
    fence = ""
    for offset, text in enumerate(lines):
        number = first_number + offset
        if fence:
            closing = _FENCE_CLOSE.match(text)
            if closing and closing["fence"][0] == fence[0] and len(closing["fence"]) >= len(fence):
                fence = ""
            marked.append(_Line(number, text, code=True))
            continue
        opening = _FENCE_OPEN.match(text)
        # A backtick fence's info string may not hold a backtick (that would be inline code).
        if opening and not (opening["fence"][0] == "`" and "`" in opening["info"]):
            fence = opening["fence"]
            marked.append(_Line(number, text, code=True))
            continue
        marked.append(_Line(number, text, code=False))
    return marked


def _heading(line: _Line) -> tuple[int, str] | None:
    """(level, text) when the line is an ATX heading outside code."""
    if line.code:
        return None
    match = _HEADING.match(line.text)
    if not match:
        return None
    return len(match["marks"]), _without_closing_hashes((match["text"] or "").strip())


def _without_closing_hashes(text: str) -> str:
    # `## Title ##` is `Title`, but `C#` keeps its hash: the closing run must follow a space.
    # Done by hand: the obvious regex backtracks quadratically over a long run of spaces.
    bare = text.rstrip("#")
    if bare == text or (bare and bare[-1] not in " \t"):
        return text
    return bare.rstrip()


def _section_name(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(":").strip()


# ---------------------------------------------------------------- frontmatter


def _frontmatter(lines: Sequence[str], display: str) -> tuple[dict[str, str], int, list[Problem]]:
    """The frontmatter fields as written, the index of the first body line, and the problems."""
    start = next((index for index, text in enumerate(lines) if text.strip()), None)
    if start is None or lines[start].rstrip() != "---":
        message = "no frontmatter: begin the file with '---', the feature:, branch: and created: lines, then '---'"
        return {}, 0, [Problem(display, message, (start or 0) + 1)]
    end = next((index for index in range(start + 1, len(lines)) if lines[index].rstrip() in ("---", "...")), None)
    if end is None:
        message = "the frontmatter is not closed: add a '---' line after its last field"
        return {}, start + 1, [Problem(display, message, start + 1)]
    fields, present, problems = _frontmatter_fields(lines[start + 1 : end], start + 2, display)
    if not problems or present:  # after a YAML error nothing was read: "missing" would be noise
        for key in REQUIRED_FIELDS:
            if key not in present:
                problems.append(Problem(display, f"the frontmatter has no '{key}:' field", start + 1))
    return fields, end + 1, problems


def _frontmatter_fields(
    block: Sequence[str], first_number: int, display: str
) -> tuple[dict[str, str], set[str], list[Problem]]:
    """Top-level `key: value` pairs with each value's text exactly as written, and every key present.

    The YAML is composed, not constructed: a node keeps its scalar text, so `created:
    2024-01-15T10:30:00Z` stays that string instead of becoming a datetime that prints differently.
    The resolver's tag still tells a null (`created:` with nothing after it) from text.
    """
    import yaml  # only `ralph prd` and `ralph validate` need YAML; keep it off the other commands' path

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose("\n".join(block), Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        # An error at the end of the text (an unclosed quote) points past the block: name its closing line.
        line = min(first_number + mark.line, first_number + len(block)) if mark is not None else first_number - 1
        reason = getattr(exc, "problem", None) or str(exc)
        return {}, set(), [Problem(display, f"the frontmatter is not valid YAML: {reason}", line)]
    if root is None:
        return {}, set(), []
    if not isinstance(root, yaml.MappingNode):
        return {}, set(), [Problem(display, "the frontmatter must be 'key: value' lines", first_number - 1)]
    fields: dict[str, str] = {}
    seen: dict[str, int] = {}
    problems: list[Problem] = []
    for key_node, value_node in root.value:
        if not isinstance(key_node, yaml.ScalarNode):
            continue
        key = key_node.value
        line = first_number + key_node.start_mark.line
        if key in seen:
            problems.append(
                Problem(display, f"frontmatter field '{key}' is given twice (lines {seen[key]} and {line})", line)
            )
            continue
        seen[key] = line
        if not isinstance(value_node, yaml.ScalarNode):
            if key in REQUIRED_FIELDS:
                problems.append(Problem(display, f"frontmatter field '{key}' must be a single value", line))
            continue
        value = "" if value_node.tag == "tag:yaml.org,2002:null" else value_node.value.strip()
        if key in REQUIRED_FIELDS and not value:
            problems.append(Problem(display, f"frontmatter field '{key}' is empty", line))
            continue
        fields[key] = value
    return fields, set(seen), problems


# ---------------------------------------------------------------- title and problem statement


def _title_and_problem(body: Sequence[_Line]) -> tuple[str, str]:
    """The first `# Title`, and the `## Problem Statement` text joined into one line."""
    title = ""
    problem: list[str] = []
    in_problem = False
    for line in body:
        heading = _heading(line)
        if heading is not None:
            level, text = heading
            if level == 1 and not title:
                title = text
            if level <= 2:
                in_problem = level == 2 and _section_name(text) in _PROBLEM_SECTIONS
            continue
        if in_problem and not line.code and line.text.strip():
            problem.append(line.text.strip())
    return title, " ".join(problem)


# ---------------------------------------------------------------- stories


@dataclass(slots=True)
class _StoryDraft:
    """A story while its lines are read (mutable on purpose; frozen into a SpecStory at the end)."""

    id: str
    title: str
    line: int
    parts: dict[str, tuple[str, str]]  # field → (the label as written, its text)
    criteria: list[str]
    notes: list[str]
    free_text: list[str]


def _stories(body: Sequence[_Line], display: str) -> tuple[list[SpecStory], list[Problem]]:
    problems: list[Problem] = []
    drafts: list[tuple[_StoryDraft, list[_Line]]] = []
    section_line = 0
    in_section = False
    current: list[_Line] | None = None  # the lines of the story being collected
    for line in body:
        heading = _heading(line)
        if heading is not None and heading[0] <= 3:
            level, text = heading
            current = None
            if level <= 2:
                in_section = level == 2 and _section_name(text) in _STORY_SECTIONS
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


def _story_heading(text: str, number: int) -> _StoryDraft | None:
    match = _STORY_HEADING.match(text)
    if not match:
        return None
    return _StoryDraft(match["id"], match["title"].strip(), number, {}, [], [], [])


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


def _finish(draft: _StoryDraft, lines: Sequence[_Line]) -> SpecStory:
    _read_story(draft, lines)
    description = _user_story_sentence(draft.parts) or " ".join(draft.free_text)
    return SpecStory(
        id=draft.id,
        title=draft.title,
        line=draft.line,
        description=description,
        acceptance_criteria=tuple(draft.criteria),
        notes=tuple(draft.notes),
    )


def _read_story(draft: _StoryDraft, lines: Sequence[_Line]) -> None:
    """Fill `draft` from its lines. A small state machine: `field` is the label last opened, and a
    line that is neither blank, a label nor a bullet continues whatever that label started."""
    field = ""
    last_item: list[str] | None = None  # the list whose last entry a continuation line extends
    after_blank = False
    for line in lines:
        if line.code:
            continue  # code samples are for the reader of spec.md, not fields of the story
        text = line.text.strip()
        heading = _heading(line)
        label = _label(line.text, heading)
        if label is not None:
            field, rest = label
            last_item = None
            if field in _PART_FIELDS:
                draft.parts[field] = (_part_label(line.text, heading, field), rest)
            elif rest:
                last_item = _add_item(draft, field, rest)
        elif heading is not None:
            field, last_item = "", None  # an unknown sub-heading closes the open field
        elif not text:
            after_blank = True
            if field in _PART_FIELDS:
                field = ""  # a user-story part is one paragraph
            continue
        elif (checkbox := _CHECKBOX.match(line.text)) is not None:
            # A checkbox is a criterion unless it is listed under the technical notes.
            field = "notes" if field == "notes" else "criteria"
            last_item = _add_item(draft, field, (checkbox["text"] or "").strip())
        elif field in _LIST_FIELDS and (bullet := _BULLET.match(line.text)) is not None:
            last_item = _add_item(draft, field, (bullet["text"] or "").strip())
        elif field in _PART_FIELDS:
            label_text, before = draft.parts[field]
            draft.parts[field] = (label_text, f"{before} {text}".strip())
        elif last_item is not None and not after_blank:
            last_item[-1] = f"{last_item[-1]} {text}"
        else:
            field, last_item = "", None
            draft.free_text.append(text)
        after_blank = False


def _label(raw: str, heading: tuple[int, str] | None) -> tuple[str, str] | None:
    """(field, text after the label) for `**As a** user` or a `#### Acceptance Criteria` heading."""
    if heading is not None:
        field = _LABELS.get(_section_name(heading[1]))
        return (field, "") if field else None
    match = _LABEL.match(raw)
    if not match:
        return None
    field = _LABELS.get(_section_name(match["label"]))
    return (field, match["rest"].strip()) if field else None


def _part_label(raw: str, heading: tuple[int, str] | None, field: str) -> str:
    """The label's words as written ("As an", "I want"), so the sentence keeps the author's grammar."""
    match = _LABEL.match(raw)
    if heading is None and match:
        return " ".join(match["label"].rstrip(": \t").split())
    return {"role": "As a", "goal": "I want to", "benefit": "So that"}[field]


def _add_item(draft: _StoryDraft, field: str, text: str) -> list[str] | None:
    target = draft.criteria if field == "criteria" else draft.notes
    if not text:
        return None  # an empty checkbox says nothing to verify; drop it
    target.append(text)
    return target


def _user_story_sentence(parts: dict[str, tuple[str, str]]) -> str:
    """ "As a X, I want to Y, so that Z." from whichever of the three parts are present."""
    pieces: list[str] = []
    for field in _PART_FIELDS:
        if field not in parts:
            continue
        label, text = parts[field]
        text = text.rstrip(".,;: \t")
        if not text:
            continue
        label = label[0].upper() + label[1:] if not pieces else label[0].lower() + label[1:]
        if field == "goal" and label[0] == "i":
            label = "I" + label[1:]  # the pronoun stays upper case mid-sentence
        pieces.append(f"{label} {text}")
    if not pieces:
        return ""
    sentence = ", ".join(pieces)
    return sentence if sentence.endswith(("?", "!")) else sentence + "."

"""One story spec file, read and validated into a StorySpec."""

from __future__ import annotations

import re

from msgspec import Struct

from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import TASK_CAP, decode_text, read_file
from ralphloop.tasks.frontmatter import opens_frontmatter, parse_mapping, split_frontmatter
from ralphloop.tasks.problems import Problem, from_error
from ralphloop.tasks.stories import fields
from ralphloop.tasks.stories.files import SpecFile, shown_path

# An ATX heading of level 1; a closing run of #s counts only after a blank ("# C#" is titled "C#").
_HEADING = re.compile(r"#[ \t]+(?P<title>.*?)(?:[ \t]+#+)?[ \t]*")
_CODE_FENCE = re.compile(r"[ \t]{0,3}(```|~~~)")
_TITLE_ID = re.compile(r"Story[ \t]+(?P<id>\d+\.\d+)(?![\d.]*\w)[ \t]*[:.\-—–]?[ \t]*", re.IGNORECASE)


class StorySpec(Struct, frozen=True):
    """One spec file, read and validated (invalid fields take their defaults; the problems say why)."""

    id: str
    path: str  # on disk
    rel: str  # relative to the workspace folder: specs/epic-8/story-8.3-x.md
    shown: str  # as shown to the user and the agent: <display>/specs/epic-8/story-8.3-x.md
    title: str
    status: str = "pending"  # lower-case; one of fields.STATUSES
    priority: int = 0  # 0 when not given; P0..P4 are 0..4; critical, high, medium, low are 0..3
    estimation: str | None = None
    depends_on: tuple[str, ...] = ()
    frs: tuple[str, ...] = ()
    depends_line: int = 0  # the file line of the depends_on key
    depends_lines: tuple[int, ...] = ()  # the file line of each depends_on id

    @property
    def done(self) -> bool:
        return self.status == "done"

    def dependency_line(self, dep: str) -> int:
        index = self.depends_on.index(dep)
        return self.depends_lines[index] if index < len(self.depends_lines) else self.depends_line


def _slug_title(story_id: str, slug: str) -> str:
    text = " ".join(slug.replace("_", "-").split("-")).strip()
    return text[:1].upper() + text[1:] if text else f"Story {story_id}"


def heading_title(body: str, story_id: str) -> str | None:
    """The first `# ` heading outside code blocks, without a leading "Story 8.3:" (the id is shown anyway)."""
    fenced = False
    for line in body.splitlines():
        if _CODE_FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.fullmatch(line)
        if match:
            title = match.group("title")
            # one pattern for every id: a pattern per id overflows re's cache of 512 past that many specs
            prefix = _TITLE_ID.match(title)
            title = title[prefix.end() :] if prefix and prefix.group("id") == story_id else title
            if title:
                return title
    return None


def read_spec(found: SpecFile, display: str) -> tuple[StorySpec, list[Problem]]:
    """The spec in `found`, validated; a spec comes back even when broken, so later checks still see its id."""
    shown = shown_path(display, found.rel)
    base = StorySpec(found.id, found.path, found.rel, shown, _slug_title(found.id, found.slug))
    problems = []
    if int(found.id.split(".")[0]) != found.epic:
        epic = found.id.split(".")[0]
        problems.append(Problem(shown, f"story {found.id} is in {found.epic_dir}/ (move it to epic-{epic}/)"))
    try:
        text = decode_text(read_file(found.path, shown, cap=TASK_CAP) or b"", shown)
    except RalphError as exc:
        return base, [*problems, from_error(exc, shown)]
    fm = split_frontmatter(text)
    if fm is None:
        if opens_frontmatter(text):
            return base, [*problems, Problem(shown, "the YAML frontmatter opened here has no closing --- line", 1)]
        return base, [*problems, Problem(shown, "no YAML frontmatter (--- ... ---) at the top", 1)]
    found_fields, found_problems = parse_mapping(fm, shown)
    problems += found_problems
    status, bad = fields.status(found_fields.get("status"), shown)
    priority, bad_priority = fields.priority(found_fields.get("priority"), shown)
    estimation, bad_estimation = fields.estimation(found_fields.get("estimation"), shown)
    depends_on, lines, bad_depends = fields.depends_on(found_fields.get("depends_on"), shown)
    frs, bad_frs = fields.frs(found_fields.get("frs"), shown)
    problems += bad + bad_priority + bad_estimation + bad_depends + bad_frs
    depends = found_fields.get("depends_on")
    spec = StorySpec(
        id=found.id,
        path=found.path,
        rel=found.rel,
        shown=shown,
        title=heading_title(fm.body, found.id) or base.title,
        status=status,
        priority=priority,
        estimation=estimation,
        depends_on=depends_on,
        frs=frs,
        depends_line=depends.key_line if depends else 0,
        depends_lines=lines,
    )
    return spec, problems

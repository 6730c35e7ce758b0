"""Story specs (seed 002): `specs/epic-N/story-N.M-slug.md` files with YAML frontmatter, one story each.

What seed 002's ralph.sh got wrong, and this source does instead:
- the work order is every spec found, sorted naturally (1.2 < 1.10 < 2.1), so a new spec needs no code
  edit; a configured `story_order` still wins;
- `depends_on` is respected: a story waits until its dependencies are done;
- the frontmatter is validated before the run, each problem with its file and line;
- a story is marked done by rewriting only its `status:` value, whatever it was (not only "pending").

Which files are stories: `specs/epic-<N>/story-<N.M>[-<slug>].md`, where N.M is two whole numbers.
Anything else under specs/ (notes, `story-8.md`, `story-8.3.1.md`, `Story-1.1.md`, `epic-1-auth/`,
files directly in specs/ or deeper than the epic folder) is not a story and is ignored without a
word, so that specs/ can hold other documents.

Spec files that a configured `story_order` does not name are left out of the run and reported nowhere
(not even by `ralph validate`): leaving them out is what the order is for. `unlisted` in a scan says
which they are, for a caller that wants to show them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from ralphloop.errors import RalphError
from ralphloop.protocols import Task, TaskView
from ralphloop.state.read import read_json_object
from ralphloop.state.store import append_text, atomic_write_bytes
from ralphloop.tasks import order
from ralphloop.tasks.base import SourceBase
from ralphloop.tasks.frontmatter import Field, opens_frontmatter, parse_mapping, set_field, split_frontmatter
from ralphloop.tasks.problems import Problem, raise_first

STORY_ID = re.compile(r"\d+\.\d+")
_EPIC_DIR = re.compile(r"epic-(?P<epic>\d+)")  # as strict as detect.py's, which decides this is a stories workspace
_STORY_FILE = re.compile(r"story-(?P<id>\d+\.\d+)(?:-(?P<slug>.+))?\.md")
# "[DONE] Story 8.3 - Title - 2026-01-30T..." anywhere on a line; 8.3 must not be the start of 8.30 or 8.3.1.
_PROGRESS_DONE = re.compile(r"\[DONE\] Story (?P<id>\d+\.\d+)(?!\d|\.\d)")
# An ATX heading of level 1; a closing run of #s counts only after a blank ("# C#" is titled "C#").
_HEADING = re.compile(r"#[ \t]+(?P<title>.*?)(?:[ \t]+#+)?[ \t]*")
_CODE_FENCE = re.compile(r"[ \t]{0,3}(```|~~~)")

STATUSES = ("pending", "ready", "in-progress", "in_progress", "review", "blocked", "done")
PRIORITY_WORDS = {"critical": 0, "high": 1, "medium": 2, "low": 3}
_PRIORITY_LEVEL = re.compile(r"[Pp](?P<level>[0-4])")
STATE_KEYS = ("completed_stories", "completed_ids")  # seed 002's state.json, then ours
LISTED_IN_ERRORS = 20


@dataclass(frozen=True, slots=True)
class StorySpec:
    """One spec file, read and validated (invalid fields take their defaults; the problems say why)."""

    id: str
    path: str  # on disk
    rel: str  # relative to the workspace folder: specs/epic-8/story-8.3-x.md
    shown: str  # as shown to the user and the agent: <display>/specs/epic-8/story-8.3-x.md
    title: str
    status: str = "pending"  # lower-case; one of STATUSES
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


@dataclass(frozen=True, slots=True)
class StoryScan:
    """Everything found under specs/: the stories in work order, and every problem with them."""

    stories: tuple[StorySpec, ...]  # in work order (story_order, else natural order)
    every: dict[str, StorySpec]  # every spec found, by id, listed in story_order or not
    problems: tuple[Problem, ...]
    unlisted: tuple[str, ...] = ()  # spec ids that story_order leaves out (natural order)


def natural_key(story_id: str) -> tuple[tuple[int, ...], str]:
    """1.2 < 1.10 < 2.1: the numeric parts compared as numbers; the text breaks ties (1.1 vs 01.1)."""
    return tuple(int(part) for part in story_id.split(".")), story_id


def _join(display: str, rel: str) -> str:
    return rel if display in ("", ".") else f"{display.rstrip('/')}/{rel}"


# ---------------------------------------------------------------- finding spec files


@dataclass(frozen=True, slots=True)
class SpecFile:
    """A file whose name and folder make it a story spec."""

    id: str
    slug: str
    epic_dir: str
    epic: int
    path: str
    rel: str


def _subdirs(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return [entry for entry in entries if entry.is_dir()]
    except OSError:
        return []


def _files(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return sorted(entry.name for entry in entries if entry.is_file())
    except OSError:
        return []


def find_spec_files(specs_dir: str) -> list[SpecFile]:
    """Every story spec file under `specs_dir`, epic folders in numeric order, files by name."""
    epics = [(int(m.group("epic")), entry) for entry in _subdirs(specs_dir) if (m := _EPIC_DIR.fullmatch(entry.name))]
    found = []
    for epic, entry in sorted(epics, key=lambda pair: (pair[0], pair[1].name)):
        for name in _files(entry.path):
            match = _STORY_FILE.fullmatch(name)
            if match:
                rel = f"specs/{entry.name}/{name}"
                found.append(
                    SpecFile(
                        match.group("id"),
                        match.group("slug") or "",
                        entry.name,
                        epic,
                        os.path.join(entry.path, name),
                        rel,
                    )
                )
    return found


# ---------------------------------------------------------------- one spec file


def _slug_title(story_id: str, slug: str) -> str:
    text = " ".join(slug.replace("_", "-").split("-")).strip()
    return text[:1].upper() + text[1:] if text else f"Story {story_id}"


_TITLE_ID = re.compile(r"Story[ \t]+(?P<id>\d+\.\d+)(?![\d.]*\w)[ \t]*[:.\-—–]?[ \t]*", re.IGNORECASE)


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


def _status(field: Field | None, shown: str) -> tuple[str, list[Problem]]:
    if field is None or field.value is None:
        return "pending", []
    if isinstance(field.value, str) and field.value.strip().lower() in STATUSES:
        return field.value.strip().lower(), []
    message = f"status: {_show(field.value)} is not one of {', '.join(STATUSES)}"
    return "pending", [Problem(shown, message, field.line)]


def _priority(field: Field | None, shown: str) -> tuple[int, list[Problem]]:
    if field is None or field.value is None:
        return 0, []
    if isinstance(field.value, str):
        text = field.value.strip()
        if text.isascii() and text.isdigit():
            return int(text), []
        if level := _PRIORITY_LEVEL.fullmatch(text):
            return int(level.group("level")), []
        if text.lower() in PRIORITY_WORDS:
            return PRIORITY_WORDS[text.lower()], []
    words = ", ".join(PRIORITY_WORDS)
    message = f"priority: {_show(field.value)} is not a whole number, P0..P4, or one of {words}"
    return 0, [Problem(shown, message, field.line)]


def _estimation(field: Field | None, shown: str) -> tuple[str | None, list[Problem]]:
    if field is None or field.value is None:
        return None, []
    if isinstance(field.value, str):
        return field.value, []
    return None, [Problem(shown, "estimation: must be a single value, such as 3 or M", field.line)]


def _depends_on(field: Field | None, shown: str) -> tuple[tuple[str, ...], tuple[int, ...], list[Problem]]:
    """The ids, the line of each, and problems: a list of ids, a single id, or nothing."""
    if field is None or field.value is None or field.value in ("", []):
        return (), (), []
    if isinstance(field.value, str):
        items: list[tuple[object, int]] = [(field.value, field.line)]
    elif isinstance(field.value, list):
        items = list(zip(field.value, field.item_lines or (field.line,) * len(field.value), strict=True))
    else:
        return (), (), [Problem(shown, 'depends_on: expected a list of story ids, such as ["7.4"]', field.line)]
    ids: list[str] = []
    lines: list[int] = []
    problems = []
    for item, line in items:
        text = item.strip() if isinstance(item, str) else None
        if text is None or not STORY_ID.fullmatch(text):
            hint = "write one id, or a list such as [7.4, 7.5]"
            problems.append(Problem(shown, f"depends_on: {_show(item)} is not a story id (N.M); {hint}", line))
        elif text not in ids:
            ids.append(text)
            lines.append(line)
    return tuple(ids), tuple(lines), problems


def _frs(field: Field | None, shown: str) -> tuple[tuple[str, ...], list[Problem]]:
    if field is None or field.value is None or field.value == "":
        return (), []
    if isinstance(field.value, str):
        return (field.value,), []
    if isinstance(field.value, list) and all(isinstance(item, str) for item in field.value):
        return tuple(item for item in field.value if isinstance(item, str)), []
    return (), [Problem(shown, "frs: expected a list of requirement ids, or one", field.line)]


def _show(value: object) -> str:
    return repr(value) if isinstance(value, str) else "a list" if isinstance(value, list) else "a mapping"


def read_spec(found: SpecFile, display: str) -> tuple[StorySpec, list[Problem]]:
    """The spec in `found`, validated; a spec comes back even when broken, so later checks still see its id."""
    shown = _join(display, found.rel)
    base = StorySpec(found.id, found.path, found.rel, shown, _slug_title(found.id, found.slug))
    problems = []
    if int(found.id.split(".")[0]) != found.epic:
        epic = found.id.split(".")[0]
        problems.append(Problem(shown, f"story {found.id} is in {found.epic_dir}/ (move it to epic-{epic}/)"))
    try:
        with open(found.path, "rb") as handle:
            text = handle.read().decode("utf-8")
    except UnicodeDecodeError:
        return base, [*problems, Problem(shown, "not UTF-8 text")]
    except OSError as exc:
        return base, [*problems, Problem(shown, f"cannot read: {exc.strerror}")]
    fm = split_frontmatter(text)
    if fm is None:
        if opens_frontmatter(text):
            return base, [*problems, Problem(shown, "the YAML frontmatter opened here has no closing --- line", 1)]
        return base, [*problems, Problem(shown, "no YAML frontmatter (--- ... ---) at the top", 1)]
    fields, found_problems = parse_mapping(fm, shown)
    problems += found_problems
    status, bad = _status(fields.get("status"), shown)
    priority, bad_priority = _priority(fields.get("priority"), shown)
    estimation, bad_estimation = _estimation(fields.get("estimation"), shown)
    depends_on, lines, bad_depends = _depends_on(fields.get("depends_on"), shown)
    frs, bad_frs = _frs(fields.get("frs"), shown)
    problems += bad + bad_priority + bad_estimation + bad_depends + bad_frs
    depends = fields.get("depends_on")
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


def new_story_spec() -> str:
    """The example spec `ralph init --stories` writes: valid as it is, every field shown once."""
    return """---
status: pending
priority: high
estimation: 2
depends_on: []
frs: []
---

# Replace this example story with the first real one

As a user, I want ..., so that ...

## Acceptance criteria

- [ ] A specific, verifiable criterion
- [ ] Typecheck passes
- [ ] Unit tests pass

## Notes

Stories are worked in the order of their ids (1.2 before 1.10 before 2.1). A story waits for the ids in
its `depends_on`. ralph sets `status: done` itself when the story is finished.
"""


# ---------------------------------------------------------------- the whole folder


def _unique(specs: list[StorySpec]) -> tuple[dict[str, StorySpec], list[Problem]]:
    """The specs by id; a second file with the same id is a problem naming both (the first is kept)."""
    by_id: dict[str, StorySpec] = {}
    problems = []
    for spec in specs:
        if spec.id in by_id:
            problems.append(Problem(spec.shown, f"story {spec.id} is also in {by_id[spec.id].shown}"))
        else:
            by_id[spec.id] = spec
    return by_id, problems


def work_order(
    by_id: dict[str, StorySpec], story_order: Sequence[str] | None, display: str
) -> tuple[list[StorySpec], list[Problem]]:
    """The stories in the order they are worked on: story_order when given, else natural order."""
    if story_order is None:
        return sorted(by_id.values(), key=lambda spec: natural_key(spec.id)), []
    ordered: list[StorySpec] = []
    problems = []
    for story_id in story_order:
        if story_id in by_id:
            if by_id[story_id] not in ordered:
                ordered.append(by_id[story_id])
        elif STORY_ID.fullmatch(story_id):
            epic = story_id.split(".")[0]
            message = f"story_order names {story_id} but specs/epic-{epic}/story-{story_id}-*.md does not exist"
            problems.append(Problem(display, message))
        else:
            problems.append(Problem(display, f"story_order names {story_id!r}, which is not a story id (N.M)"))
    return ordered, problems


def _as_task(spec: StorySpec, done: bool = False) -> Task:
    return Task(
        id=spec.id,
        title=spec.title,
        done=done or spec.done,
        priority=spec.priority,
        description=spec.shown,
        depends_on=spec.depends_on,
    )


def dependency_problems(specs: Collection[StorySpec]) -> list[Problem]:
    """depends_on naming no spec at all, and one dependency cycle, each at its depends_on line."""
    tasks = [_as_task(spec) for spec in specs]
    by_id = {spec.id: spec for spec in specs}
    problems = []
    for task, dep in order.unknown_dependencies(tasks):
        spec = by_id[task.id]
        where = f"specs/epic-{dep.split('.')[0]}/story-{dep}-*.md"
        problems.append(
            Problem(spec.shown, f"depends_on names {dep}, but there is no {where}", spec.dependency_line(dep))
        )
    # Unknown ids cannot be part of a cycle: the check sees only the known ones.
    cycle = order.dependency_cycle(tasks)
    if cycle:
        first = by_id[cycle[0]]
        message = f"depends_on makes a cycle: {' → '.join(cycle)} (none of them could ever start)"
        problems.append(Problem(first.shown, message, first.dependency_line(cycle[1])))
    return problems


def scan_stories(folder: str, display: str, story_order: Sequence[str] | None = None) -> StoryScan:
    """Read and validate every spec under `<folder>/specs`; the problems are in file order."""
    specs_dir = os.path.join(folder, "specs")
    if not os.path.isdir(specs_dir):
        return StoryScan((), {}, (Problem(display or ".", "no specs/ folder"),))
    problems: list[Problem] = []
    specs: list[StorySpec] = []
    for found in find_spec_files(specs_dir):
        spec, found_problems = read_spec(found, display)
        specs.append(spec)
        problems += found_problems
    if not specs:
        return StoryScan((), {}, (Problem(display or ".", "no story specs (specs/epic-N/story-N.M-slug.md)"),))
    by_id, twice = _unique(specs)
    ordered, order_problems = work_order(by_id, story_order, display or ".")
    # Dependencies are checked among every spec: a story may depend on one that story_order leaves out.
    problems += twice + order_problems + dependency_problems(list(by_id.values()))
    listed = {spec.id for spec in ordered}
    unlisted = tuple(sorted((sid for sid in by_id if sid not in listed), key=natural_key))
    return StoryScan(tuple(ordered), by_id, tuple(problems), unlisted)


def story_problems(folder: str, display: str, story_order: Sequence[str] | None = None) -> list[Problem]:
    """Every problem with the specs, for `ralph validate`."""
    return list(scan_stories(folder, display, story_order).problems)


# ---------------------------------------------------------------- done-ness


def completed_from_state(state_path: str) -> set[str] | None:
    """The ids state.json records as done (seed 002's completed_stories, our completed_ids); None when
    there is no state.json. A file that exists but cannot be read records nothing."""
    if not os.path.exists(state_path):
        return None
    data = read_json_object(state_path) or {}
    done: set[str] = set()
    for key in STATE_KEYS:
        value = data.get(key)
        if isinstance(value, list):
            done.update(item for item in value if isinstance(item, str))
    return done


def completed_from_progress(progress_path: str) -> list[str]:
    """Story ids named by `[DONE] Story X.Y` lines of progress.txt, each once, in file order (seed 002's
    rebuild of state.json)."""
    try:
        with open(progress_path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return []
    ids: dict[str, None] = {}
    for match in _PROGRESS_DONE.finditer(text):
        ids.setdefault(match.group("id"))
    return list(ids)


def recorded_done(state_path: str, progress_path: str) -> set[str]:
    """Done according to the records: state.json, or progress.txt only while there is no state.json."""
    from_state = completed_from_state(state_path)
    return from_state if from_state is not None else set(completed_from_progress(progress_path))


# ---------------------------------------------------------------- the source


def _blocked_message(task: Task, outside: dict[str, str], done: Collection[str]) -> str | None:
    for dep in task.depends_on:
        if dep in outside and dep not in done:
            return f"story {task.id} depends on {dep}, which {outside[dep]} and is not done"
    return None


class StorySource(SourceBase):
    """Story specs under `<folder>/specs`, worked in natural (or story_order) order, dependencies first."""

    kind = "stories"
    marks_done = True

    def __init__(
        self,
        folder: str,
        display: str,
        state_path: str,
        progress_path: str,
        story_order: Sequence[str] | None = None,
        resume_from: str | None = None,
    ) -> None:
        self.folder = folder
        self.display = display or "."
        self.path = _join(display, "specs")
        self.state_path = state_path
        self.progress_path = progress_path
        self.story_order = tuple(story_order) if story_order is not None else None
        self.resume_from = resume_from
        # Marked done in this process: a later load() says so even when writing the spec failed.
        self._marked: set[str] = set()
        self._specs: dict[str, StorySpec] = {}

    def scan(self) -> StoryScan:
        scan = scan_stories(self.folder, self.display, self.story_order)
        self._specs = scan.every
        return scan

    def load(self) -> TaskView:
        scan = self.scan()
        raise_first(scan.problems)
        done = recorded_done(self.state_path, self.progress_path) | self._marked
        done |= {spec.id for spec in scan.every.values() if spec.done}
        ordered = list(scan.stories)
        # Why each story outside the view is outside it: a dependency on one can never be met by this run.
        outside = dict.fromkeys(scan.unlisted, "story_order leaves out")
        if self.resume_from is not None:
            ids = [spec.id for spec in ordered]
            if self.resume_from not in ids:
                known = ", ".join(ids[:LISTED_IN_ERRORS]) + (", ..." if len(ids) > LISTED_IN_ERRORS else "")
                raise RalphError(
                    f"--resume-from {self.resume_from}: no such story in {self.path} (stories: {known or 'none'})"
                )
            skipped = ordered[: ids.index(self.resume_from)]
            outside |= {spec.id: f"--resume-from {self.resume_from} skips" for spec in skipped}
            ordered = ordered[len(skipped) :]
        tasks = tuple(self._task(spec, done, outside) for spec in ordered)
        upcoming = order.pick_next(tasks)
        if upcoming is None:
            for task in tasks:
                message = None if task.done else _blocked_message(task, outside, done)
                if message:
                    raise RalphError(message)
        return TaskView(tasks=tasks, next_task=upcoming)

    @staticmethod
    def _task(spec: StorySpec, done: Collection[str], outside: Collection[str]) -> Task:
        """A dependency outside the view that is done is met: dropped, so pick_next need not know it.
        One that is not done stays, and the story waits (load says why when nothing else can start)."""
        kept = tuple(dep for dep in spec.depends_on if dep not in outside or dep not in done)
        return replace(_as_task(spec, spec.id in done), depends_on=kept)

    def _spec(self, task: Task) -> StorySpec:
        if task.id not in self._specs:
            self.scan()
        if task.id not in self._specs:
            raise RalphError(f"{self.path}: story {task.id} has no spec file any more")
        return self._specs[task.id]

    def describe(self, task: Task) -> str:
        spec = self._spec(task)
        try:
            with open(spec.path, "rb") as handle:
                content = handle.read().decode("utf-8", errors="replace")
        except OSError as exc:
            raise RalphError(f"{spec.shown}: cannot read: {exc.strerror}") from None
        # One kind of line break in the prompt; nothing else of the file is changed.
        content = content.removeprefix("\ufeff").replace("\r\n", "\n")
        return "\n".join(
            [
                f"## STORY SPECIFICATION: Story {task.id} — {task.title} ({spec.shown})",
                "",
                "The whole spec file follows, frontmatter and all.",
                "",
                content.rstrip("\n"),
                "",
                "## END OF STORY SPECIFICATION",
                "",
                f"Work on story {task.id} only. When it is finished and its checks pass, end your reply with "
                f"`<ralph>DONE {task.id}</ralph>`. If you cannot finish it, end with "
                f"`<ralph>FAIL {task.id}: reason</ralph>`. For anything worth knowing in later stories, add "
                "`<ralph>LEARN: insight</ralph>`. Do not edit the spec's `status:` field: ralph marks the story "
                "done.",
            ]
        )

    def mark_done(self, task: Task, when: str) -> list[str]:
        """Set the spec's `status:` to done and append `[DONE] Story X.Y - Title - when` to progress.txt.

        Never raises: what could not be written is said in the returned notes."""
        self._marked.add(task.id)
        notes = []
        try:
            spec = self._spec(task)
        except RalphError as exc:
            notes.append(str(exc))
        else:
            notes += _write_status(spec)
        try:
            _append_line(self.progress_path, f"[DONE] Story {task.id} - {task.title} - {when}")
        except OSError as exc:
            notes.append(f"could not append the [DONE] line to progress.txt: {exc.strerror}")
        return notes


def _write_status(spec: StorySpec) -> list[str]:
    """Rewrite the spec with `status: done`, every other byte unchanged; the note says what changed."""
    try:
        with open(spec.path, "rb") as handle:
            text = handle.read().decode("utf-8")
        fm = split_frontmatter(text)
        fields = parse_mapping(fm, spec.shown)[0] if fm else {}
        old = fields["status"].value if "status" in fields else None
        if isinstance(old, str) and old.strip().lower() == "done":
            return []
        atomic_write_bytes(spec.path, set_field(text, "status", "done").encode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else str(exc)
        return [f"{spec.shown}: could not set status: done ({reason})"]
    return [f"{spec.shown}: status: {old if isinstance(old, str) else '(none)'} → done"]


def _append_line(path: str, line: str) -> None:
    """Append `line`, starting on a new line even when the file does not end with one."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() > 0:
                handle.seek(-1, os.SEEK_END)
                if handle.read(1) != b"\n":
                    line = "\n" + line
    except FileNotFoundError:
        pass
    append_text(path, line + "\n")

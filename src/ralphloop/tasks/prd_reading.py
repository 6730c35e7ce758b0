"""prd.json as people write it, read into ralph's own shape, with every problem at its line: the one reading of
`ralph validate`, `ralph run` and `ralph status`. Light on purpose (no json; re only for what a plain file does not
hold): `ralph status` counts stories through it.

What real files say instead of snarktank's schema, and is read as meant: `"stories"` for `"userStories"`, a
top-level array of stories, snake_case keys (`acceptance_criteria`, `depends_on`, `branch_name`), `dependencies`
for `dependsOn`, `acceptance` for `acceptanceCriteria`, a priority written as a label ("high", "P1", "CRITICAL") or
not at all (then the file's order), and, in a story without `passes`, `"completed": true` or a plain status word
(`"status": "completed"` / `"todo"`) until the agent sets `passes`. What is refused, with the near miss and the fix:
no stories at all (another tool's file), a story without `passes` whose status word is not plain ("Phase 2"), a
misspelt field. The file is never rewritten: the agent edits it, told only to set `"passes": true`, which fits
every shape read here.
"""

from __future__ import annotations

import codecs

from ralphloop.files.json_text import loads
from ralphloop.files.safe_read import maybe_not_text, not_text
from ralphloop.tasks.json_places import value_lines
from ralphloop.tasks.order import cycle_in
from ralphloop.tasks.prd_words import close_match, found_words, kind_of, other_tool, quoted, shown
from ralphloop.tasks.priority_words import PRIORITY_FORMS, priority_number
from ralphloop.tasks.status_words import done_by_words
from ralphloop.words.patterns import lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STORIES = "userStories"
_OTHER_STORY_KEYS = ("stories",)  # what the stories' array is called besides userStories (or user_stories)
_TOP_TEXT = ("feature", "branchName", "description", "createdAt")
# story fields: (the JSON type it must have, its words, whether a story must have it)
_FIELDS: dict[str, tuple[type, str, bool]] = {
    "id": (str, "a string", True),
    "title": (str, "a string", True),
    "passes": (bool, "true or false", True),
    "priority": (int, "", False),
    "acceptanceCriteria": (list, "an array of strings", False),
    "description": (str, "a string", False),
    "notes": (str, "a string", False),
    "dependsOn": (list, "an array of story ids", False),
}
# what a story's field is also called (besides its snake_case); read only when it holds an array of strings
_ALIASES = {"dependencies": "dependsOn", "acceptance": "acceptanceCriteria"}
_NOT_GUESSED = ("notes",)  # free text: a field that only looks like it ("note") is left alone, as any other
# what other tools mark a story done with, named when a story has no `passes` and its word is not plain (a plain
# one, "completed" or "todo", or a true/false under such a name, is read: status_words.done_by_words)
_DONE_WORDS = ("status", "state", "done", "complete", "completed", "passed", "finished", "verified")
_BOMS = (  # UTF-32's before UTF-16's: UTF-32 LE's mark starts as UTF-16 LE's does
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_WIDE = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_BE)  # UTF-32 LE's starts as UTF-16 LE's
_SEPARATED = lazy(r"[_-]+([A-Za-z0-9])")
_CAMELS: dict[str, str] = {}  # a file's stories share their few keys (functools' cache would cost status its import)


class Flaw:
    """One problem: its words, and its line in the file (0 when no line applies)."""

    __slots__ = ("line", "message")

    def __init__(self, message: str, line: int = 0) -> None:
        self.message = message
        self.line = line

    def __repr__(self) -> str:
        return f"Flaw({self.message!r}, {self.line})"


class PrdReading:
    """A prd.json read: `prd` in ralph's shape (None when a flaw keeps it from being read; stories in `userStories`
    with every field, priorities as numbers), `key` (the stories' array as the file names it; "" for a top-level
    array), `priorities` (each story's priority as written, by id; "" when it has none) and the `flaws`."""

    __slots__ = ("flaws", "key", "prd", "priorities")

    def __init__(self, flaws: list[Flaw], prd: dict[str, Any] | None = None, key: str = STORIES) -> None:
        self.flaws = flaws
        self.prd = prd if not flaws else None
        self.key = key
        self.priorities: dict[str, str] = {}


def read_prd(raw: bytes) -> PrdReading:
    """The bytes of a prd.json (UTF-8, or UTF-16/32 with a byte-order mark), read; never raises."""
    text = _decode(raw)
    if isinstance(text, Flaw):
        return PrdReading([text])
    try:
        data = loads(text)
    except RecursionError:
        return PrdReading([Flaw("invalid JSON: nested too deeply")])
    except ValueError as exc:
        from json import JSONDecodeError  # json's own error: json_text hands it text that is not JSON

        if isinstance(exc, JSONDecodeError):
            return PrdReading([Flaw(f"invalid JSON at column {exc.colno}: {exc.msg}", exc.lineno)])
        return PrdReading([Flaw(f"invalid JSON: {exc}")])  # a number of 4,300+ digits
    # an id, a title or a branch goes into arguments, variables and commits: a NUL cannot
    probe = text.encode("utf-8", "surrogatepass") if raw.startswith(_WIDE) else raw  # the escapes, as UTF-8
    problem = not_text(data) if maybe_not_text(probe) else None
    if problem:
        return PrdReading([Flaw(problem)])
    return _Reader(text).read(data)


def story_items(data: object) -> list[Any]:
    """The array of a parsed prd.json that holds its stories, as written (for a writer that marks one passing in
    place); [] when there is none."""
    if isinstance(data, list):
        return data
    keys = _story_keys(data) if isinstance(data, dict) else []
    found = data[keys[0]] if len(keys) == 1 and isinstance(data, dict) else None
    return found if isinstance(found, list) else []


def _story_keys(data: dict[str, Any]) -> list[str]:
    """The keys that may hold the stories: userStories in any case style, then another name (beside userStories,
    only when it holds an array: `"stories": 250` counts them)."""
    own = [key for key in data if _camel(key) == STORIES]
    others = [key for key in _OTHER_STORY_KEYS if key in data and (not own or isinstance(data[key], list))]
    return own + others


def _decode(raw: bytes) -> str | Flaw:
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            try:
                return raw.decode(codec)
            except UnicodeDecodeError:
                return Flaw(f"not {codec.upper().removesuffix('-SIG')} text, though it starts as if it were")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Flaw("not UTF-8 text", raw.count(b"\n", 0, exc.start) + 1)


class _Reader:
    """One reading: the text (for the lines, found only when a problem needs one) and the flaws found so far."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.flaws: list[Flaw] = []
        self._lines: dict[tuple[str | int, ...], int] | None = None

    def flaw(self, message: str, *path: str | int) -> None:
        """A problem at the line of the value at `path` (the file's own value when none is given)."""
        self.flaws.append(Flaw(message, self.line(*path)))

    def line(self, *path: str | int) -> int:
        if self._lines is None:
            self._lines = value_lines(self.text)
        return self._lines.get(path, 0)

    def read(self, data: object) -> PrdReading:
        if isinstance(data, list):
            return self.stories(data, "", {})
        if not isinstance(data, dict):
            found = kind_of(data)
            self.flaw(f'expected a JSON object with a "{STORIES}" array at the top level (found {found})')
            return PrdReading(self.flaws)
        key = self.stories_key(data)
        return self.stories(data[key], key, data) if key else PrdReading(self.flaws)

    def stories_key(self, data: dict[str, Any]) -> str | None:
        """The key of the stories' array, or None (and why, with the near miss) when there is none."""
        keys = _story_keys(data)
        if len(keys) > 1:
            self.flaw(f"both {quoted(keys)} hold the stories: keep one (ralph reads {STORIES})", keys[1])
            return None
        if keys:
            return keys[0]
        close = close_match(STORIES, [key for key in data if isinstance(data[key], list)], cutoff=0.75)
        if close:
            self.flaw(f'no "{STORIES}" array (found "{close}"; rename it to "{STORIES}")', close)
            return None
        like = next((key for key, value in data.items() if _holds_stories(value)), None)
        if like:
            count = sum(isinstance(item, dict) for item in data[like])
            found = f'"{like}": {count} object{"s" if count != 1 else ""} with an "id"'
            self.flaw(f'no "{STORIES}" array (found {found}; rename it to "{STORIES}")', like)
            return None
        self.flaw(f'no "{STORIES}" array: another tool\'s file? ({other_tool(data)})')
        return None

    def stories(self, stories: object, key: str, top: dict[str, Any]) -> PrdReading:
        """The stories' array at `key` of `top` (the file itself when key is ""), read into ralph's shape."""
        named = key or "the file's array"
        if not isinstance(stories, list):
            self.flaw(f"{named}: expected an array of stories (found {kind_of(stories)})", key)
            return PrdReading(self.flaws)
        if not stories:
            self.flaw(f"{named} is empty (add at least one story)", *((key,) if key else ()))
            return PrdReading(self.flaws)
        if not key and not any(isinstance(item, dict) and "id" in item for item in stories):
            self.flaw(f"an array without stories: another tool's file? ({other_tool(stories)})")
            return PrdReading(self.flaws)
        prd: dict[str, Any] = dict.fromkeys(_TOP_TEXT, "")
        for name, value in top.items():
            canonical = _camel(name)
            if canonical in _TOP_TEXT and (canonical == name or canonical not in top):
                if isinstance(value, str):
                    prd[canonical] = value
                else:
                    self.flaw(f"{name}: expected a string (found {kind_of(value)})", name)
        base = (key,) if key else ()
        read = [self.story(item, index, base) for index, item in enumerate(stories)]
        prd[STORIES] = [story for story, _ in read if story is not None]
        self.ids(stories, base)
        if not self.flaws:  # what only a whole, valid file shows: a dependency on no story, a circle of them
            self.dependencies(stories, base, prd[STORIES])
        reading = PrdReading(self.flaws, prd, key)
        reading.priorities = {story["id"]: shown for story, shown in read if story is not None}
        return reading

    def story(self, item: object, index: int, base: tuple[str, ...]) -> tuple[dict[str, Any] | None, str]:
        """One story in ralph's shape and its priority as written, or (None, "") when it has a flaw."""
        if isinstance(item, dict) and _plain(item):  # snarktank's fields only, each of its kind: nothing to fix
            written = item.get("priority")
            return {**_defaults(index), **item}, "" if written is None else str(written)
        where = _where(base, index)
        if not isinstance(item, dict):
            self.flaw(f"{where}: expected an object (found {kind_of(item)})", *base, index)
            return None, ""
        before = len(self.flaws)
        keys = _field_keys(item)
        story: dict[str, Any] = {}
        for field, (kind, words, required) in _FIELDS.items():
            key = keys.get(field)
            if key is None and field == "passes" and (done := done_by_words(item)) is not None:
                story[field] = done  # until the agent sets "passes" (read first once there)
                continue
            if key is None:
                if required:
                    self.flaw(f'{where}: no "{field}" ({self.missing(item, field, keys)})', *base, index)
                elif field not in _NOT_GUESSED and (near := _near(item, field, keys)):
                    message = f'{where}: "{near}" is not a field ralph reads (did you mean "{field}"?)'
                    self.flaw(message, *base, index, near)
                continue
            value = item[key]
            if field == "priority":
                story[field] = self.priority(value, where, key, (*base, index, key))
            elif not isinstance(value, kind):
                self.flaw(f"{where}.{key}: expected {words}{found_words(value)}", *base, index, key)
            elif isinstance(value, list) and not all(isinstance(entry, str) for entry in value):
                self.flaw(f"{where}.{key}: expected {words}", *base, index, key)
            else:
                story[field] = value
        if len(self.flaws) > before:
            self.flaws[before:] = sorted(self.flaws[before:], key=lambda flaw: flaw.line)  # as the file has them
            return None, ""
        written = item.get(keys.get("priority", ""))
        return {**_defaults(index), **story}, "" if written is None else str(written)

    def priority(self, value: object, where: str, key: str, path: tuple[str | int, ...]) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        number = priority_number(value) if isinstance(value, str) else None
        if number is None:
            self.flaw(f"{where}.{key}: {shown(value)} is not {PRIORITY_FORMS}", *path)
            return 0
        return number

    def missing(self, item: dict[str, Any], field: str, keys: dict[str, str]) -> str:
        """What to do about a story without `field`: rename its near miss, or add it."""
        near = _near(item, field, keys)
        if near:
            return f'found "{near}"; rename it to "{field}"'
        if field == "passes":
            done = next((key for key in item if key.lower() in _DONE_WORDS), None)
            add = 'add "passes": false, or true when the story is done'
            if done:
                return f'found "{done}": {shown(item[done])}, which ralph does not read; {add}'
            return add
        return 'add a unique "id", such as "US-001"' if field == "id" else f'add "{field}"'

    def ids(self, items: list[Any], base: tuple[str, ...]) -> None:
        """Every story's id once, and none empty (of the stories whose id is text)."""
        seen: dict[str, int] = {}
        for index, item in enumerate(items):
            key = ("id" if "id" in item else _field_keys(item).get("id", "")) if isinstance(item, dict) else ""
            sid = item[key] if key else None
            if not isinstance(sid, str):
                continue
            where = _where(base, index)
            if not sid.strip():
                self.flaw(f"{where}.{key} is empty", *base, index, key)
            elif sid in seen:
                self.flaw(f"{where}.{key} {sid!r} is used twice (also {_where(base, seen[sid])})", *base, index, key)
            else:
                seen[sid] = index

    def dependencies(self, items: list[Any], base: tuple[str, ...], stories: list[dict[str, Any]]) -> None:
        """A dependency on no story (and the id it most looks like), then one circle of them."""
        known = [story["id"] for story in stories]
        ids = set(known)  # looked up once for every dependency: a list would make this quadratic
        aliased = [story for item, story in zip(items, stories, strict=True) if _alias_of_depends(item)]
        if not any(dep in ids for story in aliased for dep in story["dependsOn"]):
            for story in aliased:  # `dependencies` that name no story anywhere are not theirs (packages, say)
                story["dependsOn"] = []
        for index, story in enumerate(stories):
            for dep in story["dependsOn"]:
                if dep not in ids:
                    key = _field_keys(items[index]).get("dependsOn", "")
                    close = close_match(dep, known, cutoff=0.6)
                    hint = f" (did you mean {close!r}?)" if close else ""
                    message = f"story {story['id']}'s {key} names {dep!r}, which is no story's id{hint}"
                    self.flaw(message, *base, index, key)
        if self.flaws or not any(story["dependsOn"] for story in stories):
            return
        cycle = cycle_in({story["id"]: story["dependsOn"] for story in stories})
        if cycle:
            index = known.index(cycle[0])
            key = _field_keys(items[index]).get("dependsOn", "")
            message = f"{key} goes round in a circle: {' → '.join(cycle)} (none of them could ever start)"
            self.flaw(message, *base, index, key)


def _field_keys(item: dict[str, Any]) -> dict[str, str]:
    """The key each field of ralph's is written under in a story: its own name first, then its snake_case or
    kebab-case spelling, then an alias."""
    keys = {key: key for key in item if key in _FIELDS}
    if len(keys) == len(item):  # snarktank's own spelling throughout: the usual case, and a cheap one
        return keys
    for key, value in item.items():
        if key in _FIELDS:
            continue
        field = _ALIASES.get(key) or _camel(key)
        if key in _ALIASES and not (isinstance(value, list) and all(isinstance(each, str) for each in value)):
            continue  # an alias that holds no ids is some other thing of the same name
        if field in _FIELDS and field not in keys:
            keys[field] = key
    return keys


def _defaults(index: int) -> dict[str, Any]:
    """What a story that leaves them out has (fresh lists: a story is the caller's to change); its priority is its
    place in the file."""
    return {"priority": index + 1, "acceptanceCriteria": [], "dependsOn": [], "description": "", "notes": ""}


def _plain(item: dict[str, Any]) -> bool:
    """Whether a story is written as snarktank's schema has it: every required field, no other key, each value of
    its field's kind (the usual case, read without the field-by-field look that names a problem)."""
    for key, value in item.items():
        spec = _FIELDS.get(key)
        if spec is None:
            return False
        kind = spec[0]
        if kind is list:
            if type(value) is not list or not all(type(entry) is str for entry in value):
                return False
        elif type(value) is not kind:  # `type`, not isinstance: true is no priority
            return False
    return all(key in item for key, (_, _, required) in _FIELDS.items() if required)


def _alias_of_depends(item: dict[str, Any]) -> bool:
    return "dependsOn" not in item and _field_keys(item).get("dependsOn") in _ALIASES


def _near(item: dict[str, Any], field: str, keys: dict[str, str]) -> str | None:
    """A key of the story that looks like a misspelt `field` (another case, a letter off), not already read."""
    used = set(keys.values())
    return close_match(field, [key for key in item if key not in used and key not in _ALIASES], cutoff=0.8)


def _holds_stories(value: object) -> bool:
    """Whether a list holds objects with an id and a title or a pass mark: stories under another name."""
    return isinstance(value, list) and any(
        isinstance(item, dict) and "id" in item and ("title" in item or "passes" in item) for item in value
    )


def _camel(key: str) -> str:
    if "_" not in key and "-" not in key:
        return key
    found = _CAMELS.get(key)
    if found is None:
        found = _SEPARATED.sub(lambda match: match.group(1).upper(), key)
        if len(_CAMELS) < 256:
            _CAMELS[key] = found
    return found


def _where(base: tuple[str, ...], index: int) -> str:
    return f"{base[0] if base else ''}[{index}]"

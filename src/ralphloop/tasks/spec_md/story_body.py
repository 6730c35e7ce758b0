"""One user story's body in spec.md: the As a / I want / So that parts, the acceptance criteria and
the technical notes, read line by line into a draft."""

from __future__ import annotations

import re
from collections.abc import Sequence

from msgspec import Struct

from ralphloop.tasks.spec_md.lines import Line, atx_heading, section_name

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


class StoryDraft(Struct):
    """A story while its lines are read (mutable on purpose; frozen into a SpecStory at the end)."""

    id: str
    title: str
    line: int
    parts: dict[str, tuple[str, str]]  # field → (the label as written, its text)
    criteria: list[str]
    notes: list[str]
    free_text: list[str]


def read_story(draft: StoryDraft, lines: Sequence[Line]) -> None:
    """Fill `draft` from its lines. A small state machine: `field` is the label last opened, and a
    line that is neither blank, a label nor a bullet continues whatever that label started."""
    field = ""
    last_item: list[str] | None = None  # the list whose last entry a continuation line extends
    after_blank = False
    for line in lines:
        if line.code:
            continue  # code samples are for the reader of spec.md, not fields of the story
        text = line.text.strip()
        heading = atx_heading(line)
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
        field = _LABELS.get(section_name(heading[1]))
        return (field, "") if field else None
    match = _LABEL.match(raw)
    if not match:
        return None
    field = _LABELS.get(section_name(match["label"]))
    return (field, match["rest"].strip()) if field else None


def _part_label(raw: str, heading: tuple[int, str] | None, field: str) -> str:
    """The label's words as written ("As an", "I want"), so the sentence keeps the author's grammar."""
    match = _LABEL.match(raw)
    if heading is None and match:
        return " ".join(match["label"].rstrip(": \t").split())
    return {"role": "As a", "goal": "I want to", "benefit": "So that"}[field]


def _add_item(draft: StoryDraft, field: str, text: str) -> list[str] | None:
    target = draft.criteria if field == "criteria" else draft.notes
    if not text:
        return None  # an empty checkbox says nothing to verify; drop it
    target.append(text)
    return target


def user_story_sentence(parts: dict[str, tuple[str, str]]) -> str:
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

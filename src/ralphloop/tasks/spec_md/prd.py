"""prd.json data from a spec.md, merged with the progress of the previous prd.json, and its text."""

from __future__ import annotations

import json
import os
from typing import Any

from ralphloop.tasks.prd_reading import story_items
from ralphloop.tasks.problems import raise_first, validate_in
from ralphloop.tasks.spec_md.parse import Spec, parse_spec


def spec_to_prd(text: str, display: str) -> dict[str, Any]:
    """The prd.json data for a spec.md; raises RalphError with the first problem when there is one."""
    spec, problems = parse_spec(text, display)
    # `ralph validate` checks a workspace's spec.md: it lists the others only for a file of that name
    named = os.path.basename(display) == "spec.md"
    raise_first(problems, validate_in(os.path.dirname(display) or ".") if named else None)
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
    stories = story_items(prd)  # a prd.json written by hand may keep them under "stories", say
    found: dict[str, dict[str, Any]] = {}
    for story in stories if isinstance(stories, list) else []:
        if isinstance(story, dict) and isinstance(story.get("id"), str):
            found.setdefault(story["id"], story)
    return found


def render_prd(data: dict[str, Any]) -> str:
    """prd.json text: two-space indents, non-ASCII kept readable, a final newline."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

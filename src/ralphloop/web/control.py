"""What `POST /api/control` asks (issue 36): `{"feature": F, "story": optional, "action": "pause" | "resume" | "stop"
| "say" | "answer", "text": optional, "now": optional}`, checked as data, then carried out as `ralph ACTION` would
(state/steer.py) with the source "web", for a feature the page shows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ralphloop.core.steering import ACTIONS
from ralphloop.state.steer import loop_of, steer, steer_feature, text_of
from ralphloop.web.snapshot import Features


@dataclass(frozen=True, slots=True)
class Asked:
    feature: str
    story: str | None
    action: str
    text: str
    now: bool


def asked_of(body: Any) -> Asked | str:
    """The request in `body`, or what is wrong with it (one line)."""
    if not isinstance(body, dict):
        return 'expected a JSON object: {"feature", "story", "action", "text"}'
    feature, story, action = body.get("feature"), body.get("story"), body.get("action")
    text, now = body.get("text"), body.get("now", False)
    if not isinstance(feature, str) or not feature:
        return '"feature": expected the name of a feature the page shows'
    if story is not None and (not isinstance(story, str) or not story):
        return '"story": expected a story id, or none'
    if action not in ACTIONS:
        return f'"action": expected one of {", ".join(ACTIONS)}'
    if text is not None and not isinstance(text, str):
        return '"text": expected a string'
    if not isinstance(now, bool):
        return '"now": expected true or false'
    return Asked(feature, story, action, text or "", now)


def carry_out(features: Features, asked: Asked) -> str:
    """`asked`, done: what the loop will do. LookupError for a feature the page does not show; RalphError for a
    refusal (not running, no question, text too long): nothing written."""
    shown = {paths.name: paths for paths in features.paths()}
    paths = shown.get(asked.feature)
    if paths is None:
        raise LookupError(f"no feature {asked.feature!r} on this page (it shows: {', '.join(shown) or 'none'})")
    text = text_of(asked.action, asked.text)
    if features.remote_steer is not None:  # a run on Temporal: its workflow is told (issue 37)
        said = features.remote_steer(paths, asked.action, text, asked.now, asked.story)
        if said is not None:
            return said
    if asked.story:
        return steer(loop_of(paths, asked.story), asked.action, text, now=asked.now, source="web")
    return steer_feature(paths, asked.action, text, now=asked.now, source="web")

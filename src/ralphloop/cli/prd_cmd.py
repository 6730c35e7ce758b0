"""`ralph prd [SPEC] [-f F]`: turn a seed-003 spec.md into prd.json, deterministically.

Re-running it after editing the spec keeps `passes: true` (and notes) of the stories whose ids did
not change, so planning again never loses finished work."""

from __future__ import annotations

import argparse
import json
import os

from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import TASK_CAP, read_file
from ralphloop.files.store import atomic_write_text
from ralphloop.project.paths import RALPH_DIR, FeaturePaths, display_path, find_project_root, is_feature_name
from ralphloop.tasks.spec_md.prd import merge_passes, render_prd, spec_to_prd

SPEC_NAME = "spec.md"


def command(args: argparse.Namespace, argv: list[str]) -> int:
    root = find_project_root()
    cwd = os.getcwd()
    folder = _folder(root, args.feature) if args.feature else None
    if args.spec:
        spec = args.spec
        folder = folder or os.path.dirname(os.path.abspath(spec))
    else:
        folder = folder or _only_planned(root)
        spec = os.path.join(folder, SPEC_NAME)
    shown_spec = display_path(os.path.abspath(spec), cwd)
    raw = read_file(spec, shown_spec, cap=TASK_CAP)
    if raw is None:
        raise RalphError(f"{shown_spec}: spec file not found (write it with /ralph-plan in Claude Code)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RalphError(f"{shown_spec}: not UTF-8 text") from None
    data = spec_to_prd(text, shown_spec)
    target = os.path.join(folder, "prd.json")
    shown = display_path(target, cwd)
    old = _existing(target, shown)
    merged = merge_passes(data, old)
    body = render_prd(merged)
    stories = merged["userStories"]
    passing = sum(1 for story in stories if story.get("passes"))
    kept = f", {passing} kept passing" if passing else ""
    if old is not None and _text(target) == body:
        print(f"{shown} is up to date with {shown_spec} ({len(stories)} stories{kept})")
        return 0
    atomic_write_text(target, body)
    print(f"Wrote {shown} from {shown_spec}: {len(stories)} stories{kept}")
    paths = FeaturePaths(root, folder)
    print(f"Next: {paths.command('validate')}, then {paths.command('run')}")
    return 0


def _folder(root: str, selector: str) -> str:
    named = os.path.join(root, RALPH_DIR, selector)
    if is_feature_name(selector) and os.path.isdir(named):
        return named
    if os.path.isdir(selector):
        return os.path.abspath(selector)
    raise RalphError(f"-f {selector}: no such folder ({display_path(named, os.getcwd())} does not exist)")


def _only_planned(root: str) -> str:
    """The one feature folder in .ralph/ that holds a spec.md."""
    base = os.path.join(root, RALPH_DIR)
    try:
        names = sorted(os.listdir(base))
    except OSError:
        names = []
    found = [name for name in names if os.path.isfile(os.path.join(base, name, SPEC_NAME))]
    if len(found) == 1:
        return os.path.join(base, found[0])
    where = display_path(base, os.getcwd())
    if not found:
        raise RalphError(f"no spec.md in any feature of {where}/: give the spec (ralph prd path/to/spec.md)")
    raise RalphError(f"several features in {where}/ have a spec.md ({', '.join(found)}): choose one with -f NAME")


def _existing(path: str, shown: str) -> dict[str, object] | None:
    """The prd.json already there (its passes are kept); an invalid one is not overwritten."""
    text = _text(path)
    if text is None:
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RalphError(
            f"{shown}: the existing file is invalid JSON (line {exc.lineno}): fix or remove it, then run ralph prd"
        ) from None
    except RecursionError:
        raise RalphError(f"{shown}: the existing file is invalid JSON (nested too deeply): fix or remove it") from None
    except ValueError as exc:  # a number of 4,300+ digits
        raise RalphError(f"{shown}: the existing file is invalid JSON ({exc}): fix or remove it") from None
    if not isinstance(data, dict):
        raise RalphError(f"{shown}: the existing file is not a JSON object: fix or remove it first")
    return data


def _text(path: str) -> str | None:
    raw = read_file(path, cap=TASK_CAP)
    try:
        return None if raw is None else raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RalphError(f"{path}: cannot read: {exc}") from None

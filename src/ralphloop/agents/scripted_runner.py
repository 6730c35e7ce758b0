"""The scripted agent's process: `python -m ralphloop.agents.scripted_runner SCRIPT`.

Reads the prompt from stdin like any agent, then applies the steps for
RALPH_ITERATION in the current folder (the project root).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from ralphloop.agents.script import ScriptError, as_list, validate_script
from ralphloop.core.errors import RalphError
from ralphloop.files.store import append_text, atomic_write_text
from ralphloop.files.yaml_file import read_yaml_mapping
from ralphloop.tasks.prd_reading import story_items


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m ralphloop.agents.scripted_runner SCRIPT", file=sys.stderr)
        return 2
    sys.stdin.read()  # an agent consumes its prompt, even one that ignores it
    try:
        steps = validate_script(read_yaml_mapping(argv[0], argv[0]), argv[0])
        iteration = int(os.environ.get("RALPH_ITERATION", "1"))
        if iteration > len(steps):
            print(f"scripted agent: no step for iteration {iteration}; nothing to do")
            return 0
        return apply(steps[iteration - 1], os.environ.get("RALPH_FEATURE_DIR", "."))
    except (RalphError, ScriptError, OSError, ValueError) as exc:
        print(f"scripted agent: {exc}", file=sys.stderr)
        return 2


def apply(step: dict[str, Any], feature_dir: str) -> int:
    """Apply one iteration's actions in their fixed order; the exit code to end with."""
    for path, text in step.get("write", {}).items():
        _ensure_parent(path)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    for path, text in step.get("append", {}).items():
        _ensure_parent(path)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)
    for path in as_list(step.get("delete", [])):
        if os.path.exists(path):
            os.remove(path)
    for argv in step.get("run", []):
        done = subprocess.run(argv, check=False, capture_output=True, text=True)
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
        if done.returncode != 0:
            print(f"scripted agent: {' '.join(argv)} failed with exit code {done.returncode}", file=sys.stderr)
            return 1
    if "pass" in step:
        _mark_passing(os.path.join(feature_dir, "prd.json"), as_list(step["pass"]))
    if "progress" in step:
        append_text(os.path.join(feature_dir, "progress.txt"), step["progress"].rstrip("\n") + "\n")
    if "commit" in step:
        _commit(step["commit"])
    if "sleep" in step:
        time.sleep(float(step["sleep"]))
    if "say" in step:
        sys.stdout.write(step["say"] if step["say"].endswith("\n") else step["say"] + "\n")
    if "stderr" in step:
        sys.stderr.write(step["stderr"] if step["stderr"].endswith("\n") else step["stderr"] + "\n")
    sys.stdout.flush()
    return int(step.get("exit", 0))


def _ensure_parent(path: str) -> None:
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)


def _mark_passing(prd_path: str, ids: list[str]) -> None:
    with open(prd_path, "rb") as handle:
        prd = json.loads(handle.read())  # UTF-8, or UTF-16/32 with a byte-order mark, as ralph reads it
    stories = [story for story in story_items(prd) if isinstance(story, dict)]  # wherever the file keeps them
    known = {story.get("id") for story in stories}
    missing = [story_id for story_id in ids if story_id not in known]
    if missing:
        raise ValueError(f"{prd_path}: no story {', '.join(missing)}")
    for story in stories:
        if story.get("id") in ids:
            story["passes"] = True
    atomic_write_text(prd_path, json.dumps(prd, indent=2, ensure_ascii=False) + "\n")


def _commit(message: str) -> None:
    identity: list[str] = []
    has_email = subprocess.run(["git", "config", "user.email"], capture_output=True, check=False).returncode == 0
    if not has_email:
        identity = ["-c", "user.name=ralph scripted agent", "-c", "user.email=scripted-agent@ralphloop.invalid"]
    subprocess.run(["git", "add", "-A"], check=True, capture_output=True)
    done = subprocess.run(
        ["git", *identity, "commit", "-q", "-m", message], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise ValueError(f"git commit failed: {(done.stdout + done.stderr).strip()}")
    print(f"scripted agent: committed {message!r}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

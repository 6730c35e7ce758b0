"""The scripted agent's script: one list of steps per iteration, validated before the loop starts.

```yaml
iterations:            # iteration N (RALPH_ITERATION) runs entry N; past the end it does nothing
  - write: {src/app.py: "print('hi')\\n"}   # create or replace files (relative to the project)
    append: {NOTES.md: "more\\n"}
    delete: [old.txt]
    run: [[python3, -m, pytest, -q]]       # argv lists, never a shell; a failure fails the iteration
    pass: [STORY-001]                      # set "passes": true in the feature's prd.json
    progress: "Learned that ..."           # appended to the feature's progress.txt
    commit: "feat: app"                    # git add -A; git commit -m ...
    say: "text for stdout"                 # what the agent prints (signals go here)
    stderr: "text for stderr"
    sleep: 0.5                             # seconds
    exit: 0                                # the process exit code
```
"""

from __future__ import annotations

from typing import Any

STEP_KEYS = ("write", "append", "delete", "run", "pass", "progress", "commit", "say", "stderr", "sleep", "exit")


class ScriptError(ValueError):
    """A script that does not follow the format; the message names the place."""


def validate_script(data: Any, label: str) -> list[dict[str, Any]]:
    """The list of iteration steps in `data`, or ScriptError naming `label` and the place."""
    if not isinstance(data, dict) or not isinstance(data.get("iterations"), list):
        raise ScriptError(f"{label}: expected a mapping with an 'iterations' list")
    steps: list[dict[str, Any]] = []
    for index, entry in enumerate(data["iterations"], start=1):
        where = f"{label}: iterations[{index}]"
        step = {} if entry is None else entry
        if not isinstance(step, dict):
            raise ScriptError(f"{where}: expected a mapping of actions")
        for key, value in step.items():
            if key not in STEP_KEYS:
                raise ScriptError(f"{where}: unknown action {key!r} (known: {', '.join(STEP_KEYS)})")
            _check(key, value, f"{where}.{key}")
        steps.append(step)
    return steps


def _check(key: str, value: Any, where: str) -> None:
    if key in ("write", "append"):
        if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise ScriptError(f"{where}: expected a mapping of path: text")
    elif key in ("delete", "pass"):
        if isinstance(value, str):
            return
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ScriptError(f"{where}: expected a string or a list of strings")
    elif key == "run":
        if not isinstance(value, list) or not all(
            isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv) for argv in value
        ):
            raise ScriptError(f"{where}: expected a list of argv lists, e.g. [[python3, -m, pytest]]")
    elif key in ("progress", "commit", "say", "stderr"):
        if not isinstance(value, str):
            raise ScriptError(f"{where}: expected a string")
    elif key == "sleep":
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ScriptError(f"{where}: expected a number of seconds")
    elif key == "exit" and (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 255):
        raise ScriptError(f"{where}: expected an exit code from 0 to 255")


def as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)

"""validate_script: the scripted agent's script format, and errors that name `iterations[N].key`."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from ralphloop.agents.script import STEP_KEYS, ScriptError, as_list, validate_script

LABEL = ".ralph/script.yaml"

DOCUMENTED = """
iterations:
  - write: {src/app.py: "print('hi')\\n"}
    append: {NOTES.md: "more\\n"}
    delete: [old.txt]
    run: [[python3, -m, pytest, -q]]
    pass: [STORY-001]
    progress: "Learned that ..."
    commit: "feat: app"
    say: "text for stdout"
    stderr: "text for stderr"
    sleep: 0.5
    exit: 0
  -
  - say: "<promise>COMPLETE</promise>"
    delete: gone.txt
    pass: STORY-002
    sleep: 0
    exit: 255
"""


def error_of(data: Any) -> str:
    with pytest.raises(ScriptError) as caught:
        validate_script(data, LABEL)
    return str(caught.value)


def test_documented_format_is_accepted() -> None:
    steps = validate_script(yaml.safe_load(DOCUMENTED), LABEL)
    assert len(steps) == 3
    assert set(steps[0]) == set(STEP_KEYS)
    assert steps[0]["run"] == [["python3", "-m", "pytest", "-q"]]
    assert steps[0]["write"] == {"src/app.py": "print('hi')\n"}
    assert steps[1] == {}
    assert steps[2]["pass"] == "STORY-002"


def test_the_module_docstring_example_is_accepted() -> None:
    import ralphloop.agents.script as module

    assert module.__doc__ is not None
    example = module.__doc__.split("```yaml", 1)[1].split("```", 1)[0]
    steps = validate_script(yaml.safe_load(example), LABEL)
    assert len(steps) == 1
    assert steps[0]["exit"] == 0


def test_empty_iterations_list_is_accepted() -> None:
    assert validate_script({"iterations": []}, LABEL) == []


@pytest.mark.parametrize("data", [None, [], "iterations", {"steps": []}, {"iterations": {"say": "x"}}])
def test_top_level_must_hold_an_iterations_list(data: Any) -> None:
    message = error_of(data)
    assert message.startswith(f"{LABEL}: ")
    assert "iterations" in message


def test_entry_that_is_not_a_mapping_is_named() -> None:
    message = error_of({"iterations": [{"say": "ok"}, "say hi"]})
    assert message == f"{LABEL}: iterations[2]: expected a mapping of actions"


def test_unknown_action_is_named_with_its_place() -> None:
    message = error_of({"iterations": [{"say": "ok"}, {}, {"say": "x", "shell": "rm -rf /"}]})
    assert message.startswith(f"{LABEL}: iterations[3]: unknown action 'shell'")
    assert "say" in message


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("write", ["a.txt"]),
        ("write", {"a.txt": 5}),
        ("append", "text"),
        ("delete", [1]),
        ("delete", {"a": "b"}),
        ("pass", 7),
        ("pass", ["S-1", None]),
        ("run", "pytest -q"),
        ("run", ["pytest"]),
        ("run", [[]]),
        ("run", [["python3", 1]]),
        ("progress", 3),
        ("commit", ["msg"]),
        ("say", None),
        ("stderr", 1.5),
        ("sleep", "1"),
        ("sleep", -0.1),
        ("sleep", True),
        ("exit", 256),
        ("exit", -1),
        ("exit", "0"),
        ("exit", 1.0),
        ("exit", False),
    ],
)
def test_wrong_type_names_iterations_n_key(key: str, value: Any) -> None:
    message = error_of({"iterations": [{"say": "fine"}, {key: value}]})
    assert message.startswith(f"{LABEL}: iterations[2].{key}: expected ")


def test_first_entry_is_numbered_one() -> None:
    assert error_of({"iterations": [{"exit": 300}]}).startswith(f"{LABEL}: iterations[1].exit: ")


def test_as_list() -> None:
    assert as_list("S-1") == ["S-1"]
    assert as_list(["S-1", "S-2"]) == ["S-1", "S-2"]

"""Seed 003's `completion: {promise: "..."}`, in-process: the configured promise is the one ralph tells the agent to
print and the one it looks for, with the same quoting rules as the default; a bad value is refused in one line naming
file and key, before anything is written. The CLI's side is tests/integration/test_promise_config.py's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ralphloop.core.errors import RalphError
from ralphloop.core.exitcodes import ExitReason
from tests.conftest import read_json
from tests.engine.harness import Turn, Turns, build, entries, ralph, run
from tests.integration.helpers import set_config, snapshot

DEFAULT = "<promise>COMPLETE</promise>"
SHIPPED = "<promise>SHIPPED</promise>"


def _completion(project: Path, body: str) -> None:
    """`completion:` as the project's config says it (the line `ralph init` wrote replaced)."""
    set_config(project, "\ncompletion: verify\n", f"\ncompletion:\n{body}")


def says(text: str) -> Turns:
    """An agent that prints `text` every iteration (tests/agents/say.py)."""
    return Turns(then=Turn(say=text + "\n"))


def test_the_configured_promise_is_what_the_prompt_names_and_trust_ends_the_loop_on(
    project: Path, feature: Path
) -> None:
    _completion(project, f"  mode: trust\n  promise: {json.dumps(SHIPPED)}\n")

    done = run(project, says(f"All done.\n{SHIPPED}"), n=3)

    assert done.outcome.reason is ExitReason.COMPLETE
    assert read_json(feature / "status.json")["exitReason"] == "complete"
    assert not (feature / "logs" / "iteration-2.log").exists()  # believed at once, as trust says
    prompt = (feature / "logs" / "iteration-1.prompt.md").read_text()
    assert SHIPPED in prompt
    assert DEFAULT not in prompt  # the prompt.md `ralph init` wrote names the default: told the configured one
    analysis = read_json(feature / ".response_analysis")
    assert analysis["promise"] is True and "promise" in analysis["claim_sources"]


def test_the_default_promise_is_only_words_once_another_is_configured(project: Path, feature: Path) -> None:
    _completion(project, f"  mode: trust\n  promise: {json.dumps(SHIPPED)}\n")

    done = run(project, says(DEFAULT), n=2)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    assert read_json(feature / "status.json")["exitReason"] == "max_iterations"
    assert read_json(feature / ".response_analysis")["promise"] is False


@pytest.mark.parametrize(
    "reply",
    [
        f"I will print `{SHIPPED}` when every story passes.",  # inline code
        f"The prompt says:\n\n> {SHIPPED}\n",  # a blockquote
        f"<!-- {SHIPPED} -->",  # an HTML comment
        json.dumps({"note": f"say {SHIPPED}"}),  # a JSON string
        f"```\n{SHIPPED}\n```",  # a fenced block
        f'The marker is "{SHIPPED}".',  # the marker named in quotes
    ],
    ids=["inline-code", "blockquote", "html-comment", "json-string", "fenced", "quoted"],
)
def test_a_quoted_configured_promise_is_not_a_claim(project: Path, feature: Path, reply: str) -> None:
    _completion(project, f"  mode: trust\n  promise: {json.dumps(SHIPPED)}\n")

    done = run(project, says(reply), n=1)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    analysis = read_json(feature / ".response_analysis")
    assert analysis["completion_claimed"] is False
    assert analysis["quotations_ignored"] >= 1


def test_an_echo_of_the_prompt_naming_the_configured_promise_is_not_a_claim(project: Path, feature: Path) -> None:
    _completion(project, "  mode: trust\n  promise: ALL STORIES SHIPPED\n")

    done = run(project, Turns(then=Turn(echo_prompt=True)), n=2)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    assert "ALL STORIES SHIPPED" in (feature / "logs" / "iteration-1.log").read_text()  # the echo really happened
    assert read_json(feature / "status.json")["exitReason"] == "max_iterations"


def test_in_verify_mode_the_configured_promise_is_a_claim_the_task_file_must_back(project: Path, feature: Path) -> None:
    _completion(project, f"  promise: {json.dumps(SHIPPED)}\n")

    done = run(project, says(SHIPPED), n=1)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    (entry,) = entries(feature)
    assert "refused" in entry["Note"].lower(), entry
    # `ralph analyze` reads the saved output as the loop did: with the configured promise
    analyzed = ralph("analyze", str(feature / "logs" / "iteration-1.log"), "--json")
    assert analyzed.code == 0, analyzed.err
    assert json.loads(analyzed.out)["claim_sources"] == ["promise"]


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ('  promise: ""\n', "completion.promise"),
        ("  promise: 5\n", "completion.promise"),
        ("  promise: [COMPLETE]\n", "completion.promise"),
        ('  promise: "two\\nlines"\n', "completion.promise"),
        ("  promise: " + "x" * 201 + "\n", "completion.promise"),
        ("  mode: maybe\n", "completion"),
        ("  promis: COMPLETE\n", "completion"),  # a typo of the seed's key: refused, never silently ignored
    ],
    ids=["empty", "number", "list", "two-lines", "too-long", "bad-mode", "no-known-key"],
)
def test_a_bad_completion_setting_is_one_line_naming_the_file_and_key(
    project: Path, feature: Path, body: str, key: str
) -> None:
    _completion(project, body)
    before = snapshot(project)

    with pytest.raises(RalphError) as refused:
        build(project, says(SHIPPED), n=1)

    line = str(refused.value)  # what `ralph: error: ` comes before, alone on its line
    assert f".ralph/config.yaml: {key}:" in line, line
    assert "\n" not in line and not refused.value.choices
    assert snapshot(project) == before


def test_a_mistyped_key_beside_a_good_one_is_warned_about(project: Path, feature: Path) -> None:
    _completion(project, "  mode: verify\n  promis: DONE\n")

    done = run(project, says("hi"), n=1)

    assert done.outcome.reason is ExitReason.MAX_ITERATIONS
    assert any("unknown setting 'completion.promis' (ignored)" in warning for warning in done.built.warnings)

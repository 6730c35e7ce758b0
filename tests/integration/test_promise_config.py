"""Seed 003's `completion: {promise: "..."}`: the configured promise is the one ralph tells the agent to print and
the one it looks for, with the same quoting rules as the default; a bad value is one line naming file and key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import agent_cmd, read_json
from tests.integration.helpers import assert_one_line_error, entry_fields, progress_entries, set_config, snapshot

DEFAULT = "<promise>COMPLETE</promise>"
SHIPPED = "<promise>SHIPPED</promise>"


def _completion(project: Path, body: str) -> None:
    """`completion:` as the project's config says it (the line `ralph init` wrote replaced)."""
    set_config(project, "\ncompletion: verify\n", f"\ncompletion:\n{body}")


def test_the_configured_promise_is_what_the_prompt_names_and_trust_ends_the_loop_on(project, feature, ralph):
    _completion(project, f"  mode: trust\n  promise: {json.dumps(SHIPPED)}\n")

    done = ralph("run", "-n", "3", "--no-archive", "--agent-cmd", agent_cmd("say.py", f"All done.\n{SHIPPED}"))

    assert done.returncode == 0, done.stdout + done.stderr
    assert read_json(feature / "status.json")["exitReason"] == "complete"
    assert not (feature / "logs" / "iteration-2.log").exists()  # believed at once, as trust says
    prompt = (feature / "logs" / "iteration-1.prompt.md").read_text()
    assert SHIPPED in prompt
    assert DEFAULT not in prompt  # the prompt.md `ralph init` wrote names the default: told the configured one
    analysis = read_json(feature / ".response_analysis")
    assert analysis["promise"] is True and "promise" in analysis["claim_sources"]


def test_the_default_promise_is_only_words_once_another_is_configured(project, feature, ralph):
    _completion(project, f"  mode: trust\n  promise: {json.dumps(SHIPPED)}\n")

    done = ralph("run", "-n", "2", "--no-archive", "--agent-cmd", agent_cmd("say.py", DEFAULT))

    assert done.returncode == 1, done.stdout + done.stderr
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
def test_a_quoted_configured_promise_is_not_a_claim(project, feature, ralph, reply):
    _completion(project, f"  mode: trust\n  promise: {json.dumps(SHIPPED)}\n")

    done = ralph("run", "-n", "1", "--no-archive", "--agent-cmd", agent_cmd("say.py", reply))

    assert done.returncode == 1, done.stdout + done.stderr
    analysis = read_json(feature / ".response_analysis")
    assert analysis["completion_claimed"] is False
    assert analysis["quotations_ignored"] >= 1


def test_an_echo_of_the_prompt_naming_the_configured_promise_is_not_a_claim(project, feature, ralph):
    _completion(project, "  mode: trust\n  promise: ALL STORIES SHIPPED\n")

    done = ralph("run", "-n", "2", "--no-archive", "--agent-cmd", agent_cmd("say.py", "--echo-prompt"))

    assert done.returncode == 1, done.stdout + done.stderr
    assert "ALL STORIES SHIPPED" in (feature / "logs" / "iteration-1.log").read_text()  # the echo really happened
    assert read_json(feature / "status.json")["exitReason"] == "max_iterations"


def test_in_verify_mode_the_configured_promise_is_a_claim_the_task_file_must_back(project, feature, ralph):
    _completion(project, f"  promise: {json.dumps(SHIPPED)}\n")

    done = ralph("run", "-n", "1", "--no-archive", "--agent-cmd", agent_cmd("say.py", SHIPPED))

    assert done.returncode == 1, done.stdout + done.stderr
    (entry,) = progress_entries((feature / "progress.txt").read_text())
    assert "refused" in entry_fields(entry)["Note"].lower(), entry
    # `ralph analyze` reads the saved output as the loop did: with the configured promise
    analyzed = ralph("analyze", str(feature / "logs" / "iteration-1.log"), "--json")
    assert analyzed.returncode == 0, analyzed.stderr
    assert json.loads(analyzed.stdout)["claim_sources"] == ["promise"]


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
def test_a_bad_completion_setting_is_one_line_naming_the_file_and_key(project, feature, ralph, body, key):
    _completion(project, body)
    before = snapshot(project)

    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", SHIPPED))

    assert_one_line_error(done, f".ralph/config.yaml: {key}:")
    assert snapshot(project) == before


def test_a_mistyped_key_beside_a_good_one_is_warned_about(project, feature, ralph):
    _completion(project, "  mode: verify\n  promis: DONE\n")

    done = ralph("run", "-n", "1", "--no-archive", "--agent-cmd", agent_cmd("say.py", "hi"))

    assert done.returncode == 1, done.stdout + done.stderr
    assert "unknown setting 'completion.promis' (ignored)" in done.stderr

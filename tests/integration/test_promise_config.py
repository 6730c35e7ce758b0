"""Seed 003's `completion: {promise: "..."}` at the CLI's edge: a trusting run ends on the configured promise with
exit 0, and a bad value is one line naming file and key, exit 1, nothing written. What the promise decides and
records (the prompt, the quoting rules, verify mode, each bad value) is tests/engine/test_promise_config.py's."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import agent_cmd, read_json
from tests.integration.helpers import assert_one_line_error, set_config, snapshot

SHIPPED = "<promise>SHIPPED</promise>"


def _completion(project: Path, body: str) -> None:
    """`completion:` as the project's config says it (the line `ralph init` wrote replaced)."""
    set_config(project, "\ncompletion: verify\n", f"\ncompletion:\n{body}")


def test_the_configured_promise_ends_a_trusting_run_with_exit_0(project, feature, ralph):
    _completion(project, f"  mode: trust\n  promise: {json.dumps(SHIPPED)}\n")

    done = ralph("run", "-n", "3", "--no-archive", "--agent-cmd", agent_cmd("say.py", f"All done.\n{SHIPPED}"))

    assert done.returncode == 0, done.stdout + done.stderr
    assert read_json(feature / "status.json")["exitReason"] == "complete"


def test_a_bad_completion_setting_is_one_line_naming_the_file_and_key(project, feature, ralph):
    _completion(project, '  promise: ""\n')
    before = snapshot(project)

    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", SHIPPED))

    assert_one_line_error(done, ".ralph/config.yaml: completion.promise:")
    assert snapshot(project) == before

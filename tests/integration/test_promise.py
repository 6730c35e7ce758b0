"""The completion promise is only believed when prd.json agrees, and never from an echo of the prompt."""

from __future__ import annotations

import pytest

from tests.conftest import agent_cmd, read_json
from tests.integration.helpers import entry_fields, progress_entries

PROMISE = "<promise>COMPLETE</promise>"


def test_promise_with_open_stories_is_refused(feature, ralph):
    done = ralph("run", "-n", "2", "--agent-cmd", agent_cmd("say.py", PROMISE))

    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "max_iterations"
    assert status["status"] != "complete"
    assert status["storiesComplete"] == 0
    entries = progress_entries((feature / "progress.txt").read_text())
    assert len(entries) == 2
    for entry in entries:
        fields = entry_fields(entry)
        assert fields["Status"] != "complete"
        assert "refused" in fields["Note"].lower(), entry
    # The next prompt tells the agent itself, not only through the copy of progress.txt it carries.
    second_prompt = (feature / "logs" / "iteration-2.prompt.md").read_text()
    assert entries[0] in second_prompt
    assert "refused" in second_prompt.replace(entries[0], "").lower()
    # The first prompt had no refusal to tell of.
    assert "refused" not in (feature / "logs" / "iteration-1.prompt.md").read_text().lower()
    assert not (feature.parent / "archive").exists()


def test_promise_alone_does_not_stop_the_loop(feature, ralph):
    done = ralph("run", "-n", "3", "--agent-cmd", agent_cmd("say.py", PROMISE))

    assert done.returncode == 1, done.stdout + done.stderr
    assert (feature / "logs" / "iteration-3.log").is_file()
    assert read_json(feature / "status.json")["iteration"] == 3


@pytest.mark.parametrize("template", ["custom", "default"])
def test_promise_in_an_echo_of_the_prompt_is_not_a_claim(project, feature, ralph, template):
    args: tuple[str, ...] = ()
    if template == "custom":
        # The promise as plain text (not code) in the template: only the echo logic can tell it apart.
        custom = project / "echo-template.md"
        custom.write_text(f"Work on the story. When every story passes, print\n\n{PROMISE}\n\nat the end.\n")
        args = ("-p", str(custom))
    else:
        assert PROMISE in (feature / "prompt.md").read_text()

    done = ralph("run", "-n", "2", *args, "--agent-cmd", agent_cmd("say.py", "--echo-prompt"))

    assert done.returncode == 1, done.stdout + done.stderr
    assert PROMISE in (feature / "logs" / "iteration-1.log").read_text()  # the echo really happened
    assert read_json(feature / "status.json")["exitReason"] == "max_iterations"
    text = (feature / "progress.txt").read_text()
    assert "refused" not in text.lower(), text
    assert "refused" not in (feature / "logs" / "iteration-2.prompt.md").read_text().lower()


def test_promise_with_every_story_passing_completes(feature, ralph):
    done = ralph("run", "--no-archive", "--agent-cmd", agent_cmd("story_agent.py", "--promise"))

    assert done.returncode == 0, done.stdout + done.stderr
    assert read_json(feature / "status.json")["exitReason"] == "complete"
    assert "refused" not in (feature / "progress.txt").read_text().lower()

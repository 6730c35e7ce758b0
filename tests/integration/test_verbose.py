"""-v shows the agent's output, made safe for the terminal."""

from __future__ import annotations

from tests.conftest import agent_cmd
from tests.integration.helpers import ESC

HOSTILE = "\x1b[2J\x1b]0;evil\x07hello-from-agent"


def test_verbose_shows_agent_output_without_escape_sequences(feature, ralph):
    done = ralph("run", "-v", "-n", "1", "--agent-cmd", agent_cmd("say.py", HOSTILE))

    assert done.returncode == 1, done.stdout + done.stderr
    assert "hello-from-agent" in done.stdout
    assert ESC not in done.stdout
    assert "\x07" not in done.stdout
    assert "evil" not in done.stdout
    # The log keeps the agent's output as it was.
    assert HOSTILE in (feature / "logs" / "iteration-1.log").read_text()


def test_without_verbose_the_agent_output_is_not_shown(feature, ralph):
    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "hello-from-agent"))

    assert done.returncode == 1, done.stdout + done.stderr
    assert "hello-from-agent" not in done.stdout
    assert "hello-from-agent" in (feature / "logs" / "iteration-1.log").read_text()

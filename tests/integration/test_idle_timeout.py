"""process.idle_timeout_minutes through the real `ralph run`: an agent that goes silent is stopped with everything it
started long before its timeout, and the iteration fails saying so; a hook that is quiet for longer is not stopped."""

from __future__ import annotations

import shlex

from tests.conftest import agent_cmd, read_json
from tests.integration.helpers import entry_fields, pid_alive, progress_entries, read_pid, wait_dead


def test_a_silent_agent_is_stopped_after_the_idle_limit(feature, project, ralph, background, tmp_path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    marker = tmp_path / "hook-finished"
    # A pre_iteration hook silent for 2 s, twice the idle limit: the limit is the agent's, never a hook's.
    hook = f"sleep 2; touch {shlex.quote(str(marker))}"
    with (project / ".ralph" / "config.yaml").open("a", encoding="utf-8") as config:
        config.write(f'\nprocess:\n  idle_timeout_minutes: "1s"\nhooks:\n  pre_iteration: {shlex.quote(hook)}\n')

    # hang_with_grandchild.py prints "working..." and then nothing for 300 s; the timeout is 10 minutes.
    done = ralph("run", "-n", "1", "-t", "10m", "--agent-cmd", agent_cmd("hang_with_grandchild.py", str(pidfile)))

    grandchild = read_pid(pidfile)
    assert grandchild is not None, "the agent never started its grandchild"
    if pid_alive(grandchild):
        background.adopt(grandchild)
    assert done.returncode == 1, done.stdout + done.stderr
    assert wait_dead(grandchild), f"grandchild {grandchild} survived the idle timeout"
    [entry] = progress_entries((feature / "progress.txt").read_text())
    fields = entry_fields(entry)
    assert fields["Status"] == "failed"
    assert "agent failed: no output for 1 s (the idle timeout); its process group was stopped" in fields["Note"]
    assert "working..." in (feature / "logs" / "iteration-1.log").read_text()
    assert read_json(feature / "status.json")["exitReason"] == "max_iterations"
    assert marker.exists(), "the quiet pre_iteration hook was stopped by the agent's idle limit"

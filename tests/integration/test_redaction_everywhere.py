"""No secret an agent prints reaches any file ralph keeps, any git object, the screen or the next prompt.

tests/agents/leaky_agent.py prints $MY_API_KEY (a secret by its variable's name) and a key-shaped string (found by
its shape only) through every channel: final text, LEARN tags, a status block's reason, `ralph signal`, a failing
agent's stderr, a hook's output, a goal's JSON result, a secret split by a stderr line, a 70 KB line cut anywhere.
A piece of 8 characters or more of either is a leak.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from tests.conftest import PYTHON, RalphRunner, agent_cmd
from tests.integration.helpers import git

SECRET = "Qm7vX2pL9sKe4TnWb8Rz3Yh6"  # not key-shaped: only its variable's name says it is a secret
SHAPED = "ghp_" + "N4c8Jw2Rt6Vy0Bq5Hm9Lx3Dk7Fs1Gp4Zu8W"  # a GitHub token's shape, in no secret variable
PIECE = 8
AGENT = agent_cmd("leaky_agent.py")


def leaks(data: bytes) -> list[str]:
    """The pieces of either secret (PIECE characters or more) that `data` holds."""
    return [
        value[i : i + PIECE]
        for value in (SECRET, SHAPED)
        for i in range(len(value) - PIECE + 1)
        if value[i : i + PIECE].encode() in data
    ]


def leaked_files(tmp_path: Path, project: Path, env: dict[str, str]) -> dict[str, list[str]]:
    """Every file under tmp_path (the project, .ralph, RALPH_HOME) and every git object, with what it leaks."""
    found: dict[str, list[str]] = {}
    for folder, _dirs, files in os.walk(tmp_path):
        for name in files:
            path = Path(folder, name)
            if ".git/objects" not in str(path) and (pieces := leaks(path.read_bytes())):
                found[str(path.relative_to(tmp_path))] = pieces
    # every object ralph wrote, reachable or not (captures, saved attempts, commits): `git log -p` and more
    objects = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=project, env=env, capture_output=True, check=True
    ).stdout
    if pieces := leaks(objects):
        found["git objects"] = pieces
    return found


def test_secrets_in_every_channel_reach_no_file_no_commit_and_no_prompt(
    project: Path, feature: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    with (project / ".ralph" / "config.yaml").open("a", encoding="utf-8") as handle:
        handle.write("\nblocked_threshold: 1\nhooks:\n  post_iteration: 'echo hook saw $MY_API_KEY; exit 1'\n")
    git(project, ralph_env, "add", "-A")
    git(project, ralph_env, "commit", "-q", "-m", "feature")
    env = {"MY_API_KEY": SECRET, "LEAK_SHAPE": SHAPED, "LEAK_STEPS": "leak,fail,pass,blocked", "RALPH_AUTO_COMMIT": "1"}

    done = ralph("run", "-f", "feat", "--agent-cmd", AGENT, "-n", "4", "-v", env=env)

    status = (feature / "status.json").read_text()
    assert '"blockedReason"' in status and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert len(list((feature / "logs").glob("iteration-*.log"))) == 4
    assert git(project, ralph_env, "log", "--format=%s").count("\n") >= 3  # the passing story was committed
    assert "[REDACTED]" in (feature / "progress.txt").read_text()
    after = ralph("run", "-f", "feat", "--agent-cmd", AGENT, "--dry-run", env=env)  # the next prompt
    shown = ralph("status", "-f", "feat", env=env)
    assert after.returncode == 0 and "[REDACTED]" in after.stdout, after.stdout + after.stderr
    screens = {"run": done.stdout + done.stderr, "dry run": after.stdout + after.stderr, "status": shown.stdout}
    assert {name: leaks(text.encode()) for name, text in screens.items() if leaks(text.encode())} == {}
    assert leaked_files(tmp_path, project, ralph_env) == {}


def test_a_goals_json_results_keep_no_secret(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = project / "sprints" / "auth"
    folder.mkdir(parents=True)
    (folder / "SPRINT.yaml").write_text("workflow: ralph\ngoal: |\n  Deploy it.\n")
    git(project, ralph_env, "add", "-A")
    git(project, ralph_env, "commit", "-q", "-m", "sprint")
    env = {"MY_API_KEY": SECRET, "LEAK_SHAPE": SHAPED, "LEAK_STEPS": "goal"}

    done = ralph("run", "sprints/auth/", "--agent-cmd", AGENT, "-n", "4", env=env)

    assert "Traceback" not in done.stderr, done.stdout + done.stderr
    progress = (folder / "PROGRESS.yaml").read_text()
    assert "dynamic-steps" in progress and "[REDACTED]" in progress, progress
    assert leaks((done.stdout + done.stderr).encode()) == []
    assert leaked_files(tmp_path, project, ralph_env) == {}


def test_a_secret_split_across_stdout_and_stderr_writes_or_a_long_line_cut_is_masked_in_the_log(
    feature: Path, ralph: RalphRunner
) -> None:
    code = (
        "import os, sys\n"
        "s = os.environ['MY_API_KEY']\n"
        "for _ in range(20):\n"
        "    sys.stdout.write('out ' + s[:12]); sys.stdout.flush()\n"
        "    sys.stderr.write('between\\n'); sys.stderr.flush()\n"
        "    sys.stdout.write(s[12:] + '\\n'); sys.stdout.flush()\n"
        "for size in (65536, 65537, 70000, 131072):\n"
        "    line = ('.' + s) * (size // (len(s) + 1) + 1)\n"
        "    sys.stdout.write(line + '\\n'); sys.stdout.flush()\n"
        "    sys.stderr.write(line + '\\n'); sys.stderr.flush()\n"
    )
    agent = shlex.join([PYTHON, "-c", code])

    ralph("run", "-f", "feat", "--agent-cmd", agent, "-n", "1", env={"MY_API_KEY": SECRET})

    log = (feature / "logs" / "iteration-1.log").read_bytes()
    assert log.count(b"[REDACTED]") >= 40 + 4 * 2 * 2600
    assert leaks(log) == []

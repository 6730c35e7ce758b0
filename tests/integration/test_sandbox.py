"""The sandbox around the agent (issue 35), with real processes and Debian's bubblewrap: a hostile agent under
`--sandbox bwrap` (tests/agents/sandbox_probe.py) tries what an agent let loose could, and only its honest work gets
out. What this machine has is decided here: the tests need a bwrap that works (scripts/setup.sh installs it), and
the fallback of `auto` is tested with a bwrap that is not there."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ralphloop.processes.sandbox import cannot_start
from tests.conftest import RalphRunner, agent_cmd, read_json
from tests.integration.helpers import git
from tests.integration.test_reports_true import prepared

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None or cannot_start(shutil.which("bwrap") or "bwrap") is not None,
    reason="bubblewrap cannot run here (scripts/setup.sh installs it when run as root)",
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[tuple[int, int]]:
    """Two HTTP servers on the machine's loopback: one the sandbox allows, one it does not."""
    ports = (_free_port(), _free_port())
    started = [
        subprocess.Popen(
            [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for port in ports
    ]
    deadline = time.monotonic() + 10
    for port in ports:
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
    try:
        yield ports
    finally:
        for each in started:
            each.terminate()
            each.wait(5)


def attempts(log: Path) -> dict[str, dict[str, Any]]:
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith('{"what"')]
    return {line["what"]: line for line in lines}


def daemons() -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if b"301.25" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            continue
    return found


def test_a_hostile_agent_gets_out_with_its_honest_work_alone(
    project: Path,
    ralph: RalphRunner,
    ralph_env: dict[str, str],
    tmp_path: Path,
    servers: tuple[int, int],
    request: pytest.FixtureRequest,
) -> None:
    allowed, blocked = servers
    config = f"git:\n  auto_commit: true\nsandbox:\n  registries: false\n  allow_hosts: ['127.0.0.1:{allowed}']\n"
    folder = prepared(project, ralph_env, ralph, 1, config)
    user_home = tmp_path / "user-home"
    (user_home / ".ssh").mkdir(parents=True)
    (user_home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n")
    (user_home / ".aws").mkdir()
    (user_home / ".aws" / "credentials").write_text("[default]\naws_secret_access_key = secret\n")
    # another repository on the machine's disk (not in a tmpfs like /dev/shm, which the box makes its own)
    other = Path(tempfile.mkdtemp(prefix="ralph-other-repo-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(other, ignore_errors=True))
    git(other, ralph_env, "init", "-q")
    marker = tmp_path / "hook-ran"
    probe = agent_cmd("sandbox_probe.py", str(user_home), str(other), str(allowed), str(blocked), str(marker))
    env = {"HOME": str(user_home), "AWS_SECRET_ACCESS_KEY": "s3cret-of-ralphs-environment"}

    done = ralph("run", "-n", "1", "--no-archive", "--sandbox", "bwrap", "--agent-cmd", probe, env=env)

    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    tried = attempts(folder / "logs" / "iteration-1.log")
    for refused in (
        "write ~/.ssh/authorized_keys",
        "read ~/.ssh/id_ed25519",
        "read ~/.aws/credentials",
        "write /etc",
        "write another repository",
        "secret variable",
        "blocked host",
        "see ralph",
        "signal ralph",
        "plant a git hook",
        "set core.hooksPath",
    ):
        assert tried[refused]["ok"] is False, (refused, tried[refused])
    assert tried["allowed host"] == {"what": "allowed host", "ok": True, "said": "200"}
    assert "403" in tried["blocked host"]["said"]
    assert not (user_home / ".ssh" / "authorized_keys").exists() and not (other / "planted.txt").exists()
    assert tried["start a daemon"]["ok"] is True and daemons() == []  # it died with its iteration
    # the refusal is told on the iteration's line and in progress.txt, with what to do
    assert f"blocked: 127.0.0.1:{blocked} — add it to sandbox.allow_hosts" in done.stdout
    assert f"blocked: 127.0.0.1:{blocked}" in (folder / "progress.txt").read_text()
    # its honest work: committed, the story passes; no hook it planted ever ran, inside or out
    assert read_json(folder / "status.json")["exitReason"] == "complete"
    assert git(project, ralph_env, "show", "HEAD:work.txt") == "honest work\n"
    assert not marker.exists()
    assert "s3cret-of-ralphs-environment" not in (folder / "logs" / "iteration-1.log").read_text()


def test_auto_without_a_working_bwrap_warns_once_and_runs_bwrap_refuses_in_one_line(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    config = "sandbox:\n  bwrap: /nonexistent/bwrap\n"
    folder = prepared(project, ralph_env, ralph, 1, config)
    say = agent_cmd("say.py", "nothing")

    auto = ralph("run", "-n", "1", "--sandbox", "auto", "--agent-cmd", say)
    assert auto.returncode == 1, auto.stdout + auto.stderr  # max iterations: it ran, unboxed
    warned = [line for line in auto.stderr.splitlines() if "without the sandbox" in line]
    assert len(warned) == 1 and "/nonexistent/bwrap is not installed" in warned[0]
    assert read_json(folder / "status.json")["exitReason"] == "max_iterations"

    before = (folder / "status.json").read_bytes()
    strict = ralph("run", "-n", "1", "--sandbox", "bwrap", "--agent-cmd", say)
    assert strict.returncode == 1
    assert strict.stderr.strip().splitlines() == [
        "ralph: error: --sandbox bwrap: /nonexistent/bwrap is not installed (Debian: apt-get install bubblewrap)"
    ]
    assert (folder / "status.json").read_bytes() == before  # refused before anything ran


def test_network_allow_without_nsenter_is_refused_in_one_line_and_network_none_needs_none(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    """What this machine has is decided here: a PATH with git, bwrap and a shell, and no nsenter."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("git", "bwrap", "sh"):
        (tools / name).symlink_to(shutil.which(name) or name)
    folder = prepared(project, ralph_env, ralph, 1, "")
    ralph_env["PATH"] = str(tools)
    say = agent_cmd("say.py", "nothing")

    strict = ralph("run", "-n", "1", "--sandbox", "bwrap", "--agent-cmd", say)
    assert strict.returncode == 1
    assert strict.stderr.strip().splitlines() == [
        "ralph: error: --sandbox bwrap: sandbox.network allow needs nsenter (Debian: util-linux); "
        "sandbox.network none or open needs none"
    ]
    assert not (folder / "status.json").exists()  # refused before anything ran

    (project / ".ralph" / "config.yaml").write_text("sandbox:\n  network: none\n")
    git(project, ralph_env, "add", "-A")
    git(project, ralph_env, "commit", "-q", "-m", "no network")
    boxed = ralph("run", "-n", "1", "--sandbox", "bwrap", "--agent-cmd", say)
    assert boxed.returncode == 1, boxed.stdout + boxed.stderr  # max iterations: it ran, in the box
    assert "without the sandbox" not in boxed.stderr
    assert read_json(folder / "status.json")["exitReason"] == "max_iterations"


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ("sandbox:\n  mode: bwarp\n", "sandbox.mode: expected one of auto, bwrap, off (did you mean bwrap?)"),
        ("sandbox:\n  network: allowed\n", "sandbox.network: expected one of allow, open, none (did you mean allow?)"),
        ("sandbox:\n  allow_hosts: ['pypi org:443']\n", "'pypi org:443' is not a host:port pattern"),
        ("sandbox:\n  env: ['1BAD']\n", "'1BAD' is not a variable name"),
    ],
)
def test_a_bad_sandbox_setting_is_refused_in_one_line(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], config: str, said: str
) -> None:
    prepared(project, ralph_env, ralph, 1, config)
    done = ralph("run", "-n", "1", "--agent-cmd", agent_cmd("say.py", "x"))
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1 and said in lines[0], done.stderr


def test_a_dry_run_prints_the_box_and_writes_nothing(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    prepared(project, ralph_env, ralph, 1, "sandbox:\n  allow_hosts: ['example.com:443']\n")
    home = Path(ralph_env["RALPH_HOME"])
    done = ralph("run", "--dry-run", "--sandbox", "bwrap", "--agent-cmd", agent_cmd("say.py", "x"))
    assert done.returncode == 0, done.stderr
    assert "# Sandbox: bubblewrap" in done.stdout and "example.com:443" in done.stdout
    assert not (home / "sandbox").exists()


def test_an_agent_that_lives_under_tmp_still_runs_in_the_box(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], request: pytest.FixtureRequest
) -> None:
    """The box has a /tmp of its own: a command (and the script it names) under the machine's /tmp is shown again."""
    folder = prepared(project, ralph_env, ralph, 1)
    scripts = Path(tempfile.mkdtemp(prefix="ralph-agent-", dir="/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(scripts, ignore_errors=True))
    script = scripts / "agent.py"
    script.write_text(
        "import json\np = '.ralph/feat/prd.json'\nd = json.load(open(p))\n"
        "d['userStories'][0]['passes'] = True\njson.dump(d, open(p, 'w'))\nprint('done from /tmp')\n"
    )
    done = ralph("run", "-n", "1", "--no-archive", "--sandbox", "bwrap", "--agent-cmd", f"{sys.executable} {script}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert read_json(folder / "status.json")["exitReason"] == "complete"


def test_a_login_the_cli_refreshes_in_the_box_is_written_back_to_the_users_home(tmp_path: Path) -> None:
    """The copy of a rotating login (Claude's .credentials.json, Codex's auth.json) the CLI rewrote in the box goes
    back to the user's home, 0600, so the user's own CLI has the refresh token that is still good."""
    from ralphloop.core.cancel import CancelToken
    from ralphloop.core.protocols import AgentCommand
    from ralphloop.core.runner import Launch, ProcessLimits
    from ralphloop.processes.sandbox import Box, SandboxRunner

    worktree, home, user = tmp_path / "work", tmp_path / "agent-home", tmp_path / "user-home"
    for folder in (worktree, home / ".claude", user / ".claude"):
        folder.mkdir(parents=True)
    (user / ".claude" / ".credentials.json").write_text('{"refreshToken": "old"}')
    copy = home / ".claude" / ".credentials.json"
    copy.write_text('{"refreshToken": "old"}')
    os.utime(copy, (1, 1))  # seeded earlier than the user's file was written
    box = Box(
        bwrap=shutil.which("bwrap") or "bwrap",
        hidden=(str(user),),
        shown=(),
        writable=(str(worktree),),
        read_only=(),
        home=str(home),
        env={"PATH": os.environ["PATH"]},
        network="none",
        logins=((str(copy), str(user / ".claude" / ".credentials.json")),),
    )
    refresh = AgentCommand(
        ("sh", "-c", 'echo \'{"refreshToken": "new"}\' > "$HOME/.claude/.credentials.json"'), {}, b""
    )
    launch = Launch(refresh, str(worktree), str(tmp_path / "log.txt"), ProcessLimits(timeout_s=30))
    cancel = CancelToken()
    try:
        outcome = SandboxRunner(box).run(launch, cancel, on_stdout=lambda data: None)
    finally:
        cancel.close()
    assert outcome.exit_code == 0
    written = user / ".claude" / ".credentials.json"
    assert json.loads(written.read_text()) == {"refreshToken": "new"}
    assert written.stat().st_mode & 0o777 == 0o600


def test_parallel_loops_never_share_a_login_whose_refresh_token_is_used_once(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    from tests.integration.helpers import parallel_feature

    parallel_feature(project, ralph_env, [{"id": "S-1", "title": "one", "priority": 1, "passes": False}])
    user = tmp_path / "user-home"
    (user / ".codex").mkdir(parents=True)
    (user / ".codex" / "auth.json").write_text('{"tokens": {"refresh_token": "once"}}')
    env = {"HOME": str(user), "CODEX_HOME": str(user / ".codex"), "RALPH_CODEX_COMMAND": shutil.which("true") or "true"}

    done = ralph("run", "--parallel", "2", "--sandbox", "bwrap", "--agent", "codex", env=env)

    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stdout + done.stderr
    assert lines[0].startswith("ralph: error: --sandbox bwrap: ")
    assert "auth.json is a login whose refresh token is used once" in lines[0]
    assert "codex: set OPENAI_API_KEY (or CODEX_API_KEY) to an API key" in lines[0]
    assert not (project / ".ralph" / "feat" / "fleet.json").exists()  # nothing started

    # under auto (the default) the loops run as without the sandbox, each sharing the user's login, told once
    auto = ralph("run", "--parallel", "2", "-n", "1", "--sandbox", "auto", "--agent", "codex", env=env)
    told = [line for line in auto.stderr.splitlines() if "without the sandbox" in line]
    assert len(told) == 1 and "codex: set OPENAI_API_KEY" in told[0], auto.stdout + auto.stderr
    assert (project / ".ralph" / "feat" / "fleet.json").exists()  # it ran


def test_each_loop_of_a_parallel_run_works_in_a_box_of_its_own(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    """`--parallel 2 --sandbox bwrap`: each loop's agent works in its own worktree (writable, with the repository's
    git folder, where its commits go) and its own home; the stories merge as without the box."""
    from tests.integration.helpers import parallel_feature

    stories = [{"id": f"S-{n}", "title": f"Story {n}", "priority": n, "passes": False} for n in (1, 2)]
    parallel_feature(project, ralph_env, stories)

    done = ralph("run", "--parallel", "2", "--sandbox", "bwrap", "--agent-cmd", agent_cmd("fleet_agent.py"))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "All 2 stories merged into ralph/feat." in done.stdout
    homes = sorted(path.name.rsplit("-", 1)[0] for path in (Path(ralph_env["RALPH_HOME"]) / "sandbox").iterdir())
    assert homes == ["S-1", "S-2", "project"]  # each loop's worktree its home (and the coordinator's resolver its)


def test_a_prompt_hook_s_agent_runs_in_the_box_as_the_loop_s_does(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    """Goal mode's per-iteration prompt hook starts the agent through the run's runner: in the box, with its home."""
    from tests.integration.test_goal_mode import SPRINT_DIR, sprint_yaml, write_sprint

    user_home = tmp_path / "user-home"
    (user_home / ".ssh").mkdir(parents=True)
    write_sprint(project, ralph_env, sprint_yaml(hooks="- id: witness\n  prompt: WITNESS\n  parallel: false\n"))
    witness = agent_cmd("hook_witness.py", str(user_home))
    env = {"HOME": str(user_home), "AWS_SECRET_ACCESS_KEY": "s3cret-of-ralphs-environment"}

    done = ralph("run", f"{SPRINT_DIR}/", "-n", "1", "--sandbox", "bwrap", "--agent-cmd", witness, env=env)

    assert done.returncode in (0, 1), done.stdout + done.stderr
    logs = list((project / SPRINT_DIR).rglob("witness-1.log"))
    assert len(logs) == 1, sorted(str(path) for path in (project / SPRINT_DIR).rglob("*.log"))
    told = {
        line["what"]: line["ok"] for line in map(json.loads, re.findall(r'^\{"what".*$', logs[0].read_text(), re.M))
    }
    assert told == {
        "write ~/.ssh/authorized_keys": False,
        "secret variable": False,
        "see ralph": False,
        "home is its own": True,
    }
    assert not (user_home / ".ssh" / "authorized_keys").exists()

"""Capture the real opencode's output for tests/fixtures/opencode/: `python -m tests.e2e.opencode_captures DIR`.

Each case runs the pinned opencode (opencode_cli.py) with the argv ralph's backend builds, the prompt on stdin, in
a fresh git repository and a private home, against the loopback fake of the OpenAI Chat Completions API answering
the case's script; DIR/<case>/ then holds `cmd.txt`, `stdout`, `stderr` and `rc` (124: stopped after the case's
time limit, as `timeout` would). Not a test: the captures are data the unit tests read. Some cases take a minute
(opencode's own retries: five, 2 s doubling to 30 s, when the provider names no retry time).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.e2e.fake_openai_chat import Call, FakeOpenAIChat, HttpError, Message, Reply, ToolCalls, Usage, tool_call
from tests.e2e.opencode_cli import MODEL, opencode_config, opencode_env, opencode_executable

PROMPT = "Work on story S-1 of the feature: write notes.md, then say <promise>COMPLETE</promise> when done.\n"
RULES = {
    "ask": {"edit": {"*": "deny"}, "bash": {"*": "deny"}},
    "edits": {"edit": {"*": "allow"}, "bash": {"*": "deny"}},
    "all": {"edit": {"*": "allow"}, "bash": {"*": "allow"}},
}
USAGE_LIMIT_RESET = 1795838400  # 2026-11-28T04:00:00Z
USAGE_LIMIT_BODY = {
    "error": {
        "message": "You have reached your usage limit for this billing period.",
        "type": "usage_limit_reached",
        "param": None,
        "code": "usage_limit_reached",
    }
}


@dataclass(frozen=True)
class Case:
    turns: Sequence[Reply]
    default: Reply = field(default_factory=lambda: Message("Done."))
    permissions: str = "edits"
    model: str | None = None
    limit_s: float = 120.0
    dead: bool = False  # the provider's port is closed (offline)


def write(path: str, text: str, usage: Usage | None = None) -> ToolCalls:
    return tool_call("write", {"filePath": path, "content": text}, text="Writing the notes.", usage=usage)


CASES: dict[str, Case] = {
    "mock_ok_json": Case([Message("Hello from the fake. <promise>COMPLETE</promise>", Usage(1200, 50, 200, 10))]),
    "mock_tool_json": Case(
        [
            write("{work}/notes.md", "# Notes\n", Usage(3000, 40, 1000)),
            tool_call("bash", {"command": "git status --short", "description": "status"}, usage=Usage(3500, 30, 3000)),
            Message("Wrote notes.md. <promise>COMPLETE</promise>", Usage(4000, 60, 3500, 20)),
        ]
    ),
    "mock_tool_all_json": Case(
        [
            ToolCalls([Call("bash", {"command": "echo hi > hi.txt && git status --short", "description": "go"})]),
            tool_call("bash", {"command": "exit 3", "description": "fail"}),
            Message("Done with exit 3. <promise>COMPLETE</promise>"),
        ],
        permissions="all",
    ),
    "mock_ask_json": Case(
        [write("{work}/notes.md", "# Notes\n"), Message("I may not edit files here.")], permissions="ask"
    ),
    "mock_rejected_json": Case([tool_call("read", {"filePath": "/etc/hostname"}), Message("never sent")]),
    "mock_auth_401_json": Case([HttpError.authentication()]),
    "mock_model_404_json": Case([HttpError.model_not_found(MODEL)]),
    "mock_rate_limit_429_json": Case([], default=HttpError.rate_limited(None, {"retry-after-ms": "0"})),
    "mock_usage_limit_429_json": Case(
        [],
        default=HttpError(429, USAGE_LIMIT_BODY, {"retry-after-ms": "0", "x-ratelimit-reset": str(USAGE_LIMIT_RESET)}),
    ),
    "mock_usage_limit_waiting_json": Case(
        [], default=HttpError(429, USAGE_LIMIT_BODY, {"retry-after": "7200"}), limit_s=30.0
    ),
    "mock_insufficient_quota_json": Case([], default=HttpError.insufficient_quota(), limit_s=240.0),
    "mock_server_500_json": Case([], default=HttpError.server_error(500), limit_s=240.0),
    "mock_offline_json": Case([], dead=True, limit_s=240.0),
    "mock_bad_model_json": Case([], model="fake/no-such-model"),
}


def argv(binary: str, case: Case) -> list[str]:
    """What OpencodeAgent.command builds (agents/opencode/backend.py)."""
    args = [
        binary,
        "run",
        "--format",
        "json",
        "--print-logs",
        "--log-level",
        "ERROR",
        "--title",
        "ralph S-1 iteration 1",
    ]
    if case.model:
        args += ["-m", case.model]
    if case.permissions == "all":
        args.append("--auto")
    return args


def capture(name: str, case: Case, out: Path, binary: str) -> None:
    with tempfile.TemporaryDirectory(prefix=f"opencode-{name}-") as folder:
        root = Path(folder)
        work = root / "work"
        work.mkdir()
        base = {
            **os.environ,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.invalid",
        }
        base.update(GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid")
        for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "initial"]):
            subprocess.run(["git", *args], cwd=work, env=base, check=True)
        turns = [_placed(turn, work) for turn in case.turns]
        with FakeOpenAIChat(turns, default=case.default) as fake:
            config = opencode_config(fake)
            if case.dead:
                config = config.replace(fake.url, f"http://127.0.0.1:{_closed_port()}/v1")
            env = opencode_env(root / "home", config, base)
            env.update(PWD=str(work), OPENCODE_PERMISSION=json.dumps(RULES[case.permissions]))
            command = argv(binary, case)
            try:
                done = subprocess.run(
                    command,
                    check=False,
                    input=PROMPT.encode(),
                    cwd=work,
                    env=env,
                    capture_output=True,
                    timeout=case.limit_s,
                )
                stdout, stderr, rc = done.stdout, done.stderr, done.returncode
            except subprocess.TimeoutExpired as stopped:
                stdout, stderr, rc = stopped.stdout or b"", stopped.stderr or b"", 124
        target = out / name
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        (target / "cmd.txt").write_text(" ".join(["opencode", *command[1:]]) + "\n")
        (target / "stdout").write_bytes(stdout.replace(str(root).encode(), b"/tmp/opencode-capture"))
        (target / "stderr").write_bytes(stderr.replace(str(root).encode(), b"/tmp/opencode-capture"))
        (target / "rc").write_text(f"{rc}\n")
        print(f"{name}: rc {rc}, {len(fake.main_requests)} requests", flush=True)


def _placed(turn: Reply, work: Path) -> Reply:
    """A turn with `{work}` in its tool arguments replaced by the repository's path."""
    if not isinstance(turn, ToolCalls):
        return turn
    calls = [Call(c.name, json.loads(json.dumps(dict(c.arguments)).replace("{work}", str(work)))) for c in turn.calls]
    return ToolCalls(calls, turn.text, turn.usage, turn.model)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main(out: str, names: Sequence[str]) -> None:
    binary = opencode_executable()
    for name in names or CASES:
        capture(name, CASES[name], Path(out), binary)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])

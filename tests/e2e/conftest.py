"""Fixtures for driving the real agent CLIs against loopback fakes of their vendors' APIs: Claude Code against
the Anthropic API's (fake_anthropic.py), Codex against the OpenAI Responses API's (fake_openai.py)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.claude_cli import claude_executable
from tests.e2e.codex_bwrap import bwrap_folder
from tests.e2e.codex_cli import CODEX_VERSION, codex_executable
from tests.e2e.fake_anthropic import FakeAnthropic
from tests.e2e.fake_openai import FAKE_API_KEY as FAKE_OPENAI_KEY
from tests.e2e.fake_openai import FAKE_KEY_VARIABLE, FakeOpenAI, codex_config

FAKE_API_KEY = "sk-ant-api03-fake"
FAKE_OAUTH_TOKEN = "sk-ant-oat01-fake"
# The first test to ask for `claude_bin` pays for the npm install (~20 s, longer on a slow network).
INSTALL_TIMEOUT_S = 900


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Give tests that may trigger the CLI install a timeout that covers it; an explicit marker still wins."""
    for item in items:
        if "claude_bin" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.timeout(INSTALL_TIMEOUT_S))


@pytest.fixture(scope="session")
def claude_bin() -> str:
    """The real `claude` binary of the pinned version (installed once into the test cache)."""
    return claude_executable()


@pytest.fixture(scope="session")
def codex_bin() -> str:
    """The real `codex` binary of the pinned version (installed once into the test cache)."""
    return codex_executable()


@pytest.fixture
def bwrap_dir() -> Iterator[Path]:
    """A folder for the `bwrap` Codex will use, first on its PATH (outside the folders its sandbox can write)."""
    with bwrap_folder(CODEX_VERSION) as folder:
        yield folder


@pytest.fixture
def openai_api() -> Iterator[FakeOpenAI]:
    """A started fake Responses API with an empty script; add turns with `openai_api.add_turns(...)`."""
    with FakeOpenAI() as fake:
        yield fake


def codex_env(home: Path, fake: FakeOpenAI, ralph_env: dict[str, str], model: str) -> dict[str, str]:
    """ralph's test environment plus Codex's: a private HOME and CODEX_HOME whose config.toml names the fake as
    the model provider (and `model`), the fake key in the variable the provider's env_key names, and no real
    OpenAI key."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    (codex_home / "config.toml").write_text(codex_config(fake, model))
    cli = {key: value for key, value in ralph_env.items() if not key.startswith(("OPENAI_", "CODEX_"))}
    return {**cli, "HOME": str(home), "CODEX_HOME": str(codex_home), FAKE_KEY_VARIABLE: FAKE_OPENAI_KEY}


@pytest.fixture
def fake_api() -> Iterator[FakeAnthropic]:
    """A started fake Anthropic API with an empty script; add turns with `fake_api.add_turns(...)`."""
    with FakeAnthropic() as fake:
        yield fake


def claude_env(home: Path, fake: FakeAnthropic, *, oauth: bool = False, max_retries: int = 0) -> dict[str, str]:
    """The environment for running `claude` against `fake`, with a private HOME and no real credentials.

    `oauth=True` authenticates with a fake subscription token instead of an API key, which makes the CLI honour
    the `anthropic-ratelimit-unified-*` headers. `max_retries=0` makes an HTTP error fail the run on the first
    answer: each error turn in the script then maps to exactly one request, and no retry back-off delays the test.
    """
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ANTHROPIC_", "CLAUDE_"))}
    home.mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        ANTHROPIC_BASE_URL=fake.url,
        CLAUDE_CODE_MAX_RETRIES=str(max_retries),
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    if oauth:
        env["CLAUDE_CODE_OAUTH_TOKEN"] = FAKE_OAUTH_TOKEN
    else:
        env["ANTHROPIC_API_KEY"] = FAKE_API_KEY
    return env


@dataclass(frozen=True, slots=True)
class ClaudeRun:
    """One finished `claude -p --output-format stream-json` process: exit status and its parsed events."""

    returncode: int
    events: list[dict[str, Any]]
    stdout: str
    stderr: str

    def of_type(self, kind: str, subtype: str | None = None) -> list[dict[str, Any]]:
        """The events of one `type` (and `subtype`, if given), in order."""
        return [e for e in self.events if e.get("type") == kind and (subtype is None or e.get("subtype") == subtype)]

    @property
    def result(self) -> dict[str, Any]:
        """The single `result` event that ends every run."""
        results = self.of_type("result")
        assert len(results) == 1, f"expected one result event\n{self}"
        return results[0]

    def __str__(self) -> str:
        return f"exit {self.returncode}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def run_claude(binary: str, cwd: Path, env: dict[str, str], prompt: str, *args: str, timeout: float = 60) -> ClaudeRun:
    """Run the real CLI in print mode with stream-json output, the prompt on stdin; every stdout line is JSON."""
    argv = [binary, "-p", "--output-format", "stream-json", "--verbose", *args]
    done = subprocess.run(
        argv, check=False, input=prompt, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return ClaudeRun(done.returncode, events, done.stdout, done.stderr)

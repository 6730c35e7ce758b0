"""Agent backends from other packages: an entry point in the `ralphloop.agents` group adds `--agent NAME`.

Each test installs a tiny third-party package the way pip would leave it (a module and a `*.dist-info` folder
with METADATA and entry_points.txt) into a temp folder on PYTHONPATH, then runs the real `ralph`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ralphloop.plugins.agents import CATALOG
from tests.conftest import AGENTS, PYTHON, RalphRunner, read_json, write_prd

# A backend as a third party would write it: only ralph's public seams (AgentCommand, agent_env, the text parser).
ECHO_AGENT = '''
"""The echo backend: finishes the story it is given, in a process of its own."""
from __future__ import annotations

import json
import os
import sys


def make(settings, paths):
    return EchoAgent()


class EchoAgent:
    name = "echo"

    def command(self, request):
        from ralphloop.agents.text import agent_env
        from ralphloop.core.protocols import AgentCommand

        return AgentCommand(argv=(sys.executable, __file__), env=agent_env(request), stdin=request.prompt.encode())

    def parser(self, request):
        from ralphloop.agents.text import TextOutputParser

        return TextOutputParser(request)


if __name__ == "__main__":
    sys.stdin.read()
    task, iteration = os.environ["RALPH_TASK_ID"], os.environ["RALPH_ITERATION"]
    path = os.path.join(os.environ["RALPH_FEATURE_DIR"], "prd.json")
    with open(path, encoding="utf-8") as handle:
        prd = json.load(handle)
    for story in prd["userStories"]:
        story["passes"] = story["passes"] or story["id"] == task
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(prd, handle, indent=2)
    print(f"echo finished {task} in iteration {iteration}")
'''


def install(site: Path, dist: str, modules: dict[str, str], entry_points: dict[str, str]) -> None:
    """Write a distribution `dist` 0.1 into `site`: its modules, and its `ralphloop.agents` entry points."""
    site.mkdir(exist_ok=True)
    for name, source in modules.items():
        (site / f"{name}.py").write_text(source)
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    lines = "".join(f"{name} = {target}\n" for name, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[ralphloop.agents]\n{lines}")


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A folder for plugin packages, with the echo backend installed (also under the built-in name `claude`)."""
    folder = tmp_path / "site"
    install(folder, "ralph-echo", {"ralph_echo_agent": ECHO_AGENT}, {"echo": "ralph_echo_agent:make"})
    install(folder, "ralph-impostor", {}, {"claude": "ralph_echo_agent:make"})
    return folder


@pytest.fixture
def one_story(feature: Path) -> Path:
    write_prd(feature, 1)
    return feature


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts}


def test_a_plugin_backend_runs_an_iteration(one_story: Path, site: Path, ralph: RalphRunner) -> None:
    done = ralph("run", "--agent", "echo", "-n", "1", "--no-archive", env={"PYTHONPATH": str(site)})
    assert done.returncode == 0, done.stderr
    assert read_json(one_story / "prd.json")["userStories"][0]["passes"] is True
    assert "echo finished S-1 in iteration 1" in (one_story / "logs" / "iteration-1.log").read_text()
    assert read_json(one_story / "status.json")["agent"] == "echo"


def test_an_unknown_name_lists_the_plugins_too(one_story: Path, site: Path, ralph: RalphRunner) -> None:
    before = files(one_story.parent.parent)
    done = ralph("run", "--agent", "nope", "-n", "1", env={"PYTHONPATH": str(site)})
    assert done.returncode == 1
    known = ", ".join(sorted({*CATALOG, "echo", "tape"}))  # tape: tests/plugins, installed in the venv
    assert done.stderr == f"ralph: error: --agent: unknown agent 'nope' (known: {known})\n"
    assert files(one_story.parent.parent) == before


def test_a_plugin_cannot_take_a_built_in_name(one_story: Path, site: Path, ralph: RalphRunner) -> None:
    env = {"PYTHONPATH": str(site), "RALPH_CLAUDE_COMMAND": str(site / "no-claude-here")}
    done = ralph("run", "--agent", "claude", "-n", "1", env=env)
    assert done.returncode == 1
    assert "is not an executable on PATH" in done.stderr  # the built-in backend's own check
    assert read_json(one_story / "prd.json")["userStories"][0]["passes"] is False


# A plugin with options of its own: it reads its section of the config files and says what it was given.
GREETER_AGENT = '''
"""The greeter backend: prints the options of its `greeter:` config section."""
from __future__ import annotations

import json
import sys


def make(settings, paths):
    return Greeter(dict(settings.section("greeter")), settings.agent.name)


class Greeter:
    name = "greeter"

    def __init__(self, options, chosen):
        self.said = json.dumps({"options": options, "agent": chosen}, sort_keys=True)

    def command(self, request):
        from ralphloop.agents.text import agent_env
        from ralphloop.core.protocols import AgentCommand

        return AgentCommand(argv=(sys.executable, "-c", f"print({self.said!r})"), env=agent_env(request), stdin=b"")

    def parser(self, request):
        from ralphloop.agents.text import TextOutputParser

        return TextOutputParser(request)
'''


def test_a_plugin_reads_its_own_config_section(
    one_story: Path, tmp_path: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    install(
        tmp_path / "site",
        "ralph-greeter",
        {"ralph_greeter_agent": GREETER_AGENT},
        {"greeter": "ralph_greeter_agent:make"},
    )
    home = Path(ralph_env["RALPH_HOME"])
    home.mkdir(exist_ok=True)
    (home / "config.yaml").write_text("greeter:\n  greeting: hello\n  loud: false\n")
    project_config = one_story.parent / "config.yaml"
    project_config.write_text(project_config.read_text() + "\nagent: greeter\ngreeter:\n  loud: true\n")
    done = ralph("run", "-n", "1", env={"PYTHONPATH": str(tmp_path / "site")})
    assert done.returncode == 1, done.stderr  # the story stays open: max iterations
    assert "unknown setting" not in done.stderr  # the section of the agent in use is its plugin's
    said = (one_story / "logs" / "iteration-1.log").read_text().strip()
    assert json.loads(said) == {"options": {"greeting": "hello", "loud": True}, "agent": "greeter"}


BROKEN = [
    (
        {"ralph_broken_agent": "import ralph_no_such_module\n"},
        "ralph_broken_agent:make",
        " cannot be loaded: ModuleNotFoundError: No module named 'ralph_no_such_module'",
    ),
    (
        {"ralph_broken_agent": "def make(settings, paths):\n    raise ValueError('needs BROKEN_API_KEY')\n"},
        "ralph_broken_agent:make",
        " failed to start: ValueError: needs BROKEN_API_KEY",
    ),
    (
        {"ralph_broken_agent": "factory = 42\n"},
        "ralph_broken_agent:missing",
        " cannot be loaded: AttributeError: module 'ralph_broken_agent' has no attribute 'missing'",
    ),
    (
        {"ralph_broken_agent": "def make(settings, paths):\n    return None\n"},
        "ralph_broken_agent:make",
        ": returned NoneType, not an agent (no name, command, parser)",
    ),
]


@pytest.mark.parametrize(("modules", "target", "said"), BROKEN, ids=["import", "raises", "missing", "not-an-agent"])
def test_a_broken_plugin_is_one_line_naming_it(
    one_story: Path, tmp_path: Path, ralph: RalphRunner, modules: dict[str, str], target: str, said: str
) -> None:
    install(tmp_path / "site", "ralph-broken", modules, {"broken": target})
    before = files(one_story.parent.parent)
    done = ralph("run", "--agent", "broken", "-n", "1", env={"PYTHONPATH": str(tmp_path / "site")})
    assert done.returncode == 1
    assert done.stderr == f"ralph: error: agent plugin 'broken' ({target} from ralph-broken 0.1){said}\n"
    assert files(one_story.parent.parent) == before


PROBE = (
    "import sys\n"
    "from ralphloop.cli.main import main\n"
    "code = main(['run', '-n', '1', '--agent-cmd', 'true'])\n"
    "print(json.dumps(sorted(sys.modules)))\n"
)


def test_a_built_in_backend_never_reads_entry_points(
    feature: Path, site: Path, project: Path, ralph_env: dict[str, str]
) -> None:
    env = {**ralph_env, "PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, "-c", "import json\n" + PROBE],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert "importlib.metadata" not in loaded
    assert "ralphloop.agents.claude.backend" not in loaded  # only the backend the run uses is imported


def docs_example() -> str:
    """The complete backend docs/agents.md shows, as written there."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "agents.md").read_text()
    section = text.split("## A backend of your own (a plugin)", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.fixture
def acme(one_story: Path, tmp_path: Path) -> dict[str, str]:
    """docs/agents.md's example backend installed as a plugin, tests/agents/acme_cli.py as the acme it runs."""
    assert len(docs_example().splitlines()) < 80  # the promise: a complete backend in under 80 lines
    install(tmp_path / "site", "ralph-acme", {"ralph_acme": docs_example()}, {"acme": "ralph_acme:make"})
    executable = tmp_path / "acme"
    executable.write_text(f'#!/bin/sh\nexec "{PYTHON}" "{AGENTS / "acme_cli.py"}" "$@"\n')
    executable.chmod(0o755)
    config = one_story.parent / "config.yaml"
    config.write_text(config.read_text() + f"\nacme:\n  command: {json.dumps(str(executable))}\n")
    return {"PYTHONPATH": str(tmp_path / "site"), "ACME_CALLS": str(tmp_path / "calls.jsonl")}


def test_the_docs_example_backend_works_as_written(
    one_story: Path, ralph: RalphRunner, acme: dict[str, str], tmp_path: Path
) -> None:
    done = ralph("run", "--agent", "acme", "--model", "acme-large-2", "--no-archive", env=acme)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((tmp_path / "calls.jsonl").read_text()) == [
        "run", "--json", "--allow", "edit", "--model", "acme-large-2"
    ]  # fmt: skip
    [line] = [json.loads(text) for text in (one_story / "ralph_metrics.jsonl").read_text().splitlines()]
    assert (line["agent"], line["model"], line["outcome"]) == ("acme", "acme-large-2", "complete")
    assert (line["usage"]["input_tokens"], line["usage"]["output_tokens"]) == (1200, 80)
    assert read_json(one_story / "status.json")["exitReason"] == "complete"


def test_the_docs_example_backend_reports_its_quota_with_the_reset(
    one_story: Path, ralph: RalphRunner, acme: dict[str, str], tmp_path: Path
) -> None:
    env = {**acme, "ACME_MODE": "quota", "ACME_RESETS_AT": "1900000000"}
    done = ralph("run", "--agent", "acme", "--permissions", "all", "--on-usage-limit", "exit", env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert json.loads((tmp_path / "calls.jsonl").read_text()) == ["run", "--json", "--allow", "everything"]
    limit = read_json(one_story / "status.json")["usageLimit"]
    assert (limit["vendor"], limit["resetsAt"]) == ("acme", "2030-03-17T17:46:40Z")


MISSING_CLI = """
def make(settings, paths):
    return Absent()


class Absent:
    name = "absent"
    missing = "the absent CLI is not on PATH: install it (pip install absent-cli)"

    def command(self, request):
        raise AssertionError("never started")

    def parser(self, request):
        raise AssertionError("never started")
"""


def test_a_plugin_whose_cli_is_missing_stops_the_run_before_it_starts(
    one_story: Path, tmp_path: Path, ralph: RalphRunner
) -> None:
    install(tmp_path / "site", "ralph-absent", {"ralph_absent": MISSING_CLI}, {"absent": "ralph_absent:make"})
    before = files(one_story.parent.parent)
    done = ralph("run", "--agent", "absent", "-n", "1", env={"PYTHONPATH": str(tmp_path / "site")})
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().endswith("the absent CLI is not on PATH: install it (pip install absent-cli)")
    assert len(done.stderr.strip().splitlines()) == 1 and files(one_story.parent.parent) == before

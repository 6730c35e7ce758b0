"""The built-in deterministic agent: a real process that applies a prepared script of steps.

The demo and the tests use it; it exercises the same path as any other agent
(new process, prompt on stdin, RALPH_* environment, stdout analysed).
"""

from __future__ import annotations

import os
import sys

from ralphloop.agents.sandbox_needs import PLAIN
from ralphloop.agents.script import ScriptError, validate_script
from ralphloop.agents.text import TextOutputParser, agent_env
from ralphloop.config.settings import Settings
from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import AgentCommand, AgentDefaults, AgentRequest
from ralphloop.files.yaml_file import read_yaml_mapping
from ralphloop.project.paths import FeaturePaths, display_path

DEFAULT_SCRIPT = "script.yaml"


def make(settings: Settings, paths: FeaturePaths) -> ScriptedAgent:
    """The registry's factory for `--agent scripted`: its script from config, else the feature's script.yaml."""
    return ScriptedAgent(settings.agent.scripted_script or os.path.join(paths.dir, DEFAULT_SCRIPT))


class ScriptedAgent(AgentDefaults):
    """Runs `python -m ralphloop.agents.scripted_runner SCRIPT` each iteration."""

    name = "scripted"
    sandbox = PLAIN  # ralph's demo agent: its script and the interpreter, nothing else

    def __init__(self, script: str) -> None:
        label = display_path(script, os.getcwd())
        if not os.path.isfile(script):
            raise RalphError(
                f"{label}: scripted agent script not found (set scripted.script in .ralph/config.yaml "
                f"or RALPH_SCRIPT, or put {DEFAULT_SCRIPT} in the feature folder)"
            )
        try:
            self.steps = validate_script(read_yaml_mapping(script, label), label)
        except ScriptError as exc:
            raise RalphError(str(exc)) from None
        self.script = os.path.abspath(script)

    def command(self, request: AgentRequest) -> AgentCommand:
        argv = (sys.executable, "-m", "ralphloop.agents.scripted_runner", self.script)
        return AgentCommand(argv=argv, env=agent_env(request), stdin=request.prompt.encode("utf-8"))

    def parser(self, request: AgentRequest) -> TextOutputParser:
        return TextOutputParser(request)

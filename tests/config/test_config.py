"""load_settings: defaults < $RALPH_HOME/config.yaml < .ralph/config.yaml < env < flags, with provenance."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ralphloop.config.settings import Settings, load_settings
from ralphloop.config.template import DEFAULT_PROJECT_CONFIG
from ralphloop.core.errors import RalphError

PROJECT_LABEL = ".ralph/config.yaml"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "ralph-home"
    folder.mkdir()
    monkeypatch.setenv("RALPH_HOME", str(folder))
    return folder


@pytest.fixture
def project(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    (root / ".ralph").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


def write_user(home: Path, text: str) -> str:
    path = home / "config.yaml"
    path.write_text(text)
    return str(path)


def write_project(project: Path, text: str) -> None:
    (project / ".ralph" / "config.yaml").write_text(text)


def load(
    project: Path,
    flags: Mapping[str, tuple[Any, str]] | None = None,
    env: Mapping[str, str] | None = None,
    warnings: list[str] | None = None,
) -> Settings:
    sink = warnings if warnings is not None else []
    return load_settings(str(project), flags or {}, env=env or {}, warn=sink.append)


def error_of(project: Path, **kwargs: Any) -> str:
    with pytest.raises(RalphError) as caught:
        load(project, **kwargs)
    return str(caught.value)


# ---------------------------------------------------------------- defaults and layering


def test_defaults_without_any_file(project: Path) -> None:
    warnings: list[str] = []
    settings = load(project, warnings=warnings)
    assert settings.loop.max_iterations == 20
    assert settings.process.timeout_s == 15 * 60
    assert settings.loop.rate_limit_per_hour == 100
    assert settings.agent.name == "claude"
    assert settings.agent.command is None
    assert settings.agent.scripted_script is None
    assert settings.loop.progress_bytes == 16 * 1024
    assert settings.process.kill_grace_s == 5.0
    assert settings.process.log_max_bytes == 64 * 1024 * 1024
    assert dict(settings.sources) == {}
    assert settings.source("timeout_s") == "default"
    assert warnings == []


def test_each_layer_overrides_the_one_below_and_says_so(project: Path, home: Path) -> None:
    user = write_user(
        home,
        "defaults:\n  max_iterations: 5\n  timeout_minutes: 10\n  rate_limit_per_hour: 7\nagent:\n  name: one\n",
    )
    write_project(project, "defaults:\n  timeout_minutes: 20\n  rate_limit_per_hour: 8\nagent: two\n")
    env = {"RALPH_RATE_LIMIT": "9", "RALPH_AGENT": "three"}
    flags = {"agent": ("four", "--agent")}
    settings = load(project, flags=flags, env=env)

    assert settings.loop.progress_bytes == 16 * 1024
    assert settings.source("progress_bytes") == "default"
    assert settings.loop.max_iterations == 5
    assert settings.source("max_iterations") == f"{user} (defaults.max_iterations)"
    assert settings.process.timeout_s == 20 * 60
    assert settings.source("timeout_s") == f"{PROJECT_LABEL} (defaults.timeout_minutes)"
    assert settings.loop.rate_limit_per_hour == 9
    assert settings.source("rate_limit_per_hour") == "$RALPH_RATE_LIMIT"
    assert settings.agent.name == "four"
    assert settings.source("agent") == "--agent"


def test_env_overrides_files(project: Path, home: Path) -> None:
    write_user(home, "defaults:\n  timeout_minutes: 10\n")
    write_project(project, "defaults:\n  timeout_minutes: 20\n")
    settings = load(project, env={"RALPH_TIMEOUT": "90s"})
    assert settings.process.timeout_s == 90
    assert settings.source("timeout_s") == "$RALPH_TIMEOUT"


def test_blank_env_var_is_ignored(project: Path) -> None:
    write_project(project, "defaults:\n  rate_limit_per_hour: 8\n")
    settings = load(project, env={"RALPH_RATE_LIMIT": "  "})
    assert settings.loop.rate_limit_per_hour == 8


def test_flags_override_env(project: Path) -> None:
    settings = load(project, flags={"timeout_s": ("1h", "-t/--timeout")}, env={"RALPH_TIMEOUT": "5"})
    assert settings.process.timeout_s == 3600
    assert settings.source("timeout_s") == "-t/--timeout"


def test_user_file_alone_applies(project: Path, home: Path) -> None:
    user = write_user(home, "context:\n  progress_bytes: 4096\nprocess:\n  kill_grace_seconds: 2\n  log_max_mb: 3\n")
    settings = load(project)
    assert settings.loop.progress_bytes == 4096
    assert settings.process.kill_grace_s == 2.0
    assert settings.process.log_max_bytes == 3 * 1024 * 1024
    assert settings.source("log_max_bytes") == f"{user} (process.log_max_mb)"


def test_the_config_ralph_init_writes_loads_without_warnings(project: Path) -> None:
    write_project(project, DEFAULT_PROJECT_CONFIG)
    warnings: list[str] = []
    settings = load(project, warnings=warnings)
    assert warnings == []
    assert settings.loop.max_iterations == 20
    assert settings.loop.progress_bytes == 16384


@pytest.mark.parametrize(("value", "seconds"), [("15", 900), ("90s", 90), ("1h30m", 5400), ("1.5", 90)])
def test_timeout_minutes_accepts_durations(project: Path, value: str, seconds: float) -> None:
    write_project(project, f"defaults:\n  timeout_minutes: {value}\n")
    assert load(project).process.timeout_s == seconds


def test_relative_scripted_script_is_under_the_project(project: Path) -> None:
    write_project(project, "scripted:\n  script: .ralph/script.yaml\n")
    assert load(project).agent.scripted_script == str(project / ".ralph" / "script.yaml")


def test_absolute_scripted_script_is_kept(project: Path, tmp_path: Path) -> None:
    script = str(tmp_path / "elsewhere.yaml")
    write_project(project, f"scripted:\n  script: {script}\n")
    assert load(project).agent.scripted_script == script


# ---------------------------------------------------------------- max_iterations


@pytest.mark.parametrize("value", ["0", "unlimited", "'0'"])
def test_max_iterations_zero_in_a_file_means_unlimited(project: Path, value: str) -> None:
    write_project(project, f"defaults:\n  max_iterations: {value}\n")
    settings = load(project)
    assert settings.loop.max_iterations is None
    assert settings.source("max_iterations") == f"{PROJECT_LABEL} (defaults.max_iterations)"


def test_max_iterations_zero_from_env_and_flag(project: Path) -> None:
    assert load(project, env={"RALPH_MAX_ITERATIONS": "0"}).loop.max_iterations is None
    assert load(project, flags={"max_iterations": (0, "-n")}).loop.max_iterations is None
    assert load(project, flags={"max_iterations": ("3", "-n")}).loop.max_iterations == 3


def test_flag_zero_overrides_a_file_limit(project: Path) -> None:
    write_project(project, "defaults:\n  max_iterations: 4\n")
    settings = load(project, flags={"max_iterations": ("0", "-n/--max-iterations")})
    assert settings.loop.max_iterations is None
    assert settings.source("max_iterations") == "-n/--max-iterations"


# ---------------------------------------------------------------- agents


def test_agent_shorthand_names_the_agent(project: Path) -> None:
    write_project(project, "agent: scripted\nscripted:\n  script: s.yaml\n")
    settings = load(project)
    assert settings.agent.name == "scripted"
    assert settings.source("agent") == f"{PROJECT_LABEL} (agent.name)"


def test_agent_command_in_a_file_implies_the_command_agent(project: Path) -> None:
    write_project(project, "agent:\n  command: python3 my_agent.py\n")
    settings = load(project)
    assert settings.agent.name == "command"
    assert settings.agent.command == "python3 my_agent.py"
    assert settings.source("agent") == f"{PROJECT_LABEL} (agent.command)"


def test_agent_command_from_env_implies_the_command_agent_over_a_file_name(project: Path) -> None:
    write_project(project, "agent: claude\n")
    settings = load(project, env={"RALPH_AGENT_CMD": "./agent.sh"})
    assert settings.agent.name == "command"
    assert settings.agent.command == "./agent.sh"
    assert settings.source("agent") == "$RALPH_AGENT_CMD"


def test_a_more_specific_agent_name_beats_a_user_file_command(project: Path, home: Path) -> None:
    write_user(home, "agent:\n  command: ./agent.sh\n")
    write_project(project, "agent: claude\n")
    assert load(project).agent.name == "claude"


def test_agent_flag_beats_a_file_command(project: Path) -> None:
    write_project(project, "agent:\n  command: ./agent.sh\n")
    settings = load(project, flags={"agent": ("claude", "--agent")})
    assert settings.agent.name == "claude"
    assert settings.source("agent") == "--agent"


# ---------------------------------------------------------------- errors and warnings


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        ("defaults:\n  max_iterations: many\n", "defaults.max_iterations", ""),
        ("defaults:\n  max_iterations: [1]\n", "defaults.max_iterations", "whole number"),
        ("defaults:\n  max_iterations: 2.5\n", "defaults.max_iterations", "whole number"),
        ("defaults:\n  max_iterations: -1\n", "defaults.max_iterations", "1 or more"),
        ("defaults:\n  max_iterations: true\n", "defaults.max_iterations", "whole number"),
        ("defaults:\n  timeout_minutes: soon\n", "defaults.timeout_minutes", "not a duration"),
        ("defaults:\n  timeout_minutes: true\n", "defaults.timeout_minutes", "duration"),
        ("defaults:\n  rate_limit_per_hour: 0\n", "defaults.rate_limit_per_hour", "1 or more"),
        ("agent:\n  name: 5\n", "agent.name", "string"),
        ("agent:\n  command: ''\n", "agent.command", "non-empty string"),
        ("context:\n  progress_bytes: 100\n", "context.progress_bytes", "1024"),
        ("process:\n  kill_grace_seconds: -1\n", "process.kill_grace_seconds", "seconds"),
        ("process:\n  log_max_mb: big\n", "process.log_max_mb", ""),
    ],
)
def test_wrong_value_names_the_file_and_the_key(project: Path, text: str, key: str, words: str) -> None:
    write_project(project, text)
    message = error_of(project)
    assert message.startswith(f"{PROJECT_LABEL}: {key}: ")
    assert words in message


def test_wrong_value_in_the_user_file_names_that_file(project: Path, home: Path) -> None:
    user = write_user(home, "defaults:\n  rate_limit_per_hour: lots\n")
    assert error_of(project).startswith(f"{user}: defaults.rate_limit_per_hour: ")


def test_section_that_is_not_a_mapping_is_named(project: Path) -> None:
    write_project(project, "defaults: 5\n")
    assert error_of(project) == f"{PROJECT_LABEL}: defaults: expected a mapping"


def test_top_level_that_is_not_a_mapping(project: Path) -> None:
    write_project(project, "- a\n- b\n")
    message = error_of(project)
    assert message.startswith(f"{PROJECT_LABEL}: ")
    assert "mapping" in message


def test_wrong_env_value_names_the_variable(project: Path) -> None:
    message = error_of(project, env={"RALPH_TIMEOUT": "later"})
    assert message.startswith("environment variable RALPH_TIMEOUT: ")


def test_wrong_flag_value_names_the_flag(project: Path) -> None:
    message = error_of(project, flags={"max_iterations": ("x", "-n/--max-iterations")})
    assert message.startswith("-n/--max-iterations: ")


def test_malformed_yaml_names_the_file_and_line(project: Path) -> None:
    write_project(project, "defaults:\n  max_iterations: 5\n  bad: x: y\n")
    message = error_of(project)
    assert message.startswith(f"{PROJECT_LABEL}: invalid YAML at line 3")


def test_malformed_yaml_unclosed_list(project: Path) -> None:
    write_project(project, "# comment\ndefaults:\n  max_iterations: [1,\n")
    message = error_of(project)
    assert message.startswith(f"{PROJECT_LABEL}: invalid YAML at line ")


def test_yaml_is_data_not_code(project: Path) -> None:
    write_project(project, "defaults: !!python/object/apply:os.system ['true']\n")
    assert error_of(project).startswith(f"{PROJECT_LABEL}: invalid YAML")


def test_empty_config_file_is_fine(project: Path) -> None:
    write_project(project, "# nothing set\n")
    assert load(project).loop.max_iterations == 20


def test_unknown_keys_warn_and_are_ignored(project: Path) -> None:
    write_project(
        project,
        "colour: red\ndefaults:\n  max_iteration: 3\n  max_iterations: 4\nagent:\n  nmae: x\n"
        "circuit_breaker:\n  threshold: 3\n",
    )
    warnings: list[str] = []
    settings = load(project, warnings=warnings)
    assert settings.loop.max_iterations == 4
    assert len(warnings) == 4
    assert any("circuit_breaker.threshold" in w for w in warnings)  # the section is known, this key is not
    assert any("colour" in w for w in warnings)
    assert any("defaults.max_iteration'" in w for w in warnings)
    assert any("agent.nmae" in w for w in warnings)
    assert all(w.startswith(f"{PROJECT_LABEL}: unknown setting") for w in warnings)


# ---------------------------------------------------------------- completion and blocked_threshold


def test_completion_defaults_to_verify_and_blocked_threshold_to_3(project: Path) -> None:
    settings = load(project)
    assert (settings.loop.completion, settings.loop.blocked_threshold) == ("verify", 3)


@pytest.mark.parametrize("text", ["completion: trust\n", "completion: TRUST\n", "completion:\n  mode: trust\n"])
def test_completion_trust_from_the_project_file(project: Path, text: str) -> None:
    write_project(project, text)
    warnings: list[str] = []
    settings = load(project, warnings=warnings)
    assert settings.loop.completion == "trust"
    assert settings.source("completion") == ".ralph/config.yaml (completion)"
    assert warnings == []


def test_completion_from_the_environment(project: Path) -> None:
    write_project(project, "completion: verify\n")
    settings = load(project, env={"RALPH_COMPLETION": "trust"})
    assert settings.loop.completion == "trust"
    assert settings.source("completion") == "$RALPH_COMPLETION"


def test_a_bad_completion_mode_names_the_file_and_key(project: Path) -> None:
    write_project(project, "completion: maybe\n")
    message = error_of(project)
    assert message.startswith(".ralph/config.yaml: completion:")
    assert "verify, trust" in message


@pytest.mark.parametrize(
    ("text", "mode"),
    [
        ('completion:\n  promise: "<promise>SHIPPED</promise>"\n', "verify"),  # seed 003's own shape
        ('completion: {mode: trust, promise: "  <promise>SHIPPED</promise> "}\n', "trust"),
    ],
)
def test_the_completion_promise_from_the_project_file(project: Path, text: str, mode: str) -> None:
    write_project(project, text)
    warnings: list[str] = []
    settings = load(project, warnings=warnings)
    assert (settings.loop.completion, settings.loop.promise) == (mode, "<promise>SHIPPED</promise>")
    assert settings.source("promise") == f"{PROJECT_LABEL} (completion.promise)"
    assert warnings == []


def test_no_promise_configured_means_the_default_and_files_layer_key_by_key(project: Path, home: Path) -> None:
    assert load(project).loop.promise is None
    write_user(home, "completion:\n  promise: DONE!\n")
    write_project(project, "completion: trust\n")
    loop = load(project).loop
    assert (loop.completion, loop.promise) == ("trust", "DONE!")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('completion:\n  promise: ""\n', "completion.promise: expected the text the agent prints"),
        ("completion:\n  promise: 7\n", "completion.promise: expected the text the agent prints"),
        ('completion:\n  promise: "a\\nb"\n', "completion.promise: expected the text the agent prints"),
        ("completion: {a: 1}\n", "completion: expected a value, or a mapping of mode, promise"),
        ("completion: {mode: maybe}\n", "completion: expected one of verify, trust"),
    ],
)
def test_a_bad_completion_mapping_names_the_file_and_key(project: Path, text: str, words: str) -> None:
    write_project(project, text)
    assert error_of(project).startswith(f"{PROJECT_LABEL}: {words}")


def test_an_unknown_name_beside_a_known_one_in_completion_is_warned_about(project: Path) -> None:
    write_project(project, "completion:\n  mode: trust\n  promis: DONE\n")
    warnings: list[str] = []
    assert load(project, warnings=warnings).loop.completion == "trust"
    assert warnings == [f"{PROJECT_LABEL}: unknown setting 'completion.promis' (ignored)"]


def test_blocked_threshold_from_the_project_file(project: Path) -> None:
    write_project(project, "blocked_threshold: 5\n")
    assert load(project).loop.blocked_threshold == 5


@pytest.mark.parametrize("value", ["0", "-1", "lots", "true"])
def test_a_bad_blocked_threshold_is_an_error(project: Path, value: str) -> None:
    write_project(project, f"blocked_threshold: {value}\n")
    assert error_of(project).startswith(".ralph/config.yaml: blocked_threshold:")


# ---------------------------------------------------------------- components, each from its own section

EVERY_SETTING = """\
defaults: {max_iterations: 7, timeout_minutes: 2, rate_limit_per_hour: 30}
context: {progress_bytes: 2048}
process: {kill_grace_seconds: 1, log_max_mb: 2}
completion: {mode: trust, promise: "<promise>SHIPPED</promise>"}
blocked_threshold: 4
max_retries: 5
rate_limit: {account: team}
story_order: ["2", "1"]
circuit_breaker:
  {no_progress_threshold: 1, same_error_threshold: 6, failure_threshold: 7,
   permission_denial_threshold: 3, cooldown_minutes: 10}
usage_limit:
  {policy: exit, pause_at: 90%, margin_seconds: 5, fallback_wait_minutes: 3, ask_timeout_seconds: 0.5,
   on_no_answer: wait}
budget: {max_cost_usd: 2.5, max_tokens: 1000, max_runtime: 1h}
backoff: {initial_seconds: 1, max_seconds: 8, attempts: 4}
agent: {name: scripted, model: opus, poorman: true}
scripted: {script: s.yaml}
claude:
  {command: my-claude, dangerously_skip_permissions: true, allowed_tools: "Read,Bash(git *)",
   max_turns: 9, append_system_prompt: be brief, resume: true}
git: {require: false, auto_commit: true}
branch: {auto_create: true, prefix: "ralph/"}
notify: {desktop: false, webhook: "https://example.invalid/hook", on: [halt]}
"""


def test_every_setting_lands_in_its_component_and_says_where_it_came_from(project: Path) -> None:
    write_project(project, EVERY_SETTING)
    warnings: list[str] = []
    settings = load(project, warnings=warnings)
    assert warnings == []
    loop = settings.loop
    assert (loop.max_iterations, loop.rate_limit_per_hour, loop.progress_bytes) == (7, 30, 2048)
    assert (loop.completion, loop.blocked_threshold, loop.max_retries) == ("trust", 4, 5)
    assert loop.promise == "<promise>SHIPPED</promise>"
    assert (loop.rate_account, loop.story_order) == ("team", ("2", "1"))
    assert (settings.process.timeout_s, settings.process.kill_grace_s, settings.process.log_max_bytes) == (
        120.0,
        1.0,
        2 * 1024 * 1024,
    )
    breaker = settings.breaker
    assert (breaker.no_progress_threshold, breaker.same_error_threshold, breaker.failure_threshold) == (1, 6, 7)
    assert (breaker.denial_threshold, breaker.cooldown_s) == (3, 600.0)
    assert breaker.half_open_after == 1  # derived: never later than the threshold itself
    usage = settings.usage
    assert (usage.action, usage.pause_at, usage.margin_s, usage.fallback_wait_s) == ("exit", 0.9, 5.0, 180.0)
    assert (usage.ask_timeout_s, usage.on_no_answer) == (0.5, "wait")
    budget = settings.budget
    assert (budget.max_cost_usd, budget.max_tokens, budget.max_runtime_s) == (2.5, 1000, 3600.0)
    assert (settings.backoff.initial_s, settings.backoff.cap_s, settings.backoff.attempts) == (1.0, 8.0, 4)
    agent = settings.agent
    assert (agent.name, agent.model, agent.poorman) == ("scripted", "opus", True)
    assert agent.scripted_script == str(project / "s.yaml")
    claude = settings.claude
    assert (settings.commands["claude"], claude.skip_permissions, claude.allowed_tools) == (
        "my-claude",
        True,  # claude.dangerously_skip_permissions: Claude Code's own `all`, the other agents keep theirs
        ("Read", "Bash(git *)"),
    )
    assert agent.permissions == "edits" and settings.source("permissions") == "default"
    assert (claude.max_turns, claude.append_system_prompt, claude.resume) == (9, "be brief", True)
    git = settings.git
    assert (git.require, git.auto_commit, git.branch_auto_create, git.branch_prefix) == (False, True, True, "ralph/")
    assert (settings.notify.desktop, settings.notify.webhook, settings.notify.on) == (
        False,
        "https://example.invalid/hook",
        ("halted",),  # ralph 0.x's name, read as today's
    )
    assert (
        settings.source("permission_denial_threshold")
        == f"{PROJECT_LABEL} (circuit_breaker.permission_denial_threshold)"
    )
    assert settings.source("backoff_max_s") == f"{PROJECT_LABEL} (backoff.max_seconds)"
    assert settings.source("claude_command") == f"{PROJECT_LABEL} (claude.command)"
    assert settings.source("story_order") == f"{PROJECT_LABEL} (story_order)"
    assert settings.source("notify_on") == f"{PROJECT_LABEL} (notify.on)"
    # one for each key but agent_command (it would choose the command agent)
    assert len(settings.sources) == 46


def test_the_breaker_opens_half_way_after_two_quiet_iterations_by_default(project: Path) -> None:
    assert load(project).breaker.half_open_after == 2
    write_project(project, "circuit_breaker:\n  no_progress_threshold: 6\n")
    assert load(project).breaker.half_open_after == 2


@pytest.mark.parametrize(
    ("policy", "terminal", "action"), [("ask", True, "ask"), ("ask", False, "wait"), ("exit", False, "exit")]
)
def test_the_usage_policy_asks_only_someone_at_a_terminal(
    project: Path, policy: str, terminal: bool, action: str
) -> None:
    write_project(project, f"usage_limit:\n  policy: {policy}\n")
    assert load(project).usage.at(terminal).action == action


def test_by_default_a_usage_limit_asks_at_a_terminal_and_waits_elsewhere(project: Path) -> None:
    usage = load(project).usage
    assert (usage.at(True).action, usage.at(False).action) == ("ask", "wait")
    # seed 003: "No response in 30s → Auto-exit"
    assert (usage.ask_timeout_s, usage.on_no_answer) == (30.0, "exit")
    assert usage.question("Limit.") == "Limit. Wait or exit? (exiting in 30s unless told)"
    assert [usage.answer(asked) for asked in ("wait", "exit", None)] == ["wait", "exit", "exit"]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("usage_limit:\n  on_no_answer: later\n", "usage_limit.on_no_answer: expected one of exit, wait"),
        ("usage_limit:\n  ask_timeout_seconds: -1\n", "usage_limit.ask_timeout_seconds: expected a number"),
    ],
)
def test_a_bad_question_policy_names_the_file_and_key(project: Path, text: str, words: str) -> None:
    write_project(project, text)
    assert error_of(project).startswith(f"{PROJECT_LABEL}: {words}")


# ---------------------------------------------------------------- a plugin's own section


def test_a_plugin_reads_its_section_the_project_over_the_user(project: Path, home: Path) -> None:
    write_user(home, "myagent:\n  endpoint: https://user.invalid\n  retries: 2\n")
    write_project(project, "agent: myagent\nmyagent:\n  retries: 5\n")
    warnings: list[str] = []
    settings = load(project, warnings=warnings)
    assert dict(settings.section("myagent")) == {"endpoint": "https://user.invalid", "retries": 5}
    assert dict(settings.section("other")) == {}
    assert warnings == []  # the section of the agent in use is its plugin's to check


def test_a_section_named_after_an_agent_not_in_use_is_warned_about(project: Path) -> None:
    write_project(project, "myagent:\n  retries: 5\n")
    warnings: list[str] = []
    settings = load(project, warnings=warnings)
    assert warnings == [f"{PROJECT_LABEL}: unknown setting 'myagent' (ignored)"]
    assert dict(settings.section("myagent")) == {"retries": 5}


def test_the_agent_named_by_a_flag_owns_its_section(project: Path) -> None:
    write_project(project, "myagent:\n  retries: 5\n")
    warnings: list[str] = []
    load(project, flags={"agent": ("myagent", "--agent")}, warnings=warnings)
    assert warnings == []


def test_the_agent_s_section_must_be_a_mapping(project: Path) -> None:
    write_project(project, "agent: myagent\nmyagent: 5\n")
    assert error_of(project) == f"{PROJECT_LABEL}: myagent: expected a mapping"

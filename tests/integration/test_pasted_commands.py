"""Every `ralph ...` command ralph prints works when pasted: taken from the real output of a circuit-open stop, a
usage-limit exit, an interrupted run and `ralph status` after each, in a project where `-f` is needed (two features,
and a plan folder whose name has a space), then run for real where it was printed (a `ralph run` as a dry run)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from tests.conftest import RalphRunner, agent_cmd, write_prd
from tests.integration.helpers import git

COMMAND = re.compile(r"\bralph (?:run|status|monitor|logs|analyze|report|reset-circuit|validate|archive)\b")
# Where a printed command stops, outside quotes: a clause (", then ...", ": the next"), a gap before a remark, or the
# ")" that closes a parenthesis opened before it.
_ENDS = (", ", "; ", ": ", "   ")


def printed_commands(text: str) -> list[str]:
    """The `ralph ...` commands in `text`, each cut where the sentence around it goes on."""
    found: list[str] = []
    for line in text.splitlines():
        for match in COMMAND.finditer(line):
            if line[: match.start()].endswith(("`", "'")):
                continue  # a command quoted as a name in prose, not one to paste
            found.append(_cut(line, match.start()))
    return found


def _cut(line: str, start: int) -> str:
    open_before = line[:start].count("(") - line[:start].count(")")
    quote, depth, index = "", 0, start
    while index < len(line):
        char = line[index]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")" and depth == 0 and open_before > 0:
            break
        elif char == ")":
            depth -= 1
        elif line.startswith(_ENDS, index):
            break
        index += 1
    return line[start:index].rstrip()


def check(ralph: RalphRunner, text: str, cwd: Path, expected: int) -> list[str]:
    """Run each command printed in `text` from `cwd` (a `ralph run` with -d: it would start the agent); each must
    exit 0. Returns them."""
    commands = list(dict.fromkeys(printed_commands(text)))  # the screen and `ralph status` say the same
    assert len(commands) >= expected, text
    for command in commands:
        words = shlex.split(command)
        assert words[0] == "ralph", command
        args = [*words[1:], "-d"] if words[1] == "run" else words[1:]
        done = ralph(*args, cwd=cwd)
        assert done.returncode == 0, (command, done.stdout + done.stderr)
    return commands


def two_features(project: Path, ralph: RalphRunner, env: dict[str, str]) -> None:
    for name in ("feat", "other"):
        assert ralph("init", name).returncode == 0
        write_prd(project / ".ralph" / name, 2)
    plan = project / "plans" / "my plan"
    plan.mkdir(parents=True)
    (plan / "TODO.md").write_text("# Plan\n\n- [ ] first thing\n- [ ] second thing\n")
    git(project, env, "add", "-A")
    git(project, env, "commit", "-q", "-m", "features")


def test_printed_commands_work_when_pasted(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    two_features(project, ralph, ralph_env)

    # The circuit opens: nothing moves in 3 iterations.
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"*": {"say": "Looked at the code; nothing to change yet."}}))
    stuck = ralph("run", "-f", "feat", "-n", "3", "--agent-cmd", agent_cmd("step_agent.py", str(plan)))
    assert stuck.returncode == 1 and "circuit_open" in stuck.stdout, stuck.stdout + stuck.stderr
    status = ralph("status", "-f", "feat").stdout
    assert "ralph reset-circuit -f feat" in status
    ran = check(ralph, stuck.stdout + stuck.stderr + status, project, 4)  # logs, status, reset-circuit, run
    assert "ralph logs -f feat" in ran, ran

    # A usage limit, the run started from a subfolder, naming a plan folder with a space.
    limit = agent_cmd("say.py", "Claude AI usage limit reached|1893456000", "--exit", "1")
    limited = ralph(
        "run", "my plan", "-n", "2", "--on-usage-limit", "exit", "--agent-cmd", limit, cwd=project / "plans"
    )
    assert limited.returncode == 2, limited.stdout + limited.stderr
    status = ralph("status", "-f", "plans/my plan", cwd=project / "plans").stdout
    (again,) = check(ralph, limited.stdout + limited.stderr + status, project / "plans", 1)
    assert again.endswith(" -f 'plans/my plan'") and shlex.split(again)[2:6] == ["-n", "2", "--on-usage-limit", "exit"]

    # Ctrl+C during an iteration.
    stopped = ralph("run", "-f", "other", "-n", "3", "--agent-cmd", agent_cmd("interrupt_ralph.py"))
    assert stopped.returncode == 130, stopped.stdout + stopped.stderr
    (resume,) = check(ralph, stopped.stdout + stopped.stderr, project, 1)
    assert resume.startswith("ralph run -n 3 --agent-cmd ") and resume.endswith(" -f other")


def test_the_cutting_of_printed_commands() -> None:
    """The extraction the test above trusts."""
    line = "Then reset and continue: ralph reset-circuit -f feat   (or: ralph run -n 5 --agent-cmd 'a (b)' -f feat)"
    assert printed_commands(line) == ["ralph reset-circuit -f feat", "ralph run -n 5 --agent-cmd 'a (b)' -f feat"]
    assert printed_commands("Next: ralph validate -f x, then ralph run -f x") == [
        "ralph validate -f x",
        "ralph run -f x",
    ]
    assert printed_commands("(checked by: ralph validate -f .; the next prompt: ralph run -d -f .)") == [
        "ralph validate -f .",
        "ralph run -d -f .",
    ]
    assert printed_commands("`ralph run` rewrites it") == []

"""API keys and tokens an agent prints never reach the iteration log."""

from __future__ import annotations

import shlex
from pathlib import Path

from tests.conftest import PYTHON, RalphRunner

SECRET = "sk-ant-api03-" + "Zz9" * 20
ORG_TOKEN = "corp-internal-value-42"


def test_secrets_printed_by_the_agent_are_masked_in_the_log(feature: Path, ralph: RalphRunner) -> None:
    code = (
        "import os, sys\n"
        "print('my key is', os.environ['ANTHROPIC_API_KEY'])\n"
        "sys.stdout.write('split ' + os.environ['ANTHROPIC_API_KEY'][:9]); sys.stdout.flush()\n"
        "sys.stdout.write(os.environ['ANTHROPIC_API_KEY'][9:] + ' done\\n')\n"
        "print('token', os.environ['ACME_DEPLOY_TOKEN'], file=sys.stderr)\n"
    )
    agent = shlex.join([PYTHON, "-c", code])
    done = ralph(
        "run",
        "-f",
        "feat",
        "--agent-cmd",
        agent,
        "-n",
        "1",
        env={"ANTHROPIC_API_KEY": SECRET, "ACME_DEPLOY_TOKEN": ORG_TOKEN},
    )
    assert done.returncode == 1, done.stdout + done.stderr
    log = (feature / "logs" / "iteration-1.log").read_text()
    assert SECRET not in log and ORG_TOKEN not in log and "Zz9Zz9" not in log
    assert "my key is [REDACTED]" in log and "split [REDACTED] done" in log
    assert "[stderr] token [REDACTED]" in log

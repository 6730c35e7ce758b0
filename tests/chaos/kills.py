"""Kill trials: ralph, its agent or both killed (SIGKILL) at a random instant, or ralph sent SIGINT, SIGTERM,
SIGHUP or two SIGINTs, one to three times in a row; then ralph is run again, undisturbed, until it ends, and
the trial's truths are checked (trial.py).

Where the kill lands:
- ralph-timer: anywhere in the run, uniformly over an undisturbed run's length;
- after-agent: 0-150 ms after an agent ended: ralph's own phases (verify, capture, undo, records, commit);
- in-git: before, during or after one of ralph's own git commands, picked at random (a git on PATH that
  kills its parent when it is that call);
- agent: the agent alone, while it works; both: the agent and ralph at once;
- sigint, sigterm, sighup, double-sigint: at a random instant; the run must end 130 (or 0, done first) with
  status.json saying why.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

from tests.chaos import classes as c
from tests.chaos.classes import Findings
from tests.chaos.trial import Case, Run

MODES = (
    "ralph-timer",
    "after-agent",
    "in-git",
    "agent",
    "both",
    "sigint",
    "sigterm",
    "sighup",
    "double-sigint",
)
SIGNALS = {"sigint": signal.SIGINT, "sigterm": signal.SIGTERM, "sighup": signal.SIGHUP}

GIT_SHIM = """\
#!/bin/sh
# ralph's git calls are counted; the one numbered $CHAOS_GIT_KILL_AT kills ralph (git's parent)
if tr '\\0' ' ' < /proc/$PPID/cmdline 2>/dev/null | grep -q ralphloop; then
    n=$(( $(cat "$CHAOS_DIR/git.count" 2>/dev/null || echo 0) + 1 ))
    echo $n > "$CHAOS_DIR/git.count"
    if [ "$n" = "${{CHAOS_GIT_KILL_AT:-0}}" ]; then
        case "$CHAOS_GIT_WHEN" in
            before) kill -9 $PPID; exec {git} "$@" ;;
            during) {git} "$@" & sleep "$CHAOS_GIT_DELAY"; kill -9 $PPID; wait $!; exit $? ;;
            after) {git} "$@"; code=$?; kill -9 $PPID; exit $code ;;
        esac
    fi
fi
exec {git} "$@"
"""


class Calibration:
    """An undisturbed run's length and how many git commands ralph ran in it."""

    def __init__(self, seconds: float, git_calls: int) -> None:
        self.seconds = seconds
        self.git_calls = git_calls


def calibrate(template: Path, into: Path) -> Calibration:
    findings = Findings()
    case = Case(template, into, "calibration", findings)
    env = _with_shim(case, kill_at=0)
    started = time.monotonic()
    run = case.start("--no-archive", "--agent-cmd", case.agent(), env=env)
    code = run.wait()
    seconds = time.monotonic() - started
    assert code == 0 and findings.failures == 0, f"an undisturbed run fails:\n{run.tail()}\n{findings.table()}"
    calls = int((case.chaos / "git.count").read_text())
    shutil.rmtree(case.base)
    return Calibration(seconds, calls)


def _with_shim(case: Case, *, kill_at: int, when: str = "before", delay: float = 0.0) -> dict[str, str]:
    folder = case.chaos / "bin"
    folder.mkdir(exist_ok=True)
    real = shutil.which("git") or "/usr/bin/git"
    shim = folder / "git"
    shim.write_text(GIT_SHIM.format(git=real))
    shim.chmod(0o755)
    (case.chaos / "git.count").unlink(missing_ok=True)
    return {
        **case.env,
        "PATH": f"{folder}{os.pathsep}{case.env['PATH']}",
        "CHAOS_GIT_KILL_AT": str(kill_at),
        "CHAOS_GIT_WHEN": when,
        "CHAOS_GIT_DELAY": f"{delay:.3f}",
    }


def kill_trial(
    template: Path, into: Path, index: int, rng: random.Random, calib: Calibration, findings: Findings
) -> None:
    mode = MODES[index % len(MODES)]
    case = Case(template, into, f"kill-{index}-{mode}", findings)
    findings.trial(f"kill:{mode}")
    agent = case.agent("--fail-once", "0.3", "--daemon", "0.3", "--sleep", "0.05")
    for round_ in range(rng.randint(1, 3)):
        verbose = ["-v"] if rng.random() < 0.3 else []
        env = case.env
        if mode == "in-git":
            when = rng.choice(("before", "during", "after"))
            env = _with_shim(case, kill_at=rng.randint(1, calib.git_calls), when=when, delay=rng.random() * 0.01)
        status = case.feature / "status.json"
        before = status.read_bytes() if status.exists() else None
        run = case.start("--no-archive", "--agent-cmd", agent, *verbose, env=env)
        _disrupt(mode, run, case, rng, calib)
        code = run.wait()
        what = f"after {mode} round {round_ + 1}"
        if code is None:
            return _end(case)
        if code == 0:
            case.check_claim(what)
        if mode in SIGNALS or mode == "double-sigint":
            _check_interrupted(case, run, code, what, before)
        case.check_between(what)
    final = case.start("--no-archive", "--agent-cmd", agent)
    code = final.wait()
    if code is None:
        return _end(case)
    if code != 0:
        case.findings.add(_why(final), f"{case.name}: the last run ended {code}:\n{final.tail()}")
    else:
        case.check_claim("the last run")
    starts = case.starts()
    again = case.start("--no-archive", "--agent-cmd", agent)
    code = again.wait()
    if code != 0 or case.starts() != starts:
        case.findings.add(
            c.DONE_TWICE, f"{case.name}: a run after completion ended {code}, agents {starts}→{case.starts()}"
        )
    return _end(case)


def _end(case: Case) -> None:
    case.survivors()
    case.check_end()
    case.clean_up()


def _why(run: Run) -> str:
    """The class of a last run that did not complete, from its one-line reason."""
    text = run.stderr() + run.stdout()
    if "already running" in text or "another loop runs" in text:
        return c.STALE_LOCK
    if "damaged" in text or "cannot read" in text or "not valid" in text or "does not parse" in text:
        return c.CORRUPT_STATE
    return c.LOST_WORK


def _check_interrupted(case: Case, run: Run, code: int, what: str, before: bytes | None) -> None:
    """A signalled run ends 130 (0 when it was done first; a second Ctrl+C quits at once: killed by SIGINT, as
    a shell sees 130 too), or died of the signal before it began (status.json untouched); and status.json,
    once this run wrote it, says why it ended."""
    status = case.feature / "status.json"
    now = status.read_bytes() if status.exists() else None
    if now == before and code < 0:
        return  # the signal came before ralph began: nothing was started, nothing written
    try:
        body = json.loads(now or b"")
    except ValueError:
        return  # check_between counts a status.json that does not parse
    final = body.get("status") != "running" and bool(body.get("exitReason"))
    # a signal after the run wrote its end (its handlers given back) ends the process: the records are whole
    if code not in (0, 130, -signal.SIGINT) and not (code < 0 and final):
        case.findings.add(c.CORRUPT_STATE, f"{case.name} {what}: an interrupted run ended {code}:\n{run.tail()}")
    if not final:
        case.findings.add(
            c.CORRUPT_STATE, f"{case.name} {what}: status.json says {body.get('status')!r}, {body.get('exitReason')!r}"
        )


def _disrupt(mode: str, run: Run, case: Case, rng: random.Random, calib: Calibration) -> None:
    if mode in ("ralph-timer", *SIGNALS, "double-sigint"):
        if _sleep_unless_ended(run, rng.random() * calib.seconds):
            return
        if mode == "ralph-timer":
            _kill(run.pid, signal.SIGKILL)
        elif mode == "double-sigint":
            _kill(run.pid, signal.SIGINT)
            _sleep_unless_ended(run, rng.random() * 0.3)
            _kill(run.pid, signal.SIGINT)
        else:
            _kill(run.pid, SIGNALS[mode])
    elif mode == "after-agent":
        ends = _count(case, "end")
        if _wait_for(run, lambda: _count(case, "end") > ends, 60) and not _sleep_unless_ended(run, rng.random() * 0.15):
            _kill(run.pid, signal.SIGKILL)
    elif mode in ("agent", "both"):
        starts = _count(case, "start")
        if not _wait_for(run, lambda: _count(case, "start") > starts, 60):
            return
        agent = int(next(e for e in reversed(case.agent_events()) if e["event"] == "start")["pid"])  # type: ignore[call-overload]
        time.sleep(rng.random() * 0.08)
        _kill(agent, signal.SIGKILL)
        if mode == "both":
            _kill(run.pid, signal.SIGKILL)


def _count(case: Case, event: str) -> int:
    path = case.chaos / "runs.jsonl"
    if not path.exists():
        return 0
    return path.read_text().count(f'"event": "{event}"')


def _wait_for(run: Run, predicate: object, limit: float) -> bool:
    """Poll until `predicate()` holds (True) or the run ends or `limit` passes (False)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        if run.proc.poll() is not None:
            return False
        time.sleep(0.003)
    return False


def _sleep_unless_ended(run: Run, seconds: float) -> bool:
    """Sleep; True when the run ended first."""
    try:
        run.proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return False
    return True


def _kill(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)

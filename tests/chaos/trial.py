"""One chaos trial's project and the truths checked when it ends.

A trial copies a template project (a git repository with one prd.json feature of STORIES stories,
git.auto_commit on, a quality gate that checks each passing story's work is really there), runs the real
`ralph run` under some disruption (a kill, a signal, a hostile agent, a second loop), and then runs it again,
undisturbed, until it ends. Whatever happened before, that last run must end complete, and then:

- every story passes, its work is in HEAD once (the ledger names it once), nothing is left uncommitted;
- every iteration that has a log has exactly one progress entry and one metrics line, and no journal is left;
- every state file parses, every record line is whole;
- no process of the trial is left running, no lock is held, no git lock is left;
- no file holds the secret the agent printed, no screen a terminal control, no output a traceback;
- no two agents ever worked at once, and no agent ran after the work was complete.
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import itertools
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.chaos import classes as c
from tests.chaos.classes import Findings, check_screen, check_secrets
from tests.conftest import isolated_env

PYTHON = sys.executable
GARBAGE = b'{"torn": '  # what chaos_agent.py --hostile garble-records appends to ralph's record files
HERE = Path(__file__).parent
AGENT = HERE / "chaos_agent.py"
STORIES = 3
RUN_TIMEOUT = 120.0  # a run that has not ended by then hangs (an undisturbed one takes about 2 s)

CONFIG = """\
defaults:
  max_iterations: 30
  timeout_minutes: 20s
  rate_limit_per_hour: 100000
completion: {completion}
max_retries: 1000
circuit_breaker:
  no_progress_threshold: 1000
  same_error_threshold: 1000
  failure_threshold: 1000
usage_limit:
  policy: exit
process:
  kill_grace_seconds: 1
git:
  auto_commit: true
quality_checks:
  work: {gate}
"""

# The gate: every story prd.json says passes has its work file and its ledger line (an agent that only
# marks stories is refused, whatever it claims).
GATE = """\
import json, os, sys
prd = json.load(open(sys.argv[1]))
ledger = open("work/ledger.txt").read().split() if os.path.exists("work/ledger.txt") else []
missing = [s["id"] for s in prd["userStories"] if s.get("passes") and (
    not os.path.exists(f"work/{s['id']}.txt") or s["id"] not in ledger)]
if missing:
    print("no work for", *missing)
    sys.exit(1)
"""


def _env(base: Path) -> dict[str, str]:
    return isolated_env(base / "home", base / "gitconfig", drop=("CHAOS_",))


def make_template(base: Path, *, completion: str = "verify", features: tuple[str, ...] = ("feat",)) -> Path:
    """The project every trial copies: committed, never run. Each feature's stories are named by its first
    letter, capitalised (feat: S-1, S-2 ...; any other: its letter), so that two features' work never collide."""
    project = base / "project"
    project.mkdir(parents=True)
    (base / "home").mkdir()
    env = _env(base)

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("commit", "-q", "--allow-empty", "-m", "initial")
    for name in features:
        subprocess.run([PYTHON, "-m", "ralphloop", "init", name], cwd=project, env=env, check=True, capture_output=True)
        feature = project / ".ralph" / name
        prd = json.loads((feature / "prd.json").read_text())
        prd["branchName"] = f"feature/{name}"
        letter = story_letter(name)
        prd["userStories"] = [
            {
                "id": f"{letter}-{n}",
                "title": f"Story {n}",
                "acceptanceCriteria": ["works"],
                "priority": n,
                "passes": False,
            }
            for n in range(1, STORIES + 1)
        ]
        (feature / "prd.json").write_text(json.dumps(prd, indent=2) + "\n")
    (base / "gate.py").write_text(GATE)
    # the gate reads the task file of the feature that runs it ($RALPH_FEATURE_DIR is every hook's)
    gate = shlex.join([PYTHON, str(base / "gate.py")]) + ' "$RALPH_FEATURE_DIR/prd.json"'
    (project / ".ralph" / "config.yaml").write_text(CONFIG.format(completion=completion, gate=json.dumps(gate)))
    git("add", "-A")
    git("commit", "-q", "-m", "feature")
    return base


def story_letter(feature: str) -> str:
    return "S" if feature == "feat" else feature[0].upper()


class Case:
    """One trial: a copy of the template, its chaos folder (outside the project) and what ralph printed."""

    def __init__(self, template: Path, into: Path, name: str, findings: Findings, feature: str = "feat") -> None:
        self.base = into / name
        shutil.copytree(template, self.base, symlinks=True)
        self.name = name
        self.project = self.base / "project"
        self.feature = self.project / ".ralph" / feature
        self.chaos = self.base / "chaos"
        self.chaos.mkdir()
        self.findings = findings
        self.failures_before = findings.failures  # a trial that finds something is kept to look at
        findings.log = self.base / "findings.txt"  # and says there what it found
        self.mark = f"chaos-{os.getpid()}-{name}"
        self.secret = "sk-ant-api03-" + name.replace("-", "x")[:20].ljust(20, "Q") + "QQQQQQQQQQQQQQQQQQQQQQQQ"
        self.env = {
            **_env(self.base),
            "CHAOS_DIR": str(self.chaos),
            "CHAOS_MARK": self.mark,
            "CHAOS_API_KEY": self.secret,
        }
        self.numbers = itertools.count(1)  # shared with the views beside it: each run's output files its own

    def beside(self, feature: str, project: Path | None = None) -> Case:
        """The same trial seen from another feature (or another worktree of the project)."""
        other = copy.copy(self)
        other.project = project or self.project
        other.feature = other.project / ".ralph" / feature
        other.name = f"{self.name}/{feature}"
        return other

    def agent(self, *args: str) -> str:
        return shlex.join([PYTHON, str(AGENT), *args])

    # ---------------------------------------------------------------- running ralph

    def start(self, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> Run:
        return Run(self, list(args), env or self.env, cwd or self.project, next(self.numbers))

    def ralph(self, *args: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str] | None:
        """A short command (status, report); None when it hangs. Its output is checked as a screen."""
        try:
            done = subprocess.run(
                [PYTHON, "-m", "ralphloop", *args],
                cwd=self.project,
                env=self.clean_env(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            self.findings.add(c.HANG, f"{self.name}: ralph {' '.join(args)} did not end in {timeout:.0f} s")
            return None
        check_screen(self.findings, f"{self.name}: ralph {' '.join(args)} stdout", done.stdout)
        check_screen(self.findings, f"{self.name}: ralph {' '.join(args)} stderr", done.stderr)
        return done

    def clean_env(self) -> dict[str, str]:
        """The environment without the trial's mark: the harness's own processes are not the trial's."""
        return {key: value for key, value in self.env.items() if key != "CHAOS_MARK"}

    def git(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", *args], cwd=self.project, env=self.clean_env(), capture_output=True, text=True, check=False
        )

    # ---------------------------------------------------------------- what the agent did

    def agent_events(self) -> list[dict[str, object]]:
        path = self.chaos / "runs.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def starts(self) -> int:
        return sum(1 for event in self.agent_events() if event["event"] == "start")

    # ---------------------------------------------------------------- the checks

    def check_between(self, what: str) -> None:
        """After a run ended (killed or not): `ralph status` answers and every file reads."""
        done = self.ralph("status", "--json")
        if done is not None:
            try:
                json.loads(done.stdout)
                ok = done.returncode == 0
            except ValueError:
                ok = False
            if not ok:
                self.findings.add(c.CORRUPT_STATE, f"{self.name} {what}: ralph status --json: {done.stderr.strip()}")
        self.check_files(what)

    def check_files(self, what: str) -> None:
        for name in ("status.json", "state.json", ".circuit_breaker_state"):
            path = self.feature / name
            if not path.exists():
                continue
            try:
                value = json.loads(path.read_bytes())
                assert isinstance(value, dict)
            except (ValueError, AssertionError):
                text = path.read_bytes()[:300]
                self.findings.add(c.CORRUPT_STATE, f"{self.name} {what}: {name} does not parse: {text!r}")
        for name in ("ralph_metrics.jsonl", "events.jsonl", "signals.jsonl"):
            path = self.feature / name
            lines = path.read_bytes().split(b"\n") if path.exists() else []
            for number, line in enumerate(lines, 1):
                if number == len(lines) and not line:
                    continue
                if line == GARBAGE:
                    continue  # the hostile agent's own torn line: ralph's next line must start after it
                try:
                    json.loads(line)
                except ValueError:
                    self.findings.add(c.TORN_RECORD, f"{self.name} {what}: {name} line {number}: {line[:200]!r}")
                    break

    def check_claim(self, what: str) -> None:
        """A run that exited 0 said the work is complete: it must be, in the task file and in HEAD."""
        open_stories = [story for story, done in self.stories().items() if not done]
        missing = [story for story in self.stories() if not self.in_head(story)]
        if open_stories or missing:
            self.findings.add(
                c.FALSE_COMPLETION, f"{self.name} {what}: exit 0 with {open_stories} open, {missing} not in HEAD"
            )

    def stories(self) -> dict[str, bool]:
        try:
            prd = json.loads((self.feature / "prd.json").read_text())
            return {story["id"]: story.get("passes") is True for story in prd["userStories"]}
        except (OSError, ValueError, KeyError, TypeError):
            letter = story_letter(self.feature.name)
            return {f"{letter}-{n}": False for n in range(1, STORIES + 1)}

    def in_head(self, story: str) -> bool:
        return self.git("show", f"HEAD:work/{story}.txt").stdout == f"done {story}\n"

    def check_end(self, *, one_commit: bool = True, alone: bool = True) -> None:
        """After the last run: the truths in the module's docstring. `one_commit`: each story is done in one
        accepted iteration (an agent that leaves half its work in an accepted one makes two commits, rightly).
        `alone`: one loop in these files, so no two agents of the trial may ever have run at once."""
        feature = self.feature
        name = self.name
        stories = self.stories()
        for story, done in stories.items():
            if not done:
                self.findings.add(c.LOST_WORK, f"{name}: {story} does not pass after the last run")
            elif not self.in_head(story):
                self.findings.add(c.LOST_WORK, f"{name}: {story} passes but its work is not in HEAD")
        ledger = self.git("show", "HEAD:work/ledger.txt").stdout.split()
        for story in stories:
            if ledger.count(story) > 1:
                self.findings.add(c.DONE_TWICE, f"{name}: {story} done {ledger.count(story)} times: {ledger}")
        subjects = self.git("log", "--format=%s").stdout.splitlines() if one_commit else []
        for story in stories:
            commits = [subject for subject in subjects if subject.startswith(f"{story}:")]
            if len(commits) > 1:
                self.findings.add(c.DONE_TWICE, f"{name}: {story} committed {len(commits)} times")
        # ralph's own log may hold the entry of an iteration a killed run left, written by the run that found
        # it after its last commit: a record, not work (and never lost: it is in the file)
        changes = self.git("status", "--porcelain", "--untracked-files=all").stdout.splitlines()
        left = "\n".join(line for line in changes if not line.endswith("/progress.txt"))
        if left:
            self.findings.add(c.LOST_WORK, f"{name}: left uncommitted after complete:\n{left}")
        overlaps = [event for event in self.agent_events() if event.get("overlap")]
        if overlaps and alone:
            self.findings.add(c.DONE_TWICE, f"{name}: two agents at once: {overlaps[0]}")
        self.check_records(feature)
        self.check_files("at the end")
        self.check_locks()
        check_secrets(self.findings, self.base, (self.secret,), name)

    def check_records(self, feature: Path) -> None:
        logs = sorted(int(path.name.split("-")[1].split(".")[0]) for path in (feature / "logs").glob("iteration-*.log"))
        progress = (feature / "progress.txt").read_text(errors="replace") if (feature / "progress.txt").exists() else ""
        entries: dict[int, int] = {}
        for entry in progress.split("\n---\n")[1:]:
            for line in entry.splitlines():
                if line.startswith("Iteration: ") and line[11:].strip().isdigit():
                    number = int(line[11:])
                    entries[number] = entries.get(number, 0) + 1
                    break
            else:
                self.findings.add(
                    c.TORN_RECORD, f"{self.name}: a progress entry without its iteration: {entry[:300]!r}"
                )
        metrics: dict[int, int] = {}
        for line in (feature / "ralph_metrics.jsonl").read_text().splitlines() if logs else []:
            with contextlib.suppress(ValueError, TypeError, KeyError):
                number = int(json.loads(line)["iteration"])
                metrics[number] = metrics.get(number, 0) + 1
        for number in logs:
            for what, found in (("progress entry", entries), ("metrics line", metrics)):
                count = found.get(number, 0)
                if count == 0:
                    self.findings.add(c.UNRECORDED, f"{self.name}: iteration {number} has a log but no {what}")
                elif count > 1:
                    self.findings.add(c.TORN_RECORD, f"{self.name}: iteration {number} has {count} {what}s")
        if (feature / ".iteration.json").exists():
            self.findings.add(c.UNRECORDED, f"{self.name}: a journal is left after the last run")

    def check_locks(self) -> None:
        locks = [self.feature / ".lock", *(self.project / ".git" / "ralph").glob("*.lock")]
        for path in locks:
            if not path.exists():
                continue
            fd = os.open(path, os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                self.findings.add(c.STALE_LOCK, f"{self.name}: {path.name} is still held after the last run")
            finally:
                os.close(fd)
        for path in (self.project / ".git").glob("*.lock"):
            self.findings.add(c.STALE_LOCK, f"{self.name}: git's {path.name} is left")

    def clean_up(self) -> None:
        """Remove the trial's folder, unless it found something (or CHAOS_KEEP=1 keeps every one)."""
        if self.findings.failures == self.failures_before and not os.environ.get("CHAOS_KEEP"):
            shutil.rmtree(self.base, ignore_errors=True)

    def survivors(self, *, grace: float = 5.0) -> None:
        """Processes of the trial (by its mark) still running after everything ended: counted, then killed."""
        deadline = time.monotonic() + grace
        while (found := marked(self.mark)) and time.monotonic() < deadline:
            time.sleep(0.05)
        for pid, cmdline in found:
            self.findings.add(c.SURVIVOR, f"{self.name}: PID {pid} still running: {cmdline}")
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


class Run:
    """`ralph run ARGS` in the background, its output to files (a killed ralph's orphans may hold them)."""

    def __init__(self, case: Case, args: list[str], env: dict[str, str], cwd: Path, number: int) -> None:
        self.case = case
        self.args = args
        self.out = case.base / f"run-{number}.out"
        self.err = case.base / f"run-{number}.err"
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen(
                [PYTHON, "-m", "ralphloop", "run", *args],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
        self.started = time.monotonic()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait(self, timeout: float = RUN_TIMEOUT) -> int | None:
        """The exit code; None when it hung (it is then killed with its group, and counted)."""
        try:
            code = self.proc.wait(timeout=max(0.0, timeout - (time.monotonic() - self.started)))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            self.case.findings.add(c.HANG, f"{self.case.name}: ralph run {' '.join(self.args)} hung\n{self.tail()}")
            return None
        what = f"{self.case.name}: ralph run {' '.join(self.args[:2])}"
        check_screen(self.case.findings, f"{what} stdout", self.stdout())
        check_screen(self.case.findings, f"{what} stderr", self.stderr())
        return code

    def stdout(self) -> str:
        return self.out.read_bytes().decode("utf-8", "replace")

    def stderr(self) -> str:
        return self.err.read_bytes().decode("utf-8", "replace")

    def tail(self) -> str:
        return (self.stdout()[-1500:] + "\n" + self.stderr()[-1500:]).strip()


def marked(mark: str) -> list[tuple[int, str]]:
    """Live processes whose environment holds CHAOS_MARK=`mark`."""
    needle = f"CHAOS_MARK={mark}\0".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                if needle not in handle.read() + b"\0":
                    continue
            with open(f"/proc/{entry}/stat", encoding="utf-8") as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    continue
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        found.append((int(entry), cmdline))
    return found

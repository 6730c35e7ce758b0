"""`ralph signal`: one JSON line per call in the feature's signals.jsonl; a record counts for one iteration. With no
loop running for the feature (no live `ralph run` holds its lock) nothing would read it: refused, nothing written.

A loop running "elsewhere" is a real `ralph run` in the background whose agent (tests/agents/step_agent.py) waits
for the records the test makes from its own terminal."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RalphRunner, agent_cmd, read_json
from tests.integration.conftest import Background
from tests.integration.helpers import assert_one_line_error, entry_fields, progress_entries, snapshot, wait_until

ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")
NO_LOOP = "not recorded: no loop is running for feat; ralph signal works only inside an iteration of `ralph run`"


def plan_agent(tmp_path: Path, plan: dict[str, Any]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return agent_cmd("plan_agent.py", str(path))


def records(feature: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (feature / "signals.jsonl").read_text().splitlines()]


class Loop:
    """`ralph run -n 1` in the background, its agent at work until signals.jsonl has `lines` lines."""

    def __init__(self, feature: Path, background: Background, tmp_path: Path, lines: int) -> None:
        started = tmp_path / "started.jsonl"
        plan = {"*": {"record": str(started), "await": [str(feature / "signals.jsonl"), lines], "say": "done\n"}}
        (tmp_path / "steps.json").write_text(json.dumps(plan))
        self.proc = background.ralph(
            "run", "-n", "1", "--agent-cmd", agent_cmd("step_agent.py", str(tmp_path / "steps.json"))
        )
        assert wait_until(lambda: started.exists() or self.proc.poll() is not None, limit=60)
        assert self.proc.poll() is None, self.proc.communicate()

    def finished(self) -> subprocess.CompletedProcess[str]:
        out, err = self.proc.communicate(timeout=120)
        return subprocess.CompletedProcess(self.proc.args, self.proc.returncode, out, err)


@pytest.fixture
def loop(feature: Path, background: Background, tmp_path: Path) -> Iterator[Loop]:
    yield Loop(feature, background, tmp_path, lines=1)


def test_signal_with_no_loop_running_is_refused_and_writes_nothing(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    before = snapshot(project)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # an iteration's environment, left to a process that outlived its loop, is no loop either
    ended = {"RALPH_FEATURE_DIR": str(feature), "RALPH_ITERATION": "8"}

    by_hand = ralph("signal", "learn", "use the fixtures", "-f", "feat")
    leftover = ralph("signal", "done", "8.3", cwd=elsewhere, env=ended)

    line = assert_one_line_error(
        by_hand, ".ralph/feat/signals.jsonl", NO_LOOP, "$RALPH_FEATURE_DIR", "$RALPH_ITERATION"
    )
    assert line.startswith("ralph: error:"), line
    assert_one_line_error(leftover, "signals.jsonl", NO_LOOP)
    assert by_hand.stdout == leftover.stdout == ""
    assert snapshot(project) == before
    assert not (feature / "signals.jsonl").exists()


def test_signal_from_another_terminal_while_a_loop_runs_names_no_iteration(
    feature: Path, ralph: RalphRunner, background: Background, tmp_path: Path
) -> None:
    running = Loop(feature, background, tmp_path, lines=2)
    learned = ralph("signal", "learn", "use", "the fixtures", "-f", "feat")
    failed = ralph("signal", "fail", "S-2", "too big for one iteration", "-f", "feat")
    ended = running.finished()

    assert learned.returncode == 0, learned.stderr
    assert failed.returncode == 0, failed.stderr
    assert ended.returncode == 1, ended.stdout + ended.stderr
    assert "the next iteration to end" in learned.stdout
    assert "signals.jsonl" in learned.stdout
    first, second = records(feature)
    assert set(first) == {"schema_version", "at", "iteration", "signal", "id", "text"}
    assert isinstance(first["schema_version"], int)
    assert ISO_DATE.match(first["at"]), first
    assert (first["iteration"], first["signal"], first["id"], first["text"]) == (
        None,
        "learn",
        None,
        "use the fixtures",
    )
    assert (second["signal"], second["id"], second["text"]) == ("fail", "S-2", "too big for one iteration")
    assert second["iteration"] is None
    (entry,) = progress_entries((feature / "progress.txt").read_text())
    assert "use the fixtures" in entry  # counted for the iteration that was running


def test_signal_from_the_environment_records_the_iteration(
    feature: Path, ralph: RalphRunner, loop: Loop, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"RALPH_FEATURE_DIR": str(feature), "RALPH_ITERATION": "7"}

    # Run from outside the project: the environment alone names the feature.
    done = ralph("signal", "done", "S-3", cwd=elsewhere, env=env)
    loop.finished()

    assert done.returncode == 0, done.stderr
    assert "iteration 7" in done.stdout
    (record,) = records(feature)
    assert (record["iteration"], record["signal"], record["id"], record["text"]) == (7, "done", "S-3", None)


def test_signal_text_is_cleaned_of_escapes(feature: Path, ralph: RalphRunner, loop: Loop) -> None:
    done = ralph("signal", "blocked", "\x1b[31mred\x1b[0m\n  alert\x07", "-f", "feat")
    loop.finished()

    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    (record,) = records(feature)
    assert record["text"] == "red alert"


BAD = {
    "done-without-id": (["done"], "id is required"),
    "fail-without-id": (["fail"], "id is required"),
    "blocked-without-text": (["blocked"], "text is required"),
    "learn-without-text": (["learn", "  "], "text is required"),
    "done-with-two-ids": (["done", "S-1", "S-2"], "one id only"),
    "unknown-kind": (["finished", "S-1"], "invalid choice"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_usage_is_one_line_and_records_nothing(project: Path, feature: Path, ralph: RalphRunner, case: str) -> None:
    words, needle = BAD[case]
    before = snapshot(project)

    done = ralph("signal", *words, "-f", "feat")  # the usage is told first, loop or not

    line = assert_one_line_error(done, needle)
    assert line.startswith("ralph: error:"), line
    assert done.stdout == ""
    assert snapshot(project) == before


def test_feature_dir_pointing_nowhere_is_an_error(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    before = snapshot(project)
    missing = tmp_path / "gone" / "feat"

    done = ralph("signal", "complete", env={"RALPH_FEATURE_DIR": str(missing), "RALPH_ITERATION": "1"})

    line = assert_one_line_error(done, str(missing), "no such folder")
    assert line.startswith("ralph: error:"), line
    assert snapshot(project) == before
    assert not missing.exists()


def test_no_feature_anywhere_is_an_error(feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    done = ralph("signal", "complete", cwd=elsewhere)

    line = assert_one_line_error(done)
    assert line.startswith("ralph: error:"), line
    assert not (feature / "signals.jsonl").exists()
    assert list(elsewhere.iterdir()) == []


def test_a_record_counts_for_its_own_iteration_only(feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    plan = {"1": {"signals": [["complete"]], "say": "all done\n"}, "2": {"say": "looking around\n"}}

    done = ralph("run", "-n", "2", "--agent-cmd", plan_agent(tmp_path, plan))

    assert done.returncode == 1, done.stdout + done.stderr
    assert [(record["iteration"], record["signal"]) for record in records(feature)] == [(1, "complete")]
    signals = read_json(feature / ".exit_signals")
    assert signals["done_signals"] == [1]
    assert [claim["iteration"] for claim in signals["refused_claims"]] == [1]
    first, second = (entry_fields(entry) for entry in progress_entries((feature / "progress.txt").read_text()))
    assert "completion claim refused: 3 task(s) still do not pass: S-1, S-2, S-3" in first["Note"]
    assert "signal_file" in first["Note"]
    assert second["Note"] == ""
    assert read_json(feature / "status.json")["refusedClaim"] is None
    assert "your last completion claim was refused" in (feature / "logs" / "iteration-2.prompt.md").read_text()


def test_a_record_made_before_the_run_is_not_counted(feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    # what an earlier loop's agent left, in the shape `ralph signal` writes (no iteration: the loop that ran then
    # counted it)
    earlier = [("complete", ""), ("blocked", "stale reason")]
    (feature / "signals.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "schema_version": 1,
                    "at": "2026-11-01T10:00:00+00:00",
                    "iteration": None,
                    "signal": kind,
                    "id": None,
                    "text": text,
                }
            )
            + "\n"
            for kind, text in earlier
        )
    )

    done = ralph("run", "-n", "1", "--agent-cmd", plan_agent(tmp_path, {"*": {"say": "working\n"}}))

    assert done.returncode == 1, done.stdout + done.stderr
    status = read_json(feature / "status.json")
    assert status["exitReason"] == "max_iterations"
    assert status["refusedClaim"] is None
    assert status["blockedLoops"] == 0
    assert status["lastSignals"] == []


def test_a_record_naming_no_iteration_made_while_the_agent_runs_counts(
    feature: Path, ralph: RalphRunner, tmp_path: Path
) -> None:
    plan = {"*": {"signals": [["blocked", "waiting for the schema"]], "unnumbered": True, "say": "hi\n"}}

    done = ralph("run", "-n", "1", "--agent-cmd", plan_agent(tmp_path, plan))

    assert done.returncode == 1, done.stdout + done.stderr
    assert [record["iteration"] for record in records(feature)] == [None]
    status = read_json(feature / "status.json")
    assert status["blockedReason"] == "waiting for the schema"
    assert status["blockedLoops"] == 1


def test_a_malformed_line_is_noted_not_fatal(feature: Path, ralph: RalphRunner, tmp_path: Path) -> None:
    plan = {"*": {"write": {".ralph/feat/signals.jsonl": "not json\n"}, "signals": [["learn", "still read"]]}}

    done = ralph("run", "-n", "1", "--agent-cmd", plan_agent(tmp_path, plan))

    assert done.returncode == 1, done.stdout + done.stderr
    (entry,) = progress_entries((feature / "progress.txt").read_text())
    assert "signals.jsonl: ignored a malformed line" in entry_fields(entry)["Note"]
    assert "  - still read" in entry

"""`ralph run --parallel N` end to end (issue 24): real git, real worktrees, real child `ralph run` loops and a
real agent script that commits with `git add -A` (pass marks and all, as real agents do). The feature branch
(prd.json's branchName) is not checked out anywhere, so the merge queue moves it itself."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AGENTS, PYTHON, RalphRunner, agent_cmd, write_prd
from tests.integration.helpers import git, parallel_feature, start_parallel, wait_until

BRANCH = "ralph/feat"


def _feature(project: Path, ralph: RalphRunner, env: dict[str, str], stories: Any, **config: Any) -> Path:
    return parallel_feature(project, env, stories, **config)


def _story(sid: str, *needs: str) -> dict[str, Any]:
    number = int(sid.split("-")[1])
    body: dict[str, Any] = {"id": sid, "title": f"Story {number}", "priority": number, "passes": False}
    return {**body, "acceptanceCriteria": ["works"], **({"dependsOn": list(needs)} if needs else {})}


def _on_branch(project: Path, env: dict[str, str], path: str) -> str:
    return git(project, env, "show", f"{BRANCH}:{path}").rstrip("\n")


def _passing(project: Path, env: dict[str, str]) -> list[str]:
    stories = json.loads(_on_branch(project, env, ".ralph/feat/prd.json"))["userStories"]
    return [story["id"] for story in stories if story["passes"]]


def _subjects(project: Path, env: dict[str, str]) -> list[str]:
    return git(project, env, "log", "--reverse", "--format=%s", f"main..{BRANCH}").splitlines()


def _journal(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "fleet.jsonl").read_text().splitlines() if line.strip()]


def _no_leftovers(project: Path, env: dict[str, str]) -> None:
    assert git(project, env, "worktree", "list", "--porcelain").count("worktree ") == 1
    branches = git(project, env, "for-each-ref", "--format=%(refname:short)", "refs/heads/").split()
    assert sorted(branches) == ["main", BRANCH]


def test_six_independent_stories_merge_in_two_rounds_each_as_its_own_series_and_nothing_is_left(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = _feature(project, ralph, ralph_env, 6)
    ledger = tmp_path / "ledger"

    done = ralph("run", "--parallel", "3", "--agent-cmd", agent_cmd("fleet_agent.py", "--ledger", str(ledger)))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "All 6 stories merged into ralph/feat." in done.stdout
    assert sorted(_passing(project, ralph_env)) == [f"S-{n}" for n in range(1, 7)]
    for n in range(1, 7):
        assert _on_branch(project, ralph_env, f"work-S-{n}.txt") == f"done S-{n}"
    # one agent call per story (≤ 3 rounds of 3 loops), each story its own series: its work, then its mark
    starts = ledger.read_text().splitlines()
    assert sorted(line.split()[0] for line in starts) == [f"S-{n}" for n in range(1, 7)]
    subjects = _subjects(project, ralph_env)
    assert len(subjects) == 12
    for work, mark in zip(subjects[::2], subjects[1::2], strict=True):
        story = work.removeprefix("feat: ")
        assert mark == f"{story}: passes (merged by ralph)"
    # each loop had a slot of its own and the ports of that slot
    slots = {line.split()[2] for line in starts}
    assert slots <= {"0", "1", "2"}
    assert {line.split()[3] for line in starts} <= {"20000", "20100", "20200"}
    # the progress entries of every loop reached the branch; every loop's records are kept
    progress = _on_branch(project, ralph_env, ".ralph/feat/progress.txt")
    assert all(f"Story: S-{n} - Story {n}" in progress for n in range(1, 7))
    # and each names its commit as the branch has it (the merge queue gave the loops' commits new ids)
    named = [line.removeprefix("Commit: ") for line in progress.splitlines() if line.startswith("Commit: ")]
    assert len(named) == 6
    for commit in named:
        assert git(project, ralph_env, "merge-base", "--is-ancestor", commit, BRANCH) == ""
        assert git(project, ralph_env, "log", "-1", "--format=%s", commit).startswith("feat: S-")
    for n in range(1, 7):
        assert (folder / "loops" / f"S-{n}" / "logs" / "iteration-1.log").exists()
        prompt = (folder / "loops" / f"S-{n}" / "logs" / "iteration-1.prompt.md").read_text()
        slot = next(line.split()[2] for line in starts if line.startswith(f"S-{n} "))
        base = 20000 + 100 * int(slot)
        assert f"use ports {base}-{base + 99} ($RALPH_PORT_BASE, $RALPH_PORT_COUNT)" in prompt
        assert f"this loop's slot is {slot} ($RALPH_SLOT)" in prompt
    _no_leftovers(project, ralph_env)
    assert git(project, ralph_env, "status", "--porcelain") == ""  # the user's tree was never touched
    fleet = json.loads((folder / "fleet.json").read_text())
    assert fleet["status"] == "complete" and fleet["storiesMerged"] == 6
    assert {loop["state"] for loop in fleet["loops"]} == {"merged"}
    # `ralph report` is the whole feature's: every loop's iteration, from the records kept in loops/
    report = ralph("report", "--json")
    assert report.returncode == 0, report.stdout + report.stderr
    body = json.loads(report.stdout)
    assert body["summary"]["iterations"] == 6
    assert sorted(story["id"] for story in body["stories"]) == [f"S-{n}" for n in range(1, 7)]
    assert len(body["runs"]) == 6  # each loop's run its own
    text = ralph("report")
    assert text.returncode == 0, text.stderr
    assert "Read from: the records of 6 parallel loop(s) (6 in .ralph/feat/loops/)" in text.stdout
    # a fleet.json naming a kept folder again (spelt otherwise) counts it once; one that cannot be read leaves
    # out only the worktrees' records, with a warning naming it
    fleet["loops"][0].update(state="failed", worktree=str(project), featureDir=f"{folder / 'loops' / 'S-1'}/.")
    (folder / "fleet.json").write_text(json.dumps(fleet))
    named = ralph("report", "--json")
    assert json.loads(named.stdout)["summary"]["iterations"] == 6, named.stdout + named.stderr
    (folder / "fleet.json").unlink()
    os.mkfifo(folder / "fleet.json")
    piped = ralph("report", "--json")
    assert piped.returncode == 0 and json.loads(piped.stdout)["summary"]["iterations"] == 6, piped.stderr
    assert "fleet.json" in piped.stderr and "left out" in piped.stderr


def test_two_stories_that_edit_the_same_line_one_merges_the_other_is_retried_on_the_new_base(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    _feature(project, ralph, ralph_env, 2)

    done = ralph("run", "--parallel", "2", "--agent-cmd", agent_cmd("fleet_agent.py", "--shared", "shared.txt"))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "conflicts with the work merged into ralph/feat since it began" in done.stdout
    assert sorted(_passing(project, ralph_env)) == ["S-1", "S-2"]
    second = next(line for line in done.stdout.splitlines() if line.startswith("↻ "))[2:5]
    assert _on_branch(project, ralph_env, "shared.txt") == f"written by {second}"
    # the attempt that conflicted is saved, with its patch
    saved = git(project, ralph_env, "show", f"refs/ralph/attempts/feat/{second}-merge-1:shared.txt").strip()
    assert saved == f"written by {second}"
    assert (project / ".ralph" / "feat" / "loops" / second / "logs" / f"{second}-merge-1.patch").exists()
    _no_leftovers(project, ralph_env)


def test_a_gate_that_fails_only_after_the_rebase_sends_the_story_back(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    gate = "if [ -e work-S-1.txt ] && [ -e work-S-2.txt ] && [ ! -e compat.txt ]; then exit 1; fi"
    _feature(project, ralph, ralph_env, 2, quality_checks={"compat": gate})

    done = ralph("run", "--parallel", "2", "--agent-cmd", agent_cmd("fleet_agent.py", "--compat", "--sleep", "0.3"))

    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(_passing(project, ralph_env)) == ["S-1", "S-2"]
    # the second story to land met the gate's failure only after its rebase, and was retried on the new base
    retried = [line for line in done.stdout.splitlines() if "quality gates fail after the rebase: compat" in line]
    assert len(retried) == 1, done.stdout
    second = retried[0][2:5]
    assert _on_branch(project, ralph_env, "compat.txt") == f"{second} works with {'S-2' if second == 'S-1' else 'S-1'}"


def test_a_story_starts_only_once_what_it_depends_on_is_merged(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    folder = _feature(project, ralph, ralph_env, [_story("S-1"), _story("S-2", "S-1"), _story("S-3")])

    done = ralph("run", "--parallel", "3", "--agent-cmd", agent_cmd("fleet_agent.py"))

    assert done.returncode == 0, done.stdout + done.stderr
    steps = [(entry["event"], entry.get("story")) for entry in _journal(folder)]
    assert steps.index(("started", "S-2")) > steps.index(("merged", "S-1"))
    assert steps.index(("started", "S-3")) < steps.index(("merged", "S-1"))


def test_a_killed_coordinator_stops_its_loops_and_the_next_run_merges_every_story_once(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = _feature(project, ralph, ralph_env, 4)
    ledger = tmp_path / "ledger"
    agent = agent_cmd("fleet_agent.py", "--sleep", "30", "--ledger", str(ledger))
    coordinator = start_parallel(project, ralph_env, "2", "--agent-cmd", agent)
    wait_until(lambda: ledger.exists() and len(ledger.read_text().splitlines()) == 2)
    children = [loop["pid"] for loop in json.loads((folder / "fleet.json").read_text())["loops"]]
    agents = [int(line.split()[1]) for line in ledger.read_text().splitlines()]
    coordinator.send_signal(signal.SIGKILL)
    coordinator.wait()

    # the kernel's parent-death signal stops each loop, which stops its agent and records the iteration
    for pid in [*children, *agents]:
        wait_until(lambda pid=pid: not _alive(pid))

    again = ralph("run", "--parallel", "2", "--agent-cmd", agent_cmd("fleet_agent.py"))

    assert again.returncode == 0, again.stdout + again.stderr
    assert sorted(_passing(project, ralph_env)) == ["S-1", "S-2", "S-3", "S-4"]
    subjects = _subjects(project, ralph_env)
    for n in range(1, 5):
        assert subjects.count(f"S-{n}: passes (merged by ralph)") == 1
    _no_leftovers(project, ralph_env)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purposes
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_bad_uses_of_parallel_are_one_line_errors(project: Path, ralph: RalphRunner, ralph_env: dict[str, str]) -> None:
    folder = _feature(project, ralph, ralph_env, 2)
    for args, words in (
        (["--parallel", "0"], "--parallel"),
        (["--parallel", "2", "-s", "S-1"], "without -s"),
        (["--parallel", "40"], "1 to 32"),
    ):
        done = ralph("run", *args, "--agent-cmd", "true")
        assert done.returncode != 0 and words in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    prd = (folder / "prd.json").read_text()
    (folder / "prd.json").write_text(prd.replace('"Story 1"', '"Story one"'))
    done = ralph("run", "--parallel", "2", "--agent-cmd", "true")
    assert done.returncode != 0 and "not committed" in done.stderr and ".ralph/feat/prd.json" in done.stderr
    assert (folder / "prd.json").read_text() != prd  # the user's edit is left as it was
    assert not (folder / "fleet.json").exists()


def test_the_hourly_call_budget_holds_exactly_across_the_loops(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    """Three loops, two calls an hour for the account: two agents run, the third loop waits for a slot (as a single
    loop does: it is not counted, nothing is spent), and a Ctrl+C stops the whole fleet."""
    folder = _feature(project, ralph, ralph_env, 3)
    ledger = tmp_path / "ledger"
    agent = agent_cmd("fleet_agent.py", "--ledger", str(ledger))
    coordinator = start_parallel(project, ralph_env, "3", "-r", "2", "--agent-cmd", agent)
    worktrees = project / ".git" / "ralph-worktrees" / "feat"

    def waiting() -> list[str]:
        found = []
        for status in worktrees.glob("*/.ralph/feat/status.json"):
            with contextlib.suppress(ValueError, OSError):
                if (json.loads(status.read_text()).get("waiting") or {}).get("kind") == "rate limit":
                    found.append(status.parents[2].name)
        return found

    assert wait_until(lambda: len(waiting()) == 1 and len(_passing(project, ralph_env)) == 2, limit=60)
    coordinator.send_signal(signal.SIGINT)
    out, _ = coordinator.communicate(timeout=60)

    assert coordinator.returncode == 130, out
    assert len(ledger.read_text().splitlines()) == 2  # two agents ran, in all
    calls = json.loads((Path(ralph_env["RALPH_HOME"]) / "calls" / "command.json").read_text())
    assert len(calls["starts"]) == 2
    fleet = json.loads((folder / "fleet.json").read_text())
    assert fleet["status"] == "interrupted"
    assert "To continue, run: ralph run --parallel 3 -r 2" in out


def test_two_features_run_side_by_side_on_their_own_branches_sharing_the_loops(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    """Without -f, every prd.json feature of the project: three loops in all, each slot (and port range) used by one
    loop at a time whatever its feature, each feature's stories merged on its own branch."""
    for name in ("feat", "api"):
        assert ralph("init", name).returncode == 0
        write_prd(project / ".ralph" / name, 3, branchName=f"ralph/{name}")
    git(project, ralph_env, "add", "-A")
    git(project, ralph_env, "commit", "-qm", "two features")
    ledger = tmp_path / "ledger"

    done = ralph("run", "--parallel", "3", "--agent-cmd", agent_cmd("fleet_agent.py", "--ledger", str(ledger)))

    assert done.returncode == 0, done.stdout + done.stderr
    for name in ("feat", "api"):
        prd = json.loads(git(project, ralph_env, "show", f"ralph/{name}:.ralph/{name}/prd.json"))
        assert all(story["passes"] for story in prd["userStories"]), name
        assert f"{name}: All 3 stories merged into ralph/{name}." in done.stdout
    assert "▶ api/S-1 started in slot" in done.stdout
    assert {line.split()[2] for line in ledger.read_text().splitlines()} <= {"0", "1", "2"}
    assert len(ledger.read_text().splitlines()) == 6
    assert git(project, ralph_env, "worktree", "list", "--porcelain").count("worktree ") == 1

    one = ralph("run", "-f", "feat", "-f", "api", "--agent-cmd", "true")
    assert one.returncode != 0 and "-f/--feature given 2 times" in one.stderr and "--parallel N" in one.stderr


def test_the_runs_max_cost_is_the_whole_fleets(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    """Three loops whose agent (a stand-in `claude`) reports $0.60 a call and never finishes its story: with
    `--max-cost 1.5` for the run, the loops together stop once they passed $1.50, each loop having been given the
    run's budget as its own limit (so none could spend past it alone)."""
    folder = _feature(project, ralph, ralph_env, 3, circuit_breaker={"no_progress_threshold": 50})
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"
    claude.write_text(f'#!/bin/sh\nexec "{PYTHON}" "{AGENTS / "claude_costs.py"}" "$@"\n')
    claude.chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{ralph_env['PATH']}"
    env = {"PATH": path, "FAKE_CLAUDE_COST": "0.6", "FAKE_CLAUDE_SLEEP": "1"}

    done = ralph("run", "--parallel", "3", "--agent", "claude", "--max-cost", "1.5", env=env)

    assert done.returncode == 1, done.stdout + done.stderr
    assert "■ Budget: the agents spent $" in done.stdout and "of the run's $1.50 (--max-cost)" in done.stdout
    fleet = json.loads((folder / "fleet.json").read_text())
    assert (fleet["status"], fleet["exitReason"]) == ("halted", "budget")
    spent = 0.0
    for metrics in (project / ".git" / "ralph-worktrees" / "feat").glob("*/.ralph/feat/ralph_metrics.jsonl"):
        spent += sum(json.loads(line).get("cost_usd") or 0.0 for line in metrics.read_text().splitlines())
    # the loops stop once together they reach $1.50: the calls then in flight (one a loop at most) are all it passes
    assert 1.5 <= spent <= 1.5 + 3 * 0.6 + 1e-9
    # each loop was given what was left of the run's budget as its own limit, and stopped as on Ctrl+C (records kept)
    for status in (project / ".git" / "ralph-worktrees" / "feat").glob("*/.ralph/feat/status.json"):
        loop = json.loads(status.read_text())
        assert 0 < loop["maxCostUsd"] <= 1.5 and loop["exitReason"] == "interrupted", loop.get("exitMessage")
    # `ralph report` counts the stopped loops' calls from their worktrees: the same dollars
    report = ralph("report", "--json")
    assert report.returncode == 0, report.stdout + report.stderr
    assert json.loads(report.stdout)["summary"]["cost_usd"]["total"] == pytest.approx(spent)
    said = ralph("report").stdout
    assert "Read from: the records of 3 parallel loop(s) (3 in their worktrees)" in said, said
    for terminal in (folder / "loops").glob("*/terminal.log"):
        assert "stopped at once" not in terminal.read_text()  # one SIGTERM each, never a second


def test_with_merge_resolve_agent_the_agent_resolves_the_conflict_instead_of_a_retry(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    folder = _feature(project, ralph, ralph_env, 2, merge={"resolve": "agent"})

    done = ralph("run", "--parallel", "2", "--agent-cmd", agent_cmd("fleet_agent.py", "--shared", "shared.txt"))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "⚒ " in done.stdout and "resolves the conflict in shared.txt" in done.stdout
    assert "↻ " not in done.stdout  # resolved, not sent back
    assert sorted(_on_branch(project, ralph_env, "shared.txt").splitlines()) == ["written by S-1", "written by S-2"]
    assert sorted(_passing(project, ralph_env)) == ["S-1", "S-2"]
    second = next(line for line in done.stdout.splitlines() if line.startswith("⚒ "))[2:5]
    prompt = (folder / "loops" / second / "logs" / "merge-resolve-1.prompt.md").read_text()
    assert "- shared.txt" in prompt
    _no_leftovers(project, ralph_env)


@pytest.mark.slow
def test_the_resolvers_calls_count_in_the_runs_budget(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    """Two stories that conflict, each loop's call $0.25, and the resolver's call $0.25 too (a stand-in `claude`):
    with `--max-cost 0.7` the run is over its budget once the conflict is resolved ($0.75), so S-3, which needs
    both, is never started. Counting the loops alone ($0.50), it would have been. A gate that takes its time on
    the resolver's merge commit is stopped with the run: that story stays queued, and the next run lands it without
    calling the resolver again (its merge is not flattened by a second rebase)."""
    stories = [_story("S-1"), _story("S-2"), _story("S-3", "S-1", "S-2")]
    slow = "if git rev-parse -q --verify HEAD^2 >/dev/null; then sleep 5; fi"  # HEAD is the resolver's merge
    folder = _feature(project, ralph, ralph_env, stories, merge={"resolve": "agent"}, quality_checks={"slow": slow})
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"
    agent = AGENTS / "fleet_agent.py"
    claude.write_text(f'#!/bin/sh\nexec "{PYTHON}" "{agent}" --shared shared.txt --claude-cost 0.25 "$@"\n')
    claude.chmod(0o755)
    env = {"PATH": f"{bin_dir}{os.pathsep}{ralph_env['PATH']}"}

    done = ralph("run", "--parallel", "2", "--agent", "claude", "--max-cost", "0.7", env=env)

    assert done.returncode == 1, done.stdout + done.stderr
    assert "resolves the conflict in shared.txt" in done.stdout
    assert "■ Budget: the agents spent $0.75 of the run's $0.70 (--max-cost)" in done.stdout, done.stdout
    assert "S-3 started" not in done.stdout
    [resolved] = [entry for entry in _journal(folder) if entry["event"] == "resolved"]
    assert (resolved["costUsd"], resolved["tokens"]) == (0.25, 500)
    second = next(line for line in done.stdout.splitlines() if line.startswith("⚒ "))[2:5]  # whichever ended last
    first = {"S-1", "S-2"}.difference({second}).pop()
    assert json.loads((folder / "fleet.json").read_text())["queue"] == [second]
    assert _passing(project, ralph_env) == [first]
    status = ralph("status", "--json")  # the fleet's spend is what the budget counted
    assert json.loads(status.stdout)["fleet"]["costUsd"] == pytest.approx(0.75), status.stdout + status.stderr

    again = ralph("run", "--parallel", "2", "--agent", "claude", env=env)

    assert again.returncode == 0, again.stdout + again.stderr
    assert sorted(_passing(project, ralph_env)) == ["S-1", "S-2", "S-3"]
    assert [entry["event"] for entry in _journal(folder)].count("resolved") == 1
    _no_leftovers(project, ralph_env)
    # the report adds the resolver's call up with the loops' ($0.25 each: S-1, S-2, the resolver, S-3)
    report = ralph("report", "--json")
    assert report.returncode == 0, report.stdout + report.stderr
    body = json.loads(report.stdout)
    assert body["summary"]["cost_usd"]["total"] == pytest.approx(1.0)
    [resolved_story] = [story for story in body["stories"] if story["id"] == second]
    assert [attempt["outcome"] for attempt in resolved_story["attempts"]] == ["complete", "merge-resolve"]


def _checked_out_feature(project: Path, ralph: RalphRunner, env: dict[str, str], **config: Any) -> None:
    """The feature on BRANCH, and BRANCH checked out in the user's own worktree (where ralph runs)."""
    _feature(project, ralph, env, 3, **config)
    git(project, env, "switch", "-q", "-c", BRANCH)


def test_a_feature_branch_checked_out_here_is_never_moved_the_work_lands_on_an_integration_branch(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    _checked_out_feature(project, ralph, ralph_env)
    head = git(project, ralph_env, "rev-parse", "HEAD")

    done = ralph("run", "--parallel", "2", "--agent-cmd", agent_cmd("fleet_agent.py"))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "merged into ralph-integration/feat" in done.stdout
    assert git(project, ralph_env, "rev-parse", "HEAD") == head  # the user's branch and files untouched
    assert git(project, ralph_env, "status", "--porcelain") == ""
    command = done.stdout.strip().splitlines()[-1].partition(": ")[2]
    assert command == "git merge --ff-only ralph-integration/feat"
    # not brought in yet, and the feature branch no longer checked out here: the next run goes on from the
    # integration branch's merged work, it never does the stories again on the feature branch
    git(project, ralph_env, "switch", "-q", "main")
    ledger = project.parent / "ledger"
    again = ralph("run", "--parallel", "2", "--agent-cmd", agent_cmd("fleet_agent.py", "--ledger", str(ledger)))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "All 3 stories merged into ralph-integration/feat." in again.stdout
    assert not ledger.exists()  # no agent ran

    git(project, ralph_env, "switch", "-q", BRANCH)
    subprocess.run(["sh", "-c", command], cwd=project, env=ralph_env, check=True, capture_output=True)  # pasted
    prd = json.loads((project / ".ralph" / "feat" / "prd.json").read_text())
    assert all(story["passes"] for story in prd["userStories"])
    assert (project / "work-S-3.txt").exists()


def test_with_consent_a_clean_checked_out_feature_branch_is_fast_forwarded_and_a_dirty_one_is_left_alone(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    _checked_out_feature(project, ralph, ralph_env, merge={"fast_forward_checked_out": True})

    done = ralph("run", "--parallel", "2", "--agent-cmd", agent_cmd("fleet_agent.py"))

    assert done.returncode == 0, done.stdout + done.stderr
    assert "All 3 stories merged into ralph/feat." in done.stdout
    assert (project / "work-S-1.txt").read_text() == "done S-1\n"  # the user's worktree moved with its branch
    assert git(project, ralph_env, "status", "--porcelain") == ""

    # a change of the user's own in that worktree: it is never touched; the rest lands on the integration branch
    write_prd(project / ".ralph" / "feat", [_story("S-4")], branchName=BRANCH)
    git(project, ralph_env, "commit", "-qam", "one more story")
    (project / "notes.txt").write_text("mine\n")
    git(project, ralph_env, "add", "notes.txt")
    done = ralph("run", "--parallel", "2", "--agent-cmd", agent_cmd("fleet_agent.py"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "with changes of its own: the work lands on ralph-integration/feat" in done.stdout
    assert git(project, ralph_env, "status", "--porcelain") == "A  notes.txt\n"
    assert not (project / "work-S-4.txt").exists()
    assert git(project, ralph_env, "show", "ralph-integration/feat:work-S-4.txt") == "done S-4\n"


def test_a_project_in_a_folder_of_its_repository_runs_its_loops_there_with_its_own_config(
    project: Path, ralph_env: dict[str, str]
) -> None:
    """The loops run in the project's folder of their worktrees: its config (its gate) applies, its work lands there."""
    app = project / "app"
    (app / ".ralph").mkdir(parents=True)
    parallel_feature(app, ralph_env, 2, quality_checks={"here": "test -f .ralph/feat/prd.json"})

    done = start_parallel(app, ralph_env, "2", "--agent-cmd", agent_cmd("fleet_agent.py"))
    out, _ = done.communicate(timeout=120)

    assert done.returncode == 0, out
    assert git(project, ralph_env, "show", f"{BRANCH}:app/work-S-2.txt") == "done S-2\n"
    prd = json.loads(git(project, ralph_env, "show", f"{BRANCH}:app/.ralph/feat/prd.json"))
    assert all(story["passes"] for story in prd["userStories"])


def test_a_worktree_that_checks_the_branch_out_during_the_run_is_never_moved_under(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    _feature(project, ralph, ralph_env, 2)
    ledger = tmp_path / "ledger"
    run = start_parallel(
        project, ralph_env, "2", "--agent-cmd", agent_cmd("fleet_agent.py", "--sleep", "1", "--ledger", str(ledger))
    )
    assert wait_until(ledger.exists)
    other = tmp_path / "other"
    git(project, ralph_env, "worktree", "add", "-q", str(other), BRANCH)  # the user's, while the loops work
    head = git(other, ralph_env, "rev-parse", "HEAD")
    out, _ = run.communicate(timeout=120)

    assert run.returncode == 0, out
    assert f"{BRANCH} is checked out in {other}: the work lands on ralph-integration/feat from now on" in out
    assert git(other, ralph_env, "rev-parse", "HEAD") == head and git(other, ralph_env, "status", "--porcelain") == ""
    prd = json.loads(git(project, ralph_env, "show", "ralph-integration/feat:.ralph/feat/prd.json"))
    assert all(story["passes"] for story in prd["userStories"])


def test_a_feature_branch_whose_task_file_is_not_the_users_is_refused_with_a_command_that_mends_it(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    """ralph/feat made before the stories were: the loops would start from a branch with none (a false "complete")."""
    git(project, ralph_env, "branch", BRANCH)
    _feature(project, ralph, ralph_env, 2)

    refused = ralph("run", "--parallel", "2", "--agent-cmd", agent_cmd("fleet_agent.py"))

    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    line = refused.stderr.strip()
    assert line.count("\n") == 0 and f"not on branch {BRANCH}, where the loops start" in line
    command = line.rpartition("(")[2].rstrip(")")
    assert command == f"git switch {BRANCH} && git merge main"
    subprocess.run(["sh", "-c", command], cwd=project, env=ralph_env, check=True, capture_output=True)  # pasted
    done = ralph("run", "--parallel", "2", "--agent-cmd", agent_cmd("fleet_agent.py"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "All 2 stories merged into ralph-integration/feat." in done.stdout

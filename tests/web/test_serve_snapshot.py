"""What `ralph serve` shows, built from real files: a fleet laid out as its coordinator writes it, a single loop
made by a real `ralph run`, and hostile files where fleet.json belongs. (No web stack needed: snapshot.py and
live.py are plain Python.)"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import STATE_CAP
from ralphloop.project.paths import FeaturePaths
from ralphloop.web.live import REREAD_S, Source
from ralphloop.web.snapshot import LOG_LINES, build, features
from tests.conftest import RalphRunner, write_prd
from tests.fleet_project import SCRIPT_TITLE, live, make_fleet, read_loops, stream_line, write_fleet

NOW = datetime(2026, 11, 21, 2, 10, 0, tzinfo=UTC)


def shown(project: Path, *selectors: str) -> dict[str, Any]:
    snapshot, _ = build(features(str(project), list(selectors)).paths(), NOW)
    return snapshot


def test_a_live_fleet_shows_every_loop_its_queue_and_totals(tmp_path: Path) -> None:
    project = tmp_path / "project"
    folder = make_fleet(project)
    with live(folder):
        [feature] = shown(project)["features"]
    assert (feature["name"], feature["status"], feature["alive"], feature["errors"]) == ("feat", "running", True, [])
    assert (feature["done"], feature["total"], feature["cost"]) == (1, 3, "$0.26")  # 0.21 + 0.05 + 0
    assert feature["fleet"] == {"parallel": 3, "target": "feature/feat", "bringIn": None, "queue": []}
    loops = {loop["story"]: loop for loop in feature["loops"]}
    assert list(loops) == ["S-1", "S-2", "S-3"]
    merged, running, hostile = loops["S-1"], loops["S-2"], loops["S-3"]
    assert (merged["state"], merged["cost"], merged["iteration"], merged["inIteration"]) == (
        "merged",
        "$0.21",
        "1 / 5",
        False,
    )
    assert (running["state"], running["slot"], running["attempt"], running["maxAttempts"]) == ("running", 1, 1, 3)
    assert running["branch"] == "ralph/feat/S-2"
    assert running["iteration"] == "2 / 5"  # the second, going on: as `ralph status` words it
    assert (running["activity"], running["inIteration"], running["lastOutputAt"]) == (
        "Bash: pytest -q",
        True,
        "2026-11-21T02:06:00Z",
    )
    assert running["log"]["name"] == "iteration-2.log"
    assert running["log"]["lines"] == [f"S-2 line {n}" for n in range(51 - LOG_LINES, 51)]  # read as Claude's
    assert hostile["title"] == SCRIPT_TITLE  # as it is: the page shows it as text


def test_a_fleet_without_its_processes_is_stopped_and_shows_no_activity(tmp_path: Path) -> None:
    project = tmp_path / "project"
    make_fleet(project)
    [feature] = shown(project)["features"]
    assert (feature["status"], feature["alive"]) == ("stopped", False)
    assert [loop["activity"] for loop in feature["loops"]] == [None, None, None]


def test_a_loop_whose_worktree_is_gone_is_shown_without_its_numbers(tmp_path: Path) -> None:
    project = tmp_path / "project"
    folder = make_fleet(project)
    loops = read_loops(folder)
    loops[1]["featureDir"] = str(tmp_path / "removed")
    write_fleet(folder, loops=loops, queue=["S-2"], merged=1)
    [feature] = shown(project)["features"]
    gone = feature["loops"][1]
    assert (gone["story"], gone["iteration"], gone["cost"], gone["log"]) == (
        "S-2",
        None,
        None,
        {"name": "", "lines": []},
    )
    assert feature["fleet"]["queue"] == ["S-2"]


def test_agent_text_loses_its_escapes_and_secrets(tmp_path: Path) -> None:
    project = tmp_path / "project"
    folder = make_fleet(project)
    child = Path(read_loops(folder)[1]["featureDir"])
    status = json.loads((child / "status.json").read_text())
    status["activity"] = "Bash: \x1b[2Jcurl -H 'x-api-key: sk-ant-api03-abcdefghijklmnopqrstuvwxyz'"
    status["costUsd"] = float("nan")  # a hand-edited file's: JSON.parse would refuse the page's whole snapshot
    (child / "status.json").write_text(json.dumps(status))
    log = child / "logs" / "iteration-2.log"
    log.write_text(stream_line("token ghp_abcdefghijklmnopqrstuvwxyz0123 \x1b]0;title\x07said") + "\n")
    with live(folder):
        snapshot = shown(project)
    loop = snapshot["features"][0]["loops"][1]
    assert loop["activity"] == "Bash: curl -H 'x-api-key: [REDACTED]'"
    assert (loop["cost"], snapshot["features"][0]["cost"]) == (None, "$0.21")  # the costs known: S-1's, S-3's
    json.dumps(snapshot, allow_nan=False)  # what the page parses
    assert loop["log"]["lines"] == ["token [REDACTED] said"]


def test_a_single_loop_from_a_real_run(project: Path, feature: Path, ralph: RalphRunner) -> None:
    ran = ralph("run", "-n", "1", "--agent-cmd", "echo working on it")
    assert ran.returncode == 1, ran.stderr  # one iteration that finishes nothing: max iterations
    [view] = shown(project)["features"]
    assert (view["name"], view["fleet"], view["errors"]) == ("feat", None, [])
    assert (view["status"], view["done"], view["total"], view["alive"]) == ("halted", 0, 3, False)
    assert "iteration" in view["message"]  # the run's own words for why it stopped
    [loop] = view["loops"]
    assert (loop["story"], loop["iteration"], loop["inIteration"]) == ("S-1 - Story 1", "1 / 1", False)
    assert loop["log"] == {"name": "iteration-1.log", "lines": ["working on it"]}


def fifo(path: Path) -> None:
    os.mkfifo(path)


def link_to_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def huge(path: Path) -> None:
    with open(path, "wb") as handle:
        handle.truncate(STATE_CAP + 1)


def garbage(path: Path) -> None:
    path.write_bytes(b"\x00\xff{not json")


@pytest.mark.parametrize("make", [fifo, link_to_zero, huge, garbage])
def test_a_hostile_fleet_json_is_told_never_followed(tmp_path: Path, make: Any) -> None:
    project = tmp_path / "project"
    folder = project / ".ralph" / "feat"
    write_prd(folder, 2)
    make(folder / "fleet.json")
    [view] = shown(project)["features"]
    assert view["fleet"] is None and len(view["errors"]) == 1
    assert "fleet.json" in view["errors"][0]
    assert (view["status"], view["total"]) == ("not started", 2)  # the single loop's view: what can be read


def test_a_hostile_status_json_makes_the_feature_unreadable_not_the_page(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_prd(project / ".ralph" / "good", 1)
    write_prd(project / ".ralph" / "bad", 1)
    os.mkfifo(project / ".ralph" / "bad" / "status.json")
    bad, good = shown(project)["features"]
    assert (bad["name"], bad["status"]) == ("bad", "unreadable")
    assert "status.json" in bad["errors"][0]
    assert (good["name"], good["status"], good["errors"]) == ("good", "not started", [])


def test_after_the_end_the_newest_archived_feature_is_shown_and_said_archived(tmp_path: Path) -> None:
    project = tmp_path / "project"
    archive = project / ".ralph" / "archive"
    write_prd(archive / "20261201-090000-auth", 1)
    write_prd(archive / "20261202-090000-auth", 1)
    write_prd(archive / "20261203-090000-billing", 1)
    [newest] = shown(project)["features"]
    assert (newest["name"], newest["dir"], newest["archived"]) == (
        "billing",
        ".ralph/archive/20261203-090000-billing",
        True,
    )
    [named] = shown(project, "auth")["features"]
    assert (named["name"], named["dir"]) == ("auth", ".ralph/archive/20261202-090000-auth")
    write_prd(project / ".ralph" / "auth", 1)  # active again: the active one is shown, not the archive
    [active] = shown(project)["features"]
    assert (active["dir"], active["archived"]) == (".ralph/auth", False)


def test_features_named_or_none(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".ralph").mkdir(parents=True)
    with pytest.raises(RalphError, match="no feature in"):
        features(str(project), [])
    write_prd(project / ".ralph" / "a", 1)
    with pytest.raises(RalphError, match="-f b: no such feature"):
        features(str(project), ["b"])
    listed = features(str(project), [])
    write_prd(project / ".ralph" / "b", 1)  # made while the page is open: it appears
    assert [paths.name for paths in listed.paths()] == ["a", "b"]
    assert [paths.name for paths in features(str(project), ["b"]).paths()] == ["b"]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_source_has_a_new_version_only_when_what_is_shown_changed(tmp_path: Path) -> None:
    project = tmp_path / "project"
    folder = make_fleet(project)
    clock = Clock()
    source = Source(features(str(project), []), now=lambda: NOW, monotonic=clock)
    first, body = source.current()
    assert json.loads(body)["features"][0]["loops"][1]["state"] == "running"
    assert source.current() == (first, body)  # nothing changed: not read again
    clock.now += REREAD_S  # read again (a lock may have gone): the same to show, the same version
    assert source.current()[0] == first
    loops = read_loops(folder)
    loops[1]["state"] = "queued"
    write_fleet(folder, loops=loops, queue=["S-2"], merged=1)
    version, body = source.current()  # fleet.json's stamp changed: read at once
    assert version == first + 1
    assert json.loads(body)["features"][0]["loops"][1]["state"] == "queued"
    child = Path(loops[2]["featureDir"])
    (child / "logs" / "iteration-1.log").write_text(stream_line("a new line") + "\n")
    version, body = source.current()  # a loop's log is watched too
    assert version == first + 2
    assert json.loads(body)["features"][0]["loops"][2]["log"]["lines"] == ["a new line"]


def test_a_feature_paths_of_the_project_root(tmp_path: Path) -> None:
    """Seed 000's layout (fix_plan.md at the root): the root is the workspace, shown by its folder's name."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "fix_plan.md").write_text("- [ ] one\n")
    [paths] = features(str(project), []).paths()
    assert isinstance(paths, FeaturePaths) and paths.dir == str(project)


def test_a_fleet_shows_its_accounts_usage_windows_once_and_why_no_loop_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 34: each loop's status.json names its account; the windows are the book's, shown once for the fleet."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("RALPH_HOME", str(home))
    project = tmp_path / "project"
    folder = make_fleet(project)
    account = "claude/login:/home/me/.claude"
    for loop in read_loops(folder):
        status_file = Path(loop["featureDir"]) / "status.json"
        status = json.loads(status_file.read_text())
        status["pacing"] = {"accounts": [{"agent": "claude", "account": account}], "caps": {"all": 0.8}}
        status_file.write_text(json.dumps(status))
    window = {"utilization": 0.85, "resetsAt": "2100-01-01T00:00:00Z", "readAt": "2026-11-21T02:05:00Z"}
    book = {"schema_version": 1, "limits": {}, "windows": {account: {"five_hour": window}}}
    (home / "agent-limits.json").write_text(json.dumps(book))
    said = "claude's 5-hour window is 85% used, at or past your cap of 80%"
    held = {"message": said, "until": "2100-01-01T00:00:00Z"}
    write_fleet(folder, loops=read_loops(folder), queue=[], merged=1, held=held)

    with live(folder):
        snapshot, watched = build(features(str(project), []).paths(), NOW)
    [feature] = snapshot["features"]
    [shown_window] = feature["windows"]
    assert (shown_window["window"], shown_window["utilization"], shown_window["cap"]) == ("five_hour", 0.85, 0.8)
    assert shown_window["words"].startswith("claude 5-hour: 85% used, past your 80% cap · resets 2100-01-01")
    assert feature["held"] == held["message"]
    assert str(home / "agent-limits.json") in watched  # a loop's new reading redraws the page

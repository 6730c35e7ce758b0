"""`ralph serve`'s page in Debian's chromium over a fleet of three loops held live: every loop shown, agent text as
text, then the files changed on disk as a live run changes them and the page following without a reload; no
console error, no request but to the server, readable on a phone. A hostile feature beside it is told, not fatal."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ralphloop.words.pace import rough
from tests.browser import Watched, launched
from tests.conftest import isolated_env, write_prd
from tests.fleet_project import SCRIPT_TITLE, live, make_fleet, read_loops, stream_line, write_fleet
from tests.serve_process import serving

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
TIMEOUT_MS = 10_000  # how long a change may take to show before the test fails (it shows within about a second)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launched()


def test_the_page_follows_a_live_fleet_without_a_reload(tmp_path: Path, browser: Any) -> None:
    from playwright.sync_api import expect

    project = tmp_path / "project"
    folder = make_fleet(project)
    write_prd(project / ".ralph" / "broken", 1)
    os.mkfifo(project / ".ralph" / "broken" / "fleet.json")  # a FIFO where fleet.json belongs: never read
    env = isolated_env(tmp_path / "home", tmp_path / "gitconfig")
    with live(folder), serving(project, env) as served:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        try:
            watched = Watched(context)
            page, errors, dialogs, requests = watched.page, watched.errors, watched.dialogs, watched.requests
            page.goto(served.url)

            fleet = page.locator('section[data-feature="feat"]')
            loops = fleet.locator("article.loop")
            expect(loops).to_have_count(3, timeout=TIMEOUT_MS)
            expect(page.locator("#live")).to_have_text("live")
            expect(fleet.locator(".summary")).to_have_text("1 of 3 stories merged · $0.26 · 3 at once → feature/feat")
            expect(fleet.locator(".queue")).to_have_text("Merge queue: empty")
            states = [loops.nth(n).locator(".top .state").text_content() for n in range(3)]
            assert states == ["merged", "running", "running"]
            s2, s3 = fleet.locator('[data-story="S-2"]'), fleet.locator('[data-story="S-3"]')
            expect(s2.locator(".facts")).to_have_text("attempt 1 of 3 · slot 1 · iteration 2 / 5 · $0.05")
            expect(s2.locator(".activity")).to_have_text("Bash: pytest -q")
            expect(s2.locator(".age")).to_contain_text("last output ")
            expect(s2.locator("pre")).to_contain_text("S-2 line 50")
            expect(s3.locator(".title")).to_have_text(SCRIPT_TITLE)  # text, never markup: no dialog opened
            broken = page.locator('section[data-feature="broken"] .error')
            expect(broken).to_have_text(".ralph/broken/fleet.json: not a regular file but a FIFO; remove or replace it")

            # S-2 finishes and waits to merge; S-3's agent says more: written as the coordinator and the loop write
            loops_now = read_loops(folder)
            loops_now[1]["state"] = "queued"
            write_fleet(folder, loops=loops_now, queue=["S-2"], merged=1)
            child = Path(loops_now[2]["featureDir"])
            status = json.loads((child / "status.json").read_text())
            status.update(activity="Read: <img src=x onerror=alert(2)>", costUsd=0.5)
            (child / "status.json").write_text(json.dumps(status))
            with open(child / "logs" / "iteration-1.log", "a") as log:
                log.write(stream_line("tests pass now") + "\n")

            expect(s2.locator(".top .state")).to_have_text("queued", timeout=TIMEOUT_MS)
            expect(fleet.locator(".queue")).to_have_text("Merge queue: S-2", timeout=TIMEOUT_MS)
            expect(s3.locator(".activity")).to_have_text("Read: <img src=x onerror=alert(2)>", timeout=TIMEOUT_MS)
            expect(s3.locator("pre")).to_contain_text("tests pass now", timeout=TIMEOUT_MS)
            expect(fleet.locator(".summary")).to_contain_text("$0.76")
            assert page.evaluate("performance.getEntriesByType('navigation').length") == 1  # never reloaded
            spans = [0, 59.9, 60, 89, 90, 150, 270, 3599, 3600, 5000, 172_799, 172_800, 200_000]
            words = page.evaluate("(spans) => spans.map((span) => rough(span))", spans)
            assert words == [rough(span) for span in spans]  # the ages as every other screen words them

            page.set_viewport_size({"width": 390, "height": 844})  # a phone: nothing wider than the screen
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
            assert errors == [] and dialogs == []
            assert {url.split("?")[0] for url in requests} == {f"{served.base}/", f"{served.base}/events"}
        finally:
            context.close()


@pytest.mark.slow
def test_the_page_follows_a_real_parallel_run_live(tmp_path: Path, browser: Any) -> None:
    """A real `ralph run --parallel 2` over three stories: the page shows its loops running, then every story
    merged, without a reload."""
    import subprocess

    from playwright.sync_api import expect

    from tests.conftest import agent_cmd
    from tests.integration.helpers import parallel_feature, start_parallel, wait_until

    project = tmp_path / "project"
    project.mkdir()
    env = isolated_env(tmp_path / "home", tmp_path / "gitconfig")
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=project, env=env, check=True)
    parallel_feature(project, env, 3)
    ledger = tmp_path / "ledger"
    agent = agent_cmd("fleet_agent.py", "--sleep", "1", "--ledger", str(ledger))
    with serving(project, env) as served:
        run = start_parallel(project, env, "2", "--agent-cmd", agent)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        try:
            watched = Watched(context)
            page, errors = watched.page, watched.errors
            wait_until(ledger.exists)
            page.goto(served.url)
            fleet = page.locator('section[data-feature="feat"]')
            expect(fleet.locator("article.loop").first).to_be_visible(timeout=TIMEOUT_MS)
            expect(fleet.locator(".summary")).to_contain_text("3 of 3 stories merged", timeout=30_000)
            states = fleet.locator("article.loop .top .state")
            expect(states).to_have_count(3)
            assert [states.nth(n).text_content() for n in range(3)] == ["merged"] * 3
            assert errors == []
        finally:
            context.close()
            out, _ = run.communicate(timeout=60)
        assert run.returncode == 0, out


def test_the_page_shows_the_usage_windows_and_follows_a_new_reading(tmp_path: Path, browser: Any) -> None:
    """Issue 34: each window of the loops' account with its share, cap and reset; past the cap in red, and the fleet's
    hold; a loop's new reading in the shared book redraws the page. At 390 px it fits."""
    from playwright.sync_api import expect

    project = tmp_path / "project"
    folder = make_fleet(project)
    env = isolated_env(tmp_path / "home", tmp_path / "gitconfig")
    home = Path(env["RALPH_HOME"])
    home.mkdir(parents=True)
    account = "claude/login:/home/me/.claude"
    for loop in read_loops(folder):
        status_file = Path(loop["featureDir"]) / "status.json"
        status = json.loads(status_file.read_text())
        status["pacing"] = {"accounts": [{"agent": "claude", "account": account}], "caps": {"five_hour": 0.5}}
        status_file.write_text(json.dumps(status))

    def book(share: float) -> None:
        window = {"utilization": share, "resetsAt": "2100-01-01T00:00:00Z", "readAt": "2026-11-21T02:05:00Z"}
        body = {"schema_version": 1, "limits": {}, "windows": {account: {"five_hour": window}}}
        (home / "agent-limits.json").write_text(json.dumps(body))

    book(0.3)
    with live(folder), serving(project, env) as served:
        context = browser.new_context(viewport={"width": 390, "height": 844})
        try:
            page = Watched(context).page
            page.goto(served.url)
            window = page.locator('section[data-feature="feat"] p.window')
            expect(window).to_have_count(1, timeout=TIMEOUT_MS)
            expect(window).to_contain_text("claude 5-hour: 30% used of your 50% cap · resets 2100-01-01")
            expect(window).to_have_class("window dim")
            book(0.6)  # another loop's call read the account again
            expect(window).to_contain_text("60% used, past your 50% cap", timeout=TIMEOUT_MS)
            expect(window).to_have_class("window error")
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
        finally:
            context.close()

"""`ralph report`'s receipt, timeline and page over the records of a real run: the real `ralph run --agent claude`
with a stand-in `claude` that passes, fails, makes a refused claim and meets a usage limit (and its wait); then the
real `ralph report` as text, JSON and an HTML page opened in Debian's chromium."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.browser import Watched, launched
from tests.conftest import isolated_env
from tests.integration import receipt_project
from tests.integration.receipt_project import SCRIPT_TITLE

METRICS = ".ralph/feat/ralph_metrics.jsonl"


@dataclass(frozen=True)
class Made:
    project: Path
    env: dict[str, str]

    def ralph(self, *args: str) -> subprocess.CompletedProcess[str]:
        return receipt_project.ralph(self.project, self.env, *args)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Made:
    """One real run for the whole module (about 4 s): seven calls, one of them not counted, one wait."""
    base = tmp_path_factory.mktemp("receipt")
    project = base / "project"
    env = receipt_project.make_project(project, isolated_env(base / "home", base / "gitconfig"))
    done = receipt_project.run(project, env)
    assert done.returncode == 0, done.stdout + done.stderr
    return Made(project, env)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launched()


def test_the_receipt_and_timeline_agree_with_the_summary_and_status(made: Made) -> None:
    done = made.ralph("report")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    out = done.stdout.splitlines()
    start = out.index("Stories (the receipt; tokens are input + output, cache reads apart):")
    rows = [row.split("  ") for row in out[start + 2 : start + 6]]
    cells = [[cell.strip() for cell in row if cell.strip()] for row in rows]
    assert cells[0] == ["S-1", "Parse the config file", "✓ passes", "0m 0s", "4,100", "120,000", "$0.2100"]
    assert cells[1][:3] == ["S-2", "Retry a failed upload three times", "✗ failed, ✗ refused, ✓ passes"]
    assert cells[2][:3] == ["S-3", SCRIPT_TITLE, "⚠ usage limit, · still open, ✓ passes"]
    assert cells[3][:2] == ["Total", "7 (1 not counted)"]
    assert cells[3][-3:] == ["22,300", "600,000", "$1.0200"]
    assert "  Total:           $1.0200" in out  # the summary's own total
    assert "  Total:           22,300 tokens" in out
    assert any(line.startswith("Timeline (local time, UTC") for line in out)
    timeline = [line for line in out if re.match(r"  \d\d:\d\d:\d\d  ", line)]  # a day's line may come between
    assert [line.split()[1] for line in timeline] == ["#1", "#2", "#3", "#4", "#5", "waited", "#6", "#7"]
    assert [line.split()[2] for line in timeline[:5]] == ["S-1", "S-2", "S-2", "S-2", "S-3"]
    assert timeline[1].split()[3:5] == ["✗", "failed"] and timeline[2].split()[3:5] == ["✗", "refused"]
    assert timeline[5].endswith("(usage limit)")
    assert out[-1] == f"ℹ  Read from: {METRICS}"
    assert "\x1b" not in done.stdout

    body = json.loads(made.ralph("report", "--json").stdout)
    status = json.loads(made.ralph("status", "--json").stdout)
    assert [story["id"] for story in body["stories"]] == ["S-1", "S-2", "S-3"]
    assert [a["outcome"] for a in body["stories"][1]["attempts"]] == ["failed", "refused", "complete"]
    assert body["stories"][2]["title"] == SCRIPT_TITLE
    assert sum(story["cost_usd"] for story in body["stories"]) == pytest.approx(body["summary"]["cost_usd"]["total"])
    # one run: its spend and tokens are what `ralph status` says this run spent
    [run] = body["runs"]
    assert run["cost_usd"] == pytest.approx(status["costUsd"])
    assert run["tokens"]["total"] == status["tokensUsed"] == body["summary"]["tokens"]["total"]
    assert (run["iterations"], run["calls_not_counted"]) == (status["iterationsCounted"], status["callsNotCounted"])
    kinds = [(step["kind"], step.get("iteration")) for step in body["timeline"]]
    assert kinds == [*(("iteration", n) for n in range(1, 6)), ("wait", None), ("iteration", 6), ("iteration", 7)]
    wait = body["timeline"][5]
    assert wait["wait"] == "usage limit" and 0 <= wait["seconds"] <= 3
    assert all(step["start"].endswith("Z") and step["end"].endswith("Z") for step in body["timeline"])  # UTC


def _drawn(page: Any, chart: str) -> int:
    """How many drawn marks (bars, lines, markers) of `chart` have a non-empty box."""
    count: int = page.evaluate(
        """(id) => [...document.querySelectorAll(`#${id} .cartesianlayer .trace path`)]
                .filter((path) => { const box = path.getBBox(); return box.width > 0 || box.height > 0; }).length""",
        chart,
    )
    return count


def test_the_html_page_works_offline_in_a_real_browser(made: Made, browser: Any) -> None:
    pytest.importorskip("plotly")
    page_file = made.project / "report.html"
    done = made.ralph("report", "--html", "report.html")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ℹ  Wrote report.html (") and done.stdout.rstrip().endswith(f"from {METRICS}")
    html = page_file.read_text(encoding="utf-8")
    assert "<script>alert(1)" not in html  # escaped wherever it is shown
    assert 'src="http' not in html and "<link" not in html and "cdn" not in html.lower().split("</script>")[-1]

    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
    try:
        watched = Watched(context)
        page, errors, dialogs, requests = watched.page, watched.errors, watched.dialogs, watched.requests
        page.goto(page_file.as_uri())
        page.wait_for_selector("#chart-timeline .main-svg")

        assert errors == [] and dialogs == []
        assert requests == [page_file.as_uri()]  # the page alone: plotly.js is inside it
        for chart in ("chart-iterations", "chart-spend", "chart-timeline"):
            assert page.locator(f"#{chart} .main-svg").count() >= 1
            box = page.locator(f"#{chart} .main-svg").first.bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 150
        assert _drawn(page, "chart-iterations") >= 7  # a bar per call, and the token line
        assert _drawn(page, "chart-timeline") >= 8  # a bar per attempt, and the wait
        rows = page.locator("#chart-timeline .ytick text")
        tops = {rows.nth(n).text_content(): rows.nth(n).bounding_box()["y"] for n in range(rows.count())}  # type: ignore[index]
        assert sorted(tops, key=tops.__getitem__) == ["S-1", "S-2", "S-3", "waits"]  # a row per story, top down
        assert _drawn(page, "chart-spend") >= 2  # the run's spend and the budget's line
        assert "budget $5.00 a run" in page.locator("#chart-spend .legendtext").all_text_contents()

        rows = page.locator("#stories tbody tr")  # the receipt
        assert rows.count() == 3
        first_cells = [rows.nth(n).locator("td").first.text_content() for n in range(3)]
        assert first_cells == ["S-1", "S-2", "S-3"]
        assert rows.nth(2).locator("td.title").text_content() == SCRIPT_TITLE  # shown as text, never run
        assert rows.nth(1).locator("td.title").text_content() == "Retry a failed upload three times"
        total = page.locator("#stories tfoot td").all_text_contents()
        assert total[0] == "Total" and total[2] == "7 (1 not counted)" and total[-1] == "$1.0200"
        assert page.locator("#iterations tr.wait").count() == 1
        assert "$1.0200" in (page.locator("#summary").text_content() or "")

        page.set_viewport_size({"width": 390, "height": 844})  # a phone: the tables scroll, not the page
        page.wait_for_function(  # plotly redraws a chart for the new width (its resize handler is debounced)
            "document.querySelector('#chart-timeline .main-svg').getBoundingClientRect().width <= 390"
        )
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        table = page.locator("#stories").bounding_box()
        assert table is not None and table["width"] > 390  # wider than a phone: its own box scrolls
        assert errors == []
    finally:
        context.close()

    stdout = made.ralph("report", "--html", "-")
    assert stdout.returncode == 0 and stdout.stderr == ""
    assert stdout.stdout.startswith("<!DOCTYPE html>") and stdout.stdout.rstrip().endswith("</html>")

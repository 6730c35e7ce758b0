"""The page of `ralph report --html`, as text: self-contained, and whatever an agent wrote is shown, never run.
(tests/integration/test_report_receipt.py opens a real one in a real browser.)"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from ralphloop.report.receipt import build
from ralphloop.report.sources import Gathered

pytest.importorskip("plotly")

from ralphloop.report.html_page import page  # after the skip: plotly is the optional extra

HOSTILE_ID = 'S-1"><img src=x onerror=alert(2)>'
HOSTILE_TITLE = "</script><script>alert(1)</script>\x1b]0;title\x07 \x1b[31mred"


def gathered(count: int = 2) -> Gathered:
    lines = [
        {
            "iteration": n,
            "timestamp": f"2026-01-16T12:0{n}:00Z",
            "duration_seconds": 30.0,
            "wall_seconds": 31.0,
            "success": n == count,
            "usage": {"input_tokens": 100, "output_tokens": 20, "cache_read_tokens": 900},
            "cost_usd": 0.5,
            "model": "<b>model</b>",
            "task_id": HOSTILE_ID,
            "task_title": HOSTILE_TITLE,
            "outcome": "complete" if n == count else "refused",
            "counted": True,
            "run_id": "1@x",
        }
        for n in range(1, count + 1)
    ]
    events = [{"time": "2026-01-16T12:01:05Z", "wait": {"kind": "<i>usage</i> limit", "until": "2026-01-16T12:01:20Z"}}]
    return Gathered("feat<1>", "/p/m.jsonl", ".ralph/feat/m.jsonl", build(lines, events), [], [], "passes", "Stories")


def test_the_page_is_one_file_with_every_agent_text_escaped() -> None:
    text = page(gathered(), budget=1.0, generated=datetime(2026, 1, 16, 13, tzinfo=UTC), version="9.9", notes=[])

    assert text.startswith("<!DOCTYPE html>") and text.endswith("</html>\n")
    scripts = re.findall(r"<script[^>]*>", text)
    assert scripts == ["<script>"] * len(scripts) and len(scripts) == 4  # plotly.js inline, then a chart each
    assert "src=" not in "".join(scripts) and "<link" not in text and "@import" not in text
    assert "<script>alert(1)" not in text and "<img src=x" not in text and "<b>model</b>" not in text
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; red" in text  # the title, cleaned, as text
    assert "S-1&quot;&gt;&lt;img src=x onerror=alert(2)&gt;" in text
    assert "\x1b" not in text and "\x07" not in text
    assert "<h1>ralph report: feat&lt;1&gt;</h1>" in text
    assert "budget $1.00 a run" in text
    assert 'id="chart-iterations"' in text and 'id="chart-spend"' in text and 'id="chart-timeline"' in text


def test_charts_without_what_they_draw_say_so() -> None:
    got = gathered()
    bare = [{"iteration": 1, "duration_seconds": 3.0, "success": False, "outcome": "failed"}]
    got = Gathered(got.feature, got.metrics_file, got.shown, build(bare), [], [], "done", "Tasks")

    text = page(got, budget=None, generated=datetime(2026, 1, 16, 13, tzinfo=UTC), version="9.9", notes=["a note"])

    assert "No agent reported a cost." in text and "No iteration has a time." in text
    assert 'id="chart-spend"' not in text and 'id="chart-timeline"' not in text
    assert "no budget set" in text and '<p class="note">a note</p>' in text
    assert "<th>Task</th>" in text

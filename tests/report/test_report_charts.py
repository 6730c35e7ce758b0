"""The page's per-iteration chart: its bars sit at the iterations' numbers, or, when those repeat (a parallel
run's loops each count from 1), at each agent call's place in time, so that no bar hides another."""

from __future__ import annotations

import pytest

from ralphloop.report.receipt import build
from tests.report.test_report_receipt import line

pytest.importorskip("plotly")
from ralphloop.report import charts  # plotly: the optional extra, skipped without it


def test_one_loops_iterations_are_the_x_axis() -> None:
    lines = [line(n, "S-1", "complete", at=f"2026-01-16T12:0{n}:00Z") for n in (1, 2, 3)]
    figure = charts.per_iteration(build(lines), "passes")
    assert list(figure.data[0].x) == [1, 2, 3]
    assert figure.layout.xaxis.title.text == "iteration"


def test_loops_that_number_their_own_are_placed_in_time_order() -> None:
    lines = [
        line(1, "S-1", "complete", at="2026-01-16T12:01:00Z", run="a"),
        line(1, "S-2", "complete", at="2026-01-16T12:01:05Z", run="b"),
        line(0, "S-2", "merge-resolve", at="2026-01-16T12:01:09Z", run="c", counted=False),
    ]
    figure = charts.per_iteration(build(lines), "passes")
    assert list(figure.data[0].x) == [1, 2, 3]
    assert figure.layout.xaxis.title.text == "agent call, in time order"

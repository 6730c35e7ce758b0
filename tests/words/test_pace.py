"""words/pace.py: the header's numbers (ETA, spend per hour, the iteration's clock, the last output), worded from a
report."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from ralphloop.words.pace import (
    calls_full,
    cost_words,
    countdown,
    elapsed_words,
    eta_seconds,
    eta_words,
    iteration_clock,
    last_output_words,
    local_when,
    rough,
    token_budget_words,
)

NOW = datetime(2026, 11, 21, 13, 25, 0, tzinfo=UTC)


def local(moment: datetime) -> str:
    return f"{moment.astimezone():%H:%M}"


def report(**fields: Any) -> dict[str, Any]:
    """A live run that started 40 minutes before NOW, 2 stories done of 5 since, 3 left."""
    values: dict[str, Any] = {
        "alive": True,
        "startedAt": "2026-11-21T12:45:00Z",
        "storiesDoneThisRun": 2,
        "storiesLeft": 3,
        "inIteration": True,
        "iterationStartedAt": "2026-11-21T13:21:48Z",
        "iterationTimeoutS": 1800,
        "lastOutputAt": "2026-11-21T13:24:20Z",
    }
    return {**values, **fields}


@pytest.mark.parametrize(
    ("elapsed", "done", "left", "expected"),
    [(2400, 2, 3, 3600), (600, 1, 1, 600), (600, 0, 3, None), (0, 0, 0, 0.0), (900, 3, 0, 0.0)],
)
def test_eta_is_the_pace_so_far_times_what_is_left(elapsed: float, done: int, left: int, expected: float) -> None:
    assert eta_seconds(elapsed, done, left) == expected


def test_eta_words_say_when_in_local_time_and_how_long() -> None:
    assert eta_words(report(), NOW) == f"ETA ~{local(NOW + timedelta(hours=1))} (≈ 1h)"
    assert eta_words(report(storiesDoneThisRun=0), NOW) == "ETA unknown"  # until one story is done
    assert eta_words(report(storiesLeft=0), NOW) is None  # nothing left
    assert eta_words(report(alive=False), NOW) is None  # an ended run has no ETA
    assert eta_words(report(storiesDoneThisRun=None), NOW) is None  # an older status.json: no start count
    assert eta_words(report(storiesDoneThisRun=1, storiesLeft=10**9), NOW) == "ETA unknown"  # past datetime's end
    narrowed = report(scope="story S-7")  # -s S-7: what is left is S-7's, whatever the feature's count says
    assert eta_words(narrowed, NOW) == f"ETA for story S-7 ~{local(NOW + timedelta(hours=1))} (≈ 1h)"


def test_cost_of_budget_and_per_hour() -> None:
    assert cost_words(report(costUsd=1.2, maxCostUsd=5), NOW) == "$1.20 of $5.00 · $1.80/h"
    assert cost_words(report(costUsd=1.2), NOW) == "$1.20 · $1.80/h"
    # under a minute of run, a rate would say more about one call than the pace
    assert cost_words(report(costUsd=0.3, startedAt="2026-11-21T13:24:30Z"), NOW) == "$0.30"
    assert cost_words(report(costUsd=None, maxCostUsd=5), NOW) == "cost not reported (budget $5.00)"
    assert cost_words(report(costUsd=None), NOW) is None
    unpriced = report(costUsd=1.2, tokens={"callsWithoutCost": 2})
    assert cost_words(unpriced, NOW) == "$1.20 · $1.80/h + the cost of 2 calls not reported"
    ended = report(alive=False, costUsd=2.0, lastUpdated="2026-11-21T13:45:00Z")  # an hour, start to end
    assert cost_words(ended, None) == "$2.00 · $2.00/h"
    # under a cent it is not $0.00: the same words as the run's result line (numbers.money)
    cheap = report(costUsd=0.004, startedAt="2026-11-21T13:24:30Z")
    assert cost_words(cheap, NOW) == "$0.0040"


def test_hostile_numbers_read_as_none() -> None:
    assert cost_words(report(costUsd=1.0, maxCostUsd=float("nan")), NOW) == "$1.00 · $1.50/h"
    assert iteration_clock(report(iterationTimeoutS=float("inf")), NOW) == "03:12"
    assert token_budget_words({"maxTokens": True}) is None


def test_elapsed_and_its_budget() -> None:
    started = datetime(2026, 11, 21, 12, 45, tzinfo=UTC)
    assert elapsed_words(report(), NOW) == f"40m since {local(started)}"
    assert elapsed_words(report(maxRuntimeS=7200), NOW) == f"40m of 2h budget since {local(started)}"
    assert elapsed_words(report(startedAt=None), NOW) is None


def test_the_iterations_clock_and_the_last_output() -> None:
    assert iteration_clock(report(), NOW) == "03:12 of 30:00"
    assert last_output_words(report(), NOW) == "last output 40s ago"
    assert last_output_words(report(lastOutputAt=None), NOW) == "no output yet"
    between = report(inIteration=False)
    assert iteration_clock(between, NOW) is None and last_output_words(between, NOW) is None


def test_tokens_against_their_budget() -> None:
    assert token_budget_words({"tokensUsed": 4500, "maxTokens": 100_000}) == "4,500 of 100,000 budget"
    assert token_budget_words({"tokensUsed": 4500}) is None


def test_a_slot_matters_only_when_all_are_used() -> None:
    assert not calls_full({"apiCallsUsed": 94, "apiCallsLimit": 100})
    assert calls_full({"apiCallsUsed": 100, "apiCallsLimit": 100})


@pytest.mark.parametrize(
    ("seconds", "text"), [(0, "0s"), (40.7, "40s"), (89, "1m"), (2400, "40m"), (4440, "1h14m"), (7200, "2h")]
)
def test_rough(seconds: float, text: str) -> None:
    assert rough(seconds) == text


@pytest.mark.parametrize(("seconds", "text"), [(0, "00:00"), (59.2, "01:00"), (330, "05:30"), (3600, "1:00:00")])
def test_countdown(seconds: float, text: str) -> None:
    assert countdown(seconds) == text


def test_local_when_gives_the_date_only_for_another_day() -> None:
    assert local_when(NOW, NOW) == f"{NOW.astimezone():%H:%M:%S}"
    earlier = NOW - timedelta(days=2)
    assert local_when(earlier, NOW) == f"{earlier.astimezone():%Y-%m-%d %H:%M}"

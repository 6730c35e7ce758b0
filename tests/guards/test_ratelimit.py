"""The rolling-window rate limit: never more than N starts in any 60 minutes, whatever the clock hour."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ralphloop.guards.ratelimit import KEEP_EXTRA, WINDOW_S, Slot, in_window, peek, take

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
HOUR = timedelta(seconds=WINDOW_S)
TICK = timedelta(microseconds=1)


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)


def run(requests: list[datetime], limit: int) -> list[datetime]:
    """Feed requests to `take` in order; the granted ones."""
    starts: list[datetime] = []
    granted: list[datetime] = []
    for now in requests:
        starts, slot = take(starts, now, limit)
        if slot.granted:
            granted.append(now)
    return granted


def most_in_any_hour(times: list[datetime]) -> int:
    """The largest number of `times` inside one half-open 60-minute span [t, t + 1h)."""
    ordered = sorted(times)
    return max((sum(1 for other in ordered if start <= other < start + HOUR) for start in ordered), default=0)


def test_window_is_rolling_not_a_clock_hour_reset():
    # N starts just before 10:00, then N more asked for just after: a clock-hour reset would grant them.
    limit = 5
    before = [T0 + minutes(59) + timedelta(seconds=i) for i in range(limit)]
    after = [T0 + minutes(61) + timedelta(seconds=i) for i in range(limit)]
    granted = run(before + after, limit)
    assert granted == before
    assert most_in_any_hour(granted) == limit


def test_across_the_hour_boundary_slots_free_one_by_one():
    limit = 3
    first = [T0 + minutes(50), T0 + minutes(55), T0 + minutes(58)]
    starts: list[datetime] = []
    for moment in first:
        starts, slot = take(starts, moment, limit)
        assert slot.granted
    # At 10:10 (past the clock hour) nothing has left the window yet.
    starts, slot = take(starts, T0 + minutes(70), limit)
    assert not slot.granted
    assert slot.next_free == first[0] + HOUR
    # One microsecond before the oldest leaves: still refused; at that instant: granted.
    starts, slot = take(starts, first[0] + HOUR - TICK, limit)
    assert not slot.granted
    starts, slot = take(starts, first[0] + HOUR, limit)
    assert slot.granted
    assert slot.used == limit
    assert starts == [first[1], first[2], first[0] + HOUR]
    # The next slot frees when the new oldest leaves.
    assert slot.next_free == first[1] + HOUR


def test_next_free_is_exactly_the_oldest_start_plus_an_hour():
    starts = [T0 + minutes(7), T0 + timedelta(minutes=3, microseconds=123456), T0 + minutes(20)]
    now = T0 + minutes(30)
    _, refused = take(starts, now, 3)
    assert refused == Slot(
        granted=False,
        used=3,
        limit=3,
        next_free=T0 + timedelta(minutes=63, microseconds=123456),
        resets_at=T0 + timedelta(minutes=63, microseconds=123456),
    )
    kept, granted = take(starts, now, 4)
    assert granted.granted
    assert granted.used == 4
    assert granted.next_free == granted.resets_at == T0 + timedelta(minutes=63, microseconds=123456)
    assert kept == sorted([*starts, now])


def test_limit_one():
    kept, slot = take([], T0, 1)
    assert slot == Slot(granted=True, used=1, limit=1, next_free=T0 + HOUR, resets_at=T0 + HOUR)
    assert kept == [T0]
    kept, slot = take(kept, T0 + minutes(59), 1)
    assert not slot.granted
    assert slot.used == 1
    assert slot.next_free == T0 + HOUR
    assert slot.wait_s(T0 + minutes(59)) == 60.0
    assert kept == [T0]
    kept, slot = take(kept, T0 + HOUR, 1)
    assert slot.granted
    assert kept == [T0 + HOUR]


def test_an_empty_window_has_no_reset_time():
    slot = peek([T0 - HOUR, T0 - 2 * HOUR], T0, 4)
    assert slot == Slot(granted=True, used=0, limit=4, next_free=None, resets_at=None)
    assert slot.remaining == 4
    assert slot.wait_s(T0) == 0.0


def test_in_window_drops_starts_an_hour_old_or_more_and_sorts():
    starts = [T0 - minutes(10), T0 - HOUR, T0 - HOUR + TICK, T0 - minutes(90), T0]
    assert in_window(starts, T0) == [T0 - HOUR + TICK, T0 - minutes(10), T0]


def test_future_starts_stay_in_the_window():
    # Another process's clock ahead of ours (or ours stepped back): its start counts until we pass it by an hour.
    ahead = T0 + minutes(30)
    assert in_window([ahead], T0) == [ahead]
    assert in_window([ahead], ahead + HOUR - TICK) == [ahead]
    assert in_window([ahead], ahead + HOUR) == []
    kept, slot = take([ahead], T0, 1)
    assert not slot.granted
    assert kept == [ahead]
    assert slot.next_free == ahead + HOUR
    kept, slot = take([ahead], T0, 2)
    assert slot.granted
    assert kept == [T0, ahead]
    assert slot.next_free == T0 + HOUR


def test_peek_takes_nothing():
    starts = [T0 - minutes(50), T0 - minutes(10)]
    before = list(starts)
    slot = peek(starts, T0, 3)
    assert slot == Slot(granted=True, used=2, limit=3, next_free=T0 + minutes(10), resets_at=T0 + minutes(10))
    assert starts == before
    assert peek(starts, T0, 2) == Slot(
        granted=False, used=2, limit=2, next_free=T0 + minutes(10), resets_at=T0 + minutes(10)
    )


def test_more_starts_than_the_limit_wait_until_enough_have_left():
    # The limit was lowered (or a loop of the same account allows more): 5 in the window, limit 2.
    starts = [T0 - minutes(m) for m in (50, 40, 30, 20, 10)]
    _, slot = take(starts, T0, 2)
    assert not slot.granted
    assert slot.used == 5
    # A start is allowed once only one start remains in the window: when the one of 20 minutes ago leaves.
    assert slot.next_free == T0 - minutes(20) + HOUR
    assert take(starts, slot.next_free, 2)[1].granted
    assert not take(starts, slot.next_free - TICK, 2)[1].granted


def test_kept_starts_are_bounded():
    limit = 2
    starts = [T0 - timedelta(seconds=s) for s in range(1, limit + KEEP_EXTRA + 50)]
    kept, slot = take(starts, T0, limit)
    assert not slot.granted
    assert len(kept) == limit + KEEP_EXTRA
    assert kept == sorted(starts)[-(limit + KEEP_EXTRA) :]
    # Trimming never changes the decision, nor when a slot frees, for this limit.
    again = take(kept, T0, limit)[1]
    assert (again.granted, again.next_free) == (slot.granted, slot.next_free)
    later = slot.next_free
    assert later is not None
    assert take(kept, later, limit)[1].granted
    assert take(starts, later, limit)[1].granted
    assert not take(kept, later - TICK, limit)[1].granted


def test_a_limit_below_one_is_refused():
    with pytest.raises(ValueError, match="at least 1"):
        take([], T0, 0)
    with pytest.raises(ValueError, match="at least 1"):
        peek([], T0, -1)


# Request times: non-decreasing offsets from T0 (a clock that moves forward), dense enough
# that the limit binds, spread enough to cross several hour boundaries.
request_offsets = st.lists(st.integers(min_value=0, max_value=4 * 3600 * 1000), min_size=1, max_size=60).map(sorted)


@given(offsets_ms=request_offsets, limit=st.integers(min_value=1, max_value=6))
def test_never_more_than_limit_starts_in_any_hour(offsets_ms, limit):
    requests = [T0 + timedelta(milliseconds=ms) for ms in offsets_ms]
    starts: list[datetime] = []
    granted: list[datetime] = []
    for now in requests:
        window_before = [moment for moment in granted if now - moment < HOUR]
        starts, slot = take(starts, now, limit)
        # Granted exactly when fewer than `limit` starts were granted in the hour before.
        assert slot.granted == (len(window_before) < limit)
        if slot.granted:
            granted.append(now)
        assert slot.used == len([moment for moment in granted if now - moment < HOUR])
        assert slot.used <= limit
        assert slot.next_free == slot.resets_at
        assert starts == sorted(moment for moment in granted if now - moment < HOUR)
        if slot.granted:
            assert slot.next_free == min(starts) + HOUR
        else:
            # Refused: the oldest start leaves exactly at next_free, and not a microsecond sooner.
            assert slot.next_free == starts[0] + HOUR
            assert slot.next_free > now
            assert not peek(starts, slot.next_free - TICK, limit).granted
            assert peek(starts, slot.next_free, limit).granted
    assert most_in_any_hour(granted) <= limit


@given(
    offsets_ms=st.lists(st.integers(min_value=0, max_value=3 * 3600 * 1000), min_size=1, max_size=40),
    limit=st.integers(min_value=1, max_value=6),
)
def test_with_clocks_out_of_step_the_window_never_holds_more_than_limit(offsets_ms, limit):
    # Loops whose clocks disagree ask in any order: starts "in the future" of a caller still count for it.
    starts: list[datetime] = []
    for now in (T0 + timedelta(milliseconds=ms) for ms in offsets_ms):
        before = in_window(starts, now)
        starts, slot = take(starts, now, limit)
        assert slot.granted == (len(before) < limit)
        assert in_window(starts, now) == sorted([*before, now] if slot.granted else before)
        assert len(in_window(starts, now)) <= limit

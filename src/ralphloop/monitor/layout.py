"""How the dashboard fits its screen: which view, and how many events and log lines (pure; unit tested)."""

from __future__ import annotations

COMPACT_BELOW_COLUMNS = 60  # narrower than this: the key lines only, no boxes
COMPACT_BELOW_ROWS = 18  # shorter than this (a stacked tmux pane on a small terminal): the same
PANEL_BORDERS = 4  # the events and log boxes' top and bottom lines


def compact(width: int, height: int) -> bool:
    return width < COMPACT_BELOW_COLUMNS or height < COMPACT_BELOW_ROWS


def share(room: int, events: int, log: int) -> tuple[int, int]:
    """Events and log lines to show in `room` rows, given how many of each there are. The log (what the agent
    is doing) gets two thirds when both want more than there is; neither drops below two lines while the other
    has room to give."""
    room = max(0, room)
    if events + log <= room:
        return events, log
    shown_events = min(events, max(2, room // 3), room)
    shown_log = min(log, room - shown_events)
    return min(events, room - shown_log), shown_log  # the events take what the log left unused


def room_below(header: int, height: int) -> int:
    """Rows left for the events' and log's lines under a header of `header` lines."""
    return height - header - PANEL_BORDERS

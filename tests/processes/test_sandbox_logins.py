"""A login the CLI refreshes, between the user's home and the box's (issue 35): refreshed outside, it reaches the box
before the next call (read_in); refreshed inside, it reaches the user's home after the call (write_back). Real files."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ralphloop.processes.sandbox import read_in, write_back


def _older(path: Path, seconds: float = 10.0) -> None:
    then = path.stat().st_mtime - seconds
    os.utime(path, (then, then))


def test_a_login_refreshed_outside_reaches_the_box_before_the_next_call_and_one_refreshed_inside_goes_back(
    tmp_path: Path,
) -> None:
    user, box = tmp_path / "user" / "auth.json", tmp_path / "box" / ".codex" / "auth.json"
    user.parent.mkdir()
    user.write_text('{"refresh_token": "rt-1"}')
    read_in(((str(box), str(user)),))  # the box's first copy
    assert box.read_text() == '{"refresh_token": "rt-1"}' and stat.S_IMODE(box.stat().st_mode) == 0o600

    _older(box)
    user.write_text('{"refresh_token": "rt-2"}')  # the user's own CLI refreshed it: rt-1 is spent
    read_in(((str(box), str(user)),))
    assert box.read_text() == '{"refresh_token": "rt-2"}'

    _older(user)
    box.write_text('{"refresh_token": "rt-3"}')  # the loop's CLI refreshed it in the box
    write_back(((str(box), str(user)),))
    read_in(((str(box), str(user)),))  # and nothing older comes back over it
    assert user.read_text() == box.read_text() == '{"refresh_token": "rt-3"}'

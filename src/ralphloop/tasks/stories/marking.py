"""A story marked done on disk: its spec's `status:` set to done, a `[DONE] Story` line in progress.txt."""

from __future__ import annotations

from ralphloop.core.errors import RalphError
from ralphloop.files.safe_read import TASK_CAP, read_file
from ralphloop.files.store import append_text, atomic_write_bytes
from ralphloop.tasks.frontmatter import parse_mapping, set_field, split_frontmatter
from ralphloop.tasks.stories.spec import StorySpec


def write_status(spec: StorySpec, status: str = "done") -> list[str]:
    """Rewrite the spec with `status: STATUS`, every other byte unchanged; the note says what changed."""
    try:
        text = (read_file(spec.path, spec.shown, cap=TASK_CAP) or b"").decode("utf-8")
        fm = split_frontmatter(text)
        fields = parse_mapping(fm, spec.shown)[0] if fm else {}
        old = fields["status"].value if "status" in fields else None
        if isinstance(old, str) and old.strip().lower() == status:
            return []
        atomic_write_bytes(spec.path, set_field(text, "status", status).encode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RalphError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else str(exc)
        return [f"{spec.shown}: could not set status: {status} ({reason})"]
    return [f"{spec.shown}: status: {old if isinstance(old, str) else '(none)'} → {status}"]


def append_line(path: str, line: str) -> None:
    """Append `line`, starting on a new line even when the file does not end with one (append_text's rule)."""
    append_text(path, line + "\n")

"""The example story spec that `ralph init --format stories` writes."""

from __future__ import annotations


def new_story_spec() -> str:
    """The example spec `ralph init --stories` writes: valid as it is, every field shown once."""
    return """---
status: pending
priority: high
estimation: 2
depends_on: []
frs: []
---

# Replace this example story with the first real one

As a user, I want ..., so that ...

## Acceptance criteria

- [ ] A specific, verifiable criterion
- [ ] Typecheck passes
- [ ] Unit tests pass

## Notes

Stories are worked in the order of their ids (1.2 before 1.10 before 2.1). A story waits for the ids in
its `depends_on`. ralph sets `status: done` itself when the story is finished.
"""

"""What the client, the workflow and the workers hand each other (issue 37, docs/scale.md): plain dataclasses, which
Temporal's default converter carries as JSON, and the names everyone agrees on. Nothing here imports temporalio:
the CLI knows a feature's workflow id without it."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

WORKFLOW = "RalphFeature"  # the workflow's registered name (temporal/workflow.py)
DEFAULT_QUEUE = "ralph"
DEFAULT_NAMESPACE = "default"
END = "end"  # the workflow's own request to a loop's worker: stop it as on Ctrl+C (the run's budget is spent)
MERGES = ".merge"  # a worker's second task queue, `QUEUE.merge`: merges and reads, never held behind its loops


@dataclass
class StoryRow:
    """A story as the workflow keeps it (core/file_task.FileTask, less its body)."""

    id: str
    title: str
    done: bool
    priority: int
    depends_on: list[str] = field(default_factory=list)


@dataclass
class FeatureSpec:
    """One feature's run, as the client starts it: everything a worker needs to clone, build and run its loops."""

    remote: str  # the repository's URL, as every worker clones it
    feature: str  # the feature's name (its folder in .ralph/)
    branch: str  # the feature branch on the remote: the merge queue's target
    argv: list[str]  # the user's `ralph run` words (the loops and the merges are built from them)
    sub: str  # the project's folder from the repository's top ("." for the whole repository)
    flags: dict[str, list[Any]]  # those words as settings: key → [value, the flag as typed]
    parallel: int
    max_attempts: int
    queue: str = DEFAULT_QUEUE
    max_cost_usd: float | None = None
    max_tokens: int | None = None
    max_runtime_s: float | None = None
    stop_when_held: bool = False  # --on-usage-limit exit: a window reached ends the run instead of waiting
    heartbeat_s: float = 10.0  # a loop's worker says it lives this often; 3 missed and the story moves
    started_by: str = ""  # who started it (user@host), for status


@dataclass
class Prepared:
    """The feature as the remote's feature branch has it."""

    stories: list[StoryRow]
    tip: str


@dataclass
class LoopTask:
    """One story's loop for a worker."""

    spec: FeatureSpec
    story: str
    attempt: int
    slot: int
    limits: list[str] = field(default_factory=list)  # what is left of the run's budget, as the loop's own flags
    resume: bool = False  # go on from the story's branch (its loop stopped, not failed), not the feature's tip
    token: str = ""  # the workflow's name for this loop: a later try of it (its worker died) goes on from its claim


@dataclass
class LoopResult:
    story: str
    code: int  # the loop's exit code
    passes: bool  # its story passes in its tree (checked, then taken off the branch for the merge)
    exit_reason: str | None = None
    message: str | None = None
    cost_usd: float = 0.0
    tokens: int = 0
    resets_at: str | None = None  # a usage window's reset (ISO), when the loop stopped at a cap
    pending: str = ""  # its progress entries, committed by the merge
    head: str | None = None
    worker: str = ""


@dataclass
class MergeTask:
    spec: FeatureSpec
    story: str
    attempt: int
    pending: str = ""


@dataclass
class MergeResult:
    story: str
    outcome: str  # merged · retry (started again on the new base) · failed
    why: str | None = None
    commit: str | None = None
    stories: list[StoryRow] = field(default_factory=list)  # as the feature branch has them after
    worker: str = ""


@dataclass
class Steer:
    """The user's pause, resume, stop, guidance or answer (the signal every steer command sends)."""

    action: str  # pause · resume · stop · say · answer
    source: str = "cli"
    at: str = ""
    text: str = ""
    story: str | None = None
    now: bool = False


def workflow_id(remote: str, feature: str) -> str:
    """The feature's workflow id: the same repository and feature give the same id on every machine, however its
    remote is spelled (git@host:o/r, ssh://git@host/o/r.git and https://user@host/o/r name one repository), so a
    second `ralph run` attaches to the running workflow instead of starting another."""
    digest = hashlib.sha256(repository_key(remote).encode()).hexdigest()[:12]
    return f"ralph-{digest}-{feature}"


def repository_key(remote: str) -> str:
    """`host/path` of a remote's URL, lower-cased, without its user, password, port, scheme or `.git`; a local
    path as it is."""
    text = remote.strip()
    found = re.match(r"^(?:[a-z+]+://)?(?:[^@/]*@)?([^/:]+)(?::\d+)?[:/](.+)$", text, re.IGNORECASE)
    if text.startswith(("/", "file://")) or found is None:
        return _GIT_SUFFIX.sub("", text.removeprefix("file://"))
    return f"{found[1].lower()}/{_GIT_SUFFIX.sub('', found[2]).lower()}"


_GIT_SUFFIX = re.compile(r"(\.git)?/*$")


def shareable(remote: str) -> str:
    """The remote's URL without a password or token (`https://user:TOKEN@host/...`): the workflow's history is
    read by everyone with access to the namespace, and each worker pushes with its own credentials."""
    return re.sub(r"^([a-z+]+://)[^@/]*:[^@/]*@", r"\1", remote.strip(), flags=re.IGNORECASE)

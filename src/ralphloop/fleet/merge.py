"""The merge queue's one step (docs/parallel.md, "One round"): a finished story rebased on the target branch's
tip in its own worktree, its quality gates run on the rebased tree, its pass mark and progress entries committed
by the coordinator (the task file's one writer), then the target moved by a compare-and-swap. A conflict or a
gate that fails only now: the attempt is saved (a ref and a patch) and the story starts again on the new base.
Each step is in fleet.jsonl before its effect; fleet/adopt.py finishes what a kill cut short."""

from __future__ import annotations

import os
import re

from ralphloop.files.store import atomic_write_bytes
from ralphloop.fleet import gitops
from ralphloop.fleet.context import Fleet
from ralphloop.fleet.gitops import GitStep
from ralphloop.fleet.resolve import resolve
from ralphloop.workspace import git

PENDING = "progress-pending.txt"  # in the loop's logs/: its progress entries, until they are committed


def collect(fleet: Fleet, story: str) -> None:
    """A child that ended with its story passing: its pass mark and progress entries taken off its branch and
    its tree (the coordinator commits them after the merge, so the task file never conflicts), the entries kept
    in its logs until then. Run again after a kill, it does nothing twice."""
    tree = fleet.worktree(story)
    tip = gitops.head_of(fleet.root, f"refs/heads/{fleet.target}")
    base = gitops.merge_base(tree, "HEAD", tip or "HEAD") or "HEAD"
    progress = os.path.join(tree, fleet.progress_rel)
    before = gitops.blob(tree, base, fleet.progress_rel) or b""
    try:
        with open(progress, "rb") as handle:
            now = handle.read(64 << 20)
    except OSError:
        now = before
    logs = os.path.join(fleet.loop_paths(story).state_dir, "logs")
    os.makedirs(logs, exist_ok=True)
    if now != before and now.startswith(before):  # run again after a kill: kept already, the file put back
        atomic_write_bytes(os.path.join(logs, PENDING), now[len(before) :])
    owned = [fleet.task_rel, fleet.progress_rel]
    gitops.restore(tree, owned)
    # what the loop left uncommitted is not its work, but it is kept under a ref all the same
    gitops.save_leftovers(fleet.root, tree, leftovers(fleet, story))
    stripped = gitops.strip_paths(tree, base, owned)
    gitops.reset_to(tree, stripped or "HEAD")


def leftovers(fleet: Fleet, story: str) -> str:
    """The ref that keeps what a story's loop left beyond its commits."""
    return f"{gitops.attempts_prefix(fleet.paths.name, story)}-leftovers"


def merge(fleet: Fleet, story: str) -> str:
    """Land `story`: "merged", "retry" (started again on the new base, or failed past its attempts) or "moved"
    (the target moved under the queue: try again at once)."""
    tree = fleet.worktree(story)
    old = gitops.tip_of(fleet.root, fleet.target)
    fleet.book.log("merging", story=story, onto=old)
    if story not in fleet.collected:
        collect(fleet, story)
        fleet.book.log("collected", story=story)
        fleet.collected.add(story)
    fleet.book.set(story, state="merging")
    fleet.book.write()
    gitops.abort_rebase(tree, leftovers(fleet, story))
    # a branch that holds the target's tip already (a conflict resolved before the last run stopped) is not rebased:
    # that would flatten the resolver's merge and meet the conflict again
    if not gitops.contains(tree, old, "HEAD") and not gitops.rebase(tree, old):
        why = f"conflicts with the work merged into {fleet.target} since it began"
        if fleet.spending is not None and fleet.spending.stopped is not None:
            return "cancelled"  # the run is over its budget: queued as it is, the next run resolves it
        if fleet.resolver is None:
            return retry(fleet, story, why)
        unresolved = resolve(fleet, story, old)
        if unresolved is not None:
            return retry(fleet, story, f"{why}, and {unresolved}")
    failing = fleet.gates(fleet.loop_paths(story), story)
    if fleet.cancel.is_set():  # Ctrl+C stopped the gates: the story stays queued, and the next run adopts it
        return "cancelled"
    if failing:
        return retry(fleet, story, f"quality gates fail after the rebase: {', '.join(failing)}")
    _mark(fleet, story, old)
    new = gitops.tip_of(tree, fleet.branch(story))
    fleet.book.log("landing", story=story, old=old, new=new)
    held = _land(fleet, story, old, new)
    if held is not None:
        return held
    fleet.moved()
    fleet.book.log("merged", story=story, commit=new)
    finish(fleet, story, new)
    return "merged"


def merge_one(fleet: Fleet, story: str) -> str:
    """merge(), with a git step that fails for this story (not the run's): the story retried, its work saved; or,
    when git cannot even do that, failed and its worktree kept. The other stories go on either way."""
    try:
        return merge(fleet, story)
    except GitStep as exc:
        fleet.book.log("git failed", story=story, why=str(exc))
        try:
            return retry(fleet, story, f"git failed in its merge ({exc})")
        except GitStep as again:
            why = f"git failed in its merge ({exc}), then in saving it ({again})"
            fleet.failed[story] = why
            fleet.book.set(story, state="failed", note=why, pid=None)
            fleet.say(f"✗ {fleet.label(story)}: {why}. Its worktree is kept: {fleet.worktree(story)}")
            return "failed"


def _land(fleet: Fleet, story: str, old: str, new: str) -> str | None:
    """The target moved to `new`, never under a worktree that has it checked out (asked now: a worktree may have
    been added, or switched, since the run began); None once done, else the merge's outcome."""
    holders = gitops.checked_out(fleet.root)
    holder = holders.get(f"refs/heads/{fleet.target}")
    if holder is not None and fleet.landing_tree is not None and gitops.same_folder(holder, fleet.landing_tree):
        if gitops.fast_forward_checked_out(holder, new):  # the user asked for it, and that worktree is clean
            return None
        _to_integration(fleet, old, holder, " with changes of its own")  # never touched then
    elif holder is not None and fleet.target == fleet.feature_branch:
        _to_integration(fleet, old, holder, "")
    holder = holders.get(f"refs/heads/{fleet.target}")  # the integration branch, when the work moved there
    if holder is not None:
        why = (
            f"{fleet.target} is checked out in {holder}: ralph never moves a branch checked out in a worktree "
            "(switch that worktree to another branch, then run again)"
        )
        fleet.failed[story] = why
        fleet.book.set(story, state="failed", note=why, pid=None)
        fleet.say(f"✗ {fleet.label(story)}: {why}. Its worktree is kept: {fleet.worktree(story)}")
        return "failed"
    if fleet.publish is not None and not fleet.publish(old, new):
        fleet.book.log("moved", story=story, where="remote")
        return "moved"
    if not gitops.compare_and_swap(fleet.root, fleet.target, new, old, f"ralph: merge {story}"):
        fleet.book.log("moved", story=story)
        fleet.moved()
        return "moved"
    return None


def _to_integration(fleet: Fleet, tip: str, holder: str, why: str) -> None:
    """The rest of the run lands on ralph-integration/FEATURE, made at the target's tip, and says how to bring it
    in: the feature branch is checked out in a worktree (one with changes of its own, or one made since the run
    began)."""
    integration = gitops.integration_branch(fleet.paths.name)
    gitops.make_branch(fleet.root, integration, tip)
    fleet.book.log("integration", branch=integration, at=tip)
    fleet.say(f"· {fleet.target} is checked out in {holder}{why}: the work lands on {integration} from now on")
    fleet.target, fleet.landing_tree, fleet.home = integration, None, holder
    fleet.moved()
    fleet.bring_in = fleet.bring_in_now()
    fleet.book.write(target=integration, bringIn=fleet.bring_in)


def finish(fleet: Fleet, story: str, commit: str | None) -> None:
    """A merged story's worktree and branch removed, its records kept in the feature's loops/."""
    fleet.keep_records(story)
    gitops.remove_worktree(fleet.root, fleet.worktree(story), fleet.branch(story))
    fleet.book.log("removed", story=story)
    fleet.book.set(story, state="merged", commit=commit[:12] if commit else None, pid=None, endedAt=fleet.book.now())


def retry(fleet: Fleet, story: str, why: str) -> str:
    """The story's work saved (a ref and a patch), its branch put on the target's tip, and the story counted one
    attempt more: started again by the planner, or failed once it has had its attempts."""
    tree = fleet.worktree(story)
    attempt = fleet.attempts.get(story, 1)
    head = gitops.head_of(tree, "HEAD")
    tip = gitops.tip_of(fleet.root, fleet.target)
    ref = gitops.save_attempt(fleet.root, fleet.paths.name, story, attempt, head) if head else None
    if head:
        base = git.run(tree, "merge-base", head, tip).stdout.decode().strip() or tip
        patch = git.run(tree, "diff", "--binary", base, head).stdout
        logs = os.path.join(fleet.loop_paths(story).state_dir, "logs")
        os.makedirs(logs, exist_ok=True)
        name = ref.rpartition("/")[2] if ref else f"merge-attempt-{attempt}"
        atomic_write_bytes(os.path.join(logs, f"{name}.patch"), patch)  # named as its ref: none overwritten
    fleet.book.log("retry", story=story, attempt=attempt, why=why, saved=ref)
    fleet.collected.discard(story)  # its next finish is collected afresh
    gitops.reset_to(tree, tip)
    if attempt >= fleet.max_attempts:
        fleet.failed[story] = f"{why} (attempt {attempt} of {fleet.max_attempts}; saved as {ref})"
        fleet.book.set(story, state="failed", note=fleet.failed[story], pid=None)
        fleet.say(f"✗ {fleet.label(story)}: {why}; no attempts left. Its work is saved as {ref}")
        return "retry"
    fleet.attempts[story] = attempt + 1
    fleet.book.set(story, state="retrying", note=why, pid=None)
    fleet.say(
        f"↻ {fleet.label(story)}: {why}. Saved as {ref}; started again on the new base "
        f"(attempt {attempt + 1} of {fleet.max_attempts})"
    )
    return "retry"


def _mark(fleet: Fleet, story: str, onto: str) -> None:
    """The story's pass mark and its loop's progress entries, committed on its rebased branch."""
    tree = fleet.worktree(story)
    pending = os.path.join(fleet.loop_paths(story).state_dir, "logs", PENDING)
    if fleet.passes_at(tree, "HEAD", story):  # marked already, by a run killed before it landed the story
        return
    path = os.path.join(tree, fleet.task_rel)
    with open(path, "rb") as handle:
        raw = handle.read(16 << 20)
    atomic_write_bytes(path, fleet.marked(raw, story))
    names = [fleet.task_rel]
    if os.path.isfile(pending):
        with open(pending, "rb") as handle:
            entries = _commits_renamed(tree, handle.read(), onto)
        with open(os.path.join(tree, fleet.progress_rel), "ab") as out:
            out.write(entries)
        names.append(fleet.progress_rel)
    gitops.commit_all(tree, names, f"{story}: passes (merged by ralph)")


_COMMIT_LINE = re.compile(rb"^Commit: ([0-9a-f]{7,40})$", re.MULTILINE)


def _commits_renamed(tree: str, entries: bytes, onto: str) -> bytes:
    """The entries' `Commit:` ids as the merged branch has them: taking ralph's own files off the loop's commits
    and the rebase gave them new ids (each keeps its message and author date, which find it again). A commit that
    held nothing but ralph's own files is gone: said so."""
    listed = git.run(tree, "log", "--format=%H%x00%B%x00%aI%x01", f"{onto}..HEAD").stdout
    now = {}
    for record in listed.split(b"\x01"):
        sha, _, key = record.strip().partition(b"\0")
        if sha:
            now[key] = sha[:12]

    def renamed(match: re.Match[bytes]) -> bytes:
        old = match.group(1).decode()
        key = git.run(tree, "log", "-1", "--format=%B%x00%aI", old).stdout.strip()
        new = now.get(key)
        if new is None:
            return b"Commit: none on the branch (it held only the pass mark and progress, which ralph commits)"
        return b"Commit: " + new

    return _COMMIT_LINE.sub(renamed, entries)

"""`merge.resolve: agent` (docs/parallel.md): at a conflict, before the story is sent back, one call of the run's
agent resolves it in the story's worktree. The target's tip is merged into the story's branch (one state the agent
can finish, rather than a rebase stopped half-way); the agent is told which files conflict and what each side
meant. Its result counts only if nothing is left unmerged and no conflict marker remains; it then goes through
the same quality gates as any merge. Anything else: the merge is aborted and the story retried as without it.
What the call spent is journalled and counted in the run's budget, whatever came of it."""

from __future__ import annotations

import math
import os
import re

from msgspec import structs

from ralphloop.core.errors import RalphError
from ralphloop.core.protocols import AgentRequest, AgentResult, iso
from ralphloop.core.runner import Launch
from ralphloop.fleet import gitops
from ralphloop.fleet.context import Fleet
from ralphloop.processes.local import LocalRunner
from ralphloop.records.metrics import METRICS_NAME, RESOLVE_OUTCOME, append_metrics, metrics_line
from ralphloop.workspace import git

PROMPT = """\
# Resolve a merge conflict

You work in a git worktree of story {story} ("{title}"), on branch {branch}. Its work is committed there. Since it
began, other stories were merged into {target}, and merging {target} into this branch conflicts in these files:

{files}

Resolve every conflict so that both sides' work is kept: the story's change and what was merged meanwhile. Remove
every conflict marker (<<<<<<<, =======, >>>>>>>). Then `git add` the files and finish the merge with
`git commit --no-edit`. Change nothing else, and do not mark any story as passing: ralph does that after the merge.
"""

_MARKER = re.compile(rb"^(<<<<<<<|>>>>>>>)( |$)", re.MULTILINE)


def resolve(fleet: Fleet, story: str, tip: str) -> str | None:
    """Try the agent on the conflict; None when the branch now holds the target's tip with nothing left unmerged,
    else why not (the merge is aborted then: the worktree is as it was)."""
    agent, limits = fleet.resolver, fleet.limits
    if agent is None or limits is None:
        return "no agent is set to resolve it"
    tree = fleet.worktree(story)
    merged = git.run(tree, "merge", "--no-ff", "--no-edit", "-m", f"{story}: merge {fleet.target}", tip)
    if merged.returncode == 0:
        return None  # what the rebase could not replay, a merge could
    files = _unmerged(tree)
    if not files:
        _abort(tree)
        return f"git merge failed: {git.reason(merged)}"
    logs = os.path.join(fleet.loop_paths(story).state_dir, "logs")
    os.makedirs(logs, exist_ok=True)
    attempt = fleet.attempts.get(story, 1)
    prompt_file = os.path.join(logs, f"merge-resolve-{attempt}.prompt.md")
    title = str(fleet.book.loop(story).get("title") or "")
    prompt = PROMPT.format(
        story=story,
        title=title,
        branch=fleet.branch(story),
        target=fleet.target,
        files="\n".join(f"- {f}" for f in files),
    )
    with open(prompt_file, "w", encoding="utf-8") as handle:
        handle.write(prompt)
    runner = fleet.runner or LocalRunner()
    request = AgentRequest(
        prompt=prompt,
        iteration=0,
        project_root=tree,
        feature_dir=fleet.loop_paths(story).dir,
        prompt_file=prompt_file,
        task_id=story,
        started_at=fleet.clock.now(),
        home=runner.home,  # in the run's sandbox, as the loops' agents are
    )
    fleet.book.log("resolving", story=story, files=files)
    fleet.say(f"⚒ {fleet.label(story)}: the agent resolves the conflict in {', '.join(files)}")
    parser = agent.parser(request)
    launch = Launch(agent.command(request), tree, os.path.join(logs, f"merge-resolve-{attempt}.log"), limits)
    outcome = runner.run(launch, fleet.cancel, on_stdout=parser.feed)
    left = _unmerged(tree) or [name for name in files if _has_markers(os.path.join(tree, name))]
    _record(fleet, story, parser.finish(outcome), resolved=outcome.exit_code == 0 and not left)
    if outcome.exit_code != 0 or left:
        _abort(tree)
        why = f"conflict markers left in {', '.join(left)}" if left else f"its agent ended {outcome.exit_code}"
        return f"the agent did not resolve the conflict ({why})"
    if gitops.merge_in_progress(tree):  # resolved but not committed: the merge is finished for it
        git.run(tree, "add", "--", *files)
        done = git.run(tree, "commit", "--no-edit", "-q")
        if done.returncode != 0:
            _abort(tree)
            return f"the resolved merge could not be committed: {git.reason(done)}"
    if not gitops.contains(tree, tip, "HEAD"):
        return "the agent's result does not hold the merged work"
    return None


def _record(fleet: Fleet, story: str, result: AgentResult, *, resolved: bool) -> None:
    """What the call spent, whatever came of it: a line in the loop's metrics (`merge-resolve`, not counted as
    an iteration; kept with its records, so `ralph report` adds it up with the rest), the journal, and the
    run's budget (tokens as --max-tokens counts them: input + output). Not reported, or no number: nothing."""
    given = result.cost_usd
    cost = given if given is not None and math.isfinite(given) and given > 0 else 0.0
    tokens = result.usage.total if result.usage is not None else 0
    agent = fleet.resolver.name if fleet.resolver is not None else ""
    line = metrics_line(
        iteration=0,
        timestamp=iso(fleet.clock.now()),
        task_id=story,
        outcome=RESOLVE_OUTCOME,
        agent=agent,
        result=structs.replace(result, cost_usd=cost if given is not None else None),
        files_changed=0,
        counted=False,
        success=resolved,
        task_title=str(fleet.book.loop(story).get("title") or "") or None,
        wall_s=result.duration_s,
        run_id=str(fleet.book.fleet.get("fleetId") or "") or None,
    )
    try:
        append_metrics(fleet.loop_paths(story).file(METRICS_NAME), line)
    except (OSError, RalphError) as exc:  # the worktree's file (its agent's to spoil): the journal still has it
        fleet.say(f"⚠ {fleet.label(story)}: the resolver's call is not in the loop's records ({exc})")
    fleet.book.log("resolved", story=story, resolved=resolved, costUsd=round(cost, 6), tokens=tokens)
    if given is not None:  # fleet.json's total, which the views add to the loops' (None: no call reported one)
        with fleet.book.lock:
            fleet.book.write(resolverCostUsd=float(fleet.book.fleet.get("resolverCostUsd") or 0.0) + cost)
    if fleet.spending is not None:
        fleet.spending.charge(fleet, story, cost, tokens)


def _unmerged(tree: str) -> list[str]:
    listed = git.run(tree, "diff", "--name-only", "--diff-filter=U").stdout.decode("utf-8", "replace")
    return [line for line in listed.splitlines() if line]


def _has_markers(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return _MARKER.search(handle.read(16 << 20)) is not None
    except OSError:
        return False


def _abort(tree: str) -> None:
    if gitops.merge_in_progress(tree):
        git.run(tree, "merge", "--abort")

"""A story's branch on the remote, as one try of its loop holds it (issue 37): claimed when the try starts, pushed as
the loop commits, always with a lease on what this try pushed last, so that two tries of one story (Temporal gave up
on a late one and started another) never push over each other: the one that finds the branch moved stops. Work a
new attempt replaces is saved first, under a ref of the story's attempts."""

from __future__ import annotations

from ralphloop.fleet import gitops
from ralphloop.fleet.gitops import GitStep
from ralphloop.state.fleet import loop_folder_name
from ralphloop.temporal.clones import Clone
from ralphloop.workspace import git

CLAIMS = "refs/ralph/claims"  # refs/ralph/claims/FEATURE/STORY/TOKEN: this loop began on this branch


class Taken(GitStep):
    """Another try of the story pushed its branch: this one must stop, and push nothing more."""


class StoryBranch:
    def __init__(self, clone: Clone, feature: str, story: str, branch: str) -> None:
        self.clone, self.feature, self.story, self.branch = clone, feature, story, branch
        self.ref = f"refs/heads/{branch}"
        self.pushed: str | None = None  # what this try pushed last (or found there when it went on from it)

    def claim(self, tip: str, resume: bool, token: str) -> tuple[str, bool]:
        """The commit the loop starts from, and whether it goes on from the branch rather than from the feature
        branch's `tip`: it does when the workflow says so (`resume`: the story stopped, not failed), or when an
        earlier try of this very loop (`token`, the workflow's name for it) claimed the branch before its worker
        died. A branch a new attempt replaces is saved first when it holds work the feature branch lacks."""
        there = self.clone.fetch(self.branch)
        mark = f"{CLAIMS}/{loop_folder_name(self.feature)}/{loop_folder_name(self.story)}/{token}"
        if there is not None and (resume or self.clone.has(mark)):
            self.pushed = there
            return there, True
        if there is not None and not gitops.contains(self.clone.root, there, tip):
            self.clone.fetch_refs(gitops.attempts_prefix(self.feature, self.story) + "*")
            saved = gitops.keep(self.clone.root, f"{gitops.attempts_prefix(self.feature, self.story)}-replaced", there)
            self.clone.push_refs(saved)
        if there is not None:
            git.run(self.clone.root, "branch", "-D", self.branch)
        if not self.clone.push(tip, self.ref, lease=there or ""):
            raise Taken(f"{self.story}: its branch moved on {self.clone.remote} as this try began")
        self.clone.push(tip, mark, force=True)  # a later try of this loop goes on from the branch
        self.pushed = tip
        return tip, False

    def forget(self) -> None:
        """The story merged: its branch and its loops' claims gone from the remote."""
        self.clone.push("", self.ref)
        prefix = f"{CLAIMS}/{loop_folder_name(self.feature)}/{loop_folder_name(self.story)}/"
        for ref in self.clone.remote_refs(prefix):
            self.clone.push("", ref)

    def push(self, head: str) -> None:
        """`head` pushed over what this try pushed last; Taken when another try pushed since."""
        if head == self.pushed:
            return
        if not self.clone.push(head, self.ref, lease=self.pushed or ""):
            raise Taken(f"{self.story}: another try of it pushed its branch; this one stops")
        self.pushed = head

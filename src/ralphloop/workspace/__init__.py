"""The git workspace: captures of the files as git objects, what changed, the undo, commits, locks, ignores."""

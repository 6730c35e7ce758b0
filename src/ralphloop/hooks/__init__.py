"""User commands around the loop: lifecycle hooks, quality gates, per-iteration hooks.

- spec.py: the values (CommandSpec, LifecycleHooks, HookSpec); parse.py: the config sections;
- variables.py and quoting.py: the values a hook sees, and how a command refers to them safely;
- run.py: one command in its own process group, with a timeout and a log; background.py: threads;
- gates.py: quality gates and their verdict; runner.py: the loop's side, which to run when.

Nothing here imports the engine or the CLI; this file imports nothing, so a caller pays only for
the modules it uses.
"""

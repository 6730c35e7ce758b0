"""The commented .ralph/config.yaml `ralph init` writes: every setting a project is likely to change."""

from __future__ import annotations

DEFAULT_PROJECT_CONFIG = """\
# ralph project settings. Flags and RALPH_* environment variables override these;
# ~/.ralph/config.yaml (or $RALPH_HOME/config.yaml) holds per-user defaults.

# A setting left commented out takes its default, which may be the task format's own (docs/tasks.md: story
# specs do 45 iterations of 30 minutes, a TODO.md plan folder runs until complete, a fix plan gets 5 attempts).
defaults:
  # max_iterations: 20      # per `ralph run`; 0 means until complete
  # timeout_minutes: 15     # per iteration; also "90s", "15m", "1h"
  rate_limit_per_hour: 100

# process:
#   idle_timeout_minutes: 10  # stop an agent that prints nothing this long (0: never, not even a backend's own)

# Which agent runs each iteration: claude, codex, gemini, copilot, ... (ralph run --help lists them), command or
# scripted; several (agents: [claude, codex]) fail over from one to the next at a usage limit.
# agent: claude
# A command agent gets the prompt on stdin (see the README):
# agent:
#   command: "python3 my_agent.py"

context:
  progress_bytes: 16384     # newest progress.txt entries put into each prompt

# A completion claim ends the loop only once the task file agrees (verify);
# trust takes a promise or EXIT_SIGNAL: true at its word, as the original scripts did.
# The promise is <promise>COMPLETE</promise>; to have the agent print another, write instead:
# completion:
#   mode: verify
#   promise: "<promise>SHIPPED</promise>"
completion: verify
# Stop when the agent reports BLOCKED this many iterations in a row.
blocked_threshold: 3
# A failing task is tried this many times in all (its failed attempts are saved, then undone).
# max_retries: 3

circuit_breaker:
  no_progress_threshold: 3  # iterations in a row in which no task advanced (changed files alone are churn)
  same_error_threshold: 5   # iterations in a row ending with the same error
  failure_threshold: 5      # failed iterations in a row (crash, non-zero exit, timeout)
  # cooldown_minutes: 30    # unattended: try again this long after opening

usage_limit:
  policy: ask               # wait | exit | ask (asks on a terminal; waits otherwise and under --monitor)
  ask_timeout_seconds: 30   # ask: how long the question waits for an answer
  on_no_answer: exit        # ask: exit (code 2) or wait, when nobody answers
  margin_seconds: 60        # extra wait after the reset time the vendor gives
  # windows: {five_hour: 0.8, seven_day: 0.5}   # your caps on the usage windows the agents report (--max-window)

# Claude Code, the default agent (run as `claude -p --output-format stream-json --verbose`).
# claude:
#   command: claude                       # or a path to the executable
#   allowed_tools: "Write,Edit,Read,Bash(git *),Bash(pytest *)"
#   max_turns: 50
#   append_system_prompt: "Keep commits small."
#   resume: false                         # a fresh context each iteration is the point

# backoff:                  # retries of overloaded / unreachable APIs (not counted as iterations)
#   initial_seconds: 5      # doubling each time
#   max_seconds: 600
#   attempts: 10

# git:
#   require: true           # stop unless this is a git repository on a branch, with user.name/email set
#   auto_commit: false      # commit each iteration's changes (default: on for TODO.md plan folders)
# branch:
#   auto_create: true       # work on a branch: prd.json's branchName, else PREFIX + the feature name
#   prefix: "feature/"
# merge:                    # `ralph run --parallel`: the merge queue
#   resolve: retry          # at a conflict: retry the story on the new base; or `agent` resolves it first
#   fast_forward_checked_out: false   # true: move the feature branch in your worktree (clean only), not
#                                     # ralph-integration/FEATURE
# parallel:                 # where `ralph run --parallel` runs its loops (docs/scale.md)
#   engine: local           # or temporal: on the `ralph worker`s of the server below
# temporal:
#   address: 127.0.0.1:7233 # HOST:PORT (--temporal)
#   namespace: default
#   queue: ralph            # the task queue the workers take (ralph worker --queue)
# story_order: ["1.1", "1.2", "2.1"]   # story specs (specs/epic-N/): default every spec, sorted naturally

# budget:                   # for one `ralph run`
#   max_cost_usd: 10
#   max_tokens: 5000000
#   max_runtime: 8h

# notify:                   # during the run and at its end; a failed notification is only a warning
#   desktop: auto           # notify-send, osascript or tt notify, whichever is on PATH; true, false or auto
#   webhook: "https://example.com/hook"   # gets a JSON POST (or set $RALPH_NOTIFY_WEBHOOK)
#   on: [complete, halted, usage_limit, needs_input, circuit_open, steered]   # or all; also story_done, ...
#   urls: ["ntfy://ntfy.sh/my-ralph-topic"]   # tgram://, slack://, ... (apprise: pip install 'ralphloop[notify]')
"""

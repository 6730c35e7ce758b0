"""A stand-in for `claude -p --output-format stream-json --verbose` driven by the environment: for the end-to-end
budget and usage-limit tests, which put a `claude` wrapper running this file first on PATH.

It reads the prompt on stdin, writes claude-<iteration>.txt in the project (so every iteration changes a file), and
prints the stream-json events Claude Code 2.1 prints for one turn (shapes of tests/fixtures/claude/gleam_*):
system init, one assistant message, one result carrying the cost and usage. The environment says what to report:
  FAKE_CLAUDE_COST     total_cost_usd of the result (default 0.6)
  FAKE_CLAUDE_TOKENS   output_tokens of the result (default 400; input tokens are 100, so 500 in all)
  FAKE_CLAUDE_SLEEP    seconds of "work" before the result (default 0): a call that takes time, as real ones do
  FAKE_CLAUDE_REPLAY   a file of captured stream-json lines to print instead of all that, then exit with
                       FAKE_CLAUDE_EXIT (default 1): a real run, e.g. one that hit a usage limit
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid

sys.stdin.read()
if sys.argv[1:5] != ["-p", "--output-format", "stream-json", "--verbose"]:
    print(f"fake claude: unexpected arguments {sys.argv[1:]}", file=sys.stderr)
    sys.exit(64)

replay = os.environ.get("FAKE_CLAUDE_REPLAY")
if replay:
    with open(replay, encoding="utf-8") as handle:
        sys.stdout.write(handle.read())
    sys.exit(int(os.environ.get("FAKE_CLAUDE_EXIT", "1")))

iteration = os.environ["RALPH_ITERATION"]
time.sleep(float(os.environ.get("FAKE_CLAUDE_SLEEP", "0")))
with open(f"claude-{iteration}.txt", "w", encoding="utf-8") as handle:
    handle.write(f"work of iteration {iteration}\n")

session = str(uuid.uuid4())
model = "claude-opus-4-5-20251101"
cost = float(os.environ.get("FAKE_CLAUDE_COST", "0.6"))
output_tokens = int(os.environ.get("FAKE_CLAUDE_TOKENS", "400"))
text = f"Wrote claude-{iteration}.txt."
events = [
    {
        "type": "system",
        "subtype": "init",
        "cwd": os.getcwd(),
        "session_id": session,
        "tools": ["Bash", "Read", "Edit", "Write"],
        "mcp_servers": [],
        "model": model,
        "permissionMode": "acceptEdits",
        "claude_code_version": "2.1.7",
        "uuid": str(uuid.uuid4()),
    },
    {
        "type": "assistant",
        "message": {
            "model": model,
            "id": "msg_01Y1Lo6gYUXN71XaAq7sjUPm",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": output_tokens, "service_tier": "standard"},
        },
        "session_id": session,
        "uuid": str(uuid.uuid4()),
    },
    {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "duration_ms": 2360,
        "duration_api_ms": 2325,
        "num_turns": 1,
        "result": text,
        "session_id": session,
        "total_cost_usd": cost,
        "usage": {
            "input_tokens": 100,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": "standard",
        },
        "modelUsage": {
            model: {
                "inputTokens": 100,
                "outputTokens": output_tokens,
                "cacheReadInputTokens": 0,
                "cacheCreationInputTokens": 0,
                "webSearchRequests": 0,
                "costUSD": cost,
                "contextWindow": 200000,
                "maxOutputTokens": 64000,
            }
        },
        "permission_denials": [],
        "uuid": str(uuid.uuid4()),
    },
]
for event in events:
    print(json.dumps(event), flush=True)

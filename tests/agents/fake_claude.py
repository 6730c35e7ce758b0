"""A stand-in `claude` executable for the Claude backend: replays a real stream-json run with a chosen model and cost.

Usage: fake_claude.py CONFIG [claude arguments...]. CONFIG is a JSON file: {"model": NAME, "cost": USD or null,
"work": bool, "calls": FILE}. Each run appends {"args": [claude arguments]} to FILE; with "work" it finishes the
story in RALPH_TASK_ID like story_agent.py (writes work-ID.txt, marks it passing); then it prints
tests/fixtures/claude/gleam_basic_query.ndjson with NAME as the model (the `result` event gains the `modelUsage`
of gleam_result_success.json, keyed by NAME) and "cost" as total_cost_usd when given.
"""

from __future__ import annotations

import json
import os
import sys

from _story import finish_story  # tests/agents/_story.py (this folder is on sys.path)

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "claude")

config_path, args = sys.argv[1], sys.argv[2:]
with open(config_path, encoding="utf-8") as handle:
    config = json.load(handle)
sys.stdin.read()
with open(config["calls"], "a", encoding="utf-8") as handle:
    handle.write(json.dumps({"args": args}) + "\n")

if config.get("work"):
    finish_story(os.environ["RALPH_TASK_ID"], os.environ["RALPH_FEATURE_DIR"])

model = config["model"]
with open(os.path.join(FIXTURES, "gleam_result_success.json"), encoding="utf-8") as handle:
    model_usage = next(iter(json.load(handle)["modelUsage"].values()))
with open(os.path.join(FIXTURES, "gleam_basic_query.ndjson"), encoding="utf-8") as handle:
    lines = [line for line in handle.read().splitlines() if line.strip()]
for line in lines:
    event = json.loads(line)
    if event.get("type") == "system":
        event["model"] = model
    elif event.get("type") == "assistant":
        event["message"]["model"] = model
    elif event.get("type") == "result":
        event["modelUsage"] = {model: model_usage}
        if config.get("cost") is not None:
            event["total_cost_usd"] = config["cost"]
    print(json.dumps(event), flush=True)

"""The versions of ralph's on-disk JSON files, in one place (the files themselves: records/, state/)."""

from __future__ import annotations

STATUS_VERSION = 1  # status.json
STATE_VERSION = 1  # state.json
METRICS_VERSION = 1  # each ralph_metrics.jsonl line
BREAKER_VERSION = 1  # .circuit_breaker_state

#!/usr/bin/env bash
# Set up, then lint, type-check and run the whole test suite (two workers a core). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
# The suite waits on processes (agents, git, tmux, a browser) more than it computes: two workers a core.
exec .venv/bin/pytest -n "$(( $(nproc) * 2 ))" --durations=25 "$@"

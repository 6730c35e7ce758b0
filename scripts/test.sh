#!/usr/bin/env bash
# Set up, then lint, type-check and run the whole test suite (on every core). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
exec .venv/bin/pytest -n auto --durations=25 "$@"

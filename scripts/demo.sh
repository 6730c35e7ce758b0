#!/usr/bin/env bash
# Set up, then run a real ralph loop with the built-in scripted agent over a sample project in a temp folder.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
exec .venv/bin/python -m ralphloop.demo "$@"

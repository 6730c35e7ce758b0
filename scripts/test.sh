#!/usr/bin/env bash
# Set up, then lint, type-check and run the whole test suite (two workers a core). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
# The suite writes and fsyncs hundreds of thousands of small files (git repositories, ralph's atomic state): on
# a virtual disk that was half its time, on a tmpfs it costs nothing. /dev/shm when it is a writable tmpfs with
# room (4 GiB), unless TMPDIR is set.
shm_free_kb=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }') || shm_free_kb=0
if [ -z "${TMPDIR:-}" ] && [ -w /dev/shm ] && [ "${shm_free_kb:-0}" -ge $(( 4 * 1024 * 1024 )) ]; then
    export TMPDIR=/dev/shm
fi
# The test modules (pytest rewrites their asserts) and anything setup.sh did not compile are cached too, even
# where the environment says not to write bytecode: the caches are in this checkout's ignored __pycache__ folders.
unset PYTHONDONTWRITEBYTECODE
# The suite waits on processes (agents, git, tmux, a browser) more than it computes: two workers a core.
exec .venv/bin/pytest -n "$(( $(nproc) * 2 ))" --durations=25 "$@"

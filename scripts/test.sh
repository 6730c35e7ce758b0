#!/usr/bin/env bash
# Set up, then lint, type-check and run the whole test suite (two workers a core). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# mypy checks beside the suite (its seconds of one core overlap the workers' start); its verdict is waited for
# below and fails the run as before, its output shown after the tests'.
mypy_out=$(mktemp)
.venv/bin/mypy >"$mypy_out" 2>&1 &
mypy_pid=$!
# The suite writes and fsyncs hundreds of thousands of small files (git repositories, ralph's atomic state): on
# a virtual disk that was half its time, on a tmpfs it costs nothing. /dev/shm when it is a writable tmpfs with
# room (4 GiB) where programs may run (the tests' stand-in agents live there; hardened hosts mount it noexec),
# unless TMPDIR is set.
shm_ok() {
    [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ] || return 1
    [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || return 1
    local free_kb probe status
    free_kb=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }') || return 1
    [ "${free_kb:-0}" -ge $(( 4 * 1024 * 1024 )) ] 2>/dev/null || return 1
    probe=$(mktemp /dev/shm/ralphloop-exec-probe.XXXXXX) || return 1
    printf '#!/bin/sh\nexit 0\n' > "$probe" && chmod +x "$probe" && "$probe" 2>/dev/null
    status=$?
    rm -f "$probe"
    return "$status"
}
if shm_ok; then
    export TMPDIR=/dev/shm
fi
# The test modules (pytest rewrites their asserts) and anything setup.sh did not compile are cached too, even
# where the environment says not to write bytecode: the caches are in this checkout's ignored __pycache__ folders.
unset PYTHONDONTWRITEBYTECODE
# pytest rewrites each test module's asserts once and caches the result, but on a fresh checkout every worker
# below would rewrite all of them at once (8 s of a core each, 6 workers on 2 cores: 25 s before the first
# test). Writing the cache first, the test files shared among one collector a core, takes a few seconds.
mapfile -t test_files < <(find tests -name 'test_*.py' | sort)
collectors=()
for (( part = 0; part < $(nproc); part++ )); do
    share=()
    for (( i = part; i < ${#test_files[@]}; i += $(nproc) )); do
        share+=("${test_files[i]}")
    done
    if (( ${#share[@]} )); then
        .venv/bin/pytest --collect-only -q -p no:cacheprovider "${share[@]}" >/dev/null 2>&1 &
        collectors+=($!)
    fi
done
for pid in "${collectors[@]}"; do
    wait "$pid" || true  # a module that does not import is reported by the run itself
done
# The suite waits on processes (agents, git, tmux, a browser, an agent CLI's own backoff) as much as it computes:
# two workers a core (on 2 cores: 185-190 s, against 190-210 s with three, which spend 15% more CPU). Each
# worker is handed two tests at a time (--maxschedchunk): xdist's first hand-out is otherwise a quarter of a
# worker's share in one block, so the slow tests that conftest.py puts first all went to the first worker, one
# after another (7 minutes).
status=0
.venv/bin/pytest -n "$(( $(nproc) * 2 ))" --maxschedchunk 2 --durations=25 "$@" || status=$?
mypy_status=0
wait "$mypy_pid" || mypy_status=$?
cat "$mypy_out"
rm -f "$mypy_out"
if [ "$mypy_status" != 0 ]; then
    exit "$mypy_status"
fi
exit "$status"

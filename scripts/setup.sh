#!/usr/bin/env bash
# Make .venv with ralphloop and its test tools installed; sourced by demo.sh and test.sh.
# Needs only Python 3.11+ and git; everything else comes from PyPI (and tmux and chromium from Debian's packages).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "setup: ralphloop needs Python 3.11 or newer (found: $("$PYTHON" --version 2>&1)); set PYTHON=/path/to/python3.11" >&2
    exit 1
fi
if ! command -v git >/dev/null; then
    echo "setup: ralphloop needs git on PATH" >&2
    exit 1
fi
# tmux: for `ralph run --monitor` and its tests. Debian's package, when it is missing and we may install it.
if ! command -v tmux >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "setup: installing tmux (apt-get)" >&2
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux; } >/dev/null 2>&1 \
            || echo "setup: could not install tmux: ralph run --monitor and its tests need it (they are skipped)" >&2
    else
        echo "setup: tmux not found: ralph run --monitor needs it, its tests are skipped (apt-get install tmux)" >&2
    fi
fi
# chromium: the HTML report's tests open the page in a real browser (driven by Playwright, which downloads no
# browser of its own here). Debian's package, when it is missing and we may install it; without it they are skipped.
if [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "setup: installing chromium (apt-get)" >&2
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null 2>&1 \
            || echo "setup: could not install chromium: the HTML report's browser tests are skipped" >&2
    else
        echo "setup: /usr/bin/chromium not found: the HTML report's browser tests are skipped (apt-get install chromium)" >&2
    fi
fi
# bubblewrap: ralph run --sandbox wraps the agent in it (issue 35), and its tests run a hostile agent in it. Debian's
# package, when it is missing and we may install it; without it those tests are skipped.
if ! command -v bwrap >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "setup: installing bubblewrap (apt-get)" >&2
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; } >/dev/null 2>&1 \
            || echo "setup: could not install bubblewrap: the sandbox's tests are skipped" >&2
    else
        echo "setup: bwrap not found: ralph run --sandbox needs it, its tests are skipped (apt-get install bubblewrap)" >&2
    fi
fi
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
# Reinstall only when the project's metadata or the pinned versions changed since the last install.
stamp=.venv/.ralphloop-installed
# The plug-in packages in tests/plugins are installed too, as a user installs a third party's (tests/plugins/README.md).
plugins=(tests/plugins/*/)
newer=0
for file in pyproject.toml scripts/constraints.txt tests/plugins/*/pyproject.toml; do
    [ "$file" -nt "$stamp" ] && newer=1
done
if [ ! -f "$stamp" ] || [ "$newer" = 1 ]; then
    # uv installs the same pinned versions as pip in a few seconds (pip took 25 s of every fresh CI run); pip
    # itself when uv cannot be had (no wheel for this platform, no index): slower, the same result.
    if .venv/bin/python -m pip install --quiet --disable-pip-version-check -c scripts/constraints.txt uv 2>/dev/null \
        && UV_LINK_MODE=copy .venv/bin/uv pip install --quiet --python .venv/bin/python -c scripts/constraints.txt \
            -e '.[dev,report,web]' "${plugins[@]/#/-e}"; then
        :
    else
        .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
        .venv/bin/python -m pip install --quiet --disable-pip-version-check -c scripts/constraints.txt \
            -e '.[dev,report,web]' "${plugins[@]/#/-e}"
    fi
    touch "$stamp"
fi
# Byte-compile the project (an editable install: its modules are read from src/). Where PYTHONDONTWRITEBYTECODE is
# set, as in many containers, Python never caches them itself and every `ralph` would compile them again: ~0.2 s
# more per start, and the tests start ralph thousands of times. Quick when nothing changed.
.venv/bin/python -m compileall -q -j 0 src tests bench >/dev/null

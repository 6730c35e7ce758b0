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
# A Debian package some tests need, when its program is missing and we may install it (root, apt-get); without it
# those tests are skipped. install_missing PROGRAM PACKAGE WHO-NEEDS-IT
install_missing() {
    if command -v "$1" >/dev/null || [ -x "$1" ]; then
        return
    fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "setup: installing $2 (apt-get)" >&2
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2"; } >/dev/null 2>&1 \
            || echo "setup: could not install $2: $3 (they are skipped)" >&2
    else
        echo "setup: $1 not found: $3, skipped without it (apt-get install $2)" >&2
    fi
}
# tmux: for `ralph run --monitor` and its tests
install_missing tmux tmux "ralph run --monitor and its tests need it"
# chromium: the HTML report's and ralph serve's tests open the page in a real browser (driven by Playwright, which
# downloads no browser of its own here)
install_missing /usr/bin/chromium chromium "the browser tests need it"
# bubblewrap: the sandbox around the agent (issue 35), and its tests with a hostile agent in it
install_missing bwrap bubblewrap "ralph run --sandbox and its tests need it"
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
            -e '.[dev,report,web,temporal,temporal-test]' "${plugins[@]/#/-e}"; then
        :
    else
        .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
        .venv/bin/python -m pip install --quiet --disable-pip-version-check -c scripts/constraints.txt \
            -e '.[dev,report,web,temporal,temporal-test]' "${plugins[@]/#/-e}"
    fi
    touch "$stamp"
fi
# Byte-compile the project (an editable install: its modules are read from src/). Where PYTHONDONTWRITEBYTECODE is
# set, as in many containers, Python never caches them itself and every `ralph` would compile them again: ~0.2 s
# more per start, and the tests start ralph thousands of times. Quick when nothing changed.
.venv/bin/python -m compileall -q -j 0 src tests bench >/dev/null

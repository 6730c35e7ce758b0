"""Write the real `ralph --help` and `ralph run --help` into README.md's two help blocks (tests/test_readme.py
checks they agree): run after changing a flag or its help text."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def real_help(*args: str) -> str:
    env = {**os.environ, "COLUMNS": "100"}
    done = subprocess.run(
        [sys.executable, "-m", "ralphloop", *args, "--help"], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.rstrip()


def main() -> None:
    text = README.read_text()
    helps = iter([real_help(), real_help("run")])
    text = re.sub(r"```text\n(usage: .*?)\n```", lambda _: f"```text\n{next(helps)}\n```", text, flags=re.DOTALL)
    README.write_text(text)


if __name__ == "__main__":
    main()

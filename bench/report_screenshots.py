"""Screenshots of `ralph report --html` at a desktop and a phone width, from real records.

Builds a project whose feature is worked by the real `ralph run --agent claude` with a stand-in `claude`
(tests/agents/receipt_claude.py: passes, failures, a refused claim, a usage limit and its wait, two runs),
writes the page with `ralph report --html`, opens it in Debian's chromium (Playwright, never a downloaded
browser) and saves a PNG per width. Prints the page's size, the time to write it, and any console error.

    .venv/bin/python bench/report_screenshots.py [--out DIR] [--quick]

--quick: the agents answer at once (the timeline's bars are then a few pixels wide).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the stand-in agent and the project builder live with the tests

from tests.browser import ARGS, CHROMIUM  # noqa: E402  (the tests' own chromium and its flags)
from tests.integration import receipt_project  # noqa: E402

WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}
STORIES = (
    ("API-1", "Parse the config file and report the first bad key"),
    ("API-2", "Retry a failed upload three times with backoff"),
    ("API-3", "<script>alert(1)</script>"),
    ("API-4", "Show progress in the status line"),
    ("API-5", "Document the new flags"),
)
TOKENS = {"input": 4200, "output": 1300, "cache_read": 180_000, "cache_write": 9000}


def plan(sleep: float) -> list[dict[str, object]]:
    """Two runs' worth of calls: the first stops after four counted iterations (-n 4), the second finishes."""
    steps: list[dict[str, object]] = [
        {"do": "pass", "cost": 0.31, **TOKENS, "sleep": 2 * sleep},
        {"do": "fail", "cost": 0.12, "input": 2100, "output": 400, "sleep": sleep},
        {"do": "claim", "cost": 0.22, **TOKENS, "sleep": sleep},
        {"do": "pass", "cost": 0.41, **TOKENS, "sleep": 3 * sleep},
        {"do": "limit", "cost": 0.0, "sleep": 0},
        {"do": "work", "cost": 0.27, **TOKENS, "sleep": 2 * sleep, "model": "claude-sonnet-4-5-20250929"},
        {"do": "pass", "cost": 0.33, **TOKENS, "sleep": 2 * sleep},
        {"do": "fail", "cost": 0.09, "input": 1900, "output": 350, "sleep": sleep},
        {"do": "pass", "cost": 0.38, **TOKENS, "sleep": 2 * sleep},
        {"do": "pass", "cost": 0.18, **TOKENS, "sleep": sleep},
    ]
    return steps


def environment(base: Path) -> dict[str, str]:
    home, gitconfig = base / "ralph-home", base / "gitconfig"
    env = {key: value for key, value in os.environ.items() if not key.startswith(("RALPH_", "GIT_"))}
    env.update(
        RALPH_HOME=str(home),
        NO_COLOR="1",
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@ralphloop.invalid",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@ralphloop.invalid",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=str(gitconfig),
    )
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="where the page and the PNGs go (default: a new temp folder)")
    parser.add_argument("--quick", action="store_true", help="agents answer at once")
    options = parser.parse_args()
    if not os.path.exists(CHROMIUM):
        print(f"report_screenshots: {CHROMIUM} not found (./scripts/setup.sh installs it as root)", file=sys.stderr)
        return 1
    out = options.out or Path(tempfile.mkdtemp(prefix="ralph-report-"))
    out.mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="ralph-report-project-"))
    project = base / "project"
    env = receipt_project.make_project(
        project, environment(base), stories=STORIES, plan=plan(0.0 if options.quick else 0.8)
    )
    for args in (("-n", "4"), ()):
        done = receipt_project.run(project, env, *args)
        print(f"ralph run {' '.join(args)}: exit {done.returncode}")
    page = out / "report.html"
    started = time.perf_counter()
    done = receipt_project.ralph(project, env, "report", "--html", str(page))
    took = time.perf_counter() - started
    if done.returncode != 0:
        print(done.stdout + done.stderr, file=sys.stderr)
        return 1
    print(f"ralph report --html: {took:.2f} s, {page.stat().st_size / 1e6:.2f} MB -> {page}")
    print(
        subprocess.run(
            [sys.executable, "-m", "ralphloop", "report"],
            cwd=project,
            env=env,
            text=True,
            capture_output=True,
            check=False,
        ).stdout
    )
    return shoot(page, out)


def shoot(page: Path, out: Path) -> int:
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for name, (width, height) in WIDTHS.items():
                view = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=1)
                view.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
                view.on("pageerror", lambda error: errors.append(str(error)))
                started = time.perf_counter()
                view.goto(page.as_uri())
                view.wait_for_selector("#chart-timeline .main-svg")
                shown = time.perf_counter() - started
                png = out / f"report-{name}.png"
                view.screenshot(path=str(png), full_page=True)
                wide = view.evaluate("document.documentElement.scrollWidth")
                print(f"{name} {width}x{height}: charts drawn in {shown:.2f} s, page {wide} px wide -> {png}")
                view.close()
        finally:
            browser.close()
    print(f"console errors: {len(errors)}" + "".join(f"\n  {error}" for error in errors))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

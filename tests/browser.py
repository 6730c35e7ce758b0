"""A real headless browser for the tests that open a page ralph wrote: Debian's chromium (scripts/setup.sh installs
it as root), driven by Playwright, which never downloads a browser of its own here. Without chromium the tests that
need it are skipped, except on CI, where setup must have installed it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
# Known to work here: no sandbox (root), no GPU, nothing fetched in the background.
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def launched() -> Iterator[Any]:
    """A chromium for one test module (a start costs seconds): skipped without it, but not on CI."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} not found on CI: scripts/setup.sh installs Debian's chromium as root")
        pytest.skip(f"{CHROMIUM} not found (apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


class Watched:
    """A page whose console errors, page errors, dialogs and requests are kept, for a test to assert on."""

    def __init__(self, context: Any) -> None:
        self.page = context.new_page()
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))
        self.page.on("request", lambda request: self.requests.append(request.url))

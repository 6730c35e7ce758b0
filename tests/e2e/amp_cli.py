"""The real Amp CLI the amp end-to-end tests drive, pinned, installed once by npm_cli.py."""

from __future__ import annotations

from typing import Final

from tests.e2e.npm_cli import PinnedCli

__all__ = ["AMP_VERSION", "amp_executable"]

# `npm view @sourcegraph/amp version` on 2026-11-27. The package is a wrapper whose postinstall links the native
# binary of @ampcode/cli-<platform> into node_modules/.bin/amp.
AMP_VERSION: Final = "0.0.1790142911-g7618fb"
AMP: Final = PinnedCli(
    label="Amp",
    package="@sourcegraph/amp",
    version=AMP_VERSION,
    binary="amp",
    folder="amp",
    version_ok=lambda printed: printed.startswith(AMP_VERSION),
)


def amp_executable() -> str:
    return AMP.executable()

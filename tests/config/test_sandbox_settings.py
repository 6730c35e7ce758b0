"""The `sandbox:` settings (issue 35) as config files, variables and flags give them."""

from __future__ import annotations

from pathlib import Path

import pytest

from ralphloop.config.settings import load_settings
from ralphloop.core.errors import RalphError
from ralphloop.processes.sandbox_settings import SandboxSettings


def settings_of(
    tmp_path: Path, config: str, flags: dict[str, tuple[object, str]] | None = None, **env: str
) -> SandboxSettings:
    (tmp_path / ".ralph").mkdir(exist_ok=True)
    (tmp_path / ".ralph" / "config.yaml").write_text(config)
    return load_settings(str(tmp_path), flags or {}, env=env).sandbox


def test_yamls_bare_off_and_on_are_the_modes_they_say(tmp_path: Path) -> None:
    assert settings_of(tmp_path, "sandbox:\n  mode: off\n").mode == "off"
    assert settings_of(tmp_path, "sandbox:\n  mode: on\n").mode == "auto"
    assert settings_of(tmp_path, "sandbox:\n  mode: bwrap\n").mode == "bwrap"


def test_the_flag_beats_the_variable_beats_the_file_and_the_default_is_auto(tmp_path: Path) -> None:
    assert settings_of(tmp_path, "").mode == "auto"
    assert settings_of(tmp_path, "sandbox:\n  mode: auto\n", RALPH_SANDBOX="bwrap").mode == "bwrap"
    flagged = settings_of(
        tmp_path, "sandbox:\n  mode: auto\n", {"sandbox_mode": ("off", "--sandbox")}, RALPH_SANDBOX="bwrap"
    )
    assert flagged.mode == "off"


def test_hosts_get_a_port_and_are_kept_once(tmp_path: Path) -> None:
    found = settings_of(tmp_path, "sandbox:\n  allow_hosts: [PyPI.org, 'pypi.org:443', '*.example.com:8080', 'h:*']\n")
    assert found.allow_hosts == ("pypi.org:443", "*.example.com:8080", "h:*")


@pytest.mark.parametrize("hosts", ["['a b:443']", "['host:99999']", "[1]", "'x:'"])
def test_a_bad_host_pattern_is_one_line_naming_the_setting(tmp_path: Path, hosts: str) -> None:
    with pytest.raises(RalphError, match=r"config\.yaml: sandbox\.allow_hosts: "):
        settings_of(tmp_path, f"sandbox:\n  allow_hosts: {hosts}\n")

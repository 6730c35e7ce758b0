"""files/yaml_cache.py: a run keeps what its config files were read as, the next command reads that instead of
importing PyYAML, and nothing about it can change what a config says: other bytes, a damaged or planted entry, a
value JSON cannot hold are all read as YAML again; only a run that has started writes an entry."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ralphloop.config.settings import CACHE_DIR, load_settings
from ralphloop.core.errors import RalphError
from ralphloop.files import yaml_cache
from tests.conftest import RalphRunner, loaded_modules

CONFIG = """\
max_retries: 7
circuit_breaker:
  no_progress_threshold: 4
hooks:
  post_iteration: ["echo after"]
"""


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    folder = tmp_path / "ralph-home"
    monkeypatch.setenv("RALPH_HOME", str(folder))
    return folder


def _project(tmp_path: Path, config: str = CONFIG) -> Path:
    root = tmp_path / "project"
    (root / ".ralph").mkdir(parents=True)
    (root / ".ralph" / "config.yaml").write_text(config)
    return root


def _entries(home: Path) -> list[Path]:
    folder = home / CACHE_DIR
    return sorted(folder.iterdir()) if folder.exists() else []


def test_what_a_config_was_read_as_is_read_back_the_same(home: Path, tmp_path: Path) -> None:
    root = _project(tmp_path)
    first = load_settings(str(root), {})
    assert _entries(home) == []  # noted, not written: only a run that has started writes
    yaml_cache.keep()
    (entry,) = _entries(home)
    again = load_settings(str(root), {})
    assert again == first
    assert again.loop.max_retries == 7 and again.breaker.no_progress_threshold == 4
    (root / ".ralph" / "config.yaml").write_text(CONFIG.replace("7", "9"))  # other bytes: read as YAML
    assert load_settings(str(root), {}).loop.max_retries == 9
    assert entry.exists()


@pytest.mark.parametrize("damage", ["garbage", "symlink", "fifo", "another-version", "torn"])
def test_an_entry_that_cannot_be_read_is_read_as_yaml(home: Path, tmp_path: Path, damage: str) -> None:
    root = _project(tmp_path)
    want = load_settings(str(root), {})
    yaml_cache.keep()
    (entry,) = _entries(home)
    text = entry.read_text()
    entry.unlink()
    if damage == "garbage":
        entry.write_bytes(b"\xff{not json")
    elif damage == "symlink":
        entry.symlink_to("/dev/zero")
    elif damage == "fifo":
        os.mkfifo(entry)
    elif damage == "another-version":  # what another ralph read: it may read YAML otherwise
        entry.write_text(text.replace('"max_retries": 7', '"max_retries": 1000').replace('"ralph": "', '"ralph": "0'))
    else:
        entry.write_text(text[: len(text) // 2])
    assert load_settings(str(root), {}) == want


def test_a_planted_entry_is_checked_as_the_config_itself(home: Path, tmp_path: Path) -> None:
    """Whoever writes ralph's home may change what a config says, as they could by editing it (the agent's sandbox
    keeps ralph's home out of its reach): what an entry holds is checked, and named, as the file's own words."""
    root = _project(tmp_path)
    load_settings(str(root), {})
    yaml_cache.keep()
    (entry,) = _entries(home)
    entry.write_text(entry.read_text().replace('["echo after"]', "[1, 2]"))
    with pytest.raises(RalphError, match=r"config\.yaml: hooks\.post_iteration\[0\]: expected a command string"):
        load_settings(str(root), {})
    # what no YAML could have said (a NUL), the entry is not taken: the file is read
    planted = entry.read_text().replace("[1, 2]", '["echo after"]')
    entry.write_text(planted.replace('"max_retries": 7', '"x": "\\u0000"'))
    assert load_settings(str(root), {}).loop.max_retries == 7


def test_a_value_json_cannot_hold_is_never_kept(home: Path, tmp_path: Path) -> None:
    root = _project(tmp_path, CONFIG + "notes:\n  since: 2026-01-01\n  1: one\n")
    load_settings(str(root), {}, warn=lambda message: None)
    yaml_cache.keep()
    assert _entries(home) == []


def test_the_folder_keeps_the_newest_entries(home: Path, tmp_path: Path) -> None:
    root = _project(tmp_path)
    for number in range(yaml_cache.KEEP + 5):
        (root / ".ralph" / "config.yaml").write_text(CONFIG.replace("7", str(number + 10)))
        load_settings(str(root), {})
        yaml_cache.keep()
    assert len(_entries(home)) == yaml_cache.KEEP


def test_a_second_run_starts_without_importing_yaml(
    project: Path, feature: Path, ralph_env: dict[str, str], ralph: RalphRunner
) -> None:
    (project / ".ralph" / "config.yaml").write_text(CONFIG)
    home = Path(ralph_env["RALPH_HOME"])
    for command in (["status"], ["validate"], ["run", "-n", "1", "--agent-cmd", "true", "--no-archive", "nothere"]):
        ralph(*command)
    assert _entries(home) == []  # reading commands, and a run refused for bad input, write nothing

    first, modules = loaded_modules(["run", "-n", "1", "--agent-cmd", "true", "--no-archive"], project, ralph_env)
    assert "max_iterations" in first.stdout, first.stdout + first.stderr
    assert "yaml" in modules and len(_entries(home)) == 1
    second, modules = loaded_modules(["run", "-n", "1", "--agent-cmd", "true", "--no-archive"], project, ralph_env)
    assert "max_iterations" in second.stdout, second.stdout + second.stderr
    assert "yaml" not in modules

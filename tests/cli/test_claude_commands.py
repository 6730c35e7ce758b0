"""cli/claude_commands.py and templates/claude/: the /ralph-plan and /ralph-prd commands and their installation."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

from ralphloop.cli.claude_commands import (
    claude_command_files,
    edited_claude_commands,
    write_claude_commands,
)
from ralphloop.core.errors import RalphError
from ralphloop.tasks.spec_md.prd import spec_to_prd


def frontmatter(text: str) -> dict[str, str]:
    assert text.startswith("---\n")
    block = text.split("---\n", 2)[1]
    data = yaml.safe_load(block)
    assert isinstance(data, dict)
    return data


def test_both_commands_are_packaged() -> None:
    files = claude_command_files()
    assert list(files) == ["ralph-plan.md", "ralph-prd.md"]
    for text in files.values():
        meta = frontmatter(text)
        assert meta["description"].strip()
        assert "argument-hint" in meta
        assert "$ARGUMENTS" in text


def test_plan_command_walks_the_planning_workflow() -> None:
    text = claude_command_files()["ralph-plan.md"]
    steps = [text.index(step) for step in ("SUMMARIZE", "CLARIFY", "DRAFT", "DECOMPOSE", "GENERATE")]
    assert steps == sorted(steps)
    for words in (
        "3-5 clarifying questions",
        "wait for the answers",
        "Scope boundaries",
        "Success criteria",
        "Technical constraints",
        "Dependencies",
        "one context window",
        "more than 2-3 sentences",
        "more than 6 acceptance criteria",
        "more than 3 files",
        "Typecheck passes",
        "Unit tests pass",
        "browser",
        "ralph init <feature>",
        "ralph prd .ralph/<feature>/spec.md",
        "ralph validate -f <feature>",
        "progress.txt",
        "ralph run -f <feature>",
    ):
        assert words in text, words


def test_plan_command_shows_a_spec_that_ralph_prd_reads() -> None:
    text = claude_command_files()["ralph-plan.md"]
    example = re.search(r"````markdown\n(.*?)````", text, re.DOTALL)
    assert example is not None
    data = spec_to_prd(example.group(1), "example")
    assert data["feature"] == "<feature>"
    assert [story["id"] for story in data["userStories"]] == ["STORY-001"]
    assert data["userStories"][0]["acceptanceCriteria"][-2:] == ["Typecheck passes", "Unit tests pass"]


def test_prd_command_checks_generates_validates_and_summarises() -> None:
    text = claude_command_files()["ralph-prd.md"]
    for words in (
        ".ralph/<feature>/spec.md",
        "ask before you edit",
        "ralph prd .ralph/<feature>/spec.md",
        "ralph validate -f <feature>",
        "ID, title, priority",
        "one context window",
        "ralph run -f <feature>",
    ):
        assert words in text, words
    assert text.index("ralph prd .ralph") < text.index("ralph validate -f")


def test_write_creates_the_commands(tmp_path: Path) -> None:
    written = write_claude_commands(str(tmp_path))
    folder = tmp_path / ".claude" / "commands"
    assert written == [str(folder / "ralph-plan.md"), str(folder / "ralph-prd.md")]
    for name, text in claude_command_files().items():
        assert (folder / name).read_text(encoding="utf-8") == text
    assert write_claude_commands(str(tmp_path)) == []  # already there: nothing to do
    assert edited_claude_commands(str(tmp_path)) == []


def test_write_never_overwrites_an_edited_command(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "commands"
    folder.mkdir(parents=True)
    (folder / "ralph-plan.md").write_text("my own plan command\n", encoding="utf-8")
    written = write_claude_commands(str(tmp_path))
    assert written == [str(folder / "ralph-prd.md")]
    assert (folder / "ralph-plan.md").read_text(encoding="utf-8") == "my own plan command\n"
    assert edited_claude_commands(str(tmp_path)) == [str(folder / "ralph-plan.md")]


def test_write_leaves_a_symlink_alone(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "commands"
    folder.mkdir(parents=True)
    os.symlink(tmp_path / "missing.md", folder / "ralph-prd.md")
    assert write_claude_commands(str(tmp_path)) == [str(folder / "ralph-plan.md")]
    assert not (tmp_path / "missing.md").exists()


def test_write_reports_a_folder_in_the_way(tmp_path: Path) -> None:
    (tmp_path / ".claude" / "commands" / "ralph-plan.md").mkdir(parents=True)
    with pytest.raises(RalphError, match="is a folder"):
        write_claude_commands(str(tmp_path))
    (tmp_path / ".claude" / "commands" / "ralph-plan.md").rmdir()
    (tmp_path / ".claude" / "commands").rmdir()
    (tmp_path / ".claude" / "commands").write_text("", encoding="utf-8")
    with pytest.raises(RalphError, match="cannot create"):
        write_claude_commands(str(tmp_path))

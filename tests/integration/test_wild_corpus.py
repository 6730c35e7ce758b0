"""Every task file of the wild corpus (tests/fixtures/wild/: 165 real users' files, their origins in SOURCES.tsv)
through the real `ralph validate`, `ralph run --dry-run` and `ralph status`, typed bare at the repository's root as
a user migrating from another Ralph tool would (or naming the folder, for a file nowhere a bare command looks):
each is accepted, or refused by validate and run in the same words, naming the file, its line and what was found;
no traceback, no exception's name, and no file changed. Then real runs with an agent that works whatever the user
wrote (tests/agents/wild_agent.py) end true over a mix of them."""

from __future__ import annotations

import csv
import hashlib
import re
from pathlib import Path

import pytest

from tests.conftest import agent_cmd, isolated_env
from tests.warm_ralph import WarmRalph
from tests.wild_corpus import WILD, Outcome, Sample, lay_out, read_commands, samples

EXPECTED = {(row["kind"], row["sample"]): row for row in csv.DictReader((WILD / "EXPECTED.tsv").open(), delimiter="\t")}
EXCEPTION_NAME = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b")  # in ralph's own words (stderr): a story may name one
CRASH = re.compile(r"Traceback \(most recent call last\)|ralph: internal error")
# Samples a loop works to the end with the agent: every format, the shapes ralph reads leniently among them
# (`stories` for userStories with snake_case fields, a top-level array, a table of checkboxes, Optional headings).
RUNS = tuple((row["kind"], row["sample"]) for row in EXPECTED.values() if row["run"] == "yes")


def _tree(root: Path) -> dict[str, str]:
    """Every file under `root` but .git, by its content's hash: what a reading command must leave as it was."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and ".git" not in path.relative_to(root).parts
    }


def _sample(kind: str, name: str) -> Sample:
    return Sample(kind, name)


@pytest.mark.parametrize("sample", samples(), ids=lambda sample: f"{sample.kind}-{sample.name}")
def test_each_sample_is_read_or_refused_in_one_line_naming_file_and_line(
    sample: Sample, tmp_path: Path, warm_server: WarmRalph
) -> None:
    expected = EXPECTED[(sample.kind, sample.name)]
    env = isolated_env(tmp_path / "ralph-home", tmp_path / "gitconfig")
    root = lay_out(sample, tmp_path, env)
    before = _tree(root)

    validate, dry_run, status = (
        _warm(warm_server, root, env, words) for words in read_commands(sample, named=expected["how"] == "named")
    )

    assert _tree(root) == before  # nothing a read command does changes a file
    for outcome in (validate, dry_run, status):
        assert not CRASH.search(outcome.output), (outcome.command, outcome.output)
        assert not EXCEPTION_NAME.search(outcome.stderr), (outcome.command, outcome.stderr)
    if expected["verdict"] == "ok":
        for outcome in (validate, dry_run, status):
            assert outcome.code == 0, (outcome.command, outcome.output)
        return
    assert validate.code == 1 and dry_run.code == 1, (validate.output, dry_run.output)
    problem = validate.first_line
    assert dry_run.first_line.removeprefix("ralph: error: ").startswith(problem), (problem, dry_run.first_line)
    where = expected["file"]
    assert problem.startswith(f"{where}:"), (where, problem)
    if expected["line"]:
        assert problem.startswith(f"{where}:{expected['line']}: "), problem
    assert expected["near"] in problem, (expected["near"], problem)


def _warm(server: WarmRalph, root: Path, env: dict[str, str], words: tuple[str, ...]) -> Outcome:
    """A reading command, forked from the warm `ralph` (as tests/wild_corpus.py's survey runs it cold)."""
    done = server(root, env, *words, timeout=60)
    return Outcome(" ".join(words), done.returncode, done.stdout + done.stderr, done.stderr)


@pytest.mark.parametrize("kind,name", RUNS, ids=lambda value: value)
def test_a_loop_over_a_real_users_file_ends_true(kind: str, name: str, tmp_path: Path, warm_server: WarmRalph) -> None:
    sample = _sample(kind, name)
    env = isolated_env(tmp_path / "ralph-home", tmp_path / "gitconfig")
    root = lay_out(sample, tmp_path, env)
    named = EXPECTED[(kind, name)]["how"] == "named"
    target = (sample.folder,) if named else ()

    words = ("run", *target, "--agent-cmd", agent_cmd("wild_agent.py"), "-n", "40", "--no-archive")
    done = _warm(warm_server, root, env, words)

    assert done.code == 0, done.output[-3000:]
    assert "exit 0 (complete)" in done.output, done.output[-2000:]
    shown = _warm(warm_server, root, env, ("status", *(("-f", sample.folder) if named else ())))
    counts = re.search(r"^(?:Stories|Tasks|Steps):\s+(\d+) / (\d+)", shown.output, re.MULTILINE)
    assert counts and counts[1] == counts[2] and int(counts[2]) > 0, shown.output
    assert list(root.glob("wild-work-*.txt")), "the agent's work is in the project"

"""The wild corpus (tests/fixtures/wild/, copied from shared/corpus/wild/): 165 task files real users wrote, each at
its original path in a copy of its repository's files. What ralph makes of each, through the real CLI: `ralph
validate`, `ralph run --dry-run` and `ralph status`, typed bare at the repository's root as a migrating user would.

Run as a script it surveys every sample and prints the counts (`python -m tests.wild_corpus [--named]`); the tests
(tests/integration/test_wild_corpus.py) hold each sample to its verdict in EXPECTED.tsv.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import isolated_env

WILD = Path(__file__).parent / "fixtures" / "wild"
KINDS = ("prd", "fixplan", "todo", "stories", "sprint")
_TASK_NAMES = ("prd.json", "fix_plan.md", "@fix_plan.md", "TODO.md", "SPRINT.yaml")


@dataclass(frozen=True)
class Sample:
    kind: str
    name: str

    @property
    def source(self) -> Path:
        return WILD / self.kind / self.name

    @property
    def task_file(self) -> str:
        """The sample's task file (specs/ for story specs), relative to its repository's root."""
        if self.kind == "stories":
            return "specs"
        found = sorted(
            str(path.relative_to(self.source)) for path in self.source.rglob("*") if path.name in _TASK_NAMES
        )
        return min(found, key=lambda rel: (rel.count("/"), rel))

    @property
    def folder(self) -> str:
        """The folder a user names for it (its task file's), relative to the root; `.` for the root."""
        if self.kind in ("fixplan", "stories"):
            return "."
        return os.path.dirname(self.task_file) or "."


@dataclass(frozen=True)
class Outcome:
    command: str
    code: int
    output: str  # stdout and stderr
    stderr: str

    @property
    def first_line(self) -> str:
        lines = [line for line in self.output.splitlines() if line.strip()]
        return lines[0] if lines else ""


def samples() -> list[Sample]:
    return [
        Sample(kind, entry.name)
        for kind in KINDS
        for entry in sorted((WILD / kind).iterdir(), key=lambda entry: entry.name)
        if entry.is_dir()
    ]


def lay_out(sample: Sample, where: Path, env: dict[str, str]) -> Path:
    """The sample's files in a git repository of their own under `where`, committed as their authors had them."""
    root = where / "repo"
    shutil.copytree(sample.source, root, symlinks=True)
    for path in [root, *root.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    for args in (["init", "-q", "-b", "main"], ["add", "-A", "-f"], ["commit", "-q", "-m", "as found"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, stdout=subprocess.DEVNULL)
    return root


def ralph(root: Path, env: dict[str, str], *args: str) -> Outcome:
    run = subprocess.run(
        [sys.executable, "-m", "ralphloop", *args],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return Outcome(" ".join(args), run.returncode, run.stdout + run.stderr, run.stderr)


def read_commands(sample: Sample, *, named: bool = False) -> list[tuple[str, ...]]:
    """The three commands a newcomer types: bare, or naming the sample's folder."""
    if not named:
        return [("validate",), ("run", "--dry-run"), ("status",)]
    folder = sample.folder
    return [("validate", "-f", folder), ("run", folder, "--dry-run"), ("status", "-f", folder)]


def survey(sample: Sample, where: Path, *, named: bool = False) -> list[Outcome]:
    env = isolated_env(where / "ralph-home", where / "gitconfig")
    root = lay_out(sample, where, env)
    return [ralph(root, env, *args) for args in read_commands(sample, named=named)]


_NOT_FOUND = ("ralph: error: no feature in", "ralph: error: several task files")
_PLACE = re.compile(r"^(?:ralph: error: )?(?P<file>[^:]+?)(?::(?P<line>\d+))?: (?P<rest>.*)$")
_NEAR = re.compile(
    r'found [`"][^`"]+[`"]|is a (?:plain bullet|numbered item|heading)|another tool\'s file|no `workflow:` key'
)


def expectation(sample: Sample, where: Path) -> dict[str, str]:
    """A proposed row of EXPECTED.tsv from what ralph does now (bare, else naming the folder): reviewed by hand."""
    outcomes = survey(sample, where / "bare")
    how = "bare"
    if any(outcome.first_line.startswith(_NOT_FOUND) for outcome in outcomes):
        outcomes, how = survey(sample, where / "named", named=True), "named"
    ok = all(outcome.code == 0 for outcome in outcomes)
    row = {"kind": sample.kind, "sample": sample.name, "verdict": "ok" if ok else "refused", "how": how}
    placed = _PLACE.match(outcomes[0].first_line) if not ok else None
    near = _NEAR.search(outcomes[0].first_line) if not ok else None
    row.update(
        file=placed["file"] if placed else "",
        line=(placed["line"] or "") if placed else "",
        near=near.group(0) if near else "",
        run="",
        said=outcomes[0].first_line[:200] if not ok else "",
    )
    return row


def _main(argv: list[str]) -> int:
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    named = "--named" in argv
    if "--expect" in argv:
        return _expect()
    chosen = [sample for sample in samples() if not [a for a in argv if not a.startswith("-")] or sample.name in argv]

    def one(sample: Sample) -> tuple[Sample, list[Outcome]]:
        with tempfile.TemporaryDirectory() as where:
            return sample, survey(sample, Path(where), named=named)

    accepted = 0
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for sample, outcomes in pool.map(one, chosen):
            ok = all(outcome.code == 0 for outcome in outcomes)
            accepted += ok
            verdict = "ok" if ok else "refused"
            print(f"{sample.kind}\t{sample.name}\t{verdict}", end="")
            for outcome in outcomes:
                print(f"\t{outcome.code} {outcome.first_line[:160]}", end="")
            print(flush=True)
    print(f"# {accepted} accepted, {len(chosen) - accepted} refused of {len(chosen)}", file=sys.stderr)
    return 0


def _expect() -> int:
    import csv
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    def one(sample: Sample) -> dict[str, str]:
        with tempfile.TemporaryDirectory() as where:
            (Path(where) / "bare").mkdir()
            (Path(where) / "named").mkdir()
            return expectation(sample, Path(where))

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        rows = list(pool.map(one, samples()))
    writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]), delimiter="\t", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

"""Malformed task input, in every task format, stops `ralph run` before anything starts: one line on
stderr naming the file (and the line, when there is one), exit 1, and every file left exactly as it was.
`ralph validate` on the same workspace reports the problem too, and lists every problem when there are several."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import RalphRunner, agent_cmd, write_prd
from tests.integration.helpers import assert_one_line_error, git, snapshot

SAY = agent_cmd("say.py", "hi")


def spec(depends: str = "[]", status: str = "pending") -> str:
    """A valid story spec; `depends` is written after `depends_on:` on line 4."""
    return f"---\nstatus: {status}\npriority: high\ndepends_on: {depends}\n---\n\n# A story\n\nAs a user, I want it.\n"


def write(project: Path, rel: str, content: str | bytes) -> None:
    path = project / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)


def stories(project: Path, specs: dict[str, str]) -> None:
    """Spec files by path under specs/ (seed 002's layout at the project root)."""
    for rel, text in specs.items():
        write(project, f"specs/{rel}", text)


def prd_feature(project: Path) -> None:
    write_prd(project / ".ralph" / "feat", 3)  # stories S-1, S-2, S-3


@dataclass(frozen=True)
class Case:
    build: Callable[[Path], None]  # writes the broken workspace into the project
    needles: tuple[str, ...]  # in the one-line error of `ralph run`
    target: tuple[str, ...] = ()  # FEATURE|PLAN_DIR for `ralph run`, -f for `ralph validate`
    checked: tuple[str, ...] | None = None  # in `ralph validate`'s output (default: the needles)


def _prd_duplicate_ids(project: Path) -> None:
    story = {"title": "Story", "acceptanceCriteria": ["works"], "passes": False}
    write_prd(project / ".ralph" / "feat", [{"id": f"S-{n}", "priority": n, **story} for n in (1, 2, 1)])


def _story_order_numbers(project: Path) -> None:
    stories(project, {"epic-1/story-1.1-a.md": spec(), "epic-1/story-1.2-b.md": spec()})
    write(project, ".ralph/config.yaml", "story_order: [1.1, 1.2]\n")


def _bad_branch_prefix(prefix: str) -> Callable[[Path], None]:
    def build(project: Path) -> None:
        prd_feature(project)
        write(project, ".ralph/config.yaml", f"branch:\n  auto_create: true\n  prefix: {prefix}\n")

    return build


# A story depending on one that exists (line 5) and one that does not (line 6): the error points at 9.9's line.
DEPENDS_ON_UNKNOWN = "---\nstatus: pending\ndepends_on:\n  # what must be done first\n  - '1.1'\n  - '9.9'\n---\n# B\n"
NOT_UTF8 = "# Plan\n\n- [ ] first task\n- [ ] caf\xe9 au lait\n- [ ] last task\n".encode("latin-1")
ONLY_FUTURE = "# Fix plan\n\n## Future\n\n- [ ] Dark mode\n- [ ] Plugins\n\n## Nice to Have\n- [ ] Emoji\n"
PRD_SYNTAX_ERROR = '{\n  "userStories": [\n    {"id": "S-1",, "title": "x"}\n  ]\n}\n'

CASES = {
    "prd-duplicate-ids": Case(
        _prd_duplicate_ids,
        (".ralph/feat/prd.json", "userStories[2].id 'S-1' is used twice"),
        checked=(".ralph/feat/prd.json", "userStories[2].id 'S-1' is used twice (also userStories[0])"),
    ),
    "prd-invalid-json": Case(
        lambda project: write(project, ".ralph/feat/prd.json", PRD_SYNTAX_ERROR),
        (".ralph/feat/prd.json:3:", "invalid JSON at column 18"),
    ),
    "specs-same-id": Case(
        lambda project: stories(project, {"epic-1/story-1.1-a.md": spec(), "epic-1/story-1.1-b.md": spec()}),
        ("specs/epic-1/story-1.1-b.md", "story 1.1 is also in specs/epic-1/story-1.1-a.md"),
    ),
    "spec-in-wrong-epic": Case(
        lambda project: stories(project, {"epic-1/story-1.1-a.md": spec(), "epic-2/story-1.2-b.md": spec()}),
        ("specs/epic-2/story-1.2-b.md", "story 1.2 is in epic-2/", "epic-1/"),
    ),
    "spec-depends-on-unknown-id": Case(
        lambda project: stories(
            project, {"epic-1/story-1.1-a.md": spec(), "epic-1/story-1.2-b.md": DEPENDS_ON_UNKNOWN}
        ),
        ("specs/epic-1/story-1.2-b.md:6:", "depends_on names 9.9"),
    ),
    "spec-frontmatter-never-closed": Case(
        lambda project: stories(project, {"epic-1/story-1.1-a.md": "---\nstatus: pending\n\n# A story\n\nBody.\n"}),
        ("specs/epic-1/story-1.1-a.md:1:", "frontmatter", "no closing ---"),
    ),
    "todo-not-utf8": Case(
        lambda project: write(project, "plans/x/TODO.md", NOT_UTF8),
        ("plans/x/TODO.md:4:", "not UTF-8"),
        target=("plans/x",),
    ),
    "fix-plan-only-future-boxes": Case(
        lambda project: write(project, "fix_plan.md", ONLY_FUTURE),
        ("fix_plan.md", "no tasks outside Optional, Future"),
    ),
    "config-story-order-unquoted": Case(
        _story_order_numbers,
        (".ralph/config.yaml", "story_order", "quoted", '"1.1"'),
    ),
    "config-branch-prefix-space": Case(
        _bad_branch_prefix('"my feature/"'),
        (".ralph/config.yaml", "branch.prefix"),
    ),
    "config-branch-prefix-dots": Case(
        _bad_branch_prefix('"feature/../"'),
        (".ralph/config.yaml", "branch.prefix"),
    ),
    "config-branch-prefix-list": Case(
        _bad_branch_prefix("[feature/]"),
        (".ralph/config.yaml", "branch.prefix"),
    ),
}


def _git_state(project: Path, env: dict[str, str]) -> tuple[str, str]:
    """The branches and their commits, and what HEAD is: a run that got as far as git would change them."""
    return git(project, env, "for-each-ref", "--format=%(refname) %(objectname)"), git(
        project, env, "symbolic-ref", "HEAD"
    )


def _run_refused(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], args: tuple[str, ...], needles: tuple[str, ...]
) -> str:
    """`ralph run ARGS` fails with one line holding every needle, and touches nothing at all."""
    before, refs = snapshot(project), _git_state(project, ralph_env)

    done = ralph("run", *args, "--agent-cmd", SAY)

    line = assert_one_line_error(done, *needles)
    assert "hi" not in done.stdout.split(), done.stdout  # the agent never ran
    assert snapshot(project) == before
    assert _git_state(project, ralph_env) == refs
    assert not Path(ralph_env["RALPH_HOME"]).exists()  # no call counted, nothing recorded per user
    return line


@pytest.mark.parametrize("name", list(CASES))
def test_malformed_input_is_one_line_naming_the_file(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], name: str
) -> None:
    case = CASES[name]
    case.build(project)

    _run_refused(project, ralph, ralph_env, case.target, case.needles)


@pytest.mark.parametrize("name", list(CASES))
def test_validate_reports_the_same_problem(project: Path, ralph: RalphRunner, name: str) -> None:
    case = CASES[name]
    case.build(project)
    before = snapshot(project)

    done = ralph("validate", *(("-f", *case.target) if case.target else ()))

    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) > 1, done.stdout  # the problem, then the count
    wanted = case.checked or case.needles
    assert any(all(needle in line for needle in wanted) for line in lines), (wanted, done.stdout)
    assert snapshot(project) == before


# ---------------------------------------------------------------- -s / --resume-from naming no task


def _stories_workspace(project: Path) -> None:
    stories(project, {"epic-1/story-1.1-a.md": spec(), "epic-1/story-1.2-b.md": spec()})


NARROWING = [
    pytest.param(prd_feature, ("-s", "S-9"), ("-s/--story S-9", ".ralph/feat/prd.json"), id="story-prd"),
    pytest.param(_stories_workspace, ("-s", "7.7"), ("-s/--story 7.7", "specs"), id="story-specs"),
    pytest.param(prd_feature, ("--resume-from", "S-9"), ("--resume-from S-9", ".ralph/feat/prd.json"), id="resume-prd"),
    pytest.param(_stories_workspace, ("--resume-from", "7.7"), ("--resume-from 7.7", "specs"), id="resume-specs"),
]


@pytest.mark.parametrize(("build", "args", "needles"), NARROWING)
def test_unknown_task_id_is_one_line_naming_the_source(
    project: Path,
    ralph: RalphRunner,
    ralph_env: dict[str, str],
    build: Callable[[Path], None],
    args: tuple[str, ...],
    needles: tuple[str, ...],
) -> None:
    build(project)

    line = _run_refused(project, ralph, ralph_env, args, needles)

    assert "no such story" in line


def test_story_and_resume_from_together_are_refused(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    prd_feature(project)

    _run_refused(project, ralph, ralph_env, ("-s", "S-2", "--resume-from", "S-1"), ("-s/--story", "--resume-from"))


# ---------------------------------------------------------------- several problems at once


BROKEN_SPECS = {
    "epic-1/story-1.1-a.md": spec(),
    "epic-1/story-1.1-b.md": spec(),  # 1.1 again
    "epic-2/story-1.2-c.md": spec(),  # in epic-2/
    "epic-1/story-1.3-d.md": spec('["9.9"]'),  # no 9.9
    "epic-1/story-1.4-e.md": "---\nstatus: pending\n\n# Never closed\n",
}
BROKEN_SPECS_PROBLEMS = (
    ("specs/epic-1/story-1.1-b.md", "story 1.1 is also in specs/epic-1/story-1.1-a.md"),
    ("specs/epic-2/story-1.2-c.md", "story 1.2 is in epic-2/"),
    ("specs/epic-1/story-1.3-d.md:4:", "depends_on names 9.9"),
    ("specs/epic-1/story-1.4-e.md:1:", "no closing ---"),
)


def test_run_says_how_many_more_problems_and_validate_lists_them_all(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    stories(project, BROKEN_SPECS)

    line = _run_refused(project, ralph, ralph_env, (), ("specs/epic-",))
    assert "(and 3 more problems; all of them: ralph validate)" in line
    assert any(all(needle in line for needle in problem) for problem in BROKEN_SPECS_PROBLEMS), line

    before = snapshot(project)
    done = ralph("validate")  # as the line says

    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    for problem in BROKEN_SPECS_PROBLEMS:
        assert sum(all(needle in item for needle in problem) for item in lines) == 1, (problem, done.stdout)
    assert len(lines) == len(BROKEN_SPECS_PROBLEMS) + 1, done.stdout  # one line each, then the count
    assert lines[-1].startswith("4 problems in "), lines[-1]
    assert snapshot(project) == before

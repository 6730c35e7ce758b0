"""`python -m ralphloop.demo`: a real loop with the scripted agent over a small sample project.

It builds a throwaway git project in a temp folder, writes a three-story prd.json and a
script for the built-in scripted agent (one step per iteration: real files, real tests,
real commits; the second story's first attempt fails its tests and is saved, undone and retried), then runs the real
`ralph run` and shows what it left behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any

import yaml

STORIES = [
    ("STORY-001", "Slugify titles", "slugify('Hello, World!') == 'hello-world'"),
    ("STORY-002", "Count words", "word_count('a b  c') == 3; an empty string has 0 words"),
    ("STORY-003", "Title case", "title_case('the ralph loop') == 'The Ralph Loop'"),
]

SLUGIFY = '''import re


def slugify(text: str) -> str:
    """Lower-case words joined by hyphens."""
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))
'''
WORDS_BUGGY = """

def word_count(text: str) -> int:
    return len(text.split(" "))
"""
WORDS_FIXED = '''

def word_count(text: str) -> int:
    """Words separated by any run of whitespace."""
    return len(text.split())
'''
TITLE = '''

def title_case(text: str) -> str:
    """Each word capitalised."""
    return " ".join(word.capitalize() for word in text.split())
'''


def _test(name: str, body: str) -> str:
    return f"import unittest\n\nfrom textkit import *  # noqa: F403\n\n\nclass {name}(unittest.TestCase):\n{body}"


TEST_SLUG = _test(
    "SlugTest", "    def test_slug(self):\n        self.assertEqual(slugify('Hello, World!'), 'hello-world')\n"
)
TEST_WORDS = _test(
    "WordsTest",
    "    def test_words(self):\n        self.assertEqual(word_count('a b  c'), 3)\n"
    "        self.assertEqual(word_count(''), 0)\n",
)
TEST_TITLE = _test(
    "TitleTest", "    def test_title(self):\n        self.assertEqual(title_case('the ralph loop'), 'The Ralph Loop')\n"
)


def script(python: str) -> dict[str, Any]:
    """The scripted agent's plan: one entry per iteration."""
    tests = [[python, "-m", "unittest", "discover", "-s", "tests", "-t", "."]]
    return {
        "iterations": [
            {
                "write": {"textkit/__init__.py": SLUGIFY, "tests/__init__.py": "", "tests/test_slug.py": TEST_SLUG},
                "run": tests,
                "pass": "STORY-001",
                "progress": "Learned: the package is textkit/; tests run with unittest discover.",
                "commit": "feat(STORY-001): slugify",
                "say": "Implemented slugify; tests pass.\n<ralph>LEARN: unittest needs -t . to import textkit</ralph>",
            },
            {
                # A false claim, without running the tests: the loop checks prd.json, refuses it,
                # and the next prompt says so.
                "append": {"textkit/__init__.py": WORDS_BUGGY},
                "write": {"tests/test_words.py": TEST_WORDS},
                "say": "word_count is written, so the feature is done.\n<promise>COMPLETE</promise>",
            },
            {
                # An experiment, then the tests fail: the agent exits 1. ralph saves the attempt
                # (a git ref and a patch), puts the workspace back, and retries the story.
                "write": {"scratch/words_experiment.py": "print(len('a b  c'.split(' ')))\n"},
                "run": tests,
                "say": "Ran the tests for word_count.",
            },
            {
                "write": {"textkit/__init__.py": SLUGIFY + WORDS_FIXED},
                "run": [*tests, [python, "-m", "ralphloop", "signal", "learn", "split() handles runs of spaces"]],
                "pass": "STORY-002",
                "progress": "Learned: split() without an argument handles repeated and no whitespace.",
                "commit": "feat(STORY-002): word_count",
                "say": "Fixed word_count; tests pass.",
            },
            {
                "append": {"textkit/__init__.py": TITLE},
                "write": {"tests/test_title.py": TEST_TITLE},
                "run": tests,
                "pass": "STORY-003",
                "commit": "feat(STORY-003): title_case",
                "say": "All stories pass.\n<promise>COMPLETE</promise>",
            },
        ]
    }


def main() -> int:
    folder = tempfile.mkdtemp(prefix="ralph-demo-")
    project = os.path.join(folder, "textkit")
    os.makedirs(project)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "ralph demo",
        "GIT_AUTHOR_EMAIL": "demo@ralphloop.invalid",
        "GIT_COMMITTER_NAME": "ralph demo",
        "GIT_COMMITTER_EMAIL": "demo@ralphloop.invalid",
        "RALPH_HOME": os.path.join(folder, "ralph-home"),
    }
    ralph = [sys.executable, "-m", "ralphloop"]

    def sh(*argv: str, show: bool = False) -> None:
        if show:
            print(f"$ {' '.join(argv).replace(sys.executable + ' -m ralphloop', 'ralph')}", flush=True)
        subprocess.run(argv, cwd=project, env=env, check=True, stdout=None if show else subprocess.DEVNULL)

    print(f"Demo project: {project}\n", flush=True)
    with open(os.path.join(project, "README.md"), "w", encoding="utf-8") as handle:
        handle.write("# textkit\n\nSmall text helpers, built by a ralph loop.\n")
    sh("git", "init", "-q", "-b", "main")
    sh("git", "add", "-A")
    sh("git", "commit", "-q", "-m", "initial commit")
    sh(*ralph, "init", "textkit", show=True)

    feature = os.path.join(project, ".ralph", "textkit")
    with open(os.path.join(feature, "prd.json"), encoding="utf-8") as handle:
        prd = json.load(handle)
    prd["description"] = "Small text helpers with tests."
    prd["userStories"] = [
        {
            "id": sid,
            "title": title,
            "description": "",
            "acceptanceCriteria": [check, "Unit tests pass"],
            "priority": n,
            "passes": False,
            "notes": "",
        }
        for n, (sid, title, check) in enumerate(STORIES, start=1)
    ]
    with open(os.path.join(feature, "prd.json"), "w", encoding="utf-8") as handle:
        json.dump(prd, handle, indent=2)
    with open(os.path.join(feature, "script.yaml"), "w", encoding="utf-8") as handle:
        yaml.safe_dump(script(sys.executable), handle, sort_keys=False, width=200)
    sh("git", "add", "-A")
    sh("git", "commit", "-q", "-m", "plan: textkit stories")

    # --no-archive: a completed feature moves into .ralph/archive/; here it stays, for `status` and `monitor` below
    print("$ ralph run -f textkit --agent scripted -n 10 --no-archive\n", flush=True)
    run = [*ralph, "run", "-f", "textkit", "--agent", "scripted", "-n", "10", "--no-archive"]
    done = subprocess.run(run, cwd=project, env=env, check=False)
    print()
    sh("git", "log", "--oneline", show=True)
    print()
    sh("git", "for-each-ref", "refs/ralph", show=True)  # the failed attempt, kept after it was undone
    print()
    sh(*ralph, "status", show=True)
    print()
    sh(*ralph, "monitor", show=True)  # the live monitor, after the fact: its completion summary
    print(
        f"\nEverything is in {project} (progress: .ralph/textkit/progress.txt, logs: .ralph/textkit/logs/).\n"
        "Watch a run live: ralph run --monitor (tmux), or ralph monitor in a second terminal. Without\n"
        "--no-archive, a run that completes moves its feature into .ralph/archive/<time>-<feature>/."
    )
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())

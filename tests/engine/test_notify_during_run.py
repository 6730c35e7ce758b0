"""Notifications while a run goes on, in-process: runs built as `ralph run` builds them with the notifier subscribed
as the CLI subscribes it (harness.run(notify=True)), their agents played back. A story done reaches a loopback
ntfy-style receiver through apprise (`ntfy://127.0.0.1:PORT/TOPIC`) and the plain webhook before the next iteration
ends; a blocked stop is needs_input with the agent's last words; a question at a usage limit is told while it waits.
Secrets kept out of a real run's output and files, `--dry-run` and `ralph validate`, and URLs without apprise are
tests/integration/test_notify_during_run.py's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ralphloop.core.runner import Launch
from tests.conftest import write_prd
from tests.engine.harness import Turn, Turns, run
from tests.engine.test_notify import notify_config, on_path
from tests.engine.test_usage_ask import LIMITED, WORKER
from tests.integration.helpers import wait_until
from tests.receiver import NO_PROXY, Receiver, receiving

TOPIC = "ralph-feat-7c1e"


@pytest.fixture
def receiver(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    """A loopback receiver, with no proxy for a loopback request whatever the environment names."""
    on_path(monkeypatch, NO_PROXY)
    with receiving() as server:
        yield server


def test_story_done_and_complete_reach_ntfy_and_the_webhook_during_the_run(
    project: Path, feature: Path, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    write_prd(feature, 2)
    notify_config(
        project,
        "desktop: false",
        f"webhook: {receiver.url}",
        f"urls: [{receiver.ntfy(TOPIC)}]",
        "on: [story_done, complete]",
    )

    def both_came_in(launch: Launch) -> None:  # tests/agents/step_agent.py's "await" (it exits 3 when it times out)
        assert wait_until(lambda: len(receiver.requests) >= 2, limit=60), receiver.requests

    # Iteration 2 goes on only once S-1's notification came in on both channels (else the run fails).
    agent = Turns(
        Turn(write={"one.txt": "1\n"}, passes=["S-1"]),
        Turn(first=both_came_in, write={"two.txt": "2\n"}, passes=["S-2"]),
    )

    done = run(project, agent, notify=True)

    assert done.outcome.reason.exit_code == 0, done.screen
    assert "warning" not in capsys.readouterr().err
    assert [(item["topic"], item["title"], item["message"]) for item in receiver.published()] == [
        (TOPIC, "ralph · feat: done", "S-1 passes · 1/2 stories"),
        (TOPIC, "ralph · feat: done", "S-2 passes · 2/2 stories"),
        (TOPIC, "ralph · feat: complete", "complete — 2/2 stories in 2 iterations"),
    ]
    hooks = receiver.webhook()
    assert [(body["event"], body["text"]) for body in hooks] == [
        ("story_done", "ralph: feat: S-1 passes · 1/2 stories"),
        ("story_done", "ralph: feat: S-2 passes · 2/2 stories"),
        ("complete", "ralph: feat complete — 2/2 stories in 2 iterations"),
    ]
    assert [(body["taskId"], body["iteration"]) for body in hooks[:2]] == [("S-1", 1), ("S-2", 2)]
    assert {body["featureDir"] for body in hooks} == {str(feature)}


def test_a_blocked_stop_needs_your_input_and_says_the_agents_last_words(
    project: Path, feature: Path, receiver: Receiver
) -> None:
    config = project / ".ralph" / "config.yaml"
    config.write_text(config.read_text().replace("\nblocked_threshold: 3\n", "\nblocked_threshold: 1\n"))
    notify_config(project, "desktop: false", f"webhook: {receiver.url}")
    blocked = (
        "I cannot reach the staging database.\n\n---RALPH_STATUS---\nSTATUS: BLOCKED\nEXIT_SIGNAL: false\n"
        "RECOMMENDATION: Need the staging DB password\n---END_RALPH_STATUS---\n"
    )

    done = run(project, Turns(then=Turn(say=blocked)), n=5, notify=True)

    assert done.outcome.reason.exit_code == 1, done.screen
    [body] = receiver.webhook()
    assert (body["event"], body["reason"], body["title"]) == (
        "needs_input",
        "blocked",
        "ralph · feat: needs your input",
    )
    assert "I cannot reach the staging database" in body["lastMessage"]
    assert body["text"].endswith(f"— the agent's last words: {body['lastMessage']}")


def test_a_question_at_a_usage_limit_is_notified_while_it_waits_for_the_answer(
    project: Path, feature: Path, receiver: Receiver
) -> None:
    notify_config(project, "desktop: false", f"webhook: {receiver.url}", "on: [needs_input, usage_limit]")
    asked: list[str] = []

    def exit_once_told(question: str, timeout: float) -> str:
        asked.append(question)
        # nobody has answered yet: the phone already says the loop waits for its user
        assert wait_until(lambda: any(body["event"] == "needs_input" for body in receiver.webhook()))
        return "exit"

    done = run(project, Turns(LIMITED, then=WORKER), n=3, ask=exit_once_told, notify=True)

    assert done.outcome.reason.exit_code == 2, done.screen
    assert len(asked) == 1, asked
    events = [body["event"] for body in receiver.webhook()]
    assert events[:2] == ["usage_limit", "needs_input"], events  # the limit (with its reset), then the question
    limited = receiver.webhook()[0]
    assert "2030-01-01T00:00:00Z" in json.dumps(limited), limited

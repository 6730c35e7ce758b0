"""analyze(): every protocol read from the agent's own text, the claim rules, to_json(), and `ralph signal` records."""

from __future__ import annotations

import json

import pytest

from ralphloop.analysis.promise import PROMISE
from ralphloop.analysis.signals import (
    MAX_TAGS,
    Analysis,
    Failure,
    SignalRecord,
    analyze,
    claims_complete,
    with_records,
)
from tests.conftest import ANALYZE_JSON_KEYS

REQUIRED_KEYS = set(ANALYZE_JSON_KEYS)


def block(*fields: str) -> str:
    return "---RALPH_STATUS---\n" + "\n".join(fields) + "\n---END_RALPH_STATUS---\n"


def json_result(status: str) -> str:
    return f'```json\n{{"status": "{status}"}}\n```\n'


# ------------------------------------------------------------------ to_json


def test_to_json_has_the_documented_keys_and_serialises() -> None:
    data = analyze("anything").to_json()
    assert set(data) >= REQUIRED_KEYS
    assert json.loads(json.dumps(data)) == data


def test_to_json_of_an_empty_reply() -> None:
    data = analyze("").to_json()
    assert data["completion_claimed"] is False
    assert data["exit_signal"] is None
    assert data["status"] is None
    assert data["done_ids"] == data["failed"] == data["learnings"] == data["signals"] == []
    assert data["json_status"] is None
    assert data["confidence"] == 0
    assert data["asking_questions"] is False


@pytest.mark.parametrize(("value", "expected"), [("true", True), ("false", False), ("perhaps", None)])
def test_to_json_exit_signal_is_true_false_or_null(value: str, expected: bool | None) -> None:
    data = analyze(block(f"EXIT_SIGNAL: {value}")).to_json()
    assert data["exit_signal"] is expected
    assert json.dumps(data["exit_signal"]) == {True: "true", False: "false", None: "null"}[expected]


def test_to_json_types_of_a_full_reply() -> None:
    text = (
        block(
            "STATUS: IN_PROGRESS",
            "TASKS_COMPLETED_THIS_LOOP: 2",
            "FILES_MODIFIED: 5",
            "TESTS_STATUS: FAILING",
            "WORK_TYPE: IMPLEMENTATION",
            "EXIT_SIGNAL: false",
            "RECOMMENDATION: fix the failing test",
        )
        + "<ralph>DONE S-1</ralph><ralph>FAIL S-2: flaky</ralph><ralph>LEARN: use tox</ralph>\n"
        + json_result("continue")
    )
    data = analyze(text).to_json()
    assert {key: data[key] for key in REQUIRED_KEYS} == {
        "completion_claimed": False,
        "exit_signal": False,
        "status": "IN_PROGRESS",
        "tasks_completed": 2,
        "files_modified": 5,
        "tests_status": "FAILING",
        "work_type": "IMPLEMENTATION",
        "recommendation": "fix the failing test",
        "done_ids": ["S-1"],
        "failed": [{"id": "S-2", "reason": "flaky"}],
        "learnings": ["use tox"],
        "json_status": "continue",
        "confidence": 0,
        "asking_questions": False,
        "signals": ["status_block", "ralph_tags", "json_result"],
    }


# ------------------------------------------------------------------ what a claim is


@pytest.mark.parametrize(
    ("text", "sources"),
    [
        (PROMISE, ["promise"]),
        (block("EXIT_SIGNAL: true"), ["EXIT_SIGNAL: true"]),
        (block("STATUS: COMPLETE"), ["STATUS: COMPLETE"]),
        (block("STATUS: COMPLETE", "EXIT_SIGNAL: true"), ["EXIT_SIGNAL: true"]),
        (block("STATUS: IN_PROGRESS", "EXIT_SIGNAL: true"), ["EXIT_SIGNAL: true"]),
        (block("STATUS: COMPLETE", "EXIT_SIGNAL: false"), []),
        (block("STATUS: COMPLETE", "EXIT_SIGNAL: maybe"), ["STATUS: COMPLETE"]),
        (block("STATUS: BLOCKED", "EXIT_SIGNAL: false"), []),
        (json_result("goal-complete"), ["JSON goal-complete"]),
        (json_result("continue"), []),
        (json_result("needs-human"), []),
        (
            PROMISE + "\n" + block("STATUS: COMPLETE") + json_result("goal-complete"),
            ["promise", "STATUS: COMPLETE", "JSON goal-complete"],
        ),
        # a promise is a claim even beside an explicit not-done
        (PROMISE + "\n" + block("STATUS: IN_PROGRESS", "EXIT_SIGNAL: false"), ["promise"]),
        ("All tasks are complete. Nothing left to do. Ready for review.", []),
    ],
)
def test_completion_claimed_and_its_sources(text: str, sources: list[str]) -> None:
    analysis = analyze(text)
    assert list(analysis.claim_sources) == sources
    assert analysis.completion_claimed is bool(sources)
    assert claims_complete(text) is bool(sources)
    if sources:
        assert analysis.confidence == 100
    else:
        assert analysis.confidence < 100


def test_not_done_and_blocked_properties() -> None:
    blocked = analyze(block("STATUS: BLOCKED", "RECOMMENDATION: need the DB password"))
    assert (blocked.blocked, blocked.blocked_reason, blocked.not_done) == (True, "need the DB password", True)
    assert blocked.to_json()["blocked_reason"] == "need the DB password"
    bare = analyze(block("STATUS: BLOCKED"))
    assert bare.blocked_reason == "the agent reported STATUS: BLOCKED without a reason"
    assert analyze("hello").to_json()["blocked_reason"] is None
    assert analyze(json_result("continue")).not_done is True
    assert analyze(block("EXIT_SIGNAL: false")).not_done is True
    assert analyze(block("STATUS: COMPLETE")).not_done is False


def test_needs_human() -> None:
    text = '```json\n{"status": "needs-human", "humanNeeded": {"reason": "No key", "details": "set KEY"}}\n```\n'
    assert analyze(text).needs_human == "No key (set KEY)"
    assert analyze('```json\n{"status": "needs-human", "summary": "stuck"}\n```\n').needs_human == "stuck"
    assert analyze('```json\n{"status": "needs-human"}\n```\n').needs_human == "no reason given"
    assert analyze(json_result("continue")).needs_human is None
    assert analyze(json_result("continue")).to_json()["human_needed"] is None


# ------------------------------------------------------------------ tags


def test_tags_are_bounded_and_done_ids_deduplicated() -> None:
    text = "".join(f"<ralph>DONE S-{i}</ralph>" for i in range(MAX_TAGS + 50))
    text += "".join(f"<ralph>LEARN: l{i}</ralph><ralph>FAIL F-{i}: r</ralph>" for i in range(MAX_TAGS + 50))
    analysis = analyze(text)
    assert analysis.done_ids == tuple(f"S-{i}" for i in range(MAX_TAGS))
    assert len(analysis.learnings) == MAX_TAGS
    assert len(analysis.failed) == MAX_TAGS
    repeated = analyze("<ralph>DONE S-1</ralph><ralph>DONE S-2</ralph><ralph>DONE S-1</ralph>")
    assert repeated.done_ids == ("S-1", "S-2")


def test_tag_keyword_in_any_case_and_body_whitespace_folded() -> None:
    analysis = analyze(
        "<ralph>Done S-1</ralph>\n<ralph>learn:\n\n  a   b\n</ralph>\n<ralph> FAIL  S-2 :  why\n</ralph>"
    )
    assert analysis.done_ids == ("S-1",)
    assert analysis.learnings == ("a b",)
    assert analysis.failed == (Failure("S-2", "why"),)


def test_an_empty_learn_is_dropped_and_an_empty_done_has_no_id() -> None:
    analysis = analyze("<ralph>LEARN:   </ralph><ralph>DONE</ralph>")
    assert analysis.learnings == ()
    assert analysis.done_ids == ()


def test_tag_ids_keep_dots_slashes_and_hashes() -> None:
    assert analyze("<ralph>DONE feature/S-1.2#3</ralph>").done_ids == ("feature/S-1.2#3",)


def test_a_tag_split_by_a_terminal_escape_still_counts() -> None:
    assert analyze("<ral\x1b[1mph>DONE S-1</ralph>").done_ids == ("S-1",)


# ------------------------------------------------------------------ quotations


@pytest.mark.parametrize(
    "text",
    [
        f"`{PROMISE}`",
        f"``{PROMISE}``",
        f"```{PROMISE}```",
        f"Some `code` and `{PROMISE}` here",
        f"```\n{PROMISE}\n```",
        f"~~~\n{PROMISE}\n~~~",
        f"```json\n{PROMISE}\n```",
    ],
)
def test_a_quoted_promise_is_counted_as_a_quotation(text: str) -> None:
    analysis = analyze(text)
    assert analysis.completion_claimed is False
    assert analysis.quotations_ignored == 1
    assert analysis.signals == ()


def test_a_prompt_line_quoting_a_tag_is_a_quotation() -> None:
    prompt = "Mark each story with <ralph>DONE id</ralph> when it passes.\nThen stop."
    analysis = analyze("Mark each story with <ralph>DONE id</ralph> when it passes.\nWorking on it.", prompt)
    assert analysis.done_ids == ()
    assert analysis.quotations_ignored == 1
    assert analysis.echo_removed is False


def test_a_status_block_copied_from_the_prompt_is_its_example_not_the_agents() -> None:
    prompt = "Print:\n" + block("STATUS: COMPLETE", "EXIT_SIGNAL: true")
    analysis = analyze("I copied it:\n" + block("STATUS: COMPLETE", "EXIT_SIGNAL: true"), prompt)
    assert analysis.status is None
    assert analysis.completion_claimed is False


def test_an_own_block_before_a_copied_example_is_the_last_own_block() -> None:
    prompt = "Print:\n" + block("STATUS: COMPLETE", "EXIT_SIGNAL: true")
    reply = (
        block("STATUS: IN_PROGRESS", "EXIT_SIGNAL: false")
        + "The example was:\n"
        + block("STATUS: COMPLETE", "EXIT_SIGNAL: true")
    )
    analysis = analyze(reply, prompt)
    assert (analysis.status, analysis.exit_signal) == ("IN_PROGRESS", False)


# ------------------------------------------------------------------ huge and hostile replies


def test_a_huge_reply_is_read_to_its_end() -> None:
    filler = "Implemented part of S-1 and updated `src/app.py`.\n" * 200_000  # about 10 MB
    text = filler + "\n" + block("STATUS: COMPLETE", "FILES_MODIFIED: 9", "EXIT_SIGNAL: true") + PROMISE + "\n"
    analysis = analyze(text)
    assert analysis.promise is True
    assert (analysis.status, analysis.to_json()["files_modified"], analysis.exit_signal) == ("COMPLETE", 9, True)
    assert analysis.claim_sources == ("promise", "EXIT_SIGNAL: true")


def test_a_huge_reply_full_of_quoted_signals_claims_nothing() -> None:
    text = f"Never print `{PROMISE}` early; mark with `<ralph>DONE id</ralph>`.\n\n" * 100_000
    analysis = analyze(text)
    assert analysis.completion_claimed is False
    assert analysis.done_ids == ()
    assert analysis.quotations_ignored > 0


def test_a_huge_reply_of_open_tags_and_markers() -> None:
    text = "<ralph>" * 300_000 + "RALPH_STATUS" * 100_000 + "`" * 100_000 + "-" * 1_000_000 + "\n" + PROMISE
    analysis = analyze(text)
    assert analysis.promise is True
    assert analysis.block is None
    assert analysis.done_ids == ()


# ------------------------------------------------------------------ `ralph signal` records


def test_no_records_changes_nothing() -> None:
    analysis = analyze("[DONE] work")
    assert with_records(analysis, []) is analysis


@pytest.mark.parametrize(
    ("record", "check"),
    [
        (SignalRecord("complete", 3), lambda a: a.completion_claimed and a.claim_sources == ("ralph signal complete",)),
        (SignalRecord("blocked", 3, text="no creds"), lambda a: a.blocked and a.blocked_reason == "no creds"),
        (SignalRecord("blocked", 3), lambda a: a.blocked_reason == "blocked (no reason given)"),
        (SignalRecord("done", 3, id="S-7"), lambda a: a.done_ids == ("S-7",)),
        (SignalRecord("fail", 3, id="S-8", text="flaky"), lambda a: a.failed == (Failure("S-8", "flaky"),)),
        (SignalRecord("fail", 3, id="S-8"), lambda a: a.failed == (Failure("S-8", "no reason given"),)),
        (SignalRecord("learn", 3, text="use make"), lambda a: a.learnings == ("use make",)),
    ],
)
def test_each_record_kind_counts_like_a_tag(record: SignalRecord, check: object) -> None:
    analysis = with_records(analyze("plain reply"), [record])
    assert callable(check)
    assert check(analysis)
    assert analysis.signals == ("signal_file",)


def test_a_complete_record_makes_confidence_100_and_shows_in_to_json() -> None:
    analysis = with_records(analyze("Should I stop?\n" + block("STATUS: IN_PROGRESS")), [SignalRecord("complete")])
    data = analysis.to_json()
    assert data["completion_claimed"] is True
    assert data["claim_sources"] == ["ralph signal complete"]
    assert data["confidence"] == 100
    assert data["signals"] == ["status_block", "signal_file"]


def test_records_add_to_tags_without_duplicates() -> None:
    analysis = analyze("<ralph>DONE S-1</ralph><ralph>LEARN: a</ralph><ralph>FAIL S-3: x</ralph>")
    merged = with_records(
        analysis,
        [
            SignalRecord("done", id="S-1"),
            SignalRecord("done", id="S-2"),
            SignalRecord("done", id=""),
            SignalRecord("learn", text="b"),
            SignalRecord("learn", text=""),
            SignalRecord("fail", id="S-4", text="y"),
        ],
    )
    assert merged.done_ids == ("S-1", "S-2")
    assert merged.learnings == ("a", "b")
    assert merged.failed == (Failure("S-3", "x"), Failure("S-4", "y"))
    assert merged.signals == ("ralph_tags", "signal_file")


def test_signal_file_is_named_once_however_often_records_are_merged() -> None:
    once = with_records(analyze("x"), [SignalRecord("learn", text="a")])
    twice = with_records(once, [SignalRecord("learn", text="b")])
    assert twice.signals == ("signal_file",)
    assert twice.learnings == ("a", "b")


def test_records_are_bounded() -> None:
    records = [SignalRecord("done", id=f"S-{i}") for i in range(MAX_TAGS + 20)]
    records += [SignalRecord("learn", text=f"l{i}") for i in range(MAX_TAGS + 20)]
    merged = with_records(analyze("x"), records)
    assert len(merged.done_ids) == MAX_TAGS
    assert len(merged.learnings) == MAX_TAGS


def test_a_done_or_fail_record_clears_the_legacy_fallback() -> None:
    assert with_records(analyze("[DONE]"), [SignalRecord("done", id="S-1")]).legacy is None
    assert with_records(analyze("[DONE]"), [SignalRecord("fail", id="S-1")]).legacy is None
    assert with_records(analyze("[DONE]"), [SignalRecord("learn", text="x")]).legacy == "done"


def test_records_keep_the_text_analysis() -> None:
    analysis = analyze(block("STATUS: IN_PROGRESS", "FILES_MODIFIED: 2") + json_result("continue"))
    merged = with_records(analysis, [SignalRecord("learn", text="x")])
    assert isinstance(merged, Analysis)
    assert (merged.status, merged.to_json()["files_modified"], merged.json_status) == ("IN_PROGRESS", 2, "continue")
    assert merged.completion_claimed is False


# ------------------------------------------------------------------ bugs found by these tests, fixed


def long_changed_files_list(pad: int, files: int = 300) -> str:
    """A realistic reply: one markdown list (no blank line) of files in inline code, then a quoted promise."""
    lines = "".join(f"- `src/pkg/module_{i:03d}.py`: updated imports\n" for i in range(files))
    return "Changed files:\n" + lines + "x" * pad + f"Not done: I will print `{PROMISE}` when S-3 passes.\n"


def test_a_quoted_promise_after_a_short_list_of_files_does_not_count() -> None:
    for pad in range(30):
        assert claims_complete(long_changed_files_list(pad, files=100)) is False


def test_a_quoted_promise_after_a_long_list_of_files_does_not_count() -> None:
    assert claims_complete(long_changed_files_list(5)) is False


def test_a_real_promise_after_a_long_paragraph_of_inline_code_counts() -> None:
    assert claims_complete("`a` " * 2048 + " " + PROMISE + " `b` done") is True


def test_the_prompts_example_block_fenced_in_the_reply_is_not_a_claim() -> None:
    prompt = "When every story passes, print:\n```\n" + block("STATUS: COMPLETE", "EXIT_SIGNAL: true") + "```\n"
    reply = "The format I must use at the end:\n\n```\n" + block("STATUS: COMPLETE", "EXIT_SIGNAL: true") + "```\n"
    assert claims_complete(reply, prompt) is False


def test_every_quoted_promise_is_counted_even_beside_a_real_one() -> None:
    analysis = analyze(f"The rule is `{PROMISE}`. All stories pass.\n{PROMISE}")
    assert analysis.promise is True
    assert analysis.quotations_ignored == 1


def test_a_tag_in_a_fenced_block_is_counted_as_a_quotation() -> None:
    analysis = analyze("```\n<ralph>DONE S-1</ralph>\n[DONE]\n```\n")
    assert analysis.done_ids == ()
    assert analysis.quotations_ignored == 2


def test_a_fenced_status_block_followed_by_other_text_is_a_quotation() -> None:
    text = "```\n" + block("STATUS: COMPLETE", "EXIT_SIGNAL: true") + "Print this once every story passes.\n```\n"
    assert claims_complete(text) is False


def test_signals_do_not_name_legacy_tags_once_a_record_replaced_them() -> None:
    merged = with_records(analyze("[DONE]"), [SignalRecord("done", id="S-1")])
    assert merged.legacy is None
    assert "legacy_tags" not in merged.signals

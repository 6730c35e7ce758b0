"""The aider backend's parser over real aider 0.86.2 output (tests/fixtures/aider/), and over output built from
aider's own line shapes where a hostile reply or a broken stream is the point."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from ralphloop.agents.aider.activity import readable_lines, sniff_text
from ralphloop.agents.aider.parser import AiderTextParser
from ralphloop.agents.text import KEEP_BYTES
from ralphloop.core.protocols import AgentResult, ErrorKind, ProcessOutcome, TokenUsage

FIXTURES = Path(__file__).parents[2] / "fixtures" / "aider"
NOW = datetime(2026, 11, 20, 23, 4, tzinfo=UTC)
BANNER = (
    b"Aider v0.86.2\nMain model: openai/gpt-4o with diff edit format\nWeak model: gpt-4o-mini\n"
    b"Git repo: .git with 3 files\nRepo-map: using 4096 tokens, auto refresh\n\n"
)
TOKENS = b"Tokens: 2.4k sent, 25 received. Cost: $0.0063 message, $0.0063 session.\n"
DONE = ProcessOutcome(exit_code=0, duration_s=1.0)


def run(name: str, *, chunk: int = 0, model: str | None = "openai/gpt-4o") -> AgentResult:
    folder = FIXTURES / name
    stdout = (folder / "stdout").read_bytes()
    parser = AiderTextParser(NOW, model=model)
    for start in range(0, len(stdout), chunk or len(stdout) or 1):
        parser.feed(stdout[start : start + (chunk or len(stdout))])
    code = int((folder / "rc").read_text())
    return parser.finish(ProcessOutcome(exit_code=code, duration_s=1.0, stderr_tail=(folder / "stderr").read_text()))


def parse(*pieces: bytes, outcome: ProcessOutcome = DONE, model: str | None = None) -> AgentResult:
    parser = AiderTextParser(NOW, model=model)
    for piece in pieces:
        parser.feed(piece)
    return parser.finish(outcome)


@pytest.mark.parametrize("chunk", [0, 1, 7])
def test_a_reply_gives_its_text_tokens_cost_and_the_model_of_the_banner(chunk: int) -> None:
    result = run("mock_ok", chunk=chunk, model=None)
    assert not result.failed and result.error is None and result.error_kind is None
    # What followed aider's banner: the reply and aider's usage report, not the start-up noise before it.
    assert result.final_text == (
        "Hello from mock. <promise>COMPLETE</promise>\n"
        "Tokens: 2.4k sent, 11 received. Cost: $0.0061 message, $0.0061 session."
    )
    assert result.usage == TokenUsage(input_tokens=2400, output_tokens=11)
    assert result.tokens == 2411 and result.cost_usd == 0.0061 and result.num_turns == 1
    assert result.model == "openai/gpt-4o"  # from "Main model: openai/gpt-4o with diff edit format"


@pytest.mark.parametrize(
    ("name", "kind", "words"),
    [
        ("mock_auth_401", ErrorKind.AUTH, "Incorrect API key provided"),
        ("mock_no_key", ErrorKind.AUTH, "OPENAI_API_KEY environment variable"),
        ("mock_insufficient_quota", ErrorKind.BILLING, "You exceeded your current quota"),
        ("mock_rate_limit_429", ErrorKind.RATE_LIMITED, "Please try again in 20s"),
        ("mock_server_500", ErrorKind.OVERLOADED, "The server had an error"),
        ("mock_connection_refused", ErrorKind.NETWORK, "Connection error"),
        ("mock_model_404", ErrorKind.BAD_MODEL, "The model `gpt-nope` does not exist"),
    ],
)
def test_aider_exits_0_on_each_failure_and_its_own_text_gives_the_kind(name: str, kind: ErrorKind, words: str) -> None:
    assert (FIXTURES / name / "rc").read_text().strip() == "0"
    result = run(name)
    assert result.failed and result.is_error and result.error_kind is kind
    assert result.error is not None and words in result.error
    assert result.usage is None and result.cost_usd is None and result.usage_limit is None


def test_only_the_last_error_block_is_read_not_the_retries_before_it() -> None:
    result = run("mock_rate_limit_429")
    assert result.error is not None and result.error.count("Rate limit reached") == 1
    assert "Retrying" not in result.error


def test_a_model_unknown_to_aider_is_the_one_of_the_banner() -> None:
    result = run("mock_model_404", model="openai/gpt-nope")
    assert result.model == "openai/gpt-nope"  # "Model: openai/gpt-nope with whole edit format"


def test_an_error_the_model_quotes_in_its_reply_is_not_a_failure() -> None:
    reply = (
        b"The log said:\n"
        b"litellm.AuthenticationError: AuthenticationError: OpenAIException - Incorrect API key provided\n"
        b"The API provider is not able to authenticate you. Check your API key.\n"
        b"litellm.RateLimitError: RateLimitError: You exceeded your current quota\n"
    )
    result = parse(BANNER, reply, b"\n", TOKENS)
    assert not result.failed and result.error_kind is None and not result.is_error


def test_a_usage_limit_sentence_in_the_reply_is_not_a_limit() -> None:
    reply = b"You've hit your usage limit. Try again at 8pm.\nYou've hit your 5-hour limit \xc2\xb7 resets 8pm\n"
    result = parse(BANNER, reply, TOKENS)
    assert not result.failed and result.usage_limit is None and result.error_kind is None


def test_a_request_that_fails_after_a_finished_reply_fails_the_run() -> None:
    failure = (
        b"Applied edit to a.py\n"
        b"litellm.InternalServerError: InternalServerError: OpenAIException - Connection \nerror.\n"
        b"The API provider's servers are down or overloaded.\n"
    )
    result = parse(BANNER, b"Here is the fix.\n\n", TOKENS, failure)
    assert result.failed and result.error_kind is ErrorKind.NETWORK
    assert result.usage == TokenUsage(2400, 25) and result.cost_usd == 0.0063


def test_a_run_stopped_while_aider_waited_to_retry_is_a_timeout_not_an_api_error() -> None:
    waiting = (FIXTURES / "mock_server_500" / "stdout").read_bytes().split(b"Retrying in 4.0")[0]
    stopped = ProcessOutcome(exit_code=-15, duration_s=60.0, timed_out=True)
    result = parse(waiting, b"Retrying in 4.0 seconds...\n", outcome=stopped)
    assert result.failed and result.timed_out and result.error_kind is None
    assert result.error is not None and "aider was retrying: litellm.InternalServerError" in result.error


def test_a_clean_exit_without_any_reply_is_a_failed_attempt() -> None:
    for output in (b"", BANNER, b"\xff\xfe not aider \x00\n"):
        result = parse(output)
        assert result.failed and result.error_kind is None
        assert result.error is not None and "no usage report" in result.error


def test_aider_giving_up_on_its_edits_fails_the_attempt() -> None:
    for words in (b"Only 3 reflections allowed, stopping.", b"Model openai/gpt-4o has hit a token limit!"):
        result = parse(BANNER, b"reply\n", TOKENS, b"\n" + words + b"\n")
        assert result.failed and result.error_kind is None and result.error == f"aider gave up: {words.decode()}"


def test_a_non_zero_exit_says_so_with_stderr() -> None:
    outcome = ProcessOutcome(exit_code=2, duration_s=0.1, stderr_tail="aider: error: unrecognized arguments: --x")
    result = parse(b"", outcome=outcome)
    assert result.failed and result.error == "exit code 2: aider: error: unrecognized arguments: --x"


def test_tokens_with_the_cache_and_the_cost_on_the_next_line_are_summed_over_replies() -> None:
    first = b"Tokens: 12k sent, 1.5k cache write, 8.0k cache hit, 999 received.\nCost: $0.05 message, $0.05 session.\n"
    second = b"Tokens: 3.0k sent, 40 received. Cost: $0.01 message, $0.06 session.\n"
    result = parse(BANNER, b"one\n", first, b"two\n", second)
    assert result.usage == TokenUsage(
        input_tokens=12000 - 1500 - 8000 + 3000, output_tokens=1039, cache_creation_tokens=1500, cache_read_tokens=8000
    )
    assert result.cost_usd == 0.06 and result.num_turns == 2  # the session's cost: the whole run


def test_a_model_without_a_price_has_tokens_but_no_cost() -> None:
    result = parse(BANNER, b"done\n", b"Tokens: 2.3k sent, 12 received.\n")
    assert result.usage == TokenUsage(2300, 12) and result.cost_usd is None


def test_a_cost_line_in_the_reply_is_not_the_cost() -> None:
    result = parse(BANNER, b"Cost: $999 message, $999 session.\n", TOKENS)
    assert result.cost_usd == 0.0063


def test_hostile_output_keeps_the_last_mib_and_the_facts_after_it() -> None:
    flood = b"x" * (20 * 1024 * 1024) + b"\n"  # one 20 MB line: dropped whole, never held
    result = parse(
        BANNER, b"start\n", flood, b"y" * 3000 + b"\n", b"\x1b[31mred\x1b[0m <promise>COMPLETE</promise>\n", TOKENS
    )
    assert not result.failed and result.usage == TokenUsage(2400, 25)
    assert len(result.final_text.encode()) <= KEEP_BYTES + 8
    assert result.final_text.endswith("Tokens: 2.4k sent, 25 received. Cost: $0.0063 message, $0.0063 session.")
    many = b"line of the reply\n" * 200_000  # 3.6 MB in many lines
    result = parse(BANNER, many, TOKENS)
    assert len(result.final_text.encode()) <= KEEP_BYTES and result.usage == TokenUsage(2400, 25)


def test_invalid_utf8_and_a_line_cut_at_the_end() -> None:
    result = parse(BANNER, b"caf\xe9 \xff\n", b"Tokens: 1.0k sent, 5 received.")  # no newline at the end
    assert not result.failed and result.usage == TokenUsage(1000, 5)
    assert result.final_text.startswith("caf\ufffd \ufffd")


def test_only_the_first_banner_names_the_model() -> None:
    spoof = b"Aider v9.9.9\nModel: evil/model with whole edit format\n"
    result = parse(BANNER, spoof, TOKENS)
    assert result.model == "openai/gpt-4o"


def test_the_edit_being_written_is_the_live_activity() -> None:
    parser = AiderTextParser(NOW)
    seen = []
    reply = BANNER + (
        b"I will add it.\n\nsrc/app.py\n```\n<<<<<<< SEARCH\n=======\nprint(1)\n>>>>>>> REPLACE\n```\n\n"
        + TOKENS
        + b"\nsrc/app.py\nApplied edit to src/app.py\n"
    )
    for line in reply.splitlines(keepends=True):
        parser.feed(line)
        seen.append(parser.activity())
    assert "Edit: src/app.py" in seen and parser.activity() is None
    parser.feed((FIXTURES / "mock_server_500" / "stdout").read_bytes().split(b"Retrying in 1.0")[0])
    parser.feed(b"Retrying in 1.0 seconds...\n")
    assert parser.activity() == "Retrying in 1.0 s (InternalServerError)"
    assert parser.edited == ["src/app.py"]


def test_the_monitor_marks_aiders_own_lines_and_leaves_the_reply() -> None:
    shown = [
        readable_lines(line) for line in (FIXTURES / "mock_insufficient_quota" / "stdout").read_text().splitlines()
    ]
    marks = [mark for found in shown if found for mark in found]
    assert marks[0].startswith("⚠ RateLimitError: RateLimitError: OpenAIException - You exceeded your")
    assert "↻ retrying in 0.2 s" in marks
    assert readable_lines("Tokens: 2.4k sent, 11 received. Cost: $0.0061 message, $0.0061 session.") == [
        "■ reply done: 2.4k sent · 11 received · $0.0061 so far"
    ]
    assert readable_lines("Applied edit to src/a.py") == ["⚙ Edit: src/a.py"]
    assert readable_lines("Did not apply edit to a.py (--dry-run)") == ["⚙ Edit: a.py (dry run: not written)"]
    assert readable_lines("Hello from mock. <promise>COMPLETE</promise>") is None
    assert readable_lines('{"type":"assistant"}') is None
    assert readable_lines("litellm.exceptions.RateLimitError: words") is None  # a traceback's line
    assert readable_lines("litellm.completion: words") is None
    assert readable_lines("Applied edit to \x1b]0;title\x07a.py") == ["⚙ Edit: a.py"]


@pytest.mark.parametrize("name", sorted(path.name for path in FIXTURES.iterdir() if path.is_dir()))
def test_every_capture_is_known_for_aiders_and_nothing_else_is(name: str) -> None:
    assert sniff_text((FIXTURES / name / "stdout").read_text().splitlines()[:50])


def test_the_sniff_wants_the_banner_on_two_whole_lines() -> None:
    assert not sniff_text(["Aider v0.86.2"])
    assert not sniff_text(["I ran Aider v0.86.2", "Main model: x with diff edit format"])
    assert not sniff_text(["Aider v0.86.2", "", "Main model: x with diff edit format"])
    assert not sniff_text(['{"type":"thread.started"}', "plain text"])
    assert sniff_text(["Aider v0.86.2", "Model: ollama/llama3 with whole edit format"])


def test_escapes_and_controls_never_reach_the_activity_or_the_error() -> None:
    parser = AiderTextParser(NOW)
    parser.feed(BANNER + b"\x1b]0;owned\x07src/\x1b[2Ja\x07pp.py\n```\n<<<<<<< SEARCH\n")
    assert parser.activity() == "Edit: src/app.py"
    error = b"litellm.AuthenticationError: AuthenticationError: bad \x1b[31mkey\x1b[0m\x07\n"
    result = parse(BANNER, error)
    assert result.error is not None and "\x1b" not in result.error and "\x07" not in result.error
    assert "bad key" in result.error


def test_an_error_aider_did_not_expect_still_fails_the_run_after_its_traceback() -> None:
    generic = (
        b'Traceback (most recent call last):\n  File "x.py", line 1, in send\n'
        b"litellm.exceptions.PermissionDeniedError: litellm.PermissionDeniedError: 403 Forbidden\n"
        b"litellm.PermissionDeniedError: PermissionDeniedError: 403 Forbidden\n"
    )
    result = parse(BANNER, b"partial", b"\n", generic)
    assert result.failed and result.is_error and result.error_kind is ErrorKind.AUTH
    assert result.error is not None and "PermissionDeniedError: 403 Forbidden" in result.error
    unknown = parse(BANNER, b"litellm.OddballError: something new\n")
    assert unknown.failed and unknown.error_kind is None
    assert unknown.error == "aider reported an error: litellm.OddballError: something new"

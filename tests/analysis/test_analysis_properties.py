"""Properties: analysis never crashes and always serialises, saved outputs always read, quotations never claim."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ralphloop.agents import saved
from ralphloop.analysis.promise import PROMISE
from ralphloop.analysis.signals import analyze, claims_complete
from ralphloop.analysis.text import MIN_ECHO, normalise

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Pieces of real replies, so random text reaches every parser (tags, blocks, fences, JSON) rather than only prose.
SIGNAL_PIECES = [
    PROMISE,
    "<promise> COMPLETE </promise>",
    "<promise>",
    "</promise>",
    "<ralph>DONE S-1</ralph>",
    "<ralph>FAIL S-2: flaky</ralph>",
    "<ralph>LEARN: a\nb</ralph>",
    "<ralph>",
    "</ralph>",
    "[DONE]",
    "[FAIL]",
    "---RALPH_STATUS---\n",
    "---END_RALPH_STATUS---\n",
    "RALPH_STATUS:\n",
    "STATUS: COMPLETE\n",
    "STATUS: IN_PROGRESS\n",
    "**EXIT_SIGNAL:** true\n",
    "EXIT_SIGNAL: false\n",
    "TESTS_STATUS: PASSING\n",
    "FILES_MODIFIED: 3\n",
    "WORK_TYPE: TESTING\n",
    "RECOMMENDATION: go on\n",
    "```\n",
    "```json\n",
    "~~~\n",
    "````\n",
    "`",
    "``",
    '{"status": "goal-complete"}\n',
    '{"status": "continue", "pendingSteps": [{"id": null, "prompt": "p"}]}\n',
    '{"status": ',
    "\n\n",
    "\r\n",
    "\x1b[31m",
    "All tasks are complete. ",
    "Nothing left to do. ",
    "Should I continue? ",
    "I ran the tests. ",
]

signalish_text = st.lists(st.one_of(st.sampled_from(SIGNAL_PIECES), st.text(max_size=30)), max_size=25).map("".join)
any_text = st.one_of(st.text(max_size=2000), signalish_text)


def check_invariants(text: str, prompt: str = "") -> None:
    analysis = analyze(text, prompt)
    data = analysis.to_json()
    assert json.loads(json.dumps(data)) == data
    assert data["completion_claimed"] is bool(data["claim_sources"])
    assert 0 <= data["confidence"] <= 100
    assert (data["confidence"] == 100) is data["completion_claimed"]
    assert data["exit_signal"] in (True, False, None)
    assert data["quotations_ignored"] >= 0
    assert claims_complete(text, prompt) is data["completion_claimed"]


@FAST
@given(text=any_text)
def test_analyze_never_raises_on_any_text(text: str) -> None:
    check_invariants(text)


@FAST
@given(data=st.binary(max_size=3000))
def test_analyze_never_raises_on_any_bytes(data: bytes) -> None:
    check_invariants(data.decode("utf-8", errors="replace"))


@FAST
@given(text=any_text, prompt=any_text)
def test_analyze_never_raises_with_any_prompt(text: str, prompt: str) -> None:
    check_invariants(text, prompt)
    check_invariants(prompt + text, prompt)


@FAST
@given(data=st.binary(max_size=2000), prompt=st.binary(max_size=300))
def test_analyze_never_raises_on_bytes_with_a_prompt_echo(data: bytes, prompt: bytes) -> None:
    decoded_prompt = prompt.decode("utf-8", errors="replace")
    check_invariants(decoded_prompt + data.decode("utf-8", errors="replace"), decoded_prompt)


@FAST
@given(text=signalish_text)
def test_a_verbatim_echo_of_the_reply_as_prompt_leaves_no_signal(text: str) -> None:
    """When the reply is nothing but the prompt echoed back, nothing in it is the agent's own
    (a prompt shorter than MIN_ECHO is not taken for an echo: a few words could be anywhere)."""
    analysis = analyze(text, text)
    if len(normalise(text).strip()) >= MIN_ECHO:
        assert analysis.completion_claimed is False
        assert analysis.done_ids == ()
        assert analysis.block is None


# ------------------------------------------------------------------ saved outputs


jsonish_bytes = st.lists(
    st.one_of(
        st.sampled_from(
            [
                b'{"type":"result","result":"x"}\n',
                b'{"type":"assistant","message":{"content":[{"type":"text","text":"t"}]}}\n',
                b'{"type":"item.completed","item":{"type":"agent_message","text":"m"}}\n',
                b'{"type":"thread.started"}\n',
                b"[stderr] ",
                b"\n",
                b"{",
                b'"result":',
                b"\xff",
            ]
        ),
        st.binary(max_size=40),
    ),
    max_size=30,
).map(b"".join)


@FAST
@given(data=st.one_of(st.binary(max_size=3000), jsonish_bytes), cut=st.integers(min_value=1, max_value=64))
def test_saved_never_raises_on_any_bytes_in_any_format(data: bytes, cut: int) -> None:
    fmt = saved.detect(data)
    assert fmt in saved.FORMATS
    chunks = [data[i : i + cut] for i in range(0, len(data), cut)]
    for each in saved.FORMATS:
        text = saved.final_text(iter(chunks), each)
        assert isinstance(text, str)
        check_invariants(text)


# ------------------------------------------------------------------ a quotation never claims

# Whole units that are balanced on their own: fences closed, inline code paired, status blocks complete.
UNITS = [
    "I implemented S-1.\n",
    "All tasks are complete.\n",
    "Run `make test` first.\n",
    "Use ``a ` b`` here.\n",
    "\n",
    "[DONE]\n",
    "<ralph>DONE S-1</ralph>\n",
    "<promise>complete</promise>\n",
    "```python\nprint(1)\n```\n",
    "~~~\nquoted\n~~~\n",
    "```json\n" + '{"status": "continue"}' + "\n```\n",
    "```json\n" + '{"status": "needs-human", "humanNeeded": {"reason": "r"}}' + "\n```\n",
    "---RALPH_STATUS---\nSTATUS: IN_PROGRESS\nEXIT_SIGNAL: false\n---END_RALPH_STATUS---\n",
    "---RALPH_STATUS---\nSTATUS: COMPLETE\nEXIT_SIGNAL: false\n---END_RALPH_STATUS---\n",
    "RALPH_STATUS:\nSTATUS: BLOCKED\nTESTS_STATUS: PASSING\n\n",
    "RALPH_STATUS:\n**STATUS**: IN_PROGRESS\n",
]
# Free prose without the characters that make code (backticks, tildes) or escape introducers that swallow the
# next character (ESC, CSI, OSC): with those, an inserted quotation can legitimately pair with the prose's own.
plain_prose = st.text(
    alphabet=st.characters(blacklist_characters="`~\x1b\x9b\x9d\r", blacklist_categories=("Cs",)), max_size=40
).map(lambda text: text.replace("\n", " ") + "\n")
units = st.lists(st.one_of(st.sampled_from(UNITS), plain_prose), max_size=12)

FENCED_PROMISES = [
    f"```\n{PROMISE}\n```\n",
    f"```markdown\nEnd with {PROMISE}\n```\n",
    f"~~~\n{PROMISE}\n~~~\n",
    f"````\n```\n{PROMISE}\n```\n````\n",
    f"   ```\n   {PROMISE}\n   ```\n",
    f"```text\n---RALPH_STATUS---\n{PROMISE}\n```\n",
]
INLINE_PROMISES = [
    f"`{PROMISE}`",
    f"``{PROMISE}``",
    f"``` {PROMISE} ```",
    f"`` `{PROMISE}` ``",
    f"`end with\n{PROMISE}\nonly when done`",
]


@settings(max_examples=300, deadline=None)
@given(
    parts=units,
    where=st.integers(min_value=0),
    quotation=st.sampled_from(FENCED_PROMISES),
)
def test_adding_a_fenced_promise_never_makes_a_claim(parts: list[str], where: int, quotation: str) -> None:
    before = "".join(parts)
    if claims_complete(before):
        return
    index = where % (len(parts) + 1)
    after = "".join([*parts[:index], quotation, *parts[index:]])
    analysis = analyze(after)
    assert analysis.completion_claimed is False, after
    assert analysis.promise is False


@settings(max_examples=300, deadline=None)
@given(
    parts=units,
    where=st.integers(min_value=0),
    quotation=st.sampled_from(INLINE_PROMISES),
    sentence=st.sampled_from(["{q}\n", "The rule: {q} only when done.\n", "- {q}\n", "Not yet {q}, S-2 fails.\n"]),
)
def test_adding_inline_code_with_a_promise_never_makes_a_claim(
    parts: list[str], where: int, quotation: str, sentence: str
) -> None:
    before = "".join(parts)
    if claims_complete(before):
        return
    index = where % (len(parts) + 1)
    after = "".join([*parts[:index], sentence.format(q=quotation), *parts[index:]])
    analysis = analyze(after)
    assert analysis.completion_claimed is False, after
    assert analysis.promise is False


@settings(max_examples=200, deadline=None)
@given(parts=units, where=st.integers(min_value=0), quotation=st.sampled_from(FENCED_PROMISES + INLINE_PROMISES))
def test_a_quoted_promise_changes_nothing_but_the_quotation_count(parts: list[str], where: int, quotation: str) -> None:
    """The same quotation with or without a promise in it gives the same analysis, bar quotations_ignored."""
    index = where % (len(parts) + 1)
    inert = quotation.replace(PROMISE, "<promise>COMPLETX</promise>")
    with_promise = analyze("".join([*parts[:index], "\n", quotation, "\n", *parts[index:]])).to_json()
    without = analyze("".join([*parts[:index], "\n", inert, "\n", *parts[index:]])).to_json()
    assert with_promise.pop("quotations_ignored") == without.pop("quotations_ignored") + 1
    assert with_promise == without

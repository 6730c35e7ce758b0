"""claims_complete: the promise counts only in the agent's own text, outside quotations."""

from __future__ import annotations

import pytest

from ralphloop.analysis.promise import PROMISE
from ralphloop.analysis.signals import claims_complete, own_text


def test_promise_value() -> None:
    assert PROMISE == "<promise>COMPLETE</promise>"


@pytest.mark.parametrize(
    "text",
    [
        "<promise>COMPLETE</promise>",
        "All stories pass.\n\n<promise>COMPLETE</promise>\n",
        "Done: <promise>COMPLETE</promise> and nothing else.",
        "Quoted `elsewhere` but done.\n<promise>COMPLETE</promise>",
    ],
)
def test_promise_in_plain_text_counts(text: str) -> None:
    assert claims_complete(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Story S-1 done; S-2 is next.",
        "<promise>INCOMPLETE</promise>",
        "<promise>complete</promise>",
        "I must not print `<promise>COMPLETE</promise>` yet.",
        "The rule says: end with `<promise>COMPLETE</promise>` only when done.\nStill working.",
    ],
)
def test_no_promise_outside_code_does_not_count(text: str) -> None:
    assert not claims_complete(text)


def test_promise_inside_a_fenced_block_does_not_count() -> None:
    text = "Here is the rule I follow:\n```\nend with <promise>COMPLETE</promise>\n```\nStill working on S-2.\n"
    assert not claims_complete(text)


def test_promise_inside_a_fenced_block_with_a_language_does_not_count() -> None:
    text = "```markdown\n<promise>COMPLETE</promise>\n```\n"
    assert not claims_complete(text)


def test_promise_after_a_fenced_block_counts() -> None:
    text = "```\nprint('hi')\n```\nAll done.\n<promise>COMPLETE</promise>\n"
    assert claims_complete(text)


def test_promise_only_in_an_echo_of_the_prompt_does_not_count() -> None:
    prompt = "Work on S-1.\nIf every story passes, end your reply with <promise>COMPLETE</promise>.\n"
    output = prompt + "\nI implemented part of S-1; S-2 remains."
    assert not claims_complete(output, prompt)
    # Without knowing the prompt, the echo looks like a claim: the prompt argument is what removes it.
    assert claims_complete(output)


def test_promise_after_an_echo_of_the_prompt_counts() -> None:
    prompt = "If every story passes, end your reply with <promise>COMPLETE</promise>."
    output = prompt + "\nEverything passes.\n<promise>COMPLETE</promise>"
    assert claims_complete(output, prompt)


def test_own_text_removes_only_a_verbatim_echo() -> None:
    prompt = "  the prompt text, long enough to be taken for an echo\n"
    echoed = own_text("before the prompt text, long enough to be taken for an echo after", prompt)
    assert (echoed.prose, echoed.fenced, echoed.echo_removed) == ("before \n after", [], True)
    other = own_text("something else", prompt)
    assert (other.prose, other.fenced, other.echo_removed) == ("something else", [], False)
    plain = own_text("anything", "")
    assert (plain.prose, plain.fenced, plain.echo_removed) == ("anything", [], False)
    # a near echo (one word changed) is not removed
    assert own_text("before the  prompt text after", prompt).echo_removed is False


def test_own_text_splits_prose_from_fenced_blocks() -> None:
    own = own_text("intro\n```py\nprint(1)\n```\noutro")
    assert [(segment.text, segment.info, segment.closed) for segment in own.fenced] == [("print(1)\n", "py", True)]
    assert "print(1)" not in own.prose
    assert own.prose.startswith("intro") and own.prose.endswith("outro")


@pytest.mark.parametrize(
    "text",
    [
        # CommonMark inline code may use any run of backticks as its delimiter.
        "The rule: ``<promise>COMPLETE</promise>`` only when done. Still working.",
        # Fences may be made of tildes.
        "~~~\n<promise>COMPLETE</promise>\n~~~\nStill working.\n",
        # Fences may be indented up to three spaces, as inside a list item.
        "1. The rule I follow:\n   ```\n   <promise>COMPLETE</promise>\n   ```\n2. S-2 is still open.\n",
    ],
    ids=["double-backtick-inline-code", "tilde-fence", "indented-fence-in-a-list"],
)
def test_promise_in_other_markdown_code_forms_does_not_count(text: str) -> None:
    assert not claims_complete(text)


# ---------------------------------------------------------------- a configured promise (config `completion.promise`)

SHIPPED = "<promise>SHIPPED</promise>"


@pytest.mark.parametrize(
    ("promise", "text", "claimed"),
    [
        (SHIPPED, "All done.\n<promise>SHIPPED</promise>", True),
        (SHIPPED, "<promise> SHIPPED\t</promise>", True),  # spaces inside its tags, as the default allows
        (SHIPPED, "<promise>COMPLETE</promise>", False),  # the default is only words once another is named
        (SHIPPED, "<promise>SHIPPED NOT</promise>", False),
        ("ALL DONE", "Finished. ALL DONE", True),
        ("ALL DONE", "NOT ALL DONEYET", False),  # a word at either end must end there
        ("ALL DONE", "Not ALL DONE_yet", False),
        ("ALL DONE", "all done", False),  # as written, case included
        ("[[ship it]]", "ok [[ship it]]", True),
        (None, PROMISE, True),
        (PROMISE, "<promise> COMPLETE </promise>", True),
    ],
)
def test_a_configured_promise_is_the_one_looked_for(promise: str | None, text: str, claimed: bool) -> None:
    assert claims_complete(text, promise=promise) is claimed


@pytest.mark.parametrize(
    "text",
    [
        f"I will print `{SHIPPED}` when done.",
        f"> {SHIPPED}",
        f"<!-- {SHIPPED} -->",
        f'{{"say": "{SHIPPED}"}}',
        f"```\n{SHIPPED}\n```",
        f'The marker is "{SHIPPED}".',
    ],
)
def test_a_quoted_configured_promise_does_not_count(text: str) -> None:
    assert not claims_complete(text, promise=SHIPPED)


def test_a_prompt_line_naming_a_configured_promise_is_an_instruction_when_repeated() -> None:
    prompt = "Work on the story.\nWhen every story passes, end your reply with ALL SHIPPED.\n" + "x" * 60
    repeated = "When every story passes, end your reply with ALL SHIPPED.\nStill working."
    assert not claims_complete(repeated, prompt, promise="ALL SHIPPED")
    assert claims_complete("Everything passes.\nALL SHIPPED", prompt, promise="ALL SHIPPED")

"""Why a Claude Code run failed, from its structured fields first and its own sentences second.

The CLI reports API and auth failures as `subtype: "success"` with `is_error: true`; the
reason is in the synthetic assistant event's `error` code, the `api_error_status`, the
result's `subtype` and `errors`, and only then in the text. Each kind comes with a one-line
message that says what to do, because the loop shows it as the reason it stopped or waited.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ralphloop.agents.api_errors import Rule, api_says, classify_by, classify_line, last_line, sentence_kind, transient
from ralphloop.core.protocols import ErrorKind
from ralphloop.words.textsafe import one_line


@dataclass(frozen=True, slots=True)
class Facts:
    """What the parser gathered about a failed run."""

    text: str = ""  # the CLI's own error message (result.result of an is_error result); never the agent's prose
    subtype: str = ""
    errors: tuple[str, ...] = ()  # result.errors
    error_code: str = ""  # the synthetic assistant event's `error` (authentication_failed, rate_limit ...)
    api_error: str = ""  # result.api_error (usage_limit_reached, connection_failed ...)
    api_status: int | None = None  # api_error_status
    api_type: str = ""  # api_error_type (overloaded_error, not_found_error ...)
    stderr: str = ""
    max_turns: int | None = None  # what ralph asked for, to name it in the message


_ROOT = re.compile(r"cannot be used with root/sudo privileges", re.IGNORECASE)
_NO_SESSION = re.compile(r"No conversation found with session ID", re.IGNORECASE)
_AUTH_TEXT = re.compile(
    r"Not logged in|Invalid API key|invalid x-api-key|OAuth token (?:has )?expired|Please run /login|"
    r"authentication_error|Invalid bearer token",
    re.IGNORECASE,
)
_BILLING_TEXT = re.compile(r"Credit balance is too low|billing_error", re.IGNORECASE)
_MODEL_TEXT = re.compile(r"issue with the selected model|model_not_found|model: \S+ (?:is )?not found", re.IGNORECASE)
_NETWORK_TEXT = re.compile(
    r"Can't reach the API server|Connection error|ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN|"
    r"socket hang up|fetch failed|Request timed out",
    re.IGNORECASE,
)
_OVERLOADED_TEXT = re.compile(r"\b529\b|Overloaded|overloaded_error|Internal server error|\b50[0234]\b", re.IGNORECASE)
_RATE_TEXT = re.compile(
    r"Request rejected \(429\)|rate_limit_error|\b429\b|Rate limit reached|temporarily limiting requests", re.IGNORECASE
)


# What the screen says of each transient kind: the loop adds "retrying in Ns (attempt n/10)".
_TRANSIENT = api_says("the Anthropic API")
_SAYS = {kind: f"{says}: {{said}}" for kind, says in _TRANSIENT.items()}
_AUTH_SAYS = (
    "Claude Code cannot authenticate ({said}). Fix: run `claude` and log in with /login, or set ANTHROPIC_API_KEY "
    "(CLAUDE_CODE_OAUTH_TOKEN for a subscription)"
)
_MODEL_SAYS = (
    "the model is not available ({said}). Fix: choose another with --model (haiku, sonnet, opus or a full name) or "
    "agent.model in .ralph/config.yaml"
)

# Claude Code's failures, in the order they are told apart: the first row that matches names the kind. Its codes
# are the result's "subtype:…", "api_error:…" and "type:…" (api_error_type), the synthetic assistant event's
# "error:…", and "sentence:<kind>" for the kind its own "API Error: …" sentence states (sentence_kind). When the CLI
# said nothing, a row shows the structured field it names instead ({code}, {status}, ...).
RULES = (
    Rule(
        ErrorKind.REFUSED,
        _ROOT,
        "Claude Code refuses --dangerously-skip-permissions when run as root: run ralph as a normal user, or, only "
        "inside a throwaway container or VM, set IS_SANDBOX=1",
        stderr=True,
    ),
    Rule(
        ErrorKind.MAX_TURNS,
        None,
        "Claude Code ran out of turns{limit}: {said}",
        codes=("subtype:error_max_turns",),
        unsaid="error_max_turns",
    ),
    Rule(
        ErrorKind.BUDGET,
        None,
        "Claude Code reached its cost limit: {said}",
        codes=("subtype:error_max_budget_usd",),
        unsaid="error_max_budget_usd",
    ),
    Rule(ErrorKind.RESUME, _NO_SESSION, "the session to resume is gone: {said}", stderr=True, unsaid="{stderr}"),
    Rule(
        ErrorKind.AUTH,
        _AUTH_TEXT,
        _AUTH_SAYS,
        statuses=(401, 403),
        codes=("error:authentication_failed", "type:authentication_error"),
        unsaid="{code_or_status}",
    ),
    Rule(
        ErrorKind.BILLING,
        _BILLING_TEXT,
        "Claude Code cannot bill this account ({said}). Fix: add credits to the API account, or log in with a "
        "subscription",
        codes=("error:billing_error",),
        unsaid="{code}",
    ),
    Rule(ErrorKind.BAD_MODEL, _MODEL_TEXT, _MODEL_SAYS, codes=("error:model_not_found",), unsaid="{code}"),
    Rule(ErrorKind.BAD_MODEL, None, _MODEL_SAYS, statuses=(404,), only=("type:not_found_error",), unsaid="{code}"),
    Rule(
        ErrorKind.NETWORK,
        _NETWORK_TEXT,
        _SAYS[ErrorKind.NETWORK],
        codes=("api_error:connection_failed",),
        unsaid="{api_error}",
    ),
    Rule(
        ErrorKind.OVERLOADED,
        None,
        _SAYS[ErrorKind.OVERLOADED],
        statuses=range(500, 600),
        codes=("type:overloaded_error",),
        unsaid="{status}",
    ),
    # A usage limit is a 429 rate_limit_error too: the parser has ruled it out (its event, its sentence) by now.
    Rule(
        ErrorKind.RATE_LIMITED,
        None,
        _SAYS[ErrorKind.RATE_LIMITED],
        statuses=(429,),
        codes=("error:rate_limit", "type:rate_limit_error"),
        unsaid="{status}",
    ),
    Rule(ErrorKind.OVERLOADED, None, _SAYS[ErrorKind.OVERLOADED], codes=("error:server_error",), unsaid="{code}"),
    # Without structured fields (older versions), the kind the CLI's own sentence states: its exact shapes first
    # ("API Error: 500 {...}", "API Error: Rate limit reached"), then its words anywhere in that sentence.
    *(Rule(kind, None, says, codes=(f"sentence:{kind.value}",)) for kind, says in _SAYS.items()),
    Rule(ErrorKind.OVERLOADED, _OVERLOADED_TEXT, _SAYS[ErrorKind.OVERLOADED]),
    Rule(ErrorKind.RATE_LIMITED, _RATE_TEXT, _SAYS[ErrorKind.RATE_LIMITED]),
)


def classify(facts: Facts) -> tuple[ErrorKind, str] | None:
    """The kind of failure and a one-line message with the fix, or None when it is none of these
    (an ordinary failed attempt: the task's problem, not the service's)."""
    said = _said(facts)
    found = classify_by(
        RULES, said, facts.api_status, codes=_codes(facts, said), stderr=facts.stderr, facts=_shown(facts)
    )
    return found or _last_stderr_line(facts.stderr)


def _codes(facts: Facts, said: str) -> tuple[str, ...]:
    """What the CLI stated besides its words, spelled as RULES' codes."""
    sentence = sentence_kind(said)
    return (
        f"subtype:{facts.subtype}",
        f"error:{facts.error_code}",
        f"api_error:{facts.api_error}",
        f"type:{facts.api_type}",
        *((f"sentence:{sentence.value}",) if sentence is not None else ()),
    )


def _shown(facts: Facts) -> dict[str, str]:
    """The structured fields a row shows when the CLI said nothing, and the turn limit ralph asked for."""
    return {
        "limit": f" (claude.max_turns: {facts.max_turns})" if facts.max_turns else "",
        "code": facts.error_code,
        "status": str(facts.api_status),
        "code_or_status": str(facts.error_code or facts.api_status),
        "api_error": facts.api_error,
        "stderr": one_line(facts.stderr),
    }


def _last_stderr_line(stderr: str) -> tuple[ErrorKind, str] | None:
    """On stderr, only the exact shape on the last line: stderr is the CLI's, but a hook's output may end up there."""
    found = classify_line(last_line(stderr))
    return transient(_TRANSIENT, *found) if found is not None else None


def _said(facts: Facts) -> str:
    """The CLI's own sentence about the failure, on one line."""
    for candidate in (facts.text, *reversed(facts.errors)):
        if candidate and candidate.strip():
            return one_line(candidate, 300)
    return ""

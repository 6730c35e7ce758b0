"""Why a Claude Code run failed, from its structured fields first and its own sentences second.

The CLI reports API and auth failures as `subtype: "success"` with `is_error: true`; the
reason is in the synthetic assistant event's `error` code, the `api_error_status`, the
result's `subtype` and `errors`, and only then in the text. Each kind comes with a one-line
message that says what to do, because the loop shows it as the reason it stopped or waited.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ralphloop.agents.api_errors import api_says, classify_line, last_line, sentence_kind, transient
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


def classify(facts: Facts) -> tuple[ErrorKind, str] | None:
    """The kind of failure and a one-line message with the fix, or None when it is none of these
    (an ordinary failed attempt: the task's problem, not the service's)."""
    said = _said(facts)
    everything = f"{said}\n{facts.stderr}"
    if _ROOT.search(everything):
        return ErrorKind.REFUSED, (
            "Claude Code refuses --dangerously-skip-permissions when run as root: run ralph as a normal user, "
            "or, only inside a throwaway container or VM, set IS_SANDBOX=1"
        )
    if facts.subtype == "error_max_turns":
        limit = f" (claude.max_turns: {facts.max_turns})" if facts.max_turns else ""
        return ErrorKind.MAX_TURNS, f"Claude Code ran out of turns{limit}: {said or 'error_max_turns'}"
    if facts.subtype == "error_max_budget_usd":
        return ErrorKind.BUDGET, f"Claude Code reached its cost limit: {said or 'error_max_budget_usd'}"
    if _NO_SESSION.search(everything):
        return ErrorKind.RESUME, f"the session to resume is gone: {said or one_line(facts.stderr)}"
    code, status, kind = facts.error_code, facts.api_status, facts.api_type
    refused_key = code == "authentication_failed" or status in (401, 403) or kind == "authentication_error"
    if refused_key or _AUTH_TEXT.search(said):
        return ErrorKind.AUTH, (
            f"Claude Code cannot authenticate ({said or code or status}). Fix: run `claude` and log in with /login, "
            "or set ANTHROPIC_API_KEY (CLAUDE_CODE_OAUTH_TOKEN for a subscription)"
        )
    if code == "billing_error" or _BILLING_TEXT.search(said):
        return ErrorKind.BILLING, (
            f"Claude Code cannot bill this account ({said or code}). Fix: add credits to the API account, "
            "or log in with a subscription"
        )
    if code == "model_not_found" or (status == 404 and kind == "not_found_error") or _MODEL_TEXT.search(said):
        return ErrorKind.BAD_MODEL, (
            f"the model is not available ({said or code}). Fix: choose another with --model (haiku, sonnet, opus "
            "or a full name) or agent.model in .ralph/config.yaml"
        )
    if facts.api_error == "connection_failed" or _NETWORK_TEXT.search(said):
        return transient(_TRANSIENT, ErrorKind.NETWORK, said or facts.api_error)
    if status == 529 or kind == "overloaded_error" or (status is not None and 500 <= status < 600):
        return transient(_TRANSIENT, ErrorKind.OVERLOADED, said or str(status))
    # A usage limit is a 429 rate_limit_error too: the parser has ruled it out (its event, its sentence) by now.
    if status == 429 or code == "rate_limit" or kind == "rate_limit_error":
        return transient(_TRANSIENT, ErrorKind.RATE_LIMITED, said or str(status))
    if code == "server_error":
        return transient(_TRANSIENT, ErrorKind.OVERLOADED, said or code)
    return _stated(said, facts.stderr)


# What the screen says of each transient kind: the loop adds "retrying in Ns (attempt n/10)".
_TRANSIENT = api_says("the Anthropic API")


def _stated(said: str, stderr: str) -> tuple[ErrorKind, str] | None:
    """Without structured fields (older versions), the kind the CLI's own sentence states: its exact shapes first
    ("API Error: 500 {...}", "API Error: Rate limit reached"), then its words anywhere in that sentence. On
    stderr, only the exact shape on the last line: stderr is the CLI's, but a hook's output may end up there."""
    kind = sentence_kind(said)
    if kind is None and _OVERLOADED_TEXT.search(said):
        kind = ErrorKind.OVERLOADED
    if kind is None and _RATE_TEXT.search(said):
        kind = ErrorKind.RATE_LIMITED
    if kind is not None:
        return transient(_TRANSIENT, kind, said)
    found = classify_line(last_line(stderr))
    return transient(_TRANSIENT, *found) if found is not None else None


def _said(facts: Facts) -> str:
    """The CLI's own sentence about the failure, on one line."""
    for candidate in (facts.text, *reversed(facts.errors)):
        if candidate and candidate.strip():
            return one_line(candidate, 300)
    return ""

"""Why an aider run failed, from the error aider printed last, never from the model's words.

Aider exits 0 when a request fails: it prints the litellm exception (`litellm.RateLimitError: RateLimitError:
OpenAIException - …`), its own description of the class, and goes on to exit normally. The parser hands this
module only that final error block (the lines from a `litellm.<Class>: ` line to the end of the output, after
the last usage report: a reply that quotes an error is always followed by its usage report). The class name is
the structured part and is read first; the provider's message, passed on by litellm, tells the rest apart: a
429 of a spent quota (OpenAI's insufficient_quota) is billing, not a rate limit, and an unreachable API shows up
as an InternalServerError whose message is "Connection error.".
"""

from __future__ import annotations

import re

from ralphloop.core.protocols import ErrorKind
from ralphloop.words.textsafe import one_line

_BILLING = re.compile(
    r"insufficient_quota|exceeded your current quota|check your plan and billing|credit balance is too low|"
    r"Insufficient credits|add more credits",
    re.IGNORECASE,
)
_MODEL = re.compile(
    r"model_not_found|The model `?[^`\s]+`? does not exist|model: \S+ not found|LLM Provider NOT provided|"
    r"Unknown model|model is not supported|unsupported model|invalid model",
    re.IGNORECASE,
)
_NETWORK = re.compile(
    r"Connection error|Connection (?:refused|reset)|Failed to establish a new connection|Name or service not known|"
    r"Temporary failure in name resolution|nodename nor servname|Network is unreachable|timed out",
    re.IGNORECASE,
)
_AUTH = re.compile(r"Incorrect API key|invalid[_ ]api[_ ]key|api_key client option must be set|Unauthorized", re.I)

# The classes that say it all; the others (APIError, BadRequestError, …) only with their message.
_BY_NAME = {
    "AuthenticationError": ErrorKind.AUTH,
    "PermissionDeniedError": ErrorKind.AUTH,  # a 403: not one of aider's classes, printed after a traceback
    "RateLimitError": ErrorKind.RATE_LIMITED,
    "RouterRateLimitError": ErrorKind.RATE_LIMITED,
    "APIConnectionError": ErrorKind.NETWORK,
    "Timeout": ErrorKind.NETWORK,
    "InternalServerError": ErrorKind.OVERLOADED,
    "ServiceUnavailableError": ErrorKind.OVERLOADED,
    "BadGatewayError": ErrorKind.OVERLOADED,
    "BudgetExceededError": ErrorKind.BUDGET,
}
# Classes whose message may name a spent quota, a bad key, an unreachable API or an unknown model.
_GENERIC = frozenset({"APIError", "BadRequestError", "OpenAIError", "InvalidRequestError"})
_SERVER = frozenset({"InternalServerError", "ServiceUnavailableError", "BadGatewayError", "APIConnectionError"})

_SAYS = {
    ErrorKind.AUTH: "the model's provider does not accept the API key aider sent ({said}). Fix: set the provider's "
    "key variable (OPENAI_API_KEY, ANTHROPIC_API_KEY, …) or aider's api-key setting",
    ErrorKind.BILLING: "the provider's account has no quota or credit left ({said}). Fix: add credits or raise "
    "the limit with the provider, or choose another model with --model",
    ErrorKind.BAD_MODEL: "the model is not available ({said}). Fix: choose another with --model or agent.model in "
    ".ralph/config.yaml (aider's name, e.g. openai/gpt-4o)",
    ErrorKind.RATE_LIMITED: "the model's API rate-limited the request (a short rate limit, not the usage limit): "
    "{said}",
    ErrorKind.OVERLOADED: "the model's API is overloaded or failing: {said}",
    ErrorKind.NETWORK: "the model's API cannot be reached: {said}",
    ErrorKind.BUDGET: "aider's own cost limit ran out ({said})",
}


def classify(name: str, said: str) -> tuple[ErrorKind, str] | None:
    """The kind of failure aider's final error states (`name`: the litellm class, `said`: the whole block), with
    a one-line message carrying the fix; None when it is none of these (a failed attempt: the task's problem)."""
    said = one_line(said, 300)
    kind = _kind(name, said)
    return None if kind is None else (kind, _SAYS[kind].format(said=said))


def _kind(name: str, said: str) -> ErrorKind | None:
    if _BILLING.search(said) and (name in _GENERIC or name == "RateLimitError"):
        return ErrorKind.BILLING
    if _AUTH.search(said) and name in _GENERIC:
        return ErrorKind.AUTH
    if _NETWORK.search(said) and (name in _GENERIC or name in _SERVER):
        return ErrorKind.NETWORK
    if name == "NotFoundError":
        # a 404 names the model it did not find; one that does not (a wrong API base) is a failed attempt
        return ErrorKind.BAD_MODEL if "model" in said.lower() else None
    if _MODEL.search(said) and name in _GENERIC:
        return ErrorKind.BAD_MODEL
    return _BY_NAME.get(name)

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

from ralphloop.agents.api_errors import Rule, classify_by
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

_NAMES_A_MODEL = re.compile("model", re.IGNORECASE)

# Classes whose message may name a spent quota, a bad key, an unreachable API or an unknown model.
_GENERIC = frozenset({"APIError", "BadRequestError", "OpenAIError", "InvalidRequestError"})
# Classes of a failing server, whose message may say it was never reached ("Connection error.").
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

# aider's failures, in the order they are told apart: the first row that matches names the kind. The code is the
# litellm class. The message is read first, in the classes whose message can tell another kind apart; then come the
# classes that say it all (the others, APIError, BadRequestError, …, say something only with their message).
RULES = (
    Rule(ErrorKind.BILLING, _BILLING, _SAYS[ErrorKind.BILLING], only=_GENERIC | {"RateLimitError"}),
    Rule(ErrorKind.AUTH, _AUTH, _SAYS[ErrorKind.AUTH], only=_GENERIC),
    Rule(ErrorKind.NETWORK, _NETWORK, _SAYS[ErrorKind.NETWORK], only=_GENERIC | _SERVER),
    # a 404 names the model it did not find; one that does not (a wrong API base) is a failed attempt
    Rule(ErrorKind.BAD_MODEL, _NAMES_A_MODEL, _SAYS[ErrorKind.BAD_MODEL], only=("NotFoundError",)),
    Rule(ErrorKind.BAD_MODEL, _MODEL, _SAYS[ErrorKind.BAD_MODEL], only=_GENERIC),
    Rule(
        ErrorKind.AUTH,
        None,
        _SAYS[ErrorKind.AUTH],
        codes=(
            "AuthenticationError",
            "PermissionDeniedError",  # a 403: not one of aider's classes, printed after a traceback
        ),
    ),
    Rule(ErrorKind.RATE_LIMITED, None, _SAYS[ErrorKind.RATE_LIMITED], codes=("RateLimitError", "RouterRateLimitError")),
    Rule(ErrorKind.NETWORK, None, _SAYS[ErrorKind.NETWORK], codes=("APIConnectionError", "Timeout")),
    Rule(
        ErrorKind.OVERLOADED,
        None,
        _SAYS[ErrorKind.OVERLOADED],
        codes=("InternalServerError", "ServiceUnavailableError", "BadGatewayError"),
    ),
    Rule(ErrorKind.BUDGET, None, _SAYS[ErrorKind.BUDGET], codes=("BudgetExceededError",)),
)


def classify(name: str, said: str) -> tuple[ErrorKind, str] | None:
    """The kind of failure aider's final error states (`name`: the litellm class, `said`: the whole block), with
    a one-line message carrying the fix; None when it is none of these (a failed attempt: the task's problem)."""
    return classify_by(RULES, one_line(said, 300), codes=(name,))

"""The aider backend's error classes, from the litellm class and message aider printed, and its account name."""

from __future__ import annotations

import hashlib

import pytest

from ralphloop.agents.aider.account import account, key_variable
from ralphloop.agents.aider.errors import classify
from ralphloop.core.protocols import ErrorKind

RATE = "The API provider has rate limited you. Try again later or check your quotas."
DOWN = "The API provider's servers are down or overloaded."


@pytest.mark.parametrize(
    ("name", "said", "kind"),
    [
        ("AuthenticationError", "OpenAIException - Incorrect API key provided: sk-fake.", ErrorKind.AUTH),
        ("RateLimitError", f"OpenAIException - Rate limit reached for gpt-4o. Please try again in 20s. {RATE}",
         ErrorKind.RATE_LIMITED),
        ("RateLimitError", f"You exceeded your current quota, please check your plan and billing details. {RATE}",
         ErrorKind.BILLING),
        ("BadRequestError", "AnthropicException - Your credit balance is too low to access the API", ErrorKind.BILLING),
        ("APIError", 'OpenrouterException - {"error":{"message":"Insufficient credits","code":402}}',
         ErrorKind.BILLING),
        ("InternalServerError", f"OpenAIException - The server had an error. {DOWN}", ErrorKind.OVERLOADED),
        ("ServiceUnavailableError", f"OpenAIException - Service Unavailable {DOWN}", ErrorKind.OVERLOADED),
        ("InternalServerError", f"OpenAIException - Connection error. {DOWN}", ErrorKind.NETWORK),
        ("APIConnectionError", "OpenAIException - something broke", ErrorKind.NETWORK),
        ("Timeout", "The API provider timed out without returning a response.", ErrorKind.NETWORK),
        ("NotFoundError", "OpenAIException - The model `gpt-nope` does not exist", ErrorKind.BAD_MODEL),
        ("BadRequestError", "LLM Provider NOT provided. Pass in the LLM provider you are trying to call.",
         ErrorKind.BAD_MODEL),
        ("BudgetExceededError", "Budget has been exceeded! Current cost: 1.2, Max budget: 1.0", ErrorKind.BUDGET),
    ],
)  # fmt: skip
def test_each_class_and_message_has_its_kind(name: str, said: str, kind: ErrorKind) -> None:
    found = classify(name, f"litellm.{name}: {name}: {said}")
    assert found is not None and found[0] is kind
    assert said.rsplit(" - ", maxsplit=1)[-1][:20] in found[1]


def test_other_failures_are_the_tasks() -> None:
    assert classify("ContentPolicyViolationError", "refused due to a safety policy") is None
    assert classify("ContextWindowExceededError", "too long") is None
    assert classify("NotFoundError", "OpenAIException - Unknown request URL: POST /v2/chat") is None  # no model
    assert classify("BadRequestError", "invalid temperature") is None
    assert classify("RateLimitError", "") is not None  # the class alone says it


def test_the_fix_is_named() -> None:
    auth = classify("AuthenticationError", "Incorrect API key")
    billing = classify("RateLimitError", "exceeded your current quota")
    model = classify("NotFoundError", "The model `x` does not exist")
    assert auth is not None and "OPENAI_API_KEY" in auth[1]
    assert billing is not None and "add credits" in billing[1]
    assert model is not None and "--model" in model[1]


def fingerprint(key: str) -> str:
    return "api-key:" + hashlib.sha256(key.encode()).hexdigest()[:12]


def test_the_account_is_the_models_providers_key_never_the_key_itself() -> None:
    env = {"OPENAI_API_KEY": "sk-openai-secret", "ANTHROPIC_API_KEY": "sk-ant-secret", "HOME": "/home/u"}
    assert account("openai/gpt-4o", env) == fingerprint("sk-openai-secret")
    assert account("gpt-4o", env) == fingerprint("sk-openai-secret")
    assert account("sonnet", env) == fingerprint("sk-ant-secret")
    assert account("anthropic/claude-sonnet-4-5", env) == fingerprint("sk-ant-secret")
    assert "secret" not in account("openai/gpt-4o", env)
    # No model: the key aider's own choice of a default model goes by (Anthropic's before OpenAI's).
    assert account(None, env) == fingerprint("sk-ant-secret")
    # No key for the model's provider: aider's folder (its OpenRouter login, .aider.conf.yml keys).
    assert account("gemini/gemini-2.5-pro", env) == "login:/home/u/.aider"
    assert account("ollama/llama3", env) == "login:/home/u/.aider"
    assert key_variable("ollama/llama3", env) is None
    assert key_variable("deepseek", env) == "DEEPSEEK_API_KEY"

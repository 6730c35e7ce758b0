"""The loopback fake of the OpenAI Chat Completions API on its own, over plain HTTP: what each CLI's runs rely on."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from tests.e2e.fake_openai_chat import (
    FAKE_API_KEY,
    Call,
    FakeOpenAIChat,
    HttpError,
    Message,
    ToolCalls,
    Turn,
    Usage,
    tool_call,
)

TOOLS = [{"type": "function", "function": {"name": "edit", "parameters": {"type": "object"}}}]


def call(fake: FakeOpenAIChat, method: str, path: str, body: Any = None) -> tuple[int, dict[str, str], bytes]:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"content-type": "application/json", "authorization": f"Bearer {FAKE_API_KEY}"}
    request = urllib.request.Request(fake.url + path, data, headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def sse(payload: bytes) -> tuple[list[dict[str, Any]], str]:
    """The JSON chunks of a streamed answer, and its last `data:` line (which must be `[DONE]`)."""
    datas = [line[6:] for line in payload.decode().splitlines() if line.startswith("data: ")]
    return [json.loads(data) for data in datas[:-1]], datas[-1]


def test_streamed_text_with_usage_and_the_request_recorded() -> None:
    with FakeOpenAIChat([Message("Hello there, this is longer than one piece.", Usage(120, 30, 100, 5))]) as fake:
        body = {
            "model": "m-1",
            "stream": True,
            "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": "hi"}],
            "tools": TOOLS,
        }
        status, headers, payload = call(fake, "POST", "/chat/completions", body)

    assert status == 200 and headers["Content-Type"] == "text/event-stream"
    chunks, last = sse(payload)
    assert last == "[DONE]"
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"} and {c["model"] for c in chunks} == {"m-1"}
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "Hello there, this is longer than one piece."
    assert len([c for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content")]) > 1
    *body_chunks, usage_chunk = chunks
    assert body_chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert all(c["usage"] is None for c in body_chunks)
    assert usage_chunk["choices"] == []
    assert usage_chunk["usage"] == {
        "prompt_tokens": 120,
        "completion_tokens": 30,
        "total_tokens": 150,
        "prompt_tokens_details": {"cached_tokens": 100},
        "completion_tokens_details": {"reasoning_tokens": 5},
    }
    [request] = fake.main_requests
    assert request.tool_names == ["edit"] and request.messages == [{"role": "user", "content": "hi"}]
    assert request.headers["authorization"] == f"Bearer {FAKE_API_KEY}"


def test_streamed_tool_calls_join_into_json_arguments_and_no_usage_unless_asked() -> None:
    arguments = {"path": "notes.md", "content": "a line that is much longer than sixteen characters\n"}
    turns = [ToolCalls((Call("edit", arguments), Call("bash", {"command": "ls"})), text="Editing.")]
    with FakeOpenAIChat(turns) as fake:
        _, _, payload = call(fake, "POST", "/chat/completions", {"model": "m", "stream": True, "tools": TOOLS})
        follow_up = call(fake, "POST", "/chat/completions", {"model": "m", "stream": True})

    chunks, _ = sse(payload)
    assert all("usage" not in c for c in chunks)
    calls: dict[int, dict[str, str]] = {}
    for c in chunks:
        for delta in c["choices"][0]["delta"].get("tool_calls", []):
            entry = calls.setdefault(delta["index"], {"id": "", "name": "", "arguments": ""})
            entry["id"] += delta.get("id", "")
            entry["name"] += delta.get("function", {}).get("name", "")
            entry["arguments"] += delta.get("function", {}).get("arguments", "")
    assert [calls[i]["name"] for i in sorted(calls)] == ["edit", "bash"]
    assert json.loads(calls[0]["arguments"]) == arguments and json.loads(calls[1]["arguments"]) == {"command": "ls"}
    assert calls[0]["id"] != calls[1]["id"]
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    follow_chunks, _ = sse(follow_up[2])
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in follow_chunks) == "Done."
    assert fake.pending == 0


def test_non_streaming_answer_and_the_model_a_reply_names() -> None:
    turns: list[Turn] = [tool_call("bash", {"command": "pwd"}, usage=Usage(10, 2)), Message("Final.", model="m-actual")]
    with FakeOpenAIChat(turns) as fake:
        first = json.loads(call(fake, "POST", "/v1/chat/completions", {"model": "m-asked", "messages": []})[2])
        second = json.loads(call(fake, "POST", "/v1/chat/completions", {"model": "m-asked", "messages": []})[2])

    assert first["object"] == "chat.completion" and first["model"] == "m-asked"
    [choice] = first["choices"]
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None
    [item] = choice["message"]["tool_calls"]
    assert item["type"] == "function" and item["function"]["name"] == "bash"
    assert json.loads(item["function"]["arguments"]) == {"command": "pwd"}
    assert first["usage"]["total_tokens"] == 12
    assert second["model"] == "m-actual" and second["choices"][0]["message"]["content"] == "Final."
    assert second["choices"][0]["finish_reason"] == "stop"


def test_errors_models_and_side_requests() -> None:
    turns: list[Turn] = [
        HttpError.rate_limited(retry_after=7),
        lambda request: Message(f"{len(request.messages)} messages"),
    ]
    with FakeOpenAIChat(turns, default=HttpError.insufficient_quota(), models=("a", "b"), headers={"x-n": "1"}) as fake:
        limited = call(fake, "POST", "/chat/completions", {"model": "m"})
        models = call(fake, "GET", "/models")
        unknown = call(fake, "POST", "/responses", {"model": "m"})
        counted = call(fake, "POST", "/chat/completions", {"model": "m", "messages": [{"role": "user"}] * 3})
        spent = call(fake, "POST", "/chat/completions", {"model": "m"})
        assert [r.is_main for r in fake.requests] == [True, False, False, True, True]

    assert limited[0] == 429 and limited[1]["retry-after"] == "7" and limited[1]["x-n"] == "1"
    assert json.loads(limited[2])["error"]["code"] == "rate_limit_exceeded"
    listing = json.loads(models[2])
    assert models[0] == 200 and [m["id"] for m in listing["data"]] == ["a", "b"] and listing["object"] == "list"
    assert unknown[0] == 404 and "error" in json.loads(unknown[2])
    assert json.loads(counted[2])["choices"][0]["message"]["content"] == "3 messages"
    assert spent[0] == 429 and json.loads(spent[2])["error"]["type"] == "insufficient_quota"

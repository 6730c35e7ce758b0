"""A ChatGPT login the real Codex CLI refreshes inside ralph's sandbox reaches the user's own `~/.codex/auth.json`
(issue 35, docs/sandbox.md "Logins"): its refresh token is used once, so a login refreshed in the box's home and not
written back would leave the user's own Codex logged out.

What Codex 0.169.0 does with a ChatGPT login (`auth_mode: chatgpt` in `$CODEX_HOME/auth.json`; openai/codex,
codex-rs/login/src/auth/manager.rs and token_data.rs, and seen here):
- It reads the JWTs' claims without checking a signature (`email`, `exp`, `https://api.openai.com/auth` with
  `chatgpt_plan_type`, `chatgpt_account_id`, `chatgpt_user_id`): unsigned JWTs do.
- It refreshes before a request when the access token's `exp` has passed (else when `last_refresh` is over 8 days
  old), and after two 401s in a row from the model API (the first makes it read auth.json again, the second
  refreshes). One refresh at a time, however many requests wait.
- The refresh is `POST` of `{"client_id", "grant_type": "refresh_token", "refresh_reason": "proactive_expiry" |
  "unauthorized_recovery", "refresh_token"}` to https://auth.openai.com/oauth/token, or to
  `CODEX_REFRESH_TOKEN_URL_OVERRIDE`; the answer's `id_token`, `access_token` and `refresh_token` replace the old
  ones and `last_refresh` becomes now. It writes auth.json anew (a temporary `.auth-XXXXXX` beside it, renamed over
  it, 0600) and leaves `auth.lock` and `auth.json.lock` there.
- A model provider of config.toml with `requires_openai_auth = true` gets that login's access token as its bearer
  (and `chatgpt-account-id`), as the built-in OpenAI provider does; `chatgpt_base_url` is where its side requests
  go (plugins, account checks, analytics), here the fake too (it answers them 404).

The only fakes are the vendor's: the Responses API (fake_openai.py) and OpenAI's token endpoint, which behaves as
the real one does: a refresh token is good once, and one presented again is refused (`refresh_token_reused`).
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import shutil
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ralphloop.processes.sandbox import cannot_start
from tests.conftest import RalphRunner, read_json
from tests.e2e.fake_openai import FakeOpenAI, HttpError, Message, shell
from tests.e2e.scripted_server import HttpRequest, ScriptedHandler, ScriptedServer
from tests.e2e.test_ralph_codex import MODEL, finish_all_stories, use_codex

pytestmark = [
    pytest.mark.skipif(
        shutil.which("bwrap") is None or cannot_start(shutil.which("bwrap") or "bwrap") is not None,
        reason="bubblewrap cannot run here (scripts/setup.sh installs it when run as root)",
    ),
    pytest.mark.timeout(900),  # the first Codex test pays for the npm install
]

ACCOUNT = "acct-fake"
REFRESH_URL_VARIABLE = "CODEX_REFRESH_TOKEN_URL_OVERRIDE"
# what the ChatGPT backend answers a bearer it no longer takes
UNAUTHORIZED = HttpError(401, {"error": {"message": "token expired", "type": "invalid_request_error"}})


def jwt(generation: int, expires: int) -> str:
    """An unsigned JWT of the login's `generation` (a claim of the test's own, to tell the tokens apart)."""
    claims = {
        "email": "user@example.invalid",
        "exp": expires,
        "generation": generation,
        "https://api.openai.com/auth": {
            "chatgpt_plan_type": "plus",
            "chatgpt_account_id": ACCOUNT,
            "chatgpt_user_id": "user-fake",
        },
    }

    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}.unsigned"


def generation_of(token: str) -> int:
    payload = token.split(".")[1]
    return int(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["generation"])


def chatgpt_login(expires: int) -> dict[str, Any]:
    """auth.json of a ChatGPT login (generation 1, refresh token rt-1), its access token good until `expires`."""
    return {
        "auth_mode": "chatgpt",
        "OPENAI_API_KEY": None,
        "tokens": {
            "id_token": jwt(1, expires),
            "access_token": jwt(1, expires),
            "refresh_token": "rt-1",
            "account_id": ACCOUNT,
        },
        "last_refresh": "2026-01-01T00:00:00Z",
    }


@dataclass(frozen=True, slots=True)
class TokenRequest(HttpRequest):
    """One request to the fake token endpoint."""

    @property
    def is_main(self) -> bool:
        return self.method == "POST" and self.route == "/oauth/token"


class FakeTokenEndpoint(ScriptedServer[TokenRequest, None]):
    """OpenAI's OAuth token endpoint as Codex refreshes a ChatGPT login with it: the live refresh token (rt-N) is
    taken once, for generation N+1 (rt-N+1, new JWTs good for an hour); any other is refused with a 401
    `refresh_token_reused`. `seen` keeps, for each refresh, the token presented and what `observe()` said then."""

    path = "/oauth/token"

    def __init__(self, observe: Callable[[], object]) -> None:
        super().__init__((), None)
        self.observe = observe
        self.seen: list[tuple[str, str, object]] = []  # (refresh_token, refresh_reason, observe())
        self._live = "rt-1"
        self._generation = 1
        self._granting = threading.Lock()

    def grant(self, body: Any) -> tuple[int, dict[str, Any]]:
        presented = str(body.get("refresh_token")) if isinstance(body, dict) else ""
        reason = str(body.get("refresh_reason")) if isinstance(body, dict) else ""
        with self._granting:
            self.seen.append((presented, reason, self.observe()))
            if presented != self._live:
                return 401, {"error": {"code": "refresh_token_reused", "message": "already used"}}
            self._generation += 1
            self._live = f"rt-{self._generation}"
            fresh = jwt(self._generation, int(time.time()) + 3600)
            return 200, {"id_token": fresh, "access_token": fresh, "refresh_token": self._live}


class _TokenHandler(ScriptedHandler):
    fake: FakeTokenEndpoint
    request_type = TokenRequest

    def _answer(self, request: TokenRequest, reply: None, raw: bytes) -> None:
        if not request.is_main:
            self._send_json(404, {"error": {"message": f"no route {self.command} {self.path}"}})
            return
        status, body = self.fake.grant(request.body)
        self._send_json(status, body)


FakeTokenEndpoint.handler = _TokenHandler


def host_of(url: str) -> str:
    return url.split("//", 1)[1].split("/", 1)[0]


def chatgpt_config(api: FakeOpenAI) -> str:
    """config.toml: the model API a provider that takes the ChatGPT login, ChatGPT's backend the fake's, and no
    usage metrics (with a ChatGPT login Codex sends them to Statsig, ab.chatgpt.com, which the box's proxy refuses:
    "blocked: ab.chatgpt.com:443" in each iteration's notes)."""
    root = api.url.rsplit("/v1", 1)[0]
    return (
        f'model = "{MODEL}"\n'
        'model_provider = "chatgpt_fake"\n'
        f'chatgpt_base_url = "{root}/backend-api/"\n'
        "\n[model_providers.chatgpt_fake]\n"
        'name = "fake ChatGPT backend"\n'
        f'base_url = "{api.url}"\n'
        'wire_api = "responses"\n'
        "requires_openai_auth = true\n"
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
        "supports_websockets = false\n"
        "\n[otel]\n"
        'metrics_exporter = "none"\n'
    )


def finish_first_story() -> str:
    """A shell command that marks S-1 passing (the other stories wait for the next iteration)."""
    mark = (
        "import json; p = '.ralph/feat/prd.json'; d = json.load(open(p)); "
        "d['userStories'][0].update(passes=True); json.dump(d, open(p, 'w'), indent=2)"
    )
    return f"python3 -c {shlex.quote(mark)} && echo marked"


def refresh_token_in(auth: Path) -> str | None:
    try:
        return str(json.loads(auth.read_text())["tokens"]["refresh_token"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def test_a_chatgpt_login_codex_refreshes_in_the_box_is_written_back_to_the_users_home(
    project: Path, feature: Path, ralph: RalphRunner, tmp_path: Path, ralph_env: dict[str, str], codex_bin: str
) -> None:
    """Iteration 1: the access token has expired, Codex refreshes rt-1 in the box's home before its first call; ralph
    writes the new login back. Iteration 2 starts from the box's copy (rt-2) and, after two 401s, refreshes rt-2:
    rt-1 is never presented again, and the user ends with rt-3, 0600."""
    home = tmp_path / "user-home"
    user_auth = home / ".codex" / "auth.json"
    user_auth.parent.mkdir(parents=True)
    user_auth.write_text(json.dumps(chatgpt_login(expires=int(time.time()) - 3600), indent=2))
    user_auth.chmod(0o600)
    use_codex(project, codex_bin)
    with FakeOpenAI() as api, FakeTokenEndpoint(lambda: refresh_token_in(user_auth)) as login:
        (home / ".codex" / "config.toml").write_text(chatgpt_config(api))
        config = project / ".ralph" / "config.yaml"
        hosts = ", ".join(f"'{host_of(url)}'" for url in (api.url, login.url))
        config.write_text(config.read_text() + f"sandbox:\n  allow_hosts: [{hosts}]\n  env: [{REFRESH_URL_VARIABLE}]\n")
        api.add_turns(
            shell(finish_first_story()),
            Message("S-1 is done."),
            UNAUTHORIZED,  # Codex reads auth.json again
            UNAUTHORIZED,  # Codex refreshes
            shell(finish_all_stories()),
            Message("All stories pass. <promise>COMPLETE</promise>"),
        )
        env = {key: value for key, value in ralph_env.items() if not key.startswith(("OPENAI_", "CODEX_"))}
        env.update(HOME=str(home), **{REFRESH_URL_VARIABLE: login.url})
        done = ralph(
            "run", "-f", "feat", "--no-archive", "--agent", "codex", "--sandbox", "bwrap", env=env, timeout=300
        )
        bearers = [generation_of(request.headers["authorization"].split()[-1]) for request in api.main_requests]
        seen = list(login.seen)
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(story["passes"] for story in read_json(feature / "prd.json")["userStories"])
    assert (project / "work.txt").read_text() == "done\n"
    # each refresh token presented once; when rt-2 was, the user's own file already held it (written back)
    assert seen == [("rt-1", "proactive_expiry", "rt-1"), ("rt-2", "unauthorized_recovery", "rt-2")], seen
    assert bearers == [2, 2, 2, 2, 3, 3], bearers
    written = read_json(user_auth)
    assert written["tokens"]["refresh_token"] == "rt-3" and written["auth_mode"] == "chatgpt"
    assert generation_of(written["tokens"]["access_token"]) == 3
    assert stat.S_IMODE(os.stat(user_auth).st_mode) == 0o600
    # Codex's temporary files and locks stayed in the box's home; nothing of ralph's is left beside the login
    assert sorted(os.listdir(user_auth.parent)) == ["auth.json", "config.toml"]
    assert "blocked:" not in done.stdout

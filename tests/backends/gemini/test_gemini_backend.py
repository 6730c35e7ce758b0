"""Which credentials a gemini run spends (`GeminiAgent.account`, for failover), named without the secret."""

from __future__ import annotations

import hashlib

from ralphloop.agents.gemini.backend import APPROVAL_MODES, account


def test_an_api_key_is_named_by_a_hash_prefix_never_by_itself() -> None:
    key = "AIzaSy-secret-key"
    named = account({"GEMINI_API_KEY": key, "HOME": "/home/me"})
    assert named == "api-key:" + hashlib.sha256(key.encode()).hexdigest()[:12]
    assert key not in named
    assert account({"GOOGLE_API_KEY": key}) == named  # Vertex AI express mode's variable


def test_without_a_key_it_is_the_login_in_the_clis_config_folder() -> None:
    assert account({"HOME": "/home/me"}) == "login:/home/me/.gemini"
    assert account({"HOME": "/home/me", "GEMINI_CLI_HOME": "/srv/g"}) == "login:/srv/g/.gemini"
    assert account({"HOME": "/home/me", "GEMINI_API_KEY": ""}) == "login:/home/me/.gemini"


def test_yolo_is_only_the_all_level() -> None:
    assert APPROVAL_MODES == {"ask": "default", "edits": "auto_edit", "all": "yolo"}

"""The `notify` config section (notify/settings.py) and notification URLs (notify/urls.py): what is accepted, the
one-line errors that name the file and key, ralph 0.x's event names, and URLs shown only redacted."""

from __future__ import annotations

from pathlib import Path

import pytest

from ralphloop.config.settings import load_settings
from ralphloop.config.template import DEFAULT_PROJECT_CONFIG
from ralphloop.core.errors import RalphError
from ralphloop.notify.settings import DEFAULT_EVENTS, EVENTS, NotifySettings, apprise_missing, describe
from ralphloop.notify.urls import check_webhook_url, mask, origin, shown, split_urls

# ---------------------------------------------------------------- URLs


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:5555/hook",
        "https://hooks.example.com/services/T0/B0/xyz",
        "HTTPS://Example.com",
        "http://[::1]:8080/",
    ],
)
def test_accepted_urls(url: str) -> None:
    assert check_webhook_url(url) == url


@pytest.mark.parametrize(
    ("url", "error"),
    [
        ("ftp://x", "expected an http:// or https:// URL (not ftp://)"),
        ("file:///etc/passwd", "expected an http:// or https:// URL (not file://)"),
        ("javascript:alert(1)", "expected an http:// or https:// URL"),
        ("example.com/hook", "expected an http:// or https:// URL"),
        ("", "expected an http:// or https:// URL"),
        ("http://", "the URL has no host"),
        ("http:///only/a/path", "the URL has no host"),
        ("http://host:99999/x", "the URL's port is not a number from 1 to 65535"),
        ("http://host/a b", "expected a URL without spaces or control characters"),
        ("http://host/\nInjected: header", "expected a URL without spaces or control characters"),
    ],
)
def test_refused_urls(url: str, error: str) -> None:
    with pytest.raises(ValueError) as caught:
        check_webhook_url(url)
    assert str(caught.value) == error


def test_origin_shows_no_credentials_path_or_query() -> None:
    assert origin("https://user:tok3n@Hooks.Example.com/services/T0/secret?token=abc") == "https://hooks.example.com"
    assert origin("http://127.0.0.1:5555/hook") == "http://127.0.0.1:5555"
    assert origin("http://[::1]:8080/x") == "http://[::1]:8080"


@pytest.mark.parametrize(
    ("url", "seen"),
    [
        ("ntfy://127.0.0.1:8080/topic", "ntfy://127.0.0.1:8080"),
        ("ntfys://user:pa55word@ntfy.example.com/secret-topic?token=tk_abc", "ntfys://ntfy.example.com"),
        ("ntfy://my-secret-topic", "ntfy://…"),  # ntfy.sh's topic where the host goes
        ("tgram://123456789:AAH-bot-token/-100123", "tgram://…"),
        ("slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ/#general", "slack://…"),
        ("discord://4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js", "discord://…"),
        ("pover://user-key@app-token", "pover://…"),
        ("mailto://me:app-password@gmail.com?to=me@example.com", "mailto://gmail.com"),
        ("json://[::1]:9000/path?secret=1", "json://[::1]:9000"),
        ("https://user:tok3n@hooks.example.com/services/T0/secret", "https://hooks.example.com"),
        ("not a url", "(a URL)"),
    ],
)
def test_a_url_is_shown_without_what_could_be_a_secret(url: str, seen: str) -> None:
    assert shown(url) == seen


def test_a_message_that_quotes_a_url_has_its_secret_parts_masked() -> None:
    url = "ntfys://bob:s3cret-pass@ntfy.example.com/topic-4f2a?token=tk_9f8e7d"
    said = "Failed to send ntfy notification to topic 'topic-4f2a' (tk_9f8e7d, s3cret-pass) on ntfy.example.com"
    assert mask(said, [url]) == "Failed to send ntfy notification to topic '…' (…, …) on ntfy.example.com"


@pytest.mark.parametrize(
    ("value", "urls"),
    [
        ("ntfy://a.example/t tgram://x/y", ("ntfy://a.example/t", "tgram://x/y")),
        ("ntfy://a.example/t,tgram://x/y, slack://z", ("ntfy://a.example/t", "tgram://x/y", "slack://z")),
        ("mailto://u:p@x.example?to=a@b.example,c@d.example", ("mailto://u:p@x.example?to=a@b.example,c@d.example",)),
        (["ntfy://a.example/t", "ntfy://a.example/t"], ("ntfy://a.example/t",)),
        ("", ()),
    ],
)
def test_urls_as_a_list_or_one_string(value: object, urls: tuple[str, ...]) -> None:
    assert split_urls(value) == urls


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("ntfy://ok.example/t secret-token-no-scheme", "URL 2 of 2: expected a URL such as ntfy://ntfy.sh/TOPIC"),
        ("tgram://", "URL 1 of 1: expected a URL such as ntfy://ntfy.sh/TOPIC (a scheme, ://, then"),
        (["tgram://x/y\nInjected"], "URL 1 of 1: expected a URL without spaces or control characters"),
        (5, "expected a list of URLs such as ntfy://ntfy.sh/TOPIC"),
    ],
)
def test_a_bad_url_is_refused_without_repeating_it(value: object, error: str) -> None:
    with pytest.raises(ValueError) as caught:
        split_urls(value)
    assert str(caught.value).startswith(error)
    assert "secret" not in str(caught.value) and "Injected" not in str(caught.value)


def test_the_dry_run_line_shows_every_url_redacted() -> None:
    settings = NotifySettings(
        desktop=None,
        webhook="https://hooks.example.com/T0/s3cret",
        on=("story_done", "complete"),
        urls=("ntfy://my-topic-s3cret", "tgram://bot:t0ken/123"),
    )
    line = describe(settings)
    assert line == "story_done, complete → desktop (auto), webhook https://hooks.example.com, ntfy://…, tgram://…"
    assert describe(NotifySettings(desktop=False)) == "off"
    assert describe(NotifySettings(on=())) == "off"


def test_apprise_is_looked_for_only_when_urls_are_set() -> None:
    assert apprise_missing(NotifySettings()) is None
    assert apprise_missing(NotifySettings(urls=("ntfy://x.example/t",))) is None  # the dev extra installs it


# ---------------------------------------------------------------- config: the notify section


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RALPH_HOME", str(tmp_path / "home"))
    root = tmp_path / "project"
    (root / ".ralph").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


def _load(
    project: Path, text: str, env: dict[str, str] | None = None, warnings: list[str] | None = None
) -> NotifySettings:
    (project / ".ralph" / "config.yaml").write_text(text)
    sink = [] if warnings is None else warnings
    settings = load_settings(str(project), {}, env=env or {}, warn=sink.append)
    return settings.notify


def _error(project: Path, text: str, env: dict[str, str] | None = None) -> str:
    with pytest.raises(RalphError) as caught:
        _load(project, text, env)
    return str(caught.value)


def test_notify_defaults(project: Path) -> None:
    assert _load(project, "") == NotifySettings(desktop=None, webhook=None, on=DEFAULT_EVENTS, urls=())
    assert DEFAULT_EVENTS == ("complete", "halted", "usage_limit", "needs_input", "circuit_open", "steered")


def test_notify_section(project: Path) -> None:
    warnings: list[str] = []
    text = (
        "notify:\n  desktop: false\n  webhook: https://example.com/h?t=1\n  on: [complete, halt, interrupt]\n"
        "  urls: [ntfy://ntfy.example.com/t, tgram://bot/1]\n"
    )
    assert _load(project, text, warnings=warnings) == NotifySettings(
        False,
        "https://example.com/h?t=1",
        ("complete", "halted", "interrupted"),
        ("ntfy://ntfy.example.com/t", "tgram://bot/1"),
    )
    assert warnings == []  # the bare YAML key `on` (read as true by YAML 1.1) is not "unknown"


@pytest.mark.parametrize(
    ("value", "expected"),
    [("auto", None), ("true", True), ("yes", True), ("off", False), ('"auto"', None)],
)
def test_notify_desktop_values(project: Path, value: str, expected: bool | None) -> None:
    assert _load(project, f"notify:\n  desktop: {value}\n").desktop is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("[]", ()),
        ("[interrupt]", ("interrupted",)),  # ralph 0.x's names
        ('"halt, complete"', ("halted", "complete")),
        ("[HALT, halted]", ("halted",)),
        ("[story-done, circuit_half_open]", ("story_done", "circuit_half_open")),
        ("all", EVENTS),
    ],
)
def test_notify_on_values(project: Path, value: str, expected: tuple[str, ...]) -> None:
    assert _load(project, f"notify:\n  on: {value}\n").on == expected


def test_notify_webhook_from_the_environment(project: Path) -> None:
    got = _load(project, "notify:\n  webhook: http://a.example/x\n", env={"RALPH_NOTIFY_WEBHOOK": "http://b.example/y"})
    assert got.webhook == "http://b.example/y"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (
            "notify:\n  webhook: ftp://x\n",
            ".ralph/config.yaml: notify.webhook: expected an http:// or https:// URL (not ftp://)",
        ),
        ("notify:\n  webhook: 5\n", ".ralph/config.yaml: notify.webhook: expected an http:// or https:// URL"),
        ("notify:\n  desktop: maybe\n", ".ralph/config.yaml: notify.desktop: expected true, false or auto"),
        (
            "notify:\n  on: [complete, done]\n",
            ".ralph/config.yaml: notify.on: 'done' is not an event: expected a list from story_done, usage_limit, "
            "needs_input, steered, circuit_half_open, circuit_open, complete, halted, interrupted (or all)",
        ),
        (
            "notify:\n  on: 3\n",
            ".ralph/config.yaml: notify.on: expected a list from story_done, usage_limit, needs_input, steered, "
            "circuit_half_open, circuit_open, complete, halted, interrupted (or all)",
        ),
        (
            "notify:\n  urls: [ntfy://a.example/t, 'tk_s3cret']\n",
            ".ralph/config.yaml: notify.urls: URL 2 of 2: expected a URL such as ntfy://ntfy.sh/TOPIC (a scheme, ://, "
            "then the service's address)",
        ),
        ("notify: yes\n", ".ralph/config.yaml: notify: expected a mapping"),
    ],
)
def test_notify_errors_name_the_key(project: Path, text: str, error: str) -> None:
    assert _error(project, text) == error


def test_a_bad_webhook_in_the_environment_names_the_variable_not_the_url(project: Path) -> None:
    error = _error(project, "", env={"RALPH_NOTIFY_WEBHOOK": "gopher://secret-token-123@host/"})
    assert error == "environment variable RALPH_NOTIFY_WEBHOOK: expected an http:// or https:// URL (not gopher://)"


def test_urls_from_the_environment_over_the_file(project: Path) -> None:
    settings = load_settings(str(project), {}, env={"RALPH_NOTIFY_URLS": "ntfy://b.example/t, json://c.example"})
    assert settings.notify.urls == ("ntfy://b.example/t", "json://c.example")
    assert settings.source("notify_urls") == "$RALPH_NOTIFY_URLS"
    error = _error(project, "", env={"RALPH_NOTIFY_URLS": "ntfy://ok.example/x tk_s3cret"})
    assert error.startswith("environment variable RALPH_NOTIFY_URLS: URL 2 of 2: expected a URL")
    assert "s3cret" not in error


def test_unknown_notify_key_is_a_warning(project: Path) -> None:
    warnings: list[str] = []
    _load(project, "notify:\n  email: me@example.com\n", warnings=warnings)
    assert warnings == [".ralph/config.yaml: unknown setting 'notify.email' (ignored)"]


def test_the_commented_example_in_the_default_config_loads(project: Path) -> None:
    block = DEFAULT_PROJECT_CONFIG[DEFAULT_PROJECT_CONFIG.index("# notify:") :]
    lines = [line for line in block.splitlines() if line.startswith("#")]
    uncommented = "\n".join(line[2:] for line in lines[:5]) + "\n"
    warnings: list[str] = []
    assert _load(project, uncommented, warnings=warnings) == NotifySettings(
        None, "https://example.com/hook", DEFAULT_EVENTS, ("ntfy://ntfy.sh/my-ralph-topic",)
    )
    assert warnings == []

"""Notification URLs: checked when the config is read, and shown only redacted.

A webhook URL or an apprise URL (`ntfy://`, `tgram://`, `slack://`, ...) usually carries its secret in plain
sight: a token in the path or the query, a password before the host, or, for many apprise services, the token
in the host's place (`tgram://BOT_TOKEN/CHAT`, `pover://USER@TOKEN`). So no message, warning or dry run ever
repeats one: they show `shown(url)`, the scheme and, where it is a server's name, the host.
Pure: no I/O; urllib's parser is imported only when a URL is given (it costs ~2 ms of start-up).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ralphloop.words.patterns import lazy

_SCHEME = lazy(r"([A-Za-z][A-Za-z0-9+.-]{0,31})://")
# apprise schemes whose host is a server's name (a self-hosted ntfy, a JSON endpoint, an SMTP domain, a chat
# server): shown. Every other scheme may hold a token where the host goes, and shows as `scheme://…`.
_HOSTED = frozenset(
    {
        "ntfy", "ntfys", "json", "jsons", "xml", "xmls", "form", "forms", "gotify", "gotifys", "mailto", "mailtos",
        "matrix", "matrixs", "mmost", "mmosts", "rocket", "rockets", "apprise", "apprises",
    }
)  # fmt: skip
_HOSTNAME = lazy(r"(?:localhost|[a-z0-9-]+(?:\.[a-z0-9-]+)+|\[[0-9a-f:.]+\])")
_SPLIT = lazy(r"\s+|,(?=\s*[A-Za-z][A-Za-z0-9+.-]*://)")


def check_webhook_url(url: str) -> str:
    """`url` when it is an http:// or https:// URL with a host; ValueError otherwise. The error never repeats
    the URL, which often carries a token."""
    if not isinstance(url, str) or not url.strip():
        raise ValueError("expected an http:// or https:// URL")
    url = url.strip()
    _check_characters(url)
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme not in ("http", "https"):
        shown = f" (not {scheme}://)" if scheme.isalnum() and len(scheme) < 16 else ""
        raise ValueError(f"expected an http:// or https:// URL{shown}")
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number in range
    except ValueError:
        raise ValueError("the URL's port is not a number from 1 to 65535") from None
    if not parts.hostname:
        raise ValueError("the URL has no host")
    return url


def check_url(url: object) -> str:
    """An apprise URL (`ntfy://host/topic`, `tgram://token/chat`, ...) as far as ralph can tell without apprise:
    a scheme, then something. Which schemes exist is apprise's to say, when it first sends."""
    if not isinstance(url, str) or not url.strip():
        raise ValueError("expected a URL such as ntfy://ntfy.sh/TOPIC")
    url = url.strip()
    _check_characters(url)
    found = _SCHEME.match(url)
    if found is None or len(url) == found.end():
        raise ValueError("expected a URL such as ntfy://ntfy.sh/TOPIC (a scheme, ://, then the service's address)")
    return url


def split_urls(value: object) -> tuple[str, ...]:
    """`urls:` as a YAML list, or one string of URLs separated by spaces or commas ($RALPH_NOTIFY_URLS). A comma
    splits only before another scheme://, so that one inside a URL (`mailto://...?to=a@x,b@y`) stays."""
    if isinstance(value, str):
        items: object = [item for item in _SPLIT.split(value) if item]
    else:
        items = value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise ValueError("expected a list of URLs such as ntfy://ntfy.sh/TOPIC")
    checked = []
    for number, item in enumerate(items, start=1):
        try:
            checked.append(check_url(item.strip().rstrip(",")))
        except ValueError as exc:
            raise ValueError(f"URL {number} of {len(items)}: {exc}") from None
    return tuple(dict.fromkeys(checked))


def _check_characters(url: str) -> None:
    if any(char.isspace() or ord(char) < 32 or ord(char) == 127 for char in url):
        raise ValueError("expected a URL without spaces or control characters")


def origin(url: str) -> str:
    """scheme://host[:port] of `url`: what a warning may show of a webhook (no credentials, path or query)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname or "?"
        port = parts.port
    except ValueError:
        return "(invalid URL)"
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme.lower()}://{host}" + (f":{port}" if port else "")


def shown(url: str) -> str:
    """`url` as ralph shows it: an http(s) URL as its origin; an apprise URL as scheme://host when the scheme
    names a server there (ntfy://ntfy.example.com), else as scheme://… (the host may be the token)."""
    found = _SCHEME.match(url)
    if found is None:
        return "(a URL)"
    scheme = found[1].lower()
    if scheme in ("http", "https"):
        return origin(url)
    if scheme in _HOSTED:
        rest = url[found.end() :].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].rsplit("@", 1)[-1].lower()
        host, _, port = rest.rpartition(":") if ":" in rest and not rest.endswith("]") else (rest, "", "")
        if _HOSTNAME.fullmatch(host) and (not port or port.isdigit()):
            return f"{scheme}://{host}" + (f":{port}" if port else "")
    return f"{scheme}://…"


def secret_parts(url: str) -> tuple[str, ...]:
    """The pieces of `url` a message must not repeat: every word after the scheme, but what `shown` shows."""
    from urllib.parse import unquote

    found = _SCHEME.match(url)
    rest = url[found.end() :] if found else url
    visible = set(re.split(r"[/:@?&=#,;\[\]…]+", shown(url).lower()))
    words = {part for part in re.split(r"[/:@?&=#,;]+", rest) if len(part) >= 4 and part.lower() not in visible}
    words |= {unquote(word) for word in words}
    return tuple(sorted(words, key=len, reverse=True))


def mask(text: str, urls: Iterable[str]) -> str:
    """`text` with every secret part of `urls` replaced by `…` (a library's error may quote a URL or a topic)."""
    for url in urls:
        for part in secret_parts(url):
            text = text.replace(part, "…")
    return text

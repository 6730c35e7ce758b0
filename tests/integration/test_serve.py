"""The real `ralph serve` over a fleet's files: it listens on 127.0.0.1 alone, refuses every request without its
token (401), serves the page, the snapshot and its event stream with it, and ends cleanly on Ctrl+C."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import pytest

from tests.conftest import isolated_env
from tests.fleet_project import live, make_fleet
from tests.serve_process import Served, serving

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    base = tmp_path_factory.mktemp("serve")
    project = base / "project"
    folder = make_fleet(project)
    with live(folder):
        yield project, isolated_env(base / "home", base / "gitconfig")


@pytest.fixture(scope="module")
def served(project: tuple[Path, dict[str, str]]) -> Iterator[Served]:
    with serving(*project) as server:
        yield server


def get(served: Served, path: str, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=10)
    connection.request("GET", path, headers=headers or {})
    return connection.getresponse()


PATHS = ("/", "/api/snapshot", "/events", "/no/such/page")


@pytest.mark.parametrize("path", PATHS)
def test_a_request_without_the_right_token_is_refused(served: Served, path: str) -> None:
    wrong = "x" * len(served.token)
    for query, headers in [
        ("", {}),
        (f"?token={wrong}", {}),
        ("?token=", {}),
        ("", {"Authorization": f"Bearer {wrong}"}),
        ("", {"Cookie": f"ralph_serve_{served.port}={wrong}"}),
        ("", {"Cookie": f"ralph_serve_{served.port + 1}={served.token}"}),  # another port's server's cookie
    ]:
        answer = get(served, path + query, headers)
        assert answer.status == 401, (path, query, headers)
        assert b"token" in answer.read()


def test_the_token_opens_the_page_and_its_cookie_the_rest(served: Served) -> None:
    page = get(served, f"/?token={served.token}")
    assert page.status == 200
    assert page.getheader("Content-Type", "").startswith("text/html")
    policy = page.getheader("Content-Security-Policy", "")
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy
    html = page.read().decode()
    assert "<script nonce=" in html and "{{nonce}}" not in html and "http" not in html.split("<script")[1]
    cookie = page.getheader("Set-Cookie", "")
    assert cookie.startswith(f"ralph_serve_{served.port}={served.token};")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie

    by_cookie = get(served, "/api/snapshot", {"Cookie": cookie.split(";")[0]})
    assert by_cookie.status == 200
    snapshot = json.loads(by_cookie.read())
    [feature] = snapshot["features"]
    assert [loop["state"] for loop in feature["loops"]] == ["merged", "running", "running"]
    by_bearer = get(served, "/api/snapshot", {"Authorization": f"Bearer {served.token}"})
    assert by_bearer.status == 200 and json.loads(by_bearer.read())["features"] == snapshot["features"]


def test_the_event_stream_sends_the_snapshot_at_once(served: Served) -> None:
    answer = get(served, f"/events?token={served.token}")
    assert answer.status == 200
    assert answer.getheader("Content-Type", "").startswith("text/event-stream")
    assert answer.readline() == b"retry: 2000\n" and answer.readline() == b"\n"
    data = answer.readline()
    assert data.startswith(b"data: ")
    assert json.loads(data[6:])["features"][0]["name"] == "feat"
    answer.close()


def test_it_listens_on_127_0_0_1_alone(served: Served) -> None:
    listening = [
        conn.laddr
        for conn in psutil.Process(served.process.pid).net_connections(kind="inet")
        if conn.status == psutil.CONN_LISTEN
    ]
    assert [(address.ip, address.port) for address in listening] == [("127.0.0.1", served.port)]
    assert urlsplit(served.url).hostname == "127.0.0.1"


def test_ctrl_c_stops_it_cleanly_with_a_stream_open(project: tuple[Path, dict[str, str]]) -> None:
    with serving(*project) as server:
        stream = get(server, f"/events?token={server.token}")
        assert stream.readline() == b"retry: 2000\n"
        code, out, err = server.stop()
    assert (code, out, err) == (130, "", "ralph serve: stopped\n")  # as `ralph monitor`: 130, no traceback
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", server.port), timeout=2):
        pass


def test_bad_flags_and_a_taken_port_are_one_line_errors(project: tuple[Path, dict[str, str]], served: Served) -> None:
    root, env = project
    for args, said in [
        (["--port", "http"], "--port http: not a port number (1 to 65535; 0 or none: a free one)"),
        (["--port", "70000"], "--port 70000: not a port number (1 to 65535; 0 or none: a free one)"),
        (["--port", str(served.port)], f"--port {served.port}: cannot listen on 127.0.0.1:{served.port} ("),
        (["-f", "nosuch"], "-f nosuch: no such feature in .ralph/nosuch (features: feat)"),
    ]:
        done = subprocess.run(
            [sys.executable, "-m", "ralphloop", "serve", *args],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert (done.returncode, done.stdout) == (1, ""), args
        assert done.stderr.startswith(f"ralph: error: {said}") and done.stderr.count("\n") == 1, done.stderr


def test_without_the_web_extra_it_names_it(project: tuple[Path, dict[str, str]]) -> None:
    root, env = project
    probe = (
        "import sys\n"
        "sys.modules['starlette'] = None  # as if the optional extra were not installed\n"
        "from ralphloop.cli.launch import entry\n"
        "sys.argv = ['ralph', 'serve']\n"
        "entry()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=root, env=env, capture_output=True, text=True, timeout=30, check=False
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "ralph: error: ralph serve needs starlette and uvicorn, an optional extra: pip install 'ralphloop[web]'\n"
    )

"""Steering a loop from `ralph serve` (issue 36): `POST /api/control` over HTTP (the token, the page's own origin,
bad bodies, a refusal) and the page's buttons and box in Debian's chromium, at a desktop's width and a phone's
(390 px). A real `ralph run` in the background with the agent the test paces (tests/agents/steered_agent.py), a real
`ralph serve`; what the loop did is read in its files."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import Watched, launched
from tests.conftest import RalphRunner, read_json
from tests.integration.helpers import wait_until
from tests.integration.test_reports_true import prepared
from tests.integration.test_steering import Paced, events, running, status_json
from tests.serve_process import Served, serving

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
TIMEOUT_MS = 10_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launched()


def post(served: Served, body: object, headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=10)
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    connection.request(
        "POST", "/api/control", body=raw, headers={"Content-Type": "application/json", **(headers or {})}
    )
    response = connection.getresponse()
    text = response.read().decode()
    return response.status, json.loads(text) if text.startswith("{") else {"text": text}


def test_the_control_api_steers_the_loop_with_the_token_from_the_page_s_own_origin_alone(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    folder = prepared(project, ralph_env, ralph, 3)
    agent = Paced(tmp_path, folder / "prd.json")
    with serving(project, ralph_env) as served:
        bearer = {"Authorization": f"Bearer {served.token}"}
        assert post(served, {"feature": "feat", "action": "pause"}, bearer)[0] == 409  # no loop running yet
        with running(project, ralph_env, "--no-archive", "--agent-cmd", agent.command) as loop:
            assert wait_until(lambda: agent.started(1)), agent.lines()

            assert post(served, {"feature": "feat", "action": "pause"})[0] == 401  # no token
            evil = {**bearer, "Origin": "http://evil.example"}
            code, said = post(served, {"feature": "feat", "action": "pause"}, evil)
            assert (code, said["ok"]) == (403, False) and "http://evil.example" in said["error"]
            assert not (folder / "control.json").exists()  # refused: nothing written
            for body, expected in (
                (b"{not json", 400),
                (["pause"], 400),
                ({"feature": "feat", "action": "dance"}, 400),
                ({"feature": "feat", "action": "say", "text": 7}, 400),
                ({"feature": "other", "action": "pause"}, 404),
                ({"feature": "feat", "action": "answer", "text": "yes"}, 409),  # no question waits
                ({"feature": "feat", "action": "say", "text": " "}, 409),
            ):
                assert post(served, body, bearer)[0] == expected, body

            forwarded = {**bearer, "Host": "localhost:9000", "Origin": "http://localhost:9000"}  # ssh -L 9000:…
            assert post(served, {"feature": "feat", "action": "say", "text": "via a forward"}, forwarded)[0] == 200
            own = {**bearer, "Origin": served.base}
            code, said = post(served, {"feature": "feat", "action": "pause"}, own)
            assert (code, said["ok"]) == (200, True) and said["said"].startswith("paused: no new iteration starts")
            code, said = post(served, {"feature": "feat", "action": "say", "text": "mind the cache"}, bearer)
            assert code == 200, said
            agent.release(1)
            assert wait_until(lambda: status_json(ralph)["status"] == "paused")
            assert post(served, {"feature": "feat", "action": "resume"}, bearer)[0] == 200
            assert wait_until(lambda: agent.started(2)), agent.lines()
            assert any(line.endswith("] mind the cache") for line in agent.lines() if line.startswith("guidance 2"))
            assert any(line.endswith("] via a forward") for line in agent.lines() if line.startswith("guidance 2"))
            assert post(served, {"feature": "feat", "action": "stop", "now": True}, bearer)[0] == 200
            loop.wait(timeout=60)
        assert loop.returncode == 3
    told = events(folder)
    assert any("paused by you at" in line and "(web)" in line for line in told), told
    assert read_json(folder / "status.json")["exitReason"] == "stopped"


@pytest.mark.parametrize("width", [1280, 390])
def test_the_page_s_buttons_and_box_steer_the_loop_live_and_fit_a_phone(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path, browser: Any, width: int
) -> None:
    from playwright.sync_api import expect

    folder = prepared(project, ralph_env, ralph, 3)
    agent = Paced(tmp_path, folder / "prd.json")
    with (
        serving(project, ralph_env) as served,
        running(project, ralph_env, "--no-archive", "--agent-cmd", agent.command) as loop,
    ):
        assert wait_until(lambda: agent.started(1)), agent.lines()
        context = browser.new_context(viewport={"width": width, "height": 844})
        try:
            watched = Watched(context)
            page, errors = watched.page, watched.errors
            page.goto(served.url)
            card = page.locator('section[data-feature="feat"] article.loop')
            bar = card.locator(".controls")
            expect(bar).to_be_visible(timeout=TIMEOUT_MS)

            bar.locator("button.pause").click()
            expect(card.locator(".said")).to_contain_text("paused: no new iteration starts", timeout=TIMEOUT_MS)
            bar.locator("textarea").fill("prefer the small fix")
            bar.locator("button.say").click()
            expect(card.locator(".said")).to_contain_text("said: your words go", timeout=TIMEOUT_MS)
            agent.release(1)
            expect(card.locator(".top .state")).to_have_text("paused", timeout=TIMEOUT_MS)
            expect(card.locator(".activity")).to_contain_text("paused by you at", timeout=TIMEOUT_MS)
            expect(card.locator(".activity")).to_contain_text("(web)")
            if width == 390:  # every control within the phone's width, nothing to scroll sideways
                assert page.evaluate("document.scrollingElement.scrollWidth") <= width
                for control in ("button.pause", "button.stop", "textarea", "button.say", "button.answer"):
                    box = bar.locator(control).bounding_box()
                    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, (control, box)

            bar = card.locator(".controls")
            expect(bar.locator("button.pause")).to_have_text("Resume", timeout=TIMEOUT_MS)
            bar.locator("button.pause").click()
            assert wait_until(lambda: agent.started(2)), agent.lines()
            assert any(
                line.endswith("] prefer the small fix") for line in agent.lines() if line.startswith("guidance 2")
            )
            stop = card.locator(".controls button.stop")
            stop.click()
            expect(stop).to_have_text("Stop after this iteration?")
            stop.click()
            expect(card.locator(".said")).to_contain_text("stopping: the loop ends after", timeout=TIMEOUT_MS)
            agent.release(2)
            loop.wait(timeout=60)
            assert errors == []
        finally:
            context.close()
    assert loop.returncode == 3
    assert read_json(folder / "status.json")["exitReason"] == "stopped"


def test_with_a_public_url_the_notifications_that_need_you_carry_the_page_and_its_origin_may_steer(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path
) -> None:
    """`serve.public_url`: the user's own tunnel to the page. The phone gets the page's address (with its token)
    in the notification that the loop waits for an answer; a control sent from a page there is taken."""
    import stat

    from tests.receiver import receiving

    folder = prepared(project, ralph_env, ralph, 2, "serve:\n  public_url: https://phone.example/ralph/\n")
    agent = Paced(tmp_path, folder / "prd.json")
    env = {**ralph_env, "STEER_ASK": "1", "RALPH_QUESTION_WAIT": "10m"}
    with receiving() as receiver:
        config = project / ".ralph" / "config.yaml"
        config.write_text(config.read_text() + f"notify:\n  desktop: false\n  webhook: {receiver.url}\n")
        with serving(project, ralph_env) as served:
            address = f"https://phone.example/ralph/?token={served.token}"
            files = list((Path(ralph_env["RALPH_HOME"]) / "serve").glob("*.json"))
            assert len(files) == 1 and json.loads(files[0].read_text())["url"] == address
            assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
            with running(project, env, "--no-archive", "--agent-cmd", agent.command) as loop:
                assert wait_until(lambda: any(body["event"] == "needs_input" for body in receiver.webhook()))
                [asked] = [body for body in receiver.webhook() if body["event"] == "needs_input"]
                assert asked["page"] == address and asked["text"].endswith(f" — {address}")
                phone = {"Authorization": f"Bearer {served.token}", "Origin": "https://phone.example"}
                code, said = post(served, {"feature": "feat", "action": "answer", "text": "use sqlite"}, phone)
                assert (code, said["ok"]) == (200, True), said
                assert wait_until(lambda: agent.started(2)), agent.lines()
                steered = [body for body in receiver.webhook() if body["event"] == "steered"]
                assert [(body["action"], body["source"]) for body in steered] == [("answer", "web")]
                assert steered[0]["text"].startswith("ralph: feat: answer received: answered by you at ")
                assert steered[0]["words"] == "use sqlite"
                assert post(served, {"feature": "feat", "action": "stop", "now": True}, phone)[0] == 200
                loop.wait(timeout=60)
            served.stop()  # Ctrl+C
            assert not files[0].exists()  # taken back when the server stopped
    assert loop.returncode == 3


def test_a_bad_public_url_is_one_line_and_serves_nothing(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str]
) -> None:
    prepared(project, ralph_env, ralph, 1, "serve:\n  public_url: ftp://phone.example\n")
    done = ralph("serve")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "ralph: error: serve.public_url in the config: 'ftp://phone.example' is not an http(s) address with a host "
        "(https://ralph.example.net)"
    ]


def test_the_page_pauses_and_resumes_a_whole_parallel_run(tmp_path: Path, browser: Any) -> None:
    """A real `ralph run --parallel 2` over three stories: the page's whole-run controls pause it (no new loop
    starts, fleet.json says so), then resume it to its end."""
    import subprocess

    from playwright.sync_api import expect

    from tests.conftest import agent_cmd, isolated_env
    from tests.integration.helpers import parallel_feature, start_parallel

    project = tmp_path / "project"
    project.mkdir()
    env = isolated_env(tmp_path / "home", tmp_path / "gitconfig")
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=project, env=env, check=True)
    stories = [{"id": f"S-{n}", "title": f"story {n}", "priority": n, "passes": False} for n in (1, 2, 3)]
    folder = parallel_feature(project, env, stories)
    log, gates = tmp_path / "agent.log", tmp_path / "gates"
    gates.mkdir()
    command = agent_cmd("steered_agent.py", str(log), str(gates), "loop")
    with serving(project, env) as served:
        run = start_parallel(project, env, "2", "--agent-cmd", command)
        context = browser.new_context(viewport={"width": 390, "height": 844})
        try:
            assert wait_until(lambda: log.exists() and log.read_text().count("task S-") == 2)
            watched = Watched(context)
            page, errors = watched.page, watched.errors
            page.goto(served.url)
            whole = page.locator('section[data-feature="feat"] .whole')
            expect(whole.locator("button.pause")).to_have_text("Pause", timeout=TIMEOUT_MS)
            whole.locator("button.pause").click()
            expect(whole.locator(".said")).to_contain_text("paused: no new loop starts", timeout=TIMEOUT_MS)
            (gates / "1").touch()
            expect(page.locator(".steered")).to_contain_text("paused by you at", timeout=TIMEOUT_MS)
            expect(page.locator(".steered")).to_contain_text("(web)")
            expect(whole.locator("button.pause")).to_have_text("Resume", timeout=TIMEOUT_MS)
            assert wait_until(lambda: read_json(folder / "fleet.json")["storiesMerged"] == 2, limit=60)
            assert "task S-3" not in log.read_text()
            whole.locator("button.pause").click()
            out, _ = run.communicate(timeout=120)
            assert errors == []
        finally:
            context.close()
            if run.poll() is None:
                run.kill()
                run.communicate()
    assert run.returncode == 0, out
    assert "task S-3" in log.read_text()


def test_in_chromium_a_page_of_another_origin_cannot_steer_even_with_the_token(
    project: Path, ralph: RalphRunner, ralph_env: dict[str, str], tmp_path: Path, browser: Any
) -> None:
    """Another site's page that knows the token (in its URL) sends a "simple" POST (text/plain: no preflight);
    the browser says where it comes from, and the server refuses it: nothing is written. Without the token, 401."""
    import http.server
    import threading

    folder = prepared(project, ralph_env, ralph, 2)
    agent = Paced(tmp_path, folder / "prd.json")
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<!doctype html><title>another site</title>")
    other = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=str(site))
    )
    threading.Thread(target=other.serve_forever, daemon=True).start()
    with (
        serving(project, ralph_env) as served,
        running(project, ralph_env, "--no-archive", "--agent-cmd", agent.command) as loop,
    ):
        assert wait_until(lambda: agent.started(1)), agent.lines()
        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(f"http://127.0.0.1:{other.server_address[1]}/index.html")
            script = """async ([url, body]) => {
                try {
                    const response = await fetch(url, {method: "POST", mode: "no-cors", body: body,
                                                        headers: {"Content-Type": "text/plain"}});
                    return response.type;
                } catch (error) { return "error: " + error; }
            }"""
            body = json.dumps({"feature": "feat", "action": "pause"})
            with_token = f"{served.base}/api/control?token={served.token}"
            page.evaluate(script, [with_token, body])
            page.evaluate(script, [f"{served.base}/api/control", body])
        finally:
            context.close()
            other.shutdown()
        assert not wait_until((folder / "control.json").exists, limit=1.5)  # neither steered anything
        agent.release(1)
        assert wait_until(lambda: agent.started(2)), agent.lines()  # not paused
        assert (
            post(
                served, {"feature": "feat", "action": "stop", "now": True}, {"Authorization": f"Bearer {served.token}"}
            )[0]
            == 200
        )
        loop.wait(timeout=60)

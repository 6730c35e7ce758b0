"""The deployment files (issue 37: deploy/compose.yaml, deploy/k8s/worker.yaml, deploy/worker.Dockerfile) say what
ralph really takes: every worker's command is parsed by ralph's own `worker` parser, the variables they set are the
ones ralph reads, and each worker has a home of its own (no two share a login the CLI refreshes). No container
engine runs here: what can be checked without one is checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ralphloop.cli.main import build_parser
from ralphloop.temporal.server import API_KEY_ENV

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def _worker_args(words: list[str]) -> Any:
    parser = build_parser("worker")
    try:
        return parser.parse_args(words)
    except SystemExit:  # argparse's refusal of a flag ralph does not have
        pytest.fail(f"ralph does not take: {' '.join(words)}")


def test_every_compose_worker_is_a_real_ralph_worker_with_a_home_of_its_own() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    workers = {name: body for name, body in services.items() if name.startswith("worker")}
    assert len(workers) >= 2
    homes = set()
    for name, body in workers.items():
        args = _worker_args(body["command"])
        assert args.command == "worker" and args.temporal == "temporal:7233", name
        assert args.workdir == "/work" and args.slots == "2"
        home = next(volume for volume in body["volumes"] if volume.endswith(":/home/ralph"))
        homes.add(home.split(":")[0])
        assert body["env_file"] == f"{name}.env"
        assert body["stop_grace_period"] == "60s"
    assert len(homes) == len(workers)  # each its own logins
    assert services["temporal"]["ports"] == ["127.0.0.1:7233:7233"]  # loopback only
    assert services["temporal"]["environment"]["POSTGRES_SEEDS"] == "postgresql"


def test_the_kubernetes_workers_are_real_ralph_workers_each_with_its_own_home() -> None:
    documents = list(yaml.safe_load_all((DEPLOY / "k8s" / "worker.yaml").read_text()))
    config = next(doc for doc in documents if doc["kind"] == "ConfigMap")
    workers = next(doc for doc in documents if doc["kind"] == "StatefulSet")
    container = workers["spec"]["template"]["spec"]["containers"][0]
    args = _worker_args(container["args"])
    assert args.temporal is None and "TEMPORAL_ADDRESS" in config["data"]  # ralph worker reads $TEMPORAL_ADDRESS
    assert "TEMPORAL_NAMESPACE" in config["data"]
    names = {item["name"] for item in container["env"]}
    assert API_KEY_ENV in names  # the variable ralph reads the server's API key from
    claims = {claim["metadata"]["name"] for claim in workers["spec"]["volumeClaimTemplates"]}
    assert claims == {"home", "work"}  # per pod: its logins and its clones
    assert workers["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True


def test_the_image_installs_the_temporal_extra_and_runs_as_a_user() -> None:
    text = (DEPLOY / "worker.Dockerfile").read_text()
    assert '"/src/ralphloop[temporal]"' in text
    assert "bubblewrap" in text and "util-linux" in text  # the sandbox, and its network's nsenter
    assert "\nUSER ralph\n" in text and 'ENTRYPOINT ["ralph"]' in text
    example = (DEPLOY / "worker.env.example").read_text()
    assert f"\n{API_KEY_ENV}=" in example

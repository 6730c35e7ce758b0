"""The run's network with `sandbox.network: allow` (issue 35, processes/box_network.py), with real bubblewrap and
nsenter: a command that enters it reaches ralph's proxy on 127.0.0.1:3128 and nothing else, as root and as a user
who is not (the namespace is then a user namespace's, and the command must not think it is root)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ralphloop.processes.box_network import BoxNetwork
from ralphloop.processes.sandbox import cannot_start

BWRAP = shutil.which("bwrap")
pytestmark = pytest.mark.skipif(
    BWRAP is None or cannot_start(BWRAP) is not None or shutil.which("nsenter") is None,
    reason="bubblewrap and nsenter cannot run here (scripts/setup.sh installs bubblewrap when run as root)",
)

# in the network: the proxy answers on 3128 (a CONNECT to a host not allowed: 403), the machine's network is not there
PROBE = """
import os, socket
with socket.create_connection(("127.0.0.1", 3128), timeout=5) as sock:
    sock.sendall(b"CONNECT 10.9.9.9:443 HTTP/1.1\\r\\n\\r\\n")
    print(sock.recv(4096).split(b"\\r\\n")[0].decode())
try:
    socket.create_connection(("1.1.1.1", 80), timeout=2)
    print("out")
except OSError as exc:
    print("no way out", exc.errno)
print("uid", os.getuid())
"""


def _enter_and_probe(network: BoxNetwork, python: str, user: tuple[int, int] | None = None) -> list[str]:
    entering, inherited = network.enter()
    boxed = [str(BWRAP), "--die-with-parent", "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev"]
    boxed += ["--proc", "/proc"]
    if network.own_user and user is not None:
        boxed += ["--unshare-user", "--uid", str(user[0]), "--gid", str(user[1])]
    done = subprocess.run(
        [*entering, *boxed, "--", python, "-c", PROBE],
        pass_fds=inherited,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_command_in_it_reaches_the_proxy_and_nothing_else() -> None:
    network = BoxNetwork(str(BWRAP), sys.executable, "nsenter", ())
    try:
        assert network.own_user is (os.getuid() != 0)
        said = _enter_and_probe(network, sys.executable)
        assert said[0] == "HTTP/1.1 403 Forbidden"
        assert said[1].startswith("no way out")
        assert network.proxy.take_blocked() == ("10.9.9.9:443",)
    finally:
        network.close()


@pytest.mark.skipif(os.getuid() != 0, reason="becoming another user needs root")
def test_as_a_user_who_is_not_root_it_is_entered_through_its_user_namespace_and_the_command_is_not_root() -> None:
    """ralph's code run by `nobody`: the interpreter must be one `nobody` can run (decided here: the system's)."""
    system = shutil.which("python3", path="/usr/bin:/bin")
    if system is None or shutil.which("setpriv") is None:
        pytest.skip("no system python3 or setpriv to run as another user")
    version = subprocess.run(
        [system, "-c", "import sys; print(sys.version_info[:2] >= (3, 11))"], capture_output=True, check=False
    )
    if version.stdout.strip() != b"True":
        pytest.skip("the system's python3 is older than ralph's")
    # ralph's source, copied where `nobody` may read it (what box_network imports needs nothing installed)
    tmp_path = Path(tempfile.mkdtemp(prefix="box-network-"))
    tmp_path.chmod(0o755)
    source = Path(__file__).resolve().parents[2] / "src"
    shutil.copytree(source / "ralphloop", tmp_path / "lib" / "ralphloop")
    script = tmp_path / "as_nobody.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(tmp_path / 'lib')!r})\n"
        "from ralphloop.processes.box_network import BoxNetwork\n"
        "import subprocess\n"
        f"network = BoxNetwork({BWRAP!r}, sys.executable, 'nsenter', ())\n"
        "entering, inherited = network.enter()\n"
        f"boxed = [{BWRAP!r}, '--die-with-parent', '--unshare-pid', '--ro-bind', '/', '/', '--dev', '/dev',"
        " '--proc', '/proc', '--unshare-user', '--uid', '65534', '--gid', '65534']\n"
        f"done = subprocess.run([*entering, *boxed, '--', sys.executable, '-c', {PROBE!r}], pass_fds=inherited,"
        " capture_output=True, text=True, timeout=60)\n"
        "print(network.own_user, network.proxy.take_blocked())\n"
        "print(done.stdout, done.stderr, end='')\n"
    )
    argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", system, "-S", str(script)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False)
    finally:
        shutil.rmtree(tmp_path)
    lines = done.stdout.splitlines()
    assert len(lines) >= 4, done.stdout + done.stderr
    assert lines[:4] == [
        "True ('10.9.9.9:443',)",
        "HTTP/1.1 403 Forbidden",
        lines[2],
        "uid 65534",
    ], done.stdout + done.stderr
    assert lines[2].startswith("no way out")

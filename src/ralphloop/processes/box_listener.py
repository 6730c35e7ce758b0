"""Run once per run, in a box with a network of its own (processes/box_network.py): listens on 127.0.0.1:PORT in that
network and hands ralph, over the unix socket it inherits as descriptor CHANNEL, the listening socket and the network
itself (an open /proc/self/ns/net), then ends. ralph's proxy accepts the agents' connections on that socket, and each
agent's box joins that network: no program of ralph's runs beside the agent, and none starts with each call.

`python -S -I box_listener.py CHANNEL PORT`: built-in modules only (and `_socket`), as the box's interpreter may be
any Python 3.
"""

import _socket
import posix
import sys


def main(channel: int, port: int) -> int:
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    network = posix.open("/proc/self/ns/net", posix.O_RDONLY)
    handed = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (listener.fileno(), network))  # C ints
    to_ralph = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM, 0, channel)
    to_ralph.sendmsg([b"1"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, handed)])
    return 0


if __name__ == "__main__":
    posix._exit(main(int(sys.argv[1]), int(sys.argv[2])))

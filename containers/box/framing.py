"""Length-prefixed JSON messages over stream sockets, with file descriptors when asked."""

import json
import socket
import struct

from .codec import Unencodable, deep


MAX_MESSAGE = 64 * 1024 * 1024


def send_msg(sock, obj):
    with deep():
        data = json.dumps(obj, separators=(",", ":")).encode()
    sock.sendall(struct.pack(">I", len(data)) + data)


def send_reply(chan, obj):
    """The candidate's serving code answers within the message cap: an answer over it is replaced by a
    small one saying so, so that the tests can tell an honest over-size value (value_too_large) from a
    frame the candidate forged (any header over the cap: protocol_violation)."""
    what = "load_error" if "load_error" in obj else "exc"
    try:
        with deep():
            data = json.dumps(obj, separators=(",", ":")).encode()
    except MemoryError:  # the candidate's own memory limit, reached while writing its answer
        data = json.dumps({what: {"type": "MemoryError", "msg": "while encoding the reply"}}).encode()
    if len(data) > MAX_MESSAGE:
        data = json.dumps({what: {"type": "passk.TooLarge", "msg": f"a reply of {len(data)} bytes is over the "
                                  f"{MAX_MESSAGE >> 20} MiB cap"}}).encode()
    chan.sendall(struct.pack(">I", len(data)) + data)


class TooLarge(Unencodable):
    def __init__(self, size):
        super().__init__(f"a frame header claims {size} bytes, over the {MAX_MESSAGE >> 20} MiB cap")


def recv_exact(sock, n):
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def recv_msg(sock):
    (size,) = struct.unpack(">I", recv_exact(sock, 4))
    if size > MAX_MESSAGE:
        raise TooLarge(size)
    data = recv_exact(sock, size)
    with deep():
        return json.loads(data)


def send_with_fds(sock, fds, obj):
    """File descriptors (as ancillary data on a marker byte; none is allowed), then a message."""
    socket.send_fds(sock, [b"F"], list(fds))
    send_msg(sock, obj)


def recv_with_fds(sock):
    """(fds, message), or None when the other side has gone."""
    try:
        data, fds, _, _ = socket.recv_fds(sock, 1, 4)
        if not data:
            return None
        return fds, recv_msg(sock)
    except (EOFError, OSError):
        return None

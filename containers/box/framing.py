"""Length-prefixed JSON messages over stream sockets, with file descriptors when asked."""

import json
import socket
import struct
import time

from .codec import Unencodable, deep


MAX_MESSAGE = 64 * 1024 * 1024
# The forkserver's word that a candidate started: when (time.monotonic). Fixed-size: the forkserver sends
# it while the candidate shares its memory, when every page it writes is copied.
HELLO = struct.Struct(">d")
# The supervisor's one stop per job: kill the candidate now, or (its channel closed) let it end first.
STOP_KILL, STOP_GONE = b"k", b"g"


def send_msg(sock, obj):
    send_frame(sock, encode_msg(obj))


def send_frame(sock, data):
    """The length header and the body, without joining them (a large body is not copied again)."""
    header = struct.pack(">I", len(data))
    sent = sock.sendmsg([header, data])
    if sent < len(header):
        sock.sendall(header[sent:])
        sent = len(header)
    if sent - len(header) < len(data):
        sock.sendall(memoryview(data)[sent - len(header):])


def send_reply(chan, obj):
    """The candidate's serving code answers within the message cap: an answer over it is replaced by a
    small one saying so, so that the tests can tell an honest over-size value (value_too_large) from a
    frame the candidate forged (any header over the cap: protocol_violation)."""
    what = "load_error" if "load_error" in obj else "exc"
    try:
        data = encode_msg(obj)
    except MemoryError:  # the candidate's own memory limit, reached while writing its answer
        data = json.dumps({what: {"type": "MemoryError", "msg": "while encoding the reply"}}).encode()
    if len(data) > MAX_MESSAGE:
        data = json.dumps({what: {"type": "passk.TooLarge", "msg": f"a reply of {len(data)} bytes is over the "
                                  f"{MAX_MESSAGE >> 20} MiB cap"}}).encode()
    send_frame(chan, data)


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
    return recv_measured(sock)[0]


def recv_measured(sock):
    """(message, its size in bytes, seconds spent parsing it): the body is decoded to text and dropped
    before parsing, so a large message is held twice at most, not three times."""
    data = recv_raw(sock)
    size = len(data)
    t0 = time.perf_counter()
    text = data.decode("utf-8", "surrogatepass")
    del data
    with deep():
        obj = json.loads(text)
    return obj, size, time.perf_counter() - t0


def recv_raw(sock) -> bytes:
    """One message's body, not yet parsed."""
    (size,) = struct.unpack(">I", recv_exact(sock, 4))
    if size > MAX_MESSAGE:
        raise TooLarge(size)
    return recv_exact(sock, size)


def encode_msg(obj) -> bytes:
    """A message's body, for send_frame."""
    with deep():
        return json.dumps(obj, separators=(",", ":")).encode()


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

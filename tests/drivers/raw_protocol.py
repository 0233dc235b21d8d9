"""Raw native protocol v4 frames (§2, §4) for tests that need to see the
wire itself: requests written by hand, replies read as they arrive."""
import socket
import struct


def frame(opcode, body, stream=0):
    return struct.pack(">BBhBI", 4, 0, stream, opcode, len(body)) + body


def startup():
    return frame(0x01, struct.pack(">H", 1) + struct.pack(">H", 11) + b"CQL_VERSION" + struct.pack(">H", 5) + b"3.0.0")


def query(text, stream, consistency=0x0001):
    """A QUERY frame at `consistency` (native protocol v4 §3: ONE is 0x0001, ALL 0x0005)."""
    q = text.encode()
    return frame(0x07, struct.pack(">I", len(q)) + q + struct.pack(">HB", consistency, 0), stream)


def read_frame(sock):
    header = b""
    while len(header) < 9:
        chunk = sock.recv(9 - len(header))
        if not chunk:
            return None
        header += chunk
    _, _, stream, opcode, length = struct.unpack(">BBhBI", header)
    body = b""
    while len(body) < length:
        chunk = sock.recv(length - len(body))
        assert chunk, "connection closed inside a frame"
        body += chunk
    return stream, opcode, body


def open_ready(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(startup())
    reply = read_frame(s)
    assert reply is not None and reply[1] == 0x02, reply  # READY
    return s

"""The bridge's wire format: one framed message each way per call.

A frame is a 12-byte prefix (the header's length as a little-endian uint32, the payload's as
a uint64), the header as UTF-8 JSON, then the payload: the call's tensors' bytes, one after
another in the order the header lists them. The coordinator (backends/torch/wire.cpp) reads
the same frames.
"""

import json
import socket
import struct

_PREFIX = struct.Struct("<IQ")


class Connection:
    """A blocking connection to ranklab's coordinator."""

    def __init__(self, address):
        kind, _, where = address.partition(":")
        if kind == "unix":
            self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._socket.connect(where)
        elif kind == "tcp":
            host, _, port = where.rpartition(":")
            self._socket = socket.create_connection((host, int(port)))
            self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        else:
            raise ValueError(f"ranklab: coordinator address {address!r} is neither unix: nor tcp:")

    def send(self, header, payloads=()):
        """Sends `header` (a dict) and the concatenation of `payloads` (bytes-like)."""
        body = json.dumps(header, separators=(",", ":")).encode()
        views = [memoryview(p).cast("B") for p in payloads]
        size = sum(v.nbytes for v in views)
        self._socket.sendall(_PREFIX.pack(len(body), size) + body)
        for view in views:
            if view.nbytes:
                self._socket.sendall(view)

    def receive(self):
        """The next message: (header dict, payload bytearray)."""
        header_size, payload_size = _PREFIX.unpack(self._read(_PREFIX.size))
        header = json.loads(self._read(header_size))
        return header, self._read(payload_size)

    def close(self):
        self._socket.close()

    def _read(self, size):
        buffer = bytearray(size)
        view = memoryview(buffer)
        got = 0
        while got < size:
            n = self._socket.recv_into(view[got:])
            if n == 0:
                raise ConnectionError("ranklab: the coordinator closed the connection")
            got += n
        return buffer

"""The bridge's wire format: one framed message each way per call.

A frame is a 16-byte prefix (the header's length and the frame's flags as little-endian
uint32s, the payload's length as a uint64), the header as UTF-8 JSON, then the payload: the
call's tensors' bytes, one after another in the order the header lists them. The
coordinator (backends/torch/wire.cpp) reads the same frames.

Over a Unix socket, a payload of REGION_MIN_BYTES or more goes through a shared region
instead (PAYLOAD_IN_REGION): a sealed memfd this process creates, sized for a call and its
answer, and passes with the frame that introduces it (NEW_REGION, SCM_RIGHTS). Calls
alternate with their answers and each side is done with the region before it sends, so one
region serves both ways.
"""

import fcntl
import json
import mmap
import os
import socket
import struct

_PREFIX = struct.Struct("<IIQ")
PAYLOAD_IN_REGION = 1
NEW_REGION = 2
REGION_MIN_BYTES = 64 << 10


class Connection:
    """A blocking connection to ranklab's coordinator."""

    def __init__(self, address):
        kind, _, where = address.partition(":")
        self._region = None
        if kind == "unix":
            self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._socket.connect(where)
        elif kind == "tcp":
            host, _, port = where.rpartition(":")
            self._socket = socket.create_connection((host, int(port)))
            self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        else:
            raise ValueError(f"ranklab: coordinator address {address!r} is neither unix: nor tcp:")
        self._shares_memory = kind == "unix"

    def send(self, header, payloads=(), answer_bytes=0):
        """Sends `header` (a dict) and the concatenation of `payloads` (bytes-like);
        `answer_bytes`: the size of the answer's payload, for which the region is made room."""
        body = json.dumps(header, separators=(",", ":")).encode()
        views = [memoryview(p).cast("B") for p in payloads]
        size = sum(v.nbytes for v in views)
        flags, fds = 0, []
        if self._shares_memory and max(size, answer_bytes) >= REGION_MIN_BYTES:
            if self._region is None or len(self._region) < max(size, answer_bytes):
                fds = [self._grow_region(max(size, answer_bytes))]
                flags |= NEW_REGION
            if size >= REGION_MIN_BYTES:
                offset = 0
                for view in views:
                    self._region[offset:offset + view.nbytes] = view
                    offset += view.nbytes
                flags |= PAYLOAD_IN_REGION
        frame = _PREFIX.pack(len(body), flags, size) + body
        try:
            sent = socket.send_fds(self._socket, [frame], fds) if fds else 0
        finally:
            for fd in fds:
                os.close(fd)
        self._socket.sendall(memoryview(frame)[sent:])
        if not flags & PAYLOAD_IN_REGION:
            for view in views:
                if view.nbytes:
                    self._socket.sendall(view)

    def receive(self):
        """The next message: (header dict, payload). A payload in the shared region is a view
        of it, valid until this connection's next send: read it before."""
        header_size, flags, payload_size = _PREFIX.unpack(self._read(_PREFIX.size))
        header = json.loads(self._read(header_size))
        if flags & PAYLOAD_IN_REGION:
            return header, memoryview(self._region)[:payload_size]
        return header, self._read(payload_size)

    def close(self):
        self._socket.close()

    def _grow_region(self, size):
        """A new region of at least `size` bytes (doubling, so that growing is rare), sealed
        against shrinking; returns its descriptor, to pass to the coordinator."""
        capacity = max(1 << 20, 1 << (size - 1).bit_length())
        fd = os.memfd_create("ranklab-payloads", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            os.ftruncate(fd, capacity)
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL)
            region = mmap.mmap(fd, capacity)
        except BaseException:
            os.close(fd)
            raise
        # The old region is unmapped once the last view of an answer in it is gone.
        self._region = region
        return fd

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

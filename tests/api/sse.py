"""A Server-Sent Events client over a raw socket, for the live stream tests:
the status and headers, then events (and comments) as they arrive, read by
a thread into a queue, so that a test can wait for the next one with a
timeout. Chunked transfer encoding is undone as bytes come."""
import queue
import socket
import threading
import time
import urllib.parse

from harness import dechunk


class Event:
    def __init__(self):
        self.id = None
        self.event = "message"
        self.data = []
        self.comments = []

    @property
    def text(self):
        return "\n".join(self.data)

    def __repr__(self):
        return "Event(id=%r, event=%r, data=%r, comments=%r)" % (
            self.id, self.event, self.text[:200], self.comments)


class Stream:
    """GET base+path?params on its own connection. .status, .headers (lower-
    case names), .body (the error body when the status is not 200), and
    next_event(timeout) for a 200."""

    def __init__(self, base, path, params=None, headers=None, timeout=20):
        host, port = base[len("http://"):].split(":")
        target = path + ("?" + urllib.parse.urlencode(params) if params else "")
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        req = "GET %s HTTP/1.1\r\nHost: %s:%s\r\nAccept: text/event-stream\r\n" % (
            target, host, port)
        for k, v in (headers or {}).items():
            req += "%s: %s\r\n" % (k, v)
        self.sock.sendall((req + "\r\n").encode())
        self.buf = b""
        self.events = queue.Queue()
        self.comments = queue.Queue()
        self.closed = threading.Event()
        head = self._read_until(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split(" ")[1])
        self.headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            self.headers[k.strip().lower()] = v.strip()
        self.chunked = self.headers.get("transfer-encoding", "").lower() == "chunked"
        self.body = None
        if self.status != 200:
            self.body = self._read_rest()
            self.close()
            return
        self.sock.settimeout(None)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _recv(self):
        c = self.sock.recv(65536)
        if not c:
            raise EOFError
        self.buf += c

    def _read_until(self, marker):
        while marker not in self.buf:
            self._recv()
        head, _, self.buf = self.buf.partition(marker)
        return head

    def _read_rest(self):
        length = self.headers.get("content-length")
        try:
            while True:
                if length is not None and len(self.buf) >= int(length):
                    break
                if self.chunked and b"\r\n0\r\n\r\n" in b"\r\n" + self.buf:
                    break
                self._recv()
        except (EOFError, OSError):
            pass
        data, self.buf = self.buf, b""
        return dechunk(data) if self.chunked else data

    def _body_bytes(self):
        """The body's bytes as they come (chunks undone); None at its end."""
        if not self.chunked:
            if self.buf:
                data, self.buf = self.buf, b""
                return data
            self._recv()
            data, self.buf = self.buf, b""
            return data
        size = self._read_until(b"\r\n")
        n = int(size.split(b";")[0], 16)
        if n == 0:
            return None
        while len(self.buf) < n + 2:
            self._recv()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def _run(self):
        pending = b""
        ev = Event()
        try:
            while True:
                data = self._body_bytes()
                if data is None:
                    break
                pending += data
                while b"\n" in pending:
                    line, _, pending = pending.partition(b"\n")
                    line = line.decode("utf-8").rstrip("\r")
                    if line == "":
                        if ev.data or ev.id is not None:
                            self.events.put(ev)
                        ev = Event()
                    elif line.startswith(":"):
                        self.comments.put((time.monotonic(), line[1:].strip()))
                    else:
                        field, _, value = line.partition(":")
                        value = value[1:] if value.startswith(" ") else value
                        if field == "id":
                            ev.id = value
                        elif field == "event":
                            ev.event = value
                        elif field == "data":
                            ev.data.append(value)
        except (EOFError, OSError, ValueError):
            pass
        self.closed.set()

    def next_event(self, timeout):
        """The next event, or None when none came within timeout seconds."""
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            return None

    def events_until_quiet(self, quiet, limit=100000):
        """Every event until none has come for quiet seconds."""
        out = []
        while len(out) < limit:
            e = self.next_event(quiet)
            if e is None:
                break
            out.append(e)
        return out

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()

"""The service's HTTP endpoint: ``/metrics`` (Prometheus), ``/healthz`` and ``/readyz``, served
by :class:`MetricsServer` on one thread with a selector.

One thread whatever the number of clients, a read deadline and a cap on open connections: a
thread per connection (``socketserver.ThreadingMixIn``) let 1,000 idle, half-sent requests hold
1,000 threads, each blocked in a read without a timeout, while ``/readyz`` waited behind them.
Here an idle client costs a socket until its deadline or until a newer connection needs its
place, and every request is answered in the order it arrives complete. Only ``GET`` and
``HEAD`` of the three paths are served (405 and 404 otherwise).
"""

from __future__ import annotations

import contextlib
import gzip
import logging
import selectors
import socket
import threading
import time
import urllib.parse
from collections import OrderedDict
from collections.abc import Callable
from http import HTTPStatus

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

__all__ = ["ENDPOINTS", "MetricsServer"]

ENDPOINTS = ("/metrics", "/healthz", "/readyz")
_METHODS = ("GET", "HEAD")

log = logging.getLogger("streamnb.service")


class _Connection:
    __slots__ = ("deadline", "received", "reply")

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.received = bytearray()
        self.reply = b""


class MetricsServer:
    """Serve ``registry`` at ``/metrics`` and ``readiness()`` at ``/readyz`` on
    ``host:port`` (port 0: any free one, see :attr:`port`) from a daemon thread.

    Parameters
    ----------
    timeout
        Seconds a connection may take from its accept to the last byte of its answer (a
        client that sends its request slower, or reads the answer slower, is closed).
    max_connections
        Connections open at once; a new one beyond them closes the one open longest.
    max_request_bytes
        A larger request line and headers get 431.

    """

    def __init__(self, host: str, port: int, registry: CollectorRegistry,
                 readiness: Callable[[], tuple[bool, str]], *, timeout: float = 10.0,
                 max_connections: int = 64, max_request_bytes: int = 8192) -> None:
        self.registry, self.readiness = registry, readiness
        self.timeout, self.max_connections = timeout, max_connections
        self.max_request_bytes = max_request_bytes
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._listener = socket.create_server((host, port), family=family, backlog=128)
        self._listener.setblocking(False)
        self.port: int = self._listener.getsockname()[1]
        self._wake_read, self._wake_write = socket.socketpair()
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, selectors.EVENT_READ, "accept")
        self._selector.register(self._wake_read, selectors.EVENT_READ, "wake")
        self._open: OrderedDict[socket.socket, _Connection] = OrderedDict()  # oldest first
        self._stopping = False
        self._thread = threading.Thread(target=self._serve, daemon=True, name="streamnb-http")
        self._thread.start()

    def close(self, timeout: float = 5.0) -> None:
        """Stop serving and close every socket."""
        self._stopping = True
        self._wake_write.send(b"x")
        self._thread.join(timeout)

    # -- the serving thread
    def _serve(self) -> None:
        try:
            while not self._stopping:
                wait = min((c.deadline for c in self._open.values()), default=None)
                for key, mask in self._selector.select(
                        None if wait is None else max(wait - time.monotonic(), 0.0)):
                    if key.data == "accept":
                        self._accept()
                    elif key.data != "wake":
                        self._step(key.fileobj, key.data, mask)
                now = time.monotonic()
                for sock in [s for s, c in self._open.items() if c.deadline <= now]:
                    self._drop(sock)
        finally:
            for sock in list(self._open):
                self._drop(sock)
            self._selector.close()
            for sock in (self._listener, self._wake_read, self._wake_write):
                sock.close()

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # out of descriptors, or the client gave up: the next select retries
                return
            if len(self._open) >= self.max_connections:
                self._drop(next(iter(self._open)))  # the open longest: an idle one, if any
            sock.setblocking(False)
            connection = _Connection(time.monotonic() + self.timeout)
            self._open[sock] = connection
            self._selector.register(sock, selectors.EVENT_READ, connection)

    def _step(self, sock: socket.socket, connection: _Connection, mask: int) -> None:
        try:
            if mask & selectors.EVENT_READ:
                data = sock.recv(4096)
                if not data:
                    self._drop(sock)
                    return
                connection.received += data
                head_end = connection.received.find(b"\r\n\r\n")
                if head_end < 0 and len(connection.received) <= self.max_request_bytes:
                    return
                connection.reply = (self._answer_safely(bytes(connection.received[:head_end]))
                                    if 0 <= head_end <= self.max_request_bytes else
                                    _response(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE))
                self._selector.modify(sock, selectors.EVENT_WRITE, connection)
            if mask & selectors.EVENT_WRITE or connection.reply:
                sent = sock.send(connection.reply)
                connection.reply = connection.reply[sent:]
                if not connection.reply:
                    self._drop(sock)
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:  # reset by the client
            self._drop(sock)

    def _drop(self, sock: socket.socket) -> None:
        self._open.pop(sock, None)
        with contextlib.suppress(KeyError, ValueError):  # never registered, or closed
            self._selector.unregister(sock)
        sock.close()

    def _answer_safely(self, head: bytes) -> bytes:
        """The answer, or 500 if making it failed: the one serving thread must outlive it."""
        try:
            return self._answer(head)
        except Exception:
            log.exception("metrics endpoint: answering %r failed", head[:100])
            return _response(HTTPStatus.INTERNAL_SERVER_ERROR)

    def _answer(self, head: bytes) -> bytes:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            return _response(HTTPStatus.BAD_REQUEST)
        method, target = parts[0], parts[1]
        path, _, query = target.partition("?")
        if path not in ENDPOINTS:
            return _response(HTTPStatus.NOT_FOUND)
        if method not in _METHODS:
            return _response(HTTPStatus.METHOD_NOT_ALLOWED, extra=[("Allow", "GET, HEAD")])
        headers = {name.strip().lower(): value.strip() for name, _, value in
                   (line.partition(":") for line in lines[1:])}
        if path == "/metrics":
            encoder, content_type = choose_encoder(headers.get("accept"))
            names = urllib.parse.parse_qs(query).get("name[]")  # as prometheus-client's own
            body = encoder(self.registry.restricted_registry(names) if names else self.registry)
            extra = [("Content-Type", content_type)]
            if "gzip" in headers.get("accept-encoding", ""):
                body = gzip.compress(body)
                extra.append(("Content-Encoding", "gzip"))
            return _response(HTTPStatus.OK, body, extra, head_only=method == "HEAD")
        ready, why = (True, "ok") if path == "/healthz" else self.readiness()
        return _response(HTTPStatus.OK if ready else HTTPStatus.SERVICE_UNAVAILABLE,
                         (why + "\n").encode(), head_only=method == "HEAD")


def _response(status: HTTPStatus, body: bytes | None = None,
              extra: list[tuple[str, str]] | None = None, head_only: bool = False) -> bytes:
    """A whole HTTP/1.1 response, the connection closed after it."""
    if body is None:
        body = f"{status.value} {status.phrase}\n".encode()
    headers = extra or []
    if not any(name == "Content-Type" for name, _ in headers):
        headers = [("Content-Type", "text/plain; charset=utf-8"), *headers]
    lines = [f"HTTP/1.1 {status.value} {status.phrase}", *(f"{n}: {v}" for n, v in headers),
             f"Content-Length: {len(body)}", "Connection: close", "", ""]
    return "\r\n".join(lines).encode("latin-1") + (b"" if head_only else body)

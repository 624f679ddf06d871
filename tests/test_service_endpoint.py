"""The service's HTTP endpoint over real sockets (its paths and methods only; idle, half-sent
requests neither hold a thread each nor keep /readyz from answering) and what an outage writes
to its log (each kind of Kafka client line once, "reachable again" only after a loss)."""

from __future__ import annotations

import re
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from kafka_helpers import (
    ServiceProcess,
    create_topic,
    free_port,
    labelled_messages,
    produce,
    scrape,
    service_args,
    unique,
    wait_for,
)

from streamnb.consumers.broker import EmbeddedBroker

IDLE = 300


def request(url: str, method: str = "GET") -> tuple[int, str, dict]:
    """Status, body and headers; a generous timeout (a slow machine is not a failure)."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method),
                                    timeout=60) as response:
            return response.status, response.read().decode(), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(), dict(exc.headers)


def threads(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^Threads:\s+(\d+)", status, re.M).group(1))


@pytest.fixture(scope="module")
def service(kafka_broker, tmp_path_factory):
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("endpoint")
    create_topic(bootstrap, topic)
    produce(bootstrap, topic, labelled_messages(0, 100))
    port = free_port()
    tmp = tmp_path_factory.mktemp("endpoint")
    process = ServiceProcess(service_args(bootstrap, topic, tmp / "state", port),
                             tmp / "service.log")
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: scrape(f"{base}/metrics", "streamnb_ready") == 1, 60, "ready",
                 alive=process.alive)
        yield process, base, port
    finally:
        assert process.terminate() == 0


def test_the_endpoint_serves_its_paths_with_get_and_head_only(service):
    _, base, _ = service
    assert request(f"{base}/readyz")[:2] == (200, "ready\n")
    assert request(f"{base}/healthz")[:2] == (200, "ok\n")
    status, body, headers = request(f"{base}/metrics")
    assert status == 200 and "streamnb_messages_learned_total 100.0" in body
    assert headers["Content-Type"].startswith("text/plain")
    status, body, headers = request(f"{base}/readyz", "HEAD")
    assert (status, body, headers["Content-Length"]) == (200, "", "6")
    for path in ("/", "/metric", "/metrics/x", "/healthz/", "/favicon.ico", "/../etc/passwd"):
        assert request(base + path)[0] == 404, path
    for method in ("PUT", "POST", "DELETE", "PATCH", "OPTIONS"):
        for path in ("/healthz", "/readyz", "/metrics"):
            status, _, headers = request(base + path, method)
            assert (status, headers.get("Allow")) == (405, "GET, HEAD"), (method, path)
    with socket.create_connection(("127.0.0.1", int(base.rpartition(":")[2])), 60) as sock:
        sock.sendall(b"\x16\x03\x01garbage\r\n\r\n")  # a TLS hello, or any non-HTTP line
        assert sock.recv(100).startswith(b"HTTP/1.1 400 ")


def test_idle_half_sent_requests_neither_hold_threads_nor_starve_readyz(service):
    process, base, port = service
    before = threads(process.process.pid)
    idle = []
    try:
        for _ in range(IDLE):  # each sends half a request and then nothing
            sock = socket.create_connection(("127.0.0.1", port), 60)
            sock.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\n")
            idle.append(sock)
        assert request(f"{base}/readyz")[:2] == (200, "ready\n")
        assert request(f"{base}/metrics")[0] == 200
        # one serving thread whatever the clients (a thread per connection was 300 more)
        assert threads(process.process.pid) < before + IDLE // 10
    finally:
        for sock in idle:
            sock.close()
    assert process.alive()


def test_the_server_closes_idle_clients_and_survives_a_failing_answer():
    """The mechanisms behind the above on a bare server: a connection past its deadline is
    closed, one beyond the cap closes the oldest, an oversized head gets 431, and an answer
    that raises gets 500 without stopping the serving thread."""
    from prometheus_client import CollectorRegistry

    from streamnb.consumers.endpoint import MetricsServer

    def readiness():
        raise RuntimeError("broken readiness")

    server = MetricsServer("127.0.0.1", 0, CollectorRegistry(), readiness, timeout=1.0,
                           max_connections=4)
    base = f"http://127.0.0.1:{server.port}"
    try:
        with socket.create_connection(("127.0.0.1", server.port), 60) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\n")
            assert sock.recv(100) == b""  # closed at its deadline, unanswered
        socks = [socket.create_connection(("127.0.0.1", server.port), 60) for _ in range(6)]
        try:
            assert request(f"{base}/healthz")[:2] == (200, "ok\n")  # a 7th: room made for it
            assert socks[0].recv(100) == b"" and socks[1].recv(100) == b""  # the oldest
        finally:
            for sock in socks:
                sock.close()
        with socket.create_connection(("127.0.0.1", server.port), 60) as sock:
            head = b"GET /metrics HTTP/1.1\r\nX: "  # one byte over 8 KiB, still unfinished
            sock.sendall(head + b"x" * (8193 - len(head)))  # (all of it read: no reset)
            assert sock.recv(100).startswith(b"HTTP/1.1 431 ")
        assert request(f"{base}/readyz")[0] == 500
        assert request(f"{base}/healthz")[:2] == (200, "ok\n")
    finally:
        server.close()
    assert not server._thread.is_alive()


def test_an_outage_logs_each_client_line_once_and_reachable_again_only_after_it(tmp_path):
    """Group mode, its own broker stopped for 20 s and started again on the same port: the
    Kafka clients' lines (reconnection attempts, many a second) are each written once, and
    "reachable again" only after the loss, never at start."""
    port = free_port()
    broker = EmbeddedBroker(port=port, log_path=tmp_path / "broker.log").start()
    service = None
    try:
        bootstrap = broker.bootstrap_servers
        topic = unique("outage-logs")
        create_topic(bootstrap, topic)
        produce(bootstrap, topic, labelled_messages(0, 100))
        metrics_port = free_port()
        url = f"http://127.0.0.1:{metrics_port}/metrics"
        service = ServiceProcess(
            service_args(bootstrap, topic, tmp_path / "state", metrics_port,
                         "--snapshot-every-seconds", "3600",
                         "--offset-gap-policy", "continue-from-earliest",
                         group_id=unique("outage-group")), tmp_path / "service.log")
        wait_for(lambda: scrape(url, "streamnb_model_records") == 100, 60, "100 records",
                 alive=service.alive)
        assert "reachable again" not in service.logs()
        broker.stop()
        wait_for(lambda: scrape(url, "streamnb_broker_reachable") == 0, 60,
                 "the broker to be seen gone", alive=service.alive)
        time.sleep(20)  # the clients retry many times a second meanwhile
        broker = EmbeddedBroker(port=port, log_path=tmp_path / "broker2.log").start()
        wait_for(lambda: scrape(url, "streamnb_broker_reachable") == 1, 120,
                 "the broker to be seen back", alive=service.alive)
        logs = service.logs()
    finally:
        if service is not None and service.alive():
            service.kill()
        broker.stop()
    assert "a Kafka broker is reachable again" in logs, logs
    assert logs.index("no Kafka broker reachable") < logs.index("reachable again"), logs
    client = [re.sub(r"\d+", "#", line.partition(" ")[2].partition(" ")[2])
              for line in logs.splitlines() if re.match(r"\S+ \S+ \w+ kafka", line)]
    repeated = {line for line in client if client.count(line) > 1}
    assert not repeated, "\n".join(sorted(repeated))
    assert len(client) < 40, "\n".join(client)

"""The harness of the Kafka tests and of the soak run (benchmarks/soak.py): topics, producing,
reading a topic back, service processes, metrics scrapes, message builders, snapshot damage.

Everything runs against a real Kafka-protocol broker (tansu in the tests, see
:mod:`.broker`). Known tansu differences are designed around: topics are created up front, a
topic's contents are counted by reading it (never by its reported end offset), produce uses
acknowledged writes, and every caller uses its own group id and topic names. Not used by the
service itself.
"""

from __future__ import annotations

__all__ = [
    "CONSUMER_CLIENTS",
    "CORRUPTIONS",
    "CRAFTED",
    "GROUP_FLAGS",
    "ROOT",
    "Relay",
    "ServiceProcess",
    "corrupt",
    "create_topic",
    "dumps",
    "free_port",
    "label_of",
    "labelled_features",
    "labelled_messages",
    "metric_value",
    "metrics_text",
    "produce",
    "read_topic",
    "relayed_broker",
    "scrape",
    "unique",
    "wait_for",
]

import contextlib
import importlib.util
import json
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

from streamnb.consumers.broker import EmbeddedBroker
from streamnb.consumers.children import STREAMNB_HOME, child_environment

# where the running streamnb is imported from (a checkout's root): the service processes'
# working directory and the first entry of their PYTHONPATH
ROOT = STREAMNB_HOME
# Group timings the broker needs in tests (joins take about session_timeout_ms / 2).
GROUP_FLAGS = ["--session-timeout-ms", "6000", "--heartbeat-interval-ms", "1000"]
# the service's consumer clients installed here (the default, auto, is the last one)
CONSUMER_CLIENTS = ["kafka-python", *(["confluent-kafka"]
                                      if importlib.util.find_spec("confluent_kafka") else [])]


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def create_topic(bootstrap: str, name: str, partitions: int = 1) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(name, partitions, 1)])
    finally:
        admin.close()


def produce(bootstrap: str, topic: str, values: Iterable[bytes],
            partition_of: Callable[[int], int] | None = None,
            keys: Iterable[bytes | None] | None = None,
            timestamp_of: Callable[[int], int] | None = None) -> int:
    """Send ``values`` (acknowledged), message i to partition ``partition_of(i)``, with the
    record timestamp ``timestamp_of(i)`` (ms; default: the producer's clock)."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5,
                             max_request_size=8_000_000)
    n = 0
    keys = iter(keys) if keys is not None else None
    for i, value in enumerate(values):
        producer.send(topic, value=value, key=next(keys) if keys else None,
                      partition=partition_of(i) if partition_of else None,
                      timestamp_ms=timestamp_of(i) if timestamp_of else None)
        n += 1
    producer.flush()
    producer.close()
    return n


def read_topic(bootstrap: str, topic: str, expect: int | None = None, timeout: float = 30.0,
               idle: float = 2.0) -> list:
    """Every record of ``topic`` from the beginning: until ``expect`` records arrived (or
    ``timeout``), or, without ``expect``, until nothing came for ``idle`` seconds."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None,
                             auto_offset_reset="earliest", enable_auto_commit=False,
                             max_partition_fetch_bytes=70_000_000, fetch_max_bytes=70_000_000)
    deadline = time.monotonic() + timeout
    partitions = None
    while not partitions and time.monotonic() < deadline:
        partitions = consumer.partitions_for_topic(topic)
        if not partitions:
            time.sleep(0.2)
    if not partitions:
        consumer.close()
        return []
    tps = [TopicPartition(topic, p) for p in sorted(partitions)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    out: list = []
    last = time.monotonic()
    while time.monotonic() < deadline:
        got = consumer.poll(timeout_ms=200, max_records=5000)
        for records in got.values():
            out += records
        if got:
            last = time.monotonic()
        if expect is not None and len(out) >= expect:
            break
        if expect is None and time.monotonic() - last >= idle:
            break
    consumer.close()
    return out


def label_of(i: int) -> str:
    """The class of message i (:func:`labelled_features` depends on it)."""
    return "spam" if i % 3 == 0 else "ham"


def labelled_messages(start: int, stop: int) -> list[bytes]:
    """Messages ``m{start}`` … ``m{stop - 1}``: :func:`labelled_features` and their labels."""
    return [dumps({"id": f"m{i}", "features": labelled_features(i), "label": label_of(i)})
            for i in range(start, stop)]


def labelled_features(i: int, vocabulary: int = 300) -> dict:
    """A deterministic message of tokens whose class depends on them (token t{j} for a few j
    derived from i), with a nominal attribute, so the counts have some structure."""
    spam = label_of(i) == "spam"
    base = 0 if spam else vocabulary // 2
    tokens = {f"t{base + (i * 7 + j * 13) % (vocabulary // 2)}": True for j in range(6)}
    tokens["source"] = ["mx1", "mx2", "relay"][i % 3 if spam else (i // 3) % 2]
    return tokens


def metrics_text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read().decode()


def metric_value(text: str, name: str, labels: dict | None = None) -> float | None:
    """The value of sample ``name{labels}`` in Prometheus text exposition."""
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v
                                           for k, v in (labels or {}).items()):
                return sample.value
    return None


class ServiceProcess:
    """``python -m streamnb serve ...`` in a child process, logs to a file."""

    def __init__(self, args: list[str], log_path: Path, env: dict | None = None) -> None:
        self.args = args
        self.log_path = log_path
        full_env = child_environment(service=True, **(env or {}))
        self.log = open(log_path, "ab")  # noqa: SIM115
        self.process = subprocess.Popen([sys.executable, "-m", "streamnb", "serve", *args],
                                        cwd=ROOT, env=full_env, stdin=subprocess.DEVNULL,
                                        stdout=self.log, stderr=subprocess.STDOUT)

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.log.close()

    def terminate(self, timeout: float = 60.0) -> int:
        """SIGTERM and the exit status; a process still running after ``timeout`` is dumped
        (every thread's stack, through faulthandler's SIGUSR1), killed and reported with its
        log, so a hang shows where it hung."""
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.send_signal(signal.SIGUSR1)
            time.sleep(1.0)
            self.kill()
            raise AssertionError(f"the service did not end {timeout:.0f} s after SIGTERM; "
                                 f"its log:\n{self.logs()[-20000:]}") from None
        self.log.close()
        if code:  # pytest shows a failing test's output: the log says why
            print(self.logs()[-20000:])
        return code

    def logs(self) -> str:
        return self.log_path.read_text(errors="replace")


def wait_for(condition: Callable[[], object], timeout: float, what: str,
             interval: float = 0.1, alive: Callable[[], bool] | None = None) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if alive is not None and not alive():
            raise AssertionError(f"process died while waiting for {what}")
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def scrape(url: str, name: str, labels: dict | None = None) -> float | None:
    try:
        return metric_value(metrics_text(url), name, labels)
    except OSError:
        return None


def dumps(obj) -> bytes:
    return json.dumps(obj).encode()


# the byte classes of a snapshot file that :func:`corrupt` damages
CORRUPTIONS = ("magic", "header", "body", "checksum", "truncated", "last-byte-cut", "empty")
# ... and the headers it crafts, checksummed again: an offset past 64 bits, a nesting past the
# JSON decoder's bound
CRAFTED = ("offset-overflow", "deep-header")


def corrupt(path: Path, how: str) -> None:
    """Damage one snapshot file in one byte class of :data:`CORRUPTIONS`, or craft its header
    as one of :data:`CRAFTED` says."""
    data = bytearray(path.read_bytes())
    if how in CRAFTED:
        data = bytearray(_crafted(bytes(data), how))
    elif how == "magic":  # the fixed header: magic bytes
        data[0] ^= 0xFF
    elif how == "header":  # the JSON header
        data[24] ^= 0x01
    elif how == "body":  # an array byte in the middle
        data[len(data) * 2 // 3] ^= 0x01
    elif how == "checksum":  # the SHA-256 at the end
        data[-1] ^= 0x01
    elif how == "truncated":
        data = data[: len(data) // 2]
    elif how == "last-byte-cut":
        data = data[:-1]
    elif how == "empty":
        data = bytearray()
    else:
        raise ValueError(how)
    path.write_bytes(bytes(data))


def _crafted(data: bytes, how: str) -> bytes:
    """A snapshot file whose header says what ``how`` names, with a valid checksum."""
    import hashlib

    from streamnb.stats.persist import _PREFIX

    magic, version, length = _PREFIX.unpack_from(data)
    head = json.loads(data[_PREFIX.size:_PREFIX.size + length])
    if how == "offset-overflow":
        head["meta"]["partitions"][0]["offset"] = 2**70
        text = json.dumps(head).encode()
    else:
        depth = 100_000
        text = json.dumps(head).encode().replace(
            b'"meta": {', b'"meta": {"deep": ' + b"[" * depth + b"]" * depth + b", ", 1)
    body = _PREFIX.pack(magic, version, len(text)) + text + data[_PREFIX.size + length:-32]
    return body + hashlib.sha256(body).digest()


class Relay:
    """A TCP relay on 127.0.0.1 in front of a broker, to cut it off and bring it back: an
    outage of a broker that keeps its log (the embedded tansu keeps it in memory, so a
    restarted one is empty). :meth:`cut` closes the port and every connection through it
    (clients get "connection refused", as from a stopped broker); :meth:`restore` listens on
    the same port again."""

    def __init__(self, target_port: int, port: int | None = None) -> None:
        self.target_port = target_port
        self.port = port or free_port()
        self._listener: socket.socket | None = None
        self._connections: list[socket.socket] = []
        self._lock = threading.Lock()
        self.restore()

    def restore(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True,
                         name="relay-accept").start()

    def cut(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            connections, self._connections = self._connections, []
        for sock in [listener, *connections]:
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()

    close = cut

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # cut
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), 5)
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._listener is not listener:  # cut meanwhile
                    client.close()
                    upstream.close()
                    return
                self._connections += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True,
                             name="relay-pump").start()

    @staticmethod
    def _pump(a: socket.socket, b: socket.socket) -> None:
        peer = {a: b, b: a}
        with selectors.DefaultSelector() as selector:
            for sock in peer:
                sock.setblocking(False)
                selector.register(sock, selectors.EVENT_READ)
            try:
                while True:
                    for key, _ in selector.select():
                        data = key.fileobj.recv(1 << 16)
                        if not data:
                            return
                        peer[key.fileobj].setblocking(True)
                        peer[key.fileobj].sendall(data)
                        peer[key.fileobj].setblocking(False)
            except OSError:
                return
            finally:
                for sock in peer:
                    with contextlib.suppress(OSError):
                        sock.close()


@contextlib.contextmanager
def relayed_broker(log_path: Path | None = None):
    """An embedded broker reachable only through a :class:`Relay` (the one it advertises):
    yields ``(broker, relay)``; ``relay.port`` is the bootstrap port."""
    relay_port = free_port()
    broker = EmbeddedBroker(log_path=log_path, advertised_port=relay_port).start()
    relay = Relay(broker.port, relay_port)
    try:
        yield broker, relay
    finally:
        relay.cut()
        broker.stop()

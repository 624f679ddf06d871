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
    "CONSUMER_CLIENTS", "CORRUPTIONS", "CRAFTED", "GROUP_FLAGS", "ROOT", "ServiceProcess",
    "corrupt", "create_topic", "dumps",
    "free_port", "label_of", "labelled_features", "labelled_messages", "metric_value",
    "metrics_text", "produce", "read_topic", "scrape", "unique", "wait_for",
]

import importlib.util
import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

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
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout)
        self.log.close()
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

"""Publishing predictions: in the service's process, or from a helper process.

kafka-python's producer spends about as much CPU per record (partitioner, accumulator, record
encoding, all in Python) as its consumer spends reading one, so a service that consumes and
publishes in one process runs at about half the raw consume rate. :class:`ProcessPublisher`
moves the producer to a child process (``python -m consumers.publisher``) on another core: the
service hands it each batch's records as one binary frame through a pipe (a few bytes of
framing per record, no pickle) and asks it to flush before every snapshot, so a snapshot's
offsets never run ahead of the predictions delivered for them.

Pipe protocol (child's stdin): frames ``kind (1 byte) | length (4 bytes, little-endian) |
payload``: ``C`` the producer's settings as JSON (first, once); ``R`` records of one topic
(``topic length (2) | topic | count (4) | key lengths | value lengths | keys | values``, the
lengths as native unsigned 32-bit integers); ``F``
flush, answered on the child's stdout by ``K`` or ``E <error>``. End of input: flush and exit.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
from array import array
from collections.abc import Sequence
from itertools import accumulate, pairwise
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["ProcessPublisher", "ProducerPublisher", "PublisherError"]

log = logging.getLogger("streamnb.service")


class PublisherError(RuntimeError):
    """The publisher could not deliver (its process died, or the brokers refused records)."""


def _frame(kind: bytes, payload: bytes) -> bytes:
    return kind + len(payload).to_bytes(4, "little") + payload


def _records_payload(topic: str, keys: Sequence[bytes], values: Sequence[bytes]) -> bytes:
    if len(keys) != len(values):
        raise ValueError(f"{len(keys)} keys but {len(values)} values")
    name = topic.encode()
    return b"".join([len(name).to_bytes(2, "little"), name, len(keys).to_bytes(4, "little"),
                     array("I", map(len, keys)).tobytes(), array("I", map(len, values)).tobytes(),
                     *keys, *values])


def _records(payload: bytes) -> tuple[str, list[bytes], list[bytes]]:
    """Inverse of :func:`_records_payload` (both ends run on one machine: native byte order)."""
    n = int.from_bytes(payload[:2], "little")
    topic, at = payload[2:2 + n].decode(), 2 + n
    count = int.from_bytes(payload[at:at + 4], "little")
    at += 4
    lengths = array("I")
    lengths.frombytes(payload[at:at + 2 * count * lengths.itemsize])
    at += 2 * count * lengths.itemsize
    ends = list(accumulate(lengths, initial=at))
    parts = [payload[a:b] for a, b in pairwise(ends)]
    return topic, parts[:count], parts[count:]


class ProducerPublisher:
    """Records sent with a ``KafkaProducer`` of this process."""

    def __init__(self, producer: Any) -> None:
        self.producer = producer

    def send_batch(self, topic: str, keys: Sequence[bytes], values: Sequence[bytes]) -> None:
        send = self.producer.send
        for key, value in zip(keys, values, strict=True):
            send(topic, key=key, value=value)

    def flush(self) -> None:
        self.producer.flush()

    def close(self) -> None:
        """The producer belongs to the caller."""


class ProcessPublisher:
    """Records sent by a ``KafkaProducer`` in a child process.

    Parameters
    ----------
    producer_options
        ``KafkaProducer`` settings (secrets included: they travel through the pipe, never
        through the command line or the environment).
    log_level
        The child's log level (its logs go to this process's stderr, secrets redacted).

    """

    def __init__(self, producer_options: dict[str, Any], log_level: str = "warning") -> None:
        root = str(Path(__file__).resolve().parents[1])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            filter(None, [root, os.environ.get("PYTHONPATH")]))}
        self.process = subprocess.Popen([sys.executable, "-m", "consumers.publisher"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self._write(_frame(b"C", json.dumps({"options": producer_options,
                                             "log_level": log_level}).encode()))

    def _write(self, data: bytes) -> None:
        try:
            self.process.stdin.write(data)
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            raise PublisherError(f"the publisher process exited (status "
                                 f"{self.process.poll()})") from None

    def send_batch(self, topic: str, keys: Sequence[bytes], values: Sequence[bytes]) -> None:
        if keys:
            self._write(_frame(b"R", _records_payload(topic, keys, values)))

    def flush(self) -> None:
        """Return once every record sent so far is acknowledged by the brokers."""
        self._write(_frame(b"F", b""))
        answer = self.process.stdout.readline()
        if answer != b"K\n":
            detail = answer.decode(errors="replace").strip() or (
                f"the publisher process exited (status {self.process.poll()})")
            raise PublisherError(detail)

    def close(self, timeout: float = 60.0) -> None:
        """Let the child flush and exit."""
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()


def _read_frame(stream: BinaryIO) -> tuple[bytes, bytes] | None:
    header = stream.read(5)
    if len(header) < 5:
        return None
    length = int.from_bytes(header[1:], "little")
    payload = stream.read(length)
    if len(payload) < length:
        return None
    return header[:1], payload


def _serve(stdin: BinaryIO, stdout: BinaryIO) -> int:
    """The child: send every record framed on ``stdin``; answer flushes on ``stdout``."""
    from kafka import KafkaProducer

    from consumers.config import RedactSecrets

    first = _read_frame(stdin)
    if first is None or first[0] != b"C":
        return 2
    setup = json.loads(first[1])
    options = setup["options"]
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(RedactSecrets([str(options[k]) for k in ("sasl_plain_password",
                                                               "ssl_password") if options.get(k)]))
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s publisher %(name)s: "
                                           "%(message)s"))
    logging.basicConfig(level=setup["log_level"].upper(), handlers=[handler])
    if setup["log_level"] != "debug":
        logging.getLogger("kafka").setLevel("WARNING")
    producer = KafkaProducer(**options)
    errors: list[BaseException] = []
    single: dict[str, int | None] = {}  # topic -> its partition, if it has only one
    while (frame := _read_frame(stdin)) is not None:
        kind, payload = frame
        if kind == b"R":
            topic, keys, values = _records(payload)
            if topic not in single:
                partitions = producer.partitions_for(topic)
                single[topic] = next(iter(partitions)) if len(partitions) == 1 else None
            # a one-partition topic needs no key hashing (kafka-python's murmur2 is Python)
            partition, send, failed = single[topic], producer.send, errors.append
            for key, value in zip(keys, values, strict=True):
                send(topic, key=key, value=value, partition=partition).add_errback(failed)
        elif kind == b"F":
            producer.flush()
            stdout.write(b"K\n" if not errors else
                         b"E " + f"delivery failed: {errors[0]!r}".encode() + b"\n")
            stdout.flush()
            errors.clear()
    producer.flush()
    producer.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(_serve(sys.stdin.buffer, sys.stdout.buffer))

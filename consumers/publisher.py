"""Publishing predictions: in the service's process, or from a helper process.

kafka-python's producer spends about as much CPU per record (partitioner, accumulator, record
encoding, all in Python) as its consumer spends reading one, so a service that consumes and
publishes in one process runs at about half the raw consume rate. :class:`ProcessPublisher`
moves the producer to a child process (``python -m streamnb.consumers.publisher``) on another
core: the service hands it each batch's records as one binary frame through a pipe (a few bytes
of framing per record, no pickle) and asks it to flush before every snapshot, so a snapshot's
offsets never run ahead of the predictions delivered for them.

Pipe protocol (child's stdin): frames ``kind (1 byte) | length (4 bytes, little-endian) |
payload``: ``C`` the producer's settings as JSON (first, once); ``R`` records of one topic
(``topic length (2) | topic | count (4) | key lengths | value lengths | keys | values``, the
lengths as native unsigned 32-bit integers); ``P`` predictions, formatted into output records
by the child (:func:`format_predictions`: JSON building is the service's largest per-record
cost after decoding, so it goes to the other core too): ``header length (4) | header JSON
(topic, classes, versions, count, scored) | id lengths | ids | probabilities (count × classes
float64) | scores (count float64, when scored)``; ``F``
flush, answered on the child's stdout by ``K`` or ``E <error>``. End of input: flush and exit.

The child's producer is confluent-kafka's (librdkafka, C: a few microseconds per record instead
of kafka-python's ~50) when that package is installed (the ``fast-publisher`` extra) and every
setting has a librdkafka equivalent, kafka-python's otherwise (``client``: ``"auto"``, or one
of :data:`CLIENTS` to insist); the service's consumer is chosen alike
(:mod:`streamnb.consumers.consumer`). Both producers partition keyed records alike (murmur2,
as the Java client does).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import math
import os
import subprocess
import sys
from array import array
from collections.abc import Sequence
from itertools import accumulate, pairwise
from json.encoder import encode_basestring_ascii
from typing import Any, BinaryIO

import numpy as np

from streamnb.consumers.children import child_environment

__all__ = [
    "CLIENTS", "ProcessPublisher", "ProducerPublisher", "PublisherError", "format_predictions",
    "librdkafka_config",
]

log = logging.getLogger("streamnb.service")
# The pipe to the child holds this much (Linux; 64 KiB otherwise): ~40 batches of 1,000
# predictions, so the service does not wait while the child starts (~0.3 s) or has a slow moment
_PIPE_BYTES = 1 << 20

#: The producer clients the publisher process can use.
CLIENTS = ("kafka-python", "confluent-kafka")

# kafka-python producer setting -> librdkafka property (values converted by _librdkafka_value)
_LIBRDKAFKA = {
    "bootstrap_servers": "bootstrap.servers", "client_id": "client.id", "acks": "acks",
    "linger_ms": "linger.ms", "batch_size": "batch.size", "max_request_size": "message.max.bytes",
    "delivery_timeout_ms": "message.timeout.ms", "enable_idempotence": "enable.idempotence",
    "security_protocol": "security.protocol", "sasl_mechanism": "sasl.mechanism",
    "sasl_plain_username": "sasl.username", "sasl_plain_password": "sasl.password",
    "sasl_kerberos_service_name": "sasl.kerberos.service.name", "ssl_cafile": "ssl.ca.location",
    "ssl_certfile": "ssl.certificate.location", "ssl_keyfile": "ssl.key.location",
    "ssl_password": "ssl.key.password", "ssl_crlfile": "ssl.crl.location",
    "ssl_check_hostname": "ssl.endpoint.identification.algorithm",
    "bootstrap_timeout_ms": None,  # kafka-python's connect deadline; librdkafka retries anyway
}


def librdkafka_config(options: dict[str, Any]) -> dict[str, Any] | None:
    """The librdkafka configuration equivalent to kafka-python producer ``options``, or None
    when one of them has no equivalent (OAUTHBEARER token providers, for instance).

    Examples
    --------
    >>> librdkafka_config({"bootstrap_servers": ["k1:9092", "k2:9092"], "acks": "all",
    ...                    "ssl_check_hostname": False})["bootstrap.servers"]
    'k1:9092,k2:9092'
    >>> librdkafka_config({"sasl_mechanism": "OAUTHBEARER"}) is None
    True

    """
    out: dict[str, Any] = {"partitioner": "murmur2_random"}  # kafka-python's and Java's
    for key, value in options.items():
        if key not in _LIBRDKAFKA or (key == "sasl_mechanism" and value == "OAUTHBEARER"):
            return None
        name = _LIBRDKAFKA[key]
        if name is None:
            continue
        if key == "bootstrap_servers" and not isinstance(value, str):
            value = ",".join(value)
        elif key == "ssl_check_hostname":
            value = "https" if value else "none"
        out[name] = value
    return out


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


def _json_number(value: float) -> str:
    """A float as JSON: its repr (exact round trip), ``null`` if it is not finite."""
    return repr(value) if math.isfinite(value) else "null"


def format_predictions(ids: Sequence[str], proba: np.ndarray, classes: Sequence[Any],
                       model_version: int, structure_version: int,
                       scores: np.ndarray | None = None) -> tuple[list[bytes], list[bytes]]:
    """Output records ``(keys, values)``: for each id its JSON prediction, with ``proba[i]``
    the probabilities of ``classes`` (no class yet: label null and an empty ``proba``) and,
    if ``scores`` are given (a model with ``score_many``: SpamFilter's spam log-odds),
    ``"score": scores[i]`` after ``proba`` (``null`` if not finite).

    Examples
    --------
    >>> keys, values = format_predictions(["m1"], np.array([[0.25, 0.75]]), ["spam", "ham"],
    ...                                   7, 0)
    >>> keys, values[0].decode()[:57]
    ([b'm1'], '{"id":"m1","label":"ham","proba":{"spam":0.25,"ham":0.75}')
    >>> _, values = format_predictions(["m1"], np.array([[0.25, 0.75]]), ["spam", "ham"],
    ...                                7, 0, scores=np.array([-1.0986122886681098]))
    >>> values[0].decode()[57:]
    ',"score":-1.0986122886681098,"model_version":7,"structure_version":0}'

    """
    tail = f',"model_version":{model_version},"structure_version":{structure_version}}}'
    keys = [i.encode() for i in ids]
    if scores is not None and len(scores) != len(ids):
        raise ValueError(f"{len(ids)} ids but {len(scores)} scores")
    score = ',"score":%s' if scores is not None else ""
    if not len(classes):
        template = '{"id":%s,"label":null,"proba":{}' + score + tail
        if scores is None:
            return keys, [(template % encode_basestring_ascii(i)).encode() for i in ids]
        return keys, [(template % (encode_basestring_ascii(i), _json_number(z))).encode()
                      for i, z in zip(ids, scores.tolist(), strict=True)]
    # one %-template per batch: a record is then one formatting operation (floats as repr,
    # valid JSON for finite numbers; a batch holding another, which a model's state should
    # never give, writes it as null, never as a bare nan)
    rows, number = proba.tolist(), "%r"
    if not np.isfinite(proba).all():
        rows, number = [list(map(_json_number, row)) for row in rows], "%s"
    names = (encode_basestring_ascii(str(c)).replace("%", "%%") for c in classes)
    template = ('{"id":%s,"label":%s,"proba":{' + ",".join(f"{k}:{number}" for k in names)
                + "}" + score + tail)
    labels = [json.dumps(c) for c in classes]
    label_of = [labels[k] for k in proba.argmax(axis=1).tolist()]
    if scores is None:
        return keys, [(template % (encode_basestring_ascii(i), label, *row)).encode()
                      for i, label, row in zip(ids, label_of, rows, strict=True)]
    return keys, [(template % (encode_basestring_ascii(i), label, *row, _json_number(z)))
                  .encode() for i, label, row, z in zip(ids, label_of, rows, scores.tolist(),
                                                        strict=True)]


def _predictions_payload(topic: str, ids: Sequence[str], proba: np.ndarray,
                         classes: Sequence[Any], model_version: int,
                         structure_version: int, scores: np.ndarray | None = None) -> bytes:
    header = json.dumps({"topic": topic, "classes": list(classes), "n": len(ids),
                         "model_version": model_version,
                         "structure_version": structure_version,
                         "scored": scores is not None}).encode()
    encoded = [i.encode() for i in ids]
    tail = [] if scores is None else [np.ascontiguousarray(scores, dtype=np.float64).tobytes()]
    return b"".join([len(header).to_bytes(4, "little"), header,
                     array("I", map(len, encoded)).tobytes(), *encoded,
                     np.ascontiguousarray(proba, dtype=np.float64).tobytes(), *tail])


def _predictions(payload: bytes
                 ) -> tuple[str, list[str], np.ndarray, list, int, int, np.ndarray | None]:
    """Inverse of :func:`_predictions_payload`."""
    at = 4 + int.from_bytes(payload[:4], "little")
    header = json.loads(payload[4:at])
    n, k = header["n"], len(header["classes"])
    lengths = array("I")
    lengths.frombytes(payload[at:at + n * lengths.itemsize])
    ends = list(accumulate(lengths, initial=at + n * lengths.itemsize))
    ids = [payload[a:b].decode() for a, b in pairwise(ends)]
    proba = np.frombuffer(payload, dtype=np.float64, count=n * k, offset=ends[-1]).reshape(n, k)
    scores = (np.frombuffer(payload, dtype=np.float64, count=n, offset=ends[-1] + 8 * n * k)
              if header.get("scored") else None)
    return (header["topic"], ids, proba, header["classes"], header["model_version"],
            header["structure_version"], scores)


class ProducerPublisher:
    """Records sent with a ``KafkaProducer`` of this process."""

    def __init__(self, producer: Any) -> None:
        self.producer = producer

    def send_batch(self, topic: str, keys: Sequence[bytes], values: Sequence[bytes]) -> None:
        send = self.producer.send
        for key, value in zip(keys, values, strict=True):
            send(topic, key=key, value=value)

    def send_predictions(self, topic: str, ids: Sequence[str], proba: np.ndarray,
                         classes: Sequence[Any], model_version: int,
                         structure_version: int, scores: np.ndarray | None = None) -> None:
        self.send_batch(topic, *format_predictions(ids, proba, classes, model_version,
                                                   structure_version, scores))

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
    client
        ``"auto"`` (confluent-kafka if installed, else kafka-python) or one of
        :data:`CLIENTS`.

    """

    def __init__(self, producer_options: dict[str, Any], log_level: str = "warning",
                 client: str = "auto") -> None:
        if client not in ("auto", *CLIENTS):
            raise ValueError(f"client must be 'auto' or one of {CLIENTS}, got {client!r}")
        self._setup = _frame(b"C", json.dumps({"options": producer_options,
                                               "log_level": log_level,
                                               "client": client}).encode())
        self.process: subprocess.Popen | None = None  # started with the first records

    def _start(self) -> subprocess.Popen:
        """The child, started on first use: a service fed only labelled records never needs
        it, nor the core it would take to start."""
        if self.process is None:
            self.process = subprocess.Popen([sys.executable, "-m", "streamnb.consumers.publisher"],
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            env=child_environment())
            with contextlib.suppress(AttributeError, OSError):  # not Linux, or above the limit
                fcntl.fcntl(self.process.stdin.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
            self._write(self._setup)
        return self.process

    def _write(self, data: bytes) -> None:
        process = self._start()
        try:
            process.stdin.write(data)
            process.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            raise PublisherError(f"the publisher process exited (status "
                                 f"{process.poll()})") from None

    def send_batch(self, topic: str, keys: Sequence[bytes], values: Sequence[bytes]) -> None:
        if keys:
            self._write(_frame(b"R", _records_payload(topic, keys, values)))

    def send_predictions(self, topic: str, ids: Sequence[str], proba: np.ndarray,
                         classes: Sequence[Any], model_version: int,
                         structure_version: int, scores: np.ndarray | None = None) -> None:
        """Records of :func:`format_predictions`, formatted by the child."""
        if ids:
            self._write(_frame(b"P", _predictions_payload(topic, ids, proba, classes,
                                                          model_version, structure_version,
                                                          scores)))

    def flush(self) -> None:
        """Return once every record sent so far is acknowledged by the brokers."""
        if self.process is None:  # nothing was sent
            return
        self._write(_frame(b"F", b""))
        answer = self.process.stdout.readline()
        if answer != b"K\n":
            detail = answer.decode(errors="replace").strip() or (
                f"the publisher process exited (status {self.process.poll()})")
            raise PublisherError(detail)

    def close(self, timeout: float = 60.0) -> None:
        """Let the child flush and exit."""
        if self.process is None:
            return
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


class _KafkaPythonSender:
    """kafka-python's producer."""

    def __init__(self, options: dict[str, Any]) -> None:
        from kafka import KafkaProducer

        self.producer = KafkaProducer(**options)
        self.errors: list[BaseException] = []
        self.single: dict[str, int | None] = {}  # topic -> its partition, if it has only one

    def send(self, topic: str, keys: list[bytes], values: list[bytes]) -> None:
        producer = self.producer
        if topic not in self.single:
            partitions = producer.partitions_for(topic)
            self.single[topic] = next(iter(partitions)) if len(partitions) == 1 else None
        # a one-partition topic needs no key hashing (kafka-python's murmur2 is Python)
        partition, send, failed = self.single[topic], producer.send, self.errors.append
        for key, value in zip(keys, values, strict=True):
            send(topic, key=key, value=value, partition=partition).add_errback(failed)

    def flush(self) -> str | None:
        self.producer.flush()
        error = f"delivery failed: {self.errors[0]!r}" if self.errors else None
        self.errors.clear()
        return error


class _ConfluentSender:
    """confluent-kafka's producer (librdkafka)."""

    def __init__(self, config: dict[str, Any]) -> None:
        from confluent_kafka import Producer

        # librdkafka's lines through Python's logging (not straight to stderr): redacted and
        # thinned as the service's are
        self.producer = Producer({**config, "logger": logging.getLogger("kafka.librdkafka")})
        self.errors: list[Any] = []

    def _delivered(self, error: Any, message: Any) -> None:
        if error is not None:
            self.errors.append(error)

    def send(self, topic: str, keys: list[bytes], values: list[bytes]) -> None:
        produce, poll, delivered = self.producer.produce, self.producer.poll, self._delivered
        for key, value in zip(keys, values, strict=True):
            while True:
                try:
                    produce(topic, value, key, on_delivery=delivered)
                    break
                except BufferError:  # the local queue is full: let deliveries drain it
                    poll(0.05)
        poll(0)  # serve the delivery callbacks due so far

    def flush(self) -> str | None:
        while self.producer.flush(1.0):
            pass
        error = f"delivery failed: {self.errors[0]}" if self.errors else None
        self.errors.clear()
        return error


def _sender(options: dict[str, Any], client: str) -> _KafkaPythonSender | _ConfluentSender:
    """The producer of the child: confluent-kafka's if asked for, or for ``"auto"`` if it is
    installed and every setting translates; kafka-python's otherwise."""
    if client != "kafka-python":
        config = librdkafka_config(options)
        try:
            import confluent_kafka  # noqa: F401
        except ImportError:
            config = None
            if client == "confluent-kafka":
                raise
        if config is not None:
            return _ConfluentSender(config)
        if client == "confluent-kafka":
            raise ValueError("some producer settings have no librdkafka equivalent")
    return _KafkaPythonSender(options)


def _serve(stdin: BinaryIO, stdout: BinaryIO) -> int:
    """The child: send every record framed on ``stdin``; answer flushes on ``stdout``."""
    from streamnb.consumers.logs import quiet_kafka_logs
    from streamnb.consumers.redaction import RedactSecrets

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
        quiet_kafka_logs(handler)
    sender = _sender(options, setup.get("client", "auto"))
    log.info("publisher process: producing with %s", "confluent-kafka" if isinstance(
        sender, _ConfluentSender) else "kafka-python")
    while (frame := _read_frame(stdin)) is not None:
        kind, payload = frame
        if kind == b"R":
            sender.send(*_records(payload))
        elif kind == b"P":
            topic, ids, proba, classes, model_version, structure_version, scores = (
                _predictions(payload))
            sender.send(topic, *format_predictions(ids, proba, classes, model_version,
                                                   structure_version, scores))
        elif kind == b"F":
            error = sender.flush()
            stdout.write(b"K\n" if error is None else b"E " + error.encode() + b"\n")
            stdout.flush()
    error = sender.flush()  # what was sent after the last flush asked for
    if error is not None:
        log.error("publisher process: %s", error)
    return 0 if error is None else 1


if __name__ == "__main__":
    try:
        status = _serve(sys.stdin.buffer, sys.stdout.buffer)
    except (BrokenPipeError, ConnectionResetError, KeyboardInterrupt):
        # the service is gone (killed, or its pipe closed mid-answer): nobody to report to;
        # what was not flushed is re-read and re-published by the next run (at least once)
        status = 1
    logging.shutdown()
    # every record is delivered or reported: skip the interpreter's and the producer's teardown
    # (60-110 ms that the service's close waits for)
    os._exit(status)

"""The publisher process: records framed through a pipe arrive intact, in order; a flush
returns only once they are acknowledged; a dead publisher is an error, never silence."""

from __future__ import annotations

import pytest
from kafka_helpers import create_topic, read_topic, unique

from consumers.publisher import ProcessPublisher, PublisherError


def test_records_arrive_intact_and_in_order(kafka_broker):
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("publisher")
    create_topic(bootstrap, topic)
    publisher = ProcessPublisher({"bootstrap_servers": [bootstrap], "acks": "all"})
    keys = [f"k{i}".encode() for i in range(2500)]
    # empty, binary and large values: the framing must not care
    values = [b"", b"\x00\xff" * 3, b"x" * 200_000] + [f'{{"n":{i}}}'.encode()
                                                       for i in range(3, 2500)]
    for start in range(0, 2500, 700):
        publisher.send_batch(topic, keys[start:start + 700], values[start:start + 700])
    publisher.flush()
    got = read_topic(bootstrap, topic, expect=2500, timeout=60)
    assert [(r.key, r.value) for r in got] == list(zip(keys, values, strict=True))
    publisher.close()
    assert publisher.process.returncode == 0


def test_a_dead_publisher_is_an_error(kafka_broker):
    publisher = ProcessPublisher({"bootstrap_servers": [kafka_broker.bootstrap_servers],
                                  "acks": "all"})
    publisher.process.kill()
    publisher.process.wait()
    with pytest.raises(PublisherError, match="exited"):
        publisher.send_batch("t", [b"k"] * 10, [b"v" * 100_000] * 10)
        publisher.flush()
    publisher.close()

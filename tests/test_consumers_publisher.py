"""The publisher process: records framed through a pipe arrive intact, in order; a flush
returns only once they are acknowledged; a dead publisher is an error, never silence. Each
producer client (kafka-python, confluent-kafka) is tested; keyed records land on the partition
kafka-python's (Java-compatible) partitioner picks, whichever client sends them."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest
from kafka.partitioner.default import murmur2
from kafka_helpers import create_topic, read_topic, unique

from streamnb.consumers.publisher import (
    ProcessPublisher,
    PublisherError,
    format_predictions,
    librdkafka_config,
)

CLIENTS = ["kafka-python", pytest.param("confluent-kafka", marks=pytest.mark.skipif(
    importlib.util.find_spec("confluent_kafka") is None,
    reason="the fast-publisher extra (confluent-kafka) is not installed"))]


@pytest.mark.parametrize("client", CLIENTS)
def test_records_arrive_intact_and_in_order(kafka_broker, client):
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("publisher")
    create_topic(bootstrap, topic)
    publisher = ProcessPublisher({"bootstrap_servers": [bootstrap], "acks": "all",
                                  "linger_ms": 5, "max_request_size": 1_000_000},
                                 client=client)
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


@pytest.mark.parametrize("client", CLIENTS)
def test_keyed_records_land_where_kafka_python_puts_them(kafka_broker, client):
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("keyed")
    create_topic(bootstrap, topic, partitions=4)
    publisher = ProcessPublisher({"bootstrap_servers": [bootstrap], "acks": "all"},
                                 client=client)
    keys = [f"m{i}".encode() for i in range(400)]
    publisher.send_batch(topic, keys, [b"v"] * 400)
    publisher.flush()
    publisher.close()
    got = {r.key: r.partition for r in read_topic(bootstrap, topic, expect=400, timeout=60)}
    assert got == {k: (murmur2(k) & 0x7FFFFFFF) % 4 for k in keys}  # kafka-python's choice
    assert len(set(got.values())) == 4


def test_settings_without_a_librdkafka_equivalent_keep_kafka_python():
    assert librdkafka_config({"sasl_mechanism": "OAUTHBEARER"}) is None
    assert librdkafka_config({"api_version": (3, 9)}) is None
    config = librdkafka_config({"bootstrap_servers": ["a:1", "b:2"], "acks": "all",
                                "security_protocol": "SASL_SSL", "sasl_mechanism": "PLAIN",
                                "sasl_plain_username": "u", "sasl_plain_password": "p",
                                "ssl_check_hostname": False, "bootstrap_timeout_ms": 100})
    assert config == {"partitioner": "murmur2_random", "bootstrap.servers": "a:1,b:2",
                      "acks": "all", "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
                      "sasl.username": "u", "sasl.password": "p",
                      "ssl.endpoint.identification.algorithm": "none"}


@pytest.mark.parametrize("client", CLIENTS)
def test_a_dead_publisher_is_an_error(kafka_broker, client):
    publisher = ProcessPublisher({"bootstrap_servers": [kafka_broker.bootstrap_servers],
                                  "acks": "all"}, client=client)
    assert publisher.process is None  # started with the first records
    publisher.flush()  # nothing sent: nothing to wait for
    publisher.send_batch(unique("t"), [b"k"], [b"v"])
    publisher.flush()
    publisher.process.kill()
    publisher.process.wait()
    with pytest.raises(PublisherError, match="exited"):
        publisher.send_batch("t", [b"k"] * 10, [b"v" * 100_000] * 10)
        publisher.flush()
    publisher.close()


@pytest.mark.parametrize("client", CLIENTS)
def test_predictions_formatted_by_the_child_are_the_service_format(kafka_broker, client):
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("predictions")
    create_topic(bootstrap, topic)
    publisher = ProcessPublisher({"bootstrap_servers": [bootstrap], "acks": "all"},
                                 client=client)
    ids = [f"m{i}é" for i in range(300)]
    proba = np.random.default_rng(0).dirichlet([1, 1, 1], size=300)
    classes = ["spam", "ham", 3]
    publisher.send_predictions(topic, ids[:200], proba[:200], classes, 41, 2)
    publisher.send_predictions(topic, ids[200:], np.zeros((100, 0)), [], 0, 0)
    publisher.flush()
    publisher.close()
    got = read_topic(bootstrap, topic, expect=300, timeout=60)
    first = format_predictions(ids[:200], proba[:200], classes, 41, 2)
    rest = format_predictions(ids[200:], np.zeros((100, 0)), [], 0, 0)
    assert [(r.key, r.value) for r in got] == list(zip(first[0] + rest[0], first[1] + rest[1],
                                                       strict=True))


@pytest.mark.parametrize("scores", [None, np.array([0.5, np.nan])])
def test_a_probability_that_is_not_finite_is_written_as_null(scores):
    """No state should give one (a model refuses the values that would), but an output record
    is JSON whatever the numbers: a NaN or infinite probability is null, never a bare nan."""
    _, values = format_predictions(["a", "b"], np.array([[0.25, 0.75], [np.nan, np.inf]]),
                                   ["spam", "ham"], 3, 0, scores=scores)
    first, second = (json.loads(v) for v in values)
    assert first["proba"] == {"spam": 0.25, "ham": 0.75}
    assert second["proba"] == {"spam": None, "ham": None}
    if scores is not None:
        assert first["score"] == 0.5 and second["score"] is None

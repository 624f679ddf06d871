"""The service's consumer interface (consumers/consumer.py): both clients, kafka-python's and
confluent-kafka's, do the same thing against the real broker: assignment through on_assign with
the positions set there, seek, pause/resume, batched polls in offset order, watermarks,
commits, connectivity; and the option translation to librdkafka."""

from __future__ import annotations

import time

import pytest
from kafka import KafkaConsumer, TopicPartition
from kafka_helpers import GROUP_FLAGS, create_topic, produce, unique

from streamnb.consumers.config import ConfigError, load_config
from streamnb.consumers.consumer import (
    ConfluentConsumer,
    confluent_config,
    open_consumer,
)
from streamnb.consumers.testing import CONSUMER_CLIENTS


def options(bootstrap: str, group: str = "") -> dict:
    flags = {"bootstrap_servers": bootstrap, "group_id": group, "max_poll_records": 50}
    if group:
        flags.update(session_timeout_ms=int(GROUP_FLAGS[1]), heartbeat_interval_ms=int(
            GROUP_FLAGS[3]))
    return load_config(flags, environ={}).consumer_options()


def read(consumer, want: int, timeout: float = 20.0) -> dict[int, list[int]]:
    """Offsets read per partition until ``want`` records (batches of at most 50)."""
    out: dict[int, list[int]] = {}
    deadline = time.monotonic() + timeout
    while sum(map(len, out.values())) < want and time.monotonic() < deadline:
        for tp, records in consumer.poll(50, 200).items():
            assert len(records.offsets) == len(records.values) <= 50
            assert records.offsets == sorted(records.offsets)
            out.setdefault(tp.partition, []).extend(records.offsets)
    return out


@pytest.mark.parametrize("client", CONSUMER_CLIENTS)
def test_standalone_assignment_seek_pause_watermarks(kafka_broker, client):
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("iface")
    create_topic(bootstrap, topic, partitions=2)
    values = [f"v{i}".encode() for i in range(400)]
    produce(bootstrap, topic, values, partition_of=lambda i: i % 2,
            keys=[f"k{i}".encode() for i in range(400)])
    p0, p1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    assigned = []

    def on_assign(tps):  # positions are set here, as the service does
        assigned.append(sorted(tps))
        consumer.seek(p0, 150)
        consumer.seek_to_beginning(p1)
        consumer.pause(p1)

    consumer = open_consumer(options(bootstrap), client, on_assign=on_assign)
    assert consumer.client == client
    try:
        assert consumer.partitions_for_topic(topic) == {0, 1}
        consumer.assign([p0, p1])
        assert assigned == [[p0, p1]] and consumer.assignment() == {p0, p1}
        got = read(consumer, 50)  # p1 is paused: p0 only, from 150
        assert list(got) == [0] and got[0] == list(range(150, 200))
        consumer.resume(p1)
        got = read(consumer, 200)
        assert got[1] == list(range(200)) and got.get(0, []) == []
        consumer.seek(p0, 10)
        got = read(consumer, 190)
        assert got[0] == list(range(10, 200))
        assert consumer.beginning_offsets([p0, p1]) == {p0: 0, p1: 0}
        # tansu's reported end can lag behind batched produce; never above the records
        ends = consumer.end_offsets([p0])
        assert 0 < ends[p0] <= 200
        assert consumer.highwater(p0) in (None, *range(1, 201))
        assert consumer.connected()
        # the record objects: what dead letters and fingerprints read
        consumer.seek(p1, 7)
        batch = consumer.poll(1, 5000)
        while not batch:
            batch = consumer.poll(1, 5000)
        r = batch[p1].record(0)
        assert (r.topic, r.partition, r.offset, r.key, r.value) == (topic, 1, 7, b"k15", b"v15")
        assert r.timestamp > 1_600_000_000_000 and batch[p1].timestamps() == [r.timestamp]
        assert batch[p1].start(7) == 0 and batch[p1].start(8) == 1
    finally:
        consumer.close(5.0)


@pytest.mark.parametrize("client", CONSUMER_CLIENTS)
def test_a_poll_returns_the_records_there_are_before_its_timeout(kafka_broker, client):
    """A poll for up to 1,000 records on a partition holding 3 returns them (what is fetched,
    else the first record to arrive and what came with it) rather than waiting its whole
    timeout for more: a slow stream's records are not held back by the poll."""
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("poll")
    create_topic(bootstrap, topic, partitions=1)
    produce(bootstrap, topic, [b"a", b"b", b"c"])
    tp = TopicPartition(topic, 0)
    consumer = open_consumer(options(bootstrap), client,
                             on_assign=lambda tps: consumer.seek_to_beginning(tp))
    try:
        consumer.assign([tp])
        got: list[int] = []
        started = time.monotonic()
        while len(got) < 3:
            for records in consumer.poll(1000, 120_000).values():
                got.extend(records.offsets)
        # a generous bound, not a speed target: one poll waiting its timeout takes 120 s
        assert got == [0, 1, 2] and time.monotonic() - started < 60
    finally:
        consumer.close(5.0)


@pytest.mark.parametrize("client", CONSUMER_CLIENTS)
def test_group_assignment_positions_from_on_assign_and_commit(kafka_broker, client):
    """A group member's partitions start where on_assign puts them, not at the committed
    offset; a commit is visible to other clients."""
    bootstrap = kafka_broker.bootstrap_servers
    topic, group = unique("iface-group"), unique("iface-group")
    create_topic(bootstrap, topic, partitions=1)
    produce(bootstrap, topic, [f"v{i}".encode() for i in range(100)])
    tp = TopicPartition(topic, 0)
    events = []

    def on_assign(tps):
        events.append(("assign", sorted(tps)))
        for t in tps:
            consumer.seek(t, 60)

    consumer = open_consumer(options(bootstrap, group), client, on_assign=on_assign,
                             on_revoke=lambda tps: events.append(("revoke", sorted(tps))))
    try:
        consumer.subscribe([topic])
        got = read(consumer, 40, timeout=30)
        assert events[-1] == ("assign", [tp]) and got[0] == list(range(60, 100))
        consumer.commit({tp: 77})
        probe = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group,
                              enable_auto_commit=False)
        assert probe.committed(tp) == 77
        probe.close()
    finally:
        consumer.close(5.0)
    assert ("revoke", [tp]) in events or client == "kafka-python"


def test_confluent_connected_answers_from_fetched_records_without_a_metadata_request(
        kafka_broker):
    """Records fetched in the last 3 s show a connection: ``connected()`` asks the broker
    nothing then (a metadata request would wait behind the consumer's pending fetch on the
    same connection, for up to fetch.wait.max.ms); without recent answers or statistics it
    asks, and a broker's answer counts as one."""
    pytest.importorskip("confluent_kafka")
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("iface-connected")
    create_topic(bootstrap, topic, partitions=1)
    produce(bootstrap, topic, [f"v{i}".encode() for i in range(20)])
    tp = TopicPartition(topic, 0)
    consumer = open_consumer(options(bootstrap), "confluent-kafka",
                             on_assign=lambda tps: consumer.seek(tp, 0))
    inner = consumer._consumer
    asked = []

    class Counting:  # the real consumer, its metadata requests counted
        def __getattr__(self, name):
            return getattr(inner, name)

        def list_topics(self, *args, **kwargs):
            asked.append(args)
            return inner.list_topics(*args, **kwargs)

    consumer._consumer = Counting()
    try:
        assert consumer.connected() and len(asked) == 1  # nothing heard yet: it asks
        consumer.assign([tp])
        assert read(consumer, 20)[0] == list(range(20))
        asked.clear()
        assert consumer.connected() and asked == []
        consumer._answered_at -= 10.0  # the last answer is old: it asks again
        consumer._stats_at = consumer._answered_at
        assert consumer.connected() and len(asked) == 1
        assert consumer.connected() and len(asked) == 1  # and that answer counts
    finally:
        consumer._consumer = inner
        consumer.close(5.0)


def test_confluent_config_translates_the_service_settings():
    config = load_config({"bootstrap_servers": "k1:9092,k2:9092", "group_id": "g",
                          "group_instance_id": "m1", "session_timeout_ms": 6000,
                          "heartbeat_interval_ms": 1000, "check_crcs": False,
                          "security_protocol": "SASL_SSL", "sasl_mechanism": "PLAIN",
                          "sasl_plain_username": "u", "sasl_plain_password": "pw"}, environ={})
    got = confluent_config(config.consumer_options())
    assert got["bootstrap.servers"] == "k1:9092,k2:9092"
    assert (got["group.id"], got["group.instance.id"]) == ("g", "m1")
    assert (got["session.timeout.ms"], got["heartbeat.interval.ms"]) == (6000, 1000)
    assert got["enable.auto.commit"] is False and got["auto.offset.reset"] == "error"
    assert got["check.crcs"] is False and "partitioner" not in got
    assert (got["sasl.username"], got["sasl.password"]) == ("u", "pw")
    assert "enable.sparse.connections" not in got  # a group member: only its leaders
    # standalone: an id librdkafka insists on, never joined; every leader connected up front
    standalone = confluent_config(load_config({"group_id": ""}, environ={}).consumer_options())
    assert standalone["group.id"] == "streamnb-standalone"
    assert standalone["enable.sparse.connections"] is False
    # OAUTHBEARER needs a token provider kafka-python takes and librdkafka does not
    oauth = load_config({"sasl_mechanism": "OAUTHBEARER"}, environ={}).consumer_options()
    assert confluent_config(oauth) is None


def test_open_consumer_picks_the_client(monkeypatch):
    opts = load_config({"bootstrap_servers": "127.0.0.1:1", "group_id": ""},
                       environ={}).consumer_options()
    with pytest.raises(ValueError, match="client must be"):
        open_consumer(opts, "rdkafka")
    if "confluent-kafka" in CONSUMER_CLIENTS:
        consumer = open_consumer(opts, "auto")
        assert isinstance(consumer, ConfluentConsumer)
        consumer.close(1.0)
        oauth = {**opts, "sasl_mechanism": "OAUTHBEARER"}
        with pytest.raises(ValueError, match="no librdkafka equivalent"):
            open_consumer(oauth, "confluent-kafka")
    # without confluent-kafka, auto is kafka-python's consumer, with the same settings
    import builtins

    import streamnb.consumers.consumer as module

    real = builtins.__import__

    def no_confluent(name, *args, **kwargs):
        if name.startswith("confluent_kafka"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    built = []
    monkeypatch.setattr(builtins, "__import__", no_confluent)
    monkeypatch.setattr(module, "KafkaPythonConsumer", lambda *a: built.append(a) or "kp")
    assert open_consumer(opts, "auto") == "kp" and built[0][0] == opts
    with pytest.raises(ImportError, match="fast-publisher"):
        open_consumer(opts, "confluent-kafka")


def test_consumer_client_option_from_flag_environment_and_file(tmp_path):
    assert load_config({}, environ={}).consumer_client == "auto"
    assert load_config({}, environ={"STREAMNB_CONSUMER_CLIENT": "kafka-python"}
                       ).consumer_client == "kafka-python"
    path = tmp_path / "service.toml"
    path.write_text('consumer-client = "confluent-kafka"\n', encoding="utf-8")
    assert load_config({}, environ={}, config_file=path).consumer_client == "confluent-kafka"
    with pytest.raises(ConfigError, match="consumer-client"):
        load_config({"consumer_client": "rdkafka"}, environ={})

"""The service's input consumer: one small interface, two clients behind it.

:class:`KafkaPythonConsumer` wraps kafka-python's ``KafkaConsumer`` (pure Python; with the
``crc32c`` package its checksums are checked in C), :class:`ConfluentConsumer` confluent-kafka's
``Consumer`` (librdkafka, C: fetching, decompression and checksums off the interpreter).
:func:`open_consumer` picks one (``--consumer-client``: ``auto`` is confluent-kafka when it is
importable and every setting has a librdkafka equivalent). The service calls only this
interface, so its exactly-once logic exists once:

- partitions are identified by kafka-python's ``TopicPartition`` (a named tuple of topic and
  partition) whatever the client;
- the service is told of its partitions by ``on_assign(partitions)`` / ``on_revoke(partitions)``,
  both for a group member (the group's rebalances, eager: every partition revoked, then the new
  assignment) and for a standalone instance (:meth:`assign` calls ``on_assign``). Inside
  ``on_assign`` the service positions each partition with :meth:`seek` /
  :meth:`seek_to_beginning` and may :meth:`pause` it; the position always comes from the
  service's own state, never from committed offsets (``commit`` only informs tools such as lag
  monitors);
- :meth:`poll` returns up to ``max_records`` records as ``{partition: PartitionRecords}`` and
  raises :class:`OffsetsOutOfRange` when the broker refused a position (the offset gap policy
  then decides).
"""

from __future__ import annotations

import bisect
import contextlib
import json
import logging
import time
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

from kafka.structs import TopicPartition

__all__ = ["BROKER_ERRORS", "CLIENTS", "ConfluentConsumer", "InputConsumer", "KafkaPythonConsumer",
           "OffsetsOutOfRange", "PartitionRecords", "Record", "confluent_config",
           "open_consumer"]

log = logging.getLogger("streamnb.service")

#: The consumer clients the service can use.
CLIENTS = ("kafka-python", "confluent-kafka")

Partitions = Callable[[list[TopicPartition]], None]


def _broker_errors() -> tuple[type[Exception], ...]:
    from kafka.errors import KafkaError

    try:
        from confluent_kafka import KafkaException
    except ImportError:
        return (KafkaError,)
    return (KafkaError, KafkaException)


#: What either client raises when a broker call fails (the broker gone, a timeout).
BROKER_ERRORS = _broker_errors()


class OffsetsOutOfRange(RuntimeError):
    """The broker refused the position of some partitions: ``{partition: offset}``."""

    def __init__(self, offsets: dict[TopicPartition, int]) -> None:
        super().__init__(offsets)
        self.offsets = offsets


class Record(NamedTuple):
    """One record, as a dead letter or a state's fingerprint needs it."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None


class PartitionRecords(Protocol):
    """The records of one partition in one poll, in offset order."""

    offsets: list[int]
    values: list[bytes | None]

    def timestamps(self) -> list[int]: ...

    def record(self, i: int) -> Any:
        """Record ``i`` with ``topic``, ``partition``, ``offset``, ``timestamp``, ``key`` and
        ``value`` attributes."""
        ...

    def start(self, offset: int) -> int:
        """The index of the first record at or after ``offset``."""
        ...


class InputConsumer(Protocol):
    """What the service asks of its consumer (see the module's docstring)."""

    client: str

    def subscribe(self, topics: list[str]) -> None: ...
    def assign(self, partitions: list[TopicPartition]) -> None: ...
    def assignment(self) -> set[TopicPartition]: ...
    def partitions_for_topic(self, topic: str) -> set[int] | None: ...
    def seek(self, tp: TopicPartition, offset: int) -> None: ...
    def seek_to_beginning(self, tp: TopicPartition) -> None: ...
    def pause(self, *tps: TopicPartition) -> None: ...
    def resume(self, *tps: TopicPartition) -> None: ...
    def poll(self, max_records: int, timeout_ms: int
             ) -> dict[TopicPartition, PartitionRecords]: ...
    def beginning_offsets(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]: ...
    def end_offsets(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]: ...
    def highwater(self, tp: TopicPartition) -> int | None: ...
    def commit(self, offsets: dict[TopicPartition, int]) -> None: ...
    def connected(self) -> bool: ...
    def close(self, timeout: float = 30.0) -> None: ...


# -- kafka-python --------------------------------------------------------------------------------
class _KafkaPythonRecords:
    __slots__ = ("offsets", "records", "values")

    def __init__(self, records: list) -> None:
        self.records = records
        self.offsets = [r.offset for r in records]
        self.values = [r.value for r in records]

    def timestamps(self) -> list[int]:
        return [r.timestamp for r in self.records]

    def record(self, i: int) -> Any:
        return self.records[i]

    def start(self, offset: int) -> int:
        return bisect.bisect_left(self.offsets, offset)


class KafkaPythonConsumer:
    """kafka-python's ``KafkaConsumer`` behind :class:`InputConsumer`.

    ``options``: ``KafkaConsumer`` settings (:meth:`ServiceConfig.consumer_options`)."""

    client = "kafka-python"

    def __init__(self, options: dict[str, Any], on_assign: Partitions | None = None,
                 on_revoke: Partitions | None = None) -> None:
        from kafka import KafkaConsumer

        self._consumer = KafkaConsumer(**options)
        self._on_assign = on_assign or (lambda tps: None)
        self._on_revoke = on_revoke or (lambda tps: None)

    def subscribe(self, topics: list[str]) -> None:
        from kafka import ConsumerRebalanceListener

        outer = self

        class Listener(ConsumerRebalanceListener):
            def on_partitions_revoked(self, revoked):
                outer._on_revoke(list(revoked))

            def on_partitions_assigned(self, assigned):
                outer._on_assign(list(assigned))

        self._consumer.subscribe(topics=topics, listener=Listener())

    def assign(self, partitions: list[TopicPartition]) -> None:
        self._consumer.assign(partitions)
        self._on_assign(list(partitions))

    def assignment(self) -> set[TopicPartition]:
        return set(self._consumer.assignment())

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return self._consumer.partitions_for_topic(topic)

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self._consumer.seek(tp, offset)

    def seek_to_beginning(self, tp: TopicPartition) -> None:
        self._consumer.seek_to_beginning(tp)

    def pause(self, *tps: TopicPartition) -> None:
        self._consumer.pause(*tps)

    def resume(self, *tps: TopicPartition) -> None:
        self._consumer.resume(*tps)

    def poll(self, max_records: int, timeout_ms: int) -> dict[TopicPartition, _KafkaPythonRecords]:
        from kafka.errors import OffsetOutOfRangeError

        try:
            batch = self._consumer.poll(timeout_ms=timeout_ms, max_records=max_records)
        except OffsetOutOfRangeError as exc:
            out = exc.args[0] if exc.args and isinstance(exc.args[0], dict) else {}
            raise OffsetsOutOfRange(dict(out)) from None
        return {tp: _KafkaPythonRecords(records) for tp, records in batch.items() if records}

    def beginning_offsets(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        return self._consumer.beginning_offsets(tps)

    def end_offsets(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        return self._consumer.end_offsets(tps)

    def highwater(self, tp: TopicPartition) -> int | None:
        return self._consumer.highwater(tp)

    def commit(self, offsets: dict[TopicPartition, int]) -> None:
        from kafka.structs import OffsetAndMetadata

        self._consumer.commit({tp: OffsetAndMetadata(o, "", -1) for tp, o in offsets.items()})

    def connected(self) -> bool:
        """Whether the consumer has a broker connection (kafka-python's own count)."""
        try:
            return bool(self._consumer.metrics()["consumer-metrics"]["connection-count"])
        except (AttributeError, KeyError, TypeError):
            return False

    def close(self, timeout: float = 30.0) -> None:
        self._consumer.close(autocommit=False, timeout_ms=max(int(timeout * 1000), 1))


# -- confluent-kafka (librdkafka) ----------------------------------------------------------------
class _ConfluentRecords:
    __slots__ = ("messages", "offsets", "values")

    def __init__(self, messages: list) -> None:
        from confluent_kafka import Message

        self.messages = messages
        # map over the C methods: no Python frame per message
        self.offsets = list(map(Message.offset, messages))
        self.values = list(map(Message.value, messages))

    def timestamps(self) -> list[int]:
        return [m.timestamp()[1] for m in self.messages]

    def record(self, i: int) -> Record:
        m = self.messages[i]
        return Record(m.topic(), m.partition(), m.offset(), m.timestamp()[1], m.key(),
                      m.value())

    def start(self, offset: int) -> int:
        return bisect.bisect_left(self.offsets, offset)


def confluent_config(options: dict[str, Any]) -> dict[str, Any] | None:
    """The librdkafka consumer configuration equivalent to kafka-python consumer ``options``
    (:meth:`ServiceConfig.consumer_options`), or None when a setting has no equivalent."""
    from streamnb.consumers.publisher import librdkafka_config

    options = dict(options)
    consumer_only = {name: options.pop(name) for name in (
        "group_id", "group_instance_id", "session_timeout_ms", "heartbeat_interval_ms",
        "enable_auto_commit", "auto_offset_reset", "check_crcs", "max_poll_records")
        if name in options}
    config = librdkafka_config(options)
    if config is None:
        return None
    config.pop("partitioner")  # a producer property
    config.update({
        # no group: librdkafka still wants an id; an instance that only assigns and never
        # commits does not join it
        "group.id": consumer_only.get("group_id") or "streamnb-standalone",
        "enable.auto.commit": False, "enable.auto.offset.store": False,
        # positions come from the service's states; a refused one is reported, never reset
        "auto.offset.reset": "error" if consumer_only.get("auto_offset_reset", "none") == "none"
        else consumer_only["auto_offset_reset"],
        "check.crcs": bool(consumer_only.get("check_crcs", True)),
        "enable.partition.eof": False,
        # broker states for connected(), once a second
        "statistics.interval.ms": 1000,
    })
    if not consumer_only.get("group_id"):
        # standalone, the instance assigns itself every partition of its topics and so needs
        # their leaders anyway: connecting from the start, while the state is restored, saves
        # the partition lookup a connection setup, which would otherwise delay the first fetch
        config["enable.sparse.connections"] = False
    for name, prop in (("group_instance_id", "group.instance.id"),
                       ("session_timeout_ms", "session.timeout.ms"),
                       ("heartbeat_interval_ms", "heartbeat.interval.ms")):
        if consumer_only.get(name):
            config[prop] = consumer_only[name]
    return config


_TIMEOUT = 30.0  # seconds a broker query (watermarks, metadata) may take, as kafka-python's


class ConfluentConsumer:
    """confluent-kafka's ``Consumer`` behind :class:`InputConsumer`.

    ``config``: librdkafka settings (:func:`confluent_config`). Rebalances are eager
    (librdkafka's default assignment strategies), as kafka-python's.
    Inside ``on_assign`` the service's seeks and pauses are collected and the assignment is
    made with them, so no partition ever starts from a committed offset."""

    client = "confluent-kafka"

    def __init__(self, config: dict[str, Any], on_assign: Partitions | None = None,
                 on_revoke: Partitions | None = None) -> None:
        from confluent_kafka import Consumer

        self._on_assign = on_assign or (lambda tps: None)
        self._on_revoke = on_revoke or (lambda tps: None)
        self._brokers_up: int | None = None  # from the statistics, once they arrive
        self._stats_at = 0.0
        self._answered_at = -1e9  # when a broker last answered: records, metadata
        self._assigning: dict[TopicPartition, int] | None = None  # inside on_assign
        self._pausing: set[TopicPartition] = set()
        self._out_of_range: dict[TopicPartition, int] = {}
        self._consumer = Consumer({**config, "stats_cb": self._stats,
                                   "error_cb": self._error, "logger": _LIBRDKAFKA_LOG})

    # -- callbacks (served from consume/poll, on this thread)
    def _stats(self, text: str) -> None:
        try:
            brokers = json.loads(text).get("brokers", {}).values()
        except ValueError:
            return
        self._brokers_up = sum(1 for b in brokers if b.get("state") == "UP")
        self._stats_at = time.monotonic()

    def _error(self, error: Any) -> None:
        if error.fatal():
            log.error("Kafka consumer: fatal error %s", error)
        else:  # transport errors: librdkafka reconnects by itself
            log.debug("Kafka consumer: %s", error)

    def _assigned(self, consumer: Any, partitions: list) -> None:
        from confluent_kafka import OFFSET_BEGINNING
        from confluent_kafka import TopicPartition as Part

        tps = [TopicPartition(p.topic, p.partition) for p in partitions]
        self._assigning, self._pausing = {}, set()
        try:
            self._on_assign(tps)
            positions = self._assigning
        finally:
            self._assigning = None
        consumer.assign([Part(tp.topic, tp.partition, positions.get(tp, OFFSET_BEGINNING))
                         for tp in tps])
        if self._pausing:
            consumer.pause([Part(tp.topic, tp.partition) for tp in self._pausing])
        self._pausing = set()

    def _revoked(self, consumer: Any, partitions: list) -> None:
        self._on_revoke([TopicPartition(p.topic, p.partition) for p in partitions])
        consumer.unassign()

    # -- the interface
    def subscribe(self, topics: list[str]) -> None:
        self._consumer.subscribe(list(topics), on_assign=self._assigned,
                                 on_revoke=self._revoked, on_lost=self._revoked)

    def assign(self, partitions: list[TopicPartition]) -> None:
        self._assigned(self._consumer, [_part(tp) for tp in partitions])

    def assignment(self) -> set[TopicPartition]:
        return {TopicPartition(p.topic, p.partition) for p in self._consumer.assignment()}

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        from confluent_kafka import KafkaException

        try:
            found = self._consumer.list_topics(topic, timeout=_TIMEOUT).topics.get(topic)
        except KafkaException:
            return None
        self._answered_at = time.monotonic()
        if found is None or found.error is not None or not found.partitions:
            return None
        return set(found.partitions)

    def seek(self, tp: TopicPartition, offset: int) -> None:
        if self._assigning is not None:
            self._assigning[tp] = offset
        else:
            self._consumer.seek(_part(tp, offset))

    def seek_to_beginning(self, tp: TopicPartition) -> None:
        from confluent_kafka import OFFSET_BEGINNING

        self.seek(tp, OFFSET_BEGINNING)

    def pause(self, *tps: TopicPartition) -> None:
        if self._assigning is not None:
            self._pausing.update(tps)
        elif tps:
            self._consumer.pause([_part(tp) for tp in tps])

    def resume(self, *tps: TopicPartition) -> None:
        if tps:
            self._consumer.resume([_part(tp) for tp in tps])

    def poll(self, max_records: int, timeout_ms: int) -> dict[TopicPartition, _ConfluentRecords]:
        if self._out_of_range:  # reported with the records of the poll before
            out, self._out_of_range = self._out_of_range, {}
            raise OffsetsOutOfRange(out)
        from confluent_kafka import Message

        # as kafka-python's poll: what is fetched already, else the first record to arrive
        # and what came with it; consume(n, timeout) alone waits for n records or the timeout,
        # which delays a slow stream's records by up to the timeout and a starting service's
        # first batch by the fetches of all n
        messages = self._consumer.consume(max_records, 0)
        if not messages:
            messages = self._consumer.consume(1, timeout_ms / 1000)
            if messages and max_records > 1:
                messages += self._consumer.consume(max_records - 1, 0)
        if not messages:
            return {}
        self._answered_at = time.monotonic()
        if any(map(Message.error, messages)):  # error events come as messages
            good = []
            for m in messages:
                if m.error() is None:
                    good.append(m)
                else:
                    self._message_error(m)
            messages = good
            if self._out_of_range and not messages:
                out, self._out_of_range = self._out_of_range, {}
                raise OffsetsOutOfRange(out)
        # one partition per poll is the common case: one check, no per-message grouping
        keys = list(zip(map(Message.topic, messages), map(Message.partition, messages),
                        strict=True))
        if not keys:
            return {}
        if keys[0] == keys[-1] and keys.count(keys[0]) == len(keys):
            return {TopicPartition(*keys[0]): _ConfluentRecords(messages)}
        groups: dict[tuple[str, int], list] = {}
        for key, m in zip(keys, messages, strict=True):
            groups.setdefault(key, []).append(m)
        return {TopicPartition(*key): _ConfluentRecords(ms) for key, ms in groups.items()}

    def _message_error(self, message: Any) -> None:
        from confluent_kafka import KafkaError, KafkaException

        error = message.error()
        code = error.code()
        if code in (KafkaError._AUTO_OFFSET_RESET, KafkaError.OFFSET_OUT_OF_RANGE):
            self._out_of_range[TopicPartition(message.topic(), message.partition())] = (
                message.offset())
        elif code == KafkaError._PARTITION_EOF:
            pass
        elif error.fatal():
            raise KafkaException(error)
        else:
            log.warning("Kafka consumer: %s", error)

    def _watermarks(self, tps: list[TopicPartition], low: bool) -> dict[TopicPartition, int]:
        return {tp: self._consumer.get_watermark_offsets(_part(tp), timeout=_TIMEOUT)[
            0 if low else 1] for tp in tps}

    def beginning_offsets(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        return self._watermarks(tps, low=True)

    def end_offsets(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        return self._watermarks(tps, low=False)

    def highwater(self, tp: TopicPartition) -> int | None:
        """The end offset of the last fetch response (no broker query)."""
        with contextlib.suppress(Exception):
            high = self._consumer.get_watermark_offsets(_part(tp), cached=True)[1]
            return high if high >= 0 else None
        return None

    def commit(self, offsets: dict[TopicPartition, int]) -> None:
        self._consumer.commit(offsets=[_part(tp, o) for tp, o in offsets.items()],
                              asynchronous=False)

    def connected(self) -> bool:
        """Whether a broker connection is up, by the latest of librdkafka's statistics and
        the broker's answers (records, metadata) of the last few seconds; without either, by a
        metadata request."""
        now = time.monotonic()
        if self._brokers_up is not None and now - self._stats_at < 3.0 and (
                self._stats_at >= self._answered_at):
            return self._brokers_up > 0
        if now - self._answered_at < 3.0:
            # a metadata request now would wait behind the consumer's fetch on the same
            # connection, for up to fetch.wait.max.ms
            return True
        from confluent_kafka import KafkaException

        try:
            self._consumer.list_topics(timeout=1.0)
        except KafkaException:
            return False
        self._answered_at = time.monotonic()
        return True

    def close(self, timeout: float = 30.0) -> None:
        """librdkafka's close has no timeout (the service bounds it in a helper thread)."""
        self._consumer.close()


def _part(tp: TopicPartition, offset: int | None = None) -> Any:
    from confluent_kafka import TopicPartition as Part

    return Part(tp.topic, tp.partition) if offset is None else Part(tp.topic, tp.partition,
                                                                     offset)


# librdkafka's own log lines, under the "kafka" logger that the service quietens while starting
_LIBRDKAFKA_LOG = logging.getLogger("kafka.librdkafka")


def open_consumer(options: dict[str, Any], client: str = "auto",
                  on_assign: Partitions | None = None, on_revoke: Partitions | None = None
                  ) -> KafkaPythonConsumer | ConfluentConsumer:
    """The consumer for kafka-python ``options``: confluent-kafka's if ``client`` asks for it,
    or for ``"auto"`` if it is installed and every setting translates; kafka-python's
    otherwise."""
    if client not in ("auto", *CLIENTS):
        raise ValueError(f"client must be 'auto' or one of {CLIENTS}, got {client!r}")
    if client != "kafka-python":
        config = confluent_config(options)
        try:
            import confluent_kafka  # noqa: F401
        except ImportError:
            if client == "confluent-kafka":
                raise ImportError("--consumer-client confluent-kafka needs the confluent-kafka "
                                  "package: pip install 'streamnb[fast-publisher]'") from None
            config = None
        if config is not None:
            return ConfluentConsumer(config, on_assign, on_revoke)
        if client == "confluent-kafka":
            raise ValueError("some consumer settings have no librdkafka equivalent "
                             "(--consumer-client kafka-python takes them)")
    return KafkaPythonConsumer(options, on_assign, on_revoke)

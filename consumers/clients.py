"""The service's Kafka clients: the input consumer, the producer (dead letters, the changelog),
the publisher of predictions and the changelog reader, opened together and closed within a
deadline. Dead letters are written here too: a rejected record goes back out as it came in,
with headers saying why."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from kafka import KafkaProducer, TopicPartition

from streamnb.consumers.bounded import BoundedCalls
from streamnb.consumers.changelog import ChangelogReader
from streamnb.consumers.config import ServiceConfig
from streamnb.consumers.consumer import InputConsumer, open_consumer
from streamnb.consumers.metrics import ServiceMetrics
from streamnb.consumers.publisher import ProcessPublisher, ProducerPublisher
from streamnb.consumers.topics import ensure_topic

__all__ = ["Clients"]

log = logging.getLogger("streamnb.service")
_ERROR_HEADER = "streamnb-error"


class Clients:
    """The clients of one service member (``None`` until :meth:`open`; ``changelog`` stays
    ``None`` without ``--changelog-topic``)."""

    def __init__(self, config: ServiceConfig, metrics: ServiceMetrics) -> None:
        self.config = config
        self.metrics = metrics
        self.consumer: InputConsumer | None = None
        self.producer: KafkaProducer | None = None
        self.outputs: ProcessPublisher | ProducerPublisher | None = None
        self.changelog: ChangelogReader | None = None

    def open(self, on_assign: Callable[[list[TopicPartition]], None],
             on_revoke: Callable[[list[TopicPartition]], None]) -> None:
        cfg = self.config
        client = cfg.kafka_options()
        self.producer = KafkaProducer(**cfg.producer_options())
        self.outputs = (ProcessPublisher(cfg.producer_options(), cfg.log_level,
                                         cfg.publisher_client)
                        if cfg.publisher_process else ProducerPublisher(self.producer))
        if cfg.changelog_topic:
            ensure_topic(client, cfg.changelog_topic,
                         configs={"cleanup.policy": "compact",
                                  "max.message.bytes": str(cfg.changelog_max_bytes)})
            self.changelog = ChangelogReader(cfg.changelog_topic, client,
                                             cfg.changelog_max_bytes)
        self.consumer = open_consumer(cfg.consumer_options(), cfg.consumer_client,
                                      on_assign=on_assign, on_revoke=on_revoke)
        log.info("consuming with %s", self.consumer.client)

    def flush(self) -> None:
        """Deliver the predictions and dead letters sent so far."""
        self.outputs.flush()
        self.producer.flush()

    def dead_letter(self, record: Any, reason: str, detail: str) -> None:
        self.metrics.dead_letters.labels(reason=reason).inc()
        headers = [(_ERROR_HEADER, reason.encode()),
                   ("streamnb-detail", detail.encode("utf-8", "replace")[:1000]),
                   ("streamnb-source", f"{record.topic}:{record.partition}@{record.offset}"
                    .encode())]
        self.producer.send(self.config.dead_letter_topic, key=record.key, value=record.value,
                           headers=headers).add_errback(self.undelivered)

    def undelivered(self, exc: BaseException) -> None:
        """A dead letter or changelog record the producer gave up on: said, and counted."""
        self.metrics.publish_errors.inc()
        log.error("a record for the dead-letter or changelog topic was not delivered: %r", exc)

    def close(self, calls: BoundedCalls, deadline: float,
              before: list[tuple[str, Callable[[], Any]]] | None = None) -> None:
        """Close the opened clients (after ``before``, more ``(what, call)`` teardowns), each
        given up on at ``deadline`` (at least a second from its start)."""
        closing = list(before or [])
        if self.changelog is not None:
            closing.append(("closing the changelog reader", self.changelog.close))
        consumer = self.consumer
        if consumer is not None:
            if self.config.group_id and not consumer.assignment():
                # leaving a group while its join is pending leaves tansu unable to assign
                # that group again: let the session expire instead
                log.info("no partitions assigned yet: not leaving the group")
            else:
                closing.append(("closing the consumer", lambda: consumer.close(
                    max(deadline - time.monotonic(), 0.001))))
        if self.outputs is not None:
            closing.append(("closing the publisher", self.outputs.close))
        producer = self.producer
        if producer is not None:
            closing.append(("closing the producer", lambda: producer.close(
                timeout=max(deadline - time.monotonic(), 0.0))))
        for what, call in closing:
            # a teardown that outlives the deadline is given up on; nothing is lost then
            calls.run(what, call, max(deadline, time.monotonic() + 1.0))

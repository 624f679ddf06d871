"""Topic creation for the service and the demo (production clusters usually create topics up
front; tansu and a default Apache Kafka also create them on first produce, with broker defaults).
"""

from __future__ import annotations

import logging
from typing import Any

from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import KafkaError, TopicAlreadyExistsError

__all__ = ["ensure_topic"]

log = logging.getLogger("streamnb.service")


def ensure_topic(client_options: dict[str, Any], topic: str, partitions: int = 1,
                 configs: dict[str, str] | None = None) -> None:
    """Create ``topic`` unless it exists, replicated as the broker's default (-1); a cluster
    that forbids it is told in the log, and the topic must then exist."""
    admin = None
    try:
        admin = KafkaAdminClient(**client_options)
        admin.create_topics([NewTopic(topic, partitions, -1, topic_configs=configs or {})])
        log.info("created topic %s", topic)
    except TopicAlreadyExistsError:
        pass
    except KafkaError as exc:
        log.warning("could not create topic %s (%s); it must exist", topic, exc)
    finally:
        if admin is not None:
            admin.close()

"""The Kafka tests' helpers live in :mod:`streamnb.consumers.testing`, shared with
benchmarks/soak.py; re-exported here so the tests import them from one short name."""

from streamnb.consumers.testing import (
    CORRUPTIONS,
    CRAFTED,
    GROUP_FLAGS,
    ROOT,
    ServiceProcess,
    corrupt,
    create_topic,
    dumps,
    free_port,
    label_of,
    labelled_features,
    labelled_messages,
    metric_value,
    metrics_text,
    produce,
    read_topic,
    scrape,
    unique,
    wait_for,
)

__all__ = [
    "CORRUPTIONS", "CRAFTED", "GROUP_FLAGS", "ROOT", "ServiceProcess", "corrupt", "create_topic",
    "dumps",
    "free_port", "label_of", "labelled_features", "labelled_messages", "metric_value",
    "metrics_text",
    "produce", "read_topic", "scrape", "unique", "wait_for",
]

"""The Kafka tests' helpers. Most live in :mod:`streamnb.consumers.testing`, shared with
benchmarks/soak.py, and are re-exported here so the tests import them from one short name; the
ones below only the tests use."""

from __future__ import annotations

import os
import urllib.error
import urllib.request

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
    "free_port", "http_get", "label_of", "labelled_features", "labelled_messages",
    "metric_value", "metrics_text",
    "produce", "read_topic", "scrape", "service_args", "unique", "wait_for",
]


def service_args(bootstrap: str, topic: str, snapshot_dir: str | os.PathLike, metrics_port: int,
                 *extra: str, group_id: str = "", changelog_topic: str = "") -> list[str]:
    """``streamnb serve`` options for an IndifferentNB on ``topic``, writing to ``<topic>-out``
    and ``<topic>-dlq``; standalone unless ``group_id`` is given (then with the group timings
    the broker needs), no changelog unless ``changelog_topic`` is given; ``extra`` last."""
    group = ["--group-id", group_id, *(GROUP_FLAGS if group_id else [])]
    return ["--bootstrap-servers", bootstrap, "--input-topic", topic, *group,
            "--model", "indifferent", "--output-topic", f"{topic}-out",
            "--dead-letter-topic", f"{topic}-dlq", "--snapshot-dir", str(snapshot_dir),
            "--changelog-topic", changelog_topic, "--metrics-address", f"127.0.0.1:{metrics_port}",
            *extra]


def http_get(url: str) -> tuple[int, str]:
    """Status and body of a GET; status 0 while nothing answers (a service still starting or
    gone), so it can be waited on."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError:
        return 0, ""

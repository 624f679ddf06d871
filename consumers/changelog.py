"""The changelog topic: every member publishes its partitions' states there and reads the others'.

A record's key is ``"<topic>:<partition>"`` of the input partition, its value the compressed
state (:func:`streamnb.consumers.snapshots.encode_partition`) and its header ``streamnb-offset`` the
input offset the state reflects. The topic is created compacted, but compaction is never
immediate (and tansu never compacts), so the reader keeps the last value per key itself: the
one with the highest offset, which is the most recent state of that partition whoever wrote it.

The changelog also records the shared candidate lists of pairwise models
(:mod:`streamnb.consumers.candidates`): key ``"streamnb-candidates:<version>:<proposal id>"``
(unique, so compaction keeps them all), value JSON ``{"version", "names", "cut"}``, always in
partition 0. Two members may propose a list for the same version at once; the first in the
partition's order wins, for every reader, so a member adopts a list only once it has read it
back (:func:`record_candidates`).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from kafka import KafkaConsumer, TopicPartition

from streamnb.consumers.snapshots import decode_partition, encode_partition
from streamnb.consumers.state import PartitionState
from streamnb.stats.persist import INT64_MAX, StateFileError

__all__ = ["ChangelogReader", "publish_candidates", "publish_state", "record_candidates"]

log = logging.getLogger("streamnb.service")
OFFSET_HEADER = "streamnb-offset"
EPOCH_HEADER = "streamnb-epoch"  # absent: epoch 0 (streamnb.consumers.state.PartitionState.epoch)
CANDIDATES_KEY = "streamnb-candidates:"


def publish_state(producer: Any, topic: str, key: tuple[str, int], state: PartitionState):
    """Send one partition's state; returns the send future."""
    return producer.send(topic, key=f"{key[0]}:{key[1]}".encode(),
                         value=encode_partition(key, state),
                         headers=[(OFFSET_HEADER, str(state.offset).encode()),
                                  (EPOCH_HEADER, str(state.epoch).encode())])


def publish_candidates(producer: Any, topic: str, version: int, names: list,
                       cut: dict[str, int]):
    """Propose candidate list ``version``; returns the send future."""
    value = json.dumps({"version": version, "names": names, "cut": cut}).encode()
    return producer.send(topic, key=f"{CANDIDATES_KEY}{version}:{uuid.uuid4().hex}".encode(),
                         value=value, partition=0)


def record_candidates(producer: Any, reader: ChangelogReader, topic: str, version: int,
                      names: list, cut: dict[str, int],
                      offer: Callable[[dict[tuple[str, int], PartitionState]], None],
                      wait: float = 120.0) -> list:
    """Propose candidate list ``version`` and return the recorded one: the first proposal of
    that version on the changelog, this one or another member's, read back by ``reader``
    (the states it reads meanwhile go to ``offer``)."""
    publish_candidates(producer, topic, version, names, cut)
    producer.flush()
    deadline = time.monotonic() + wait
    while version not in reader.candidates:
        if time.monotonic() > deadline:
            raise RuntimeError(f"candidate list {version} proposed to the changelog {topic} "
                               "was not read back")
        offer(reader.poll(200))
    recorded = reader.candidates[version]
    log.info("candidate list %d: %d attributes%s", version, len(recorded),
             "" if recorded == names else " (another member's proposal)")
    return recorded


def _candidates(value: bytes | None) -> tuple[int, list[str]] | None:
    try:
        record = json.loads(value or b"")
        version, names = record["version"], record["names"]
    except (ValueError, TypeError, KeyError):
        return None
    if (type(version) is not int or version < 1 or not isinstance(names, list)
            or not all(isinstance(n, str) for n in names)):
        return None
    return version, names


class ChangelogReader:
    """Reads the changelog from its beginning, outside any consumer group.

    Parameters
    ----------
    topic
        The changelog topic.
    client_options
        Connection and security settings (``ServiceConfig.kafka_options()``).
    max_bytes
        Largest state accepted, compressed or not.

    Attributes
    ----------
    candidates : dict[int, list[str]]
        The candidate lists read so far, by version (the first record of each).

    """

    def __init__(self, topic: str, client_options: dict[str, Any], max_bytes: int) -> None:
        self.topic = topic
        self.max_bytes = max_bytes
        self.consumer = KafkaConsumer(**client_options, group_id=None, enable_auto_commit=False,
                                      auto_offset_reset="earliest",
                                      max_partition_fetch_bytes=max_bytes,
                                      fetch_max_bytes=max_bytes)
        self._assigned = False
        self.candidates: dict[int, list[str]] = {}

    def _assign(self) -> bool:
        if not self._assigned:
            partitions = self.consumer.partitions_for_topic(self.topic)
            if not partitions:
                return False
            tps = [TopicPartition(self.topic, p) for p in sorted(partitions)]
            self.consumer.assign(tps)
            self.consumer.seek_to_beginning(*tps)
            self._assigned = True
        return True

    def poll(self, timeout_ms: int = 0) -> dict[tuple[str, int], PartitionState]:
        """The newest state per input partition among the records read now (only the newest
        of each is decoded); undecodable records are logged and skipped."""
        if not self._assign():
            return {}
        newest: dict[tuple[str, int], tuple[tuple[int, int], bytes]] = {}
        for records in self.consumer.poll(timeout_ms=timeout_ms).values():
            for record in records:
                if record.key and record.key.startswith(CANDIDATES_KEY.encode()):
                    decision = _candidates(record.value)
                    if decision is None:
                        log.warning("changelog %s: skipping a malformed candidate list (at "
                                    "%s)", self.topic, record.offset)
                    else:
                        self.candidates.setdefault(*decision)
                    continue
                headers = dict(record.headers or [])
                offset = headers.get(OFFSET_HEADER)
                epoch = headers.get(EPOCH_HEADER, b"0")
                key = self._key(record.key)
                position = (_number(epoch), _number(offset))
                if key is None or None in position:
                    log.warning("changelog %s: skipping a record without a partition key or "
                                "offset (at %s)", self.topic, record.offset)
                    continue
                if key not in newest or position >= newest[key][0]:
                    newest[key] = (position, record.value)
        out = {}
        position_of = {key: position for key, (position, _) in newest.items()}
        for key, (_, value) in newest.items():
            try:
                decoded_key, state = decode_partition(value or b"", self.max_bytes)
            except StateFileError as exc:
                log.warning("changelog %s: skipping the state of %s: %s", self.topic, key, exc)
                continue
            if decoded_key != key:
                log.warning("changelog %s: record keyed %s holds %s; skipped", self.topic, key,
                            decoded_key)
                continue
            if state.position != position_of[key]:
                log.warning("changelog %s: the record of %s says %s, its state %s; skipped",
                            self.topic, key, position_of[key], state.position)
                continue
            out[key] = state
        return out

    def read_all(self, idle_ms: int = 500, limit_s: float = 30.0
                 ) -> dict[tuple[str, int], PartitionState]:
        """Everything published so far: poll until a poll of ``idle_ms`` brings nothing. (The
        end offset the broker reports is not trusted: tansu's is wrong after batched produce;
        stopping early only means restoring an older, still exact, state.)"""
        out: dict[tuple[str, int], PartitionState] = {}
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            got = self.poll(idle_ms)
            if not got:
                break
            for key, state in got.items():
                if key not in out or state.position >= out[key].position:
                    out[key] = state
        return out

    @staticmethod
    def _key(raw: bytes | None) -> tuple[str, int] | None:
        if not raw:
            return None
        topic, _, partition = raw.decode("utf-8", "replace").rpartition(":")
        number = _number(partition.encode(), 2**31 - 1)
        return (topic, number) if topic and number is not None else None

    def close(self) -> None:
        self.consumer.close()


def _number(text: bytes | None, high: int = INT64_MAX) -> int | None:
    """A header's decimal integer in ``[0, high]`` (a Kafka offset, epoch or partition), or
    None: a larger one would win the newest-state comparison and then match no state."""
    if text is None or not text.isdigit() or len(text) > len(str(high)):
        return None
    number = int(text)
    return number if number <= high else None

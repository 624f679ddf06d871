"""The checkpoint: one ordered procedure that makes the owned partition states durable.

1. **Flush** the predictions and dead letters of every record read so far (the publisher and
   the producer), so that no offset below is past an output not delivered.
2. **Snapshot** every owned state with its offset to the local directory (:mod:`.snapshots`);
   this is what a restart of this member restores first.
3. **Publish** the states that changed to the changelog (:mod:`.changelog`), for whichever
   member owns the partition next.
4. **Commit** the states' offsets to the consumer group (what monitoring reads as lag: the
   service itself always restarts from a state and its own offset, never from the commit).

Each step that waits for a broker is bounded (:mod:`.bounded`). While serving, a flush not done
stops the checkpoint before its snapshot and a snapshot not written stops it before the rest;
both leave the service not ready until a later attempt succeeds. At shutdown every step is
tried within the shutdown deadline and what failed is kept in :attr:`Checkpoint.failures`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from kafka import TopicPartition

from streamnb.consumers.bounded import BoundedCalls
from streamnb.consumers.changelog import publish_state
from streamnb.consumers.clients import Clients
from streamnb.consumers.config import ServiceConfig
from streamnb.consumers.metrics import ServiceMetrics
from streamnb.consumers.snapshots import SNAPSHOT_FILE, write_snapshot
from streamnb.consumers.state import PartitionedModel
from streamnb.stats.persist import write_state

__all__ = ["MODEL_FILE", "Checkpoint"]

log = logging.getLogger("streamnb.service")
MODEL_FILE = "model.snb"
_RETRY_SECONDS = 5.0  # longest wait before a failed checkpoint is tried again

Key = tuple[str, int]


class Checkpoint:
    """When a checkpoint is due, and doing it (:meth:`run`; at shutdown :meth:`final`).

    Attributes
    ----------
    changed : bool
        The owned states changed since the last checkpoint.
    failing : str
        Why the last checkpoint was not done ('' if it was): the service is not ready meanwhile.
    failures : list of str
        The steps the shutdown's checkpoint could not do (``"publish"``, ``"snapshot"``, …).

    """

    def __init__(self, config: ServiceConfig, metrics: ServiceMetrics, model: PartitionedModel,
                 clients: Clients, calls: BoundedCalls) -> None:
        self.config = config
        self.metrics = metrics
        self.model = model
        self.clients = clients
        self.calls = calls
        self.snapshot_dir = Path(config.snapshot_dir)
        self.changed = False
        self.failing = ""
        self.failures: list[str] = []
        self._since = 0  # records handled since the last checkpoint
        self._last = time.monotonic()
        self._retry_at = 0.0
        self._published: dict[Key, tuple[int, int]] = {}  # position last sent to the changelog

    def handled(self, records: int) -> None:
        """``records`` more were read into (or past) the owned states."""
        self._since += records
        self.changed = True

    def due(self, now: float) -> bool:
        cfg = self.config
        return self.changed and now >= self._retry_at and (
            self._since >= cfg.snapshot_every_records
            or now - self._last >= cfg.snapshot_every_seconds)

    def publish_states(self, keys: list[Key]) -> None:
        """Publish the states of ``keys`` that changed since they were last published."""
        clients = self.clients
        if clients.changelog is None:
            return
        sent = False
        for key in keys:
            state = self.model.own[key]
            if self._published.get(key) != state.position:
                publish_state(clients.producer, self.config.changelog_topic, key,
                              state).add_errback(clients.undelivered)
                self._published[key] = state.position
                sent = True
        if sent:
            clients.producer.flush()

    def run(self, publish: list[Key], commit: bool = True, deadline: float | None = None,
            on_packed: Callable[[dict[int, tuple]], None] | None = None) -> bool:
        """Flush, snapshot every owned state, publish ``publish`` to the changelog, commit;
        whether it was done. Each step that needs the brokers gives up at a deadline:
        ``deadline`` at shutdown, where the failure is recorded and the snapshot written
        regardless; while serving, ``--shutdown-timeout-seconds`` from now or a stop request,
        where a flush not done leaves the snapshot unwritten (its offsets would be past
        predictions not delivered), the service not ready, and the checkpoint retried.
        ``on_packed``: as :func:`write_snapshot`'s."""
        serving = deadline is None
        if serving:
            deadline = time.monotonic() + self.config.shutdown_timeout_seconds

        def bounded(what: str, call: Callable[[], Any]) -> bool:
            return self.calls.run(what, call, deadline, interruptible=serving, reraise=serving)

        try:
            flushed = bounded("flushing predictions and dead letters", self.clients.flush)
        except Exception:
            self.metrics.publish_errors.inc()
            raise
        if not flushed:
            self.metrics.publish_errors.inc()
            if serving:
                return self._failed("predictions and dead letters not delivered")
            self.failures.append("publish")
        if not self._snapshot(serving, on_packed):
            return False
        failed = []
        if not bounded("publishing the states to the changelog",
                       lambda: self.publish_states(publish)):
            self.metrics.publish_errors.inc()
            failed.append("publish")
        if commit and self.config.group_id and self.model.own:
            offsets = {TopicPartition(*key): state.offset
                       for key, state in self.model.own.items()}
            try:
                if bounded("committing the offsets",
                           lambda: self.clients.consumer.commit(offsets)):
                    self.metrics.last_commit.set_to_current_time()
                else:
                    self.metrics.commit_errors.inc()
                    failed.append("commit")
            except Exception as exc:
                self.metrics.commit_errors.inc()
                log.warning("offset commit failed (%s); the snapshot holds the offsets", exc)
        if not serving:
            self.failures += failed
        self.metrics.snapshot_written()
        self._since = 0
        self.changed = False
        self._last = time.monotonic()
        # the snapshot holds the states: a changelog or a commit behind it is caught up
        # by the next checkpoint, and costs nothing but a longer restore meanwhile
        self.failing = ""
        return True

    def _snapshot(self, serving: bool,
                  on_packed: Callable[[dict[int, tuple]], None] | None) -> bool:
        """Step 2: every owned state and its offset to the snapshot directory."""
        # the candidate lists the snapshot's states have yet to adopt (a list once adopted
        # by every one is in their counts)
        adopted = min((getattr(s.model, "candidate_version", 0)
                       for s in self.model.own.values()), default=0)
        pending = sorted((v, names) for v, names in self.model.candidates.decisions.items()
                         if v > adopted)
        try:
            self.snapshot_dir.mkdir(parents=True, exist_ok=True)
            write_snapshot(self.snapshot_dir, self.model.own,
                           {"group_id": self.config.group_id, "model": self.config.model,
                            "candidates": pending},
                           generations=self.config.snapshot_generations,
                           on_packed=on_packed)
        except OSError as exc:  # disk full, permissions: the previous snapshot stands
            self.metrics.snapshot_errors.inc()
            self.metrics.snapshot_failing.set(1)
            log.error("snapshot in %s failed: %s; the previous one stands (retrying at the "
                      "next checkpoint)", self.snapshot_dir, exc)
            if not serving:
                self.failures.append("snapshot")
            return self._failed(f"snapshots failing ({exc.strerror or exc})")
        self.metrics.snapshot_failing.set(0)
        return True

    def _failed(self, why: str) -> bool:
        """A checkpoint not done: not ready until one is, the next attempt in a while."""
        self.failing = why
        self._retry_at = time.monotonic() + min(self.config.snapshot_every_seconds,
                                                _RETRY_SECONDS)
        return False

    def final(self, deadline: float) -> None:
        """The shutdown's: a last checkpoint if anything changed (or none was ever written),
        and the summed model to :data:`MODEL_FILE` beside the snapshot."""
        path = self.snapshot_dir / MODEL_FILE
        with ThreadPoolExecutor(1, thread_name_prefix="model-file") as pool:
            written: list[Future] = []

            def write_model(packed: dict[int, tuple]) -> None:
                # one partition's model is the model: its file is written as it was
                # serialised, beside the snapshot (each a hash, a write, an fsync)
                model = self.model.model
                if not self.model.dirty and id(model) in packed:
                    written.append(pool.submit(write_state, path, *packed[id(model)]))

            if self.model.own and (self.changed or not (
                    self.snapshot_dir / SNAPSHOT_FILE).exists()):
                self.run(publish=list(self.model.own), deadline=deadline, on_packed=write_model)
            try:
                if written:
                    written[0].result()
                else:
                    if self.model.dirty:
                        self.model.rebuild()
                    self.model.model.save(path)
            except OSError as exc:  # as a snapshot's: reported, not a traceback
                self.metrics.snapshot_errors.inc()
                log.error("writing the model file %s failed: %s", path, exc)
                self.failures.append("snapshot")

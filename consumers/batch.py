"""One poll's batch, handled: decode the records (:mod:`.messages`), classify every valid one
with the summed model, learn the labelled ones into their partition's state and the sum
(:mod:`.state`), publish the predictions, dead-letter what is refused, and move each partition's
state past the batch. The poll loop (:mod:`.service`) hands each batch to :class:`Batches`."""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from kafka import TopicPartition

from streamnb.consumers.checkpoint import Checkpoint
from streamnb.consumers.clients import Clients
from streamnb.consumers.config import ServiceConfig
from streamnb.consumers.consumer import PartitionRecords
from streamnb.consumers.messages import Record, Rejection, decode_batch
from streamnb.consumers.metrics import ServiceMetrics
from streamnb.consumers.spam_rates import sum_score_sketches
from streamnb.consumers.state import PartitionedModel, fingerprint

__all__ = ["Batches", "class_label"]


def class_label(label: str | int | bool) -> str:
    """The class of a message's ``label``: labels are strings. A JSON integer or boolean
    label is read as its JSON text, so ``1`` and ``"1"`` are one class, ``true`` and
    ``"true"`` another (and ``true`` is not ``1``, as it would be as a Python key).

    >>> class_label("spam"), class_label(1), class_label(True), class_label(False)
    ('spam', '1', 'true', 'false')
    """
    if type(label) is str:
        return label
    if type(label) is bool:
        return "true" if label else "false"
    return str(label)



class _BatchRecords:
    """The fresh records of one poll, numbered 0.. in batch order: ``offsets`` per record, the
    record itself (for dead letters) on demand."""

    __slots__ = ("offsets", "segments", "starts")

    def __init__(self, segments: list[tuple[TopicPartition, PartitionRecords, int, int]],
                 offsets: list[int]) -> None:
        self.segments = segments  # (partition, its records, first fresh one, its batch index)
        self.starts = [first for _, _, _, first in segments]
        self.offsets = offsets

    def ranges(self) -> list[tuple[TopicPartition, int, int]]:
        """Each partition's ``(partition, first, end)`` batch indices."""
        ends = [*self.starts[1:], len(self.offsets)]
        return [(tp, first, end) for (tp, _, _, first), end in
                zip(self.segments, ends, strict=True)]

    def record(self, i: int) -> Any:
        _, recs, start, first = self.segments[bisect.bisect_right(self.starts, i) - 1]
        return recs.record(start + i - first)


class Batches:
    """Handles the batches of one service member.

    Parameters
    ----------
    handled
        Called after each batch (the service updates its model gauges).

    Attributes
    ----------
    processed : int
        Records handled (learned, predicted or dead-lettered) so far.

    """

    def __init__(self, config: ServiceConfig, metrics: ServiceMetrics, model: PartitionedModel,
                 clients: Clients, checkpoint: Checkpoint, handled: Callable[[], None]) -> None:
        self.config = config
        self.metrics = metrics
        self.model = model
        self.clients = clients
        self.checkpoint = checkpoint
        self._handled = handled
        self.processed = 0

    # -- the batch ------------------------------------------------------------------------------
    def process(self, batch: dict[TopicPartition, PartitionRecords]) -> None:
        m = self.metrics
        values: list = []
        offsets: list[int] = []
        # each partition's fresh records: (partition, its records, first fresh one, its index
        # in the batch)
        segments: list[tuple[TopicPartition, PartitionRecords, int, int]] = []
        # the partitions' clocks at each record and after the batch (--half-life-seconds only)
        clocks: list[int] | None = [] if self.model.by_time else None
        ends: dict[TopicPartition, int] = {}
        for tp, recs in batch.items():
            state = self.model.own.get((tp.topic, tp.partition))
            if state is None:  # not ours (any more): its next owner reads it
                continue
            m.consumed.labels(topic=tp.topic).inc(len(recs.offsets))
            # a record before the state's offset is already in the state
            start = recs.start(state.offset)
            if start == len(recs.offsets):
                continue
            segments.append((tp, recs, start, len(values)))
            values += recs.values[start:]
            offsets += recs.offsets[start:]
            if clocks is not None:
                clock = state.clock
                for t in recs.timestamps()[start:]:
                    clock = max(clock, t)
                    clocks.append(clock)
                ends[tp] = clock
        if not values:
            return
        records = _BatchRecords(segments, offsets)
        m.batch_size.observe(len(values))
        decoded = decode_batch(values, self.config.max_message_bytes,
                               token_sets=self.model.reads_token_sets)
        valid = [i for i, d in enumerate(decoded) if isinstance(d, Record)]
        if len(valid) < len(decoded):
            for i, d in enumerate(decoded):
                if isinstance(d, Rejection):
                    self.clients.dead_letter(records.record(i), d.reason, d.detail)

        start = time.perf_counter()
        # with the model's own scores (SpamFilter's spam log-odds), published beside proba
        proba, classes, rows, rejected, scores = self.model.classify([decoded[i].features
                                                                      for i in valid])
        m.predict_latency.observe(time.perf_counter() - start)
        for j, exc in rejected:
            self.clients.dead_letter(records.record(valid[j]), "invalid_record", str(exc))
        predicted = {valid[j]: k for k, j in enumerate(rows)}  # batch index -> proba row
        m.predicted.inc(len(predicted))
        if len(rows):
            if len(classes):
                counts = np.bincount(proba.argmax(axis=1), minlength=len(classes))
                for c, n in zip(classes, counts.tolist(), strict=True):
                    if n:
                        m.predictions.labels(**{"class": m.class_series(c)}).inc(n)
            else:
                m.predictions.labels(**{"class": "none"}).inc(len(rows))
        model_version = self.model.model.n_learned
        structure_version = getattr(self.model.model, "structure_version", 0)

        learned = self._learn(records, decoded, predicted, clocks)
        sum_score_sketches(self.model)
        self._prequential(decoded, predicted, learned, proba, classes)
        publish = [i for i in predicted if decoded[i].label is None or (
            self.config.publish_labelled and i in learned)]
        self._publish(decoded, publish, predicted, proba, classes, model_version,
                      structure_version, scores)

        for tp, recs, _, _ in segments:
            last = len(recs.offsets) - 1
            self.model.advance((tp.topic, tp.partition), recs.offsets[last] + 1,
                               fingerprint(recs.record(last)), ends.get(tp))
        self.processed += len(values)
        self.checkpoint.handled(len(values))
        self._handled()

    def _learn(self, records: _BatchRecords, decoded: list, predicted: dict[int, int],
               clocks: list[int] | None) -> set[int]:
        """Learn the labelled, classified records per partition, in offset order (``clocks``:
        each one's partition clock); the batch indices learned."""
        by_partition: dict[tuple[str, int], list[int]] = {}
        for tp, first, end in records.ranges():
            indices = [i for i in range(first, end)
                       if i in predicted and decoded[i].label is not None]
            if indices:
                by_partition[(tp.topic, tp.partition)] = indices
        learned: set[int] = set()
        start = time.perf_counter()
        limit = self.config.max_classes
        known = self.model.classes() if limit else set()  # the model's, all partitions'
        for key, indices in by_partition.items():
            labels = {i: class_label(decoded[i].label) for i in indices}
            groups = [indices]
            if limit and len(known | set(labels.values())) > limit:
                # the bound binds in this batch: record by record, so that which records are
                # refused depends on the order of the records only, not on how they are batched
                groups = [[i] for i in indices]
            for group in groups:
                label = labels[group[0]]
                if limit and len(group) == 1 and label not in known and len(known) >= limit:
                    self.clients.dead_letter(records.record(group[0]), "too_many_classes",
                                      f"label {label!r:.100} would be class {len(known) + 1} "
                                      f"of the model; --max-classes is {limit}")
                    continue
                rejected = self.model.learn(key, [decoded[i].features for i in group],
                                            [labels[i] for i in group],
                                            [records.offsets[i] for i in group],
                                            None if clocks is None
                                            else [clocks[i] for i in group])
                bad = {group[j] for j, _ in rejected}
                for j, exc in rejected:
                    # a label the model does not learn (SpamFilter: neither spam nor ham)
                    reason = "invalid_label" if exc.field == "label" else "invalid_record"
                    self.clients.dead_letter(records.record(group[j]), reason, str(exc))
                learned.update(i for i in group if i not in bad)
                known.update(labels[i] for i in group if i not in bad)
        if by_partition:
            self.metrics.learn_latency.observe(time.perf_counter() - start)
        self.metrics.learned.inc(len(learned))
        return learned

    def _prequential(self, decoded: list, predicted: dict[int, int], learned: set[int],
                     proba: Any, classes: list) -> None:
        """Accuracy and log-loss of the predictions of the records just learned."""
        if not learned:
            return
        column = {c: k for k, c in enumerate(classes)}
        order = sorted(learned)
        labels = [class_label(decoded[i].label) for i in order]
        rows = np.fromiter((predicted[i] for i in order), np.int64, len(order))
        columns = np.fromiter((column.get(y, -1) for y in labels), np.int64, len(order))
        known = columns >= 0  # a class the model had not seen got probability 0
        p = np.where(known, proba[rows, np.maximum(columns, 0)] if len(classes) else 0.0, 0.0)
        correct = known & (proba.argmax(axis=1)[rows] == columns) if len(classes) else known
        with np.errstate(divide="ignore"):
            losses = -np.log(p)
        self.metrics.observe_predictions(labels, correct, losses)

    def _publish(self, decoded: list, indices: list[int], predicted: dict[int, int],
                 proba: Any, classes: list, model_version: int, structure_version: int,
                 scores: np.ndarray | None = None) -> None:
        if not indices:
            return
        rows = [predicted[i] for i in indices]
        self.clients.outputs.send_predictions(
            self.config.output_topic, [decoded[i].id for i in indices],
            proba[rows] if len(classes) else np.zeros((len(rows), 0)), classes, model_version,
            structure_version, scores=None if scores is None else scores[rows])

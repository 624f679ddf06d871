"""The demo pipeline: SpamAssassin replayed in time order through Kafka and the service.

A Kafka-protocol broker (the one given, or an embedded tansu), the service as its own process
(``streamnb serve``, in a consumer group, its metrics served over HTTP), a producer replaying
the corpus into the input topic as ``{"id", "text", "label"}`` messages, and a reader of the
output topic that shows progress. The AUC and ROC scores are the published ``"score"`` (the
spam log-odds of a SpamFilter) when there is one, else the log-odds of the published
probabilities. The service predicts each labelled message before learning
it (and, with ``--publish-labelled``, publishes that prediction), so the outputs joined with the
true labels give a prequential evaluation scored by :mod:`streamnb.evaluate`, like the
in-process demo (there one message at a time, here one poll at a time).
"""

from __future__ import annotations

import contextlib
import json
import math
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from streamnb.consumers.broker import EmbeddedBroker
from streamnb.consumers.children import child_environment
from streamnb.consumers.topics import ensure_topic
from streamnb.evaluate import PrequentialResult

__all__ = ["PipelineRun", "run_pipeline"]

_POSITIVE = "spam"


@dataclass
class PipelineRun:
    """What the pipeline produced: the prequential result and the service's own counts."""

    result: PrequentialResult
    seconds: float
    underflows: int  # true classes published with probability exactly 0
    bootstrap_servers: str
    metrics_url: str
    service_counts: dict[str, float] = field(default_factory=dict)


def _port_free(host: str, port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def _metrics_address(wanted: str) -> str:
    """``wanted`` if its port is free, else the same host on a free port."""
    host, _, port = wanted.rpartition(":")
    if int(port) and _port_free(host, int(port)):
        return wanted
    with socket.socket() as s:
        s.bind((host, 0))
        return f"{host}:{s.getsockname()[1]}"


def _scrape(url: str) -> dict[str, float]:
    """Unlabelled and overall samples of the service's metrics endpoint ({} if unreachable)."""
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            text = response.read().decode()
    except OSError:
        return {}
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.labels.get("class") == "all":
                out[f"{s.name}[{s.labels['window']}]"] = s.value
            elif "class" not in s.labels:  # summed over topics, reasons, partitions
                out[s.name] = out.get(s.name, 0.0) + s.value
    return out


# A published probability of exactly 0 (an underflow: the service publishes probabilities, not
# their logarithms) is scored as the smallest normal double, so that LogScore stays finite.
_SMALLEST = sys.float_info.min


def _score(proba: dict[str, float], positive: str) -> tuple[dict[str, float], float]:
    """Log-probabilities and the log-odds of ``positive`` (the AUC score), from the published
    probabilities (the losing classes' small probabilities keep full precision in JSON)."""
    logs = {c: math.log(max(p, _SMALLEST)) for c, p in proba.items()}
    if positive not in proba or len(proba) < 2:
        return logs, 0.0
    rest = sum(p for c, p in proba.items() if c != positive)
    if rest == 0:
        return logs, math.inf
    return logs, logs[positive] - math.log(rest)


def run_pipeline(messages: Sequence[Any], model: str = "spam-filter",
                 bootstrap_servers: str | None = None,
                 metrics_address: str = "127.0.0.1:9108", max_poll_records: int = 25,
                 progress: Callable[[int, dict[str, float]], None] | None = None,
                 announce: Callable[[str], None] = print, timeout: float = 600.0
                 ) -> PipelineRun:
    """Replay ``messages`` (:class:`~streamnb.datasets.spamassassin.Message`) through Kafka
    and the service; return the prequential result of the published predictions.

    Parameters
    ----------
    messages
        In the order to replay them.
    model
        The service's ``--model``.
    bootstrap_servers
        A Kafka cluster to use (default: start an embedded tansu broker).
    metrics_address
        Where the service serves its metrics (another free port if this one is taken).
    max_poll_records
        The service's batch size: each batch is predicted before it is learned.
    progress
        Called with the number of predictions received and the service's current metrics.
    announce
        Prints the set-up lines (broker, topics, metrics URL).
    timeout
        Give up when no prediction arrived for this many seconds.

    """
    run = uuid.uuid4().hex[:8]
    topics = {name: f"streamnb-demo-{run}-{name}" for name in ("input", "output", "dlq")}
    with contextlib.ExitStack() as stack:
        if bootstrap_servers is None:
            broker = stack.enter_context(EmbeddedBroker())
            bootstrap_servers = broker.bootstrap_servers
            announce(f"embedded Kafka-protocol broker (tansu) at {bootstrap_servers}")
        else:
            announce(f"Kafka at {bootstrap_servers}")
        client = {"bootstrap_servers": bootstrap_servers.split(",")}
        for topic in topics.values():
            ensure_topic(client, topic, 1)  # one partition: the corpus stays in time order
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="streamnb-demo-")))
        address = _metrics_address(metrics_address)
        metrics_url = f"http://{address}/metrics"
        service = _start_service(stack, workdir, bootstrap_servers, topics, model, address,
                                 max_poll_records, run)
        announce(f"service: streamnb serve --model {model} (group streamnb-demo-{run}); "
                 f"live metrics at {metrics_url}")
        announce(f"replaying {len(messages)} messages into {topics['input']}")

        truth = {f"{m.group}/{m.id}": m.label for m in messages}
        producer = threading.Thread(target=_replay, args=(bootstrap_servers, topics["input"],
                                                          messages), daemon=True)
        start = time.monotonic()
        producer.start()
        outputs = _collect(bootstrap_servers, topics["output"], truth, service, progress,
                           metrics_url, timeout)
        seconds = time.monotonic() - start
        counts = _scrape(metrics_url)
        service.send_signal(signal.SIGTERM)
        try:
            service.wait(60)
        except subprocess.TimeoutExpired:
            service.kill()
        producer.join(10)

    result = PrequentialResult(positive=_POSITIVE)
    correct = underflows = 0
    every = max(len(messages) // 200, 1)
    for i, m in enumerate(messages, start=1):
        out = outputs[f"{m.group}/{m.id}"]
        logs, score = _score(out["proba"], _POSITIVE)
        if out.get("score") is not None:  # the model's own log-odds (SpamFilter), unrounded
            score = out["score"]
        result.labels.append(m.label)
        result.predicted.append(out["label"])
        result.known.append(m.label in logs)
        result.log_p_true.append(logs.get(m.label, -math.inf))
        result.score.append(score)
        correct += out["label"] == m.label
        underflows += out["proba"].get(m.label) == 0.0
        if i % every == 0 or i == len(messages):
            result.curve.append((i, correct / i))
    return PipelineRun(result, seconds, underflows, bootstrap_servers, metrics_url, counts)


def _start_service(stack: contextlib.ExitStack, workdir: Path, bootstrap: str,
                   topics: dict[str, str], model: str, address: str, max_poll_records: int,
                   run: str) -> subprocess.Popen:
    log = stack.enter_context(open(workdir / "service.log", "wb"))  # noqa: SIM115
    service = subprocess.Popen(
        [sys.executable, "-m", "streamnb", "serve", "--bootstrap-servers", bootstrap,
         "--input-topic", topics["input"], "--output-topic", topics["output"],
         "--dead-letter-topic", topics["dlq"], "--changelog-topic", "",
         "--group-id", f"streamnb-demo-{run}", "--model", model, "--publish-labelled",
         "--snapshot-dir", str(workdir / "state"), "--metrics-address", address,
         "--max-poll-records", str(max_poll_records), "--session-timeout-ms", "6000",
         "--heartbeat-interval-ms", "1000", "--log-level", "warning"],
        env=child_environment(service=True), stdin=subprocess.DEVNULL, stdout=log,
        stderr=subprocess.STDOUT)

    def stop() -> None:
        if service.poll() is None:
            service.kill()
            service.wait()

    stack.callback(stop)
    service.log_path = workdir / "service.log"  # type: ignore[attr-defined]
    return service


def _replay(bootstrap: str, topic: str, messages: Sequence[Any]) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap.split(","), acks="all", linger_ms=10,
                             max_request_size=4_000_000)
    for m in messages:
        value = json.dumps({"id": f"{m.group}/{m.id}", "text": m.text, "label": m.label})
        producer.send(topic, value=value.encode(), key=f"{m.group}/{m.id}".encode())
    producer.flush()
    producer.close()


def _collect(bootstrap: str, topic: str, truth: dict[str, str], service: subprocess.Popen,
             progress: Callable[[int, dict[str, float]], None] | None, metrics_url: str,
             timeout: float) -> dict[str, dict]:
    """Read predictions until every message has one (the last one of each id wins)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap.split(","), group_id=None,
                             auto_offset_reset="earliest", enable_auto_commit=False)
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    outputs: dict[str, dict] = {}
    last_output, last_scrape = time.monotonic(), 0.0
    metrics: dict[str, float] = {}
    try:
        while len(outputs) < len(truth):
            for records in consumer.poll(timeout_ms=200, max_records=2000).values():
                for record in records:
                    body = json.loads(record.value)
                    if body["id"] in truth:
                        outputs[body["id"]] = body
                last_output = time.monotonic()
            now = time.monotonic()
            if progress is not None:
                if now - last_scrape >= 1.0:
                    metrics, last_scrape = _scrape(metrics_url) or metrics, now
                progress(len(outputs), metrics)
            if service.poll() is not None:
                raise RuntimeError(f"the service exited with status {service.returncode}:\n"
                                   + Path(service.log_path).read_text(errors="replace")[-3000:])
            if now - last_output > timeout:
                raise RuntimeError(f"no prediction for {timeout:.0f} s ({len(outputs)} of "
                                   f"{len(truth)} received)")
    finally:
        consumer.close()
    return outputs

"""Faults under a running service: a broker that comes back with another log, a long broker
outage, an unwritable snapshot directory, a model of too many classes.

Every test runs ``streamnb serve`` against a real broker (the embedded tansu). An outage of a
broker that keeps its log goes through :class:`~streamnb.consumers.testing.Relay` (tansu keeps
its log in memory, so a restarted one is empty: that is the other fault here).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from kafka_helpers import (
    ROOT,
    ServiceProcess,
    create_topic,
    dumps,
    free_port,
    http_get,
    label_of,
    labelled_features,
    labelled_messages,
    metrics_text,
    produce,
    read_topic,
    scrape,
    service_args,
    unique,
    wait_for,
)

from streamnb import IndifferentNB
from streamnb.consumers.broker import EmbeddedBroker
from streamnb.consumers.metrics import CLASS_SERIES
from streamnb.consumers.service import EXIT_SHUTDOWN_INCOMPLETE, MODEL_FILE
from streamnb.consumers.snapshots import read_snapshot
from streamnb.consumers.testing import relayed_broker
from streamnb.models.persistence import load_model

SHUTDOWN_TIMEOUT = 5.0
WATCHDOG_GRACE = 10.0  # streamnb.consumers.service._WATCHDOG_GRACE


def reference(*ranges: tuple[int, int]) -> IndifferentNB:
    model = IndifferentNB()
    for start, stop in ranges:
        for i in range(start, stop):
            model.learn_one(labelled_features(i), label_of(i))
    return model


def create_topics(bootstrap: str, topic: str, partitions: int) -> None:
    create_topic(bootstrap, topic, partitions)
    create_topic(bootstrap, f"{topic}-out")
    create_topic(bootstrap, f"{topic}-dlq")


# -- a log replaced under the running service --------------------------------------------------
def test_a_broker_restarted_empty_under_the_running_service_is_an_offset_gap(tmp_path):
    """The broker loses its log (restarted empty), the topics are re-created and refilled past
    the states' offsets: at the reconnection every partition is checked against the new log
    before anything of it is read, so the refill is a ``log_replaced`` gap of each partition,
    handled by the policy (reset-state: the model is the new log's, exactly)."""
    broker = EmbeddedBroker(log_path=tmp_path / "broker.log").start()
    port = broker.port
    bootstrap = broker.bootstrap_servers
    topic = unique("restarted")
    create_topics(bootstrap, topic, 2)
    produce(bootstrap, topic, labelled_messages(0, 2000), partition_of=lambda i: i % 2)
    metrics_port = free_port()
    url = f"http://127.0.0.1:{metrics_port}/metrics"
    service = ServiceProcess(service_args(bootstrap, topic, tmp_path / "state", metrics_port,
                                          "--offset-gap-policy", "reset-state",
                                          "--snapshot-every-seconds", "1"),
                             tmp_path / "service.log")
    try:
        wait_for(lambda: scrape(url, "streamnb_model_records") == 2000, 120, "2000 records",
                 alive=service.alive)
        broker.stop()
        # a broker that lost its log comes back after the service saw it gone
        wait_for(lambda: scrape(url, "streamnb_broker_reachable") == 0, 60,
                 "the broker seen gone", alive=service.alive)
        broker = EmbeddedBroker(port=port, log_path=tmp_path / "broker.log").start()
        create_topics(bootstrap, topic, 2)
        produce(bootstrap, topic, labelled_messages(10_000, 15_000),
                partition_of=lambda i: i % 2)
        # 2,000 before, then each partition's 2,500 new records from offset 0 (without the
        # check: only the 1,500 past each old offset, silently)
        wait_for(lambda: scrape(url, "streamnb_messages_learned_total") == 7000, 120,
                 "the new log learned from its start", alive=service.alive)
        text = metrics_text(url)
        for partition in ("0", "1"):
            assert scrape(url, "streamnb_offset_gaps_total", {
                "topic": topic, "partition": partition, "kind": "log_replaced"}) == 1, text
        # the model gauges follow the summed model, rebuilt between polls
        wait_for(lambda: scrape(url, "streamnb_model_records") == 5000, 60,
                 "the model gauge", alive=service.alive)
        wait_for(lambda: http_get(url.replace("/metrics", "/readyz"))[0] == 200, 60, "ready",
                 alive=service.alive)
    except BaseException:
        service.kill()
        broker.stop()
        raise
    assert service.terminate() == 0
    broker.stop()
    logs = service.logs()
    gaps = [line for line in logs.splitlines() if "offset gap on" in line]
    assert len(gaps) == 2 and all("is not the one the state read there" in g for g in gaps), logs
    assert load_model(tmp_path / "state" / MODEL_FILE).stats.to_dict() == reference(
        (10_000, 15_000)).stats.to_dict()


def test_a_topic_replaced_without_a_disconnection_is_found_by_the_periodic_check(
        kafka_broker, tmp_path):
    """The topic is deleted, re-created and refilled while the service's connection stays up:
    no reconnection, no out-of-range offset, yet the periodic check finds the record it read
    last replaced and applies the policy (reset-state: the new log, exactly). With
    kafka-python's consumer: librdkafka's consumer crashes (SIGSEGV) when tansu deletes the
    topic it reads, with or without the check."""
    from kafka.admin import KafkaAdminClient

    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("replaced")
    create_topics(bootstrap, topic, 1)
    produce(bootstrap, topic, labelled_messages(0, 1000))
    metrics_port = free_port()
    url = f"http://127.0.0.1:{metrics_port}/metrics"
    service = ServiceProcess(service_args(bootstrap, topic, tmp_path / "state", metrics_port,
                                          "--offset-gap-policy", "reset-state",
                                          "--offset-check-seconds", "1",
                                          "--consumer-client", "kafka-python"),
                             tmp_path / "service.log")
    try:
        wait_for(lambda: scrape(url, "streamnb_model_records") == 1000, 120, "1000 records",
                 alive=service.alive)
        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        admin.delete_topics([topic])
        admin.close()
        create_topic(bootstrap, topic)
        produce(bootstrap, topic, labelled_messages(10_000, 12_500))
        wait_for(lambda: scrape(url, "streamnb_offset_gaps_total", {
            "topic": topic, "partition": "0", "kind": "log_replaced"}), 120, "the gap",
            alive=service.alive)
        wait_for(lambda: scrape(url, "streamnb_model_records") == 2500, 120,
                 "the new log learned", alive=service.alive)
    except BaseException:
        service.kill()
        raise
    assert service.terminate() == 0
    assert load_model(tmp_path / "state" / MODEL_FILE).stats.to_dict() == reference(
        (10_000, 12_500)).stats.to_dict()


# -- a long outage ---------------------------------------------------------------------------------
def unlabelled(start: int, stop: int) -> list[bytes]:
    return [dumps({"id": f"u{i}", "features": labelled_features(i)}) for i in range(start, stop)]


def mixed(start: int, stop: int) -> list[bytes]:
    """Message i labelled, unless i % 5 == 4 (a prediction to publish)."""
    return [unlabelled(i, i + 1)[0] if i % 5 == 4 else labelled_messages(i, i + 1)[0]
            for i in range(start, stop)]


def learned_ranges(start: int, stop: int) -> IndifferentNB:
    model = IndifferentNB()
    for i in range(start, stop):
        if i % 5 != 4:
            model.learn_one(labelled_features(i), label_of(i))
    return model


@pytest.mark.slow
def test_a_120_s_outage_leaves_the_service_running_and_loses_nothing(tmp_path):
    """The broker is cut off for 120 s while the service works through a backlog (predictions
    pending, snapshots every second): the service stays up, not ready, and retries; when the
    broker is back it reads on, with every record learned once and every prediction
    published. A second outage ends with SIGTERM: within the shutdown timeout and the
    watchdog, exit status 4 and one line saying what failed, the snapshot holding every
    record learned; a restart after the outage finishes the stream exactly."""
    total = 20_000
    with relayed_broker(tmp_path / "broker.log") as (_, relay):
        bootstrap = f"127.0.0.1:{relay.port}"
        topic = unique("outage")
        create_topics(bootstrap, topic, 2)
        create_topic(bootstrap, f"{topic}-changelog")
        produce(bootstrap, topic, mixed(0, total), partition_of=lambda i: i % 2)
        metrics_port = free_port()
        url = f"http://127.0.0.1:{metrics_port}/metrics"
        ready = url.replace("/metrics", "/readyz")
        args = service_args(bootstrap, topic, tmp_path / "state", metrics_port,
                            "--changelog-topic", f"{topic}-changelog",
                            "--snapshot-every-seconds", "1", "--max-poll-records", "20",
                            "--shutdown-timeout-seconds", f"{SHUTDOWN_TIMEOUT:g}")
        service = ServiceProcess(args, tmp_path / "service.log")
        try:
            wait_for(lambda: (scrape(url, "streamnb_messages_learned_total") or 0) > 2000,
                     120, "2000 records learned", alive=service.alive)
            relay.cut()
            wait_for(lambda: scrape(url, "streamnb_broker_reachable") == 0, 60,
                     "the broker seen gone", alive=service.alive)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:  # the outage: up, not ready, all along
                assert service.alive(), service.logs()
                status, why = http_get(ready)
                assert status == 503, (status, why)
                time.sleep(2)
            relay.restore()
            wait_for(lambda: scrape(url, "streamnb_messages_learned_total") == total * 4 // 5,
                     300, "every labelled record learned", alive=service.alive)
            wait_for(lambda: http_get(ready)[0] == 200, 120, "ready again",
                     alive=service.alive)
            # the model gauges follow the summed model, rebuilt between polls
            wait_for(lambda: scrape(url, "streamnb_model_records") == total * 4 // 5, 60,
                     "the model gauge", alive=service.alive)

            # a second outage, ended by SIGTERM
            produce(bootstrap, topic, mixed(total, total + 2000), partition_of=lambda i: i % 2)
            wait_for(lambda: scrape(url, "streamnb_messages_learned_total")
                     > total * 4 // 5, 120, "new records learned", alive=service.alive)
            relay.cut()
            wait_for(lambda: http_get(ready)[0] == 503, 60, "not ready", alive=service.alive)
            time.sleep(SHUTDOWN_TIMEOUT + 2)  # a checkpoint waiting for the broker meanwhile
        except BaseException:
            service.kill()
            raise
        # bounded: a shutdown outliving the timeout and the watchdog fails here
        code = service.terminate(timeout=SHUTDOWN_TIMEOUT + WATCHDOG_GRACE + 15)
        logs = service.logs()
        # 4 when the shutdown's own checkpoint needed the broker; 0 when a checkpoint in the
        # outage had already flushed and snapshotted everything (only its changelog publish
        # failed, which the snapshot makes good)
        assert code in (0, EXIT_SHUTDOWN_INCOMPLETE), logs
        assert "Traceback" not in logs and "cannot start" not in logs, logs
        # one line says what failed (the clients' teardown may log after it)
        assert len([line for line in logs.splitlines() if "; exit status 4" in line]) == (
            code == EXIT_SHUTDOWN_INCOMPLETE), logs
        states = read_snapshot(tmp_path / "state")[0]
        learned = sum(s.model.n_learned for s in states.values())
        assert learned == load_model(tmp_path / "state" / MODEL_FILE).n_learned

        relay.restore()
        again = ServiceProcess(args, tmp_path / "again.log")
        try:
            wait_for(lambda: scrape(url, "streamnb_model_records") == (total + 2000) * 4 // 5,
                     300, "the rest learned", alive=again.alive)
        except BaseException:
            again.kill()
            raise
        assert again.terminate() == 0
        assert load_model(tmp_path / "state" / MODEL_FILE).stats.to_dict() == learned_ranges(
            0, total + 2000).stats.to_dict()
        predictions = read_topic(bootstrap, f"{topic}-out", idle=3.0)
        ids = {json.loads(r.value)["id"] for r in predictions}
        assert ids == {f"u{i}" for i in range(total + 2000) if i % 5 == 4}


# -- the snapshot directory -------------------------------------------------------------------
def test_an_unwritable_snapshot_directory_is_refused_at_start_in_one_line(tmp_path):
    """Probed before anything else (even root cannot create a directory inside a file)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    state = blocker / "state"
    result = subprocess.run(
        [sys.executable, "-m", "streamnb", "serve", "--bootstrap-servers", "127.0.0.1:1",
         "--snapshot-dir", str(state), "--metrics-address", ""],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if " ERROR " in line]
    assert len(errors) == 1, result.stderr
    assert f"snapshot directory {state} (--snapshot-dir) cannot hold snapshots: creating it " \
           "failed: Not a directory" in errors[0], errors


def test_snapshots_failing_while_running_make_the_service_not_ready_and_alert(
        kafka_broker, tmp_path):
    """The snapshot directory replaced by a file under the running service: every checkpoint
    fails, counted; /readyz says why (503); the failing gauge the alert reads is 1; SIGTERM
    ends with exit status 4 and one line, no traceback. The directory back: ready again."""
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("unwritable")
    create_topics(bootstrap, topic, 1)
    produce(bootstrap, topic, labelled_messages(0, 500))
    metrics_port = free_port()
    url = f"http://127.0.0.1:{metrics_port}/metrics"
    ready = url.replace("/metrics", "/readyz")
    state = tmp_path / "state"
    service = ServiceProcess(service_args(bootstrap, topic, state, metrics_port,
                                          "--snapshot-every-seconds", "0.5",
                                          "--shutdown-timeout-seconds", "5"),
                             tmp_path / "service.log")
    try:
        wait_for(lambda: scrape(url, "streamnb_model_records") == 500, 120, "500 records",
                 alive=service.alive)
        wait_for(lambda: http_get(ready)[0] == 200, 60, "ready", alive=service.alive)
        state.rename(tmp_path / "moved")
        state.write_text("not a directory")
        produce(bootstrap, topic, labelled_messages(500, 600))
        wait_for(lambda: scrape(url, "streamnb_snapshot_failing") == 1, 60,
                 "the snapshot failing", alive=service.alive)
        status, why = http_get(ready)
        assert status == 503 and "checkpoint failing: snapshots failing" in why, (status, why)
        assert scrape(url, "streamnb_snapshot_errors_total") >= 1
        state.unlink()
        (tmp_path / "moved").rename(state)
        wait_for(lambda: http_get(ready)[0] == 200, 60, "ready again", alive=service.alive)
        assert scrape(url, "streamnb_snapshot_failing") == 0
        state.rename(tmp_path / "moved")
        state.write_text("not a directory")
        produce(bootstrap, topic, labelled_messages(600, 700))
        wait_for(lambda: scrape(url, "streamnb_snapshot_failing") == 1, 60,
                 "the snapshot failing again", alive=service.alive)
    except BaseException:
        service.kill()
        raise
    code = service.terminate()
    logs = service.logs()
    assert code == EXIT_SHUTDOWN_INCOMPLETE, logs
    assert "Traceback" not in logs, logs
    assert f"writing the model file {state / MODEL_FILE} failed" in logs
    assert "snapshot failed" in logs.splitlines()[-1] or "exit status 4" in logs.splitlines()[-1]


# -- many classes ---------------------------------------------------------------------------------
def test_max_classes_bounds_the_model_and_the_metrics_page(kafka_broker, tmp_path):
    """Two partitions of 150 classes each, 100 shared: the model holds --max-classes 120 in
    all (a partition's bound let it hold 200), the records of later classes are dead letters,
    and the per-class series name CLASS_SERIES classes, the rest counted as "(other)"."""
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("classes")
    create_topics(bootstrap, topic, 2)

    def message(i: int) -> bytes:
        # partition 0: classes c0..c149, partition 1: c50..c199
        partition = i % 2
        label = f"c{(i // 2) % 150 + 50 * partition}"
        return dumps({"id": f"m{i}", "features": labelled_features(i), "label": label})

    produce(bootstrap, topic, [message(i) for i in range(1200)], partition_of=lambda i: i % 2)
    metrics_port = free_port()
    url = f"http://127.0.0.1:{metrics_port}/metrics"
    service = ServiceProcess(service_args(bootstrap, topic, tmp_path / "state", metrics_port,
                                          "--max-classes", "120"),
                             tmp_path / "service.log")
    try:
        wait_for(lambda: (scrape(url, "streamnb_messages_learned_total") or 0)
                 + (scrape(url, "streamnb_dead_letters_total", {"reason": "too_many_classes"})
                    or 0) == 1200, 120, "every record learned or refused", alive=service.alive)
        text = metrics_text(url)
    except BaseException:
        service.kill()
        raise
    assert service.terminate() == 0
    model = load_model(tmp_path / "state" / MODEL_FILE)
    assert len(model.classes) == 120, len(model.classes)
    refused = read_topic(bootstrap, f"{topic}-dlq", idle=2.0)
    assert refused and all(dict(r.headers)["streamnb-error"] == b"too_many_classes"
                           for r in refused)
    assert all(json.loads(r.value)["label"] not in model.classes for r in refused)
    named = {line.split('class="')[1].split('"')[0] for line in text.splitlines()
             if line.startswith("streamnb_prequential_accuracy{")}
    assert len(named) == CLASS_SERIES + 2 and {"all", "(other)"} <= named, sorted(named)
    assert len(text) < 60_000, len(text)

"""Service operations (issue 14): offset gaps between a state and the broker's log; snapshot
generations and the fall-backs of a damaged snapshot.

The gap is made for real: the service learns a topic and stops, the topic is deleted and
re-created with fewer, different records, and the service restarts on the same snapshot
directory, so its state's offset is beyond the new log's end. Each ``--offset-gap-policy`` is
run on its own copy of that directory.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import weakref
from collections.abc import Callable

import pytest
from kafka.admin import KafkaAdminClient
from kafka_helpers import (
    CORRUPTIONS,
    CRAFTED,
    GROUP_FLAGS,
    ROOT,
    ServiceProcess,
    corrupt,
    create_topic,
    dumps,
    free_port,
    http_get,
    label_of,
    labelled_features,
    labelled_messages,
    metric_value,
    metrics_text,
    produce,
    read_topic,
    scrape,
    service_args,
    unique,
    wait_for,
)

import streamnb
from streamnb import IndifferentNB
from streamnb.cli import main
from streamnb.consumers.broker import EmbeddedBroker
from streamnb.consumers.config import ConfigError, load_config
from streamnb.consumers.recovery import find_gap
from streamnb.consumers.service import (
    EXIT_OFFSET_GAP,
    EXIT_SHUTDOWN_INCOMPLETE,
    MODEL_FILE,
    Service,
    _serving_heap,
)
from streamnb.consumers.snapshots import (
    read_snapshot,
    read_snapshot_file,
    snapshot_paths,
    write_snapshot,
)
from streamnb.consumers.state import PartitionState
from streamnb.consumers.testing import CONSUMER_CLIENTS
from streamnb.models.persistence import load_model

OLD, NEW = (0, 3000), (10_000, 11_000)  # the records before and after the re-creation
REFILL = (20_000, 24_000)  # a re-created topic refilled past the old state's offset


def reference(*ranges: tuple[int, int]) -> IndifferentNB:
    model = IndifferentNB()
    for start, stop in ranges:
        for i in range(start, stop):
            model.learn_one(labelled_features(i), label_of(i))
    return model


def test_serving_leaves_the_start_up_heap_out_of_collections_until_the_last_service_stops():
    """While a service serves, what start-up built is frozen and the youngest generation is
    collected less often; a second service serving meanwhile changes nothing, and the last
    one to stop (even by an error) gives the collector back as it was, everything collectable."""
    class Node:
        pass

    found = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    node = Node()
    node.me = node  # a cycle: only the collector frees it
    ref = weakref.ref(node)
    del node
    with _serving_heap:
        assert gc.get_threshold()[0] == 20_000 and gc.get_freeze_count() > 0
        gc.collect()
        assert ref() is not None  # frozen: left out
        with pytest.raises(RuntimeError), _serving_heap:
            assert gc.get_threshold()[0] == 20_000
            raise RuntimeError("a service fails")
        assert gc.get_threshold()[0] == 20_000 and gc.get_freeze_count() > 0
    assert gc.get_threshold() == found and gc.get_freeze_count() == 0
    gc.collect()
    assert ref() is None


def test_find_gap():
    assert find_gap(3000, 0, 1000) == "after_log_end"
    assert find_gap(1000, 0, 1000) is None  # at the end: nothing new yet
    assert find_gap(10, 40, 90) == "before_log_start"  # retention deleted 10..39 unread
    assert find_gap(0, 40, 90) is None  # a new state starts wherever the log starts
    assert find_gap(50, None, None) is None


def old_topic(bootstrap: str, name: str, tmp_path) -> tuple[str, str, Callable[..., list]]:
    """A topic holding the OLD records; its metrics URL, and the options of a standalone
    indifferent-NB service on it without a changelog (unless ``extra`` gives one), with its
    state in ``tmp_path / state``."""
    topic = unique(name)
    create_topic(bootstrap, topic)
    produce(bootstrap, topic, labelled_messages(*OLD))
    port = free_port()

    def args(state: str, *extra: str) -> list[str]:
        return service_args(bootstrap, topic, tmp_path / state, port, *extra)

    return topic, f"http://127.0.0.1:{port}/metrics", args


def test_offset_gap_policies_after_the_topic_is_recreated(kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap_servers
    changelog = unique("gap-changelog")
    topic, url, args = old_topic(bootstrap, "gap", tmp_path)

    first = ServiceProcess(args("first", "--changelog-topic", changelog),
                           tmp_path / "first.log")
    wait_for(lambda: scrape(url, "streamnb_model_records") == 3000, 120, "3000 records",
             alive=first.alive)
    assert first.terminate() == 0
    assert {k: s.offset for k, s in read_snapshot(tmp_path / "first")[0].items()} == {
        (topic, 0): 3000}

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.delete_topics([topic])
    admin.close()
    create_topic(bootstrap, topic)
    produce(bootstrap, topic, labelled_messages(*NEW))
    for name in ("fail", "continue", "reset"):
        shutil.copytree(tmp_path / "first", tmp_path / name)

    # fail (the default): one clear line, no traceback, non-zero exit, state untouched
    before = (tmp_path / "fail" / "snapshot.snb").read_bytes()
    service = ServiceProcess(args("fail", "--changelog-topic", changelog),
                             tmp_path / "fail.log")
    # the check confirms the log's end for ~10 s: never ready meanwhile (before, the partition
    # left the "being checked" set before that read, and /readyz said ready)
    answers = set()
    while service.alive():
        answers.add(http_get(url.replace("/metrics", "/readyz")))
        time.sleep(0.1)
    assert (503, "not ready: partitions being checked against the broker's log\n") in answers
    assert not any(status == 200 for status, _ in answers), answers
    code = service.process.wait(60)
    service.log.close()
    logs = service.logs()
    assert code == EXIT_OFFSET_GAP, logs
    lines = [line for line in logs.splitlines() if "offset gap" in line]
    assert len(lines) == 1, logs
    assert f"offset gap on {topic}:0: the state expects offset 3000 next" in lines[0]
    assert "log ends at offset" in lines[0] and "--offset-gap-policy reset-state" in lines[0]
    assert " ERROR " in lines[0] and "Traceback" not in logs
    assert (tmp_path / "fail" / "snapshot.snb").read_bytes() == before

    # continue-from-earliest: the state keeps its 3000 records and learns the 1000 new ones
    service = ServiceProcess(args("continue", "--offset-gap-policy", "continue-from-earliest"),
                             tmp_path / "continue.log")
    wait_for(lambda: scrape(url, "streamnb_model_records") == 4000, 120, "4000 records",
             alive=service.alive)
    assert scrape(url, "streamnb_offset_gaps_total", {"topic": topic, "partition": "0",
                                                      "kind": "after_log_end"}) == 1
    assert scrape(url, "streamnb_messages_learned_total") == 1000
    assert service.terminate() == 0
    assert "state kept, reading on from offset 0" in service.logs()
    got = load_model(tmp_path / "continue" / "model.snb")
    assert got.stats.to_dict() == reference(OLD, NEW).stats.to_dict()
    state = read_snapshot(tmp_path / "continue")[0][(topic, 0)]
    assert (state.epoch, state.offset) == (1, 1000)

    # reset-state, in a consumer group with the changelog that holds the old state at 3000:
    # the partition is re-learned from the new log only, and a restart keeps it that way (the
    # reset state's epoch beats the stale changelog record's higher offset)
    group = unique("gap-group")
    reset_args = args("reset", "--changelog-topic", changelog, "--group-id", group,
                      *GROUP_FLAGS, "--offset-gap-policy", "reset-state")
    service = ServiceProcess(reset_args, tmp_path / "reset.log")
    wait_for(lambda: scrape(url, "streamnb_messages_learned_total") == 1000, 120,
             "1000 records learned", alive=service.alive)
    # the model gauges follow the summed model, rebuilt between polls
    wait_for(lambda: scrape(url, "streamnb_model_records") == 1000, 60,
             "the model gauge", alive=service.alive)
    assert scrape(url, "streamnb_offset_gaps_total", {"topic": topic, "partition": "0",
                                                      "kind": "after_log_end"}) == 1
    assert service.terminate() == 0
    assert "state reset, re-learning from offset 0" in service.logs()
    assert load_model(tmp_path / "reset" / "model.snb").stats.to_dict() == reference(
        NEW).stats.to_dict()
    service = ServiceProcess(reset_args, tmp_path / "restart.log")
    wait_for(lambda: f"assigned {topic}:0@1000" in service.logs(), 120,
             "the reset state restored", alive=service.alive)
    # the model gauges follow the summed model, rebuilt between polls
    wait_for(lambda: scrape(url, "streamnb_model_records") == 1000, 60,
             "the model gauge", alive=service.alive)
    assert scrape(url, "streamnb_offset_gaps_total", {"topic": topic, "partition": "0",
                                                      "kind": "after_log_end"}) in (None, 0)
    assert scrape(url, "streamnb_messages_learned_total") == 0
    assert service.terminate() == 0
    assert load_model(tmp_path / "reset" / "model.snb").stats.to_dict() == reference(
        NEW).stats.to_dict()


@pytest.mark.parametrize("client", CONSUMER_CLIENTS)
def test_a_recreated_topic_refilled_past_the_state_is_a_gap(kafka_broker, tmp_path, client):
    """Offsets cannot tell this log from the old one (it holds more records than the state
    read); the fingerprint of the record before the state's offset does (read by the probe
    consumer, of either client)."""
    bootstrap = kafka_broker.bootstrap_servers
    topic, url, service_args = old_topic(bootstrap, "refill", tmp_path)

    def args(state: str, *extra: str) -> list[str]:
        return service_args(state, "--consumer-client", client, *extra)

    first = ServiceProcess(args("first"), tmp_path / "first.log")
    wait_for(lambda: scrape(url, "streamnb_model_records") == 3000, 120, "3000 records",
             alive=first.alive)
    assert first.terminate() == 0
    assert read_snapshot(tmp_path / "first")[0][(topic, 0)].last is not None
    # a restart on the same log finds the same record before the offset: no gap
    again = ServiceProcess(args("first"), tmp_path / "again.log")
    wait_for(lambda: http_get(url.replace("/metrics", "/readyz")) == (200, "ready\n"), 120,
             "ready", alive=again.alive)
    assert again.terminate() == 0
    assert "offset gap" not in again.logs()

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.delete_topics([topic])
    admin.close()
    create_topic(bootstrap, topic)
    produce(bootstrap, topic, labelled_messages(*REFILL))
    for name in ("fail", "continue"):
        shutil.copytree(tmp_path / "first", tmp_path / name)

    service = ServiceProcess(args("fail"), tmp_path / "fail.log")
    assert service.process.wait(60) == EXIT_OFFSET_GAP
    service.log.close()
    lines = [line for line in service.logs().splitlines() if "offset gap" in line]
    assert len(lines) == 1, service.logs()
    assert (f"offset gap on {topic}:0: the state expects offset 3000 next, but its record at "
            "offset 2999 is not the one the state read there" in lines[0]), lines

    service = ServiceProcess(args("continue", "--offset-gap-policy", "continue-from-earliest"),
                             tmp_path / "continue.log")
    wait_for(lambda: scrape(url, "streamnb_model_records") == 7000, 120, "7000 records",
             alive=service.alive)
    assert scrape(url, "streamnb_offset_gaps_total", {"topic": topic, "partition": "0",
                                                      "kind": "log_replaced"}) == 1
    assert service.terminate() == 0
    got = load_model(tmp_path / "continue" / "model.snb")
    assert got.stats.to_dict() == reference(OLD, REFILL).stats.to_dict()
    state = read_snapshot(tmp_path / "continue")[0][(topic, 0)]
    assert (state.epoch, state.offset) == (1, 4000) and state.last is not None


# -- snapshot generations ------------------------------------------------------------------------
N_RECORDS = 1500


@pytest.fixture(scope="module")
def generations(kafka_broker, tmp_path_factory):
    """A topic of N_RECORDS labelled messages, a service stopped after 900 of them with three
    snapshot generations (and a changelog), and the model of an uninterrupted run."""
    bootstrap = kafka_broker.bootstrap_servers
    topic, changelog = unique("generations"), unique("generations-changelog")
    create_topic(bootstrap, topic)
    produce(bootstrap, topic, labelled_messages(0, N_RECORDS))
    root = tmp_path_factory.mktemp("generations")

    def config(directory, **changes):
        return load_config({
            "bootstrap_servers": bootstrap, "input_topic": [topic], "group_id": "",
            "changelog_topic": "", "output_topic": f"{topic}-out",
            "dead_letter_topic": f"{topic}-dlq", "model": "indifferent",
            "snapshot_dir": str(root / directory), "metrics_address": "",
            "max_poll_records": 70, "snapshot_every_records": 300, "snapshot_generations": 3,
            "publisher_process": False, **changes}, environ={})

    found = gc.get_threshold()
    Service(config("whole")).run(max_records=N_RECORDS)
    # the collector as the service found it (_serving_heap undone)
    assert gc.get_threshold() == found and gc.get_freeze_count() == 0
    Service(config("base", changelog_topic=changelog)).run(max_records=900)
    paths = snapshot_paths(root / "base")
    assert [p.name for p in paths] == ["snapshot.snb", "snapshot.1.snb", "snapshot.2.snb"]
    offsets = [read_snapshot_file(p)[0][(topic, 0)].offset for p in paths]
    assert offsets[0] >= 900 and offsets[0] > offsets[1] > offsets[2] > 0, offsets
    return {"config": config, "root": root, "topic": topic, "offsets": offsets,
            "changelog": changelog,
            "whole": load_model(root / "whole" / MODEL_FILE).stats.to_dict()}


def counter(service: Service, to: str) -> float:
    return service.metrics.snapshot_fallbacks.labels(to=to)._value.get()


@pytest.mark.parametrize("how", CORRUPTIONS + CRAFTED)
def test_a_bad_newest_snapshot_falls_back_to_the_previous_generation(generations, how,
                                                                     caplog):
    root, offsets = generations["root"], generations["offsets"]
    shutil.copytree(root / "base", root / how)
    corrupt(root / how / "snapshot.snb", how)
    service = Service(generations["config"](how))
    with caplog.at_level("WARNING", logger="streamnb.service"):
        assert service.run(max_records=N_RECORDS - offsets[1]) == 0
    assert counter(service, "previous_generation") == 1
    assert counter(service, "changelog") == 0
    assert (f"snapshot {root / how / 'snapshot.snb'} cannot be read" in caplog.text
            and "falling back to the previous generation, snapshot.1.snb" in caplog.text)
    assert service.processed == N_RECORDS - offsets[1]  # re-read from generation 1's offset
    got = load_model(root / how / MODEL_FILE)
    assert got.stats.to_dict() == generations["whole"]
    assert got.n_learned == N_RECORDS


def test_two_bad_generations_fall_back_to_the_third(generations):
    root, offsets = generations["root"], generations["offsets"]
    shutil.copytree(root / "base", root / "two-bad")
    corrupt(root / "two-bad" / "snapshot.snb", "body")
    corrupt(root / "two-bad" / "snapshot.1.snb", "empty")
    service = Service(generations["config"]("two-bad"))
    assert service.run(max_records=N_RECORDS - offsets[2]) == 0
    assert counter(service, "previous_generation") == 2
    assert load_model(root / "two-bad" / MODEL_FILE).stats.to_dict() == generations["whole"]


def test_every_generation_bad_falls_back_to_the_changelog(generations, caplog):
    root = generations["root"]
    shutil.copytree(root / "base", root / "all-bad")
    for path, how in zip(snapshot_paths(root / "all-bad"), ["header", "truncated", "empty"],
                         strict=True):
        corrupt(path, how)
    service = Service(generations["config"]("all-bad", changelog_topic=generations["changelog"]))
    with caplog.at_level("WARNING", logger="streamnb.service"):
        # the changelog's state: the newest snapshot's
        assert service.run(max_records=N_RECORDS - generations["offsets"][0]) == 0
    assert counter(service, "previous_generation") == 2
    assert counter(service, "changelog") == 1
    assert "restoring from the changelog" in caplog.text
    assert load_model(root / "all-bad" / MODEL_FILE).stats.to_dict() == generations["whole"]
    # the next snapshot is good again, and the damaged ones are rotated out
    assert read_snapshot(root / "all-bad")[0][(generations["topic"], 0)].offset == N_RECORDS


def test_every_generation_bad_without_a_changelog_is_refused(generations, caplog):
    root = generations["root"]
    shutil.copytree(root / "base", root / "refused")
    (root / "refused" / MODEL_FILE).unlink()
    for path in snapshot_paths(root / "refused"):
        corrupt(path, "body")
    before = {p.name: p.read_bytes() for p in snapshot_paths(root / "refused")}
    config = generations["config"]("refused")
    code = main(["serve", "--bootstrap-servers", config.bootstrap_servers, "--input-topic",
                 generations["topic"], "--group-id", "", "--changelog-topic", "",
                 "--model", "indifferent", "--snapshot-dir", str(root / "refused"),
                 "--metrics-address", ""])
    assert code == 1
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1, caplog.text
    message = errors[0].getMessage()
    assert "no snapshot generation in" in message and "checksum mismatch" in message
    assert "To recover: restore" in message and ".corrupt" in message
    assert {p.name: p.read_bytes() for p in snapshot_paths(root / "refused")} == before
    assert not (root / "refused" / MODEL_FILE).exists()


def test_write_snapshot_keeps_n_generations(tmp_path):
    model = reference((0, 10))
    for offset in range(1, 6):
        write_snapshot(tmp_path, {("t", 0): PartitionState(model, offset)}, generations=3)
    assert [read_snapshot_file(p)[0][("t", 0)].offset for p in snapshot_paths(tmp_path)] == [
        5, 4, 3]
    write_snapshot(tmp_path, {("t", 0): PartitionState(model, 6)}, generations=1)
    assert [p.name for p in snapshot_paths(tmp_path)] == ["snapshot.snb"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snapshot.snb"]  # nothing left over


# -- option validation, class bound, label types -------------------------------------------------
@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e999"])
def test_float_options_must_be_finite(value):
    with pytest.raises(ConfigError, match="must be a finite number"):
        load_config({"snapshot_every_seconds": value}, environ={})
    with pytest.raises(ConfigError, match=r"STREAMNB_REBUILD_EVERY_SECONDS.*finite"):
        load_config({}, environ={"STREAMNB_REBUILD_EVERY_SECONDS": value})


def test_a_nan_in_the_config_file_or_a_flag_is_refused(tmp_path, capsys):
    path = tmp_path / "service.toml"
    path.write_text("snapshot-every-seconds = nan\n")
    with pytest.raises(ConfigError, match="finite"):
        load_config({}, environ={}, config_file=path)
    assert main(["serve", "--snapshot-every-seconds", "nan", "--print-config"]) == 2
    assert "option 'snapshot-every-seconds' must be a finite number, got 'nan'" in (
        capsys.readouterr().err)


def test_labels_are_strings_and_new_classes_beyond_max_classes_are_dead_letters(
        kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("classes")
    create_topic(bootstrap, topic)
    labels = ["a", "b", True, 1, "1", "true", "c", "a", False, "b"]
    produce(bootstrap, topic, [dumps({"id": f"m{i}", "features": labelled_features(i),
                                      "label": y}) for i, y in enumerate(labels)])
    for max_classes, batch in ((3, 1), (3, 1000), (0, 1000)):
        directory = tmp_path / f"{max_classes}-{batch}"
        dlq = unique("classes-dlq")
        service = Service(load_config({
            "bootstrap_servers": bootstrap, "input_topic": [topic], "group_id": "",
            "changelog_topic": "", "output_topic": f"{topic}-out", "dead_letter_topic": dlq,
            "model": "indifferent", "snapshot_dir": str(directory), "metrics_address": "",
            "max_poll_records": batch, "max_classes": max_classes,
            "publisher_process": False}, environ={}))
        assert service.run(max_records=len(labels)) == 0
        model = load_model(directory / MODEL_FILE)
        refused = [dict(r.headers) for r in read_topic(bootstrap, dlq, idle=1)]
        if max_classes:
            # true is the class "true", so 1 and "1" would be a fourth class, as would "c"
            # and false: refused, whatever the batching; "true" is the class of true
            assert model.classes == ["a", "b", "true"], (batch, model.classes)
            assert model.n_learned == 6
            assert len(refused) == 4
            for headers in refused:
                assert headers["streamnb-error"] == b"too_many_classes"
                assert b"--max-classes is 3" in headers["streamnb-detail"]
            assert sorted(h["streamnb-source"].decode().split("@")[1]
                          for h in refused) == ["3", "4", "6", "8"]
            assert service.metrics.dead_letters.labels(
                reason="too_many_classes")._value.get() == 4
        else:
            assert model.classes == ["a", "b", "true", "1", "c", "false"]
            counts = dict(zip(model.classes, model.stats.class_counts.tolist(), strict=True))
            assert counts == {"a": 2, "b": 2, "true": 2, "1": 2, "c": 1, "false": 1}
            assert not refused


# -- health ---------------------------------------------------------------------------------
def test_health_endpoints_and_operational_metrics(kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap_servers
    topic, group = unique("health"), unique("health-group")
    create_topic(bootstrap, topic)
    produce(bootstrap, topic, labelled_messages(0, 300)
            + [dumps({"id": f"u{i}", "features": labelled_features(i)}) for i in range(50)])
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    service = ServiceProcess(
        service_args(bootstrap, topic, tmp_path / "state", port, "--snapshot-every-records",
                     "100", "--max-poll-records", "50", group_id=group),
        tmp_path / "health.log")
    try:
        wait_for(lambda: http_get(f"{base}/healthz")[0] == 200, 30, "/healthz",
                 alive=service.alive)
        # before the group assigns the partition (about half the session timeout on tansu)
        status, body = http_get(f"{base}/readyz")
        assert (status, body.startswith("not ready: ")) == (503, True), (status, body)
        assert "no partitions assigned yet" in body
        wait_for(lambda: http_get(f"{base}/readyz") == (200, "ready\n"), 60, "/readyz",
                 alive=service.alive)
        wait_for(lambda: scrape(f"{base}/metrics", "streamnb_messages_predicted_total") == 350,
                 60, "350 predictions", alive=service.alive)
        wait_for(lambda: scrape(f"{base}/metrics", "streamnb_last_commit_timestamp_seconds"), 30,
                 "a checkpoint with its commit", alive=service.alive)
        text = metrics_text(f"{base}/metrics")
        assert metric_value(text, "streamnb_ready") == 1
        assert metric_value(text, "streamnb_broker_reachable") == 1
        now = time.time()
        for name in ("streamnb_last_poll_timestamp_seconds",
                     "streamnb_last_commit_timestamp_seconds",
                     "streamnb_last_snapshot_timestamp_seconds"):
            assert now - 120 < metric_value(text, name) <= now + 1, name
        by_class = {c: metric_value(text, "streamnb_predictions_total", {"class": c})
                    for c in ("spam", "ham", "none")}
        assert sum(v or 0 for v in by_class.values()) == 350, by_class
        assert by_class["spam"] and by_class["ham"]
        assert metric_value(text, "streamnb_build_info", {"version": streamnb.__version__}) == 1
        for name in ("streamnb_publish_errors_total", "streamnb_snapshot_errors_total",
                     "streamnb_commit_errors_total"):
            assert metric_value(text, name) == 0, name
        for name in ("process_cpu_seconds_total", "process_resident_memory_bytes", "python_info",
                     "python_gc_collections_total"):
            assert metric_value(text, name) is not None, name
    except BaseException:
        service.kill()
        raise
    assert service.terminate() == 0


def test_sigterm_with_the_broker_gone_is_bounded_and_reports_failure(tmp_path):
    """Its own broker, stopped under the running service: SIGTERM ends it within
    --shutdown-timeout-seconds (plus start-up of nothing new), with exit status 4, and the
    local snapshot holds every record learned."""
    broker = EmbeddedBroker(log_path=tmp_path / "broker.log").start()
    try:
        bootstrap = broker.bootstrap_servers
        topic = unique("gone")
        create_topic(bootstrap, topic)
        produce(bootstrap, topic, labelled_messages(0, 500))
        port = free_port()
        url = f"http://127.0.0.1:{port}/metrics"
        service = ServiceProcess(
            service_args(bootstrap, topic, tmp_path / "state", port,
                         "--snapshot-every-records", "100000", "--snapshot-every-seconds",
                         "3600", "--shutdown-timeout-seconds", "4",
                         changelog_topic=f"{topic}-changelog"), tmp_path / "gone.log")
        wait_for(lambda: scrape(url, "streamnb_model_records") == 500, 60, "500 records",
                 alive=service.alive)
    finally:
        broker.stop()
    wait_for(lambda: scrape(url, "streamnb_broker_reachable") == 0, 30,
             "the broker to be seen gone", alive=service.alive)
    assert http_get(url.replace("/metrics", "/readyz"))[0] == 503
    code = service.terminate(timeout=60)  # a hang would fail here (no timed assertion)
    logs = service.logs()
    assert code == EXIT_SHUTDOWN_INCOMPLETE, logs
    assert "publishing the states to the changelog did not finish" in logs
    assert "Traceback" not in logs
    assert read_snapshot(tmp_path / "state")[0][(topic, 0)].offset == 500
    assert load_model(tmp_path / "state" / MODEL_FILE).n_learned == 500


_SIGNAL_IN_EVENT_WAIT = """
import os, signal, sys, time
from streamnb.consumers.config import load_config
from streamnb.consumers.service import Service
from streamnb.consumers.signals import stopping_signals
config = load_config({"bootstrap_servers": "127.0.0.1:9", "input_topic": ["t"], "group_id": "",
                      "snapshot_dir": sys.argv[1], "metrics_address": ""}, environ={})
service = Service(config)
with stopping_signals(service.stop):
    # the main thread inside the stop event's lock, as in Event.wait between its bytecodes: a
    # handler that set the event there would wait for itself for ever
    with service._stop._cond:
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(100_000):
            pass
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not service.readiness()[1].endswith("stopping"):
        time.sleep(0.05)
print(service.readiness()[1])
assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the earlier handler is back
"""


def test_sigterm_while_the_loop_waits_on_the_stop_event_stops_the_service(tmp_path):
    """The signal is taken by a thread reading the wakeup pipe, not by a handler that sets the
    stop event in the main thread (which deadlocked when the signal came inside the event's
    own lock: the process never ended)."""
    result = subprocess.run([sys.executable, "-c", _SIGNAL_IN_EVENT_WAIT, str(tmp_path)],
                            capture_output=True, text=True, timeout=60, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("stopping"), result.stdout + result.stderr


def test_no_broker_at_start_up_is_one_line(tmp_path):
    port = free_port()  # nothing listens there
    result = subprocess.run(
        [sys.executable, "-m", "streamnb", "serve", "--bootstrap-servers", f"127.0.0.1:{port}",
         "--bootstrap-timeout-ms", "2000", "--snapshot-dir", str(tmp_path / "state"),
         "--metrics-address", ""], capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if " ERROR " in line]
    assert len(errors) == 1, result.stderr
    assert f"cannot start: Kafka at 127.0.0.1:{port}: " in errors[0]
    assert "Unable to bootstrap" in errors[0] or "NoBrokersAvailable" in errors[0]


# -- the publisher child, the broker command ----------------------------------------------------
def test_the_publisher_process_exits_quietly_when_its_parent_is_gone(kafka_broker):
    from streamnb.consumers.publisher import _frame

    child = subprocess.Popen([sys.executable, "-m", "streamnb.consumers.publisher"], cwd=ROOT,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    child.stdout.close()  # the parent is gone: nobody reads the answer to the flush
    setup = {"options": {"bootstrap_servers": [kafka_broker.bootstrap_servers], "acks": "all"},
             "log_level": "warning", "client": "kafka-python"}
    child.stdin.write(_frame(b"C", json.dumps(setup).encode()) + _frame(b"F", b""))
    child.stdin.close()
    code = child.wait(60)
    stderr = child.stderr.read().decode()
    assert code == 1, stderr
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr


def test_streamnb_broker_runs_the_embedded_broker_until_sigterm():
    process = subprocess.Popen([sys.executable, "-m", "streamnb", "broker", "--port", "0"],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        line = process.stdout.readline()
        assert "Kafka-protocol broker" in line, (line, process.stderr.read())
        bootstrap = line.split(" at ")[1].split(";")[0]
        topic = unique("broker-cmd")
        create_topic(bootstrap, topic)
        produce(bootstrap, topic, [b"one", b"two"])
        assert [r.value for r in read_topic(bootstrap, topic, expect=2)] == [b"one", b"two"]
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(30)
    assert code == 0, process.stderr.read()

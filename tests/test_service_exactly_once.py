"""Exactly-once model state: the service killed with SIGKILL again and again ends with the same
counts as an uninterrupted run, and as the model learned in-process on the same records.

A 20,000-message stream (labelled and unlabelled messages, and bad ones of every reason) is
produced to a 2-partition topic; ``streamnb serve`` snapshots every few hundred records and is
SIGKILLed at random points (by progress, and at random moments of its start-up, which includes
the restore), restarted each time, until it has learned everything and is stopped with SIGTERM.
The instance is standalone (no consumer group): restarting a group member waits for the dead
member's session to expire (about 11 s on tansu), which the scale-out test covers.
"""

from __future__ import annotations

import json
import random
import time

import numpy as np
import pytest
from kafka import KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata
from kafka_helpers import (
    GROUP_FLAGS,
    ServiceProcess,
    create_topic,
    dumps,
    free_port,
    label_of,
    labelled_features,
    labelled_messages,
    produce,
    read_topic,
    scrape,
    unique,
    wait_for,
)

from streamnb import IndifferentNB
from streamnb.cli import main
from streamnb.consumers.config import load_config
from streamnb.consumers.service import MODEL_FILE, Service
from streamnb.consumers.snapshots import read_snapshot, write_snapshot
from streamnb.consumers.state import PartitionState
from streamnb.consumers.testing import CONSUMER_CLIENTS
from streamnb.models.persistence import load_model

N = 20_000


def stream(seed: int) -> tuple[list[bytes], dict]:
    """The messages, and what they should produce: learned records, unlabelled ids, reasons."""
    rng = random.Random(seed)
    values, learned, unlabelled, bad = [], [], [], {}
    for i in range(N):
        kind = rng.random()
        mid = f"m{i}"
        x = labelled_features(i)
        y = label_of(i)
        if kind < 0.9 or i < 500:
            values.append(dumps({"id": mid, "features": x, "label": y}))
            learned.append((x, y))
        elif kind < 0.95:
            values.append(dumps({"id": mid, "features": x}))
            unlabelled.append(mid)
        else:
            reason, value = rng.choice([
                ("invalid_utf8", b'{"id": "' + mid.encode() + b'\xff"}'),
                ("invalid_json", dumps({"id": mid, "features": x})[:-3]),
                ("invalid_schema", dumps({"id": mid, "features": [1, 2]})),
                ("invalid_label", dumps({"id": mid, "features": x, "label": 2.5})),
                ("oversize", dumps({"id": mid, "features": {"pad": "x" * 3000}, "label": y})),
                # "source" is nominal from the first record on: a float is rejected by the model
                ("invalid_record", dumps({"id": mid, "features": {**x, "source": 2.5},
                                          "label": y})),
            ])
            values.append(value)
            bad[f"{i % 2}@{i // 2}"] = reason
    return values, {"learned": learned, "unlabelled": unlabelled, "bad": bad}


def reference(learned: list) -> IndifferentNB:
    model = IndifferentNB()
    for x, y in learned:
        model.learn_one(x, y)
    return model


def serve_args(bootstrap, topic, snapshot_dir, port):
    return ["--bootstrap-servers", bootstrap, "--input-topic", topic, "--group-id", "",
            "--model", "indifferent", "--changelog-topic", "", "--output-topic", f"{topic}-out",
            "--dead-letter-topic", f"{topic}-dlq", "--snapshot-dir", str(snapshot_dir),
            "--snapshot-every-records", "600", "--snapshot-every-seconds", "0.2",
            "--max-poll-records", "150", "--max-message-bytes", "2000",
            "--metrics-address", f"127.0.0.1:{port}", "--log-level", "info"]


def run_to_the_end(args, log, url, expected_records) -> None:
    service = ServiceProcess(args, log)
    wait_for(lambda: scrape(url, "streamnb_model_records") == expected_records, 240,
             "the service to learn every labelled record", alive=service.alive)
    assert service.terminate() == 0, service.logs()


@pytest.mark.parametrize("client", CONSUMER_CLIENTS)
def test_sigkill_at_random_points_changes_no_count(kafka_broker, tmp_path, client):
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("exactly-once")
    create_topic(bootstrap, topic, partitions=2)
    values, expected = stream(seed=7)
    produce(bootstrap, topic, values, partition_of=lambda i: i % 2)
    want = reference(expected["learned"])
    n_learned = len(expected["learned"])

    rng = random.Random(11)
    snapshots = tmp_path / "killed"
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    args = [*serve_args(bootstrap, topic, snapshots, port), "--consumer-client", client]
    log = tmp_path / "killed.log"
    progress_kills = sorted(rng.sample(range(500, n_learned - 500), 10))
    kills = []
    for target in progress_kills:
        service = ServiceProcess(args, log)
        if rng.random() < 0.25:  # somewhere in start-up: connecting, restoring, first batches
            time.sleep(rng.uniform(0.2, 2.0))
        else:
            wait_for(lambda t=target: (scrape(url, "streamnb_model_records") or 0) >= t, 120,
                     f"{target} learned records", interval=0.02, alive=service.alive)
        seen = scrape(url, "streamnb_model_records")
        service.kill()
        kills.append(seen)
    assert len(kills) >= 10
    # the kills happened mid-stream, not all after the end
    assert sum(1 for k in kills if k is not None and 0 < k < n_learned) >= 8, kills
    run_to_the_end(args, log, url, n_learned)
    got = load_model(snapshots / MODEL_FILE)

    # an uninterrupted run of the same service on the same topic
    port2 = free_port()
    calm = tmp_path / "calm"
    run_to_the_end([*serve_args(bootstrap, topic, calm, port2), "--consumer-client", client],
                   tmp_path / "calm.log",
                   f"http://127.0.0.1:{port2}/metrics", n_learned)
    uninterrupted = load_model(calm / MODEL_FILE)

    assert got.stats.to_dict() == uninterrupted.stats.to_dict() == want.stats.to_dict()
    assert got.n_learned == uninterrupted.n_learned == want.n_learned == n_learned
    assert got.predict_proba_one(labelled_features(3)) == want.predict_proba_one(
        labelled_features(3))

    # predictions and dead letters are at least once: every one is there, some repeated
    outputs = read_topic(bootstrap, f"{topic}-out", idle=3)
    assert {r.key.decode() for r in outputs} == set(expected["unlabelled"])
    for r in outputs[:50]:
        body = json.loads(r.value)
        assert body["id"] == r.key.decode() and body["label"] in ("spam", "ham")
        assert abs(sum(body["proba"].values()) - 1) < 1e-9
    dead = read_topic(bootstrap, f"{topic}-dlq", idle=3)
    reasons = {}
    for r in dead:
        source = dict(r.headers)["streamnb-source"].decode()
        reasons[source.split(":")[1]] = dict(r.headers)["streamnb-error"].decode()
    assert reasons == expected["bad"]


def test_a_restart_seeks_to_the_snapshot_not_to_the_committed_offset(kafka_broker, tmp_path):
    """In a consumer group, rewinding the group's committed offset to 0 (as an operator's tool
    could) must not make the restarted member count records twice: it starts at its
    snapshot's offset."""
    bootstrap = kafka_broker.bootstrap_servers
    topic, group = unique("rewind"), unique("group")
    create_topic(bootstrap, topic)
    batch = [(labelled_features(i), label_of(i)) for i in range(1200)]
    values = [dumps({"id": f"m{i}", "features": x, "label": y}) for i, (x, y) in enumerate(batch)]
    produce(bootstrap, topic, values[:600])
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    args = ["--bootstrap-servers", bootstrap, "--input-topic", topic, "--group-id", group,
            "--model", "indifferent", *GROUP_FLAGS, "--changelog-topic", "",
            "--snapshot-dir", str(tmp_path / "state"),
            "--metrics-address", f"127.0.0.1:{port}"]
    service = ServiceProcess(args, tmp_path / "service.log")
    wait_for(lambda: scrape(url, "streamnb_model_records") == 600, 60, "600 records",
             alive=service.alive)
    assert service.terminate() == 0
    rewind = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group,
                           enable_auto_commit=False)
    rewind.assign([TopicPartition(topic, 0)])
    rewind.commit({TopicPartition(topic, 0): OffsetAndMetadata(0, "", -1)})
    assert rewind.committed(TopicPartition(topic, 0)) == 0
    rewind.close()
    produce(bootstrap, topic, values[600:])
    service = ServiceProcess(args, tmp_path / "service.log")
    wait_for(lambda: scrape(url, "streamnb_model_records") == 1200, 60, "1200 records",
             alive=service.alive)
    assert scrape(url, "streamnb_messages_learned_total") == 600  # only the new ones
    assert service.terminate() == 0
    assert load_model(tmp_path / "state" / MODEL_FILE).stats.to_dict() == reference(
        batch).stats.to_dict()


def test_a_snapshot_of_another_model_is_refused(kafka_broker, tmp_path, caplog):
    write_snapshot(tmp_path, {("t", 0): PartitionState(reference([(labelled_features(1), "a")]),
                                                      1)}, {"model": "indifferent"})
    before = (tmp_path / "snapshot.snb").read_bytes()
    code = main(["serve", "--bootstrap-servers", kafka_broker.bootstrap_servers,
                 "--input-topic", unique("t"), "--group-id", "", "--changelog-topic", "",
                 "--model", "tan", "--snapshot-dir", str(tmp_path), "--metrics-address", ""])
    assert code == 1
    assert "holds the snapshot of a 'indifferent' model, not of --model 'tan'" in caplog.text
    assert (tmp_path / "snapshot.snb").read_bytes() == before  # left as it was
    assert not (tmp_path / MODEL_FILE).exists()


def test_tan_restarted_from_its_snapshot_equals_an_uninterrupted_run(kafka_broker, tmp_path):
    """TAN standalone without a changelog: its candidate lists live in its snapshot (only the
    ones its states have yet to adopt); stopped and restarted twice, it ends with the counts,
    candidates and pair tables of a run that never stopped (one partition: each list is the
    choice from that partition's own counts at its point, so both runs choose alike)."""
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("tanrestart")
    create_topic(bootstrap, topic)
    produce(bootstrap, topic, labelled_messages(0, 1500))

    def config(directory: str):
        return load_config({
            "bootstrap_servers": bootstrap, "input_topic": [topic], "group_id": "",
            "changelog_topic": "", "output_topic": f"{topic}-out",
            "dead_letter_topic": f"{topic}-dlq", "model": "tan", "max_candidates": 20,
            "relearn_every": 100, "snapshot_dir": str(tmp_path / directory),
            "metrics_address": "", "max_poll_records": 70, "snapshot_every_records": 10**6,
            "publisher_process": False}, environ={})

    done = 0
    for handled in (430, 520, None):  # two restarts, each from the last snapshot
        service = Service(config("restarted"))
        service.run(max_records=handled or 1500 - done)
        done += service.processed
    assert done == 1500
    meta = read_snapshot(tmp_path / "restarted")[1]
    assert meta["candidates"] == []  # every list recorded so far is in the state's counts
    Service(config("whole")).run(max_records=1500)
    got, want = (load_model(tmp_path / d / MODEL_FILE) for d in ("restarted", "whole"))
    assert got.n_learned == want.n_learned == 1500 and got.candidate_version == 22
    assert got.stats.to_dict() == want.stats.to_dict()
    assert got.candidate_names() == want.candidate_names()
    assert got.pairs._epochs_by_name() == want.pairs._epochs_by_name()
    for table, other in zip(got.pairwise_counts().joints.values(),
                            want.pairwise_counts().joints.values(), strict=True):
        assert np.array_equal(table, other)

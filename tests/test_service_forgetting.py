"""Forgetting in the service (``--half-life``): the decay is a function of the partitions'
offsets, so a service SIGKILLed and restarted again and again ends with exactly the partition
states of an uninterrupted run, and those are the hand-computed decayed sums.

Unlabelled messages pass decay points without being learned, which the offsets count and a
count of learned records would not.
"""

from __future__ import annotations

import random

import pytest
from kafka_helpers import (
    ServiceProcess,
    create_topic,
    dumps,
    free_port,
    label_of,
    labelled_features,
    produce,
    scrape,
    unique,
    wait_for,
)

from streamnb import IndifferentNB
from streamnb.consumers.snapshots import read_snapshot

N = 6000
HALF_LIFE, DECAY_EVERY = 700, 50


def serve_args(bootstrap: str, topic: str, snapshot_dir, port: int,
               forgetting: tuple[str, ...] = ("--half-life", str(HALF_LIFE), "--decay-every",
                                              str(DECAY_EVERY))) -> list[str]:
    return ["--bootstrap-servers", bootstrap, "--input-topic", topic, "--group-id", "",
            "--model", "indifferent", "--changelog-topic", "", "--output-topic", f"{topic}-out",
            "--dead-letter-topic", f"{topic}-dlq", "--snapshot-dir", str(snapshot_dir),
            "--snapshot-every-records", "400", "--snapshot-every-seconds", "0.2",
            "--max-poll-records", "130", *forgetting, "--metrics-address", f"127.0.0.1:{port}",
            "--log-level", "info"]


# streamnb_model_records is the decayed weight; streamnb_model_version counts records learned
def run_to_the_end(args: list[str], log, url: str, n_learned: int) -> None:
    service = ServiceProcess(args, log)
    wait_for(lambda: scrape(url, "streamnb_model_version") == n_learned, 240,
             "the service to learn every labelled record", alive=service.alive)
    assert service.terminate() == 0, service.logs()


def killed_and_calm(bootstrap: str, topic: str, tmp_path, n_learned: int, kills: list[int],
                    forgetting: tuple[str, ...] | None = None) -> tuple[dict, dict]:
    """The final partition states of a service SIGKILLed once it has learned each of ``kills``
    records (and restarted), and of an uninterrupted one; the calm run logs to calm.log."""
    extra = {} if forgetting is None else {"forgetting": forgetting}
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    args = serve_args(bootstrap, topic, tmp_path / "killed", port, **extra)
    for target in kills:
        service = ServiceProcess(args, tmp_path / "killed.log")
        wait_for(lambda t=target: (scrape(url, "streamnb_model_version") or 0) >= t, 120,
                 f"{target} learned records", interval=0.02, alive=service.alive)
        service.kill()
    run_to_the_end(args, tmp_path / "killed.log", url, n_learned)
    port2 = free_port()
    run_to_the_end(serve_args(bootstrap, topic, tmp_path / "calm", port2, **extra),
                   tmp_path / "calm.log", f"http://127.0.0.1:{port2}/metrics", n_learned)
    killed, calm = read_snapshot(tmp_path / "killed")[0], read_snapshot(tmp_path / "calm")[0]
    assert killed.keys() == calm.keys() == {(topic, 0), (topic, 1)}
    return killed, calm


def hand_decayed(labelled: list[int], end: int) -> IndifferentNB:
    """One partition's model, decayed by hand: at every multiple of DECAY_EVERY in (0, end],
    the records before it times 2 ** (-DECAY_EVERY / HALF_LIFE)."""
    model, offsets = IndifferentNB(), {i // 2: i for i in labelled}
    for offset in range(end):
        if offset and offset % DECAY_EVERY == 0 and model.n_learned:
            model.decay(2 ** (-DECAY_EVERY / HALF_LIFE))
        if offset in offsets:
            model.learn_one(labelled_features(offsets[offset]), label_of(offsets[offset]))
    if end % DECAY_EVERY == 0:
        model.decay(2 ** (-DECAY_EVERY / HALF_LIFE))
    return model


def test_sigkilled_forgetting_service_equals_uninterrupted_and_hand_decayed(kafka_broker,
                                                                            tmp_path):
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("forgetting")
    create_topic(bootstrap, topic, partitions=2)
    rng = random.Random(5)
    labelled = [i for i in range(N) if rng.random() < 0.85]
    values = [dumps({"id": f"m{i}", "features": labelled_features(i), "label": label_of(i)})
              if i in set(labelled) else dumps({"id": f"m{i}", "features": labelled_features(i)})
              for i in range(N)]
    produce(bootstrap, topic, values, partition_of=lambda i: i % 2)  # message i at offset i // 2

    killed, calm = killed_and_calm(bootstrap, topic, tmp_path, len(labelled),
                                   sorted(rng.sample(range(300, len(labelled) - 300), 5)))
    factor = 2 ** (-DECAY_EVERY / HALF_LIFE)
    for key, state in killed.items():
        assert state.offset == calm[key].offset == N // 2
        # exactly: the same multiplications in the same order, whatever the kills
        assert state.model.stats.to_dict() == calm[key].model.stats.to_dict()
        mine = [i for i in labelled if i % 2 == key[1]]
        weights = {"spam": 0.0, "ham": 0.0}
        for i in mine:  # a record at offset o: one factor per multiple in (o, N // 2]
            weights[label_of(i)] += factor ** (N // 2 // DECAY_EVERY - i // 2 // DECAY_EVERY)
        assert state.model.stats.to_dict()["classes"] == pytest.approx(weights, rel=1e-9)
        assert weights["spam"] < len([i for i in mine if label_of(i) == "spam"]) / 2  # forgot
        want = hand_decayed(mine, N // 2).stats.to_dict()
        for table in ("classes", "cells", "observed"):
            assert state.model.stats.to_dict()[table] == pytest.approx(want[table], rel=1e-9)


def test_sigkilled_drift_reacting_service_equals_uninterrupted(kafka_broker, tmp_path):
    """--drift-detector: each partition's detector state travels in its snapshot, and its
    errors are its own records' (predicted one by one), so kills change nothing."""
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("drift")
    create_topic(bootstrap, topic, partitions=2)
    n, flip = 4000, 2000
    flipped = {"spam": "ham", "ham": "spam"}
    values = [dumps({"id": f"m{i}", "features": labelled_features(i),
                     "label": label_of(i) if i < flip else flipped[label_of(i)]})
              for i in range(n)]
    produce(bootstrap, topic, values, partition_of=lambda i: i % 2)

    killed, calm = killed_and_calm(
        bootstrap, topic, tmp_path, n, sorted(random.Random(7).sample(range(300, n - 300), 3)),
        forgetting=("--drift-detector", "ddm", "--drift-decay", "0.25"))
    calm_log = tmp_path / "calm.log"
    drifts = [line for line in calm_log.read_text().splitlines() if "drift detected" in line]
    for p in (0, 1):
        assert any(f"{topic}:{p} at offset" in line for line in drifts), drifts
        offsets = [int(line.split(" at offset ")[1].split()[0]) for line in drifts
                   if f"{topic}:{p} at offset" in line]
        assert min(offsets) >= flip // 2, offsets  # none before the flip (offset i // 2)
    for key, state in killed.items():
        assert state.model.stats.to_dict() == calm[key].model.stats.to_dict()  # exactly
        assert state.drift == calm[key].drift and state.drift["detector"] == "ddm"


def test_sigkilled_service_forgetting_by_time_equals_uninterrupted(kafka_broker, tmp_path):
    """--half-life-seconds: the decay points are seconds of each partition's clock, the largest
    record timestamp it has read, saved with its state; kills change nothing and the class
    weights are the hand-computed ones."""
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("forgettime")
    create_topic(bootstrap, topic, partitions=2)
    n, base = 3000, 1_700_000_000_000
    rng = random.Random(9)
    # a second per message, a few of them late (older than messages produced before them)
    times = [base + 1000 * i - (4000 if rng.random() < 0.05 else 0) for i in range(n)]
    values = [dumps({"id": f"m{i}", "features": labelled_features(i), "label": label_of(i)})
              for i in range(n)]
    produce(bootstrap, topic, values, partition_of=lambda i: i % 2,
            timestamp_of=lambda i: times[i])
    half_life, every = 600, 30  # seconds

    killed, calm = killed_and_calm(
        bootstrap, topic, tmp_path, n, sorted(rng.sample(range(300, n - 300), 3)),
        forgetting=("--half-life-seconds", str(half_life), "--decay-every", str(every)))
    factor = 2 ** (-every / half_life)
    for key, state in killed.items():
        assert state.model.stats.to_dict() == calm[key].model.stats.to_dict()  # exactly
        mine = [i for i in range(n) if i % 2 == key[1]]
        clock, weights = 0, {"spam": 0.0, "ham": 0.0}
        at = {}
        for i in mine:
            clock = max(clock, times[i])
            at[i] = clock
        assert state.clock == calm[key].clock == clock
        step = every * 1000
        for i in mine:  # one factor per multiple of 30 s in (clock at the record, clock]
            weights[label_of(i)] += factor ** (clock // step - at[i] // step)
        assert state.model.stats.to_dict()["classes"] == pytest.approx(weights, rel=1e-9)
        assert sum(weights.values()) < len(mine) / 2  # forgot

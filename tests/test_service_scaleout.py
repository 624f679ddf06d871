"""Scale-out: two members of a consumer group on a 4-partition topic, one SIGKILLed and
restarted mid-stream; every member's summed model, and the sum of the changelog's last states,
equal the model learned in one process on the same records.

The stream is produced in three phases so that every configuration of the group does work: both
members; the survivor alone (it restores the dead member's partitions from the changelog after
the group notices the death, a session timeout later); both again (the restarted member takes
partitions back from its snapshot or the changelog, whichever is further).
"""

from __future__ import annotations

from kafka_helpers import (
    GROUP_FLAGS,
    ServiceProcess,
    create_topic,
    dumps,
    free_port,
    labelled_features,
    produce,
    read_topic,
    scrape,
    unique,
    wait_for,
)

from consumers.service import MODEL_FILE
from consumers.snapshots import decode_partition
from consumers.state import PartitionedModel, PartitionState
from streamnb import IndifferentNB
from streamnb.models.base import load_model

PHASE = 3000


def messages(start: int, stop: int) -> list[bytes]:
    return [dumps({"id": f"m{i}", "features": labelled_features(i),
                   "label": "spam" if i % 3 == 0 else "ham"}) for i in range(start, stop)]


def learned(url: str) -> float:
    return scrape(url, "streamnb_messages_learned_total") or 0.0


def records(url: str) -> float:
    return scrape(url, "streamnb_model_records") or 0.0


def test_two_members_one_killed_sum_to_the_single_process_model(kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap_servers
    topic, group, changelog = unique("scale"), unique("group"), unique("changelog")
    create_topic(bootstrap, topic, partitions=4)

    def member(name: str, port: int) -> list[str]:
        return ["--bootstrap-servers", bootstrap, "--input-topic", topic, "--group-id", group,
                *GROUP_FLAGS, "--changelog-topic", changelog, "--output-topic", f"{topic}-out",
                "--dead-letter-topic", f"{topic}-dlq", "--snapshot-dir", str(tmp_path / name),
                "--snapshot-every-records", "400", "--snapshot-every-seconds", "0.5",
                "--rebuild-every-seconds", "0.3", "--max-poll-records", "100",
                "--metrics-address", f"127.0.0.1:{port}"]

    ports = {"a": free_port(), "b": free_port()}
    urls = {k: f"http://127.0.0.1:{p}/metrics" for k, p in ports.items()}
    produce(bootstrap, topic, messages(0, PHASE), partition_of=lambda i: i % 4)
    a = ServiceProcess(member("a", ports["a"]), tmp_path / "a.log")
    b = ServiceProcess(member("b", ports["b"]), tmp_path / "b.log")
    try:
        # both members learn part of phase 1, then b dies without a word
        wait_for(lambda: learned(urls["a"]) > 0 and learned(urls["b"]) > 0, 60,
                 "both members to learn", alive=lambda: a.alive() and b.alive())
        b.kill()
        assert records(urls["a"]) < PHASE or learned(urls["a"]) < PHASE  # mid-stream
        produce(bootstrap, topic, messages(PHASE, 2 * PHASE), partition_of=lambda i: i % 4)
        # a alone: after b's session expires it owns all four partitions
        wait_for(lambda: records(urls["a"]) == 2 * PHASE, 90,
                 "the survivor to own and learn every partition", alive=a.alive)
        b = ServiceProcess(member("b", ports["b"]), tmp_path / "b.log")
        wait_for(lambda: b.logs().count(f"assigned {topic}") == 2, 60,
                 "the restarted member to get partitions", alive=lambda: a.alive() and b.alive())
        produce(bootstrap, topic, messages(2 * PHASE, 3 * PHASE), partition_of=lambda i: i % 4)
        for name in ("a", "b"):
            wait_for(lambda n=name: records(urls[n]) == 3 * PHASE, 90,
                     f"member {name}'s sum to hold every record",
                     alive=lambda: a.alive() and b.alive())
        assert learned(urls["b"]) > 0
    finally:
        for process in (a, b):
            if process.alive():
                assert process.terminate() == 0, process.logs()

    want = IndifferentNB()
    for i in range(3 * PHASE):
        want.learn_one(labelled_features(i), "spam" if i % 3 == 0 else "ham")
    for name in ("a", "b"):
        got = load_model(tmp_path / name / MODEL_FILE)
        assert got.stats.to_dict() == want.stats.to_dict(), name
        assert got.n_learned == 3 * PHASE
    # the changelog: last state of each partition (highest offset), summed
    latest: dict = {}
    for record in read_topic(bootstrap, changelog, idle=2):
        key, state = decode_partition(record.value, 64_000_000)
        if key not in latest or state.offset >= latest[key].offset:
            latest[key] = state
    assert sorted(latest) == [(topic, p) for p in range(4)]
    assert sum(s.offset for s in latest.values()) == 3 * PHASE
    total = PartitionedModel(IndifferentNB)
    for key, state in latest.items():
        total.offer(key, PartitionState(state.model, state.offset))
    total.rebuild()
    assert total.model.stats.to_dict() == want.stats.to_dict()
    # the group really moved partitions around: a took all four over, b took some back
    assert any(line.count(f"{topic}:") == 4 for line in a.logs().splitlines()
               if "assigned" in line)

"""Scale-out: two members of a consumer group on a 4-partition topic, one SIGKILLed and
restarted mid-stream; every member's summed model, and the sum of the changelog's last states,
equal the model learned in one process on the same records: naive Bayes on synthetic records,
and TAN (pairwise counts over shared candidate lists) on e-mails.

The stream is produced in three phases so that every configuration of the group does work: both
members; the survivor alone (it restores the dead member's partitions from the changelog after
the group notices the death, a session timeout later); both again (the restarted member takes
partitions back from its snapshot or the changelog, whichever is further).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
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

from streamnb import TAN, IndifferentNB
from streamnb.consumers.candidates import candidate_point
from streamnb.consumers.changelog import ChangelogReader
from streamnb.consumers.messages import decode_one
from streamnb.consumers.service import MODEL_FILE
from streamnb.consumers.snapshots import decode_partition
from streamnb.consumers.state import PartitionedModel, PartitionState, model_factory
from streamnb.consumers.testing import CONSUMER_CLIENTS
from streamnb.datasets import iter_spamassassin_stream
from streamnb.models.persistence import load_model

PHASE = 3000
TEXT_PHASE = 200


def learned(url: str) -> float:
    return scrape(url, "streamnb_messages_learned_total") or 0.0


def records(url: str, metric: str = "streamnb_model_records") -> float:
    return scrape(url, metric) or 0.0


def assignment(logs: str) -> dict[int, int]:
    """The partitions a member holds at the end of its log, with the offsets it started them
    at (its "assigned t:p@offset" and "revoked t:p" lines)."""
    owned: dict[int, int] = {}
    for line in logs.splitlines():
        for verb in ("assigned ", "revoked "):
            if verb in line:
                for part in line.split(verb, 1)[1].split(", "):
                    if ":" not in part:
                        continue
                    partition, _, offset = part.rsplit(":", 1)[1].partition("@")
                    if verb == "assigned ":
                        owned[int(partition)] = int(offset)
                    else:
                        owned.pop(int(partition), None)
    return owned


def latest_states(bootstrap: str, changelog: str, topic: str) -> dict:
    """The changelog's last state (highest offset) of each of ``topic``'s four partitions."""
    latest: dict = {}
    for record in read_topic(bootstrap, changelog, idle=2):
        key, state = decode_partition(record.value, 64_000_000)
        if key not in latest or state.offset >= latest[key].offset:
            latest[key] = state
    assert sorted(latest) == [(topic, p) for p in range(4)]
    return latest


def run_group(bootstrap: str, topic: str, group: str, changelog: str, tmp_path,
              phases: list[list[bytes]], flags: list[str], timeouts: tuple[float, float],
              mid_stream: bool = False, count: str = "streamnb_model_records"
              ) -> tuple[ServiceProcess, float]:
    """The three phases on a 4-partition topic: members a and b learn part of phase 1, b is
    SIGKILLed (``mid_stream``: b's first run never snapshots, and the changelog is checked to
    hold none of what it learned — the killed member had learned past its last published
    state, so its records must be learned again, once), phase 2 goes to a alone
    (it owns every partition once b's session expires), b restarts and gets partitions back,
    phase 3 goes to both; returns when both members' sums hold every record, with the two
    processes stopped (SIGTERM): member a, and the messages the restarted b learned. ``count``
    is the metric that counts the records in a sum (with a half-life, ``streamnb_model_version``:
    ``streamnb_model_records`` is then a decayed weight)."""
    short, long = timeouts
    total = sum(len(p) for p in phases)

    def member(name: str, port: int, *extra: str) -> list[str]:
        return ["--bootstrap-servers", bootstrap, "--input-topic", topic, "--group-id", group,
                *GROUP_FLAGS, "--changelog-topic", changelog, "--output-topic", f"{topic}-out",
                "--dead-letter-topic", f"{topic}-dlq", "--snapshot-dir", str(tmp_path / name),
                *flags, "--rebuild-every-seconds", "0.3",
                "--metrics-address", f"127.0.0.1:{port}", *extra]

    # b's first run never snapshots (the test fails with b snapshotting every 0.1 s: tried)
    never = ["--snapshot-every-records", "1000000000", "--snapshot-every-seconds", "3600"]

    ports = {"a": free_port(), "b": free_port()}
    urls = {k: f"http://127.0.0.1:{p}/metrics" for k, p in ports.items()}
    produce(bootstrap, topic, phases[0], partition_of=lambda i: i % 4)
    a = ServiceProcess(member("a", ports["a"]), tmp_path / "a.log")
    b = ServiceProcess(member("b", ports["b"], *(never if mid_stream else [])),
                       tmp_path / "b.log")
    try:
        wait_for(lambda: learned(urls["a"]) > 0 and learned(urls["b"]) > 0, short,
                 "both members to learn", alive=lambda: a.alive() and b.alive())
        b_before = learned(urls["b"])
        b.kill()  # without a word
        if mid_stream:
            assert b_before > 0
            published = ChangelogReader(changelog, {"bootstrap_servers": bootstrap},
                                        64 << 20).read_all()
            owned = assignment(b.logs())
            assert owned, b.logs()
            for partition, start in owned.items():
                state = published.get((topic, partition))
                assert (state.offset if state else 0) <= start, (partition, start, state)
        produce(bootstrap, topic, phases[1], partition_of=lambda i: i % 4)
        wait_for(lambda: records(urls["a"], count) == len(phases[0]) + len(phases[1]), long,
                 "the survivor to own and learn every partition", alive=a.alive)
        b = ServiceProcess(member("b", ports["b"]), tmp_path / "b.log")
        wait_for(lambda: b.logs().count(f"assigned {topic}") == 2, short,
                 "the restarted member to get partitions", alive=lambda: a.alive() and b.alive())
        produce(bootstrap, topic, phases[2], partition_of=lambda i: i % 4)
        for name in ("a", "b"):
            wait_for(lambda n=name: records(urls[n], count) == total, long,
                     f"member {name}'s sum to hold every record",
                     alive=lambda: a.alive() and b.alive())
        b_learned = learned(urls["b"])
    finally:
        for process in (a, b):
            if process.alive():
                assert process.terminate() == 0, process.logs()
    return a, b_learned


@pytest.mark.parametrize("client", CONSUMER_CLIENTS)
def test_two_members_one_killed_sum_to_the_single_process_model(kafka_broker, tmp_path, client):
    bootstrap = kafka_broker.bootstrap_servers
    topic, group, changelog = unique("scale"), unique("group"), unique("changelog")
    create_topic(bootstrap, topic, partitions=4)
    a, b_learned = run_group(
        bootstrap, topic, group, changelog, tmp_path,
        [labelled_messages(k * PHASE, (k + 1) * PHASE) for k in range(3)],
        ["--model", "indifferent", "--snapshot-every-records", "400",
         "--snapshot-every-seconds", "0.5", "--max-poll-records", "100",
         "--consumer-client", client], (60, 90),
        mid_stream=True)
    assert b_learned > 0

    want = IndifferentNB()
    for i in range(3 * PHASE):
        want.learn_one(labelled_features(i), label_of(i))
    for name in ("a", "b"):
        got = load_model(tmp_path / name / MODEL_FILE)
        assert got.stats.to_dict() == want.stats.to_dict(), name
        assert got.n_learned == 3 * PHASE
    # the changelog: last state of each partition (highest offset), summed
    latest = latest_states(bootstrap, changelog, topic)
    assert sum(s.offset for s in latest.values()) == 3 * PHASE
    total = PartitionedModel(IndifferentNB)
    for key, state in latest.items():
        total.offer(key, PartitionState(state.model, state.offset))
    total.rebuild()
    assert total.model.stats.to_dict() == want.stats.to_dict()
    # the group really moved partitions around: a took all four over, b took some back
    assert any(line.count(f"{topic}:") == 4 for line in a.logs().splitlines()
               if "assigned" in line)


def test_forgetting_and_drift_reacting_partitions_move_between_members(kafka_broker, tmp_path):
    """--half-life and --drift-detector are functions of each partition's records and offsets,
    and their state travels with the partition's: after partitions moved from a killed member
    to the survivor and back, every partition's last published state equals the state one
    process computes from that partition's records alone, exactly, detector state included."""
    bootstrap = kafka_broker.bootstrap_servers
    topic, group, changelog = unique("scaleforget"), unique("group"), unique("changelog")
    create_topic(bootstrap, topic, partitions=4)
    flip = 3 * PHASE // 2  # in the survivor's phase: labels invert there
    flipped = {"spam": "ham", "ham": "spam"}

    def label(i: int) -> str:
        return label_of(i) if i < flip else flipped[label_of(i)]

    messages = [dumps({"id": f"m{i}", "features": labelled_features(i), "label": label(i)})
                for i in range(3 * PHASE)]
    options = {"half_life": 700, "decay_every": 50, "drift_detector": "ddm", "drift_decay": 0.25}
    run_group(bootstrap, topic, group, changelog, tmp_path,
              [messages[k * PHASE:(k + 1) * PHASE] for k in range(3)],
              ["--model", "indifferent", "--snapshot-every-records", "400",
               "--snapshot-every-seconds", "0.5", "--max-poll-records", "100",
               *[f"--{k.replace('_', '-')}={v}" for k, v in options.items()]], (60, 90),
              mid_stream=True, count="streamnb_model_version")

    latest = latest_states(bootstrap, changelog, topic)
    for p in range(4):
        mine = list(range(p, 3 * PHASE, 4))  # message i is at offset i // 4 of partition i % 4
        drifts: list = []
        alone = PartitionedModel(IndifferentNB, on_drift=lambda key, o, d=drifts: d.append(o),
                                 **options)
        alone.take(p, PartitionState(IndifferentNB(), 0))
        alone.rebuild()
        alone.learn(p, [labelled_features(i) for i in mine], [label(i) for i in mine],
                    [i // 4 for i in mine])
        alone.advance(p, len(mine))
        got = latest[(topic, p)]
        assert got.offset == len(mine)
        assert got.model.stats.to_dict() == alone.own[p].model.stats.to_dict(), p  # exactly
        assert got.drift == alone.own[p].drift, p
        assert drifts and min(drifts) >= flip // 4, (p, drifts)  # a drift after the flip only


def test_tan_on_text_two_members_one_killed_sum_to_the_same_model(kafka_broker, tmp_path):
    """TAN on e-mails (SpamAssassin, in time order) over 4 partitions: the members' partition
    states share candidate lists recorded on the changelog, so their sums, after a member was
    SIGKILLed and restarted, equal the model learned in one process from each partition's
    records with those lists at the same points, pair table for pair table; and each list is the
    choice from the summed counts at the offsets it records."""
    bootstrap = kafka_broker.bootstrap_servers
    topic, group, changelog = unique("tantext"), unique("group"), unique("changelog")
    create_topic(bootstrap, topic, partitions=4)
    corpus = list(iter_spamassassin_stream())[:3 * TEXT_PHASE]
    mail = [dumps({"id": f"{m.group}/{m.id}", "text": m.text, "label": m.label})
            for m in corpus]

    a, _ = run_group(
        bootstrap, topic, group, changelog, tmp_path,
        [mail[:TEXT_PHASE], mail[TEXT_PHASE:2 * TEXT_PHASE], mail[2 * TEXT_PHASE:]],
        ["--model", "tan", "--max-candidates", "30", "--relearn-every", "25",
         "--snapshot-every-records", "60", "--snapshot-every-seconds", "0.5",
         "--max-poll-records", "25"], (90, 180))

    lists: dict = {}
    latest: dict = {}
    for record in read_topic(bootstrap, changelog, idle=2):
        if record.key.startswith(b"streamnb-candidates:"):
            body = json.loads(record.value)
            lists.setdefault(body["version"], (body["names"], body["cut"]))
            continue
        key, state = decode_partition(record.value, 64_000_000)
        if key not in latest or state.offset >= latest[key].offset:
            latest[key] = state
    assert sorted(lists) == list(range(1, len(lists) + 1)) and len(lists) >= 8
    assert sorted(latest) == [(topic, p) for p in range(4)]

    # one process: each partition's records, in offset order, with the recorded lists
    by_partition: dict = {p: [] for p in range(4)}
    for record in read_topic(bootstrap, topic, expect=3 * TEXT_PHASE, timeout=60):
        decoded = decode_one(record.value, 10**7)
        by_partition[record.partition].append((record.offset, decoded.features, decoded.label))
    # plain TAN models, one per partition, adopting each recorded list where the schedule puts
    # it (after candidate_point(v) of the partition's records), then summed by TAN.merge
    decisions = {v: names for v, (names, _) in lists.items()}
    parts = []
    for rows in by_partition.values():
        rows.sort()
        part = TAN(relearn_every=0, max_candidates=30)
        part.share_candidates()
        version = 1
        for _, x, y in rows:
            part.learn_one(x, y)
            if part.n_learned == candidate_point(version, 25):
                part.adopt_candidates(decisions[version])
                version += 1
        parts.append(part)
    reference = parts[0]
    for part in parts[1:]:
        reference.merge(part)
    assert reference.n_learned == 3 * TEXT_PHASE
    for name in ("a", "b"):
        assert_same_counts(load_model(tmp_path / name / MODEL_FILE), reference)
    factory = model_factory("tan", max_candidates=30)
    total = PartitionedModel(factory)
    total.candidates.decisions.update(decisions)
    for key, state in latest.items():
        total.offer(key, state)
    total.rebuild()
    assert_same_counts(total.model, reference)
    # every list: the choice from the summed counts of the partitions at its recorded offsets
    for version, (names, cut) in lists.items():
        stats = None
        for key, offset in cut.items():
            p = int(key.rpartition(":")[2])
            part = factory()
            for _, x, y in (r for r in by_partition[p] if r[0] < offset):
                part.learn_one(x, y)
            stats = part.stats.copy() if stats is None else stats.merge(part.stats)
        assert reference.choose_candidates(stats) == names, version
    assert any(line.count(f"{topic}:") == 4 for line in a.logs().splitlines()
               if "assigned" in line)


def assert_same_counts(got, want):
    """The same single-attribute counts, candidates (since the same lists) and pair tables."""
    assert got.stats.to_dict() == want.stats.to_dict()
    assert got.n_learned == want.n_learned
    assert got.pairs._epochs_by_name() == want.pairs._epochs_by_name()
    names = want.candidate_names()
    labels = list(want.stats.labels.values)
    order = [list(got.stats.labels.values).index(c) for c in labels]
    for i, x in enumerate(names):
        for z in names[i + 1:]:
            if x in want.pairs.pending or z in want.pairs.pending:
                continue
            tw, vx, vz = want.pairs.joint_table(want.stats, x, z)
            tg, gx, gz = got.pairs.joint_table(got.stats, x, z)
            tg = tg[np.ix_([gx.index(v) for v in vx], [gz.index(v) for v in vz], order)]
            assert np.array_equal(tg, tw), (x, z)

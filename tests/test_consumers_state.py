"""Partition states and their sum; snapshot files and changelog records (no Kafka here)."""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass

import numpy as np
import pytest
from kafka_helpers import label_of, labelled_features
from model_helpers import assert_same_pair_tables

from streamnb import TAN, IndifferentNB, load_model
from streamnb.consumers.publisher import _predictions, _predictions_payload, format_predictions
from streamnb.consumers.snapshots import (
    SNAPSHOT_FILE,
    decode_partition,
    encode_partition,
    read_snapshot,
    write_snapshot,
)
from streamnb.consumers.state import (
    PartitionedModel,
    PartitionState,
    copy_model,
    fingerprint,
    model_factory,
)
from streamnb.stats.persist import StateFileError, write_state


def record(i: int) -> tuple[dict, str]:
    return labelled_features(i), label_of(i)


def one_model(indices) -> IndifferentNB:
    model = IndifferentNB()
    for i in indices:
        model.learn_one(*record(i))
    return model


def test_the_sum_equals_one_model_of_every_partitions_records():
    rng = random.Random(1)
    pm = PartitionedModel(IndifferentNB)
    for p in range(3):
        pm.take(("t", p), PartitionState(IndifferentNB(), 0))
    pm.rebuild()
    pending = {p: list(range(p, 900, 3)) for p in range(3)}
    while any(pending.values()):  # interleaved batches of uneven sizes
        p = rng.choice([q for q in pending if pending[q]])
        n = rng.randint(1, 60)
        batch, pending[p] = pending[p][:n], pending[p][n:]
        assert pm.learn(("t", p), *zip(*map(record, batch), strict=True)) == []
    assert pm.model.stats.to_dict() == one_model(range(900)).stats.to_dict()
    for p in range(3):
        want = one_model(range(p, 900, 3))
        assert pm.own[("t", p)].model.stats.to_dict() == want.stats.to_dict()


def test_one_nonempty_partition_is_learned_once():
    pm = PartitionedModel(IndifferentNB)
    state = PartitionState(IndifferentNB(), 0)
    pm.take(("t", 0), state)
    pm.take(("t", 1), PartitionState(IndifferentNB(), 0))
    pm.rebuild()
    pm.learn(("t", 0), *zip(*map(record, range(50)), strict=True))
    assert pm.model is state.model and state.model.n_learned == 50
    # the other partition's first records: the sum becomes a separate model, both exact
    pm.learn(("t", 1), *zip(*map(record, range(50, 60)), strict=True))
    assert pm.model is not state.model
    assert pm.model.stats.to_dict() == one_model(range(60)).stats.to_dict()
    assert state.model.stats.to_dict() == one_model(range(50)).stats.to_dict()


def test_other_members_states_are_summed_once_rebuilt():
    pm = PartitionedModel(IndifferentNB)
    pm.take(("t", 0), PartitionState(one_model(range(0, 100, 2)), 50))
    pm.rebuild()
    remote = PartitionState(one_model(range(1, 101, 2)), 50)
    assert pm.offer(("t", 1), remote) and pm.dirty
    assert not pm.offer(("t", 1), PartitionState(one_model(range(1, 51, 2)), 25))  # older
    assert not pm.offer(("t", 1), PartitionState(one_model(range(1, 101, 2)), 50))  # same
    assert not pm.offer(("t", 0), PartitionState(IndifferentNB(), 99))  # ours
    pm.rebuild()
    assert not pm.dirty
    assert pm.model.stats.to_dict() == one_model(range(100)).stats.to_dict()
    # released partitions stay in the sum until someone publishes a newer state
    pm.release(("t", 0))
    assert not pm.dirty and pm.restore_candidate(("t", 0)).offset == 50
    from streamnb.models.naive_bayes import NaiveBayes

    assert not pm.offer(("t", 2), PartitionState(NaiveBayes(), 10))  # another model
    with pytest.raises(ValueError, match="holds a NaiveBayes"):
        pm.take(("t", 2), PartitionState(NaiveBayes(), 10))


def test_rejected_rows_change_nothing():
    pm = PartitionedModel(IndifferentNB)
    pm.take(("t", 0), PartitionState(IndifferentNB(), 0))
    pm.take(("t", 1), PartitionState(one_model(range(1, 30, 2)), 15))
    pm.rebuild()
    X, y = map(list, zip(*map(record, range(0, 30, 2)), strict=True))
    X[3] = {**X[3], "source": 1.5}  # nominal attribute given a float
    y[7] = [1]  # a list as a label
    rejected = pm.learn(("t", 0), X, y)
    assert sorted(i for i, _ in rejected) == [3, 7]
    kept = [i for j, i in enumerate(range(0, 30, 2)) if j not in (3, 7)]
    assert pm.own[("t", 0)].model.stats.to_dict() == one_model(kept).stats.to_dict()
    assert pm.model.stats.to_dict() == one_model(
        sorted(kept + list(range(1, 30, 2)))).stats.to_dict()


def test_relearn_points_do_not_depend_on_batching():
    durations = []
    results = []
    for sizes in ([7, 130, 1, 400, 62], [600]):
        # 41 attributes for 20 candidates: re-learning also re-chooses the candidates, whose
        # pair counts start there, so the counts too depend on where the relearns fall
        pm = PartitionedModel(model_factory("tan", max_candidates=20), relearn_every=100,
                              on_relearn=durations.append)
        pm.take(("t", 0), PartitionState(pm.factory(), 0))
        pm.rebuild()
        start = 0
        for size in sizes:
            pm.learn(("t", 0), [labelled_features(i, vocabulary=80) for i in
                                range(start, start + size)],
                     [label_of(i) for i in range(start, start + size)])
            start += size
        results.append(pm.model)
    # a re-learning where each candidate list is adopted: after 1, 2, 4, ..., 64, 100, ..., 600
    assert [m.structure_version for m in results] == [13, 13]
    assert results[0].structure.parents == results[1].structure.parents
    first, second = (m.to_state() for m in results)
    assert first[0] == second[0]
    assert all((first[1][k] == second[1][k]).all() for k in first[1])
    assert len(durations) == 26 and all(d >= 0 for d in durations)


def test_pairwise_states_over_different_candidates_refuse_to_sum():
    factory = model_factory("tan", max_candidates=2)
    pm = PartitionedModel(factory)
    a, b = factory(), factory()
    a.learn_one({"x": "1", "y": "2"}, "c")
    b.learn_one({"u": "1", "v": "2"}, "c")
    a.adopt_candidates(["x", "y"])
    b.adopt_candidates(["u", "v"])  # not the recorded list: such states cannot add up
    pm.candidates.decisions[1] = ["x", "y"]
    pm.offer(("t", 0), PartitionState(a, 1))
    pm.offer(("t", 1), PartitionState(b, 1))
    with pytest.raises(ValueError, match="cannot be summed exactly"):
        pm.rebuild()


def text_record(i: int) -> tuple[dict, str]:
    """A message of tokens from a vocabulary of 400 that grows along the stream, so that the
    informative tokens (the candidates) change."""
    spam = i % 3 == 0
    rng = random.Random(i)
    top = 40 + i // 3
    tokens = {f"w{rng.randrange(top) * 2 + spam}": True for _ in range(8)}
    tokens.update({f"n{rng.randrange(top)}": True for _ in range(4)})
    return tokens, "spam" if spam else "ham"


def learn_partitions(pm, partitions, rng, rebuild=False):
    """Feed each partition's records (their offsets: positions in the partition) in uneven
    batches, partitions interleaved at random; ``rebuild``: re-sum whenever the sum could not
    take a batch, as the service does."""
    pending = {p: list(range(len(rows))) for p, rows in partitions.items()}
    direct = 0
    while any(pending.values()):
        p = rng.choice([q for q in pending if pending[q]])
        n = rng.randint(1, 40)
        batch, pending[p] = pending[p][:n], pending[p][n:]
        rows = [partitions[p][j] for j in batch]
        before = pm.model.n_learned
        assert pm.learn(("t", p), [x for x, _ in rows], [y for _, y in rows], batch) == []
        direct += pm.model.n_learned - before
        pm.own[("t", p)].offset = batch[-1] + 1
        if rebuild and pm.dirty:
            pm.rebuild()
    return direct


@pytest.mark.parametrize("name", ["tan", "aode"])
def test_shared_candidates_sum_exactly_and_replay_to_the_same_states(name):
    """Three partitions of a text stream learned in random interleaved batches: each list of
    candidates is the choice from the summed counts at the offsets it records; the sum kept
    up to date batch by batch equals the sum rebuilt from the states; a replay (other batches,
    other order) given the recorded lists reaches the very same states and sum."""
    data = [text_record(i) for i in range(900)]
    partitions = {p: data[p::3] for p in range(3)}
    proposals = []

    def propose(version, names, cut):
        proposals.append((version, names, cut))
        return names

    runs = []
    for seed, recorded in ((1, None), (2, "replay")):
        pm = PartitionedModel(model_factory(name, max_candidates=12), relearn_every=50,
                              propose=propose if recorded is None else None)
        if recorded:
            pm.candidates.decisions.update(runs[0].candidates.decisions)
            pm.candidates.propose = lambda *args: pytest.fail(
                f"a recorded list was proposed again: {args}")
        for p in partitions:
            pm.take(("t", p), PartitionState(pm.factory(), 0))
        pm.rebuild()
        direct = learn_partitions(pm, partitions, random.Random(seed), rebuild=not recorded)
        runs.append(pm)
        if not recorded:
            # many batches went straight into the sum; at the end it is up to date
            assert direct > len(data) / 3 and not pm.dirty
    first, replay = runs
    assert len(first.candidates.decisions) == len(proposals) >= 10
    # they do change
    assert len({tuple(names) for names in first.candidates.decisions.values()}) > 3
    for version, names, cut in proposals:  # a function of the counts at the recorded offsets
        stats = None
        for key, offset in cut.items():
            p = int(key.split(":")[1])
            part = one_pairwise(name, partitions[p][:offset])
            stats = part.stats.copy() if stats is None else stats.merge(part.stats)
        assert first.model.choose_candidates(stats) == names, version
    for p in partitions:
        a, b = first.own[("t", p)].model.to_state(), replay.own[("t", p)].model.to_state()
        assert a[0] == b[0] and all(np.array_equal(a[1][k], b[1][k]) for k in a[1])
    kept_up = first.model
    for pm in runs:
        pm.rebuild()
    assert_same_counts(kept_up, first.model)
    assert_same_counts(first.model, replay.model)
    assert first.model.candidate_version == len(first.candidates.decisions)


def one_pairwise(name, rows):
    model = model_factory(name)()
    for x, y in rows:
        model.learn_one(x, y)
    return model


def assert_same_counts(a, b):
    assert a.stats.to_dict() == b.stats.to_dict()
    assert a.pairs._epochs_by_name() == b.pairs._epochs_by_name()
    assert_same_pair_tables(a, b)


def test_snapshot_round_trip_and_corruption(tmp_path):
    states = {("in", 0): PartitionState(one_model(range(0, 40, 2)), 20, 0, 2**63 - 1),
              ("in", 1): PartitionState(TAN(relearn_every=0), 0)}
    states[("in", 1)].model.learn_one(*record(1))
    states[("in", 1)].model.relearn()
    packed: dict = {}
    write_snapshot(tmp_path, states, {"model": "x"}, on_packed=packed.update)
    # what the snapshot serialised, handed back to write a model file from (the service's
    # shutdown): each model's own to_state, its header as JSON once, and that file loads as
    # the model
    assert sorted(packed) == sorted(id(state.model) for state in states.values())
    for state in states.values():
        header, arrays = packed[id(state.model)]
        again_header, again_arrays = state.model.to_state()
        assert json.loads(bytes(header)) == json.loads(json.dumps(again_header))
        assert arrays.keys() == again_arrays.keys()
        assert all(np.array_equal(arrays[k], again_arrays[k]) for k in arrays)
        write_state(tmp_path / "model.snb", header, arrays)
        assert load_model(tmp_path / "model.snb").stats.to_dict() == state.model.stats.to_dict()
    got, meta = read_snapshot(tmp_path)
    assert meta == {"model": "x"} and sorted(got) == sorted(states)
    for key, state in states.items():
        assert (got[key].offset, got[key].last) == (state.offset, state.last)
        assert got[key].model.stats.to_dict() == state.model.stats.to_dict()
    assert got[("in", 1)].model.structure_version == 1
    assert read_snapshot(tmp_path / "none") == ({}, {})
    data = bytearray((tmp_path / SNAPSHOT_FILE).read_bytes())
    data[len(data) // 2] ^= 1
    (tmp_path / SNAPSHOT_FILE).write_bytes(bytes(data))
    with pytest.raises(StateFileError, match="checksum"):
        read_snapshot(tmp_path)


def test_changelog_record_round_trip_and_limits():
    state = PartitionState(one_model(range(200)), 200, 1, 12345)
    data = encode_partition(("in", 3), state)
    key, got = decode_partition(data, 10_000_000)
    assert key == ("in", 3) and (got.offset, got.epoch, got.last) == (200, 1, 12345)
    assert got.model.stats.to_dict() == state.model.stats.to_dict()
    assert copy_model(got.model).stats.to_dict() == state.model.stats.to_dict()
    with pytest.raises(StateFileError, match="inflates past"):
        decode_partition(data, 1000)
    with pytest.raises(StateFileError, match="not a compressed state"):
        decode_partition(b"garbage", 1000)


@dataclass
class KafkaRecord:  # the fields of kafka-python's ConsumerRecord a fingerprint reads
    key: bytes | None
    value: bytes | None
    timestamp: int


def test_a_fingerprint_tells_records_apart_and_fits_64_bits():
    a = KafkaRecord(b"m1", b'{"id": "m1"}', 1_764_000_000_000)
    assert fingerprint(a) == fingerprint(KafkaRecord(b"m1", b'{"id": "m1"}', a.timestamp))
    for other in (KafkaRecord(b"m1", b'{"id": "m2"}', a.timestamp),
                  KafkaRecord(b"m2", b'{"id": "m1"}', a.timestamp),
                  KafkaRecord(b"m1", b'{"id": "m1"}', a.timestamp + 1)):
        assert fingerprint(other) != fingerprint(a)
    for record in (a, KafkaRecord(None, None, -1), KafkaRecord(b"", b"x" * 99, 2**45)):
        assert 0 <= fingerprint(record) < 2**63


def test_a_state_moves_forward_with_the_fingerprint_of_its_last_record():
    pm = PartitionedModel(IndifferentNB)
    pm.take(("t", 0), PartitionState(IndifferentNB(), 5, 0, 7))
    pm.advance(("t", 0), 9, 8)
    assert (pm.own[("t", 0)].offset, pm.own[("t", 0)].last) == (9, 8)
    pm.advance(("t", 0), 9, 99)  # not past: nothing moves
    pm.advance(("t", 0), 3, 99)
    assert (pm.own[("t", 0)].offset, pm.own[("t", 0)].last) == (9, 8)


def test_a_snapshot_without_fingerprints_loads_as_unchecked(tmp_path):
    write_snapshot(tmp_path, {("in", 0): PartitionState(one_model(range(4)), 4)}, {})
    assert read_snapshot(tmp_path)[0][("in", 0)].last is None


def test_output_messages_are_json_with_every_class():
    """The output encoding (one formatting template per batch) gives valid JSON whatever the
    class labels hold (quotes, %, non-ASCII, ints) and whatever the ids hold; through the
    publisher pipe's prediction frame it gives the same records."""
    ids = ['a"%s\\é', "b"]
    classes = ['sp"am%', "hé", 3]
    proba = np.array([[0.25, 0.5, 0.25], [1e-300, 0.0, 1.0]])
    keys, values = format_predictions(ids, proba, classes, 17, 2)
    assert keys == ['a"%s\\é'.encode(), b"b"]
    assert [json.loads(v) for v in values] == [
        {"id": 'a"%s\\é', "label": "hé", "proba": {'sp"am%': 0.25, "hé": 0.5, "3": 0.25},
         "model_version": 17, "structure_version": 2},
        {"id": "b", "label": 3, "proba": {'sp"am%': 1e-300, "hé": 0.0, "3": 1.0},
         "model_version": 17, "structure_version": 2}]
    frame = _predictions(_predictions_payload("out", ids, proba, classes, 17, 2))
    assert frame[0] == "out" and format_predictions(*frame[1:]) == (keys, values)
    keys, values = format_predictions(ids[:1], np.zeros((1, 0)), [], 0, 0)
    assert json.loads(values[0]) == {"id": 'a"%s\\é', "label": None, "proba": {},
                                     "model_version": 0, "structure_version": 0}


SPAM_TEXTS = [("WIN a FREE prize now, call 09061701461", "spam"),
              ("are we still on for lunch tomorrow?", "ham"),
              ("Subject: cheap pills\n\nBuy cheap pills now, FREE delivery", "spam"),
              ("Subject: minutes\n\nthe minutes of today's meeting are attached", "ham"),
              ("URGENT! your mobile won a prize, txt CLAIM to 81010", "spam"),
              ("ok see you at 7 then", "ham")]


def service_record(text: str) -> dict:
    """A text message as the service hands it to the model."""
    from streamnb.consumers.messages import decode_one

    return decode_one(json.dumps({"id": "m", "text": text}).encode(), 10**6).features


def test_spam_filter_partitions_sum_score_and_reject_bad_labels():
    """SpamFilter in the service's model part: partition states of token dicts sum (and copy)
    to the filter that learned the raw texts; ``classify`` gives ``predict_proba_many`` to the
    bit and ``score_many``; a record of non-token features and a label other than spam/ham
    are rejected and change nothing."""
    from streamnb import SpamFilter

    factory = model_factory("spam-filter")
    pm = PartitionedModel(factory)
    for p in range(2):
        pm.take(("t", p), PartitionState(factory(), 0))
    pm.rebuild()
    X = [service_record(t) for t, _ in SPAM_TEXTS]
    y = [label for _, label in SPAM_TEXTS]
    assert pm.learn(("t", 0), X[:3], y[:3]) == []
    rejected = pm.learn(("t", 1), [*X[3:5], X[5]], [*y[3:5], "maybe"])
    assert [(i, e.field) for i, e in rejected] == [(2, "label")]
    assert "neither spam_label 'spam' nor ham_label 'ham'" in str(rejected[0][1])
    pm.rebuild()
    want = SpamFilter()
    for text, label in SPAM_TEXTS[:5]:
        want.learn_one(text, label)
    assert pm.model.stats.to_dict() == want.stats.to_dict() and pm.model.n_learned == 5
    assert copy_model(pm.model).stats.to_dict() == want.stats.to_dict()

    queries = [X[5], {"colour": "red"}, service_record("FREE prize, call now")]
    proba, classes, rows, rejected, scores = pm.classify(queries)
    assert rows == [0, 2] and [(i, e.field) for i, e in rejected] == [(1, "colour")]
    frame = pm.model.predict_proba_many([queries[0], queries[2]])
    assert classes == list(frame.columns) == ["ham", "spam"]
    assert np.array_equal(proba, frame.to_numpy(dtype=np.float64))  # bit for bit
    assert np.array_equal(scores, pm.model.score_many([queries[0], queries[2]]))
    assert abs(scores[1] - want.score_one("FREE prize, call now")) < 1e-9
    assert scores[1] > 0 > scores[0]
    assert pm.predict_proba(queries)[2] == [0, 2]

    plain = PartitionedModel(IndifferentNB)  # no score_many: no scores
    plain.take(0, PartitionState(IndifferentNB(), 0))
    plain.learn(0, X, y)
    assert plain.classify(X)[4] is None and not plain.scored


def test_output_messages_carry_the_score_after_proba():
    ids = ["a", "b", "c"]
    proba = np.array([[0.75, 0.25], [0.5, 0.5], [1e-300, 1.0]])
    scores = np.array([1.0986122886681098, 0.0, -float("inf")])
    keys, values = format_predictions(ids, proba, ["spam", "ham"], 9, 0, scores)
    bodies = [json.loads(v) for v in values]
    assert [list(b) for b in bodies] == [["id", "label", "proba", "score", "model_version",
                                          "structure_version"]] * 3
    assert [b["score"] for b in bodies] == [1.0986122886681098, 0.0, None]  # not finite: null
    assert bodies[0]["proba"] == {"spam": 0.75, "ham": 0.25} and bodies[0]["label"] == "spam"
    frame = _predictions(_predictions_payload("out", ids, proba, ["spam", "ham"], 9, 0,
                                              scores))
    assert frame[0] == "out" and format_predictions(*frame[1:]) == (keys, values)
    unscored = _predictions(_predictions_payload("out", ids, proba, ["spam", "ham"], 9, 0))
    assert unscored[-1] is None and "score" not in json.loads(format_predictions(
        *unscored[1:])[1][0])
    _, values = format_predictions(ids[:1], np.zeros((1, 0)), [], 0, 0, np.zeros(1))
    assert json.loads(values[0]) == {"id": "a", "label": None, "proba": {}, "score": 0.0,
                                     "model_version": 0, "structure_version": 0}


# -- forgetting: a function of offsets ----------------------------------------------------------
def decayed_by_batches(offsets: list[int], end: int, cuts: list[int]) -> PartitionedModel:
    """Partition 0's records at ``offsets`` learned in the batches ``cuts`` splits them into
    (a batch covers the offsets up to the next batch's first record), then moved to ``end``."""
    pm = PartitionedModel(IndifferentNB, half_life=40, decay_every=5)
    pm.take(("t", 0), PartitionState(IndifferentNB(), 0))
    pm.rebuild()
    bounds = [0, *cuts, len(offsets)]
    for a, b in itertools.pairwise(bounds):
        part = offsets[a:b]
        pm.learn(("t", 0), [labelled_features(o) for o in part], [label_of(o) for o in part],
                 part)
        pm.advance(("t", 0), offsets[b] if b < len(offsets) else end)
    return pm


def test_half_life_weights_each_record_by_the_points_passed_since_its_offset():
    rng = random.Random(3)
    # labelled records at some offsets only: the others (unlabelled, rejected) pass points too
    offsets = sorted(rng.sample(range(400), 150))
    pm = decayed_by_batches(offsets, 430, sorted(rng.sample(range(1, 150), 12)))
    state = pm.own[("t", 0)]
    assert state.offset == 430
    factor = 2 ** (-5 / 40)
    weights = {"spam": 0.0, "ham": 0.0}
    for o in offsets:  # by hand: one factor per multiple of 5 in (o, 430]
        weights[label_of(o)] += factor ** (430 // 5 - o // 5)
    counts = state.model.stats.to_dict()["classes"]
    assert counts == pytest.approx(weights, rel=1e-12)
    assert state.model.n_learned == 150  # records learned, not their weight
    assert pm.model is state.model  # one partition: the sum is its state, decayed with it


def test_half_life_state_does_not_depend_on_batching():
    rng = random.Random(4)
    offsets = sorted(rng.sample(range(1000), 500))
    states = [decayed_by_batches(offsets, 1000, sorted(rng.sample(range(1, 500), k)))
              .own[("t", 0)].model.stats.to_dict() for k in (0, 1, 40, 499)]
    assert all(s == states[0] for s in states[1:])  # exactly: the same multiplications


def test_half_life_of_two_partitions_is_re_summed():
    pm = PartitionedModel(IndifferentNB, half_life=10, decay_every=1)
    for p in range(2):
        pm.take(("t", p), PartitionState(IndifferentNB(), 0))
    pm.rebuild()
    for p in range(2):
        pm.learn(("t", p), [labelled_features(p)], [label_of(p)], [0])
        pm.advance(("t", p), 1)
    pm.learn(("t", 0), [labelled_features(3)], [label_of(3)], [1])
    pm.advance(("t", 0), 11)
    assert pm.dirty  # partition 0 decayed under the sum
    pm.rebuild()
    assert pm.model.stats.to_dict()["classes"] == pytest.approx(
        {"spam": 2 ** -1.1 + 2 ** -1.0, "ham": 2 ** -0.1})  # partition 1 passed point 1


@pytest.mark.parametrize("half_life", [0.5, -1, float("nan"), float("inf")])
def test_half_life_must_be_finite_and_at_least_one_offset(half_life):
    with pytest.raises(ValueError, match="half_life must be 0"):
        PartitionedModel(IndifferentNB, half_life=half_life)


# -- drift reaction: each partition's own prequential errors ------------------------------------
FLIP = 600  # the labels invert here


def drifting(i: int) -> tuple[dict, str]:
    label = label_of(i)
    return labelled_features(i), label if i < FLIP else {"spam": "ham", "ham": "spam"}[label]


def drift_run(sizes: list[int], detector: str = "ddm", partitions: int = 1,
              start_state: PartitionState | None = None, start: int = 0
              ) -> tuple[PartitionedModel, list, float]:
    """Partition 0 learns the drifting stream in batches of ``sizes`` (other partitions, if
    any, the plain stream); returns the model, the drift offsets and the prequential accuracy
    of the sum on records FLIP.. (each batch predicted before it is learned)."""
    events: list = []
    pm = PartitionedModel(IndifferentNB, drift_detector=detector, drift_decay=0.25,
                          on_drift=lambda key, offset: events.append((key, offset)))
    pm.take(("t", 0), start_state or PartitionState(IndifferentNB(), 0))
    for p in range(1, partitions):
        pm.take(("t", p), PartitionState(IndifferentNB(), 0))
    pm.rebuild()
    correct = seen = 0
    for size in sizes:
        offsets = list(range(start, start + size))
        X, y = zip(*(drifting(o) for o in offsets), strict=True)
        predicted = pm.model.predict_many(list(X)) if pm.model.n_learned else [None] * size
        correct += sum(p == t for o, p, t in zip(offsets, predicted, y, strict=True) if o >= FLIP)
        seen += sum(o >= FLIP for o in offsets)
        pm.learn(("t", 0), list(X), list(y), offsets)
        pm.advance(("t", 0), start + size)
        for p in range(1, partitions):
            pm.learn(("t", p), [labelled_features(o) for o in offsets],
                     [label_of(o) for o in offsets], offsets)
        if pm.dirty:
            pm.rebuild()
        start += size
    return pm, events, correct / max(seen, 1)


@pytest.mark.parametrize("detector", ["page-hinkley", "ddm"])
def test_a_drift_is_detected_after_the_flip_and_reacted_to(detector):
    pm, events, accuracy = drift_run([20] * 60, detector)
    offsets = [o for _, o in events]
    assert offsets and FLIP <= offsets[0] < FLIP + 100, offsets  # none before the flip
    state = pm.own[("t", 0)]
    assert state.model.n_learned == 1200
    weight = 0.0  # by hand: each record weighs 1, times 0.25 at every drift at or after it
    for o in range(1200):
        weight = (weight + 1) * (0.25 if o in offsets else 1)
    assert sum(state.model.stats.to_dict()["classes"].values()) == pytest.approx(weight)
    assert weight < 1200 - FLIP / 2  # the old concept mostly forgotten
    _, none, plain = drift_run([20] * 60, "")
    assert none == [] and accuracy > plain + 0.05, (accuracy, plain)


@pytest.mark.parametrize("detector", ["page-hinkley", "ddm"])
def test_drift_reaction_does_not_depend_on_batching_or_other_partitions(detector):
    runs = [drift_run(sizes, detector, partitions) for sizes, partitions in (
        ([1200], 1), ([7, 130, 1, 400, 62, 600], 1), ([300, 3, 897], 3))]
    first = runs[0][0].own[("t", 0)]
    for pm, events, _ in runs[1:]:
        state = pm.own[("t", 0)]
        assert state.model.stats.to_dict() == first.model.stats.to_dict()  # exactly
        assert state.drift == first.drift
        assert [e for e in events if e[0] == ("t", 0)] == runs[0][1]
    three = runs[2][0]
    total = copy_model(three.own[("t", 0)].model)
    for p in (1, 2):
        total.merge(three.own[("t", p)].model)
    for table, counts in total.stats.to_dict().items():
        assert three.model.stats.to_dict()[table] == pytest.approx(counts), table


def test_a_restored_drift_detector_goes_on_exactly(tmp_path):
    whole, events, _ = drift_run([1200])
    head, head_events, _ = drift_run([650])
    write_snapshot(tmp_path, dict(head.own), {})
    restored = read_snapshot(tmp_path)[0][("t", 0)]
    assert restored.drift == head.own[("t", 0)].drift and restored.drift["detector"] == "ddm"
    tail, tail_events, _ = drift_run([550], start_state=restored, start=650)
    assert tail.own[("t", 0)].model.stats.to_dict() == whole.own[("t", 0)].model.stats.to_dict()
    assert tail.own[("t", 0)].drift == whole.own[("t", 0)].drift
    assert head_events + tail_events == events


def test_drift_detector_names_and_factor_are_checked():
    with pytest.raises(ValueError, match="unknown drift detector 'adwin'"):
        PartitionedModel(IndifferentNB, drift_detector="adwin")
    with pytest.raises(ValueError):
        PartitionedModel(IndifferentNB, drift_detector="ddm", drift_decay=0.0)


@pytest.mark.parametrize("name", ["tan", "aode", "spam-filter", "indifferent"])
def test_drift_reaction_works_for_the_service_models(name):
    """Each partition state predicts with its own counts, whatever the batching (TAN, AODE:
    given the same candidate lists, which the service records on its changelog; which list is
    chosen depends on how far the other partitions have got; TAN's states keep no tree of the
    sum's, so their predictions do not depend on when the other partition started)."""
    from streamnb.datasets import iter_spamassassin_stream

    flipped = {"spam": "ham", "ham": "spam"}
    if name == "spam-filter":
        mails = list(iter_spamassassin_stream())[:400]
        data = [(m.text, m.label if i < 200 else flipped[m.label]) for i, m in enumerate(mails)]
    else:
        data = [drifting(i * FLIP // 200) for i in range(400)]
    runs, decisions = [], {}
    for size in (400, 37):
        events: list = []
        factory = model_factory(name, 20)
        pm = PartitionedModel(factory, relearn_every=50, drift_detector="ddm",
                              on_drift=lambda key, o, e=events: e.append((key, o)),
                              propose=lambda v, names, cut: decisions.setdefault(v, names))
        for p in range(2):
            pm.take(("t", p), PartitionState(factory(), 0))
        pm.rebuild()
        for start in range(0, 400, size):
            for p in range(2):
                part = [i for i in range(start, min(start + size, 400)) if i % 2 == p]
                assert pm.learn(("t", p), [data[i][0] for i in part], [data[i][1] for i in part],
                                [i // 2 for i in part]) == []
            if pm.dirty:
                pm.rebuild()
        runs.append((sorted(events), {p: pm.own[("t", p)].drift for p in range(2)}))
    assert runs[0] == runs[1]
    offsets = [o for _, o in runs[0][0]]
    # a drift after the flip (offset 100); SpamAssassin's own first ham, after 134 spam, is one
    assert any(o >= 100 for o in offsets), offsets
    assert name == "spam-filter" or min(offsets) >= 100, offsets


# -- forgetting by time: the partition's clock, the largest record timestamp read ---------------
def test_half_life_by_time_weights_records_by_the_clock_and_not_by_batching():
    rng = random.Random(6)
    # timestamps mostly rising, some late records (older than one read before them)
    times = [1000 * i + rng.choice([0, 0, 0, -2500]) for i in range(300)]
    labelled = sorted(rng.sample(range(300), 200))
    results = []
    for cuts in ([], sorted(rng.sample(range(1, 300), 25))):
        pm = PartitionedModel(IndifferentNB, half_life=40_000, decay_every=5_000, by_time=True)
        pm.take(("t", 0), PartitionState(IndifferentNB(), 0))
        pm.rebuild()
        clock = 0
        for a, b in itertools.pairwise([0, *cuts, 300]):
            mine, clocks = [], []
            for o in range(a, b):
                clock = max(clock, times[o])
                if o in labelled:
                    mine.append(o)
                    clocks.append(clock)
            pm.learn(("t", 0), [labelled_features(o) for o in mine],
                     [label_of(o) for o in mine], mine, clocks)
            pm.advance(("t", 0), b, None, clock)
        results.append(pm.own[("t", 0)])
    end = max(times)
    assert results[0].clock == results[1].clock == end
    assert results[0].model.stats.to_dict() == results[1].model.stats.to_dict()  # exactly
    factor = 2 ** (-5_000 / 40_000)
    weights = {"spam": 0.0, "ham": 0.0}
    for o in labelled:  # one factor per multiple of 5 s in (clock at the record, end]
        at = max(times[: o + 1])
        weights[label_of(o)] += factor ** (end // 5_000 - at // 5_000)
    assert results[0].model.stats.to_dict()["classes"] == pytest.approx(weights, rel=1e-12)


def test_the_clock_survives_a_snapshot(tmp_path):
    write_snapshot(tmp_path, {("in", 0): PartitionState(one_model(range(4)), 4, clock=17)}, {})
    assert read_snapshot(tmp_path)[0][("in", 0)].clock == 17

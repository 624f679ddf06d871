"""Every model's ``half_life`` and ``drift_detector`` (docs/forgetting.md).

``half_life`` is the service's ``--half-life`` (one :class:`~streamnb.stats.forgetting.Forgetting`
for both): a model learning records one by one holds the state the service's partition holds
after the same records at offsets 0, 1, …. On a real stream whose labels flip at its midpoint,
a model that forgets, by half-life or at a detected drift, is right again soon after the flip
where a model that keeps everything stays wrong for as long as the old concept outweighs the new.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from river import checks, datasets, drift

from conftest import check_discrete_estimator
from streamnb import (
    AODE,
    CCICANB,
    LDA,
    QDA,
    TAN,
    IndifferentNB,
    KernelNB,
    NaiveBayes,
    SelectiveBN,
    SelectiveNB,
    SelectiveTAN,
    SpamFilter,
    load_model,
)
from streamnb.consumers.state import PartitionedModel, PartitionState
from streamnb.datasets import iter_sms_spam_stream
from streamnb.stats.forgetting import Forgetting

# every model, with the parameters that make it follow a stream of a thousand records: CCICANB
# draws its densities from a bounded sample, which forgets only as newer records replace older
# ones and only at a relearn, so its sample is small and re-read often
MODELS = {
    "NaiveBayes": (NaiveBayes, {}),
    "IndifferentNB": (IndifferentNB, {}),
    "AODE": (AODE, {}),
    "TAN": (TAN, {}),
    "SelectiveNB": (SelectiveNB, {"seed": 0}),
    "SelectiveTAN": (SelectiveTAN, {"seed": 0}),
    "SelectiveBN": (SelectiveBN, {"seed": 0}),
    "LDA": (LDA, {}),
    "QDA": (QDA, {}),
    "KernelNB": (KernelNB, {}),
    "CCICANB": (CCICANB, {"seed": 0, "capacity": 100, "relearn_every": 50}),
    "SpamFilter": (SpamFilter, {}),
}
FAST = ["NaiveBayes", "IndifferentNB", "LDA", "QDA", "KernelNB", "SpamFilter"]


def records(name: str) -> list[tuple]:
    """A real stream the model reads: SMS texts for the spam filter, river's Phishing (1,250
    records, 9 numeric attributes, in the file's order) for the others."""
    if name == "SpamFilter":
        return [(m.text, m.label) for m in list(iter_sms_spam_stream())[:1250]]
    return list(datasets.Phishing())


def flipped(name: str) -> list[tuple]:
    """:func:`records` with every label swapped from the midpoint on (both data sets have two
    classes): an abrupt change of concept, the attributes unchanged."""
    data = records(name)
    labels = sorted({y for _, y in data}, key=repr)
    swap = dict(zip(labels, reversed(labels), strict=True))
    mid = len(data) // 2
    return [(x, y if i < mid else swap[y]) for i, (x, y) in enumerate(data)]


def service_state(name: str, half_life: float, data: list[tuple]):
    """The model of the service's partition after ``data`` at offsets 0, 1, … (one record per
    batch, then advanced past it, as the service's poll loop does)."""
    cls, params = MODELS[name]
    key = ("t", 0)
    pm = PartitionedModel(lambda: cls(**params), half_life=half_life)
    pm.take(key, PartitionState(cls(**params), 0))
    pm.rebuild()
    for offset, (x, y) in enumerate(data):
        assert pm.learn(key, [x], [y], [offset]) == []
        pm.advance(key, offset + 1)
    return pm.own[key].model


def assert_same_state(a, b) -> None:
    """Equal learned records and counts (to rounding: the service learns a record through
    ``learn_many``, the model through ``learn_one``)."""
    (ha, arrays_a), (hb, arrays_b) = a.to_state(), b.to_state()
    assert ha["n_learned"] == hb["n_learned"]
    assert arrays_a.keys() == arrays_b.keys()
    for k in arrays_a:
        if arrays_a[k].dtype.kind in "fc":
            np.testing.assert_allclose(arrays_a[k], arrays_b[k], rtol=1e-9, atol=1e-12,
                                       err_msg=k)
        else:
            np.testing.assert_array_equal(arrays_a[k], arrays_b[k], err_msg=k)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_half_life_state_equals_the_services(name):
    """half_life=h learning n records one by one: the state the service's ``--half-life h``
    gives the same records, decayed at the same points by the same factors."""
    cls, params = MODELS[name]
    data = records(name)[:300]
    model = cls(half_life=40, **params)
    for x, y in data:
        model.learn_one(x, y)
    assert_same_state(model, service_state(name, 40, data))
    # and the counts did shrink: not the state of a model that forgets nothing
    kept = cls(**params)
    for x, y in data:
        kept.learn_one(x, y)
    with pytest.raises(AssertionError):
        assert_same_state(model, kept)


def test_half_life_weights_follow_the_staircase():
    """A record at position p in a state at position P weighs 2^(-d (P//d - p//d) / h), d =
    h/16: the class counts of n records are the sums of those weights."""
    h, n = 64, 500
    model = NaiveBayes(half_life=h)
    for i in range(n):
        model.learn_one({"a": "x"}, i % 3)
    d = Forgetting(h).decay_every
    assert d == 4
    expected = [sum(2.0 ** (-d * (n // d - p // d) / h) for p in range(n) if p % 3 == c)
                for c in range(3)]
    np.testing.assert_allclose(model.stats.class_counts, expected, rtol=1e-12)


@pytest.mark.parametrize("name", FAST)
def test_learn_many_with_a_half_life_equals_learn_one(name):
    """A batch is learned in runs between decay points: the counts of the same records one by
    one, whatever the batch sizes."""
    cls, params = MODELS[name]
    data = records(name)[:257]
    one = cls(half_life=20, **params)
    for x, y in data:
        one.learn_one(x, y)
    many = cls(half_life=20, **params)
    for start, end in [(0, 7), (7, 100), (100, 101), (101, 257)]:
        many.learn_many([x for x, _ in data[start:end]], [y for _, y in data[start:end]])
    assert_same_state(one, many)


@pytest.mark.parametrize("name", ["AODE", "TAN", "SelectiveNB", "CCICANB"])
def test_a_batch_cut_at_decay_and_structure_points_equals_learn_one(name):
    """A structure model with a half-life cuts a batch at the union of its schedule's points
    and the decay points (decay every 4 records, relearn every 10 after 1, 2, 4, 8; CCICANB
    also where a class or an attribute of a class first appears): its counts and structure are
    those of the records one by one."""
    cls, params = MODELS[name]
    params = {**params, "refresh_every" if name == "AODE" else "relearn_every": 10}
    if name == "CCICANB":  # a structure smooth in the moments (not FastICA's: docs/ccica.md)
        params["representation"] = "cc-pca"
    data = records(name)[:61]
    one = cls(half_life=64, **params)
    for x, y in data:
        one.learn_one(x, y)
    many = cls(half_life=64, **params)
    for start, end in [(0, 3), (3, 33), (33, 34), (34, 61)]:
        many.learn_many([x for x, _ in data[start:end]], [y for _, y in data[start:end]])
    assert_same_state(one, many)
    assert many.to_state()[0] == one.to_state()[0]  # the schedule's counters too
    if name == "CCICANB":  # and the first time the two classes' attributes are all seen
        assert many._structure_version == one._structure_version > 10
    elif name != "AODE":  # AODE refreshes its candidates without a version
        assert many.structure_version == one.structure_version == 10  # 1, 2, 4, 8, 10, … 60


@pytest.mark.parametrize("name", ["NaiveBayes", "TAN", "SpamFilter", "LDA", "KernelNB",
                                  "CCICANB"])
def test_a_bad_record_in_a_batch_cut_at_decay_points_changes_nothing(name):
    """A batch that crosses decay points is checked whole before its first piece is learned:
    a bad record in its last piece is named and leaves the model as it was (a continuous
    model's numbers and its other fields, the naive-Bayes factors, alike)."""
    from streamnb.stats import InvalidRecord

    cls, params = MODELS[name]
    data = records(name)[:40]
    model = cls(half_life=16, **params)
    model.learn_many([x for x, _ in data[:10]], [y for _, y in data[:10]])
    before = cls(half_life=16, **params)
    before.learn_many([x for x, _ in data[:10]], [y for _, y in data[:10]])
    batch = [x for x, _ in data[10:]] + [42 if name == "SpamFilter" else {"bad": object()}]
    with pytest.raises(InvalidRecord, match="row 30"):
        model.learn_many(batch, [y for _, y in data[10:]] + [data[0][1]])
    assert model.n_learned == 10
    assert_same_state(model, before)


def test_a_spam_filter_batch_cut_at_decay_points_reads_each_message_once(monkeypatch):
    """A batch cut at decay points (every 4 records at half_life=64) is tokenised once, by the
    check that precedes its pieces, and its pieces learn from those tokens what they would
    read again: the counts, byte contexts, score sketch and scores of the same pieces given
    as batches that need no cut, bit for bit; the counts and contexts of the records learned
    one by one."""
    from streamnb.models import spam_filter

    params = {"half_life": 64, "ppm_order": 2, "ppm_memory": 1 << 22, "max_ham_rate": 0.2}
    data = list({x: (x, y) for x, y in records("SpamFilter")[:120]}.values())[:61]
    texts, labels = [x for x, _ in data], [y for _, y in data]
    read: list[str] = []
    tokenize = spam_filter._TOKENIZERS["auto"]
    monkeypatch.setitem(spam_filter._TOKENIZERS, "auto",
                        lambda text: read.append(text) or tokenize(text))
    cut = SpamFilter(**params)
    cut.learn_many(texts, labels)  # cut at 4, 8, …, 60
    assert sorted(read) == sorted(texts)  # each message tokenised once

    pieces, one = SpamFilter(**params), SpamFilter(**params)
    for start, end in Forgetting(64).segments(range(len(data))):
        pieces.learn_many(texts[start:end], labels[start:end])  # within a segment: no cut
    for x, y in data:
        one.learn_one(x, y)
    (head_cut, arrays_cut), (head_pieces, arrays_pieces) = cut.to_state(), pieces.to_state()
    assert head_cut == head_pieces and arrays_cut.keys() == arrays_pieces.keys()
    assert {"extra.scores.counts", "extra.contexts.counts"} <= arrays_cut.keys()
    for k in arrays_cut:
        np.testing.assert_array_equal(arrays_cut[k], arrays_pieces[k], err_msg=k)
    held_out = [x for x, _ in records("SpamFilter")[200:260]]
    np.testing.assert_array_equal(cut.score_many(held_out), pieces.score_many(held_out))
    assert cut.current_threshold == pieces.current_threshold
    # one by one, each message is scored after the one before it was learned, not with its
    # piece: the sketch differs, the counts and contexts do not
    arrays_one = one.to_state()[1]
    for k in arrays_cut.keys() - {"extra.scores.counts"}:
        np.testing.assert_allclose(arrays_cut[k], arrays_one[k], rtol=1e-9, atol=1e-12, err_msg=k)


def after_the_flip(model, data: list[tuple], skip: int = 100) -> float:
    """Prequential accuracy (predict, then learn) over the records from ``skip`` after the
    midpoint to the end."""
    start, hits = len(data) // 2 + skip, 0
    for i, (x, y) in enumerate(data):
        if i >= start:
            hits += model.predict_one(x) == y
        model.learn_one(x, y)
    return hits / (len(data) - start)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_forgetting_recovers_after_a_concept_flip(name):
    """Labels swapped at the midpoint: from 100 records after it, a model with half_life=100
    is right at least 30 points more often than the same model keeping everything, and one
    with an ADWIN drift detector (default drift_decay) at least 10 points more often."""
    cls, params = MODELS[name]
    data = flipped(name)
    kept = after_the_flip(cls(**params), data)
    forgetting = after_the_flip(cls(half_life=100, **params), data)
    watching = after_the_flip(cls(drift_detector=drift.ADWIN(), **params), data)
    assert forgetting > kept + 0.30, (kept, forgetting)
    assert watching > kept + 0.10, (kept, watching)


def test_parameters_are_checked_with_one_message_form():
    for bad, message in [({"half_life": 0.5}, "half_life must be None or a number >= 1"),
                         ({"half_life": math.inf}, "half_life must be None or a number >= 1"),
                         ({"drift_decay": 0.0}, "drift_decay must be a number in (0, 1]"),
                         ({"drift_detector": "adwin"}, "drift_detector must be None or a "
                                                       "river drift detector")]:
        for cls, params in MODELS.values():
            with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(
                    "[", r"\[").replace("]", r"\]")):
                cls(**params, **bad)


def test_a_drift_multiplies_the_counts_by_drift_decay():
    """The reaction of every model: the counts times drift_decay, then a relearn (TAN: a new
    tree version)."""
    data = flipped("TAN")
    model = TAN(relearn_every=0, drift_detector=drift.ADWIN(), drift_decay=0.25)
    plain = TAN(relearn_every=0)
    for i, (x, y) in enumerate(data):
        before = model.stats.class_counts.sum()
        version = model.structure_version
        model.learn_one(x, y)
        plain.learn_one(x, y)
        if model.structure_version != version:  # a drift
            assert i > len(data) // 2
            assert model.stats.class_counts.sum() == pytest.approx((before + 1) * 0.25)
            break
    else:
        pytest.fail("no drift detected")


@pytest.mark.parametrize("name", ["NaiveBayes", "TAN", "LDA", "SpamFilter"])
def test_forgetting_parameters_are_saved_and_loaded(name, tmp_path):
    """A saved model comes back with its half_life, drift_decay and a detector of the same
    class and parameters (a fresh one: a detector's running state is not saved), and goes on
    forgetting as the original does."""
    cls, params = MODELS[name]
    data = records(name)[:200]
    model = cls(half_life=30, drift_detector=drift.ADWIN(delta=0.01), drift_decay=0.3,
                **params)
    for x, y in data[:100]:
        model.learn_one(x, y)
    model.save(tmp_path / "m.state")
    loaded = load_model(tmp_path / "m.state")
    assert (loaded.half_life, loaded.drift_decay) == (30, 0.3)
    assert type(loaded.drift_detector) is drift.ADWIN
    assert loaded.drift_detector.delta == 0.01
    assert loaded.drift_detector is not model.drift_detector
    quiet = cls(half_life=30, **params)
    for x, y in data[:100]:
        quiet.learn_one(x, y)
    loaded.drift_detector = quiet.drift_detector = None  # the comparison of the decays alone
    for x, y in data[100:]:
        loaded.learn_one(x, y)
        quiet.learn_one(x, y)
    assert_same_state(loaded, quiet)


def test_a_state_naming_another_module_as_detector_is_refused(tmp_path):
    from streamnb.models.persistence import from_state
    from streamnb.stats.persist import StateFileError

    model = NaiveBayes(drift_detector=drift.ADWIN())
    model.learn_one({"a": 1.0}, "x")
    header, arrays = model.to_state()
    header["params"]["map"] = [[k, {"drift_detector": "os:system", "params": {"map": []}}
                                if k == "drift_detector" else v]
                               for k, v in header["params"]["map"]]
    with pytest.raises(StateFileError, match="is not river's"):
        from_state(header, arrays)


@pytest.mark.parametrize("name", ["NaiveBayes", "LDA", "KernelNB", "AODE"])
def test_river_checks_pass_with_forgetting(name):
    """river's estimator checks on a model that forgets and watches for drift."""
    cls, params = MODELS[name]
    model = cls(half_life=50, drift_detector=drift.ADWIN(), **params)
    if name == "AODE":
        check_discrete_estimator(model)
    else:
        checks.check_estimator(model)

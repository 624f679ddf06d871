"""One encoding per learned batch in the service's model (issue 15 item 2): a count-only model's
partition state and the sum learn the batch encoded once, for the state, and translated to the
sum's columns (consumers/translation.py ``SumColumns``). Every test compares with the path that
encodes the records for each model (the sum first), which the same ``PartitionedModel`` takes
for the other models and when the translation cannot apply: the counts, the order attributes and
values were registered in, the rejections and the predictions must be the same."""

from __future__ import annotations

import random

import numpy as np
import pytest

from streamnb import TAN, IndifferentNB, NaiveBayes, SpamFilter
from streamnb.consumers.state import PartitionedModel, PartitionState, copy_model, model_factory
from streamnb.consumers.translation import SumColumns, learns_counts_only
from streamnb.models.registry import MODELS
from streamnb.stats import EncodedBatch


def records(rng: random.Random, p: int, n: int) -> tuple[list, list]:
    """Records of partition ``p``: tokens, a nominal, a numeric and a text attribute, from
    vocabularies that partly overlap between partitions (so a batch registers values new to
    its state that the sum has, and values new to both), and now and then a record that one
    model or both reject."""
    X, y = [], []
    for _ in range(n):
        x: dict = {f"w{rng.randrange(40 * p, 40 * p + 120)}": True
                   for _ in range(rng.randint(0, 6))}
        if rng.random() < 0.7:
            x["colour"] = rng.choice(["red", "green", f"c{p}{rng.randrange(5)}"])
        if p != 1 and rng.random() < 0.5:
            x["size"] = rng.uniform(-3, 3) + p
        if rng.random() < 0.3:
            x["body"] = {f"t{rng.randrange(10 * p, 10 * p + 30)}": rng.randint(1, 3)
                         for _ in range(rng.randint(1, 4))}
        if rng.random() < 0.1:
            x[f"only{p}-{rng.randrange(20)}"] = rng.choice(["a", "b"])
        label: object = rng.choice(["spam", "ham", "ham"])
        bad = rng.random()
        if bad < 0.02:
            x = {}  # no features
        elif bad < 0.04:
            x["colour"] = 2.5  # a float for a nominal attribute
        elif bad < 0.06:
            label = None
        elif bad < 0.09 and p == 1:
            x["size"] = "big"  # nominal in partition 1's state, numeric in the others: the sum
        X.append(x)       # rejects it
        y.append(label)
    return X, y


def same_model(a, b) -> None:
    """Equal states: header (parameters, schema in registration order, labels) and every
    array bit for bit."""
    header_a, arrays_a = a.to_state()
    header_b, arrays_b = b.to_state()
    assert header_a == header_b
    assert arrays_a.keys() == arrays_b.keys()
    for name in arrays_a:
        np.testing.assert_array_equal(arrays_a[name], arrays_b[name], err_msg=name)


def twins(factory, **options) -> tuple[PartitionedModel, PartitionedModel]:
    new, old = PartitionedModel(factory, **options), PartitionedModel(factory, **options)
    old._once = None  # the reference: each model encodes the records
    return new, old


def same(new: PartitionedModel, old: PartitionedModel, probe: list) -> None:
    assert new.own.keys() == old.own.keys()
    for key in new.own:
        same_model(new.own[key].model, old.own[key].model)
    same_model(new.model, old.model)
    got, want = new.classify(probe), old.classify(probe)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1:3] == want[1:3]
    assert [(i, str(e)) for i, e in got[3]] == [(i, str(e)) for i, e in want[3]]


@pytest.mark.parametrize("model", ["indifferent", "laplace", "laplace-bins"])
@pytest.mark.parametrize("half_life", [0, 40])
@pytest.mark.parametrize("seed", [0, 1])
def test_one_encoding_learns_what_encoding_for_each_model_learned(model, half_life, seed):
    rng = random.Random(seed)
    factory = model_factory(model)
    new, old = twins(factory, half_life=half_life)
    for pm in (new, old):
        for p in range(3):
            pm.take(("t", p), PartitionState(factory(), 0))
        pm.rebuild()
    probe = records(random.Random(99), 2, 40)[0]
    offsets = dict.fromkeys(range(3), 0)
    once = 0
    for _ in range(60):
        p = rng.randrange(3)
        X, y = records(rng, p, rng.randint(1, 40))
        where = list(range(offsets[p], offsets[p] + len(X)))
        offsets[p] += len(X)
        before = {key: s.model.n_learned for key, s in new.own.items()}
        rejected = [new.learn(("t", p), X, y, where), old.learn(("t", p), X, y, where)]
        assert [(i, str(e)) for i, e in rejected[0]] == [(i, str(e)) for i, e in rejected[1]]
        once += (new._once is not None and len(new._once) > 0
                 and new.own[("t", p)].model.n_learned > before[("t", p)])
        for pm in (new, old):
            pm.advance(("t", p), offsets[p])
        event = rng.random()
        if event < 0.1:  # the sum re-summed from the states (a restore, a decay)
            new.rebuild()
            old.rebuild()
        elif event < 0.15:  # a restart: every state from its saved arrays, the sum rebuilt
            for pm in (new, old):
                for key, state in list(pm.own.items()):
                    pm.take(key, PartitionState(copy_model(state.model), state.offset))
                pm.rebuild()
        elif event < 0.2:  # a state further on enters (a restore) and learns before the
            q = rng.randrange(3)  # rebuild: the sum lacks its newest values
            X, y = records(rng, q, 10)
            keep = [i for i, x in enumerate(X) if x and y[i] and x.get("colour") != 2.5
                    and x.get("size") != "big"]
            ahead = copy_model(new.own[("t", q)].model)
            ahead.learn_many([{**X[i], f"restored{q}": True} for i in keep], [y[i] for i in keep])
            offsets[q] += 10
            for pm in (new, old):
                pm.take(("t", q), PartitionState(copy_model(ahead), offsets[q]))
            continue  # the sum is not the states' sum until the next rebuild
        same(new, old, probe)
    if learns_counts_only(factory()):
        assert once > 20  # most batches did take the one-encoding path
    else:  # fine bins: a state's grid is not the sum's, the sum learns the records
        assert once == 0


def test_one_encoding_with_drift_detection_learns_the_same():
    """With a drift detector the state learns record by record (each predicted first): the sum
    still learns the records; the result is that of the path before."""
    rng = random.Random(5)
    new, old = twins(IndifferentNB, drift_detector="ddm", drift_decay=0.5)
    for pm in (new, old):
        for p in range(2):
            pm.take(("t", p), PartitionState(IndifferentNB(), 0))
        pm.rebuild()
    probe = records(random.Random(98), 0, 30)[0]
    for _ in range(30):
        p = rng.randrange(2)
        X, y = records(rng, p, rng.randint(1, 50))
        if rng.random() < 0.3:  # a change of concept: the detector fires now and then
            y = ["ham" if v == "spam" else "spam" if v == "ham" else v for v in y]
        assert ([(i, str(e)) for i, e in new.learn(("t", p), X, y)]
                == [(i, str(e)) for i, e in old.learn(("t", p), X, y)])
        if rng.random() < 0.2:
            new.rebuild()
            old.rebuild()
        same(new, old, probe)


def test_the_translated_batch_is_the_sums_own_encoding():
    """What the sum learns is its own ``encode_many`` of the records: the same registrations,
    in the same order, and the same cells of each row."""
    rng = random.Random(3)
    state, total = NaiveBayes(), NaiveBayes()
    other = NaiveBayes()
    for _ in range(5):  # the sum holds the state's records and another partition's
        X, y = records(rng, 0, 30)
        keep = [i for i, x in enumerate(X) if x and y[i] and x.get("colour") != 2.5]
        X, y = [X[i] for i in keep], [y[i] for i in keep]
        state.learn_many(X, y)
        total.learn_many(X, y)
        X, y = records(rng, 2, 30)
        keep = [i for i, x in enumerate(X) if x and y[i] and x.get("colour") != 2.5]
        other.learn_many([X[i] for i in keep], [y[i] for i in keep])
    total.merge(other)
    sums = SumColumns(state, total)
    X, y = records(rng, 0, 60)
    keep = [i for i, x in enumerate(X) if x and y[i] and x.get("colour") != 2.5]
    X, y = [X[i] for i in keep], [y[i] for i in keep]
    batch = state.encode_many(X)
    want = total.encode_many(X)  # (encoding moves the schema's version)
    got = sums.translate(batch)
    assert got.registrations == want.registrations
    assert want.registrations[0] and len(want.registrations[0]) < len(batch.registrations[0])
    assert (got.schema_version, got.known_columns, got.known_numeric) == (
        want.schema_version, want.known_columns, want.known_numeric)

    def cells(b: EncodedBatch) -> list:
        return [
            sorted(zip(b.token_rows.tolist(), b.token_columns.tolist(), strict=True)),
            sorted(zip(b.nominal_rows.tolist(), b.nominal_columns.tolist(),
                       b.nominal_slots.tolist(), strict=True)),
            list(zip(b.numeric_rows.tolist(), b.numeric_slots.tolist(),
                     b.numeric_values.tolist(), strict=True)),
            sorted(zip(b.text_rows.tolist(), b.text_columns.tolist(), b.text_counts.tolist(),
                       b.text_slots.tolist(), strict=True))]

    assert cells(got) == cells(want)
    state.learn_many(batch, y)
    total.learn_many(got, y)
    sums.commit()
    assert sums.n_columns == state.stats.schema.n_columns


def test_which_models_learn_one_encoding():
    """Only models whose ``learn_many`` is the counts' ``update_many`` take the translated
    batch; the others (more than counts, or texts) learn the records into the sum."""
    assert learns_counts_only(IndifferentNB()) and learns_counts_only(NaiveBayes())
    assert not learns_counts_only(SpamFilter()) and not learns_counts_only(TAN())
    taken = {name for name, factory in MODELS.items() if learns_counts_only(factory())}
    assert taken == {"indifferent", "ml", "laplace", "m-estimate", "bibl"}
    for factory, X, once in ((IndifferentNB, [{"a": True}, {"b": True}], True),
                             (SpamFilter, ["free money now", "lunch at noon"], False)):
        pm = PartitionedModel(factory)
        for p in range(2):
            pm.take(("t", p), PartitionState(factory(), 0))
        pm.rebuild()
        pm.learn(("t", 0), X, ["spam", "ham"])
        pm.learn(("t", 1), X, ["spam", "ham"])  # the sum is no longer state 0's model
        seen: list = []
        learn = pm.model.learn_many

        def watched(X, y, learn=learn, seen=seen):
            seen.append(X)
            return learn(X, y)

        pm.model.learn_many = watched
        pm.learn(("t", 1), X, ["spam", "ham"])
        assert isinstance(seen[0], EncodedBatch) is once


def test_the_poll_benchmark_times_both_paths():
    """benchmarks/bench_poll.py (the measurement in docs/service.md) runs both paths of the
    same poll steps and times only the polls after the training ones."""
    from benchmark_scripts import load_script

    bench = load_script("bench_poll")
    X, y = records(random.Random(4), 0, 120)
    keep = [i for i, x in enumerate(X) if x and y[i] and x.get("colour") != 2.5]
    X, y = [X[i] for i in keep], [y[i] for i in keep]
    for before in (False, True):
        figures = bench.run(X, y, "indifferent", 2, 60, 20, before=before)
        assert figures.keys() == {"step", "classify", "learn"}
        assert figures["step"] >= figures["learn"] > 0 and figures["classify"] > 0

"""SelectiveNB / SelectiveTAN / SelectiveBN: the selection is Info-AS on the records, the
posterior is the network's, counted from the raw records and summed over missing attributes by
brute force; parameters follow the counts between relearns; batch == one-by-one; save/load,
merge, decay; river's estimator checks."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest

from conftest import check_discrete_estimator
from streamnb import SelectiveBN, SelectiveNB, SelectiveTAN, load_model
from streamnb.structure import (
    CLASS,
    DiscreteData,
    PairwiseCounts,
    info_as,
    learn_tan_structure,
)

MODELS = {
    "nb": lambda **kw: SelectiveNB(**kw),
    "tan": lambda **kw: SelectiveTAN(**kw),
    "bn-k2": lambda **kw: SelectiveBN(search="k2", **kw),
    "bn-cb": lambda **kw: SelectiveBN(search="cb", **kw),
    "bn-cb-learned": lambda **kw: SelectiveBN(search="cb", class_position="learned", **kw),
}


def make_data(n, seed=0, missing=0.1):
    """y → a, a → b, (y, b) → c, d noise; some nominal values missing."""
    rng = np.random.default_rng(seed)
    data = []
    for _ in range(n):
        y = str(rng.choice(["p", "q", "r"], p=[0.5, 0.3, 0.2]))
        a = y if rng.random() < 0.7 else str(rng.choice(["p", "q", "r"]))
        b = {"p": "u", "q": "v", "r": "w"}[a] if rng.random() < 0.8 else str(
            rng.choice(["u", "v", "w"]))
        c = "hi" if (y == "p") == (b == "u") or rng.random() < 0.2 else "lo"
        x = {"a": a, "b": b, "c": c, "d": str(rng.choice(["s", "t"]))}
        for key in list(x):
            if rng.random() < missing:
                x[key] = None
        data.append((x, y))
    return data


def fit(model, data):
    for x, y in data:
        model.learn_one(x, y)
    return model


def observed(x, name):
    v = x.get(name)
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v


def reference_posterior(data, structure, query, alpha=1):
    """P(c | query) of the network ``structure`` with θ(x | pa) = (N(pa, x) + α)/(N(pa) + α r)
    counted (as Fractions) over the raw records where the family is observed, and the selected
    attributes missing from the query (or with a value never learned) summed over by
    enumeration. Independent of streamnb's tables and inference."""
    labels = list(dict.fromkeys(y for _, y in data))
    domains = {a: list(dict.fromkeys(v for x, _ in data if (v := observed(x, a)) is not None))
               for a in structure.selected}
    alpha = F(alpha)

    def value(record, y, node):
        return y if node is CLASS else observed(record, node)

    def theta(node, assignment):
        family = [*structure.parents[node], node]
        size = len(labels) if node is CLASS else len(domains[node])
        num = den = F(0)
        for x, y in data:
            vals = [value(x, y, v) for v in family]
            if any(v is None for v in vals):
                continue
            if all(vals[i] == assignment[v] for i, v in enumerate(family[:-1])):
                den += 1
                num += vals[-1] == assignment[node]
        return (num + alpha) / (den + alpha * size)

    hidden = [a for a in structure.selected
              if observed(query, a) is None or observed(query, a) not in domains[a]]
    scores = {}
    for c in labels:
        total = F(0)
        for values in itertools.product(*(domains[a] for a in hidden)):
            assignment = {CLASS: c, **{a: observed(query, a) for a in structure.selected},
                          **dict(zip(hidden, values, strict=True))}
            p = F(1)
            for node in structure.nodes:
                p *= theta(node, assignment)
            total += p
        scores[c] = total
    norm = sum(scores.values())
    return {c: float(s / norm) for c, s in scores.items()}


QUERIES = [{"a": "p", "b": "u", "c": "hi", "d": "s"}, {"a": "q", "b": "w"}, {"c": "lo"},
           {"a": "r", "b": None, "c": "hi"}, {"a": "zzz", "b": "v", "c": "lo"}, {"d": "t"}]


# -- the structure -------------------------------------------------------------------------------
@pytest.mark.parametrize("metric", ["cig", "cgr", "cdc"])
@pytest.mark.parametrize("significance", [None, 0.01])
def test_selection_is_info_as_on_the_records(metric, significance):
    data = make_data(400)
    model = fit(SelectiveNB(metric=metric, significance=significance, relearn_every=0,
                            seed=0), data)
    model.relearn()
    names = model.stats.schema.attributes.names()
    want = info_as(DiscreteData.from_records([x for x, _ in data], [y for _, y in data],
                                             names), metric=metric, significance=significance)
    assert model.structure.selected == want.selected
    assert model.structure.scores == pytest.approx(want.scores)
    assert model.structure.stop == want.stop
    assert model.structure.selected[0] == "a"
    assert model.structure_version == 1


def test_tan_tree_is_chow_liu_over_the_selected():
    data = make_data(400, missing=0.0)
    model = fit(SelectiveTAN(relearn_every=0, seed=0), data)
    model.relearn()
    selected = model.structure.selected
    assert len(selected) >= 2
    tree = learn_tan_structure(PairwiseCounts.from_records([x for x, _ in data],
                                                           [y for _, y in data], selected))
    for a in selected:
        parent = tree.parents[a]
        assert model.structure.parents[a] == ((CLASS,) if parent is None else (CLASS, parent))


@pytest.mark.parametrize("kind", ["bn-k2", "bn-cb", "bn-cb-learned"])
def test_bn_network_is_learned_over_the_selected(kind):
    """With the class first (K2's ordering, CB's default) the class is a root and the
    attributes that depend on it take it as a parent; CB's "learned" placement puts it after
    a, b, c here (they are its parents)."""
    data = make_data(600, seed=3)
    model = fit(MODELS[kind](relearn_every=0, seed=0), data)
    model.relearn()
    s = model.structure
    assert set(s.parents) == {CLASS, *s.selected}
    assert s.markov_blanket and s.markov_blanket <= set(s.selected)
    assert s.method.endswith(kind.split("-")[1])
    children = {v for v in s.selected if CLASS in s.parents[v]}
    if kind == "bn-cb-learned":
        assert set(s.parents[CLASS]) == {"a", "b", "c"} and not children
    else:
        assert s.parents[CLASS] == () and "a" in children


# -- parameters and inference --------------------------------------------------------------------
@pytest.mark.parametrize("kind", list(MODELS))
def test_posterior_equals_the_network_counted_from_the_records(kind):
    data = make_data(150, seed=1)
    model = fit(MODELS[kind](relearn_every=0, seed=0), data)
    model.relearn()
    assert model.reservoir.exact
    for q in QUERIES + [x for x, _ in data[:5]]:
        want = reference_posterior(data, model.structure, q)
        assert model.predict_proba_one(q) == pytest.approx(want, abs=1e-12), q
        logs = model.predict_log_proba_one(q)
        assert {c: math.exp(v) for c, v in logs.items()} == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("kind", list(MODELS))
def test_parameters_follow_the_counts_between_relearns(kind):
    data = make_data(300, seed=2)
    model = fit(MODELS[kind](relearn_every=0, seed=0), data[:150])
    model.relearn()
    structure = model.structure
    fit(model, data[150:])  # no relearn: same network, every record counted
    assert model.structure is structure and model.structure_version == 1
    for q in QUERIES:
        assert model.predict_proba_one(q) == pytest.approx(
            reference_posterior(data, structure, q), abs=1e-12)


def test_before_the_first_relearn_the_prior():
    model = fit(SelectiveBN(relearn_every=0, seed=0), make_data(40))
    assert model.structure is None
    counts = {"p": 0, "q": 0, "r": 0}
    for _, y in make_data(40):
        counts[y] += 1
    assert model.predict_proba_one({"a": "p"}) == pytest.approx(
        {c: (n + 1) / (40 + 3) for c, n in counts.items()})


def test_unknown_values_are_missing_not_dropped():
    model = fit(SelectiveBN(search="k2", relearn_every=0, seed=0), make_data(300))
    model.relearn()
    assert model.predict_proba_one({"a": "never seen", "b": "u"}) == pytest.approx(
        model.predict_proba_one({"b": "u"}))
    p = model.predict_proba_one({"unknown attribute": "x"})  # nothing known: P(c)
    assert p == pytest.approx(model.predict_proba_one({"a": None}))


def test_tokens_are_absent_not_missing():
    rng = np.random.default_rng(0)
    data = []
    for _ in range(300):
        y = str(rng.choice(["spam", "ham"]))
        x = {w: True for w in rng.choice(["free", "money", "meet", "noon", "the"], 2,
                                         replace=False)}
        if y == "spam" and rng.random() < 0.7:
            x["free"] = True
        data.append((x, y))
    model = fit(SelectiveNB(relearn_every=0, seed=0), data)
    model.relearn()
    assert "free" in model.structure.selected
    tokens = ["free", "money", "meet", "noon", "the"]
    as_nominal = [({w: str(w in x) for w in tokens}, y) for x, y in data]
    for q in [{"free": True}, {"meet": True, "money": True}, {"the": True}]:
        nominal_q = {w: str(w in q) for w in tokens}
        assert model.predict_proba_one(q) == pytest.approx(
            reference_posterior(as_nominal, model.structure, nominal_q), abs=1e-12)


# -- the reservoir behind the families ---------------------------------------------------------
def test_families_beyond_the_counts_start_from_the_reservoir_and_count_exactly():
    data = make_data(900, seed=4, missing=0.0)
    model = fit(SelectiveBN(search="k2", reservoir_size=200, relearn_every=0, seed=0), data)
    model.relearn()
    assert not model.reservoir.exact and model.reservoir.size == 200
    estimated = [v for v, s in model.family_sources.items() if s == "reservoir (estimate)"]
    exact = [v for v, s in model.family_sources.items() if s == "counts"]
    assert estimated and CLASS in exact
    before = [t.copy() for t in model._families.tables]
    # an estimate on the count scale: its total is close to the records seen
    for i, v in enumerate(model.structure.nodes):
        if v in estimated:
            assert before[i].sum() == pytest.approx(900, rel=0.15)
    more = make_data(50, seed=5, missing=0.0)
    fit(model, more)
    for i in range(len(model.structure.nodes)):  # every new record added exactly one count
        delta = model._families.tables[i] - before[i]
        assert delta.sum() == 50 and set(np.unique(delta)) <= set(range(51))


def test_relearn_time_does_not_read_the_stream():
    """The reservoir bounds what a relearn reads: its data has reservoir_size records."""
    model = fit(SelectiveNB(reservoir_size=64, relearn_every=0, seed=0), make_data(500))
    assert model.reservoir_data(model._candidates()).n_records == 64


# -- batch, persistence, merge, decay ------------------------------------------------------------
@pytest.mark.parametrize("kind", list(MODELS))
def test_batch_equals_one_by_one(kind):
    data = make_data(250, seed=6)
    one = fit(MODELS[kind](relearn_every=0, seed=3), data)
    many = MODELS[kind](relearn_every=0, seed=3)
    frame = pd.DataFrame([x for x, _ in data])
    many.learn_many(frame.iloc[:100], pd.Series([y for _, y in data[:100]]))
    many.learn_many(frame.iloc[100:], pd.Series([y for _, y in data[100:]]))
    one.relearn()
    many.relearn()
    assert one.structure == many.structure
    for a, b in zip(one._families.tables, many._families.tables, strict=True):
        np.testing.assert_array_equal(a, b)
    batch = many.predict_proba_many(QUERIES)
    for i, q in enumerate(QUERIES):
        assert one.predict_proba_one(q) == pytest.approx(dict(batch.iloc[i]), abs=1e-12)
    # and after the relearn, new records counted by either path agree
    more = make_data(40, seed=7)
    fit(one, more)
    many.learn_many([x for x, _ in more], [y for _, y in more])
    for a, b in zip(one._families.tables, many._families.tables, strict=True):
        np.testing.assert_array_equal(a, b)


def test_relearn_every_and_learn_many():
    model = SelectiveNB(relearn_every=30, seed=0)
    versions = []
    for x, y in make_data(100):
        model.learn_one(x, y)
        versions.append(model.structure_version)
    # the one schedule (streamnb.models.schedule): after records 1, 2, 4, 8, 16, then the
    # multiples of 30
    changes = [i + 1 for i in range(len(versions)) if versions[i] != (versions[i - 1] if i
                                                                    else 0)]
    assert changes == [1, 2, 4, 8, 16, 30, 60, 90] and versions[-1] == 8
    batch = SelectiveNB(relearn_every=30, seed=0)
    data = make_data(100)
    batch.learn_many([x for x, _ in data[:50]], [y for _, y in data[:50]])
    # learned in pieces that end at the schedule's points: relearned at 1, 2, 4, 8, 16 and 30
    assert batch.structure_version == versions[49] == 6


@pytest.mark.parametrize("kind", list(MODELS))
def test_save_load_keeps_everything(kind, tmp_path):
    data = make_data(200, seed=8)
    model = fit(MODELS[kind](relearn_every=0, reservoir_size=120, seed=5), data)
    model.relearn()
    fit(model, data[:20])
    model.save(tmp_path / "m.snb")
    loaded = load_model(tmp_path / "m.snb")
    assert type(loaded) is type(model)
    assert loaded.structure == model.structure
    assert loaded.structure_version == model.structure_version
    assert loaded.family_sources == model.family_sources
    for q in QUERIES:
        assert loaded.predict_proba_one(q) == model.predict_proba_one(q)
    more = make_data(60, seed=9)  # the reservoir's random state travels too
    fit(model, more)
    fit(loaded, more)
    model.relearn()
    loaded.relearn()
    assert loaded.structure == model.structure
    for q in QUERIES:
        assert loaded.predict_proba_one(q) == pytest.approx(model.predict_proba_one(q),
                                                            abs=1e-15)


@pytest.mark.parametrize("kind", list(MODELS))
def test_merge_equals_learning_everything(kind):
    """Two shards (their own seeds), reservoirs below capacity: merged and relearned, the same
    network and posteriors as one model on the whole stream."""
    data = make_data(300, seed=10)
    whole = fit(MODELS[kind](relearn_every=0, seed=1), data)
    a = fit(MODELS[kind](relearn_every=0, seed=2), data[::2])
    b = fit(MODELS[kind](relearn_every=0, seed=3), data[1::2])
    a.merge(b)
    whole.relearn()
    a.relearn()
    assert a.structure == whole.structure
    for q in QUERIES:
        assert a.predict_proba_one(q) == pytest.approx(whole.predict_proba_one(q), abs=1e-12)
    with pytest.raises(ValueError, match="differ"):
        a.merge(MODELS[kind](relearn_every=0, metric="cig"))


def test_class_position_is_saved_and_must_match_to_merge(tmp_path):
    data = make_data(200, seed=13)
    model = fit(SelectiveBN(class_position="learned", relearn_every=0, seed=0), data)
    model.relearn()
    model.save(tmp_path / "m.snb")
    loaded = load_model(tmp_path / "m.snb")
    assert loaded.class_position == "learned"
    loaded.relearn()  # relearns with the saved placement, not the default
    assert loaded.structure == model.structure and loaded.structure.parents[CLASS]
    with pytest.raises(ValueError, match="differ"):
        model.merge(fit(SelectiveBN(relearn_every=0, seed=1), data))


@pytest.mark.parametrize("same_network", [True, False])
def test_merge_keeps_the_network_and_completes_its_families(same_network):
    """Without a relearn the merged model keeps its network; every family then counts both
    shards' records: from the other's tables (same network) or its reservoir (exact here)."""
    data = make_data(300, seed=11)
    a = fit(SelectiveBN(search="k2", relearn_every=0, seed=2), data[:150])
    # b meets the classes and values in another order, so its tables' axes differ from a's
    rank = {"q": 0, "r": 1, "p": 2}
    reordered = sorted(data[150:], key=lambda r: (rank[r[1]], [-ord((v or " ")[0])
                                                               for v in r[0].values()]))
    b = fit(SelectiveBN(search="k2", relearn_every=0, seed=3), reordered)
    assert a.stats.labels.values != b.stats.labels.values
    assert a.stats.schema.to_json()["nominal_values"] != b.stats.schema.to_json()["nominal_values"]
    a.relearn()
    if same_network:
        b._install(a.structure)
        assert b.structure == a.structure
    a.merge(b)
    for q in QUERIES:
        assert a.predict_proba_one(q) == pytest.approx(
            reference_posterior(data, a.structure, q), abs=1e-12)


@pytest.mark.parametrize("kind", list(MODELS))
def test_decay_scales_every_count(kind):
    data = make_data(200, seed=12)
    model = fit(MODELS[kind](relearn_every=0, seed=0), data)
    model.relearn()
    tables = [t.copy() for t in model._families.tables]
    weights = model.reservoir.estimated_weights()
    model.decay(0.25)
    for before, after in zip(tables, model._families.tables, strict=True):
        np.testing.assert_allclose(after, 0.25 * before)
    np.testing.assert_allclose(model.reservoir.estimated_weights(), 0.25 * weights)
    np.testing.assert_allclose(model.stats.class_counts.sum(), 50.0)
    with pytest.raises(ValueError, match="decay factor"):
        model.decay(1.5)


# -- river -------------------------------------------------------------------------------------
@pytest.mark.parametrize("model", [
    SelectiveNB(relearn_every=50, metric="cdc", significance=0.05, seed=1),
    SelectiveTAN(relearn_every=50, weight="ddr", metric="cig", significance=0.05, seed=1),
    SelectiveBN(relearn_every=50, seed=0),
], ids=["nb", "tan", "bn"])
def test_river_check_estimator(model):
    check_discrete_estimator(model)


def test_drift_detector_triggers_relearn():
    """ADWIN on the prequential error fires soon after the concept flips at record 600, and a
    relearn follows (besides the scheduled ones). ``drift_decay=1``: a relearn only, no
    forgetting, so the counts of the flip stay and ADWIN sees one change."""
    from river import drift

    rng = np.random.default_rng(1)
    model = SelectiveNB(relearn_every=500, drift_detector=drift.ADWIN(), drift_decay=1.0,
                        seed=0)
    versions = [0]
    for i in range(1000):
        a, b = (str(v) for v in rng.choice(["x", "y"], 2))
        y = ("+" if a == "x" else "-") if i < 600 else ("+" if a == "y" else "-")
        model.learn_one({"a": a, "b": b}, y)
        versions.append(model.structure_version)
    relearned = [i for i in range(1, len(versions)) if versions[i] != versions[i - 1]]
    # the schedule's points before the flip: 1, 2, 4, …, 256, then 500
    assert relearned[:10] == [1, 2, 4, 8, 16, 32, 64, 128, 256, 500]
    drift = [i for i in relearned if i not in (500, 1000)][9:]
    assert drift and all(600 < i < 750 for i in drift), relearned
    assert relearned[-1] == 1000  # a drift's relearn leaves the schedule's points where they are


def test_invalid_parameters():
    with pytest.raises(ValueError, match="metric"):
        SelectiveNB(metric="gain")
    with pytest.raises(ValueError, match="significance"):
        SelectiveNB(significance=1.0)
    with pytest.raises(ValueError, match="alpha"):
        SelectiveTAN(alpha=0)
    with pytest.raises(ValueError, match="weight"):
        SelectiveTAN(weight="mi")
    with pytest.raises(ValueError, match="search"):
        SelectiveBN(search="hill")
    with pytest.raises(ValueError, match="reservoir_size"):
        SelectiveBN(reservoir_size=0)
    with pytest.raises(ValueError, match="max_parents"):
        SelectiveBN(max_parents=0)
    with pytest.raises(ValueError, match=r"class_position must be one of \('first', "
                                         r"'learned'\), got 'last'"):
        SelectiveBN(class_position="last")


@pytest.mark.parametrize("make", [SelectiveNB, SelectiveTAN, SelectiveBN])
def test_defaults_have_a_structure_before_relearn_every_records(make):
    """The one relearn schedule (streamnb.models.schedule): after 1, 2, 4, … records, then
    every relearn_every. With the defaults (relearn_every=1000) a model trained on 300 records,
    in one batch or one by one, has a structure and beats the majority class (it used to
    predict the class prior until record 1,000)."""
    from streamnb.datasets import load

    vote = load("vote")
    train, test = list(vote)[:300], list(vote)[300:]
    majority = max(sum(y == c for _, y in test) for c in vote.classes) / len(test)
    for batch in (True, False):
        model = make(seed=0)
        if batch:
            model.learn_many([x for x, _ in train], [y for _, y in train])
        else:
            for x, y in train:
                model.learn_one(x, y)
        assert model.structure is not None and model.structure.selected
        accuracy = sum(model.predict_one(x) == y for x, y in test) / len(test)
        assert accuracy > majority + 0.2, (make.__name__, batch, accuracy, majority)

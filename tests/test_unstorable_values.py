"""Values a state cannot hold are refused by every model, whatever the path, changing nothing.

A str holding a lone surrogate (JSON's ``"\\ud800"`` escape decodes to one) as a feature name,
nominal value, text token or label cannot be written to a state file (UTF-8), so a model that
learned it could never be saved again; a number whose square overflows (|x| >= ~1.3e154) makes
a Gaussian's variance infinite and every later probability NaN. Both are refused with an
``InvalidRecord`` naming the record and the field, and the state is as it was (``to_state``
equal before and after, and the model still saves)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from streamnb.datasets import load, load_sms_spam
from streamnb.models.registry import CONTINUOUS, MODELS
from streamnb.stats import InvalidRecord
from streamnb.stats.values import NUMERIC_LIMIT

VOTE = load("vote")
IRIS = load("iris")
SURROGATE = "\ud800"
#: models that take numeric attributes next to discrete ones (the naive Bayes estimators)
MIXED = ("indifferent", "laplace", "m-estimate", "ml")
DISCRETE = sorted(set(MODELS) - CONTINUOUS - {"spam-filter"})


def _state(model) -> tuple[dict, dict]:
    return model.to_state()


def _assert_same_state(before, after) -> None:
    assert before[0] == after[0]
    assert before[1].keys() == after[1].keys()
    for key, array in before[1].items():
        assert np.array_equal(array, after[1][key], equal_nan=array.dtype.kind == "f"), key


def _refused(model, x, y, field, row: int, tmp_path, batch_form=None) -> None:
    """learn_one(x, y) and learn_many with x at ``row`` of a batch are refused naming the
    record and ``field``; the state is unchanged and still saves."""
    before = _state(model)
    n = model.n_learned
    with pytest.raises(InvalidRecord) as one:
        model.learn_one(x, y)
    assert one.value.record == f"record {n + 1}" and one.value.field == field, one.value
    _assert_same_state(before, _state(model))
    good_x, good_y = _good(model)
    xs = [*good_x[:row], x, *good_x[row:]]
    ys = [*good_y[:row], y, *good_y[row:]]
    forms = [xs] if batch_form is None else [xs, batch_form(xs)]
    for X in forms:
        with pytest.raises(InvalidRecord) as many:
            model.learn_many(X, ys)
        assert many.value.record == f"row {row}" and many.value.row == row, many.value
        assert many.value.field == field, many.value
        _assert_same_state(before, _state(model))
    assert model.n_learned == n
    model.save(tmp_path / "model.snb")  # a state that holds nothing unwritable
    type(model).load(tmp_path / "model.snb")


def _good(model) -> tuple[list, list]:
    if type(model).__name__ == "SpamFilter":
        sms = load_sms_spam()[:6]
        return [m.text for m in sms], [m.label for m in sms]
    if model._statistics.__name__ != "CountStatistics":  # the continuous models
        return IRIS.records[::25][:6], IRIS.labels[::25][:6]
    return VOTE.records[:6], VOTE.labels[:6]


def _trained(name: str):
    model = MODELS[name]()
    x, y = _good(model)
    model.learn_many(x, y)
    return model


@pytest.mark.parametrize("name", sorted(set(MODELS) - {"spam-filter"}))
def test_a_lone_surrogate_name_is_refused(name, tmp_path):
    model = _trained(name)
    x, y = _good(model)
    value = 1.5 if name in CONTINUOUS else True
    bad = {**x[2], "a" + SURROGATE: value}
    _refused(model, bad, y[2], "a" + SURROGATE, 2, tmp_path,
             pd.DataFrame if name in CONTINUOUS else None)


@pytest.mark.parametrize("name", DISCRETE)
def test_a_lone_surrogate_nominal_value_is_refused(name, tmp_path):
    model = _trained(name)
    x, y = _good(model)
    bad = {**x[1], "crime": "y" + SURROGATE}
    _refused(model, bad, y[1], "crime", 1, tmp_path, pd.DataFrame)


@pytest.mark.parametrize("name", sorted(set(MODELS) - {"spam-filter"}))  # 2 labels, its own
def test_a_lone_surrogate_label_is_refused(name, tmp_path):
    model = _trained(name)
    x, _ = _good(model)
    _refused(model, x[0], "spam" + SURROGATE, "label", 0, tmp_path)


@pytest.mark.parametrize("name", [*MIXED, "spam-filter"])
@pytest.mark.parametrize("bag", [frozenset, list, lambda tokens: dict.fromkeys(tokens, 2)])
def test_a_lone_surrogate_token_is_refused(name, bag, tmp_path):
    model = _trained(name)
    x, y = _good(model)
    tokens = ["free", "w" + SURROGATE, "money"]
    if name == "spam-filter":
        if bag is list:
            pytest.skip("a SpamFilter reads a message, a token set or a {token: count}")
        # a message already tokenised (a set, or river's BagOfWords counts)
        bad, field = bag(tokens), "tokens"
    else:
        model.learn_one({"text": frozenset({"free"})}, y[0])  # a known text attribute
        bad, field = {**x[3], "text": bag(tokens)}, "text"
    _refused(model, bad, y[3], field, 3, tmp_path)


@pytest.mark.parametrize("name", [*MIXED, *sorted(CONTINUOUS)])
@pytest.mark.parametrize("value", [1e308, -1e300, 10**400, math.inf, 2 * NUMERIC_LIMIT])
def test_a_number_beyond_the_limit_is_refused(name, value, tmp_path):
    model = _trained(name)
    x, y = _good(model)
    field = "petalwidth" if name in CONTINUOUS else "size"
    if name in MIXED:
        model.learn_one({**x[0], "size": 1.0}, y[0])  # a known numeric attribute
    bad = {**x[4], field: value}
    frame = pd.DataFrame if isinstance(value, float) else None
    _refused(model, bad, y[4], field, 4, tmp_path, frame)
    # the bound itself is a number like any other
    model.learn_one({**x[4], field: -NUMERIC_LIMIT}, y[4])
    assert all(math.isfinite(p) for p in model.predict_proba_one(x[4]).values())


def test_a_huge_number_no_longer_poisons_naive_bayes():
    """The issue's case: once {"size": 1e308} was learned, every probability was NaN."""
    model = MODELS["laplace"]()
    model.learn_one({"size": 1.0, "w": True}, "ham")
    model.learn_one({"size": 3.0}, "spam")
    with pytest.raises(InvalidRecord):
        model.learn_one({"size": 1e308}, "spam")
    model.learn_one({"size": NUMERIC_LIMIT}, "spam")  # the largest value taken: still finite
    for size in (1.0, 2.0, NUMERIC_LIMIT, -NUMERIC_LIMIT):
        proba = model.predict_proba_one({"size": size})
        assert all(math.isfinite(p) for p in proba.values()), proba
        assert math.isclose(sum(proba.values()), 1.0)

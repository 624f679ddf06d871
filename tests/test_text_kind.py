"""The text attribute kind: the multinomial event model on counts (docs/text.md)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.feature_extraction import DictVectorizer
from sklearn.naive_bayes import MultinomialNB

from conftest import snapshot
from streamnb import CountStatistics, IndifferentNB, InvalidRecord, MEstimate, NaiveBayes
from streamnb.datasets import iter_spamassassin_stream
from streamnb.features import tokenize_email
from streamnb.stats.encoder import text_lookup


def test_counts_of_bags_lists_sets_and_mappings():
    s = CountStatistics()
    s.update({"body": ["free", "money", "free"]}, "spam")
    s.update({"body": {"free": 2, "lunch": 1.5, "zero": 0}}, "ham")
    s.update({"body": frozenset({"lunch", "noon"}), "subject": ["hi"]}, "ham")
    s.update({"body": None}, "ham")  # missing: the class is counted, no draw
    assert s.count("body", "free") == {"spam": 2.0, "ham": 2.0}
    assert s.count("body", "lunch") == {"spam": 0.0, "ham": 2.5}
    assert s.draw_counts.tolist() == [[3.0, 0.0], [5.5, 1.0]]
    assert s.class_counts.tolist() == [1.0, 3.0]
    assert s.schema.attribute_size(s.schema.attributes.get("body")) == 4  # no "zero"
    assert s.schema.free_values() == 3  # |V| − 1 for body, 0 for subject


@pytest.mark.parametrize("value, reason", [
    ([1, 2], "int token"), ({"a": -1}, "counts are finite numbers >= 0"),
    ({"a": "2"}, "counts are finite"), ({"a": float("inf")}, "counts are finite"),
    ("plain string", None), (3, None),
])
def test_bad_text_values_name_the_field_and_change_nothing(value, reason):
    s = CountStatistics()
    s.update({"body": ["free"], "colour": "red"}, "spam")
    before = snapshot(s)
    with pytest.raises(InvalidRecord) as err:
        s.update({"new": "v", "body": value}, "ham")
    assert err.value.field == "body"
    if reason:
        assert reason in str(err.value)
    assert snapshot(s) == before
    with pytest.raises(InvalidRecord, match="row 1"):
        s.update_many([{"body": ["ok"]}, {"body": value}], ["ham", "ham"])
    assert snapshot(s) == before


def test_dataframe_with_a_text_column_equals_records():
    records = [{"body": ["a", "b", "a"], "n": 1.0}, {"body": ["b"], "n": 2.0},
               {"body": None, "n": 3.0}]
    frame = pd.DataFrame(records)
    a, b = CountStatistics(), CountStatistics()
    a.update_many(frame, ["x", "y", "x"])
    b.update_many([{k: v for k, v in r.items() if v is not None} for r in records],
                  ["x", "y", "x"])
    assert a.to_dict() == b.to_dict()


def _spam_bags(n: int) -> list[tuple[dict, str]]:
    return [({"tokens": tokenize_email(m.raw)}, m.label)
            for m in list(iter_spamassassin_stream())[:n]]


@pytest.mark.parametrize("alpha", [1.0, 0.1])
def test_equals_scikit_learn_multinomial_nb_on_real_messages(alpha):
    """NaiveBayes with MEstimate(m=α) on a text attribute is scikit-learn's MultinomialNB
    (alpha=α) over the vocabulary of the training messages, given the same class prior:
    log-probabilities equal on every held-out message (tokens unseen in training skipped by
    both: DictVectorizer drops them)."""
    data = _spam_bags(1200)
    train, test = data[:900], data[900:]
    model = NaiveBayes(estimator=MEstimate(m=alpha))
    model.learn_many([x for x, _ in train], [y for _, y in train])
    vectorizer = DictVectorizer()
    X = vectorizer.fit_transform([dict.fromkeys(x["tokens"], 1) for x, _ in train])
    labels = model.classes
    counts = model.stats.class_counts
    prior = (counts + alpha) / (counts.sum() + alpha * len(labels))  # MEstimate's class prior
    reference = MultinomialNB(alpha=alpha, class_prior=[prior[labels.index(c)]
                                                        for c in sorted(labels)])
    reference.fit(X, [y for _, y in train])
    Xt = vectorizer.transform([dict.fromkeys(x["tokens"], 1) for x, _ in test])
    want = pd.DataFrame(reference.predict_log_proba(Xt), columns=reference.classes_)[labels]
    got = model.predict_log_proba_many([x for x, _ in test])
    np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=1e-9, atol=1e-9)
    one = [model.predict_log_proba_one(x) for x, _ in test[:50]]
    np.testing.assert_allclose([[p[c] for c in labels] for p in one], want.to_numpy()[:50],
                               rtol=1e-9, atol=1e-9)


def test_multinomial_beats_bernoulli_on_the_spam_stream_prefix():
    """The point of the event model (docs/text.md): prequential on the first 1,500 messages,
    the multinomial on the text attribute beats the Bernoulli model on token attributes."""
    from streamnb.evaluate import prequential

    data = _spam_bags(1500)
    bernoulli = prequential(IndifferentNB(), [(dict.fromkeys(x["tokens"], True), y)
                                              for x, y in data], positive="spam")
    multinomial = prequential(IndifferentNB(), data, positive="spam")
    majority = max(np.mean([y == "spam" for _, y in data]), np.mean([y == "ham" for _, y in data]))
    assert multinomial.accuracy() > bernoulli.accuracy() > majority
    assert multinomial.auc() > bernoulli.auc()
    assert all(math.isfinite(v) for v, known in zip(multinomial.log_p_true, multinomial.known,
                                                    strict=True) if known)


def test_a_batch_of_token_sets_is_encoded_at_once_and_equals_each_in_turn(monkeypatch):
    """update_many of messages of one known text attribute drawn once (SpamFilter's learn_many)
    encodes the batch at once, no message through the general encoder, whether it was scored
    first (lookups kept, current or from before another batch was learned) or not, as
    frozensets, sets or dicts of True: the columns, registrations and counts of update on each
    message in turn, on real e-mail. Any other batch takes the general path."""
    from streamnb.stats import encoder

    messages = [m for _, m in zip(range(700), iter_spamassassin_stream(), strict=False)]
    bags = [frozenset(tokenize_email(m.raw)) for m in messages]
    labels = [m.label for m in messages]
    # batch k as frozensets, sets or dicts (the order of a set's tokens is its own)
    values = [bag if i // 100 % 4 else set(bag) if i // 100 % 8 else dict.fromkeys(bag, True)
              for i, bag in enumerate(bags)]
    one, many = CountStatistics(), CountStatistics()
    for value, label in zip(values, labels, strict=True):
        one.update({"body": value}, label)
    many.update_many([{"body": values[0]}], labels[:1])  # registers the attribute
    general = []
    real = encoder._encode_row
    monkeypatch.setattr(encoder, "_encode_row",
                        lambda schema, *args: general.append(args[2]) or real(schema, *args))
    a = many.schema.attributes.get("body")
    chunks = [(lo, min(lo + 100, len(bags))) for lo in range(1, len(bags), 100)]
    for k, (lo, hi) in enumerate(chunks):
        if k % 3 == 0:  # scored, then learned
            for bag in bags[lo:hi]:
                text_lookup(many.schema, a, bag)
        if k % 3 == 1 and k + 1 < len(chunks):  # the next batch scored before this one learned
            for bag in bags[chunks[k + 1][0]:chunks[k + 1][1]]:
                text_lookup(many.schema, a, bag)
        many.update_many([{"body": v} for v in values[lo:hi]], labels[lo:hi])
    assert general == []
    assert many.schema.to_json() == one.schema.to_json()
    assert many.to_dict() == one.to_dict()
    for name in ("value_counts", "class_counts", "draw_counts"):
        assert np.array_equal(getattr(many, name), getattr(one, name)), name
    # a batch with another field, or a token that is not a str: the general path, row named
    many.update_many([{"body": bags[0]}, {"body": bags[1], "hot": True}], ["spam", "ham"])
    assert general == [0, 1]
    before = snapshot(many)
    with pytest.raises(InvalidRecord, match="row 1"):
        many.update_many([{"body": bags[0]}, {"body": frozenset({"a", 3})}], ["spam", "ham"])
    assert snapshot(many) == before


def test_a_token_set_learned_by_the_text_fast_path_equals_the_general_path():
    """CountStatistics.update counts a record of one known text attribute drawn once per token
    (SpamFilter's learn_one) without the general encoder; the same records as a read-only
    mapping take the general path: every array, the schema and the all-absent sums are equal
    after every record, new classes, new and known tokens, other kinds and bags included."""
    from types import MappingProxyType

    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(300)]
    models = NaiveBayes(), NaiveBayes()
    fast, general = models[0].stats, models[1].stats
    taken = 0
    for i in range(400):
        bag = frozenset(rng.choice(words, size=rng.integers(1, 40)).tolist())
        x = ({"body": bag} if i % 7 else {"body": {w: True for w in bag}} if i % 2 else
             {"body": set(bag), "hot": bool(i % 3)})
        if i % 50 == 1:
            x = {"body": ["free", "free", "lunch"]}  # a bag of draws: the general path for both
        label = ["spam", "ham", "unsure"][min(i // 150, 2) if i % 5 else 0]
        version = fast.schema.version
        models[0].learn_one(x, label)
        taken += len(x) == 1 and fast.schema.version == version  # no new attribute: fast
        models[1].learn_one(MappingProxyType(x), label)
        assert fast.to_dict() == general.to_dict()
        assert fast.schema.to_json() == general.schema.to_json()
        for name in ("value_counts", "class_counts", "draw_counts", "observed_counts"):
            assert np.array_equal(getattr(fast, name), getattr(general, name)), name
        assert fast.version == general.version
        query = {"body": frozenset(rng.choice(words, size=10).tolist()), "hot": True}
        assert models[0].predict_proba_one(query) == models[1].predict_proba_one(query)
    assert fast.count("body", "w0")["spam"] > 0
    assert taken > 100

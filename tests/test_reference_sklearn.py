"""NaiveBayes(estimator="laplace") on binary tokens is scikit-learn's BernoulliNB(alpha=1) with
the Laplace class prior: checked on real messages (the SpamAssassin corpus)."""

from __future__ import annotations

import numpy as np
import pytest

from streamnb import NaiveBayes
from streamnb.datasets import load_spamassassin
from streamnb.features import tokenize_email

sklearn = pytest.importorskip("sklearn")


@pytest.fixture(scope="module")
def tokenised():
    messages = load_spamassassin()[::6]  # every group represented, ~1,000 messages
    return [({t: True for t in tokenize_email(m.text)}, m.label) for m in messages]


def test_laplace_equals_sklearn_bernoulli(tokenised):
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.naive_bayes import BernoulliNB

    train, test = tokenised[:700], tokenised[700:]
    model = NaiveBayes(estimator="laplace")
    for x, y in train:
        model.learn_one(x, y)
    vectorizer = DictVectorizer().fit([x for x, _ in train])
    counts = {c: sum(y == c for _, y in train) for c in ("ham", "spam")}
    # sklearn orders classes alphabetically; our Laplace class prior is (N(c) + 1)/(N + k)
    prior = [(counts[c] + 1) / (len(train) + 2) for c in ("ham", "spam")]
    reference = BernoulliNB(alpha=1.0, class_prior=prior).fit(
        vectorizer.transform([x for x, _ in train]), [y for _, y in train])
    expected = reference.predict_log_proba(vectorizer.transform([x for x, _ in test]))
    for (x, _), want in zip(test, expected, strict=True):
        got = model.predict_log_proba_one(x)
        assert [got["ham"], got["spam"]] == pytest.approx(want, abs=1e-6)
    batch = model.predict_proba_many([x for x, _ in test])
    assert np.allclose(batch[["ham", "spam"]].to_numpy(), np.exp(expected), atol=1e-9)

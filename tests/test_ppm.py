"""Byte-context (PPM) counts: the C kernels against their Python twins and against the
formula, on real messages; shards that merge into one model; the memory budget held on a long
stream; the state saved and loaded; and SpamFilter's ``ppm_order`` option."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import numpy as np
import pytest

from streamnb import SpamFilter, load_model
from streamnb._accel import ppm
from streamnb.datasets import iter_sms_spam_stream, iter_spamassassin_stream
from streamnb.evaluate import exact_auc
from streamnb.models.spam_filter import ppm_bytes
from streamnb.stats import InvalidRecord
from streamnb.stats.ppm import SLOT_BYTES, ByteContexts


@pytest.fixture(scope="module")
def sms() -> list[tuple[bytes, int]]:
    return [(ppm_bytes(m.text), int(m.label == "spam")) for m in iter_sms_spam_stream()]


@pytest.fixture(scope="module")
def spamassassin() -> list[tuple[bytes, int]]:
    stream = itertools.islice(iter_spamassassin_stream(), 300)
    return [(ppm_bytes(m.raw), int(m.label == "spam")) for m in stream]


def _entries(model: ByteContexts) -> dict[int, tuple]:
    keys, counts, distinct = model.entries()
    return {int(k): (*counts[:, i].tolist(), *distinct[:, i].tolist())
            for i, k in enumerate(keys)}


def test_c_kernels_equal_their_twins_on_real_messages(spamassassin, sms):
    """Scores bit-equal and the tables identical slot by slot, e-mails and SMS, both classes."""
    if not ppm.ACCELERATED:
        pytest.skip("C extension not built")
    c_model, twin = ByteContexts(4, 1 << 22), ByteContexts(4, 1 << 22)
    for data, cls in spamassassin[:6] + spamassassin[-2:] + sms[:40]:
        assert c_model.score(data) == ppm.twin.ppm_score(data, 4, twin.keys, twin.counts,
                                                          twin.distinct)
        new = ppm.twin.ppm_learn(data, 4, cls, twin.keys, twin.counts, twin.distinct)
        before = c_model.used
        c_model.learn(data, cls)
        assert c_model.used - before == new
        assert np.array_equal(c_model.keys, twin.keys)
        assert np.array_equal(c_model.counts, twin.counts)
        assert np.array_equal(c_model.distinct, twin.distinct)


def _reference_log_likelihood(learned: list[tuple[bytes, int]], data: bytes, cls: int,
                              order: int) -> float:
    """The documented formula from scratch: counts of every earlier message of the class and
    of the message's own earlier bytes, interpolated PPM-D, 1/256 below order 0."""
    c: dict = defaultdict(int)
    followers: dict = defaultdict(set)

    def add(text: bytes, i: int) -> None:
        for k in range(min(order, i) + 1):
            h = text[i - k:i]
            c[h, text[i]] += 1
            c[h] += 1
            followers[h].add(text[i])

    for text, label in learned:
        if label == cls:
            for i in range(len(text)):
                add(text, i)
    total = 0.0
    for i in range(len(data)):
        p = 1 / 256
        for k in range(min(order, i) + 1):
            h = data[i - k:i]
            n = c[h]
            if n:
                p = max(c[h, data[i]] - 0.5, 0) / n + len(followers[h]) / (2 * n) * p
        total += math.log(p)
        add(data, i)
    return total


def test_scores_are_the_documented_adaptive_ppm_d(sms):
    model = ByteContexts(3, 1 << 22)
    learned = sms[:60]
    for data, cls in learned:
        model.learn(data, cls)
    for data, _ in sms[60:70]:
        got = model.score(data)
        for cls in (0, 1):
            assert got[cls] == pytest.approx(
                _reference_log_likelihood(learned, data, cls, 3), rel=1e-12)


def test_two_shards_merged_equal_one_model(sms):
    one, shards = ByteContexts(4, 1 << 25), (ByteContexts(4, 1 << 25), ByteContexts(4, 1 << 25))
    for i, (data, cls) in enumerate(sms[:300]):
        one.learn(data, cls)
        shards[i % 2].learn(data, cls)
    merged = shards[0].merge(shards[1])
    assert one.used < one.slots // 4  # nothing forgotten: the sum is exact
    assert _entries(merged) == _entries(one)
    assert merged.used == one.used
    for data, _ in sms[300:340]:
        assert merged.score(data) == one.score(data)


def test_merge_refuses_another_order():
    with pytest.raises(ValueError, match="order 3"):
        ByteContexts(4, 1 << 20).merge(ByteContexts(3, 1 << 20))


def test_the_memory_budget_holds_on_a_long_stream(sms):
    """A budget of 256 KiB on the whole SMS stream (~460 kB of text, ~1.5 million context keys
    at order 4 without a bound): the table never outgrows the budget nor half its slots, it
    forgets (at least once), what stays is consistent (n and d are their counts'), and the
    model still ranks spam above ham."""
    budget = 1 << 18
    model = ByteContexts(4, budget)
    assert model.nbytes <= budget and model.nbytes == model.slots * SLOT_BYTES
    ratios, labels, emptied = [], [], 0
    for data, cls in sms:
        data = data[:model.max_bytes()]
        ham, spam = model.score(data)
        ratios.append(spam - ham)
        labels.append(bool(cls))
        before = model.used
        model.learn(data, cls)
        emptied += model.used < before
        assert model.used == int((model.keys >= 0).sum()) <= model.slots // 2
        assert model.nbytes <= budget
    assert emptied >= 1
    keys, counts, distinct = model.entries()
    symbol = (keys & ppm.CONTEXT_FLAG) == 0
    by_context: dict = defaultdict(lambda: np.zeros(4))
    for k, c in zip(keys[symbol].tolist(), counts[:, symbol].T, strict=True):
        context = ((k & ((1 << 56) - 1)) >> 8) | (k >> 56 << 56) | ppm.CONTEXT_FLAG
        by_context[context] += (*c, *(c > 0))
    for k, c, d in zip(keys[~symbol].tolist(), counts[:, ~symbol].T, distinct[:, ~symbol].T,
                       strict=True):
        assert by_context.pop(k).tolist() == [*c, *d]
    assert not by_context  # every (context, byte) key has its context
    assert exact_auc(np.array(labels), np.array(ratios)) > 0.95


def test_a_message_too_long_for_the_budget_is_refused():
    model = ByteContexts(4, 1 << 16)
    with pytest.raises(ValueError, match="longer than the table takes"):
        model.learn(b"x" * (model.max_bytes() + 1), 0)
    with pytest.raises(ValueError, match="cannot hold a message of 2500 bytes"):
        SpamFilter(ppm_order=6, ppm_memory=1 << 16)


def test_spam_filter_saves_and_loads_its_byte_contexts(sms, tmp_path):
    texts = [m.text for m in iter_sms_spam_stream()][:260]
    labels = ["spam" if cls else "ham" for _, cls in sms[:260]]
    f = SpamFilter(ppm_order=4, max_ham_rate=0.01)
    f.learn_many(texts[:200], labels[:200])
    f.save(tmp_path / "f.snb")
    g = load_model(tmp_path / "f.snb")
    assert g.ppm_order == 4 and _entries(g.contexts) == _entries(f.contexts)
    assert np.array_equal(g.score_many(texts[200:]), f.score_many(texts[200:]))
    for text, label in zip(texts[200:], labels[200:], strict=True):
        f.learn_one(text, label)
        g.learn_one(text, label)
    assert _entries(g.contexts) == _entries(f.contexts)


def test_spam_filter_adds_the_weighted_ratio_and_merges_it(sms):
    texts = [m.text for m in iter_sms_spam_stream()][:300]
    labels = ["spam" if cls else "ham" for _, cls in sms[:300]]
    plain, with_ppm = SpamFilter(), SpamFilter(ppm_order=4, ppm_weight=2.0)
    shards = SpamFilter(ppm_order=4, ppm_weight=2.0), SpamFilter(ppm_order=4, ppm_weight=2.0)
    for i, (text, label) in enumerate(zip(texts[:250], labels[:250], strict=True)):
        plain.learn_one(text, label)
        with_ppm.learn_one(text, label)
        shards[i % 2].learn_one(text, label)
    merged = shards[0].merge(shards[1])
    for text in texts[250:]:
        spam, ham = with_ppm.contexts.score(ppm_bytes(text))  # its classes: spam 0, ham 1
        assert with_ppm.score_one(text) == plain.score_one(text) + 2.0 * (spam - ham) / 2500
        assert merged.score_one(text) == pytest.approx(with_ppm.score_one(text), abs=1e-12)


def test_spam_filter_with_ppm_rejects_tokens():
    f = SpamFilter(ppm_order=3)
    with pytest.raises(InvalidRecord, match="ppm_order reads the raw message text"):
        f.learn_one(frozenset({"free", "prize"}), "spam")
    assert f.n_learned == 0
    with pytest.raises(InvalidRecord, match=r"row 1.*ppm_order reads the raw message text"):
        f.learn_many(["free prize", {"lunch": 1}], ["spam", "ham"])
    assert f.n_learned == 0 and f.contexts.used == 0


def test_each_byte_is_coded_by_a_distribution_over_the_256_bytes(sms):
    """The interpolation keeps every P_k normalised: after any prefix, the probabilities of the
    256 possible next bytes sum to 1, under a class that learned messages and one that did not."""
    model = ByteContexts(4, 1 << 22)
    for data, _ in sms[:80]:
        model.learn(data, 0)
    prefix = sms[80][0][:30]
    before = model.score(prefix)
    for cls in (0, 1):
        total = math.fsum(math.exp(model.score(prefix + bytes([b]))[cls] - before[cls])
                          for b in range(256))
        assert total == pytest.approx(1.0, abs=1e-12)


def test_decay_scales_c_and_n_and_keeps_d(sms):
    """Forgetting by a factor: every c and n multiplied (so each P_k's first term is unchanged
    up to the −½ and the escape mass grows), d kept: no byte becomes unseen."""
    model = ByteContexts(3, 1 << 22)
    for data, cls in sms[:100]:
        model.learn(data, cls)
    before = _entries(model)
    f = SpamFilter(ppm_order=3)
    f.contexts = model
    f.decay(0.5)
    after = _entries(model)
    assert after.keys() == before.keys()
    for key, (c0, c1, d0, d1) in before.items():
        assert after[key] == (c0 * 0.5, c1 * 0.5, d0, d1)

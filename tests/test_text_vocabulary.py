"""TextVocabulary: a text attribute's token → column map, read like the dict it replaced."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from streamnb.stats.encoder import encode, text_columns, text_lookup
from streamnb.stats.text_vocabulary import TextVocabulary


def _filled() -> tuple[TextVocabulary, dict[str, int]]:
    vocabulary, reference = TextVocabulary(), {}
    rng = np.random.default_rng(5)
    column = 0
    for k in range(40):  # registrations one at a time and in bulk, columns with gaps
        tokens = [f"w{k}_{i}" for i in range(int(rng.integers(1, 30)))] + [f"é{k}"]
        if k == 3:
            tokens.append("\ud800")  # UTF-8 cannot encode it: kept beside the table
        column += int(rng.integers(0, 4))
        if k % 2:
            for t in tokens:
                vocabulary[t] = reference[t] = column
                column += 1
        else:
            vocabulary.register(tokens, range(column, column + len(tokens)))
            reference.update(zip(tokens, range(column, column + len(tokens)), strict=True))
            column += len(tokens)
    return vocabulary, reference


def test_reads_like_the_dict_of_its_registrations():
    vocabulary, reference = _filled()
    assert len(vocabulary) == len(reference) and list(vocabulary) == list(reference)
    assert dict(vocabulary) == reference and vocabulary == reference
    assert all(vocabulary[t] == j and vocabulary.get(t) == j and t in vocabulary
               for t, j in reference.items())
    assert vocabulary.get("absent") is None and vocabulary.get("absent", -1) == -1
    assert "absent" not in vocabulary
    with pytest.raises(KeyError):
        vocabulary["absent"]
    bag = frozenset([*list(reference)[::7], "new1", "new2"])
    columns, new = vocabulary.lookup(bag, grow=True, first_new=10**6)
    assert sorted(new) == ["new1", "new2"]
    ahead = {t: 10**6 + k for k, t in enumerate(new)}  # numbered in the order listed
    assert columns.tolist() == [reference.get(t, ahead.get(t)) for t in bag]
    assert vocabulary.lookup(bag, grow=False)[0].tolist() == [
        reference[t] for t in bag if t in reference]


def test_registered_columns_do_not_move():
    vocabulary, reference = _filled()
    token = next(iter(reference))
    with pytest.raises(ValueError):
        vocabulary[token] = 10**6
    with pytest.raises(ValueError):
        vocabulary.register(["fresh", token], range(10**6, 10**6 + 2))
    with pytest.raises(ValueError):
        vocabulary.register(["fresh"], range(3))
    with pytest.raises(ValueError, match="consecutive"):  # tokens registered at once
        vocabulary.register(["fresh", "fresher"], range(10**6, 10**6 + 4, 2))
    assert dict(vocabulary) == reference  # nothing added by the refused registrations


def test_forgets_newest_first_as_a_rollback_does():
    vocabulary, reference = _filled()
    tokens = list(reference)
    with pytest.raises(KeyError):
        del vocabulary[tokens[0]]  # not the newest: columns of older tokens never change
    del vocabulary[tokens[-1]]
    vocabulary.truncate(len(tokens) - 10)
    assert dict(vocabulary) == {t: reference[t] for t in tokens[:-10]}
    vocabulary["again"] = 7
    assert vocabulary["again"] == 7 and len(vocabulary) == len(tokens) - 9


def test_copies_and_pickles_with_its_tokens():
    vocabulary, reference = _filled()
    for twin in (copy.deepcopy(vocabulary), pickle.loads(pickle.dumps(vocabulary))):
        assert dict(twin) == reference
        twin["only in the copy"] = 0
        assert "only in the copy" not in vocabulary


def test_a_batch_looked_up_then_registered_looks_up_only_its_new_tokens(monkeypatch):
    """The encoder's text_lookup keeps the lookups of the frozensets met at one schema version (a
    batch scored): registering them in turn afterwards (learning the batch) gives, bag by bag,
    the columns and registrations a schema that never saw the batch gives, and each bag is
    looked up whole once, later lookups reading only the tokens that were new. A rollback in
    between forgets the kept lookups (the columns it takes back would be stale)."""
    from itertools import islice

    from streamnb.datasets import iter_sms_spam_stream
    from streamnb.features.sms import tokenize_sms
    from streamnb.stats import Schema

    bags = [tokenize_sms(m.text) for m in islice(iter_sms_spam_stream(), 300)]
    fresh, schema = Schema(), Schema()
    for s in (fresh, schema):
        encode(s, {"body": bags[0]}, "record 0", grow=True)
    a = schema.attributes.get("body")
    looked_up: list[int] = []
    real = TextVocabulary.lookup
    mine = schema.text_values[0]

    def lookup(self: TextVocabulary, bag, *args):  # the size of each bag read (-: a dict)
        if self is mine:
            looked_up.append(len(bag) if type(bag) is frozenset else -len(bag))
        return real(self, bag, *args)

    monkeypatch.setattr(TextVocabulary, "lookup", lookup)
    batch = bags[1:200]
    for bag in batch:  # scored: nothing registered
        text_lookup(schema, a, bag)
    assert looked_up == [len(bag) for bag in batch]
    looked_up.clear()
    for i, bag in enumerate(batch, 1):  # learned in turn
        expected = real(fresh.text_values[0], bag, True, fresh.n_columns)
        assert np.array_equal(text_columns(schema, a, bag, grow=True),
                              text_columns(fresh, a, bag, grow=True)), i
        assert np.array_equal(text_lookup(schema, a, bag)[0], expected[0])
    assert all(n <= 0 for n in looked_up)  # only the new tokens, as a dict, were read again
    assert sum(looked_up) < 0 and list(schema.column_value) == list(fresh.column_value)
    # kept lookups, then a rollback of what a rejected batch registered: looked up whole again
    rest = bags[200:]
    for bag in rest:
        text_lookup(schema, a, bag)
    mark = schema.mark()
    for bag in rest[:50]:
        text_columns(schema, a, bag, grow=True)
    schema.rollback(mark)
    looked_up.clear()
    for bag in rest:
        assert np.array_equal(text_columns(schema, a, bag, grow=True),
                              text_columns(fresh, a, bag, grow=True))
    assert looked_up[0] == len(rest[0])
    assert list(schema.column_value) == list(fresh.column_value)


def test_a_model_that_only_scores_keeps_a_batch_of_lookups_at_most():
    """Scoring without learning leaves the schema's version as it is: the lookups kept for
    learning are a batch's (1,024) at most, not every message's, and stay right."""
    from streamnb.stats import Schema

    schema = Schema()
    encode(schema, {"body": frozenset({"seen"})}, "record 0", grow=True)
    a = schema.attributes.get("body")
    bags = [frozenset({"seen", f"new{i}"}) for i in range(3000)]
    for bag in bags:
        columns, new = text_lookup(schema, a, bag)
        assert len(schema._text_lookups) <= 1024
        assert sorted(columns.tolist()) == [0, schema.n_columns] and len(new) == 1

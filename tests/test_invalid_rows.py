"""A batch error names its row as a typed attribute (``InvalidRecord.row``), for every model of
the registry and both batch forms (a list of mappings, a DataFrame), when learning and when
predicting: the service drops exactly that record and learns the rest without re-trying the
batch one record at a time."""

from __future__ import annotations

import pandas as pd
import pytest

from streamnb.datasets import load, load_sms_spam
from streamnb.models.registry import CONTINUOUS, MODELS
from streamnb.stats import InvalidRecord, RecordName

VOTE = load("vote")
IRIS = load("iris")


def _data(name: str) -> tuple[list, list, object]:
    """Twelve real records the model takes, their labels, and a value it refuses."""
    if name == "spam-filter":
        sms = load_sms_spam()[:12]
        return [m.text for m in sms], [m.label for m in sms], 17
    if name in CONTINUOUS or name == "ccica-nb":
        return IRIS.records[::13][:12], IRIS.labels[::13][:12], {"petalwidth": "wide"}
    return VOTE.records[:12], VOTE.labels[:12], {"crime": object()}


def _with_bad(records: list, bad: object, row: int) -> list:
    if isinstance(bad, dict) and isinstance(records[row], dict):
        return [*records[:row], {**records[row], **bad}, *records[row + 1:]]
    return [*records[:row], bad, *records[row + 1:]]


def test_record_name_is_text_with_a_row():
    name = RecordName("row", 17)
    assert name == "row 17" and name.row == 17
    assert InvalidRecord(name, "f", "why").row == 17
    assert InvalidRecord("record 3", "f", "why").row is None


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("row", [0, 7, 11])
def test_a_batch_error_names_its_row(name, row):
    records, labels, bad = _data(name)
    model = MODELS[name]()
    model.learn_many(records[:6], labels[:6])
    batch = _with_bad(records, bad, row)
    forms = [batch]
    if all(isinstance(x, dict) for x in batch):
        forms.append(pd.DataFrame(batch))
    for X in forms:
        with pytest.raises(InvalidRecord) as learned:
            model.learn_many(X, labels)
        assert learned.value.row == row and str(learned.value.record) == f"row {row}"
        with pytest.raises(InvalidRecord) as predicted:
            model.predict_proba_many(X)
        assert predicted.value.row == row
    assert model.n_learned == 6  # the rejected batches changed nothing

"""Missing values: what counts as one, and mode imputation from the counts.

What is missing is :func:`~streamnb.stats.values.is_missing`'s rule (None or NaN; re-exported
here). A missing nominal value can be skipped (its factor left out, the default of every model) or
replaced by the attribute's mode, as Weka's ``ReplaceMissingValues`` does before ``BayesNet``
learns and predicts. Here the mode is read from :class:`~streamnb.stats.CountStatistics`
(all classes together), optionally with the values observed in a batch about to be learned, so
imputation needs no state of its own and stays current, mergeable and decayable with the counts.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from streamnb.stats.frames import is_frame
from streamnb.stats.schema import Schema
from streamnb.stats.values import NOMINAL, InvalidRecord, is_missing, nominal_value

__all__ = ["fill_missing", "is_missing", "nominal_modes"]


def nominal_modes(stats: Any, records: Sequence[Mapping] | Any = ()) -> dict[Hashable, Any]:
    """Each nominal attribute's most frequent value.

    Counted over the records of ``stats`` (every class) plus the values observed in
    ``records``: nominal attributes the schema knows, those it declares nominal, and new
    attributes with str values. Ties go to the value registered (or seen) first. Attributes
    with no observed value have no mode.

    Examples
    --------
    >>> from streamnb.stats import CountStatistics
    >>> stats = CountStatistics()
    >>> _ = stats.update_many([{"colour": "red"}, {"colour": "blue"}, {"colour": "blue"}],
    ...                       ["+", "-", "+"])
    >>> nominal_modes(stats)
    {'colour': 'blue'}
    >>> nominal_modes(stats, [{"colour": "red", "size": "S"}, {"colour": "red"}])
    {'colour': 'red', 'size': 'S'}

    """
    schema: Schema = stats.schema
    totals: dict[Hashable, dict[Any, float]] = {}
    if schema.n_nominal and stats.n_classes:
        column_totals = stats.value_counts.sum(axis=0)
        for a, values in zip(schema.nominal_attributes, schema.nominal_values, strict=True):
            if a in schema.binned:  # numeric to the user: no mode (a bin is not a value)
                continue
            totals[schema.attributes.name(a)] = {v: float(column_totals[j])
                                                   for v, j in values.items()}
    if is_frame(records):
        records = records.to_dict("records")
    for x in records:
        if not isinstance(x, Mapping):
            continue  # rejected, with its row number, by the model's own validation
        for name, value in x.items():
            if is_missing(value):
                continue
            a = schema.attributes.get(name)
            # a binned float attribute is numeric to the user: its missing values stay missing
            nominal = (schema.kinds[a] == NOMINAL and a not in schema.binned if a is not None
                       else name in schema.declared_nominal or isinstance(value, str | np.str_))
            if nominal:
                try:
                    key = nominal_value(value, "record", name)
                except InvalidRecord:
                    continue  # likewise
                counts = totals.setdefault(name, {})
                counts[key] = counts.get(key, 0.0) + 1.0
    # max() keeps the first of equal counts: registration order, then order of appearance
    return {name: max(counts, key=counts.__getitem__) for name, counts in totals.items()
            if any(counts.values())}


def fill_missing(records: Sequence[Mapping] | Any, modes: Mapping[Hashable, Any]) -> Any:
    """``records`` with every missing (None, NaN or absent) value of an attribute in ``modes``
    replaced by its mode; records without a missing value are passed through unchanged.

    Examples
    --------
    >>> fill_missing([{"colour": None, "n": 2.0}, {"colour": "red"}, {"n": 1.0}],
    ...              {"colour": "blue"})
    [{'colour': 'blue', 'n': 2.0}, {'colour': 'red'}, {'n': 1.0, 'colour': 'blue'}]

    """
    if is_frame(records):  # pandas is optional: only DataFrame input needs it
        filled = records.copy()
        for name, mode in modes.items():
            column = filled[name].astype(object) if name in filled else None
            filled[name] = mode if column is None else column.where(column.notna(), mode)
        return filled
    out: list[Mapping] = []
    for x in records:
        gaps = [name for name in modes if is_missing(x.get(name))] if isinstance(x, Mapping) \
            else []
        out.append({**x, **{name: modes[name] for name in gaps}} if gaps else x)
    return out

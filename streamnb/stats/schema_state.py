"""A :class:`~streamnb.stats.schema.Schema` as a state file holds it, and back.

The header is small JSON: the declared nominal names, the attributes with their kinds and the
nominal values. Per column its attribute (``column_attributes``, int32), and each text
attribute's tokens, in order of registration, as the UTF-8 its vocabulary stores,
NUL-separated (``text_tokens.<slot>``): a vocabulary's 10⁵–10⁶ tokens as JSON lists were most
of the cost of a service's snapshot, each str joined or encoded, scanned for non-finite floats
and decoded again. A vocabulary with a token UTF-8 cannot encode (a lone surrogate) or holding
a NUL stays a JSON list. States written with one JSON list of every column's value
(``column_values``) or of ``[attribute, value]`` pairs (``columns``) read alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import compress
from typing import Any

import numpy as np

from streamnb.stats.binning import FINE_BINS
from streamnb.stats.codec import decode, encode, unencodable
from streamnb.stats.collector import paused_collector
from streamnb.stats.persist import header_int
from streamnb.stats.schema import Schema
from streamnb.stats.text_vocabulary import TextVocabulary
from streamnb.stats.values import KINDS, NOMINAL, NUMERIC, TEXT, TOKEN

__all__ = ["schema_from_json", "schema_from_state", "schema_to_json", "schema_to_state"]


def schema_to_state(schema: Schema) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """``schema`` as a state file holds it: a JSON-able header and arrays."""
    return _state(schema, inline=False)


def schema_to_json(schema: Schema) -> dict[str, Any]:
    """:func:`schema_to_state` as JSON alone, its arrays as lists."""
    return _state(schema, inline=True)[0]


def schema_from_state(header: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> Schema:
    """The schema :func:`schema_to_state` (or :func:`schema_to_json`, with no arrays) gave."""
    with paused_collector():
        return _from_state(header, arrays)


def schema_from_json(data: Mapping[str, Any]) -> Schema:
    return schema_from_state(data, {})


def _state(schema: Schema, inline: bool) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    with paused_collector():
        header = {
            "declared_nominal": [encode(n) for n in sorted(schema.declared_nominal, key=repr)],
            "numeric": schema.numeric,
            "binned": sorted(schema.binned),
            "grid": schema.grid,
            "fine_bins": schema.fine_bins,
            "attributes": [[encode(n), KINDS[k]] for n, k in zip(
                schema.attributes.names(), schema.kinds, strict=True)],
            # a token attribute's column has no value: only the nominal ones are listed
            "nominal_values": _encoded(schema.column_value.take(
                np.flatnonzero(schema._column_slot.view() >= 0))),
        }
        arrays = {"column_attributes": schema.column_attribute.copy()}
        # per text attribute, its tokens in order of registration (their columns ascend)
        header["text_tokens"] = []
        for slot, vocabulary in enumerate(schema.text_values):
            joined = None if inline else vocabulary.joined()
            if joined is None:
                header["text_tokens"].append(list(vocabulary))
            else:
                header["text_tokens"].append(None)
                arrays[f"text_tokens.{slot}"] = np.frombuffer(joined, dtype=np.uint8)
        if inline:
            header["column_attributes"] = arrays.pop("column_attributes").tolist()
        return header, arrays


def _from_state(data: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> Schema:
    schema = Schema(nominal=[decode(n, "declared nominal name") for n in data["declared_nominal"]],
                 numeric=bool(data.get("numeric", True)))  # older states: True
    schema.binned = {header_int(a, "binned attribute") for a in data.get("binned", ())}
    # older states: octave bins where they hold any
    schema.grid = bool(data.get("grid", not schema.binned))
    schema.fine_bins = header_int(data.get("fine_bins", FINE_BINS), "fine_bins", low=2)
    if any(a >= len(data["attributes"]) for a in schema.binned):
        raise ValueError("a binned attribute is not an attribute")
    for name, kind in data["attributes"]:
        name, kind = decode(name, "attribute name"), KINDS.index(kind)
        if name in schema.attributes:
            raise ValueError(f"attribute {name!r} appears twice")
        a = schema.attributes.add(name)
        schema.kinds.append(kind)
        if kind == NOMINAL:
            schema.slots.append(len(schema.nominal_attributes))
            schema.nominal_attributes.append(a)
            schema.nominal_values.append({})
        elif kind == NUMERIC:
            schema.slots.append(len(schema.numeric_attributes))
            schema.numeric_attributes.append(a)
        elif kind == TEXT:
            schema.slots.append(len(schema.text_attributes))
            schema.text_attributes.append(a)
            schema.text_values.append(TextVocabulary())
        else:
            schema.slots.append(-1)
    if "columns" in data:  # states written before the per-column lists
        pairs = data["columns"]
        attribute_of = [a for a, _ in pairs]
    elif "column_attributes" in arrays:
        attribute_of = arrays["column_attributes"]
    else:
        attribute_of = data["column_attributes"]
    if not isinstance(attribute_of, np.ndarray):
        if not set(map(type, attribute_of)) <= {int}:
            raise ValueError("a column's attribute is not an int")
    elif attribute_of.dtype.kind not in "iu":
        raise ValueError(f"the columns' attributes are of dtype {attribute_of.dtype}")
    owner = np.asarray(attribute_of, dtype=np.int64).reshape(-1)
    outside = owner[(owner < 0) | (owner >= len(schema.kinds))]
    if len(outside):
        raise ValueError(f"a column names attribute {int(outside[0])}, of "
                         f"{len(schema.kinds)}")
    kind_of_column = np.asarray(schema.kinds, dtype=np.int8)[owner]
    # the text slot of each text column, −1 for the others
    text_slot = np.where(kind_of_column == TEXT, np.asarray(schema.slots, dtype=np.int64)[
        owner], -1)
    n_text = np.bincount(text_slot[text_slot >= 0], minlength=len(schema.text_values))
    if "columns" in data or "column_values" in data:  # one list of every column's value
        values = [v for _, v in pairs] if "columns" in data else data["column_values"]
        if len(owner) != len(values):
            raise ValueError(f"{len(owner)} column attributes but {len(values)} "
                             "column values")
        nominal = list(compress(values, (kind_of_column == NOMINAL).tolist()))
        listed = [list(compress(values, (text_slot == slot).tolist()))
                  for slot in range(len(schema.text_values))]
    else:
        nominal, listed = data["nominal_values"], data["text_tokens"]
        if len(listed) != len(schema.text_values):
            raise ValueError(f"{len(listed)} token lists for {len(schema.text_values)} "
                             "text attributes")
    if len(nominal) != int((kind_of_column == NOMINAL).sum()):
        raise ValueError(f"{len(nominal)} nominal values for "
                         f"{int((kind_of_column == NOMINAL).sum())} nominal columns")
    for slot, (given, n) in enumerate(zip(listed, n_text.tolist(), strict=True)):
        if given is None:  # its table's UTF-8, registered here at once
            joined = arrays[f"text_tokens.{slot}"]
            if joined.dtype != np.uint8 or joined.ndim != 1:
                raise ValueError(f"the tokens of text attribute "
                                 f"{schema.text_attributes[slot]} are a {joined.dtype} "
                                 f"array of shape {joined.shape}")
            schema.text_values[slot].register_joined(joined,
                                                     np.flatnonzero(text_slot == slot))
            continue
        if not set(map(type, given)) <= {str}:
            raise ValueError(f"a token of text attribute {schema.text_attributes[slot]} "
                             "is not a str")
        if unencodable("".join(given)):  # one scan; then the token at fault
            name = schema.attributes.name(schema.text_attributes[slot])
            for token in given:
                decode(token, f"token of text attribute {name!r}")
        if len(given) != n:
            raise ValueError(f"{len(given)} tokens of text attribute "
                             f"{schema.text_attributes[slot]} for {n} columns")
    # runs of consecutive columns of one attribute: a text vocabulary's tokens are
    # registered a run at a time (add_new refuses a repeat), 10⁵–10⁶ of them
    starts = np.flatnonzero(np.diff(owner)) + 1
    text_at, nominal_at = [0] * len(listed), 0
    for start, end in zip([0, *starts.tolist()], [*starts.tolist(), len(owner)],
                          strict=True):
        if start == end:
            continue
        a = int(owner[start])
        kind = schema.kinds[a]
        if kind == TEXT:  # the run's tokens are the next ones of its vocabulary
            slot, at, n = schema.slots[a], text_at[schema.slots[a]], end - start
            text_at[slot] += n
            mine = listed[slot]
            if mine is not None:  # (else registered above)
                schema.text_values[slot].register(
                    mine if n == len(mine) else mine[at:at + n], range(start, end))
            schema.column_value.extend_text(slot, at, n)
            continue
        for j in range(start, end):
            if kind == TOKEN:
                if schema.slots[a] >= 0:
                    raise ValueError(f"token {schema.attributes.name(a)!r} has two "
                                     "columns")
                schema.slots[a] = j
                schema.attributes.set_value(a, j)
                value = None
            elif kind == NOMINAL:
                try:
                    value = decode(nominal[nominal_at], "nominal value")
                except ValueError as exc:
                    raise ValueError(f"attribute {schema.attributes.name(a)!r}: {exc}") from None
                nominal_at += 1
                known = schema.values_of(a)
                if value in known:
                    raise ValueError(f"value {value!r} of attribute {a} appears twice")
                known[value] = j
            else:
                raise ValueError(f"numeric attribute {a} cannot own column {j}")
            schema.column_value.append(value)
    if any(k == TOKEN and j < 0 for k, j in zip(schema.kinds, schema.slots, strict=True)):
        raise ValueError("a token attribute has no column")
    schema._rebuild_arrays(owner)
    return schema


def _encoded(values: list[Any]) -> list[Any]:
    # only a tuple value needs encoding: each value's call was a quarter of writing a schema
    return list(map(encode, values)) if tuple in set(map(type, values)) else values

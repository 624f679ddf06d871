"""save/load: the versioned, checksummed, pickle-free state file (interfaces.md, persist.py)."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import pickle
import struct

import msgspec
import numpy as np
import pytest

from conftest import MESSAGES, MIXED, WEATHER, assert_proba_close
from streamnb import (
    LDA,
    Dirichlet,
    Indifferent,
    IndifferentNB,
    Laplace,
    MaximumLikelihood,
    MEstimate,
    NaiveBayes,
    StateFileError,
    load_model,
)
from streamnb.models.persistence import from_state
from streamnb.stats import read_state, write_state
from streamnb.stats.encoder import encode
from streamnb.stats.persist import FORMAT_VERSION, dumps_state, encode_header, loads_state

DATA = WEATHER + MESSAGES + MIXED + [({("bi", "gram"): True, 7: "int name", "o": "s"}, 3)]
QUERIES = [
    {"o": "s", "w": "weak", "h": "hi"},
    {"free": 1, "money": True, "o": "zzz"},
    {"colour": "red", "spam": True, "len": 3.5, "ratio": 0.4},
    {"colour": "blue", "egg": 1, "len": 6.0, "h": "norm"},
    {("bi", "gram"): True},
    {"o": "s", "w": "strong", "h": "norm"},
]
MORE = [
    ({"o": "fog", "newtok": True, "len": 1.0}, "new"),
    ({"colour": "teal", "free": 2}, "a"),
    ({"h": "hi", "ratio": 0.1}, 3),
]

MODELS = {
    "ml": lambda: NaiveBayes(estimator="ml"),
    "laplace": lambda: NaiveBayes(estimator="laplace"),
    "m-estimate": lambda: NaiveBayes(estimator="m-estimate"),
    "bibl": lambda: NaiveBayes(estimator="bibl"),
    "indifferent": lambda: NaiveBayes(estimator="indifferent"),
    "IndifferentNB": lambda: IndifferentNB(),
    "declared": lambda: IndifferentNB(
        nominal=["code"], domains={"o": ["s", "c", "r", "fog"]}, var_smoothing=1e-6
    ),
}


def fit(model, data):
    for x, y in data:
        model.learn_one(x, y)
    return model


def saved(tmp_path, model=None, name="model.snb"):
    model = model if model is not None else fit(NaiveBayes(), DATA)
    path = tmp_path / name
    model.save(path)
    return path


def with_checksum(body: bytes) -> bytes:
    return body + hashlib.sha256(body).digest()


@pytest.mark.parametrize("name", list(MODELS))
def test_round_trip_every_estimator(tmp_path, name):
    """load(save(m)) has the same statistics, schema, parameters and predictions, and goes on
    learning exactly like the model that was never saved."""
    model = fit(MODELS[name](), DATA)
    model.decay(0.75)  # non-integral counts survive too
    path = saved(tmp_path, model)
    loaded = type(model).load(path)
    assert type(loaded) is type(model)
    assert loaded._get_params() == model._get_params()
    assert loaded.n_learned == model.n_learned
    assert loaded.stats.to_dict() == model.stats.to_dict()
    assert loaded.stats.schema.to_json() == model.stats.schema.to_json()
    for q in QUERIES:
        assert loaded.predict_proba_one(q) == model.predict_proba_one(q)
    fit(loaded, MORE)
    fit(model, MORE)
    assert loaded.stats.to_dict() == model.stats.to_dict()
    for q in QUERIES:
        assert_proba_close(loaded.predict_proba_one(q), model.predict_proba_one(q), tol=0)


def test_continue_after_load_equals_never_saving(tmp_path):
    """Learn A, save, load, learn B == learn A + B without saving (to_dict and predictions)."""
    a = fit(IndifferentNB(), DATA[:10])
    path = saved(tmp_path, a)
    resumed = fit(IndifferentNB.load(path), DATA[10:])
    never = fit(IndifferentNB(), DATA)
    assert resumed.stats.to_dict() == never.stats.to_dict()
    assert resumed.n_learned == never.n_learned == len(DATA)
    for q in QUERIES:
        assert resumed.predict_proba_one(q) == never.predict_proba_one(q)


def test_empty_model_round_trip(tmp_path):
    """A model that has learned nothing saves and loads, and then learns normally."""
    loaded = NaiveBayes.load(saved(tmp_path, NaiveBayes(nominal=["code"])))
    assert loaded.predict_proba_one({"o": "s"}) == {}
    fit(loaded, WEATHER)
    assert loaded.stats.to_dict() == fit(NaiveBayes(nominal=["code"]), WEATHER).stats.to_dict()


def test_empty_model_with_declared_domains_round_trip(tmp_path):
    """A fresh model with ``domains=`` (e.g. a service's first snapshot) saves and loads.

    Regression: the count arrays were sized on the first update only, so the file held
    value_counts of shape (0, 0) against a schema with declared columns and load failed."""
    loaded = NaiveBayes.load(saved(tmp_path, NaiveBayes(domains={"o": ["s", "c"]})))
    assert loaded.predict_proba_one({"o": "s"}) == {}
    fit(loaded, WEATHER)
    assert (
        loaded.stats.to_dict()
        == fit(NaiveBayes(domains={"o": ["s", "c"]}), WEATHER).stats.to_dict()
    )


@pytest.mark.parametrize(
    "estimator",
    [
        MEstimate(m=2),
        Dirichlet(
            class_prior={"no": 2.0, "yes": 0.5},
            value_prior={"o": {"s": 3.0}, "w": 2.0},
            default=1.5,
        ),
        Laplace(),
        Indifferent(),
        MaximumLikelihood(),
    ],
    ids=["MEstimate(m=2)", "Dirichlet(dicts)", "Laplace()", "Indifferent()", "MaximumLikelihood()"],
)
def test_round_trip_estimator_instance(tmp_path, estimator):
    """NaiveBayes(estimator=<Estimator instance>) saves and loads with its hyperparameters.

    Regression: save() encoded river's ``_get_params()``, a (class, params) tuple for a nested
    estimator → TypeError 'cannot store a type in a state file'."""
    model = fit(NaiveBayes(estimator=estimator), DATA)
    loaded = NaiveBayes.load(saved(tmp_path, model))
    assert type(loaded.estimator) is type(estimator)
    assert loaded.estimator._get_params() == estimator._get_params()
    for q in QUERIES:
        assert loaded.predict_proba_one(q) == model.predict_proba_one(q)


def test_file_is_not_a_pickle(tmp_path, monkeypatch):
    """The file starts with the magic b'STREAMNB', then the format version and a JSON header;
    loading never calls pickle."""
    path = saved(tmp_path)
    data = path.read_bytes()
    assert data[:8] == b"STREAMNB"
    _magic, version, head_len = struct.unpack_from("<8sIQ", data)
    assert version == FORMAT_VERSION == 1
    header = json.loads(data[20 : 20 + head_len])
    assert header["meta"]["model"] == "NaiveBayes"
    assert data[-32:] == hashlib.sha256(data[:-32]).digest()
    with pytest.raises(pickle.UnpicklingError):
        pickle.loads(data)

    def no_pickle(*args, **kwargs):
        raise AssertionError("pickle used while loading a state file")

    monkeypatch.setattr(pickle, "loads", no_pickle)
    monkeypatch.setattr(pickle, "load", no_pickle)
    monkeypatch.setattr(pickle, "Unpickler", no_pickle)
    assert load_model(path).n_learned == len(DATA)


def test_no_temporary_files_left(tmp_path):
    """save writes atomically (temp file + rename): only the target remains."""
    model = fit(NaiveBayes(), DATA)
    path = saved(tmp_path, model)
    model.learn_one({"o": "s"}, "no")
    model.save(path)  # overwrite
    assert [p.name for p in tmp_path.iterdir()] == ["model.snb"]
    assert NaiveBayes.load(path).n_learned == len(DATA) + 1


@pytest.mark.parametrize(
    ("corrupt", "message"),
    [
        (lambda d: d[:-10], "checksum"),
        (lambda d: d[: len(d) // 2], "checksum"),
        (lambda d: d[:30], "too short"),
        (
            lambda d: d[: len(d) // 2] + bytes([d[len(d) // 2] ^ 0x01]) + d[len(d) // 2 + 1 :],
            "checksum",
        ),
        (lambda d: d[:-1] + bytes([d[-1] ^ 0x80]), "checksum"),
        (lambda d: b"NOTSTRMB" + d[8:], "not a streamnb state file"),
        (lambda d: with_checksum(d[:8] + struct.pack("<I", 2) + d[12:-32]), "version 2"),
        (lambda d: with_checksum(d[:8] + struct.pack("<I", 0) + d[12:-32]), "version 0"),
        (lambda d: b"", "too short"),
        (lambda d: d + b"\x00", "checksum"),
    ],
    ids=[
        "truncated tail",
        "truncated half",
        "truncated header",
        "flipped byte",
        "flipped checksum",
        "wrong magic",
        "future version",
        "version 0",
        "empty file",
        "appended byte",
    ],
)
def test_corrupt_files_raise_state_file_error(tmp_path, corrupt, message):
    """Every damaged file raises StateFileError with a message saying what is wrong and which
    file it is."""
    path = saved(tmp_path)
    path.write_bytes(corrupt(path.read_bytes()))
    with pytest.raises(StateFileError, match=message) as err:
        load_model(path)
    assert str(path) in str(err.value)
    with pytest.raises(StateFileError):
        NaiveBayes.load(path)


def _schema(header):
    return header["statistics"]["schema"]


def _text_tokens_as_a_list(header, arrays):
    _schema(header)["text_tokens"] = [["MARK"]]
    del arrays["schema.text_tokens.0"]


@pytest.mark.parametrize(("model", "craft", "field"), [
    ("nb", lambda h, a: _schema(h)["attributes"][0].__setitem__(0, "MARK"), "attribute name"),
    ("nb", lambda h, a: _schema(h).__setitem__("declared_nominal", ["MARK"]),
     "declared nominal name"),
    ("nb", lambda h, a: _schema(h)["nominal_values"].__setitem__(0, "MARK"),
     "attribute 'colour': the state's nominal value"),
    ("nb", _text_tokens_as_a_list, "token of text attribute 'body'"),
    ("nb", lambda h, a: h["statistics"]["labels"].__setitem__(0, "MARK"), "label"),
    ("lda", lambda h, a: h["statistics"]["attributes"].__setitem__(0, "MARK"), "attribute name"),
    ("lda", lambda h, a: h["statistics"]["labels"].__setitem__(0, "MARK"), "label"),
])
def test_a_lone_surrogate_in_a_state_is_refused_naming_the_field(tmp_path, model, craft, field):
    """A state whose JSON holds a name, value, token or label with a lone surrogate (a
    ``"\\ud800"`` escape: valid JSON, but no UTF-8) does not load, so it is never a model
    that cannot be saved again: the file is refused as malformed, and the same header read
    by a parser that accepts the escape (Python's json) is refused naming the field."""
    if model == "nb":
        fitted = fit(NaiveBayes(nominal=["colour"]), [
            ({"colour": "red", "body": ["free", "prize"]}, "spam"),
            ({"colour": "blue", "body": ["lunch"]}, "ham")])
    else:
        fitted = fit(LDA(), [({"x": 1.0}, "a"), ({"x": 2.0}, "b")])
    header, arrays = fitted.to_state()
    craft(header, arrays)
    crafted = json.dumps(header).replace("MARK", "x\\ud800")
    path = tmp_path / "crafted.snb"
    write_state(path, msgspec.Raw(crafted.encode()), arrays)  # as it is
    with pytest.raises(StateFileError, match="malformed header") as err:
        load_model(path)
    assert str(path) in str(err.value)
    with pytest.raises(StateFileError, match=rf"{field} 'x\\ud800' holds a lone surrogate"):
        from_state(json.loads(crafted), arrays)


def test_missing_file_raises_state_file_error(tmp_path):
    with pytest.raises(StateFileError, match="no such state file"):
        IndifferentNB.load(tmp_path / "nope.snb")


def test_pickle_file_is_rejected(tmp_path):
    path = tmp_path / "model.pkl"
    path.write_bytes(pickle.dumps(fit(NaiveBayes(), WEATHER)))
    with pytest.raises(StateFileError, match="not a streamnb state file"):
        load_model(path)


def test_malformed_header_with_valid_checksum(tmp_path):
    """A well-checksummed file whose JSON header is garbage still raises StateFileError."""
    head = b"{not json"
    body = struct.pack("<8sIQ", b"STREAMNB", FORMAT_VERSION, len(head)) + head
    path = tmp_path / "bad.snb"
    path.write_bytes(with_checksum(body))
    with pytest.raises(StateFileError, match="malformed header"):
        load_model(path)


def test_inconsistent_arrays_raise_state_file_error(tmp_path):
    """Arrays whose shapes disagree with the schema raise StateFileError, not a crash."""
    model = fit(NaiveBayes(), DATA)
    header, arrays = model.to_state()
    arrays["value_counts"] = np.zeros((1, 1))
    path = tmp_path / "bad.snb"
    write_state(path, header, arrays)
    with pytest.raises(StateFileError, match="inconsistent model state"):
        load_model(path)
    header, arrays = model.to_state()
    write_state(path, {**header, "model": "NoSuchModel"}, arrays)
    with pytest.raises(StateFileError, match="unknown model"):
        load_model(path)


def test_loading_a_naive_bayes_file_as_indifferent_raises(tmp_path):
    path = saved(tmp_path, fit(NaiveBayes(estimator="indifferent"), WEATHER))
    with pytest.raises(StateFileError, match="NaiveBayes, not a IndifferentNB"):
        IndifferentNB.load(path)


def test_load_model_dispatches_by_class(tmp_path):
    """streamnb.load_model returns the class that was saved, with its parameters."""
    ind = saved(tmp_path, fit(IndifferentNB(var_smoothing=1e-5), WEATHER), "ind.snb")
    ml = saved(tmp_path, fit(NaiveBayes(estimator="ml"), WEATHER), "ml.snb")
    a, b = load_model(ind), load_model(ml)
    assert type(a) is IndifferentNB and a.var_smoothing == 1e-5
    assert type(b) is NaiveBayes and b.estimator == "ml"
    q = {"o": "s", "w": "strong", "h": "norm"}
    assert_proba_close(b.predict_proba_one(q), {"no": 32 / 65, "yes": 9 / 65, "maybe": 24 / 65})
    # a subclass file loads through its base class
    assert type(NaiveBayes.load(ind)) is IndifferentNB


def test_state_bytes_round_trip_dtypes():
    """dumps_state/loads_state restore every whitelisted dtype bit for bit."""
    arrays = {
        "f8": np.array([[1.5, -0.0], [np.inf, 3.0]]),
        "i8": np.arange(5, dtype=np.int64),
        "u1": np.array([0, 255], dtype=np.uint8),
        "b1": np.array([True, False]),
        "f4": np.array([0.25], dtype=np.float32),
        "empty": np.zeros((0, 3)),
    }
    meta, back = loads_state(dumps_state({"k": [1, "x"]}, arrays))
    assert meta == {"k": [1, "x"]}
    assert back.keys() == arrays.keys()
    for k, v in arrays.items():
        assert back[k].dtype == v.dtype and back[k].shape == v.shape
        np.testing.assert_array_equal(back[k], v)
    with pytest.raises(TypeError, match="dtype"):
        dumps_state({}, {"obj": np.array([object()], dtype=object)})


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_header_with_a_non_finite_float_is_refused(bad):
    """NaN and infinities have no JSON (msgspec would write null, read back as None): refused
    wherever they are, as json.dumps(allow_nan=False) refuses them; finite floats, names and a
    pre-encoded header pass."""
    for header in ({"x": bad}, {"a": [1, "s", [2.5, {"deep": (0, bad)}]]},
                   {"names": ["t"] * 1000 + [bad]}):
        with pytest.raises(ValueError, match="not JSON compliant"):
            dumps_state(header, {})
        with pytest.raises(ValueError, match="not JSON compliant"):
            encode_header(header)
    fine = {"a": [1.5, -0.0, 1e300, "ü", None, True, {"b": (1, 2)}], "names": ["t"] * 1000}
    raw = encode_header(fine)
    assert encode_header(raw) is raw
    want = json.loads(json.dumps(fine))
    for header in (fine, raw):
        assert loads_state(dumps_state(header, {}))[0] == want


def test_write_and_read_state(tmp_path):
    path = tmp_path / "sub" / "dir" / "s.snb"
    write_state(path, {"a": 1}, {"x": np.ones(3)})
    meta, arrays = read_state(path)
    assert meta == {"a": 1}
    np.testing.assert_array_equal(arrays["x"], np.ones(3))


def test_text_vocabularies_load_in_runs_and_a_repeated_token_is_refused():
    """Text tokens are registered a run of columns at a time when a schema is read: two text
    attributes whose columns interleave with each other and with nominal values read back
    the same schema, every token at its column; a state that repeats a token of one text
    attribute is refused (ValueError, which load_model reports as a StateFileError)."""
    from streamnb.stats import Schema

    schema = Schema()
    records = [{"body": {"free", "prize"}, "colour": "red", "subject": {"free"}},
               {"subject": {"win"}, "body": {"now", "free"}, "colour": "blue"},
               {"body": {"lunch"}, "subject": {"lunch", "win"}}]
    for i, x in enumerate(records):
        encode(schema, x, f"record {i}", grow=True)
    data = schema.to_json()
    owners = data["column_attributes"]
    runs = 1 + sum(a != b for a, b in itertools.pairwise(owners))
    assert runs > len(set(owners))  # an attribute's columns come in more than one run
    again = Schema.from_json(data)
    assert again.to_json() == data
    for a in (again.attributes.get("body"), again.attributes.get("subject")):
        assert dict(again.values_of(a)) == dict(schema.values_of(a))
    assert list(again.column_value) == list(schema.column_value)
    body = schema.attributes.get("body")
    slot = schema.slots[body]
    listed = [list(tokens) for tokens in data["text_tokens"]]
    listed[slot].append("free")
    repeated = {**data, "column_attributes": [*owners, body], "text_tokens": listed}
    with pytest.raises(ValueError, match="already present"):
        Schema.from_json(repeated)
    header, arrays = schema.to_state()  # the tokens as an array: refused alike
    joined = np.concatenate([arrays[f"text_tokens.{slot}"], np.frombuffer(b"\0free", np.uint8)])
    with pytest.raises(ValueError, match="already present"):
        Schema.from_state(header, {**arrays, "column_attributes": np.append(
            arrays["column_attributes"], body), f"text_tokens.{slot}": joined})


@pytest.mark.parametrize("tokens", [["free", "päß", "", "a" * 40], ["x\0y", "z"], []])
def test_a_schema_state_holds_its_text_tokens_in_arrays_unless_they_cannot_be(tokens):
    """``Schema.to_state`` writes per column its attribute as an int32 array, and each text
    attribute's tokens, in order of registration, as the NUL-separated UTF-8 its vocabulary
    stores; a vocabulary with a token holding a NUL stays a JSON list (one UTF-8 cannot encode,
    a lone surrogate, is refused when it would be registered: tests/test_unstorable_values.py).
    Either reads back the same schema, and so does its JSON form
    (``to_json``); an array that is not UTF-8 or holds another number of tokens, or a listed
    token that is not a str, is refused."""
    from streamnb.stats import Schema

    schema = Schema()
    encode(schema, {"colour": "red", "body": set(tokens[:2]), "subject": {"win", "now"},
                   "win": True}, "record 0", grow=True)
    encode(schema, {"body": set(tokens[2:]), "colour": "blue", "subject": {"lunch"}},
                  "record 1", grow=True)
    header, arrays = schema.to_state()
    assert arrays["column_attributes"].dtype == np.int32
    slots = {name: schema.slots[a] for name in ("body", "subject")
             if (a := schema.attributes.get(name)) is not None}  # no body without a token
    subject = slots["subject"]
    assert header["text_tokens"][subject] is None and f"text_tokens.{subject}" in arrays
    if "body" in slots:
        plain = all("\0" not in t and not any("\ud800" <= c <= "\udfff" for c in t)
                    for t in tokens)
        assert (header["text_tokens"][slots["body"]] is None) == plain
        assert (f"text_tokens.{slots['body']}" in arrays) == plain
    again = Schema.from_state(header, arrays)
    assert again.to_json() == schema.to_json()
    assert Schema.from_json(schema.to_json()).to_json() == schema.to_json()
    assert list(again.column_value) == list(schema.column_value)
    for a in map(schema.attributes.get, slots):
        assert dict(again.values_of(a)) == dict(schema.values_of(a))
    name = f"text_tokens.{subject}"
    for bad, match in ((np.append(arrays[name], np.uint8(0xff)), "can't decode"),
                       (np.append(arrays[name], np.uint8(0)), "names but"),
                       (arrays[name].astype(np.int16), "array of shape")):
        with pytest.raises(ValueError, match=match):
            Schema.from_state(header, {**arrays, name: bad})
    data = schema.to_json()
    data["text_tokens"][subject][0] = {"tuple": ["a"]}
    with pytest.raises(ValueError, match="is not a str"):
        Schema.from_json(data)


def test_a_schema_reads_its_older_layout_and_refuses_bad_column_owners():
    """States written before the text tokens had a list (or an array) of their own hold every
    column's value in one list, ``"column_values"`` beside ``"column_attributes"`` or, older
    still, ``"columns"``, one ``[attribute, value]`` pair per column: they read back the same
    schema, arrays and all. A column whose attribute is not an int of the schema, or lists of
    two lengths, are refused (ValueError, which load_model reports as a StateFileError)."""
    from streamnb.stats import Schema

    schema = Schema()
    records = [{"body": {"free", "prize"}, "colour": "red", "win": True, "n": 2.5},
               {"subject": {"win"}, "body": {"now", "free"}, "colour": "blue"}]
    for i, x in enumerate(records):
        encode(schema, x, f"record {i}", grow=True)
    data = schema.to_json()
    values = list(schema.column_value)
    common = {k: v for k, v in data.items()
              if k not in ("column_attributes", "nominal_values", "text_tokens")}
    for older in ({**common, "columns": [[a, v] for a, v in zip(data["column_attributes"],
                                                                 values, strict=True)]},
                  {**common, "column_attributes": data["column_attributes"],
                   "column_values": values}):
        again = Schema.from_json(older)
        assert again.to_json() == data
        for name in ("column_attribute", "column_slot", "column_text", "token_columns",
                     "attribute_size"):
            np.testing.assert_array_equal(getattr(again, "_" + name).view(),
                                          getattr(schema, "_" + name).view(), err_msg=name)
    with pytest.raises(ValueError, match="column attributes but"):
        Schema.from_json({**older, "column_values": values[:-1]})
    owners = data["column_attributes"]
    for bad, match in ((len(schema.kinds), "names attribute"), (-1, "names attribute"),
                       (1.0, "not an int"), (True, "not an int")):
        with pytest.raises(ValueError, match=match):
            Schema.from_json({**data, "column_attributes": [*owners[:-1], bad]})
    with pytest.raises(ValueError, match="2 nominal values for 1 nominal columns"):
        Schema.from_json({**data, "column_attributes": owners[:-1]})


@pytest.mark.parametrize("model, path", [
    ("IndifferentNB", ["n_learned"]),
    ("TAN", ["extra", "structure_version"]),
    ("TAN", ["extra", "since_relearn"]),
    ("TAN", ["extra", "candidate_version"]),
    ("AODE", ["extra", "since_refresh"]),
])
@pytest.mark.parametrize("value", [2**70, -1, True, "7"])
def test_a_header_integer_out_of_range_is_refused_by_name(tmp_path, model, path, value):
    """A checksummed header whose counter is past 64 bits, negative or not an integer is a
    StateFileError naming the field, not an OverflowError later."""
    import streamnb

    fitted = getattr(streamnb, model)()
    for i in range(20):
        fitted.learn_one({"a": str(i % 3), "b": str(i % 2)}, "xy"[i % 2])
    fitted.save(tmp_path / "model.snb")
    header, arrays = read_state(tmp_path / "model.snb")
    node = header
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    write_state(tmp_path / "model.snb", header, arrays)
    with pytest.raises(StateFileError, match=f"{path[-1]} .* is not an integer in "):
        load_model(tmp_path / "model.snb")

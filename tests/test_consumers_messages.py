"""Decoding and validating input messages: every bad payload gets its reason, none raises.

The fuzz tests draw thousands of payloads (random bytes, random JSON, message-shaped objects
with wrong types, truncated and bit-flipped valid messages, fragments meant to confuse a bulk
decoder, JSON that msgspec's schema decoder skips unread) and check each against an oracle
written here from the message contract with the standard library alone, and that a whole
batch decodes exactly as its messages one by one.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamnb.consumers.messages import REASONS, Record, Rejection, decode_batch, decode_one

MAX = 2000


def tokens(text: str) -> list[str]:
    return text.split()


def oracle(value: bytes | None) -> str | tuple:
    """The expected outcome: a reason, or ("ok", id, features, label)."""
    if value is None:
        return "invalid_json"
    if len(value) > MAX:
        return "oversize"
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        return "invalid_utf8"

    def no_constants(name):
        raise ValueError(name)

    try:
        doc = json.loads(text, parse_constant=no_constants)
    except (ValueError, RecursionError):
        return "invalid_json"
    if not isinstance(doc, dict):
        return "invalid_schema"

    def encodable(s: str) -> bool:
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True

    id_ = doc.get("id")
    if not isinstance(id_, str) or id_ == "" or not encodable(id_):
        return "invalid_schema"
    label = doc.get("label")
    if label is not None and not (isinstance(label, bool | int) or (
            isinstance(label, str) and encodable(label))):
        return "invalid_label"
    has_text, has_features = doc.get("text") is not None, doc.get("features") is not None
    if has_text == has_features:
        return "invalid_schema"
    if has_text:
        if not isinstance(doc["text"], str) or not encodable(doc["text"]):
            return "invalid_schema"
        return ("ok", id_, {t: True for t in tokens(doc["text"])}, label)
    features = doc["features"]
    if not isinstance(features, dict) or not features or any(
            isinstance(v, list | dict) for v in features.values()):
        return "invalid_schema"
    # what no state can hold: a lone surrogate, a number whose powers overflow
    if any(not encodable(k) or (isinstance(v, str) and not encodable(v))
           or (isinstance(v, float) and abs(v) > 1e64) for k, v in features.items()):
        return "invalid_schema"
    return ("ok", id_, features, label)


def outcome(result: Record | Rejection) -> str | tuple:
    if isinstance(result, Rejection):
        assert result.reason in REASONS and result.detail
        return result.reason
    return ("ok", result.id, result.features, result.label)


# -- strategies ------------------------------------------------------------------------------------
scalars = (st.none() | st.booleans() | st.integers(-10**6, 10**6)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8))
json_values = st.recursive(scalars, lambda c: st.lists(c, max_size=3)
                           | st.dictionaries(st.text(max_size=5), c, max_size=3), max_leaves=8)
feature_values = st.dictionaries(st.text(max_size=6), scalars | st.lists(scalars, max_size=2),
                                 max_size=5)
messages = st.fixed_dictionaries({}, optional={
    "id": st.text(max_size=6) | st.integers() | st.none() | st.lists(st.text(), max_size=1),
    "text": st.text(max_size=40) | st.integers(),
    "features": feature_values | st.lists(scalars, max_size=2) | st.text(max_size=3),
    "label": st.text(max_size=5) | st.integers() | st.booleans() | st.none()
    | st.floats(allow_nan=False) | st.lists(st.text(), max_size=1),
    "other": json_values,
})
valid = st.builds(lambda i, f, y: json.dumps({"id": i, "features": f, "label": y}).encode(),
                  st.text(min_size=1, max_size=5), st.dictionaries(st.text(max_size=4),
                  st.booleans() | st.text(max_size=3), min_size=1, max_size=4),
                  st.text(max_size=4))


@st.composite
def mutated(draw) -> bytes:
    value = bytearray(draw(valid))
    for _ in range(draw(st.integers(1, 3))):
        if not value:
            break
        i = draw(st.integers(0, len(value) - 1))
        action = draw(st.sampled_from(["flip", "cut", "insert"]))
        if action == "flip":
            value[i] ^= draw(st.integers(1, 255))
        elif action == "cut":
            del value[i:]
        else:
            value[i:i] = draw(st.sampled_from([b"\xff", b"\xc3", b'"', b"}", b"{", b",", b"]",
                                               b"[", b"\\", b"NaN", b"\n"]))
    return bytes(value)


fragments = st.sampled_from([
    b'{"id":"a","features":{"x":"}', b'{"}', b'{"id":"b","features":{"x":true}},'
    b'{"id":"c","features":{"y":true}}', b'{"id":"d","features":{"z":[[1', b'2]]}}', b"",
    b"   ", b"\xef\xbb\xbf{}", b"[" * 5000, b'{"id":"e","features":{"f":NaN}}', b"1e400",
    b'{"id":"\\ud800","features":{"x":true}}', b'{"id":"f","features":{"x":1},"label":"\\udfff"}',
    b'{"id":"g","features":{"x":1e400}}', b'"streamnb-0000"', b"x" * (MAX + 1),
    # what msgspec's schema decoder skips (unknown keys, their values) must still be read as
    # the reference reads it
    b'{"id":"h","features":{"x":1},"\xecther":""}', b'{"id":"i","features":{"x":1},"o":NaN}',
    b'{"id":"j","features":{"x":1},"o":"\\ud800"}', b'{"id":"k","id":5,"features":{"x":1}}',
    b'{"id":5,"id":"l","features":{"x":1}}', b'{"id":"m","features":{"x":1},"o":[1,]}',
    b'{"id":"n","features":{"x":123456789012345678901234567890}}',
    b'{"id":"o","features":{"\\ud800":true}}', b'{"id":"p","features":{"x":"\\udfff"}}',
    b'{"id":"q","text":"a \\ud800 b"}', b'{"id":"r","features":{"size":1e308}}',
    b'{"id":"s","features":{"size":-1e65}}', b'{"id":"t","features":{"size":1e64}}',
    b'{"id":"u","features":{"\\ud83d\\ude00":"\\ud83d\\ude00"}}',
])
payloads = (st.binary(max_size=60) | st.text(max_size=60).map(str.encode)
            | json_values.map(lambda v: json.dumps(v).encode())
            | messages.map(lambda v: json.dumps(v).encode())
            | valid | mutated() | fragments | st.none())


# -- tests ---------------------------------------------------------------------------------------
def test_examples_of_each_reason():
    cases = {
        b'{"id": "1", "text": "hello world", "label": "ham"}': ("ok", "1", {"hello": True,
                                                                           "world": True}, "ham"),
        b'{"id": "2", "features": {"a": "x", "n": 2.5, "t": true, "c": 3}}':
            ("ok", "2", {"a": "x", "n": 2.5, "t": True, "c": 3}, None),
        b'{"id": "3", "features": {"a": 1}, "label": null}': ("ok", "3", {"a": 1}, None),
        b"\xff\xfe": "invalid_utf8",
        b'{"id": "4", "features": {"a": NaN}}': "invalid_json",
        b'[{"id": "5"}]': "invalid_schema",
        b'{"id": "", "text": "x"}': "invalid_schema",
        b'{"id": "6", "text": "x", "features": {"a": 1}}': "invalid_schema",
        b'{"id": "7", "features": {}}': "invalid_schema",
        b'{"id": "8", "features": {"a": {"b": 1}}}': "invalid_schema",
        b'{"id": "9", "features": {"a": 1}, "label": 0.5}': "invalid_label",
        b'{"id": "10", "features": {"a": 1}, "label": ["spam"]}': "invalid_label",
        # what no state can hold: lone surrogates in a name, a value, a text; a number whose
        # powers overflow (a surrogate pair is a character like any other)
        b'{"id": "11", "features": {"\\ud800": true}}': "invalid_schema",
        b'{"id": "12", "features": {"a": "x\\udfff"}}': "invalid_schema",
        b'{"id": "13", "text": "x \\ud800 y"}': "invalid_schema",
        b'{"id": "14", "features": {"size": 1e308}}': "invalid_schema",
        b'{"id": "15", "features": {"size": -1e300}}': "invalid_schema",
        b'{"id": "16", "features": {"size": -1e64, "\\ud83d\\ude00": "\\ud83d\\ude00"}}':
            ("ok", "16", {"size": -1e64, "\U0001f600": "\U0001f600"}, None),
        b"{" + b" " * MAX + b"}": "oversize",
        None: "invalid_json",
    }
    for value, expected in cases.items():
        assert outcome(decode_one(value, MAX, tokens)) == expected, value
        assert oracle(value) == expected, value


def test_a_batch_keeps_each_message_apart():
    """Fragments that form valid JSON only when joined, and a message carrying two objects,
    must not be mistaken for messages."""
    split = b'{"id":"b","features":{"x":true}},{"id":"c","features":{"y":true}}'
    values = [b'{"id":"a","features":{"x":[1', b'2]}}', split, split,
              b'{"id":"d","features":{"z":true}}']
    results = decode_batch(values, MAX, tokens)
    assert [outcome(r) for r in results] == ["invalid_json"] * 4 + [
        ("ok", "d", {"z": True}, None)]


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payloads)
def test_fuzz_every_payload_gets_the_oracles_outcome(value):
    assert outcome(decode_one(value, MAX, tokens)) == oracle(value)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(payloads, max_size=12))
def test_fuzz_a_batch_decodes_as_its_messages_one_by_one(values):
    assert [outcome(r) for r in decode_batch(values, MAX, tokens)] == [
        oracle(v) for v in values]


def test_text_messages_are_tokenised_as_email():
    raw = "Subject: cheap pills\n\nBuy cheap pills now"
    record = decode_one(json.dumps({"id": "m", "text": raw, "label": "spam"}).encode(), 10**6)
    from streamnb.features import tokenize_email

    assert record.features == dict.fromkeys(tokenize_email(raw), True)
    assert "subject:cheap" in record.features and record.label == "spam"


def test_short_texts_are_tokenised_as_short_texts():
    from streamnb.features import tokenize_sms, tokenize_text

    sms = "Note: WIN a FREE prize, call 09061701461 now"
    record = decode_one(json.dumps({"id": "s", "text": sms}).encode(), 10**6)
    assert record.features == dict.fromkeys(tokenize_sms(sms), True)
    assert record.features == dict.fromkeys(tokenize_text(sms), True)
    assert decode_batch([json.dumps({"id": "s", "text": sms}).encode()], 10**6) == [record]


def test_text_messages_as_token_sets():
    """With ``token_sets`` a text message's features are its tokens' frozenset (the keys of
    the dict it is otherwise), decoded alike one by one and in a batch; feature messages are
    unchanged."""
    from streamnb.features import tokenize_text

    raw = "Subject: cheap pills\n\nBuy cheap pills now"
    values = [json.dumps({"id": "m", "text": raw, "label": "spam"}).encode(),
              json.dumps({"id": "s", "text": "ok see u at 7"}).encode(),
              b'{"id": "f", "features": {"w": true}}']
    records = decode_batch(values, 10**6, token_sets=True)
    assert records == [decode_one(v, 10**6, token_sets=True) for v in values]
    as_dict = decode_one(values[0], 10**6).features
    assert records[0].features == tokenize_text(raw) == frozenset(as_dict)
    assert type(records[0].features) is frozenset and records[0].label == "spam"
    assert records[1].features == tokenize_text("ok see u at 7")
    assert records[2].features == {"w": True}


@pytest.mark.parametrize("n", [1, 2, 500])
def test_bulk_and_single_decoding_agree_on_valid_batches(n):
    values = [json.dumps({"id": str(i), "features": {f"w{i % 7}": True, "k": "v"},
                          "label": ["a", "b"][i % 2]}).encode() for i in range(n)]
    assert decode_batch(values, MAX, tokens) == [decode_one(v, MAX, tokens) for v in values]

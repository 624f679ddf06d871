"""Bad input through the real service: 1,200 random payloads among valid messages; the service
keeps running, every bad payload reaches the dead-letter topic with its original bytes and the
oracle's reason, the metric counts it by reason, and the model equals a model that learned only
the valid messages."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from kafka_helpers import (
    ServiceProcess,
    create_topic,
    free_port,
    produce,
    read_topic,
    scrape,
    unique,
    wait_for,
)
from test_consumers_messages import MAX, oracle

from conftest import assert_same_stats
from streamnb import IndifferentNB
from streamnb.consumers.service import MODEL_FILE
from streamnb.consumers.testing import CONSUMER_CLIENTS
from streamnb.features import tokenize_text
from streamnb.models.persistence import load_model


def valid_message(rng: random.Random, i: int) -> dict:
    """Attribute names carry their kind (s_: nominal, t_: token, f_: numeric), so valid
    messages never conflict with each other."""
    features = {}
    for _ in range(rng.randint(1, 6)):
        kind = rng.choice("stf")
        name = f"{kind}_{rng.randint(0, 30)}"
        features[name] = {"s": rng.choice(["a", "b", "c"]), "t": rng.choice([True, 1, 2, False]),
                          "f": round(rng.uniform(-5, 5), 3)}[kind]
    message = {"id": f"v{i}", "features": features}
    if rng.random() < 0.8:
        message["label"] = rng.choice(["x", "y", "z"])
    return message


def random_payload(rng: random.Random, i: int) -> bytes:
    family = rng.randrange(8)
    if family == 0:
        return rng.randbytes(rng.randint(0, 40))
    if family == 1:  # a valid message, truncated or with a flipped byte
        data = bytearray(json.dumps(valid_message(rng, i)).encode())
        if rng.random() < 0.5:
            del data[rng.randrange(len(data)):]
        else:
            data[rng.randrange(len(data))] ^= rng.randint(1, 255)
        return bytes(data)
    if family == 2:  # wrong types
        return json.dumps(rng.choice([
            [1, 2], "text", 3.5, None, {"id": 7, "text": "x"}, {"id": "", "text": "x"},
            {"id": f"w{i}"}, {"id": f"w{i}", "text": ["x"]}, {"id": f"w{i}", "features": {}},
            {"id": f"w{i}", "features": {"a": [1]}}, {"id": f"w{i}", "features": {"a": {}}},
            {"id": f"w{i}", "text": "x", "features": {"a": 1}}])).encode()
    if family == 3:  # wrong labels
        return json.dumps({"id": f"w{i}", "features": {"t_1": True},
                           "label": rng.choice([1.5, [1], {"c": 1}, -0.25])}).encode()
    if family == 4:
        return b"x" * rng.randint(MAX + 1, 3 * MAX)
    if family == 5:  # text messages
        return json.dumps({"id": f"e{i}", "text": rng.choice(["", "Subject: hi\n\nhello there",
                                                             "\udcff junk"]),
                           "label": rng.choice(["x", "y"])}).encode()
    if family == 6:  # valid for the decoder, rejected by the model (kinds are set by then)
        return json.dumps({"id": f"r{i}", "features": rng.choice([
            {"s_1": 1.5}, {"t_1": "word"}, {"f_1": "word"}, {"t_2": 0.5}]),
            "label": "x"}).encode()
    return json.dumps(valid_message(rng, i)).encode()


@pytest.mark.parametrize("client", CONSUMER_CLIENTS)
def test_fuzzed_payloads_go_to_the_dead_letter_topic_and_change_nothing(kafka_broker, tmp_path,
                                                                        client):
    rng = random.Random(5)
    payloads = [json.dumps(valid_message(rng, i)).encode() for i in range(300)]
    payloads += [random_payload(rng, i) for i in range(300, 1500)]
    # the oracle's verdict, then the model's: learn the valid labelled ones in order
    model = IndifferentNB()
    expected = Counter()
    for value in payloads:
        verdict = oracle(value)
        if isinstance(verdict, str):
            expected[verdict] += 1
            continue
        _, _, features, label = verdict
        if "text" in json.loads(value):  # the service tokenises text (e-mail or short text)
            features = dict.fromkeys(tokenize_text(json.loads(value)["text"]), True)
        try:
            if not features:
                raise ValueError("no features")
            if label is None:
                model.predict_proba_one(features)
            else:
                model.learn_one(features, label)
        except ValueError:  # InvalidRecord
            expected["invalid_record"] += 1
    assert sum(expected.values()) > 600 and len(expected) == 6, expected

    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("fuzz")
    create_topic(bootstrap, topic)
    produce(bootstrap, topic, payloads, keys=[f"k{i}".encode() for i in range(len(payloads))])
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    # one record per poll: each is classified with the model of the records before it, as
    # the in-order reference above
    service = ServiceProcess(
        ["--bootstrap-servers", bootstrap, "--input-topic", topic, "--group-id", "",
         "--model", "indifferent", "--changelog-topic", "", "--dead-letter-topic", f"{topic}-dlq",
         "--output-topic", f"{topic}-out", "--snapshot-dir", str(tmp_path / "state"),
         "--max-message-bytes", str(MAX), "--max-poll-records", "1", "--consumer-client", client,
         "--metrics-address", f"127.0.0.1:{port}"], tmp_path / "service.log")
    wait_for(lambda: scrape(url, "streamnb_messages_consumed_total") == len(payloads), 120,
             "every payload consumed", alive=service.alive)
    counted = {r: scrape(url, "streamnb_dead_letters_total", {"reason": r}) for r in expected}
    assert service.terminate() == 0
    assert counted == {r: float(n) for r, n in expected.items()}
    dead = read_topic(bootstrap, f"{topic}-dlq", expect=sum(expected.values()))
    assert Counter(dict(r.headers)["streamnb-error"].decode() for r in dead) == expected
    for r in dead:  # the original bytes and key, and where they came from
        offset = int(dict(r.headers)["streamnb-source"].decode().rsplit("@", 1)[1])
        assert r.value == payloads[offset] and r.key == f"k{offset}".encode()
    # counts exactly; Gaussian moments up to rounding (batch and one-record updates differ
    # in the last bits)
    assert_same_stats(load_model(tmp_path / "state" / MODEL_FILE).stats.to_dict(),
                      model.stats.to_dict())

"""Messages whose values no state can hold, through the real service on the embedded broker.

A lone surrogate (JSON's ``"\\ud800"``) in a feature's name or value, a label or a text once
stopped the service at its next snapshot (UnicodeEncodeError, exit 1) and at every restart,
since the message was read again; a number like ``1e308`` made every later probability NaN,
published as a bare ``nan``, and snapshotted. Each must reach the dead-letter topic with its
reason while the service keeps running, learns the good records around them, snapshots and
restarts cleanly."""

from __future__ import annotations

import json
import math
from collections import Counter

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

from conftest import assert_same_stats
from streamnb import IndifferentNB
from streamnb.consumers.service import MODEL_FILE
from streamnb.models.base import load_model

# position in the stream -> (the message, the reason the service gives it)
POISON = {
    20: ({"id": "p-name", "features": {"w\ud800": True, "size": 1.0}, "label": "spam"},
         "invalid_schema"),
    41: ({"id": "p-value", "features": {"source": "mx\udfff", "size": 1.0}, "label": "ham"},
         "invalid_schema"),
    62: ({"id": "p-label", "features": {"t1": True, "size": 1.0}, "label": "sp\ud800am"},
         "invalid_label"),
    83: ({"id": "p-text", "text": "Subject: hi\n\nhello w\ud800rld", "label": "ham"},
         "invalid_schema"),
    104: ({"id": "p-huge", "features": {"t1": True, "size": 1e308}, "label": "spam"},
          "invalid_schema"),
    125: ({"id": "p-negative", "features": {"size": -1e300}, "label": "ham"}, "invalid_schema"),
}


def good(i: int) -> dict:
    spam = i % 3 == 0
    features = {f"t{(i * 7 + j) % 40 + (0 if spam else 40)}": True for j in range(4)}
    features["source"] = ["mx1", "mx2"][i % 2]
    features["size"] = round((5.0 if spam else 1.0) + (i % 7) / 10, 2)
    return {"id": f"g{i}", "features": features, "label": "spam" if spam else "ham"}


def no_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def test_poison_messages_go_to_the_dead_letter_topic_and_the_service_restarts(kafka_broker,
                                                                              tmp_path):
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("poison")
    create_topic(bootstrap, topic)
    first = [POISON[i][0] if i in POISON else good(i) for i in range(150)]
    payloads = [json.dumps(m).encode() for m in first]  # ensure_ascii: "\ud800" escapes
    assert all(b"\\ud800" in p or b"\\udfff" in p or b"e+" in p
               for i, p in enumerate(payloads) if i in POISON)
    produce(bootstrap, topic, payloads)
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    state = tmp_path / "state"
    args = ["--bootstrap-servers", bootstrap, "--input-topic", topic, "--group-id", "",
            "--model", "indifferent", "--changelog-topic", "", "--dead-letter-topic",
            f"{topic}-dlq", "--output-topic", f"{topic}-out", "--snapshot-dir", str(state),
            # small polls and frequent snapshots: a learned poison value is written soon
            "--max-poll-records", "7", "--snapshot-every-records", "10", "--publish-labelled",
            "--metrics-address", f"127.0.0.1:{port}"]
    service = ServiceProcess(args, tmp_path / "first.log")
    wait_for(lambda: scrape(url, "streamnb_messages_consumed_total") == len(payloads), 120,
             "every message consumed", alive=service.alive)
    expected = Counter(reason for _, reason in POISON.values())
    counted = {r: scrape(url, "streamnb_dead_letters_total", {"reason": r}) for r in expected}
    assert counted == {r: float(n) for r, n in expected.items()}
    assert service.terminate() == 0, service.logs()

    dead = read_topic(bootstrap, f"{topic}-dlq", expect=len(POISON))
    assert len(dead) == len(POISON)
    for r in dead:
        headers = dict(r.headers)
        offset = int(headers["streamnb-source"].decode().rsplit("@", 1)[1])
        assert offset in POISON and r.value == payloads[offset]
        assert headers["streamnb-error"].decode() == POISON[offset][1]
        assert headers["streamnb-detail"]  # the reason in words
    # every prediction is JSON (no bare nan) with finite probabilities
    out = read_topic(bootstrap, f"{topic}-out", expect=len(payloads) - len(POISON))
    assert len(out) == len(payloads) - len(POISON)
    probas = [json.loads(r.value, parse_constant=no_constant)["proba"] for r in out]
    assert all(math.isfinite(p) for proba in probas for p in proba.values())
    # (the first poll's messages are scored before any class: {})
    assert sum(1 for proba in probas if proba) >= len(out) - 7

    # the snapshot holds exactly the good records, as a model that learned only them
    reference = IndifferentNB()
    for m in first:
        if m["id"].startswith("g"):
            reference.learn_one(m["features"], m["label"])
    assert_same_stats(load_model(state / MODEL_FILE).stats.to_dict(),
                      reference.stats.to_dict())

    # a restart on that snapshot continues where it stopped and learns what follows
    more = [good(i) for i in range(150, 180)]
    produce(bootstrap, topic, [json.dumps(m).encode() for m in more])
    again = ServiceProcess(args, tmp_path / "second.log")
    n_good = len(payloads) - len(POISON) + len(more)
    wait_for(lambda: scrape(url, "streamnb_model_records") == n_good, 120,
             "the new records learned", alive=again.alive)
    assert again.terminate() == 0, again.logs()
    assert "Traceback" not in again.logs() and "Traceback" not in service.logs()
    for m in more:
        reference.learn_one(m["features"], m["label"])
    assert_same_stats(load_model(state / MODEL_FILE).stats.to_dict(),
                      reference.stats.to_dict())

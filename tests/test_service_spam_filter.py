"""The service running ``streamnb.SpamFilter`` (``--model spam-filter``, the default) on text
messages: the published ``score`` is the model's own spam log-odds, equal to that of a
SpamFilter that learned the same messages in the same order; a label other than spam/ham is a
dead letter that leaves the model unchanged; and SIGKILLs change no count.

SpamAssassin e-mails (in time order, a stride through the corpus so both classes occur) and a
few SMS-like short texts; the real tansu broker of the session fixture.
"""

from __future__ import annotations

import json
import math
import random
import time

import pytest
from kafka_helpers import (
    ServiceProcess,
    create_topic,
    dumps,
    free_port,
    produce,
    read_topic,
    scrape,
    unique,
    wait_for,
)

from streamnb import SpamFilter
from streamnb.consumers.service import MODEL_FILE
from streamnb.datasets import iter_spamassassin_stream
from streamnb.models.persistence import load_model

SHORT_TEXTS = ["WIN a FREE prize now!! call 09061701461 to claim",
               "are we still on for lunch tomorrow? x",
               "Note: call me when you land"]


@pytest.fixture(scope="module")
def corpus():
    return list(iter_spamassassin_stream())


def message(m, label=True) -> dict:
    body = {"id": f"{m.group}/{m.id}", "text": m.text}
    if label is True:
        body["label"] = m.label
    elif label is not None:
        body["label"] = label
    return body


def serve_args(bootstrap, topic, snapshot_dir, port, *extra):
    return ["--bootstrap-servers", bootstrap, "--input-topic", topic, "--group-id", "",
            "--changelog-topic", "", "--output-topic", f"{topic}-out",
            "--dead-letter-topic", f"{topic}-dlq", "--snapshot-dir", str(snapshot_dir),
            "--metrics-address", f"127.0.0.1:{port}", *extra]


def test_published_scores_are_those_of_the_same_filter_learned_in_process(
        kafka_broker, tmp_path, corpus):
    """One message per poll, so every message is classified by the model of exactly the
    messages before it: the published score equals ``SpamFilter.score_one`` of a filter that
    learned them in the same order (to rounding: token order inside a message differs between
    processes), and the message labelled "maybe" is a dead letter that changes nothing."""
    labelled = corpus[::20][:240]
    assert {m.label for m in labelled} == {"spam", "ham"}
    maybe = corpus[7]
    unlabelled = corpus[1::20][:20]
    stream = ([message(m) for m in labelled[:120]] + [message(maybe, "maybe")]
              + [message(m) for m in labelled[120:]]
              + [message(m, None) for m in unlabelled]
              + [{"id": f"sms-{i}", "text": t} for i, t in enumerate(SHORT_TEXTS)])
    values = [dumps(body) for body in stream]

    # the reference: predict, then learn, in stream order; "maybe" is refused and learned not
    ref = SpamFilter()
    expected: dict[str, float] = {}
    for body in stream:
        if body.get("label") == "maybe":
            with pytest.raises(ValueError, match="label"):
                ref.learn_one(body["text"], "maybe")
            continue
        expected[body["id"]] = ref.score_one(body["text"])
        if "label" in body:
            ref.learn_one(body["text"], body["label"])
    assert ref.n_learned == 240

    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("spamfilter")
    create_topic(bootstrap, topic)
    produce(bootstrap, topic, values, keys=[b["id"].encode() for b in stream])
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    service = ServiceProcess(serve_args(bootstrap, topic, tmp_path / "state", port,
                                        "--model", "spam-filter", "--publish-labelled",
                                        "--max-poll-records", "1"), tmp_path / "service.log")
    wait_for(lambda: scrape(url, "streamnb_messages_consumed_total") == len(values), 180,
             "every message consumed", alive=service.alive)
    assert scrape(url, "streamnb_messages_learned_total") == 240
    assert scrape(url, "streamnb_dead_letters_total", {"reason": "invalid_label"}) == 1
    assert scrape(url, "streamnb_dead_letters_total", {"reason": "invalid_record"}) == 0
    assert service.terminate() == 0, service.logs()

    outputs = {json.loads(r.value)["id"]: json.loads(r.value)
               for r in read_topic(bootstrap, f"{topic}-out", expect=len(expected))}
    assert outputs.keys() == expected.keys()  # "maybe" is not published
    for mid, want in expected.items():
        out = outputs[mid]
        assert list(out) == ["id", "label", "proba", "score", "model_version",
                             "structure_version"]
        assert math.isclose(out["score"], want, rel_tol=1e-9, abs_tol=1e-9), (mid, out, want)
        assert math.isclose(out["proba"]["spam"], 1 / (1 + math.exp(-want)), rel_tol=1e-9,
                            abs_tol=1e-12)
        assert out["label"] == ("spam" if out["proba"]["spam"] > 0.5 else "ham")
    assert outputs["sms-0"]["score"] != 0.0  # short texts are scored on their SMS tokens
    assert outputs[f"{unlabelled[0].group}/{unlabelled[0].id}"]["model_version"] == 240

    dead = read_topic(bootstrap, f"{topic}-dlq", expect=1)
    assert len(dead) == 1
    headers = dict(dead[0].headers)
    assert dead[0].value == values[120] and headers["streamnb-error"] == b"invalid_label"
    detail = headers["streamnb-detail"].decode()
    assert "'maybe'" in detail and "neither spam_label 'spam' nor ham_label 'ham'" in detail

    got = load_model(tmp_path / "state" / MODEL_FILE)
    assert type(got) is SpamFilter and got.n_learned == 240
    assert got.stats.to_dict() == ref.stats.to_dict()
    assert math.isclose(got.score_one(maybe.text), ref.score_one(maybe.text), rel_tol=1e-9,
                        abs_tol=1e-9)


def test_sigkill_at_random_points_changes_no_spam_filter_count(kafka_broker, tmp_path, corpus):
    """The exactly-once pattern of tests/test_service_exactly_once.py with the default model
    (no --model: spam-filter) on e-mails over two partitions: SIGKILLed at random points and
    restarted, it ends with the counts of the filter learned in-process."""
    rng = random.Random(3)
    mail = corpus[2000:2900]
    stream, learned, unlabelled = [], SpamFilter(), []
    for m in mail:
        if rng.random() < 0.1:
            stream.append(message(m, None))
            unlabelled.append(f"{m.group}/{m.id}")
        else:
            stream.append(message(m))
            learned.learn_one(m.text, m.label)
    n_learned = learned.n_learned

    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("spamfilter-once")
    create_topic(bootstrap, topic, partitions=2)
    produce(bootstrap, topic, [dumps(b) for b in stream], partition_of=lambda i: i % 2)
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    state = tmp_path / "state"
    args = serve_args(bootstrap, topic, state, port, "--snapshot-every-records", "60",
                      "--snapshot-every-seconds", "0.2", "--max-poll-records", "20")
    log = tmp_path / "service.log"
    kills = []
    for target in sorted(rng.sample(range(100, n_learned - 100), 4)):
        service = ServiceProcess(args, log)
        if not kills:  # the first one somewhere in start-up (importing, connecting): a longer
            # wait let a fast service learn the whole stream first, leaving no kill mid-stream
            time.sleep(rng.uniform(0.1, 0.6))
        else:
            wait_for(lambda t=target: (scrape(url, "streamnb_model_records") or 0) >= t, 120,
                     f"{target} learned records", interval=0.02, alive=service.alive)
        kills.append(scrape(url, "streamnb_model_records"))
        service.kill()
    assert sum(1 for k in kills if k is not None and 0 < k < n_learned) >= 2, kills
    service = ServiceProcess(args, log)
    wait_for(lambda: scrape(url, "streamnb_model_records") == n_learned, 240,
             "every labelled record learned", alive=service.alive)
    assert service.terminate() == 0, service.logs()

    got = load_model(state / MODEL_FILE)
    assert type(got) is SpamFilter and got.n_learned == n_learned
    assert got.stats.to_dict() == learned.stats.to_dict()
    probe = corpus[5000].text
    assert math.isclose(got.score_one(probe), learned.score_one(probe), rel_tol=1e-9,
                        abs_tol=1e-9)
    outputs = read_topic(bootstrap, f"{topic}-out", idle=3)
    assert {r.key.decode() for r in outputs} == set(unlabelled)  # at least once
    assert all(isinstance(json.loads(r.value)["score"], float) for r in outputs)

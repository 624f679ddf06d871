"""``streamnb serve --max-ham-rate``: the service's SpamFilter learns its threshold for the
target (docs/service.md, "Spam at the ham loss you choose"); the threshold is a sum over the
partition states that a restart restores exactly (restarted with another rate, the counted
scores read at it); /metrics shows the threshold, the target and the realised ham→spam and
spam→ham rates over the last ``--rate-window`` labelled messages of each class, equal to a
direct count on the predictions the service published.

SpamAssassin e-mails (a stride through the corpus in time order, so both classes occur) on the
real tansu broker of the session fixture; the window itself against a direct count on random
batches.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from kafka_helpers import (
    ServiceProcess,
    create_topic,
    dumps,
    free_port,
    metric_value,
    metrics_text,
    produce,
    read_topic,
    scrape,
    unique,
    wait_for,
)

from streamnb import SpamFilter
from streamnb.consumers.config import ConfigError, load_config
from streamnb.consumers.metrics import ServiceMetrics
from streamnb.consumers.service import MODEL_FILE
from streamnb.consumers.spam_rates import (
    ErrorWindow,
    SpamRates,
    model_factory,
    rate_window,
    sum_score_sketches,
)
from streamnb.consumers.state import PartitionedModel, PartitionState, copy_model
from streamnb.datasets import iter_spamassassin_stream
from streamnb.models.persistence import load_model


@pytest.fixture(scope="module")
def corpus():
    return list(iter_spamassassin_stream())


# -- the window ------------------------------------------------------------------------------
def test_error_window_equals_a_direct_count_over_the_last_messages():
    rng = random.Random(5)
    for size in (1, 7, 50):
        window, seen = ErrorWindow(size), []
        for _ in range(200):
            batch = [rng.random() < 0.2 for _ in range(rng.choice((0, 1, 3, size, 2 * size + 1)))]
            window.add(np.array(batch, dtype=bool))
            seen += batch
            last = seen[-size:]
            assert (window.n, window.errors) == (len(last), sum(last))
            if last:
                assert window.rate == sum(last) / len(last)


def test_rates_per_true_class_equal_a_direct_count():
    """SpamRates reads each class's own last ``size`` messages: ham errors are hams called
    spam, whatever the spam around them."""
    rng = random.Random(2)
    metrics = ServiceMetrics()
    config = load_config({"max_ham_rate": 0.05, "rate_window": 30})
    rates = metrics.spam_rates = SpamRates.tracking(model_factory(config)(), config, metrics)
    stream = []
    for _ in range(40):
        batch = [(rng.choice(("spam", "ham", "ham")), rng.random() < 0.85)
                 for _ in range(rng.randrange(12))]
        metrics.observe_predictions([y for y, _ in batch], [ok for _, ok in batch],
                                    [0.1] * len(batch))
        stream += batch
        for name in ("ham", "spam"):
            wrong = [not ok for y, ok in stream if y == name][-30:]
            got = metrics.registry.get_sample_value("streamnb_spam_window_errors",
                                                    {"class": name})
            n = metrics.registry.get_sample_value("streamnb_spam_window_messages",
                                                  {"class": name})
            assert (got, n) == (sum(wrong), len(wrong))
    assert rates.windows["ham"].n == 30 and 0 < rates.windows["ham"].errors < 30


def test_window_defaults_to_ten_errors_at_the_target_and_the_option_is_checked():
    assert rate_window(load_config({"max_ham_rate": 0.001})) == 10_000
    assert rate_window(load_config({"max_ham_rate": 0.005})) == 2_000
    assert rate_window(load_config({})) == 10_000
    assert rate_window(load_config({"max_ham_rate": 0.01, "rate_window": 77})) == 77
    with pytest.raises(ConfigError, match="'max-ham-rate' is one of --model spam-filter"):
        load_config({"max_ham_rate": 0.01, "model": "tan"})
    with pytest.raises(ConfigError, match="max-ham-rate"):
        load_config({"max_ham_rate": 0.9})
    # forgetting every 50 offsets, a state never holds the 100 ham a 1 % threshold needs
    with pytest.raises(ConfigError, match="half-life of at least 70 offsets"):
        load_config({"max_ham_rate": 0.01, "half_life": 50})
    load_config({"max_ham_rate": 0.01, "half_life": 1000})


def test_keep_ham_rate_reads_the_counted_scores_at_the_new_rate(corpus):
    mail = corpus[::20][:200]
    f = SpamFilter(max_ham_rate=0.05)
    f.learn_many([m.text for m in mail], [m.label for m in mail])
    counts = f.scores.counts.copy()
    assert 20 <= f.scores.total(1) < 50  # about 1.44 / 0.05 ham weight
    f.keep_ham_rate(0.1)  # 10 ham needed: read off at once
    assert np.array_equal(f.scores.counts, counts) and f.scores.half_life == 10
    assert f.current_threshold == f.scores.threshold(1, 0.1) != f.threshold
    f.keep_ham_rate(0.02)  # 50 ham needed: the fixed threshold until the histogram holds them
    assert np.array_equal(f.scores.counts, counts) and f.scores.half_life == 50
    assert not f.threshold_learned and f.current_threshold == f.threshold
    f.keep_ham_rate(None)
    assert f.scores is None and f.current_threshold == f.threshold
    f.keep_ham_rate(0.01)  # nothing counted: the warm-up again
    assert not f.threshold_learned and f.scores.total(1) == 0
    with pytest.raises(ValueError, match="max_ham_rate"):
        f.keep_ham_rate(1.5)


def test_the_sums_score_histogram_is_the_sum_of_the_partition_states(corpus):
    """Learned into the sum, a batch counts the sum's scores; the states' histograms are what
    a restart adds up, so the sum's is made theirs after every batch: the threshold in force
    is the one a rebuild from the states gives."""
    config = load_config({"max_ham_rate": 0.05})
    pm = PartitionedModel(model_factory(config))
    for p in (0, 1):
        pm.take(("t", p), PartitionState(pm.factory(), 0))
    pm.rebuild()
    mail = corpus[::20][:240]
    for start in range(0, len(mail), 20):
        for p in (0, 1):
            part = mail[start + p:start + 20:2]
            pm.learn(("t", p), [m.text for m in part], [m.label for m in part])
        sum_score_sketches(pm)
    before = pm.model.current_threshold
    assert pm.model.threshold_learned
    merged = pm.own[("t", 0)].model.scores.copy().merge(pm.own[("t", 1)].model.scores)
    assert np.array_equal(pm.model.scores.counts, merged.counts)
    restarted = PartitionedModel(model_factory(config))  # the sum again, from the states
    for key, state in pm.own.items():
        restarted.take(key, PartitionState(copy_model(state.model), state.offset))
    restarted.rebuild()
    assert restarted.model.current_threshold == before


# -- the service -------------------------------------------------------------------------------
def serve_args(bootstrap, topic, snapshot_dir, port, *extra):
    return ["--bootstrap-servers", bootstrap, "--input-topic", topic, "--group-id", "",
            "--changelog-topic", "", "--output-topic", f"{topic}-out",
            "--dead-letter-topic", f"{topic}-dlq", "--snapshot-dir", str(snapshot_dir),
            "--metrics-address", f"127.0.0.1:{port}", *extra]


def window_counts(outputs: dict, stream: list, label: str, size: int) -> tuple[int, int]:
    """Errors and messages among the last ``size`` labelled ``label`` messages, read off the
    predictions the service published."""
    wrong = [outputs[m["id"]]["label"] != label for m in stream if m["label"] == label][-size:]
    return sum(wrong), len(wrong)


@pytest.mark.parametrize("partitions, window", [(1, 40), (2, 1000)])
def test_serve_learns_the_threshold_shows_the_rates_and_restarts_with_it(
        kafka_broker, tmp_path, corpus, partitions, window):
    """One partition and a window shorter than the stream (messages leave it), or two
    partitions (the threshold summed over their states) and a window longer than the stream
    (the count does not depend on how the partitions interleave): the gauges equal the counts
    on the published predictions; the threshold is learned (r = 5 %: 20 hams of warm-up), equal
    to that of the model written at shutdown, and the same after a restart."""
    mail = corpus[::20][:300]
    stream = [{"id": f"{m.group}/{m.id}", "text": m.text, "label": m.label} for m in mail]
    assert sum(m["label"] == "ham" for m in stream) > 100
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("hamrate")
    create_topic(bootstrap, topic, partitions=partitions)
    produce(bootstrap, topic, [dumps(m) for m in stream],
            partition_of=lambda i: i % partitions)
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    args = serve_args(bootstrap, topic, tmp_path / "state", port, "--max-ham-rate", "0.05",
                      "--rate-window", str(window), "--publish-labelled",
                      "--max-poll-records", "25")
    service = ServiceProcess(args, tmp_path / "service.log")
    wait_for(lambda: scrape(url, "streamnb_messages_learned_total") == len(stream), 180,
             "every message learned", alive=service.alive)
    # the gauges follow the summed model, rebuilt between polls: wait for the sum of them all
    wait_for(lambda: scrape(url, "streamnb_model_version") == len(stream), 60,
             "the gauges of the model that learned every message", alive=service.alive)
    text = metrics_text(url)
    assert service.terminate() == 0, service.logs()

    outputs = {json.loads(r.value)["id"]: json.loads(r.value)
               for r in read_topic(bootstrap, f"{topic}-out", expect=len(stream))}
    assert outputs.keys() == {m["id"] for m in stream}
    if partitions == 1:  # the window's order is the stream's
        assert window < sum(m["label"] == "ham" for m in stream)
    missed = 0
    for name in ("ham", "spam"):
        errors, n = window_counts(outputs, stream, name, window)
        missed += errors
        labels = {"class": name}
        assert metric_value(text, "streamnb_spam_window_errors", labels) == errors
        assert metric_value(text, "streamnb_spam_window_messages", labels) == n
        assert metric_value(text, "streamnb_spam_error_rate", labels) == errors / n
    assert missed > 0  # the counts are not trivially 0
    assert metric_value(text, "streamnb_spam_max_ham_rate") == 0.05
    assert metric_value(text, "streamnb_spam_threshold_learned") == 1
    threshold = metric_value(text, "streamnb_spam_threshold")
    saved = load_model(tmp_path / "state" / MODEL_FILE)
    assert type(saved) is SpamFilter and saved.max_ham_rate == 0.05
    assert saved.threshold_learned and saved.current_threshold == threshold
    assert threshold != saved.threshold  # learned, not the fixed 0

    service = ServiceProcess(args, tmp_path / "service.log")
    wait_for(lambda: scrape(url, "streamnb_ready") == 1, 120, "ready after the restart",
             alive=service.alive)
    assert scrape(url, "streamnb_spam_threshold") == threshold
    assert scrape(url, "streamnb_spam_threshold_learned") == 1
    assert service.terminate() == 0, service.logs()


def test_serve_restarted_with_another_rate_keeps_the_scores_and_reads_the_new_rate(
        kafka_broker, tmp_path, corpus):
    """Restarted with another --max-ham-rate, the service keeps the scores its states counted
    and reads the new rate off them at once (no warm-up, no re-learning); restarted without
    the option it is back to the fixed threshold."""
    mail = corpus[::20][:300]
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("hamrate-change")
    create_topic(bootstrap, topic, partitions=2)
    produce(bootstrap, topic, [dumps({"id": str(i), "text": m.text, "label": m.label})
                               for i, m in enumerate(mail)], partition_of=lambda i: i % 2)
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    args = serve_args(bootstrap, topic, tmp_path / "state", port)
    service = ServiceProcess([*args, "--max-ham-rate", "0.05"], tmp_path / "service.log")
    wait_for(lambda: scrape(url, "streamnb_messages_learned_total") == len(mail), 180,
             "every message learned", alive=service.alive)
    assert service.terminate() == 0, service.logs()
    first = load_model(tmp_path / "state" / MODEL_FILE)
    first.keep_ham_rate(0.1)  # 10 ham of warm-up: the histogram holds more
    assert first.threshold_learned and first.current_threshold != 0.0

    for rate, learned, want in (("0.1", 1, first.current_threshold), ("0", 0, 0.0)):
        service = ServiceProcess([*args, "--max-ham-rate", rate], tmp_path / "service.log")
        wait_for(lambda: scrape(url, "streamnb_ready") == 1, 120, "ready", alive=service.alive)
        assert scrape(url, "streamnb_spam_threshold_learned") == learned
        assert scrape(url, "streamnb_spam_threshold") == want
        assert service.terminate() == 0, service.logs()
        saved = load_model(tmp_path / "state" / MODEL_FILE)
        assert saved.max_ham_rate == (float(rate) or None) and saved.n_learned == len(mail)
    assert "keeps its counted scores and runs with 0.1 from now on" in service.logs()

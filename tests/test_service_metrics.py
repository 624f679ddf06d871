"""Metrics: the names the dashboards rely on, and a real Prometheus server scraping the service.

The Prometheus test starts ``prometheus`` in the foreground (scrape interval 1 s) against a
service that classifies and learns a known stream with TAN (so structure re-learning happens),
then reads every value back through Prometheus' HTTP API and compares it with what the stream
must have produced.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import threading
import urllib.parse
import urllib.request

import pytest
from kafka_helpers import (
    create_topic,
    dumps,
    free_port,
    label_of,
    labelled_features,
    produce,
    read_topic,
    unique,
    wait_for,
)
from prometheus_client import CollectorRegistry

from streamnb.consumers.candidates import candidate_point
from streamnb.consumers.config import load_config
from streamnb.consumers.metrics import PrequentialWindow, ServiceMetrics
from streamnb.consumers.service import Service

CONTRACT = {
    "counter": ["streamnb_messages_consumed", "streamnb_messages_learned",
                "streamnb_messages_predicted", "streamnb_dead_letters", "streamnb_relearns",
                "streamnb_snapshots"],
    "histogram": ["streamnb_learn_latency_seconds", "streamnb_predict_latency_seconds",
                  "streamnb_batch_size", "streamnb_relearn_duration_seconds"],
    "gauge": ["streamnb_prequential_accuracy", "streamnb_prequential_log_loss",
              "streamnb_model_records", "streamnb_structure_version", "streamnb_model_version",
              "streamnb_snapshot_age_seconds", "streamnb_consumer_lag"],
}


def test_every_contract_metric_is_registered_at_construction():
    registry = CollectorRegistry()
    ServiceMetrics(registry=registry)
    families = {m.name: m.type for m in registry.collect()}
    for kind, names in CONTRACT.items():
        for name in names:
            assert families.get(name) == kind, name
    labels = {m.name: {tuple(sorted(s.labels)) for s in m.samples} for m in registry.collect()}
    assert ("reason",) in labels["streamnb_dead_letters"]


def test_prequential_window_matches_a_direct_computation():
    window = PrequentialWindow(50)
    labels = [["a", "b", "c"][i % 3] for i in range(120)]
    correct = [i % 4 != 0 for i in range(120)]
    losses = [0.01 * i for i in range(120)]
    for start in range(0, 120, 17):  # batches of uneven size
        window.add(labels[start:start + 17], correct[start:start + 17], losses[start:start + 17])
    last = range(70, 120)
    assert window.accuracy() == pytest.approx(sum(correct[i] for i in last) / 50)
    assert window.log_loss() == pytest.approx(sum(losses[i] for i in last) / 50)
    per_class = window.per_class()
    for c in "abc":
        rows = [i for i in last if labels[i] == c]
        assert per_class[c] == pytest.approx((sum(correct[i] for i in rows) / len(rows),
                                              sum(losses[i] for i in rows) / len(rows)))


def prometheus_query(base: str, expr: str) -> dict[tuple, float]:
    url = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=5) as response:
        body = json.load(response)
    assert body["status"] == "success", body
    return {tuple(sorted((k, v) for k, v in r["metric"].items()
                         if k not in ("__name__", "instance", "job"))): float(r["value"][1])
            for r in body["data"]["result"]}


@pytest.mark.skipif(shutil.which("prometheus") is None, reason="prometheus is not installed "
                    "(.ci/run installs Debian's package)")
def test_prometheus_scrapes_the_service(kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("metrics")
    create_topic(bootstrap, topic)
    values = []
    n_labelled, n_unlabelled = 3000, 400
    bad = {"invalid_json": 3, "invalid_utf8": 2, "invalid_schema": 4, "invalid_label": 5,
           "oversize": 1}
    for i in range(n_labelled + n_unlabelled):
        x = labelled_features(i)
        label = {"label": label_of(i)} if i < n_labelled else {}
        values.append(dumps({"id": f"m{i}", "features": x, **label}))
    values += [b"{"] * 3 + [b"\xff"] * 2 + [dumps({"id": 1, "text": "x"})] * 4 + [
        dumps({"id": "x", "text": "a b", "label": [1]})] * 5 + [b" " * 5000]
    produce(bootstrap, topic, values)

    port = free_port()
    config = load_config({
        "bootstrap_servers": bootstrap, "input_topic": [topic], "group_id": "",
        "changelog_topic": "", "output_topic": f"{topic}-out",
        "dead_letter_topic": f"{topic}-dlq", "snapshot_dir": str(tmp_path / "state"),
        "metrics_address": f"127.0.0.1:{port}", "model": "tan", "relearn_every": 500,
        "max_poll_records": 250, "max_message_bytes": 4000,
        "snapshot_every_records": 1000, "publish_labelled": True, "windows": ["1000", "100"]},
        environ={})
    service = Service(config)
    thread = threading.Thread(target=service.run, daemon=True)
    thread.start()

    prom_port = free_port()
    (tmp_path / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: streamnb\n    static_configs:\n"
        f"      - targets: ['127.0.0.1:{port}']\n")
    prometheus = subprocess.Popen(
        ["prometheus", f"--config.file={tmp_path / 'prometheus.yml'}",
         f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{prom_port}"],
        stdout=subprocess.DEVNULL, stderr=open(tmp_path / "prometheus.log", "wb"))  # noqa: SIM115
    base = f"http://127.0.0.1:{prom_port}"
    try:
        # once every message is handled, the counters are final; Prometheus shows them after
        # its next scrape
        def scraped(expr, want):
            try:
                got = prometheus_query(base, expr)
            except OSError:
                return False
            return got and list(got.values()) == [want]

        wait_for(lambda: scraped("streamnb_messages_consumed_total", len(values)), 90,
                 "Prometheus to see every message consumed", interval=0.5,
                 alive=lambda: prometheus.poll() is None and thread.is_alive())
        q = lambda expr: prometheus_query(base, expr)  # noqa: E731
        assert q("streamnb_messages_consumed_total") == {(("topic", topic),): len(values)}
        assert q("streamnb_messages_learned_total") == {(): n_labelled}
        assert q("streamnb_messages_predicted_total") == {(): n_labelled + n_unlabelled}
        assert q("streamnb_dead_letters_total") == {
            (("reason", r),): float(bad.get(r, 0)) for r in
            ("invalid_utf8", "invalid_json", "invalid_schema", "invalid_label", "oversize",
             "invalid_record", "too_many_classes")}
        # TAN's tree is re-learned where each candidate list is adopted: after 1, 2, 4, ...,
        # 256, then every 500 learned records
        relearns = sum(candidate_point(v, 500) <= n_labelled for v in range(1, n_labelled + 1))
        assert q("streamnb_relearns_total") == {(): relearns}
        assert q("streamnb_structure_version") == {(): relearns}
        assert q("streamnb_relearn_duration_seconds_count") == {(): relearns}
        assert q("streamnb_model_records") == {(): n_labelled}
        assert q("streamnb_model_version") == {(): n_labelled}
        assert q("streamnb_batch_size_sum") == {(): len(values)}
        def one(expr):
            (value,) = q(expr).values()
            return value

        assert one("streamnb_learn_latency_seconds_count") >= n_labelled / 250
        assert one("streamnb_predict_latency_seconds_count") >= len(values) / 250
        assert one("streamnb_snapshots_total") >= len(values) // 1000
        assert 0 <= one("streamnb_snapshot_age_seconds") < 60
        lag = q("streamnb_consumer_lag")
        assert set(lag) == {(("partition", "0"), ("topic", topic))}
        # the prequential gauges equal the service's own windows, overall and per class
        accuracy, log_loss = q("streamnb_prequential_accuracy"), q(
            "streamnb_prequential_log_loss")
        assert {dict(k)["class"] for k in accuracy} == {"all", "spam", "ham"}
        assert {dict(k)["window"] for k in accuracy} == {"1000", "100"}
        for size, window in service.metrics.windows.items():
            key = (("class", "all"), ("window", str(size)))
            assert accuracy[key] == pytest.approx(window.accuracy())
            assert log_loss[key] == pytest.approx(window.log_loss())
            for label, (acc, loss) in window.per_class().items():
                key = (("class", label), ("window", str(size)))
                assert accuracy[key] == pytest.approx(acc)
                assert log_loss[key] == pytest.approx(loss)
        assert 0.8 < accuracy[(("class", "all"), ("window", "1000"))] <= 1.0
        assert math.isfinite(log_loss[(("class", "all"), ("window", "1000"))])
        # ... and what the published prequential predictions say, computed here
        outputs = [json.loads(r.value) for r in read_topic(bootstrap, f"{topic}-out",
                                                           expect=len(values) - sum(bad.values()))]
        truth = {f"m{i}": label_of(i) for i in range(n_labelled)}
        # in stream order (an auto-created output topic may have several partitions)
        labelled = sorted((o for o in outputs if o["id"] in truth), key=lambda o: int(o["id"][1:]))
        assert len(labelled) == n_labelled
        for size in (1000, 100):
            last = labelled[-size:]
            want_accuracy = sum(o["label"] == truth[o["id"]] for o in last) / size
            want_loss = sum(min(-math.log(o["proba"][truth[o["id"]]]) if o["proba"].get(
                truth[o["id"]], 0) > 0 else math.inf, -math.log(1e-15)) for o in last) / size
            key = (("class", "all"), ("window", str(size)))
            assert accuracy[key] == pytest.approx(want_accuracy)
            assert log_loss[key] == pytest.approx(want_loss)
    finally:
        prometheus.terminate()
        prometheus.wait(10)
        service.stop()
        thread.join(60)
    assert not thread.is_alive()

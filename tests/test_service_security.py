"""Security: secrets given by flag or environment never reach the logs (even at debug level,
even when the connection fails) nor the state files, and restoring state unpickles nothing."""

from __future__ import annotations

import json
import pickle
import sys
import threading
import urllib.parse
from pathlib import Path

import pytest
from kafka_helpers import (
    ServiceProcess,
    create_topic,
    dumps,
    free_port,
    labelled_features,
    labelled_messages,
    produce,
    scrape,
    unique,
    wait_for,
)

from streamnb.consumers.config import load_config
from streamnb.consumers.service import Service

# a backslash, quotes, a space and a non-ASCII letter: each spelled otherwise when escaped
PASSWORD, KEY_PASSWORD = 'Fl4g\\S3cret"9931 é', "Env\\S3cret'2277"


def spellings(secret: str) -> list[str]:
    """How a log line may show ``secret``: raw, escaped in a repr, in JSON, URL-encoded."""
    return [secret, secret.replace("\\", "\\\\"), json.dumps(secret)[1:-1],
            json.dumps(secret, ensure_ascii=False)[1:-1], urllib.parse.quote(secret, safe="")]


def children(pid: int) -> list[int]:
    """The processes ``pid`` started (from any of its threads)."""
    return [int(child) for task in Path(f"/proc/{pid}/task").iterdir()
            for child in (task / "children").read_text().split()]

_AUDIT: dict = {"on": False, "classes": []}


def _audit(event: str, args: tuple) -> None:
    if event == "pickle.find_class" and _AUDIT["on"]:
        _AUDIT["classes"].append(args)


sys.addaudithook(_audit)  # hooks cannot be removed: this one records only while "on"


def test_secrets_stay_out_of_logs_and_state(kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("secure")
    create_topic(bootstrap, topic)
    produce(bootstrap, topic, labelled_messages(0, 300))
    # unlabelled ones too: their predictions start the publisher process
    produce(bootstrap, topic, [dumps({"id": f"u{i}", "features": labelled_features(i)})
                               for i in range(50)])
    port = free_port()
    state = tmp_path / "state"
    # the broker speaks PLAINTEXT (tansu's --authentication needs a storage engine this suite
    # does not run), so the client carries the SASL settings without using them;
    # test_secrets_reach_the_client_settings shows they do reach it
    service = ServiceProcess(
        ["--bootstrap-servers", bootstrap, "--input-topic", topic, "--group-id", "",
         "--model", "indifferent", "--changelog-topic", f"{topic}-changelog",
         "--snapshot-dir", str(state),
         "--sasl-mechanism", "PLAIN", "--sasl-plain-username", "svc",
         "--sasl-plain-password", PASSWORD, "--metrics-address", f"127.0.0.1:{port}",
         "--log-level", "debug"],
        tmp_path / "service.log", env={"STREAMNB_SSL_PASSWORD": KEY_PASSWORD})
    wait_for(lambda: scrape(f"http://127.0.0.1:{port}/metrics",
                            "streamnb_messages_learned_total") == 300, 60,
             "the service to learn", alive=service.alive)
    wait_for(lambda: scrape(f"http://127.0.0.1:{port}/metrics",
                            "streamnb_messages_predicted_total") == 350, 60,
             "the service to predict", alive=service.alive)
    # the publisher process: its settings came through its pipe; nothing else shows a secret
    (publisher,) = children(service.process.pid)
    environ = Path(f"/proc/{publisher}/environ").read_bytes().split(b"\0")
    shown = b"\0".join([*environ, Path(f"/proc/{publisher}/cmdline").read_bytes()])
    assert not [v for v in environ if v.startswith(b"STREAMNB_")]
    assert PASSWORD.encode() not in shown and KEY_PASSWORD.encode() not in shown
    assert service.terminate() == 0
    logs = service.logs()
    assert "DEBUG" in logs  # debug logging was really on
    assert "sasl_plain_password" in logs  # kafka-python's config dump, the secrets redacted
    assert not [s for secret in (PASSWORD, KEY_PASSWORD) for s in spellings(secret)
                if s in logs]
    for path in state.iterdir():
        data = path.read_bytes()
        assert PASSWORD.encode() not in data and KEY_PASSWORD.encode() not in data


def test_secrets_reach_the_client_settings():
    """The same flags and environment as above give kafka-python the secrets themselves (so the
    test above hides real secrets, not settings that were dropped)."""
    from streamnb.cli import build_parser

    args = build_parser().parse_args(
        ["serve", "--bootstrap-servers", "127.0.0.1:1", "--input-topic", "t",
         "--security-protocol", "SASL_SSL", "--sasl-mechanism", "PLAIN",
         "--sasl-plain-username", "svc", "--sasl-plain-password", PASSWORD])
    config = load_config(args, environ={"STREAMNB_SSL_PASSWORD": KEY_PASSWORD})  # as the CLI
    options = config.kafka_options()
    assert options["sasl_plain_password"] == PASSWORD
    assert options["ssl_password"] == KEY_PASSWORD
    assert PASSWORD not in repr(config) and KEY_PASSWORD not in repr(config)


def test_a_failing_secure_connection_does_not_print_the_password(tmp_path):
    """SASL against a port where no broker listens: the client gives up, the service exits
    with an error, and nothing it printed holds the password."""
    port = free_port()
    service = ServiceProcess(
        ["--bootstrap-servers", f"127.0.0.1:{free_port()}", "--bootstrap-timeout-ms", "3000",
         "--input-topic", "t",
         "--security-protocol", "SASL_PLAINTEXT", "--sasl-mechanism", "SCRAM-SHA-512",
         "--sasl-plain-username", "svc", "--metrics-address", f"127.0.0.1:{port}",
         "--snapshot-dir", str(tmp_path / "state"), "--log-level", "debug"],
        tmp_path / "service.log", env={"STREAMNB_SASL_PLAIN_PASSWORD": PASSWORD})
    try:
        service.process.wait(120)
    finally:
        if service.alive():
            service.kill()
    assert service.process.returncode != 0
    assert "Traceback" in service.logs() or "Error" in service.logs()
    assert PASSWORD not in service.logs()


def test_restoring_state_unpickles_nothing(kafka_broker, tmp_path, monkeypatch):
    """A service restarted from its snapshot and the changelog, with every pickle entry point
    made to fail: nothing it restores goes through pickle."""
    bootstrap = kafka_broker.bootstrap_servers
    topic = unique("nopickle")
    create_topic(bootstrap, topic)
    values = [dumps({"id": f"m{i}", "features": labelled_features(i), "label": "ham"})
              for i in range(200)]
    produce(bootstrap, topic, values)
    config = load_config({"bootstrap_servers": bootstrap, "input_topic": [topic],
                          "group_id": "", "model": "indifferent",
                          "changelog_topic": f"{topic}-changelog",
                          "snapshot_dir": str(tmp_path / "state"), "metrics_address": ""},
                         environ={})
    Service(config).run(max_records=200)

    def refuse(*args, **kwargs):
        raise AssertionError("something was unpickled")

    for name in ("loads", "load", "Unpickler"):
        monkeypatch.setattr(pickle, name, refuse)
    produce(bootstrap, topic, values[:50])
    service = Service(config)
    thread = threading.Thread(target=service.run, kwargs={"max_records": 50})
    _AUDIT["on"], _AUDIT["classes"] = True, []
    try:
        thread.start()
        thread.join(60)
    finally:
        _AUDIT["on"] = False
    # the audit event fires inside the C unpickler, whatever name it was imported under
    assert _AUDIT["classes"] == []
    assert not thread.is_alive()
    assert service.model.model.n_learned == 250
    assert service.model.own[(topic, 0)].offset == 250


@pytest.mark.parametrize("flag", ["--sasl-plain-password", "--ssl-password"])
def test_help_never_shows_a_secret_from_the_environment(flag, capsys, monkeypatch):
    from streamnb.cli import build_parser

    monkeypatch.setenv("STREAMNB_" + flag[2:].upper().replace("-", "_"), PASSWORD)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--help"])
    out = capsys.readouterr().out
    assert flag in out and PASSWORD not in out


def test_redaction_finds_a_secret_however_it_is_quoted():
    """The log filter hides a secret by value: raw, in a dict's repr, in the repr of that
    repr, in its bytes' repr, in JSON (and JSON inside a repr), URL-encoded, in a traceback."""
    import logging

    from streamnb.consumers.redaction import RedactSecrets

    secret = PASSWORD
    shown = [secret, {"sasl_plain_password": secret}, repr({"pw": secret}), secret.encode(),
             json.dumps({"pw": secret}), {"body": json.dumps({"pw": secret})},
             "http://u:" + urllib.parse.quote(secret, safe="") + "@host",
             urllib.parse.urlencode({"pw": secret}), {"pw": secret.encode()}]
    redact = RedactSecrets([secret, KEY_PASSWORD])
    for value in shown:
        record = logging.LogRecord("kafka", 10, "", 0, "config: %r", (value,), None)
        redact.filter(record)
        assert "***" in record.getMessage()
        assert not [s for s in spellings(secret) if s in record.getMessage()], record.msg
        assert "S3cret" not in record.getMessage(), record.msg
    try:
        raise ValueError(f"refused {secret!r}")
    except ValueError:
        record = logging.LogRecord("kafka", 40, "", 0, "failed", (), sys.exc_info())
    redact.filter(record)
    assert "S3cret" not in record.exc_text and "***" in record.exc_text


def test_a_changelog_header_past_64_bits_is_skipped_not_taken_for_the_newest(kafka_broker):
    """A forged changelog record whose offset header is 10³⁰ (or its partition key past 32
    bits) is skipped as malformed: it does not hide the partition's real state."""
    from kafka import KafkaProducer

    from streamnb import IndifferentNB
    from streamnb.consumers.changelog import (
        EPOCH_HEADER,
        OFFSET_HEADER,
        ChangelogReader,
        publish_state,
    )
    from streamnb.consumers.state import PartitionState

    bootstrap = kafka_broker.bootstrap_servers
    changelog = unique("forged-changelog")
    create_topic(bootstrap, changelog)
    model = IndifferentNB()
    model.learn_one(labelled_features(1), "spam")
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    publish_state(producer, changelog, ("in", 0), PartitionState(model, 5)).get(30)
    for key, offset in ((b"in:0", b"1" + b"0" * 30), (b"in:99999999999", b"6")):
        producer.send(changelog, key=key, value=b"forged",
                      headers=[(OFFSET_HEADER, offset), (EPOCH_HEADER, b"0")]).get(30)
    producer.close()
    states = ChangelogReader(changelog, {"bootstrap_servers": bootstrap}, 1 << 20).read_all()
    assert list(states) == [("in", 0)] and states[("in", 0)].offset == 5

"""Service configuration: file < environment < flags, validation messages, secrets kept hidden,
security settings passed through to both Kafka clients."""

from __future__ import annotations

import argparse
import os
import pickle

import pytest

from streamnb.cli import build_parser, main
from streamnb.consumers.config import ConfigError, add_arguments, dump_config, load_config

SECRET = "s3cr3t-Pa55"


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


def test_flags_beat_environment_beat_file(tmp_path):
    path = tmp_path / "service.toml"
    path.write_text('bootstrap-servers = "file:1"\nmodel = "ml"\ninput_topic = ["f1", "f2"]\n'
                    "max-poll-records = 7\npublish-labelled = true\n")
    env = {"STREAMNB_MODEL": "laplace", "STREAMNB_MAX_POLL_RECORDS": "9",
           "STREAMNB_CONFIG": str(path)}
    cfg = load_config(parse(["--model", "tan"]), environ=env)
    assert (cfg.bootstrap_servers, cfg.model, cfg.input_topic, cfg.max_poll_records,
            cfg.publish_labelled) == ("file:1", "tan", ["f1", "f2"], 9, True)
    cfg = load_config(parse(["--input-topic", "a", "--input-topic", "b,c",
                             "--no-publish-labelled"]), environ=env)
    assert cfg.input_topic == ["a", "b", "c"] and cfg.publish_labelled is False
    assert load_config(parse([]), environ={}).model == "spam-filter"


@pytest.mark.parametrize(("source", "message"), [
    ({"STREAMNB_MAX_POLL_RECORDS": "many"}, "'max-poll-records' must be an integer, got 'many'"),
    ({"STREAMNB_MAX_POLL_RECORDS": "0"}, "'max-poll-records' must be >= 1, got 0"),
    ({"STREAMNB_MODEL": "svm"}, "'model' must be one of"),
    ({"STREAMNB_PUBLISH_LABELLED": "maybe"}, "'publish-labelled' must be a boolean"),
    ({"STREAMNB_METRICS_ADDRESS": "9108"}, "'metrics-address' must be host:port, got '9108'"),
    ({"STREAMNB_OUTPUT_TOPIC": "streamnb-input"}, "'output-topic' ('streamnb-input') must "
     "differ"),
    ({"STREAMNB_HALF_LIFE": "7d"}, "'half-life' must be a number, got '7d'"),
    ({"STREAMNB_HALF_LIFE": "nan"}, "'half-life' must be a finite number, got 'nan'"),
    ({"STREAMNB_HALF_LIFE": "inf"}, "'half-life' must be a finite number, got 'inf'"),
    ({"STREAMNB_HALF_LIFE": "-1"}, "'half-life' must be >= 0, got -1.0"),
    ({"STREAMNB_HALF_LIFE": "0.5"}, "'half-life' must be 0 (never forget) or >= 1 offset, "
     "got 0.5"),
    ({"STREAMNB_DECAY_EVERY": "-2"}, "'decay-every' must be >= 0, got -2"),
    ({"STREAMNB_HALF_LIFE": "100", "STREAMNB_HALF_LIFE_SECONDS": "60"},
     "options 'half-life' (offsets) and 'half-life-seconds' (time) exclude each other"),
    ({"STREAMNB_HALF_LIFE_SECONDS": "inf"}, "'half-life-seconds' must be a finite number"),
    ({"STREAMNB_DRIFT_DETECTOR": "adwin"}, "'drift-detector' must be one of"),
    ({"STREAMNB_DRIFT_DECAY": "0"}, "'drift-decay' must be in (0, 1], got 0.0"),
    ({"STREAMNB_DRIFT_DECAY": "1.5"}, "'drift-decay' must be in (0, 1], got 1.5"),
    ({"STREAMNB_DRIFT_DECAY": "nan"}, "'drift-decay' must be a finite number, got 'nan'"),
])
def test_bad_values_are_named(source, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config(parse([]), environ=source)


def test_unknown_key_in_a_file_lists_what_is_allowed(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('bootstrap_server = "x:1"\n')
    with pytest.raises(ConfigError, match="unknown option 'bootstrap_server'; allowed: "
                       "bootstrap-servers"):
        load_config(parse(["--config", str(path)]), environ={})


def test_security_settings_reach_consumer_and_producer():
    cfg = load_config(parse(["--security-protocol", "SASL_SSL", "--sasl-mechanism",
                             "SCRAM-SHA-512", "--sasl-plain-username", "svc",
                             "--ssl-cafile", "/etc/ca.pem", "--no-ssl-check-hostname"]),
                      environ={"STREAMNB_SASL_PLAIN_PASSWORD": SECRET,
                               "STREAMNB_BOOTSTRAP_SERVERS": "b1:9093,b2:9093"})
    expected = {"bootstrap_servers": ["b1:9093", "b2:9093"], "security_protocol": "SASL_SSL",
                "sasl_mechanism": "SCRAM-SHA-512", "sasl_plain_username": "svc",
                "sasl_plain_password": SECRET, "ssl_cafile": "/etc/ca.pem",
                "ssl_check_hostname": False}
    for options in (cfg.consumer_options(), cfg.producer_options()):
        assert {k: options.get(k) for k in expected} == expected
    # unset options are left to kafka-python's defaults
    assert "ssl_certfile" not in cfg.producer_options()
    assert "sasl_plain_password" not in load_config(parse([]), environ={}).kafka_options()


def test_secrets_never_show(tmp_path, capsys):
    env = {"STREAMNB_SSL_PASSWORD": SECRET}
    cfg = load_config(parse(["--sasl-plain-password", SECRET]), environ=env)
    assert SECRET not in repr(cfg) and SECRET not in str(cfg.redacted())
    assert SECRET not in dump_config(cfg) and 'sasl-plain-password = "***"' in dump_config(cfg)
    with pytest.raises(TypeError):
        pickle.dumps(cfg.sasl_plain_password)
    # --help and --print-config, with the secret in the environment and on the command line
    os.environ["STREAMNB_SASL_PLAIN_PASSWORD"] = SECRET
    try:
        with pytest.raises(SystemExit):
            build_parser().parse_args(["serve", "--help"])
        assert main(["serve", "--print-config", "--ssl-password", SECRET]) == 0
    finally:
        del os.environ["STREAMNB_SASL_PLAIN_PASSWORD"]
    out = capsys.readouterr()
    assert SECRET not in out.out + out.err
    assert "STREAMNB_SASL_PLAIN_PASSWORD" in out.out and 'ssl-password = "***"' in out.out


def test_every_number_has_an_upper_bound():
    """A number too large for the service (a 10¹⁰-record window: a 75 GiB allocation; a
    timeout past what a thread can wait) is refused by name, for every numeric option."""
    from streamnb.consumers.options import OPTIONS, coerce

    numeric = [o for o in OPTIONS if o.kind in (int, float) or o.item in (int, float)]
    assert {o.name for o in numeric} >= {"windows", "max-poll-records", "snapshot-generations",
                                         "shutdown-timeout-seconds"}
    for o in numeric:
        with pytest.raises(ConfigError, match=f"'{o.name}' must be"):
            load_config({o.attribute: "1" + "0" * 30}, environ={})
        if o.name != "drift-decay":  # (0, 1], checked with the other options
            assert o.maximum is not None, o.name
            coerce(o, str(o.maximum), "test")  # the bound itself is in
        if o.maximum is not None and o.maximum >= 10:  # and the digit past it is out
            with pytest.raises(ConfigError, match=f"'{o.name}' must be <="):
                coerce(o, str(int(o.maximum) * 10), "test")


@pytest.mark.parametrize("argv, named", [
    (["--windows", "10000000000"], "'windows' must be <= 1000000, got 10000000000"),
    (["--model", "foo"], "'model' must be one of 'spam-filter', 'indifferent', 'ml', "),
    (["--log-level", "loud"], "'log-level' must be one of 'debug', 'info'"),
    (["--max-poll-records", "99999999999999999999"], "'max-poll-records' must be <= "),
])
def test_a_bad_option_is_one_line_and_status_2(argv, named, capsys):
    assert main(["serve", "--input-topic", "t", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and named in err, err


def test_a_config_file_nested_too_deep_is_one_line(tmp_path, capsys):
    path = tmp_path / "deep.toml"
    path.write_text("windows = " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert main(["serve", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"streamnb serve: config file {path}: nested too deep\n"

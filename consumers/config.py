"""The service's configuration: one table of options read from a file, the environment and flags.

Every option has a command-line flag ``--name``, an environment variable ``STREAMNB_NAME``
(upper case, dashes as underscores) and a key in a TOML config file (``name`` with dashes or
underscores). A flag beats the environment, which beats the file, which beats the default.
Repeatable options take a list in the file and a comma-separated list in the environment.

Secrets (the SASL password, the SSL key password) are held in :class:`Secret`, whose ``str`` and
``repr`` are ``'***'``: a config dump, a log line or an exception message cannot show them; only
the dictionaries handed to the Kafka client reveal them.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from consumers.drift import DETECTORS

__all__ = ["OPTIONS", "ConfigError", "Option", "RedactSecrets", "Secret", "ServiceConfig",
           "add_arguments", "dump_config", "load_config"]

ENV_PREFIX = "STREAMNB_"
MODEL_NAMES = ("spam-filter", "indifferent", "ml", "laplace", "m-estimate", "bibl", "tan", "aode")
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "GSSAPI", "OAUTHBEARER", "SCRAM-SHA-256", "SCRAM-SHA-512")
LOG_LEVELS = ("debug", "info", "warning", "error")
OFFSET_GAP_POLICIES = ("fail", "reset-state", "continue-from-earliest")
DRIFT_DETECTORS = tuple(DETECTORS)


class ConfigError(ValueError):
    """An option with a bad value, an unknown key in a config file, or an unreadable file."""


class Secret:
    """A string that never shows itself: ``str``/``repr`` give ``'***'``; :meth:`reveal` gives
    the value (only for the Kafka client's configuration)."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = str(value)

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self):  # never let a secret travel through pickle
        raise TypeError("a Secret cannot be pickled")


class RedactSecrets(logging.Filter):
    """A handler filter that replaces the given secrets by ``***`` in every record, its
    arguments and its traceback: kafka-python logs its whole configuration at debug level
    (``KafkaAdminClient``), passwords included.

    Examples
    --------
    >>> record = logging.LogRecord("kafka", 10, "", 0, "config: %s", ({"pw": "hunter2"},), None)
    >>> RedactSecrets(["hunter2"]).filter(record), record.getMessage()
    (True, "config: {'pw': '***'}")

    """

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s]

    def _redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            record.msg, record.args = self._redact(record.getMessage()), None
            if record.exc_info and not record.exc_text:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            if record.exc_text:
                record.exc_text = self._redact(record.exc_text)
            if record.stack_info:
                record.stack_info = self._redact(record.stack_info)
        return True


@dataclass(frozen=True)
class Option:
    """One option: its name (the flag without dashes), type, default and help."""

    name: str
    kind: type  # str, int, float, bool, list (of str) or Secret
    default: Any
    help: str
    choices: tuple[str, ...] | None = None
    minimum: float | None = None
    kafka: str | None = None  # the kafka-python client setting it passes through to

    @property
    def attribute(self) -> str:
        return self.name.replace("-", "_")

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.attribute.upper()


OPTIONS: tuple[Option, ...] = (
    # -- where the messages are --------------------------------------------------------------
    Option("bootstrap-servers", str, "localhost:9092",
           "Kafka brokers, host:port[,host:port...]", kafka="bootstrap_servers"),
    Option("input-topic", list, ["streamnb-input"],
           "topic to classify and learn from (repeatable)"),
    Option("output-topic", str, "streamnb-predictions",
           "topic of the predictions, keyed by message id"),
    Option("dead-letter-topic", str, "streamnb-dead-letters",
           "topic of rejected messages (original bytes, header streamnb-error = reason)"),
    Option("changelog-topic", str, "streamnb-changelog",
           "topic of per-partition model states (keyed by partition; '' for none)"),
    Option("group-id", str, "streamnb",
           "consumer group; '' for a standalone instance that reads every partition itself"),
    Option("group-instance-id", str, "",
           "static group membership id (a restarted member takes its place back without "
           "waiting for its session to expire)"),
    Option("client-id", str, "streamnb", "client id sent to the brokers", kafka="client_id"),
    Option("bootstrap-timeout-ms", int, 0, "give up connecting to the brokers after this long "
           "(0: the client's default, 30 s in kafka-python 3)", minimum=0,
           kafka="bootstrap_timeout_ms"),
    # -- the model ------------------------------------------------------------------------------
    Option("model", str, "spam-filter", "classifier (spam-filter: streamnb.SpamFilter, for text "
           "messages; the others take any features)", choices=MODEL_NAMES),
    Option("relearn-every", int, 1000,
           "tan, aode: a new shared candidate list (and tan's tree) after every this many "
           "labelled records of a partition, and after 1, 2, 4, ... before (0: one list, after "
           "the first record)", minimum=0),
    Option("half-life", float, 0.0,
           "forget: a partition's counts halve every this many offsets of its log (a function "
           "of offsets, not of time, so restarts and rebalances give the same state; 0: never "
           "forget)", minimum=0.0),
    Option("half-life-seconds", float, 0.0,
           "forget by time instead: a partition's counts halve every this many seconds of its "
           "records' timestamps (the largest read so far: a function of the log, not of the "
           "wall clock; 0: never forget)", minimum=0.0),
    Option("decay-every", int, 0,
           "with a half-life, decay at every offset (with --half-life-seconds: second of the "
           "partition's clock) that is a multiple of this (0: half-life/16, at least 1); "
           "between two points the counts stay put", minimum=0),
    Option("drift-detector", str, "none",
           "react to drift: each partition's state predicts each labelled record before "
           "learning it, and this river detector reads its errors; on a drift the partition's "
           "counts are multiplied by --drift-decay and its structure re-learned",
           choices=("none", *DRIFT_DETECTORS)),
    Option("drift-decay", float, 0.5,
           "with a drift detector, the factor applied to a partition's counts at a drift, in "
           "(0, 1] (1: re-learn the structure only)", minimum=0.0),
    Option("max-candidates", int, 100,
           "attributes with pairwise counts (tan, aode)", minimum=2),
    Option("publisher-process", bool, True,
           "publish predictions from a helper process (kafka-python's producer costs about as "
           "much CPU per record as its consumer: on a second core the two overlap)"),
    Option("publisher-client", str, "auto",
           "producer of the publisher process: confluent-kafka (librdkafka, the fast-publisher "
           "extra) when installed, else kafka-python", choices=("auto", "kafka-python",
                                                                  "confluent-kafka")),
    Option("consumer-client", str, "auto",
           "client reading the input topics: confluent-kafka (librdkafka, the fast-publisher "
           "extra) when installed and every setting translates, else kafka-python",
           choices=("auto", "kafka-python", "confluent-kafka")),
    Option("publish-labelled", bool, False,
           "also publish the prequential prediction of each labelled message"),
    # -- state ----------------------------------------------------------------------------------
    Option("snapshot-dir", str, "streamnb-state",
           "directory of this instance's snapshots (one per instance)"),
    Option("snapshot-generations", int, 3,
           "snapshot files kept (the newest and the ones before it, each checksummed): an "
           "unreadable newest one falls back to the one before, then to the changelog",
           minimum=1),
    Option("snapshot-every-records", int, 20000,
           "snapshot (and publish the changelog) after this many records", minimum=1),
    Option("snapshot-every-seconds", float, 30.0,
           "... or after this many seconds", minimum=0.01),
    Option("offset-gap-policy", str, "fail",
           "what to do when a partition's state is not within the broker's log (topic deleted "
           "and re-created, offsets reset, truncation, retention deleting unread records): "
           "fail (stop, exit status 3), reset-state (re-learn the partition from its earliest "
           "record) or continue-from-earliest (keep the state, read on from the earliest "
           "record; records deleted unread are counted as lost)",
           choices=OFFSET_GAP_POLICIES),
    Option("rebuild-every-seconds", float, 2.0,
           "at most this often, re-sum the model when other members' states changed",
           minimum=0.0),
    # -- input handling ------------------------------------------------------------------------
    Option("max-poll-records", int, 1000, "records per poll (one batch)", minimum=1),
    Option("poll-timeout-ms", int, 200, "longest wait of one poll", minimum=0),
    Option("max-classes", int, 1000,
           "classes a partition's state may learn: a labelled message of a new class beyond "
           "them goes to the dead-letter topic as 'too_many_classes' (0: no bound)", minimum=0),
    Option("max-message-bytes", int, 1_000_000,
           "larger messages go to the dead-letter topic as 'oversize'", minimum=1),
    Option("changelog-max-bytes", int, 64_000_000,
           "largest changelog record (a compressed partition state)", minimum=1024),
    Option("session-timeout-ms", int, 10000, "group session timeout",
           minimum=1, kafka="session_timeout_ms"),
    Option("heartbeat-interval-ms", int, 3000, "group heartbeat interval",
           minimum=1, kafka="heartbeat_interval_ms"),
    Option("check-crcs", bool, True, "verify record checksums (librdkafka computes them in C; "
           "kafka-python in Python unless the crc32c package is installed)",
           kafka="check_crcs"),
    Option("shutdown-timeout-seconds", float, 30.0,
           "longest shutdown on SIGTERM/SIGINT: flushing, publishing and committing give up "
           "after this long (the local snapshot is written regardless; exit status 4 if "
           "something failed)", minimum=0.1),
    # -- observability -------------------------------------------------------------------------
    Option("metrics-address", str, "127.0.0.1:9108",
           "host:port of the Prometheus endpoint ('' for none; port 0: any free port)"),
    Option("windows", list, ["1000", "10000"],
           "sliding windows (records) of the prequential accuracy and log-loss"),
    Option("log-level", str, "info", "log level", choices=LOG_LEVELS),
    # -- security, passed through to the Kafka client -------------------------------------------
    Option("security-protocol", str, "PLAINTEXT", "how to reach the brokers",
           choices=SECURITY_PROTOCOLS, kafka="security_protocol"),
    Option("sasl-mechanism", str, "", "SASL mechanism", choices=("", *SASL_MECHANISMS),
           kafka="sasl_mechanism"),
    Option("sasl-plain-username", str, "", "SASL username (PLAIN, SCRAM)",
           kafka="sasl_plain_username"),
    Option("sasl-plain-password", Secret, "",
           "SASL password (PLAIN, SCRAM); prefer the environment or the config file to a "
           "flag, which other users of the machine can see in the process list",
           kafka="sasl_plain_password"),
    Option("sasl-kerberos-service-name", str, "", "Kerberos service name (GSSAPI)",
           kafka="sasl_kerberos_service_name"),
    Option("ssl-cafile", str, "", "CA certificate file", kafka="ssl_cafile"),
    Option("ssl-certfile", str, "", "client certificate file", kafka="ssl_certfile"),
    Option("ssl-keyfile", str, "", "client private key file", kafka="ssl_keyfile"),
    Option("ssl-password", Secret, "", "password of the client private key",
           kafka="ssl_password"),
    Option("ssl-crlfile", str, "", "certificate revocation list file", kafka="ssl_crlfile"),
    Option("ssl-check-hostname", bool, True, "check the broker's certificate hostname",
           kafka="ssl_check_hostname"),
)
_BY_ATTRIBUTE = {o.attribute: o for o in OPTIONS}


@dataclass(frozen=True)
class ServiceConfig:
    """The effective configuration (one attribute per :data:`OPTIONS` entry, dashes as
    underscores). Build it with :func:`load_config` or ``ServiceConfig.from_mapping``."""

    values: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        merged = {o.attribute: _coerce(o, _copy_default(o.default), "default") for o in OPTIONS}
        for key, value in self.values.items():
            option = _option(key, "configuration")
            merged[option.attribute] = _coerce(option, value, "configuration")
        _validate(merged)
        object.__setattr__(self, "values", merged)

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "values")
        try:
            return values[name]
        except KeyError:
            raise AttributeError(name) from None

    def replace(self, **changes: Any) -> ServiceConfig:
        return ServiceConfig({**self.values, **changes})

    def __repr__(self) -> str:
        return f"ServiceConfig({self.redacted()!r})"

    def redacted(self) -> dict[str, Any]:
        """Every option, secrets as ``'***'`` when set (for dumps and logs)."""
        return {o.name: ("***" if o.kind is Secret and self.values[o.attribute].reveal()
                         else "" if o.kind is Secret else self.values[o.attribute])
                for o in OPTIONS}

    def secrets(self) -> list[str]:
        """The values of the secret options that are set (for :class:`RedactSecrets`)."""
        return [v.reveal() for o in OPTIONS if o.kind is Secret
                for v in [self.values[o.attribute]] if v.reveal()]

    @property
    def window_sizes(self) -> list[int]:
        return [int(w) for w in self.values["windows"]]

    def kafka_options(self) -> dict[str, Any]:
        """Settings common to the consumer and the producer (connection and security);
        options left empty are left to kafka-python's defaults."""
        out: dict[str, Any] = {}
        for o in OPTIONS:
            if o.kafka is None or o.kafka in ("session_timeout_ms", "heartbeat_interval_ms",
                                              "check_crcs"):
                continue
            value = self.values[o.attribute]
            if o.kind is Secret:
                value = value.reveal() or None
            elif o.kind is str or o.kind is int:  # empty or 0: the client's default
                value = value or None
            if value is not None:
                out[o.kafka] = value
        if self.values["bootstrap_servers"]:
            out["bootstrap_servers"] = self.values["bootstrap_servers"].split(",")
        return out

    def consumer_options(self) -> dict[str, Any]:
        """The input consumer: batches, manual commits, checksums; group settings if any."""
        # no automatic reset: an offset out of the log's range raises OffsetOutOfRangeError,
        # which the service handles by its --offset-gap-policy (every position is set by seek)
        out = {**self.kafka_options(), "enable_auto_commit": False,
               "auto_offset_reset": "none", "check_crcs": self.values["check_crcs"],
               "max_poll_records": self.values["max_poll_records"]}
        if self.values["group_id"]:
            out.update(group_id=self.values["group_id"],
                       session_timeout_ms=self.values["session_timeout_ms"],
                       heartbeat_interval_ms=self.values["heartbeat_interval_ms"])
            if self.values["group_instance_id"]:
                out["group_instance_id"] = self.values["group_instance_id"]
        return out

    def producer_options(self) -> dict[str, Any]:
        """Predictions, dead letters and changelog states: acknowledged writes (``acks=0``
        loses messages), large enough for a partition state."""
        return {**self.kafka_options(), "acks": "all", "linger_ms": 5,
                "batch_size": 256 * 1024,
                "max_request_size": max(self.values["changelog_max_bytes"],
                                        self.values["max_message_bytes"] + 64 * 1024)}

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> ServiceConfig:
        return cls(dict(values))


def _copy_default(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value


def _option(key: str, source: str) -> Option:
    option = _BY_ATTRIBUTE.get(str(key).replace("-", "_"))
    if option is None:
        raise ConfigError(f"{source}: unknown option {key!r}; allowed: "
                          f"{', '.join(o.name for o in OPTIONS)}")
    return option


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _coerce(option: Option, value: Any, source: str) -> Any:
    """``value`` (from a file, the environment or a flag) as the option's type."""
    name = f"{source}: option {option.name!r}"
    kind = option.kind
    if kind is Secret:
        if isinstance(value, Secret):
            return value
        if not isinstance(value, str):
            raise ConfigError(f"{name} must be a string")
        return Secret(value)
    if kind is list:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not (isinstance(value, list | tuple) and all(isinstance(v, str | int) for v in value)):
            raise ConfigError(f"{name} must be a list of strings, got {value!r}")
        return [str(v) for v in value]
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise ConfigError(f"{name} must be a boolean (true/false, 1/0, yes/no), got {value!r}")
    if kind in (int, float):
        wanted = "an integer" if kind is int else "a number"
        if isinstance(value, bool) or (kind is int and isinstance(value, float)):
            raise ConfigError(f"{name} must be {wanted}, got {value!r}")
        try:
            number = kind(value.strip() if isinstance(value, str) else value)
        except (TypeError, ValueError, OverflowError):
            raise ConfigError(f"{name} must be {wanted}, got {value!r}") from None
        if not math.isfinite(number):  # nan compares false with any bound: never let it in
            raise ConfigError(f"{name} must be a finite number, got {value!r}")
        if option.minimum is not None and number < option.minimum:
            raise ConfigError(f"{name} must be >= {option.minimum:g}, got {number!r}")
        return number
    if not isinstance(value, str):
        raise ConfigError(f"{name} must be a string, got {value!r}")
    if option.choices is not None and value not in option.choices:
        raise ConfigError(f"{name} must be one of {', '.join(map(repr, option.choices))}, "
                          f"got {value!r}")
    return value


def _validate(values: Mapping[str, Any]) -> None:
    """Checks across options, with messages naming option, value and what is allowed."""
    if not values["input_topic"]:
        raise ConfigError("option 'input-topic' needs at least one topic")
    for w in values["windows"]:
        if not (w.isdigit() and int(w) > 0):
            raise ConfigError(f"option 'windows' must list positive integers, got {w!r}")
    address = values["metrics_address"]
    if address:
        host, _, port = address.rpartition(":")
        if not (host and port.isdigit() and int(port) < 65536):
            raise ConfigError(f"option 'metrics-address' must be host:port, got {address!r}")
    if values["heartbeat_interval_ms"] >= values["session_timeout_ms"]:
        raise ConfigError(f"option 'heartbeat-interval-ms' ({values['heartbeat_interval_ms']}) "
                          f"must be below 'session-timeout-ms' "
                          f"({values['session_timeout_ms']})")
    if not 0 < values["drift_decay"] <= 1:
        raise ConfigError(f"option 'drift-decay' must be in (0, 1], got "
                          f"{values['drift_decay']!r}")
    if values["half_life"] and values["half_life_seconds"]:
        raise ConfigError("options 'half-life' (offsets) and 'half-life-seconds' (time) "
                          "exclude each other: give one")
    if 0 < values["half_life_seconds"] < 0.001:
        raise ConfigError(f"option 'half-life-seconds' must be 0 (never forget) or >= 0.001, "
                          f"got {values['half_life_seconds']!r}")
    if 0 < values["half_life"] < 1:
        raise ConfigError(f"option 'half-life' must be 0 (never forget) or >= 1 offset, got "
                          f"{values['half_life']!r}")
    if values["group_instance_id"] and not values["group_id"]:
        raise ConfigError("option 'group-instance-id' needs a 'group-id'")
    topics = set(values["input_topic"])
    for name in ("output_topic", "dead_letter_topic", "changelog_topic"):
        if values[name] in topics:
            raise ConfigError(f"option '{name.replace('_', '-')}' ({values[name]!r}) must differ "
                              "from every input topic")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One flag per option. Defaults are left out of the parsed namespace (None), so that the
    environment and the file can fill what the flags did not say; ``--help`` shows the built-in
    defaults, never a value taken from the environment."""
    parser.add_argument("--config", default=None, metavar="FILE",
                        help=f"TOML config file (or ${ENV_PREFIX}CONFIG)")
    for o in OPTIONS:
        flag = f"--{o.name}"
        if o.kind is Secret:
            shown = "unset"
        elif o.kind is list:
            shown = ",".join(o.default)
        else:
            shown = o.default if o.default != "" else "''"
        text = f"{o.help} (default: {shown}; env {o.env})"
        text = text.replace("%", "%%")
        if o.kind is bool:
            parser.add_argument(flag, dest=o.attribute, default=None,
                                action=argparse.BooleanOptionalAction, help=text)
        elif o.kind is list:
            parser.add_argument(flag, dest=o.attribute, default=None, action="append",
                                metavar=o.attribute.upper(), help=text)
        else:
            parser.add_argument(flag, dest=o.attribute, default=None,
                                metavar=o.attribute.upper(), help=text,
                                choices=o.choices if o.kind is str else None)


def load_config(flags: argparse.Namespace | Mapping[str, Any] | None = None,
                environ: Mapping[str, str] | None = None,
                config_file: str | os.PathLike | None = None) -> ServiceConfig:
    """Defaults, then the config file, then ``STREAMNB_*`` variables, then flags.

    Parameters
    ----------
    flags
        Parsed flags (None for a flag not given), e.g. from a parser set up by
        :func:`add_arguments`.
    environ
        The environment (default ``os.environ``).
    config_file
        A TOML file; default: the ``--config`` flag, else ``$STREAMNB_CONFIG``.

    Examples
    --------
    >>> cfg = load_config({"model": "tan"}, environ={"STREAMNB_MODEL": "ml",
    ...                                             "STREAMNB_INPUT_TOPIC": "a,b"})
    >>> cfg.model, cfg.input_topic
    ('tan', ['a', 'b'])

    """
    environ = os.environ if environ is None else environ
    flags = vars(flags) if isinstance(flags, argparse.Namespace) else dict(flags or {})
    values: dict[str, Any] = {}
    path = config_file or flags.get("config") or environ.get(ENV_PREFIX + "CONFIG")
    if path:
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"config file {path}: {exc}") from None
        for key, value in data.items():
            option = _option(key, f"config file {path}")
            values[option.attribute] = _coerce(option, value, f"config file {path}")
    for o in OPTIONS:
        if o.env in environ:
            values[o.attribute] = _coerce(o, environ[o.env], f"environment {o.env}")
    for o in OPTIONS:
        value = flags.get(o.attribute)
        if value is None:
            continue
        if o.kind is list:  # each repeat may itself be a comma-separated list
            value = [v for item in value for v in _coerce(o, item, "flag")]
        values[o.attribute] = _coerce(o, value, f"flag --{o.name}")
    return ServiceConfig(values)


def dump_config(config: ServiceConfig) -> str:
    """The effective configuration as TOML, secrets redacted."""
    lines = []
    for name, value in config.redacted().items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int | float):
            text = repr(value)
        elif isinstance(value, list):
            text = "[" + ", ".join(_toml_string(v) for v in value) + "]"
        else:
            text = _toml_string(str(value))
        lines.append(f"{name} = {text}")
    return "\n".join(lines) + "\n"


def _toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


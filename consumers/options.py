"""The service's options: one table (:data:`OPTIONS`) with each option's name, type, default,
help, allowed values and the Kafka client setting it passes through to, and how a value from a
file, the environment or a flag becomes the option's type (:func:`coerce`).

Every option has a command-line flag ``--name``, an environment variable ``STREAMNB_NAME``
(upper case, dashes as underscores) and a key in a TOML config file (``name`` with dashes or
underscores); :mod:`.config` layers them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from streamnb.consumers.drift import DETECTORS
from streamnb.consumers.redaction import Secret

__all__ = ["ENV_PREFIX", "MODEL_NAMES", "OPTIONS", "ConfigError", "Option", "coerce",
           "find_option"]

ENV_PREFIX = "STREAMNB_"
MODEL_NAMES = ("spam-filter", "indifferent", "ml", "laplace", "m-estimate", "bibl", "tan", "aode")
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "GSSAPI", "OAUTHBEARER", "SCRAM-SHA-256", "SCRAM-SHA-512")
LOG_LEVELS = ("debug", "info", "warning", "error")
OFFSET_GAP_POLICIES = ("fail", "reset-state", "continue-from-earliest")
DRIFT_DETECTORS = tuple(DETECTORS)


class ConfigError(ValueError):
    """An option with a bad value, an unknown key in a config file, or an unreadable file."""


@dataclass(frozen=True)
class Option:
    """One option: its name (the flag without dashes), type, default and help."""

    name: str
    kind: type  # str, int, float, bool, list (of str) or Secret
    default: Any
    help: str
    choices: tuple[str, ...] | None = None
    minimum: float | None = None
    # every number has an upper bound too: a value the service cannot hold (a 10¹⁰-record
    # window, a timeout past what a thread can wait) is one line at start, not a traceback later
    maximum: float | None = None
    item: type | None = None  # a list's item type, when not str (bounded as above)
    kafka: str | None = None  # the kafka-python client setting it passes through to

    @property
    def attribute(self) -> str:
        return self.name.replace("-", "_")

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.attribute.upper()

    @property
    def bounds(self) -> str:
        """``"low to high"`` for ``--help`` (empty for an option without bounds)."""
        if self.minimum is None or self.maximum is None:
            return ""
        return f"{_show(self.minimum)} to {_show(self.maximum)}"


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
           "(0: the client's default, 30 s in kafka-python 3)", minimum=0, maximum=3_600_000,
           kafka="bootstrap_timeout_ms"),
    # -- the model ------------------------------------------------------------------------------
    Option("model", str, "spam-filter", "classifier (spam-filter: streamnb.SpamFilter, for text "
           "messages; the others take any features)", choices=MODEL_NAMES),
    Option("relearn-every", int, 1000,
           "tan, aode: a new shared candidate list (and tan's tree) after every this many "
           "labelled records of a partition, and after 1, 2, 4, ... before (0: one list, after "
           "the first record)", minimum=0, maximum=1_000_000_000),
    Option("half-life", float, 0.0,
           "forget: a partition's counts halve every this many offsets of its log (a function "
           "of offsets, not of time, so restarts and rebalances give the same state; 0: never "
           "forget)", minimum=0.0, maximum=1e15),
    Option("half-life-seconds", float, 0.0,
           "forget by time instead: a partition's counts halve every this many seconds of its "
           "records' timestamps (the largest read so far: a function of the log, not of the "
           "wall clock; 0: never forget)", minimum=0.0, maximum=1e12),
    Option("decay-every", int, 0,
           "with a half-life, decay at every offset (with --half-life-seconds: second of the "
           "partition's clock) that is a multiple of this (0: half-life/16, at least 1); "
           "between two points the counts stay put", minimum=0, maximum=10**15),
    Option("drift-detector", str, "none",
           "react to drift: each partition's state predicts each labelled record before "
           "learning it, and this river detector reads its errors; on a drift the partition's "
           "counts are multiplied by --drift-decay and its structure re-learned",
           choices=("none", *DRIFT_DETECTORS)),
    Option("drift-decay", float, 0.5,
           "with a drift detector, the factor applied to a partition's counts at a drift, in "
           "(0, 1] (1: re-learn the structure only)", minimum=0.0),
    Option("max-ham-rate", float, 0.0,
           "spam-filter: keep the share of ham classified as spam at or below this (0.001: "
           "one in a thousand), with a threshold learned from the labelled messages' scores "
           "(after a warm-up of 1/rate labelled ham; 0: the fixed threshold 0)",
           minimum=0.0, maximum=0.5),
    Option("max-candidates", int, 100,
           "attributes with pairwise counts (tan, aode)", minimum=2, maximum=10_000),
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
           minimum=1, maximum=1000),
    Option("snapshot-every-records", int, 20000,
           "snapshot (and publish the changelog) after this many records",
           minimum=1, maximum=10**12),
    Option("snapshot-every-seconds", float, 30.0,
           "... or after this many seconds", minimum=0.01, maximum=1e7),
    Option("offset-gap-policy", str, "fail",
           "what to do when a partition's state is not within the broker's log (topic deleted "
           "and re-created, offsets reset, truncation, retention deleting unread records): "
           "fail (stop, exit status 3), reset-state (re-learn the partition from its earliest "
           "record) or continue-from-earliest (keep the state, read on from the earliest "
           "record; records deleted unread are counted as lost)",
           choices=OFFSET_GAP_POLICIES),
    Option("offset-check-seconds", float, 60.0,
           "while serving, check each owned partition against the broker's log this often "
           "(one fetch each), besides at assignment and after every outage, so that a log "
           "replaced under the running service is an offset gap (0: only then)",
           minimum=0.0, maximum=86_400.0),
    Option("rebuild-every-seconds", float, 2.0,
           "at most this often, re-sum the model when other members' states changed",
           minimum=0.0, maximum=86_400.0),
    # -- input handling ------------------------------------------------------------------------
    Option("max-poll-records", int, 1000, "records per poll (one batch)",
           minimum=1, maximum=1_000_000),
    Option("poll-timeout-ms", int, 200, "longest wait of one poll", minimum=0, maximum=60_000),
    Option("max-classes", int, 1000,
           "classes the model (the sum of every partition's state) may hold: a labelled "
           "message of a new class beyond them goes to the dead-letter topic as "
           "'too_many_classes' (0: no bound)", minimum=0, maximum=1_000_000),
    Option("max-message-bytes", int, 1_000_000,
           "larger messages go to the dead-letter topic as 'oversize'",
           minimum=1, maximum=1_000_000_000),
    Option("changelog-max-bytes", int, 64_000_000,
           "largest changelog record (a compressed partition state)",
           minimum=1024, maximum=1_000_000_000),
    Option("session-timeout-ms", int, 10000, "group session timeout",
           minimum=1, maximum=3_600_000, kafka="session_timeout_ms"),
    Option("heartbeat-interval-ms", int, 3000, "group heartbeat interval",
           minimum=1, maximum=3_600_000, kafka="heartbeat_interval_ms"),
    Option("check-crcs", bool, True, "verify record checksums (librdkafka computes them in C; "
           "kafka-python in Python unless the crc32c package is installed)",
           kafka="check_crcs"),
    Option("shutdown-timeout-seconds", float, 30.0,
           "longest shutdown on SIGTERM/SIGINT: flushing, publishing and committing give up "
           "after this long (the local snapshot is written regardless; exit status 4 if "
           "something failed)", minimum=0.1, maximum=3600.0),
    # -- observability -------------------------------------------------------------------------
    Option("metrics-address", str, "127.0.0.1:9108",
           "host:port of the Prometheus endpoint ('' for none; port 0: any free port)"),
    Option("windows", list, [1000, 10000],
           "sliding windows (records) of the prequential accuracy and log-loss (each keeps 24 "
           "bytes a record)", item=int, minimum=1, maximum=1_000_000),
    Option("rate-window", int, 0,
           "spam-filter: the realised ham->spam and spam->ham rates are read over the last "
           "this many labelled ham and spam each (0: 10/max-ham-rate, where 10 hams of the "
           "window are lost at the target; 10000 without one)", minimum=0,
           maximum=100_000_000),
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


def find_option(key: str, source: str) -> Option:
    """The option a key names (a flag's name, dashes or underscores), or a ConfigError that
    lists the allowed ones."""
    option = _BY_ATTRIBUTE.get(str(key).replace("-", "_"))
    if option is None:
        raise ConfigError(f"{source}: unknown option {key!r}; allowed: "
                          f"{', '.join(o.name for o in OPTIONS)}")
    return option


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def coerce(option: Option, value: Any, source: str) -> Any:
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
        if option.item is not None:
            return [_number(option, option.item, v, name) for v in value]
        return [str(v) for v in value]
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise ConfigError(f"{name} must be a boolean (true/false, 1/0, yes/no), got {value!r}")
    if kind in (int, float):
        return _number(option, kind, value, name)
    if not isinstance(value, str):
        raise ConfigError(f"{name} must be a string, got {value!r}")
    if option.choices is not None and value not in option.choices:
        raise ConfigError(f"{name} must be one of {', '.join(map(repr, option.choices))}, "
                          f"got {value!r}")
    return value


def _number(option: Option, kind: type, value: Any, name: str) -> int | float:
    """``value`` as an int or float within the option's bounds."""
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
        raise ConfigError(f"{name} must be >= {_show(option.minimum)}, got {number!r}")
    if option.maximum is not None and number > option.maximum:
        raise ConfigError(f"{name} must be <= {_show(option.maximum)}, got {number!r}")
    return number


def _show(bound: float) -> str:
    return f"{bound:g}" if isinstance(bound, float) else str(bound)

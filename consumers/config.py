"""The service's configuration: :class:`ServiceConfig`, the effective value of every option of
:data:`~streamnb.consumers.options.OPTIONS` (checked together, and turned into the Kafka
clients' settings), read from a file, the environment and flags, and dumped as TOML.

A flag beats the environment, which beats the file, which beats the default. Repeatable options
take a list in the file and a comma-separated list in the environment.
"""

from __future__ import annotations

import argparse
import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamnb.consumers.options import ENV_PREFIX, OPTIONS, ConfigError, coerce, find_option
from streamnb.consumers.redaction import Secret

_LOG2_E = 1 / math.log(2)  # the total weight of a stream halving every H steps is H/ln 2

__all__ = ["ConfigError", "ServiceConfig", "add_arguments", "dump_config", "load_config"]

# the longest delivery timeout both producer clients accept (kafka-python's
# delivery_timeout_ms, librdkafka's message.timeout.ms): 24.8 days, no expiry in practice
DELIVERY_TIMEOUT_MS = 2**31 - 1


@dataclass(frozen=True)
class ServiceConfig:
    """The effective configuration (one attribute per :data:`OPTIONS` entry, dashes as
    underscores). Build it with :func:`load_config` or ``ServiceConfig.from_mapping``."""

    values: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        merged = {o.attribute: coerce(o, _copy_default(o.default), "default") for o in OPTIONS}
        for key, value in self.values.items():
            option = find_option(key, "configuration")
            merged[option.attribute] = coerce(option, value, "configuration")
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
        return list(self.values["windows"])

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
        loses messages), large enough for a partition state, kept until delivered however
        long the brokers are gone (the checkpoint waits for them, bounded; a record expired
        by the client would be lost behind an offset the next snapshot records)."""
        return {**self.kafka_options(), "acks": "all", "linger_ms": 5,
                "delivery_timeout_ms": DELIVERY_TIMEOUT_MS,
                # an idempotent kafka-python producer fails every later record with
                # UnknownProducerIdError once its broker comes back without its log (a
                # restarted broker); these records are at least once anyway
                "enable_idempotence": False,
                "batch_size": 256 * 1024,
                "max_request_size": max(self.values["changelog_max_bytes"],
                                        self.values["max_message_bytes"] + 64 * 1024)}

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> ServiceConfig:
        return cls(dict(values))


def _copy_default(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value


def _validate(values: Mapping[str, Any]) -> None:
    """Checks across options, with messages naming option, value and what is allowed."""
    if not values["input_topic"]:
        raise ConfigError("option 'input-topic' needs at least one topic")
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
    if values["max_ham_rate"] and values["model"] != "spam-filter":
        raise ConfigError(f"option 'max-ham-rate' is one of --model spam-filter, not of "
                          f"{values['model']!r}")
    if (values["max_ham_rate"] and values["half_life"]
            and values["half_life"] * _LOG2_E < 1 / values["max_ham_rate"]):
        # a state forgetting every H offsets holds at most H/ln 2 messages' weight
        raise ConfigError(f"option 'half-life' ({values['half_life']:g} offsets) keeps less "
                          f"weight than the {1 / values['max_ham_rate']:g} ham the threshold "
                          f"of 'max-ham-rate' {values['max_ham_rate']:g} needs: give a "
                          f"half-life of at least {math.ceil(1 / values['max_ham_rate'] / _LOG2_E)}"
                          " offsets, several times more in practice")
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
            shown = ",".join(map(str, o.default))
        else:
            shown = o.default if o.default != "" else "''"
        bounds = f"; {o.bounds}" if o.bounds else ""
        text = f"{o.help} (default: {shown}{bounds}; env {o.env})"
        text = text.replace("%", "%%")
        if o.kind is bool:
            parser.add_argument(flag, dest=o.attribute, default=None,
                                action=argparse.BooleanOptionalAction, help=text)
        elif o.kind is list:
            parser.add_argument(flag, dest=o.attribute, default=None, action="append",
                                metavar=o.attribute.upper(), help=text)
        else:
            # no argparse choices: a bad value is coerce's one line naming the allowed ones,
            # not argparse's usage of every option
            parser.add_argument(flag, dest=o.attribute, default=None,
                                metavar=o.attribute.upper(), help=text)


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
        except RecursionError:  # tomllib recurses once a nesting level: the interpreter bounds it
            raise ConfigError(f"config file {path}: nested too deep") from None
        for key, value in data.items():
            option = find_option(key, f"config file {path}")
            values[option.attribute] = coerce(option, value, f"config file {path}")
    for o in OPTIONS:
        if o.env in environ:
            values[o.attribute] = coerce(o, environ[o.env], f"environment {o.env}")
    for o in OPTIONS:
        value = flags.get(o.attribute)
        if value is None:
            continue
        if o.kind is list:  # each repeat may itself be a comma-separated list
            value = [v for item in value for v in coerce(o, item, f"flag --{o.name}")]
        values[o.attribute] = coerce(o, value, f"flag --{o.name}")
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
            text = "[" + ", ".join(_toml_string(v) if isinstance(v, str) else repr(v)
                                   for v in value) + "]"
        else:
            text = _toml_string(str(value))
        lines.append(f"{name} = {text}")
    return "\n".join(lines) + "\n"


def _toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


"""The service's commands of the ``streamnb`` command line: ``streamnb serve`` (the Kafka
service) and ``streamnb broker`` (the embedded development broker).

They live beside the service so that the library never imports it: :mod:`streamnb.cli` only
hands its sub-command table to :func:`add_parsers` (docs/architecture.md, "Layers"). The
service's modules, its configuration's included, are imported when one of these commands is
chosen, not when another command (``streamnb score``, run per message) parses its arguments.
"""

from __future__ import annotations

import argparse
import faulthandler
import signal
import sys
import time
from typing import Any

__all__ = ["add_parsers", "cmd_broker", "cmd_serve"]


def _configure_logging(level: str) -> None:
    import logging

    from streamnb.consumers.logs import quiet_kafka_logs

    logging.basicConfig(level=level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # kafka-python narrates every connection at INFO: keep it to warnings unless debugging
    logging.getLogger("kafka").setLevel("DEBUG" if level == "debug" else "WARNING")
    if level != "debug":  # and each lost connection with a traceback, many times a second
        for handler in logging.getLogger().handlers:
            quiet_kafka_logs(handler)


def cmd_serve(args: argparse.Namespace) -> int:
    from streamnb.consumers.config import ConfigError, dump_config, load_config

    try:
        config = load_config(args)
    except ConfigError as exc:
        print(f"streamnb serve: {exc}", file=sys.stderr)
        return 2
    if args.print_config:
        print(dump_config(config), end="")
        return 0
    _configure_logging(config.log_level)
    import logging

    from kafka.errors import KafkaError

    from streamnb.consumers.service import Service
    from streamnb.consumers.signals import stopping_signals
    from streamnb.stats.persist import StateFileError

    service = Service(config)
    service.hard_exit = True  # a watchdog bounds the shutdown (--shutdown-timeout-seconds)
    # an operator's (and the tests') view into a process that does not answer: SIGUSR1 writes
    # every thread's stack to stderr and the service goes on
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    try:
        with stopping_signals(service.stop):
            return service.run()
    except (StateFileError, ValueError) as exc:  # a refused snapshot, state or model
        logging.getLogger("streamnb.service").error("%s", exc)
        return 1
    except KafkaError as exc:  # no broker at start-up, refused credentials, ...
        logging.getLogger("streamnb.service").error(
            "cannot start: Kafka at %s: %s", config.bootstrap_servers, exc)
        return 1
    finally:
        faulthandler.unregister(signal.SIGUSR1)


def cmd_broker(args: argparse.Namespace) -> int:
    from streamnb.consumers.broker import BrokerUnavailable, EmbeddedBroker

    try:
        broker = EmbeddedBroker(port=args.port or None, log_path=args.log).start()
    except (BrokerUnavailable, ValueError) as exc:
        print(f"streamnb broker: {exc}", file=sys.stderr)
        return 1
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    print(f"Kafka-protocol broker (tansu, in memory: everything is gone when it stops) at "
          f"{broker.bootstrap_servers}; Ctrl-C or SIGTERM stops it", flush=True)
    try:
        while not stop and broker.alive():
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        died = not broker.alive()
        broker.stop()
    if died and not stop:
        print("streamnb broker: tansu exited on its own", file=sys.stderr)
        return 1
    return 0


def add_parsers(sub: Any) -> None:
    """``serve`` and ``broker`` in the command table ``sub`` (:class:`streamnb.cli.Commands`),
    each defined when chosen."""
    sub.add_parser("serve", help="run the Kafka classification service: predict and learn "
                   "JSON messages from topics, publish predictions and metrics",
                   description="Classify and learn from JSON messages on Kafka topics: "
                   "labelled messages are predicted (prequential metrics), then learned; "
                   "unlabelled ones are predicted and published. Every option is also read "
                   "from STREAMNB_<OPTION> and from a TOML --config file (flags win over the "
                   "environment, which wins over the file).", define=_serve_options)
    sub.add_parser("broker", help="run the embedded development Kafka broker (tansu, in "
                   "memory; the broker extra) until Ctrl-C",
                   description="Start the Kafka-protocol broker the demo and the tests use "
                   "(tansu, in memory: nothing survives it) on 127.0.0.1, print its address "
                   "and wait; for development, not production.", define=_broker_options)


def _serve_options(serve: argparse.ArgumentParser) -> None:
    from streamnb.consumers.config import add_arguments

    add_arguments(serve)
    serve.add_argument("--print-config", action="store_true",
                       help="print the effective configuration (secrets redacted) and exit")
    serve.set_defaults(func=cmd_serve)


def _broker_options(broker: argparse.ArgumentParser) -> None:
    broker.add_argument("--port", type=int, default=9092,
                        help="port on 127.0.0.1 (0: any free port; default: %(default)s, "
                        "what `streamnb serve` connects to by default)")
    broker.add_argument("--log", default=None, help="file for the broker's own log")
    broker.set_defaults(func=cmd_broker)

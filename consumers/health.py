"""The service's health: whether it is ready (``/readyz``), whether a broker is reachable, the
HTTP endpoint that tells both (:mod:`.endpoint`), and the watchdog that bounds the CLI's
shutdown."""

from __future__ import annotations

import faulthandler
import logging
import os
import threading
from collections.abc import Callable

from streamnb.consumers.checkpoint import Checkpoint
from streamnb.consumers.config import ServiceConfig
from streamnb.consumers.endpoint import MetricsServer
from streamnb.consumers.metrics import ServiceMetrics
from streamnb.consumers.recovery import Recovery

__all__ = ["Health", "Watchdog"]

log = logging.getLogger("streamnb.service")


class Health:
    """Readiness and broker reachability of one service member, served over HTTP.

    Attributes
    ----------
    broker_ok : bool
        The consumer has a broker connection (as its client tells).
    url : str
        The Prometheus endpoint, once serving ('' without one).

    """

    def __init__(self, config: ServiceConfig, metrics: ServiceMetrics, recovery: Recovery,
                 checkpoint: Checkpoint, stop: threading.Event) -> None:
        self.config = config
        self.metrics = metrics
        self.recovery = recovery
        self.checkpoint = checkpoint
        self._stop = stop
        self.broker_ok = False
        self._broker_lost = False  # "no Kafka broker reachable" was logged
        self._http: MetricsServer | None = None
        self.url = ""

    def serve(self) -> None:
        """The HTTP endpoint: /metrics, /healthz (the process is up) and /readyz."""
        address = self.config.metrics_address
        if not address:
            return
        host, _, port = address.rpartition(":")
        self._http = MetricsServer(host.strip("[]"), int(port), self.metrics.registry,
                                   self.readiness)
        self.url = f"http://{host}:{self._http.port}/metrics"
        log.info("metrics at %s (and /healthz, /readyz)", self.url)

    def close(self) -> None:
        if self._http is not None:
            self._http.close()

    def readiness(self) -> tuple[bool, str]:
        """``(ready, why)``: ready once the state is restored, partitions are assigned and
        checked against the broker's log, the broker is reachable and checkpoints succeed."""
        recovery = self.recovery
        missing = [why for bad, why in (
            (not recovery.restored, "state not restored yet"),
            (not recovery.assigned, "no partitions assigned yet"),
            (bool(recovery.unchecked), "partitions being checked against the broker's log"),
            (not self.broker_ok, "no broker reachable"),
            (bool(self.checkpoint.failing), f"checkpoint failing: {self.checkpoint.failing}"),
            (self._stop.is_set(), "stopping")) if bad]
        ready = not missing
        self.metrics.up.set(1 if ready else 0)
        return ready, "ready" if ready else "not ready: " + "; ".join(missing)

    def check_broker(self, connected: int) -> None:
        """Take the consumer's count of broker connections. Losing them all (once restored)
        has every owned partition checked against the broker's log again."""
        if bool(connected) != self.broker_ok and self.recovery.restored:
            if not connected:
                log.warning("no Kafka broker reachable at %s", self.config.bootstrap_servers)
                self.recovery.broker_lost()
            elif self._broker_lost:  # "again" only after it was said to be gone
                log.info("a Kafka broker is reachable again")
            self._broker_lost = not connected
        self.broker_ok = bool(connected)
        self.metrics.broker_reachable.set(1 if self.broker_ok else 0)


class Watchdog:
    """The CLI's last resort: the process exits ``grace`` seconds after a shutdown's deadline
    even if a client hangs in its teardown, with the status ``status()`` gives, after writing
    every thread's stack to stderr."""

    def __init__(self, seconds: float, grace: float, status: Callable[[], int]) -> None:
        self._grace = grace
        self._status = status
        self._timer = threading.Timer(seconds + grace, self._expired)
        self._timer.daemon = True
        self._timer.start()

    def _expired(self) -> None:
        log.error("shutdown still not done %g s after --shutdown-timeout-seconds; exiting "
                  "(every thread's stack follows)", self._grace)
        logging.shutdown()
        faulthandler.dump_traceback(all_threads=True)
        os._exit(self._status())

    def cancel(self) -> None:
        """Done in time: the process (maybe a caller's) lives on."""
        self._timer.cancel()

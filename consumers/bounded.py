"""Broker calls with a deadline: the checkpoint and shutdown steps that wait for a broker
(flushing the producers, publishing states, committing) run in a helper thread that the
service gives up on at a deadline, so that no outage holds the service's loop or its shutdown.

A call given up on is not cancelled (the clients have no way to): it goes on in its thread and
is remembered. The next call of the same step first waits for it, within the new deadline, and
fails at once if it is still running, so an outage of any length leaves at most one thread per
step behind, never one per checkpoint.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["BoundedCalls"]

log = logging.getLogger("streamnb.service")


class BoundedCalls:
    """Runs broker calls in helper threads, each waited for until a deadline.

    Parameters
    ----------
    stop
        An event that also ends the wait (the service's stop request): a call still running
        then counts as not finished, and the shutdown takes over with its own deadline.
    timeout_name
        The option named in the log line of a call given up on.

    """

    def __init__(self, stop: threading.Event | None = None,
                 timeout_name: str = "--shutdown-timeout-seconds") -> None:
        self._stop = stop
        self._timeout_name = timeout_name
        self._running: dict[str, threading.Thread] = {}

    def pending(self) -> list[str]:
        """The steps whose last call was given up on and is still running."""
        return [what for what, thread in self._running.items() if thread.is_alive()]

    def run(self, what: str, call: Callable[[], Any], deadline: float,
            interruptible: bool = False, reraise: bool = False) -> bool:
        """``call()`` in a helper thread, waited for until ``deadline`` (monotonic) or, if
        ``interruptible``, until the stop event is set. Returns whether it finished in time; a
        call given up on is logged, and so is a failure, which is raised instead with
        ``reraise``."""
        previous = self._running.get(what)
        if previous is not None:
            self._wait(previous, deadline, interruptible)
            if previous.is_alive():
                log.error("%s: the previous attempt is still waiting for the broker; "
                          "given up", what)
                return False
            del self._running[what]
        outcome: dict[str, BaseException | None] = {}

        def target() -> None:
            try:
                call()
                outcome["error"] = None
            except BaseException as exc:  # reported by the caller's thread
                outcome["error"] = exc

        helper = threading.Thread(target=target, daemon=True, name=f"streamnb-{what}")
        helper.start()
        self._wait(helper, deadline, interruptible)
        if "error" not in outcome:
            self._running[what] = helper
            log.error("%s did not finish within %s; given up", what, self._timeout_name)
            return False
        if outcome["error"] is not None:
            if reraise:
                raise outcome["error"]
            log.error("%s failed: %s", what, outcome["error"])
            return False
        return True

    def _wait(self, thread: threading.Thread, deadline: float, interruptible: bool) -> None:
        while thread.is_alive():
            left = deadline - time.monotonic()
            if left <= 0 or (interruptible and self._stop is not None and self._stop.is_set()):
                return
            thread.join(min(left, 0.1) if interruptible else left)

"""SIGTERM and SIGINT as a stop request, taken outside the signal handler.

Python runs a signal handler in the main thread between two bytecodes, possibly inside
``threading.Event.wait`` while it holds the event's lock, where setting that event (or taking
any lock the main thread may hold) would wait for itself for ever. So the handlers installed
here do nothing: the interpreter writes each signal's number to a pipe
(:func:`signal.set_wakeup_fd`), and a thread reading the pipe makes the request.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator

__all__ = ["stopping_signals"]


def _noted(signum: int, frame: object) -> None:
    """A handler that does nothing: the signal was written to the wakeup pipe already."""


@contextlib.contextmanager
def stopping_signals(stop: Callable[[], None]) -> Iterator[None]:
    """Within it, SIGTERM and SIGINT call ``stop()`` from a thread of their own; the main
    thread's earlier handlers and wakeup descriptor come back after it. Enter it in the main
    thread (as :func:`signal.signal` requires)."""
    stopping = {int(signal.SIGTERM), int(signal.SIGINT)}
    read, write = os.pipe()
    os.set_blocking(write, False)

    def watch() -> None:
        while numbers := os.read(read, 64):  # b"": the pipe's end, closed below
            if stopping.intersection(numbers):
                stop()
        os.close(read)

    previous_fd = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    previous = {sig: signal.signal(sig, _noted) for sig in stopping}
    threading.Thread(target=watch, daemon=True, name="streamnb-signals").start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous_fd)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        os.close(write)

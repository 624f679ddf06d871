"""The cyclic garbage collector paused while a bulk of acyclic objects is built."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_collector"]


@contextmanager
def paused_collector() -> Iterator[None]:
    """The cyclic garbage collector paused (as it was found after) while many acyclic objects
    that outlive the call's start are made: a state's JSON side built or read (a list per
    attribute and per column, 10⁵ and more for a vocabulary), a batch's rows encoded (an
    ``Encoded`` of lists per row, alive until the batch is counted). Such objects cannot
    feed the collector, but their allocation would run it again and again over the whole
    heap: saving a 10⁵-token vocabulary's schema would take several times as long and loading
    it half as long again (a service's snapshot and restart are these calls), and learning
    SpamAssassin in batches of token sets nearly twice as long. The collections skipped are not
    deferred work: the objects are alive or freed by their reference counts when it resumes."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()

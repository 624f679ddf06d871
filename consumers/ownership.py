"""Which partition states a service member holds: the partitions it owns (live, learning) and
the others' (as last published on the changelog, or its own before a rebalance took them).
:class:`~streamnb.consumers.state.PartitionedModel` sums them all."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from streamnb.consumers.state import PartitionState

__all__ = ["PartitionStates"]

Key = Hashable  # (topic, partition)


class PartitionStates:
    """The own and the others' partition states, all holding a ``model_class``.

    Attributes
    ----------
    own : dict
        The states of the partitions this member owns.
    others : dict
        The latest states known of the partitions it does not own.

    """

    def __init__(self, model_class: type) -> None:
        self.model_class = model_class
        self.own: dict[Key, PartitionState] = {}
        self.others: dict[Key, PartitionState] = {}

    def states(self) -> dict[Key, PartitionState]:
        return {**self.others, **self.own}

    def compatible(self, state: PartitionState) -> bool:
        """Whether ``state`` holds the model this service runs (a snapshot or changelog
        written with another ``--model`` does not)."""
        return type(state.model) is self.model_class

    def take(self, key: Key, state: PartitionState) -> None:
        """Own partition ``key`` from now on, starting from ``state``."""
        if not self.compatible(state):
            raise ValueError(f"the state of {key} holds a {type(state.model).__name__}, this "
                             f"service runs a {self.model_class.__name__}")
        self.others.pop(key, None)
        self.own[key] = state

    def release(self, key: Key) -> PartitionState | None:
        """Stop owning ``key``; its state stays among the others' until that member publishes
        a newer one."""
        state = self.own.pop(key, None)
        if state is not None:
            self.others[key] = state
        return state

    def offer(self, key: Key, state: PartitionState) -> bool:
        """Another member's state of ``key`` (from the changelog); kept if ``key`` is not ours
        and it is further than the one we have (at the same position it is the same state).
        Returns whether it was kept."""
        if key in self.own or not self.compatible(state):
            return False
        mine = self.others.get(key)
        if mine is not None and mine.position >= state.position:
            return False
        self.others[key] = state
        return True

    def restore_candidate(self, key: Key) -> PartitionState | None:
        """The state we hold for ``key`` (another member's, or ours before a rebalance)."""
        return self.own.get(key) or self.others.get(key)
